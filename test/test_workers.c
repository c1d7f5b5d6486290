/* test_workers.c - worker reuse, max_calls, deaths, retries, shutdown. */
#include "tests.h"

#include <dirent.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CALLS 12

/* Run t_getpid CALLS times, one after the other; count distinct pids and
 * the most calls any one pid served. */
static void pids_of_calls(const rt_opts *o, int *distinct, int *most)
{
    uint64_t pid[CALLS];
    *distinct = 0;
    *most = 0;
    for (int i = 0; i < CALLS; i++)
        pid[i] = call_u64(t_getpid, o, NULL, 0);
    for (int i = 0; i < CALLS; i++) {
        int same = 0, first = 1;
        for (int j = 0; j < CALLS; j++) {
            same += pid[j] == pid[i];
            first &= !(j < i && pid[j] == pid[i]);
        }
        *distinct += first;
        if (same > *most)
            *most = same;
    }
}

int w_comm(const void *arg, size_t len, rt_result *r);

/* The first line of path, without its newline, into out; "" when none. */
static void first_line(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f || !fgets(out, (int)size, f))
        out[0] = 0;
    out[strcspn(out, "\n")] = 0;
    if (f)
        fclose(f);
}

/* Its process's name. */
int w_comm(const void *arg, size_t len, rt_result *r)
{
    char name[64];
    (void)arg, (void)len;
    first_line("/proc/self/comm", name, sizeof name);
    return rt_result_set(r, name, strlen(name) + 1);
}

/* rtask's threads bear their names (rtask(7)); the fork server and the
 * workers, forked from the runtime thread and from it, the
 * application's. */
START_TEST(threads_and_workers_bear_their_names)
{
    start_runtime();
    char app[64], name[64], path[300];
    first_line("/proc/self/comm", app, sizeof app);
    int runtime = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d));) {
        snprintf(path, sizeof path, "/proc/self/task/%.64s/comm", e->d_name);
        first_line(path, name, sizeof name);
        runtime += strcmp(name, "rtask-runtime") == 0;
    }
    if (d)
        closedir(d);
    ck_assert_int_eq(runtime, 1);
    rt_ref ref;
    char *seen;
    ck_ok(rt_remote(w_comm, NULL, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&seen, NULL, 60000));
    ck_assert_str_eq(seen, app);
    rt_free(seen);
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(workers_are_reused_by_default)
{
    start_runtime();
    int distinct, most;
    pids_of_calls(NULL, &distinct, &most);
    ck_assert_int_le(distinct, 2); /* two workers in the pool */
    rt_opts o = RT_OPTS_INIT;
    o.max_calls = 0; /* written out: unlimited, the same thing */
    pids_of_calls(&o, &distinct, &most);
    ck_assert_int_le(distinct, 2);
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(max_calls_recycles_workers)
{
    start_runtime();
    rt_opts o = RT_OPTS_INIT;
    int distinct, most;
    o.max_calls = 3;
    pids_of_calls(&o, &distinct, &most);
    ck_assert_int_ge(distinct, CALLS / 3);
    ck_assert_int_le(most, 3);
    o.max_calls = 1;
    pids_of_calls(&o, &distinct, &most);
    ck_assert_int_eq(distinct, CALLS);
    ck_assert_int_eq(most, 1);
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(worker_killed_mid_task_is_reported)
{
    start_runtime();
    char path[128];
    temp_path(path, sizeof path, "pid");
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 0;
    rt_ref ref;
    ck_ok(rt_remote(t_pid_then_sleep, &o, path, strlen(path) + 1, &ref));
    FILE *f;
    while (!(f = fopen(path, "r")))
        usleep(1000);
    int pid = 0;
    ck_assert_int_eq(fscanf(f, "%d", &pid), 1);
    fclose(f);
    unlink(path);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    char want[80];
    snprintf(want, sizeof want, "(pid %d) was killed by signal 9", pid);
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EWORKERDIED, want);
    /* The pool replaced the worker: work goes on. */
    uint64_t x = 8;
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 16);
    ck_ok(rt_shutdown());
}
END_TEST

/* How many times t_count_and_die ran (a byte each); removes the file. */
static long runs_recorded(const char *path)
{
    struct stat st;
    long runs = stat(path, &st) == 0 ? (long)st.st_size : -1;
    unlink(path);
    return runs;
}

START_TEST(a_crash_is_retried_max_retries_times)
{
    start_runtime();
    char path[128];
    temp_path(path, sizeof path, "count");
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 2;
    rt_ref ref;
    ck_ok(rt_remote(t_count_and_die, &o, path, strlen(path) + 1, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EWORKERDIED, "signal 9 (Killed)");
    ck_assert_int_eq(runs_recorded(path), 3); /* the first run and two retries */

    /* With the default, 3 retries; a zeroed options struct means that too. */
    rt_opts zeroed;
    memset(&zeroed, 0, sizeof zeroed);
    ck_ok(rt_remote(t_count_and_die, &zeroed, path, strlen(path) + 1, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EWORKERDIED, "killed");
    ck_assert_int_eq(runs_recorded(path), 4);
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(a_retry_can_succeed)
{
    start_runtime();
    char path[128];
    temp_path(path, sizeof path, "once");
    ck_assert_uint_eq(call_u64(t_die_once, NULL, path, strlen(path) + 1), 42);
    unlink(path);
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(exit_status_is_reported)
{
    start_runtime();
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 0;
    rt_ref ref;
    ck_ok(rt_remote(t_exit3, &o, NULL, 0, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EWORKERDIED, "exited with status 3");
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(tasks_queued_behind_a_crash_still_run)
{
    start_runtime();
    char path[128];
    temp_path(path, sizeof path, "crash");
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 0;
    enum { N = 200 };
    rt_ref crash, refs[N];
    for (uint64_t i = 0; i < N; i++) {
        if (i == N / 2)
            ck_ok(rt_remote(t_count_and_die, &o, path, strlen(path) + 1, &crash));
        ck_ok(rt_remote(t_double, NULL, &i, sizeof i, &refs[i]));
    }
    ck_fails(rt_get(crash, NULL, NULL, 60000), RT_EWORKERDIED, "signal 9");
    for (uint64_t i = 0; i < N; i++) {
        uint64_t *v;
        ck_ok(rt_get(refs[i], (void **)&v, NULL, 60000));
        ck_assert_uint_eq(*v, 2 * i);
        rt_free(v);
    }
    ck_assert_int_eq(runs_recorded(path), 1); /* blamed alone: no retry */
    ck_ok(rt_shutdown());
}
END_TEST

/* How often each of n logged tasks ran, from the log at path (removed). */
static void runs_logged(const char *path, int *runs, size_t n)
{
    memset(runs, 0, n * sizeof *runs);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    uint64_t id;
    while (fread(&id, sizeof id, 1, f) == 1) {
        ck_assert_uint_lt(id, n);
        runs[id]++;
    }
    fclose(f);
    unlink(path);
}

/* One worker runs a burst of quick tasks, and one of them kills it: the
 * results of the tasks that finished before it are safe, those after it
 * run on a new worker, and every innocent task runs once. */
static void one_crash_in_a_burst(int innocent_retries)
{
    start_with(1, 0, 1);
    enum { N = 300, CRASH = 150 };
    static log_record rec[N];
    static rt_ref refs[N];
    static int runs[N];
    char path[112];
    temp_path(path, sizeof path, "burst");
    rt_opts o = RT_OPTS_INIT;
    for (uint64_t i = 0; i < N; i++) {
        rec[i] = (log_record){.id = i, .die = i == CRASH};
        snprintf(rec[i].path, sizeof rec[i].path, "%s", path);
        o.max_retries = i == CRASH ? 0 : innocent_retries;
        ck_ok(rt_remote(t_log, &o, &rec[i], sizeof rec[i], &refs[i]));
    }
    for (uint64_t i = 0; i < N; i++) {
        if (i == CRASH) {
            ck_fails(rt_get(refs[i], NULL, NULL, 60000), RT_EWORKERDIED, "signal 9");
            continue;
        }
        uint64_t *v = NULL;
        int rc = rt_get(refs[i], (void **)&v, NULL, 60000);
        ck_assert_msg(rc == 0, "innocent task %d: %s", (int)i, rt_last_error());
        ck_assert_uint_eq(*v, i);
        rt_free(v);
    }
    ck_ok(rt_shutdown());
    runs_logged(path, runs, N);
    for (int i = 0; i < N; i++)
        ck_assert_msg(runs[i] == 1, "task %d ran %d times", i, runs[i]);
}

START_TEST(a_crash_costs_only_the_task_it_runs)
{
    one_crash_in_a_burst(0);
}
END_TEST

START_TEST(finished_tasks_are_not_run_again_after_a_crash)
{
    one_crash_in_a_burst(3);
}
END_TEST

/* Synchronous calls read their answers in the worker's journal, and the
 * worker sends them later (rt__journal_holds()): those copies are
 * dropped, not taken for a broken protocol (the worker lives on), and a
 * crash after them runs none of them again. */
START_TEST(answers_read_in_the_journal_are_given_once)
{
    start_with(1, 0, 1);
    enum { N = 400, CRASH = 300 };
    static log_record rec[N];
    static int runs[N];
    char path[112];
    temp_path(path, sizeof path, "early");
    uint64_t pid = call_u64(t_getpid, NULL, NULL, 0);
    rt_opts o = RT_OPTS_INIT;
    for (uint64_t i = 0; i < N; i++) {
        rec[i] = (log_record){.id = i, .die = i == CRASH};
        snprintf(rec[i].path, sizeof rec[i].path, "%s", path);
        o.max_retries = i == CRASH ? 0 : 3;
        rt_ref ref;
        ck_ok(rt_remote(t_log, &o, &rec[i], sizeof rec[i], &ref));
        if (i == CRASH) {
            ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EWORKERDIED, "signal 9");
            continue;
        }
        uint64_t *v = NULL;
        int rc = rt_get(ref, (void **)&v, NULL, 60000);
        ck_assert_msg(rc == 0, "task %d: %s", (int)i, rt_last_error());
        ck_assert_uint_eq(*v, i);
        rt_free(v);
        if (i == CRASH - 1)
            ck_assert_uint_eq(call_u64(t_getpid, NULL, NULL, 0), pid);
    }
    ck_ok(rt_shutdown());
    runs_logged(path, runs, N);
    for (int i = 0; i < N; i++)
        ck_assert_msg(runs[i] == 1, "task %d ran %d times", i, runs[i]);
}
END_TEST

/* Any child, "clone" children (the fork server) included. */
static int has_children(void)
{
    return !(waitpid(-1, NULL, WNOHANG | __WALL) < 0 && errno == ECHILD);
}

/* A worker sent a quick task and a long one together sends the quick
 * one's result while the long one runs, not after it. */
START_TEST(a_long_task_does_not_hold_back_the_results_before_it)
{
    start_with(1, 0, 1);
    uint64_t ms[3] = {300, 0, 5000}; /* the first keeps the worker busy */
    rt_value args[3] = {{&ms[0], sizeof ms[0]}, {&ms[1], sizeof ms[1]}, {&ms[2], sizeof ms[2]}};
    rt_ref refs[3];
    ck_ok(rt_remote_batch(t_nap, NULL, args, 3, refs));
    uint64_t *pid = NULL;
    ck_ok(rt_get(refs[1], (void **)&pid, NULL, 2000));
    rt_free(pid);
    for (int i = 0; i < 3; i += 2) {
        ck_ok(rt_get(refs[i], (void **)&pid, NULL, 60000));
        rt_free(pid);
    }
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(shutdown_leaves_no_process_and_no_descriptor)
{
    int fds = count_fds();
    start_runtime();
    pid_t server = forkserver_pid();
    ck_assert_int_gt(server, 0);
    ck_assert(!has_children()); /* the fork server is not the application's child */
    uint64_t pids[6];
    rt_opts o = RT_OPTS_INIT;
    o.max_calls = 2;
    for (int i = 0; i < 6; i++)
        pids[i] = call_u64(t_getpid, i < 3 ? NULL : &o, NULL, 0);
    uint64_t ms = 60000;
    rt_ref busy, big;
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &busy));
    uint64_t size = 1 << 20;
    ck_ok(rt_remote(t_big_result, NULL, &size, sizeof size, &big));
    ck_ok(rt_get(big, NULL, NULL, 60000)); /* a memfd travelled */
    ck_ok(rt_shutdown());
    ck_assert(!has_children());
    ck_assert(process_gone(server));
    for (int i = 0; i < 6; i++) {
        char stat[64], line[256] = "";
        snprintf(stat, sizeof stat, "/proc/%d/stat", (int)pids[i]);
        FILE *f = fopen(stat, "r");
        if (f && !fgets(line, sizeof line, f))
            line[0] = '\0';
        if (f)
            fclose(f);
        ck_assert_msg(!f, "worker %d survived: %s", (int)pids[i], line);
    }
    ck_assert_int_eq(count_fds(), fds);
}
END_TEST

static rt_ref blocked_ref;
static int blocked_rc;

static void *block_in_get(void *unused)
{
    (void)unused;
    blocked_rc = rt_get(blocked_ref, NULL, NULL, RT_FOREVER);
    return NULL;
}

/* The application's descriptors are not the workers': a pipe's write end
 * closed by the application reaches EOF though workers live, O_CLOEXEC or
 * not; rt_config.keep_fds keeps the ones named. */
/* Whether a task sees the file behind fd. */
static uint64_t worker_has(int fd)
{
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    uint64_t id[2] = {(uint64_t)st.st_dev, (uint64_t)st.st_ino};
    return call_u64(t_fd_open, NULL, id, sizeof id);
}

START_TEST(workers_do_not_keep_the_applications_descriptors)
{
    int plain[2], cloexec[2], kept[2];
    ck_assert_int_eq(pipe(plain), 0);
    ck_assert_int_eq(pipe2(cloexec, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe(kept), 0);
    int keep[] = {kept[1], -1};
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.keep_fds = keep;
    ck_ok(rt_init_config(&c));
    ck_assert_uint_eq(worker_has(plain[1]), 0);
    ck_assert_uint_eq(worker_has(cloexec[1]), 0);
    ck_assert_uint_eq(worker_has(kept[1]), 1);
    close(plain[1]);
    close(cloexec[1]);
    char byte;
    fcntl(plain[0], F_SETFL, O_NONBLOCK);
    fcntl(cloexec[0], F_SETFL, O_NONBLOCK);
    ck_assert_int_eq(read(plain[0], &byte, 1), 0); /* EOF, not EAGAIN */
    ck_assert_int_eq(read(cloexec[0], &byte, 1), 0);
    ck_ok(rt_shutdown());
    int bad[] = {-5, -1};
    c.keep_fds = bad;
    ck_fails(rt_init_config(&c), RT_EINVAL, "keep_fds[0] is -5");
    close(plain[0]);
    close(cloexec[0]);
    close(kept[0]);
    close(kept[1]);
}
END_TEST

START_TEST(shutdown_wakes_blocked_callers)
{
    start_runtime();
    uint64_t ms = 60000;
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &blocked_ref));
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, block_in_get, NULL), 0);
    usleep(100000);
    ck_ok(rt_shutdown());
    ck_assert_int_eq(pthread_join(th, NULL), 0);
    ck_assert_int_eq(blocked_rc, RT_ESHUTDOWN);
}
END_TEST

START_TEST(a_dead_fork_server_stops_the_runtime_cleanly)
{
    int fds = count_fds();
    start_runtime();
    uint64_t ms = 60000;
    rt_ref ref;
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &ref));
    pid_t server = forkserver_pid();
    ck_assert_int_gt(server, 0);
    ck_assert_int_eq(kill(server, SIGKILL), 0);
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_ESHUTDOWN, "its fork server died");
    ck_fails(rt_remote(t_echo, NULL, NULL, 0, &ref), RT_ESHUTDOWN, "fork server died");
    ck_ok(rt_shutdown());
    ck_assert(!has_children());
    ck_assert_int_eq(count_fds(), fds);
    start_runtime(); /* and it can start again */
    uint64_t x = 2;
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 4);
    ck_ok(rt_shutdown());
}
END_TEST

Suite *workers_suite(void)
{
    Suite *s = suite_create("workers");
    TCase *tc = tcase_create("workers");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, workers_are_reused_by_default);
    tcase_add_test(tc, threads_and_workers_bear_their_names);
    tcase_add_test(tc, max_calls_recycles_workers);
    tcase_add_test(tc, worker_killed_mid_task_is_reported);
    tcase_add_test(tc, a_crash_is_retried_max_retries_times);
    tcase_add_test(tc, a_retry_can_succeed);
    tcase_add_test(tc, exit_status_is_reported);
    tcase_add_test(tc, tasks_queued_behind_a_crash_still_run);
    tcase_add_test(tc, a_crash_costs_only_the_task_it_runs);
    tcase_add_test(tc, finished_tasks_are_not_run_again_after_a_crash);
    tcase_add_test(tc, answers_read_in_the_journal_are_given_once);
    tcase_add_test(tc, a_long_task_does_not_hold_back_the_results_before_it);
    tcase_add_test(tc, shutdown_leaves_no_process_and_no_descriptor);
    tcase_add_test(tc, shutdown_wakes_blocked_callers);
    tcase_add_test(tc, workers_do_not_keep_the_applications_descriptors);
    tcase_add_test(tc, a_dead_fork_server_stops_the_runtime_cleanly);
    suite_add_tcase(s, tc);
    return s;
}

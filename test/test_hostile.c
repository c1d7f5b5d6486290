/*
 * test_hostile.c - a task is user code in a process of its own: whatever
 * it writes onto its worker's socket or does to its result, the
 * application neither crashes nor hangs nor leaks, the task fails with a
 * clear error, and the pool carries on.
 */
#include "tests.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* n ordinary tasks, every result checked. */
static void doubles(uint64_t n)
{
    static rt_ref refs[2000];
    ck_assert_uint_le(n, 2000);
    for (uint64_t i = 0; i < n; i++)
        ck_ok(rt_remote(t_double, NULL, &i, sizeof i, &refs[i]));
    for (uint64_t i = 0; i < n; i++) {
        uint64_t *v;
        ck_ok(rt_get(refs[i], (void **)&v, NULL, 30000));
        ck_assert_uint_eq(*v, 2 * i);
        rt_free(v);
    }
}

/* One worker; a hostile task with no retry; then 2 000 ordinary tasks on
 * the same pool, every result checked; no descriptor left behind. */
static void survives(rt_fn hostile, int kind, int code, const char *text)
{
    int before = count_fds();
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 1;
    c.num_gpus = 0;
    c.num_workers = 1;
    ck_ok(rt_init_config(&c));
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 0;
    rt_ref ref;
    ck_ok(rt_remote(hostile, &o, &kind, sizeof kind, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 30000), code, text);
    doubles(2000);
    ck_ok(rt_shutdown());
    ck_assert_int_eq(count_fds(), before);
}

START_TEST(a_length_near_two_to_the_64_is_refused)
{
    survives(t_forge, FORGE_WRAP, RT_EWORKERDIED, "break rtask's protocol");
}
END_TEST

START_TEST(a_huge_payload_announced_is_refused)
{
    survives(t_forge, FORGE_HUGE, RT_EWORKERDIED, "break rtask's protocol");
}
END_TEST

START_TEST(descriptors_a_result_should_not_carry_are_closed)
{
    survives(t_forge, FORGE_FDS, RT_EWORKERDIED, "break rtask's protocol");
}
END_TEST

START_TEST(a_result_shrunk_behind_our_back_is_refused)
{
    survives(t_shrink_result, 0, RT_ESYS, "shrunk or left unsealed");
}
END_TEST

/* One worker, which starts with RT_TEST_VAR "clean". */
static void start_one_worker(void)
{
    setenv("RT_TEST_VAR", "clean", 1);
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 1;
    c.num_gpus = 0;
    c.num_workers = 1;
    ck_ok(rt_init_config(&c));
}

static void stop_one_worker(void)
{
    ck_ok(rt_shutdown());
    unsetenv("RT_TEST_VAR");
}

/* The answer of t_dirty_env or t_scribble_env: RT_TEST_VAR's value was
 * want; the pid of its worker. */
static int found_value(rt_ref ref, const char *want)
{
    char *v, value[16];
    int pid;
    ck_ok(rt_get(ref, (void **)&v, NULL, 30000));
    ck_assert_int_eq(sscanf(v, "%15s %d", value, &pid), 2);
    ck_assert_str_eq(value, want);
    rt_free(v);
    return pid;
}

static int found_clean(rt_ref ref)
{
    return found_value(ref, "clean");
}

/* A task that writes into a string getenv() gave it does not change the
 * next task's environment. */
START_TEST(an_environment_written_in_place_is_reset)
{
    start_one_worker();
    for (int i = 0; i < 3; i++) {
        rt_ref ref;
        ck_ok(rt_remote(t_scribble_env, NULL, NULL, 0, &ref));
        found_clean(ref);
    }
    stop_one_worker();
}
END_TEST

/* A task that takes a list of arguments leaves the next task of its
 * worker the environment it found, as a task with one argument does. */
START_TEST(a_task_with_arguments_leaves_the_environment_clean)
{
    start_one_worker();
    rt_arg arg = RT_ARG_BYTES("x", 2);
    rt_ref ref;
    ck_ok(rt_remote_args(t_dirty_env_args, NULL, &arg, 1, &ref));
    int first = found_clean(ref);
    ck_ok(rt_remote(t_dirty_env, NULL, NULL, 0, &ref));
    ck_assert_int_eq(found_clean(ref), first); /* the same worker */
    stop_one_worker();
}
END_TEST

static int env_task(const char *vars, const char *want)
{
    rt_opts o = RT_OPTS_INIT;
    o.env_vars = vars;
    rt_ref ref;
    ck_ok(rt_remote(t_dirty_env, &o, NULL, 0, &ref));
    return found_value(ref, want);
}

/* env_vars (Ray's runtime_env env_vars) are one task's: set over the
 * worker's own before it runs, gone for the next task of the same
 * worker, and set again for the next that asks. */
START_TEST(env_vars_are_one_tasks_alone)
{
    start_one_worker();
    int pid = env_task("RT_OTHER=1\nRT_TEST_VAR=mine\n", "mine");
    ck_assert_int_eq(env_task(NULL, "clean"), pid);
    ck_assert_int_eq(env_task("RT_TEST_VAR=again", "again"), pid);
    ck_assert_int_eq(env_task("RT_TEST_VAR=again", "again"), pid);
    ck_assert_int_eq(env_task("", "clean"), pid);
    rt_opts o = RT_OPTS_INIT;
    rt_ref ref;
    o.env_vars = "NO_EQUALS_SIGN";
    ck_fails(rt_remote(t_dirty_env, &o, NULL, 0, &ref), RT_EINVAL, "NAME=value");
    o.env_vars = "A=1\n=2";
    ck_fails(rt_remote(t_dirty_env, &o, NULL, 0, &ref), RT_EINVAL, "NAME=value");
    char long_line[1100];
    memset(long_line, 'x', sizeof long_line - 1);
    long_line[0] = 'X';
    long_line[1] = '=';
    long_line[sizeof long_line - 1] = '\0';
    o.env_vars = long_line;
    ck_fails(rt_remote(t_dirty_env, &o, NULL, 0, &ref), RT_EINVAL, "longer than");
    stop_one_worker();
}
END_TEST

/* Submits t_dirty_env with env_vars, and answers with its answer. */
static int submit_with_vars(const void *arg, size_t len, rt_result *r)
{
    rt_opts o = RT_OPTS_INIT;
    o.env_vars = arg;
    rt_ref ref;
    void *inner;
    size_t inner_len;
    (void)len;
    if (rt_remote(t_dirty_env, &o, NULL, 0, &ref) < 0 ||
        rt_get(ref, &inner, &inner_len, 30000) < 0)
        return 1;
    int rc = rt_result_set(r, inner, inner_len);
    rt_free(inner);
    return rc;
}

/* A task's env_vars are its own, not those of the task that submitted
 * it, whose own variables it does not inherit. */
START_TEST(env_vars_of_a_task_that_a_task_submits)
{
    start_one_worker();
    rt_opts o = RT_OPTS_INIT;
    o.env_vars = "RT_TEST_VAR=outer";
    static const char inner[] = "RT_TEST_VAR=inner";
    rt_ref ref;
    ck_ok(rt_remote(submit_with_vars, &o, inner, sizeof inner, &ref));
    found_value(ref, "inner");
    ck_ok(rt_remote(submit_with_vars, &o, "", 1, &ref));
    found_value(ref, "clean");
    stop_one_worker();
}
END_TEST

/* As t_dirty_env's answer, without the dirt. */
static int read_test_var(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    (void)arg;
    (void)len;
    const char *v = getenv("RT_TEST_VAR");
    char out[64];
    snprintf(out, sizeof out, "%s %d", v ? v : "-", (int)getpid());
    return rt_result_set(r, out, strlen(out) + 1);
}

/* An actor's env_vars are its process's from its start, for its life. */
START_TEST(env_vars_of_an_actor_last_its_life)
{
    start_one_worker();
    rt_actor_class plain = {"Plain", NULL, NULL};
    rt_opts o = RT_OPTS_INIT;
    o.env_vars = "RT_TEST_VAR=actor";
    rt_actor a;
    ck_ok(rt_actor_create(&plain, &o, NULL, 0, &a));
    for (int i = 0; i < 3; i++) {
        rt_ref ref;
        ck_ok(rt_actor_call(a, read_test_var, NULL, 0, &ref));
        found_value(ref, "actor");
    }
    ck_ok(rt_actor_kill(a));
    stop_one_worker();
}
END_TEST

/* A worker's last task (max_calls) is not undone: its worker exits once
 * it has answered, and the next task starts in a fresh one. */
/* A task that writes over all its worker's shared memory (its run slot:
 * the journal and the inbox, inbox.h) costs at most its worker: every
 * later task runs, once, and none waits for ever. */
START_TEST(a_task_that_scribbles_its_run_slot_loses_no_later_task)
{
    start_with(1, 0, 1);
    for (int round = 0; round < 3; round++) {
        rt_opts hostile = RT_OPTS_INIT;
        hostile.max_retries = 0;
        rt_ref ref;
        ck_ok(rt_remote(t_scribble_shared, &hostile, NULL, 0, &ref));
        (void)rt_get(ref, NULL, NULL, 30000); /* its worker may not survive it */
        for (uint64_t i = 0; i < 100; i++) {
            rt_ref echo;
            ck_ok(rt_remote(t_echo, NULL, &i, sizeof i, &echo));
            uint64_t *v = NULL;
            ck_ok(rt_get(echo, (void **)&v, NULL, 30000));
            ck_assert_uint_eq(*v, i);
            rt_free(v);
        }
    }
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(a_workers_last_task_ends_its_process)
{
    start_one_worker();
    rt_opts o = RT_OPTS_INIT;
    o.max_calls = 2;
    int pid[3];
    for (int i = 0; i < 3; i++) {
        rt_ref ref;
        ck_ok(rt_remote(t_dirty_env, &o, NULL, 0, &ref));
        pid[i] = found_clean(ref);
    }
    ck_assert_int_eq(pid[1], pid[0]);
    ck_assert_int_ne(pid[2], pid[0]);
    int gone = 0;
    for (int i = 0; i < 500 && !gone; i++) { /* reaped by the fork server */
        gone = kill(pid[0], 0) < 0 && errno == ESRCH;
        if (!gone)
            usleep(10000);
    }
    ck_assert_msg(gone, "the worker %d of two tasks still runs", pid[0]);
    stop_one_worker();
}
END_TEST

/* A helper child the application forks (no exec) after rt_init() keeps
 * copies of the runtime's sockets: rt_shutdown() must not wait for it,
 * and in the child rtask is simply not started. */
/* What the process state was before a task is what the next task in
 * that worker gets: working directory, umask, SIGPIPE's disposition and
 * the signal mask, as the environment already is. */
static char *process_state(void)
{
    rt_ref ref;
    char *s;
    ck_ok(rt_remote(t_process_state, NULL, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&s, NULL, 60000));
    return s;
}

/* The next task's process state is before (freed), as a fresh worker's:
 * the same worker (its pid is in both); then the runtime ends. */
static void same_process_state(char *before)
{
    char *after = process_state();
    ck_assert_str_eq(after, before);
    ck_assert_msg(strstr(after, " default open") != NULL, "%s", after);
    rt_free(before);
    rt_free(after);
    ck_ok(rt_shutdown());
}

START_TEST(a_task_changes_no_process_state_for_the_next)
{
    start_with(1, 0, 1);
    char *before = process_state();
    rt_ref ref;
    ck_ok(rt_remote(t_dirty_process, NULL, NULL, 0, &ref));
    ck_ok(rt_get(ref, NULL, NULL, 60000));
    same_process_state(before);
}
END_TEST

/* A thread a task leaves behind changes the process while later tasks
 * run, tasks that make no system call (whose worker skips the look
 * otherwise): the task after them still gets the first state. */
START_TEST(a_thread_left_behind_changes_no_process_state_for_later_tasks)
{
    start_with(1, 0, 1);
    char *before = process_state();
    uint64_t ms = 200, x = 21;
    rt_ref ref;
    ck_ok(rt_remote(t_dirty_from_a_thread, NULL, &ms, sizeof ms, &ref));
    ck_ok(rt_get(ref, NULL, NULL, 60000));
    usleep(400 * 1000); /* the thread has done its worst and ended */
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 42); /* no system call */
    same_process_state(before);
}
END_TEST

/* A task forks and execs (system()): the worker watching its system
 * calls does not get in the way, in the task or in its child. */
START_TEST(a_task_runs_a_shell)
{
    start_with(1, 0, 1);
    const char *cmd = "trap 'exit 3' USR1; kill -USR1 $$; exit 4";
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(call_u64(t_shell, NULL, cmd, strlen(cmd) + 1), 3);
    ck_ok(rt_shutdown());
}
END_TEST

/* Valgrind handles a task's fatal signal itself (the worker exits with
 * a status of its own). */
static int under_valgrind(void)
{
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "vgpreload");
}

/* A SIGSYS from elsewhere does what it would do in any process: the
 * worker ends with it, and the task says so. */
START_TEST(a_sigsys_from_elsewhere_ends_the_worker)
{
    start_with(1, 0, 1);
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 0;
    uint64_t sig = SIGSYS;
    rt_ref ref;
    ck_ok(rt_remote(t_raise, &o, &sig, sizeof sig, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EWORKERDIED,
             under_valgrind() ? "exited" : "signal 31");
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(a_forked_helper_holds_nothing_up)
{
    start_runtime();
    uint64_t x = 1;
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 2);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t child = fork();
    if (child == 0) {
        rt_ref ref;
        int rc = rt_remote(t_echo, NULL, NULL, 0, &ref);
        if (write(p[1], &rc, sizeof rc) != sizeof rc)
            _exit(1);
        sleep(8);
        _exit(0);
    }
    int child_rc = 0;
    ck_assert_int_eq(read(p[0], &child_rc, sizeof child_rc), (ssize_t)sizeof child_rc);
    long start = now_ms();
    ck_ok(rt_shutdown());
    long took = now_ms() - start;
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(p[0]);
    close(p[1]);
    ck_assert_msg(took < 3000, "rt_shutdown waited %ld ms for a forked child", took);
    ck_assert_int_eq(child_rc, RT_ENOTINIT);
}
END_TEST

/* A program written before rtask was added waits for all its children:
 * the fork server and the workers are not among them. */
START_TEST(waiting_for_every_child_ends)
{
    start_runtime();
    uint64_t x = 1;
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 2);
    pid_t own = fork();
    if (own == 0) {
        execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
        _exit(7);
    }
    int status, reaped = 0;
    alarm(20); /* a hang fails the test, not the suite */
    pid_t pid;
    while ((pid = wait(&status)) > 0 || errno == EINTR)
        reaped += pid == own;
    alarm(0);
    ck_assert_int_eq(errno, ECHILD);
    ck_assert_int_eq(reaped, 1);
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 2); /* still running */
    ck_ok(rt_shutdown());
}
END_TEST

/* How the application of the orphan scenarios leaves, or what it leaves
 * behind, before it is killed. */
enum orphan_scenario { PLAIN, FORKED_HELPER, MAIN_THREAD_ENDED };

static int report_fd;

/* Tell the test the fork server's pid and a busy worker's, then wait to
 * be killed. */
static void *report_and_wait(void *unused)
{
    (void)unused;
    uint64_t ms = 600000, pids[2] = {(uint64_t)forkserver_pid(), 0};
    rt_ref ref;
    pids[1] = call_u64(t_getpid, NULL, NULL, 0);
    if (rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &ref) < 0 ||
        write(report_fd, pids, sizeof pids) != sizeof pids)
        _exit(2);
    for (;;)
        pause();
    return NULL;
}

static void orphan_app(enum orphan_scenario how)
{
    start_runtime();
    if (how == FORKED_HELPER && fork() == 0) {
        /* A helper that holds copies of the runtime's sockets and lives on. */
        for (;;)
            pause();
    }
    pthread_t th;
    if (pthread_create(&th, NULL, report_and_wait, NULL))
        _exit(3);
    if (how == MAIN_THREAD_ENDED)
        pthread_exit(NULL);
    pthread_join(th, NULL);
    _exit(4);
}

/* Nothing of rtask's outlives an application killed with SIGKILL: not the
 * fork server, which is not its child, nor any worker, whether a forked
 * helper holds the runtime's sockets or the main thread had ended. */
START_TEST(nothing_outlives_a_killed_application)
{
    /* Without pidfds (an old kernel, or valgrind, which does not know the
     * call), a helper holding the runtime's socket keeps the fork server
     * from seeing the end: rt_init(3) says so. */
    int fd = (int)syscall(SYS_pidfd_open, getpid(), 0), pidfds = fd >= 0 || errno != ENOSYS;
    if (fd >= 0)
        close(fd);
    for (int how = PLAIN; how <= MAIN_THREAD_ENDED; how++) {
        if (how == FORKED_HELPER && !pidfds)
            continue;
        int p[2];
        ck_assert_int_eq(pipe(p), 0);
        pid_t app = fork();
        if (app == 0) {
            setpgid(0, 0); /* its helper goes with it below */
            close(p[0]);
            report_fd = p[1];
            orphan_app((enum orphan_scenario)how);
        }
        close(p[1]);
        uint64_t pids[2] = {0, 0};
        ck_assert_int_eq(read(p[0], pids, sizeof pids), (ssize_t)sizeof pids);
        close(p[0]);
        ck_assert_int_eq(kill(app, SIGKILL), 0);
        ck_assert_int_eq(waitpid(app, NULL, 0), app);
        int gone = 0;
        for (int i = 0; i < 500 && !gone; i++) {
            gone = process_gone((pid_t)pids[0]) && process_gone((pid_t)pids[1]);
            usleep(10000);
        }
        kill(-app, SIGKILL); /* the forked helper */
        ck_assert_msg(gone, "scenario %d: fork server %d or worker %d outlived the application",
                      how, (int)pids[0], (int)pids[1]);
    }
}
END_TEST

static int helper_pipe;

/* A thread of the helper: its main thread has ended by now. */
static void *after_main_ends(void *unused)
{
    (void)unused;
    struct timespec pause = {0, 200 * 1000000L};
    nanosleep(&pause, NULL);
    rt_ref ref;
    uint64_t x = 21, *v = NULL, answer = 0;
    if (rt_remote(t_double, NULL, &x, sizeof x, &ref) == 0 &&
        rt_get(ref, (void **)&v, NULL, 20000) == 0)
        answer = *v;
    rt_free(v);
    uint64_t report[2] = {answer, (uint64_t)(int64_t)rt_shutdown()};
    if (write(helper_pipe, report, sizeof report) != sizeof report)
        _exit(1);
    _exit(0);
}

/* rt_init() on the main thread, which then ends with pthread_exit(), as
 * threaded servers do: the runtime goes on serving the other threads. */
START_TEST(the_main_thread_may_end_first)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t helper = fork();
    if (helper == 0) {
        helper_pipe = p[1];
        rt_config c = RT_CONFIG_INIT;
        c.num_cpus = 1;
        c.num_gpus = 0;
        c.num_workers = 1;
        pthread_t th;
        if (rt_init_config(&c) < 0 || pthread_create(&th, NULL, after_main_ends, NULL))
            _exit(2);
        pthread_exit(NULL);
    }
    close(p[1]);
    uint64_t report[2] = {0, 1};
    ck_assert_int_eq(read(p[0], report, sizeof report), (ssize_t)sizeof report);
    int status;
    ck_assert_int_eq(waitpid(helper, &status, 0), helper);
    close(p[0]);
    ck_assert_uint_eq(report[0], 42); /* a task ran after the main thread ended */
    ck_assert_uint_eq(report[1], 0);  /* and rt_shutdown() worked */
    ck_assert(WIFEXITED(status));     /* (valgrind may set its own status) */
}
END_TEST

/* Ctrl-C reaches the terminal's process group: an application that
 * ignores SIGINT keeps its tasks running. */
START_TEST(ctrl_c_does_not_reach_workers)
{
    ck_assert_int_eq(setpgid(0, 0), 0); /* a group of our own, as a shell gives */
    signal(SIGINT, SIG_IGN);
    start_runtime();
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 0;
    uint64_t ms = 500;
    rt_ref ref;
    ck_ok(rt_remote(t_sleep_ms, &o, &ms, sizeof ms, &ref));
    struct timespec pause = {0, 100 * 1000000L};
    nanosleep(&pause, NULL);
    ck_assert_int_eq(kill(0, SIGINT), 0);
    ck_ok(rt_get(ref, NULL, NULL, 30000));
    ck_ok(rt_shutdown());
}
END_TEST

/* rt_init() with 2 CPUs and the given number of workers. */
static int init_workers(int workers)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_gpus = 0;
    c.num_workers = workers;
    return rt_init_config(&c);
}

/* In a helper whose stdout is a pipe nobody reads: 200 tasks print 1 MiB
 * between them, 1 000 print nothing; every result must still come. */
static void results_with_stdout_unread(int report)
{
    int p[2];
    if (pipe(p) < 0 || dup2(p[1], STDOUT_FILENO) < 0)
        _exit(1);
    if (init_workers(2) < 0)
        _exit(2);
    enum { CHATTY = 200, QUIET = 1000 };
    static rt_ref refs[CHATTY + QUIET];
    uint64_t lines = 5, x = 1, ok = 0;
    for (int i = 0; i < CHATTY + QUIET; i++)
        if (rt_remote(i < CHATTY ? t_chatter : t_double, NULL, i < CHATTY ? &lines : &x,
                      sizeof x, &refs[i]) < 0)
            _exit(3);
    for (int i = 0; i < CHATTY + QUIET; i++)
        ok += rt_get(refs[i], NULL, NULL, 30000) == 0;
    if (write(report, &ok, sizeof ok) != sizeof ok)
        _exit(4);
    _exit(0); /* rt_shutdown() would wait a second for the stuck output */
}

/* Run helper(report fd) in a child process and return the number it
 * reports; fails when it reports none (its exit status says why). */
static uint64_t run_helper(void (*helper)(int report))
{
    int p[2], status;
    ck_assert_int_eq(pipe(p), 0);
    pid_t child = fork();
    if (child == 0)
        helper(p[1]);
    close(p[1]);
    uint64_t value = 0;
    ssize_t got = read(p[0], &value, sizeof value);
    kill(child, SIGKILL); /* done with it, or stuck on an output nobody reads */
    waitpid(child, &status, 0);
    close(p[0]);
    ck_assert_msg(got == (ssize_t)sizeof value, "the helper reported nothing (status %d)",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return value;
}

START_TEST(results_flow_while_nobody_reads_stdout)
{
    ck_assert_uint_eq(run_helper(results_with_stdout_unread), 1200);
}
END_TEST

/* As an unprivileged user allowed 5 threads: the helper, the runtime
 * thread, rtask-status's thread (rt_init() starts it beside the fork
 * server: with 4 allowed, whichever came first took the last one, and
 * no worker could ever start when it was the thread), the fork server and
 * one worker.  The second worker cannot be forked (unless rtask-status's
 * thread could not start: then it can), and 20 tasks run rather than
 * fail.  The user is
 * one of our own per run, since processes a past run left (a zombie where
 * nothing reaps orphans) would count against its limit; and the helper
 * shuts down before it reports, so that this run leaves none. */
static void tasks_with_one_worker_possible(int report)
{
    struct rlimit rl = {5, 5};
    uid_t user = (uid_t)(50000 + getpid() % 10000);
    uint64_t ok = 0;
    if (setgid(user) < 0 || setuid(user) < 0 || setrlimit(RLIMIT_NPROC, &rl) < 0)
        _exit(5);
    if (init_workers(2) < 0) {
        fprintf(stderr, "rt_init: %s\n", rt_last_error());
        _exit(2);
    }
    enum { N = 20 };
    rt_ref refs[N];
    uint64_t ms = 10;
    for (int i = 0; i < N; i++)
        if (rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &refs[i]) < 0)
            _exit(3);
    for (int i = 0; i < N; i++) {
        int rc = rt_get(refs[i], NULL, NULL, 30000);
        ok += rc == 0;
        if (rc < 0 && ok == 0 && i == 0) /* why, should the test fail */
            fprintf(stderr, "tasks_with_one_worker_possible: task 0: %s\n", rt_last_error());
    }
    if (rt_shutdown() < 0 || write(report, &ok, sizeof ok) != sizeof ok)
        _exit(4);
    _exit(0);
}

START_TEST(tasks_wait_for_the_worker_that_could_start)
{
    if (getuid() != 0)
        return; /* only root can become a user whose process limit holds */
    ck_assert_uint_eq(run_helper(tasks_with_one_worker_possible), 20);
}
END_TEST

/* Leave room for room more descriptors; 0 where the limit cannot be set
 * (valgrind keeps it to itself). */
static int limit_descriptors(int room)
{
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = (rlim_t)(count_fds() + room);
    return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

/* In a helper, since the limit only goes down and the sanitizers need a
 * descriptor when a process exits: for each room from 9 descriptors down
 * to none, rt_init() fails with a message that says so and closes what
 * it opened.  Reports how many rooms behaved (10 where the limit cannot
 * be set: nothing to check); the first that did not is on stderr. */
static void init_in_every_room(int report)
{
    uint64_t good = 0;
    for (int room = 9; room >= 0; room--, good++) {
        int before = count_fds();
        if (!limit_descriptors(room)) {
            good = 10;
            break;
        }
        int rc = init_workers(2);
        if (rc != RT_ESYS || !strstr(rt_last_error(), "no worker could be started") ||
            count_fds() != before) {
            fprintf(stderr, "room %d: rt_init = %d (%s), %d descriptors, %d before\n", room,
                    rc, rt_last_error(), count_fds(), before);
            break;
        }
    }
    if (write(report, &good, sizeof good) != sizeof good)
        _exit(4);
    _exit(0);
}

START_TEST(no_room_for_a_worker_fails_rt_init)
{
    ck_assert_uint_eq(run_helper(init_in_every_room), 10);
}
END_TEST

static int fifty_rc;

static void init_fifty(void)
{
    fifty_rc = init_workers(50);
}

/* Room for two of the 50 workers asked for: rt_init() says how many
 * started, tasks run on them, and nothing hangs. */
START_TEST(room_for_a_few_workers_runs_every_task)
{
    if (!limit_descriptors(3 + 2 * 3 + 3 + 3)) /* the last 3 for capture_output() */
        return;
    const char *said = capture_output(init_fifty);
    ck_ok(fifty_rc);
    ck_assert_msg(strstr(said, "of the 50 workers asked for could start"),
                  "rt_init said: %s", said);
    doubles(100);
    ck_ok(rt_shutdown());
}
END_TEST

Suite *hostile_suite(void)
{
    Suite *s = suite_create("hostile");
    TCase *tc = tcase_create("bytes from a worker");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_length_near_two_to_the_64_is_refused);
    tcase_add_test(tc, a_huge_payload_announced_is_refused);
    tcase_add_test(tc, descriptors_a_result_should_not_carry_are_closed);
    tcase_add_test(tc, a_result_shrunk_behind_our_back_is_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("what a task leaves behind");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, an_environment_written_in_place_is_reset);
    tcase_add_test(tc, a_task_with_arguments_leaves_the_environment_clean);
    tcase_add_test(tc, env_vars_are_one_tasks_alone);
    tcase_add_test(tc, env_vars_of_an_actor_last_its_life);
    tcase_add_test(tc, env_vars_of_a_task_that_a_task_submits);
    tcase_add_test(tc, a_workers_last_task_ends_its_process);
    tcase_add_test(tc, a_task_that_scribbles_its_run_slot_loses_no_later_task);
    suite_add_tcase(s, tc);
    tc = tcase_create("ordinary application behaviour");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_forked_helper_holds_nothing_up);
    tcase_add_test(tc, a_task_changes_no_process_state_for_the_next);
    tcase_add_test(tc, a_thread_left_behind_changes_no_process_state_for_later_tasks);
    tcase_add_test(tc, a_task_runs_a_shell);
    tcase_add_test(tc, a_sigsys_from_elsewhere_ends_the_worker);
    tcase_add_test(tc, the_main_thread_may_end_first);
    tcase_add_test(tc, waiting_for_every_child_ends);
    tcase_add_test(tc, nothing_outlives_a_killed_application);
    tcase_add_test(tc, ctrl_c_does_not_reach_workers);
    tcase_add_test(tc, results_flow_while_nobody_reads_stdout);
    tcase_add_test(tc, tasks_wait_for_the_worker_that_could_start);
    tcase_add_test(tc, no_room_for_a_worker_fails_rt_init);
    tcase_add_test(tc, room_for_a_few_workers_runs_every_task);
    suite_add_tcase(s, tc);
    return s;
}

/*
 * test_checkpoint.c - results kept in a folder (rt_config.checkpoint_dir,
 * rtask_checkpoint(7)): a run killed at a random moment resumes where it
 * stopped, with the same results and without running again what was
 * kept; damaged files are run again; another program's folder is
 * refused; nondeterministic tasks always run.
 */
#include "tests.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { CHAINS = 10, STEPS = 100 };

/* What a step takes besides the step before: where it logs that it ran. */
typedef struct step_arg {
    char log[128];
    uint32_t chain, step;
} step_arg;

int k_step(const rt_value *args, size_t n, rt_result *r);
int k_two(const void *arg, size_t len, rt_result *r);

static uint64_t mix(uint64_t prev, uint32_t chain, uint32_t step)
{
    uint64_t x = prev ^ ((uint64_t)chain << 32 | step);
    x *= 0x9e3779b97f4a7c15ULL;
    return x ^ x >> 29;
}

/* Log "chain step", wait a millisecond, and give mix() of the step
 * before. */
int k_step(const rt_value *args, size_t n, rt_result *r)
{
    step_arg a;
    uint64_t prev;
    if (n != 2 || args[0].len != sizeof prev || args[1].len != sizeof a)
        return 1;
    memcpy(&prev, args[0].data, sizeof prev);
    memcpy(&a, args[1].data, sizeof a);
    int fd = open(a.log, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd < 0 || write(fd, "x", 1) != 1)
        return 2;
    close(fd);
    usleep(1000);
    uint64_t v = mix(prev, a.chain, a.step);
    return rt_result_set(r, &v, sizeof v);
}

/* Two results: the argument's bytes and their length; logs each run. */
int k_two(const void *arg, size_t len, rt_result *r)
{
    int fd = open(arg, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd < 0 || write(fd, "x", 1) != 1)
        return 2;
    close(fd);
    uint64_t n = len;
    return rt_result_set_at(r, 0, arg, len) || rt_result_set_at(r, 1, &n, sizeof n);
}

/* ---- helpers ---------------------------------------------------------------------- */

static void start_kept(const char *dir)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_gpus = 0;
    c.num_workers = 2;
    c.checkpoint_dir = dir;
    ck_ok(rt_init_config(&c));
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* The results kept in dir (not PROGRAM, not a file being written). */
static int kept_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.' && strcmp(e->d_name, "PROGRAM") != 0;
    closedir(d);
    return n;
}

/* The graph: CHAINS chains of STEPS steps from a put seed; the last
 * values, or 0 each when the runtime could not give them. */
static void run_graph(const char *log, uint64_t *last)
{
    uint64_t seed = 42;
    rt_ref start, now[CHAINS];
    ck_ok(rt_put(&seed, sizeof seed, &start));
    for (uint32_t c = 0; c < CHAINS; c++) {
        rt_ref prev = start;
        for (uint32_t s = 0; s < STEPS; s++) {
            step_arg a = {.chain = c, .step = s};
            snprintf(a.log, sizeof a.log, "%s", log);
            rt_arg args[2] = {RT_ARG_REF(prev), RT_ARG_BYTES(&a, sizeof a)};
            ck_ok(rt_remote_args(k_step, NULL, args, 2, &now[c]));
            if (s > 0)
                ck_ok(rt_release(prev));
            prev = now[c];
        }
    }
    ck_ok(rt_release(start));
    for (uint32_t c = 0; c < CHAINS; c++)
        last[c] = get_u64(now[c], 120000);
}

static void want_last(uint64_t *want)
{
    for (uint32_t c = 0; c < CHAINS; c++) {
        want[c] = 42;
        for (uint32_t s = 0; s < STEPS; s++)
            want[c] = mix(want[c], c, s);
    }
}

/* ---- tests ------------------------------------------------------------------------ */

/* The run's folder and its log, gone. */
static void remove_files(const char *dir, const char *log)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, log);
    ck_assert_int_eq(system(cmd), 0);
}

/* A run of 1 000 tasks SIGKILLed at a random moment, then run again with
 * the same folder: the same results as a run never killed, and only the
 * tasks whose results were not kept run again. */
START_TEST(a_killed_run_resumes_where_it_stopped)
{
    char dir[128] = "", log[128] = "";
    temp_path(dir, sizeof dir, "kept");
    temp_path(log, sizeof log, "kept-log");
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    long kill_at = 150 + rand() % 600; /* tasks run by then */
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        start_kept(dir);
        uint64_t last[CHAINS];
        run_graph(log, last);
        _exit(0);
    }
    while (file_size(log) < kill_at)
        usleep(2000);
    kill(child, SIGKILL);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFSIGNALED(status));
    usleep(100000); /* its workers end with it */
    long ran_first = file_size(log);
    int kept = kept_in(dir);
    ck_assert_int_gt(kept, 0);
    ck_assert_int_lt(kept, CHAINS * STEPS);
    ck_assert_int_le(kept, ran_first);

    start_kept(dir);
    uint64_t last[CHAINS], want[CHAINS];
    run_graph(log, last);
    ck_ok(rt_shutdown());
    want_last(want);
    for (int c = 0; c < CHAINS; c++)
        ck_assert_uint_eq(last[c], want[c]);
    long ran_again = file_size(log) - ran_first;
    ck_assert_int_eq(ran_again, CHAINS * STEPS - kept); /* none kept ran again */
    ck_assert_int_eq(kept_in(dir), CHAINS * STEPS);

    /* A third run runs nothing. */
    start_kept(dir);
    run_graph(log, last);
    ck_ok(rt_shutdown());
    ck_assert_int_eq(file_size(log) - ran_first - ran_again, 0);
    for (int c = 0; c < CHAINS; c++)
        ck_assert_uint_eq(last[c], want[c]);
    remove_files(dir, log);
}
END_TEST

/* A file cut short or changed is not taken: its task runs again; several
 * results are kept, and taken, together. */
START_TEST(a_damaged_checkpoint_runs_its_task_again)
{
    char dir[128] = "", log[128] = "";
    temp_path(dir, sizeof dir, "kept");
    temp_path(log, sizeof log, "kept-log");
    rt_opts opts = RT_OPTS_INIT;
    opts.num_returns = 2;
    for (int run = 0; run < 2; run++) {
        start_kept(dir);
        for (int i = 0; i < 3; i++) {
            rt_ref refs[2];
            ck_ok(rt_remote_n(k_two, &opts, log, strlen(log) + 1 + (size_t)i, refs));
            char *bytes;
            size_t len;
            ck_ok(rt_get(refs[0], (void **)&bytes, &len, 60000));
            ck_assert_uint_eq(len, strlen(log) + 1 + (size_t)i);
            rt_free(bytes);
            ck_assert_uint_eq(get_u64(refs[1], 60000), strlen(log) + 1 + (size_t)i);
        }
        ck_ok(rt_shutdown());
        if (run == 0) {
            ck_assert_int_eq(file_size(log), 3);
            ck_assert_int_eq(kept_in(dir), 6);
            /* Damage two files: one cut short, one changed. */
            DIR *d = opendir(dir);
            int damaged = 0;
            for (struct dirent *e; (e = readdir(d)) && damaged < 2;) {
                if (e->d_name[0] == '.' || strcmp(e->d_name, "PROGRAM") == 0)
                    continue;
                char path[512];
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                if (damaged++ == 0) {
                    ck_assert_int_eq(truncate(path, file_size(path) - 1), 0);
                } else {
                    int fd = open(path, O_WRONLY);
                    ck_assert_int_eq(pwrite(fd, "Z", 1, file_size(path) - 1), 1);
                    close(fd);
                }
            }
            closedir(d);
        }
    }
    /* Two files damaged: one or two tasks ran again, never all. */
    ck_assert_int_ge(file_size(log), 4);
    ck_assert_int_le(file_size(log), 5);
    remove_files(dir, log);
}
END_TEST

/* Another program's folder is refused; a nondeterministic task always
 * runs, and so do the tasks that take its result. */
START_TEST(another_programs_folder_is_refused)
{
    char dir[128], path[256], log[128];
    temp_path(dir, sizeof dir, "kept");
    temp_path(log, sizeof log, "kept-log");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/PROGRAM", dir);
    FILE *f = fopen(path, "w");
    fputs("rtask checkpoints of /usr/bin/other 0123\n", f);
    fclose(f);
    rt_config c = RT_CONFIG_INIT;
    c.num_gpus = 0;
    c.checkpoint_dir = dir;
    ck_fails(rt_init_config(&c), RT_EINVAL, "another program's results");
    setenv("RTASK_CHECKPOINT_DIR", dir, 1);
    ck_fails(rt_init(0), RT_EINVAL, "RTASK_CHECKPOINT_DIR");
    unsetenv("RTASK_CHECKPOINT_DIR");
    ck_assert_int_eq(unlink(path), 0);

    rt_opts opts = RT_OPTS_INIT;
    opts.nondeterministic = 1;
    for (int run = 0; run < 2; run++) {
        start_kept(dir);
        uint64_t seed = 7;
        step_arg a = {.chain = 1, .step = 1};
        snprintf(a.log, sizeof a.log, "%s", log);
        rt_ref put, first, second;
        ck_ok(rt_put(&seed, sizeof seed, &put));
        rt_arg args[2] = {RT_ARG_REF(put), RT_ARG_BYTES(&a, sizeof a)};
        ck_ok(rt_remote_args(k_step, &opts, args, 2, &first));
        rt_arg after[2] = {RT_ARG_REF(first), RT_ARG_BYTES(&a, sizeof a)};
        ck_ok(rt_remote_args(k_step, NULL, after, 2, &second));
        ck_assert_uint_eq(get_u64(second, 60000), mix(mix(7, 1, 1), 1, 1));
        ck_ok(rt_release(first));
        ck_ok(rt_release(put));
        ck_ok(rt_shutdown());
    }
    ck_assert_int_eq(file_size(log), 4); /* both ran in both runs */
    ck_assert_int_eq(kept_in(dir), 0);
    opts.nondeterministic = 2;
    start_kept(dir);
    rt_ref ref;
    ck_fails(rt_remote(t_echo, &opts, "x", 1, &ref), RT_EINVAL, "nondeterministic");
    ck_ok(rt_shutdown());
    remove_files(dir, log);
}
END_TEST

Suite *checkpoint_suite(void)
{
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("checkpoint");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, a_killed_run_resumes_where_it_stopped);
    tcase_add_test(tc, a_damaged_checkpoint_runs_its_task_again);
    tcase_add_test(tc, another_programs_folder_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

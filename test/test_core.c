/* test_core.c - wrong answers the core once gave, each tried as a user
 * would: a task that got an actor's death, short tasks stuck behind a long
 * one, tasks run twice with max_retries = 0, and a task that closed its
 * worker's socket and ran forever. */
#include "tests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static rt_config two_workers(int workers)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = workers;
    c.num_gpus = 0;
    c.num_workers = workers;
    return c;
}

static int victim_ping(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    (void)arg;
    (void)len;
    (void)r;
    return 0;
}

/* An actor and a task with the same resource request once shared a
 * scheduling class, so killing the actor failed the task with the
 * actor's death. */
START_TEST(a_task_never_gets_an_actors_death)
{
    start_runtime();
    static const rt_actor_class victim = {"Victim", NULL, NULL};
    for (int round = 0; round < 5; round++) {
        rt_opts o = RT_OPTS_INIT;
        o.num_cpus = round % 2 ? 1 : RT_DEFAULT;
        rt_actor a;
        rt_ref call, task;
        ck_ok(rt_actor_create(&victim, &o, NULL, 0, &a));
        ck_ok(rt_actor_call(a, victim_ping, NULL, 0, &call));
        ck_ok(rt_get(call, NULL, NULL, 60000));
        ck_ok(rt_actor_kill(a));
        rt_opts same = RT_OPTS_INIT;
        same.num_cpus = round % 2 ? 1 : 0;
        uint64_t x = (uint64_t)round;
        ck_ok(rt_remote(t_double, &same, &x, sizeof x, &task));
        uint64_t *v;
        ck_ok(rt_get(task, (void **)&v, NULL, 60000));
        ck_assert_uint_eq(*v, 2 * x);
        rt_free(v);
    }
    ck_ok(rt_shutdown());
}
END_TEST

/* rt_remote(3): a long task never has short ones queued behind it while
 * another worker idles. */
START_TEST(short_tasks_do_not_wait_behind_a_long_one)
{
    rt_config c = two_workers(2);
    ck_ok(rt_init_config(&c));
    enum { N = 200 };
    uint64_t long_ms = 1500, zero = 0;
    rt_ref slow, quick[N];
    long start = now_ms();
    ck_ok(rt_remote(t_nap, NULL, &long_ms, sizeof long_ms, &slow));
    for (int i = 0; i < N; i++)
        ck_ok(rt_remote(t_nap, NULL, &zero, sizeof zero, &quick[i]));
    for (int i = 0; i < N; i++)
        ck_ok(rt_get(quick[i], NULL, NULL, 60000));
    long took = now_ms() - start;
    ck_assert_msg(took < 1000, "200 no-op tasks took %ld ms beside a 1.5 s task",
                  took);
    ck_ok(rt_get(slow, NULL, NULL, 60000));
    ck_ok(rt_shutdown());
}
END_TEST

/* A short task that went behind a task of its class before that one ran
 * long is taken back for the other worker once it does, though that
 * worker ran out of work before (it went idle when the long one was still
 * within its class's usual time). */
START_TEST(a_short_task_queued_behind_one_that_turns_long_is_taken_back)
{
    rt_config c = two_workers(2);
    ck_ok(rt_init_config(&c));
    uint64_t usual_ms = 100, long_ms = 6000, zero = 0;
    rt_ref usual[2], slow, quick[2];
    for (int i = 0; i < 2; i++) /* the class is known to take 100 ms */
        ck_ok(rt_remote(t_nap, NULL, &usual_ms, sizeof usual_ms, &usual[i]));
    /* Sent as the first of those ends: the long one and a short one to
     * the worker that answered first, the other short one behind the
     * other's 100 ms task. */
    long start = now_ms();
    ck_ok(rt_remote(t_nap, NULL, &long_ms, sizeof long_ms, &slow));
    for (int i = 0; i < 2; i++)
        ck_ok(rt_remote(t_nap, NULL, &zero, sizeof zero, &quick[i]));
    for (int i = 0; i < 2; i++)
        ck_ok(rt_get(quick[i], NULL, NULL, 60000));
    long took = now_ms() - start;
    ck_assert_msg(took < 3000, "two no-op tasks took %ld ms beside a 6 s task", took);
    for (int i = 0; i < 2; i++)
        ck_ok(rt_get(usual[i], NULL, NULL, 60000));
    ck_ok(rt_get(slow, NULL, NULL, 60000));
    ck_ok(rt_shutdown());
}
END_TEST

/* One worker: results of short tasks that ran before a long one reach
 * rt_get() while the long one runs. */
START_TEST(results_before_a_long_task_are_not_held)
{
    rt_config c = two_workers(1);
    ck_ok(rt_init_config(&c));
    enum { N = 20 };
    uint64_t long_ms = 1500, blocker_ms = 30, zero = 0;
    rt_ref warm, quick[N], slow, blocker;
    for (int i = 0; i < 10; i++) { /* the class is known to be quick */
        ck_ok(rt_remote(t_nap, NULL, &zero, sizeof zero, &warm));
        ck_ok(rt_get(warm, NULL, NULL, 60000));
    }
    /* While the blocker runs, the rest reach the worker's socket, and it
     * reads them as one batch. */
    ck_ok(rt_remote(t_nap, NULL, &blocker_ms, sizeof blocker_ms, &blocker));
    long start = now_ms();
    for (int i = 0; i < N; i++)
        ck_ok(rt_remote(t_nap, NULL, &zero, sizeof zero, &quick[i]));
    ck_ok(rt_remote(t_nap, NULL, &long_ms, sizeof long_ms, &slow));
    for (int i = 0; i < N; i++)
        ck_ok(rt_get(quick[i], NULL, NULL, 60000));
    long took = now_ms() - start;
    ck_assert_msg(took < 1000, "results waited %ld ms for a 1.5 s task", took);
    ck_ok(rt_get(blocker, NULL, NULL, 60000));
    ck_ok(rt_get(slow, NULL, NULL, 60000));
    ck_ok(rt_shutdown());
}
END_TEST

/* The ids the log file holds: counts[id] = how often it was logged. */
static void read_log(const char *path, int *counts, int n)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    uint64_t id;
    while (fread(&id, sizeof id, 1, f) == 1) {
        ck_assert_uint_lt(id, (uint64_t)n);
        counts[id]++;
    }
    fclose(f);
    unlink(path);
}

/* max_retries = 0 means at most once: tasks that ran in a worker that was
 * then killed, before their results came back, are not run again. */
START_TEST(max_retries_zero_runs_a_task_at_most_once)
{
    rt_config c = two_workers(1);
    ck_ok(rt_init_config(&c));
    enum { N = 300, DIE_AT = 250 };
    log_record rec = {.id = 0};
    temp_path(rec.path, sizeof rec.path, "once");
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 0;
    rt_ref refs[N];
    for (int i = 0; i < N; i++) {
        rec.id = (uint64_t)i;
        rec.die = i == DIE_AT;
        ck_ok(rt_remote(t_log, &o, &rec, sizeof rec, &refs[i]));
    }
    int ok[N] = {0}, counts[N] = {0};
    for (int i = 0; i < N; i++) {
        int rc = rt_get(refs[i], NULL, NULL, 60000);
        ck_assert_msg(rc == 0 || rc == RT_EWORKERDIED, "task %d: %d", i, rc);
        ok[i] = rc == 0;
    }
    ck_ok(rt_shutdown());
    read_log(rec.path, counts, N);
    ck_assert_int_eq(counts[DIE_AT], 1);
    ck_assert_int_eq(ok[DIE_AT], 0);
    for (int i = 0; i < N; i++) {
        ck_assert_msg(counts[i] <= 1, "task %d ran %d times", i, counts[i]);
        if (ok[i])
            ck_assert_msg(counts[i] == 1, "task %d succeeded but ran %d times", i,
                          counts[i]);
    }
}
END_TEST

/* A task that closes all its descriptors loses the worker's connection.
 * Its small result is safe in the journal; a large one (a memfd) cannot
 * reach the runtime: the task spends its retries and fails, instead of
 * running forever. */
START_TEST(a_task_that_closes_its_socket_fails)
{
    start_runtime();
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 0;
    rt_ref ref;
    ck_ok(rt_remote(t_close_all, &o, NULL, 0, &ref));
    size_t len = 99;
    ck_ok(rt_get(ref, NULL, &len, 10000));
    ck_assert_uint_eq(len, 0);
    uint64_t big = 1 << 20;
    ck_ok(rt_remote(t_close_all, &o, &big, sizeof big, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 10000), RT_EWORKERDIED, "lost its connection");
    o.max_retries = 2;
    ck_ok(rt_remote(t_close_all, &o, &big, sizeof big, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 10000), RT_EWORKERDIED, "lost its connection");
    /* The pool carries on. */
    uint64_t x = 21;
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 42);
    ck_ok(rt_shutdown());
}
END_TEST

Suite *core_suite(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("wrong answers");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_task_never_gets_an_actors_death);
    tcase_add_test(tc, short_tasks_do_not_wait_behind_a_long_one);
    tcase_add_test(tc, a_short_task_queued_behind_one_that_turns_long_is_taken_back);
    tcase_add_test(tc, results_before_a_long_task_are_not_held);
    tcase_add_test(tc, max_retries_zero_runs_a_task_at_most_once);
    tcase_add_test(tc, a_task_that_closes_its_socket_fails);
    suite_add_tcase(s, tc);
    return s;
}

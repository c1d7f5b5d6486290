/*
 * test_cancel.c - stopping tasks.  rt_cancel(): a queued task is
 * removed, a running one runs to its end (its result dropped) or, with
 * force, its worker is killed and it is not run again; finished tasks,
 * bad handles and actor calls.  timeout_ms: a task that runs longer is
 * killed, once, and reported with RT_EKILLED.
 */
#include "tests.h"

#include "../lib/base/clock.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An actor class of test_actors.c. */
int counter_init(const void *arg, size_t len, void **state);
void counter_fini(void *state);
int counter_sleep(void *state, const void *arg, size_t len, rt_result *r);

static rt_ref sleeper(uint64_t ms)
{
    rt_ref ref;
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &ref));
    return ref;
}

static void ck_cancelled(rt_ref ref, const char *why)
{
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_ECANCELLED, why);
}

/* Two tasks hold both CPUs; the third waits, and is removed. */
START_TEST(a_queued_task_is_removed)
{
    start_runtime();
    rt_ref busy[2] = {sleeper(500), sleeper(500)}, queued = sleeper(1);
    ck_ok(rt_cancel(queued, 0));
    ck_cancelled(queued, "cancelled before it ran");
    for (int i = 0; i < 2; i++)
        ck_ok(rt_get(busy[i], NULL, NULL, 60000));
    ck_fails(rt_cancel(queued, 0), RT_EBADREF, "unknown or consumed");
    ck_ok(rt_shutdown());
}
END_TEST

/* Without force a running task ends as it would; its result is dropped. */
START_TEST(a_running_task_runs_to_its_end)
{
    start_runtime();
    rt_ref ref = sleeper(400);
    usleep(150000);
    uint64_t start = rt__now_ns();
    ck_ok(rt_cancel(ref, 0));
    ck_cancelled(ref, "it ran to its end");
    ck_assert_uint_ge(rt__now_ns() - start, 150 * 1000000ull);
    ck_ok(rt_shutdown());
}
END_TEST

/* With force its worker is killed at once, the task is not retried, and
 * the pool goes on. */
START_TEST(force_kills_the_worker)
{
    start_runtime();
    rt_ref ref = sleeper(30000);
    usleep(150000);
    uint64_t start = rt__now_ns();
    ck_ok(rt_cancel(ref, 1));
    ck_cancelled(ref, "its worker was killed");
    ck_assert_uint_lt(rt__now_ns() - start, 10 * 1000000000ull);
    uint64_t x = 21;
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 42);
    ck_ok(rt_shutdown());
}
END_TEST

/* A finished task is left as it is; a handle never given is refused. */
/* A force cancel at once, on a runtime just started: the task may be on
 * its way to a worker whose process the fork server has not yet named.
 * The worker is killed all the same, every time. */
START_TEST(force_right_after_init_is_never_lost)
{
    size_t runs = scaled(60);
    for (size_t i = 0; i < runs; i++) {
        rt_config c = RT_CONFIG_INIT;
        c.num_cpus = 2;
        ck_ok(rt_init_config(&c));
        uint64_t ms = 600000;
        rt_ref ref;
        ck_ok(rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &ref));
        ck_ok(rt_cancel(ref, 1));
        int rc = rt_get(ref, NULL, NULL, 10000);
        ck_assert_msg(rc == RT_ECANCELLED, "run %zu: rt_get = %d (%s)", i, rc, rt_last_error());
        ck_ok(rt_shutdown());
    }
}
END_TEST

START_TEST(finished_tasks_and_bad_handles)
{
    start_runtime();
    rt_ref ref = sleeper(1);
    usleep(200000);
    ck_ok(rt_cancel(ref, 1));
    ck_ok(rt_get(ref, NULL, NULL, 60000));
    ck_fails(rt_cancel((rt_ref){12345}, 0), RT_EBADREF, "unknown");
    ck_ok(rt_shutdown());
    ck_fails(rt_cancel(ref, 0), RT_ESHUTDOWN, "shut down");
}
END_TEST

/* An actor's queued call is removed and the actor lives on; force is
 * for tasks. */
START_TEST(actor_calls)
{
    start_runtime();
    static const rt_actor_class cls = {"Sleeper", counter_init, counter_fini};
    rt_actor a;
    ck_ok(rt_actor_create(&cls, NULL, NULL, 0, &a));
    uint64_t ms = 400;
    rt_ref first, second;
    ck_ok(rt_actor_call(a, counter_sleep, &ms, sizeof ms, &first));
    ck_ok(rt_actor_call(a, counter_sleep, &ms, sizeof ms, &second));
    ck_fails(rt_cancel(second, 1), RT_EINVAL, "force is for tasks");
    ck_ok(rt_cancel(second, 0));
    ck_ok(rt_get(first, NULL, NULL, 60000));
    ck_cancelled(second, "rt_cancel");
    rt_ref third;
    ms = 1;
    ck_ok(rt_actor_call(a, counter_sleep, &ms, sizeof ms, &third));
    ck_ok(rt_get(third, NULL, NULL, 60000));
    ck_ok(rt_actor_kill(a));
    ck_ok(rt_shutdown());
}
END_TEST

/* A task past its timeout_ms is killed at about that time, not retried
 * (it ran once, whatever its max_retries), and the pool goes on; a quick
 * one with a limit is untouched. */
START_TEST(timeout_kills_a_long_task_once)
{
    start_runtime();
    log_record rec = {.id = 1, .sleep_ms = 30000};
    temp_path(rec.path, sizeof rec.path, "timeout");
    rt_opts o = RT_OPTS_INIT;
    o.timeout_ms = 300;
    o.max_retries = 3;
    rt_ref ref;
    uint64_t start = rt__now_ns();
    ck_ok(rt_remote(t_log, &o, &rec, sizeof rec, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EKILLED, "timeout_ms (300 ms)");
    uint64_t took_ms = (rt__now_ns() - start) / 1000000;
    ck_assert_uint_ge(took_ms, 250);
    ck_assert_uint_lt(took_ms, 10000);
    struct stat st;
    ck_assert_int_eq(stat(rec.path, &st), 0);
    ck_assert_int_eq(st.st_size, sizeof rec.id); /* one run */
    unlink(rec.path);
    o.timeout_ms = 10000;
    uint64_t x = 4;
    ck_assert_uint_eq(call_u64(t_double, &o, &x, sizeof x), 8);
    ck_ok(rt_shutdown());
}
END_TEST

/* timeout_ms is a count of milliseconds, and for tasks. */
START_TEST(timeout_is_checked)
{
    start_runtime();
    rt_opts o = RT_OPTS_INIT;
    rt_ref ref;
    o.timeout_ms = -1;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "timeout_ms");
    o.timeout_ms = 1000;
    static const rt_actor_class cls = {"Sleeper", counter_init, counter_fini};
    rt_actor a;
    ck_fails(rt_actor_create(&cls, &o, NULL, 0, &a), RT_EINVAL, "timeout_ms is for tasks");
    ck_ok(rt_shutdown());
}
END_TEST

Suite *cancel_suite(void)
{
    Suite *s = suite_create("cancel");
    TCase *tc = tcase_create("cancel");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_queued_task_is_removed);
    tcase_add_test(tc, a_running_task_runs_to_its_end);
    tcase_add_test(tc, force_kills_the_worker);
    tcase_add_test(tc, force_right_after_init_is_never_lost);
    tcase_add_test(tc, finished_tasks_and_bad_handles);
    tcase_add_test(tc, actor_calls);
    tcase_add_test(tc, timeout_kills_a_long_task_once);
    tcase_add_test(tc, timeout_is_checked);
    suite_add_tcase(s, tc);
    return s;
}

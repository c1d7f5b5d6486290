/*
 * test_returns.c - tasks of several results (rt_opts.num_returns,
 * rt_remote_n(), rt_result_set_at()), as Ray's num_returns: each result
 * its own object, waited for, read, passed on and released alone;
 * through the graph, failures, cancel, retries and nested calls.
 */
#include "tests.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- task functions (extern: dladdr() names them) --------------------------------- */

int n_split(const void *arg, size_t len, rt_result *r);
int n_split_args(const rt_value *args, size_t n, rt_result *r);
int n_split_then_fail(const void *arg, size_t len, rt_result *r);
int n_sum(const rt_value *args, size_t n, rt_result *r);
int n_big_second(const void *arg, size_t len, rt_result *r);
int n_die_once_then_split(const void *arg, size_t len, rt_result *r);
int n_fail_once_then_split(const void *arg, size_t len, rt_result *r);
int n_set_at(const void *arg, size_t len, rt_result *r);
int n_nested(const void *arg, size_t len, rt_result *r);
int n_sleep(const void *arg, size_t len, rt_result *r);
int n_checksum(const rt_value *args, size_t n, rt_result *r);

/* Result i is the i-th uint64_t of its argument. */
int n_split(const void *arg, size_t len, rt_result *r)
{
    const uint64_t *v = arg;
    for (size_t i = 0; i < len / sizeof *v; i++) {
        int rc = rt_result_set_at(r, (unsigned)i, &v[i], sizeof v[i]);
        if (rc)
            return 50 + rc;
    }
    return 0;
}

/* The same over its arguments: result i is argument i's bytes. */
int n_split_args(const rt_value *args, size_t n, rt_result *r)
{
    for (size_t i = 0; i < n; i++)
        if (rt_result_set_at(r, (unsigned)i, args[i].data, args[i].len))
            return 1;
    return 0;
}

int n_split_then_fail(const void *arg, size_t len, rt_result *r)
{
    n_split(arg, len, r);
    return 7;
}

/* The sum of its arguments, each a uint64_t. */
int n_sum(const rt_value *args, size_t n, rt_result *r)
{
    uint64_t sum = 0, v;
    for (size_t i = 0; i < n; i++) {
        if (args[i].len != sizeof v)
            return 100 + (int)i;
        memcpy(&v, args[i].data, sizeof v);
        sum += v;
    }
    return rt_result_set(r, &sum, sizeof sum);
}

/* checksum() of its one argument. */
int n_checksum(const rt_value *args, size_t n, rt_result *r)
{
    (void)n;
    uint64_t sum = checksum(args[0].data, args[0].len);
    return rt_result_set(r, &sum, sizeof sum);
}

/* The checksum of T_BIG_RESULT bytes of pattern_word(). */
static uint64_t pattern_checksum(void)
{
    uint64_t *big = malloc(T_BIG_RESULT);
    ck_assert_ptr_nonnull(big);
    for (size_t i = 0; i < T_BIG_RESULT / 8; i++)
        big[i] = pattern_word(i);
    uint64_t sum = checksum(big, T_BIG_RESULT);
    free(big);
    return sum;
}

/* Result 0 is 8 bytes, result 1 T_BIG_RESULT bytes of pattern_word(). */
int n_big_second(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    uint64_t *big = malloc(T_BIG_RESULT), small = 5;
    if (!big)
        return 1;
    for (size_t i = 0; i < T_BIG_RESULT / 8; i++)
        big[i] = pattern_word(i);
    int rc = rt_result_set(r, &small, sizeof small) ||
             rt_result_set_at(r, 1, big, T_BIG_RESULT);
    free(big);
    return rc;
}

/* Die on its first run (a file named by the argument marks it), then
 * give 1, 2. */
int n_die_once_then_split(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    int fd = open(arg, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        close(fd);
        uint64_t junk = 99;
        (void)rt_result_set_at(r, 1, &junk, sizeof junk);
        raise(SIGKILL);
    }
    uint64_t v[2] = {1, 2};
    return n_split(v, sizeof v, r);
}

/* Set results, then fail on its first run; then give 3, 4. */
int n_fail_once_then_split(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    int fd = open(arg, O_WRONLY | O_CREAT | O_EXCL, 0600);
    uint64_t v[2] = {3, 4}, junk[2] = {98, 99};
    n_split(fd >= 0 ? junk : v, sizeof v, r);
    if (fd >= 0)
        close(fd);
    return fd >= 0 ? 9 : 0;
}

/* Set result number *arg (an unsigned): what rt_result_set_at() said,
 * as the status (0 when it took it). */
int n_set_at(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    unsigned index;
    memcpy(&index, arg, sizeof index);
    uint64_t one = 1;
    return -rt_result_set_at(r, index, &one, sizeof one);
}

/* A task's own task of three results: their sum, each read alone. */
int n_nested(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    rt_opts opts = RT_OPTS_INIT;
    opts.num_returns = 3;
    uint64_t v[3] = {100, 20, 3}, sum = 0;
    rt_ref refs[3];
    int rc = rt_remote_n(n_split, &opts, v, sizeof v, refs);
    if (rc)
        return 200 - rc;
    for (int i = 2; i >= 0; i--) {
        void *data;
        size_t n;
        if ((rc = rt_get(refs[i], &data, &n, RT_FOREVER)) || n != sizeof sum)
            return 300 - rc;
        uint64_t x;
        memcpy(&x, data, sizeof x);
        rt_free(data);
        sum += x;
    }
    return rt_result_set(r, &sum, sizeof sum);
}

int n_sleep(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    (void)r;
    while (!rt_cancelled())
        usleep(1000);
    return 0;
}

/* ---- helpers ---------------------------------------------------------------------- */

static rt_opts returns(int k)
{
    rt_opts opts = RT_OPTS_INIT;
    opts.num_returns = k;
    return opts;
}

/* ref's result: len bytes, or the error rt_get() gave. */
static int get_len(rt_ref ref, size_t *len)
{
    void *data = NULL;
    int rc = rt_get(ref, &data, len, 60000);
    rt_free(data);
    return rc;
}

/* ---- tests ------------------------------------------------------------------------ */

/* Each result is its own object, read in any order, one released
 * unread; a result never set is empty. */
START_TEST(each_result_is_its_own_object)
{
    start_runtime();
    rt_opts opts = returns(4);
    uint64_t v[3] = {11, 22, 33};
    rt_ref refs[4];
    ck_ok(rt_remote_n(n_split, &opts, v, sizeof v, refs));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            ck_assert_uint_ne(refs[i].id, refs[j].id);
    size_t ready = 0;
    ck_ok(rt_wait(&refs[2], 1, 1, 60000, &ready));
    ck_assert_uint_eq(ready, 1);
    ck_assert_uint_eq(get_u64(refs[2], 60000), 33);
    ck_ok(rt_release(refs[1]));
    size_t len = 99;
    ck_ok(get_len(refs[3], &len));
    ck_assert_uint_eq(len, 0);
    ck_assert_uint_eq(get_u64(refs[0], 60000), 11);
    ck_fails(rt_get(refs[1], NULL, NULL, 0), RT_EBADREF, "handle");
    ck_ok(rt_shutdown());
}
END_TEST

/* Results feed other tasks as any object: small ones, and a large one
 * (shared memory), alone or beside their task's other results. */
START_TEST(results_go_on_along_the_graph)
{
    start_runtime();
    rt_opts opts = returns(3);
    uint64_t v[3] = {1000, 200, 30};
    rt_ref refs[3], sum, pair;
    ck_ok(rt_remote_n(n_split, &opts, v, sizeof v, refs));
    ck_ok(rt_remote_args(n_sum, NULL, (rt_arg[]){RT_ARG_REF(refs[2]), RT_ARG_REF(refs[0])},
                         2, &sum));
    ck_ok(rt_release(refs[0]));
    ck_ok(rt_remote_args(n_sum, NULL, (rt_arg[]){RT_ARG_REF(refs[1]), RT_ARG_REF(refs[1])},
                         2, &pair));
    ck_assert_uint_eq(get_u64(sum, 60000), 1030);
    ck_assert_uint_eq(get_u64(pair, 60000), 400);
    ck_ok(rt_release(refs[1]));
    ck_ok(rt_release(refs[2]));

    rt_opts two = returns(2);
    rt_ref big[2], sums;
    ck_ok(rt_remote_n(n_big_second, &two, NULL, 0, big));
    ck_ok(rt_remote_args(n_checksum, NULL, (rt_arg[]){RT_ARG_REF(big[1])}, 1, &sums));
    uint64_t want = pattern_checksum();
    ck_assert_uint_eq(get_u64(sums, 60000), want);
    void *data;
    size_t len;
    ck_ok(rt_get(big[1], &data, &len, 60000));
    ck_assert_uint_eq(len, T_BIG_RESULT);
    ck_assert_uint_eq(checksum(data, len), want);
    rt_free(data);
    ck_assert_uint_eq(get_u64(big[0], 60000), 5);

    /* rt_remote_args_n(): results from its arguments, one an object. */
    uint64_t seven = 7, eight = 8;
    rt_ref put, out[2];
    ck_ok(rt_put(&seven, sizeof seven, &put));
    ck_ok(rt_remote_args_n(n_split_args, &two,
                           (rt_arg[]){RT_ARG_REF(put), RT_ARG_BYTES(&eight, sizeof eight)}, 2,
                           out));
    ck_assert_uint_eq(get_u64(out[1], 60000), 8);
    ck_assert_uint_eq(get_u64(out[0], 60000), 7);
    ck_ok(rt_release(put));
    ck_ok(rt_shutdown());
}
END_TEST

/* A failure is every result's: a task that returns non-zero (its bytes
 * still come, as rt_get() promises), a worker that dies, and the tasks
 * that take a result then fail with RT_EDEPENDENCY. */
START_TEST(a_failure_is_every_results)
{
    start_runtime();
    rt_opts opts = returns(2);
    uint64_t v[2] = {4, 5};
    rt_ref refs[2], after;
    ck_ok(rt_remote_n(n_split_then_fail, &opts, v, sizeof v, refs));
    void *data;
    size_t len;
    ck_fails(rt_get(refs[1], &data, &len, 60000), RT_ETASK, "returned 7");
    ck_assert_uint_eq(len, 8);
    ck_assert_uint_eq(*(uint64_t *)data, 5);
    rt_free(data);
    ck_fails(rt_get(refs[0], NULL, NULL, 60000), RT_ETASK, "returned 7");

    opts.max_retries = 0;
    ck_ok(rt_remote_n((rt_fn)t_exit3, &opts, NULL, 0, refs));
    ck_ok(rt_remote_args(n_sum, NULL, (rt_arg[]){RT_ARG_REF(refs[1])}, 1, &after));
    ck_fails(get_len(refs[1], &len), RT_EWORKERDIED, "");
    ck_fails(get_len(after, &len), RT_EDEPENDENCY, "");
    ck_fails(get_len(refs[0], &len), RT_EWORKERDIED, "");
    ck_ok(rt_shutdown());
}
END_TEST

/* Setting a result past num_returns fails the task with RT_EINVAL,
 * every result of it; past RT_RETURNS_MAX the call itself refuses. */
START_TEST(a_result_past_num_returns_fails_the_task)
{
    start_runtime();
    rt_opts opts = returns(2);
    unsigned index = 2;
    rt_ref refs[2], one;
    ck_ok(rt_remote_n(n_set_at, &opts, &index, sizeof index, refs));
    ck_fails(rt_get(refs[1], NULL, NULL, 60000), RT_EINVAL, "past its num_returns (2)");
    ck_fails(rt_get(refs[0], NULL, NULL, 60000), RT_EINVAL, "past its num_returns");
    index = 1; /* a task of one result */
    ck_ok(rt_remote(n_set_at, NULL, &index, sizeof index, &one));
    ck_fails(rt_get(one, NULL, NULL, 60000), RT_EINVAL, "past its num_returns (1)");
    index = RT_RETURNS_MAX;
    ck_ok(rt_remote(n_set_at, NULL, &index, sizeof index, &one));
    ck_fails(rt_get(one, NULL, NULL, 60000), RT_ETASK, "returned 1"); /* -RT_EINVAL */
    index = 1;
    ck_ok(rt_remote_n(n_set_at, &opts, &index, sizeof index, refs));
    ck_assert_uint_eq(get_u64(refs[1], 60000), 1);
    size_t len = 9;
    ck_ok(get_len(refs[0], &len));
    ck_assert_uint_eq(len, 0);
    ck_ok(rt_shutdown());
}
END_TEST

/* Bad counts, and calls that give one handle, refuse num_returns > 1. */
START_TEST(bad_num_returns_are_refused)
{
    start_runtime();
    rt_ref refs[RT_RETURNS_MAX + 1];
    rt_opts opts = returns(2);
    ck_fails(rt_remote(t_echo, &opts, "x", 1, refs), RT_EINVAL, "rt_remote_n()");
    ck_fails(rt_remote_args(n_sum, &opts, NULL, 0, refs), RT_EINVAL, "rt_remote_args_n()");
    rt_value one = {"x", 1};
    ck_fails(rt_remote_batch(t_echo, &opts, &one, 1, refs), RT_EINVAL, "one handle per task");
    rt_actor_class cls = {.name = "counter"};
    rt_actor actor;
    ck_fails(rt_actor_create(&cls, &opts, NULL, 0, &actor), RT_EINVAL, "num_returns is for "
                                                                       "tasks");
    opts = returns(RT_RETURNS_MAX + 1);
    ck_fails(rt_remote_n(t_echo, &opts, "x", 1, refs), RT_EINVAL, "num_returns must be");
    opts = returns(-2);
    ck_fails(rt_remote_n(t_echo, &opts, "x", 1, refs), RT_EINVAL, "num_returns must be");
    opts = returns(RT_RETURNS_MAX);
    ck_ok(rt_remote_n(t_echo, &opts, "x", 1, refs));
    size_t len;
    ck_ok(get_len(refs[RT_RETURNS_MAX - 1], &len));
    ck_assert_uint_eq(len, 0);
    ck_ok(get_len(refs[0], &len));
    ck_assert_uint_eq(len, 1);
    for (int i = 1; i < RT_RETURNS_MAX - 1; i++)
        ck_ok(rt_release(refs[i]));
    /* A submission that fails makes nothing (ASan and valgrind see the
     * records of its results freed). */
    opts = returns(3);
    opts.num_cpus = 1000;
    ck_fails(rt_remote_n(t_echo, &opts, "x", 1, refs), RT_EINFEASIBLE, "");
    opts.num_cpus = 1;
    ck_fails(rt_remote_args_n(n_sum, &opts, (rt_arg[]){RT_ARG_REF(((rt_ref){12345}))}, 1,
                              refs), RT_EBADREF, "argument 0");
    opts = returns(0); /* 0 and RT_DEFAULT: one result */
    ck_ok(rt_remote_n(t_echo, &opts, "yz", 2, refs));
    ck_ok(get_len(refs[0], &len));
    ck_assert_uint_eq(len, 2);
    ck_ok(rt_shutdown());
}
END_TEST

/* rt_cancel() of any result cancels the task: every result says so. */
START_TEST(cancelling_any_result_cancels_the_task)
{
    start_runtime();
    rt_opts opts = returns(3);
    rt_ref refs[3];
    ck_ok(rt_remote_n(n_sleep, &opts, NULL, 0, refs));
    ck_ok(rt_release(refs[0])); /* the task runs on without its first handle */
    usleep(50000);
    ck_ok(rt_cancel(refs[2], RT_CANCEL_FORCE));
    ck_fails(rt_get(refs[1], NULL, NULL, 60000), RT_ECANCELLED, "");
    ck_fails(rt_get(refs[2], NULL, NULL, 60000), RT_ECANCELLED, "");
    ck_fails(rt_cancel(refs[2], 0), RT_EBADREF, "handle");
    ck_ok(rt_shutdown());
}
END_TEST

/* A run lost with its worker, or failed with retry_exceptions, leaves
 * nothing: the results are the last run's. */
START_TEST(the_results_are_the_last_runs)
{
    start_runtime();
    char mark[128];
    temp_path(mark, sizeof mark, "returns-die");
    rt_opts opts = returns(2);
    rt_ref refs[2];
    ck_ok(rt_remote_n(n_die_once_then_split, &opts, mark, strlen(mark) + 1, refs));
    ck_assert_uint_eq(get_u64(refs[1], 60000), 2);
    ck_assert_uint_eq(get_u64(refs[0], 60000), 1);
    unlink(mark);
    opts.retry_exceptions = 1;
    ck_ok(rt_remote_n(n_fail_once_then_split, &opts, mark, strlen(mark) + 1, refs));
    ck_assert_uint_eq(get_u64(refs[1], 60000), 4);
    ck_assert_uint_eq(get_u64(refs[0], 60000), 3);
    unlink(mark);
    ck_ok(rt_shutdown());
}
END_TEST

/* A task submits a task of several results and reads each. */
START_TEST(a_task_submits_a_task_of_several_results)
{
    start_runtime();
    rt_ref ref;
    ck_ok(rt_remote(n_nested, NULL, NULL, 0, &ref));
    ck_assert_uint_eq(get_u64(ref, 60000), 123);
    ck_ok(rt_shutdown());
}
END_TEST

/* The state API lists the results as objects of a task, not tasks. */
START_TEST(results_are_listed_as_objects)
{
    start_runtime();
    rt_opts opts = returns(2);
    uint64_t v[2] = {1, 2};
    rt_ref refs[2];
    ck_ok(rt_remote_n(n_split, &opts, v, sizeof v, refs));
    size_t ready;
    ck_ok(rt_wait(refs, 2, 2, 60000, &ready));
    rt_object_info *objects;
    rt_task_info *tasks;
    size_t n, found = 0;
    ck_ok(rt_list_objects(&objects, &n));
    for (size_t i = 0; i < n; i++)
        if (objects[i].ref.id == refs[0].id || objects[i].ref.id == refs[1].id) {
            found++;
            ck_assert_int_eq(objects[i].put, 0);
            ck_assert_uint_eq(objects[i].size, 8);
        }
    ck_assert_uint_eq(found, 2);
    rt_free(objects);
    ck_ok(rt_list_tasks(&tasks, &n));
    found = 0;
    for (size_t i = 0; i < n; i++)
        found += tasks[i].ref.id == refs[0].id || tasks[i].ref.id == refs[1].id;
    ck_assert_uint_eq(found, 1);
    rt_free(tasks);
    ck_ok(rt_shutdown());
}
END_TEST

Suite *returns_suite(void)
{
    Suite *s = suite_create("returns");
    TCase *tc = tcase_create("returns");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, each_result_is_its_own_object);
    tcase_add_test(tc, results_go_on_along_the_graph);
    tcase_add_test(tc, a_failure_is_every_results);
    tcase_add_test(tc, a_result_past_num_returns_fails_the_task);
    tcase_add_test(tc, bad_num_returns_are_refused);
    tcase_add_test(tc, cancelling_any_result_cancels_the_task);
    tcase_add_test(tc, the_results_are_the_last_runs);
    tcase_add_test(tc, a_task_submits_a_task_of_several_results);
    tcase_add_test(tc, results_are_listed_as_objects);
    suite_add_tcase(s, tc);
    return s;
}

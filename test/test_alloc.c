/*
 * test_alloc.c - out of memory at every step, as Lua and SQLite test it:
 * a small program runs once with the n-th allocation of the application
 * failing, for every n over its run.  Each run must end in success or a
 * clean error code, never a crash or a hang; ASan and valgrind runs of
 * the suite add "never a leak".
 */
#include "tests.h"

#include "../lib/base/alloc.h" /* internal: the allocation switch */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int ctor_ok(const void *arg, size_t len, void **state)
{
    (void)arg;
    (void)len;
    *state = NULL;
    return 0;
}

static int method_echo(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    return rt_result_set(r, arg, len);
}

/* A clean outcome: success or one of the documented errors, never a
 * time-out (that would be a hang). */
static void check_clean(int rc, const char *what)
{
    ck_assert_msg(rc == 0 || rc == RT_ENOMEM || rc == RT_ESYS ||
                      rc == RT_EWORKERDIED || rc == RT_EACTORDIED,
                  "%s = %d (%s)", what, rc, rt_last_error());
}

/* Submit fn(x) and check its doubled answer when it succeeds: named
 * and with a time limit, which a record keeps apart (node/task.h). */
static void one_task(uint64_t x, size_t big)
{
    rt_ref ref;
    rt_opts named = RT_OPTS_INIT;
    named.name = "doubler";
    named.timeout_ms = 60000;
    char *arg = big ? calloc(1, big) : NULL;
    if (arg)
        memcpy(arg, &x, sizeof x);
    int rc = rt_remote(t_double, &named, arg ? arg : (void *)&x, big ? big : sizeof x, &ref);
    free(arg);
    check_clean(rc, "rt_remote");
    if (rc < 0)
        return;
    uint64_t *v = NULL;
    rc = rt_get(ref, (void **)&v, NULL, 20000);
    check_clean(rc, "rt_get");
    if (rc == 0)
        ck_assert_uint_eq(*v, 2 * x);
    rt_free(v);
}

static void one_actor(void)
{
    static const rt_actor_class echo = {"Echo", ctor_ok, NULL};
    rt_actor a;
    rt_ref ref;
    int rc = rt_actor_create(&echo, NULL, NULL, 0, &a);
    check_clean(rc, "rt_actor_create");
    if (rc < 0)
        return;
    rc = rt_actor_call(a, method_echo, "hi", 3, &ref);
    check_clean(rc, "rt_actor_call");
    if (rc == 0) {
        char *v = NULL;
        rc = rt_get(ref, (void **)&v, NULL, 20000);
        check_clean(rc, "rt_get (actor)");
        if (rc == 0)
            ck_assert_str_eq(v, "hi");
        rt_free(v);
    }
    check_clean(rt_actor_kill(a), "rt_actor_kill");
}

static void waits_and_releases(void)
{
    rt_ref refs[3];
    int n = 0;
    for (uint64_t x = 0; x < 3; x++)
        if (rt_remote(t_double, NULL, &x, sizeof x, &refs[n]) == 0)
            n++;
    size_t ready = 0;
    if (n)
        check_clean(rt_wait(refs, (size_t)n, (size_t)n, 20000, &ready), "rt_wait");
    for (int i = 0; i < n; i++)
        rt_release(refs[i]);
}

static int graph_add(const rt_value *args, size_t n, rt_result *r)
{
    uint64_t sum = 0, v;
    for (size_t i = 0; i < n; i++) {
        memcpy(&v, args[i].data, sizeof v);
        sum += v;
    }
    return rt_result_set(r, &sum, sizeof sum);
}

/* An object, a task that takes it and bytes, one that takes that task's
 * result, a view: each step succeeds or fails cleanly, and a failed step
 * fails what takes it. */
static void one_graph(void)
{
    uint64_t one = 1, two = 2;
    rt_ref put, mid, last;
    int rc = rt_put(&one, sizeof one, &put);
    check_clean(rc, "rt_put");
    if (rc < 0)
        return;
    rt_arg args[] = {RT_ARG_REF(put), RT_ARG_BYTES(&two, sizeof two)};
    rc = rt_remote_args(graph_add, NULL, args, 2, &mid);
    check_clean(rc, "rt_remote_args");
    rt_release(put);
    if (rc < 0)
        return;
    rc = rt_remote_args(graph_add, NULL, &RT_ARG_REF(mid), 1, &last);
    check_clean(rc, "rt_remote_args (dependent)");
    rt_view v;
    int vrc = rt_get_view(mid, &v, 20000);
    check_clean(vrc == RT_EDEPENDENCY ? 0 : vrc, "rt_get_view");
    if (vrc == 0) {
        ck_assert_uint_eq(*(const uint64_t *)v.data, 3);
        rt_view_release(&v);
    }
    rt_release(mid);
    if (rc < 0)
        return;
    uint64_t *out = NULL;
    rc = rt_get(last, (void **)&out, NULL, 20000);
    check_clean(rc == RT_EDEPENDENCY ? 0 : rc, "rt_get (dependent)");
    if (rc == 0)
        ck_assert_uint_eq(*out, 3);
    rt_free(out);
}

static int three_results(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    for (uint64_t i = 0; i < 3; i++)
        if (rt_result_set_at(r, (unsigned)i, &i, sizeof i) < 0)
            return 1;
    return 0;
}

/* A task of three results, each read: its value, or a clean error. */
static void several_results(void)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_returns = 3;
    rt_ref refs[3];
    int rc = rt_remote_n(three_results, &o, NULL, 0, refs);
    check_clean(rc, "rt_remote_n");
    for (int i = 2; rc == 0 && i >= 0; i--) {
        uint64_t *v = NULL;
        int got = rt_get(refs[i], (void **)&v, NULL, 20000);
        check_clean(got, "rt_get (one of several results)");
        if (got == 0)
            ck_assert_uint_eq(*v, (uint64_t)i);
        rt_free(v);
    }
}

static void small_program(void)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_gpus = 0;
    c.num_workers = 1;
    int rc = rt_init_config(&c);
    check_clean(rc, "rt_init");
    if (rc < 0)
        return;
    one_task(21, 0);
    one_task(5, 200 * 1024); /* the argument goes in a memfd */
    waits_and_releases();
    one_graph();
    several_results();
    one_actor();
    ck_assert_int_eq(rt_shutdown(), 0);
}

START_TEST(every_allocation_can_fail)
{
    rt__alloc_fail_at(0);
    small_program();
    uint64_t total = rt__alloc_fail_at(0);
    ck_assert_uint_gt(total, 20);
    /* Under valgrind (RT_TEST_SMALL) every 16th step. */
    uint64_t stride = scaled(16) == 16 ? 1 : 16;
    for (uint64_t n = 1; n <= total + 10; n += stride) {
        if (getenv("RT_TEST_TRACE"))
            fprintf(stderr, "failing allocation %lu of %lu\n", (unsigned long)n,
                    (unsigned long)total);
        rt__alloc_fail_at(n);
        small_program();
        rt__alloc_fail_at(0);
    }
    small_program(); /* and it all still works */
}
END_TEST

/* Whether the C library's allocator is the one in use: sanitizers and
 * valgrind bring their own, which may write what they hand out. */
static int own_allocator(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
    return 0;
#endif
#endif
    return scaled(16) == 16; /* RT_TEST_SMALL: valgrind's */
}

/* A large zeroed table takes no memory until written: the fork server
 * and every worker inherit the runtime's, and each of its pages made
 * cost every fork and exit. */
START_TEST(a_zeroed_table_takes_no_memory_until_written)
{
    if (!own_allocator())
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)4 << 20;
    unsigned char *table = rt__calloc(len / 8, 8);
    ck_assert_ptr_nonnull(table);
    uintptr_t start = ((uintptr_t)table + page - 1) & ~(uintptr_t)(page - 1);
    size_t pages = ((uintptr_t)table + len - start) / page;
    unsigned char *vec = malloc(pages);
    ck_assert_ptr_nonnull(vec);
    ck_assert_int_eq(mincore((void *)start, pages * page, vec), 0);
    size_t made = 0;
    for (size_t i = 0; i < pages; i++)
        made += vec[i] & 1;
    ck_assert_uint_le(made, 1);
    ck_assert_uint_eq(table[len - 1], 0);
    free(vec);
    rt__free(table);
}
END_TEST

/* A buffer grows by doubling from its first room until what is added
 * fits; a size past SIZE_MAX fails and leaves it as it was. */
START_TEST(a_buffer_doubles_until_the_bytes_fit)
{
    char *buf = NULL;
    size_t cap = 0;
    ck_assert_int_eq(rt__reserve(&buf, &cap, 0, 10, 16), 0);
    ck_assert_uint_eq(cap, 16);
    memset(buf, 'x', 16);
    ck_assert_int_eq(rt__reserve(&buf, &cap, 10, 6, 16), 0); /* fits: as it was */
    ck_assert_uint_eq(cap, 16);
    ck_assert_int_eq(rt__reserve(&buf, &cap, 16, 40, 16), 0);
    ck_assert_uint_eq(cap, 64);
    ck_assert_int_eq(buf[15], 'x'); /* kept */
    char *was = buf;
    ck_assert_int_eq(rt__reserve(&buf, &cap, 64, SIZE_MAX - 10, 16), -1);
    ck_assert_ptr_eq(buf, was);
    ck_assert_uint_eq(cap, 64);
    rt__free(buf);
}
END_TEST

Suite *alloc_suite(void)
{
    Suite *s = suite_create("alloc");
    TCase *tc = tcase_create("out of memory");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, every_allocation_can_fail);
    tcase_add_test(tc, a_zeroed_table_takes_no_memory_until_written);
    tcase_add_test(tc, a_buffer_doubles_until_the_bytes_fit);
    suite_add_tcase(s, tc);
    return s;
}

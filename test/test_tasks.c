/* test_tasks.c - results, volume, threads, large payloads, rt_wait(). */
#include "tests.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

START_TEST(echo_returns_the_argument)
{
    start_runtime();
    rt_ref ref;
    ck_ok(rt_remote(t_echo, NULL, "hello", 6, &ref));
    char *s;
    size_t len;
    ck_ok(rt_get(ref, (void **)&s, &len, RT_FOREVER));
    ck_assert_uint_eq(len, 6);
    ck_assert_str_eq(s, "hello");
    rt_free(s);
    ck_ok(rt_remote(t_echo, NULL, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&s, &len, RT_FOREVER));
    ck_assert_uint_eq(len, 0);
    rt_free(s);
    ck_ok(rt_shutdown());
}
END_TEST

static void run_many(size_t n, uint64_t base)
{
    rt_ref *refs = malloc(n * sizeof *refs);
    ck_assert_ptr_nonnull(refs);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = base + i;
        ck_ok(rt_remote(t_double, NULL, &x, sizeof x, &refs[i]));
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t *v;
        ck_ok(rt_get(refs[i], (void **)&v, NULL, 60000));
        ck_assert_uint_eq(*v, 2 * (base + i));
        rt_free(v);
    }
    free(refs);
}

START_TEST(ten_thousand_tasks)
{
    start_runtime();
    run_many(scaled(10000), 1000);
    ck_ok(rt_shutdown());
}
END_TEST

static void *submitter(void *arg)
{
    run_many(scaled(2500), (uint64_t)(uintptr_t)arg * 1000000);
    return NULL;
}

START_TEST(four_threads_submit_at_once)
{
    start_runtime();
    pthread_t th[4];
    for (uintptr_t i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, submitter, (void *)(i + 1)), 0);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(result_of_256_mib)
{
    start_runtime();
    uint64_t size = scaled((size_t)256 << 20) & ~(uint64_t)7;
    rt_ref ref;
    ck_ok(rt_remote(t_big_result, NULL, &size, sizeof size, &ref));
    uint64_t *w;
    size_t len;
    ck_ok(rt_get(ref, (void **)&w, &len, 120000));
    ck_assert_uint_eq(len, size);
    for (size_t i = 0; i < size / 8; i += 4093)
        ck_assert_uint_eq(w[i], pattern_word(i));
    ck_assert_uint_eq(w[size / 8 - 1], pattern_word(size / 8 - 1));
    rt_free(w);
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(arguments_small_and_large)
{
    start_runtime();
    static const size_t sizes[] = {1, 4096, 128 * 1024 - 1, 128 * 1024, 3 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        unsigned char *arg = malloc(sizes[k]);
        for (size_t i = 0; i < sizes[k]; i++)
            arg[i] = (unsigned char)(i * 7 + k);
        ck_assert_uint_eq(call_u64(t_checksum, NULL, arg, sizes[k]),
                          checksum(arg, sizes[k]));
        free(arg);
    }
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(wait_puts_ready_handles_first)
{
    start_runtime();
    uint64_t fast = 0, slow = 3000;
    rt_ref refs[3], slow_ref;
    ck_ok(rt_remote(t_sleep_ms, NULL, &slow, sizeof slow, &slow_ref));
    ck_ok(rt_remote(t_sleep_ms, NULL, &fast, sizeof fast, &refs[1]));
    ck_ok(rt_remote(t_sleep_ms, NULL, &fast, sizeof fast, &refs[2]));
    refs[0] = slow_ref;
    rt_ref fast1 = refs[1], fast2 = refs[2];
    size_t n_ready = 99;
    ck_ok(rt_wait(refs, 3, 2, 30000, &n_ready));
    ck_assert_uint_eq(n_ready, 2);
    ck_assert_uint_eq(refs[0].id, fast1.id);
    ck_assert_uint_eq(refs[1].id, fast2.id);
    ck_assert_uint_eq(refs[2].id, slow_ref.id);
    /* A timeout is not an error: it reports how many are ready. */
    ck_ok(rt_wait(refs, 3, 3, 10, &n_ready));
    ck_assert_uint_eq(n_ready, 2);
    for (int i = 0; i < 2; i++)
        ck_ok(rt_get(refs[i], NULL, NULL, 0)); /* ready, so no waiting */
    ck_ok(rt_release(slow_ref));
    ck_ok(rt_wait(NULL, 0, 0, 0, &n_ready));
    ck_assert_uint_eq(n_ready, 0);
    ck_ok(rt_shutdown());
}
END_TEST

/* A thread in rt_get() wakes for its own task's end alone; one in
 * rt_wait() for any task's.  Each must hear its own while the other
 * sleeps, and two threads that get one handle both return. */
typedef struct waiter {
    rt_ref ref;
    int rc;
    uint64_t value;
    size_t ready;
} waiter;

static void *get_one(void *arg)
{
    waiter *w = arg;
    uint64_t *v = NULL;
    w->rc = rt_get(w->ref, (void **)&v, NULL, 20000);
    w->value = v ? *v : 0;
    rt_free(v);
    return NULL;
}

/* Its task ends last: nothing else could wake it before its timeout,
 * after which rt_wait() would still find it ready; the time tells. */
static void *wait_one(void *arg)
{
    waiter *w = arg;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    w->rc = rt_wait(&w->ref, 1, 1, 60000, &w->ready);
    clock_gettime(CLOCK_MONOTONIC, &b);
    w->value = (uint64_t)(b.tv_sec - a.tv_sec);
    return NULL;
}

START_TEST(each_waiting_thread_hears_its_task_end)
{
    start_runtime();
    uint64_t ms[3] = {300, 200, 100};
    waiter got = {0}, waited = {0}, twice[2];
    memset(twice, 0, sizeof twice);
    pthread_t th[3];
    /* Threads in rt_get() alone: nobody waits for any task's end. */
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms[0], sizeof ms[0], &got.ref));
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms[1], sizeof ms[1], &twice[0].ref));
    twice[1].ref = twice[0].ref;
    ck_assert_int_eq(pthread_create(&th[0], NULL, get_one, &got), 0);
    ck_assert_int_eq(pthread_create(&th[1], NULL, get_one, &twice[0]), 0);
    ck_assert_int_eq(pthread_create(&th[2], NULL, get_one, &twice[1]), 0);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    ck_ok(got.rc);
    ck_assert_uint_eq(got.value, 300);
    /* One of the two takes the result; the other finds it consumed. */
    ck_assert_int_eq(twice[0].rc + twice[1].rc, RT_EBADREF);
    ck_assert_uint_eq(twice[0].value + twice[1].value, 200);
    /* rt_wait() beside an rt_get() of a task that ends first. */
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms[0], sizeof ms[0], &waited.ref));
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms[2], sizeof ms[2], &got.ref));
    ck_assert_int_eq(pthread_create(&th[0], NULL, wait_one, &waited), 0);
    ck_assert_int_eq(pthread_create(&th[1], NULL, get_one, &got), 0);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_join(th[i], NULL), 0);
    ck_ok(got.rc);
    ck_assert_uint_eq(got.value, 100);
    ck_ok(waited.rc);
    ck_assert_uint_eq(waited.ready, 1);
    ck_assert_uint_lt(waited.value, 30); /* seconds: woken, not timed out */
    ck_ok(rt_get(waited.ref, NULL, NULL, 0));
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(released_tasks_still_run_and_are_freed)
{
    start_runtime();
    for (uint64_t i = 0; i < 100; i++) {
        rt_ref ref;
        ck_ok(rt_remote(t_double, NULL, &i, sizeof i, &ref));
        ck_ok(rt_release(ref));
    }
    uint64_t x = 4;
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 8);
    ck_ok(rt_shutdown()); /* ASan and valgrind see any record left */
}
END_TEST

/* Submit two t_span tasks of ms each with o; 1 when they overlapped. */
static int overlapped(const rt_opts *o, uint64_t ms)
{
    rt_ref ref[2];
    uint64_t *span[2];
    for (int i = 0; i < 2; i++)
        ck_ok(rt_remote(t_span, o, &ms, sizeof ms, &ref[i]));
    for (int i = 0; i < 2; i++)
        ck_ok(rt_get(ref[i], (void **)&span[i], NULL, 60000));
    int overlap = span[0][0] < span[1][1] && span[1][0] < span[0][1];
    rt_free(span[0]);
    rt_free(span[1]);
    return overlap;
}

START_TEST(custom_resources_limit_concurrency)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 4;
    c.num_workers = 4;
    c.resources = "fpga=1,disk=1";
    ck_ok(rt_init_config(&c));
    rt_opts o = RT_OPTS_INIT;
    ck_assert_int_eq(overlapped(&o, 300), 1); /* 2 of 4 CPUs: side by side */
    o.resources = "fpga=1";
    ck_assert_int_eq(overlapped(&o, 300), 0); /* one fpga: one at a time */
    o.resources = "disk=0.5";
    ck_assert_int_eq(overlapped(&o, 300), 1); /* half each: both fit */
    o.num_cpus = 3;
    o.resources = NULL;
    ck_assert_int_eq(overlapped(&o, 300), 0); /* 3 + 3 CPUs > 4 */
    ck_ok(rt_shutdown());
}
END_TEST

static uint64_t printer_pid[2];

static void print_twice(void)
{
    start_runtime();
    rt_opts o = RT_OPTS_INIT;
    o.name = "greeter";
    printer_pid[0] = call_u64(t_print, &o, "one", 3);
    printer_pid[1] = call_u64(t_print, NULL, "two", 3);
    ck_ok(rt_shutdown());
}

static void expect_line(const char *text, const char *name, uint64_t pid,
                        const char *line)
{
    char want[256];
    snprintf(want, sizeof want, "(%s pid=%d) %s\n", name, (int)pid, line);
    ck_assert_msg(strstr(text, want), "no \"%s\" in output:\n%s", want, text);
}

START_TEST(output_lines_carry_name_and_pid)
{
    const char *text = capture_output(print_twice);
    expect_line(text, "greeter", printer_pid[0], "out: one");
    expect_line(text, "greeter", printer_pid[0], "err: one");
    expect_line(text, "greeter", printer_pid[0], "no newline at the end");
    expect_line(text, "t_print", printer_pid[1], "out: two");
    expect_line(text, "t_print", printer_pid[1], "err: two");
    /* Every line that reached us from a task has a prefix. */
    size_t lines = 0;
    for (const char *line = text; *line; line = strchr(line, '\n') + 1, lines++)
        ck_assert_msg(line[0] == '(', "line without prefix: %s", line);
    ck_assert_uint_eq(lines, 6);
}
END_TEST

static uint64_t fresh_pid[4];

/* Tasks that are their worker's first: forked for them (max_calls = 1
 * at once), or spares that waited (GPU tasks a while apart), labelled by
 * the runtime rather than by a marker from the worker. */
static void print_in_fresh_workers(void)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_gpus = 1;
    c.num_workers = 2;
    ck_ok(rt_init_config(&c));
    rt_opts gpu = RT_OPTS_INIT, once = RT_OPTS_INIT;
    gpu.num_gpus = 0.5;
    gpu.name = "on-gpu";
    once.max_calls = 1;
    for (int i = 0; i < 2; i++) {
        fresh_pid[i] = call_u64(t_print, &gpu, i ? "g1" : "g0", 2);
        usleep(50000); /* the spare that replaces it is forked meanwhile */
    }
    for (int i = 2; i < 4; i++)
        fresh_pid[i] = call_u64(t_print, &once, i == 2 ? "c2" : "c3", 2);
    ck_ok(rt_shutdown());
}

START_TEST(first_tasks_of_fresh_workers_carry_their_names)
{
    const char *text = capture_output(print_in_fresh_workers);
    const char *arg[4] = {"g0", "g1", "c2", "c3"};
    for (int i = 0; i < 4; i++) {
        char out[16], err[16];
        snprintf(out, sizeof out, "out: %s", arg[i]);
        snprintf(err, sizeof err, "err: %s", arg[i]);
        const char *name = i < 2 ? "on-gpu" : "t_print";
        expect_line(text, name, fresh_pid[i], out);
        expect_line(text, name, fresh_pid[i], err);
        for (int j = 0; j < i; j++)
            ck_assert_uint_ne(fresh_pid[i], fresh_pid[j]); /* each its own worker */
    }
    size_t lines = 0;
    for (const char *line = text; *line; line = strchr(line, '\n') + 1, lines++)
        ck_assert_msg(line[0] == '(', "line without prefix: %s", line);
    ck_assert_uint_eq(lines, 12);
}
END_TEST

/* A function from a library dlopen()ed after rt_init() is not in the
 * workers: refused at submission, with why; loaded before, it runs. */
START_TEST(functions_loaded_after_init_are_refused)
{
    start_runtime();
    void *lib = dlopen("build/test/libtask-late.so", RTLD_NOW);
    ck_assert_msg(lib != NULL, "%s", dlerror());
    rt_fn late = (rt_fn)(uintptr_t)dlsym(lib, "late_task");
    ck_assert_ptr_nonnull((void *)(uintptr_t)late);
    rt_ref ref;
    ck_fails(rt_remote(late, NULL, NULL, 0, &ref), RT_EINVAL, "loaded after rt_init()");
    ck_assert_msg(strstr(rt_last_error(), "libtask-late.so") != NULL, "%s", rt_last_error());
    ck_ok(rt_shutdown());
    start_runtime(); /* now the library is there when the fork server forks */
    char *s;
    ck_ok(rt_remote(late, NULL, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&s, NULL, 60000));
    ck_assert_str_eq(s, "late");
    rt_free(s);
    ck_ok(rt_shutdown());
    dlclose(lib);
}
END_TEST

Suite *tasks_suite(void)
{
    Suite *s = suite_create("tasks");
    TCase *tc = tcase_create("tasks");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, echo_returns_the_argument);
    tcase_add_test(tc, ten_thousand_tasks);
    tcase_add_test(tc, four_threads_submit_at_once);
    tcase_add_test(tc, result_of_256_mib);
    tcase_add_test(tc, arguments_small_and_large);
    tcase_add_test(tc, wait_puts_ready_handles_first);
    tcase_add_test(tc, each_waiting_thread_hears_its_task_end);
    tcase_add_test(tc, custom_resources_limit_concurrency);
    tcase_add_test(tc, released_tasks_still_run_and_are_freed);
    tcase_add_test(tc, output_lines_carry_name_and_pid);
    tcase_add_test(tc, first_tasks_of_fresh_workers_carry_their_names);
    tcase_add_test(tc, functions_loaded_after_init_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

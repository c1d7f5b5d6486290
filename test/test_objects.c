/*
 * test_objects.c - objects and the task graph: rt_put(), results as
 * arguments (rt_remote_args(), rt_actor_call_args()), zero-copy views,
 * failures that flow along the graph (RT_EDEPENDENCY), lifetimes, and
 * the object store's size.
 */
#include "tests.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- task functions (extern: dladdr() names them) --------------------------------- */

int o_sum(const rt_value *args, size_t n, rt_result *r);
int o_concat(const rt_value *args, size_t n, rt_result *r);
int o_crash(const rt_value *args, size_t n, rt_result *r);
int o_sleep_then_sum(const rt_value *args, size_t n, rt_result *r);
int o_touch_pages(const rt_value *args, size_t n, rt_result *r);
int o_fail7(const void *arg, size_t len, rt_result *r);
int o_widen(const rt_value *args, size_t n, rt_result *r);
int o_die_once_then_sum(const rt_value *args, size_t n, rt_result *r);
int o_mark_then_sum(const rt_value *args, size_t n, rt_result *r);
int o_pages_in_place(void *state, const rt_value *args, size_t n, rt_result *r);
int o_touch_and_pid(const rt_value *args, size_t n, rt_result *r);

/* The sum of its arguments, each a uint64_t (or a task's result). */
int o_sum(const rt_value *args, size_t n, rt_result *r)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (args[i].len != sizeof sum)
            return 100 + (int)i;
        uint64_t v;
        memcpy(&v, args[i].data, sizeof v);
        sum += v;
    }
    return rt_result_set(r, &sum, sizeof sum);
}

/* Its arguments one after the other. */
int o_concat(const rt_value *args, size_t n, rt_result *r)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += args[i].len;
    char *out = rt_result_alloc(r, len);
    if (!out && len)
        return 1;
    for (size_t i = 0; i < n; i++) {
        memcpy(out, args[i].data, args[i].len);
        out += args[i].len;
    }
    return 0;
}

int o_crash(const rt_value *args, size_t n, rt_result *r)
{
    (void)args;
    (void)n;
    (void)r;
    raise(SIGSEGV);
    return 0;
}

/* Sleep for the first argument's milliseconds, then sum the others. */
int o_sleep_then_sum(const rt_value *args, size_t n, rt_result *r)
{
    uint64_t ms;
    memcpy(&ms, args[0].data, sizeof ms);
    usleep((useconds_t)(ms * 1000));
    return o_sum(args + 1, n - 1, r);
}

/* Read one byte of each page of its one argument: the sum of them. */
int o_touch_pages(const rt_value *args, size_t n, rt_result *r)
{
    (void)n;
    uint64_t sum = 0;
    const unsigned char *p = args[0].data;
    for (size_t i = 0; i < args[0].len; i += 4096)
        sum += p[i];
    return rt_result_set(r, &sum, sizeof sum);
}

/* A method: how many of the first 16 pages of its argument this process
 * has mapped as it starts (/proc/self/pagemap's present bit), before it
 * reads every page; then a pause, for the next call to come. */
int o_pages_in_place(void *state, const rt_value *args, size_t n, rt_result *r)
{
    (void)state;
    (void)n;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)args[0].data + page - 1) & ~(page - 1);
    uint64_t present = 0, entry;
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    for (uintptr_t i = 0; fd >= 0 && i < 16; i++)
        if (pread(fd, &entry, sizeof entry, (off_t)((first / page + i) * sizeof entry)) ==
                sizeof entry && entry >> 63)
            present++;
    if (fd >= 0)
        close(fd);
    volatile uint64_t sum = 0;
    for (size_t i = 0; i < args[0].len; i += 4096)
        sum += ((const unsigned char *)args[0].data)[i];
    usleep(200000);
    return rt_result_set(r, &present, sizeof present);
}

/* Its worker's pid, having read one byte of each page of its argument. */
int o_touch_and_pid(const rt_value *args, size_t n, rt_result *r)
{
    (void)n;
    uint64_t pid = (uint64_t)getpid();
    volatile uint64_t sum = 0;
    for (size_t i = 0; i < args[0].len; i += 4096)
        sum += ((const unsigned char *)args[0].data)[i];
    return rt_result_set(r, &pid, sizeof pid);
}

int o_fail7(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    (void)r;
    return 7;
}

/* 1 more than the first word of its first argument, in a result of 200
 * bytes: more than a board entry holds (board.h); after sleeping for the
 * second's milliseconds. */
int o_widen(const rt_value *args, size_t n, rt_result *r)
{
    uint64_t v = 0, ms;
    if (n != 2 || args[0].len < sizeof v || args[1].len != sizeof ms)
        return 99;
    memcpy(&v, args[0].data, sizeof v);
    memcpy(&ms, args[1].data, sizeof ms);
    usleep((useconds_t)(ms * 1000));
    unsigned char *out = rt_result_alloc(r, 200);
    if (!out)
        return 1;
    memset(out, 0xab, 200);
    v++;
    memcpy(out, &v, sizeof v);
    return 0;
}

/* The sum of the others, after dying once: the first argument names a
 * file that its first run makes. */
int o_die_once_then_sum(const rt_value *args, size_t n, rt_result *r)
{
    int fd = open(args[0].data, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        close(fd);
        raise(SIGKILL);
    }
    return o_sum(args + 1, n - 1, r);
}

/* The sum of the others, after making the file the first names. */
int o_mark_then_sum(const rt_value *args, size_t n, rt_result *r)
{
    int fd = open(args[0].data, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0)
        close(fd);
    return o_sum(args + 1, n - 1, r);
}

static int log_init(const void *arg, size_t len, void **state);
static void log_fini(void *state);
int log_append(void *state, const rt_value *args, size_t n, rt_result *r);

/* ---- helpers ---------------------------------------------------------------------- */

static rt_ref put_u64(uint64_t v)
{
    rt_ref ref;
    ck_ok(rt_put(&v, sizeof v, &ref));
    return ref;
}

static rt_ref sum_of(const rt_ref *refs, size_t n, const rt_opts *opts)
{
    rt_arg args[16];
    ck_assert_uint_le(n, 16);
    for (size_t i = 0; i < n; i++)
        args[i] = RT_ARG_REF(refs[i]);
    rt_ref ref;
    ck_ok(rt_remote_args(o_sum, opts, args, n, &ref));
    return ref;
}

static rt_ref sleeper(uint64_t ms, const rt_opts *opts)
{
    rt_ref ref;
    ck_ok(rt_remote(t_sleep_ms, opts, &ms, sizeof ms, &ref));
    return ref;
}

static long shmem_kib(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Shmem: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* ---- objects ------------------------------------------------------------------------ */

/* rt_put() makes an object that rt_get() reads like a result, small or
 * large (a memfd); it is ready at once. */
START_TEST(a_put_object_reads_back)
{
    start_runtime();
    size_t sizes[] = {0, 5, 200 * 1024};
    for (int i = 0; i < 3; i++) {
        char *data = malloc(sizes[i] + 1);
        for (size_t j = 0; j < sizes[i]; j++)
            data[j] = (char)(j * 7 + i);
        rt_ref ref;
        ck_ok(rt_put(data, sizes[i], &ref));
        size_t ready = 0;
        ck_ok(rt_wait(&ref, 1, 1, 0, &ready));
        ck_assert_uint_eq(ready, 1);
        void *out = NULL;
        size_t len = 99;
        ck_ok(rt_get(ref, &out, &len, 0));
        ck_assert_uint_eq(len, sizes[i]);
        ck_assert_int_eq(memcmp(out, data, sizes[i]), 0);
        rt_free(out);
        free(data);
        ck_fails(rt_get(ref, NULL, NULL, 0), RT_EBADREF, "unknown or consumed");
    }
    ck_fails(rt_put(NULL, 3, &(rt_ref){0}), RT_EINVAL, "data is NULL");
    ck_ok(rt_shutdown());
    ck_fails(rt_put("x", 1, &(rt_ref){0}), RT_ESHUTDOWN, "shut down");
}
END_TEST

/* Objects and bytes mixed, in their order, some objects large. */
START_TEST(arguments_mix_objects_and_bytes)
{
    start_runtime();
    size_t big = 300 * 1024;
    char *large = malloc(big);
    memset(large, 'L', big);
    rt_ref small_ref, large_ref, task_ref;
    ck_ok(rt_put("put", 3, &small_ref));
    ck_ok(rt_put(large, big, &large_ref));
    ck_ok(rt_remote(t_echo, NULL, "task", 4, &task_ref));
    rt_arg args[] = {RT_ARG_BYTES("<", 1), RT_ARG_REF(small_ref), RT_ARG_REF(task_ref),
                     RT_ARG_BYTES(large, big), RT_ARG_REF(large_ref), RT_ARG_BYTES(">", 1)};
    rt_ref ref;
    ck_ok(rt_remote_args(o_concat, NULL, args, 6, &ref));
    char *out = NULL;
    size_t len = 0;
    ck_ok(rt_get(ref, (void **)&out, &len, 60000));
    ck_assert_uint_eq(len, 1 + 3 + 4 + big + big + 1);
    ck_assert_int_eq(memcmp(out, "<puttask", 8), 0);
    ck_assert_int_eq(memcmp(out + 8, large, big), 0);
    ck_assert_int_eq(memcmp(out + 8 + big, large, big), 0);
    ck_assert_int_eq(out[len - 1], '>');
    rt_free(out);
    /* The objects are still the application's. */
    ck_ok(rt_get(task_ref, (void **)&out, &len, 0));
    ck_assert_int_eq(memcmp(out, "task", 4), 0);
    rt_free(out);
    ck_ok(rt_release(small_ref));
    ck_ok(rt_release(large_ref));
    free(large);
    ck_ok(rt_shutdown());
}
END_TEST

/* A chain: each step takes the one before; the application holds only
 * the last ref. */
START_TEST(a_chain_of_ten_thousand_dependent_tasks)
{
    start_runtime();
    size_t steps = scaled(10000);
    uint64_t one = 1;
    rt_ref prev = put_u64(0);
    for (size_t i = 0; i < steps; i++) {
        rt_arg args[] = {RT_ARG_REF(prev), RT_ARG_BYTES(&one, sizeof one)};
        rt_ref next;
        ck_ok(rt_remote_args(o_sum, NULL, args, 2, &next));
        ck_ok(rt_release(prev));
        prev = next;
    }
    ck_assert_uint_eq(get_u64(prev, 120000), steps);
    ck_ok(rt_shutdown());
}
END_TEST

/* 100 000 leaves summed ten at a time; refs released as soon as they are
 * passed on. */
START_TEST(a_tree_reduction_of_a_hundred_thousand_leaves)
{
    start_runtime();
    size_t n = scaled(100000);
    rt_ref *level = malloc(n * sizeof *level);
    for (size_t i = 0; i < n; i++)
        ck_ok(rt_remote(t_echo, NULL, &(uint64_t){i}, sizeof(uint64_t), &level[i]));
    while (n > 1) {
        size_t m = 0;
        for (size_t i = 0; i < n; i += 10) {
            size_t k = n - i < 10 ? n - i : 10;
            rt_ref parent = sum_of(level + i, k, NULL);
            for (size_t j = 0; j < k; j++)
                ck_ok(rt_release(level[i + j]));
            level[m++] = parent;
        }
        n = m;
    }
    size_t leaves = scaled(100000);
    ck_assert_uint_eq(get_u64(level[0], 300000), (uint64_t)leaves * (leaves - 1) / 2);
    free(level);
    ck_ok(rt_shutdown());
}
END_TEST

/* One object read by two tasks, joined by a third. */
START_TEST(a_diamond)
{
    start_runtime();
    rt_ref a = put_u64(10), two = put_u64(2);
    rt_ref b = sum_of((rt_ref[]){a, a}, 2, NULL);        /* 20 */
    rt_ref c = sum_of((rt_ref[]){a, two}, 2, NULL);      /* 12 */
    rt_ref d = sum_of((rt_ref[]){b, c, a}, 3, NULL);     /* 42 */
    ck_ok(rt_release(a));
    ck_ok(rt_release(b));
    ck_ok(rt_release(two));
    ck_assert_uint_eq(get_u64(d, 60000), 42);
    ck_assert_uint_eq(get_u64(c, 60000), 12);
    ck_ok(rt_shutdown());
}
END_TEST

/* ---- early: tasks sent before their objects end (the board) ----------------------- */

/* A stencil three wide over 2 workers: each task takes its neighbours'
 * results of the step before (sent before those end, taken from the
 * node's board: other workers' results), plus one.  Every value is as a
 * sequential run computes it (wrapping as uint64_t does). */
START_TEST(a_stencil_over_two_workers_gets_every_value)
{
    start_runtime();
    enum { WIDTH = 3 };
    size_t steps = scaled(300);
    uint64_t one = 1, want[WIDTH] = {0}, next[WIDTH];
    rt_ref now[WIDTH], before[WIDTH];
    for (int i = 0; i < WIDTH; i++)
        before[i] = put_u64(0);
    for (size_t t = 0; t < steps; t++) {
        for (int i = 0; i < WIDTH; i++) {
            rt_arg args[4];
            int n = 0;
            next[i] = one;
            for (int j = i - 1; j <= i + 1; j++)
                if (j >= 0 && j < WIDTH) {
                    args[n++] = RT_ARG_REF(before[j]);
                    next[i] += want[j];
                }
            args[n++] = RT_ARG_BYTES(&one, sizeof one);
            ck_ok(rt_remote_args(o_sum, NULL, args, (size_t)n, &now[i]));
        }
        for (int i = 0; i < WIDTH; i++) {
            ck_ok(rt_release(before[i]));
            before[i] = now[i];
            want[i] = next[i];
        }
    }
    for (int i = 0; i < WIDTH; i++)
        ck_assert_uint_eq(get_u64(before[i], 120000), want[i]);
    ck_ok(rt_shutdown());
}
END_TEST

/* Results larger than a board entry: the tasks that take them, sent
 * early, are not run there but sent again once the results came. */
START_TEST(results_too_large_for_the_board_still_reach_their_tasks)
{
    start_runtime();
    rt_ref prev = put_u64(0);
    uint64_t ms = 20; /* the next is sent and waits meanwhile */
    for (int i = 0; i < 50; i++) {
        rt_arg args[] = {RT_ARG_REF(prev), RT_ARG_BYTES(&ms, sizeof ms)};
        rt_ref next;
        ck_ok(rt_remote_args(o_widen, NULL, args, 2, &next));
        ck_ok(rt_release(prev));
        prev = next;
    }
    uint64_t *v;
    size_t len;
    ck_ok(rt_get(prev, (void **)&v, &len, 60000));
    ck_assert_uint_eq(len, 200);
    ck_assert_uint_eq(*v, 50);
    rt_free(v);
    ck_ok(rt_shutdown());
}
END_TEST

/* A producer whose worker dies runs again; the tasks sent early to wait
 * for its result get the result of the run that lived. */
START_TEST(a_producer_that_dies_once_still_feeds_its_consumers)
{
    start_runtime();
    char path[128];
    temp_path(path, sizeof path, "die-once");
    rt_ref base = put_u64(5);
    uint64_t ms = 50; /* the consumers are sent and wait meanwhile */
    rt_arg wait[] = {RT_ARG_BYTES(&ms, sizeof ms)};
    rt_ref nap;
    ck_ok(rt_remote_args(o_sleep_then_sum, NULL, wait, 1, &nap));
    rt_arg args[] = {RT_ARG_BYTES(path, strlen(path) + 1), RT_ARG_REF(base), RT_ARG_REF(nap)};
    rt_ref producer;
    ck_ok(rt_remote_args(o_die_once_then_sum, NULL, args, 2, &producer));
    rt_ref consumers[4];
    for (int i = 0; i < 4; i++)
        consumers[i] = sum_of((rt_ref[]){producer, base}, 2, NULL);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(get_u64(consumers[i], 60000), 10);
    ck_assert_uint_eq(get_u64(producer, 60000), 5);
    ck_ok(rt_release(base));
    ck_ok(rt_release(nap));
    unlink(path);
    ck_ok(rt_shutdown());
}
END_TEST

/* A task sent ahead to wait in its worker for an object, cancelled
 * there, never runs; the others sent with it still do. */
START_TEST(a_task_waiting_in_its_worker_is_cancelled_before_it_runs)
{
    start_runtime();
    char path[128];
    temp_path(path, sizeof path, "never-ran");
    rt_ref slow = sleeper(400, NULL);
    rt_arg args[] = {RT_ARG_BYTES(path, strlen(path) + 1), RT_ARG_REF(slow)};
    rt_ref marked, summed[3];
    ck_ok(rt_remote_args(o_mark_then_sum, NULL, args, 2, &marked));
    for (int i = 0; i < 3; i++)
        summed[i] = sum_of(&slow, 1, NULL);
    usleep(100 * 1000); /* sent by now, waiting for slow */
    ck_ok(rt_cancel(marked, 0));
    ck_fails(rt_get(marked, NULL, NULL, 60000), RT_ECANCELLED, "before it ran");
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(get_u64(summed[i], 60000), 400);
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_ok(rt_release(slow));
    ck_ok(rt_shutdown());
}
END_TEST

/* ---- failure along the graph ------------------------------------------------------- */

static void ck_dependency(rt_ref ref, const char *text)
{
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EDEPENDENCY, text);
}

/* A task that crashes (no retry left) fails its dependents and theirs,
 * each naming the first failure; they never run. */
START_TEST(a_crashed_dependency_fails_the_graph)
{
    start_runtime();
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 0;
    o.name = "the-crasher";
    rt_ref bad;
    ck_ok(rt_remote_args(o_crash, &o, NULL, 0, &bad));
    rt_ref child = sum_of(&bad, 1, NULL);
    rt_ref grandchild = sum_of(&child, 1, NULL);
    ck_dependency(grandchild, "the-crasher");
    ck_dependency(child, "killed by signal 11");
    ck_fails(rt_get(bad, NULL, NULL, 60000), RT_EWORKERDIED, "signal 11");
    /* A failed object given later fails the task at once. */
    rt_ref failed;
    ck_ok(rt_remote(o_fail7, NULL, NULL, 0, &failed));
    size_t ready;
    ck_ok(rt_wait(&failed, 1, 1, 60000, &ready));
    rt_ref late = sum_of(&failed, 1, NULL);
    ck_dependency(late, "the task returned 7");
    ck_ok(rt_release(failed));
    ck_ok(rt_shutdown());
}
END_TEST

/* Cancelling a task that others wait on fails them; cancelling a task
 * that waits ends it at once, while what it waits for still runs. */
START_TEST(a_cancelled_dependency_fails_its_dependents)
{
    start_runtime();
    rt_ref slow = sleeper(300, NULL);
    rt_ref child = sum_of(&slow, 1, NULL);
    ck_ok(rt_cancel(slow, 0));
    ck_dependency(child, "rt_cancel");
    rt_ref slow2 = sleeper(2000, NULL);
    rt_ref waiting = sum_of(&slow2, 1, NULL);
    ck_ok(rt_cancel(waiting, 0));
    ck_fails(rt_get(waiting, NULL, NULL, 1000), RT_ECANCELLED, "before it ran");
    ck_ok(rt_cancel(slow2, 1));
    ck_fails(rt_get(slow2, NULL, NULL, 60000), RT_ECANCELLED, "killed");
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(a_dependency_that_times_out_fails_its_dependents)
{
    start_runtime();
    rt_opts o = RT_OPTS_INIT;
    o.timeout_ms = 100;
    rt_ref slow = sleeper(5000, &o);
    rt_ref child = sum_of(&slow, 1, NULL);
    ck_dependency(child, "timeout_ms");
    ck_fails(rt_get(slow, NULL, NULL, 60000), RT_EKILLED, "timeout_ms");
    ck_ok(rt_shutdown());
}
END_TEST

/* ---- lifetimes ---------------------------------------------------------------------- */

/* Refs released, read or kept in every order while tasks still need
 * them: every task gets its value, and descriptors come back. */
START_TEST(refs_released_in_any_order)
{
    int fds = count_fds();
    start_runtime();
    uint64_t ms = 200;
    for (int order = 0; order < 4; order++) {
        rt_ref delay = put_u64(ms);
        rt_ref a;
        rt_arg args[] = {RT_ARG_REF(delay), RT_ARG_BYTES(&(uint64_t){5}, 8)};
        ck_ok(rt_remote_args(o_sleep_then_sum, NULL, args, 2, &a));
        rt_ref b = sum_of(&a, 1, NULL), c = sum_of((rt_ref[]){a, b}, 2, NULL);
        if (order == 0) { /* the producer dropped before it ends */
            ck_ok(rt_release(a));
            ck_ok(rt_release(delay));
        } else if (order == 1) { /* read while tasks still take it */
            ck_assert_uint_eq(get_u64(a, 60000), 5);
            ck_ok(rt_release(delay));
        } else if (order == 2) { /* a dependent dropped first */
            ck_ok(rt_release(b));
            ck_ok(rt_release(delay));
            ck_ok(rt_release(a));
        } else { /* a view outlives its ref */
            rt_view v;
            ck_ok(rt_get_view(a, &v, 60000));
            ck_ok(rt_release(a));
            ck_ok(rt_release(delay));
            ck_assert_uint_eq(v.len, 8);
            ck_assert_uint_eq(*(const uint64_t *)v.data, 5);
            ck_ok(rt_view_release(&v));
            ck_assert_ptr_null(v.data);
        }
        ck_assert_uint_eq(get_u64(c, 60000), 10);
        if (order != 2)
            ck_assert_uint_eq(get_u64(b, 60000), 5);
    }
    ck_ok(rt_shutdown());
    ck_assert_int_eq(count_fds(), fds);
}
END_TEST

/* A view reads in place, does not consume the ref, and is refused
 * once released. */
START_TEST(a_view_reads_in_place)
{
    start_runtime();
    size_t big = 256 * 1024;
    char *data = malloc(big);
    memset(data, 'v', big);
    rt_ref ref;
    ck_ok(rt_put(data, big, &ref));
    rt_view v, w;
    ck_ok(rt_get_view(ref, &v, 0));
    ck_ok(rt_get_view(ref, &w, 0));
    ck_assert_ptr_eq(v.data, w.data); /* the same pages, not copies */
    ck_assert_uint_eq(v.len, big);
    ck_assert_int_eq(memcmp(v.data, data, big), 0);
    ck_ok(rt_view_release(&w));
    rt_view stale = v;
    ck_ok(rt_view_release(&v));
    ck_fails(rt_view_release(&stale), RT_EBADREF, "unknown or released view");
    ck_ok(rt_get(ref, NULL, NULL, 0));
    rt_ref failed;
    ck_ok(rt_remote(o_fail7, NULL, NULL, 0, &failed));
    ck_fails(rt_get_view(failed, &v, 60000), RT_ETASK, "returned 7");
    ck_ok(rt_view_release(&v)); /* RT_ETASK keeps the view */
    free(data);
    ck_ok(rt_shutdown());
}
END_TEST

/* One large object read by many tasks is mapped, never copied: the
 * machine's shared memory grows by its size once, and is back where it
 * was after rt_shutdown() (the store may keep freed memory for reuse
 * until then). */
START_TEST(a_large_object_read_by_64_tasks_is_not_copied)
{
    start_runtime();
    size_t size = scaled(1024) << 20;
    char *data = malloc(size);
    memset(data, 1, size);
    long before = shmem_kib();
    rt_ref obj;
    ck_ok(rt_put(data, size, &obj));
    free(data);
    rt_ref refs[64];
    for (int i = 0; i < 64; i++)
        ck_ok(rt_remote_args(o_touch_pages, NULL, &RT_ARG_REF(obj), 1, &refs[i]));
    long peak = 0;
    for (int i = 0; i < 64; i++) {
        long now = shmem_kib();
        peak = now > peak ? now : peak;
        ck_assert_uint_eq(get_u64(refs[i], 120000), size / 4096);
    }
    long grew = peak - before, size_kib = (long)(size >> 10);
    ck_assert_msg(grew > size_kib / 2 && grew < size_kib + size_kib / 4,
                  "Shmem grew by %ld KiB for a %ld KiB object", grew, size_kib);
    ck_ok(rt_release(obj));
    ck_ok(rt_shutdown());
    long after = shmem_kib();
    ck_assert_msg(after - before < size_kib / 4, "Shmem %ld KiB above the start", after - before);
}
END_TEST

/* An object that calls in one worker take one after the other stays
 * mapped there from the first to the next: the next finds its pages in
 * place (a fan-out faults them in once per worker, not per task).  An
 * actor's calls, after one on another object that times them: the
 * runtime then sends the next while the first runs (a class never timed
 * gets one call at a time, and under valgrind the next came more than
 * the 2 ms after the first that a worker keeps its objects). */
START_TEST(an_object_stays_mapped_for_its_workers_next_task)
{
    start_runtime();
    static const rt_actor_class plain = {"plain", NULL, NULL};
    rt_actor a;
    ck_ok(rt_actor_create(&plain, NULL, NULL, 0, &a));
    size_t size = (size_t)4 << 20;
    char *data = malloc(size);
    memset(data, 1, size);
    rt_ref other, obj, timing, first, next;
    ck_ok(rt_put(data, size, &other));
    ck_ok(rt_put(data, size, &obj));
    free(data);
    ck_ok(rt_actor_call_args(a, o_pages_in_place, &RT_ARG_REF(other), 1, &timing));
    (void)get_u64(timing, 60000);
    ck_ok(rt_release(other));
    ck_ok(rt_actor_call_args(a, o_pages_in_place, &RT_ARG_REF(obj), 1, &first));
    ck_ok(rt_actor_call_args(a, o_pages_in_place, &RT_ARG_REF(obj), 1, &next));
    ck_assert_uint_eq(get_u64(first, 60000), 0);
    ck_assert_uint_eq(get_u64(next, 60000), 16);
    ck_ok(rt_release(obj));
    ck_ok(rt_actor_kill(a));
    ck_ok(rt_shutdown());
}
END_TEST

/* How many mappings of rtask's shared memory process pid has that are
 * the length of an object of len bytes (with its header's page). */
static long objects_mapped(pid_t pid, unsigned long len)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "r");
    unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
    long n = 0;
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi - lo == len + page &&
            strstr(line, "/memfd:rtask"))
            n++;
    }
    if (maps)
        fclose(maps);
    return n;
}

/* A worker keeps no object mapped once it has waited a while for work:
 * the memory of an object its owner released goes back. */
START_TEST(an_idle_worker_maps_no_object)
{
    start_with(1, 0, 1);
    size_t size = (size_t)4 << 20;
    char *data = malloc(size);
    memset(data, 1, size);
    rt_ref obj, read;
    ck_ok(rt_put(data, size, &obj));
    free(data);
    ck_ok(rt_remote_args(o_touch_and_pid, NULL, &RT_ARG_REF(obj), 1, &read));
    pid_t worker = (pid_t)get_u64(read, 30000);
    ck_ok(rt_release(obj));
    long n = -1;
    for (int i = 0; i < 100 && (n = objects_mapped(worker, size)) != 0; i++)
        usleep(10000);
    ck_assert_msg(n == 0, "the idle worker still maps the object (%ld mappings)", n);
    ck_ok(rt_shutdown());
}
END_TEST

/* rt_shutdown() with a graph waiting (tasks and actor calls): all of it
 * fails, nothing leaks (the ASan and valgrind runs check), nothing hangs. */
START_TEST(shutdown_while_a_graph_waits)
{
    int fds = count_fds();
    start_runtime();
    static const rt_actor_class cls = {"Log", log_init, log_fini};
    rt_actor a;
    ck_ok(rt_actor_create(&cls, NULL, NULL, 0, &a));
    rt_ref slow = sleeper(5000, NULL), prev = slow, call, after;
    for (int i = 0; i < 100; i++) {
        rt_ref next = sum_of(&prev, 1, NULL);
        if (prev.id != slow.id)
            ck_ok(rt_release(prev));
        prev = next;
    }
    ck_ok(rt_actor_call_args(a, log_append, &RT_ARG_REF(prev), 1, &call));
    ck_ok(rt_actor_call_args(a, log_append, &RT_ARG_BYTES("z", 1), 1, &after));
    rt_view v;
    rt_ref obj = put_u64(3);
    ck_ok(rt_get_view(obj, &v, 0));
    ck_ok(rt_shutdown());
    ck_assert_int_eq(count_fds(), fds);
}
END_TEST

/* ---- the store's size ----------------------------------------------------------- */

/* A store of 1 MiB, whose objects spill into a fresh folder (in dir). */
static void start_small_store(char *dir, size_t len)
{
    temp_path(dir, len, "spill");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_gpus = 0;
    c.num_workers = 1;
    c.object_store_bytes = 1 << 20;
    c.spill_dir = dir;
    ck_ok(rt_init_config(&c));
}

/* The files in dir. */
static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* part bytes of value v. */
static char *filled(size_t part, int v)
{
    char *data = malloc(part);
    ck_assert_ptr_nonnull(data);
    memset(data, v, part);
    return data;
}

/* Puts of 8 times the store go through: what nobody holds moves to files
 * and comes back, whole, when rt_get(), a view or a task reads it; the
 * files go with their objects. */
START_TEST(a_full_store_spills_what_nobody_holds)
{
    char dir[128];
    start_small_store(dir, sizeof dir);
    enum { N = 16 };
    size_t part = 512 * 1024;
    rt_ref refs[N], sums[N];
    for (int i = 0; i < N; i++) {
        char *data = filled(part, 'a' + i);
        ck_ok(rt_put(data, part, &refs[i]));
        free(data);
    }
    ck_assert_int_ge(files_in(dir), N - 2); /* at most 1 MiB stays in memory */
    for (int i = 0; i < N; i += 2) /* tasks take them: they come back first */
        ck_ok(rt_remote_args(o_touch_pages, NULL, &RT_ARG_REF(refs[i]), 1, &sums[i]));
    for (int i = 0; i < N; i += 2)
        ck_assert_uint_eq(get_u64(sums[i], 60000), (uint64_t)('a' + i) * (part / 4096));
    rt_view v;
    ck_ok(rt_get_view(refs[1], &v, 60000));
    ck_assert_uint_eq(v.len, part);
    ck_assert_int_eq(((const char *)v.data)[part - 1], 'b');
    ck_ok(rt_view_release(&v));
    for (int i = N - 1; i >= 0; i--) {
        char *data;
        size_t len;
        ck_ok(rt_get(refs[i], (void **)&data, &len, 60000));
        ck_assert_uint_eq(len, part);
        ck_assert_int_eq(data[0], 'a' + i);
        ck_assert_int_eq(data[part - 1], 'a' + i);
        rt_free(data);
    }
    ck_assert_int_eq(files_in(dir), 0);
    ck_ok(rt_shutdown());
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A file that went missing fails its object with RT_ESYS, naming it; a
 * spill folder that cannot be used fails rt_init(). */
START_TEST(a_lost_spill_file_fails_its_object)
{
    char dir[128];
    start_small_store(dir, sizeof dir);
    size_t part = 700 * 1024;
    char *data = filled(part, 'x');
    rt_ref first, second;
    ck_ok(rt_put(data, part, &first));
    ck_ok(rt_put(data, part, &second)); /* the first spills */
    free(data);
    DIR *d = opendir(dir);
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            ck_assert_int_eq(unlink(path), 0);
        }
    closedir(d);
    ck_fails(rt_get(first, NULL, NULL, 60000), RT_ESYS, "could not be read back");
    ck_ok(rt_get(second, NULL, NULL, 60000));
    ck_ok(rt_shutdown());
    ck_assert_int_eq(rmdir(dir), 0);
    rt_config c = RT_CONFIG_INIT;
    c.num_gpus = 0;
    c.spill_dir = "/nonexistent/rtask";
    ck_fails(rt_init_config(&c), RT_EINVAL, "rt_config.spill_dir");
    setenv("RTASK_SPILL_DIR", "/proc/self/status", 1);
    ck_fails(rt_init(0), RT_EINVAL, "RTASK_SPILL_DIR");
    unsetenv("RTASK_SPILL_DIR");
}
END_TEST

/* What is held (a view, a task that takes it) does not spill: with
 * nothing else to move, puts and submissions wait, then fail. */
START_TEST(a_full_store_refuses_puts_after_waiting)
{
    char dir[128];
    start_small_store(dir, sizeof dir);
    size_t part = 600 * 1024;
    char *data = calloc(1, 2 << 20);
    rt_ref first, second;
    rt_view v;
    ck_ok(rt_put(data, part, &first));
    ck_ok(rt_get_view(first, &v, 0));
    ck_fails(rt_put(data, part, &second), RT_ENOMEM, "object store is full");
    ck_fails(rt_put(data, 2 << 20, &second), RT_ENOMEM, "more than the whole object store");
    ck_ok(rt_view_release(&v));
    ck_ok(rt_release(first));
    ck_ok(rt_put(data, part, &second));
    /* Results may pass the size (nothing finished is lost); submissions
     * then wait, and fail when nothing can move or is released. */
    ck_ok(rt_get_view(second, &v, 0));
    ck_ok(rt_remote(t_echo, NULL, data, part, &first));
    rt_view v2;
    ck_ok(rt_get_view(first, &v2, 60000));
    rt_ref third;
    ck_fails(rt_remote(t_echo, NULL, "x", 1, &third), RT_ENOMEM,
             "held by objects (it stays over full)");
    ck_ok(rt_view_release(&v2));
    ck_ok(rt_remote(t_echo, NULL, "x", 1, &third)); /* first spills */
    ck_ok(rt_get(third, NULL, NULL, 60000));
    ck_assert_int_eq(files_in(dir), 1);
    ck_ok(rt_view_release(&v));
    free(data);
    ck_ok(rt_shutdown());
    ck_assert_int_eq(files_in(dir), 0);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ---- actors and bad input --------------------------------------------------------- */

static int log_init(const void *arg, size_t len, void **state)
{
    (void)arg;
    (void)len;
    *state = calloc(1, 64);
    return *state ? 0 : 1;
}

static void log_fini(void *state)
{
    free(state);
}

/* Append the first byte of each argument to the state: the state so far. */
int log_append(void *state, const rt_value *args, size_t n, rt_result *r);
int log_append(void *state, const rt_value *args, size_t n, rt_result *r)
{
    char *log = state;
    for (size_t i = 0; i < n; i++)
        if (args[i].len && strlen(log) < 60)
            strncat(log, args[i].data, 1);
    return rt_result_set(r, log, strlen(log) + 1);
}

/* A call that waits for an object holds back the calls after it: they
 * run in the order they were made. */
START_TEST(actor_calls_take_objects_in_order)
{
    start_runtime();
    static const rt_actor_class cls = {"Log", log_init, log_fini};
    rt_actor a;
    ck_ok(rt_actor_create(&cls, NULL, NULL, 0, &a));
    rt_ref slow;
    uint64_t ms = 300;
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &slow)); /* its result: 8 bytes */
    rt_ref r1, r2;
    rt_arg first[] = {RT_ARG_BYTES("a", 1), RT_ARG_REF(slow)};
    ck_ok(rt_actor_call_args(a, log_append, first, 2, &r1));
    ck_ok(rt_actor_call_args(a, log_append, &RT_ARG_BYTES("b", 1), 1, &r2));
    char *out = NULL;
    ck_ok(rt_get(r2, (void **)&out, NULL, 60000));
    ck_assert_str_eq(out, "a,b"); /* slow's result, 300, starts with ',' */
    rt_free(out);
    ck_ok(rt_get(r1, NULL, NULL, 60000));
    ck_ok(rt_release(slow));
    ck_ok(rt_actor_kill(a));
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(bad_argument_lists_are_refused)
{
    start_runtime();
    rt_ref ref, gone = put_u64(1);
    ck_ok(rt_get(gone, NULL, NULL, 0));
    int fds = count_fds();
    ck_fails(rt_remote_args(o_sum, NULL, NULL, 1, &ref), RT_EINVAL, "args is NULL");
    ck_fails(rt_remote_args(NULL, NULL, NULL, 0, &ref), RT_EINVAL, "the function");
    rt_arg many[RT_ARGS_MAX + 1];
    ck_fails(rt_remote_args(o_sum, NULL, many, RT_ARGS_MAX + 1, &ref), RT_EINVAL,
             "RT_ARGS_MAX");
    ck_fails(rt_remote_args(o_sum, NULL, &RT_ARG_BYTES(NULL, 4), 1, &ref), RT_EINVAL,
             "bytes at NULL");
    rt_arg stale[] = {RT_ARG_BYTES(malloc(200 * 1024), 200 * 1024), RT_ARG_REF(gone)};
    ck_fails(rt_remote_args(o_sum, NULL, stale, 2, &ref), RT_EBADREF, "argument 1");
    free((void *)stale[0].data);
    ck_assert_int_eq(count_fds(), fds); /* the memfd made for argument 0 is closed */
    ck_fails(rt_remote_args(o_sum, NULL, &RT_ARG_REF((rt_ref){12345}), 1, &ref),
             RT_EBADREF, "argument 0");
    /* No argument at all is a task of none. */
    ck_ok(rt_remote_args(o_sum, NULL, NULL, 0, &ref));
    ck_assert_uint_eq(get_u64(ref, 60000), 0);
    ck_ok(rt_shutdown());
}
END_TEST

Suite *objects_suite(void)
{
    Suite *s = suite_create("objects");
    TCase *tc = tcase_create("objects");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, a_put_object_reads_back);
    tcase_add_test(tc, arguments_mix_objects_and_bytes);
    tcase_add_test(tc, a_chain_of_ten_thousand_dependent_tasks);
    tcase_add_test(tc, a_tree_reduction_of_a_hundred_thousand_leaves);
    tcase_add_test(tc, a_diamond);
    tcase_add_test(tc, a_stencil_over_two_workers_gets_every_value);
    tcase_add_test(tc, results_too_large_for_the_board_still_reach_their_tasks);
    tcase_add_test(tc, a_producer_that_dies_once_still_feeds_its_consumers);
    tcase_add_test(tc, a_task_waiting_in_its_worker_is_cancelled_before_it_runs);
    tcase_add_test(tc, a_crashed_dependency_fails_the_graph);
    tcase_add_test(tc, a_cancelled_dependency_fails_its_dependents);
    tcase_add_test(tc, a_dependency_that_times_out_fails_its_dependents);
    tcase_add_test(tc, refs_released_in_any_order);
    tcase_add_test(tc, a_view_reads_in_place);
    tcase_add_test(tc, a_large_object_read_by_64_tasks_is_not_copied);
    tcase_add_test(tc, an_object_stays_mapped_for_its_workers_next_task);
    tcase_add_test(tc, an_idle_worker_maps_no_object);
    tcase_add_test(tc, a_full_store_refuses_puts_after_waiting);
    tcase_add_test(tc, a_full_store_spills_what_nobody_holds);
    tcase_add_test(tc, a_lost_spill_file_fails_its_object);
    tcase_add_test(tc, shutdown_while_a_graph_waits);
    tcase_add_test(tc, actor_calls_take_objects_in_order);
    tcase_add_test(tc, bad_argument_lists_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

/* test_api.c - the contract of the public calls: errors and misuse. */
#include "tests.h"

#include <malloc.h>
#include <pthread.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(calls_before_init_fail)
{
    rt_ref ref = {1};
    uint64_t x = 1;
    ck_fails(rt_remote(t_echo, NULL, &x, sizeof x, &ref), RT_ENOTINIT, "rt_init");
    ck_fails(rt_get(ref, NULL, NULL, 0), RT_ENOTINIT, "rt_init");
    ck_fails(rt_release(ref), RT_ENOTINIT, "rt_init");
    ck_assert_int_eq(rt_shutdown(), 0); /* nothing to stop is not an error */
}
END_TEST

START_TEST(init_twice_fails_and_init_after_shutdown_works)
{
    start_runtime();
    ck_fails(rt_init(0), RT_EALREADY, "already running");
    ck_ok(rt_shutdown());
    ck_ok(rt_shutdown());
    start_runtime();
    uint64_t x = 21;
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 42);
    ck_ok(rt_shutdown());
}
END_TEST

static int one_of(int rc, const int *allowed, int n)
{
    for (int i = 0; i < n; i++)
        if (rc == allowed[i])
            return 1;
    return 0;
}

/* rt_init(), rt_shutdown() and calls from several threads at once: each
 * call ends in a value its page allows (a call made while rt_init() is
 * still starting the runtime is RT_ENOTINIT), nothing hangs, and the last
 * rt_shutdown() leaves no worker and no descriptor. */
static void *init_call_shutdown(void *arg)
{
    static const int init_ok[] = {0, RT_EALREADY};
    static const int call_ok[] = {0, RT_ENOTINIT, RT_ESHUTDOWN};
    static const int get_ok[] = {0, RT_ENOTINIT, RT_ESHUTDOWN, RT_EBADREF};
    long *bad = arg;
    for (int i = 0; i < 15; i++) {
        rt_config c = RT_CONFIG_INIT;
        c.num_cpus = 2;
        c.num_gpus = 0;
        c.num_workers = 1;
        *bad += !one_of(rt_init_config(&c), init_ok, 2);
        uint64_t x = 3;
        rt_ref ref;
        int rc = rt_remote(t_double, NULL, &x, sizeof x, &ref);
        *bad += !one_of(rc, call_ok, 3);
        if (rc == 0)
            *bad += !one_of(rt_get(ref, NULL, NULL, 60000), get_ok, 4);
        if (i % 3 == 2)
            *bad += rt_shutdown() != 0;
    }
    return NULL;
}

/* Under AddressSanitizer, one thread: rt_init() forks while the others
 * allocate, and ASan's allocator (unlike glibc's) leaves a lock another
 * thread held at the fork locked in the child, whose next allocation of
 * that size then waits forever. */
#if defined(__SANITIZE_ADDRESS__)
#define RACERS 1
#else
#define RACERS 4
#endif

START_TEST(init_and_shutdown_race_with_calls)
{
    int fds = count_fds();
    pthread_t th[RACERS];
    long bad[RACERS] = {0};
    for (int i = 0; i < RACERS; i++)
        pthread_create(&th[i], NULL, init_call_shutdown, &bad[i]);
    for (int i = 0; i < RACERS; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(bad[i], 0);
    }
    ck_ok(rt_shutdown());
    ck_assert_int_eq(count_workers(), 0);
    ck_assert_int_eq(count_fds(), fds);
}
END_TEST

START_TEST(bad_config_is_refused)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = NAN;
    ck_fails(rt_init_config(&c), RT_EINVAL, "finite");
    c.num_cpus = -2;
    ck_fails(rt_init_config(&c), RT_EINVAL, "negative");
    c.num_cpus = 2;
    c.num_workers = -5;
    ck_fails(rt_init_config(&c), RT_EINVAL, "num_workers");
    c.num_workers = RT_DEFAULT;
    c.num_gpus = -1.5;
    ck_fails(rt_init_config(&c), RT_EINVAL, "num_gpus");
    /* None of those started anything. */
    rt_ref ref;
    ck_fails(rt_remote(t_echo, NULL, NULL, 0, &ref), RT_ENOTINIT, "rt_init");
}
END_TEST

/* Starting and stopping the runtime again and again costs no memory:
 * 100 cycles (detection through hwloc included) grow the heap by less
 * than 100 KB. */
START_TEST(init_shutdown_cycles_keep_the_heap)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_workers = 1;
    c.sysfs_root = "/"; /* this machine: hwloc, and NVML where it is */
    size_t before = 0, cycles = scaled(100);
    for (size_t i = 0; i <= cycles; i++) {
        if (i == 1)
            before = mallinfo2().uordblks; /* after a first cycle's one-time setup */
        ck_ok(rt_init_config(&c));
        ck_ok(rt_shutdown());
    }
    size_t after = mallinfo2().uordblks;
    ck_assert_msg(after < before + 100 * 1024, "%zu cycles grew the heap from %zu to %zu bytes",
                  cycles, before, after);
}
END_TEST

START_TEST(zeroed_config_means_defaults)
{
    rt_config c;
    memset(&c, 0, sizeof c);
    ck_ok(rt_init_config(&c));
    uint64_t x = 5;
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 10);
    ck_ok(rt_shutdown());
}
END_TEST

/* rt_config.cluster and RTASK_CLUSTER: an unknown cluster, and "mpi"
 * where its module cannot be loaded, are clear errors that leave nothing
 * running: rt_init() works afterwards. */
START_TEST(cluster_errors_are_clear)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.cluster = "slurm";
    ck_fails(rt_init_config(&c), RT_EINVAL, "unknown cluster \"slurm\"");
    c.cluster = NULL;
    setenv("RTASK_CLUSTER", "bogus", 1);
    ck_fails(rt_init_config(&c), RT_EINVAL, "RTASK_CLUSTER");
    rt_ref none;
    ck_fails(rt_remote(t_echo, NULL, NULL, 0, &none), RT_ENOTINIT, "call rt_init() first");
    setenv("RTASK_CLUSTER", "mpi", 1);
    setenv("RTASK_MPI_MODULE", "/nonexistent/rtask-mpi.so", 1);
    ck_fails(rt_init_config(&c), RT_EINVAL, "cannot load the MPI module");
    /* Whatever made rt_init() fail, the runtime is as if never started. */
    rt_ref ref;
    ck_fails(rt_remote(t_echo, NULL, NULL, 0, &ref), RT_ENOTINIT, "call rt_init() first");
    unsetenv("RTASK_MPI_MODULE");
    setenv("RTASK_CLUSTER", "none", 1);
    ck_ok(rt_init_config(&c));
    ck_ok(rt_shutdown());
    unsetenv("RTASK_CLUSTER");
}
END_TEST

START_TEST(bad_submissions_are_refused)
{
    start_runtime();
    rt_ref ref;
    rt_opts o = RT_OPTS_INIT;
    ck_fails(rt_remote(NULL, NULL, NULL, 0, &ref), RT_EINVAL, "function");
    ck_fails(rt_remote(t_echo, NULL, NULL, 0, NULL), RT_EINVAL, "ref");
    ck_fails(rt_remote(t_echo, NULL, NULL, 5, &ref), RT_EINVAL, "arg");
    o.num_cpus = NAN;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "num_cpus");
    o.num_cpus = -2; /* -1 is RT_DEFAULT */
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "negative");
    o.num_cpus = 0.00001;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL,
             "precision cannot go beyond 0.0001");
    o.num_cpus = 1;
    o.resources = "widget=0.00001"; /* the message names the item */
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL,
             "resources: widget of 1e-05: precision cannot go beyond 0.0001");
    o.resources = NULL;
    o.num_cpus = 3;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE, "CPU");
    o.num_cpus = 1;
    o.max_calls = -3;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "max_calls");
    o.max_calls = RT_DEFAULT;
    o.max_retries = -2;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "max_retries");
    ck_ok(rt_shutdown());
}
END_TEST

/* Lengths and counts no buffer can have: refused, naming the argument,
 * before any size is computed from them (n + 1 or a header added would
 * wrap) and before a byte is read. */
START_TEST(sizes_that_wrap_are_refused)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_gpus = 0;
    c.num_workers = 1;
    c.object_store_bytes = 64 << 20;
    ck_ok(rt_init_config(&c));
    /* One readable page: a call that copied past it would crash. */
    long page = sysconf(_SC_PAGESIZE);
    char *one = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(one, MAP_FAILED);
    rt_ref ref = {1}, refs[1] = {{1}};
    size_t n, idx[1];
    ck_fails(rt_wait(refs, SIZE_MAX, 0, 0, &n), RT_EINVAL, "n is");
    ck_fails(rt_wait_indices(refs, SIZE_MAX, 0, 0, idx, &n), RT_EINVAL, "n is");
    for (size_t len = SIZE_MAX; len > SIZE_MAX - 2 * 4096; len -= 1000) {
        ck_fails(rt_put(one, len, &ref), RT_EINVAL, "rt_put: len is");
        ck_fails(rt_remote(t_echo, NULL, one, len, &ref), RT_EINVAL, "rt_remote: arg_len");
        rt_arg arg = RT_ARG_BYTES(one, len);
        ck_fails(rt_remote_args(t_dirty_env_args, NULL, &arg, 1, &ref), RT_EINVAL,
                 "argument 0's len");
        rt_value v = {one, len};
        ck_fails(rt_remote_batch(t_echo, NULL, &v, 1, &ref), RT_EINVAL, "argument 0's len");
    }
    /* Larger than the store: refused before 512 MiB are read and copied
     * (the page above is all there is to read). */
    ck_fails(rt_put(one, (size_t)512 << 20, &ref), RT_ENOMEM,
             "more than the whole object store");
    munmap(one, (size_t)page);
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(bad_resource_lists_are_refused)
{
    rt_config c = RT_CONFIG_INIT;
    c.resources = "fpga";
    ck_fails(rt_init_config(&c), RT_EINVAL, "expected name=amount");
    c.resources = "fpga=lots";
    ck_fails(rt_init_config(&c), RT_EINVAL, "fpga needs a number");
    c.resources = "fpga=1,fpga=2";
    ck_fails(rt_init_config(&c), RT_EINVAL, "fpga is given twice");
    c.resources = "CPU=4";
    ck_fails(rt_init_config(&c), RT_EINVAL, "use num_cpus");
    c.resources = "fpga=-1";
    ck_fails(rt_init_config(&c), RT_EINVAL, "negative");

    c.resources = "fpga=2,neuron_cores=4";
    c.num_cpus = 2;
    ck_ok(rt_init_config(&c));
    rt_opts o = RT_OPTS_INIT;
    rt_ref ref;
    o.resources = "tpu=1";
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE,
             "1 tpu can never be met: the runtime has no resource of that name");
    o.resources = "fpga=3";
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE,
             "3 fpga can never be met: the runtime has 2 in all");
    o.resources = "fpga=0.00001";
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "precision");
    o.resources = "fpga=NaN";
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "finite");
    o.resources = "fpga=1,";
    ck_ok(rt_remote(t_echo, &o, NULL, 0, &ref)); /* a trailing comma is fine */
    ck_ok(rt_get(ref, NULL, NULL, RT_FOREVER));
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(bad_handles_are_refused)
{
    start_runtime();
    rt_ref zero = {0}, forged = {0xdeadbeef00000007u}, ref;
    ck_fails(rt_get(zero, NULL, NULL, 0), RT_EBADREF, "unknown");
    ck_fails(rt_get(forged, NULL, NULL, 0), RT_EBADREF, "unknown");
    uint64_t x = 1;
    ck_ok(rt_remote(t_double, NULL, &x, sizeof x, &ref));
    ck_ok(rt_get(ref, NULL, NULL, RT_FOREVER));
    ck_fails(rt_get(ref, NULL, NULL, 0), RT_EBADREF, "consumed");
    ck_ok(rt_remote(t_double, NULL, &x, sizeof x, &ref));
    ck_ok(rt_release(ref));
    ck_fails(rt_release(ref), RT_EBADREF, "unknown");
    ck_fails(rt_get(ref, NULL, NULL, 0), RT_EBADREF, "unknown");
    size_t n_ready;
    ck_fails(rt_wait(&ref, 1, 1, 0, &n_ready), RT_EBADREF, "handle 0");
    ck_fails(rt_wait(&ref, 1, 2, 0, &n_ready), RT_EINVAL, "num_ready");
    /* A handle listed twice would count twice: refused, as Ray does. */
    rt_ref twice[2];
    ck_ok(rt_remote(t_double, NULL, &x, sizeof x, &twice[0]));
    twice[1] = twice[0];
    ck_fails(rt_wait(twice, 2, 2, 0, &n_ready), RT_EINVAL, "listed twice");
    ck_ok(rt_get(twice[0], NULL, NULL, RT_FOREVER));
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(timeout_keeps_the_handle)
{
    start_runtime();
    uint64_t ms = 400;
    rt_ref ref;
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 0), RT_ETIMEDOUT, "timed out");
    ck_fails(rt_get(ref, NULL, NULL, 50), RT_ETIMEDOUT, "50 ms");
    uint64_t *v;
    ck_ok(rt_get(ref, (void **)&v, NULL, RT_FOREVER));
    ck_assert_uint_eq(*v, 400);
    rt_free(v);
    ck_ok(rt_shutdown());
}
END_TEST

/* A wait for many handles hears of each end, whether it looks at what
 * ended since it last looked, or (when more tasks ended meanwhile than
 * the runtime remembers) at every handle again. */
START_TEST(a_wait_for_many_handles_hears_each_end)
{
    start_runtime();
    enum { N = 200, OTHERS = 5000 };
    rt_ref refs[N];
    size_t index[N], n_ready;
    for (int i = 0; i < N; i++) {
        uint64_t ms = i % 3 ? 0 : 20;
        ck_ok(rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &refs[i]));
    }
    ck_ok(rt_wait_indices(refs, N, N / 2, 60000, index, &n_ready));
    ck_assert_uint_ge(n_ready, N / 2);
    for (size_t k = 0; k < n_ready; k++) { /* each said ready is */
        size_t one;
        ck_ok(rt_wait(&refs[index[k]], 1, 1, 0, &one));
        ck_assert_uint_eq(one, 1);
    }
    for (int i = 0; i < OTHERS; i++) { /* more ends than the log keeps */
        rt_ref other;
        ck_ok(rt_remote(t_echo, NULL, "x", 1, &other));
        ck_ok(rt_release(other));
    }
    ck_ok(rt_wait_indices(refs, N, N, 60000, index, &n_ready));
    ck_assert_uint_eq(n_ready, N);
    for (size_t k = 0; k < N; k++)
        ck_assert_uint_eq(index[k], k);
    ck_ok(rt_shutdown());
}
END_TEST

static void *wait_for_one(void *ref)
{
    size_t one = 0;
    int rc = rt_wait(ref, 1, 1, 60000, &one);
    return (void *)(intptr_t)(rc == 0 && one == 1);
}

/* A wait for k of its handles sleeps through fewer ends than it needs
 * (runtime.h: rt__wait_ends()), yet returns once k ended, while other
 * tasks end around it and another thread waits for a handle of its own. */
START_TEST(a_wait_for_some_returns_once_they_ended)
{
    start_runtime();
    enum { QUICK = 3, SLOW = 1, OTHERS = 50 }; /* one slow task: a CPU for the rest */
    rt_ref refs[QUICK + SLOW];
    uint64_t quick = 0, slow = 600;
    for (int i = 0; i < SLOW; i++)
        ck_ok(rt_remote(t_sleep_ms, NULL, &slow, sizeof slow, &refs[QUICK + i]));
    pthread_t other;
    rt_ref its = refs[QUICK]; /* its own: rt_wait() writes the list it is given */
    ck_assert_int_eq(pthread_create(&other, NULL, wait_for_one, &its), 0);
    for (int i = 0; i < QUICK; i++)
        ck_ok(rt_remote(t_sleep_ms, NULL, &quick, sizeof quick, &refs[i]));
    for (int i = 0; i < OTHERS; i++) {
        rt_ref r;
        ck_ok(rt_remote(t_echo, NULL, "x", 1, &r));
        ck_ok(rt_release(r));
    }
    size_t index[QUICK + SLOW], n_ready;
    ck_ok(rt_wait_indices(refs, QUICK + SLOW, QUICK, 60000, index, &n_ready));
    ck_assert_uint_eq(n_ready, QUICK);
    for (size_t k = 0; k < QUICK; k++)
        ck_assert_uint_eq(index[k], k); /* the quick ones, not the slow */
    ck_ok(rt_wait_indices(refs, QUICK + SLOW, QUICK + SLOW, 60000, index, &n_ready));
    ck_assert_uint_eq(n_ready, QUICK + SLOW);
    void *heard;
    ck_assert_int_eq(pthread_join(other, &heard), 0);
    ck_assert_ptr_eq(heard, (void *)1);
    ck_ok(rt_shutdown());
}
END_TEST

/* In a child the application forks, a task's answer: 0 when right. */
static int child_runs_a_runtime(void)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 1;
    if (rt_init_config(&c) < 0)
        return 1;
    rt_ref ref;
    uint64_t x = 21, *v = NULL;
    int rc = rt_remote(t_double, NULL, &x, sizeof x, &ref) == 0 &&
                     rt_get(ref, (void **)&v, NULL, 60000) == 0 && *v == 42
                 ? 0
                 : 2;
    rt_free(v);
    return rt_shutdown() == 0 ? rc : 3;
}

/* rt_init(3): a child forked (without exec) before rt_init(), while a
 * runtime runs, or after rt_shutdown() starts a runtime of its own.  It
 * says how that went on a pipe and ends by SIGKILL: the parent's records
 * it copied are not its to free, and valgrind would call them lost at
 * an exit. */
START_TEST(a_forked_child_starts_its_own_runtime)
{
    ck_ok(rt_shutdown()); /* nothing to end: the runtime is made, blank */
    for (int when = 0; when < 3; when++) {
        if (when == 1)
            start_runtime();
        int p[2];
        ck_assert_int_eq(pipe(p), 0);
        pid_t child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
            int rc = child_runs_a_runtime();
            if (write(p[1], &rc, sizeof rc) != (ssize_t)sizeof rc)
                _exit(1);
            kill(getpid(), SIGKILL);
        }
        close(p[1]);
        int rc = -1;
        ck_assert_int_eq(read(p[0], &rc, sizeof rc), (ssize_t)sizeof rc);
        close(p[0]);
        ck_assert_int_eq(waitpid(child, NULL, 0), child);
        ck_assert_msg(rc == 0, "fork %d: the child's runtime failed (%d)", when, rc);
        if (when == 1)
            ck_ok(rt_shutdown());
    }
}
END_TEST

START_TEST(calls_after_shutdown_fail)
{
    start_runtime();
    rt_ref ref;
    uint64_t x = 1;
    ck_ok(rt_remote(t_double, NULL, &x, sizeof x, &ref));
    ck_ok(rt_shutdown());
    ck_fails(rt_get(ref, NULL, NULL, 0), RT_ESHUTDOWN, "shut down");
    ck_fails(rt_remote(t_double, NULL, &x, sizeof x, &ref), RT_ESHUTDOWN, "shut down");
}
END_TEST

START_TEST(failing_task_reports_its_status_and_bytes)
{
    start_runtime();
    rt_ref ref;
    ck_ok(rt_remote(t_fail, NULL, NULL, 0, &ref));
    char *msg;
    size_t len;
    ck_fails(rt_get(ref, (void **)&msg, &len, RT_FOREVER), RT_ETASK, "returned 7");
    ck_assert_uint_eq(len, 10);
    ck_assert_str_eq(msg, "bad input");
    rt_free(msg);
    ck_ok(rt_shutdown());
}
END_TEST

/* Each call names itself in its messages, not the call it is built on. */
START_TEST(messages_name_the_call)
{
    const char *const *ids;
    size_t n;
    ck_fails(rt_get_gpu_ids(&ids, &n), RT_EINVAL, "rt_get_gpu_ids: only inside a task");
    ck_fails(rt_get_accelerator_ids("TPU", &ids, &n), RT_EINVAL,
             "rt_get_accelerator_ids: only inside a task");
}
END_TEST

/* num_gpus = RT_DEFAULT in a task is the default, none; other negative
 * counts are refused. */
START_TEST(num_gpus_default_is_none)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_gpus = 1;
    ck_ok(rt_init_config(&c));
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = RT_DEFAULT;
    o.num_cpus = 0;
    rt_ref ref;
    char *s;
    ck_ok(rt_remote(t_devices, &o, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&s, NULL, RT_FOREVER));
    ck_assert_str_eq(s, "ids= cvd= order=PCI_BUS_ID neuron=-");
    rt_free(s);
    o.num_gpus = -2;
    ck_fails(rt_remote(t_devices, &o, NULL, 0, &ref), RT_EINVAL, "num_gpus");
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(every_code_has_a_distinct_name)
{
    const char *seen[16];
    for (int code = 0; code >= RT_EKILLED; code--) {
        const char *s = rt_strerror(code);
        ck_assert_ptr_nonnull(s);
        for (int j = 0; j < -code; j++)
            ck_assert_str_ne(seen[j], s);
        seen[-code] = s;
    }
    ck_assert_str_eq(rt_strerror(RT_OK), "success");
    ck_assert_str_eq(rt_strerror(-999), "unknown error");
    ck_assert_str_eq(rt_strerror(5), "unknown error");
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", RT_VERSION_MAJOR, RT_VERSION_MINOR,
             RT_VERSION_PATCH);
    ck_assert_str_eq(rt_version(), want);
}
END_TEST

START_TEST(initialisers_agree_with_their_macros)
{
    rt_config c1 = RT_CONFIG_INIT, c2;
    rt_opts o1 = RT_OPTS_INIT, o2;
    memset(&c2, 0xff, sizeof c2);
    memset(&o2, 0xff, sizeof o2);
    rt_config_init(&c2);
    rt_opts_init(&o2);
    ck_assert_int_eq(c2.init_magic_, c1.init_magic_);
    ck_assert(c2.num_cpus == RT_DETECT && c2.num_gpus == RT_DETECT);
    ck_assert_int_eq(c2.num_workers, RT_DEFAULT);
    ck_assert_ptr_null(c2.resources);
    ck_assert_ptr_null(c2.accelerator_type);
    ck_assert_int_eq(o2.init_magic_, o1.init_magic_);
    ck_assert(o2.num_cpus == RT_DEFAULT && o2.num_gpus == 0);
    ck_assert_int_eq(o2.max_calls, RT_DEFAULT);
    ck_assert_int_eq(o2.max_retries, RT_DEFAULT);
    ck_assert_int_eq(o2.max_restarts, RT_DEFAULT);
    ck_assert_ptr_null(o2.name);
    ck_assert_ptr_null(o2.resources);
    ck_assert_ptr_null(o2.accelerator_type);
}
END_TEST

START_TEST(free_ignores_null)
{
    rt_free(NULL);
    ck_assert_str_eq(rt_strerror(RT_EINVAL), "invalid argument");
}
END_TEST

Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("contract");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, calls_before_init_fail);
    tcase_add_test(tc, init_and_shutdown_race_with_calls);
    tcase_add_test(tc, init_twice_fails_and_init_after_shutdown_works);
    tcase_add_test(tc, bad_config_is_refused);
    tcase_add_test(tc, cluster_errors_are_clear);
    tcase_add_test(tc, zeroed_config_means_defaults);
    tcase_add_test(tc, init_shutdown_cycles_keep_the_heap);
    tcase_add_test(tc, bad_submissions_are_refused);
    tcase_add_test(tc, bad_resource_lists_are_refused);
    tcase_add_test(tc, sizes_that_wrap_are_refused);
    tcase_add_test(tc, bad_handles_are_refused);
    tcase_add_test(tc, timeout_keeps_the_handle);
    tcase_add_test(tc, a_wait_for_many_handles_hears_each_end);
    tcase_add_test(tc, a_wait_for_some_returns_once_they_ended);
    tcase_add_test(tc, calls_after_shutdown_fail);
    tcase_add_test(tc, a_forked_child_starts_its_own_runtime);
    tcase_add_test(tc, failing_task_reports_its_status_and_bytes);
    tcase_add_test(tc, messages_name_the_call);
    tcase_add_test(tc, num_gpus_default_is_none);
    tcase_add_test(tc, every_code_has_a_distinct_name);
    tcase_add_test(tc, initialisers_agree_with_their_macros);
    tcase_add_test(tc, free_ignores_null);
    suite_add_tcase(s, tc);
    return s;
}

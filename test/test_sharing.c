/*
 * test_sharing.c - GPU sharing that holds: requests in GPU memory
 * (rt_opts.gpu_memory) mixed with fractions, on GPUs of one size and of
 * several, and refused where no GPU's memory is known; and the MPS
 * variables that hold each task to its share.
 */
#include "tests.h"

#include "../lib/sched/scheduler.h"
#include "../lib/node/spares.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAKE "test/fake/"
#define GIB (1ull << 30)

/* ---- placement, on the scheduler alone ------------------------------------ */

/* A scheduler with one node whose GPUs have these memory sizes. */
static void node_of(rt__sched *s, int ngpus, const uint64_t *bytes)
{
    rt__names names = {0};
    ck_assert_int_eq(rt__sched_init(s, &names), 0);
    rt__node_spec spec = {.total = {.cpu = 64 * RT__UNIT, .gpu = ngpus * RT__UNIT},
                          .ngpus = ngpus, .gpu_bytes = bytes};
    ck_assert_int_eq(rt__sched_add_node(s, &spec), 0);
}

/* Lease a class of its own for req; returns the GPU it got and its
 * share. */
static int grant(rt__sched *s, rt__res req, rt__amount *share)
{
    static int distinct = 1; /* a class per call: max_calls tells them apart */
    rt__class *c = rt__sched_class(s, &req, distinct++);
    rt__task *t = calloc(1, sizeof *t);
    rt__sched_push(s, c, t);
    rt__grant g;
    ck_assert_ptr_eq(rt__sched_decide(s, &g), c);
    rt__sched_take(s, c, &g);
    free(rt__sched_pop(s, c));
    *share = g.gpu.each;
    for (int i = 0; i < RT__INSTANCE_MAX; i++)
        if (rt__pick_has(&g.gpu, i))
            return i;
    return -1;
}

static void no_grant(rt__sched *s, rt__res req)
{
    rt__class *c = rt__sched_class(s, &req, 1);
    rt__task *t = calloc(1, sizeof *t);
    rt__sched_push(s, c, t);
    rt__grant g;
    ck_assert_ptr_null(rt__sched_decide(s, &g));
    free(rt__sched_pop(s, c));
    rt__sched_release_class(s, c);
}

/* Two 80 GB GPUs: 20 GB is 0.25 of one; a 0.5 fraction joins it on GPU 0,
 * another 20 GB fills GPU 0 exactly, and the next goes to GPU 1.  The
 * node's GPU total is counted with what the grants hold. */
START_TEST(memory_and_fractions_share_one_gpu)
{
    static rt__sched s;
    uint64_t bytes[2] = {80 * GIB, 80 * GIB};
    node_of(&s, 2, bytes);
    rt__amount share;
    rt__res twenty = {.gpu_bytes = 20 * GIB}, half = {.gpu = RT__UNIT / 2};
    ck_assert_int_eq(grant(&s, twenty, &share), 0);
    ck_assert_int_eq(share, RT__UNIT / 4);
    ck_assert_int_eq(grant(&s, half, &share), 0);
    ck_assert_int_eq(grant(&s, twenty, &share), 0);
    ck_assert_int_eq(s.node[0]->free.gpus.free[0], 0);
    ck_assert_int_eq(grant(&s, twenty, &share), 1);
    ck_assert_int_eq(s.node[0]->free.res.gpu, 2 * RT__UNIT - RT__UNIT - RT__UNIT / 4);
    rt__res eighty = {.gpu_bytes = 80 * GIB}, more = {.gpu_bytes = 60 * GIB + 1};
    no_grant(&s, eighty);
    no_grant(&s, more);
    ck_assert_int_eq(rt__sched_feasible(&s, &eighty), 0);
}
END_TEST

/* GPUs of 80, 40 and 16 GB: a request goes where it leaves the least of
 * a GPU free (30 GB on the 40 GB one), 50 GB fits the 80 GB one alone,
 * 100 GB none: refused, naming the largest. */
START_TEST(memory_on_gpus_of_several_sizes)
{
    static rt__sched s;
    uint64_t bytes[3] = {80 * GIB, 40 * GIB, 16 * GIB};
    node_of(&s, 3, bytes);
    rt__amount share;
    ck_assert_int_eq(grant(&s, (rt__res){.gpu_bytes = 30 * GIB}, &share), 1);
    ck_assert_int_eq(share, 7500);
    ck_assert_int_eq(grant(&s, (rt__res){.gpu_bytes = 50 * GIB}, &share), 0);
    ck_assert_int_eq(share, 6250);
    ck_assert_int_eq(grant(&s, (rt__res){.gpu_bytes = 16 * GIB}, &share), 2);
    ck_assert_int_eq(share, RT__UNIT);
    rt__res huge = {.gpu_bytes = 100 * GIB};
    ck_fails(rt__sched_feasible(&s, &huge), RT_EINFEASIBLE, "the largest GPU has 85899345920");
}
END_TEST

/* ---- through the runtime ---------------------------------------------------- */

static void init_v100x4(unsigned long long memory, int mps)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 4;
    c.num_workers = 1;
    c.sysfs_root = FAKE "v100x4";
    c.gpu_memory = memory;
    c.gpu_mps = mps;
    setenv("RTASK_PCI_IDS", FAKE "pci.ids", 1);
    ck_ok(rt_init_config(&c));
}

#define MPS_VARS "GPU CUDA_VISIBLE_DEVICES CUDA_MPS_ACTIVE_THREAD_PERCENTAGE " \
                 "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"

/* What t_env sees for a task of gpus or bytes. */
static const char *seen(double gpus, unsigned long long bytes)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = gpus;
    o.gpu_memory = bytes;
    return env_seen(&o, MPS_VARS);
}

/* Without NVML and without rt_config.gpu_memory, no GPU's memory is
 * known: a request in bytes is refused at once, saying why. */
START_TEST(memory_requests_need_known_memory)
{
    init_v100x4(0, 0);
    rt_opts o = RT_OPTS_INIT;
    o.gpu_memory = GIB;
    rt_ref ref;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE,
             "no node knows its GPUs' memory");
    o.num_gpus = 0.5;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "give one");
    ck_ok(rt_shutdown());
    init_v100x4(16 * GIB, 0);
    ck_assert_str_eq(seen(0, 4 * GIB), "ids=0 CUDA_VISIBLE_DEVICES=0 "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=- CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=-");
    o.num_gpus = 0;
    o.gpu_memory = 16 * GIB + 1;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE, "the largest GPU has");
    ck_ok(rt_shutdown());
}
END_TEST

/* With MPS on, a task's share is CUDA's limit: its percentage of the
 * GPU's threads, rounded up, and its share of each GPU's memory. */
START_TEST(mps_variables_hold_the_share)
{
    init_v100x4(16 * GIB, 1);
    ck_assert_str_eq(seen(0.25, 0), "ids=0 CUDA_VISIBLE_DEVICES=0 "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 "
                     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4096MB");
    ck_assert_str_eq(seen(0.5, 0), "ids=0 CUDA_VISIBLE_DEVICES=0 "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 "
                     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=8192MB");
    ck_assert_str_eq(seen(1, 0), "ids=0 CUDA_VISIBLE_DEVICES=0 "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100 "
                     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=16384MB");
    ck_assert_str_eq(seen(2, 0), "ids=0,1 CUDA_VISIBLE_DEVICES=0,1 "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100 "
                     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=16384MB,1=16384MB");
    ck_assert_str_eq(seen(0.333, 0), "ids=0 CUDA_VISIBLE_DEVICES=0 "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=34 "
                     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=5455MB");
    ck_assert_str_eq(seen(0, 2 * GIB), "ids=0 CUDA_VISIBLE_DEVICES=0 "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=13 "
                     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2048MB");
    ck_assert_str_eq(seen(0, 0), "ids= CUDA_VISIBLE_DEVICES= "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=- CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=-");
    ck_ok(rt_shutdown());
    init_v100x4(0, 1); /* memory unknown: threads alone */
    ck_assert_str_eq(seen(0.5, 0), "ids=0 CUDA_VISIBLE_DEVICES=0 "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 "
                     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=-");
    ck_ok(rt_shutdown());
}
END_TEST

/* By default enforcement follows the MPS control daemon: on when its
 * pipe directory has a control pipe, off otherwise. */
START_TEST(mps_follows_the_daemon)
{
    char dir[256], control[300];
    temp_path(dir, sizeof dir, "mps");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    setenv("CUDA_MPS_PIPE_DIRECTORY", dir, 1);
    init_v100x4(16 * GIB, RT_DEFAULT);
    ck_assert_str_eq(seen(0.5, 0), "ids=0 CUDA_VISIBLE_DEVICES=0 "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=- CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=-");
    ck_ok(rt_shutdown());
    snprintf(control, sizeof control, "%s/control", dir);
    ck_assert_int_eq(mkfifo(control, 0600), 0);
    init_v100x4(16 * GIB, RT_DEFAULT);
    ck_assert_str_eq(seen(0.5, 0), "ids=0 CUDA_VISIBLE_DEVICES=0 "
                     "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 "
                     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=8192MB");
    ck_ok(rt_shutdown());
    unlink(control);
    rmdir(dir);
}
END_TEST

/* ---- spare workers ------------------------------------------------------ */

static void init_logical(double gpus)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.num_gpus = gpus;
    ck_ok(rt_init_config(&c));
}

/* GPU tasks run on spares, fresh workers forked ahead: each its own
 * process, never one that ran another task, CPU tasks' included. */
START_TEST(spare_workers_run_one_task_each)
{
    init_logical(2);
    uint64_t cpu = call_u64(t_getpid, NULL, NULL, 0), pids[30];
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 0.5;
    for (int i = 0; i < 30; i++) {
        pids[i] = call_u64(t_getpid, &o, NULL, 0);
        ck_assert_uint_ne(pids[i], cpu);
        for (int j = 0; j < i; j++)
            ck_assert_uint_ne(pids[i], pids[j]);
    }
    ck_assert_uint_eq(call_u64(t_getpid, NULL, NULL, 0), cpu); /* reused */
    ck_ok(rt_shutdown());
}
END_TEST

/* 1000 GPU tasks at once: the workers the burst needs, bounded, and
 * spares bounded too once it is over; none after rt_shutdown(). */
START_TEST(spares_are_bounded_under_a_burst)
{
    init_logical(1);
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 0.01;
    o.num_cpus = 0;
    enum { N = 1000 };
    static rt_ref refs[N];
    for (int i = 0; i < N; i++)
        ck_ok(rt_remote(t_echo, &o, NULL, 0, &refs[i]));
    int most = 0;
    for (int i = 0; i < N; i++) {
        ck_ok(rt_get(refs[i], NULL, NULL, 60000));
        int n = count_workers();
        most = n > most ? n : most;
    }
    ck_assert_int_le(most, 64 + RT__SPARES_MAX); /* max_workers for 2 CPUs: 64 */
    /* The burst's workers retire as they end: once they have exited
     * (slowly under valgrind), the idle pool and the spares are left. */
    int left = count_workers();
    for (int i = 0; i < 300 && left > 2 + RT__SPARES_MAX; i++) {
        usleep(100000);
        left = count_workers();
    }
    ck_assert_int_le(left, 2 + RT__SPARES_MAX);
    pid_t server = forkserver_pid();
    ck_ok(rt_shutdown());
    ck_assert(process_gone(server)); /* the fork server, after its workers */
    ck_assert_int_eq(forkserver_pid(), 0);
}
END_TEST

Suite *sharing_suite(void)
{
    Suite *s = suite_create("sharing");
    TCase *tc = tcase_create("sharing");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, memory_and_fractions_share_one_gpu);
    tcase_add_test(tc, memory_on_gpus_of_several_sizes);
    tcase_add_test(tc, memory_requests_need_known_memory);
    tcase_add_test(tc, mps_variables_hold_the_share);
    tcase_add_test(tc, mps_follows_the_daemon);
    tcase_add_test(tc, spare_workers_run_one_task_each);
    tcase_add_test(tc, spares_are_bounded_under_a_burst);
    suite_add_tcase(s, tc);
    return s;
}

/* test_resources.c - GPUs, fractions, packing, custom resources,
 * accelerator types, neuron cores and max_calls, as the reference text
 * describes them. */
#include "tests.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void init_node(double cpus, double gpus, const char *resources,
                      const char *accelerator_type)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = cpus;
    c.num_gpus = gpus;
    c.num_workers = 1;
    c.resources = resources;
    c.accelerator_type = accelerator_type;
    ck_ok(rt_init_config(&c));
}

static rt_opts gpu_opts(double gpus)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = gpus;
    return o;
}

/* Submit n t_devices tasks that each hold their devices for ms, and
 * collect what each saw, in submission order. */
static void devices_of(int n, const rt_opts *o, uint64_t ms, char **seen)
{
    rt_ref ref[16];
    for (int i = 0; i < n; i++)
        ck_ok(rt_remote(t_devices, o, &ms, sizeof ms, &ref[i]));
    for (int i = 0; i < n; i++)
        ck_ok(rt_get(ref[i], (void **)&seen[i], NULL, 60000));
}

static void free_all(int n, char **seen)
{
    for (int i = 0; i < n; i++)
        rt_free(seen[i]);
}

/* Two overlapping tasks with these options see first, then second. */
static void two_tasks_see(const rt_opts *o, const char *first, const char *second)
{
    char *seen[2];
    devices_of(2, o, 300, seen);
    ck_assert_str_eq(seen[0], first);
    ck_assert_str_eq(seen[1], second);
    free_all(2, seen);
}

/* The reference's first example as tasks: with 2 GPUs, a task that holds
 * one while the next starts makes the next get the other. */
START_TEST(two_gpu_tasks_get_gpu_0_then_1)
{
    init_node(2, 2, NULL, NULL);
    rt_opts o = gpu_opts(1);
    two_tasks_see(&o, "ids=0 cvd=0 order=PCI_BUS_ID neuron=-",
                  "ids=1 cvd=1 order=PCI_BUS_ID neuron=-");
    char *seen[1];
    o.num_gpus = 2;
    devices_of(1, &o, 0, seen);
    ck_assert_str_eq(seen[0], "ids=0,1 cvd=0,1 order=PCI_BUS_ID neuron=-");
    free_all(1, seen);
    /* A task without GPUs sees none. */
    rt_opts cpu = RT_OPTS_INIT;
    devices_of(1, &cpu, 0, seen);
    ck_assert_str_eq(seen[0], "ids= cvd= order=PCI_BUS_ID neuron=-");
    free_all(1, seen);
    ck_ok(rt_shutdown());
}
END_TEST

/* Four 0.25-GPU tasks on one GPU run at once, shown by the times they
 * took; a fifth waits until one of them ends. */
START_TEST(quarter_gpu_tasks_share_one_gpu)
{
    init_node(5, 1, NULL, NULL);
    rt_opts o = gpu_opts(0.25);
    rt_ref ref[5];
    uint64_t ms = 400, *span[5];
    for (int i = 0; i < 5; i++)
        ck_ok(rt_remote(t_span, &o, &ms, sizeof ms, &ref[i]));
    for (int i = 0; i < 5; i++)
        ck_ok(rt_get(ref[i], (void **)&span[i], NULL, 60000));
    uint64_t last_start = 0, first_end = UINT64_MAX;
    for (int i = 0; i < 4; i++) {
        last_start = span[i][0] > last_start ? span[i][0] : last_start;
        first_end = span[i][1] < first_end ? span[i][1] : first_end;
    }
    ck_assert_msg(last_start < first_end, "the four did not overlap");
    ck_assert_msg(span[4][0] >= first_end, "the fifth started before a slot was free");
    for (int i = 0; i < 5; i++)
        rt_free(span[i]);
    ck_ok(rt_shutdown());
}
END_TEST

/* Three 0.5-GPU holders on 3 GPUs pack onto GPU 0 first: 0, 0, 1. */
START_TEST(fractions_pack_one_gpu_before_the_next)
{
    init_node(3, 3, NULL, NULL);
    rt_opts o = gpu_opts(0.5);
    char *seen[3];
    devices_of(3, &o, 300, seen);
    int on[3] = {0};
    for (int i = 0; i < 3; i++) {
        int id;
        ck_assert_int_eq(sscanf(seen[i], "ids=%d", &id), 1);
        ck_assert_int_lt(id, 3);
        on[id]++;
    }
    ck_assert_msg(on[0] == 2 && on[1] == 1 && on[2] == 0,
                  "GPU 0/1/2 got %d/%d/%d tasks", on[0], on[1], on[2]);
    free_all(3, seen);
    ck_ok(rt_shutdown());
}
END_TEST

static int pid_of(const char *seen)
{
    return atoi(strchr(seen, ' ') + 1);
}

/* GPU tasks get a fresh worker each by default; max_calls = 0 turns
 * reuse back on; CPU tasks reuse workers by default.  Reuse shows as a
 * worker that runs two of three tasks in a row, not all three: the spare
 * that replaces round 0's last worker may become idle in between. */
START_TEST(gpu_tasks_do_not_reuse_workers_by_default)
{
    init_node(2, 1, NULL, NULL);
    rt_opts o = gpu_opts(1);
    char *seen[3];
    for (int i = 0; i < 3; i++)
        seen[i] = NULL;
    int pid[3];
    for (int round = 0; round < 3; round++) {
        if (round == 1)
            o.max_calls = 0;
        if (round == 2)
            o = (rt_opts)RT_OPTS_INIT; /* a CPU task */
        for (int i = 0; i < 3; i++) {
            rt_ref ref;
            ck_ok(rt_remote(t_dirty_env, &o, NULL, 0, &ref));
            ck_ok(rt_get(ref, (void **)&seen[i], NULL, 60000));
            pid[i] = pid_of(seen[i]);
            /* The worker's environment is reset between tasks. */
            ck_assert_msg(seen[i][0] == '-', "round %d call %d saw \"%s\"", round, i,
                          seen[i]);
        }
        if (round == 0)
            ck_assert_msg(pid[0] != pid[1] && pid[1] != pid[2] && pid[0] != pid[2],
                          "GPU task pids %d %d %d", pid[0], pid[1], pid[2]);
        else /* a spare started meanwhile may take one of them */
            ck_assert_msg(pid[0] == pid[1] || pid[1] == pid[2] || pid[0] == pid[2],
                          "round %d pids %d %d %d", round, pid[0], pid[1], pid[2]);
        free_all(3, seen);
    }
    ck_ok(rt_shutdown());
}
END_TEST

/* CUDA_VISIBLE_DEVICES set before rt_init() restricts and renames. */
START_TEST(cuda_visible_devices_before_init_renames_gpus)
{
    setenv("CUDA_VISIBLE_DEVICES", "1,3", 1);
    rt_config c = RT_CONFIG_INIT;
    c.num_gpus = 3;
    ck_fails(rt_init_config(&c), RT_EINVAL, "CUDA_VISIBLE_DEVICES=\"1,3\" lists 2 GPUs");
    init_node(2, 2, NULL, NULL);
    rt_opts o = gpu_opts(1);
    two_tasks_see(&o, "ids=1 cvd=1 order=PCI_BUS_ID neuron=-",
                  "ids=3 cvd=3 order=PCI_BUS_ID neuron=-");
    ck_ok(rt_shutdown());

    /* UUIDs pass through; the first invalid entry ends the list. */
    setenv("CUDA_VISIBLE_DEVICES", "GPU-8d2c41a7-0b7e,MIG-1f3a/1/0,-1,2", 1);
    c.num_gpus = 3;
    ck_fails(rt_init_config(&c), RT_EINVAL, "lists 2 GPUs");
    init_node(2, 2, NULL, NULL);
    o.num_gpus = 2;
    char *seen[1];
    devices_of(1, &o, 0, seen);
    ck_assert_str_eq(seen[0], "ids=GPU-8d2c41a7-0b7e,MIG-1f3a/1/0 "
                              "cvd=GPU-8d2c41a7-0b7e,MIG-1f3a/1/0 order=PCI_BUS_ID "
                              "neuron=-");
    free_all(1, seen);
    ck_ok(rt_shutdown());

    /* Empty means no GPU; without the variable a count is logical. */
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    c.num_gpus = 1;
    ck_fails(rt_init_config(&c), RT_EINVAL, "lists 0 GPUs");
    unsetenv("CUDA_VISIBLE_DEVICES");
    c.num_gpus = 64;
    ck_ok(rt_init_config(&c));
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(bad_gpu_amounts_are_refused)
{
    rt_config c = RT_CONFIG_INIT;
    double bad_init[] = {1.5, -2, NAN, INFINITY, 257};
    for (size_t i = 0; i < sizeof bad_init / sizeof *bad_init; i++) {
        c.num_gpus = bad_init[i];
        ck_fails(rt_init_config(&c), RT_EINVAL, "num_gpus must be RT_DETECT or a whole");
    }
    init_node(2, 2, NULL, NULL);
    rt_ref ref;
    rt_opts o = gpu_opts(1.5);
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL,
             "GPU quantities above 1 must be whole numbers; 1.5 is invalid");
    o.num_gpus = -0.5;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "must not be negative");
    o.num_gpus = NAN;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "finite");
    o.num_gpus = INFINITY;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "finite");
    o.num_gpus = 0.00001;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "precision");
    o.num_gpus = 3;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE,
             "a request for 3 GPU can never be met: the runtime has 2 in all");
    /* Outside a task there are no GPU ids to give. */
    const char *const *ids;
    size_t n;
    ck_fails(rt_get_gpu_ids(&ids, &n), RT_EINVAL, "only inside a task");
    ck_fails(rt_get_accelerator_ids("fpga", &ids, &n), RT_EINVAL, "not an accelerator");
    ck_ok(rt_shutdown());
}
END_TEST

/* accelerator_type is the custom resource accelerator_type:T = 0.001. */
START_TEST(accelerator_type_selects_the_node_type)
{
    init_node(2, 1, NULL, RT_ACCEL_NVIDIA_TESLA_V100);
    rt_opts o = gpu_opts(1);
    o.accelerator_type = RT_ACCEL_NVIDIA_TESLA_V100;
    char *seen[1];
    devices_of(1, &o, 0, seen);
    ck_assert_str_eq(seen[0], "ids=0 cvd=0 order=PCI_BUS_ID neuron=-");
    free_all(1, seen);
    rt_ref ref;
    o.accelerator_type = RT_ACCEL_NVIDIA_H100;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE,
             "accelerator_type H100: no accelerator of that type here "
             "(this node has V100)");
    o.accelerator_type = "";
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "empty");
    o.accelerator_type = "bad type";
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL, "not a valid name");
    ck_ok(rt_shutdown());

    init_node(2, 1, NULL, NULL);
    o.accelerator_type = RT_ACCEL_NVIDIA_TESLA_V100;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE,
             "this node has no type");
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(neuron_cores_are_placed_like_gpus)
{
    rt_config c = RT_CONFIG_INIT;
    c.resources = "neuron_cores=1.5";
    ck_fails(rt_init_config(&c), RT_EINVAL, "neuron_cores quantities must be whole");
    init_node(2, 1, "neuron_cores=4", NULL);
    rt_opts o = RT_OPTS_INIT;
    o.resources = "neuron_cores=2";
    two_tasks_see(&o, "ids= cvd= order=PCI_BUS_ID neuron=0,1",
                  "ids= cvd= order=PCI_BUS_ID neuron=2,3");
    char *seen[1];
    rt_opts plain = RT_OPTS_INIT;
    devices_of(1, &plain, 0, seen);
    ck_assert_str_eq(seen[0], "ids= cvd= order=PCI_BUS_ID neuron=");
    free_all(1, seen);
    rt_ref ref;
    o.resources = "neuron_cores=0.5";
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL,
             "neuron_cores quantities must be whole numbers; 0.5 is invalid");
    o.resources = "neuron_cores=1";
    o.num_gpus = 1;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINVAL,
             "both GPUs and neuron_cores");
    ck_ok(rt_shutdown());
}
END_TEST

/* A 1-GPU task that waits is not starved by 0.25-GPU tasks submitted
 * after it: they wait until it has run (see rtask(7), "Queueing"). */
START_TEST(a_large_request_is_not_starved)
{
    init_node(4, 1, NULL, NULL);
    rt_opts half = gpu_opts(0.5), whole = gpu_opts(1), quarter = gpu_opts(0.25);
    uint64_t long_ms = 300, short_ms = 50;
    rt_ref a, b, c[6];
    ck_ok(rt_remote(t_span, &half, &long_ms, sizeof long_ms, &a));
    ck_ok(rt_remote(t_span, &whole, &short_ms, sizeof short_ms, &b));
    for (int i = 0; i < 6; i++)
        ck_ok(rt_remote(t_span, &quarter, &short_ms, sizeof short_ms, &c[i]));
    uint64_t *sa, *sb, *sc;
    ck_ok(rt_get(a, (void **)&sa, NULL, 60000));
    ck_ok(rt_get(b, (void **)&sb, NULL, 60000));
    ck_assert_msg(sb[0] >= sa[1], "the whole GPU was given while half was taken");
    for (int i = 0; i < 6; i++) {
        ck_ok(rt_get(c[i], (void **)&sc, NULL, 60000));
        ck_assert_msg(sc[0] >= sb[1], "quarter task %d ran before the waiting "
                                      "whole-GPU task ended", i);
        rt_free(sc);
    }
    rt_free(sa);
    rt_free(sb);
    ck_ok(rt_shutdown());
}
END_TEST

/* The amount of name on node (-1: all) in a list, or -1 when absent. */
static double amount_of(const rt_resource *list, size_t n, const char *name, int node)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].node == node && strcmp(list[i].name, name) == 0)
            return list[i].amount;
    return -1;
}

/* The totals, and what is free while a task holds 1 GPU, 1 CPU and an
 * FPGA: per node and summed, in an array the caller frees. */
START_TEST(resources_can_be_read)
{
    rt_resource *list;
    size_t n;
    ck_fails(rt_cluster_resources(&list, &n), RT_ENOTINIT, "rt_init");
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_gpus = 2;
    c.num_workers = 1;
    c.resources = "fpga=2";
    ck_ok(rt_init_config(&c));
    ck_fails(rt_cluster_resources(NULL, &n), RT_EINVAL, "NULL");
    ck_ok(rt_cluster_resources(&list, &n));
    ck_assert_uint_eq(n, 6); /* CPU, GPU, fpga: for all nodes, then node 0 */
    ck_assert_double_eq(amount_of(list, n, "CPU", -1), 2);
    ck_assert_double_eq(amount_of(list, n, "GPU", 0), 2);
    ck_assert_double_eq(amount_of(list, n, "fpga", -1), 2);
    rt_free(list);
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 1;
    o.resources = "fpga=1";
    uint64_t ms = 1000;
    rt_ref ref;
    ck_ok(rt_remote(t_sleep_ms, &o, &ms, sizeof ms, &ref));
    usleep(300000);
    ck_ok(rt_available_resources(&list, &n));
    ck_assert_double_eq(amount_of(list, n, "CPU", -1), 1);
    ck_assert_double_eq(amount_of(list, n, "GPU", 0), 1);
    ck_assert_double_eq(amount_of(list, n, "fpga", 0), 1);
    ck_assert_double_eq(amount_of(list, n, "neuron_cores", 0), -1);
    rt_free(list);
    ck_ok(rt_get(ref, NULL, NULL, 60000));
    ck_ok(rt_available_resources(&list, &n));
    ck_assert_double_eq(amount_of(list, n, "GPU", -1), 2);
    rt_free(list);
    ck_ok(rt_shutdown());
}
END_TEST

Suite *resources_suite(void)
{
    Suite *s = suite_create("resources");
    TCase *tc = tcase_create("gpus");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, two_gpu_tasks_get_gpu_0_then_1);
    tcase_add_test(tc, quarter_gpu_tasks_share_one_gpu);
    tcase_add_test(tc, fractions_pack_one_gpu_before_the_next);
    tcase_add_test(tc, gpu_tasks_do_not_reuse_workers_by_default);
    tcase_add_test(tc, cuda_visible_devices_before_init_renames_gpus);
    tcase_add_test(tc, bad_gpu_amounts_are_refused);
    tcase_add_test(tc, accelerator_type_selects_the_node_type);
    tcase_add_test(tc, neuron_cores_are_placed_like_gpus);
    tcase_add_test(tc, a_large_request_is_not_starved);
    tcase_add_test(tc, resources_can_be_read);
    suite_add_tcase(s, tc);
    return s;
}

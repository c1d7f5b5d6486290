/*
 * test_families.c - every accelerator family Ray schedules, on fake
 * machines: AMD and Intel GPUs, Google TPUs, Intel Gaudi, Huawei Ascend;
 * their variables as each task sees them, Ray's request rules, the
 * variables set before rt_init(), and RTASK_NOSET_<VARIABLE>.
 */
#include "tests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE "test/fake/"

static void init_tree(const char *tree, const char *vendor)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 1;
    c.sysfs_root = tree;
    c.gpu_vendor = vendor;
    setenv("RTASK_PCI_IDS", FAKE "pci.ids", 1);
    ck_ok(rt_init_config(&c));
}

/* What t_env sees ("RESOURCE VAR...") as a task holding gpus and
 * resources. */
static const char *seen(double gpus, const char *resources, const char *what)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = gpus;
    o.resources = resources;
    return env_seen(&o, what);
}

/* A request that rt_remote() refuses with code and a message with text. */
static void refused(double gpus, const char *resources, int code, const char *text)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = gpus;
    o.resources = resources;
    rt_ref ref;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), code, text);
}

/* Whether a task asking for gpus and resources of the accelerator type
 * runs (and returns what it should). */
static void runs_on_type(double gpus, const char *resources, const char *type)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = gpus;
    o.resources = resources;
    o.accelerator_type = type;
    ck_assert_uint_eq(call_u64(t_double, &o, &(uint64_t){7}, sizeof(uint64_t)), 14);
}

/* Without an NVIDIA GPU, AMD's are the GPUs: HIP_VISIBLE_DEVICES, the
 * type from Ray's device-id table, fractions packed as for NVIDIA's. */
START_TEST(amd_gpus_get_hip_visible_devices)
{
    init_tree(FAKE "mi300x", NULL);
    ck_assert_str_eq(seen(0.5, NULL, "GPU HIP_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES"),
                     "ids=0 HIP_VISIBLE_DEVICES=0 CUDA_VISIBLE_DEVICES=-");
    ck_assert_str_eq(seen(2, NULL, "GPU HIP_VISIBLE_DEVICES"), "ids=0,1 HIP_VISIBLE_DEVICES=0,1");
    ck_assert_str_eq(seen(0, NULL, "GPU HIP_VISIBLE_DEVICES"), "ids= HIP_VISIBLE_DEVICES=");
    runs_on_type(1, NULL, RT_ACCEL_AMD_INSTINCT_MI300X);
    ck_ok(rt_shutdown());
}
END_TEST

/* HIP_VISIBLE_DEVICES set before rt_init() restricts the GPUs offered,
 * as CUDA_VISIBLE_DEVICES does for NVIDIA's; so does ROCR_VISIBLE_DEVICES. */
START_TEST(amd_visible_devices_before_init)
{
    setenv("HIP_VISIBLE_DEVICES", "2,3", 1);
    init_tree(FAKE "mi300x", NULL);
    ck_assert_str_eq(seen(1, NULL, "GPU HIP_VISIBLE_DEVICES"), "ids=2 HIP_VISIBLE_DEVICES=2");
    refused(3, NULL, RT_EINFEASIBLE, "has 2 in all");
    ck_ok(rt_shutdown());
    unsetenv("HIP_VISIBLE_DEVICES");
    setenv("ROCR_VISIBLE_DEVICES", "1", 1);
    init_tree(FAKE "mi300x", NULL);
    ck_assert_str_eq(seen(1, NULL, "GPU HIP_VISIBLE_DEVICES"), "ids=1 HIP_VISIBLE_DEVICES=1");
    ck_ok(rt_shutdown());
    unsetenv("ROCR_VISIBLE_DEVICES");
}
END_TEST

/* HIP reads CUDA_VISIBLE_DEVICES too (as Ray applies it): set alone, it
 * restricts the AMD GPUs, and a task is told its GPUs in both variables,
 * never two that disagree; set with a different HIP_VISIBLE_DEVICES, it
 * is refused. */
START_TEST(cuda_visible_devices_limits_amd_gpus)
{
    setenv("CUDA_VISIBLE_DEVICES", "0,1,2", 1);
    init_tree(FAKE "mi300x", NULL);
    refused(4, NULL, RT_EINFEASIBLE, "has 3 in all");
    ck_assert_str_eq(seen(1, NULL, "GPU HIP_VISIBLE_DEVICES CUDA_VISIBLE_DEVICES"),
                     "ids=0 HIP_VISIBLE_DEVICES=0 CUDA_VISIBLE_DEVICES=0");
    ck_ok(rt_shutdown());
    setenv("HIP_VISIBLE_DEVICES", "1,2", 1);
    rt_config c = RT_CONFIG_INIT;
    c.sysfs_root = FAKE "mi300x";
    ck_fails(rt_init_config(&c), RT_EINVAL, "disagree");
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("CUDA_VISIBLE_DEVICES");
}
END_TEST

/* Intel GPUs: ONEAPI_DEVICE_SELECTOR names Level Zero devices, and the
 * type is Ray's "Intel-GPU-" and the product's last two words. */
START_TEST(intel_gpus_get_oneapi_device_selector)
{
    init_tree(FAKE "intel-max", NULL);
    ck_assert_str_eq(seen(2, NULL, "GPU ONEAPI_DEVICE_SELECTOR"),
                     "ids=0,1 ONEAPI_DEVICE_SELECTOR=level_zero:0,1");
    runs_on_type(1, NULL, RT_ACCEL_INTEL_MAX_1550);
    ck_ok(rt_shutdown());
    setenv("ONEAPI_DEVICE_SELECTOR", "level_zero:1", 1);
    init_tree(FAKE "intel-max", NULL);
    ck_assert_str_eq(seen(1, NULL, "GPU ONEAPI_DEVICE_SELECTOR"),
                     "ids=1 ONEAPI_DEVICE_SELECTOR=level_zero:1");
    ck_ok(rt_shutdown());
}
END_TEST

/* A node with NVIDIA and AMD GPUs: NVIDIA's are the GPUs unless
 * gpu_vendor says otherwise; an unknown vendor is an error. */
START_TEST(gpu_vendor_chooses_the_family)
{
    init_tree(FAKE "mixed", "amd");
    ck_assert_str_eq(seen(1, NULL, "GPU HIP_VISIBLE_DEVICES"), "ids=0 HIP_VISIBLE_DEVICES=0");
    ck_ok(rt_shutdown());
    init_tree(FAKE "mixed", NULL);
    ck_assert_str_eq(seen(1, NULL, "GPU CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES"),
                     "ids=0 CUDA_VISIBLE_DEVICES=0 HIP_VISIBLE_DEVICES=-");
    ck_ok(rt_shutdown());
    rt_config c = RT_CONFIG_INIT;
    c.sysfs_root = FAKE "mixed";
    c.gpu_vendor = "AMD";
    ck_fails(rt_init_config(&c), RT_EINVAL, "gpu_vendor \"AMD\" is not");
}
END_TEST

/* TPU chips: whole, in 1, 2, 4 or 8; one or two chips come with the
 * bounds variables, the whole host with none (Ray's rule). */
START_TEST(tpu_chips_and_their_bounds)
{
    init_tree(FAKE "tpu-v4", NULL);
    const char *what = "TPU TPU_VISIBLE_CHIPS TPU_CHIPS_PER_HOST_BOUNDS TPU_HOST_BOUNDS";
    ck_assert_str_eq(seen(0, "TPU=1", what),
                     "ids=0 TPU_VISIBLE_CHIPS=0 TPU_CHIPS_PER_HOST_BOUNDS=1,1,1 "
                     "TPU_HOST_BOUNDS=1,1,1");
    ck_assert_str_eq(seen(0, "TPU=2", what),
                     "ids=0,1 TPU_VISIBLE_CHIPS=0,1 TPU_CHIPS_PER_HOST_BOUNDS=1,2,1 "
                     "TPU_HOST_BOUNDS=1,1,1");
    ck_assert_str_eq(seen(0, "TPU=4", what),
                     "ids=0,1,2,3 TPU_VISIBLE_CHIPS=- TPU_CHIPS_PER_HOST_BOUNDS=- "
                     "TPU_HOST_BOUNDS=-");
    ck_assert_str_eq(seen(0, NULL, "TPU TPU_VISIBLE_CHIPS"), "ids= TPU_VISIBLE_CHIPS=");
    refused(0, "TPU=3", RT_EINVAL, "1, 2, 4 or 8 chips");
    refused(0, "TPU=0.5", RT_EINVAL, "whole numbers");
    refused(0, "TPU=8", RT_EINFEASIBLE, "has 4 in all");
    runs_on_type(0, "TPU=1", RT_ACCEL_GOOGLE_TPU_V4);
    ck_ok(rt_shutdown());
}
END_TEST

/* TPU v5e and later: chips are VFIO groups; TPU_VISIBLE_CHIPS set before
 * rt_init() offers those chips alone, by their numbers. */
START_TEST(tpu_chips_from_vfio_and_visible_chips)
{
    setenv("TPU_VISIBLE_CHIPS", "1,3", 1);
    init_tree(FAKE "tpu-v6e", NULL);
    /* The whole host: the variable as the application set it. */
    ck_assert_str_eq(seen(0, "TPU=2", "TPU TPU_VISIBLE_CHIPS"), "ids=1,3 TPU_VISIBLE_CHIPS=1,3");
    ck_assert_str_eq(seen(0, "TPU=1,accelerator_type:TPU-V6E=0.001", "TPU TPU_VISIBLE_CHIPS"),
                     "ids=1 TPU_VISIBLE_CHIPS=1");
    ck_ok(rt_shutdown());
}
END_TEST

/* Gaudi: HPU, whole devices, HABANA_VISIBLE_MODULES; a task of the other
 * families is told nothing of them. */
START_TEST(gaudi_hpus_get_habana_visible_modules)
{
    init_tree(FAKE "gaudi2", NULL);
    ck_assert_str_eq(seen(0, "HPU=2", "HPU HABANA_VISIBLE_MODULES"),
                     "ids=0,1 HABANA_VISIBLE_MODULES=0,1");
    ck_assert_str_eq(seen(0, "HPU=1", "neuron_cores"), "ids=");
    refused(0, "HPU=0.5", RT_EINVAL, "HPU quantities must be whole numbers");
    refused(1, "HPU=1", RT_EINVAL, "both GPUs and HPU");
    ck_ok(rt_shutdown());
}
END_TEST

/* Ascend: NPU, fractions allowed (as Ray), ASCEND_RT_VISIBLE_DEVICES. */
START_TEST(ascend_npus_get_ascend_rt_visible_devices)
{
    init_tree(FAKE "ascend", NULL);
    ck_assert_str_eq(seen(0, "NPU=0.5", "NPU ASCEND_RT_VISIBLE_DEVICES"),
                     "ids=0 ASCEND_RT_VISIBLE_DEVICES=0");
    ck_assert_str_eq(seen(0, "NPU=3", "NPU ASCEND_RT_VISIBLE_DEVICES"),
                     "ids=0,1,2 ASCEND_RT_VISIBLE_DEVICES=0,1,2");
    refused(0, "NPU=1.5", RT_EINVAL, "whole numbers above 1");
    ck_ok(rt_shutdown());
}
END_TEST

/* RTASK_NOSET_<VARIABLE>=1 leaves a variable as the application had it. */
START_TEST(noset_leaves_a_variable_alone)
{
    setenv("RTASK_NOSET_HIP_VISIBLE_DEVICES", "1", 1);
    setenv("RTASK_NOSET_HABANA_VISIBLE_MODULES", "1", 1);
    init_tree(FAKE "mi300x", NULL);
    ck_assert_str_eq(seen(1, NULL, "GPU HIP_VISIBLE_DEVICES"), "ids=0 HIP_VISIBLE_DEVICES=-");
    ck_ok(rt_shutdown());
    setenv("HABANA_VISIBLE_MODULES", "5", 1);
    init_tree(FAKE "gaudi2", NULL);
    ck_assert_str_eq(seen(0, "HPU=1", "HPU HABANA_VISIBLE_MODULES CUDA_VISIBLE_DEVICES"),
                     "ids=5 HABANA_VISIBLE_MODULES=5 CUDA_VISIBLE_DEVICES=");
    ck_ok(rt_shutdown());
}
END_TEST

/* A count above what the family's variable lists is refused, as for GPUs
 * (and as Ray raises): a task would be given a device the variable
 * excludes.  Within it, tasks get the listed devices. */
START_TEST(a_count_above_the_variable_is_refused)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 1;
    c.sysfs_root = FAKE "none";
    setenv("NEURON_RT_VISIBLE_CORES", "0,1,2", 1);
    c.resources = "neuron_cores=4";
    ck_fails(rt_init_config(&c), RT_EINVAL,
             "neuron_cores is 4 but NEURON_RT_VISIBLE_CORES=\"0,1,2\" lists 3");
    c.resources = "neuron_cores=3";
    ck_ok(rt_init_config(&c));
    ck_assert_str_eq(seen(0, "neuron_cores=3", "neuron_cores NEURON_RT_VISIBLE_CORES"),
                     "ids=0,1,2 NEURON_RT_VISIBLE_CORES=0,1,2");
    ck_ok(rt_shutdown());
    unsetenv("NEURON_RT_VISIBLE_CORES");
    setenv("HABANA_VISIBLE_MODULES", "0,1,2", 1);
    c.resources = "HPU=4";
    ck_fails(rt_init_config(&c), RT_EINVAL,
             "HPU is 4 but HABANA_VISIBLE_MODULES=\"0,1,2\" lists 3");
    unsetenv("HABANA_VISIBLE_MODULES");
}
END_TEST

/* A node offers one family besides GPUs: two in the configuration are an
 * error; one given there is placed like GPUs whatever was detected. */
START_TEST(one_family_besides_gpus)
{
    rt_config c = RT_CONFIG_INIT;
    c.sysfs_root = FAKE "none";
    c.resources = "TPU=4,HPU=2";
    ck_fails(rt_init_config(&c), RT_EINVAL, "not both TPU and HPU");
    c.resources = "NPU=2.5";
    ck_fails(rt_init_config(&c), RT_EINVAL, "NPU");
    c.resources = "NPU=2";
    c.num_workers = 1;
    ck_ok(rt_init_config(&c));
    ck_assert_str_eq(seen(0, "NPU=1", "NPU ASCEND_RT_VISIBLE_DEVICES"),
                     "ids=0 ASCEND_RT_VISIBLE_DEVICES=0");
    ck_ok(rt_shutdown());
}
END_TEST

Suite *families_suite(void)
{
    Suite *s = suite_create("families");
    TCase *tc = tcase_create("families");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, amd_gpus_get_hip_visible_devices);
    tcase_add_test(tc, amd_visible_devices_before_init);
    tcase_add_test(tc, cuda_visible_devices_limits_amd_gpus);
    tcase_add_test(tc, intel_gpus_get_oneapi_device_selector);
    tcase_add_test(tc, gpu_vendor_chooses_the_family);
    tcase_add_test(tc, tpu_chips_and_their_bounds);
    tcase_add_test(tc, tpu_chips_from_vfio_and_visible_chips);
    tcase_add_test(tc, gaudi_hpus_get_habana_visible_modules);
    tcase_add_test(tc, ascend_npus_get_ascend_rt_visible_devices);
    tcase_add_test(tc, noset_leaves_a_variable_alone);
    tcase_add_test(tc, a_count_above_the_variable_is_refused);
    tcase_add_test(tc, one_family_besides_gpus);
    suite_add_tcase(s, tc);
    return s;
}

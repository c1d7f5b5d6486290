/*
 * test_detect.c - device detection on fake machines (test/fake/): the
 * exact devices, types and localities each path finds, that both paths
 * agree, and what rt_init() offers from them.
 */
#include "tests.h"

#include "../lib/devices/detect.h" /* internal: detection is checked directly */
#include "../lib/devices/models.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE "test/fake/"

/* Everything detection found, one line per device. */
static const char *detected(const char *tree, const char *xml, int no_hwloc)
{
    static char text[8192];
    rt__detect_opts o = {.root = tree, .hwloc_xml = xml, .pci_ids = FAKE "pci.ids",
                         .no_hwloc = no_hwloc};
    static rt__machine m;
    rt__detect(&o, &m);
    size_t len = 0;
    text[0] = '\0';
    for (int i = 0; i < m.count; i++) {
        char line[512];
        rt__device_describe(&m.dev[i], i, line, sizeof line);
        len += (size_t)snprintf(text + len, sizeof text - len, "%s\n", line);
    }
    return text;
}

START_TEST(no_gpu)
{
    ck_assert_str_eq(detected(FAKE "none", NULL, 0), "");
}
END_TEST

START_TEST(four_v100_on_one_socket)
{
    const char *want =
        "NVIDIA GPU 0: 0000:3b:00.0 10de:1db4 \"Tesla V100-PCIE-16GB\" type V100 numa 0 cpus 0-19\n"
        "NVIDIA GPU 1: 0000:5e:00.0 10de:1db4 \"Tesla V100-PCIE-16GB\" type V100 numa 0 cpus 0-19\n"
        "NVIDIA GPU 2: 0000:86:00.0 10de:1db4 \"Tesla V100-PCIE-16GB\" type V100 numa 0 cpus 0-19\n"
        "NVIDIA GPU 3: 0000:af:00.0 10de:1db4 \"Tesla V100-PCIE-16GB\" type V100 numa 0 cpus 0-19\n";
    ck_assert_str_eq(detected(FAKE "v100x4", NULL, 0), want);
    /* hwloc, fed the same machine as an XML topology, agrees. */
    ck_assert_str_eq(detected(FAKE "v100x4", FAKE "v100x4.xml", 0), want);
}
END_TEST

START_TEST(eight_h100_over_two_numa_nodes)
{
    const char *text = detected(FAKE "h100x8", NULL, 0);
    char want[2048] = "";
    const char *bus[] = {"18", "2a", "3a", "5d", "9b", "ab", "ba", "db"};
    for (int i = 0; i < 8; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want),
                 "NVIDIA GPU %d: 0000:%s:00.0 10de:2330 \"GH100 [H100 SXM5 80GB]\" type H100 "
                 "numa %d cpus %s\n", i, bus[i], i / 4,
                 i < 4 ? "0-47,96-143" : "48-95,144-191");
    /* The four NVSwitches share NVIDIA's vendor id and are not GPUs. */
    ck_assert_str_eq(text, want);
}
END_TEST

/* A display controller is a GPU only when it can compute: the Xeon
 * machine's BMC VGA (an ATI ES1000, on the radeon driver) beside three
 * M2070s is not an AMD GPU, and a machine with only display controllers
 * (no amdgpu, no i915, no KFD node) has no GPU.  AMD GPUs count through
 * their driver (mi300x) or the KFD topology alone (mixed). */
START_TEST(display_controllers_are_not_gpus)
{
    const char *text = detected(FAKE "es1000", NULL, 0);
    ck_assert_msg(strstr(text, "AMD") == NULL, "%s", text);
    ck_assert_int_eq((int)(strstr(text, "NVIDIA GPU 2: 0000:85:00.0") != NULL), 1);
    ck_assert_str_eq(detected(FAKE "bmc-vga", NULL, 0), "");
}
END_TEST

START_TEST(nvidia_and_amd)
{
    ck_assert_str_eq(detected(FAKE "mixed", NULL, 0),
                     "NVIDIA GPU 0: 0000:17:00.0 10de:20b2 \"NVIDIA A100-SXM4-80GB\" type A100 "
                     "numa 0 cpus 0-31\n"
                     "NVIDIA GPU 1: 0000:31:00.0 10de:20b2 \"NVIDIA A100-SXM4-80GB\" type A100 "
                     "numa 0 cpus 0-31\n"
                     "AMD GPU 2: 0000:c1:00.0 1002:740f \"Aldebaran/MI200 [Instinct "
                     "MI210]\" type AMD-Instinct-MI210 numa 1 cpus 32-63\n"
                     "AMD GPU 3: 0000:e1:00.0 1002:740f \"Aldebaran/MI200 [Instinct "
                     "MI210]\" type AMD-Instinct-MI210 numa 1 cpus 32-63\n");
}
END_TEST

START_TEST(neuron_devices)
{
    ck_assert_str_eq(detected(FAKE "neuron", NULL, 0),
                     "AWS Neuron 0: neuron0 1d0f:0000 \"Trainium\" type aws-neuron-core "
                     "numa - cpus - cores 2\n"
                     "AWS Neuron 1: neuron1 1d0f:0000 \"Trainium\" type aws-neuron-core "
                     "numa - cpus - cores 2\n");
}
END_TEST

/* Garbage files: devices skipped, never made up; bad locality dropped. */
START_TEST(broken_entries)
{
    ck_assert_str_eq(detected(FAKE "broken", NULL, 0),
                     "NVIDIA GPU 0: 0000:03:00.0 10de:1db4 \"GV100GL [Tesla V100 PCIe 16GB]\" "
                     "type V100 numa - cpus -\n");
    ck_assert_str_eq(detected(FAKE "does-not-exist", NULL, 0), ""); /* and refused */
}
END_TEST

/* NVML, where the driver installed it, names the GPUs exactly and says
 * their UUID, memory and compute capability, and each MIG instance's
 * memory. */
START_TEST(nvml_completes_what_it_knows)
{
    use_fake_nvml(NULL);
    static rt__machine m;
    rt__detect_opts o = {.root = FAKE "h100x8", .pci_ids = FAKE "pci.ids", .no_hwloc = 1};
    ck_ok(rt__detect(&o, &m));
    leave_fake_nvml();
    ck_assert_str_eq(m.source, "sysfs+NVML");
    ck_assert_int_eq(m.count, 8);
    ck_assert_str_eq(m.dev[1].model, "NVIDIA H100 80GB HBM3");
    ck_assert_str_eq(m.dev[1].type, "H100");
    ck_assert_str_eq(m.dev[1].uuid, "GPU-b0f1e2d3-0000-4000-8000-000000000001");
    ck_assert_uint_eq(m.dev[1].memory_mib, 81559);
    ck_assert_int_eq(m.dev[1].cc_major, 9);
    ck_assert_str_eq(m.dev[7].model, "NVIDIA H100 80GB HBM3");
    ck_assert_int_eq(m.dev[0].migs, 0);
    ck_assert_int_eq(m.dev[1].migs, 2); /* in MIG mode: slots 0 and 2 */
    ck_assert_str_eq(m.dev[1].mig_uuid[1], "MIG-a1b2c3d4-0000-4000-8000-000000000102");
    ck_assert_uint_eq(m.dev[1].mig_memory_mib[1], 9984);
    ck_assert_str_eq(m.dev[3].unhealthy, "");
    setenv("RTASK_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    ck_ok(rt__detect(&o, &m)); /* no NVML: detection stands as it was */
    unsetenv("RTASK_NVML_LIBRARY");
    ck_assert_str_eq(m.source, "sysfs");
    ck_assert_str_eq(m.dev[1].model, "GH100 [H100 SXM5 80GB]");
}
END_TEST

static rt__machine nvml_machine;
static void detect_h100x8(void)
{
    rt__detect_opts o = {.root = FAKE "h100x8", .pci_ids = FAKE "pci.ids", .no_hwloc = 1};
    ck_ok(rt__detect(&o, &nvml_machine));
}

/* What detection says with the fake NVML in a scenario: its warnings,
 * and the machine in nvml_machine. */
static const char *detect_with(const char *scenario)
{
    use_fake_nvml(scenario);
    const char *out = capture_output(detect_h100x8);
    leave_fake_nvml();
    return out;
}

static int nvidia_gpus(void)
{
    return rt__machine_instances(&nvml_machine, RT__FAM_NVIDIA);
}

/* What NVML knows wins over sysfs, with a warning for each GPU it drops:
 * in a container given 2 of the 8 GPUs, sysfs still shows 8; a GPU whose
 * device file is missing is not the container's either; a GPU in MIG
 * mode with no instance has nothing CUDA can run on. */
START_TEST(gpus_nvml_cannot_use_are_not_offered)
{
    const char *out = detect_with("count=2");
    ck_assert_int_eq(nvidia_gpus(), 2);
    ck_assert_msg(strstr(out, "NVIDIA GPU at 0000:3a:00.0 is not offered: NVML does not list "
                              "it"), "%s", out);
    out = detect_with("nodev=5");
    ck_assert_int_eq(nvidia_gpus(), 7);
    ck_assert_msg(strstr(out, "at 0000:ab:00.0 is not offered: its device file "
                              FAKE "h100x8/dev/nvidia205 is missing"), "%s", out);
    out = detect_with("nodev=all"); /* none: none offered, as the warnings say */
    ck_assert_int_eq(nvidia_gpus(), 0);
    ck_assert_msg(strstr(out, "at 0000:18:00.0 is not offered: its device file "
                              FAKE "h100x8/dev/nvidia200 is missing"), "%s", out);
    out = detect_with("empty-mig");
    ck_assert_int_eq(nvidia_gpus(), 7);
    ck_assert_msg(strstr(out, "at 0000:2a:00.0 is not offered: it is in MIG mode with no "
                              "instance"), "%s", out);
}
END_TEST

/* Older drivers name MIG instances MIG-GPU-<uuid>/<gi>/<ci> (49 bytes and
 * more): they are read whole, with a buffer of NVML's documented 96. */
START_TEST(long_mig_uuids_are_read)
{
    detect_with("old-mig-uuids");
    ck_assert_int_eq(nvml_machine.dev[1].migs, 2);
    ck_assert_str_eq(nvml_machine.dev[1].mig_uuid[0],
                     "MIG-GPU-b0f1e2d3-0000-4000-8000-000000000001/1/0");
}
END_TEST

/* Failures are said: NVML that cannot start (a driver upgraded, not yet
 * reloaded) leaves detection as it was, with a warning; a GPU that NVML
 * says is lost is offered unhealthy, with a warning, and no task gets it. */
START_TEST(nvml_failures_are_said)
{
    const char *out = detect_with("init-fails");
    ck_assert_msg(strstr(out, "nvmlInit_v2 failed: RM has detected an NVML/RM version "
                              "mismatch (the driver and its library differ"), "%s", out);
    ck_assert_str_eq(nvml_machine.source, "sysfs");
    ck_assert_int_eq(nvidia_gpus(), 8);
    out = detect_with("lost=3");
    ck_assert_msg(strstr(out, "NVIDIA GPU at 0000:5d:00.0: NVML: GPU is lost; it is "
                              "unhealthy"), "%s", out);
    ck_assert_str_eq(nvml_machine.dev[3].unhealthy, "NVML: GPU is lost");
}
END_TEST

#ifdef RT_HAVE_HWLOC
/* Topologies exported on real machines name their GPUs in hwloc's OS
 * devices (CUDA, NVML): the model and type come from there, with no PCI
 * id database at all. */
START_TEST(models_from_os_devices)
{
    static rt__machine m;
    rt__detect_opts o = {.root = "/", .hwloc_xml = FAKE "dgx2.xml", .pci_ids = "/dev/null"};
    ck_ok(rt__detect(&o, &m));
    ck_assert_int_eq(m.count, 4);
    ck_assert_str_eq(m.dev[0].model, "Tesla V100-SXM3-32GB-H");
    ck_assert_str_eq(m.dev[0].type, "V100");
    ck_assert_str_eq(m.dev[0].uuid, "GPU-8d2c0000-1111-2222-3333-444455556666");
    o.hwloc_xml = FAKE "power8.xml";
    ck_ok(rt__detect(&o, &m));
    ck_assert_str_eq(m.dev[3].model, "Tesla P100-SXM2-16GB");
    ck_assert_str_eq(m.dev[3].type, "P100");
}
END_TEST
#endif

/* A topology file is another machine: when it cannot be read, detection
 * fails, naming it, rather than report this machine's devices as its. */
START_TEST(unreadable_topology_fails)
{
    static rt__machine m;
    rt__detect_opts o = {.root = "/", .hwloc_xml = FAKE "not-a-file.xml"};
    ck_assert_int_eq(rt__detect(&o, &m), RT_EINVAL);
    ck_assert_ptr_nonnull(strstr(rt_last_error(), "not-a-file.xml"));
    char path[128];
    snprintf(path, sizeof path, "/tmp/rtask-v3-%d.xml", (int)getpid());
    FILE *f = fopen(path, "w");
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM "
          "\"hwloc3.dtd\">\n<topology version=\"3.0\">\n</topology>\n", f);
    fclose(f);
    o.hwloc_xml = path;
    int rc = rt__detect(&o, &m);
    unlink(path);
    ck_assert_int_eq(rc, RT_EINVAL);
#ifdef RT_HAVE_HWLOC
    ck_assert_ptr_nonnull(strstr(rt_last_error(), "written by hwloc 3.x"));
#endif
    setenv("RTASK_HWLOC_XML", FAKE "not-a-file.xml", 1);
    ck_assert_int_eq(rt_init(RT_DETECT), RT_EINVAL);
    unsetenv("RTASK_HWLOC_XML");
    ck_assert_ptr_nonnull(strstr(rt_last_error(), "not-a-file.xml"));
}
END_TEST

/* On this machine, whatever it has, hwloc and sysfs find the same. */
START_TEST(both_paths_agree_here)
{
    char *with_hwloc = strdup(detected("/", NULL, 0));
    ck_assert_str_eq(with_hwloc, detected("/", NULL, 1));
    free(with_hwloc);
}
END_TEST

/* Ray's rule and its tests (python/ray/tests/accelerators/
 * test_nvidia_gpu.py), and the same rule on pci.ids names. */
START_TEST(model_names_give_types)
{
    const char *cases[][2] = {
        {"NVIDIA B200", "B200"},               {"NVIDIA GeForce RTX 5090", "GeForce-RTX-5090"},
        {"NVIDIA GeForce RTX 4090", "GeForce-RTX-4090"},
        {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000"},
        {"Ampere A100-SXM4-40GB MIG 1g.5gb", "A100"}, {"NVIDIA", ""},
        {"AD102 [GeForce RTX 4090]", "GeForce-RTX-4090"},
        {"Tesla V100-SXM2-16GB", "V100"},      {"NVIDIA A100-SXM4-80GB", "A100"},
        {"NVIDIA H100 80GB HBM3", "H100"},     {"Tesla P100-SXM2-16GB", "P100"},
        {"Tesla T4", "T4"},                    {"NVIDIA A10G", "A10G"},
        {"NVIDIA L4", "L4"},                   {"NVIDIA L40S", "L40S"},
        {"NVIDIA H200", "H200"},               {"Tesla K80", "K80"},
        {"Tesla P4", "P4"},                    {"NVIDIA H20", "H20"},
        {"GV100GL [Tesla V100 SXM2 16GB]", "V100"}, {"GH100 [H100 SXM5 80GB]", "H100"},
        {"TU104GL [Tesla T4]", "T4"},          {"GA102GL [A10G]", "A10G"},
        {"AD104GL [L4]", "L4"},                {"GA100 [A100 SXM4 40GB]", "A100"},
        {"GH100", ""},                         {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char type[32];
        rt__accelerator_type(cases[i][0], type, sizeof type);
        ck_assert_msg(strcmp(type, cases[i][1]) == 0, "\"%s\" gave \"%s\", want \"%s\"",
                      cases[i][0], type, cases[i][1]);
    }
}
END_TEST

/* ---- what rt_init() offers -------------------------------------------------- */

static void init_on(const char *tree, double gpus, int bind, const char *vendor)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 1;
    c.num_gpus = gpus;
    c.sysfs_root = tree;
    c.bind_cpus = bind;
    c.gpu_vendor = vendor;
    setenv("RTASK_PCI_IDS", FAKE "pci.ids", 1);
    ck_ok(rt_init_config(&c));
}

static char *run_str(rt_fn fn, double gpus, const char *accel)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = gpus;
    o.accelerator_type = accel;
    rt_ref ref;
    char *s;
    ck_ok(rt_remote(fn, &o, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&s, NULL, 60000));
    return s;
}

START_TEST(rt_init_detects_gpus_and_type)
{
    init_on(FAKE "v100x4", RT_DETECT, RT_DEFAULT, NULL);
    char *s = run_str(t_devices, 4, RT_ACCEL_NVIDIA_TESLA_V100);
    ck_assert_str_eq(s, "ids=0,1,2,3 cvd=0,1,2,3 order=PCI_BUS_ID neuron=-");
    rt_free(s);
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 5;
    rt_ref ref;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE, "has 4 in all");
    o.num_gpus = 1;
    o.accelerator_type = RT_ACCEL_NVIDIA_H100;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE, "this node has V100");
    ck_ok(rt_shutdown());

    init_on(FAKE "none", RT_DETECT, RT_DEFAULT, NULL);
    o.accelerator_type = NULL;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE, "has 0 in all");
    ck_ok(rt_shutdown());

    init_on(FAKE "mixed", RT_DETECT, RT_DEFAULT, NULL);
    o.num_gpus = 3;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE, "has 2 in all");
    ck_ok(rt_shutdown());
    init_on(FAKE "mixed", RT_DETECT, RT_DEFAULT, "amd"); /* AMD's instead */
    o.num_gpus = 2;
    ck_ok(rt_remote(t_echo, &o, NULL, 0, &ref));
    ck_ok(rt_get(ref, NULL, NULL, 60000));
    o.num_gpus = 3;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE, "has 2 in all");
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(cuda_visible_devices_restricts_detected_gpus)
{
    setenv("CUDA_VISIBLE_DEVICES", "1,3", 1);
    init_on(FAKE "h100x8", RT_DETECT, RT_DEFAULT, NULL);
    char *s = run_str(t_devices, 2, NULL);
    ck_assert_str_eq(s, "ids=1,3 cvd=1,3 order=PCI_BUS_ID neuron=-");
    rt_free(s);
    ck_ok(rt_shutdown());
    setenv("CUDA_VISIBLE_DEVICES", "MIG-5d3b4a7e-91c2-4f6e-b1a8-2e7c9d0f3a11", 1);
    init_on(FAKE "a100-mig", RT_DETECT, RT_DEFAULT, NULL);
    s = run_str(t_devices, 1, RT_ACCEL_NVIDIA_A100);
    ck_assert_str_eq(s, "ids=MIG-5d3b4a7e-91c2-4f6e-b1a8-2e7c9d0f3a11 "
                        "cvd=MIG-5d3b4a7e-91c2-4f6e-b1a8-2e7c9d0f3a11 "
                        "order=PCI_BUS_ID neuron=-");
    rt_free(s);
    ck_ok(rt_shutdown());
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    init_on(FAKE "v100x4", RT_DETECT, RT_DEFAULT, NULL);
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 1;
    rt_ref ref;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE, "has 0 in all");
    ck_ok(rt_shutdown());
}
END_TEST

static void init_v100x4(void)
{
    init_on(FAKE "v100x4", RT_DETECT, RT_DEFAULT, NULL);
}

static void init_h100x8(void)
{
    init_on(FAKE "h100x8", RT_DETECT, RT_DEFAULT, NULL);
}

/* The GPUs a task may hold, by asking for one more: "has N in all". */
static void ck_offers(int n)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = n + 1;
    rt_ref ref;
    char want[32];
    snprintf(want, sizeof want, "has %d in all", n);
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE, want);
}

/* As CUDA reads it: with 4 GPUs detected, "1,7,2" stops at 7, which does
 * not exist, and "2,2" at the repeat, each with a warning that says so. */
START_TEST(cuda_visible_devices_ends_at_an_invalid_entry)
{
    setenv("CUDA_VISIBLE_DEVICES", "1,7,2", 1);
    const char *out = capture_output(init_v100x4);
    ck_assert_msg(strstr(out, "\"7\" names no GPU here") != NULL, "warning: %s", out);
    char *s = run_str(t_devices, 1, NULL);
    ck_assert_str_eq(s, "ids=1 cvd=1 order=PCI_BUS_ID neuron=-");
    rt_free(s);
    ck_offers(1);
    ck_ok(rt_shutdown());
    setenv("CUDA_VISIBLE_DEVICES", "2,2", 1);
    out = capture_output(init_v100x4);
    ck_assert_msg(strstr(out, "\"2\" is repeated") != NULL, "warning: %s", out);
    ck_offers(1);
    ck_ok(rt_shutdown());
    unsetenv("CUDA_VISIBLE_DEVICES");
}
END_TEST

/* Zero GPUs is never silent when the user asked for some: a sysfs root
 * that is not there (or a file) is refused, and GPUs listed by UUID on a
 * machine with none are warned about. */
static void init_none(void)
{
    init_on(FAKE "none", RT_DETECT, RT_DEFAULT, NULL);
}

START_TEST(zero_gpus_found_is_said)
{
    rt_config c = RT_CONFIG_INIT;
    c.sysfs_root = "/nonexistent";
    ck_fails(rt_init_config(&c), RT_EINVAL, "the sysfs root /nonexistent");
    c.sysfs_root = FAKE "pci.ids"; /* a file */
    ck_fails(rt_init_config(&c), RT_EINVAL, "is not a directory");
    setenv("RTASK_SYSFS_ROOT", "/nonexistent", 1);
    ck_fails(rt_init(0), RT_EINVAL, "RTASK_SYSFS_ROOT");
    unsetenv("RTASK_SYSFS_ROOT");
    const char *out;
    setenv("CUDA_VISIBLE_DEVICES", "GPU-a,GPU-b", 1);
    out = capture_output(init_none);
    unsetenv("CUDA_VISIBLE_DEVICES");
    ck_assert_msg(strstr(out, "CUDA_VISIBLE_DEVICES=\"GPU-a,GPU-b\" lists 2 GPUs but 0 "
                              "were detected here, so 0 are offered") != NULL,
                  "warning: %s", out);
    ck_offers(0);
    ck_ok(rt_shutdown());
    /* One valid entry before a bad one: the message counts in words. */
    setenv("CUDA_VISIBLE_DEVICES", "1,x", 1);
    out = capture_output(init_v100x4);
    unsetenv("CUDA_VISIBLE_DEVICES");
    ck_assert_msg(strstr(out, "so only the entry before it counts") != NULL, "warning: %s",
                  out);
    ck_ok(rt_shutdown());
}
END_TEST

/* A GPU NVML says is lost is offered unhealthy: rt_unhealthy_gpus() names
 * it, it is not available, and a request that needs it can never be met. */
START_TEST(a_lost_gpu_is_offered_unhealthy)
{
    use_fake_nvml("lost=3");
    init_on(FAKE "h100x8", RT_DETECT, RT_DEFAULT, NULL);
    leave_fake_nvml();
    ck_unhealthy(1, 0, "3", "0000:5d:00.0", "NVML: GPU is lost");
    ck_assert(available("GPU") == 8); /* 7 whole GPUs and 2 instances, less GPU 3 */
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 9;
    rt_ref ref;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE, "that many healthy GPUs");
    o.num_gpus = 8;
    ck_ok(rt_remote(t_echo, &o, NULL, 0, &ref));
    ck_ok(rt_get(ref, NULL, NULL, 60000));
    ck_ok(rt_shutdown());
}
END_TEST

/* A MIG instance's memory is NVML's figure for it: a gpu_memory request
 * lands there, as the fraction it is of the instance. */
START_TEST(gpu_memory_lands_on_mig_instances)
{
    use_fake_nvml(NULL);
    init_on(FAKE "h100x8", RT_DETECT, RT_DEFAULT, NULL);
    leave_fake_nvml();
    rt_opts o = RT_OPTS_INIT;
    o.gpu_memory = 9000ull << 20; /* fits a 1g.10gb instance, 0.9 of it */
    o.num_cpus = 0;
    rt_ref ref[8];
    for (int i = 0; i < 8; i++)
        ck_ok(rt_remote(t_devices, &o, &(uint64_t){300}, sizeof(uint64_t), &ref[i]));
    int on_mig = 0;
    for (int i = 0; i < 8; i++) {
        char *s;
        ck_ok(rt_get(ref[i], (void **)&s, NULL, 60000));
        on_mig += strstr(s, "ids=MIG-") != NULL;
        rt_free(s);
    }
    ck_assert_int_eq(on_mig, 2); /* best fit: the instances fill first */
    ck_ok(rt_shutdown());
}
END_TEST

/* A GPU in MIG mode offers its instances as the GPUs, by UUID, as
 * `nvidia-smi -L` lists them; CUDA_VISIBLE_DEVICES may name them. */
START_TEST(mig_instances_are_the_gpus)
{
    use_fake_nvml(NULL);
    init_on(FAKE "h100x8", RT_DETECT, RT_DEFAULT, NULL);
    ck_offers(9); /* 7 whole GPUs and 2 instances of the eighth */
    char *s = run_str(t_devices, 3, NULL);
    ck_assert_str_eq(s, "ids=0,MIG-a1b2c3d4-0000-4000-8000-000000000100,"
                        "MIG-a1b2c3d4-0000-4000-8000-000000000102 "
                        "cvd=0,MIG-a1b2c3d4-0000-4000-8000-000000000100,"
                        "MIG-a1b2c3d4-0000-4000-8000-000000000102 "
                        "order=PCI_BUS_ID neuron=-");
    rt_free(s);
    ck_ok(rt_shutdown());
    setenv("CUDA_VISIBLE_DEVICES", "MIG-a1b2c3d4-0000-4000-8000-000000000102,MIG-ffff", 1);
    const char *out = capture_output(init_h100x8);
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("RTASK_NVML_LIBRARY");
    ck_assert_msg(strstr(out, "\"MIG-ffff\" names no GPU here") != NULL, "warning: %s", out);
    ck_offers(1);
    ck_ok(rt_shutdown());
}
END_TEST

/* Beyond Ray: a node with 2 x A100 and 2 x V100 offers both types, and a
 * task of a type gets GPUs of that type alone. */
START_TEST(several_gpu_types_in_one_node)
{
    init_on(FAKE "a100v100", RT_DETECT, RT_DEFAULT, NULL);
    char *s = run_str(t_devices, 2, RT_ACCEL_NVIDIA_TESLA_V100);
    ck_assert_str_eq(s, "ids=2,3 cvd=2,3 order=PCI_BUS_ID neuron=-");
    rt_free(s);
    s = run_str(t_devices, 0.5, RT_ACCEL_NVIDIA_A100);
    ck_assert_str_eq(s, "ids=0 cvd=0 order=PCI_BUS_ID neuron=-");
    rt_free(s);
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 3;
    o.accelerator_type = RT_ACCEL_NVIDIA_TESLA_V100;
    rt_ref ref;
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE,
             "no node has that many healthy GPUs of that type");
    s = run_str(t_devices, 4, NULL);
    ck_assert_str_eq(s, "ids=0,1,2,3 cvd=0,1,2,3 order=PCI_BUS_ID neuron=-");
    rt_free(s);
    ck_ok(rt_shutdown());
}
END_TEST

/* The A100 of a100-mig is local to CPU 1: a worker that holds it is bound
 * there; without binding, or without a GPU, it has every CPU. */
START_TEST(gpu_workers_are_bound_to_local_cpus)
{
    init_on(FAKE "a100-mig", RT_DETECT, RT_DEFAULT, NULL);
    /* A copy, freed before the next rt_init(): the fork server would
     * inherit the block, and valgrind would call it lost there. */
    char *got = run_str(t_affinity, 0, NULL), all[256];
    snprintf(all, sizeof all, "%s", got);
    rt_free(got);
    char *bound = run_str(t_affinity, 1, NULL);
    ck_assert_str_eq(bound, "1");
    ck_assert_str_ne(all, "1");
    rt_free(bound);
    ck_ok(rt_shutdown());
    init_on(FAKE "a100-mig", RT_DETECT, 0, NULL);
    bound = run_str(t_affinity, 1, NULL);
    ck_assert_str_eq(bound, all);
    rt_free(bound);
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(neuron_cores_are_detected)
{
    init_on(FAKE "neuron", RT_DETECT, RT_DEFAULT, NULL);
    rt_opts o = RT_OPTS_INIT;
    o.resources = "neuron_cores=4";
    o.accelerator_type = RT_ACCEL_AWS_NEURON_CORE;
    rt_ref ref;
    char *s;
    ck_ok(rt_remote(t_devices, &o, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&s, NULL, 60000));
    ck_assert_str_eq(s, "ids= cvd= order=PCI_BUS_ID neuron=0,1,2,3");
    rt_free(s);
    o.resources = "neuron_cores=5";
    ck_fails(rt_remote(t_echo, &o, NULL, 0, &ref), RT_EINFEASIBLE,
             "5 neuron_cores can never be met: the runtime has 4 in all");
    ck_ok(rt_shutdown());
}
END_TEST

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* A device line shorter than "\tdddd  name" is not an entry: its name is
 * never read from what a longer line before it left in the buffer. */
START_TEST(a_short_pci_ids_line_names_nothing)
{
    char root[128], dir[256], path[300], db[160];
    temp_path(root, sizeof root, "shortids");
    snprintf(dir, sizeof dir, "mkdir -p %s/sys/bus/pci/devices/0000:01:00.0", root);
    ck_assert_int_eq(system(dir), 0);
    snprintf(dir, sizeof dir, "%s/sys/bus/pci/devices/0000:01:00.0", root);
    const char *files[][2] = {{"vendor", "0x10de\n"}, {"device", "0x0020\n"},
                              {"class", "0x030200\n"}};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
        write_file(path, files[i][1]);
    }
    snprintf(db, sizeof db, "%s/pci.ids", root);
    write_file(db, "10de  NVIDIA Corporation\n"
                   "\t1db4  GV100GL [Tesla V100 PCIe 16GB] Card C\n"
                   "\t20\n");
    rt__detect_opts o = {.root = root, .pci_ids = db, .no_hwloc = 1};
    static rt__machine m;
    rt__detect(&o, &m);
    ck_assert_int_eq(m.count, 1);
    ck_assert_str_eq(m.dev[0].model, "");
    ck_assert_str_eq(m.dev[0].type, "");
    snprintf(path, sizeof path, "rm -rf %s", root);
    ck_assert_int_eq(system(path), 0);
}
END_TEST

Suite *detect_suite(void)
{
    Suite *s = suite_create("detect");
    TCase *tc = tcase_create("fake machines");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, no_gpu);
    tcase_add_test(tc, four_v100_on_one_socket);
    tcase_add_test(tc, eight_h100_over_two_numa_nodes);
    tcase_add_test(tc, nvidia_and_amd);
    tcase_add_test(tc, neuron_devices);
    tcase_add_test(tc, broken_entries);
    tcase_add_test(tc, unreadable_topology_fails);
    tcase_add_test(tc, nvml_completes_what_it_knows);
    tcase_add_test(tc, gpus_nvml_cannot_use_are_not_offered);
    tcase_add_test(tc, long_mig_uuids_are_read);
    tcase_add_test(tc, nvml_failures_are_said);
    tcase_add_test(tc, a_lost_gpu_is_offered_unhealthy);
    tcase_add_test(tc, gpu_memory_lands_on_mig_instances);
    tcase_add_test(tc, mig_instances_are_the_gpus);
    tcase_add_test(tc, several_gpu_types_in_one_node);
#ifdef RT_HAVE_HWLOC
    tcase_add_test(tc, models_from_os_devices);
#endif
    tcase_add_test(tc, both_paths_agree_here);
    tcase_add_test(tc, model_names_give_types);
    tcase_add_test(tc, rt_init_detects_gpus_and_type);
    tcase_add_test(tc, cuda_visible_devices_restricts_detected_gpus);
    tcase_add_test(tc, cuda_visible_devices_ends_at_an_invalid_entry);
    tcase_add_test(tc, zero_gpus_found_is_said);
    tcase_add_test(tc, display_controllers_are_not_gpus);
    tcase_add_test(tc, gpu_workers_are_bound_to_local_cpus);
    tcase_add_test(tc, neuron_cores_are_detected);
    tcase_add_test(tc, a_short_pci_ids_line_names_nothing);
    suite_add_tcase(s, tc);
    return s;
}

/*
 * test_gpu.c - rtask on the machine's real NVIDIA GPUs (make check-gpu).
 *
 * Tasks call CUDA's driver API (libcuda.so.1, through dlopen, so the
 * suite builds where no CUDA is installed) to see what a task really
 * sees: which devices, how much memory, whether an allocation fits.
 * The runtime detects the machine itself ("/", hwloc, NVML) and watches
 * it through the real NVML.  Where there is no NVIDIA GPU the suite says
 * so and runs nothing; CI has none.
 */
#include "../tests.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The few driver-API entry points the tasks use (cuda.h's ABI: CUresult
 * is an int, CUdevice an int, CUdeviceptr 64 bits). */
typedef struct cuda_api {
    int (*init)(unsigned flags);
    int (*device_count)(int *n);
    int (*device_get)(int *dev, int ordinal);
    int (*device_name)(char *name, int len, int dev);
    int (*device_total_mem)(size_t *bytes, int dev);
    int (*primary_ctx_retain)(void **ctx, int dev);
    int (*ctx_set_current)(void *ctx);
    int (*mem_get_info)(size_t *free_bytes, size_t *total);
    int (*mem_alloc)(unsigned long long *ptr, size_t bytes);
    int (*mem_free)(unsigned long long ptr);
} cuda_api;

#define CUDA_ERROR_NO_DEVICE 100

/* Load the driver API; a short reason in why when it cannot be had. */
static int cuda_load(cuda_api *api, const char **why)
{
    void *dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        *why = "libcuda.so.1 cannot be loaded";
        return -1;
    }
    struct {
        void **slot;
        const char *name;
    } syms[] = {
        {(void **)&api->init, "cuInit"},
        {(void **)&api->device_count, "cuDeviceGetCount"},
        {(void **)&api->device_get, "cuDeviceGet"},
        {(void **)&api->device_name, "cuDeviceGetName"},
        {(void **)&api->device_total_mem, "cuDeviceTotalMem_v2"},
        {(void **)&api->primary_ctx_retain, "cuDevicePrimaryCtxRetain"},
        {(void **)&api->ctx_set_current, "cuCtxSetCurrent"},
        {(void **)&api->mem_get_info, "cuMemGetInfo_v2"},
        {(void **)&api->mem_alloc, "cuMemAlloc_v2"},
        {(void **)&api->mem_free, "cuMemFree_v2"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].slot = dlsym(dl, syms[i].name))) {
            *why = "libcuda.so.1 lacks a driver-API call";
            return -1;
        }
    return 0;
}

/* What a probe task is asked: allocate alloc_bytes on its first device,
 * hold them hold_ms, and free them unless keep. */
typedef struct probe_ask {
    uint64_t alloc_bytes;
    uint64_t hold_ms;
    uint64_t keep;
} probe_ask;

/* What it saw.  init_rc: cuInit's answer (-1: no driver API). */
typedef struct probe_seen {
    int32_t init_rc;
    int32_t devices;
    int32_t gpu_ids;  /* rt_get_gpu_ids()' count */
    int32_t alloc_rc; /* cuMemAlloc's answer (0 when nothing was asked) */
    uint64_t device_total; /* cuDeviceTotalMem of its first device */
    uint64_t context_total; /* cuMemGetInfo's total, in a context */
    char name[96];
} probe_seen;

int t_cuda_probe(const void *arg, size_t len, rt_result *r);

static void probe_memory(const cuda_api *api, int dev, const probe_ask *ask, probe_seen *s)
{
    void *ctx;
    size_t free_bytes, total;
    if (api->primary_ctx_retain(&ctx, dev) || api->ctx_set_current(ctx) ||
        api->mem_get_info(&free_bytes, &total)) {
        s->alloc_rc = -1;
        return;
    }
    s->context_total = total;
    if (!ask->alloc_bytes)
        return;
    unsigned long long ptr;
    s->alloc_rc = api->mem_alloc(&ptr, ask->alloc_bytes);
    if (s->alloc_rc)
        return;
    usleep((useconds_t)(ask->hold_ms * 1000));
    if (!ask->keep)
        api->mem_free(ptr);
}

int t_cuda_probe(const void *arg, size_t len, rt_result *r)
{
    probe_ask ask = {0};
    if (len == sizeof ask)
        memcpy(&ask, arg, sizeof ask);
    probe_seen s = {.init_rc = -1};
    const char *const *ids;
    size_t n_ids = 0;
    if (rt_get_gpu_ids(&ids, &n_ids) == 0)
        s.gpu_ids = (int32_t)n_ids;
    cuda_api api;
    const char *why;
    if (cuda_load(&api, &why) == 0) {
        s.init_rc = api.init(0);
        int n = 0, dev;
        if (s.init_rc == 0 && api.device_count(&n) == 0)
            s.devices = n;
        if (s.devices > 0 && api.device_get(&dev, 0) == 0) {
            size_t total = 0;
            api.device_name(s.name, sizeof s.name, dev);
            api.device_total_mem(&total, dev);
            s.device_total = total;
            probe_memory(&api, dev, &ask, &s);
        }
    }
    return rt_result_set(r, &s, sizeof s);
}

/* Run a probe with opts and ask; what it saw. */
static probe_seen probe(const rt_opts *opts, const probe_ask *ask)
{
    rt_ref ref;
    probe_seen *s, out;
    size_t n;
    ck_ok(rt_remote(t_cuda_probe, opts, ask, ask ? sizeof *ask : 0, &ref));
    ck_ok(rt_get(ref, (void **)&s, &n, 120000));
    ck_assert_uint_eq(n, sizeof out);
    out = *s;
    rt_free(s);
    return out;
}

static rt_opts gpus(double n)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = n;
    return o;
}

/* The runtime on this machine as detected, watched through NVML. */
static void start_detected(int gpu_mps, int gpu_memory_kill)
{
    rt_config c = RT_CONFIG_INIT;
    c.gpu_mps = gpu_mps;
    c.gpu_memory_kill = gpu_memory_kill;
    c.timeline = 1;
    ck_ok(rt_init_config(&c));
}

/* The total of resource name on this node; 0 when it has none. */
static double total_of(const char *name, char *found, size_t found_len)
{
    rt_resource *res;
    size_t n;
    double amount = 0;
    ck_ok(rt_cluster_resources(&res, &n));
    for (size_t i = 0; i < n; i++)
        if (res[i].node == 0 && strncmp(res[i].name, name, strlen(name)) == 0) {
            amount = res[i].amount;
            if (found)
                snprintf(found, found_len, "%s", res[i].name + strlen(name));
        }
    rt_free(res);
    return amount;
}

/* Every GPU the runtime offers is a CUDA device a whole-machine task
 * sees, of the type the runtime names (accelerator_type:H100 on "NVIDIA
 * H100 80GB HBM3"). */
START_TEST(the_gpus_offered_are_the_devices_cuda_sees)
{
    start_detected(0, 0);
    char type[64] = "";
    double n = total_of("GPU", NULL, 0);
    ck_assert_msg(n >= 1, "no GPU detected on a machine with an NVIDIA driver");
    ck_assert(total_of("accelerator_type:", type, sizeof type) > 0);
    rt_opts all = gpus(n);
    probe_seen s = probe(&all, NULL);
    ck_assert_int_eq(s.init_rc, 0);
    ck_assert_int_eq(s.devices, (int)n);
    ck_assert_int_eq(s.gpu_ids, (int)n);
    ck_assert_msg(strstr(s.name, type), "device \"%s\", type \"%s\"", s.name, type);
    ck_assert_msg(s.device_total > 1ull << 30, "%llu bytes", (unsigned long long)s.device_total);
    ck_ok(rt_shutdown());
}
END_TEST

/* A task that holds no GPU finds no CUDA device; one with a share of a
 * GPU, or one whole, finds exactly one. */
START_TEST(each_task_sees_only_its_devices)
{
    start_detected(0, 0);
    rt_opts none = RT_OPTS_INIT;
    probe_seen s = probe(&none, NULL);
    ck_assert_msg(s.init_rc == CUDA_ERROR_NO_DEVICE || s.devices == 0,
                  "cuInit %d, %d devices", s.init_rc, s.devices);
    ck_assert_int_eq(s.gpu_ids, 0);
    double shares[] = {0.25, 0.5, 1};
    for (size_t i = 0; i < 3; i++) {
        rt_opts o = gpus(shares[i]);
        s = probe(&o, NULL);
        ck_assert_int_eq(s.init_rc, 0);
        ck_assert_int_eq(s.devices, 1);
        ck_assert_int_eq(s.gpu_ids, 1);
    }
    ck_ok(rt_shutdown());
}
END_TEST

/* Watching the real NVML marks no GPU unhealthy on a healthy machine,
 * and GPU tasks run while it watches. */
START_TEST(a_healthy_machine_has_no_unhealthy_gpu)
{
    start_detected(0, 0);
    rt_opts half = gpus(0.5);
    ck_assert_int_eq(probe(&half, NULL).devices, 1);
    rt_gpu_health *h;
    size_t n;
    ck_ok(rt_unhealthy_gpus(&h, &n));
    ck_assert_msg(n == 0, "%zu unhealthy, first: %s", n, n ? h[0].why : "");
    rt_free(h);
    ck_ok(rt_shutdown());
}
END_TEST

static uint64_t device_total; /* bytes of the first GPU, learnt first */

static void learn_device_total(void)
{
    rt_opts one = gpus(1);
    device_total = probe(&one, NULL).device_total;
    ck_assert(device_total > 1ull << 30);
}

static void over_share_killed(void)
{
    start_detected(0, 1);
    learn_device_total();
    rt_opts quarter = gpus(0.25);
    probe_ask ask = {.alloc_bytes = device_total / 2, .hold_ms = 5000};
    rt_ref ref;
    ck_ok(rt_remote(t_cuda_probe, &quarter, &ask, sizeof ask, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 120000), RT_EKILLED, "more GPU memory than its share");
    ck_ok(rt_shutdown());
}

/* A 0.25-GPU task that allocates half the GPU is seen through NVML's
 * process list, named, and (gpu_memory_kill) killed. */
START_TEST(a_task_over_its_share_is_killed)
{
    const char *out = capture_output(over_share_killed);
    ck_assert_msg(strstr(out, "t_cuda_probe (handle ") &&
                      strstr(out, "more than its share of") && strstr(out, ": killed"),
                  "%s", out);
}
END_TEST

static void reused_worker_keeps_memory(void)
{
    start_detected(0, 0);
    rt_opts o = gpus(1);
    o.max_calls = 0; /* reuse the worker */
    probe_ask context_only = {0}, leak = {.alloc_bytes = 1ull << 30, .keep = 1};
    ck_assert_int_eq(probe(&o, &context_only).alloc_rc, 0);
    sleep(1); /* the watcher looks every 300 ms */
    ck_assert_int_eq(probe(&o, &leak).alloc_rc, 0);
    sleep(1);
    ck_ok(rt_shutdown());
}

/* A reused worker's CUDA context (kept for the process's life) is not
 * named; 1 GiB its second task left allocated is. */
START_TEST(a_worker_whose_gpu_memory_grows_is_named)
{
    const char *out = capture_output(reused_worker_keeps_memory);
    const char *said = strstr(out, "keeps ");
    ck_assert_msg(said && strstr(said, "more than after its first"), "%s", out);
    ck_assert_msg(!strstr(said + 1, "keeps "), "said twice: %s", out);
}
END_TEST

/* NVIDIA MPS, started here with its pipes in a folder of the test's
 * own: CUDA holds a 0.25-GPU task to a quarter of the memory. */
static char mps_dir[128];

static int mps_start(void)
{
    if (system("command -v nvidia-cuda-mps-control > /dev/null") != 0)
        return -1;
    char control[160];
    temp_path(mps_dir, sizeof mps_dir, "mps");
    mkdir(mps_dir, 0700);
    setenv("CUDA_MPS_PIPE_DIRECTORY", mps_dir, 1);
    setenv("CUDA_MPS_LOG_DIRECTORY", mps_dir, 1);
    ck_assert_int_eq(system("nvidia-cuda-mps-control -d"), 0);
    snprintf(control, sizeof control, "%s/control", mps_dir);
    for (int i = 0; i < 100 && access(control, F_OK) != 0; i++)
        usleep(50000);
    return 0;
}

static void mps_stop(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "echo quit | nvidia-cuda-mps-control; sleep 1; rm -rf %s",
             mps_dir);
    (void)!system(cmd);
}

START_TEST(mps_holds_a_task_to_its_share)
{
    if (mps_start() != 0) {
        fprintf(stderr, "mps: nvidia-cuda-mps-control is not installed: not tried\n");
        return;
    }
    start_detected(RT_DEFAULT, 0); /* on: the control pipe exists */
    learn_device_total();
    rt_opts quarter = gpus(0.25);
    probe_ask big = {.alloc_bytes = device_total * 2 / 5}; /* 40 % */
    probe_ask small = {.alloc_bytes = device_total / 10};
    probe_seen over = probe(&quarter, &big), within = probe(&quarter, &small);
    ck_ok(rt_shutdown());
    mps_stop();
    fprintf(stderr, "mps: in a 0.25-GPU task, cuMemGetInfo's total %llu of %llu bytes; "
            "allocating 40 %%: %d, 10 %%: %d\n", (unsigned long long)over.context_total,
            (unsigned long long)over.device_total, over.alloc_rc, within.alloc_rc);
    ck_assert_msg(over.alloc_rc != 0, "40 %% of the GPU fit in a 0.25 share under MPS");
    ck_assert_int_eq(within.alloc_rc, 0);
}
END_TEST

/* Whether this machine has an NVIDIA GPU that CUDA can use, asked in a
 * child so that this process never starts CUDA (its tests fork). */
static int have_gpu(const char **why)
{
    int fd[2];
    if (pipe(fd) != 0)
        return 0;
    pid_t pid = fork();
    if (pid == 0) {
        cuda_api api;
        const char *reason = NULL;
        int n = 0;
        if (cuda_load(&api, &reason) == 0) {
            if (api.init(0) != 0)
                reason = "cuInit failed: no usable NVIDIA GPU";
            else if (api.device_count(&n) != 0 || n == 0)
                reason = "no CUDA device";
        }
        if (reason)
            (void)!write(fd[1], reason, strlen(reason));
        _exit(0);
    }
    close(fd[1]);
    static char reason[128];
    ssize_t got = read(fd[0], reason, sizeof reason - 1);
    reason[got > 0 ? got : 0] = '\0';
    close(fd[0]);
    waitpid(pid, NULL, 0);
    *why = reason;
    return got == 0;
}

int main(void)
{
    const char *why;
    if (!have_gpu(&why)) {
        printf("check-gpu: skipped: %s (this suite needs an NVIDIA GPU)\n", why);
        return 0;
    }
    Suite *s = suite_create("gpu");
    TCase *tc = tcase_create("real");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, the_gpus_offered_are_the_devices_cuda_sees);
    tcase_add_test(tc, each_task_sees_only_its_devices);
    tcase_add_test(tc, a_healthy_machine_has_no_unhealthy_gpu);
    tcase_add_test(tc, a_task_over_its_share_is_killed);
    tcase_add_test(tc, a_worker_whose_gpu_memory_grows_is_named);
    tcase_add_test(tc, mps_holds_a_task_to_its_share);
    suite_add_tcase(s, tc);
    return run_and_free(srunner_create(s));
}

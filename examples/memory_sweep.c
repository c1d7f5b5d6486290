/* memory_sweep.c - a sweep whose trials ask for GPU memory, in GB.
 *
 * Six models of different sizes, each needing that many GB of one GPU
 * (rt_opts.gpu_memory), on a machine taken to have two 80 GB GPUs
 * (rt_config.gpu_memory; NVML says it on a real one).  Each holds the
 * fraction of its GPU its memory is, so the small ones share a GPU and
 * no GPU is promised more than 80 GB: 10 + 20 + 20 + 30 GB fill GPU 0,
 * 40 GB goes to GPU 1, and 60 GB waits until 60 GB of one GPU are free.
 * A trial checks that it was given one GPU, alone in CUDA_VISIBLE_DEVICES,
 * and stands in for its training by waiting. */
#include "example.h"

#include <string.h>
#include <time.h>

#define GB 1000000000ull

int train_model(const void *arg, size_t len, rt_result *result);

int train_model(const void *arg, size_t len, rt_result *result)
{
    (void)arg;
    (void)len;
    const char *const *ids;
    size_t n;
    if (rt_get_gpu_ids(&ids, &n) < 0 || n != 1)
        return 1;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (!visible || strcmp(visible, ids[0]) != 0)
        return 2;
    nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL); /* the "GPU" */
    return rt_result_set(result, ids[0], strlen(ids[0]) + 1);
}

int main(void)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_gpus = 2;
    c.gpu_memory = 80 * GB;
    check(rt_init_config(&c), "rt_init_config");
    static const unsigned sizes_gb[] = {10, 20, 20, 30, 40, 60};
    enum { N = sizeof sizes_gb / sizeof *sizes_gb };
    rt_ref refs[N];
    for (int i = 0; i < N; i++) {
        rt_opts o = RT_OPTS_INIT;
        o.gpu_memory = sizes_gb[i] * GB;
        o.num_cpus = 0; /* a trial mostly waits for its GPU */
        check(rt_remote(train_model, &o, NULL, 0, &refs[i]), "rt_remote");
    }
    for (int i = 0; i < N; i++) {
        char *gpu;
        check(rt_get(refs[i], (void **)&gpu, NULL, RT_FOREVER), "rt_get");
        printf("model of %2u GB: %.3g of GPU %s\n", sizes_gb[i], sizes_gb[i] / 80.0, gpu);
        rt_free(gpu);
    }
    rt_opts too_big = RT_OPTS_INIT;
    too_big.gpu_memory = 100 * GB;
    rt_ref ref;
    int rc = rt_remote(train_model, &too_big, NULL, 0, &ref);
    printf("model of 100 GB: %s (%s)\n", rt_strerror(rc), rt_last_error());
    check(rt_shutdown(), "rt_shutdown");
    return 0;
}

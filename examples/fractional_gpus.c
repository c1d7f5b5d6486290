/* fractional_gpus.c - four tasks share one GPU (Ray: "Fractional GPUs").
 *
 * With 4 CPUs and 1 GPU, four tasks that each ask for a quarter of the GPU
 * run at the same time on GPU 0.  Each sleeps for a second and hands back
 * when it started and ended, so the program can show that they overlapped.
 * Keeping to its share of the GPU's memory is up to each task: rtask, like
 * Ray, counts shares and does not police them. */
#include "example.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct span {
    double start, end; /* seconds on CLOCK_MONOTONIC, the same in every process */
    char gpu[16];
} span;

int f(const void *arg, size_t len, rt_result *result);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int f(const void *arg, size_t len, rt_result *result)
{
    (void)arg;
    (void)len;
    span s = {.start = now()};
    const char *const *ids;
    size_t n;
    if (rt_get_gpu_ids(&ids, &n) < 0)
        return 1;
    snprintf(s.gpu, sizeof s.gpu, "%s", n == 1 ? ids[0] : "?");
    sleep(1);
    s.end = now();
    return rt_result_set(result, &s, sizeof s);
}

int main(void)
{
    rt_config config = RT_CONFIG_INIT;
    config.num_cpus = 4;
    config.num_gpus = 1;
    check(rt_init_config(&config), "rt_init_config");

    rt_opts quarter = RT_OPTS_INIT;
    quarter.num_gpus = 0.25;
    enum { N = 4 };
    rt_ref refs[N];
    for (int i = 0; i < N; i++)
        check(rt_remote(f, &quarter, NULL, 0, &refs[i]), "rt_remote");

    /* The four tasks created here can execute concurrently and share the
     * same GPU: the last one starts before the first one ends. */
    double last_start = 0, first_end = 1e300;
    for (int i = 0; i < N; i++) {
        span *s;
        check(rt_get(refs[i], (void **)&s, NULL, RT_FOREVER), "rt_get");
        printf("task %d ran on GPU %s\n", i, s->gpu);
        last_start = s->start > last_start ? s->start : last_start;
        first_end = s->end < first_end ? s->end : first_end;
        rt_free(s);
    }
    printf("all %d ran at the same time: %s\n", N, last_start < first_end ? "yes" : "no");
    return rt_shutdown() < 0;
}

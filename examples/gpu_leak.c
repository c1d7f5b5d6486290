/* gpu_leak.c - workers that do not release GPU memory (Ray: "Workers not
 * Releasing GPU Resources").
 *
 * A GPU library may keep the memory a task allocated until the process
 * ends.  So, by default, a GPU task runs in a fresh worker that exits
 * after it (max_calls = 1 for GPU tasks), and what it leaked dies with the
 * process.  max_calls = 0 turns worker reuse back on, which is cheaper
 * when the tasks are known to clean up.
 *
 * leak_gpus() stands for such a task: it allocates a buffer, never frees
 * it, and counts the buffers its process has leaked so far. */
#include "example.h"

#include <string.h>

int leak_gpus(const void *arg, size_t len, rt_result *result);

int leak_gpus(const void *arg, size_t len, rt_result *result)
{
    (void)arg;
    (void)len;
    (void)result;
    static int leaked; /* per process: a reused worker keeps counting */
    char *buffer = malloc(1 << 20);
    if (!buffer)
        return 1;
    memset(buffer, 1, 1 << 20); /* "this task will allocate memory on the GPU" */
    leaked++;
    printf("this worker has leaked %d buffer%s\n", leaked, leaked == 1 ? "" : "s");
    return 0;
}

static void run_three(const char *title, const rt_opts *opts)
{
    printf("%s\n", title);
    for (int i = 0; i < 3; i++) {
        rt_ref ref;
        check(rt_remote(leak_gpus, opts, NULL, 0, &ref), "rt_remote");
        check(rt_get(ref, NULL, NULL, RT_FOREVER), "leak_gpus");
    }
}

int main(void)
{
    check(rt_init(1), "rt_init");

    /* By default rtask does not reuse workers for GPU tasks, to prevent
     * GPU memory leaking from one task into the next. */
    rt_opts gpu = RT_OPTS_INIT;
    gpu.num_gpus = 1;
    run_three("default: a fresh worker for every GPU task", &gpu);

    /* The same, said explicitly (the older Ray idiom). */
    gpu.max_calls = 1;
    run_three("max_calls = 1: the same", &gpu);

    gpu.max_calls = 0;
    run_three("max_calls = 0: one worker, reused", &gpu);
    return rt_shutdown() < 0;
}

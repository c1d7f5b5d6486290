/* gpu_actor_task.c - a GPU actor and a GPU task (Ray: "Using GPUs in Tasks
 * and Actors").
 *
 * The runtime is given 2 GPUs.  The actor asks for one and holds it for
 * its whole life, so the task that follows gets the other one.  Each
 * prints what rt_get_gpu_ids() returns and the CUDA_VISIBLE_DEVICES its
 * worker set before the code ran; a CUDA program started there would see
 * only that GPU, as its device 0.  The GPUs are logical: this runs on a
 * machine without any.
 *
 * A CUDA_VISIBLE_DEVICES set before rt_init() limits the GPUs rtask sees,
 * as it does for "ray start": run
 *     CUDA_VISIBLE_DEVICES=1,3 gpu_actor_task
 * and the actor gets device 1 and the task device 3. */
#include "example.h"

int gpu_actor_ping(void *state, const void *arg, size_t len, rt_result *result);
int use_gpu(const void *arg, size_t len, rt_result *result);

static int print_gpus(void)
{
    const char *const *ids;
    size_t n;
    if (rt_get_gpu_ids(&ids, &n) < 0)
        return 1;
    print_list("rt_get_gpu_ids()", ids, n);
    printf("CUDA_VISIBLE_DEVICES: %s\n", getenv("CUDA_VISIBLE_DEVICES"));
    return 0;
}

int gpu_actor_ping(void *state, const void *arg, size_t len, rt_result *result)
{
    (void)state;
    (void)arg;
    (void)len;
    (void)result;
    return print_gpus();
}

int use_gpu(const void *arg, size_t len, rt_result *result)
{
    (void)arg;
    (void)len;
    (void)result;
    return print_gpus();
}

int main(void)
{
    check(rt_init(2), "rt_init");

    rt_opts one_gpu = RT_OPTS_INIT;
    one_gpu.num_gpus = 1;
    /* The actor keeps no state, so its class needs no constructor. */
    static const rt_actor_class gpu_actor = {"GPUActor", NULL, NULL};

    rt_actor actor;
    rt_ref ref;
    check(rt_actor_create(&gpu_actor, &one_gpu, NULL, 0, &actor), "rt_actor_create");
    check(rt_actor_call(actor, gpu_actor_ping, NULL, 0, &ref), "rt_actor_call");
    check(rt_get(ref, NULL, NULL, RT_FOREVER), "ping");

    /* The actor uses the first GPU, so the task will use the second one. */
    check(rt_remote(use_gpu, &one_gpu, NULL, 0, &ref), "rt_remote");
    check(rt_get(ref, NULL, NULL, RT_FOREVER), "use_gpu");
    return rt_shutdown() < 0;
}

/* gpu_packing.c - half-GPU actors are packed (Ray: "Fractional GPUs").
 *
 * With 3 GPUs, three actors that each ask for half a GPU get GPUs 0, 0
 * and 1: rtask fills one GPU before it moves on to the next, so that
 * whole GPUs stay free for tasks that need a whole one (here GPU 2, and
 * the other half of GPU 1). */
#include "example.h"

int fractional_ping(void *state, const void *arg, size_t len, rt_result *result);

int fractional_ping(void *state, const void *arg, size_t len, rt_result *result)
{
    (void)state;
    (void)arg;
    (void)len;
    (void)result;
    const char *const *ids;
    size_t n;
    if (rt_get_gpu_ids(&ids, &n) < 0)
        return 1;
    print_list("rt_get_gpu_ids()", ids, n);
    return 0;
}

int main(void)
{
    check(rt_init(3), "rt_init");

    static const rt_actor_class fractional = {"FractionalGPUActor", NULL, NULL};
    rt_opts half = RT_OPTS_INIT;
    half.num_gpus = 0.5;
    rt_actor actors[3];
    for (int i = 0; i < 3; i++)
        check(rt_actor_create(&fractional, &half, NULL, 0, &actors[i]), "rt_actor_create");

    /* Ping them one after the other so that their lines come in order. */
    for (int i = 0; i < 3; i++) {
        rt_ref ref;
        check(rt_actor_call(actors[i], fractional_ping, NULL, 0, &ref), "rt_actor_call");
        check(rt_get(ref, NULL, NULL, RT_FOREVER), "ping");
    }
    return rt_shutdown() < 0;
}

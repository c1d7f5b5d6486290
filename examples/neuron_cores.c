/* neuron_cores.c - AWS Neuron cores, placed like GPUs (Ray: "AWS Neuron
 * Core Accelerator").
 *
 * "neuron_cores" is a custom resource that rtask places on numbered
 * cores, as it places GPUs: the actor below holds core 0 for its life, so
 * the task gets core 1, and each worker has NEURON_RT_VISIBLE_CORES set to
 * its cores before the code runs.  On an Inf2 or Trn1 machine
 * rt_init(RT_DETECT) finds the cores; here the configuration declares two,
 * and the node's accelerator type, so the example runs anywhere. */
#include "example.h"

int neuron_info(void *state, const void *arg, size_t len, rt_result *result);
int use_neuron_core_task(const void *arg, size_t len, rt_result *result);

static int print_cores(void)
{
    const char *const *ids;
    size_t n;
    if (rt_get_accelerator_ids("neuron_cores", &ids, &n) < 0)
        return 1;
    print_list("neuron_core_ids", ids, n);
    printf("NEURON_RT_VISIBLE_CORES: %s\n", getenv("NEURON_RT_VISIBLE_CORES"));
    return 0;
}

int neuron_info(void *state, const void *arg, size_t len, rt_result *result)
{
    (void)state;
    (void)arg;
    (void)len;
    (void)result;
    return print_cores();
}

int use_neuron_core_task(const void *arg, size_t len, rt_result *result)
{
    (void)arg;
    (void)len;
    (void)result;
    return print_cores();
}

int main(void)
{
    rt_config config = RT_CONFIG_INIT;
    config.num_gpus = 0;
    config.resources = "neuron_cores=2";
    config.accelerator_type = RT_ACCEL_AWS_NEURON_CORE;
    check(rt_init_config(&config), "rt_init_config");

    rt_opts one_core = RT_OPTS_INIT;
    one_core.resources = "neuron_cores=1";
    one_core.accelerator_type = RT_ACCEL_AWS_NEURON_CORE;
    static const rt_actor_class neuron_actor = {"NeuronCoreActor", NULL, NULL};

    rt_actor actor;
    rt_ref ref;
    check(rt_actor_create(&neuron_actor, &one_core, NULL, 0, &actor), "rt_actor_create");
    check(rt_actor_call(actor, neuron_info, NULL, 0, &ref), "rt_actor_call");
    check(rt_get(ref, NULL, NULL, RT_FOREVER), "info");

    check(rt_remote(use_neuron_core_task, &one_core, NULL, 0, &ref), "rt_remote");
    check(rt_get(ref, NULL, NULL, RT_FOREVER), "use_neuron_core_task");
    return rt_shutdown() < 0;
}

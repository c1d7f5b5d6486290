/* accelerator_types.c - run a task only on a given kind of GPU (Ray:
 * "Accelerator Types").
 *
 * rt_init(RT_DETECT) finds the GPUs and takes their type from the model
 * ("Tesla V100-SXM2-16GB" is a V100).  A task whose accelerator_type is
 * RT_ACCEL_NVIDIA_TESLA_V100 also holds the custom resource
 * "accelerator_type:V100" = 0.001, which only a V100 node offers.  Asking
 * for a type that this node lacks fails at once with RT_EINFEASIBLE rather
 * than wait forever.
 *
 * Without a V100 at hand, run it on the fake 4 x V100 machine the tests use:
 *     RTASK_SYSFS_ROOT=test/fake/v100x4 build/examples/accelerator_types */
#include "example.h"

#include <string.h>

int train(const void *arg, size_t len, rt_result *result);

int train(const void *arg, size_t len, rt_result *result)
{
    (void)arg;
    (void)len;
    const char *said = "This function was run on a node with a Tesla V100 GPU";
    return rt_result_set(result, said, strlen(said) + 1);
}

/* Submit train() for one GPU of the given type and print what happened. */
static void train_on(const char *type)
{
    rt_opts opts = RT_OPTS_INIT;
    opts.num_gpus = 1;
    opts.accelerator_type = type;
    int data = 1;
    rt_ref ref;
    int rc = rt_remote(train, &opts, &data, sizeof data, &ref);
    if (rc < 0) {
        printf("%s: %s: %s\n", type, rt_strerror(rc), rt_last_error());
        return;
    }
    char *said;
    check(rt_get(ref, (void **)&said, NULL, RT_FOREVER), "train");
    printf("%s: %s\n", type, said);
    rt_free(said);
}

int main(void)
{
    check(rt_init(RT_DETECT), "rt_init");
    train_on(RT_ACCEL_NVIDIA_TESLA_V100);
    train_on(RT_ACCEL_NVIDIA_H100);
    return rt_shutdown() < 0;
}

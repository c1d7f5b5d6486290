/* status.c - rt_cluster_resources(), rt_available_resources(),
 * rt_unhealthy_gpus() and rt_timeline(): the scheduler's books and the
 * timeline, copied out for the application. */
#include "base/error.h"
#include "base/process.h"
#include "runtime/calls.h"

RT_EXPORT int rt_cluster_resources(rt_resource **out, size_t *n)
{
    if (!out || !n)
        return rt__error(RT_EINVAL, "rt_cluster_resources: NULL argument");
    return rt__call_resources(rt__runtime_here(), "rt_cluster_resources", 0, out, n);
}

RT_EXPORT int rt_available_resources(rt_resource **out, size_t *n)
{
    if (!out || !n)
        return rt__error(RT_EINVAL, "rt_available_resources: NULL argument");
    return rt__call_resources(rt__runtime_here(), "rt_available_resources", 1, out, n);
}

RT_EXPORT int rt_unhealthy_gpus(rt_gpu_health **out, size_t *n)
{
    if (!out || !n)
        return rt__error(RT_EINVAL, "rt_unhealthy_gpus: NULL argument");
    return rt__call_unhealthy(rt__runtime_here(), out, n);
}

RT_EXPORT int rt_timeline(const char *path)
{
    return rt__call_timeline(rt__runtime_here(), path);
}

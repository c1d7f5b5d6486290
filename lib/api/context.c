/* context.c - what a task asks of where it runs: rt_get_context(), its
 * devices' ids, the result it makes. */
#include "base/error.h"
#include "node/taskenv.h"
#include "node/worker.h"

#include "front.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The MPI rank this process is, as the launcher says (mpirun, srun); 0
 * on one machine.  A worker has its rank's environment. */
int rt__task_node(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long rank = v && *v ? strtol(v, &end, 10) : -1;
        if (v && *v && *end == '\0' && rank >= 0 && rank < 1 << 20)
            return (int)rank;
    }
    return 0;
}

RT_EXPORT int rt_get_context(rt_context *ctx)
{
    if (!ctx)
        return rt__error(RT_EINVAL, "rt_get_context: ctx is NULL");
    memset(ctx, 0, sizeof *ctx);
    const rt__running *r = rt__worker_running();
    if (r) {
        ctx->task.id = r->task;
        ctx->actor.id = r->actor;
        ctx->attempt = (int)r->attempt;
    }
    ctx->node = rt__front_here()->node();
    ctx->pid = (int)getpid();
    if (gethostname(ctx->host, sizeof ctx->host - 1) < 0)
        strcpy(ctx->host, "localhost");
    return 0;
}

RT_EXPORT int rt_cancelled(void)
{
    return rt__worker_cancelled();
}

RT_EXPORT int rt_get_gpu_ids(const char *const **ids, size_t *n)
{
    return rt__taskenv_ids("rt_get_gpu_ids", "GPU", ids, n);
}

RT_EXPORT int rt_get_accelerator_ids(const char *resource, const char *const **ids,
                                     size_t *n)
{
    return rt__taskenv_ids("rt_get_accelerator_ids", resource, ids, n);
}

RT_EXPORT void *rt_result_alloc(rt_result *result, size_t len)
{
    return rt__result_alloc(result, len);
}

RT_EXPORT int rt_result_set_at(rt_result *result, unsigned index, const void *data,
                               size_t len)
{
    if (index == 0)
        return rt_result_set(result, data, len);
    if (!result || (!data && len))
        return rt__error(RT_EINVAL, "rt_result_set_at: NULL result or data");
    if (index >= RT_RETURNS_MAX)
        return rt__error(RT_EINVAL, "rt_result_set_at: index %u; a task gives at most "
                         "RT_RETURNS_MAX (%d) results", index, RT_RETURNS_MAX);
    if (rt__result_set_at(result, index, data, len) < 0)
        return rt__error(RT_ENOMEM, "rt_result_set_at: no memory for %zu bytes", len);
    return 0;
}

RT_EXPORT int rt_result_set(rt_result *result, const void *data, size_t len)
{
    if (!result || (!data && len))
        return rt__error(RT_EINVAL, "rt_result_set: NULL result or data");
    void *dst = rt__result_alloc(result, len);
    if (!dst)
        return rt__error(RT_ENOMEM, "rt_result_set: no memory for %zu bytes", len);
    if (len)
        memcpy(dst, data, len);
    return 0;
}

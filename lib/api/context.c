/* context.c - rt_get_context(): where the calling code runs. */
#include "base/error.h"
#include "base/process.h"
#include "node/worker.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The MPI rank this process is, as the launcher says (mpirun, srun); 0
 * on one machine.  A worker has its rank's environment. */
static int rank_here(void)
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
    const rt__running *r = rt__process_forked() ? rt__worker_running() : NULL;
    if (r) {
        ctx->task.id = r->task;
        ctx->actor.id = r->actor;
        ctx->attempt = (int)r->attempt;
    }
    ctx->node = rt__process_forked() ? rank_here() : 0;
    ctx->pid = (int)getpid();
    if (gethostname(ctx->host, sizeof ctx->host - 1) < 0)
        strcpy(ctx->host, "localhost");
    return 0;
}

RT_EXPORT int rt_cancelled(void)
{
    return rt__process_forked() && rt__worker_cancelled();
}

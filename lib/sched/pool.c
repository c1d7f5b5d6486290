/* pool.c - placing a request on what a node or a bundle has free. */
#include "pool.h"

#include <string.h>

int rt__pool_pick(const rt__pool *p, int accel_index, const rt__res *req, int gpu_type,
                  rt__grant *g)
{
    rt__amount accel = accel_index >= 0 ? req->custom[accel_index] : 0;
    int gpus = req->gpu_bytes
                   ? rt__instances_pick_bytes(&p->gpus, req->gpu_bytes, gpu_type, &g->gpu)
                   : rt__instances_pick(&p->gpus, req->gpu, gpu_type, &g->gpu);
    return rt__res_fits(&p->res, req) && gpus &&
           rt__instances_pick(&p->accel, accel, RT__ANY_TYPE, &g->accel);
}

rt__res rt__grant_held(const rt__res *req, const rt__grant *g)
{
    rt__res r = *req;
    r.gpu = 0;
    for (size_t w = 0; w < sizeof g->gpu.mask / sizeof *g->gpu.mask; w++)
        r.gpu += g->gpu.each * __builtin_popcountll(g->gpu.mask[w]);
    return r;
}

void rt__pool_take(rt__pool *p, const rt__res *req, const rt__grant *g)
{
    rt__res h = rt__grant_held(req, g);
    rt__res_take(&p->res, &h);
    rt__instances_take(&p->gpus, &g->gpu);
    rt__instances_take(&p->accel, &g->accel);
}

void rt__pool_give(rt__pool *p, const rt__res *req, const rt__grant *g)
{
    rt__res h = rt__grant_held(req, g);
    rt__res_give(&p->res, &h);
    rt__instances_give(&p->gpus, &g->gpu);
    rt__instances_give(&p->accel, &g->accel);
}

/* in with only what pick holds free. */
static void carve_instances(const rt__instances *in, const rt__pick *pick,
                            rt__instances *out)
{
    *out = *in;
    for (int i = 0; i < in->count; i++)
        out->free[i] = rt__pick_has(pick, i) ? pick->each : 0;
}

void rt__pool_carve(const rt__pool *p, const rt__res *req, const rt__grant *g,
                    rt__pool *out)
{
    rt__res h = rt__grant_held(req, g);
    memset(&out->res, 0, sizeof out->res);
    rt__res_give(&out->res, &h);
    carve_instances(&p->gpus, &g->gpu, &out->gpus);
    carve_instances(&p->accel, &g->accel, &out->accel);
}

static void merge_instances(rt__instances *in, const rt__instances *part)
{
    for (int i = 0; i < in->count; i++)
        in->free[i] += part->free[i];
}

void rt__pool_merge(rt__pool *p, const rt__pool *part)
{
    rt__res_give(&p->res, &part->res);
    merge_instances(&p->gpus, &part->gpus);
    merge_instances(&p->accel, &part->accel);
}

static void whole_instances(const rt__instances *in, rt__instances *out)
{
    *out = *in;
    for (int i = 0; i < in->count; i++)
        out->free[i] = RT__UNIT;
}

void rt__pool_whole(const rt__pool *p, const rt__res *total, rt__pool *out)
{
    out->res = *total;
    whole_instances(&p->gpus, &out->gpus);
    whole_instances(&p->accel, &out->accel);
}

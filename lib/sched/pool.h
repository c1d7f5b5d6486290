/*
 * pool.h - what a node has free, or a bundle of a placement group: its
 * resources and its instances; and a request placed on it.
 *
 * A grant says where a request landed: a node, the bundle it took from
 * (or none), and the instances it holds.  What it holds is the request
 * with its GPU amount as the instances hold it (a request in bytes holds
 * the fraction they are of the GPU it got).
 */
#ifndef RT_POOL_H
#define RT_POOL_H

#include "devices/instance.h"
#include "devices/resources.h"

#define RT__NO_BUNDLE (-1)

typedef struct rt__grant {
    int node;
    int bundle;          /* the bundle of its class's group, or RT__NO_BUNDLE */
    rt__pick gpu, accel;
} rt__grant;

typedef struct rt__pool {
    rt__res res;
    rt__instances gpus, accel;
} rt__pool;

/* Whether req fits p now, its GPUs on instances of gpu_type (and the
 * custom resource accel_index, the node's accelerator family or -1, on
 * p's accelerator instances): 1 and the picks in g, or 0. */
int rt__pool_pick(const rt__pool *p, int accel_index, const rt__res *req, int gpu_type,
                  rt__grant *g);
/* What g holds of req. */
rt__res rt__grant_held(const rt__res *req, const rt__grant *g);
/* Take what g holds of req from p, or give it back. */
void rt__pool_take(rt__pool *p, const rt__res *req, const rt__grant *g);
void rt__pool_give(rt__pool *p, const rt__res *req, const rt__grant *g);
/* A pool of what g holds of req, carved from p (p keeps its instances'
 * names, types and memory; only what g picked is free in the carving). */
void rt__pool_carve(const rt__pool *p, const rt__res *req, const rt__grant *g,
                    rt__pool *out);
/* Give everything free in part back to p (a carving of it). */
void rt__pool_merge(rt__pool *p, const rt__pool *part);
/* p as it is with nothing taken: totals free, every instance whole. */
void rt__pool_whole(const rt__pool *p, const rt__res *total, rt__pool *out);

#endif

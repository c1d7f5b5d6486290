/*
 * groups.h - placement groups: bundles of resources reserved on nodes at
 * once, all or nothing, for the tasks and actors of the group alone.
 *
 * A bundle, once placed, is carved out of its node's pools (free and
 * unheld alike, as an actor's holding is): its own pools are what its
 * leases take from (rt__sched_pool()).  Strategies, as Ray's: PACK tries
 * one node for every bundle, then fills the nodes it already uses first;
 * SPREAD puts each bundle on a node not used yet while there is one; the
 * STRICT forms fail rather than do otherwise.  Each bundle goes to the
 * first node (in index order) that fits it: greedy, so a group that only
 * an exhaustive search would place waits.
 *
 * A group that does not fit now waits; it is tried again whenever
 * something went back to a node.  Removed, a group leaves the handle map
 * at once, and its bundles go back to their nodes: what its leases hold
 * goes back as they end, to the nodes.  Its record lives while classes
 * take from it (the dispatcher fails their tasks and ends their leases).
 */
#ifndef RT_GROUPS_H
#define RT_GROUPS_H

#include "scheduler.h"

enum { RT__GROUP_UNPLACED, RT__GROUP_PLACED, RT__GROUP_REMOVED };

typedef struct rt__bundle {
    rt__res res;          /* what it reserves; .nodes: those its label
                             selector picks (0 = any) */
    int gpu_type;         /* its GPUs' type, or RT__ANY_TYPE */
    int node;             /* placed: where */
    rt__grant grant;      /* placed: what it took there */
    rt__pool free;        /* placed: what its leases may take now */
    rt__pool unheld;      /* the same, less what its actors hold */
} rt__bundle;

typedef struct rt__group {
    rt__idnode byid;      /* in the scheduler's groups until removed */
    rt__link link;        /* on its unplaced list; then on the list of
                             those just placed that rt__sched_place_groups()
                             was given */
    int strategy;         /* RT_PG_* */
    int state;            /* RT__GROUP_* */
    int ready;            /* [L] the runtime's: its placement is published */
    rt__link classes;     /* the classes that take from it (their
                             in_group links) */
    rt__link all;         /* in the scheduler's groups, while not removed */
    uint64_t tried;       /* the scheduler's gave when it last did not fit */
    size_t nbundles;
    rt__bundle bundle[];
} rt__group;

/* A group of n bundles, unplaced, for the caller to fill (res, gpu_type
 * by rt__sched_gpu_type(), strategy); NULL without memory. */
rt__group *rt__group_new(size_t n);
/* Free a group that never joined the scheduler's (or that leaves it). */
void rt__group_free(rt__group *g);
/* 0 when some placement on the nodes, all free, could hold g; otherwise
 * RT_EINFEASIBLE with a message (RT_ENOMEM without memory). */
int rt__sched_group_check(const rt__sched *s, const rt__group *g);
/* g (checked, its handle in byid.id) joins the groups, to be placed. */
void rt__sched_group_add(rt__sched *s, rt__group *g);
/* Place the groups that wait and now fit, in their order; those placed
 * move onto the list at placed. */
void rt__sched_place_groups(rt__sched *s, rt__link *placed);
/* The group whose handle is id, or NULL (unknown or removed). */
rt__group *rt__sched_group(const rt__sched *s, uint64_t id);
/* 0 when a request of g (its bundle, or any: req->bundle < 0) fits what
 * the bundle reserves; otherwise RT_EINFEASIBLE or RT_EINVAL with a
 * message.  Reads what is fixed at creation only. */
int rt__group_admits(const rt__sched *s, const rt__group *g, const rt__res *req);
/* Remove g: out of the map, its bundles back to their nodes; freed now
 * when no class takes from it. */
void rt__sched_group_remove(rt__sched *s, rt__group *g);
/* Class c takes from g from now on, or no longer (it is freed). */
void rt__group_join(rt__group *g, rt__class *c);
void rt__group_leave(rt__class *c);
/* Instance i of node's GPUs is unhealthy: so it is in the bundles placed
 * there. */
void rt__sched_groups_sicken(rt__sched *s, int node, int i);
/* The end: free every group (their classes are gone). */
void rt__sched_groups_free(rt__sched *s);

#endif

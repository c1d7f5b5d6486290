/*
 * resources.h - logical resources in fixed point.
 *
 * Amounts are counted in 1/10000 units, as Ray does, so that four 0.25
 * requests add up to exactly 1 and no rounding ever over-commits.  Besides
 * CPUs the runtime offers custom resources named at rt_init() ("fpga=2");
 * a request names them the same way and gets their index here.
 */
#ifndef RT_RESOURCES_H
#define RT_RESOURCES_H

#include <stddef.h>
#include <stdint.h>

typedef int64_t rt__amount;
#define RT__UNIT 10000
#define RT__CUSTOM_MAX 16
#define RT__NAME_LEN 64

/* A set of nodes, a bit each: those a label selector picked.  Made
 * once per set and kept while the scheduler lives (it interns them,
 * sched/scheduler.c), so that a request names one by its address. */
typedef struct rt__nodeset {
    size_t nwords;
    uint64_t bits[];
} rt__nodeset;

/* A request, or a node's totals or free amounts.  GPUs are also placed
 * on instances (instance.h); here they are counted. */
typedef struct rt__res {
    rt__amount cpu;
    rt__amount gpu;
    rt__amount custom[RT__CUSTOM_MAX]; /* indexed as in rt__names */
    uint64_t gpu_bytes;  /* a request's GPU memory (rt_opts.gpu_memory),
                            which holds the fraction it is of the GPU it
                            lands on (instance.h); 0 in totals */
    const rt__nodeset *nodes; /* a request's nodes: those its label
                            selector picks (rt_opts.label_selector); NULL =
                            any node, and in totals */
    int64_t elsewhere;   /* a request's: 1 = not on node 0, whose objects
                            the node it lands on pulls itself */
    uint64_t group;      /* a request's placement group (its handle), or
                            0: none, and in totals */
    int64_t bundle;      /* in its group: the bundle, or -1: any */
    int64_t near;        /* a request's node that holds most of the bytes
                            of the objects it takes, + 1, tried first; 0 =
                            none */
} rt__res;

/* Whether request r may run on node i, as its nodes and elsewhere say. */
static inline int rt__res_on_node(const rt__res *r, int i)
{
    const rt__nodeset *set = r->nodes;
    if (r->elsewhere && i == 0)
        return 0;
    return !set || ((size_t)i / 64 < set->nwords && (set->bits[i / 64] >> (i % 64) & 1));
}

/* The custom resources of the node, fixed at rt_init(). */
typedef struct rt__names {
    int count;
    char name[RT__CUSTOM_MAX][RT__NAME_LEN];
} rt__names;

/* One "name=amount" of a list. */
typedef struct rt__item {
    char name[RT__NAME_LEN];
    rt__amount amount;
} rt__item;

/* The index of a custom resource, or -1. */
int rt__names_find(const rt__names *names, const char *name);

/* Convert a user's amount; what names it in messages ("num_cpus").
 * Refuses NaN, infinities, negatives, values too large, and non-zero
 * values that round to zero.  Returns 0 or RT_EINVAL. */
int rt__amount_parse(double v, const char *what, rt__amount *out);

/* Parse "name=amount,name=amount" (NULL or "" is an empty list) into at
 * most RT__CUSTOM_MAX items; what names the list in messages.  Returns 0
 * or RT_EINVAL. */
int rt__items_parse(const char *spec, const char *what, rt__item *items, int *n);
/* The prefix of the custom resource that an accelerator type becomes. */
#define RT__ACCEL_PREFIX "accelerator_type:"
/* What a request of accelerator type T asks for: 0.001 of the resource
 * "accelerator_type:T", which a node of that type offers 1 of. */
#define RT__ACCEL_AMOUNT (RT__UNIT / 1000)

/* The index of name among the items, or -1. */
int rt__items_find(const rt__item *items, int n, const char *name);
/* Append an item; RT_EINVAL when the list is full or the name too long. */
int rt__items_add(rt__item *items, int *n, const char *name, rt__amount amount,
                  const char *what);
/* RT_EINVAL, naming the item, when name is given with a fraction. */
int rt__items_whole(const rt__item *items, int n, const char *name, const char *what);

/* Make the items the node's custom resources and their totals. */
void rt__names_define(rt__names *names, const rt__item *items, int n,
                      rt__res *total);
/* Add the items to a request.  A name the node does not have can never
 * be satisfied: RT_EINFEASIBLE, naming it (for "accelerator_type:T",
 * naming the type the node has instead). */
int rt__res_request(const rt__names *names, const rt__item *items, int n,
                    rt__res *req);

/* Whether a request fits in what is free, and taking or giving it back. */
int rt__res_fits(const rt__res *free, const rt__res *req);
void rt__res_take(rt__res *free, const rt__res *req);
void rt__res_give(rt__res *free, const rt__res *req);
/* 0 when a request fits the totals; otherwise RT_EINFEASIBLE, with a
 * message naming the resource. */
int rt__res_feasible(const rt__res *total, const rt__res *req,
                     const rt__names *names);
/* The same against what one node has (node 1: the message says so). */
int rt__res_feasible_on(const rt__res *total, const rt__res *req, const rt__names *names,
                        int node);
int rt__res_equal(const rt__res *a, const rt__res *b);

#endif

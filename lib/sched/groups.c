/* groups.c - placement groups: their bundles placed by strategy, carved
 * out of the nodes, and given back. */
#include "scheduler.h"

#include "base/alloc.h"
#include "base/error.h"

#include <rtask.h>
#include <stdio.h>
#include <string.h>

rt__group *rt__group_new(size_t n)
{
    rt__group *g = rt__calloc(1, sizeof *g + n * sizeof *g->bundle);
    if (g) {
        g->nbundles = n;
        rt__link_init(&g->link);
        rt__link_init(&g->classes);
        rt__link_init(&g->all);
    }
    return g;
}

/* ---- placing -------------------------------------------------------------- */

/* Where a placement is being tried: a copy of each node's pool, made when
 * first touched, and how many bundles each node got. */
typedef struct trial {
    const rt__sched *s;
    int whole;                      /* copies as if nothing were taken */
    rt__pool **pool;                /* each node's, nnodes of them */
    int *used;
    rt__grant *where;               /* each bundle's */
} trial;

static void trial_reset(trial *t)
{
    for (int i = 0; i < t->s->nnodes; i++) {
        rt__free(t->pool[i]);
        t->pool[i] = NULL;
        t->used[i] = 0;
    }
}

/* Node i's copy; NULL without memory. */
static rt__pool *trial_pool(trial *t, int i)
{
    if (!t->pool[i] && (t->pool[i] = rt__malloc(sizeof *t->pool[i]))) {
        const rt__sched_node *n = t->s->node[i];
        if (t->whole)
            rt__pool_whole(&n->free, &n->total, t->pool[i]);
        else
            *t->pool[i] = n->free;
    }
    return t->pool[i];
}

/* Bundle k of g on node i of the trial: 1 when it fits (and is taken
 * there), 0 when not, -1 without memory. */
static int try_node(trial *t, const rt__group *g, size_t k, int i)
{
    const rt__bundle *b = &g->bundle[k];
    if (!rt__res_on_node(&b->res, i))
        return 0;
    rt__pool *p = trial_pool(t, i);
    if (!p)
        return -1;
    rt__grant *w = &t->where[k];
    if (!rt__pool_pick(p, t->s->node[i]->accel_index, &b->res, b->gpu_type, w))
        return 0;
    w->node = i;
    w->bundle = (int)k;
    rt__pool_take(p, &b->res, w);
    t->used[i]++;
    return 1;
}

/* Every bundle on node i alone: 1, 0 or -1 as try_node(). */
static int try_one_node(trial *t, const rt__group *g, int i)
{
    for (size_t k = 0; k < g->nbundles; k++) {
        int rc = try_node(t, g, k, i);
        if (rc <= 0)
            return rc;
    }
    return 1;
}

static int strict_pack(trial *t, const rt__group *g)
{
    for (int i = 0; i < t->s->nnodes; i++) {
        int rc = try_one_node(t, g, i);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Each bundle in turn on the first node that fits it, nodes already used
 * first (pack) or last (spread); strict: never a node used already. */
static int greedy(trial *t, const rt__group *g, int spread, int strict)
{
    for (size_t k = 0; k < g->nbundles; k++) {
        int rc = 0;
        for (int pass = 0; pass < 2 && rc == 0; pass++)
            for (int i = 0; i < t->s->nnodes && rc == 0; i++) {
                int preferred = spread ? t->used[i] == 0 : t->used[i] > 0;
                if ((pass == 0) == preferred && !(strict && t->used[i]))
                    rc = try_node(t, g, k, i);
            }
        if (rc <= 0)
            return rc;
    }
    return 1;
}

/* Try g by its strategy: 1 when every bundle fits (t->where says where),
 * 0 when not, -1 without memory. */
static int place(trial *t, const rt__group *g)
{
    int rc;
    switch (g->strategy) {
    case RT_PG_STRICT_PACK:
        return strict_pack(t, g);
    case RT_PG_PACK:
        rc = strict_pack(t, g);
        if (rc != 0)
            return rc;
        trial_reset(t);
        return greedy(t, g, 0, 0);
    case RT_PG_SPREAD:
        return greedy(t, g, 1, 0);
    default:
        return greedy(t, g, 1, 1);
    }
}

/* Run a trial of g on the nodes as they are, or all free (whole): 1, 0
 * or -1 as place(); the grants are written to where. */
static int run_trial(const rt__sched *s, const rt__group *g, int whole, rt__grant *where)
{
    size_t n = (size_t)s->nnodes;
    trial t = {.s = s, .whole = whole, .where = where,
               .pool = rt__calloc(n, sizeof *t.pool), .used = rt__calloc(n, sizeof *t.used)};
    int rc = t.pool && t.used ? place(&t, g) : -1;
    if (t.pool && t.used)
        trial_reset(&t);
    rt__free(t.pool);
    rt__free(t.used);
    return rc;
}

/* Why g can never be placed, naming what is short where one resource
 * is: what a bundle (or, STRICT_PACK, the bundles together) asks more of
 * than the largest node has, or the nodes STRICT_SPREAD lacks. */
static int never_placed(const rt__sched *s, const rt__group *g)
{
    rt__res most = {0}, all = {0};
    char why[256];
    for (int i = 0; i < s->nnodes; i++) {
        const rt__res *t = &s->node[i]->total;
        most.cpu = t->cpu > most.cpu ? t->cpu : most.cpu;
        most.gpu = t->gpu > most.gpu ? t->gpu : most.gpu;
        for (int k = 0; k < RT__CUSTOM_MAX; k++)
            most.custom[k] = t->custom[k] > most.custom[k] ? t->custom[k] : most.custom[k];
    }
    if (g->strategy == RT_PG_STRICT_SPREAD && g->nbundles > (size_t)s->nnodes)
        return rt__error(RT_EINFEASIBLE, "rt_pg_create: STRICT_SPREAD puts the %zu bundles "
                         "each on a node of its own, and the runtime has %d node%s",
                         g->nbundles, s->nnodes, s->nnodes == 1 ? "" : "s");
    for (size_t k = 0; k < g->nbundles; k++) {
        rt__res_give(&all, &g->bundle[k].res);
        if (rt__res_feasible_on(&most, &g->bundle[k].res, &s->names, 1) < 0) {
            snprintf(why, sizeof why, "%s", rt__last_error());
            return rt__error(RT_EINFEASIBLE, "rt_pg_create: bundle %zu: %s", k, why);
        }
    }
    if (g->strategy == RT_PG_STRICT_PACK &&
        rt__res_feasible_on(&most, &all, &s->names, 1) < 0) {
        snprintf(why, sizeof why, "%s", rt__last_error());
        return rt__error(RT_EINFEASIBLE, "rt_pg_create: the %zu bundles all on one node: %s",
                         g->nbundles, why);
    }
    return rt__error(RT_EINFEASIBLE, "rt_pg_create: no placement of the %zu bundles "
                         "could ever hold them%s (the nodes' totals, rtask-info, and each "
                         "bundle's label_selector)", g->nbundles,
                         g->strategy == RT_PG_STRICT_PACK     ? " all on one node"
                         : g->strategy == RT_PG_STRICT_SPREAD ? " each on a node of its own"
                                                              : "");
}

int rt__sched_group_check(const rt__sched *s, const rt__group *g)
{
    rt__grant *where = rt__calloc(g->nbundles, sizeof *where);
    int rc = where ? run_trial(s, g, 1, where) : -1;
    rt__free(where);
    if (rc < 0)
        return rt__error(RT_ENOMEM, "rt_pg_create: no memory to try a placement");
    return rc == 0 ? never_placed(s, g) : 0;
}

/* The trial placed g: carve its bundles out of their nodes. */
static void carve(rt__sched *s, rt__group *g, const rt__grant *where)
{
    for (size_t k = 0; k < g->nbundles; k++) {
        rt__bundle *b = &g->bundle[k];
        rt__sched_node *n = s->node[where[k].node];
        b->node = where[k].node;
        b->grant = where[k];
        rt__pool_carve(&n->free, &b->res, &b->grant, &b->free);
        b->unheld = b->free;
        rt__pool_take(&n->free, &b->res, &b->grant);
        rt__pool_take(&n->unheld, &b->res, &b->grant);
    }
    g->state = RT__GROUP_PLACED;
}

void rt__sched_group_add(rt__sched *s, rt__group *g)
{
    g->state = RT__GROUP_UNPLACED;
    g->tried = s->gave - 1; /* new: worth a try */
    rt__idmap_add(&s->groups, &g->byid);
    rt__list_push_back(&s->unplaced, &g->link);
    rt__list_push_back(&s->all_groups, &g->all);
}

void rt__sched_place_groups(rt__sched *s, rt__link *placed)
{
    rt__group *next;
    for (rt__group *g = RT__FIRST(&s->unplaced, rt__group, link); g; g = next) {
        next = RT__NEXT(&s->unplaced, g, rt__group, link);
        if (g->tried == s->gave)
            continue; /* nothing came back since it did not fit */
        rt__grant *where = rt__calloc(g->nbundles, sizeof *where);
        if (!where)
            return; /* the next round tries again */
        if (run_trial(s, g, 0, where) == 1) {
            carve(s, g, where);
            rt__list_remove(&g->link);
            rt__list_push_back(placed, &g->link);
        } else {
            g->tried = s->gave;
        }
        rt__free(where);
    }
}

rt__group *rt__sched_group(const rt__sched *s, uint64_t id)
{
    rt__idnode *n = rt__idmap_find(&s->groups, id);
    return n ? RT__OWNER(n, rt__group, byid) : NULL;
}

int rt__group_admits(const rt__sched *s, const rt__group *g, const rt__res *req)
{
    if (req->bundle >= (int64_t)g->nbundles)
        return rt__error(RT_EINVAL, "bundle_index %lld: the placement group has %zu "
                         "bundles", (long long)req->bundle, g->nbundles);
    for (size_t k = 0; k < g->nbundles; k++)
        if ((req->bundle < 0 || (size_t)req->bundle == k) &&
            rt__res_feasible(&g->bundle[k].res, req, &s->names) == 0)
            return 0;
    return rt__error(RT_EINFEASIBLE, "no bundle of the placement group could ever hold the "
                     "request: it asks for more CPUs, GPUs or custom resources than %s "
                     "reserves", req->bundle < 0 ? "any bundle" : "the bundle");
}

/* ---- removing -------------------------------------------------------------- */

void rt__group_free(rt__group *g)
{
    rt__list_remove(&g->link);
    rt__list_remove(&g->all);
    rt__free(g);
}

void rt__sched_groups_sicken(rt__sched *s, int node, int i)
{
    for (rt__group *g = RT__FIRST(&s->all_groups, rt__group, all); g;
         g = RT__NEXT(&s->all_groups, g, rt__group, all))
        for (size_t k = 0; g->state == RT__GROUP_PLACED && k < g->nbundles; k++)
            if (g->bundle[k].node == node) {
                rt__instance_sicken(&g->bundle[k].free.gpus, i);
                rt__instance_sicken(&g->bundle[k].unheld.gpus, i);
            }
}

void rt__sched_group_remove(rt__sched *s, rt__group *g)
{
    rt__idmap_remove(&s->groups, &g->byid);
    rt__list_remove(&g->link);
    rt__list_remove(&g->all);
    if (g->state == RT__GROUP_PLACED) {
        for (size_t k = 0; k < g->nbundles; k++) {
            rt__bundle *b = &g->bundle[k];
            rt__pool_merge(&s->node[b->node]->free, &b->free);
            rt__pool_merge(&s->node[b->node]->unheld, &b->unheld);
        }
        s->gave++;
    }
    g->state = RT__GROUP_REMOVED;
    if (rt__list_empty(&g->classes))
        rt__group_free(g);
}

void rt__group_join(rt__group *g, rt__class *c)
{
    c->group = g;
    rt__list_push_back(&g->classes, &c->in_group);
}

void rt__group_leave(rt__class *c)
{
    rt__group *g = c->group;
    rt__list_remove(&c->in_group);
    if (rt__list_empty(&g->classes) && g->state == RT__GROUP_REMOVED)
        rt__group_free(g);
}

void rt__sched_groups_free(rt__sched *s)
{
    for (rt__idnode *n; s->groups.bucket && (n = rt__idmap_any(&s->groups));) {
        rt__group *g = RT__OWNER(n, rt__group, byid);
        rt__idmap_remove(&s->groups, n);
        rt__group_free(g);
    }
    rt__idmap_free(&s->groups);
}

/* groups.c - what rt_pg_create(), rt_pg_wait() and rt_pg_remove() ask of
 * the runtime.  A group's bundles are placed by the round holder (the
 * scheduler's books are its); its handle and whether it is placed
 * ("ready") are under the lock, for waiters. */
#include "calls.h"

#include "runtime.h"

#include "base/clock.h"
#include "base/error.h"
#include "sched/scheduler.h"

#include <stdio.h>
#include <string.h>

/* [L] Mark the groups the dispatcher placed as ready; 1 when there were
 * some (waiters must hear it). */
int rt__groups_publish(rt__link *placed)
{
    int any = !rt__list_empty(placed);
    while (!rt__list_empty(placed)) {
        rt__group *g = RT__OWNER(placed->next, rt__group, link);
        rt__list_remove(&g->link);
        g->ready = 1;
    }
    return any;
}

/* A group of n bundles by strategy in *out, checked against the nodes
 * (round held): 0, or an error with its message. */
static int new_group(rt__runtime *rt, const rt_bundle *bundles, size_t n, int strategy,
                     rt__group **out)
{
    const rt__sched *s = &rt->dispatch.sched;
    rt__group *g = rt__group_new(n);
    if (!g)
        return rt__error(RT_ENOMEM, "rt_pg_create: no memory for %zu bundles", n);
    g->strategy = strategy;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        rc = rt__request_bundle(s, &bundles[k], &g->bundle[k].res);
        if (rc < 0) {
            char why[256];
            snprintf(why, sizeof why, "%s", rt__last_error());
            rc = rt__error(rc, "rt_pg_create: bundle %zu: %s", k, why);
        }
        g->bundle[k].gpu_type = rt__sched_gpu_type(s, &g->bundle[k].res);
    }
    if (rc == 0)
        rc = rt__sched_group_check(s, g);
    if (rc < 0)
        rt__group_free(g);
    else
        *out = g;
    return rc;
}

/* What rt_pg_create() asks of the round. */
typedef struct group_order {
    const rt_bundle *bundles;
    size_t n;
    int strategy;
    rt_pg *pg;
} group_order;

/* The group checked, given its handle, and placed now if it fits. */
static int create_group(rt__runtime *rt, void *ctx)
{
    const group_order *o = ctx;
    rt__group *g = NULL;
    int rc = new_group(rt, o->bundles, o->n, o->strategy, &g);
    if (rc < 0)
        return rc;
    void *old;
    pthread_mutex_lock(&rt->lock);
    if (rt__table_add(&rt->groups, g, &g->byid.id, &old) < 0)
        rc = rt__error(RT_ENOMEM, "rt_pg_create: no memory for its handle");
    pthread_mutex_unlock(&rt->lock);
    if (rc < 0) {
        rt__group_free(g);
        return rc;
    }
    o->pg->id = g->byid.id;
    rt__dispatch_add_group(&rt->dispatch, g); /* the round places what waits for it next */
    pthread_mutex_lock(&rt->lock);
    rt__groups_publish(&rt->dispatch.out.placed);
    pthread_mutex_unlock(&rt->lock);
    return 0;
}

int rt__call_pg_create(rt__runtime *rt, const rt_bundle *bundles, size_t n, int strategy,
                       rt_pg *pg)
{
    group_order o = {bundles, n, strategy, pg};
    return rt__errand_ask(rt, "rt_pg_create", create_group, &o);
}

int rt__call_pg_wait(rt__runtime *rt, rt_pg pg, long timeout_ms)
{
    struct timespec deadline = rt__deadline_after(timeout_ms > 0 ? timeout_ms : 0);
    pthread_mutex_lock(&rt->lock);
    int rc;
    for (;;) {
        rt__group *g;
        if ((rc = rt__check_running(rt, "rt_pg_wait")) < 0)
            break;
        if (!(g = rt__table_find(&rt->groups, pg.id))) {
            rc = rt__error(RT_EBADREF, "rt_pg_wait: unknown or removed placement group");
            break;
        }
        if (g->ready)
            break;
        if (rt__wait_change(rt, timeout_ms, &deadline) == RT_ETIMEDOUT) {
            rc = rt__error(RT_ETIMEDOUT, "rt_pg_wait: not placed after %ld ms: the nodes "
                           "do not have what its bundles reserve free now", timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&rt->lock);
    return rc;
}

/* The group's handle gone (its waiters fail), then the group with its
 * tasks and actors; what it held may place other work in this round. */
static int remove_group(rt__runtime *rt, void *pg)
{
    uint64_t id = ((const rt_pg *)pg)->id;
    pthread_mutex_lock(&rt->lock);
    rt__group *g = rt__table_find(&rt->groups, id);
    if (g)
        rt__table_drop(&rt->groups, id);
    pthread_mutex_unlock(&rt->lock);
    if (!g)
        return rt__error(RT_EBADREF, "rt_pg_remove: unknown or removed placement group");
    rt__dispatch_remove_group(&rt->dispatch, g);
    return 0;
}

int rt__call_pg_remove(rt__runtime *rt, rt_pg pg)
{
    return rt__errand_ask(rt, "rt_pg_remove", remove_group, &pg);
}

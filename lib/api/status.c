/* status.c - rt_cluster_resources() and rt_available_resources(): the
 * scheduler's books, copied out for the application to read. */
#include "base/error.h"
#include "base/process.h"
#include "base/shm.h"
#include "runtime/runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Whether a node (-1: any node) offers custom resource i. */
static int offered(const rt__sched *s, int node, int i)
{
    for (int k = node < 0 ? 0 : node; k < (node < 0 ? s->nnodes : node + 1); k++)
        if (s->node[k]->total.custom[i] > 0)
            return 1;
    return 0;
}

/* One entry per resource the node offers, "CPU" and "GPU" first; amounts
 * from r (its totals, or what is free).  NULL out counts only. */
static size_t node_entries(const rt__sched *s, const rt__res *r, int node, rt_resource *out)
{
    size_t n = 0;
    for (int i = -2; i < s->names.count; i++) {
        if (i >= 0 && !offered(s, node, i))
            continue;
        if (out) {
            snprintf(out[n].name, sizeof out[n].name, "%s",
                     i == -2 ? "CPU" : i == -1 ? "GPU" : s->names.name[i]);
            out[n].amount = (double)(i == -2 ? r->cpu : i == -1 ? r->gpu : r->custom[i]) /
                            RT__UNIT;
            out[n].node = node;
        }
        n++;
    }
    return n;
}

/* The sum over nodes (node -1), then each node; NULL out counts only. */
static size_t entries(const rt__sched *s, int available, rt_resource *out)
{
    rt__res sum = {0};
    for (int k = 0; k < s->nnodes; k++)
        rt__res_give(&sum, available ? &s->node[k]->free.res : &s->node[k]->total);
    size_t n = node_entries(s, &sum, -1, out);
    for (int k = 0; k < s->nnodes; k++) {
        const rt__sched_node *node = s->node[k];
        n += node_entries(s, available ? &node->free.res : &node->total, k, out ? out + n : NULL);
    }
    return n;
}

static int resources(const char *call, int available, rt_resource **out, size_t *n)
{
    if (!out || !n)
        return rt__error(RT_EINVAL, "%s: NULL argument", call);
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "%s: not available inside a task", call);
    /* The books are the round holder's: hold it, so that they are whole. */
    rt__round_take();
    pthread_mutex_lock(&rt__rt.lock);
    int rc = rt__check_running(call);
    pthread_mutex_unlock(&rt__rt.lock);
    if (rc == 0) {
        const rt__sched *s = &rt__rt.dispatch.sched;
        size_t count = entries(s, available, NULL);
        rt_resource *list = rt__buf_alloc(count * sizeof *list);
        if (list) {
            entries(s, available, list);
            *out = list;
            *n = count;
        } else {
            rc = rt__error(RT_ENOMEM, "%s: no memory for %zu entries", call, count);
        }
    }
    rt__round_give();
    return rc;
}

RT_EXPORT int rt_timeline(const char *path)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_timeline: not available inside a task");
    rt__round_take(); /* the timeline is the round holder's */
    pthread_mutex_lock(&rt__rt.lock);
    int rc = rt__check_running("rt_timeline");
    pthread_mutex_unlock(&rt__rt.lock);
    if (rc == 0 && !rt__rt.recording)
        rc = rt__error(RT_EINVAL, "rt_timeline: nothing was recorded: set "
                                  "rt_config.timeline or RTASK_TIMELINE before rt_init()");
    if (rc == 0)
        rc = rt__timeline_write(&rt__rt.timeline, path);
    rt__round_give();
    return rc;
}

RT_EXPORT int rt_cluster_resources(rt_resource **out, size_t *n)
{
    return resources("rt_cluster_resources", 0, out, n);
}

RT_EXPORT int rt_available_resources(rt_resource **out, size_t *n)
{
    return resources("rt_available_resources", 1, out, n);
}

/* census.c - the scheduler's books, as rt_resource entries. */
#include "census.h"

#include <stdio.h>

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

/* What node k has: its totals, or what is free that can be used (an
 * unhealthy GPU's free part is not). */
static rt__res books(const rt__sched_node *node, int available)
{
    rt__res r = available ? node->free.res : node->total;
    for (int i = 0; available && i < node->free.gpus.count; i++)
        r.gpu -= rt__instance_sick(&node->free.gpus, i) ? node->free.gpus.free[i] : 0;
    return r;
}

size_t rt__sched_census(const rt__sched *s, int available, rt_resource *out)
{
    rt__res sum = {0};
    for (int k = 0; k < s->nnodes; k++) {
        rt__res r = books(s->node[k], available);
        rt__res_give(&sum, &r);
    }
    size_t n = node_entries(s, &sum, -1, out);
    for (int k = 0; k < s->nnodes; k++) {
        rt__res r = books(s->node[k], available);
        n += node_entries(s, &r, k, out ? out + n : NULL);
    }
    return n;
}

size_t rt__sched_sick_census(const rt__sched *s, rt_gpu_health *out)
{
    size_t n = 0;
    for (int k = 0; k < s->nnodes; k++) {
        const rt__sched_node *node = s->node[k];
        for (int i = 0; i < node->free.gpus.count; i++) {
            if (!rt__instance_sick(&node->free.gpus, i))
                continue;
            if (out) {
                rt_gpu_health *h = &out[n];
                h->node = k;
                char index[16];
                snprintf(h->id, sizeof h->id, "%s", rt__instance_name(&node->free.gpus, i, index));
                snprintf(h->bus_id, sizeof h->bus_id, "%s", node->gpu_bus[i]);
                snprintf(h->why, sizeof h->why, "%s", node->gpu_sick[i]);
            }
            n++;
        }
    }
    return n;
}

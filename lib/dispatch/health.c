/* health.c - what the GPUs' watcher sees, acted on: a GPU that fails is
 * taken out of service (its instances take nothing more, its leases end
 * so that their tasks retry and their actors restart on healthy GPUs, and
 * what no healthy GPU can ever hold fails), and the GPU memory that each
 * task's process holds is compared with the task's share. */
#include "dispatch.h"

#include "lives.h"

#include "node/output.h"

#include "base/clock.h"
#include "base/error.h"

#include <stdio.h>
#include <string.h>

static int node_index(const rt__dispatch *d, const rt__node *n)
{
    for (int k = 0; k < d->sched.nnodes; k++)
        if (d->node[k] == n)
            return k;
    return -1;
}

/* The instance of l's grant on the GPU at bus (of l's node), or -1. */
static int instance_on(const rt__dispatch *d, const rt__lease *l, const char *bus)
{
    const rt__sched_node *n = d->sched.node[l->grant.node];
    for (int i = 0; i < n->free.gpus.count; i++)
        if (rt__pick_has(&l->grant.gpu, i) && strcmp(n->gpu_bus[i], bus) == 0)
            return i;
    return -1;
}

/* A mark on the timeline, where one is kept. */
static void mark(rt__dispatch *d, int node, const char *bus, const char *what)
{
    if (!d->timeline)
        return;
    rt__span s = {.node = node, .mark = 1, .started_ns = rt__now_ns()};
    rt__timeline_add(d->timeline, &s, what, bus, NULL);
}

/* Every lease on the GPU ends: its worker is killed, so that its tasks
 * retry (their message, when none is left, names why) and its actor
 * restarts (or its epitaph names why). */
static void end_leases_on(rt__dispatch *d, int node, const char *bus)
{
    for (rt__class *c = rt__sched_first_class(&d->sched); c;
         c = rt__sched_next_class(&d->sched, c))
        for (rt__lease *l = rt__sched_first_lease(c); l; l = rt__sched_next_lease(c, l)) {
            int i = l->grant.node == node && l->worker ? instance_on(d, l, bus) : -1;
            if (i < 0 || l->gpu_sick)
                continue;
            l->gpu_sick = d->sched.node[node]->gpu_sick[i];
            if (c->owner)
                rt__actors_gpu_failed(c->owner, l->gpu_sick);
            rt__dispatch_node_of(d, l)->ops->kill(rt__dispatch_node_of(d, l), l->worker);
        }
}

static void unhealthy(rt__dispatch *d, int node, const char *bus, const char *why)
{
    int marked = rt__sched_gpu_unhealthy(&d->sched, node, bus, why);
    if (!marked)
        return;
    d->unhealthy += marked;
    rt__warn("the GPU at %s on node %d is unhealthy: %s; it gets no task from now on",
             bus, node, why);
    end_leases_on(d, node, bus);
    rt__health_fail_never(d);
}

/* Fail c's pending tasks (an actor's constructor among them): no healthy
 * GPU can ever hold them. */
static void fail_class(rt__dispatch *d, rt__class *c, const char *why)
{
    if (c->owner) {
        rt__actor *a = c->owner;
        snprintf(a->gpu_failed, sizeof a->gpu_failed, "%.95s", why);
        rt__actors_end(d, a, RT__DEATH_CRASHED);
        return;
    }
    for (rt__task *t; (t = rt__sched_pop(&d->sched, c));) {
        rt__task_fail(t, RT_EINFEASIBLE, "%s", why);
        rt__dispatch_finish(d, t, RT_EINFEASIBLE);
    }
    rt__sched_release_class(&d->sched, c);
}

void rt__health_fail_never(rt__dispatch *d)
{
    rt__class *next;
    for (rt__class *c = rt__sched_waiting(&d->sched); c; c = next) {
        next = rt__sched_next_waiting(&d->sched, c);
        if (c->leases || rt__sched_feasible(&d->sched, &c->req) == 0)
            continue;
        char why[320];
        snprintf(why, sizeof why, "%s", rt__last_error());
        fail_class(d, c, why);
    }
}

/* The share of the GPU at bus that l's grant holds, in bytes; 0 when
 * its memory is unknown. */
static uint64_t share_on(const rt__dispatch *d, const rt__lease *l, const char *bus)
{
    int i = instance_on(d, l, bus);
    const rt__instances *in = &d->sched.node[l->grant.node]->free.gpus;
    return i < 0 ? 0 : (uint64_t)((unsigned __int128)in->bytes[i] * l->grant.gpu.each / RT__UNIT);
}

static rt__gpu_kept *kept_by(rt__dispatch *d, uint32_t pid)
{
    for (size_t i = 0; i < d->nkept; i++)
        if (d->kept[i].pid == pid)
            return &d->kept[i];
    return NULL;
}

/* A worker with no task holds GPU memory.  What it holds the first time
 * is its own: a GPU library keeps its context for the process's life
 * (CUDA's: 518 MiB of an H100), which is no leak.  Say once that it keeps
 * more after a later task: memory that grows from task to task leaks. */
static void kept_between_tasks(rt__dispatch *d, int node, const rt__gpu_event *e)
{
    rt__gpu_kept *k = kept_by(d, e->pid);
    if (!k) {
        if (d->nkept < sizeof d->kept / sizeof *d->kept)
            d->kept[d->nkept++] = (rt__gpu_kept){e->pid, 0, e->code};
        return;
    }
    if (k->warned || e->code <= k->bytes)
        return;
    k->warned = 1;
    rt__warn("worker pid %u on node %d keeps %llu bytes of the memory of the GPU at %s after "
             "its task ended, %llu more than after its first: it is reused (max_calls = 0), "
             "and what its tasks leak stays with it, which a fresh worker per GPU task avoids",
             e->pid, node, (unsigned long long)e->code, e->bus_id,
             (unsigned long long)(e->code - k->bytes));
}

/* A process gone from a GPU: a worker's record goes (its pid may come
 * back as another's). */
static void forget_kept(rt__dispatch *d, uint32_t pid)
{
    rt__gpu_kept *k = kept_by(d, pid);
    if (k)
        *k = d->kept[--d->nkept];
}

/* A process's hold on a GPU's memory: the peak of its lease's task, a
 * warning when it is more than the task's share (and its end, with
 * rt_config.gpu_memory_kill), and a reused worker (not an actor's) whose
 * hold between tasks grows. */
static void usage(rt__dispatch *d, int node, const rt__gpu_event *e, rt__lease *l, int ours)
{
    if (!e->code)
        forget_kept(d, e->pid);
    if (!l || !l->inflight.head) {
        if (ours && e->code && !(l && l->cls->owner)) /* an actor's memory is its state */
            kept_between_tasks(d, node, e);
        return;
    }
    l->gpu_peak = e->code > l->gpu_peak ? e->code : l->gpu_peak;
    uint64_t share = share_on(d, l, e->bus_id);
    rt__task *t = l->inflight.head;
    if (!share || e->code <= share || l->gpu_over || l->cls->owner)
        return;
    l->gpu_over = 1;
    const char *name = rt__task_name((uint64_t)(uintptr_t)t->call.fn, rt__task_named(t));
    rt__warn("%s (handle %llu) holds %llu bytes of the memory of the GPU at %s on node %d, "
             "more than its share of %llu%s", name, (unsigned long long)t->call.id,
             (unsigned long long)e->code, e->bus_id, node, (unsigned long long)share,
             d->gpu_memory_kill ? ": killed (rt_config.gpu_memory_kill)" : "");
    if (d->gpu_memory_kill && !t->run.cancelling) {
        t->run.cancelling = RT__CANCEL_MEMORY;
        rt__dispatch_node_of(d, l)->ops->kill(rt__dispatch_node_of(d, l), l->worker);
    }
}

void rt__health_gpu(void *ctx, rt__node *from, const rt__gpu_event *e, void *owner, int ours)
{
    rt__dispatch *d = ctx;
    int node = node_index(d, from);
    if (node < 0)
        return;
    if (e->kind == RT__GPU_USAGE) {
        usage(d, node, e, owner, ours);
        return;
    }
    char why[96];
    rt__gpu_event_describe(e, why, sizeof why);
    mark(d, node, e->bus_id, why);
    if (rt__gpu_event_harmless(e))
        rt__warn("the GPU at %s on node %d reported %s: it stays in service", e->bus_id,
                 node, why);
    else
        unhealthy(d, node, e->bus_id, why);
}

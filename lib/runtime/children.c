/*
 * children.c - which tasks each running task submitted, for rt_cancel(),
 * which cancels them too, as Ray's recursive cancel does.
 *
 * A task's submissions reach the runtime through its proxy (api/proxy.c),
 * which records each child under its parent's handle.  The record lives
 * while the parent runs: once the parent is published done, its
 * children are forgotten (a cancel of a finished task does nothing).
 * Only tasks that submit pay for this; a child costs one small record.
 */
#include "calls.h"

#include "runtime.h"

#include "base/alloc.h"
#include "base/list.h"

typedef struct child {
    rt__idnode byparent; /* keyed by the parent's handle */
    uint64_t task;
} child;

void rt__call_child(rt__runtime *rt, uint64_t parent, rt_ref task)
{
    child *c = rt__malloc(sizeof *c); /* outside the lock */
    int cancel = -1; /* or the RT_CANCEL_* flags its parent's cancel had */
    pthread_mutex_lock(&rt->lock);
    rt__task *p = rt->state == RT__RUNNING ? rt__objects_running(rt, parent) : NULL;
    if (p && p->obj.cancelling)
        cancel = p->obj.cancel_kills ? RT_CANCEL_FORCE : 0; /* it came too late */
    else if (p && c && p->obj.state != RT__TASK_DONE) {
        *c = (child){.byparent = {.id = parent}, .task = task.id};
        rt__idmap_add(&rt->children, &c->byparent);
        p->obj.has_children = 1;
        c = NULL;
    }
    pthread_mutex_unlock(&rt->lock);
    rt__free(c); /* without one, a cancel of the parent misses this child */
    if (cancel >= 0)
        rt__call_cancel_child(rt, task.id, cancel);
}

int rt__call_runs(rt__runtime *rt, uint64_t task)
{
    pthread_mutex_lock(&rt->lock);
    rt__task *t = rt->state == RT__RUNNING ? rt__objects_running(rt, task) : NULL;
    int runs = t && !t->obj.cancelling;
    pthread_mutex_unlock(&rt->lock);
    return runs;
}

size_t rt__call_children(rt__runtime *rt, uint64_t parent, uint64_t *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&rt->lock);
    for (rt__idnode *k = rt->children.nbuckets ? rt__idmap_find(&rt->children, parent) : NULL;
         k; k = rt__idmap_next(k), n++)
        if (n < max)
            out[n] = RT__OWNER(k, child, byparent)->task;
    pthread_mutex_unlock(&rt->lock);
    return n;
}

void rt__children_forget_locked(rt__runtime *rt, rt__task *parent)
{
    for (rt__idnode *k; (k = rt__idmap_find(&rt->children, parent->call.id));) {
        rt__idmap_remove(&rt->children, k);
        rt__free(RT__OWNER(k, child, byparent));
    }
    parent->obj.has_children = 0;
}

void rt__children_free(rt__runtime *rt)
{
    for (rt__idnode *k; rt->children.nbuckets && (k = rt__idmap_any(&rt->children));) {
        rt__idmap_remove(&rt->children, k);
        rt__free(RT__OWNER(k, child, byparent));
    }
    rt__idmap_free(&rt->children);
}

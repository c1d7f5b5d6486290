/* timeouts.c - the tasks in flight that have a time limit. */
#include "timeouts.h"

#include "base/alloc.h"

int rt__timeouts_add(rt__timeouts *q, rt__task *t, void *lease)
{
    rt__timed *v = rt__grow(q->v, &q->cap, q->n, sizeof *v, 16);
    if (!v)
        return -1;
    q->v = v;
    q->v[q->n] = (rt__timed){t, lease};
    t->call.more->timed_at = (uint32_t)++q->n; /* a time limit has its more */
    return 0;
}

void rt__timeouts_remove(rt__timeouts *q, rt__task *t)
{
    if (!t->call.more || !t->call.more->timed_at)
        return;
    size_t i = t->call.more->timed_at - 1;
    q->v[i] = q->v[--q->n]; /* the last takes its place */
    q->v[i].task->call.more->timed_at = (uint32_t)(i + 1);
    t->call.more->timed_at = 0;
}

void rt__timeouts_free(rt__timeouts *q)
{
    rt__free(q->v);
    *q = (rt__timeouts){0};
}

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
    t->run.timed_at = (uint32_t)++q->n;
    return 0;
}

void rt__timeouts_remove(rt__timeouts *q, rt__task *t)
{
    if (!t->run.timed_at)
        return;
    size_t i = t->run.timed_at - 1;
    q->v[i] = q->v[--q->n]; /* the last takes its place */
    q->v[i].task->run.timed_at = (uint32_t)(i + 1);
    t->run.timed_at = 0;
}

void rt__timeouts_free(rt__timeouts *q)
{
    rt__free(q->v);
    *q = (rt__timeouts){0};
}

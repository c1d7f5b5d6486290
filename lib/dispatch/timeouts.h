/*
 * timeouts.h - the tasks in flight that have a time limit
 * (rt_opts.timeout_ms), each with the lease it runs on.
 *
 * The dispatcher adds a task when it sends it and removes it when it
 * leaves its worker (answered, or recalled from a lost one); each round
 * it looks at those that run.  Removal is O(1): a task knows its place.
 */
#ifndef RT_TIMEOUTS_H
#define RT_TIMEOUTS_H

#include "node/task.h"

#include <stddef.h>

typedef struct rt__timed {
    rt__task *task;
    void *lease;  /* the dispatcher's rt__lease */
} rt__timed;

typedef struct rt__timeouts {
    rt__timed *v;
    size_t n, cap;
} rt__timeouts;

/* 0, or -1 when out of memory (the task then runs without its limit,
 * which the caller says). */
int rt__timeouts_add(rt__timeouts *q, rt__task *t, void *lease);
/* Nothing when t is not there. */
void rt__timeouts_remove(rt__timeouts *q, rt__task *t);
void rt__timeouts_free(rt__timeouts *q);

#endif

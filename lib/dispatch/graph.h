/*
 * graph.h - the task graph: tasks that wait for the objects they take.
 *
 * A task whose arguments include objects not yet ended gets a wait
 * record (rt__deps) with one edge per such object; each edge hangs on the
 * object's record (its waiters).  When an object's task ends, its edges
 * are visited: a failure fails the waiting task at once with
 * RT_EDEPENDENCY (it never runs); the last object that ends well makes
 * it ready, and the dispatcher files it like a new task.  Failure flows
 * along the graph: a task failed so ends, and its own waiters are visited
 * in turn, without recursion, so that a chain of any length costs no
 * stack.  At the end, every task that runs or waits to run fails, and
 * the tasks that wait for objects fail with them, along the graph.
 * Everything here is the round holder's.
 *
 * The graph knows tasks and objects, not where tasks go: what it makes
 * ready or fails it hands to its owner (the dispatcher) through the
 * calls below, so that it depends on nothing above it.
 */
#ifndef RT_GRAPH_H
#define RT_GRAPH_H

#include "node/task.h"

#include <stdint.h>

typedef struct rt__edge {
    struct rt__edge *next;   /* the object's next waiter, or the next to visit */
    struct rt__deps *deps;
    rt__task *object;        /* while on the list to visit: the object that ended */
} rt__edge;

typedef struct rt__deps {
    rt__task *task;          /* the task that waits; NULL once it ended early
                                (a failure, a cancel): the edges still count */
    uint32_t left;           /* edges whose object has not ended */
    rt__edge edge[];
} rt__deps;

typedef struct rt__graph {
    rt__edge *visit;         /* edges whose object ended, to visit */
    int visiting;            /* a visit is under way: leave the rest to it */
    /* The owner's: file t (ready, or failed: its status set), or t, which
     * waits, early (board.h); t, filed early, failed along the graph. */
    void (*file)(void *owner, rt__task *t);
    void (*file_early)(void *owner, rt__task *t);
    void (*early_failed)(void *owner, rt__task *t);
    void *owner;
} rt__graph;

/* t takes objects: 1 when it waits for some (the graph files it once
 * they end), 0 when all ended well, -1 when one failed or without memory
 * (t's status and message set; the caller ends it).  p ended: the tasks
 * that wait for it move on.  t, which waits, ends otherwise (a cancel,
 * its actor's death): it waits no more. */
int rt__graph_wait(rt__task *t);
void rt__graph_ended(rt__graph *g, rt__task *p);
void rt__graph_detach(rt__task *t);
/* Early (board.h), on one node alone: t, which waits, is filed now when
 * every object it waits for is in flight with a board entry (1), else
 * left (0); p was sent with one: the tasks that wait for it are tried.
 * t keeps waiting meanwhile, so that a failure still reaches it. */
int rt__graph_try_early(rt__graph *g, rt__task *t);
void rt__graph_sent(rt__graph *g, const rt__task *p);

#endif

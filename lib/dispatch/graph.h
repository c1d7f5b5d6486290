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
} rt__graph;

#endif

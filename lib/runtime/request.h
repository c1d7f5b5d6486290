/*
 * request.h - what a task's or an actor's options ask for, checked.
 *
 * Options are resolved in two steps: rt__request_resolve() checks them
 * alone (amounts, counts, names), before anything is allocated; then,
 * under the runtime's lock, rt__request_place() matches custom resource
 * names with the runtime's and the label selector with the nodes' labels,
 * refuses what no node could ever meet, and writes the request into the
 * task record.
 */
#ifndef RT_REQUEST_H
#define RT_REQUEST_H

#include "rtask.h"
#include "devices/resources.h"
#include "node/task.h"
#include "sched/scheduler.h"

typedef struct rt__request {
    rt__res res;
    int max_calls;
    int max_retries;
    int max_restarts;
    int max_task_retries;
    int max_concurrency;
    uint32_t timeout_ms;
    int retry_exceptions;
    const char *selector; /* the label selector (checked), or NULL: any node */
    const char *env;      /* env_vars (checked), or NULL: none */
    int named;            /* actors: opts.name was given, the actor's name */
    int get_if_exists;    /* actors: a live one of that name is taken */
    int detached;         /* actors a task creates: outlive it */
    int num_returns;      /* tasks: results, each an object (1 to RT_RETURNS_MAX) */
    int nondeterministic; /* tasks: never taken from a checkpoint */
    int nitems;
    rt__item items[RT__CUSTOM_MAX];
} rt__request;

/* How many rt__need entries a task record of r needs room for. */
int rt__request_needs(const rt__request *r);
/* Resolve options (NULL: defaults) for a task, or for an actor, whose
 * defaults differ.  0, or RT_EINVAL with a message. */
int rt__request_resolve(const rt_opts *opts, int actor, rt__request *r);
/* Match r's custom resources with the scheduler's names, check that some
 * node (or, in a placement group, the group's bundle: group, found by
 * the caller) could meet it, and write it into t (made with room for
 * rt__request_needs()).  0, or RT_EINFEASIBLE with a message. */
int rt__request_place(const rt__sched *s, const struct rt__group *group, rt__request *r,
                      rt__task *t);
/* What a bundle of a placement group reserves, checked and matched with
 * the scheduler's names and the nodes' labels (.nodes); 0, or
 * RT_EINVAL / RT_EINFEASIBLE with a message. */
int rt__request_bundle(const rt__sched *s, const rt_bundle *b, rt__res *res);
/* Write r, placed already, into another record t: 0, or RT_ENOMEM
 * (a time limit needs t's rt__more). */
int rt__request_write(const rt__sched *s, const rt__request *r, rt__task *t);

#endif

/*
 * sched.h - scheduling classes, worker leases and dispatch.
 *
 * Tasks with the same resource request and worker-reuse rule form a
 * class.  A class gets a lease: its request is taken from the free
 * resources and a worker is bound to it; the class then pipelines its
 * tasks to that worker, up to a window, without asking again.  A lease
 * ends when its worker has nothing in flight and the class nothing
 * pending, or when the worker reaches max_calls.  All of it runs on the
 * runtime thread, under rt__rt.lock.
 */
#ifndef RT_SCHED_H
#define RT_SCHED_H

#include "instance.h"
#include "node.h"
#include "resources.h"
#include "task.h"

struct rt__worker;
struct rt__actor;

typedef struct rt__class {
    struct rt__class *next;
    rt__res req;
    int max_calls;           /* 0 = unlimited */
    struct rt__actor *actor; /* the actor whose class this is, or NULL */
    rt__task *head, *tail;   /* pending, in submission order */
    size_t pending;
    size_t inflight;         /* sent to workers, result not yet back */
    size_t leases;
    double run_us;           /* recent run time of its tasks (moving average) */
    int timed;               /* run_us holds at least one measurement */
} rt__class;

typedef struct rt__sched {
    rt__class *classes;
    rt__names names;         /* immutable after init */
    rt__res total;           /* immutable after init */
    rt__res free;
    rt__instances gpus;      /* GPU instances and their ids */
    rt__instances neuron;    /* neuron core instances, if any */
    int neuron_index;        /* of "neuron_cores" in names, or -1 */
    int bind_cpus;           /* tell workers the CPUs near their GPUs */
    char gpu_cpus[RT__INSTANCE_MAX][RT__CPUS_LEN]; /* of each GPU; "" = unknown */
    rt__class *blocked;      /* set by rt__sched_decide() */
    uint64_t next_seq;       /* [L] */
    size_t finished;         /* tasks finished since the last look */
} rt__sched;

/* Schedule on what node offers: its names, totals, GPU ids and CPUs. */
void rt__sched_init(rt__sched *s, const rt__node *node);
/* The class of a request (created on first use; kept until shutdown), or
 * NULL when out of memory.  rt_remote() files each task under one. */
rt__class *rt__sched_class(rt__sched *s, const rt__res *req, int max_calls);
/* An actor's own class: one lease, held until its process ends. */
rt__class *rt__sched_actor_class(rt__sched *s, const rt__res *req,
                                 struct rt__actor *actor);
/* Unlink and free a class that has no task and no lease. */
void rt__sched_drop_class(rt__sched *s, rt__class *c);
/* A class's first pending task, taken off its queue; NULL when none. */
rt__task *rt__sched_pop(rt__class *c);
/* Put a task back at the head of its class's queue. */
void rt__sched_requeue(rt__task *t);
/* Record a task's outcome and count it for the waiters. */
void rt__sched_finish(rt__sched *s, rt__task *t, int status);
/* Queue tasks that rt_remote() handed over, in their order. */
void rt__sched_absorb(rt__task *list);
/* One scheduling decision: the class that gets the next lease and the
 * instances it would take, or NULL when none can go now.  Classes are
 * looked at oldest pending task first.  A class that holds no lease and
 * does not fit blocks every younger class (it is left in s->blocked), so
 * a large request is never starved by a stream of smaller ones. */
rt__class *rt__sched_decide(rt__sched *s, rt__grant *g);
/* Take or give back what a lease of c holds. */
void rt__sched_take(rt__sched *s, rt__class *c, const rt__grant *g);
void rt__sched_give(rt__sched *s, rt__class *c, const rt__grant *g);
/* Grant leases and fill workers' pipelines. */
void rt__sched_run(rt__sched *s);
/* A worker answered: take its results. */
void rt__sched_results(rt__sched *s, struct rt__worker *w);
/* A worker is gone: retry or fail what it held, end its lease. */
void rt__sched_worker_lost(rt__sched *s, struct rt__worker *w);
/* Fail everything still queued with RT_ESHUTDOWN and free the classes. */
void rt__sched_free(rt__sched *s);

#endif

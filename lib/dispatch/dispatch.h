/*
 * dispatch.h - the round holder's work: carry out the scheduler's
 * decisions on the nodes, and turn what the nodes report into outcomes.
 *
 * Tasks arrive from the public calls (absorbed in submission order), are
 * filed under their class, leased out and sent; answers become results,
 * lost workers become retries or failures, and actors are created,
 * restarted, killed and buried.  What the application must hear of
 * (finished tasks, dead actors, placed groups...) collects in the
 * outbox, which the round takes whole under the runtime's lock
 * (rt__dispatch_take_outbox()); nothing here takes the lock, and nothing
 * here is touched by another thread.
 *
 * The retry rule: a task that started in a worker that was then lost
 * spends a retry, whether it finished or not (its effects may have
 * happened), and fails with RT_EWORKERDIED when none is left; a task that
 * never started is sent again for free.  Actor calls are never re-run.
 *
 * Plain data the runtime reads besides: failed, retry_soon and check_ms,
 * to know whether to stop and how long it may sleep.
 */
#ifndef RT_DISPATCH_H
#define RT_DISPATCH_H

#include "actor.h"
#include "graph.h"
#include "timeline.h"
#include "timeouts.h"
#include "node/node.h"
#include "node/task.h"
#include "sched/offer.h"
#include "sched/scheduler.h"

/* An object asked of the node that holds it; one that came. */
typedef struct rt__pull {
    uint64_t object;
    unsigned run;
    int holder;
} rt__pull;
typedef struct rt__arrival {
    uint64_t object;
    void *bytes;       /* rt__buf_free()-able; NULL when not found */
    size_t len;
    int found;
} rt__arrival;

/* A reused GPU worker's hold on a GPU between tasks: the first seen (its
 * own: a CUDA context), and whether it was said to grow. */
typedef struct rt__gpu_kept {
    uint32_t pid;
    int warned;
    uint64_t bytes;
} rt__gpu_kept;

/* What a round's work leaves for the runtime to publish under its lock. */
typedef struct rt__outbox {
    rt__tasks done;                /* finished */
    rt__actor *declared;           /* dying: to be declared dead (next_declared) */
    rt__actor *buried;             /* dead for good: their handles to become
                                      epitaphs (next_kill) */
    rt__task **resumed;            /* waiting tasks that have their CPUs back:
                                      their callers go on */
    size_t nresumed, cap_resumed;
    rt__link placed;               /* placement groups just placed */
    rt__arrival *arrived;          /* objects pulled from their holders that
                                      came (the bytes nobody takes are freed
                                      with the outbox) */
    size_t narrived, cap_arrived;
} rt__outbox;

typedef struct rt__dispatch {
    rt__sched sched;
    rt__node **node;               /* node i of the scheduler */
    uint64_t *node_bytes;          /* per node, all 0 between uses: the
                                      bytes a task's objects have there
                                      (remote.c) */
    rt__outbox out;                /* for the runtime to publish */
    rt__link actors;               /* every actor record */
    size_t running_actors;         /* actor processes that may still run */
    const char *failed;            /* why a node failed, or NULL */
    int retry_soon;                /* a lease failed for lack of memory or
                                      descriptors: run again soon */
    rt__timeouts timeouts;         /* tasks in flight with a time limit */
    int check_ms;                  /* when to look again: a task may pass
                                      its limit, a resume waits, a queue
                                      may be taken back; -1: never */
    uint64_t steal_at_ns;          /* when a worker with tasks queued
                                      behind its running one counts as
                                      stalled, noted when another of its
                                      class ran out of work; 0: none */
    rt__timeline *timeline;        /* where ended tasks are recorded, or
                                      NULL: not recording */
    int answers_soon;              /* this round heard a quick task while
                                      more are under way */
    uint64_t timeline_ns;          /* the time its records of this round
                                      say (0: not read yet) */
    rt__graph graph;               /* tasks waiting for objects */
    int filed_early;               /* tasks filed early (graph.c) in this
                                      pass of the round */
    rt__task **resuming;           /* tasks whose wait ended, for their CPUs
                                      back, in order (before any lease) */
    size_t nresuming, cap_resuming;
    uint64_t resume_since_ns;      /* when the first of them began to wait
                                      (or one last went on); 0: none */
    rt__pull *pulls;               /* objects asked of their holders */
    size_t npulls, cap_pulls;
    rt__tasks parked;              /* tasks that wait for objects to come
                                      here (remote.c) */
    int unhealthy;                 /* GPUs (instances) found unhealthy
                                      (health.c) */
    int gpu_memory_kill;           /* kill a task that holds more GPU memory
                                      than its share (rt_config) */
    rt__gpu_kept kept[64];         /* what reused GPU workers keep
                                      between tasks (health.c) */
    size_t nkept;
} rt__dispatch;

/* Start with no task and no actor. */
void rt__dispatch_init(rt__dispatch *d);
/* Move what d's outbox holds into *into, in one call: d's is empty then.
 * Whether an outbox holds anything (the round then runs again at once);
 * free one that was taken, with the bytes of the objects nobody took. */
void rt__dispatch_take_outbox(rt__dispatch *d, rt__outbox *into);
int rt__outbox_any(const rt__outbox *o);
void rt__outbox_free(rt__outbox *o);
/* The events a node reports to d. */
rt__node_events rt__dispatch_events(rt__dispatch *d);
/* A node joins: the scheduler counts what it offers (as its next node),
 * and d hears it.  0, or -1 without room or memory. */
int rt__dispatch_add_node(rt__dispatch *d, const rt__offer *offer, rt__node *n);
/* File tasks the public calls submitted, in their order. */
void rt__dispatch_absorb(rt__dispatch *d, rt__tasks *incoming);
/* A task that another rank placed itself ended (its id, function, node
 * and lane in *s): into the timeline, when one is kept, as ending now,
 * after waited_us and ran_us. */
void rt__dispatch_record_elsewhere(rt__dispatch *d, rt__span *s, uint64_t waited_us,
                                   uint64_t ran_us);
/* Act on rt_actor_kill(): calls not yet sent fail, the actor's process
 * finishes what it has, runs its destructor and exits. */
void rt__dispatch_kill(rt__dispatch *d, rt__actor *a, int restart);
/* Where t is (the state API): 1 when a worker has it, with its node and,
 * on this machine's node, the worker's pid (else 0, as while it is not
 * known yet); 0 while it waits.  Where a's process is, as for a task. */
int rt__dispatch_where(const rt__dispatch *d, const rt__task *t, int *node, uint64_t *pid);
int rt__dispatch_actor_where(const rt__dispatch *d, const rt__actor *a, int *node,
                             uint64_t *pid);
/* Cancel t as its cancelling says (RT__CANCEL_*): a queued task fails at
 * once with RT_ECANCELLED; one in flight fails so when its worker answers
 * (the result dropped) or, killed for RT__CANCEL_KILL, is lost.  A task
 * already finished is left alone. */
void rt__dispatch_cancel(rt__dispatch *d, rt__task *t);
/* Task t, running, waits for other tasks (lend 1), awaited among them (or
 * NULL), or goes on (0): its CPUs are lent meanwhile, awaited goes first
 * in line, and what was queued behind t is taken back and goes to other
 * workers (sched.h, node.h); nothing when t no longer runs or its node
 * never lends, only the CPUs when its node makes no room for it (too
 * many wait already).  To go on, t takes its CPUs back before any new lease
 * takes them (it waits for them in `resuming`); t is in the outbox's
 * `resumed` once it has them, for the runtime to tell its caller
 * (rt__call_lend()).  A
 * run of t that is over (run is not t's) is not listened to: its worker
 * died, and t runs again, with CPUs of its own. */
void rt__dispatch_lend(rt__dispatch *d, rt__task *t, int lend, rt__task *awaited,
                       unsigned run);
/* As rt__dispatch_lend() with lend 1, for a task whose caller may run
 * awaited itself: when awaited is queued in t's own class and can run
 * in t's worker (one argument of bytes, no time limit, max_calls not
 * spent), it is given to t instead: t's worker runs it inside its wait
 * (rt__sched_sent_inside()), nothing is lent, and 1 is returned for the
 * runtime to tell the caller, who must be in that worker (lane: its
 * node's lane()).  Else 0, and t lends as usual. */
int rt__dispatch_lend_or_give(rt__dispatch *d, rt__task *t, rt__task *awaited, unsigned run,
                              uint64_t lane);
/* A placement group (checked, with its handle) is to be placed: now if
 * it fits (onto `placed`), else once it does (rt__dispatch_run()). */
void rt__dispatch_add_group(rt__dispatch *d, struct rt__group *g);
/* Remove a group: its queued tasks fail with RT_ECANCELLED, those that
 * run are killed (and fail so), its actors end as rt_actor_kill() ends
 * them (their calls fail with RT_EACTORDIED); what it reserved goes back
 * to the nodes, what its leases hold as they end. */
void rt__dispatch_remove_group(rt__dispatch *d, struct rt__group *g);
/* Objects that other ranks hold (remote.c).  Ask holder for the bytes
 * of object (made by run `run`) once: they come into `arrived`, for the
 * runtime to give them to the object's record (rt_get() reads them
 * here).  The record of object among the parked tasks' arguments, or
 * NULL (the runtime finds the others by handle).  After arrivals are
 * given: parked tasks and held actor calls whose objects are all here
 * go on.  Records freed with holders (rt__task_forgotten()): their
 * holders drop them. */
void rt__dispatch_pull(rt__dispatch *d, int holder, uint64_t object, unsigned run);
rt__task *rt__dispatch_parked_object(const rt__dispatch *d, uint64_t object);
void rt__dispatch_unpark(rt__dispatch *d);
void rt__dispatch_forget(rt__dispatch *d, const rt__forgotten *f, size_t n);
/* Free the records of actors that were published as dead. */
void rt__dispatch_free_actors(rt__actor *published);
/* Grant leases and send tasks, then flush the nodes (caller_waits: as
 * node.h's flush). */
void rt__dispatch_run(rt__dispatch *d, int caller_waits);
/* Stopping: tell every actor to finish so that its destructor runs;
 * returns how many processes may still be running. */
size_t rt__dispatch_stop_actors(rt__dispatch *d);
/* Wait on the calling thread for t's answer when t is in flight, first
 * on its worker, and quick to run (or not timed yet): 1 when its worker
 * answered (t may be among the finished now), 0 when not worth it or
 * nothing came. */
int rt__dispatch_await(rt__dispatch *d, rt__task *t);
/* Whether the last round heard a quick task's answer while more are
 * under way (the wait after it may linger); the question clears it. */
int rt__dispatch_answers_soon(rt__dispatch *d);
/* Send what is queued on every node: the end of a round. */
void rt__dispatch_flush(rt__dispatch *d, int caller_waits);
/* The end: fail every task still held with RT_ESHUTDOWN (into done),
 * free the actors and the scheduler. */
void rt__dispatch_free(rt__dispatch *d, const char *why);

#endif

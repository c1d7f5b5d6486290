/*
 * actor.h - actors: a worker process with state, and resources held for
 * its life.
 *
 * An actor is a scheduling class of its own with one lease.  Its first
 * task is the constructor (RT__KIND_CREATE), then come its method calls
 * (RT__KIND_CALL), which the lease's single worker runs one at a time in
 * order.  The lease never ends while the actor lives; it ends when the
 * process exits, killed or dead, and then the resources go back.  A dead
 * actor with restarts left gets its constructor queued again, ahead of
 * the calls that wait.  Records live until rt_shutdown() [L].
 */
#ifndef RT_ACTOR_H
#define RT_ACTOR_H

#include "sched.h"
#include "task.h"

struct rt__worker;

/* Why an actor's calls fail (rt__task.death). */
typedef enum rt__death {
    RT__DEATH_NONE,
    RT__DEATH_KILLED,   /* rt_actor_kill() */
    RT__DEATH_CRASHED,  /* its process died; no restart left */
    RT__DEATH_CTOR      /* its constructor returned non-zero */
} rt__death;

typedef struct rt__actor {
    struct rt__actor *next;
    uint64_t id;
    rt__class *cls;          /* its own class: request, calls, lease */
    rt__task *create;        /* the constructor call, kept for restarts */
    rt_actor_fini_fn fini;
    int restarts_left;
    int kill_requested;      /* rt_actor_kill() was called */
    int killed;              /* the runtime thread acted on it */
    rt__death death;         /* RT__DEATH_NONE while it may run */
    int pid;                 /* of its process, once it ran */
    int wait_status;         /* how its process ended */
    int ctor_status;         /* what a failed constructor returned */
    char name[];
} rt__actor;

/* The runtime thread's hooks, under the lock. */
/* The constructor answered: the actor lives, or is dead for good. */
void rt__actor_created(rt__sched *s, rt__task *create, int status, int pid);
/* The actor's process is gone: fail what it held, restart or bury it. */
void rt__actor_lost(rt__sched *s, struct rt__worker *w);
/* Act on rt_actor_kill() calls. */
void rt__actor_reap_kills(rt__sched *s);
/* rt_shutdown(): stop sending to actors so their destructors run; 1 while
 * an actor's process is still there. */
int rt__actors_stopping(void);
/* Free every record. */
void rt__actors_free(void);

/* The error and message of a call that failed because its actor died. */
int rt__actor_death_error(rt__death death, const char *name, int pid,
                          int wait_status, int ctor_status);

#endif

/*
 * actor.h - the actor record, shared by the public calls (actor.c) and
 * the round's holder (dispatch/actors.c).
 *
 * An actor is a scheduling class of its own with one lease, held while
 * its process lives.  Its constructor is a task record it keeps, sent
 * first and again on a restart; its method calls are tasks filed under
 * its class.  Application threads find it through the actor table, under
 * the lock; they read only what is fixed at creation and the fields
 * marked [L].  Everything else is the round holder's.
 *
 * When the actor will run no more and nothing refers to it, the runtime
 * thread replaces it in the table with its epitaph (the error text that
 * calls to it get from then on) and frees the record, so dead actors cost
 * a few bytes, until their slot is reused.
 */
#ifndef RT_ACTOR_H
#define RT_ACTOR_H

#include "rtask.h"
#include "base/list.h"
#include "node/task.h"
#include "sched/scheduler.h"

#include <stdint.h>

/* What the actor table holds: a live actor or an epitaph, told apart by
 * their first field. */
typedef struct rt__epitaph {
    uint32_t dead; /* 1 */
    char text[];
} rt__epitaph;

/* Why an actor will run no more. */
typedef enum rt__death {
    RT__DEATH_NONE,
    RT__DEATH_KILLED,  /* rt_actor_kill() */
    RT__DEATH_CRASHED, /* its process died; no restart left */
    RT__DEATH_CTOR,    /* its constructor returned non-zero */
    RT__DEATH_NOSTART, /* its process could not be started */
    RT__DEATH_GROUP    /* its placement group was removed */
} rt__death;

typedef struct rt__actor {
    uint32_t dead;               /* 0: a live actor (see rt__epitaph) */
    uint64_t handle;             /* fixed: its rt_actor id */
    rt_actor_fini_fn fini;       /* fixed */
    int kill_requested;          /* [L] rt_actor_kill() was called */
    int declared_dead;           /* [L] it will run no more: calls fail with epitaph */
    struct rt__actor *next_kill; /* [L] on the runtime's list of kills */
    struct rt__actor *next_declared; /* on the dispatcher's list to declare */
    rt__link link;               /* on the dispatcher's list of actors */
    rt__idnode byname;           /* [L] in the runtime's named actors, keyed
                                    by a hash of name, while named */
    int named;                   /* [L] so: it has name until killed or dead */
    rt__class *cls;              /* its class; NULL once discarded */
    rt__task *create;            /* the constructor's record */
    rt__tasks held;              /* calls waiting for objects, and the
                                    calls after them, in order */
    int restarts_left;
    int task_retries;            /* fixed: max_task_retries of each call */
    int concurrency;             /* fixed: methods it may run at once */
    int restart_requested;       /* [L] rt_actor_restart() was called */
    int kill_queued;             /* [L] on the runtime's list of kills */
    int restarting;              /* the kill taken is a restart's */
    int killed;                  /* the kill was acted on */
    rt__death death;             /* RT__DEATH_NONE while it may run */
    int pid;                     /* of its last process */
    int wait_status;             /* how that process ended */
    int ctor_status;             /* what a failed constructor returned, or
                                    the errno of a process that could not start */
    int buried;                  /* on the dispatcher's list to publish */
    uint32_t timeline_texts;     /* its name and handle in the timeline
                                    (rt__timeline_actor); 0 until a run of
                                    its is recorded */
    char gpu_failed[96];         /* why its process was killed: its GPU
                                    became unhealthy; "" = not so */
    char *epitaph;               /* the error text its calls get, once dead */
    rt__epitaph *tombstone;      /* a copy for the table, once dead */
    char name[];                 /* fixed */
} rt__actor;

#endif

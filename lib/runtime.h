/*
 * runtime.h - the runtime's state, all in one struct, and its thread.
 *
 * The lock discipline, written once:
 * - `lock` guards the fields marked [L] here and in the task and actor
 *   records.  Application threads take it in every public call.  The
 *   runtime thread takes it once per round of its loop to exchange with
 *   them: it takes what was submitted and the kills asked for, and
 *   publishes the tasks that finished and the actors that died.
 * - The lock is never held across a system call or a large copy: records
 *   and arguments are made before it is taken, results are copied or
 *   mapped by the runtime thread outside it, and records are freed after
 *   it is released.
 * - Everything not marked [L] belongs to the runtime thread while it
 *   runs, and to rt_init() and rt_shutdown() (one at a time, under
 *   `lifecycle`) while it does not.  What rt_init() fixes (the scheduler's
 *   resource names and node totals) any thread may read while running.
 *
 * The layers, top to bottom: the public calls (remote.c, actor.c) and
 * the handle tables; the runtime thread (here) and the dispatcher
 * (dispatch.h), which carries out the scheduler's decisions (scheduler.h)
 * on the nodes (node.h); the local node (local.h) with its fork server,
 * worker processes, protocol (proto.h) and channels (wire.h).
 */
#ifndef RT_RUNTIME_H
#define RT_RUNTIME_H

#include "actor.h"
#include "dispatch.h"
#include "local.h"
#include "loop.h"
#include "table.h"
#include "task.h"

#include <pthread.h>

typedef enum rt__state {
    RT__STOPPED,
    RT__RUNNING,
    RT__STOPPING
} rt__state;

typedef struct rt__runtime {
    pthread_mutex_t lock;
    pthread_mutex_t lifecycle;   /* rt_init() and rt_shutdown() one at a time */
    pthread_cond_t changed;      /* [L] tasks finished, or the state changed */
    rt__state state;             /* [L] */
    int was_shut_down;           /* [L] explains a call after rt_shutdown() */
    const char *stop_reason;     /* [L] why it stopped by itself, or NULL */
    int waiters;                 /* [L] threads inside pthread_cond_wait */
    int loop_asleep;             /* [L] the runtime thread may block: wake it */
    uint64_t next_seq;           /* [L] submission order */
    rt__table tasks;             /* [L] task handles */
    rt__table actors;            /* [L] actor handles */
    rt__tasks incoming;          /* [L] submitted, not yet taken */
    rt__actor *kills;            /* [L] kills asked for, not yet taken */
    rt__loop loop;
    rt__local *local;
    rt__dispatch dispatch;
    pthread_t thread;
} rt__runtime;

extern rt__runtime rt__rt;

/* [L] Fail a public call made when the runtime is not running, in a
 * worker, or after rt_shutdown(); 0 when it is running. */
int rt__check_running(const char *call);
/* [L] Queue a record for the runtime thread.  Returns 1 when the caller
 * must call rt__wake() after unlocking. */
int rt__submit(rt__task *t);
/* [L] The same, giving the record a handle in *ref first; or RT_ENOMEM. */
int rt__submit_ref(rt__task *t, rt_ref *ref);
/* [L] Ask the runtime thread to act on a kill; same return. */
int rt__submit_kill(rt__actor *a);
void rt__wake(void);

#endif

/*
 * runtime.h - the runtime's global state and its thread.
 *
 * One runtime per process.  Application threads (the public calls) and
 * the runtime thread share what is marked [L] under `lock`; everything
 * else belongs to the runtime thread while it runs.
 */
#ifndef RT_RUNTIME_H
#define RT_RUNTIME_H

#include "pool.h"
#include "sched.h"
#include "task.h"
#include "wire.h"

#include <pthread.h>
#include <sys/types.h>

typedef enum rt__state {
    RT__STOPPED,
    RT__RUNNING,
    RT__STOPPING
} rt__state;

typedef struct rt__runtime {
    pthread_mutex_t lock;
    pthread_cond_t changed;    /* [L] tasks finished, or the state changed */
    rt__state state;           /* [L] */
    int was_shut_down;         /* [L] explains a call after rt_shutdown() */
    int waiters;               /* [L] threads inside pthread_cond_wait */
    rt__table table;           /* [L] */
    rt__task *in_head, *in_tail; /* [L] submitted, not yet absorbed */
    int loop_asleep;           /* [L] the runtime thread may block: wake it */
    int wake_fd;               /* eventfd that wakes the runtime thread */
    int epoll_fd;
    pthread_t thread;
    pid_t forkserver_pid;
    rt__chan forkserver;
    rt__watch w_wake, w_forkserver;
    rt__sched sched;
    rt__pool pool;
} rt__runtime;

extern rt__runtime rt__rt;

/* [L] Wake the runtime thread if it may be blocked (call with the lock
 * held; returns 1 when the caller must write wake_fd after unlocking). */
int rt__need_wake(void);
void rt__wake(void);

/* Fail a public call made when the runtime is not running, in a worker,
 * or after rt_shutdown(); [L] returns 0 when it is running. */
int rt__check_running(const char *call);

#endif

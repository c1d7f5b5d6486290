/*
 * task.h - task records and the handle table.
 *
 * A task record lives from rt_remote() until its result is taken.  It is
 * reachable through the handle table (slot index + generation, so stale
 * handles are refused) and, while the runtime thread works on it, through
 * exactly one queue: the incoming list, a class's pending queue or a
 * worker's in-flight list (the `next` link).  Fields marked [L] are read
 * or written under rt__rt.lock; the others belong to the runtime thread
 * once the record is on the incoming list.
 */
#ifndef RT_TASK_H
#define RT_TASK_H

#include "resources.h"
#include "rtask.h"

#include <stddef.h>
#include <stdint.h>

struct rt__class;

typedef enum rt__task_state {
    RT__TASK_QUEUED,     /* incoming or pending in its class */
    RT__TASK_DISPATCHED, /* sent to a worker */
    RT__TASK_DONE        /* [L] result or failure recorded */
} rt__task_state;

/* What a record asks a worker to run. */
typedef enum rt__task_kind {
    RT__KIND_TASK,   /* fn is an rt_fn */
    RT__KIND_CREATE, /* an actor's constructor: fn is an rt_actor_init_fn */
    RT__KIND_CALL    /* an actor method: fn is an rt_method */
} rt__task_kind;

typedef void (*rt__any_fn)(void); /* cast back to the kind's type to call */

typedef struct rt__task {
    struct rt__task *next;
    uint64_t id;
    uint64_t seq;           /* submission order, for fairness between classes */
    rt__any_fn fn;
    struct rt__class *cls;  /* its request and worker-reuse rule */
    unsigned char kind;     /* rt__task_kind */
    unsigned char death;    /* [L] why an actor call failed (actor.h) */
    unsigned char lost;     /* [L] its worker lost its socket */
    int retries_left;
    int state;              /* [L] rt__task_state */
    int orphan;             /* [L] handle released: free it when done */
    int status;             /* [L] RT_OK, RT_ETASK, RT_EWORKERDIED, ... */
    int task_status;        /* [L] what the function returned */
    int wait_status;        /* [L] how the worker died (waitpid status) */
    int sys_errno;          /* [L] the errno of an RT_ESYS failure */
    int worker_pid;         /* [L] the worker that died, for messages */
    void *result;           /* [L] rt_free()-able bytes, or NULL */
    size_t result_len;      /* [L] */
    int arg_fd;             /* memfd holding the argument, or -1 */
    size_t arg_len;
    char *name;             /* points into tail, or NULL */
    char tail[];            /* inline argument bytes, then the name */
} rt__task;

typedef struct rt__slot {
    rt__task *task;
    uint32_t gen;
    uint32_t next_free;
} rt__slot;

/* [L] The handle table. */
typedef struct rt__table {
    rt__slot *slot;
    uint32_t cap;
    uint32_t free_head; /* index + 1 of the first free slot; 0 = none */
    uint32_t used;      /* slots ever handed out (the rest are fresh) */
} rt__table;

/* [L] Give the task a handle; returns 0 or RT_ENOMEM. */
int rt__table_add(rt__table *t, rt__task *task);
/* [L] The task behind a handle, or NULL when unknown or consumed. */
rt__task *rt__table_find(const rt__table *t, rt_ref ref);
/* [L] Invalidate a handle (the record itself is not freed). */
void rt__table_drop(rt__table *t, rt_ref ref);
/* [L] Free every record and the table. */
void rt__table_free(rt__table *t);

/* A record of fn(arg) with the argument inline, or in a memfd when it is
 * large, and name copied (may be NULL).  0 or an error code. */
int rt__task_new(rt__task_kind kind, rt__any_fn fn, const char *name,
                 const void *arg, size_t arg_len, rt__task **out);
/* [L] Put a record on the incoming list for the runtime thread.  Returns
 * 1 when the caller must rt__wake() after unlocking. */
int rt__task_enqueue(rt__task *t);
/* [L] Give the record a handle and enqueue it; *ref is its handle. */
int rt__task_submit(rt__task *t, rt_ref *ref);

/* What the options ask for, checked; custom resource names are matched
 * with the runtime's under the lock by rt__request_resources(). */
typedef struct rt__request {
    rt__res res;
    int max_calls;
    int max_retries;
    int max_restarts;
    int nitems;
    rt__item items[RT__CUSTOM_MAX];
} rt__request;

/* Resolve options for a task, or for an actor (other defaults). */
int rt__request_resolve(const rt_opts *opts, int actor, rt__request *r);
/* [L] Match the custom resources and check that the request can ever be
 * met. */
int rt__request_resources(rt__request *r);

/* Free a record, its argument memfd and its result. */
void rt__task_free(rt__task *task);
/* [L] Record the outcome; frees an orphan.  Returns 1 when a waiter may
 * care (the task was not an orphan). */
int rt__task_finish(rt__task *task, int status);

#endif

/*
 * client.h - the public calls made inside a worker (a task that submits
 * tasks, waits for them, calls actors): each is sent to the application,
 * whose proxy thread makes it there and replies (callmsg.h).
 *
 * A worker reaches the application through the door: a datagram socket
 * made by rt_init() before the fork server, which every worker inherits.
 * A thread's first call sends one end of a new stream socket through it;
 * the application starts a proxy thread for the other end, and the
 * thread's calls go over that connection from then on, one at a time.
 */
#ifndef RT_CLIENT_H
#define RT_CLIENT_H

#include "callmsg.h"

#include <rtask.h>

#include <stddef.h>
#include <stdint.h>

/* The application, at rt_init(), before the fork server: make the door.
 * The workers' end is remembered here (they inherit it) and must be kept
 * open in the fork server (*theirs); the application's end is *ours.  0,
 * or -1 with errno. */
int rt__client_door_open(int *ours, int *theirs);
/* The application's end: a connection's socket, or -1 when the message
 * is not one (its descriptors closed).  Blocks until one comes. */
int rt__client_door_accept(int door);
/* Open a connection through the door door_fd (the workers' end): the
 * caller's end of it; -1 when no socket pair could be made, -2 when the
 * door took none (errno says why). */
int rt__client_door_connect(int door_fd);

/* What the calling thread of a worker runs, or NULL between tasks. */
typedef struct rt__running {
    uint64_t task;    /* its id: the handle of its result */
    unsigned attempt; /* 0 on its first run */
    uint64_t actor;   /* the actor's handle, in an actor; else 0 */
    int lends;        /* a task, not an actor's call: while it waits for
                         others, the runtime lends its CPUs and takes back
                         the tasks queued behind it */
} rt__running;

/* What the client asks of the worker it runs in (worker.c): what the
 * calling thread runs, to run a task inside that thread's wait, and to
 * send the answers of such runs it holds back (before a wait that may
 * need them). */
typedef struct rt__client_worker {
    const rt__running *(*running)(void);
    int (*run_inside)(const rt__callmsg_run *in, void **taken, size_t *len);
    void (*send_held)(void);
} rt__client_worker;

/* In a worker, as it starts: calls are this process's to make. */
void rt__client_worker_starts(rt__client_worker worker);

/* The calls, in a worker.  Each returns what the public call would, and
 * sets the message of rt__last_error(). */
int rt__client_submit(const rt__submission *s, rt_ref *ref);
int rt__client_put(const void *data, size_t len, rt_ref *ref);
/* keep: rt_get_view(), the handle stays. */
int rt__client_get(rt_ref ref, void **data, size_t *len, long timeout_ms, int keep);
/* ready[i] says which of refs are ready; the count, or an error. */
long rt__client_wait(const rt_ref *refs, size_t n, size_t num_ready, long timeout_ms,
                     unsigned char *ready);
int rt__client_cancel(rt_ref ref, int force);
int rt__client_release(rt_ref ref);
int rt__client_kill(rt_actor actor);
int rt__client_restart(rt_actor actor);
int rt__client_actor_get(const char *name, rt_actor *actor);
int rt__client_stream_next(rt_ref ref, rt_ref *item, long timeout_ms);
int rt__client_pg_create(const rt_bundle *bundles, size_t n, int strategy, rt_pg *pg);
int rt__client_pg_wait(rt_pg pg, long timeout_ms);
int rt__client_pg_remove(rt_pg pg);
int rt__client_yield(const void *data, size_t len);

/* The calling thread's task returned this result: the handles it made
 * and did not consume are released, but those the result names (their
 * eight bytes appear in it), which the task hands on. */
void rt__client_task_end(const void *result, size_t len);

#endif

/*
 * node.h - the node interface: what the dispatcher asks of a node, and
 * what a node tells it.
 *
 * A node is one machine's part of the runtime: its workers and its
 * devices.  The scheduler counts a node's resources and instances; the
 * dispatcher then asks the node for a worker for each lease, tells the
 * worker the lease's devices, sends it tasks and releases it; the node
 * answers through its events: a task's answer, a worker lost, the node
 * itself gone.  Operations are plain function pointers, as libuv's
 * watchers are, so that the layers above never switch over kinds of node.
 *
 * The local node (local.h) is the implementation for this machine: a fork
 * server and worker processes.  A node on another machine implements the
 * same operations over MPI, and neither the scheduler nor the dispatcher
 * changes for it.  Everything here is done by the round's holder
 * (runtime/runtime.h: the runtime thread, or an application thread that
 * took the round), one at a time; the local node's own threads (the
 * output writer) and the fork server are local.h's.
 */
#ifndef RT_NODE_H
#define RT_NODE_H

#include "proto.h"
#include "task.h"
#include "base/shm.h"
#include "devices/watch.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct rt__node rt__node;

/* What a worker that becomes an actor is told with its constructor. */
typedef struct rt__actor_spec {
    uint64_t handle;      /* the actor's rt_actor id (0: not known here) */
    uint64_t fini;        /* its destructor, or 0 */
    uint64_t concurrency; /* methods it may run at once */
} rt__actor_spec;
typedef struct rt__worker rt__worker; /* a node's worker: opaque above */

/* A task's answer, in the one shape every node hands up: the result's
 * bytes in an rt__buf_free()-able buffer, whatever carried them (a socket, a
 * memfd, another rank), so that nothing above a node switches over how
 * they came. */
typedef struct rt__answer {
    uint64_t id;
    int status;       /* what the function returned */
    int sys_errno;    /* set: the worker could not run the task (why) */
    int refused;      /* set: its result was refused (a memfd left
                         unsealed or shrunk): no bytes */
    int bounced;      /* set: the worker did not run it (a board entry it
                         takes was not there: board.h) */
    uint64_t run_us;
    void *result;     /* len bytes, the callee's; NULL with len 0, when
                         refused, when there was no memory for them, or
                         when held */
    size_t len;
    int held;         /* set: the node keeps the len bytes (another rank's
                         node, which keeps large results where they were
                         made): pull() them, forget() them */
    int packed;       /* set: the bytes are several results (proto.h's
                         RESULTS), never held */
} rt__answer;

/* Free an answer's bytes that nobody took. */
static inline void rt__answer_drop(rt__answer *a)
{
    rt__buf_free(a->result);
    a->result = NULL;
}

/* What an answer came to: RT_OK, RT_ETASK (the function returned
 * non-zero), or the error that kept the task from running or its result
 * from coming (RT_ESYS, RT_ENOMEM); why (n bytes) says it, but for RT_OK. */
static inline int rt__answer_outcome(const rt__answer *a, char *why, size_t n)
{
    if (a->sys_errno) {
        snprintf(why, n, "the worker could not run the task: %s", strerror(a->sys_errno));
        return RT_ESYS;
    }
    if (a->refused) {
        snprintf(why, n, "the task's %zu-byte result in shared memory was shrunk or left "
                 "unsealed: refused", a->len);
        return RT_ESYS;
    }
    if (!a->result && a->len && !a->held) {
        snprintf(why, n, "no memory for the task's %zu-byte result", a->len);
        return RT_ENOMEM;
    }
    if (a->status)
        snprintf(why, n, "the task returned %d", a->status);
    return a->status ? RT_ETASK : RT_OK;
}

/* A worker that is gone, and what it leaves behind. */
typedef struct rt__loss {
    int pid;
    int wait_status;  /* how it exited (waitpid status) */
    int spawn_errno;  /* why it could not be started, or 0 */
    int lost_channel; /* it left because its socket failed */
    int broke;        /* it was killed for breaking the protocol */
    size_t started;   /* of its tasks in flight, how many had started */
} rt__loss;

/* What a node tells the dispatcher; owner is what the dispatcher gave
 * when it leased the worker (its lease), or NULL for an idle worker. */
typedef struct rt__node_events {
    void *ctx;
    /* The worker answered its oldest task in flight; a->result is the
     * callee's. */
    void (*answered)(void *ctx, void *owner, rt__answer *a);
    /* The worker is gone; its tasks in flight will never be answered. */
    void (*lost)(void *ctx, void *owner, const rt__loss *loss);
    /* The node itself is gone: no worker of it runs any more. */
    void (*failed)(void *ctx, const char *why);
    /* A worker lent (lend(), which said 0) has taken back the last n of
     * its tasks in flight, which it will never run: a node that hears
     * later than it is asked (another rank's) says so here. */
    void (*took_back)(void *ctx, void *owner, size_t n);
    /* What pull() asked for: the bytes of the object (the callee's), or
     * NULL with found 0 when the node no longer holds it. */
    void (*pulled)(void *ctx, uint64_t object, void *bytes, size_t len, int found);
    /* What the GPUs' watcher saw on node `from` (devices/watch.h); for a
     * usage, owner is the lease of the worker whose process it is, or
     * NULL, and ours says whether the process is a worker of the node
     * (idle, when owner is NULL). */
    void (*gpu)(void *ctx, rt__node *from, const rt__gpu_event *e, void *owner, int ours);
} rt__node_events;

typedef struct rt__node_ops {
    /* A worker for a lease: a process that never ran a task when fresh,
     * else one that ran fewer than max_calls (0: no limit); *calls gets
     * how many it ran.  NULL when none can be had now: errno EAGAIN when
     * all are busy (one will be free later), another errno when starting
     * one failed (worth trying again soon).  cpu: what the lease holds of
     * CPUs, which another rank's node passes on (its tasks' tasks may run
     * inside their waits: cluster/tunnel.c). */
    rt__worker *(*lease)(rt__node *n, int fresh, int max_calls, rt__amount cpu, void *owner,
                         size_t *calls);
    /* Tell w its lease's devices (it gets them before its next task). */
    int (*devices)(rt__node *n, rt__worker *w, const rt__devices *d);
    /* Queue t for w; a constructor goes with what w, becoming an actor,
     * is told (else NULL).  0 or -1 when out of memory. */
    int (*send)(rt__node *n, rt__worker *w, const rt__task *t,
                const rt__actor_spec *actor);
    /* The lease is over: keep w for another one, or retire it. */
    void (*release)(rt__node *n, rt__worker *w, int retire);
    /* Send w what it has, then end of file: an actor finishes its calls,
     * runs its destructor and exits; its loss is reported then. */
    void (*stop)(rt__node *n, rt__worker *w);
    /* Kill w (it broke the protocol); its loss is reported later. */
    void (*kill)(rt__node *n, rt__worker *w);
    /* What names w's process in a timeline: its pid on this machine. */
    uint64_t (*lane)(rt__node *n, rt__worker *w);
    /* How long w's current task has run, in microseconds; 0 between. */
    uint64_t (*busy_us)(rt__node *n, rt__worker *w, uint64_t now_ns);
    /* Send what is queued, start spare workers, forget gone ones.
     * caller_waits: the flushing thread returns to a caller that may wait
     * at once for the tasks just sent (an application's rt_remote(), a
     * task's call through its proxy), unlike the runtime's and the MPI
     * bridge's threads: the local node's workers then hold a quick
     * batch's answers a moment for it (node/worker.h's RT__AWAIT_SOON). */
    void (*flush)(rt__node *n, int caller_waits);
    /* Wait on the calling thread, up to timeout_us, for w to answer, with
     * w kept out of the loop meanwhile; what arrives is reported as usual.
     * 1 when something arrived, 0 when not (or when the node cannot). */
    int (*await)(rt__node *n, rt__worker *w, int timeout_us);
    /* w's running task waits for other tasks (lend 1), or goes on (0).
     * Waiting, w makes room for another worker (unless too many wait
     * already), and the tasks sent to it after the running one are taken
     * back: how many (the last ones in flight, which w will never run), at
     * once or later (took_back()); -1 when it cannot lend (an actor) or
     * there is nothing to undo.  NULL: the node never lends. */
    long (*lend)(rt__node *n, rt__worker *w, int lend);
    /* The tasks sent to w after its running one are taken back, as
     * lend() does, w lending nothing: how many now; -1 when w cannot (an
     * actor, or gone).  Then w's running task may run one it waits for
     * inside that wait, given to it through its call (api/proxy.c), not
     * its socket: w counts it sent and started (given_inside()).  NULL:
     * the node cannot. */
    long (*take_back)(rt__node *n, rt__worker *w);
    void (*given_inside)(rt__node *n, rt__worker *w);
    /* rt_cancel() asks w's task `task` to stop (rt_cancelled()); NULL:
     * the node cannot tell it. */
    void (*ask_stop)(rt__node *n, rt__worker *w, uint64_t task);
    /* The bytes of an object the node holds (an answer that said held;
     * run: rt__task_attempt() of the task that made it), sent here later
     * (pulled()); and the object no longer wanted.  NULL: the node holds
     * none (this machine's). */
    void (*pull)(rt__node *n, uint64_t object, unsigned run);
    void (*forget)(rt__node *n, uint64_t object, unsigned run);
    /* The node's result board (board.h): claim an entry for a task about
     * to be sent to w (its seq, or 0: none free), which w then posts its
     * result on; give it back once the task is answered, lost or taken
     * back.  NULL: the node has no board (another rank's). */
    uint64_t (*board_claim)(rt__node *n, rt__worker *w);
    void (*board_give_back)(rt__node *n, uint64_t seq);
} rt__node_ops;

struct rt__node {
    const rt__node_ops *ops;
    rt__node_events ev;
};

/* Who hears the node from now on: the dispatcher (rt__dispatch_add_node()),
 * or, on a rank that serves rank 0, the server (serve.h). */
static inline void rt__node_listen(rt__node *n, rt__node_events ev)
{
    n->ev = ev;
}

#endif

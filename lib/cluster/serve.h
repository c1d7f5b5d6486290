/*
 * serve.h - a rank that serves as a node: rank 0's leases carried out on
 * this rank's local node.
 *
 * Each lease rank 0 makes here gets a local worker when one can be had
 * (until then its tasks wait here, in order); tasks, devices, releases,
 * stops and kills go to that worker, and its answers and its loss go back
 * to rank 0.  Past a reused worker's max_calls, the lease goes on with
 * another worker, so rank 0 need not know how many calls a worker here
 * has run.
 */
#ifndef RT_SERVE_H
#define RT_SERVE_H

#include "bridge.h"
#include "store.h"
#include "node/node.h"

typedef struct rt__serve rt__serve;

/* What a serving rank's runtime gives it (its strings outlive it). */
typedef struct rt__serve_setup {
    const char *kept_dir;  /* checkpoints: where the large results kept here
                              are written too (node/keep.h), or NULL */
    const char *spill_dir; /* where they spill past store_size, or NULL */
    size_t store_size;     /* this rank's object_store_bytes */
    int recording;         /* the job keeps a timeline (rank 0's, as this
                              rank's configuration says: the same program) */
} rt__serve_setup;

/* Serve rank 0 with the local node, whose events become this server's.
 * NULL without memory. */
rt__serve *rt__serve_new(rt__bridge *b, rt__node *local, const rt__serve_setup *setup);
/* What rank `from` sent: rank 0's leases and frees, any rank's pulls of
 * objects held here and the objects pulled from others (held.h).
 * Returns 1 when it was SHUTDOWN. */
int rt__serve_deliver(rt__serve *s, int from, const rt__rank_msg *m);
/* Give waiting leases a worker and send their tasks, and send rank 0
 * what was answered since the last round; 1 when a lease still waits for
 * lack of a process (try again soon). */
int rt__serve_run(rt__serve *s);
/* After a round that delivered messages on the bridge's thread: when
 * they brought one task, and its lease's tasks are quick, wait on its
 * worker for its answer, for the bridge to send at once (rank 0's
 * synchronous call then wakes neither this rank's runtime thread nor the
 * bridge's for it).  1 when an answer came and was queued for rank 0. */
int rt__serve_await(rt__serve *s);
/* Local first (tunnel.h): the task `child` (a handle of this rank's:
 * node/callmsg.h's RT__ID_FOREIGN), which the task `parent` running here
 * submitted and now waits for, runs inside that wait, in parent's
 * worker, holding what parent holds.  0 when it may and give(ctx), which
 * gives the worker the child to run, did (-2 when it failed: nothing is
 * changed): the worker is told so, *lease_number is the lease it runs
 * in (rank 0's timeline draws it as its worker), the child's answer goes
 * to answered(ctx, ...) (which may take its bytes), not to rank 0, and
 * when rank 0 asks parent
 * to stop (a cancel), stopped(ctx, child) is told, and the worker asks
 * child to stop instead; -1 when parent runs in no worker here that may
 * take it: an actor's, one with devices, one with no call left of its
 * max_calls, or one whose lease holds fewer CPUs than cpu. */
int rt__serve_inside(rt__serve *s, uint64_t parent, uint64_t child, rt__amount cpu,
                     int (*give)(void *ctx), void *ctx, uint64_t *lease_number);
void rt__serve_on_inside(rt__serve *s, void (*answered)(void *ctx, rt__answer *a),
                         void (*stopped)(void *ctx, uint64_t child), void *ctx);
/* rt_cancel() of such a child while it runs: kill its worker (and the
 * parent with it, as for any task that runs inside another's wait), or
 * ask it to stop.  0, or -1 when it runs no more. */
int rt__serve_stop_inside(rt__serve *s, uint64_t child, int kill);
/* Where s keeps the objects of this rank (tunnel.h keeps tasks' PUTs
 * there too). */
rt__store *rt__serve_store(rt__serve *s);
/* Free s, once the local node has stopped (its workers with it). */
void rt__serve_free(rt__serve *s);

#endif

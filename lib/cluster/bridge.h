/*
 * bridge.h - the one thread that makes MPI calls, and its bridge into the
 * runtime thread's event loop.
 *
 * MPI offers no descriptor to wait on, so a thread of its own does every
 * MPI call: it sends what the round's holder queued, receives what other
 * ranks sent, and hands it over: itself, in a round of its own, when the
 * round is free (rt__bridge_attach()), else to the runtime thread through
 * an eventfd the loop watches.  It polls while messages flow and backs
 * off to a millisecond between polls when none have for a while; a
 * message queued here wakes it at once.  Startup's collectives
 * (rt_init()) and the last goodbyes (rt_shutdown()) run on it too, as
 * calls of the thread that waits for them.
 */
#ifndef RT_BRIDGE_H
#define RT_BRIDGE_H

#include "rankmsg.h"
#include "base/loop.h"

#include <stddef.h>

typedef struct rt__bridge rt__bridge;

/* Load the MPI module at path and join the job on the bridge's thread:
 * this rank and how many there are.  0, or RT_EINVAL / RT_ESYS with a
 * message. */
int rt__bridge_open(rt__bridge **out, const char *path, int *rank, int *size);
/* Startup's collectives: every rank gives len bytes and rank 0 gets them
 * all, in rank order; rank 0's len bytes to every rank.  0 or -1. */
int rt__bridge_gather(rt__bridge *b, const void *mine, size_t len, void *all);
int rt__bridge_bcast(rt__bridge *b, void *buf, size_t len);
/* Deliver what arrives to cb, with the round held: on the bridge thread
 * itself when round->take() gets it, a round following (a wake-up of the
 * loop's thread less per message, 20 us on this 2-CPU machine with 3
 * ranks); else on the loop's thread (SHUTDOWN included; BYE is counted
 * here).  0 or -1 with errno. */
int rt__bridge_attach(rt__bridge *b, rt__loop *loop, rt__rank_deliver cb, void *ctx,
                      const rt__round_hook *round);
/* Stop delivering (before the loop closes). */
void rt__bridge_detach(rt__bridge *b);
/* Queue a message for rank `to`; a memfd in m->fd becomes the bridge's.
 * 0, or -1 without memory (the memfd is closed).  Messages are staged
 * until rt__bridge_flush() hands them all to the bridge thread at once;
 * both are called by one thread at a time (the runtime's round). */
int rt__bridge_send(rt__bridge *b, int to, const rt__rank_msg *m);
void rt__bridge_flush(rt__bridge *b);
/* Bytes of payload (arguments, results, objects, tasks' calls) this rank
 * received from the others so far; and, in *messages unless NULL, the
 * messages that brought them (a rank's signs of life are none). */
uint64_t rt__bridge_payload_in(const rt__bridge *b, uint64_t *messages);
/* Flush, and wait up to timeout_ms for n BYE messages in all; how many
 * came. */
int rt__bridge_wait_byes(rt__bridge *b, int n, long timeout_ms);
/* Rank 0: whether rank has left: 0 not yet, 1 it said BYE, 2 it was
 * declared dead for its silence (the bridge thread hears a sign of life
 * from every serving rank each second, and hands up a FAILED message for
 * one silent longer than RTASK_RANK_TIMEOUT seconds, 60 by default). */
int rt__bridge_left(rt__bridge *b, int rank);
/* End the whole job (MPI_Abort, on the bridge thread): for rank 0 when a
 * rank would hold up MPI's end for ever.  Does not return. */
_Noreturn void rt__bridge_end_job(rt__bridge *b, int code);
/* Flush, send what is queued, leave the job and free b.  MPI is finalized when
 * the bridge initialized it, or when finalize is set. */
void rt__bridge_close(rt__bridge *b, int finalize);

#endif

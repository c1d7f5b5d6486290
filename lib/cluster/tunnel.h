/*
 * tunnel.h - the calls of tasks that run on other ranks, made on rank 0.
 *
 * Every handle lives on rank 0, so a task on rank r that calls rt_get()
 * or rt_remote() is served there.  Its worker's thread connects through
 * rank r's door as on one machine (node/client.h); rank r's tunnel takes
 * the connection and sends each frame of it to rank 0 as a CALL message.
 * Rank 0's tunnel writes the frames into a socketpair whose other end a
 * proxy serves (api/proxy.c) as if the worker were its own, and sends
 * the proxy's replies back the same way.  The frames cross unchanged but
 * for a SUBMIT's function, which travels as its place (image.h), a
 * PUT, whose bytes stay on the worker's rank: rank 0 gets a PUT_HELD,
 * and keeps where the object is, not its bytes; and the answer to a GET
 * of an object another rank holds: rank 0 says where it is (HELD_AT),
 * and the worker's rank takes the bytes from its own store or pulls
 * them from the holder, rank to rank.  Either
 * end closing is a HANGUP for the other.
 */
#ifndef RT_TUNNEL_H
#define RT_TUNNEL_H

#include "bridge.h"
#include "serve.h"
#include "store.h"
#include "base/loop.h"
#include "node/callmsg.h"

typedef struct rt__tunnel rt__tunnel;

/* Rank 0's tunnel hands each connection it opens to serve; another
 * rank's has no serve (NULL).  NULL without memory. */
rt__tunnel *rt__tunnel_new(rt__bridge *b, rt__loop *loop, void (*serve)(int connection, int rank));
/* Another rank, `rank`, serving rank 0 with s: its tasks' rt_put()
 * objects stay here, in s's store (rank 0 hears their length, and their
 * bytes' hash when hashed: the job keeps checkpoints), until rank 0
 * frees them; the objects its tasks rt_get() come into the store too,
 * while their GET is answered; and a task that a task here submits, of
 * CPUs alone and one argument of bytes, is placed here first: answered
 * here, and run inside its parent's wait when its parent waits for it
 * (s's worker), else handed to rank 0 (within 5 ms).  Not with
 * checkpoints, which rank 0 keys.  recording: the job keeps a timeline,
 * which hears of each task placed here as it ends. */
void rt__tunnel_serve(rt__tunnel *r, rt__serve *s, int rank, int hashed, int recording);
/* Rank 0: ran(ctx, rank, id, how) hears each RAN (a task that rank
 * placed itself ended, node/callmsg.h; its function at this process's
 * address), on the thread that delivers the ranks' messages, so that it
 * is recorded before its caller's answer, which comes after it. */
typedef void rt__ran_fn(void *ctx, int rank, uint64_t id, const rt__callmsg_ran *ran);
void rt__tunnel_hear_ran(rt__tunnel *r, rt__ran_fn *ran, void *ctx);
/* Another rank: objects pulled into the store came (OBJECT): the GETs
 * that waited for them are answered. */
void rt__tunnel_objects_came(rt__tunnel *r);
/* Whether this rank answered a task's call itself since the last time
 * (a task placed here, its RUN, its result): the worker calls again at
 * once, and the wait for it is worth a linger. */
int rt__tunnel_calls_soon(rt__tunnel *r);
/* Another rank: a worker's thread connected (the connection is the
 * tunnel's now). */
void rt__tunnel_accept(rt__tunnel *r, int connection);
/* A CALL or HANGUP from rank `from` (its owned buffer is taken). */
void rt__tunnel_deliver(rt__tunnel *r, int from, const rt__rank_msg *m);
/* Close every connection and free r. */
void rt__tunnel_free(rt__tunnel *r);

#endif

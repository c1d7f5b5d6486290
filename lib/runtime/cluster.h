/*
 * cluster.h - many machines as one runtime, over MPI: rt_init() with
 * cluster "mpi".
 *
 * Every rank starts its own runtime as on one machine, then joins the job
 * (bridge.h).  Ranks check that they run the same program and describe
 * their nodes to rank 0.  Rank 0 adds the other ranks' nodes to its
 * scheduler (peer.h) and returns to the application; every other rank
 * serves rank 0 (serve.h) until rank 0 shuts down, then exits.
 */
#ifndef RT_CLUSTER_H
#define RT_CLUSTER_H

#include "rtask.h"
#include "base/loop.h"
#include "cluster/bridge.h"
#include "cluster/serve.h"
#include "dispatch/dispatch.h"
#include "sched/offer.h"

typedef struct rt__cluster rt__cluster;

/* Whether config (or RTASK_CLUSTER) asks for a cluster: 1 for "mpi", 0
 * for none; RT_EINVAL with a message for anything else. */
int rt__cluster_wanted(const rt_config *config);
/* Join the MPI job and meet the other ranks: 0, or a negative error code
 * with a message (a rank whose program differs from rank 0's says so on
 * stderr, leaves the job and exits with status 0: rank 0 reports it). */
int rt__cluster_join(rt__cluster **out, const rt__offer *set);
/* Rank 0: add the other ranks' nodes to d, and hand the connections of
 * their tasks' calls to serve_calls, with the rank they come from; others: serve with local, as setup
 * says.  Under the runtime's round.  0, or RT_ENOMEM. */
int rt__cluster_start(rt__cluster *c, rt__loop *loop, rt__dispatch *d, rt__node *local,
                      void (*serve_calls)(int connection, int rank), const rt__serve_setup *setup,
                      const rt__round_hook *round);
/* A serving rank: a worker's thread connected to make calls, which rank 0
 * makes (cluster/tunnel.h). */
void rt__cluster_tunnel(rt__cluster *c, int connection);
/* The cluster's share of each round (its holder's); 1 when it wants another
 * round soon. */
int rt__cluster_round(rt__cluster *c);
/* A serving rank, after the bridge's round: wait on a worker for the
 * answer of the quick task just delivered (rt__serve_await()); 1 when it
 * came. */
int rt__cluster_await(rt__cluster *c);
/* Whether a worker here is about to call again (its rank just answered a
 * task's call itself: local first), so that the wait lingers first. */
int rt__cluster_calls_soon(rt__cluster *c);
/* Bytes of payload this rank received from the others so far, and the
 * messages (rt__bridge_payload_in()). */
uint64_t rt__cluster_payload_in(const rt__cluster *c, uint64_t *messages);
/* Whether this rank serves (it is not rank 0). */
int rt__cluster_serving(const rt__cluster *c);
/* Rank 0, after join and before start: every rank's node, in rank order
 * (for rtask-info); elsewhere, nothing. */
typedef void (*rt__cluster_node_fn)(void *arg, int rank, const char *host,
                                    const rt__offer *offer);
void rt__cluster_nodes(const rt__cluster *c, rt__cluster_node_fn fn, void *arg);
/* A serving rank: wait until rank 0 shuts down. */
void rt__cluster_wait(rt__cluster *c);
/* At rt_shutdown(), once the runtime thread has stopped: rank 0 stops
 * every rank and waits for them; another rank says it has stopped.  Then
 * leave the job and free c. */
void rt__cluster_end(rt__cluster *c);

#endif

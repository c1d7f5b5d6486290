/*
 * peer.h - another rank's node, as rank 0 drives it: the node interface
 * (node.h) over MPI messages (rankmsg.h).
 *
 * A worker here is a proxy: rank 0's lease on that rank, named by a
 * number.  Every operation becomes a message, and the rank's answers,
 * losses and failure come back through the bridge to rt__peer_deliver(),
 * which reports them as the local node would.  The rank itself picks the
 * process (serve.h).
 */
#ifndef RT_PEER_H
#define RT_PEER_H

#include "bridge.h"
#include "image.h"
#include "node/node.h"

typedef struct rt__peer rt__peer;

/* The node of rank `rank`, which finds the places of the functions it
 * sends in places (one cache for every peer: a function's place is the
 * same for every rank, which runs the same program, and the round's
 * holder alone sends); NULL without memory. */
rt__peer *rt__peer_new(rt__bridge *b, int rank, rt__fn_cache *places);
rt__node *rt__peer_node(rt__peer *p);
/* What the rank sent (ANSWER, LOST, FAILED). */
void rt__peer_deliver(rt__peer *p, const rt__rank_msg *m);
/* Tell the rank to stop serving (SHUTDOWN), and free p. */
void rt__peer_free(rt__peer *p);

#endif

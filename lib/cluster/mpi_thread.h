/*
 * mpi_thread.h - the MPI bridge's insides, private to bridge.c and
 * mpi_thread.c: bridge.c is what other threads call (open, attach, send,
 * flush, close); mpi_thread.c is the one thread that calls MPI, which
 * sends what was queued, receives, and hands messages over.
 */
#ifndef RT_MPI_THREAD_H
#define RT_MPI_THREAD_H

#include "mpi_ops.h"
#include "rankmsg.h"
#include "base/loop.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt__bridge rt__bridge; /* as bridge.h says */

#define TAG_MSG 1   /* one message, whose bytes follow as pieces */
#define TAG_PIECE 2
#define TAG_BATCH 3 /* messages without pieces, each a length and its bytes */
#define TAG_ALIVE 4 /* no bytes: a serving rank is there (keep_alive()) */
#define BATCH_MAX ((size_t)1 << 20) /* bytes a batch grows to before it goes */
#define BATCH_FIRST ((size_t)4096) /* a batch's first room */
#define SPIN_POLLS 200      /* polls with a yield before backing off */
#define BACKOFF_MAX_US 20000 /* the longest sleep between idle polls */
#define ALIVE_EVERY_NS 1000000000ull /* a serving rank's sign of life */
#define SILENT_DEFAULT_S 60          /* RTASK_RANK_TIMEOUT's default */

/* A message queued for another rank, then in flight: its encoded part,
 * and the bytes that follow it, mapped from their memfd or in a buffer
 * it owns. */
typedef struct outgoing {
    struct outgoing *next;
    int to, tag;
    char *buf;
    size_t len, cap;         /* cap: a batch's room */
    int fd;
    void *owned;
    void *map;
    size_t bulk_len;
    size_t piece;            /* the payload goes in pieces of this (rt__piece_of()) */
    size_t nreqs;
    void *reqs[]; /* the encoded part's, then each piece's */
} outgoing;

/* The messages of one batch, received at once: one allocation, freed
 * with the last of them (rt__incoming_free()). */
typedef struct incoming_block {
    size_t left;             /* messages not yet freed */
} incoming_block;

typedef struct incoming {
    struct incoming *next;
    int from;
    char *buf;               /* the message's bytes, its own; or NULL */
    incoming_block *block;   /* or the batch it lies in, with its bytes */
    rt__rank_msg m;
} incoming;

/* A call the bridge thread makes for a waiting thread. */
typedef int (*bridge_call)(rt__bridge *b, void *arg);

struct rt__bridge {
    const rt__mpi *mpi;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work;      /* the bridge thread: something to do */
    pthread_cond_t answered;  /* callers: a call ended, a BYE came */
    outgoing *staged, **staged_tail; /* sent, not yet handed over: by one
                                        thread at a time (the runtime's round) */
    outgoing *queued, **queued_tail; /* [mu] */
    incoming *arrived, **arrived_tail; /* [mu] */
    bridge_call call;         /* [mu] to make, or NULL */
    void *call_arg;           /* [mu] */
    int call_rc;              /* [mu] */
    int closing;              /* [mu] */
    int finalize;             /* [mu] even if the application began MPI */
    int byes;                 /* [mu] */
    unsigned char *left;      /* [mu] per rank: 1 said BYE, 2 declared silent */
    uint64_t now_ns;          /* bridge thread only: the clock, read once a pass */
    uint64_t *heard_ns;       /* bridge thread only: when each rank was heard (in
                                 its pass) */
    uint64_t silent_ns;       /* rank 0: silence that declares a rank dead; 0: never */
    uint64_t looked_ns;       /* rank 0: when silences were last looked at */
    uint64_t alive_ns;        /* a serving rank: when it last said it is there */
    void *alive_req;          /* its send of that, while in flight */
    rt__loop *loop;           /* [mu] where arrivals are delivered */
    rt__round_hook round;     /* [mu] and the round the bridge thread may hold */
    rt__rank_deliver cb;
    void *ctx;
    rt__wake arrivals;        /* the loop takes what arrived */
    int arrived_new;          /* bridge thread only: arrived since handed over */
    outgoing *inflight;       /* bridge thread only */
    outgoing **batch;         /* the round's: per rank, the batch that small
                                 messages join, staged; NULL: none open */
    char *batch_in;           /* bridge thread only: where batches are received */
    size_t batch_in_cap;
    char *piece;              /* bridge thread only: where a piece of a pulled
                                 object lands (RT__OBJECT_PIECE), or NULL */
    int rank, size;
    char error[256];
    _Atomic uint64_t payload_in; /* bytes of messages' payloads received */
    _Atomic uint64_t messages_in; /* and the messages (signs of life are none) */
};

/* An object pulled for a task comes a piece at a time through a buffer
 * of one piece (mpi_thread.c, receive_into()); other payloads in
 * pieces as large as one MPI call moves: the pieces of a message of type
 * `type` (rankmsg.h). */
#define RT__OBJECT_PIECE ((size_t)4 << 20)
static inline size_t rt__piece_of(uint32_t type)
{
    return type == RT__RANK_OBJECT ? RT__OBJECT_PIECE : RT__MPI_PIECE;
}

/* A message for rank `to`, with room for nreqs requests; NULL without
 * memory.  Freed with what it holds (its memfd's mapping, its buffer). */
outgoing *rt__outgoing_new(int to, int tag, size_t nreqs);
void rt__outgoing_free(outgoing *o);
/* A message handed over, once delivered (not what its m.owned holds). */
void rt__incoming_free(incoming *in);
/* The thread's body, and the call it makes first: joining the job. */
void *rt__mpi_thread_main(void *arg);
int rt__mpi_thread_join(rt__bridge *b, void *unused);
/* Hand what arrived to cb, the round held (bridge.c). */
void rt__bridge_deliver(rt__bridge *b);
/* Make a call on the thread and wait for it. */
int rt__mpi_thread_call(rt__bridge *b, bridge_call call, void *arg);
/* End the whole job: for a rank that cannot go on (MPI is up, and the
 * other ranks would wait for it forever). */
_Noreturn void rt__mpi_thread_end_job(rt__bridge *b, int code);

#endif

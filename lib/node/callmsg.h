/*
 * callmsg.h - the calls a task makes (rt_remote(), rt_get()... inside a
 * worker): every message between a worker's client (client.h) and the
 * application thread that makes the calls for it, in this one place.
 *
 * Each thread of a worker that makes a call has a connection of its own,
 * a stream socket whose other end the application's proxy thread reads
 * (api/proxy.c); on it, every request gets one REPLY, in order, but a
 * named SUBMIT (below), which gets none.  Messages
 * are wire.h's: a header whose word is the id of the task that asks
 * (what the application lends while it waits, whose handles these are),
 * and a payload, or, when that is larger than RT__MSG_MAX_INLINE, a memfd
 * that holds it.  A REPLY's payload is the error message and the bytes;
 * an object's bytes may instead come as the object's own memfd.
 */
#ifndef RT_CALLMSG_H
#define RT_CALLMSG_H

#include "wire.h"

#include <rtask.h>

#include <stddef.h>
#include <stdint.h>

typedef enum rt__call_type {
    RT__CALL_SUBMIT = 1, /* a task or an actor call: payload = a submission */
    RT__CALL_PUT,        /* payload = the object's bytes */
    RT__CALL_GET,        /* id = ref; payload = timeout, keep (a view) */
    RT__CALL_WAIT,       /* payload = timeout, num_ready, the refs */
    RT__CALL_CANCEL,     /* id = ref; payload = force */
    RT__CALL_RELEASE,    /* id = ref */
    RT__CALL_KILL,       /* id = actor; payload: none, or a restart (8 bytes) */
    RT__CALL_END,        /* the task ended; payload = the handles it made
                            that its result names (kept) */
    RT__CALL_YIELD,      /* payload = one result of the running task */
    RT__CALL_ACTOR_GET,  /* payload = the actor's name, with its NUL */
    RT__CALL_STREAM_NEXT, /* id = the stream's ref; payload = as GET's */
    RT__CALL_PG_CREATE,  /* payload = a placement group (put_group) */
    RT__CALL_PG_WAIT,    /* id = the group; payload = as GET's */
    RT__CALL_PG_REMOVE,  /* id = the group */
    RT__CALL_REPLY,      /* id = the return code; word = a ref or a count;
                            payload = message, then bytes */
    RT__CALL_RUN,        /* to a GET that may run it: id = the task it waits
                            for, to run here and then ask again; payload =
                            a run (below) */
    RT__CALL_PUT_HELD,   /* a PUT whose bytes its rank kept (cluster/tunnel.c
                            makes it; a worker may not): payload = a held
                            object (below) */
    RT__CALL_HELD_AT,    /* rank 0's answer to a GET of another rank's task
                            whose object a rank holds: payload = where
                            (below); the task's rank fetches the bytes and
                            answers the worker (cluster/tunnel.c) */
    RT__CALL_INSIDE,     /* from another rank's tunnel, no reply: a task it
                            placed runs inside the running task's wait
                            (word 0), or ended (word 1); the calls between
                            are that task's */
    RT__CALL_RAN,        /* from another rank's tunnel, no reply, while a
                            timeline is kept: id = a task it placed, which
                            ended; payload = how it ran (below) */
    RT__CALL_TYPES
} rt__call_type;

/* What a submission is: the public call it comes from. */
enum {
    RT__SUBMIT_TASK,      /* rt_remote(): one argument, bytes */
    RT__SUBMIT_TASK_ARGS, /* rt_remote_args() */
    RT__SUBMIT_CALL,      /* rt_actor_call() */
    RT__SUBMIT_CALL_ARGS, /* rt_actor_call_args() */
    RT__SUBMIT_CREATE     /* rt_actor_create(): fn = the constructor, or
                             0; actor = the destructor, or 0 */
};

/* A task or an actor call, as the public calls take it.  Decoded, its
 * strings and bytes point into the payload, and args into room the
 * caller gives (RT_ARGS_MAX entries). */
/* A handle that a rank other than 0 made for a task its task submitted,
 * which it placed itself (cluster/tunnel.c), or that a worker made (a
 * named SUBMIT, below): this bit, the rank in the next 16 bits, and 47
 * random bits.  A handle rank 0's runtime makes never has the bit
 * (runtime/table.h). */
#define RT__ID_FOREIGN (1ULL << 63)
#define RT__ID_RANK_SHIFT 47
#define RT__ID_RANK(id) ((int)((id) >> RT__ID_RANK_SHIFT & 0xffff))
/* Whether id is a handle of that shape, made on or for rank `rank`. */
static inline int rt__id_made_on(uint64_t id, int rank)
{
    return (id & RT__ID_FOREIGN) && RT__ID_RANK(id) == rank;
}

/* A named SUBMIT: a worker submits a task under a handle it made itself
 * (the SUBMIT's id: RT__ID_FOREIGN with the number of the rank that
 * takes it), with default options and arguments of bytes alone, and
 * goes on without waiting: no REPLY comes, and a failure is kept under
 * the handle, for the task's rt_get().  A worker names only a
 * submission like one taken before on the same connection (the same
 * function), by rank 0's proxy (api/proxy.c) or by its own rank, which
 * placed it (local first, cluster/tunnel.c): either answers such a
 * SUBMIT with the byte RT__NAMED_OK as its bytes, and its handle's shape
 * says the rank.  So what the worker cannot check itself (the function
 * is the program's, a node has a CPU) holds. */
#define RT__NAMED_OK 'N'

typedef struct rt__submission {
    int form;            /* RT__SUBMIT_* */
    uint64_t fn;         /* the function's or the method's address */
    uint64_t actor;      /* calls: the actor's handle */
    const rt_opts *opts; /* tasks: NULL = defaults */
    const rt_arg *args;  /* one entry (bytes) for the one-argument forms */
    size_t nargs;
    const char *class_name; /* CREATE: the class's name, or NULL */
    uint64_t id;         /* tasks: the handle another rank made for it (the
                            SUBMIT's id), or 0: one is made */
} rt__submission;

/* A REPLY, decoded.  data: len bytes in the payload, or (fd >= 0) the
 * object's memfd, now the receiver's. */
typedef struct rt__callmsg_reply {
    int rc;
    uint64_t value;
    const char *message; /* "" when none */
    const void *data;
    size_t len;
    int fd;
} rt__callmsg_reply;

/* A task that a waiting task's thread runs itself (RT__CALL_RUN): the
 * task it waits for, queued in its own class, as work-first runtimes do
 * (api/proxy.c).  Decoded, arg points into the payload. */
typedef struct rt__callmsg_run {
    uint64_t task;    /* its handle id, which its answer names */
    uint64_t fn;      /* an rt_fn */
    uint64_t attempt; /* its run (rt__task_attempt()) */
    const void *arg;
    size_t len;
} rt__callmsg_run;

/* The name of a call type, for errors ("GET"). */
const char *rt__callmsg_name(uint32_t type);

/* Sending: queue the message on c (not flushed).  0, or -1 when out of
 * memory.  A payload too large for a message goes in a memfd, as does a
 * REPLY's object (a frame another rank relayed: cluster/tunnel.h). */
int rt__callmsg_put(rt__chan *c, uint32_t type, uint64_t id, uint64_t word,
                    const void *payload, size_t len);
int rt__callmsg_put_submission(rt__chan *c, uint64_t task, const rt__submission *s);
int rt__callmsg_put_run(rt__chan *c, const rt__callmsg_run *r);
/* rt_pg_create()'s arguments, checked by the caller: PG_CREATE. */
int rt__callmsg_put_group(rt__chan *c, uint64_t task, const rt_bundle *bundles, size_t n,
                          int strategy);
/* A REPLY: message (NULL = none) and bytes; or, with fd >= 0, the
 * object's memfd of len bytes instead of bytes (the channel owns fd). */
int rt__callmsg_put_reply(rt__chan *c, int rc, uint64_t value, const char *message,
                          const void *data, size_t len, int fd);
/* The reply to a GET: an object's bytes, which go as their memfd when
 * they are in one (a copy of it: the buffer is never reused then). */
int rt__callmsg_put_object(rt__chan *c, int rc, const char *message, const void *data,
                           size_t len);

/* Receiving, blocking: the next message of c.  1 and its header and
 * payload (*payload valid until rt__callmsg_done(); a memfd's bytes are
 * mapped), 0 at end of file, -1 when the stream is corrupt or failed.
 * A REPLY that carries an object's memfd gives it in *fd (else -1). */
int rt__callmsg_take(rt__chan *c, rt__hdr *h, const char **payload, size_t *len, int *fd);
/* Done with what rt__callmsg_take() gave. */
void rt__callmsg_done(const rt__hdr *h, const char *payload, size_t len);

/* Decoding: 0, or -1 when the payload is not that message. */
int rt__callmsg_read_submission(const char *payload, size_t len, rt__submission *s,
                                rt_opts *opts, rt_arg *args);
int rt__callmsg_read_reply(const rt__hdr *h, const char *payload, size_t len, int fd,
                           rt__callmsg_reply *r);
int rt__callmsg_read_run(const rt__hdr *h, const char *payload, size_t len,
                         rt__callmsg_run *r);
/* Into bundles (room for RT_PG_BUNDLES_MAX), their strings pointing into
 * the payload. */
int rt__callmsg_read_group(const char *payload, size_t len, rt_bundle *bundles, size_t *n,
                           int *strategy);

/* PUT_HELD's payload: the object's length, and the hash of its bytes
 * (node/keep.h, tag 2, as rank 0 keys an rt_put()'s object for
 * checkpoints) when the job keeps them, else 0, 0. */
typedef struct rt__callmsg_held {
    uint64_t len;
    uint64_t hash[2];
} rt__callmsg_held;

/* RAN's payload: the task's function (its place travels beside it, as a
 * SUBMIT's: cluster/tunnel.c), its worker's lane in rank 0's timeline
 * (the lease's number), how long it waited to start and ran, and its
 * outcome (RT_OK, RT_ETASK...). */
typedef struct rt__callmsg_ran {
    uint64_t fn, lane;
    uint32_t waited_us, ran_us;
    int32_t status, unused;
} rt__callmsg_ran;

/* HELD_AT's payload: the object, its run, the rank that holds its bytes
 * (never 0) and their length. */
typedef struct rt__callmsg_held_at {
    uint64_t object, run, holder, len;
} rt__callmsg_held_at;

/* The small fixed payloads of GET, WAIT and CANCEL. */
typedef struct rt__callmsg_wait {
    int64_t timeout_ms;
    uint64_t num_ready;
    uint64_t attempt; /* the asking task's run (rt__task_attempt()) */
    uint64_t n;
    /* then n refs */
} rt__callmsg_wait;

typedef struct rt__callmsg_get {
    int64_t timeout_ms;
    uint64_t keep;    /* 1: rt_get_view(), the handle is not consumed */
    uint64_t attempt; /* the asking task's run */
    uint64_t may_run; /* 1: the task's own thread asks, with no time limit
                         and stack to spare: it may be given the awaited
                         task to run (RT__CALL_RUN) */
    uint64_t ran_inside; /* RT__RAN_INSIDE: asked again after running what
                            a RUN gave (its END, if any, came first);
                            RT__RAN_AND_TOOK: that, and the task took the
                            answer from its own run, which went to the
                            worker's socket first: the handle is consumed,
                            and nothing is replied */
} rt__callmsg_get;

enum { RT__RAN_INSIDE = 1, RT__RAN_AND_TOOK = 2 };

#endif

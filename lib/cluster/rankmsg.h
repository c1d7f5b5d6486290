/*
 * rankmsg.h - every message between the ranks of an MPI job: its type,
 * what its fields mean, and its encoding, in this one place.
 *
 * Rank 0 drives the other ranks' nodes (peer.h) and each of them serves
 * (serve.h).  A lease here is rank 0's worker on that rank, named by a
 * number rank 0 never reuses.  A message is one MPI message; bytes of
 * RT__SHM_MIN or more follow it as pieces of their own, which the bridge
 * sends from their memfd and receives into a buffer the receiver keeps
 * (a large result is not copied on either side).
 */
#ifndef RT_RANKMSG_H
#define RT_RANKMSG_H

#include "image.h"

#include "node/node.h"
#include "node/wire.h"

#include <stddef.h>
#include <stdint.h>

typedef enum rt__rank_type {
    RT__RANK_LEASE = 1, /* 0 -> r: w0 = fresh, w1 = max_calls, w2 = CPUs held */
    RT__RANK_DEVICES,   /* 0 -> r: text = the devices (node/proto.h's
                           rt__devices_encode()) */
    RT__RANK_TASK,      /* 0 -> r: w0 = task id, w1 = kind, w2 = flags (a
                           destructor follows, no function), w3 = objects
                           that other ranks hold among its arguments; fn,
                           fini; text = name ("" = none); bytes = argument,
                           or a table (proto.h) whose entries for those
                           objects are "mapped", then each object's
                           rt__rank_ref; w4 = where its variables start
                           in text; w5, w6 = its key (node/keep.h) */
    RT__RANK_RELEASE,   /* 0 -> r: w0 = retire */
    RT__RANK_STOP,      /* 0 -> r: an actor finishes and exits */
    RT__RANK_KILL,      /* 0 -> r: kill the worker */
    RT__RANK_ANSWER,    /* r -> 0: w0 = task id, w1 = status, w2 = errno, w3 =
                           run time (us), w4 = refused | held << 1; bytes =
                           result, or none when held: the rank keeps the
                           len bytes */
    RT__RANK_LOST,      /* r -> 0: w0 = pid, w1 = wait status, w2 = spawn
                           errno, w3 = started, w4 = lost channel | broke << 1 */
    RT__RANK_FAILED,    /* r -> 0: the node failed; text = why */
    RT__RANK_SHUTDOWN,  /* 0 -> r: stop serving */
    RT__RANK_BYE,       /* r -> 0: stopped; no process of it is left */
    RT__RANK_CALL,      /* either way: one frame of a task's call (tunnel.h);
                           lease = the connection; w0 = type, w1 = id, w2 =
                           word (wire.h's header); fn = a SUBMIT's function;
                           bytes = the frame's payload */
    RT__RANK_HANGUP,    /* either way: lease = the connection, closed */
    RT__RANK_LEND,      /* 0 -> r: the lease's running task waits (w0 = 1:
                           make room for another worker, and send back what
                           its worker will not run now) or goes on (0) */
    RT__RANK_ASK_STOP,  /* 0 -> r: rt_cancel() asks the lease's task w0 to
                           stop (rt_cancelled()) */
    RT__RANK_TOOK_BACK, /* r -> 0: w0 = how many of the lease's last tasks
                           in flight were taken back, never to run there */
    RT__RANK_PULL,      /* any -> holder: send object w0 (made by run w1) */
    RT__RANK_OBJECT,    /* holder -> who pulled: w0 = object, w1 = run, w2 =
                           found; bytes = the object's */
    RT__RANK_FREE,      /* 0 -> holder: object w0 (run w1) is not wanted */
    RT__RANK_GPU,       /* r -> 0: what the GPUs' watcher saw (watch.h): w0 =
                           kind, w1 = pid, w2 = code, w3 = the pid is one of
                           the rank's workers; lease = its lease, or 0;
                           text = the GPU's bus id */
    RT__RANK_TYPES
} rt__rank_type;

typedef struct rt__rank_msg {
    uint32_t type;
    uint64_t lease;
    uint64_t w[7];
    rt__fn_place fn, fini;   /* TASK and CALL only */
    const char *text;        /* NUL-terminated; "" when none */
    const void *bytes;       /* the bytes (inline, or in owned); NULL with fd */
    size_t len;
    int fd;                  /* sending: a memfd holding len bytes, or -1 */
    void *owned;             /* sending: an rt__buf_free()-able buffer of the len
                                bytes, which follow as pieces and are freed
                                once sent; received: the buffer of the bytes
                                that followed (bytes points to it); or NULL */
} rt__rank_msg;

/* Where messages from other ranks go: one from rank `from`, in the
 * round.  A memfd in m->fd is the callee's. */
typedef void (*rt__rank_deliver)(void *ctx, int from, const rt__rank_msg *m);

/* The round they are delivered in, as the bridge's thread may hold it:
 * take() takes it when it is free and the runtime runs (1), run() runs a
 * round and gives it back (bridge.h). */
typedef struct rt__round_hook {
    int (*take)(void *ctx);
    void (*run)(void *ctx);
    void *ctx;
} rt__round_hook;

/* The bytes of m's encoding, and its encoding into out (that many).
 * Bytes go inline when m->fd < 0 and m->owned is NULL, else they
 * follow. */
size_t rt__rank_encoded_len(const rt__rank_msg *m);
void rt__rank_encode_into(const rt__rank_msg *m, char *out);
/* Decode a message; its text and inline bytes point into buf.  When
 * *follows is set, m->len bytes follow it as pieces.  0, or -1 when the
 * bytes are not a message. */
int rt__rank_decode(const char *buf, size_t len, rt__rank_msg *m, int *follows);
/* The words of each message that has some, written and read by these
 * alone (peer.c sends what serve.c reads, and back).  A writer returns
 * the message with its words, lease and type set; a reader that can
 * refuse returns 0, or -1 when the words are not a valid message. */
rt__rank_msg rt__rank_lease(uint64_t lease, int fresh, int max_calls, rt__amount cpu);
void rt__rank_lease_read(const rt__rank_msg *m, int *fresh, int *max_calls, rt__amount *cpu);
rt__rank_msg rt__rank_release(uint64_t lease, int retire);
int rt__rank_release_read(const rt__rank_msg *m);
/* TASK: t's id, kind and run, whether a destructor follows (fini),
 * whether there is a function at all (a class without a constructor has
 * none) and whether its bytes are a table of arguments (a task of
 * several); its text, t's name and variables (rt__task_env()), written
 * into label (RT__RANK_LABEL bytes). */
#define RT__RANK_NAME 256
#define RT__RANK_LABEL (RT__RANK_NAME + 8192 + 1)
rt__rank_msg rt__rank_task(uint64_t lease, const rt__task *t, int fini, size_t remote,
                           char *label);
typedef struct rt__rank_task_words {
    uint64_t id;
    rt__task_kind kind;
    int has_fn, has_fini, table;
    unsigned attempt; /* which run of the task it is (rt__task_attempt()) */
    size_t remote;    /* objects other ranks hold among its arguments */
    char name[RT__RANK_NAME]; /* "": none */
    const char *env;  /* its variables, in the message's text, or NULL */
    uint64_t key[2];  /* with checkpoints, its key (node/keep.h), or 0, 0 */
} rt__rank_task_words;
int rt__rank_task_read(const rt__rank_msg *m, rt__rank_task_words *w);
/* ANSWER: the result's bytes inline when small (copied into the
 * message: a->result stays the caller's), else as pieces (a->result is
 * the message's then, and NULL).  Read back, the answer's result is the
 * pieces' buffer (the message's owned, handed over) or a copy. */
rt__rank_msg rt__rank_answer(uint64_t lease, rt__answer *a);
void rt__rank_answer_read(const rt__rank_msg *m, rt__answer *a);
rt__rank_msg rt__rank_lost(uint64_t lease, const rt__loss *loss);
void rt__rank_lost_read(const rt__rank_msg *m, rt__loss *loss);

/* An object another rank holds, as a TASK's table names it. */
typedef struct rt__rank_ref {
    uint64_t object, run, holder;
} rt__rank_ref;

/* PULL, OBJECT and FREE name an object by these words. */
rt__rank_msg rt__rank_object(uint32_t type, uint64_t object, unsigned run, int found);
void rt__rank_object_read(const rt__rank_msg *m, uint64_t *object, unsigned *run,
                          int *found);
/* OBJECT's bytes, as an rt__buf_free()-able buffer: the message's own pieces,
 * or a copy of inline ones; NULL, with *found 0, when the holder had
 * them not or there is no memory. */
void *rt__rank_object_take(const rt__rank_msg *m, uint64_t *object, unsigned *run,
                           int *found);

/* GPU: a watcher's record, and whose (lease 0: none of rank 0's). */
rt__rank_msg rt__rank_gpu(uint64_t lease, const rt__gpu_event *e, int ours);
void rt__rank_gpu_read(const rt__rank_msg *m, rt__gpu_event *e, int *ours);

/* CALL: a frame's header (its length is the message's). */
rt__rank_msg rt__rank_call(uint64_t connection, const rt__hdr *h);
void rt__rank_call_read(const rt__rank_msg *m, rt__hdr *h);

/* The name of a type, for errors ("ANSWER"). */
const char *rt__rank_name(uint32_t type);

#endif

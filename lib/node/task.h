/*
 * task.h - the task record, and the one queue of records every layer uses.
 *
 * A record lives from rt_remote() (or an actor call) until its result is
 * taken.  Application threads reach it through the handle table, under the
 * runtime's lock; the round's holder (runtime.h: the runtime thread, or
 * an application thread that took the round) reaches it through exactly
 * one queue
 * at a time (the incoming queue, a class's pending queue, a lease's queue
 * in flight, or the queue of finished records) by the `next` link.
 *
 * Who writes what, one part of the record each (rt__call, rt__run,
 * rt__object below): the submitter (api/, runtime/calls.c) fills the call
 * before the record is queued, and nobody writes it after; the round's
 * holder (dispatch/, sched/, the nodes) alone writes the run, which the
 * submitter only sets up, and the object's outcome, until it publishes
 * the end under the lock (obj.state becomes RT__TASK_DONE); from then on
 * the runtime (runtime/objects.c, calls.c) owns the object, under the
 * lock.  Fields marked [L] are read or written under the lock only.
 */
#ifndef RT_TASK_H
#define RT_TASK_H

#include "proto.h"
#include "rtask.h"
#include "devices/resources.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* What rt_cancel() asked: drop the result of a running task, or kill its
 * worker. */
enum { RT__CANCEL_DROP = 1, RT__CANCEL_KILL = 2, RT__CANCEL_TIMEOUT = 3,
       RT__CANCEL_GROUP = 4, /* its placement group was removed: killed */
       RT__CANCEL_MEMORY = 5 /* it held more GPU memory than its share:
                                killed (rt_config.gpu_memory_kill) */ };

typedef enum rt__task_state {
    RT__TASK_QUEUED, /* submitted: the round's holder owns it */
    RT__TASK_DONE    /* [L] the outcome is published */
} rt__task_state;

/* What a record asks a worker to run. */
typedef enum rt__task_kind {
    RT__KIND_TASK,   /* fn is an rt_fn */
    RT__KIND_CREATE, /* an actor's constructor: fn is an rt_actor_init_fn */
    RT__KIND_CALL    /* an actor method: fn is an rt_method */
} rt__task_kind;

typedef void (*rt__any_fn)(void); /* cast back to the kind's type to call */

struct rt__class;
struct rt__actor;
struct rt__deps;
struct rt__edge;

/* How a record holds its arguments: one (rt_remote()), a list of them
 * (rt_remote_args(): args), or a list already encoded as one table of
 * bytes (proto.h), which is the record's one argument: a task that
 * another rank sent. */
enum { RT__ARGS_ONE, RT__ARGS_LIST, RT__ARGS_TABLE };

/* One argument of a list: an object, or the application's bytes, inline
 * in the record or in a memfd. */
typedef struct rt__arg {
    struct rt__task *object; /* the object's record, held; or NULL */
    uint64_t len;
    uint32_t at;             /* inline bytes: where in the record's tail */
    int32_t fd;              /* a memfd holding large bytes, or -1 */
} rt__arg;

/* One custom resource of a request: its index in the node's names; or,
 * with index RT__NEED_GPU_BYTES, its GPU memory in bytes (gpu_memory). */
typedef struct rt__need {
    int64_t index;
    rt__amount amount;
} rt__need;

#define RT__NEED_GPU_BYTES (-2)
#define RT__NEED_NODES (-3) /* amount: rt__res.nodes, the set's address */
#define RT__NEED_GROUP (-4) /* amount: rt__res.group */
#define RT__NEED_BUNDLE (-5) /* amount: rt__res.bundle */

/* The record has three parts, one per owner, so that each layer reads
 * the others' parts and writes its own.  What the submitter fixes before
 * the record is queued, and every layer reads from then on: the call, as
 * a node sends it. */
typedef struct rt__call {
    uint64_t id;             /* its handle */
    rt__any_fn fn;
    struct rt__actor *actor; /* CREATE and CALL: the actor it belongs to */
    rt__amount cpu, gpu;     /* its request; custom needs (and GPU memory)
                                are in tail */
    union {
        size_t arg_len;      /* RT__ARGS_ONE, RT__ARGS_TABLE: its bytes */
        uint32_t nargs;      /* RT__ARGS_LIST: entries of rt__task_args()
                                (read it through rt__task_nargs()) */
    };
    struct rt__more *more;   /* what few records have, or NULL */
    uint32_t seq;            /* submission order, for fairness between
                                classes (rt__seq_before(): it wraps) */
    int max_calls;           /* of the workers that may run it; 0 = unlimited */
    int arg_fd;              /* memfd holding the argument, or -1 */
    unsigned char nneeds;    /* rt__need entries at the start of tail */
    unsigned char kind : 2;      /* rt__task_kind */
    unsigned char args_form : 2; /* RT__ARGS_* */
    unsigned char nested : 1;    /* submitted by a task, it goes first in
                                    line (the waiting task's work first) */
    unsigned char retry_exceptions : 1; /* a failed function spends a retry */
    unsigned char has_env : 1;   /* variables of its own follow its name in
                                    tail (rt__task_env()) */
} rt__call;

/* What few records have, apart so that the many stay small (a million
 * queued tasks are a million records): made by the submitter before the
 * record is queued (rt__task_more()), freed with the record.  The call's
 * fields are fixed from then on; parts and timed_at are the run's. */
typedef struct rt__more {
    char *name;              /* the name given, in the record's tail */
    uint64_t key[2];         /* with checkpoints: what determines its result
                                (runtime/checkpoint.c), or 0, 0: none */
    uint64_t whole;          /* a part (one of several results): its task's
                                handle; else 0 */
    /* num_returns > 1: the first of its results after the first (its
     * parts), made with it; each links the next through its `next`
     * (parts are on no queue).  They end when it does
     * (rt__task_end_parts()), which unlinks them. */
    struct rt__task *parts;
    uint32_t timeout_ms;     /* how long it may run; 0 = no limit */
    uint32_t timed_at;       /* its place among the timed tasks + 1, or 0 */
} rt__more;

/* Where the task is in its life: set up by the submitter, then the round
 * holder's alone, from the round that takes it in until the one that
 * publishes its end. */
typedef struct rt__run {
    struct rt__class *cls;   /* the class it is filed under */
    uint64_t queued_ns;      /* taken in by a round, when a timeline records */
    struct rt__edge *waiters; /* who wait for it */
    struct rt__deps *deps;   /* RT__ARGS_LIST: what it waits for, or NULL */
    uint64_t board_seq;      /* in flight: its entry on the node's board
                                (board.h), or 0 */
    int retries_left;
    unsigned char runs_lost;   /* runs lost with their worker, then retried
                                  (counted up to RT__ATTEMPT_MAX) */
    unsigned char runs_failed; /* runs whose function failed, then retried
                                  (retry_exceptions; as runs_lost) */
    unsigned char cancelling; /* RT__CANCEL_*: what rt_cancel() asked, or a
                                 time limit passed */
    unsigned char ended : 1;     /* its outcome is known */
    unsigned char resuming : 1;  /* in the dispatcher's resuming or resumed
                                    list */
    unsigned char parked : 1;    /* it waits for objects that other ranks
                                    hold to come here */
    unsigned char early : 1;     /* filed before the objects it takes
                                    ended, from the board */
    unsigned char bounced : 1;   /* sent early, it was not run; it is never
                                    sent early again */
    unsigned char inside : 1;    /* it runs inside the wait of a task that
                                    waits for it, in that task's worker
                                    (rt__sched_sent_inside()) */
    unsigned char packed : 1;    /* its result is several, packed
                                    (rt_result_set_at(), proto.h): split
                                    when it ends */
} rt__run;

/* The object the record is once it ended (or from rt_put()), and what
 * the runtime keeps of its handle.  The outcome (the fields not marked
 * [L]) is written by the round's holder until it publishes the end (state), and
 * read under the lock from then on; the fields marked [L] are read and
 * written under the lock only. */
typedef struct rt__object {
    char *error;             /* the message rt_get() gives, or NULL */
    /* Where its bytes are: in memory (result: a large result's buffer
     * owns the sealed memfd that workers map, rt__shm_fd(); or the bytes
     * of rt_put()), or, once spilled, in a file (spill_file: [L] the file
     * they were moved to, runtime/spill.c; rt__task_free() removes it). */
    union {
        void *result;        /* !spilled: rt__buf_free()-able bytes, or NULL */
        char *spill_file;    /* spilled */
    };
    size_t result_len;
    signed char status;      /* RT_OK, RT_ETASK, RT_EWORKERDIED, ... */
    unsigned char held_run;  /* with holder: the run that made them */
    unsigned char went_run;  /* [L] see going_on: which run
                                (rt__task_attempt()) */
    int task_status;         /* what the function returned */
    uint32_t holds;          /* [L] who keep it besides the application's
                                handle: unfinished tasks that take it,
                                views, a copy being read */
    uint16_t holder;         /* the node that holds its bytes when it is an
                                object made on another rank (result NULL
                                until pulled here), else 0 */
    unsigned char state : 1;     /* [L] rt__task_state */
    unsigned char orphan : 1;    /* [L] handle released: free it when done */
    unsigned char awaited : 1;   /* [L] a thread waits for its end alone
                                    (rt_get()): its publishing wakes them */
    unsigned char going_on : 1;  /* [L] a wait of run went_run ended and the
                                    run has its CPUs back (rt__call_lend()) */
    unsigned char watched : 1;   /* [L] a notice is asked for (rt_notify()) */
    unsigned char pulling : 1;   /* [L] its bytes were asked of its holder
                                    (holder), for a reader here */
    unsigned char has_children : 1; /* [L] tasks it submitted are on record
                                       (runtime/children.c) */
    unsigned char cancelling : 1; /* [L] a recursive rt_cancel() was asked:
                                     what it submits from now on is
                                     cancelled as it comes */
    unsigned char cancel_kills : 1; /* [L] with cancelling: with force */
    unsigned char spilling : 1;  /* [L] its bytes are being written to a
                                    file */
    unsigned char spilled : 1;   /* [L] its bytes are in spill_file */
    unsigned char restoring : 1; /* [L] its bytes are being read back */
    unsigned char unkept : 1;    /* [L] its result is not to be checkpointed
                                    (it names handles, or it yielded) */
} rt__object;

typedef struct rt__task {
    struct rt__task *next;   /* the one queue it is on */
    rt__call call;
    rt__run run;
    rt__object obj;
    _Alignas(8) char tail[]; /* needs, arguments, the name (8 is enough
                                for them: a 16 would round the record up) */
} rt__task;

/* Its bytes in memory: result, NULL while spilled (spill_file) or none. */
static inline void *rt__task_bytes(const rt__task *t)
{
    return t->obj.spilled ? NULL : t->obj.result;
}

/* The name it was given (rt_opts.name), or NULL. */
static inline const char *rt__task_named(const rt__task *t)
{
    return t->call.more ? t->call.more->name : NULL;
}

/* Its own variables (rt_opts.env_vars): "NAME=value" lines; NULL: none. */
static inline const char *rt__task_env(const rt__task *t)
{
    const char *name = rt__task_named(t);
    return t->call.has_env ? name + strlen(name) + 1 : NULL;
}

/* Its checkpoint key (rt__more), or NULL: none. */
static inline const uint64_t *rt__task_key(const rt__task *t)
{
    return t->call.more && t->call.more->key[0] ? t->call.more->key : NULL;
}

/* A part's task (rt__more's whole), or 0. */
static inline uint64_t rt__task_whole(const rt__task *t)
{
    return t->call.more ? t->call.more->whole : 0;
}

/* Its time limit in ms, or 0: none. */
static inline uint32_t rt__task_timeout_ms(const rt__task *t)
{
    return t->call.more ? t->call.more->timeout_ms : 0;
}

/* The first of its parts (rt__more), or NULL. */
static inline struct rt__task *rt__task_parts(const rt__task *t)
{
    return t->call.more ? t->call.more->parts : NULL;
}

/* RT__ARGS_LIST: how many arguments; 0 for the other forms. */
static inline uint32_t rt__task_nargs(const rt__task *t)
{
    return t->call.args_form == RT__ARGS_LIST ? t->call.nargs : 0;
}

/* One more run lost or failed (runs_lost, runs_failed), counted up to
 * RT__ATTEMPT_MAX as rt__task_attempt() counts them. */
static inline void rt__task_count_run(unsigned char *runs)
{
    if (*runs < RT__ATTEMPT_MAX)
        (*runs)++;
}

/* Whether submission a came before b (seq wraps: records queued at
 * once are never 2^31 submissions apart). */
static inline int rt__seq_before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

/* What t waits for (graph.h), or NULL: only a list can hold objects. */
static inline struct rt__deps *rt__task_deps(const rt__task *t)
{
    return t->call.args_form == RT__ARGS_LIST ? t->run.deps : NULL;
}

/* RT__ARGS_LIST: the record's arguments, after its needs in tail. */
static inline struct rt__arg *rt__task_args(const rt__task *t)
{
    return (struct rt__arg *)(void *)((char *)(uintptr_t)t->tail + t->call.nneeds * sizeof(rt__need));
}

/* A FIFO of records through their `next` links. */
typedef struct rt__tasks {
    rt__task *head, *tail;
    size_t count;
} rt__tasks;

void rt__tasks_push(rt__tasks *q, rt__task *t);
void rt__tasks_push_front(rt__tasks *q, rt__task *t);
/* Put t right before `before` in q (at the end when q lacks it). */
void rt__tasks_insert_before(rt__tasks *q, rt__task *t, const rt__task *before);
/* The first record, taken off the queue; NULL when empty. */
rt__task *rt__tasks_pop(rt__tasks *q);
/* Move every record of from to the end of q. */
void rt__tasks_append(rt__tasks *q, rt__tasks *from);
/* Move the last n records of q (all when it has fewer), in their order,
 * into *tail, which must be empty. */
void rt__tasks_split_tail(rt__tasks *q, size_t n, rt__tasks *tail);
/* Free every record of q (rt__task_free()), leaving it empty. */
void rt__tasks_free(rt__tasks *q);

/* A record of fn(arg): the argument inline, or in a memfd when large; the
 * name and the task's variables (env_vars's lines, checked; either may be
 * NULL) copied; room for nneeds custom needs, which the request writes
 * (request.h).  0 or an error code with a message. */
int rt__task_new(rt__task_kind kind, rt__any_fn fn, const char *name, const char *env,
                 int nneeds, const void *arg, size_t arg_len, rt__task **out);
/* A record of fn(args): each argument that is bytes copied, inline or in
 * a memfd; each that is an object (a ref) left empty, for the caller to
 * fill with the object's record.  As rt__task_new(). */
int rt__task_new_args(rt__task_kind kind, rt__any_fn fn, const char *name, const char *env,
                      int nneeds, const rt_arg *args, size_t nargs, rt__task **out);
/* The bytes an object keeps: len bytes in an rt__buf_free()-able buffer,
 * a sealed memfd's mapping when large (which workers map), written by
 * fill(dst, len, ctx) (0, or -1 when it could not); NULL without memory
 * or when fill failed.  rt__task_object_bytes() copies data;
 * rt__task_read_fd() is a fill that reads a descriptor (ctx: an int *). */
typedef int rt__task_fill(void *dst, size_t len, const void *ctx);
void *rt__task_object_fill(size_t len, rt__task_fill *fill, const void *ctx);
void *rt__task_object_bytes(const void *data, size_t len);
int rt__task_read_fd(void *dst, size_t len, const void *ctx);
/* A record that is an object from the start (rt_put()): len bytes copied,
 * into a sealed memfd when large, ended with RT_OK.  0 or an error. */
int rt__task_new_object(const void *data, size_t len, rt__task **out);
/* num_returns: n - 1 parts for t (rt__task_add_parts()), not yet
 * queued; 0 or RT_ENOMEM, with none made.  t ended (its status set): its
 * parts end with it, each with its own result when t's is packed (t
 * keeps the first), else with t's outcome and no bytes; they leave t
 * into *out, in order.  A packed result that is malformed, or has more
 * results than t has parts, fails t and them. */
int rt__task_add_parts(rt__task *t, unsigned n);
void rt__task_end_parts(rt__task *t, rt__tasks *out);
/* Free the parts t still has (its submission failed). */
void rt__task_free_parts(rt__task *t);
/* RT__ARGS_LIST: the arguments as a message carries them, into out (room
 * for t->nargs): an object's result bytes and memfd, or its board entry
 * while it has not ended, or the bytes given. */
void rt__task_arg_msgs(const rt__task *t, rt__arg_msg *out);
/* A record of an object id of len bytes (rt__buf_free()-able, now the
 * record's; NULL: none yet), as a serving rank keeps one; NULL without
 * memory. */
rt__task *rt__task_new_held(uint64_t id, void *bytes, size_t len);
/* Such a record's object is id from now on (an object kept before rank 0
 * named it: cluster/tunnel.c). */
void rt__task_held_renamed(rt__task *o, uint64_t id);

/* Objects whose bytes another node holds go with their records: whoever
 * frees such a record (any thread), the round's holder then tells the
 * holder.  rt__task_free() notes them; this takes up to max of the notes
 * (their holder, id and run). */
typedef struct rt__forgotten {
    uint64_t object;
    int holder;
    unsigned run;
} rt__forgotten;
size_t rt__task_forgotten(rt__forgotten *out, size_t max);
/* The inline argument bytes, or NULL when they are in arg_fd. */
const void *rt__task_arg(const rt__task *t);
/* The custom needs the record carries. */
const rt__need *rt__task_needs(const rt__task *t);
/* The record's whole request. */
void rt__task_request(const rt__task *t, rt__res *req);
/* Which run of t this is (or was, once it ended): 0 for the first, up to
 * RT__ATTEMPT_MAX; a worker is told it, and tells it back when its task
 * lends its CPUs, so that a run that is over cannot lend the next run's. */
unsigned rt__task_attempt(const rt__task *t);
/* Record a failure and the message rt_get() will give (printf format). */
void rt__task_fail(rt__task *t, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The error of a failed record, with its message, as rt_get() gives it
 * (rt__error()); 0 when it succeeded. */
int rt__task_explain(const rt__task *t);
/* t's rt__more, made when it has none: the submitter's, before t is
 * queued.  NULL without memory. */
rt__more *rt__task_more(rt__task *t);
/* Free a record, its argument memfd, its message and its result, and the
 * parts it still has.  The holds it has on the objects it takes are the
 * caller's to drop first. */
void rt__task_free(rt__task *task);

#endif

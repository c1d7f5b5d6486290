/*
 * proto.h - every message between the runtime, the fork server and the
 * workers: its type, what its fields mean, and its encoding and decoding,
 * in this one place (both sides include it).
 *
 * A message is a wire header (wire.h) whose id and word carry the fields
 * below, and a payload or, for large bytes, a memfd.
 */
#ifndef RT_PROTO_H
#define RT_PROTO_H

#include "wire.h"

#include <rtask.h>

#include <stddef.h>
#include <stdint.h>

typedef enum rt__msg_type {
    RT__MSG_TASK = 1,     /* app -> worker: id, word = function, payload = argument */
    RT__MSG_NAME,         /* app -> worker: payload = name for output prefixes;
                             word 1: the runtime labels the next task's
                             lines itself (no marker needed) */
    RT__MSG_RESULT,       /* worker -> app: id, word = status and run time,
                             payload = result */
    RT__MSG_SPAWN,        /* app -> fork server: id = worker key, word = run slot;
                             fds: socket, stdout, stderr */
    RT__MSG_SPAWNED,      /* fork server -> app: id = worker key, word = pid */
    RT__MSG_SPAWN_FAILED, /* fork server -> app: id = worker key, word = errno */
    RT__MSG_EXITED,       /* fork server -> app: id = worker key, word = wait status */
    RT__MSG_DEVICES,      /* app -> worker: payload = rt__devices's lines */
    RT__MSG_ENV,          /* app -> worker: payload = the next tasks' own
                             variables, "NAME=value" lines (none: empty) */
    RT__MSG_ACTOR,        /* app -> worker: become an actor; id = its handle,
                             word = destructor, payload = its concurrency */
    RT__MSG_CREATE,       /* app -> worker: as TASK, word = actor constructor */
    RT__MSG_CALL,         /* app -> worker: as TASK, word = actor method */
    RT__MSG_ARG,          /* app -> worker: one argument of the next TASK_ARGS
                             or CALL_ARGS, as a memfd of len bytes */
    RT__MSG_TASK_ARGS,    /* app -> worker: as TASK, payload = argument table */
    RT__MSG_CALL_ARGS,    /* app -> worker: as CALL, payload = argument table */
    RT__MSG_SPARE,        /* app -> worker: a memfd of len bytes, its pages
                             in place, to fill with its next large result */
    RT__MSG_POST,         /* app -> worker: id = seq: post the next task's
                             result on the node's board (board.h) */
    RT__MSG_LAST,         /* app -> worker: the next task is the worker's
                             last (it retires after it) */
    RT__MSG_RESULTS,      /* worker -> app: as RESULT, payload = several
                             results, packed (rt__parts_write()) */
    RT__MSG_WAKE,         /* app -> worker: nothing; its next messages wait
                             in its inbox (inbox.h) */
    RT__MSG_TYPES
} rt__msg_type;

/* The name of a message type, for logs and errors ("RESULT"). */
const char *rt__msg_name(uint32_t type);

/* One argument of a task of several: bytes, or a memfd of len bytes
 * (fd >= 0; data, when not NULL, is its mapping); or, board set, the
 * result another task posts on the node's board under that seq (0: one
 * that will never be there). */
typedef struct rt__arg_msg {
    const void *data;
    size_t len;
    int fd;
    int board;
    uint64_t seq;
} rt__arg_msg;

/* A task for a worker: TASK, CREATE or CALL; or TASK_ARGS or CALL_ARGS,
 * whose argument is a table of arguments.
 *
 * The argument table, one codec for every way it travels: a 64-bit count
 * n (at most RT_ARGS_MAX), n 64-bit entries (an argument's length, its
 * top bit set when its bytes come as a memfd in an ARG message before the
 * task, in their order; the next bit when it is a board entry, whose 8
 * bytes are its seq), then the other arguments' bytes one after the
 * other, each padded to 16 bytes. */
#define RT__ATTEMPT_MAX 255u /* a task's runs are counted up to this */

typedef struct rt__task_msg {
    uint32_t type;
    uint64_t id;
    uint64_t fn;       /* the function's address in the worker's image */
    unsigned attempt;  /* 0 on its first run, then 1, 2... (up to
                          RT__ATTEMPT_MAX) */
    const void *arg;   /* inline argument bytes (or table), or NULL with arg_fd */
    size_t len;
    int arg_fd;        /* a memfd holding the argument, or -1; not consumed */
    const rt__arg_msg *args; /* sending TASK_ARGS/CALL_ARGS: the arguments,
                                encoded into a table; NULL: arg is one */
    size_t nargs;
    int by_fd;         /* send arguments in memfds as ARG messages; else
                          every one goes inline in the table */
} rt__task_msg;

/* The table of args (see rt__task_msg) as bytes: its size, and writing
 * it at dst (an argument in a memfd and without data is marked to come
 * by ARG; by_fd 0 copies every one inline, so each needs data). */
size_t rt__args_size(const rt__arg_msg *args, size_t n, int by_fd);
void rt__args_write(char *dst, const rt__arg_msg *args, size_t n, int by_fd);
/* Read a table of len bytes: out gets its n arguments (room for
 * RT_ARGS_MAX), pointing into the table or, in order, to the nmapped
 * arguments that came by ARG (mapped NULL: those entries get their
 * length and NULL data, up to nmapped of them); a board entry's points
 * at its seq, and sets its byte of board (room for RT_ARGS_MAX), or
 * breaks the form where board is NULL.  0, or -1 when the table is not
 * that form. */
int rt__args_read(const char *table, size_t len, const rt_value *mapped, size_t nmapped,
                  rt_value *out, unsigned char *board, size_t *n);

/* A task's answer.  When sys_errno is set the worker could not run the
 * task (it could not map its argument); bounced, it did not run it (a
 * board entry it takes is not there: board.h); status is what the
 * function returned; run_us how long it ran. */
typedef struct rt__result_msg {
    uint64_t id;
    int status;
    int sys_errno;
    int bounced;
    int packed;        /* the bytes are several results (RESULTS) */
    uint64_t run_us;
    const void *data;  /* inline result bytes, or NULL with fd */
    size_t len;
    int fd;            /* a memfd holding the result, or -1 */
} rt__result_msg;

/* Several results of one task (rt_result_set_at()) travel as one, in a
 * RESULTS: a 64-bit count n (1 to RT_RETURNS_MAX), n 64-bit lengths,
 * then the results' bytes one after the other.  Its size (0 when the
 * lengths overflow), writing it at dst, and reading len bytes of it into
 * out (room for RT_RETURNS_MAX; its entries point into src): 0, or -1
 * when they are not that form. */
size_t rt__parts_size(const rt_value *parts, size_t n);
void rt__parts_write(char *dst, const rt_value *parts, size_t n);
int rt__parts_read(const void *src, size_t len, rt_value *out, size_t *n);

/* The devices of a lease: the ids of its GPUs and of its other
 * accelerators ("0,3"), the CPUs to bind to ("" = any), its share of each
 * GPU (in units of 1/10000) and the bytes of memory that share is of
 * each ("21474836480,0"); and what the node adds (above the node, ""):
 * the resource its other accelerators are ("neuron_cores", "TPU"...) and
 * the environment that names them all (family.h: "NAME=value" or "NAME"
 * lines). */
typedef struct rt__devices {
    const char *gpus, *accel, *cpus;
    long share;
    const char *memory, *accel_name, *env;
} rt__devices;

/* The one text form of rt__devices, which a worker's DEVICES and rank 0's
 * DEVICES to another rank both carry: a line per field in the struct's
 * order, the share in decimal, the environment's lines last.  Encoding
 * returns an rt__malloc()ed string, or NULL without memory; decoding
 * points d into *copy (the caller rt__free()s it) and returns 0, or -1
 * when the text is not that form (a field missing, a share that is not a
 * number from 0 to RT__UNIT) or without memory. */
char *rt__devices_encode(const rt__devices *d);
int rt__devices_decode(const char *text, size_t len, rt__devices *d, char **copy);
/* Whether a and b name the same devices (the environment follows from
 * them and from the node, which does not change). */
int rt__devices_same(const rt__devices *a, const rt__devices *b);

/* Sending: 0, or -1 when out of memory.  Descriptors given are the
 * channel's from then on (closed once sent), except arg_fd. */
int rt__proto_send_task(rt__chan *c, const rt__task_msg *m);
int rt__proto_send_name(rt__chan *c, const char *name, int labelled);
int rt__proto_send_env(rt__chan *c, const char *vars);
/* DEVICES carries text from rt__devices_encode(). */
int rt__proto_send_devices(rt__chan *c, const char *text);
/* The most methods an actor may run at once (rt_opts.max_concurrency). */
#define RT__CONCURRENCY_MAX 1024
int rt__proto_send_actor(rt__chan *c, uint64_t handle, uint64_t fini, uint64_t concurrency);
int rt__proto_send_spare(rt__chan *c, int fd);
int rt__proto_send_post(rt__chan *c, uint64_t seq);
int rt__proto_send_last(rt__chan *c);
int rt__proto_send_wake(rt__chan *c);
int rt__proto_send_result(rt__chan *c, const rt__result_msg *r);
/* A RESULT with inline bytes written at dst as a channel carries it: its
 * size, or 0 when it needs more than room bytes or has a memfd. */
size_t rt__proto_write_result(char *dst, size_t room, const rt__result_msg *r);
int rt__proto_send_spawn(rt__chan *c, uint64_t key, uint64_t slot, int fds[3]);
/* SPAWNED, SPAWN_FAILED or EXITED. */
int rt__proto_send_notice(rt__chan *c, uint32_t type, uint64_t id, uint64_t word);

/* Receiving: check a message taken with rt__chan_next() and decode it.
 * 0, or -1 when it breaks the protocol (its descriptors are then closed). */
int rt__proto_read_task(const rt__hdr *h, const char *payload, const int *fds,
                        rt__task_msg *m);
/* ARG or SPARE: its memfd (now the caller's) and length. */
int rt__proto_read_arg(const rt__hdr *h, const int *fds, int *fd, size_t *len);
int rt__proto_read_result(const rt__hdr *h, const char *payload, const int *fds,
                          rt__result_msg *r);
/* The lines of DEVICES, copied into *copy (the caller frees it). */
int rt__proto_read_devices(const rt__hdr *h, const char *payload,
                           rt__devices *d, char **copy);

#endif

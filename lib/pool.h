/*
 * pool.h - the worker processes, seen from the runtime thread.
 *
 * Workers are forked by the fork server on request; the runtime thread
 * keeps each one's socket, output pipes, lease and in-flight tasks.  A
 * worker is usable as soon as it is requested: tasks wait in its socket
 * until it runs.  Everything here belongs to the runtime thread.
 */
#ifndef RT_POOL_H
#define RT_POOL_H

#include "instance.h"
#include "output.h"
#include "task.h"
#include "wire.h"
#include "worker.h"

#include <stdint.h>
#include <sys/types.h>

struct rt__class;

/* What an epoll event points at. */
typedef enum rt__watch_kind {
    RT__WATCH_WAKE,
    RT__WATCH_FORKSERVER,
    RT__WATCH_SOCKET,
    RT__WATCH_OUTPUT
} rt__watch_kind;

typedef struct rt__watch {
    rt__watch_kind kind;
    int fd;
    int want_out;             /* EPOLLOUT is armed */
    struct rt__worker *worker;
    rt__relay *relay;         /* for RT__WATCH_OUTPUT */
} rt__watch;

typedef struct rt__worker {
    struct rt__worker *next;
    uint64_t key;
    pid_t pid;                /* 0 until the fork server says */
    rt__chan chan;            /* fd -1 once closed; input may remain */
    rt__relay out, err;
    rt__watch w_sock, w_out, w_err;
    struct rt__class *lease;  /* NULL while idle */
    rt__grant grant;          /* the instances the lease holds */
    int calls;                /* tasks sent to it in its life */
    rt__task *head, *tail;    /* in flight, in the order sent */
    size_t inflight;
    char *name_sent;          /* the NAME last sent, or NULL */
    char *devices_sent;       /* the DEVICES payload last sent, or NULL */
    int retiring;             /* gets no more tasks; exits at end of file */
    int stop_sending;         /* give it end of file once its output is sent */
    int shut;                 /* that end of file was given */
    int has_input;            /* bytes arrived since results were taken */
    int gone;                 /* exited, or could not be started */
    size_t slot;              /* its run slot (worker.h) */
    uint64_t started;         /* tasks it started in its life (its run slot) */
    int lost;                 /* it left because its socket failed */
    int wait_status;          /* how it exited (waitpid status) */
    int spawn_errno;          /* why the fork server could not fork it */
} rt__worker;

typedef struct rt__pool {
    rt__worker *all;
    size_t count;             /* workers not yet gone */
    size_t target_idle;       /* idle workers kept ready */
    size_t max;               /* never more workers than this */
    rt__run_slot *slots;      /* max of them, shared with the workers */
    unsigned char *slot_used; /* max flags */
    int spawn_failing;        /* the last spawn failed: no idle top-ups */
    uint64_t next_key;
    int epoll_fd;
    rt__chan *forkserver;
    rt__watch *w_forkserver;
} rt__pool;

/* slots: max run slots in shared memory.  0, or -1 when out of memory. */
int rt__pool_init(rt__pool *p, int epoll_fd, rt__chan *forkserver,
                  rt__watch *w_forkserver, size_t target_idle, size_t max,
                  rt__run_slot *slots);
/* An idle worker bound to cls, starting one when none is idle; NULL when
 * the pool is full or a system call failed. */
rt__worker *rt__pool_lease(rt__pool *p, struct rt__class *cls);
/* The lease is over: keep the worker idle, or retire it. */
void rt__pool_unlease(rt__pool *p, rt__worker *w, int retire);
/* Start workers until target_idle are idle. */
void rt__pool_top_up(rt__pool *p);
/* Queue a task for w; the task joins w's in-flight list.  0 or -1. */
int rt__pool_send(rt__worker *w, rt__task *task);
/* Tell w which devices its lease holds (a DEVICES message), unless it
 * knows already.  0 or -1. */
int rt__pool_send_devices(rt__worker *w, const char *payload, size_t len,
                          uint64_t word);
/* Pop w's oldest in-flight task, or NULL. */
rt__task *rt__pool_pop(rt__worker *w);
/* Send queued output everywhere; arm EPOLLOUT where a socket is full. */
void rt__pool_flush(rt__pool *p);
/* Read what a worker's socket holds (runs without the lock). */
void rt__pool_read(rt__pool *p, rt__worker *w);
/* Relay what an output pipe holds (runs without the lock). */
void rt__pool_relay(rt__pool *p, rt__watch *w);
/* Send w what it has queued, then end of file, while still reading its
 * answers: an actor finishes its calls, runs its destructor and exits. */
void rt__pool_stop_sending(rt__worker *w);
/* Kill a worker that broke the protocol; its exit is reported later. */
void rt__pool_kill(rt__pool *p, rt__worker *w);
/* The worker a fork server message is about, or NULL. */
rt__worker *rt__pool_find_key(rt__pool *p, uint64_t key);
rt__worker *rt__pool_find_pid(rt__pool *p, pid_t pid);
/* How long w's current task has run, in microseconds; 0 between tasks. */
uint64_t rt__pool_busy_us(const rt__pool *p, const rt__worker *w, uint64_t now_ns);
/* Read what a gone worker left in its socket and pipes. */
void rt__pool_drain(rt__pool *p, rt__worker *w);
/* Unlink and free a gone worker whose tasks were dealt with. */
void rt__pool_remove(rt__pool *p, rt__worker *w);
/* Free every worker (the fork server has killed them). */
void rt__pool_free(rt__pool *p);

#endif

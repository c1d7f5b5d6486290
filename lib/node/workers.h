/*
 * workers.h - the local node's worker records, private to local.c and
 * workers.c: local.c is the node (its operations, its pool, its start and
 * stop); workers.c is each worker's record: how its process is asked of
 * the fork server, how its socket and output pipes are read, and how its
 * loss is told, with the results its journal kept.
 */
#ifndef RT_WORKERS_H
#define RT_WORKERS_H

#include "board.h"
#include "forkserver.h"
#include "node.h"
#include "output.h"
#include "spares.h"
#include "worker.h"
#include "base/list.h"
#include "base/loop.h"
#include "devices/detect.h"
#include "devices/family.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

/* The local node's state (its calls are local.h's), shared by local.c
 * and workers.c. */
typedef struct rt__local rt__local;

/* Run slots are mapped before the fork server is forked, so the mapping
 * cannot grow later: map room for this many workers at once (512 MiB of
 * addresses).  Pages are touched only as workers use them, and a freed
 * slot is the first one reused. */
#define SLOTS_MAX 32768
/* A worker holds six descriptors here until its SPAWN reaches the fork
 * server, three afterwards: start at most this many at a time. */
#define STARTING_MAX 256
/* After a fork failed (the process limit), tasks wait for the workers
 * that run, and a new one is tried again after this long. */
#define SPAWN_RETRY_NS 1000000000ull


struct rt__worker {
    rt__link link;             /* in the list of workers */
    rt__link idle_link;        /* in the idle list while idle */
    rt__worker *dnext;         /* in the list of workers with output to send */
    rt__local *node;
    uint32_t slot;             /* its run slot; also its key with the fork server */
    uint64_t shm_owner;        /* its memfds' owner in the pool (shm.h) */
    pid_t pid;                 /* 0 until the fork server says */
    rt__chan chan;             /* fd -1 once closed; input may remain */
    rt__relay out, err;
    rt__watch w_sock, w_out, w_err;
    void *owner;               /* the dispatcher's lease, NULL while idle */
    size_t calls;              /* tasks sent to it in its life */
    size_t answered;           /* answers it gave */
    size_t read_from_socket;   /* answers read from its socket: one within
                                  answered was taken from its journal before
                                  (rt__workers_read_answers()) */
    rt__journal_cursor journal_read; /* where that left off */
    uint64_t sent;             /* bytes sent on its socket */
    uint64_t inbox_put;        /* batches put in its inbox (inbox.h) */
    size_t taken_back;         /* tasks sent that it will never run */
    size_t inside;             /* of calls, those given to a waiting task
                                  to run inside its wait (node.h): they
                                  came by no socket, and started at once */
    size_t max_calls;          /* its lease's tasks at most; 0: unlimited */
    uint64_t last_task;        /* the task it was told is its last, or 0 */
    size_t last_large;         /* its last answer's bytes when in a memfd
                                  (0: none since): it gets a memfd of the
                                  pool that size for its next result */
    char *name_sent;           /* the NAME last sent, or NULL */
    char *env_sent;            /* the ENV last sent, or NULL: none */
    rt__devices devices_sent;  /* the devices last sent, pointing into */
    char *devices_text;        /* this, or NULL before any */
    unsigned dirty : 1, retiring : 1, stop_sending : 1, shut : 1, gone : 1, actor : 1,
        broke : 1, send_failed : 1, lent : 1, leaving : 1;
    int wait_status;           /* how it exited */
    int spawn_errno;           /* why the fork server could not fork it */
    uint64_t spawn_ns;         /* when the fork server was asked for it */
};

#define RT__SOON_KEPT 8

struct rt__local {
    rt__node node;             /* ops and events: what the dispatcher sees */
    rt__family_set families;   /* what its tasks are told of their devices */
    rt__loop *loop;
    pid_t forkserver_pid;
    int forkserver_exited;        /* its pidfd: readable once it has ended */
    rt__chan forkserver;
    rt__watch w_forkserver;
    int failed;                /* the fork server is gone */
    rt__run_slot *slots;
    rt__board_keeper board;    /* small results between its workers */
    uint32_t *free_slots;      /* a stack of unused slot numbers */
    /* The slots (1 up) whose workers were told last that a caller may
     * wait soon (worker.h's RT__AWAIT_SOON), for rt__local_unhold(): a
     * few, so that a wait looks at them alone, not at every worker's. */
    _Atomic uint32_t soon[RT__SOON_KEPT];
    _Atomic uint32_t soon_next;
    size_t nfree;
    rt__worker **by_slot;
    rt__link all, idle;        /* workers: running, idle (also in all) */
    rt__worker *dirty;
    size_t nidle, task_workers;
    size_t nfresh;             /* idle workers that never ran a task */
    rt__spares spares;         /* how many of those to keep */
    pthread_t thread;          /* the runtime thread, which forks them */
    rt__wake refill;           /* other threads ask it to */
    size_t starting;           /* asked for, not yet reported by the fork server */
    size_t target_idle, max;
    int door;                  /* the application's end of the door (client.h) */
    size_t lent;               /* workers whose task waits for others: not
                                  counted in task_workers (at most max) */
    int spawn_failing;         /* the last spawn failed: no idle top-ups */
    uint64_t spawn_retry_ns;   /* and no new worker before then, while one runs */
    size_t running;            /* workers whose process runs */
    int gpu_watch;             /* the GPUs' watcher's pipe, or -1 */
    rt__watch w_gpu;
    rt__machine *gpus;         /* what it watches (a copy), to start another */
    pid_t watcher;             /* its pid once it said it watches; 0 before */
    int unwatched;             /* it said NVML could not start: it ends */
    pid_t replacing;           /* the dead one it replaces, until it watches
                                  (-1: one that died as it started) */
    uint64_t watcher_since_ns; /* when it started */
    int quick_deaths;          /* watchers in a row that ended soon after start */
    char journal_copy[RT__JOURNAL_BYTES]; /* the round's holder's, reading a
                                  live worker's journal (journal.h) */
};

/* The lists: idle workers (fresh ones counted), and those with output to
 * send at the end of the round. */
void rt__workers_idle_add(rt__local *l, rt__worker *w);
void rt__workers_idle_remove(rt__local *l, rt__worker *w);
void rt__workers_dirty(rt__worker *w);

/* Ask the fork server for a worker, usable at once (what is sent waits
 * in its socket); NULL with errno (EAGAIN: too many start now). */
rt__worker *rt__workers_start(rt__local *l);
/* Free a record whose process is gone, relaying the output it left. */
void rt__workers_free(rt__worker *w);

/* Send what w has queued (caller_waits: as node.h's flush); what the
 * fork server has queued. */
void rt__workers_flush(rt__worker *w, int caller_waits);
void rt__workers_flush_forkserver(rt__local *l);
/* End of file for a worker told to stop, once all it was sent is gone. */
void rt__workers_shut_if_stopping(rt__worker *w);
/* No more tasks: end of file for the worker, which exits then. */
void rt__workers_close_socket(rt__worker *w);
/* Make fd non-blocking (the runtime's ends of sockets and pipes). */
int rt__workers_nonblocking(int fd);
/* SIGKILL its process; the same, for a worker that broke the protocol
 * (nothing more it says is believed). */
void rt__workers_kill_process(rt__worker *w);
void rt__workers_kill(rt__worker *w);

/* The loop's callbacks: a worker's socket, the fork server's. */
void rt__workers_on_socket(rt__watch *wt, uint32_t events);
void rt__workers_on_forkserver(rt__watch *wt, uint32_t events);
/* A caller that waited for w's answer reads it (local.c's await): from
 * its socket when ready (or when answers it sent are still there), then
 * those it kept in its journal without sending them.  Whether any came. */
int rt__workers_read_answers(rt__worker *w, int ready);

#endif

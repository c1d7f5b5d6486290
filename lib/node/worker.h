/*
 * worker.h - the loop that runs tasks inside a worker process.
 *
 * A worker reads TASK messages from its socket, runs each function, and
 * answers with RESULT messages in the same order.  Its stdout and stderr
 * are pipes read by the application (output.h), which prefixes every line with
 * "(name pid=N) "; the worker writes a marker into both pipes whenever the
 * name changes, so the prefix travels in order with the output itself.
 */
#ifndef RT_WORKER_H
#define RT_WORKER_H

#include "client.h"
#include "inbox.h"
#include "journal.h"

#include <stdint.h>

/* One per worker, in memory shared by the application, the fork server
 * and every worker (mapped before the fork server is forked).  The worker
 * writes there which of the tasks it received it started last and the id
 * of the one it runs (0 between tasks) and when it began, and keeps there
 * the results it has not sent yet (journal.h).  When the worker dies, the
 * runtime takes the results it never received from the journal, and
 * knows from `starts` whether a task was running: that one spends a
 * retry, since its effects may have happened; the tasks after it never
 * ran and are sent again for free.  The start time tells the scheduler
 * that a task runs long, so that it queues no more work behind it.
 *
 * `starts` is also how the runtime takes back the tasks queued behind a
 * task that waits for others (a nested rt_get()): its high bits are the
 * ordinal of the last task started (tasks count from 1 in the order the
 * worker receives them), its low RT__SKIP_BITS how many tasks after that
 * one the worker must skip.  Both sides change it by compare-and-swap
 * only, so a task is either started by the worker or taken back by the
 * runtime, never both. */
#define RT__SKIP_BITS 16
#define RT__SKIP_MAX ((1u << RT__SKIP_BITS) - 1)

/* Whether a caller waits on the worker for an answer, reading it in the
 * journal itself (local.c's await): it does now, or it may soon, the
 * worker's last tasks sent by a round run for a caller that returns at
 * once (node.h's flush; worker.c holds their answers a moment then), and
 * no other wait begun since (rt__local_unhold()). */
enum { RT__AWAIT_NONE, RT__AWAIT_NOW, RT__AWAIT_SOON };

typedef struct rt__run_slot {
    _Atomic uint64_t running;  /* id of the running task, 0 between tasks */
    _Atomic uint64_t starts;   /* last started << RT__SKIP_BITS | to skip */
    _Atomic uint64_t since_ns; /* CLOCK_MONOTONIC start of the running task */
    _Atomic uint32_t lost;     /* the worker lost its socket and left */
    _Atomic uint64_t cancelled; /* the runtime: the id of a task asked to
                                   stop (rt_cancelled()) */
    _Atomic uint32_t awaited;  /* the runtime: RT__AWAIT_* */
    char pad[20];              /* the inbox's words on their own cache line */
    rt__inbox inbox;
    rt__journal journal;
    _Alignas(4096) char inbox_room[RT__INBOX_BYTES];
} rt__run_slot;

_Static_assert(sizeof(rt__run_slot) % 4096 == 0, "slots start on their own pages");

struct rt__board;
/* board: the node's (board.h), or NULL. */
_Noreturn void rt__worker_main(int sock, int out, int err, rt__run_slot *slot,
                               struct rt__board *board);

/* What the calling thread of a worker runs (client.h), or NULL between
 * tasks (and outside workers). */
const rt__running *rt__worker_running(void);
/* A result of len bytes for the task to fill (rt_result_alloc(3)):
 * shared memory from RT__SHM_MIN up; NULL without memory. */
void *rt__result_alloc(rt_result *result, size_t len);
/* Result number index (1 up, below RT_RETURNS_MAX) of a task of several
 * (rt_result_set_at(3)): len bytes copied.  0, or -1 without memory. */
int rt__result_set_at(rt_result *result, unsigned index, const void *data, size_t len);
/* The calling thread's task waits for the task `in`, which the runtime
 * gave it to run itself (callmsg.h): run it here, as the worker would,
 * and send its answer.  With taken: 1 when the waiting task may take
 * that answer from this run, a copy of its bytes in *taken and *len
 * (callmsg.h's RT__RAN_AND_TOOK); else 0.  An answer the waiting task
 * takes so is held back a while (worker.c), until the next send or
 * rt__worker_send_held(). */
struct rt__callmsg_run;
int rt__worker_run_inside(const struct rt__callmsg_run *in, void **taken, size_t *len);
/* A thread of the task is about to wait for tasks that may take the
 * objects of answers held back: send them now, unless the channel is in
 * use (whoever has it sends them). */
void rt__worker_send_held(void);
/* Whether rt_cancel() asked the calling thread's task to stop. */
int rt__worker_cancelled(void);

#endif

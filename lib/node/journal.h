/*
 * journal.h - the results a worker has not sent yet, kept where they
 * outlive it.
 *
 * A worker queues its results in its socket's buffer and sends them in
 * batches: one send for a burst of tasks.  Queued there, they would die
 * with the worker.  So each result is also written, as the bytes the
 * socket carries, into the worker's journal: shared memory that the
 * runtime maps too (in the worker's run slot, worker.h).  A result is
 * committed there when its task returns, without a system call; the
 * journal empties whenever all that was queued has been sent.  When the
 * worker dies, the runtime reads its socket to the end, then takes from
 * the journal the results that never reached it: a death costs only the
 * task that was running.
 *
 * A result with a memfd cannot wait there (the descriptor would die with
 * the worker), nor one larger than the room left: the worker sends those,
 * and all queued before them, at once.
 */
#ifndef RT_JOURNAL_H
#define RT_JOURNAL_H

#include "proto.h"

#include <stdint.h>

#define RT__JOURNAL_BYTES (16 * 1024 - 192) /* the run slot's first 16 KiB */

typedef struct rt__journal {
    _Atomic uint64_t used; /* bytes of data committed */
    _Atomic uint64_t base; /* results of the worker's life sent before data's first */
    _Atomic uint64_t last; /* the number in its life of the last result kept */
    char pad[40];
    _Alignas(16) char data[RT__JOURNAL_BYTES];
} rt__journal;

/* The worker: keep result r, the seq-th of its life, the one after every
 * result kept or sent so far.  0, or -1 when it does not fit: send it
 * now, then clear. */
int rt__journal_keep(rt__journal *j, const rt__result_msg *r, uint64_t seq);
/* The worker: everything queued has been sent, the first `sent` results
 * of its life. */
void rt__journal_clear(rt__journal *j, uint64_t sent);

/* The runtime, once the worker has exited: call take() with each result
 * kept after the first `received` of the worker's life, in order.  It
 * stops at bytes that are not a result without a descriptor (the worker's
 * memory is the task's to scribble on) or when take() returns -1.  The
 * results' bytes live in the journal. */
typedef int (*rt__journal_take)(void *ctx, const rt__result_msg *r);
void rt__journal_replay(const rt__journal *j, uint64_t received,
                        rt__journal_take take, void *ctx);

/* A caller that waits on a live worker for a quick task's answer reads it
 * from the journal, as soon as it is kept: neither the worker's send nor
 * the caller's receive is in the wait (node/local.c's await; the worker
 * then sends it later, and the runtime drops that copy).  Whether results
 * after the first `received` wait there: 1; 0 when none; -1 when some
 * the worker sent are still to be read from its socket first. */
int rt__journal_holds(const rt__journal *j, uint64_t received);
/* Where a live reader left off: the byte after the last result it
 * passed, and that result's number, while the journal's base is base. */
typedef struct rt__journal_cursor {
    uint64_t base, at, seq;
} rt__journal_cursor;
/* Take them, as rt__journal_replay() does, from a copy in buf (room for
 * RT__JOURNAL_BYTES) of what follows *cursor: the worker may clear the
 * journal and write it again meanwhile, and a copy it changed is not
 * taken.  How many were taken. */
size_t rt__journal_take_live(const rt__journal *j, uint64_t received, char *buf,
                             rt__journal_cursor *cursor, rt__journal_take take, void *ctx);

#endif

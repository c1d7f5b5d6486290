/*
 * board.h - the node's result board: small results that one worker
 * leaves for tasks that other workers run, before the runtime has read
 * them.
 *
 * A graph's next task may be sent before the tasks whose objects it takes
 * have ended, once each of those is sent (early: rtask(7)).  Each such
 * object then comes as a board entry, which the worker that runs the
 * producer writes when it ends and the workers of its consumers wait for.
 * The round's holder claims an entry for a task it sends, by a sequence
 * number (seq) unique to that claim; its worker posts the result there,
 * once; the runtime gives it back when the task's answer is read or the
 * task is lost or taken back (giving back voids an entry never posted).
 *
 * The board is one segment of entries per run slot (worker.h), in shared
 * memory mapped before the fork server starts.  A worker can write its
 * own segment alone: the others it maps from a read-only descriptor, so
 * that not even mprotect() makes them writable.  An entry claimed for a
 * task lies in the segment of the worker it is sent to, and its seq names
 * that slot: a consumer reads its input where only the producer's worker
 * could have written it, and no task can post what another worker's task
 * made.  (The tasks of one worker share its process, and so its segment:
 * worker.h.)
 *
 * A consumer never trusts an entry: it reads it only under the seq it was
 * told, checked before and after copying, and an entry that is not there
 * (a result too large for it, a failure, a producer taken back or lost,
 * an entry claimed again, a length no entry holds) makes it refuse the
 * task unrun: it bounces, and the runtime files it again once its objects
 * end.
 */
#ifndef RT_BOARD_H
#define RT_BOARD_H

#include "base/process.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RT__BOARD_SEGMENT 32u /* entries a slot has; a power of 2 */
#define RT__BOARD_BYTES 112    /* the largest result an entry holds */

typedef struct rt__board_entry {
    _Atomic uint64_t word;    /* seq << 2 | state (board.c) */
    _Atomic uint32_t ticket;  /* moves at every change: the futex word */
    uint32_t len;
    unsigned char bytes[RT__BOARD_BYTES];
} rt__board_entry;

/* A worker keeps its own segment by unmapping the rest: segments are
 * whole pages. */
_Static_assert(RT__BOARD_SEGMENT * sizeof(rt__board_entry) % 4096 == 0,
               "a segment is whole pages");

/* The board's two views of the same memory: read-write (the runtime's
 * whole, a worker's own segment alone) and read-only (the whole). */
typedef struct rt__board {
    rt__board_entry *rw, *ro;
    size_t nslots;
    size_t own; /* a worker's slot; SIZE_MAX in the runtime */
} rt__board;

/* The runtime's side: which entries are claimed, and each slot's next
 * count (a seq is the count above the slot's number). */
typedef struct rt__board_keeper {
    rt__board *board;         /* NULL: none (every claim fails) */
    uint32_t *next;           /* [nslots] */
    unsigned char *claimed;   /* [nslots * RT__BOARD_SEGMENT] */
} rt__board_keeper;

/* A board of nslots segments in new shared memory, both views mapped;
 * NULL with errno set.  rt__board_unmap() undoes it (each process that
 * inherited it may: what a worker unmapped already is skipped). */
rt__board *rt__board_map(size_t nslots);
void rt__board_unmap(rt__board *b);
/* In a worker just forked for run slot `slot`: keep the read-write view
 * of that slot's segment alone.  0, or -1 (the board is unmapped then). */
int rt__board_keep_own(rt__board *b, size_t slot);
/* The read-write view's whole mapping, as the runtime has it. */
rt__mapping rt__board_mapping(const rt__board *b);

/* The runtime's books for b (NULL: no board); 0 or -1 (no memory).
 * The board stays the caller's to unmap, after either. */
int rt__board_keeper_init(rt__board_keeper *k, rt__board *b);
void rt__board_keeper_free(rt__board_keeper *k);
/* Runtime thread: claim the next entry of slot's segment for a task about
 * to be sent to that slot's worker: its seq, or 0 when that entry is
 * still claimed (the task goes unposted). */
uint64_t rt__board_claim(rt__board_keeper *k, size_t slot);
/* Give back seq's entry; one never posted is voided first, which wakes
 * the consumers that wait for it (they bounce). */
void rt__board_give_back(rt__board_keeper *k, uint64_t seq);

/* Worker: post the result of the task told seq (an entry of its own
 * segment): its len bytes when ok and they fit, else that it is not
 * there. */
void rt__board_post(rt__board *b, uint64_t seq, const void *data, size_t len, int ok);
/* Worker: how a task waits for the board: its socket (its hanging up
 * means the runtime is gone), the word that says which task rt_cancel()
 * asked to stop and the task's id (it then never runs), and what to do
 * once before it sleeps (send the answers its batch holds). */
typedef struct rt__board_wait {
    int sock;
    const _Atomic uint64_t *stop;
    uint64_t task;
    void (*before_sleep)(void);
} rt__board_wait;

/* Worker: wait for seq's entry (in any segment, read-only) and copy its
 * bytes into out (room for RT__BOARD_BYTES): their length, or -1 when it
 * is not there, seq names no slot, or the wait ends as w says. */
long rt__board_read(rt__board *b, uint64_t seq, void *out, const rt__board_wait *w);

#endif

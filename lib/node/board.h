/*
 * board.h - the node's result board: small results that one worker
 * leaves for tasks that other workers run, before the runtime has read
 * them.
 *
 * A graph's next task may be sent before the tasks whose objects it takes
 * have ended, once each of those is sent (early: rtask(7)).  Each such
 * object then comes as a board entry, which the worker that runs the
 * producer writes when it ends and the workers of its consumers wait for.
 * Entries sit in shared memory that the runtime maps before the fork
 * server starts, so every worker of the node sees it.  The runtime thread
 * claims an entry for a task it sends, by a sequence number (seq) unique
 * to that claim, in ring order; its worker posts the result there, once;
 * the runtime gives it back when the task's answer is read or the task
 * is lost or taken back (giving back voids an entry never posted).
 *
 * A consumer never trusts an entry: it reads it only under the seq it was
 * told, checked before and after copying, and an entry that is not there
 * (a result too large for it, a failure, a producer taken back or lost,
 * an entry claimed again) makes it refuse the task unrun: it bounces, and
 * the runtime files it again once its objects end.
 */
#ifndef RT_BOARD_H
#define RT_BOARD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RT__BOARD_ENTRIES 4096u /* a power of 2 */
#define RT__BOARD_BYTES 104     /* the largest result an entry holds */

typedef struct rt__board_entry {
    _Atomic uint64_t word;    /* seq << 2 | state (board.c) */
    _Atomic uint32_t ticket;  /* moves at every change: the futex word */
    _Atomic uint32_t waiters; /* a consumer may sleep on ticket */
    uint32_t len;
    uint32_t pad;
    unsigned char bytes[RT__BOARD_BYTES];
} rt__board_entry;

typedef struct rt__board {
    rt__board_entry entry[RT__BOARD_ENTRIES];
} rt__board;

/* The runtime's side: which entries are claimed, and the next seq. */
typedef struct rt__board_keeper {
    rt__board *board;         /* shared; NULL: none (every claim fails) */
    uint64_t next_seq;
    unsigned char claimed[RT__BOARD_ENTRIES];
} rt__board_keeper;

/* A board in new shared memory; NULL with errno set.  rt__board_unmap()
 * undoes it (each process that inherited it may). */
rt__board *rt__board_map(void);
void rt__board_unmap(rt__board *b);

/* Runtime thread: claim the next entry for a task about to be sent: its
 * seq, or 0 when that entry is still claimed (the task goes unposted). */
uint64_t rt__board_claim(rt__board_keeper *k);
/* Give back seq's entry; one never posted is voided first, which wakes
 * the consumers that wait for it (they bounce). */
void rt__board_give_back(rt__board_keeper *k, uint64_t seq);

/* Worker: post the result of the task told seq: its len bytes when ok
 * and they fit, else that it is not there. */
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

/* Worker: wait for seq's entry and copy its bytes into out (room for
 * RT__BOARD_BYTES): their length, or -1 when it is not there or the wait
 * ends as w says. */
long rt__board_read(rt__board *b, uint64_t seq, void *out, const rt__board_wait *w);

#endif

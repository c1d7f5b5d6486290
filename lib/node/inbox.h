/*
 * inbox.h - a worker's next messages, in shared memory.
 *
 * The application sends a worker its tasks on the worker's socket: a
 * system call on each side, 1 us each on a Unix socket here, where a
 * whole synchronous call took 5.  A worker that is awake between two
 * batches (from the end of one, while it lingers for the next, linger.h,
 * until it may sleep) has an inbox in its run slot (worker.h) instead:
 * the application copies there the bytes it would have sent, and the
 * worker, which looks at its inbox as it looks at its socket, copies
 * them out and reads them as if they came from it.  While a batch runs,
 * its next tasks go on the socket: put in the inbox then too, they cost
 * Task Bench's graphs of 1 ms tasks about a point of efficiency at width
 * 8 (the old and new libraries in turns), for a reason not found.
 *
 * Order.  The worker must read the messages in the order they were
 * queued, whichever way each went.  The application uses the inbox only
 * when the worker has handled every byte sent on the socket (it says how
 * many in `handled`), and only when the inbox is empty: so the messages
 * in the inbox come after every byte the worker handled, and before every
 * byte it has not.  The worker takes the inbox after each receive,
 * before it handles what came.
 *
 * Waking.  The application uses the inbox only while the worker says it
 * is awake.  A worker about to sleep says so, then looks at the inbox
 * once more; the application puts its messages, then reads `awake`
 * again: when both missed, the worker may sleep in its socket with
 * messages in the inbox, and the application sends it an RT__MSG_WAKE
 * (proto.h), which it reads after the inbox.
 *
 * Descriptors cannot travel in memory: messages that carry some go on
 * the socket, and so do those larger than the inbox.  A task can write
 * its own inbox: it can only garble its own worker's next tasks (which
 * then ends), as it could through its socket.  The worker counts the
 * batches it took itself, and says whether it is awake at each batch,
 * over whatever a task wrote.
 */
#ifndef RT_INBOX_H
#define RT_INBOX_H

#include <stddef.h>
#include <stdint.h>

/* Its room for the bytes: a page of the run slot that only a batch put
 * there touches.  Its words are on the slot's first page, which every
 * task touches anyway: a fresh worker (a spare, for a GPU task) touches
 * no page more for them. */
#define RT__INBOX_BYTES 4096

typedef struct rt__inbox {
    _Atomic uint64_t put;       /* the application: batches of messages put */
    _Atomic uint64_t taken;     /* the worker: batches taken */
    _Atomic uint64_t handled;   /* the worker: bytes of its socket handled */
    _Atomic uint32_t awake;     /* the worker: between batches, and it
                                   looks at its inbox before it sleeps */
    uint32_t len;               /* the bytes of the batch put last */
    char pad[32];
} rt__inbox;

/* The application, at its put-th batch (the first is 1): put len bytes of
 * messages without descriptors, when the worker is awake, has handled the
 * `sent` bytes of its socket and has taken the batch before.  1 when they
 * were put, 0 when they must go on the socket. */
int rt__inbox_put(rt__inbox *in, char *room, uint64_t put, uint64_t sent, const char *bytes,
                  size_t len);
/* The application, after a put: whether the worker said meanwhile that
 * it may sleep, perhaps without having seen it (it must be woken). */
int rt__inbox_missed(const rt__inbox *in);

/* The worker: it has handled `handled` bytes of its socket. */
void rt__inbox_handled(rt__inbox *in, uint64_t handled);
/* The worker, which counts the batches it took itself (a task may write
 * `taken`): whether a batch waits. */
int rt__inbox_holds(const rt__inbox *in, uint64_t taken);
/* The worker: say that it is awake between batches (at each batch's
 * end, over whatever a task wrote), or not: as a batch starts, and before
 * it may sleep, when it looks at the inbox once more. */
void rt__inbox_awake(rt__inbox *in, int awake);
/* The worker: copy the batch that waits from room into buf (both
 * RT__INBOX_BYTES) and count it taken.  Its length, 0 when none waits. */
size_t rt__inbox_take(rt__inbox *in, const char *room, uint64_t *taken, char *buf);

#endif

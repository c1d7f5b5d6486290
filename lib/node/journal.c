/* journal.c - results kept in shared memory until they are sent. */
#include "journal.h"

#include <stdatomic.h>
#include <string.h>

/* The fences of a live reader's check (rt__journal_take_live()).  GCC's
 * ThreadSanitizer refuses fences; it cannot see the worker's process,
 * whose writes they order, and its builds run on x86-64, where stores
 * are seen in the order made: a compiler barrier is the fence there. */
#if defined(__SANITIZE_THREAD__)
#define FENCE(order) atomic_signal_fence(order)
#else
#define FENCE(order) atomic_thread_fence(order)
#endif

int rt__journal_keep(rt__journal *j, const rt__result_msg *r, uint64_t seq)
{
    uint64_t used = atomic_load_explicit(&j->used, memory_order_relaxed);
    if (used > sizeof j->data)
        return -1; /* scribbled on by a task: sending and clearing mends it */
    /* A clear is seen before the bytes written after it (a live reader's
     * copy checks base again: rt__journal_take_live()). */
    FENCE(memory_order_release);
    size_t size = rt__proto_write_result(j->data + used, sizeof j->data - used, r);
    if (!size)
        return -1;
    /* Committed: the bytes are there before the count says so.  And
     * before the slot is read (worker.c): a caller that stops waiting
     * then finds it (rt__journal_holds(), in the same total order). */
    atomic_store_explicit(&j->last, seq, memory_order_relaxed);
    atomic_store_explicit(&j->used, used + size, memory_order_seq_cst);
    return 0;
}

void rt__journal_clear(rt__journal *j, uint64_t sent)
{
    /* Emptied first: a worker killed between the two stores leaves an
     * empty journal, whatever base says. */
    atomic_store_explicit(&j->used, 0, memory_order_release);
    atomic_store_explicit(&j->base, sent, memory_order_release);
}

/* Call take() with each result in data[0, used) numbered after
 * `received`, the first being number *seq + 1; *at and *seq: where it
 * stopped (the byte after the last result passed, and its number).  How
 * many were taken. */
static size_t take_from(const char *data, uint64_t used, uint64_t received, uint64_t *at,
                        uint64_t *seq, rt__journal_take take, void *ctx)
{
    size_t taken = 0;
    for (uint64_t next = 0; next < used;) {
        rt__hdr h;
        const char *payload;
        rt__result_msg r;
        long size = rt__msg_read(data + next, used - next, &h, &payload);
        if (size <= 0 || h.nfds || rt__proto_read_result(&h, payload, NULL, &r) < 0)
            break;
        if (*seq + 1 > received && take(ctx, &r) < 0)
            break;
        taken += *seq + 1 > received;
        next += (uint64_t)size;
        *at += (uint64_t)size;
        ++*seq;
    }
    return taken;
}

void rt__journal_replay(const rt__journal *j, uint64_t received,
                        rt__journal_take take, void *ctx)
{
    uint64_t used = atomic_load_explicit(&j->used, memory_order_acquire);
    uint64_t seq = atomic_load_explicit(&j->base, memory_order_acquire), at = 0;
    if (used <= sizeof j->data)
        (void)take_from(j->data, used, received, &at, &seq, take, ctx);
}

int rt__journal_holds(const rt__journal *j, uint64_t received)
{
    uint64_t used = atomic_load_explicit(&j->used, memory_order_seq_cst);
    uint64_t base = atomic_load_explicit(&j->base, memory_order_acquire);
    uint64_t last = atomic_load_explicit(&j->last, memory_order_relaxed);
    if (base > received)
        return -1;
    return used > 0 && used <= sizeof j->data && last > received;
}

size_t rt__journal_take_live(const rt__journal *j, uint64_t received, char *buf,
                             rt__journal_cursor *cursor, rt__journal_take take, void *ctx)
{
    uint64_t base = atomic_load_explicit(&j->base, memory_order_acquire);
    uint64_t used = atomic_load_explicit(&j->used, memory_order_acquire);
    if (cursor->base != base)
        *cursor = (rt__journal_cursor){base, 0, base};
    if (used > sizeof j->data || base > received || cursor->at >= used)
        return 0;
    memcpy(buf, j->data + cursor->at, used - cursor->at);
    /* A clear meanwhile (used goes to 0, base moves on; then new bytes may
     * overwrite the old) shows in either, once the copy is made. */
    FENCE(memory_order_acquire);
    if (atomic_load_explicit(&j->base, memory_order_relaxed) != base ||
        atomic_load_explicit(&j->used, memory_order_relaxed) < used)
        return 0;
    return take_from(buf, used - cursor->at, received, &cursor->at, &cursor->seq, take, ctx);
}

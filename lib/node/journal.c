/* journal.c - results kept in shared memory until they are sent. */
#include "journal.h"

#include <stdatomic.h>

int rt__journal_keep(rt__journal *j, const rt__result_msg *r)
{
    uint64_t used = atomic_load_explicit(&j->used, memory_order_relaxed);
    if (used > sizeof j->data)
        return -1; /* scribbled on by a task: sending and clearing mends it */
    size_t size = rt__proto_write_result(j->data + used, sizeof j->data - used, r);
    if (!size)
        return -1;
    /* Committed: the bytes are there before the count says so. */
    atomic_store_explicit(&j->used, used + size, memory_order_release);
    return 0;
}

void rt__journal_clear(rt__journal *j, uint64_t sent)
{
    /* Emptied first: a worker killed between the two stores leaves an
     * empty journal, whatever base says. */
    atomic_store_explicit(&j->used, 0, memory_order_release);
    atomic_store_explicit(&j->base, sent, memory_order_release);
}

void rt__journal_replay(const rt__journal *j, uint64_t received,
                        rt__journal_take take, void *ctx)
{
    uint64_t used = atomic_load_explicit(&j->used, memory_order_acquire);
    uint64_t seq = atomic_load_explicit(&j->base, memory_order_acquire);
    if (used > sizeof j->data)
        return;
    for (size_t at = 0; at < used;) {
        rt__hdr h;
        const char *payload;
        rt__result_msg r;
        long size = rt__msg_read(j->data + at, used - at, &h, &payload);
        if (size <= 0 || h.nfds || rt__proto_read_result(&h, payload, NULL, &r) < 0)
            return;
        at += (size_t)size;
        if (++seq > received && take(ctx, &r) < 0)
            return;
    }
}

/* inbox.c - a worker's next messages, in shared memory (inbox.h). */
#include "inbox.h"

#include <stdatomic.h>
#include <string.h>

int rt__inbox_put(rt__inbox *in, char *room, uint64_t put, uint64_t sent, const char *bytes,
                  size_t len)
{
    if (len == 0 || len > RT__INBOX_BYTES || !atomic_load(&in->awake) ||
        atomic_load(&in->handled) != sent || atomic_load(&in->taken) != put - 1)
        return 0;
    memcpy(room, bytes, len);
    in->len = (uint32_t)len;
    atomic_store(&in->put, put); /* before `awake` is read again */
    return 1;
}

int rt__inbox_missed(const rt__inbox *in)
{
    return !atomic_load(&in->awake);
}

void rt__inbox_handled(rt__inbox *in, uint64_t handled)
{
    atomic_store_explicit(&in->handled, handled, memory_order_release);
}

int rt__inbox_holds(const rt__inbox *in, uint64_t taken)
{
    return atomic_load(&in->put) != taken;
}

void rt__inbox_awake(rt__inbox *in, int awake)
{
    atomic_store(&in->awake, (uint32_t)awake); /* before the inbox is read */
}

size_t rt__inbox_take(rt__inbox *in, const char *room, uint64_t *taken, char *buf)
{
    uint64_t put = atomic_load(&in->put);
    if (put == *taken)
        return 0;
    size_t len = in->len < RT__INBOX_BYTES ? in->len : RT__INBOX_BYTES;
    memcpy(buf, room, len);
    *taken = put;
    atomic_store(&in->taken, put); /* the copy is made: the next may come */
    return len;
}

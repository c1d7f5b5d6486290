/* board.c - the node's result board (board.h). */
#include "board.h"

#include "base/clock.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The state in an entry's word. */
#define EMPTY 0u /* claimed, not posted yet */
#define READY 1u /* the bytes are there */
#define GONE 2u  /* they never will be: consumers bounce */
#define WORD(seq, state) ((seq) << 2 | (state))
#define MASK (RT__BOARD_ENTRIES - 1)

/* A consumer looks for its entry this long, yielding, before it sleeps:
 * a graph's producer ends within a step, and a worker that slept until
 * its CPU went idle wakes ~100 us late on a VM (the step's cost). */
#define SPIN_NS 1000000ull
/* A sleeping consumer looks at its socket this often. */
#define NAP_NS 10000000L

rt__board *rt__board_map(void)
{
    void *p = mmap(NULL, sizeof(rt__board), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void rt__board_unmap(rt__board *b)
{
    if (b)
        munmap(b, sizeof *b);
}

static rt__board_entry *entry_of(rt__board *b, uint64_t seq)
{
    return &b->entry[seq & MASK];
}

/* The entry moved from `from` to `to` (nothing when it had moved on):
 * wake whoever sleeps on it. */
static void move(rt__board_entry *e, uint64_t from, uint64_t to)
{
    if (!atomic_compare_exchange_strong(&e->word, &from, to))
        return;
    atomic_fetch_add(&e->ticket, 1);
    if (atomic_load(&e->waiters))
        syscall(SYS_futex, &e->ticket, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

uint64_t rt__board_claim(rt__board_keeper *k)
{
    if (!k->board)
        return 0;
    uint64_t seq = ++k->next_seq;
    if (k->claimed[seq & MASK])
        return 0; /* the ring came round to one still in use */
    k->claimed[seq & MASK] = 1;
    rt__board_entry *e = entry_of(k->board, seq);
    atomic_store(&e->word, WORD(seq, EMPTY));
    atomic_fetch_add(&e->ticket, 1);
    if (atomic_exchange(&e->waiters, 0)) /* a consumer of an older claim */
        syscall(SYS_futex, &e->ticket, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    return seq;
}

void rt__board_give_back(rt__board_keeper *k, uint64_t seq)
{
    if (!k->board || !seq)
        return;
    move(entry_of(k->board, seq), WORD(seq, EMPTY), WORD(seq, GONE));
    k->claimed[seq & MASK] = 0;
}

void rt__board_post(rt__board *b, uint64_t seq, const void *data, size_t len, int ok)
{
    rt__board_entry *e = entry_of(b, seq);
    if (atomic_load(&e->word) != WORD(seq, EMPTY))
        return; /* voided, or not this claim's */
    ok &= len <= RT__BOARD_BYTES;
    if (ok) {
        e->len = (uint32_t)len;
        if (len)
            memcpy(e->bytes, data, len);
    }
    move(e, WORD(seq, EMPTY), WORD(seq, ok ? READY : GONE));
}

/* Sleep on e's ticket while it is still t, for NAP_NS at most. */
static void nap(rt__board_entry *e, uint32_t t)
{
    struct timespec nap = {0, NAP_NS};
    atomic_store(&e->waiters, 1);
    syscall(SYS_futex, &e->ticket, FUTEX_WAIT, t, &nap, NULL, 0);
}

static int hung_up(int sock)
{
    struct pollfd p = {.fd = sock, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

long rt__board_read(rt__board *b, uint64_t seq, void *out, const rt__board_wait *wait)
{
    rt__board_entry *e = entry_of(b, seq);
    uint64_t start = rt__now_ns();
    int slept = 0;
    for (;;) {
        uint32_t t = atomic_load(&e->ticket);
        uint64_t w = atomic_load(&e->word);
        if (w == WORD(seq, READY)) {
            uint32_t len = e->len;
            if (len > RT__BOARD_BYTES)
                return -1;
            memcpy(out, e->bytes, len);
            return atomic_load(&e->word) == w ? (long)len : -1; /* still this claim's */
        }
        if (w != WORD(seq, EMPTY) || !seq || atomic_load(wait->stop) == wait->task)
            return -1;
        if (rt__now_ns() - start < SPIN_NS) {
            sched_yield();
            continue;
        }
        if (hung_up(wait->sock))
            return -1;
        if (!slept++ && wait->before_sleep) {
            wait->before_sleep();
            continue; /* that took a while: look again */
        }
        nap(e, t);
    }
}

/* board.c - the node's result board (board.h). */
#include "board.h"

#include "base/alloc.h"
#include "base/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
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

/* A seq is a slot's count of claims above the slot's number. */
#define SLOT_BITS 20
#define SLOT_OF(seq) ((seq) & ((1u << SLOT_BITS) - 1))
#define INDEX_OF(seq) (((seq) >> SLOT_BITS) & (RT__BOARD_SEGMENT - 1))

/* A consumer looks for its entry this long, yielding, before it sleeps:
 * a graph's producer ends within a step, and a worker that slept until
 * its CPU went idle wakes ~100 us late on a VM (the step's cost). */
#define SPIN_NS 1000000ull
/* A sleeping consumer looks at its socket this often. */
#define NAP_NS 10000000L

/* The runtime's views: own names no slot (it writes every segment). */
#define ALL_SLOTS SIZE_MAX

static size_t segment_bytes(void)
{
    return RT__BOARD_SEGMENT * sizeof(rt__board_entry);
}

/* The read-only view comes from a descriptor opened read-only, so that
 * a worker cannot mprotect() its copy writable again. */
static int open_read_only(int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return open(path, O_RDONLY | O_CLOEXEC);
}

rt__board *rt__board_map(size_t nslots)
{
    size_t bytes = nslots * segment_bytes();
    rt__board *b = nslots <= (1u << SLOT_BITS) ? rt__malloc(sizeof *b) : NULL;
    int fd = b ? memfd_create("rtask-board", MFD_CLOEXEC) : -1;
    int ro_fd = fd >= 0 && ftruncate(fd, (off_t)bytes) == 0 ? open_read_only(fd) : -1;
    void *rw = MAP_FAILED, *ro = MAP_FAILED;
    if (ro_fd >= 0) {
        rw = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
        ro = mmap(NULL, bytes, PROT_READ, MAP_SHARED | MAP_NORESERVE, ro_fd, 0);
    }
    int saved = errno;
    if (fd >= 0)
        close(fd);
    if (ro_fd >= 0)
        close(ro_fd);
    if (rw == MAP_FAILED || ro == MAP_FAILED) {
        if (rw != MAP_FAILED)
            munmap(rw, bytes);
        if (ro != MAP_FAILED)
            munmap(ro, bytes);
        rt__free(b);
        errno = saved;
        return NULL;
    }
    *b = (rt__board){rw, ro, nslots, ALL_SLOTS};
    return b;
}

void rt__board_unmap(rt__board *b)
{
    if (!b)
        return;
    size_t bytes = b->nslots * segment_bytes();
    if (b->rw)
        munmap(b->rw, b->own == ALL_SLOTS ? bytes : segment_bytes());
    munmap(b->ro, bytes);
    rt__free(b);
}

int rt__board_keep_own(rt__board *b, size_t slot)
{
    char *rw = (char *)b->rw;
    size_t seg = segment_bytes(), after = (b->nslots - slot - 1) * seg;
    if (slot >= b->nslots || (slot > 0 && munmap(rw, slot * seg) < 0) ||
        (after && munmap(rw + (slot + 1) * seg, after) < 0)) {
        b->rw = NULL; /* what is left of it stays, unused */
        return -1;
    }
    b->rw = (rt__board_entry *)(void *)(rw + slot * seg);
    b->own = slot;
    /* Nor can it grow its own into the next (base/process.h). */
    (void)rt__process_seal(&(rt__mapping){b->rw, seg});
    return 0;
}

rt__mapping rt__board_mapping(const rt__board *b)
{
    return (rt__mapping){b->rw, b->nslots * segment_bytes()};
}

int rt__board_keeper_init(rt__board_keeper *k, rt__board *b)
{
    *k = (rt__board_keeper){.board = b};
    if (!b)
        return 0;
    k->next = rt__calloc(b->nslots, sizeof *k->next);
    k->claimed = rt__calloc(b->nslots, RT__BOARD_SEGMENT);
    if (k->next && k->claimed)
        return 0;
    rt__board_keeper_free(k);
    return -1;
}

void rt__board_keeper_free(rt__board_keeper *k)
{
    rt__free(k->next);
    rt__free(k->claimed);
    k->next = NULL;
    k->claimed = NULL;
}

/* The runtime's: seq's entry, writable. */
static rt__board_entry *entry_of(rt__board *b, uint64_t seq)
{
    return &b->rw[SLOT_OF(seq) * RT__BOARD_SEGMENT + INDEX_OF(seq)];
}

/* The entry moved from `from` to `to` (nothing when it had moved on):
 * wake whoever sleeps on it.  Always: a consumer cannot say that it
 * sleeps, for nothing of another worker's is writable (board.h), and a
 * wake-up with none asleep costs one system call, once per result. */
static void move(rt__board_entry *e, uint64_t from, uint64_t to)
{
    if (!atomic_compare_exchange_strong(&e->word, &from, to))
        return;
    atomic_fetch_add(&e->ticket, 1);
    syscall(SYS_futex, &e->ticket, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

uint64_t rt__board_claim(rt__board_keeper *k, size_t slot)
{
    if (!k->board || slot >= k->board->nslots)
        return 0;
    uint64_t count = ++k->next[slot];
    if (count == 0)
        count = ++k->next[slot]; /* wrapped: a seq is never 0 */
    uint64_t seq = count << SLOT_BITS | slot;
    unsigned char *claimed = &k->claimed[slot * RT__BOARD_SEGMENT + INDEX_OF(seq)];
    if (*claimed)
        return 0; /* the ring came round to one still in use */
    *claimed = 1;
    rt__board_entry *e = entry_of(k->board, seq);
    /* A consumer of an older claim still asleep here sees the new word
     * when its nap ends (NAP_NS), and bounces. */
    atomic_store(&e->word, WORD(seq, EMPTY));
    atomic_fetch_add(&e->ticket, 1);
    return seq;
}

void rt__board_give_back(rt__board_keeper *k, uint64_t seq)
{
    if (!k->board || !seq)
        return;
    move(entry_of(k->board, seq), WORD(seq, EMPTY), WORD(seq, GONE));
    k->claimed[SLOT_OF(seq) * RT__BOARD_SEGMENT + INDEX_OF(seq)] = 0;
}

void rt__board_post(rt__board *b, uint64_t seq, const void *data, size_t len, int ok)
{
    if (!b->rw || SLOT_OF(seq) != b->own)
        return; /* not this worker's to post */
    rt__board_entry *e = &b->rw[INDEX_OF(seq)];
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
static void nap(const rt__board_entry *e, uint32_t t)
{
    struct timespec nap = {0, NAP_NS};
    syscall(SYS_futex, &e->ticket, FUTEX_WAIT, t, &nap, NULL, 0);
}

static int hung_up(int sock)
{
    struct pollfd p = {.fd = sock, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

long rt__board_read(rt__board *b, uint64_t seq, void *out, const rt__board_wait *wait)
{
    if (SLOT_OF(seq) >= b->nslots)
        return -1;
    const rt__board_entry *e = &b->ro[SLOT_OF(seq) * RT__BOARD_SEGMENT + INDEX_OF(seq)];
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

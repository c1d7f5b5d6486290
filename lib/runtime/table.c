/* table.c - generation-checked handle slots. */
#include "table.h"

#include "base/alloc.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint32_t index_of(uint64_t id)
{
    return (uint32_t)(id & 0xffffffffu) - 1;
}

/* A seed no other runtime of this process (or another) starts from. */
static uint64_t seed(const rt__table *t)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != sizeof s) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^
            (uint64_t)(uintptr_t)t;
    }
    return s ? s : 1;
}

/* The next generation (xorshift64*), never gen itself. */
static uint32_t draw_gen(rt__table *t, uint32_t gen)
{
    uint32_t next;
    if (!t->draw)
        t->draw = seed(t);
    do {
        t->draw ^= t->draw >> 12;
        t->draw ^= t->draw << 25;
        t->draw ^= t->draw >> 27;
        next = (uint32_t)((t->draw * 0x2545f4914f6cdd1dull) >> 32);
    } while (next == gen);
    return next;
}

static int grow(rt__table *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : 1024;
    if (cap <= t->cap) /* 2^32 slots: the table is full */
        return -1;
    rt__slot *s = rt__realloc(t->slot, (size_t)cap * sizeof *s);
    if (!s)
        return -1;
    t->slot = s;
    t->cap = cap;
    return 0;
}

static uint32_t take_free(rt__table *t)
{
    uint32_t i = t->free_head - 1;
    t->free_head = t->slot[i].next_free;
    if (!t->free_head)
        t->free_tail = 0;
    return i;
}

int rt__table_add(rt__table *t, void *item, uint64_t *id, void **old)
{
    uint32_t i;
    *old = NULL;
    if (t->free_head) {
        i = take_free(t);
        *old = t->slot[i].item;
        t->slot[i].gen = draw_gen(t, t->slot[i].gen);
    } else {
        if (t->used == t->cap && grow(t) < 0)
            return -1;
        i = t->used++;
        t->slot[i].gen = draw_gen(t, 0);
    }
    t->slot[i].item = item;
    *id = (uint64_t)t->slot[i].gen << 32 | (uint64_t)(i + 1);
    return 0;
}

void *rt__table_find(const rt__table *t, uint64_t id)
{
    uint32_t i = index_of(id);
    if (i >= t->used || t->slot[i].gen != id >> 32)
        return NULL;
    return t->slot[i].item;
}

static void put_free(rt__table *t, uint32_t i)
{
    t->slot[i].next_free = 0;
    if (!t->fifo || !t->free_head) {
        t->slot[i].next_free = t->free_head;
        t->free_head = i + 1;
        if (!t->free_tail)
            t->free_tail = i + 1;
        return;
    }
    t->slot[t->free_tail - 1].next_free = i + 1;
    t->free_tail = i + 1;
}

void *rt__table_at(const rt__table *t, uint32_t i, uint64_t *id)
{
    *id = (uint64_t)t->slot[i].gen << 32 | (uint64_t)(i + 1);
    return t->slot[i].item;
}

void rt__table_drop(rt__table *t, uint64_t id)
{
    uint32_t i = index_of(id);
    t->slot[i].item = NULL;
    t->slot[i].gen = draw_gen(t, t->slot[i].gen);
    put_free(t, i);
}

void rt__table_retire(rt__table *t, uint64_t id, void *item)
{
    uint32_t i = index_of(id);
    t->slot[i].item = item;
    put_free(t, i);
}

void rt__table_free(rt__table *t, void (*free_item)(void *))
{
    for (uint32_t i = 0; i < t->used; i++)
        if (t->slot[i].item && free_item)
            free_item(t->slot[i].item);
    rt__free(t->slot);
    int fifo = t->fifo;
    memset(t, 0, sizeof *t); /* the next runtime draws from a new seed */
    t->fifo = fifo;
}

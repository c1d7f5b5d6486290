/* table.c - generation-checked handle slots. */
#include "table.h"

#include "base/alloc.h"
#include "base/random.h"

#include <string.h>

static uint32_t index_of(uint64_t id)
{
    return (uint32_t)(id & 0xffffffffu) - 1;
}

/* The next generation, never gen itself; below 2^31. */
static uint32_t draw_gen(rt__table *t, uint32_t gen)
{
    uint32_t next;
    do
        next = (uint32_t)(rt__random_next(&t->draw) >> 33);
    while (next == gen);
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

/* A handle made elsewhere, in the map to its slot. */
typedef struct foreign_id {
    rt__idnode byid; /* first */
    uint32_t slot;
} foreign_id;

static foreign_id *foreign_find(const rt__table *t, uint64_t id)
{
    return t->foreign.nbuckets ? (foreign_id *)rt__idmap_find(&t->foreign, id) : NULL;
}

/* The slot that handle id names, or UINT32_MAX. */
static uint32_t slot_of(const rt__table *t, uint64_t id)
{
    if (id & RT__ID_FOREIGN) {
        const foreign_id *f = foreign_find(t, id);
        return f ? f->slot : UINT32_MAX;
    }
    uint32_t i = index_of(id);
    return i < t->used && t->slot[i].gen == id >> 32 && !t->slot[i].foreign ? i : UINT32_MAX;
}

/* Map the handle id made elsewhere to a slot to come: the node, or NULL
 * when id names an item already or without memory. */
static foreign_id *foreign_new(rt__table *t, uint64_t id)
{
    if (foreign_find(t, id) || (!t->foreign.nbuckets && rt__idmap_init(&t->foreign) < 0))
        return NULL;
    foreign_id *f = rt__malloc(sizeof *f);
    if (f)
        f->byid.id = id;
    return f;
}

/* Give item a slot, named by f's handle when f is not NULL, else by its
 * own, in *id. */
static int add(rt__table *t, void *item, foreign_id *f, uint64_t *id, void **old)
{
    uint32_t i;
    *old = NULL;
    if (t->free_head) {
        i = take_free(t);
        *old = t->slot[i].item;
        t->slot[i].gen = draw_gen(t, t->slot[i].gen);
    } else {
        if (t->used == t->cap && grow(t) < 0) {
            rt__free(f);
            return -1;
        }
        i = t->used++;
        t->slot[i].gen = draw_gen(t, 0);
    }
    t->slot[i].item = item;
    t->slot[i].foreign = f ? *id : 0;
    if (f) {
        f->slot = i;
        rt__idmap_add(&t->foreign, &f->byid);
    } else {
        *id = (uint64_t)t->slot[i].gen << 32 | (uint64_t)(i + 1);
    }
    return 0;
}

int rt__table_add(rt__table *t, void *item, uint64_t *id, void **old)
{
    return add(t, item, NULL, id, old);
}

int rt__table_adopt(rt__table *t, void *item, uint64_t *id, void **old)
{
    if (!(*id & RT__ID_FOREIGN))
        return add(t, item, NULL, id, old);
    foreign_id *f = foreign_new(t, *id);
    *old = NULL;
    return f ? add(t, item, f, id, old) : -1;
}

void *rt__table_find(const rt__table *t, uint64_t id)
{
    uint32_t i = slot_of(t, id);
    return i == UINT32_MAX ? NULL : t->slot[i].item;
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
    *id = t->slot[i].foreign ? t->slot[i].foreign
                             : (uint64_t)t->slot[i].gen << 32 | (uint64_t)(i + 1);
    return t->slot[i].item;
}

/* The slot of handle id, which is valid, no more named by a handle made
 * elsewhere. */
static uint32_t unname(rt__table *t, uint64_t id)
{
    if (!(id & RT__ID_FOREIGN))
        return index_of(id);
    foreign_id *f = foreign_find(t, id);
    uint32_t i = f->slot;
    rt__idmap_remove(&t->foreign, &f->byid);
    rt__free(f);
    t->slot[i].foreign = 0;
    return i;
}

void rt__table_drop(rt__table *t, uint64_t id)
{
    uint32_t i = unname(t, id);
    t->slot[i].item = NULL;
    t->slot[i].gen = draw_gen(t, t->slot[i].gen);
    put_free(t, i);
}

void rt__table_retire(rt__table *t, uint64_t id, void *item)
{
    uint32_t i = unname(t, id);
    t->slot[i].item = item;
    put_free(t, i);
}

void rt__table_free(rt__table *t, void (*free_item)(void *))
{
    for (uint32_t i = 0; i < t->used; i++)
        if (t->slot[i].item && free_item)
            free_item(t->slot[i].item);
    for (rt__idnode *n; t->foreign.nbuckets && (n = rt__idmap_any(&t->foreign));) {
        rt__idmap_remove(&t->foreign, n);
        rt__free(n);
    }
    rt__idmap_free(&t->foreign);
    rt__free(t->slot);
    int fifo = t->fifo;
    memset(t, 0, sizeof *t); /* the next runtime draws from a new seed */
    t->fifo = fifo;
}

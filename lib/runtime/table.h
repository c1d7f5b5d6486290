/*
 * table.h - handles: a slot index and a generation in one 64-bit id.
 *
 * A handle stays valid until its slot is dropped; the slot's generation
 * then changes, so a stale handle is refused rather than taken for the
 * slot's next item.  Lookup is O(1).
 *
 * Generations are drawn at random, not counted: a handle is a number that
 * only who was given it knows.  A task cannot reach the application's
 * objects by counting (each guess has one chance in 2^31), and a handle
 * of an earlier rt_init() is not taken for one of this runtime's.  Task handles reuse the slot freed
 * last (warm in the cache); actor handles reuse the one freed first, so
 * that a dead actor's handle is recognised as long as possible.
 *
 * A handle made elsewhere (RT__ID_FOREIGN set, which no slot's own
 * handle has: another rank's task's task, placed there first and handed
 * here later, cluster/tunnel.c; a task's task that a worker here
 * submitted without waiting, node/callmsg.h) names its item as well: it is looked up
 * in a map to its slot.
 */
#ifndef RT_TABLE_H
#define RT_TABLE_H

#include "base/idmap.h"
#include "node/callmsg.h" /* RT__ID_FOREIGN */

#include <stdint.h>

typedef struct rt__slot {
    void *item;
    uint32_t gen;       /* below 2^31: a handle never has RT__ID_FOREIGN */
    uint32_t next_free; /* index + 1 of the next free slot; 0 = none */
    uint64_t foreign;   /* the handle made elsewhere that names it, or 0 */
} rt__slot;

typedef struct rt__table {
    rt__slot *slot;
    rt__idmap foreign;  /* handles made elsewhere, to their slots */
    uint32_t cap;
    uint32_t used;      /* slots ever handed out (the rest are fresh) */
    uint32_t free_head; /* index + 1; 0 = none */
    uint32_t free_tail;
    int fifo;           /* reuse the oldest free slot first */
    uint64_t draw;      /* the generations' random state; 0: not seeded yet */
} rt__table;

/* Give item a handle in *id.  *old gets what the reused slot still held
 * (see rt__table_retire), or NULL.  0, or -1 when out of memory. */
int rt__table_add(rt__table *t, void *item, uint64_t *id, void **old);
/* The same, but when *id is a handle made elsewhere (RT__ID_FOREIGN) item
 * gets that one: -1 also when it names an item already.  For records
 * whose handle field is set, 0 or that. */
int rt__table_adopt(rt__table *t, void *item, uint64_t *id, void **old);
/* The item behind a handle, or NULL when unknown or dropped. */
void *rt__table_find(const rt__table *t, uint64_t id);
/* The item in slot i (i < t->used) and its handle in *id; NULL when the
 * slot is free (a retired item is still there). */
void *rt__table_at(const rt__table *t, uint32_t i, uint64_t *id);
/* Invalidate a handle; its slot may be reused. */
void rt__table_drop(rt__table *t, uint64_t id);
/* Free the slot for reuse but keep answering the handle with item until
 * then (a dead actor's epitaph). */
void rt__table_retire(rt__table *t, uint64_t id, void *item);
/* Call free_item (unless NULL: the items are another's) on every item
 * still held, then free the table. */
void rt__table_free(rt__table *t, void (*free_item)(void *));

#endif

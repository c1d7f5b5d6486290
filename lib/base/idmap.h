/*
 * idmap.h - records by a 64-bit key, which they embed (as list.h's links
 * are embedded): the one hash table.  A rank's leases are keyed by their
 * number (one record a key); the scheduler's task classes by a hash of
 * their request, where two may share a key and the caller compares what
 * the key stands for.  The table grows as records come, so chains stay
 * short; a failed growth only makes them longer.  rt_wait() hashes the
 * handles it waits for too (one record a key).
 */
#ifndef RT_IDMAP_H
#define RT_IDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct rt__idnode {
    struct rt__idnode *hnext;
    uint64_t id;
} rt__idnode;

typedef struct rt__idmap {
    rt__idnode **bucket;
    size_t nbuckets; /* a power of 2 */
    size_t count;
} rt__idmap;

/* 0, or -1 without memory (m is then empty: rt__idmap_free() and
 * rt__idmap_any() may be called on it). */
int rt__idmap_init(rt__idmap *m);
void rt__idmap_free(rt__idmap *m);
void rt__idmap_add(rt__idmap *m, rt__idnode *n);
void rt__idmap_remove(rt__idmap *m, rt__idnode *n);
/* The first record with key id, and the next one with the same key after
 * n; NULL when there is none. */
rt__idnode *rt__idmap_find(const rt__idmap *m, uint64_t id);
rt__idnode *rt__idmap_next(const rt__idnode *n);
/* Any record, to empty the map; NULL when it is empty.  Then the record
 * after n, to visit each (the map unchanged meanwhile, but for n's own
 * removal after the next was taken); NULL after the last. */
rt__idnode *rt__idmap_any(const rt__idmap *m);
rt__idnode *rt__idmap_after(const rt__idmap *m, const rt__idnode *n);

#endif

/*
 * idmap.h - records by a 64-bit number, which they embed (as list.h's
 * links are embedded): the leases of a rank's node, on either side.
 */
#ifndef RT_IDMAP_H
#define RT_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define RT__IDMAP_BUCKETS 1024 /* chains grow past that */

typedef struct rt__idnode {
    struct rt__idnode *hnext;
    uint64_t id;
} rt__idnode;

typedef struct rt__idmap {
    rt__idnode *bucket[RT__IDMAP_BUCKETS];
} rt__idmap;

/* Where id's record is, or would go. */
static inline rt__idnode **rt__idmap_slot(rt__idmap *m, uint64_t id)
{
    rt__idnode **s = &m->bucket[id % RT__IDMAP_BUCKETS];
    while (*s && (*s)->id != id)
        s = &(*s)->hnext;
    return s;
}

static inline rt__idnode *rt__idmap_find(rt__idmap *m, uint64_t id)
{
    return *rt__idmap_slot(m, id);
}

static inline void rt__idmap_add(rt__idmap *m, rt__idnode *n)
{
    n->hnext = NULL;
    *rt__idmap_slot(m, n->id) = n;
}

static inline void rt__idmap_remove(rt__idmap *m, rt__idnode *n)
{
    rt__idnode **s = rt__idmap_slot(m, n->id);
    if (*s == n)
        *s = n->hnext;
}

/* Any record, to empty the map; NULL when it is empty. */
static inline rt__idnode *rt__idmap_any(const rt__idmap *m)
{
    for (size_t i = 0; i < RT__IDMAP_BUCKETS; i++)
        if (m->bucket[i])
            return m->bucket[i];
    return NULL;
}

#endif

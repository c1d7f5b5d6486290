/* idmap.c - records by a 64-bit key (idmap.h). */
#include "idmap.h"

#include "alloc.h"

#define FIRST_BUCKETS 64

int rt__idmap_init(rt__idmap *m)
{
    m->count = 0;
    m->bucket = rt__calloc(FIRST_BUCKETS, sizeof *m->bucket);
    m->nbuckets = m->bucket ? FIRST_BUCKETS : 0; /* a failed one is empty */
    return m->bucket ? 0 : -1;
}

void rt__idmap_free(rt__idmap *m)
{
    rt__free(m->bucket);
    m->bucket = NULL;
    m->nbuckets = m->count = 0;
}

static rt__idnode **chain(const rt__idmap *m, uint64_t id)
{
    /* Keys may be small numbers or hashes: mix them before masking. */
    uint64_t h = id * 0x9e3779b97f4a7c15u;
    return &m->bucket[(h >> 32) & (m->nbuckets - 1)];
}

static void grow(rt__idmap *m)
{
    rt__idmap bigger = {.nbuckets = m->nbuckets * 2, .count = m->count};
    if (!(bigger.bucket = rt__calloc(bigger.nbuckets, sizeof *bigger.bucket)))
        return;
    for (size_t i = 0; i < m->nbuckets; i++)
        for (rt__idnode *n = m->bucket[i], *next; n; n = next) {
            next = n->hnext;
            rt__idnode **head = chain(&bigger, n->id);
            n->hnext = *head;
            *head = n;
        }
    rt__free(m->bucket);
    *m = bigger;
}

void rt__idmap_add(rt__idmap *m, rt__idnode *n)
{
    if (++m->count > m->nbuckets)
        grow(m);
    rt__idnode **head = chain(m, n->id);
    n->hnext = *head;
    *head = n;
}

void rt__idmap_remove(rt__idmap *m, rt__idnode *n)
{
    for (rt__idnode **link = chain(m, n->id); *link; link = &(*link)->hnext)
        if (*link == n) {
            *link = n->hnext;
            m->count--;
            return;
        }
}

rt__idnode *rt__idmap_find(const rt__idmap *m, uint64_t id)
{
    rt__idnode *n = *chain(m, id);
    while (n && n->id != id)
        n = n->hnext;
    return n;
}

rt__idnode *rt__idmap_next(const rt__idnode *n)
{
    uint64_t id = n->id;
    for (n = n->hnext; n && n->id != id; n = n->hnext)
        ;
    return (rt__idnode *)n;
}

/* The first record of the chains from bucket i on. */
static rt__idnode *from_bucket(const rt__idmap *m, size_t i)
{
    for (; i < m->nbuckets; i++)
        if (m->bucket[i])
            return m->bucket[i];
    return NULL;
}

rt__idnode *rt__idmap_any(const rt__idmap *m)
{
    return from_bucket(m, 0);
}

rt__idnode *rt__idmap_after(const rt__idmap *m, const rt__idnode *n)
{
    if (n->hnext)
        return n->hnext;
    return from_bucket(m, (size_t)(chain(m, n->id) - m->bucket) + 1);
}

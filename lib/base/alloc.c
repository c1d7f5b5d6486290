/* alloc.c - the one allocation function, and the switch tests use. */
#include "alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t made;    /* allocations since the last look */
static _Atomic uint64_t fail_at; /* made's value that fails; 0 = none */
static _Atomic int counting;     /* a test looked: count from then on */

/* One allocation more: whether the switch fails it.  Counted only once
 * a test asked: every thread allocates, and one counter that all of
 * them add to moves its cache line between the CPUs at each allocation
 * (3 % of a cluster job's time, on the application thread alone). */
static int fails_now(void)
{
    if (!atomic_load_explicit(&counting, memory_order_relaxed))
        return 0;
    uint64_t n = atomic_fetch_add_explicit(&made, 1, memory_order_relaxed) + 1;
    return n == atomic_load_explicit(&fail_at, memory_order_relaxed);
}

void *rt__realloc(void *p, size_t size)
{
    if (size == 0) {
        free(p);
        return NULL;
    }
    return fails_now() ? NULL : realloc(p, size);
}

void *rt__malloc(size_t size)
{
    return rt__realloc(NULL, size ? size : 1);
}

/* calloc(), not malloc() and memset(): a large block comes zeroed from
 * the kernel, its pages made as they are first written.  The fork server
 * and every worker inherit the runtime's tables, and each page written
 * costs every fork and exit (the run slots' and the board's, 1.4 MB,
 * were a fifth of a max_calls = 1 task's time). */
void *rt__calloc(size_t n, size_t size)
{
    return fails_now() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

char *rt__strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = rt__malloc(len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

char *rt__strdup(const char *s)
{
    return rt__strndup(s, SIZE_MAX);
}

void rt__free(void *p)
{
    free(p);
}

uint64_t rt__alloc_fail_at(uint64_t n)
{
    atomic_store(&counting, 1);
    atomic_store(&fail_at, n);
    return atomic_exchange(&made, 0);
}

void rt__alloc_forked(void)
{
    atomic_store(&counting, 0);
    atomic_store(&fail_at, 0);
}

int rt__reserve(char **buf, size_t *cap, size_t len, size_t more, size_t first)
{
    size_t need = len + more, room = *cap ? *cap : first;
    if (need < len)
        return -1;
    if (need <= *cap)
        return 0;
    while (room < need)
        room = room > SIZE_MAX / 2 ? need : 2 * room;
    char *grown = rt__realloc(*buf, room);
    if (!grown)
        return -1;
    *buf = grown;
    *cap = room;
    return 0;
}

void *rt__grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return v;
    size_t more = *cap ? 2 * *cap : first;
    void *grown = rt__realloc(v, more * size);
    if (grown)
        *cap = more;
    return grown;
}

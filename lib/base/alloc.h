/*
 * alloc.h - every allocation of the runtime goes through rt__realloc(), as
 * every allocation of Lua goes through luaM_realloc_, so that a test can
 * make the n-th one fail and check that each call still ends in success or
 * a clean error, never a crash or a leak.
 */
#ifndef RT_ALLOC_H
#define RT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* realloc(), or a failure when the test switch says so; size 0 frees. */
void *rt__realloc(void *p, size_t size);
void *rt__malloc(size_t size);
void *rt__calloc(size_t n, size_t size);
char *rt__strdup(const char *s);
char *rt__strndup(const char *s, size_t n);
/* Room for one more element in an array v of n elements of size bytes
 * and capacity *cap, which doubles (from first): the array, perhaps
 * moved, or NULL when out of memory (v and *cap unchanged). */
void *rt__grow(void *v, size_t *cap, size_t n, size_t size, size_t first);
/* Room for `more` bytes after the first len of the buffer *buf of *cap
 * bytes, which doubles (from first) until they fit: 0, or -1 when out of
 * memory or past SIZE_MAX (*buf and *cap unchanged). */
int rt__reserve(char **buf, size_t *cap, size_t len, size_t more, size_t first);
void rt__free(void *p);

/* Tests: make the n-th allocation from now on fail, and every later one
 * succeed (0: none fails).  Returns how many allocations were made since
 * the previous call (0 at the first: counting starts there).  Forked
 * processes (fork server, workers) never fail. */
uint64_t rt__alloc_fail_at(uint64_t n);
/* In a process just forked: no allocation fails here. */
void rt__alloc_forked(void);

#endif

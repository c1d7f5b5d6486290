/*
 * image.h - functions by identity across processes, and the program's
 * identity.
 *
 * A function pointer means nothing in another process (ASLR): a rank
 * sends the object that holds it and its offset in that object, and the
 * receiving rank, which runs the same program, adds its own base.  The
 * program's build id (or, without one, a hash of its file) tells ranks
 * that run different programs apart.
 */
#ifndef RT_IMAGE_H
#define RT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define RT__OBJECT_LEN 256 /* an object's path; "" is the program */

/* Where a function lives: an object and an offset in it. */
typedef struct rt__fn_place {
    char object[RT__OBJECT_LEN];
    uint64_t offset;
} rt__fn_place;

/* Functions and places, both ways, remembered: dl_iterate_phdr() walks
 * every loaded object, and a task's function is looked up for each task.
 * Zero-initialize one per user (it is not shared between threads).
 * place: 0, or -1 when no loaded object holds fn.  find: the function,
 * or NULL when its object is not loaded here or the offset falls outside
 * it. */
#define RT__FN_CACHE 64
typedef struct rt__fn_cache {
    struct {
        const void *fn;
        rt__fn_place place;
    } slot[RT__FN_CACHE];
} rt__fn_cache;

int rt__fn_cache_place(rt__fn_cache *c, const void *fn, rt__fn_place *out);
void *rt__fn_cache_find(rt__fn_cache *c, const rt__fn_place *p);

/* The code a fork server forked now would have: the executable segments
 * of every object loaded.  A function outside them (in a library
 * dlopen()ed later) does not exist in the workers.  has: 1 when fn lies in
 * the map (or the map could not hold every segment), else 0. */
#define RT__CODE_RANGES 512
typedef struct rt__code_map {
    size_t n;                /* SIZE_MAX: too many segments to tell */
    struct {
        uintptr_t lo, hi;
    } range[RT__CODE_RANGES];
} rt__code_map;

void rt__code_map_take(rt__code_map *m);
int rt__code_map_has(const rt__code_map *m, const void *fn);

/* The program's identity, as text ("build-id 1a2b..." or "sha 9f..."),
 * into buf. */
void rt__image_identity(char *buf, size_t size);

#endif

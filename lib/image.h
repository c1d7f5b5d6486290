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

/* The program's identity, as text ("build-id 1a2b..." or "sha 9f..."),
 * into buf. */
void rt__image_identity(char *buf, size_t size);

#endif

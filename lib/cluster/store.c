/* store.c - objects a serving rank holds: results kept, copies pulled;
 * and, past the rank's object_store_bytes, the results kept that no task
 * here uses spilled to files, read back when used or pulled (as rank 0's
 * store does: runtime/spill.c). */
#include "store.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/idmap.h"
#include "base/shm.h"
#include "node/keep.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct held_obj {
    rt__idnode byid;   /* first; the object's id (its task's) */
    rt__task *object;  /* result: the bytes, NULL while pulled */
    unsigned run;
    int kept;          /* made here: until rank 0 frees it */
    size_t users;      /* tasks here that take it */
    struct held_obj *next_dropped;
} held_obj;

struct rt__store {
    rt__idmap objects;
    size_t size;           /* bytes the objects here may take, or 0: any */
    size_t used;           /* bytes they take in memory */
    const char *spill_dir; /* where kept ones spill past size, or NULL */
    held_obj *dropped;     /* gone, their memory not yet given back */
};

rt__store *rt__store_new(size_t size, const char *spill_dir)
{
    rt__store *h = rt__calloc(1, sizeof *h);
    if (h && rt__idmap_init(&h->objects) < 0) {
        rt__free(h);
        return NULL;
    }
    if (h) {
        h->size = size;
        h->spill_dir = spill_dir;
    }
    return h;
}

/* ---- spilling ------------------------------------------------------------------- */

/* Move o's bytes to a file: 0, or -1 (they stay, with a warning). */
static int spill_one(rt__store *h, held_obj *o)
{
    rt__task *t = o->object;
    char path[1200];
    snprintf(path, sizeof path, "%s/rtask-spill-%ld-%016llx-%u", h->spill_dir, (long)getpid(),
             (unsigned long long)t->call.id, o->run);
    char *file = rt__strdup(path);
    if (!file || rt__keep_spill(path, t->obj.result, t->obj.result_len) < 0) {
        rt__warn("spilling an object of %zu bytes to %s: %s", t->obj.result_len, path,
                 strerror(errno));
        unlink(path);
        rt__free(file);
        return -1;
    }
    rt__buf_free(t->obj.result);
    t->obj.spill_file = file;
    t->obj.spilled = 1;
    h->used -= t->obj.result_len;
    return 0;
}

/* Past its size, the store moves what nobody here uses to files. */
static void spill(rt__store *h)
{
    if (!h->size || !h->spill_dir)
        return;
    for (rt__idnode *n = rt__idmap_any(&h->objects); n && h->used > h->size;) {
        held_obj *o = (held_obj *)n;
        n = rt__idmap_after(&h->objects, n);
        if (o->kept && !o->users && rt__task_bytes(o->object) && o->object->obj.result_len)
            (void)spill_one(h, o);
    }
}

/* o's bytes back from their file (or o missing: RT_ESYS). */
static void restore(rt__store *h, held_obj *o)
{
    rt__task *t = o->object;
    if (!t->obj.spilled)
        return;
    char *file = t->obj.spill_file;
    void *bytes = rt__keep_unspill(file, t->obj.result_len);
    if (!bytes)
        rt__task_fail(t, RT_ESYS, "the object's %zu bytes, spilled to %s, could not be "
                      "read back", t->obj.result_len, file);
    unlink(file);
    rt__free(file);
    t->obj.spilled = 0;
    t->obj.result = bytes;
    if (bytes)
        h->used += t->obj.result_len;
    else
        t->obj.result_len = 0;
}

static held_obj *find(const rt__store *h, uint64_t id, unsigned run)
{
    for (rt__idnode *n = rt__idmap_find(&h->objects, id); n; n = rt__idmap_next(n))
        if (((held_obj *)n)->run == run)
            return (held_obj *)n;
    return NULL;
}

/* o is gone; its memory is given back by rt__store_sweep(): unmapping
 * and closing 256 MiB take 60 ms, which the answer of the task that
 * last took it would otherwise wait for. */
static void drop(rt__store *h, held_obj *o)
{
    if (rt__task_bytes(o->object))
        h->used -= o->object->obj.result_len;
    rt__idmap_remove(&h->objects, &o->byid);
    o->next_dropped = h->dropped;
    h->dropped = o;
}

void rt__store_sweep(rt__store *h)
{
    for (held_obj *o = h->dropped, *next; o; o = next) {
        next = o->next_dropped;
        rt__task_free(o->object);
        rt__free(o);
    }
    h->dropped = NULL;
}

/* A record for the object, with bytes or (NULL) none yet. */
static held_obj *add(rt__store *h, uint64_t id, unsigned run, void *bytes, size_t len)
{
    held_obj *o = rt__calloc(1, sizeof *o);
    if (o && !(o->object = rt__task_new_held(id, bytes, len))) {
        rt__free(o);
        o = NULL;
    }
    if (!o)
        return NULL;
    o->byid.id = id;
    o->run = run;
    rt__idmap_add(&h->objects, &o->byid);
    return o;
}

int rt__store_keep(rt__store *h, uint64_t id, unsigned run, void *bytes, size_t len)
{
    held_obj *o = add(h, id, run, bytes, len);
    if (!o)
        return -1;
    o->kept = 1;
    h->used += len;
    spill(h);
    return 0;
}

int rt__store_rename(rt__store *h, uint64_t id, unsigned run, uint64_t to, unsigned to_run)
{
    held_obj *o = find(h, id, run);
    if (!o)
        return -1;
    rt__idmap_remove(&h->objects, &o->byid);
    o->byid.id = to;
    rt__task_held_renamed(o->object, to); /* rt__store_unuse() finds it by it */
    o->run = to_run;
    rt__idmap_add(&h->objects, &o->byid);
    return 0;
}

rt__task *rt__store_use(rt__store *h, const rt__rank_ref *ref, size_t len, int *pull)
{
    held_obj *o = find(h, ref->object, (unsigned)ref->run);
    *pull = 0;
    if (!o && (o = add(h, ref->object, (unsigned)ref->run, NULL, len)))
        *pull = 1;
    if (!o)
        return NULL;
    o->users++;
    restore(h, o);
    return o->object;
}

void rt__store_pull(rt__store *h, rt__bridge *b, const rt__rank_ref *ref)
{
    rt__rank_msg m = rt__rank_object(RT__RANK_PULL, ref->object, (unsigned)ref->run, 1);
    if (ref->holder == 0 || rt__bridge_send(b, (int)ref->holder, &m) < 0)
        rt__store_arrived(h, ref->object, (unsigned)ref->run, NULL, 0);
}

static void maybe_drop(rt__store *h, held_obj *o)
{
    if (!o->kept && o->users == 0)
        drop(h, o);
}

void rt__store_unuse(rt__store *h, rt__task *object)
{
    for (rt__idnode *n = rt__idmap_find(&h->objects, object->call.id); n; n = rt__idmap_next(n)) {
        held_obj *o = (held_obj *)n;
        if (o->object == object) {
            o->users--;
            maybe_drop(h, o);
            return;
        }
    }
}

void rt__store_forget(rt__store *h, uint64_t id, unsigned run)
{
    held_obj *o = find(h, id, run);
    if (o && o->kept) {
        o->kept = 0;
        maybe_drop(h, o);
    }
}

const rt__task *rt__store_find(rt__store *h, uint64_t id, unsigned run)
{
    held_obj *o = find(h, id, run);
    if (o)
        restore(h, o);
    return o && rt__task_bytes(o->object) ? o->object : NULL;
}

void rt__store_arrived(rt__store *h, uint64_t id, unsigned run, void *bytes, int found)
{
    held_obj *o = find(h, id, run);
    if (!o || o->object->obj.result || o->object->obj.spilled) {
        rt__buf_free(bytes); /* nobody waits for it any more */
        return;
    }
    o->object->obj.result = bytes;
    o->object->obj.status = found ? RT_OK : RT_EDEPENDENCY;
    if (bytes)
        h->used += o->object->obj.result_len;
}

int rt__store_ready(const rt__task *o)
{
    return rt__task_bytes(o) != NULL || o->obj.result_len == 0;
}

int rt__store_missing(const rt__task *o)
{
    return o->obj.status != RT_OK;
}

void rt__store_free(rt__store *h)
{
    if (!h)
        return;
    for (rt__idnode *n; (n = rt__idmap_any(&h->objects));)
        drop(h, (held_obj *)n);
    rt__store_sweep(h);
    rt__idmap_free(&h->objects);
    rt__free(h);
}

/* store.c - objects a serving rank holds: results kept, copies pulled. */
#include "store.h"

#include "base/alloc.h"
#include "base/idmap.h"

#include <string.h>

typedef struct held_obj {
    rt__idnode byid;   /* first; the object's id (its task's) */
    rt__task *object;  /* result: the bytes, NULL while pulled */
    unsigned run;
    int kept;          /* made here: until rank 0 frees it */
    size_t users;      /* tasks here that take it */
} held_obj;

struct rt__store {
    rt__idmap objects;
};

rt__store *rt__store_new(void)
{
    rt__store *h = rt__calloc(1, sizeof *h);
    if (h && rt__idmap_init(&h->objects) < 0) {
        rt__free(h);
        return NULL;
    }
    return h;
}

static held_obj *find(const rt__store *h, uint64_t id, unsigned run)
{
    for (rt__idnode *n = rt__idmap_find(&h->objects, id); n; n = rt__idmap_next(n))
        if (((held_obj *)n)->run == run)
            return (held_obj *)n;
    return NULL;
}

static void drop(rt__store *h, held_obj *o)
{
    rt__idmap_remove(&h->objects, &o->byid);
    rt__task_free(o->object);
    rt__free(o);
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
    return o->object;
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

const rt__task *rt__store_find(const rt__store *h, uint64_t id, unsigned run)
{
    held_obj *o = find(h, id, run);
    return o && o->object->obj.result ? o->object : NULL;
}

void rt__store_arrived(rt__store *h, uint64_t id, unsigned run, void *bytes, int found)
{
    held_obj *o = find(h, id, run);
    if (!o || o->object->obj.result) {
        rt__buf_free(bytes); /* nobody waits for it any more */
        return;
    }
    o->object->obj.result = bytes;
    o->object->obj.status = found ? RT_OK : RT_EDEPENDENCY;
}

int rt__store_ready(const rt__task *o)
{
    return o->obj.result != NULL || o->obj.result_len == 0;
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
    rt__idmap_free(&h->objects);
    rt__free(h);
}

/* objects.c - the object store's books, objects' lifetimes, rt_put() and
 * views (runtime.h explains the rules). */
#include "calls.h"

#include "runtime.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"

#include <stdio.h>

/* [L] Freed once nothing names or holds it and it has ended. */
static int collectable(const rt__task *o)
{
    return o->obj.orphan && o->obj.holds == 0 && o->obj.state == RT__TASK_DONE;
}

int rt__objects_elsewhere(const rt__task *o)
{
    return o->obj.holder && !o->obj.result && o->obj.result_len && o->obj.status == RT_OK;
}

int rt__objects_spilled(const rt__task *o)
{
    return o->obj.spilled;
}

/* The bytes of o that this node's store holds: none when another rank
 * holds them, or a file (spill.c). */
static size_t bytes_here(const rt__task *o)
{
    return o->obj.spilled || (o->obj.holder && !o->obj.result) ? 0 : o->obj.result_len;
}

void rt__objects_leave(rt__runtime *rt, rt__task *o)
{
    rt->store_used -= bytes_here(o);
    if (rt->room_waiters && bytes_here(o))
        pthread_cond_broadcast(&rt->changed);
}

int rt__objects_ask_pull(rt__runtime *rt, rt__task *o)
{
    if (o->obj.pulling)
        return 0;
    if (rt->npull_asks == rt->cap_pull_asks) {
        size_t cap = rt->cap_pull_asks ? 2 * rt->cap_pull_asks : 16;
        rt__pull *v = rt__realloc(rt->pull_asks, cap * sizeof *v);
        if (!v)
            return 0; /* the caller asks again when it wakes */
        rt->pull_asks = v;
        rt->cap_pull_asks = cap;
    }
    rt->pull_asks[rt->npull_asks++] = (rt__pull){o->call.id, o->obj.held_run, o->obj.holder};
    o->obj.pulling = 1;
    return 1;
}

int rt__objects_arrived(rt__runtime *rt, rt__outbox *out)
{
    for (size_t i = 0; i < out->narrived; i++) {
        rt__arrival *a = &out->arrived[i];
        rt__task *o = rt__table_find(&rt->tasks, a->object);
        if (!o || !o->obj.holder)
            o = rt__dispatch_parked_object(&rt->dispatch, a->object);
        if (!o || !rt__objects_elsewhere(o))
            continue;
        o->obj.pulling = 0;
        if (a->found && a->bytes) {
            o->obj.result = a->bytes;
            a->bytes = NULL;
            rt->store_used += o->obj.result_len;
        } else {
            rt__task_fail(o, RT_EWORKERDIED, "the object's %zu bytes were lost: rank %d "
                          "no longer holds them", o->obj.result_len, o->obj.holder);
        }
    }
    return out->narrived > 0;
}

int rt__objects_unhold(rt__runtime *rt, rt__task *o)
{
    o->obj.holds--;
    if (!collectable(o))
        return 0;
    rt__objects_leave(rt, o);
    return 1;
}

/* A task that runs on with its handle dropped, found by its id. */
typedef struct running_orphan {
    rt__idnode byid; /* first */
    rt__task *task;
} running_orphan;

static void note_running(rt__runtime *rt, rt__task *t)
{
    running_orphan *o = rt__malloc(sizeof *o);
    if (!o)
        return; /* it keeps its CPUs while it waits */
    *o = (running_orphan){.byid.id = t->call.id, .task = t};
    rt__idmap_add(&rt->running_orphans, &o->byid);
}

static void forget_running(rt__runtime *rt, const rt__task *t)
{
    for (rt__idnode *n = rt__idmap_find(&rt->running_orphans, t->call.id); n;
         n = rt__idmap_next(n))
        if (((running_orphan *)n)->task == t) {
            rt__idmap_remove(&rt->running_orphans, n);
            rt__free(n);
            return;
        }
}

rt__task *rt__objects_running(rt__runtime *rt, uint64_t id)
{
    rt__task *t = rt__table_find(&rt->tasks, id);
    rt__idnode *n = t ? NULL : rt__idmap_find(&rt->running_orphans, id);
    return n ? ((running_orphan *)n)->task : t;
}

void rt__objects_running_free(rt__runtime *rt)
{
    for (rt__idnode *n; (n = rt__idmap_any(&rt->running_orphans));) {
        rt__idmap_remove(&rt->running_orphans, n);
        rt__free(n);
    }
    rt__idmap_free(&rt->running_orphans);
}

void rt__objects_publish(rt__runtime *rt, rt__task *t, rt__tasks *orphans)
{
    if (t->obj.orphan)
        forget_running(rt, t);
    t->obj.state = RT__TASK_DONE;
    rt->ended[rt->nended++ % RT__ENDED_LOG] = t->call.id;
    rt->store_used += bytes_here(t);
    rt__arg *list = rt__task_args(t);
    for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
        rt__task *o = list[i].object;
        list[i].object = NULL; /* its record may go now */
        if (o && rt__objects_unhold(rt, o))
            rt__tasks_push(orphans, o);
    }
    if (collectable(t)) {
        rt__objects_leave(rt, t);
        rt__tasks_push(orphans, t);
    }
}

int rt__objects_take_args(rt__runtime *rt, rt__task *t, const rt_arg *args,
                          const char *call)
{
    for (uint32_t i = 0; i < rt__task_nargs(t); i++)
        if (args[i].ref.id && !rt__table_find(&rt->tasks, args[i].ref.id))
            return rt__error(RT_EBADREF, "%s: argument %u is an unknown or consumed "
                                         "handle", call, i);
    for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
        if (!args[i].ref.id)
            continue;
        rt__task *o = rt__table_find(&rt->tasks, args[i].ref.id);
        o->obj.holds++;
        rt__task_args(t)[i].object = o;
    }
    /* Held, none spills again: those in files come back (the lock is
     * released meanwhile, and each read makes the list be looked at
     * again). */
    for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
        rt__task *o = rt__task_args(t)[i].object;
        if (o && rt__objects_spilled(o)) {
            rt__spill_restore(rt, o);
            int rc = rt__check_running(rt, call);
            if (rc < 0) {
                rt__objects_untake_args(t);
                return rc;
            }
            i = UINT32_MAX; /* from the first again */
        }
    }
    return 0;
}

void rt__objects_untake_args(rt__task *t)
{
    rt__arg *list = rt__task_args(t);
    for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
        if (list[i].object)
            list[i].object->obj.holds--; /* named by a handle: never the last */
        list[i].object = NULL;
    }
}

/* [L] Why the store has no room, in the words of rt_put(3). */
static int store_full(const rt__runtime *rt, size_t need, const char *call)
{
    char asked[64] = " (it stays over full)";
    if (need)
        snprintf(asked, sizeof asked, ", and %zu more are asked for", need);
    return rt__error(RT_ENOMEM, "%s: the object store is full: %zu of its %zu bytes are "
                     "held by objects%s; rt_get() or rt_release() the refs you no longer "
                     "need, or raise rt_config.object_store_bytes",
                     call, rt->store_used, rt->store_size, asked);
}

/* [L] A submission (need 0) goes on unless the store is over full; a
 * put, when its bytes fit. */
static int has_room(const rt__runtime *rt, size_t need)
{
    return need ? rt->store_used + need <= rt->store_size : rt->store_used <= rt->store_size;
}

/* Whether need bytes could ever fit the store (its size never changes). */
static int too_big(const rt__runtime *rt, size_t need, const char *call)
{
    if (need <= rt->store_size)
        return 0;
    return rt__error(RT_ENOMEM, "%s: %zu bytes are more than the whole object store "
                     "(%zu bytes, rt_config.object_store_bytes)", call, need,
                     rt->store_size);
}

int rt__call_fits(rt__runtime *rt, size_t len, const char *call)
{
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, call);
    if (rc == 0)
        rc = too_big(rt, len, call);
    pthread_mutex_unlock(&rt->lock);
    return rc;
}

int rt__objects_room(rt__runtime *rt, size_t need, const char *call)
{
    if (too_big(rt, need, call) < 0)
        return RT_ENOMEM;
    if (has_room(rt, need))
        return 0; /* every submission passes here: no clock read, no count */
    struct timespec deadline = rt__deadline_after(RT__STORE_WAIT_MS);
    int rc = 0;
    rt->room_waiters++;
    while (rc == 0 && !has_room(rt, need)) {
        /* Objects nobody holds move to files (the lock released
         * meanwhile); while another thread moves them, wait for it. */
        int moved = rt__spill_make_room(rt, need);
        if (moved > 0 || rt->spill.busy)
            deadline = rt__deadline_after(RT__STORE_WAIT_MS);
        if (moved > 0)
            rc = rt__check_running(rt, call);
        else if (rt__wait_change(rt, RT__STORE_WAIT_MS, &deadline) == RT_ETIMEDOUT &&
                 !rt->spill.busy)
            rc = store_full(rt, need, call);
        else
            rc = rt__check_running(rt, call);
    }
    rt->room_waiters--;
    return rc;
}

void rt__objects_end_views(rt__runtime *rt, rt__tasks *orphans)
{
    for (uint32_t i = 0; i < rt->views.used; i++) {
        rt__task *o = rt->views.slot[i].item;
        rt->views.slot[i].item = NULL;
        if (o && rt__objects_unhold(rt, o))
            rt__tasks_push(orphans, o);
    }
    rt__table_free(&rt->views, NULL);
}

/* ---- the calls -------------------------------------------------------------------- */

int rt__call_put(rt__runtime *rt, rt__task *o, rt_ref *ref)
{
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, "rt_put");
    if (rc == 0)
        rc = rt__objects_room(rt, bytes_here(o), "rt_put");
    void *old;
    if (rc == 0 && rt__table_adopt(&rt->tasks, o, &o->call.id, &old) < 0)
        rc = rt__error(RT_ENOMEM, "rt_put: no memory for the handle");
    if (rc == 0) {
        o->obj.state = RT__TASK_DONE;
        rt->store_used += bytes_here(o);
        ref->id = o->call.id;
    }
    pthread_mutex_unlock(&rt->lock);
    if (rc < 0)
        rt__task_free(o);
    return rc;
}

int rt__call_put_held(rt__runtime *rt, int rank, uint64_t len, const uint64_t hash[2],
                      rt_ref *ref)
{
    if (len == 0 || len > SIZE_MAX)
        return rt__error(RT_EINVAL, "rt_put: an object kept on rank %d has no length", rank);
    rt__task *o = rt__task_new_held(0, NULL, (size_t)len);
    if (!o)
        return rt__error(RT_ENOMEM, "rt_put: no memory for the object");
    o->obj.holder = (uint16_t)rank;
    o->obj.held_run = 0;
    rt__call_key_hashed(rt, o, hash);
    return rt__call_put(rt, o, ref);
}

int rt__call_put_failed(rt__runtime *rt, uint64_t id, int rc)
{
    rt__task *o = rt__task_new_held(id, NULL, 0);
    rt_ref ref;
    if (!o)
        return -1; /* the handle is unknown here: its reader gets RT_EBADREF */
    rt__task_fail(o, rc, "%s", rt__last_error());
    return rt__call_put(rt, o, &ref) < 0 ? -1 : 0;
}

int rt__call_view(rt__runtime *rt, rt_ref ref, long timeout_ms, rt_view *view)
{
    pthread_mutex_lock(&rt->lock);
    rt__task *o;
    uint64_t id;
    void *old;
    int rc = rt__wait_done(rt, ref, timeout_ms, RT__WAIT_AWAIT, "rt_get_view", &o);
    if (rc == 0 && rt__table_add(&rt->views, o, &id, &old) < 0)
        rc = rt__error(RT_ENOMEM, "rt_get_view: no memory for the view");
    if (rc == 0)
        o->obj.holds++;
    pthread_mutex_unlock(&rt->lock);
    if (rc < 0)
        return rc;
    /* A failed task's result bytes explain its failure: RT_ETASK has
     * them; the other failures have none, and no view. */
    rc = rt__task_explain(o);
    if (rc < 0 && rc != RT_ETASK) {
        (void)rt__call_view_release(rt, id);
        return rc;
    }
    *view = (rt_view){o->obj.result, o->obj.result_len, id};
    return rc;
}

int rt__call_view_release(rt__runtime *rt, uint64_t view)
{
    pthread_mutex_lock(&rt->lock);
    rt__task *o = rt->state == RT__RUNNING ? rt__table_find(&rt->views, view) : NULL;
    int last = 0;
    if (o) {
        rt__table_drop(&rt->views, view);
        last = rt__objects_unhold(rt, o);
    }
    pthread_mutex_unlock(&rt->lock);
    if (last)
        rt__task_free(o);
    return o ? 0 : rt__error(RT_EBADREF, "rt_view_release: unknown or released view");
}

rt__task *rt__objects_drop_handle(rt__runtime *rt, uint64_t id)
{
    rt__task *t = rt__table_find(&rt->tasks, id);
    if (!t)
        return NULL;
    rt__table_drop(&rt->tasks, id);
    t->obj.orphan = 1;
    if (t->obj.state != RT__TASK_DONE)
        note_running(rt, t);
    if (t->obj.state != RT__TASK_DONE || t->obj.holds > 0)
        return NULL;
    rt__objects_leave(rt, t);
    return t;
}

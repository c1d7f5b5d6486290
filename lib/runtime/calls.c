/* calls.c - what the public calls ask of the runtime (calls.h). */
#include "calls.h"

#include "runtime.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/idmap.h"
#include "base/process.h"
#include "base/shm.h"
#include "sched/census.h"
#include "sched/scheduler.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AWAIT_MIN_MS 10 /* rt_get() reads a quick task's answer itself only
                           when it may wait at least this long */

/* ---- checks, under the lock ------------------------------------------------------ */

int rt__check_running(const rt__runtime *rt, const char *call)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "%s: not available inside a task", call);
    if (rt->state == RT__RUNNING)
        return 0;
    if (rt->state == RT__STARTING)
        return rt__error(RT_ENOTINIT, "%s: rt_init() has not returned yet", call);
    if (rt->state == RT__STOPPING)
        return rt__error(RT_ESHUTDOWN, "%s: the runtime is stopping%s%s%s", call,
                         rt->stop_reason ? " (" : "", rt->stop_reason ? rt->stop_reason : "",
                         rt->stop_reason ? ")" : "");
    if (rt->was_shut_down)
        return rt__error(RT_ESHUTDOWN, "%s: the runtime was shut down", call);
    return rt__error(RT_ENOTINIT, "%s: call rt_init() first", call);
}

/* [L] 0, or RT_EINVAL when fn (what names it: "the function") was loaded
 * after rt_init(), so that no worker has it. */
static int check_code(const rt__runtime *rt, const void *fn, const char *call,
                      const char *what)
{
    /* A submitter calls one function many times: the last one that passed
     * is not looked up again. */
    static _Thread_local const void *passed;
    static _Thread_local unsigned passed_generation;
    if (fn == passed && passed_generation == rt->code_generation)
        return 0;
    if (!rt__code_map_has(&rt->code, fn)) {
        Dl_info info;
        const char *object = dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "?";
        return rt__error(RT_EINVAL, "%s: %s is in %s, loaded after rt_init(): the workers, "
                         "forked from the fork server that rt_init() started, do not have "
                         "it (load it before rt_init())", call, what, object);
    }
    passed = fn;
    passed_generation = rt->code_generation;
    return 0;
}

/* [L] Check r and write it into t: in its placement group, which must
 * be live, or on the nodes. */
static int place_request(rt__runtime *rt, rt__request *r, rt__task *t)
{
    const rt__group *g = NULL;
    if (r->res.group && !(g = rt__table_find(&rt->groups, r->res.group)))
        return rt__error(RT_EBADREF, "placement_group: unknown or removed handle");
    return rt__request_place(&rt->dispatch.sched, g, r, t);
}

/* ---- tasks ------------------------------------------------------------------------ */

/* [L] Who makes t's object: t, or for a part not done (one of several
 * results: node/task.h) its task, which cancelling or waiting for the
 * part concerns.  NULL for NULL. */
static rt__task *maker_of(rt__runtime *rt, rt__task *t)
{
    return t && rt__task_whole(t) && t->obj.state != RT__TASK_DONE ? rt__objects_running(rt, rt__task_whole(t)) : t;
}

/* [L] Give each of the n records a handle; on failure none has one. */
static int add_handles(rt__runtime *rt, rt__task **tasks, size_t n, rt_ref *refs,
                       const char *call)
{
    for (size_t i = 0; i < n; i++) {
        void *old;
        if (rt__table_adopt(&rt->tasks, tasks[i], &tasks[i]->call.id, &old) == 0) {
            refs[i].id = tasks[i]->call.id;
            continue;
        }
        while (i-- > 0)
            rt__table_drop(&rt->tasks, refs[i].id);
        return rt__error(RT_ENOMEM, "%s: no memory for %zu handles", call, n);
    }
    return 0;
}

/* [L] A task of several results: its parts' handles, in refs[1 ..]. */
static int add_part_handles(rt__runtime *rt, rt__task *t, rt_ref *refs, const char *call)
{
    rt__task *parts[RT_RETURNS_MAX];
    size_t n = 0;
    for (rt__task *p = rt__task_parts(t); p; p = p->next)
        parts[n++] = p;
    return add_handles(rt, parts, n, refs + 1, call);
}

/* [L] The first steps of every submission, which may wait with the lock
 * released (the store full: objects spill, or come back): room in the
 * store, the objects it takes held, and here.  What was looked up before
 * must be looked up again after. */
static int take_objects(rt__runtime *rt, rt__task *t, const rt_arg *args, const char *call)
{
    int rc = rt__objects_room(rt, 0, call);
    if (rc == 0 && args)
        rc = rt__objects_take_args(rt, t, args, call);
    return rc;
}

/* [L] The last: a handle (and one for each of its parts), and the
 * queue; on failure, the objects given back. */
static int submit_taken(rt__runtime *rt, rt__task *t, const rt_arg *args, const char *call,
                        rt_ref *ref)
{
    int rc = add_part_handles(rt, t, ref, call);
    if (rc == 0) {
        rc = rt__submit_ref(rt, t, ref);
        for (rt__task *p = rt__task_parts(t); p; p = p->next)
            p->call.more->whole = t->call.id;
        for (rt__task *p = rt__task_parts(t); p && rc < 0; p = p->next)
            rt__table_drop(&rt->tasks, p->call.id);
    }
    if (rc < 0 && args)
        rt__objects_untake_args(t);
    return rc;
}

/* [L] t, with its handles, ends at once with the results an earlier run
 * kept (checkpoint.c): done, as a put object is, without running. */
static void end_kept(rt__runtime *rt, rt__task *t)
{
    rt__tasks parts = {0}, none = {0};
    for (rt__task *p = rt__task_parts(t); p; p = p->next)
        p->call.more->whole = t->call.id;
    rt__task_end_parts(t, &parts); /* status RT_OK: each keeps its bytes */
    t->run.ended = 1;
    rt__objects_publish(rt, t, &none); /* named by its handle: never an orphan */
    for (rt__task *p; (p = rt__tasks_pop(&parts));) {
        p->run.ended = 1;
        rt__objects_publish(rt, p, &none);
    }
}

/* [L] A task whose results were kept by an earlier run (checkpoint.c):
 * handles for it and its parts, and it ends at once, as done, without
 * running.  0, or RT_ENOMEM with nothing given. */
static int submit_kept(rt__runtime *rt, rt__task *t, rt_ref *ref, const char *call)
{
    void *old;
    int rc = add_part_handles(rt, t, ref, call);
    if (rc == 0 && rt__table_adopt(&rt->tasks, t, &t->call.id, &old) < 0) {
        for (rt__task *p = rt__task_parts(t); p; p = p->next)
            rt__table_drop(&rt->tasks, p->call.id);
        rc = rt__error(RT_ENOMEM, "%s: no memory for the handle", call);
    }
    if (rc < 0) {
        rt__objects_untake_args(t);
        return rc;
    }
    ref->id = t->call.id;
    end_kept(rt, t);
    return 0;
}

int rt__call_submit(rt__runtime *rt, rt__task *t, rt__request *r, const rt_arg *args,
                    const char *call, rt_ref *ref)
{
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, call);
    if (rc == 0)
        rc = check_code(rt, (const void *)t->call.fn, call, "the function");
    if (rc == 0)
        rc = take_objects(rt, t, args, call);
    if (rc == 0 && (rc = place_request(rt, r, t)) < 0 && args)
        rt__objects_untake_args(t);
    int kept = rc == 0 ? rt__checkpoint_take(rt, t) : 0;
    if (kept < 0 && args)
        rt__objects_untake_args(t);
    if (kept)
        rc = kept < 0 ? kept : submit_kept(rt, t, ref, call);
    else if (rc == 0)
        rc = submit_taken(rt, t, args, call, ref);
    return rt__submit_done(rt, t, rc);
}

int rt__call_submit_batch(rt__runtime *rt, rt__task **tasks, size_t n, rt__request *r,
                          rt_ref *refs)
{
    const char *call = "rt_remote_batch";
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, call);
    if (rc == 0)
        rc = check_code(rt, (const void *)tasks[0]->call.fn, call, "the function");
    if (rc == 0)
        rc = place_request(rt, r, tasks[0]);
    for (size_t i = 1; rc == 0 && i < n; i++)
        rc = rt__request_write(&rt->dispatch.sched, r, tasks[i]);
    if (rc == 0)
        rc = rt__objects_room(rt, 0, call);
    if (rc == 0)
        rc = add_handles(rt, tasks, n, refs, call);
    int how = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int kept = rt__checkpoint_take(rt, tasks[i]); /* handles given: it stays */
        if (kept > 0)
            end_kept(rt, tasks[i]);
        else
            how |= rt__submit(rt, tasks[i]);
    }
    pthread_mutex_unlock(&rt->lock);
    /* Many: the runtime thread sends them while the caller goes on. */
    if (rc == 0 && how)
        rt__submitted(rt, n > 1 ? RT__WAKE : how);
    return rc;
}

void rt__unhold_answers(rt__runtime *rt)
{
    /* Running, the local node stays while the lock is held: only the
     * round of a stopping runtime stops it (round.c's stop_node()). */
    if (rt->state == RT__RUNNING && rt->local)
        rt__local_unhold(rt->local);
}

/* [L] The wait of all three: wake_at, when tasks' ends may concern it,
 * is the count of ends (rt->nended) it wants to hear of; 0: none. */
static int wait_for(rt__runtime *rt, uint64_t wake_at, long timeout_ms,
                    const struct timespec *deadline)
{
    rt__unhold_answers(rt); /* the runtime thread is to hear of the ends at once */
    if (timeout_ms == 0)
        return RT_ETIMEDOUT;
    int any = wake_at != 0;
    if (any && (rt->any_waiters == 0 || wake_at < rt->any_wake_at))
        rt->any_wake_at = wake_at;
    rt->waiters++;
    rt->any_waiters += any;
    int rc = timeout_ms < 0 ? pthread_cond_wait(&rt->changed, &rt->lock)
                            : pthread_cond_timedwait(&rt->changed, &rt->lock, deadline);
    rt->waiters--;
    rt->any_waiters -= any;
    if (rt->state != RT__RUNNING)
        pthread_cond_broadcast(&rt->changed); /* rt_shutdown() counts us out */
    return rc == ETIMEDOUT ? RT_ETIMEDOUT : 0;
}

int rt__wait_change(rt__runtime *rt, long timeout_ms, const struct timespec *deadline)
{
    return rt__wait_ends(rt, 1, timeout_ms, deadline);
}

int rt__wait_ends(rt__runtime *rt, uint64_t ends, long timeout_ms,
                  const struct timespec *deadline)
{
    return wait_for(rt, rt->nended + (ends ? ends : 1), timeout_ms, deadline);
}

int rt__wait_end(rt__runtime *rt, rt__task *t, long timeout_ms,
                 const struct timespec *deadline)
{
    t->obj.awaited = 1; /* for good: a timed-out wait costs one broadcast more */
    return wait_for(rt, 0, timeout_ms, deadline);
}

int rt__wait_done(rt__runtime *rt, rt_ref ref, long timeout_ms, int how,
                  const char *call, rt__task **t)
{
    struct timespec deadline = rt__deadline_after(timeout_ms > 0 ? timeout_ms : 0);
    /* Waiting for the answer here is worth it only when there is time. */
    int may_await = (how & RT__WAIT_AWAIT) && (timeout_ms < 0 || timeout_ms >= AWAIT_MIN_MS);
    for (;;) {
        int rc = rt__check_running(rt, call);
        if (rc < 0)
            return rc;
        if (!(*t = rt__table_find(&rt->tasks, ref.id)))
            return rt__error(RT_EBADREF, "%s: unknown or consumed handle", call);
        if ((*t)->obj.state == RT__TASK_DONE && rt__objects_spilled(*t)) {
            rt__spill_restore(rt, *t); /* the lock released meanwhile */
            continue;
        }
        if ((*t)->obj.state == RT__TASK_DONE &&
            (!rt__objects_elsewhere(*t) || (how & RT__WAIT_ELSEWHERE)))
            return 0;
        if ((*t)->obj.state == RT__TASK_DONE && rt__objects_ask_pull(rt, *t)) {
            pthread_mutex_unlock(&rt->lock); /* its bytes are another rank's */
            rt__wake_runtime(rt);
            pthread_mutex_lock(&rt->lock);
            continue;
        }
        if (may_await && (*t)->obj.state != RT__TASK_DONE) {
            may_await = 0;
            pthread_mutex_unlock(&rt->lock);
            rt__await(rt, ref);
            pthread_mutex_lock(&rt->lock);
            continue;
        }
        if (rt__wait_end(rt, *t, timeout_ms, &deadline) == RT_ETIMEDOUT)
            return rt__error(RT_ETIMEDOUT, "%s: timed out after %ld ms", call, timeout_ms);
    }
}

/* [L] The handle ref of the done record t is consumed: what its stream
 * still held goes to freed, and the stream is returned. */
static rt__stream *consume(rt__runtime *rt, rt_ref ref, rt__task *t, rt__tasks *freed)
{
    rt__table_drop(&rt->tasks, ref.id);
    t->obj.orphan = 1;
    return rt__streams_drop(rt, ref.id, freed);
}

/* [L] not held: wait up to timeout_ms for ref's object, and take its
 * record out of the table: 0 and *done, or an error.  *shared 0: the
 * record is the caller's to free.  1: tasks still take it; the caller
 * copies what it needs, then gives it back (rt__call_unhold()). */
static int take(rt__runtime *rt, rt_ref ref, long timeout_ms, rt__task **done, int *shared)
{
    pthread_mutex_lock(&rt->lock);
    rt__task *t;
    int rc = rt__wait_done(rt, ref, timeout_ms, RT__WAIT_AWAIT, "rt_get", &t);
    rt__tasks freed = {0};
    rt__stream *s = NULL;
    if (rc == 0) {
        s = consume(rt, ref, t, &freed);
        /* Tasks that take the object still need it: the caller copies. */
        *shared = t->obj.holds > 0;
        if (*shared)
            t->obj.holds++;
        else
            rt__objects_leave(rt, t);
        *done = t;
    }
    pthread_mutex_unlock(&rt->lock);
    rt__tasks_free(&freed);
    rt__stream_free(s);
    return rc;
}

/* The bytes of an object that tasks still take: a copy. */
static void *copy_result(const rt__task *t)
{
    void *copy = rt__buf_alloc(t->obj.result_len);
    if (copy && t->obj.result_len)
        memcpy(copy, t->obj.result, t->obj.result_len);
    return copy;
}

int rt__call_get(rt__runtime *rt, rt_ref ref, long timeout_ms, void **data, size_t *len)
{
    rt__task *t = NULL;
    int shared = 0;
    int rc = take(rt, ref, timeout_ms, &t, &shared);
    if (rc < 0)
        return rc;
    void *bytes = t->obj.result;
    int no_copy = data && shared && t->obj.result && !(bytes = copy_result(t));
    rc = no_copy ? rt__error(RT_ENOMEM, "rt_get: no memory for a copy of %zu bytes",
                             t->obj.result_len)
                 : rt__task_explain(t);
    if (data)
        *data = no_copy ? NULL : bytes;
    if (len)
        *len = no_copy ? 0 : t->obj.result_len;
    if (shared) {
        rt__call_unhold(rt, t);
        return rc;
    }
    if (data)
        t->obj.result = NULL; /* the caller's now */
    rt__task_free(t);
    return rc;
}

int rt__call_get_held(rt__runtime *rt, rt_ref ref, long timeout_ms, int keep,
                      rt__held_at *at)
{
    pthread_mutex_lock(&rt->lock);
    rt__task *t;
    int rc = rt__wait_done(rt, ref, timeout_ms, RT__WAIT_AWAIT | RT__WAIT_ELSEWHERE, "rt_get",
                           &t);
    rt__tasks freed = {0};
    rt__stream *s = NULL;
    int held = rc == 0 && rt__objects_elsewhere(t);
    if (held) {
        *at = (rt__held_at){t, t->call.id, t->obj.held_run, t->obj.holder, t->obj.result_len};
        t->obj.holds++; /* until the caller's rank has the bytes */
        if (!keep)
            s = consume(rt, ref, t, &freed);
    }
    pthread_mutex_unlock(&rt->lock);
    rt__tasks_free(&freed);
    rt__stream_free(s);
    return rc < 0 ? rc : held;
}

void rt__call_unhold(rt__runtime *rt, rt__task *t)
{
    pthread_mutex_lock(&rt->lock);
    int last = rt__objects_unhold(rt, t);
    pthread_mutex_unlock(&rt->lock);
    if (last)
        rt__task_free(t);
}

/* [L] Mark which handles are ready; returns how many, or RT_EBADREF. */
static long mark_ready(rt__runtime *rt, const rt_ref *refs, size_t n, unsigned char *ready)
{
    long count = 0;
    for (size_t i = 0; i < n; i++) {
        rt__task *t = rt__table_find(&rt->tasks, refs[i].id);
        if (!t)
            return rt__error(RT_EBADREF, "rt_wait: handle %zu is unknown or consumed", i);
        ready[i] = t->obj.state == RT__TASK_DONE;
        count += ready[i];
    }
    return count;
}

/* A wait for many handles finds each by its id (the one hash table):
 * a handle's index in the caller's list. */
typedef struct wanted {
    rt__idnode byid; /* first */
    size_t index;
} wanted;

#define FEW_HANDLES 16 /* a wait for fewer looks at each one each time */

/* refs hashed by id into *by_id, or NULL (few of them, or no memory):
 * then every wake-up looks at each handle.  A sort took 5 ms of 24 000
 * handles, on the CPUs their tasks ran on. */
static wanted *index_refs(const rt_ref *refs, size_t n, rt__idmap *by_id)
{
    wanted *w = n > FEW_HANDLES ? rt__malloc(n * sizeof *w) : NULL;
    if (w && rt__idmap_init(by_id) < 0) {
        rt__free(w);
        return NULL;
    }
    for (size_t i = 0; w && i < n; i++) {
        w[i] = (wanted){.byid.id = refs[i].id, .index = i};
        rt__idmap_add(by_id, &w[i].byid);
    }
    return w;
}

/* [L] Mark the handles of by_id that ended since *seen (in the runtime's
 * log of ended tasks): the cost of what ended, not of the handles waited
 * for; or all of them looked at (mark_ready()) when the log has moved on
 * past what it keeps, or there is no by_id (w NULL).  The new count, from
 * count. */
static long mark_ended(rt__runtime *rt, const rt_ref *refs, size_t n, const wanted *w,
                       const rt__idmap *by_id, unsigned char *ready, long count,
                       uint64_t *seen)
{
    if (!w || rt->nended - *seen > RT__ENDED_LOG) {
        *seen = rt->nended;
        return mark_ready(rt, refs, n, ready);
    }
    for (; *seen < rt->nended; ++*seen) {
        const wanted *hit =
            (const wanted *)rt__idmap_find(by_id, rt->ended[*seen % RT__ENDED_LOG]);
        if (hit && !ready[hit->index]) {
            ready[hit->index] = 1;
            count++;
        }
    }
    return count;
}

long rt__call_wait(rt__runtime *rt, const rt_ref *refs, size_t n, size_t num_ready,
                   long timeout_ms, unsigned char *ready)
{
    struct timespec deadline = rt__deadline_after(timeout_ms > 0 ? timeout_ms : 0);
    rt__idmap by_id = {0};
    wanted *w = index_refs(refs, n, &by_id); /* outside the lock */
    pthread_mutex_lock(&rt->lock);
    uint64_t seen = rt->nended;
    long count = rt__check_running(rt, "rt_wait");
    if (count == 0)
        count = mark_ready(rt, refs, n, ready);
    while (count >= 0 && (size_t)count < num_ready) {
        /* Each of its handles that ends is one end more: no fewer wake it. */
        if (rt__wait_ends(rt, num_ready - (size_t)count, timeout_ms, &deadline) == RT_ETIMEDOUT) {
            count = mark_ready(rt, refs, n, ready);
            break;
        }
        int rc = rt__check_running(rt, "rt_wait");
        count = rc < 0 ? rc : mark_ended(rt, refs, n, w, &by_id, ready, count, &seen);
    }
    pthread_mutex_unlock(&rt->lock);
    if (w)
        rt__idmap_free(&by_id);
    rt__free(w);
    return count;
}

/* [L] held, and let go here: queue a (rt__malloc()ed) asking `how` of
 * t, or free it when t is NULL; then wake the runtime if it must. */
static void ask_unlock(rt__runtime *rt, rt__ask *a, rt__task *t, int how, rt__task *awaited,
                       unsigned run, uint64_t lane)
{
    int wake = 0;
    if (t) {
        *a = (rt__ask){.task = t, .how = how, .awaited = awaited, .run = run, .lane = lane,
                       .may_run = lane != 0, .refs = lane ? 2 : 1};
        wake = rt__submit_ask(rt, a);
        a = NULL; /* the runtime's now */
    }
    pthread_mutex_unlock(&rt->lock);
    rt__free(a);
    if (wake)
        rt__submitted(rt, wake);
}

/* [L] What a cancel names: the application's handle (a part's: its
 * task), or a child's id: a child's handle may be gone (its parent's
 * handles end with it) while the child runs on. */
static rt__task *cancelled_task(rt__runtime *rt, uint64_t id, int child)
{
    return child ? rt__objects_running(rt, id) : maker_of(rt, rt__table_find(&rt->tasks, id));
}

/* Check that a cancel (RT_CANCEL_* flags) may be asked of ref, *task its
 * task's id, and for a recursive one mark the task before its children
 * are looked up: a child whose submission is already on its way is then
 * cancelled as it comes (rt__call_child()). */
static int cancel_mark(rt__runtime *rt, rt_ref ref, int flags, int child, uint64_t *task)
{
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, "rt_cancel");
    rt__task *t = rc == 0 ? cancelled_task(rt, ref.id, child) : NULL;
    *task = t ? t->call.id : ref.id;
    if (rc == 0 && !t)
        rc = rt__error(RT_EBADREF, "rt_cancel: unknown or consumed handle");
    else if (rc == 0 && (flags & RT_CANCEL_FORCE) && t->call.kind != RT__KIND_TASK)
        rc = rt__error(RT_EINVAL, "rt_cancel: force is for tasks; an actor's call "
                                  "ends with its actor (rt_actor_kill())");
    else if (rc == 0 && t->obj.state != RT__TASK_DONE && !(flags & RT_CANCEL_NOT_RECURSIVE)) {
        t->obj.cancelling = 1;
        t->obj.cancel_kills |= (flags & RT_CANCEL_FORCE) != 0; /* force upgrades */
    }
    pthread_mutex_unlock(&rt->lock);
    return rc;
}

/* Ask the runtime to cancel the task of id, unless it ended; c is
 * rt__malloc()ed, and the runtime's or freed here. */
static void cancel_ask(rt__runtime *rt, rt__ask *c, uint64_t task, int flags)
{
    pthread_mutex_lock(&rt->lock);
    rt__task *t = rt->state == RT__RUNNING ? rt__objects_running(rt, task) : NULL;
    int asked = t && t->obj.state != RT__TASK_DONE;
    ask_unlock(rt, c, asked ? t : NULL,
               flags & RT_CANCEL_FORCE ? RT__CANCEL_KILL : RT__CANCEL_DROP, NULL, 0, 0);
}

#define CHILDREN_AT_ONCE 64

/* The ids of task (marked) and of the tasks it submitted, and theirs, all
 * the way down, task first, each marked before its own are looked up; *n
 * of them.  NULL when it has none (the common case costs one look), or
 * without memory: then not all are found. */
static uint64_t *mark_tree(rt__runtime *rt, uint64_t task, int flags, size_t *n)
{
    uint64_t got[CHILDREN_AT_ONCE], *ids;
    size_t cap = CHILDREN_AT_ONCE;
    *n = 0;
    if (!rt__call_children(rt, task, got, 0) || !(ids = rt__malloc(cap * sizeof *ids)))
        return NULL;
    ids[(*n)++] = task;
    for (size_t i = 0; i < *n; i++) {
        size_t k = rt__call_children(rt, ids[i], got, CHILDREN_AT_ONCE);
        uint64_t *more = k > CHILDREN_AT_ONCE ? rt__malloc(k * sizeof *more) : got;
        if (!more)
            continue; /* without memory, that branch is not cancelled */
        k = more == got ? k : rt__call_children(rt, ids[i], more, k);
        for (size_t j = 0; j < k; j++) {
            uint64_t same;
            if (cancel_mark(rt, (rt_ref){more[j]}, flags, 1, &same) < 0)
                continue; /* it ended */
            if (*n == cap) {
                uint64_t *grown = rt__realloc(ids, 2 * cap * sizeof *grown);
                if (!grown)
                    break;
                ids = grown;
                cap *= 2;
            }
            ids[(*n)++] = more[j];
        }
        if (more != got)
            rt__free(more);
    }
    return ids;
}

/* The task, and unless flags say not, the tasks it submitted: all are
 * marked first, then asked, the task first. */
static int cancel_tree(rt__runtime *rt, rt_ref ref, int flags, int child)
{
    uint64_t task;
    size_t n = 0;
    rt__ask *c = rt__malloc(sizeof *c); /* outside the lock */
    if (!c)
        return rt__error(RT_ENOMEM, "rt_cancel: out of memory");
    int rc = cancel_mark(rt, ref, flags, child, &task);
    if (rc < 0) {
        rt__free(c);
        return rc;
    }
    uint64_t *ids = flags & RT_CANCEL_NOT_RECURSIVE ? NULL : mark_tree(rt, task, flags, &n);
    cancel_ask(rt, c, task, flags);
    for (size_t i = 1; i < n; i++)
        if ((c = rt__malloc(sizeof *c)))
            cancel_ask(rt, c, ids[i], flags);
    rt__free(ids);
    return rc;
}

int rt__call_cancel(rt__runtime *rt, rt_ref ref, int flags)
{
    return cancel_tree(rt, ref, flags, 0);
}

void rt__call_cancel_child(rt__runtime *rt, uint64_t task, int flags)
{
    (void)cancel_tree(rt, (rt_ref){task}, flags, 1);
}

/* [L] Whether run `run` of the task of handle `task`, whose wait ended,
 * may go on: it has its CPUs back, or the task no longer runs. */
static int may_go_on(rt__runtime *rt, uint64_t task, unsigned run)
{
    rt__task *t = rt__objects_running(rt, task);
    if (!t || t->obj.state == RT__TASK_DONE || rt->state != RT__RUNNING)
        return 1;
    if (!t->obj.going_on || t->obj.went_run != run)
        return 0;
    t->obj.going_on = 0;
    return 1;
}

int rt__call_went_on(rt__runtime *rt, uint64_t task, unsigned run, long timeout_ms)
{
    struct timespec deadline = rt__deadline_after(timeout_ms);
    pthread_mutex_lock(&rt->lock);
    int went;
    while (!(went = may_go_on(rt, task, run)) &&
           rt__wait_change(rt, timeout_ms, &deadline) == 0)
        ;
    pthread_mutex_unlock(&rt->lock);
    return went;
}

/* rt__call_lend(), and with a lane, rt__call_offer(): the ask when it
 * was made, which the caller holds then. */
static rt__ask *ask_lend(rt__runtime *rt, uint64_t task, unsigned run, int lend,
                         rt_ref awaited, uint64_t lane)
{
    rt__ask *a = rt__malloc(sizeof *a); /* outside the lock */
    if (!a)
        return NULL; /* the task keeps its CPUs while it waits */
    pthread_mutex_lock(&rt->lock);
    rt__task *t = rt->state == RT__RUNNING ? rt__objects_running(rt, task) : NULL;
    int asked = t && t->obj.state != RT__TASK_DONE && t->call.kind == RT__KIND_TASK;
    rt__task *w = asked && lend ? maker_of(rt, rt__table_find(&rt->tasks, awaited.id)) : NULL;
    ask_unlock(rt, a, asked ? t : NULL, lend ? RT__ASK_LEND : RT__ASK_GO_ON,
               w && w->obj.state != RT__TASK_DONE ? w : NULL, run, lane);
    return asked ? a : NULL; /* a pointer to compare only, without a lane */
}

void rt__call_await(rt__runtime *rt, rt_ref ref)
{
    rt__await(rt, ref);
}

int rt__call_lend(rt__runtime *rt, uint64_t task, unsigned run, int lend, rt_ref awaited)
{
    return ask_lend(rt, task, run, lend, awaited, 0) != NULL;
}

rt__ask *rt__call_offer(rt__runtime *rt, uint64_t task, unsigned run, rt_ref awaited,
                        uint64_t lane)
{
    return lane ? ask_lend(rt, task, run, 1, awaited, lane) : NULL;
}

void rt__call_hold_round(rt__runtime *rt)
{
    rt__round_hold(rt);
}

void rt__call_run_round(rt__runtime *rt)
{
    rt__round_here(rt, 1); /* the task's GET follows */
}

int rt__call_given(rt__runtime *rt, rt__ask *a, rt__given *out)
{
    pthread_mutex_lock(&rt->lock);
    while (!a->answered)
        pthread_cond_wait(&rt->answered, &rt->lock);
    rt__task *g = a->given;
    if (g)
        *out = (rt__given){g, (uint64_t)(uintptr_t)g->call.fn, g->call.id, a->given_run,
                           rt__task_arg(g), g->call.arg_len};
    int last = --a->refs == 0;
    pthread_mutex_unlock(&rt->lock);
    if (last)
        rt__free(a);
    return g != NULL;
}

int rt__call_release(rt__runtime *rt, rt_ref ref)
{
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, "rt_release");
    rt__tasks freed = {0};
    rt__stream *s = NULL;
    if (rc == 0 && !rt__table_find(&rt->tasks, ref.id))
        rc = rt__error(RT_EBADREF, "rt_release: unknown or consumed handle");
    if (rc == 0) {
        rt__task *done = rt__objects_drop_handle(rt, ref.id);
        if (done)
            rt__tasks_push(&freed, done);
        s = rt__streams_drop(rt, ref.id, &freed);
    }
    pthread_mutex_unlock(&rt->lock);
    rt__tasks_free(&freed);
    rt__stream_free(s);
    return rc;
}

/* ---- actors' names ------------------------------------------------------------------ */

static uint64_t name_key(const char *name)
{
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    return h;
}

/* [L] The live actor that has name, or NULL. */
static rt__actor *find_named(rt__runtime *rt, const char *name)
{
    for (rt__idnode *n = rt__idmap_find(&rt->named, name_key(name)); n; n = rt__idmap_next(n))
        if (strcmp(RT__OWNER(n, rt__actor, byname)->name, name) == 0)
            return RT__OWNER(n, rt__actor, byname);
    return NULL;
}

void rt__actor_unname_locked(rt__runtime *rt, rt__actor *a)
{
    if (a->named)
        rt__idmap_remove(&rt->named, &a->byname);
    a->named = 0;
}

/* [L] A named actor takes its name, or finds it taken: RT_EEXIST, or 0
 * with the live actor's handle in *existing (get_if_exists). */
static int take_name(rt__runtime *rt, rt__actor *a, const rt__request *r, uint64_t *existing)
{
    rt__actor *other = find_named(rt, a->name);
    if (other && !r->get_if_exists)
        return rt__error(RT_EEXIST, "rt_actor_create: a live actor is named %s "
                         "(rt_actor_get() finds it; get_if_exists takes it)", a->name);
    if (other) {
        *existing = other->handle;
        return 0;
    }
    a->byname.id = name_key(a->name);
    rt__idmap_add(&rt->named, &a->byname);
    a->named = 1;
    return 0;
}

int rt__call_actor_get(rt__runtime *rt, const char *name, rt_actor *out)
{
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, "rt_actor_get");
    rt__actor *a = rc == 0 ? find_named(rt, name) : NULL;
    if (a)
        out->id = a->handle;
    else if (rc == 0)
        rc = rt__error(RT_EBADREF, "rt_actor_get: no live actor is named %s", name);
    pthread_mutex_unlock(&rt->lock);
    return rc;
}

/* ---- actors ----------------------------------------------------------------------- */

/* [L] Give the actor a handle and queue its constructor; *old gets the
 * epitaph of a dead actor whose slot it took, for the caller to free.
 * A live actor's handle in *existing when one has a's name and r takes
 * it (get_if_exists): a is not started then. */
static int start_actor(rt__runtime *rt, rt__actor *a, rt__task *create, rt__request *r,
                       void **old, uint64_t *existing)
{
    int rc = rt__check_running(rt, "rt_actor_create");
    if (rc == 0 && create->call.fn)
        rc = check_code(rt, (const void *)create->call.fn, "rt_actor_create", "the constructor");
    if (rc == 0 && a->fini)
        rc = check_code(rt, (const void *)(uintptr_t)a->fini, "rt_actor_create",
                        "the destructor");
    if (rc == 0)
        rc = place_request(rt, r, create);
    if (rc == 0 && r->named)
        rc = take_name(rt, a, r, existing);
    if (rc == 0 && !*existing && rt__table_add(&rt->actors, a, &a->handle, old) < 0) {
        rt__actor_unname_locked(rt, a);
        rc = rt__error(RT_ENOMEM, "rt_actor_create: no memory for its handle");
    }
    if (rc < 0 || *existing)
        return rc;
    create->call.actor = a;
    create->call.id = a->handle; /* how its answer is matched */
    return rt__submit(rt, create);
}

int rt__call_actor_create(rt__runtime *rt, rt__actor *a, rt__task *create, rt__request *r,
                          rt_actor *out)
{
    void *old = NULL;
    uint64_t existing = 0;
    pthread_mutex_lock(&rt->lock);
    int rc = start_actor(rt, a, create, r, &old, &existing);
    if (rc >= 0)
        out->id = existing ? existing : a->handle;
    int refused = rc < 0 || existing;
    if (existing) { /* its twin runs: this one was never queued */
        pthread_mutex_unlock(&rt->lock);
        rt__task_free(create);
        rc = 1;
    } else {
        rc = rt__submit_done(rt, create, rc); /* unlocks */
    }
    if (refused)
        rt__free(a);
    rt__free(old);
    return rc;
}

/* [L] The live actor behind a handle, or an error: unknown, or dead (its
 * epitaph says why), or killed. */
static int find_live(rt__runtime *rt, rt_actor handle, const char *call, rt__actor **out)
{
    rt__actor *a = rt__table_find(&rt->actors, handle.id);
    if (!a)
        return rt__error(RT_EBADREF, "%s: unknown actor", call);
    if (a->dead)
        return rt__error(RT_EACTORDIED, "%s", ((rt__epitaph *)(void *)a)->text);
    *out = a;
    if (a->kill_requested)
        return rt__error(RT_EACTORDIED, "the actor %s was killed", a->name);
    if (a->declared_dead) /* its epitaph was written before it was declared */
        return rt__error(RT_EACTORDIED, "%s", a->epitaph ? a->epitaph : "the actor died");
    return 0;
}

int rt__call_actor_call(rt__runtime *rt, rt_actor actor, rt__task *t, const rt_arg *args,
                        const char *call, rt_ref *ref)
{
    rt__actor *a = NULL;
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, call);
    if (rc == 0)
        rc = check_code(rt, (const void *)t->call.fn, call, "the method");
    if (rc == 0)
        rc = take_objects(rt, t, args, call);
    if (rc == 0 && (rc = find_live(rt, actor, call, &a)) < 0 && args)
        rt__objects_untake_args(t);
    if (rc == 0) {
        t->call.actor = a;
        t->run.retries_left = a->task_retries;
        rc = submit_taken(rt, t, args, call, ref);
    }
    return rt__submit_done(rt, t, rc);
}

int rt__call_actor_kill(rt__runtime *rt, rt_actor actor, int restart)
{
    const char *call = restart ? "rt_actor_restart" : "rt_actor_kill";
    rt__actor *a = NULL;
    int wake = 0;
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, call);
    if (rc == 0)
        rc = find_live(rt, actor, call, &a);
    if (rc == RT_EACTORDIED && !restart)
        rc = 0; /* killing a dead actor does nothing */
    else if (rc == 0)
        wake = rt__submit_kill(rt, a, restart);
    if (rc == 0 && a && !restart)
        rt__actor_unname_locked(rt, a);
    pthread_mutex_unlock(&rt->lock);
    if (wake)
        rt__submitted(rt, wake);
    return rc;
}

/* ---- the books ---------------------------------------------------------------------- */

/* What rt_cluster_resources(), rt_available_resources() and
 * rt_unhealthy_gpus() ask of the round: a census of the books. */
typedef struct census {
    const char *call;
    int available;     /* free now, not the totals */
    int sick;          /* the unhealthy GPUs instead */
    void *list;
    size_t n;
} census;

static int take_census(rt__runtime *rt, void *ctx)
{
    census *c = ctx;
    const rt__sched *s = &rt->dispatch.sched;
    size_t each = c->sick ? sizeof(rt_gpu_health) : sizeof(rt_resource);
    c->n = c->sick ? rt__sched_sick_census(s, NULL) : rt__sched_census(s, c->available, NULL);
    c->list = rt__buf_alloc(c->n * each + 1);
    if (!c->list)
        return rt__error(RT_ENOMEM, "%s: no memory for %zu entries", c->call, c->n);
    if (c->sick)
        rt__sched_sick_census(s, c->list);
    else
        rt__sched_census(s, c->available, c->list);
    return 0;
}

int rt__call_resources(rt__runtime *rt, const char *call, int available,
                       rt_resource **out, size_t *n)
{
    census c = {call, available, 0, NULL, 0};
    int rc = rt__errand_ask(rt, call, take_census, &c);
    if (rc == 0)
        *out = c.list, *n = c.n;
    return rc;
}

int rt__call_unhealthy(rt__runtime *rt, rt_gpu_health **out, size_t *n)
{
    census c = {"rt_unhealthy_gpus", 0, 1, NULL, 0};
    int rc = rt__errand_ask(rt, c.call, take_census, &c);
    if (rc == 0)
        *out = c.list, *n = c.n;
    return rc;
}

typedef struct trace {
    char *text;
    size_t len;
} trace;

/* The timeline is the round holder's: it renders the trace, in memory;
 * the asker writes the file. */
static int render_timeline(rt__runtime *rt, void *out)
{
    trace *t = out;
    if (!rt->recording)
        return rt__error(RT_EINVAL, "rt_timeline: nothing was recorded: set "
                                    "rt_config.timeline or RTASK_TIMELINE before rt_init()");
    return rt__timeline_render(&rt->timeline, &t->text, &t->len);
}

int rt__call_timeline(rt__runtime *rt, const char *path)
{
    trace t = {NULL, 0};
    int rc = rt__errand_ask(rt, "rt_timeline", render_timeline, &t);
    if (rc == 0)
        rc = rt__timeline_save(t.text, t.len, path);
    free(t.text);
    return rc;
}

uint64_t rt__call_payload_in(rt__runtime *rt, uint64_t *messages)
{
    if (messages)
        *messages = 0;
    return rt->cluster ? rt__cluster_payload_in(rt->cluster, messages) : 0;
}

pid_t rt__call_forkserver(rt__runtime *rt)
{
    return rt->local ? rt__local_forkserver(rt->local) : 0;
}

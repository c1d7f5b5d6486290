/* remote.c - rt_remote(), rt_get(), rt_wait() and rt_release(). */
#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/process.h"
#include "runtime/request.h"
#include "runtime/runtime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AWAIT_MIN_MS 10

/* ---- submission -------------------------------------------------------- */

RT_EXPORT int rt_remote(rt_fn fn, const rt_opts *opts, const void *arg,
                        size_t arg_len, rt_ref *ref)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_remote: tasks cannot submit tasks");
    if (!fn || !ref || (!arg && arg_len))
        return rt__error(RT_EINVAL, "rt_remote: %s is NULL",
                         !fn ? "the function" : !ref ? "ref" : "arg");
    rt__request r;
    rt__task *t;
    int rc = rt__request_resolve(opts, 0, &r);
    if (rc == 0)
        rc = rt__task_new(RT__KIND_TASK, (rt__any_fn)fn, opts ? opts->name : NULL,
                          rt__request_needs(&r), arg, arg_len, &t);
    if (rc < 0)
        return rc;
    t->retries_left = r.max_retries;
    pthread_mutex_lock(&rt__rt.lock);
    rc = rt__check_running("rt_remote");
    if (rc == 0)
        rc = rt__check_code((const void *)fn, "rt_remote", "the function");
    if (rc == 0)
        rc = rt__request_place(&rt__rt.dispatch.sched, &r, t);
    if (rc == 0)
        rc = rt__submit_ref(t, ref);
    return rt__submit_done(t, rc);
}

/* ---- waiting ------------------------------------------------------------ */

/* [L] Wait for a change; returns RT_ETIMEDOUT when the deadline passed. */
static int wait_change(long timeout_ms, const struct timespec *deadline)
{
    if (timeout_ms == 0)
        return RT_ETIMEDOUT;
    rt__rt.waiters++;
    int rc = timeout_ms < 0
                 ? pthread_cond_wait(&rt__rt.changed, &rt__rt.lock)
                 : pthread_cond_timedwait(&rt__rt.changed, &rt__rt.lock, deadline);
    rt__rt.waiters--;
    if (rt__rt.state != RT__RUNNING)
        pthread_cond_broadcast(&rt__rt.changed); /* rt_shutdown() counts us out */
    return rc == ETIMEDOUT ? RT_ETIMEDOUT : 0;
}

/* The message rt_get() leaves for a failed task. */
static int explain_failure(const rt__task *t)
{
    return rt__error(t->status, "%s", t->error ? t->error : rt_strerror(t->status));
}

RT_EXPORT int rt_get(rt_ref ref, void **data, size_t *len, long timeout_ms)
{
    struct timespec deadline = rt__deadline_after(timeout_ms > 0 ? timeout_ms : 0);
    /* Waiting for the answer here is worth it only when there is time. */
    int may_await = timeout_ms < 0 || timeout_ms >= AWAIT_MIN_MS;
    pthread_mutex_lock(&rt__rt.lock);
    int rc;
    rt__task *t;
    for (;;) {
        if ((rc = rt__check_running("rt_get")) < 0)
            goto out;
        if (!(t = rt__table_find(&rt__rt.tasks, ref.id))) {
            rc = rt__error(RT_EBADREF, "rt_get: unknown or consumed handle");
            goto out;
        }
        if (t->state == RT__TASK_DONE)
            break;
        if (may_await) {
            may_await = 0;
            pthread_mutex_unlock(&rt__rt.lock);
            rt__await(ref);
            pthread_mutex_lock(&rt__rt.lock);
            continue;
        }
        if (wait_change(timeout_ms, &deadline) == RT_ETIMEDOUT) {
            rc = rt__error(RT_ETIMEDOUT, "rt_get: timed out after %ld ms", timeout_ms);
            goto out;
        }
    }
    rt__table_drop(&rt__rt.tasks, ref.id);
    pthread_mutex_unlock(&rt__rt.lock);
    rc = t->status == RT_OK ? 0 : explain_failure(t);
    if (data) {
        *data = t->result;
        t->result = NULL;
    }
    if (len)
        *len = t->result_len;
    rt__task_free(t);
    return rc;
out:
    pthread_mutex_unlock(&rt__rt.lock);
    return rc;
}

/* [L] Mark which handles are ready; returns how many, or RT_EBADREF. */
static long mark_ready(const rt_ref *refs, size_t n, unsigned char *ready)
{
    long count = 0;
    for (size_t i = 0; i < n; i++) {
        rt__task *t = rt__table_find(&rt__rt.tasks, refs[i].id);
        if (!t)
            return rt__error(RT_EBADREF, "rt_wait: handle %zu is unknown or consumed", i);
        ready[i] = t->state == RT__TASK_DONE;
        count += ready[i];
    }
    return count;
}

/* Move the ready handles to the front, keeping the order of both parts. */
static void partition(rt_ref *refs, size_t n, const unsigned char *ready,
                      rt_ref *scratch)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ready[i])
            refs[k++] = refs[i];
        else
            scratch[i - k] = refs[i];
    if (n > k)
        memcpy(refs + k, scratch, (n - k) * sizeof *refs);
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const rt_ref *)a)->id, y = ((const rt_ref *)b)->id;
    return (x > y) - (x < y);
}

/* Whether a handle is listed twice: it would count twice towards
 * num_ready.  scratch has room for n handles. */
static int has_duplicate(const rt_ref *refs, size_t n, rt_ref *scratch)
{
    if (n < 2)
        return 0;
    memcpy(scratch, refs, n * sizeof *refs);
    qsort(scratch, n, sizeof *scratch, by_id);
    for (size_t i = 1; i < n; i++)
        if (scratch[i].id == scratch[i - 1].id)
            return 1;
    return 0;
}

RT_EXPORT int rt_wait(rt_ref *refs, size_t n, size_t num_ready, long timeout_ms,
                      size_t *n_ready)
{
    if ((!refs && n) || !n_ready || num_ready > n)
        return rt__error(RT_EINVAL, "rt_wait: %s",
                         !n_ready ? "n_ready is NULL"
                         : num_ready > n ? "num_ready is larger than n"
                                         : "refs is NULL");
    unsigned char *ready = rt__malloc(n + 1);
    rt_ref *scratch = rt__malloc((n + 1) * sizeof *scratch);
    if (!ready || !scratch) {
        rt__free(ready);
        rt__free(scratch);
        return rt__error(RT_ENOMEM, "rt_wait: no memory for %zu handles", n);
    }
    if (has_duplicate(refs, n, scratch)) {
        rt__free(ready);
        rt__free(scratch);
        return rt__error(RT_EINVAL, "rt_wait: a handle is listed twice (as Ray, "
                                    "rt_wait takes each once)");
    }
    struct timespec deadline = rt__deadline_after(timeout_ms > 0 ? timeout_ms : 0);
    pthread_mutex_lock(&rt__rt.lock);
    long count;
    for (;;) {
        if ((count = rt__check_running("rt_wait")) < 0)
            break;
        if ((count = mark_ready(refs, n, ready)) < 0 || (size_t)count >= num_ready)
            break;
        if (wait_change(timeout_ms, &deadline) == RT_ETIMEDOUT) {
            count = mark_ready(refs, n, ready);
            break;
        }
    }
    pthread_mutex_unlock(&rt__rt.lock);
    if (count >= 0) {
        partition(refs, n, ready, scratch);
        *n_ready = (size_t)count;
    }
    rt__free(ready);
    rt__free(scratch);
    return count < 0 ? (int)count : 0;
}

RT_EXPORT int rt_cancel(rt_ref ref, int force)
{
    rt__cancel *c = rt__malloc(sizeof *c); /* outside the lock */
    if (!c)
        return rt__error(RT_ENOMEM, "rt_cancel: out of memory");
    pthread_mutex_lock(&rt__rt.lock);
    int rc = rt__check_running("rt_cancel"), wake = 0;
    rt__task *t = rc == 0 ? rt__table_find(&rt__rt.tasks, ref.id) : NULL;
    if (rc == 0 && !t)
        rc = rt__error(RT_EBADREF, "rt_cancel: unknown or consumed handle");
    else if (rc == 0 && force && t->kind != RT__KIND_TASK)
        rc = rt__error(RT_EINVAL, "rt_cancel: force is for tasks; an actor's call "
                                  "ends with its actor (rt_actor_kill())");
    if (rc == 0 && t->state != RT__TASK_DONE) {
        *c = (rt__cancel){.task = t, .how = force ? RT__CANCEL_KILL : RT__CANCEL_DROP};
        wake = rt__submit_cancel(c);
        c = NULL; /* the runtime's now */
    }
    pthread_mutex_unlock(&rt__rt.lock);
    rt__free(c);
    if (wake)
        rt__submitted(wake);
    return rc;
}

RT_EXPORT int rt_release(rt_ref ref)
{
    pthread_mutex_lock(&rt__rt.lock);
    int rc = rt__check_running("rt_release");
    rt__task *t = rc == 0 ? rt__table_find(&rt__rt.tasks, ref.id) : NULL;
    if (rc == 0 && !t)
        rc = rt__error(RT_EBADREF, "rt_release: unknown or consumed handle");
    rt__task *done = NULL;
    if (t) {
        rt__table_drop(&rt__rt.tasks, ref.id);
        if (t->state == RT__TASK_DONE)
            done = t; /* freed below, outside the lock */
        else
            t->orphan = 1; /* the runtime thread frees it when it finishes */
    }
    pthread_mutex_unlock(&rt__rt.lock);
    if (done)
        rt__task_free(done);
    return rc;
}

/* remote.c - rt_remote(), rt_get(), rt_wait() and rt_release(). */
#include "base/alloc.h"
#include "base/error.h"
#include "base/process.h"
#include "runtime/calls.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    return rt__call_submit(rt__runtime_here(), t, &r, "rt_remote", ref);
}

/* ---- waiting ------------------------------------------------------------ */

/* The message rt_get() leaves for a failed task. */
static int explain_failure(const rt__task *t)
{
    return rt__error(t->status, "%s", t->error ? t->error : rt_strerror(t->status));
}

RT_EXPORT int rt_get(rt_ref ref, void **data, size_t *len, long timeout_ms)
{
    rt__task *t;
    int rc = rt__call_take(rt__runtime_here(), ref, timeout_ms, &t);
    if (rc < 0)
        return rc;
    rc = t->status == RT_OK ? 0 : explain_failure(t);
    if (data) {
        *data = t->result;
        t->result = NULL;
    }
    if (len)
        *len = t->result_len;
    rt__task_free(t);
    return rc;
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
    long count = rt__call_wait(rt__runtime_here(), refs, n, num_ready, timeout_ms, ready);
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
    return rt__call_cancel(rt__runtime_here(), ref, force);
}

RT_EXPORT int rt_release(rt_ref ref)
{
    return rt__call_release(rt__runtime_here(), ref);
}

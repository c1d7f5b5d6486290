/* remote.c - rt_remote(), rt_get(), rt_wait() and rt_release(). */
#include "base/alloc.h"
#include "base/error.h"
#include "base/process.h"
#include "base/shm.h"
#include "runtime/calls.h"

#include "args.h"

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
    return rt__call_submit(rt__runtime_here(), t, &r, NULL, "rt_remote", ref);
}

int rt__check_args(const char *call, const void *fn, const rt_arg *args, size_t nargs,
                   const rt_ref *ref)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "%s: not available inside a task", call);
    if (!fn || !ref || (!args && nargs))
        return rt__error(RT_EINVAL, "%s: %s is NULL", call,
                         !fn ? "the function" : !ref ? "ref" : "args");
    if (nargs > RT_ARGS_MAX)
        return rt__error(RT_EINVAL, "%s: %zu arguments; at most RT_ARGS_MAX (%d)", call,
                         nargs, RT_ARGS_MAX);
    for (size_t i = 0; i < nargs; i++)
        if (!args[i].ref.id && !args[i].data && args[i].len)
            return rt__error(RT_EINVAL, "%s: argument %zu has %zu bytes at NULL", call, i,
                             args[i].len);
    return 0;
}

RT_EXPORT int rt_remote_args(rt_fn_args fn, const rt_opts *opts, const rt_arg *args,
                             size_t nargs, rt_ref *ref)
{
    rt__request r;
    rt__task *t;
    int rc = rt__check_args("rt_remote_args", (const void *)fn, args, nargs, ref);
    if (rc == 0)
        rc = rt__request_resolve(opts, 0, &r);
    if (rc == 0)
        rc = rt__task_new_args(RT__KIND_TASK, (rt__any_fn)fn, opts ? opts->name : NULL,
                               rt__request_needs(&r), args, nargs, &t);
    if (rc < 0)
        return rc;
    t->retries_left = r.max_retries;
    return rt__call_submit(rt__runtime_here(), t, &r, args, "rt_remote_args", ref);
}

/* ---- waiting ------------------------------------------------------------ */

/* The bytes of an object that tasks still take: a copy. */
static void *copy_result(const rt__task *t)
{
    void *copy = rt__buf_alloc(t->result_len);
    if (copy && t->result_len)
        memcpy(copy, t->result, t->result_len);
    return copy;
}

RT_EXPORT int rt_get(rt_ref ref, void **data, size_t *len, long timeout_ms)
{
    rt__runtime *rt = rt__runtime_here();
    rt__task *t;
    int shared;
    int rc = rt__call_take(rt, ref, timeout_ms, &t, &shared);
    if (rc < 0)
        return rc;
    void *bytes = t->result;
    int no_copy = data && shared && t->result && !(bytes = copy_result(t));
    rc = no_copy ? rt__error(RT_ENOMEM, "rt_get: no memory for a copy of %zu bytes",
                             t->result_len)
                 : rt__task_explain(t);
    if (data)
        *data = no_copy ? NULL : bytes;
    if (len)
        *len = no_copy ? 0 : t->result_len;
    if (shared) {
        rt__call_unhold(rt, t);
        return rc;
    }
    if (data)
        t->result = NULL;
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

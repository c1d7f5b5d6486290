/* remote.c - rt_remote(), rt_get(), rt_wait() and rt_release(). */
#include "base/alloc.h"
#include "base/error.h"
#include "base/idmap.h"
#include "base/shm.h"
#include "node/client.h"
#include "runtime/calls.h"

#include "args.h"
#include "front.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- submission -------------------------------------------------------- */

int rt__remote_task(const rt__submission *s, int nested, rt_ref *ref)
{
    int list = s->form == RT__SUBMIT_TASK_ARGS;
    const char *call = list ? "rt_remote_args" : "rt_remote";
    rt__any_fn fn = (rt__any_fn)(uintptr_t)s->fn;
    const char *name = s->opts ? s->opts->name : NULL;
    rt__request r;
    rt__task *t;
    int rc = rt__request_resolve(s->opts, 0, &r);
    if (rc == 0 && list)
        rc = rt__task_new_args(RT__KIND_TASK, fn, name, r.env, rt__request_needs(&r), s->args,
                               s->nargs, &t);
    else if (rc == 0)
        rc = rt__task_new(RT__KIND_TASK, fn, name, r.env, rt__request_needs(&r), s->args[0].data,
                          s->args[0].len, &t);
    if (rc == 0 && (rc = rt__task_add_parts(t, (unsigned)r.num_returns)) < 0)
        rt__task_free(t);
    if (rc < 0)
        return rc;
    t->call.nested = (unsigned char)nested;
    t->call.id = s->id; /* another rank's handle for it, or 0 */
    rt__runtime *rt = rt__runtime_here();
    rt__call_key_task(rt, t, s->args, s->nargs, r.nondeterministic);
    return rt__call_submit(rt, t, &r, list ? s->args : NULL, call, ref);
}

/* rt_remote() and rt_remote_args() give one handle: a task of several
 * results is submitted with their _n forms, which give one each. */
static int one_result(const char *call, const rt_opts *opts)
{
    if (opts && opts->num_returns > 1 && opts->num_returns <= RT_RETURNS_MAX)
        return rt__error(RT_EINVAL, "%s: opts.num_returns is %d: a task of several results "
                         "is submitted with %s_n(), which gives a handle for each", call,
                         opts->num_returns, call);
    return 0;
}

int rt__app_submit(const rt__submission *s, rt_ref *ref)
{
    if (s->form == RT__SUBMIT_TASK || s->form == RT__SUBMIT_TASK_ARGS)
        return rt__remote_task(s, 0, ref);
    if (s->form == RT__SUBMIT_CREATE)
        return rt__actor_create_form(s, ref);
    return rt__actor_call_form(s, ref);
}

/* rt_remote() and rt_remote_n(), named call: refs has room for
 * opts->num_returns handles. */
static int remote(const char *call, rt_fn fn, const rt_opts *opts, const void *arg,
                  size_t arg_len, rt_ref *refs)
{
    if (!fn || !refs || (!arg && arg_len))
        return rt__error(RT_EINVAL, "%s: %s is NULL", call,
                         !fn ? "the function" : !refs ? "ref" : "arg");
    int rc = rt__check_len(call, "arg_len", arg_len);
    rt_arg one = RT_ARG_BYTES(arg ? arg : "", arg_len);
    rt__submission s = {RT__SUBMIT_TASK, (uint64_t)(uintptr_t)fn, 0, opts, &one, 1, NULL, 0};
    return rc < 0 ? rc : rt__front_here()->submit(&s, refs);
}

RT_EXPORT int rt_remote(rt_fn fn, const rt_opts *opts, const void *arg,
                        size_t arg_len, rt_ref *ref)
{
    int rc = one_result("rt_remote", opts);
    return rc < 0 ? rc : remote("rt_remote", fn, opts, arg, arg_len, ref);
}

RT_EXPORT int rt_remote_n(rt_fn fn, const rt_opts *opts, const void *arg, size_t arg_len,
                          rt_ref *refs)
{
    return remote("rt_remote_n", fn, opts, arg, arg_len, refs);
}

int rt__check_args(const char *call, const void *fn, const rt_arg *args, size_t nargs,
                   const rt_ref *ref)
{
    if (!fn || !ref || (!args && nargs))
        return rt__error(RT_EINVAL, "%s: %s is NULL", call,
                         !fn ? "the function" : !ref ? "ref" : "args");
    if (nargs > RT_ARGS_MAX)
        return rt__error(RT_EINVAL, "%s: %zu arguments; at most RT_ARGS_MAX (%d)", call,
                         nargs, RT_ARGS_MAX);
    for (size_t i = 0; i < nargs; i++) {
        if (!args[i].ref.id && !args[i].data && args[i].len)
            return rt__error(RT_EINVAL, "%s: argument %zu has %zu bytes at NULL", call, i,
                             args[i].len);
        if (!args[i].ref.id && args[i].len > RT__LEN_MAX)
            return rt__error(RT_EINVAL, "%s: argument %zu's len is %zu, past any buffer's "
                             "length", call, i, args[i].len);
    }
    return 0;
}

static int remote_args(const char *call, rt_fn_args fn, const rt_opts *opts,
                       const rt_arg *args, size_t nargs, rt_ref *refs)
{
    int rc = rt__check_args(call, (const void *)fn, args, nargs, refs);
    rt__submission s = {RT__SUBMIT_TASK_ARGS, (uint64_t)(uintptr_t)fn, 0, opts, args, nargs,
                        NULL, 0};
    return rc < 0 ? rc : rt__front_here()->submit(&s, refs);
}

RT_EXPORT int rt_remote_args(rt_fn_args fn, const rt_opts *opts, const rt_arg *args,
                             size_t nargs, rt_ref *ref)
{
    int rc = one_result("rt_remote_args", opts);
    return rc < 0 ? rc : remote_args("rt_remote_args", fn, opts, args, nargs, ref);
}

RT_EXPORT int rt_remote_args_n(rt_fn_args fn, const rt_opts *opts, const rt_arg *args,
                               size_t nargs, rt_ref *refs)
{
    return remote_args("rt_remote_args_n", fn, opts, args, nargs, refs);
}

/* n records of fn in *out, one per argument: 0, or an error (nothing
 * made) when out of memory or when an argument is bad. */
static int batch_records(rt_fn fn, const rt_opts *opts, const rt__request *r,
                         const rt_value *args, size_t n, rt__task ***out)
{
    rt__task **tasks = rt__malloc(n * sizeof *tasks);
    if (!tasks)
        return rt__error(RT_ENOMEM, "rt_remote_batch: no memory for %zu records", n);
    for (size_t i = 0; i < n; i++) {
        int rc = !args[i].data && args[i].len
                     ? rt__error(RT_EINVAL, "rt_remote_batch: argument %zu has %zu bytes "
                                 "at NULL", i, args[i].len)
                 : args[i].len > RT__LEN_MAX
                     ? rt__error(RT_EINVAL, "rt_remote_batch: argument %zu's len is %zu, "
                                 "past any buffer's length", i, args[i].len)
                     : rt__task_new(RT__KIND_TASK, (rt__any_fn)fn, opts ? opts->name : NULL,
                                    r->env, rt__request_needs(r), args[i].data, args[i].len,
                                    &tasks[i]);
        if (rc < 0) {
            while (i-- > 0)
                rt__task_free(tasks[i]);
            rt__free(tasks);
            return rc;
        }
        rt_arg one = RT_ARG_BYTES(args[i].data, args[i].len);
        rt__call_key_task(rt__runtime_here(), tasks[i], &one, 1, r->nondeterministic);
    }
    *out = tasks;
    return 0;
}

/* In a task, a batch is its calls one by one (a round trip each, but
 * those that go named: node/client.c). */
int rt__task_submit_batch(rt_fn fn, const rt_opts *opts, const rt_value *args, size_t n,
                         rt_ref *refs)
{
    for (size_t i = 0; i < n; i++) {
        rt_arg one = RT_ARG_BYTES(args[i].data ? args[i].data : "", args[i].len);
        rt__submission s = {RT__SUBMIT_TASK, (uint64_t)(uintptr_t)fn, 0, opts, &one, 1, NULL, 0};
        int rc = rt__client_submit(&s, &refs[i]);
        if (rc < 0) {
            while (i-- > 0)
                (void)rt__client_cancel(refs[i], 0), (void)rt__client_release(refs[i]);
            return rc;
        }
    }
    return 0;
}

int rt__app_submit_batch(rt_fn fn, const rt_opts *opts, const rt_value *args, size_t n,
                         rt_ref *refs)
{
    rt__request r;
    rt__task **tasks = NULL;
    int rc = rt__request_resolve(opts, 0, &r);
    if (rc == 0)
        rc = batch_records(fn, opts, &r, args, n, &tasks);
    if (rc < 0)
        return rc;
    rc = rt__call_submit_batch(rt__runtime_here(), tasks, n, &r, refs);
    if (rc < 0)
        for (size_t i = 0; i < n; i++)
            rt__task_free(tasks[i]);
    rt__free(tasks);
    return rc;
}

RT_EXPORT int rt_remote_batch(rt_fn fn, const rt_opts *opts, const rt_value *args, size_t n,
                              rt_ref *refs)
{
    if (!fn || !refs || (!args && n))
        return rt__error(RT_EINVAL, "rt_remote_batch: %s is NULL",
                         !fn ? "the function" : !refs ? "refs" : "args");
    if (opts && opts->num_returns > 1)
        return rt__error(RT_EINVAL, "rt_remote_batch: opts.num_returns is %d: a batch gives "
                         "one handle per task (submit tasks of several results with "
                         "rt_remote_n())", opts->num_returns);
    return n == 0 ? 0 : rt__front_here()->submit_batch(fn, opts, args, n, refs);
}

/* ---- waiting ------------------------------------------------------------ */

int rt__app_get(rt_ref ref, void **data, size_t *len, long timeout_ms)
{
    return rt__call_get(rt__runtime_here(), ref, timeout_ms, data, len);
}

RT_EXPORT int rt_get(rt_ref ref, void **data, size_t *len, long timeout_ms)
{
    return rt__front_here()->get(ref, data, len, timeout_ms);
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

/* Whether a handle is listed twice (1; 0 if not, -1 without memory): it
 * would count twice towards num_ready.  nodes has room for n (hashed by
 * id: a sort of 24 000 handles took 5 ms). */
static int has_duplicate(const rt_ref *refs, size_t n, rt__idnode *nodes)
{
    rt__idmap seen;
    if (n < 2)
        return 0;
    if (rt__idmap_init(&seen) < 0)
        return -1;
    int twice = 0;
    for (size_t i = 0; i < n && !twice; i++) {
        twice = rt__idmap_find(&seen, refs[i].id) != NULL;
        nodes[i].id = refs[i].id;
        rt__idmap_add(&seen, &nodes[i]);
    }
    rt__idmap_free(&seen);
    return twice;
}

/* Which of refs are ready (ready[i]) once num_ready are or the time is
 * up: their count, or an error named call's. */
static long wait_ready(const char *call, const rt_ref *refs, size_t n, size_t num_ready,
                       long timeout_ms, size_t *n_ready, unsigned char **ready)
{
    if ((!refs && n) || !n_ready || num_ready > n)
        return rt__error(RT_EINVAL, "%s: %s", call,
                         !n_ready ? "n_ready is NULL"
                         : num_ready > n ? "num_ready is larger than n"
                                         : "refs is NULL");
    if (n > RT__LEN_MAX / sizeof(rt__idnode))
        return rt__error(RT_EINVAL, "%s: n is %zu, more handles than memory holds", call, n);
    *ready = rt__malloc(n + 1);
    rt__idnode *nodes = rt__malloc((n + 1) * sizeof *nodes);
    int twice = *ready && nodes ? has_duplicate(refs, n, nodes) : -1;
    long count = twice < 0 ? rt__error(RT_ENOMEM, "%s: no memory for %zu handles", call, n)
                 : twice ? rt__error(RT_EINVAL, "%s: a handle is listed twice (as Ray, it "
                                     "takes each once)", call)
                         : 0;
    rt__free(nodes);
    if (count == 0)
        count = rt__front_here()->wait(refs, n, num_ready, timeout_ms, *ready);
    if (count < 0) {
        rt__free(*ready);
        *ready = NULL;
    }
    return count;
}

RT_EXPORT int rt_wait(rt_ref *refs, size_t n, size_t num_ready, long timeout_ms,
                      size_t *n_ready)
{
    unsigned char *ready;
    long count = wait_ready("rt_wait", refs, n, num_ready, timeout_ms, n_ready, &ready);
    if (count < 0)
        return (int)count;
    rt_ref *scratch = rt__malloc((n + 1) * sizeof *scratch);
    if (!scratch) {
        rt__free(ready);
        return rt__error(RT_ENOMEM, "rt_wait: no memory for %zu handles", n);
    }
    partition(refs, n, ready, scratch);
    *n_ready = (size_t)count;
    rt__free(ready);
    rt__free(scratch);
    return 0;
}

RT_EXPORT int rt_wait_indices(const rt_ref *refs, size_t n, size_t num_ready,
                              long timeout_ms, size_t *indices, size_t *n_ready)
{
    if (!indices && n)
        return rt__error(RT_EINVAL, "rt_wait_indices: indices is NULL");
    unsigned char *ready;
    long count = wait_ready("rt_wait_indices", refs, n, num_ready, timeout_ms, n_ready,
                            &ready);
    if (count < 0)
        return (int)count;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ready[i])
            indices[k++] = i;
    *n_ready = k;
    rt__free(ready);
    return 0;
}

long rt__app_wait(const rt_ref *refs, size_t n, size_t num_ready, long timeout_ms,
                  unsigned char *ready)
{
    return rt__call_wait(rt__runtime_here(), refs, n, num_ready, timeout_ms, ready);
}

int rt__app_cancel(rt_ref ref, int force)
{
    return rt__call_cancel(rt__runtime_here(), ref, force);
}

int rt__app_release(rt_ref ref)
{
    return rt__call_release(rt__runtime_here(), ref);
}

RT_EXPORT int rt_cancel(rt_ref ref, int force)
{
    if (force & ~(RT_CANCEL_FORCE | RT_CANCEL_NOT_RECURSIVE))
        return rt__error(RT_EINVAL, "rt_cancel: force is 0, or RT_CANCEL_FORCE and "
                         "RT_CANCEL_NOT_RECURSIVE or'ed; %d is invalid", force);
    return rt__front_here()->cancel(ref, force);
}

RT_EXPORT int rt_release(rt_ref ref)
{
    return rt__front_here()->release(ref);
}

/* ---- notices for an event loop -------------------------------------------- */

static int notices_here(const char *call)
{
    return rt__front_here()->application_only(call, "notices are the application's");
}

RT_EXPORT int rt_notify_fd(int *fd)
{
    int rc = notices_here("rt_notify_fd");
    if (rc < 0)
        return rc;
    if (!fd)
        return rt__error(RT_EINVAL, "rt_notify_fd: fd is NULL");
    return rt__call_notify_fd(rt__runtime_here(), fd);
}

RT_EXPORT int rt_notify(rt_ref ref, uint64_t tag)
{
    int rc = notices_here("rt_notify");
    return rc < 0 ? rc : rt__call_notify(rt__runtime_here(), ref, tag);
}

RT_EXPORT int rt_ready(rt_notice *out, size_t max, size_t *n)
{
    int rc = notices_here("rt_ready");
    if (rc < 0)
        return rc;
    if ((!out && max) || !n)
        return rt__error(RT_EINVAL, "rt_ready: %s is NULL", !n ? "n" : "out");
    return rt__call_ready(rt__runtime_here(), out, max, n);
}

/* ---- streams ---------------------------------------------------------------- */

RT_EXPORT int rt_yield(const void *data, size_t len)
{
    if (!data && len)
        return rt__error(RT_EINVAL, "rt_yield: data is NULL");
    if (rt__check_len("rt_yield", "len", len) < 0)
        return RT_EINVAL;
    return rt__front_here()->yield(data ? data : "", len);
}

int rt__app_stream_next(rt_ref ref, rt_ref *item, long timeout_ms)
{
    return rt__call_stream_next(rt__runtime_here(), ref, item, timeout_ms);
}

RT_EXPORT int rt_stream_next(rt_ref ref, rt_ref *item, long timeout_ms)
{
    if (!item)
        return rt__error(RT_EINVAL, "rt_stream_next: item is NULL");
    return rt__front_here()->stream_next(ref, item, timeout_ms);
}

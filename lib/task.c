/* task.c - rt_remote(), rt_get(), rt_wait(), rt_release() and the table. */
#include "task.h"

#include "actor.h"
#include "error.h"
#include "instance.h"
#include "runtime.h"
#include "shm.h"
#include "worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MAX_RETRIES 3 /* as Ray */
#define NAME_MAX_BYTES 200

/* ---- the handle table ------------------------------------------------ */

static uint32_t ref_index(rt_ref ref)
{
    return (uint32_t)(ref.id & 0xffffffffu) - 1;
}

int rt__table_add(rt__table *t, rt__task *task)
{
    uint32_t i;
    if (t->free_head) {
        i = t->free_head - 1;
        t->free_head = t->slot[i].next_free;
    } else {
        if (t->used == t->cap) {
            uint32_t cap = t->cap ? t->cap * 2 : 1024;
            if (cap <= t->cap) /* 2^32 live handles: the table is full */
                return RT_ENOMEM;
            rt__slot *s = realloc(t->slot, (size_t)cap * sizeof *s);
            if (!s)
                return RT_ENOMEM;
            t->slot = s;
            t->cap = cap;
        }
        i = t->used++;
        t->slot[i].gen = 1;
    }
    t->slot[i].task = task;
    task->id = (uint64_t)t->slot[i].gen << 32 | (uint64_t)(i + 1);
    return 0;
}

rt__task *rt__table_find(const rt__table *t, rt_ref ref)
{
    uint32_t i = ref_index(ref);
    if (i >= t->used || !t->slot[i].task || t->slot[i].gen != ref.id >> 32)
        return NULL;
    return t->slot[i].task;
}

void rt__table_drop(rt__table *t, rt_ref ref)
{
    uint32_t i = ref_index(ref);
    t->slot[i].task = NULL;
    t->slot[i].gen++;
    t->slot[i].next_free = t->free_head;
    t->free_head = i + 1;
}

void rt__table_free(rt__table *t)
{
    for (uint32_t i = 0; i < t->used; i++)
        if (t->slot[i].task)
            rt__task_free(t->slot[i].task);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

void rt__task_free(rt__task *task)
{
    if (task->arg_fd >= 0)
        close(task->arg_fd);
    rt_free(task->result);
    free(task);
}

int rt__task_finish(rt__task *task, int status)
{
    task->state = RT__TASK_DONE;
    task->status = status;
    if (task->orphan) {
        rt__task_free(task);
        return 0;
    }
    return 1;
}

/* ---- options ----------------------------------------------------------- */

RT_EXPORT void rt_opts_init(rt_opts *opts)
{
    rt_opts init = RT_OPTS_INIT;
    *opts = init;
}

/* A count field: RT_DEFAULT, or 0 in a struct that was only zeroed, takes
 * the default; other negatives are refused. */
static int resolve_count(int v, int zeroed, int dflt, const char *what, int *out)
{
    if (v == RT_DEFAULT || (zeroed && v == 0)) {
        *out = dflt;
        return 0;
    }
    if (v < 0)
        return rt__error(RT_EINVAL, "%s must be RT_DEFAULT or >= 0; %d is invalid",
                         what, v);
    *out = v;
    return 0;
}

/* A GPU amount is a fraction of one GPU or a whole number of them. */
static int resolve_gpus(double gpus, rt__amount *out)
{
    int rc = rt__amount_parse(gpus, "num_gpus", out);
    if (rc == 0 && *out > RT__UNIT && *out % RT__UNIT)
        rc = rt__error(RT_EINVAL, "GPU quantities above 1 must be whole numbers; "
                                  "%g is invalid", gpus);
    return rc;
}

/* Custom resources, neuron cores (whole, never with GPUs) and the
 * accelerator type, which is a custom resource too. */
static int resolve_items(const rt_opts *o, rt__request *r)
{
    int rc = rt__items_parse(o->resources, "resources", r->items, &r->nitems);
    if (rc == 0)
        rc = rt__items_whole(r->items, r->nitems, RT__NEURON, "resources");
    int neuron = rt__items_find(r->items, r->nitems, RT__NEURON);
    if (rc == 0 && neuron >= 0 && r->items[neuron].amount > 0 && r->res.gpu > 0)
        rc = rt__error(RT_EINVAL, "a request cannot have both GPUs and "
                                  RT__NEURON "; ask for one kind of accelerator");
    if (rc == 0 && o->accelerator_type) {
        char name[RT__NAME_LEN + 32];
        snprintf(name, sizeof name, RT__ACCEL_PREFIX "%s", o->accelerator_type);
        rc = *o->accelerator_type
                 ? rt__items_add(r->items, &r->nitems, name, RT__ACCEL_AMOUNT,
                                 "accelerator_type")
                 : rt__error(RT_EINVAL, "accelerator_type is empty; use NULL for any");
    }
    return rc;
}

/* Tasks hold 1 CPU by default and actors none, as in Ray: an actor that
 * mostly waits for calls should not keep a CPU from tasks. */
static int resolve_cpus(const rt_opts *o, int zeroed, int actor, rt__amount *out)
{
    double cpus = o->num_cpus;
    if (cpus == RT_DEFAULT || (zeroed && cpus == 0))
        cpus = actor ? 0 : 1;
    return rt__amount_parse(cpus, "num_cpus", out);
}

int rt__request_resolve(const rt_opts *o, int actor, rt__request *r)
{
    rt_opts dflt = RT_OPTS_INIT;
    if (!o)
        o = &dflt;
    int zeroed = o->init_magic_ != RT_OPTS_MAGIC_;
    memset(&r->res, 0, sizeof r->res);
    int rc = resolve_cpus(o, zeroed, actor, &r->res.cpu);
    if (rc == 0)
        rc = resolve_gpus(o->num_gpus, &r->res.gpu);
    /* GPU tasks get a fresh worker each, so GPU memory a task leaks dies
     * with its process.  Actors have a process of their own anyway. */
    if (rc == 0)
        rc = resolve_count(o->max_calls, zeroed, r->res.gpu > 0 ? 1 : 0,
                           "max_calls", &r->max_calls);
    if (rc == 0)
        rc = resolve_count(o->max_retries, zeroed, DEFAULT_MAX_RETRIES,
                           "max_retries", &r->max_retries);
    if (rc == 0)
        rc = resolve_count(o->max_restarts, zeroed, 0, "max_restarts",
                           &r->max_restarts);
    if (rc == 0)
        rc = resolve_items(o, r);
    if (rc == 0 && o->name && strlen(o->name) > NAME_MAX_BYTES)
        rc = rt__error(RT_EINVAL, "name is longer than %d bytes", NAME_MAX_BYTES);
    if (actor) {
        r->max_calls = 0;
        r->max_retries = 0;
    }
    return rc;
}

int rt__request_resources(rt__request *r)
{
    rt__sched *s = &rt__rt.sched;
    int rc = rt__res_request(&s->names, r->items, r->nitems, &r->res);
    return rc == 0 ? rt__res_feasible(&s->total, &r->res, &s->names) : rc;
}

/* ---- submission -------------------------------------------------------- */

int rt__task_new(rt__task_kind kind, rt__any_fn fn, const char *name,
                 const void *arg, size_t arg_len, rt__task **out)
{
    int large = arg_len >= RT__SHM_MIN;
    size_t name_len = name ? strlen(name) + 1 : 0;
    size_t inline_len = large ? 0 : arg_len;
    rt__task *t = malloc(sizeof *t + inline_len + name_len);
    if (!t)
        return rt__error(RT_ENOMEM, "no memory for the task");
    memset(t, 0, sizeof *t);
    t->kind = (unsigned char)kind;
    t->fn = fn;
    t->arg_fd = -1;
    t->arg_len = arg_len;
    if (large) {
        void *dst;
        t->arg_fd = rt__shm_create(arg_len, &dst);
        if (t->arg_fd < 0) {
            free(t);
            return rt__syserror("shared memory for the argument");
        }
        memcpy(dst, arg, arg_len);
        rt__shm_unmap(dst, arg_len);
    } else if (arg_len) {
        memcpy(t->tail, arg, arg_len);
    }
    if (name) {
        t->name = t->tail + inline_len;
        memcpy(t->name, name, name_len);
    }
    *out = t;
    return 0;
}

int rt__task_enqueue(rt__task *t)
{
    t->seq = rt__rt.sched.next_seq++;
    t->next = NULL;
    if (rt__rt.in_tail)
        rt__rt.in_tail->next = t;
    else
        rt__rt.in_head = t;
    rt__rt.in_tail = t;
    return rt__need_wake();
}

int rt__task_submit(rt__task *t, rt_ref *ref)
{
    if (rt__table_add(&rt__rt.table, t) < 0)
        return rt__error(RT_ENOMEM, "no memory for the handle");
    ref->id = t->id;
    return rt__task_enqueue(t);
}

RT_EXPORT int rt_remote(rt_fn fn, const rt_opts *opts, const void *arg,
                        size_t arg_len, rt_ref *ref)
{
    if (rt__in_worker)
        return rt__error(RT_EINWORKER, "rt_remote: tasks cannot submit tasks");
    if (!fn || !ref || (!arg && arg_len))
        return rt__error(RT_EINVAL, "rt_remote: %s is NULL",
                         !fn ? "the function" : !ref ? "ref" : "arg");
    rt__request r;
    rt__task *t;
    int rc = rt__request_resolve(opts, 0, &r);
    if (rc == 0)
        rc = rt__task_new(RT__KIND_TASK, (rt__any_fn)fn, opts ? opts->name : NULL,
                          arg, arg_len, &t);
    if (rc < 0)
        return rc;
    t->retries_left = r.max_retries;
    pthread_mutex_lock(&rt__rt.lock);
    rc = rt__check_running("rt_remote");
    if (rc == 0)
        rc = rt__request_resources(&r);
    if (rc == 0 && !(t->cls = rt__sched_class(&rt__rt.sched, &r.res, r.max_calls)))
        rc = rt__error(RT_ENOMEM, "rt_remote: no memory for a scheduling class");
    int wake = rc == 0 ? rt__task_submit(t, ref) : 0;
    pthread_mutex_unlock(&rt__rt.lock);
    if (wake < 0 || rc < 0) {
        rt__task_free(t);
        return rc < 0 ? rc : wake;
    }
    if (wake)
        rt__wake();
    return 0;
}

/* ---- waiting ------------------------------------------------------------ */

static struct timespec deadline_after(long timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

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
    int ws = t->wait_status;
    switch (t->status) {
    case RT_ETASK:
        return rt__error(RT_ETASK, "the task returned %d", t->task_status);
    case RT_ESYS:
        return rt__error(RT_ESYS, "the worker could not run the task: %s",
                         strerror(t->sys_errno));
    case RT_EWORKERDIED:
        if (t->sys_errno)
            return rt__error(RT_EWORKERDIED, "no worker could be started: %s",
                             strerror(t->sys_errno));
        if (t->lost)
            return rt__error(RT_EWORKERDIED, "the worker (pid %d) lost its connection "
                             "to the runtime (did the task close its descriptors?)",
                             t->worker_pid);
        if (WIFSIGNALED(ws))
            return rt__error(RT_EWORKERDIED,
                             "the worker (pid %d) was killed by signal %d (%s)",
                             t->worker_pid, WTERMSIG(ws), strsignal(WTERMSIG(ws)));
        return rt__error(RT_EWORKERDIED, "the worker (pid %d) exited with status %d",
                         t->worker_pid, WEXITSTATUS(ws));
    case RT_EACTORDIED:
        return rt__actor_death_error(t->death, t->name, t->worker_pid, ws,
                                     t->task_status);
    default:
        return rt__error(t->status, "%s", rt_strerror(t->status));
    }
}

RT_EXPORT int rt_get(rt_ref ref, void **data, size_t *len, long timeout_ms)
{
    struct timespec deadline = deadline_after(timeout_ms > 0 ? timeout_ms : 0);
    pthread_mutex_lock(&rt__rt.lock);
    int rc;
    rt__task *t;
    for (;;) {
        if ((rc = rt__check_running("rt_get")) < 0)
            goto out;
        if (!(t = rt__table_find(&rt__rt.table, ref))) {
            rc = rt__error(RT_EBADREF, "rt_get: unknown or consumed handle");
            goto out;
        }
        if (t->state == RT__TASK_DONE)
            break;
        if (wait_change(timeout_ms, &deadline) == RT_ETIMEDOUT) {
            rc = rt__error(RT_ETIMEDOUT, "rt_get: timed out after %ld ms", timeout_ms);
            goto out;
        }
    }
    rt__table_drop(&rt__rt.table, ref);
    /* Under the lock: a dead actor's name lives until rt_shutdown(). */
    rc = t->status == RT_OK ? 0 : explain_failure(t);
    pthread_mutex_unlock(&rt__rt.lock);
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
        rt__task *t = rt__table_find(&rt__rt.table, refs[i]);
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

RT_EXPORT int rt_wait(rt_ref *refs, size_t n, size_t num_ready, long timeout_ms,
                      size_t *n_ready)
{
    if ((!refs && n) || !n_ready || num_ready > n)
        return rt__error(RT_EINVAL, "rt_wait: %s",
                         !n_ready ? "n_ready is NULL"
                         : num_ready > n ? "num_ready is larger than n"
                                         : "refs is NULL");
    unsigned char *ready = malloc(n + 1);
    rt_ref *scratch = malloc((n + 1) * sizeof *scratch);
    if (!ready || !scratch) {
        free(ready);
        free(scratch);
        return rt__error(RT_ENOMEM, "rt_wait: no memory for %zu handles", n);
    }
    struct timespec deadline = deadline_after(timeout_ms > 0 ? timeout_ms : 0);
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
    free(ready);
    free(scratch);
    return count < 0 ? (int)count : 0;
}

RT_EXPORT int rt_release(rt_ref ref)
{
    pthread_mutex_lock(&rt__rt.lock);
    int rc = rt__check_running("rt_release");
    rt__task *t = rc == 0 ? rt__table_find(&rt__rt.table, ref) : NULL;
    if (rc == 0 && !t)
        rc = rt__error(RT_EBADREF, "rt_release: unknown or consumed handle");
    if (t) {
        rt__table_drop(&rt__rt.table, ref);
        if (t->state == RT__TASK_DONE)
            rt__task_free(t);
        else
            t->orphan = 1; /* the runtime thread frees it when it finishes */
    }
    pthread_mutex_unlock(&rt__rt.lock);
    return rc;
}

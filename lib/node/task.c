/* task.c - task records and their queue. */
#include "task.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/shm.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void rt__tasks_push(rt__tasks *q, rt__task *t)
{
    t->next = NULL;
    if (q->tail)
        q->tail->next = t;
    else
        q->head = t;
    q->tail = t;
    q->count++;
}

void rt__tasks_push_front(rt__tasks *q, rt__task *t)
{
    t->next = q->head;
    q->head = t;
    if (!q->tail)
        q->tail = t;
    q->count++;
}

void rt__tasks_insert_before(rt__tasks *q, rt__task *t, const rt__task *before)
{
    rt__task **at = &q->head;
    while (*at && *at != before)
        at = &(*at)->next;
    t->next = *at;
    *at = t;
    if (!t->next)
        q->tail = t;
    q->count++;
}

rt__task *rt__tasks_pop(rt__tasks *q)
{
    rt__task *t = q->head;
    if (!t)
        return NULL;
    q->head = t->next;
    if (!q->head)
        q->tail = NULL;
    q->count--;
    t->next = NULL;
    return t;
}

void rt__tasks_append(rt__tasks *q, rt__tasks *from)
{
    if (!from->head)
        return;
    if (q->tail)
        q->tail->next = from->head;
    else
        q->head = from->head;
    q->tail = from->tail;
    q->count += from->count;
    *from = (rt__tasks){0};
}

void rt__tasks_split_tail(rt__tasks *q, size_t n, rt__tasks *tail)
{
    n = n < q->count ? n : q->count;
    if (n == 0)
        return;
    size_t keep = q->count - n;
    rt__task *last_kept = NULL, *first = q->head;
    for (size_t i = 0; i < keep; i++) {
        last_kept = first;
        first = first->next;
    }
    *tail = (rt__tasks){first, q->tail, n};
    q->tail = last_kept;
    if (last_kept)
        last_kept->next = NULL;
    else
        q->head = NULL;
    q->count = keep;
}

/* Bytes copied from ctx, or read from the descriptor ctx points at. */
static int copy_from(void *dst, size_t len, const void *ctx)
{
    if (len)
        memcpy(dst, ctx, len);
    return 0;
}

int rt__task_read_fd(void *dst, size_t len, const void *ctx)
{
    int fd = *(const int *)ctx;
    for (char *p = dst; len > 0;) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Bytes go in a memfd (*fd) when large, so that they cross to the worker
 * without a copy; the record keeps the memfd for retries.  Small ones are
 * put at inline_at (*fd -1).  fill(dst, len, ctx) writes them.  0 or an
 * error. */
static int store_bytes_with(size_t arg_len, rt__task_fill *fill, const void *ctx,
                            char *inline_at, int *fd)
{
    *fd = -1;
    if (arg_len < RT__SHM_MIN)
        return fill(inline_at, arg_len, ctx) < 0 ? rt__syserror("reading an object") : 0;
    void *dst;
    if ((*fd = rt__shm_create(arg_len, &dst)) < 0)
        return rt__syserror("shared memory for the argument");
    int filled = fill(dst, arg_len, ctx);
    rt__shm_done(dst, arg_len);
    if (filled < 0) {
        close(*fd);
        *fd = -1;
        return rt__syserror("reading an object");
    }
    if (rt__shm_seal(*fd) < 0) {
        close(*fd);
        *fd = -1;
        return rt__syserror("sealing the argument's shared memory");
    }
    return 0;
}

static int store_bytes(const void *arg, size_t arg_len, char *inline_at, int *fd)
{
    return store_bytes_with(arg_len, copy_from, arg, inline_at, fd);
}

/* Bytes of the record's tail that a copied argument takes. */
static size_t inline_room(size_t len)
{
    return len < RT__SHM_MIN ? (len + 15) & ~(size_t)15 : 0;
}

/* A record with room for nneeds needs, nargs argument entries, inline
 * bytes, and its label: the name, then the task's variables (env_vars),
 * copied; the rest zero.  A record with variables and no name has the
 * name "" (rt__task_env()). */
static rt__task *record_new(rt__task_kind kind, rt__any_fn fn, const char *name,
                            const char *env, int nneeds, size_t nargs, size_t inline_len)
{
    size_t head = (size_t)nneeds * sizeof(rt__need) + nargs * sizeof(rt__arg);
    size_t name_len = name ? strlen(name) + 1 : env ? 1 : 0;
    size_t env_len = env ? strlen(env) + 1 : 0;
    rt__task *t = rt__malloc(sizeof *t + head + inline_len + name_len + env_len);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->call.kind = (unsigned char)kind;
    t->call.fn = fn;
    t->call.arg_fd = -1;
    t->call.nneeds = (unsigned char)nneeds;
    if (name_len) {
        if (!rt__task_more(t)) {
            rt__free(t);
            return NULL;
        }
        t->call.more->name = t->tail + head + inline_len;
        memcpy(t->call.more->name, name ? name : "", name_len);
    }
    if (env) {
        t->call.has_env = 1;
        memcpy(t->call.more->name + name_len, env, env_len);
    }
    return t;
}

/* The record's size is the memory of a queued task (make bench's row 5:
 * 200 MB for a million): 168 bytes are 176 with malloc's header. */
_Static_assert(sizeof(rt__task) <= 168, "the task record grew: move what few records "
               "use to rt__more");

rt__more *rt__task_more(rt__task *t)
{
    if (!t->call.more)
        t->call.more = rt__calloc(1, sizeof *t->call.more);
    return t->call.more;
}

int rt__task_new(rt__task_kind kind, rt__any_fn fn, const char *name, const char *env,
                 int nneeds, const void *arg, size_t arg_len, rt__task **out)
{
    rt__task *t = record_new(kind, fn, name, env, nneeds, 0, inline_room(arg_len));
    if (!t)
        return rt__error(RT_ENOMEM, "no memory for the task");
    t->call.arg_len = arg_len;
    int rc = store_bytes(arg, arg_len, t->tail + nneeds * sizeof(rt__need), &t->call.arg_fd);
    if (rc < 0) {
        rt__task_free(t); /* its rt__more too, when it has a name */
        return rc;
    }
    *out = t;
    return 0;
}

int rt__task_new_args(rt__task_kind kind, rt__any_fn fn, const char *name, const char *env,
                      int nneeds, const rt_arg *args, size_t nargs, rt__task **out)
{
    size_t inline_len = 0;
    for (size_t i = 0; i < nargs; i++)
        inline_len += args[i].ref.id ? 0 : inline_room(args[i].len);
    rt__task *t = record_new(kind, fn, name, env, nneeds, nargs, inline_len);
    if (!t)
        return rt__error(RT_ENOMEM, "no memory for the task");
    t->call.args_form = RT__ARGS_LIST;
    t->call.nargs = (uint32_t)nargs;
    rt__arg *list = rt__task_args(t);
    size_t at = (size_t)((char *)(list + nargs) - t->tail);
    int rc = 0;
    for (size_t i = 0; i < nargs; i++)
        list[i] = (rt__arg){.fd = -1};
    for (size_t i = 0; i < nargs && rc == 0; i++) {
        rt__arg *a = &list[i];
        if (args[i].ref.id)
            continue;
        int fd;
        a->len = args[i].len;
        a->at = (uint32_t)at;
        rc = store_bytes(args[i].data, args[i].len, t->tail + at, &fd);
        a->fd = fd;
        at += inline_room(args[i].len);
    }
    if (rc < 0) {
        rt__task_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

const void *rt__task_arg(const rt__task *t)
{
    return t->call.arg_fd >= 0 || t->call.args_form == RT__ARGS_LIST
               ? NULL : t->tail + t->call.nneeds * sizeof(rt__need);
}

void *rt__task_object_fill(size_t len, rt__task_fill *fill, const void *ctx)
{
    void *bytes = NULL;
    int fd;
    if (len < RT__SHM_MIN) {
        if ((bytes = rt__buf_alloc(len)) && fill(bytes, len, ctx) < 0) {
            rt__buf_free(bytes);
            bytes = NULL;
        }
    } else if (store_bytes_with(len, fill, ctx, NULL, &fd) == 0 &&
               !(bytes = rt__shm_open(fd, len, RT__SHM_BUFFER))) {
        close(fd); /* the buffer owns fd: what rt_get() hands out, as a large result's */
    }
    return bytes;
}

void *rt__task_object_bytes(const void *data, size_t len)
{
    return rt__task_object_fill(len, copy_from, data);
}

/* o's result: len bytes copied (rt__task_object_bytes()).  0 or an
 * error named call's. */
static int set_bytes(rt__task *o, const void *data, size_t len, const char *call)
{
    o->obj.result_len = len;
    if ((o->obj.result = rt__task_object_bytes(data, len)))
        return 0;
    return rt__error(RT_ENOMEM, "%s: no memory for %zu bytes", call, len);
}

int rt__task_new_object(const void *data, size_t len, rt__task **out)
{
    rt__task *o = record_new(RT__KIND_TASK, NULL, NULL, NULL, 0, 0, 0);
    if (!o)
        return rt__error(RT_ENOMEM, "rt_put: no memory for the object");
    o->run.ended = 1;
    int rc = set_bytes(o, data, len, "rt_put");
    if (rc < 0) {
        rt__task_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

/* ---- several results ------------------------------------------------------------- */

int rt__task_add_parts(rt__task *t, unsigned n)
{
    if (n > 1 && !rt__task_more(t))
        return rt__error(RT_ENOMEM, "no memory for the task's %u results", n);
    for (unsigned i = 1; i < n; i++) {
        rt__task *p = record_new(RT__KIND_TASK, NULL, NULL, NULL, 0, 0, 0);
        if (!p || !rt__task_more(p)) {
            if (p)
                rt__task_free(p);
            rt__task_free_parts(t);
            return rt__error(RT_ENOMEM, "no memory for the task's %u results", n);
        }
        p->next = t->call.more->parts; /* made last to first, linked first to last */
        t->call.more->parts = p;
    }
    return 0;
}

/* Whether o's bytes reach the caller: it succeeded, or its function
 * failed (RT_ETASK), not the runtime. */
static int keeps_bytes(const rt__task *o)
{
    return o->obj.status == RT_OK || o->obj.status == RT_ETASK;
}

static void drop_bytes(rt__task *o)
{
    rt__buf_free(o->obj.result);
    o->obj.result = NULL;
    o->obj.result_len = 0;
}

/* The first of t's parts, unlinked. */
static rt__task *next_part(rt__task *t)
{
    rt__task *p = rt__task_parts(t);
    if (p) {
        t->call.more->parts = p->next;
        p->next = NULL;
    }
    return p;
}

/* t's packed result split: each part gets its own (copied), t its first;
 * or t fails, without bytes (its status and message are the caller's to
 * spread). */
static void split(rt__task *t)
{
    rt_value v[RT_RETURNS_MAX];
    size_t n = 0, nparts = 1;
    for (const rt__task *p = rt__task_parts(t); p; p = p->next)
        nparts++;
    if (rt__parts_read(t->obj.result, t->obj.result_len, v, &n) < 0)
        rt__task_fail(t, RT_ESYS, "the task's results came malformed");
    else if (n > nparts)
        rt__task_fail(t, RT_EINVAL, "the task set result %zu, past its num_returns (%zu)",
                      n - 1, nparts);
    if (!keeps_bytes(t)) {
        drop_bytes(t);
        return;
    }
    size_t i = 1;
    for (rt__task *p = rt__task_parts(t); p && i < n; p = p->next, i++)
        if (set_bytes(p, v[i].data, v[i].len, "a task's results") < 0)
            rt__task_fail(p, RT_ENOMEM, "no memory for the task's result %zu", i);
    void *packed = t->obj.result;
    t->obj.result = NULL;
    if (set_bytes(t, v[0].data, v[0].len, "a task's results") < 0)
        rt__task_fail(t, RT_ENOMEM, "no memory for the task's first result");
    rt__buf_free(packed);
}

void rt__task_end_parts(rt__task *t, rt__tasks *out)
{
    if (t->run.packed && keeps_bytes(t) && t->obj.result)
        split(t);
    t->run.packed = 0;
    for (rt__task *p; (p = next_part(t));) {
        p->obj.task_status = t->obj.task_status;
        if (t->obj.status != RT_OK && p->obj.status == RT_OK) /* not its own failure */
            rt__task_fail(p, t->obj.status, "%s", t->obj.error ? t->obj.error : rt__strerror(t->obj.status));
        if (!keeps_bytes(p))
            drop_bytes(p);
        rt__tasks_push(out, p);
    }
}

void rt__task_arg_msgs(const rt__task *t, rt__arg_msg *out)
{
    const rt__arg *list = rt__task_args(t);
    for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
        const rt__arg *a = &list[i];
        const rt__task *o = a->object;
        out[i] = o && !o->run.ended ? (rt__arg_msg){.fd = -1, .board = 1, .seq = o->run.board_seq}
                 : o   ? (rt__arg_msg){.data = o->obj.result, .len = o->obj.result_len,
                                       .fd = rt__shm_fd(o->obj.result)}
                 : a->fd >= 0 ? (rt__arg_msg){.len = a->len, .fd = a->fd}
                              : (rt__arg_msg){.data = t->tail + a->at, .len = a->len, .fd = -1};
    }
}

const rt__need *rt__task_needs(const rt__task *t)
{
    return (const rt__need *)(const void *)t->tail;
}

void rt__task_request(const rt__task *t, rt__res *req)
{
    memset(req, 0, sizeof *req);
    req->cpu = t->call.cpu;
    req->gpu = t->call.gpu;
    const rt__need *needs = rt__task_needs(t);
    for (int i = 0; i < t->call.nneeds; i++)
        if (needs[i].index >= 0)
            req->custom[needs[i].index] = needs[i].amount;
        else if (needs[i].index == RT__NEED_GPU_BYTES)
            req->gpu_bytes = (uint64_t)needs[i].amount;
        else if (needs[i].index == RT__NEED_NODES)
            req->nodes = (const rt__nodeset *)(intptr_t)needs[i].amount;
        else if (needs[i].index == RT__NEED_GROUP)
            req->group = (uint64_t)needs[i].amount;
        else if (needs[i].index == RT__NEED_BUNDLE)
            req->bundle = needs[i].amount;
}

unsigned rt__task_attempt(const rt__task *t)
{
    unsigned runs = (unsigned)t->run.runs_lost + t->run.runs_failed;
    return runs < RT__ATTEMPT_MAX ? runs : RT__ATTEMPT_MAX;
}

void rt__task_fail(rt__task *t, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    t->obj.status = status;
    rt__free(t->obj.error);
    t->obj.error = rt__strdup(msg); /* without memory, rt_get() names the code */
}

int rt__task_explain(const rt__task *t)
{
    if (t->obj.status == RT_OK)
        return 0;
    return rt__error(t->obj.status, "%s", t->obj.error ? t->obj.error : rt__strerror(t->obj.status));
}

/* The notes of rt__task_forgotten(): any thread adds, the round's holder
 * takes.  A note that finds no memory is lost: its holder keeps the
 * object until the job ends. */
static struct {
    pthread_mutex_t lock;
    rt__forgotten *v;
    size_t n, cap;
    atomic_size_t count; /* n, read without the lock: most rounds find none */
} forgotten = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0};

static void note_forgotten(const rt__task *t)
{
    pthread_mutex_lock(&forgotten.lock);
    if (forgotten.n == forgotten.cap) {
        size_t cap = forgotten.cap ? 2 * forgotten.cap : 64;
        rt__forgotten *v = rt__realloc(forgotten.v, cap * sizeof *v);
        if (v) {
            forgotten.v = v;
            forgotten.cap = cap;
        }
    }
    if (forgotten.n < forgotten.cap) {
        forgotten.v[forgotten.n++] = (rt__forgotten){t->call.id, t->obj.holder, t->obj.held_run};
        atomic_store(&forgotten.count, forgotten.n);
    }
    else
        rt__warn("no memory to free object %llu on node %d: it stays there",
                 (unsigned long long)t->call.id, t->obj.holder);
    pthread_mutex_unlock(&forgotten.lock);
}

size_t rt__task_forgotten(rt__forgotten *out, size_t max)
{
    if (atomic_load(&forgotten.count) == 0)
        return 0;
    pthread_mutex_lock(&forgotten.lock);
    size_t n = forgotten.n < max ? forgotten.n : max;
    memcpy(out, forgotten.v + forgotten.n - n, n * sizeof *out);
    forgotten.n -= n;
    atomic_store(&forgotten.count, forgotten.n);
    if (forgotten.n == 0) {
        rt__free(forgotten.v);
        forgotten.v = NULL;
        forgotten.cap = 0;
    }
    pthread_mutex_unlock(&forgotten.lock);
    return n;
}

rt__task *rt__task_new_held(uint64_t id, void *bytes, size_t len)
{
    rt__task *o = record_new(RT__KIND_TASK, NULL, NULL, NULL, 0, 0, 0);
    if (o) {
        o->call.id = id;
        o->run.ended = 1;
        o->obj.result = bytes;
        o->obj.result_len = len;
    }
    return o;
}

void rt__task_held_renamed(rt__task *o, uint64_t id)
{
    o->call.id = id;
}

void rt__task_free_parts(rt__task *t)
{
    for (rt__task *p; (p = next_part(t));)
        rt__task_free(p);
}

void rt__task_free(rt__task *task)
{
    rt__task_free_parts(task);
    if (task->obj.spilled) {
        unlink(task->obj.spill_file);
        rt__free(task->obj.spill_file);
    } else {
        rt__buf_free(task->obj.result);
    }
    if (task->obj.holder)
        note_forgotten(task);
    if (task->call.arg_fd >= 0)
        close(task->call.arg_fd);
    for (uint32_t i = 0; i < rt__task_nargs(task); i++)
        if (rt__task_args(task)[i].fd >= 0)
            close(rt__task_args(task)[i].fd);
    rt__free(task->call.more);
    rt__free(task->obj.error);
    rt__free(task);
}

void rt__tasks_free(rt__tasks *q)
{
    for (rt__task *t; (t = rt__tasks_pop(q));)
        rt__task_free(t);
}

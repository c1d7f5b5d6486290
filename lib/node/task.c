/* task.c - task records and their queue. */
#include "task.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/shm.h"

#include <stdarg.h>
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

/* The argument goes in a memfd when large, so that it crosses to the
 * worker without a copy; the record keeps the memfd for retries. */
static int store_argument(rt__task *t, const void *arg, size_t arg_len, char *inline_at)
{
    if (arg_len < RT__SHM_MIN) {
        if (arg_len)
            memcpy(inline_at, arg, arg_len);
        return 0;
    }
    void *dst;
    t->arg_fd = rt__shm_create(arg_len, &dst);
    if (t->arg_fd < 0)
        return rt__syserror("shared memory for the argument");
    memcpy(dst, arg, arg_len);
    rt__shm_unmap(dst, arg_len);
    if (rt__shm_seal(t->arg_fd) < 0) {
        close(t->arg_fd);
        return rt__syserror("sealing the argument's shared memory");
    }
    return 0;
}

int rt__task_new(rt__task_kind kind, rt__any_fn fn, const char *name, int nneeds,
                 const void *arg, size_t arg_len, rt__task **out)
{
    size_t needs_len = (size_t)nneeds * sizeof(rt__need);
    size_t inline_len = arg_len < RT__SHM_MIN ? arg_len : 0;
    size_t name_len = name ? strlen(name) + 1 : 0;
    rt__task *t = rt__malloc(sizeof *t + needs_len + inline_len + name_len);
    if (!t)
        return rt__error(RT_ENOMEM, "no memory for the task");
    memset(t, 0, sizeof *t);
    t->kind = (unsigned char)kind;
    t->fn = fn;
    t->arg_fd = -1;
    t->arg_len = arg_len;
    t->nneeds = (unsigned char)nneeds;
    int rc = store_argument(t, arg, arg_len, t->tail + needs_len);
    if (rc < 0) {
        rt__free(t);
        return rc;
    }
    if (name) {
        t->name = t->tail + needs_len + inline_len;
        memcpy(t->name, name, name_len);
    }
    *out = t;
    return 0;
}

const void *rt__task_arg(const rt__task *t)
{
    return t->arg_fd >= 0 ? NULL : t->tail + t->nneeds * sizeof(rt__need);
}

const rt__need *rt__task_needs(const rt__task *t)
{
    return (const rt__need *)(const void *)t->tail;
}

void rt__task_request(const rt__task *t, rt__res *req)
{
    memset(req, 0, sizeof *req);
    req->cpu = t->cpu;
    req->gpu = t->gpu;
    const rt__need *needs = rt__task_needs(t);
    for (int i = 0; i < t->nneeds; i++)
        if (needs[i].index >= 0)
            req->custom[needs[i].index] = needs[i].amount;
        else if (needs[i].index == RT__NEED_GPU_BYTES)
            req->gpu_bytes = (uint64_t)needs[i].amount;
}

void rt__task_fail(rt__task *t, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    t->status = status;
    rt__free(t->error);
    t->error = rt__strdup(msg); /* without memory, rt_get() names the code */
}

void rt__task_free(rt__task *task)
{
    if (task->arg_fd >= 0)
        close(task->arg_fd);
    rt_free(task->result);
    rt__free(task->error);
    rt__free(task);
}

void rt__tasks_free(rt__tasks *q)
{
    for (rt__task *t; (t = rt__tasks_pop(q));)
        rt__task_free(t);
}

/*
 * streams.c - the results a task yields one by one (rt_yield(), Ray's
 * streaming generators), read in order with rt_stream_next() while the
 * task still runs.
 *
 * Each result yielded is an object (made as rt_put() makes one, by the
 * proxy of the task's worker) whose handle joins the stream of the task,
 * kept here by the task's handle.  The task's own result comes after its
 * last yield, so once the task is done its stream is complete.
 *
 * A task that runs again (its worker died, or retry_exceptions) yields
 * its items again from the first: as Ray's generators do, items are
 * numbered within their run, and a run's items up to the number the
 * stream has received already are dropped, so that the reader gets each
 * item once.  Handles
 * not read when the task's handle goes (rt_get(), rt_release()) go with
 * it.
 */
#include "calls.h"

#include "runtime.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"

typedef struct rt__yielded {
    struct rt__yielded *next;
    uint64_t id;
} rt__yielded;

typedef struct rt__stream {
    rt__idnode byid; /* the yielding task's handle */
    rt__yielded *head, *tail;
    uint64_t received; /* items taken in, over every run */
    uint64_t in_run;   /* items the current run has yielded */
    unsigned run;      /* which run that is (rt__task_attempt()) */
} rt__stream;

static rt__stream *find(const rt__runtime *rt, uint64_t task)
{
    return (rt__stream *)rt__idmap_find(&rt->streams, task);
}

/* [L] Count an item that run `run` of s's task yields: whether the
 * stream received it already (from an earlier run). */
static int received_before(rt__stream *s, unsigned run)
{
    if (run != s->run) {
        s->run = run;
        s->in_run = 0;
    }
    if (++s->in_run <= s->received)
        return 1;
    s->received = s->in_run;
    return 0;
}

int rt__call_stream_add(rt__runtime *rt, uint64_t task, rt_ref item)
{
    rt__yielded *it = rt__malloc(sizeof *it); /* outside the lock */
    rt__stream *fresh = rt__malloc(sizeof *fresh);
    if (!it || !fresh) {
        rt__free(it);
        rt__free(fresh);
        return rt__error(RT_ENOMEM, "rt_yield: out of memory");
    }
    *it = (rt__yielded){NULL, item.id};
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, "rt_yield");
    rt__task *t = rc == 0 ? rt__table_find(&rt->tasks, task) : NULL;
    if (rc == 0 && (!t || t->obj.state == RT__TASK_DONE))
        rc = rt__error(RT_EBADREF, "rt_yield: nobody reads this task's results (its "
                       "handle was released)");
    if (rc == 0)
        t->obj.unkept = 1; /* a later run takes its result only with its items */
    rt__stream *s = rc == 0 ? find(rt, task) : NULL;
    if (rc == 0 && !s) {
        *fresh = (rt__stream){.byid.id = task};
        rt__idmap_add(&rt->streams, &fresh->byid);
        s = fresh;
        fresh = NULL;
    }
    rt__tasks again = {0};
    if (rc == 0 && !received_before(s, rt__task_attempt(t))) {
        if (s->tail)
            s->tail->next = it;
        else
            s->head = it;
        s->tail = it;
        it = NULL;
        if (rt->waiters)
            pthread_cond_broadcast(&rt->changed);
    } else if (rc == 0) {
        rt__task *o = rt__objects_drop_handle(rt, item.id); /* a rerun's: the reader has it */
        if (o)
            rt__tasks_push(&again, o);
    }
    pthread_mutex_unlock(&rt->lock);
    rt__tasks_free(&again);
    rt__free(it);
    rt__free(fresh);
    return rc;
}

int rt__call_stream_next(rt__runtime *rt, rt_ref ref, rt_ref *item, long timeout_ms)
{
    struct timespec deadline = rt__deadline_after(timeout_ms > 0 ? timeout_ms : 0);
    rt__yielded *taken = NULL;
    rt__stream *ended = NULL;
    pthread_mutex_lock(&rt->lock);
    int rc;
    for (;;) {
        if ((rc = rt__check_running(rt, "rt_stream_next")) < 0)
            break;
        rt__task *t = rt__table_find(&rt->tasks, ref.id);
        if (!t) {
            rc = rt__error(RT_EBADREF, "rt_stream_next: unknown or consumed handle");
            break;
        }
        rt__stream *s = find(rt, ref.id);
        if (s && s->head) {
            taken = s->head;
            if (!(s->head = taken->next))
                s->tail = NULL;
            *item = (rt_ref){taken->id};
            break;
        }
        if (t->obj.state == RT__TASK_DONE) { /* every yield came before its end */
            if (s)
                rt__idmap_remove(&rt->streams, &s->byid);
            ended = s;
            *item = (rt_ref){0};
            break;
        }
        if (rt__wait_change(rt, timeout_ms, &deadline) == RT_ETIMEDOUT) {
            rc = rt__error(RT_ETIMEDOUT, "rt_stream_next: timed out after %ld ms",
                           timeout_ms);
            break;
        }
    }
    pthread_mutex_unlock(&rt->lock);
    rt__free(taken);
    rt__free(ended);
    return rc;
}

rt__stream *rt__streams_drop(rt__runtime *rt, uint64_t task, rt__tasks *freed)
{
    rt__stream *s = find(rt, task);
    if (!s)
        return NULL;
    rt__idmap_remove(&rt->streams, &s->byid);
    for (rt__yielded *it = s->head; it; it = it->next) {
        rt__task *o = rt__objects_drop_handle(rt, it->id);
        if (o)
            rt__tasks_push(freed, o);
    }
    return s;
}

void rt__stream_free(rt__stream *s)
{
    if (!s)
        return;
    for (rt__yielded *it = s->head, *next; it; it = next) {
        next = it->next;
        rt__free(it);
    }
    rt__free(s);
}

void rt__streams_free(rt__runtime *rt)
{
    for (rt__idnode *n; (n = rt__idmap_any(&rt->streams));) {
        rt__idmap_remove(&rt->streams, n);
        rt__stream_free((rt__stream *)n);
    }
    rt__idmap_free(&rt->streams);
}

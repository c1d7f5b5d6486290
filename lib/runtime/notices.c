/*
 * notices.c - what an event loop hears of results: rt_notify() asks for a
 * notice when an object is ready, rt_ready() takes the notices, and the
 * descriptor of rt_notify_fd() is readable while some wait.
 *
 * A watch is made by rt_notify() outside the lock and lives, keyed by the
 * object's handle, in `watches` until the object is published; it then
 * moves, as it is, to the queue of notices (no allocation under the
 * lock).  The descriptor is an eventfd: it is written (outside the lock)
 * when the queue stops being empty, and rt_ready() reads it before it
 * takes notices and writes it again when some are left, so that it is
 * readable exactly while notices wait, whoever comes first.
 */
#include "calls.h"

#include "runtime.h"

#include "base/alloc.h"
#include "base/error.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct rt__watch_rec {
    rt__idnode byid;            /* the object's handle */
    uint64_t tag;
    struct rt__watch_rec *next; /* in the queue, once ready */
} rt__watch_rec;

int rt__notices_open(rt__runtime *rt)
{
    rt->notices.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (rt->notices.fd < 0)
        return rt__syserror("rt_init: eventfd");
    if (rt__idmap_init(&rt->notices.watches) < 0) {
        close(rt->notices.fd);
        rt->notices.fd = -1;
        return rt__error(RT_ENOMEM, "rt_init: no memory for the notices");
    }
    return 0;
}

void rt__notices_close(rt__runtime *rt)
{
    for (rt__idnode *n; (n = rt__idmap_any(&rt->notices.watches));) {
        rt__idmap_remove(&rt->notices.watches, n);
        rt__free(n);
    }
    rt__idmap_free(&rt->notices.watches);
    for (rt__watch_rec *w = rt->notices.head, *next; w; w = next) {
        next = w->next;
        rt__free(w);
    }
    rt->notices.head = rt->notices.tail = NULL;
    rt->notices.count = 0;
    if (rt->notices.fd >= 0)
        close(rt->notices.fd);
    rt->notices.fd = -1;
}

/* [L] Queue w's notice: 1 when the descriptor must be written. */
static int queue(rt__runtime *rt, rt__watch_rec *w)
{
    w->next = NULL;
    if (rt->notices.tail)
        rt->notices.tail->next = w;
    else
        rt->notices.head = w;
    rt->notices.tail = w;
    rt->notices.count++;
    int first = !rt->notices.signalled;
    rt->notices.signalled = 1;
    return first;
}

int rt__notices_publish(rt__runtime *rt, rt__task *t)
{
    int signal = 0;
    rt__idnode *n;
    while ((n = rt__idmap_find(&rt->notices.watches, t->call.id))) {
        rt__idmap_remove(&rt->notices.watches, n);
        signal |= queue(rt, (rt__watch_rec *)n);
    }
    t->obj.watched = 0;
    return signal;
}

void rt__notices_signal(rt__runtime *rt)
{
    uint64_t one = 1;
    if (write(rt->notices.fd, &one, sizeof one) < 0 && errno != EAGAIN)
        rt__warn("the notices' descriptor: %s", strerror(errno));
}

int rt__call_notify_fd(rt__runtime *rt, int *fd)
{
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, "rt_notify_fd");
    if (rc == 0)
        *fd = rt->notices.fd;
    pthread_mutex_unlock(&rt->lock);
    return rc;
}

int rt__call_notify(rt__runtime *rt, rt_ref ref, uint64_t tag)
{
    rt__watch_rec *w = rt__malloc(sizeof *w); /* outside the lock */
    if (!w)
        return rt__error(RT_ENOMEM, "rt_notify: out of memory");
    *w = (rt__watch_rec){.byid.id = ref.id, .tag = tag};
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, "rt_notify"), signal = 0;
    rt__task *t = rc == 0 ? rt__table_find(&rt->tasks, ref.id) : NULL;
    if (rc == 0 && !t)
        rc = rt__error(RT_EBADREF, "rt_notify: unknown or consumed handle");
    if (t && t->obj.state == RT__TASK_DONE) {
        signal = queue(rt, w);
    } else if (t) {
        rt__idmap_add(&rt->notices.watches, &w->byid);
        t->obj.watched = 1;
        rt__unhold_answers(rt); /* its answer is the runtime thread's at once */
    }
    pthread_mutex_unlock(&rt->lock);
    if (rc < 0)
        rt__free(w);
    if (signal)
        rt__notices_signal(rt);
    return rc;
}

int rt__call_ready(rt__runtime *rt, rt_notice *out, size_t max, size_t *n)
{
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, "rt_ready");
    rt->waiters += rc == 0; /* rt_shutdown() closes the descriptor after us */
    pthread_mutex_unlock(&rt->lock);
    if (rc < 0)
        return rc;
    /* First: a notice queued from now on writes it again. */
    uint64_t count;
    int err = read(rt->notices.fd, &count, sizeof count) < 0 && errno != EAGAIN ? errno : 0;
    rt__watch_rec *taken = NULL, **last = &taken;
    pthread_mutex_lock(&rt->lock);
    rt->waiters--;
    if (rt->state != RT__RUNNING)
        pthread_cond_broadcast(&rt->changed);
    rc = rt__check_running(rt, "rt_ready");
    size_t k = 0;
    for (; rc == 0 && k < max && rt->notices.head; k++) {
        rt__watch_rec *w = rt->notices.head;
        rt->notices.head = w->next;
        out[k] = (rt_notice){{w->byid.id}, w->tag};
        *last = w;
        last = &w->next;
    }
    *last = NULL;
    if (!rt->notices.head)
        rt->notices.tail = NULL;
    rt->notices.count -= k;
    int left = rc == 0 && rt->notices.count > 0;
    rt->notices.signalled = left;
    pthread_mutex_unlock(&rt->lock);
    for (rt__watch_rec *w = taken, *next; w; w = next) {
        next = w->next;
        rt__free(w);
    }
    if (left)
        rt__notices_signal(rt);
    *n = k;
    if (rc == 0 && err)
        rt__warn("rt_ready: reading the notices' descriptor: %s", strerror(err));
    return rc;
}

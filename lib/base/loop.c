/* loop.c - epoll with callbacks, timers and wake-ups. */
#include "loop.h"

#include "clock.h"
#include "linger.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void woken(rt__wake *w)
{
    (void)w; /* ending the wait was all it was for */
}

int rt__loop_init(rt__loop *l)
{
    l->timers = NULL;
    l->calling = NULL;
    l->wake.fd = -1;
    l->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epoll_fd < 0 || rt__wake_open(&l->wake) < 0 ||
        rt__wake_watch(l, &l->wake, woken) < 0) {
        int saved = errno;
        rt__loop_close(l);
        errno = saved;
        return -1;
    }
    return 0;
}

void rt__loop_close(rt__loop *l)
{
    rt__wake_close(NULL, &l->wake);
    if (l->epoll_fd >= 0)
        close(l->epoll_fd);
    l->epoll_fd = -1;
    for (rt__timer *t = l->timers; t; t = t->next)
        t->armed = 0; /* a loop opened again starts with none */
    l->timers = NULL;
}

int rt__loop_add(rt__loop *l, rt__watch *w, int fd, uint32_t events, rt__watch_cb cb)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    w->fd = fd;
    w->events = events;
    w->cb = cb;
    if (epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        w->fd = -1;
        return -1;
    }
    return 0;
}

void rt__loop_modify(rt__loop *l, rt__watch *w, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (w->fd < 0 || w->events == events)
        return;
    w->events = events;
    epoll_ctl(l->epoll_fd, EPOLL_CTL_MOD, w->fd, &ev);
}

void rt__loop_remove(rt__loop *l, rt__watch *w)
{
    if (w->fd >= 0)
        epoll_ctl(l->epoll_fd, EPOLL_CTL_DEL, w->fd, NULL);
    w->fd = -1;
    for (int i = 0; l->calling && i < l->calling->n; i++)
        if (l->calling->ev[i].data.ptr == w)
            l->calling->ev[i].data.ptr = NULL; /* it may be freed next */
}

/* Milliseconds until the first timer is due, rounded up; -1 with none. */
static int until_first(const rt__loop *l)
{
    if (!l->timers)
        return -1;
    uint64_t now = rt__now_ns(), due = l->timers->due_ns;
    if (due <= now)
        return 0;
    uint64_t ms = (due - now + 999999) / 1000000;
    return ms > 86400000 ? 86400000 : (int)ms;
}

void rt__loop_wait(rt__loop *l, rt__events *e, int block, int soon)
{
    int timeout_ms = block ? until_first(l) : 0;
    if (timeout_ms && soon)
        rt__linger(l->epoll_fd); /* readable once events are ready */
    e->n = epoll_wait(l->epoll_fd, e->ev, RT__EVENTS_MAX, timeout_ms);
    if (e->n < 0)
        e->n = 0; /* EINTR: nothing is ready */
}

static void run_timers(rt__loop *l)
{
    uint64_t now = rt__now_ns();
    while (l->timers && l->timers->due_ns <= now) {
        rt__timer *t = l->timers;
        l->timers = t->next;
        t->armed = 0;
        t->cb(t); /* may arm it, or others, again */
    }
}

void rt__loop_dispatch(rt__loop *l, rt__events *e)
{
    l->calling = e;
    for (int i = 0; i < e->n; i++) {
        rt__watch *w = e->ev[i].data.ptr;
        if (w && w->fd >= 0) /* it may have been removed since the wait */
            w->cb(w, e->ev[i].events);
    }
    l->calling = NULL;
    e->n = 0;
    run_timers(l);
}

void rt__loop_wake(rt__loop *l)
{
    rt__wake_signal(&l->wake);
}

/* ---- timers --------------------------------------------------------------- */

void rt__timer_disarm(rt__loop *l, rt__timer *t)
{
    if (!t->armed)
        return;
    rt__timer **link = &l->timers;
    while (*link != t)
        link = &(*link)->next;
    *link = t->next;
    t->armed = 0;
}

void rt__timer_arm(rt__loop *l, rt__timer *t, uint64_t due_ns, rt__timer_cb cb)
{
    rt__timer_disarm(l, t);
    t->due_ns = due_ns;
    t->cb = cb;
    rt__timer **link = &l->timers; /* a handful at most: a list will do */
    while (*link && (*link)->due_ns <= due_ns)
        link = &(*link)->next;
    t->next = *link;
    *link = t;
    t->armed = 1;
}

/* ---- wake-ups ------------------------------------------------------------- */

static void on_wake(rt__watch *watch, uint32_t events)
{
    rt__wake *w = (rt__wake *)(void *)watch; /* its first member */
    uint64_t count;
    (void)events;
    if (read(w->fd, &count, sizeof count) < 0 && errno != EAGAIN)
        return;
    w->cb(w);
}

int rt__wake_open(rt__wake *w)
{
    w->watch.fd = -1;
    w->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return w->fd < 0 ? -1 : 0;
}

int rt__wake_watch(rt__loop *l, rt__wake *w, rt__wake_cb cb)
{
    w->cb = cb;
    return rt__loop_add(l, &w->watch, w->fd, EPOLLIN, on_wake);
}

void rt__wake_signal(rt__wake *w)
{
    if (write(w->fd, &(uint64_t){1}, sizeof(uint64_t)) < 0)
        return; /* the counter is full: the loop is woken anyway */
}

void rt__wake_close(rt__loop *l, rt__wake *w)
{
    if (l)
        rt__loop_remove(l, &w->watch);
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    w->watch.fd = -1;
}

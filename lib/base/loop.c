/* loop.c - epoll with callbacks, and a wake-up eventfd. */
#include "loop.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void drain_wake(rt__watch *w, uint32_t events)
{
    uint64_t count;
    (void)events;
    if (read(w->fd, &count, sizeof count) < 0)
        return; /* already read: nothing to do */
}

int rt__loop_init(rt__loop *l)
{
    l->wake.fd = -1;
    l->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (l->epoll_fd < 0 || l->wake_fd < 0 ||
        rt__loop_add(l, &l->wake, l->wake_fd, EPOLLIN, drain_wake) < 0) {
        int saved = errno;
        rt__loop_close(l);
        errno = saved;
        return -1;
    }
    return 0;
}

void rt__loop_close(rt__loop *l)
{
    if (l->epoll_fd >= 0)
        close(l->epoll_fd);
    if (l->wake_fd >= 0)
        close(l->wake_fd);
    l->epoll_fd = l->wake_fd = -1;
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
}

void rt__loop_wait(rt__loop *l, rt__events *e, int timeout_ms)
{
    e->n = epoll_wait(l->epoll_fd, e->ev, RT__EVENTS_MAX, timeout_ms);
    if (e->n < 0)
        e->n = 0; /* EINTR: nothing is ready */
}

void rt__loop_dispatch(rt__loop *l, rt__events *e)
{
    (void)l;
    for (int i = 0; i < e->n; i++) {
        rt__watch *w = e->ev[i].data.ptr;
        if (w->fd >= 0) /* it may have been removed since the wait */
            w->cb(w, e->ev[i].events);
    }
    e->n = 0;
}

void rt__loop_wake(rt__loop *l)
{
    uint64_t one = 1;
    if (write(l->wake_fd, &one, sizeof one) < 0)
        return; /* the counter is full: the loop is awake anyway */
}

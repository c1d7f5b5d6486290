/*
 * loop.h - the runtime thread's event loop: epoll, and an eventfd that
 * other threads write to wake it.
 *
 * Every descriptor the loop watches is a small struct with a callback, as
 * libuv's uv__io_t is; the loop knows nothing of what is behind it.
 */
#ifndef RT_LOOP_H
#define RT_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>

#define RT__EVENTS_MAX 64

typedef struct rt__watch rt__watch;
typedef void (*rt__watch_cb)(rt__watch *w, uint32_t events);

struct rt__watch {
    int fd;          /* -1 when not watched */
    uint32_t events; /* EPOLLIN, EPOLLOUT */
    rt__watch_cb cb;
};

typedef struct rt__loop {
    int epoll_fd;
    int wake_fd;
    rt__watch wake;
} rt__loop;

/* 0, or -1 with errno. */
int rt__loop_init(rt__loop *l);
void rt__loop_close(rt__loop *l);
/* Watch fd for events; cb gets the watch and what happened.  0 or -1. */
int rt__loop_add(rt__loop *l, rt__watch *w, int fd, uint32_t events, rt__watch_cb cb);
void rt__loop_modify(rt__loop *l, rt__watch *w, uint32_t events);
/* Stop watching (the descriptor stays open). */
void rt__loop_remove(rt__loop *l, rt__watch *w);
/* What one wait found ready. */
typedef struct rt__events {
    struct epoll_event ev[RT__EVENTS_MAX];
    int n;
} rt__events;

/* Wait up to timeout_ms (-1: no limit) for what is ready.  It needs no
 * lock: the callbacks run later, in rt__loop_dispatch(). */
void rt__loop_wait(rt__loop *l, rt__events *e, int timeout_ms);
/* Call back what the last wait found, skipping watches removed since.
 * A callback must not free a watch of this round: free them afterwards. */
void rt__loop_dispatch(rt__loop *l, rt__events *e);
/* Wake the loop from any thread. */
void rt__loop_wake(rt__loop *l);

#endif

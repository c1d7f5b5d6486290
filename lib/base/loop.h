/*
 * loop.h - the runtime thread's event loop: epoll, timers, and wake-ups
 * that other threads give.
 *
 * Every descriptor the loop watches is a small struct with a callback, as
 * libuv's uv__io_t is; the loop knows nothing of what is behind it.  A
 * timer is one too (libuv's uv_timer_t): the loop sleeps until the first
 * one is due, so nothing polls.  A wake-up (rt__wake) is the one way for
 * another thread to get something done on the loop's thread: an eventfd,
 * written by any thread, whose callback the loop runs.
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

typedef struct rt__wake rt__wake;
typedef void (*rt__wake_cb)(rt__wake *w);

struct rt__wake {
    rt__watch watch;
    int fd;          /* the eventfd, -1 when closed */
    rt__wake_cb cb;
};

typedef struct rt__timer rt__timer;
typedef void (*rt__timer_cb)(rt__timer *t);

struct rt__timer {
    uint64_t due_ns;  /* CLOCK_MONOTONIC */
    rt__timer_cb cb;
    rt__timer *next;  /* in the loop's list, soonest first */
    int armed;
};

typedef struct rt__loop {
    int epoll_fd;
    rt__wake wake;      /* rt__loop_wake()'s: it only ends a wait */
    rt__timer *timers;  /* armed, soonest first */
    struct rt__events *calling; /* being called back, or NULL */
} rt__loop;

/* 0, or -1 with errno. */
int rt__loop_init(rt__loop *l);
void rt__loop_close(rt__loop *l);
/* Watch fd for events; cb gets the watch and what happened.  0 or -1. */
int rt__loop_add(rt__loop *l, rt__watch *w, int fd, uint32_t events, rt__watch_cb cb);
void rt__loop_modify(rt__loop *l, rt__watch *w, uint32_t events);
/* Stop watching (the descriptor stays open).  What the last wait found
 * for w is dropped too: once removed, w may be freed at once, even by a
 * callback. */
void rt__loop_remove(rt__loop *l, rt__watch *w);
/* What one wait found ready. */
typedef struct rt__events {
    struct epoll_event ev[RT__EVENTS_MAX];
    int n;
} rt__events;

/* Wait for what is ready: until the first timer is due, or without
 * blocking when block is 0; a wait that may block lingers first when the
 * caller expects events soon (linger.h).  It needs no lock: the callbacks
 * run later, in rt__loop_dispatch(). */
void rt__loop_wait(rt__loop *l, rt__events *e, int block, int soon);
/* Call back what the last wait found, skipping watches removed since,
 * then the timers that are due. */
void rt__loop_dispatch(rt__loop *l, rt__events *e);
/* End the loop's wait, from any thread. */
void rt__loop_wake(rt__loop *l);

/* Call cb from rt__loop_dispatch() once due_ns has come; arming an armed
 * timer moves it.  Loop thread only. */
void rt__timer_arm(rt__loop *l, rt__timer *t, uint64_t due_ns, rt__timer_cb cb);
void rt__timer_disarm(rt__loop *l, rt__timer *t);

/* A wake-up: open its eventfd (0, or -1 with errno), then have the loop
 * call cb for it; any thread may signal it, at any time after opening;
 * several signals before the loop looks make one call. */
int rt__wake_open(rt__wake *w);
int rt__wake_watch(rt__loop *l, rt__wake *w, rt__wake_cb cb);
void rt__wake_signal(rt__wake *w);
/* Stop watching (l may be NULL when it was not watched) and close. */
void rt__wake_close(rt__loop *l, rt__wake *w);

#endif

/* test_loop.c - the event loop's timers and wake-ups, without a runtime. */
#include "tests.h"

#include "../lib/base/clock.h"
#include "../lib/base/linger.h"
#include "../lib/base/loop.h" /* internal: the loop is checked directly */

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static int order[8], fired;

static void note(rt__timer *t)
{
    order[fired++] = (int)(t->due_ns % 10); /* each test timer's number */
}

/* Timers fire in the order they are due, whatever the order they were
 * armed in; a disarmed one never fires, a re-armed one fires once, when
 * it is due at its new time; the wait lasts until the first is due. */
START_TEST(timers_fire_in_order_and_only_when_due)
{
    rt__loop loop;
    ck_assert_int_eq(rt__loop_init(&loop), 0);
    rt__timer t[4] = {{0}};
    uint64_t now = rt__now_ns() / 10 * 10; /* numbers in the last digit */
    fired = 0;
    rt__timer_arm(&loop, &t[2], now + 60000000 + 2, note);
    rt__timer_arm(&loop, &t[1], now + 30000000 + 1, note);
    rt__timer_arm(&loop, &t[3], now + 40000000 + 3, note);
    rt__timer_arm(&loop, &t[0], now + 10000000, note);
    rt__timer_disarm(&loop, &t[3]);
    rt__timer_arm(&loop, &t[1], now + 20000000 + 1, note); /* moved sooner */
    rt__events e;
    int waits = 0;
    while (fired < 3 && rt__now_ns() < now + 5000000000ull) {
        rt__loop_wait(&loop, &e, 1, 0);
        rt__loop_dispatch(&loop, &e);
        waits++;
    }
    ck_assert_int_eq(fired, 3);
    ck_assert_int_le(waits, 5); /* a wait lasts until a timer is due: no spinning */
    ck_assert_int_eq(order[0], 0);
    ck_assert_int_eq(order[1], 1);
    ck_assert_int_eq(order[2], 2);
    ck_assert_ptr_null(loop.timers);
    ck_assert_int_eq(t[3].armed, 0);
    rt__loop_close(&loop);
}
END_TEST

static int woken;

static void on_wake(rt__wake *w)
{
    (void)w;
    woken++;
}

static void *signal_later(void *arg)
{
    usleep(50000);
    rt__wake_signal(arg);
    rt__wake_signal(arg); /* two before the loop looks: one call */
    return NULL;
}

/* Another thread's signal ends a wait that no timer would end, and the
 * loop calls the wake-up's callback on its own thread. */
START_TEST(a_wake_up_from_another_thread_ends_the_wait)
{
    rt__loop loop;
    rt__wake w;
    ck_assert_int_eq(rt__loop_init(&loop), 0);
    ck_assert_int_eq(rt__wake_open(&w), 0);
    ck_assert_int_eq(rt__wake_watch(&loop, &w, on_wake), 0);
    woken = 0;
    pthread_t th;
    pthread_create(&th, NULL, signal_later, &w);
    pthread_join(th, NULL);
    rt__events e;
    rt__loop_wait(&loop, &e, 1, 0); /* no timer: only the signal ends it */
    rt__loop_dispatch(&loop, &e);
    ck_assert_int_eq(woken, 1);
    rt__loop_wait(&loop, &e, 0, 0);
    rt__loop_dispatch(&loop, &e);
    ck_assert_int_eq(woken, 1); /* drained: nothing more */
    rt__wake_close(&loop, &w);
    ck_assert_int_eq(w.fd, -1);
    rt__loop_close(&loop);
}
END_TEST

static rt__loop *removing_loop;
static rt__watch *other;
static int calls_of_other;

static void remove_other(rt__watch *w, uint32_t events)
{
    (void)w, (void)events;
    rt__loop_remove(removing_loop, other);
    free(other); /* its owner freed at once: ASan and valgrind see a later read */
}

static void count_other(rt__watch *w, uint32_t events)
{
    (void)w, (void)events;
    calls_of_other++;
}

/* A watch removed by a callback is not called back for what the same
 * wait found: its owner may be freed at once. */
START_TEST(a_watch_removed_mid_dispatch_is_not_called)
{
    rt__loop loop;
    ck_assert_int_eq(rt__loop_init(&loop), 0);
    int a[2], b[2];
    ck_assert_int_eq(pipe(a), 0);
    ck_assert_int_eq(pipe(b), 0);
    ck_assert_int_eq(write(a[1], "x", 1), 1);
    ck_assert_int_eq(write(b[1], "x", 1), 1);
    rt__watch wa, *wb = malloc(sizeof *wb);
    ck_assert_int_eq(rt__loop_add(&loop, &wa, a[0], EPOLLIN, remove_other), 0);
    ck_assert_int_eq(rt__loop_add(&loop, wb, b[0], EPOLLIN, count_other), 0);
    rt__events e;
    rt__loop_wait(&loop, &e, 0, 0);
    ck_assert_int_eq(e.n, 2);
    /* Whichever comes first, the one that removes goes first here. */
    if (e.ev[0].data.ptr != &wa) {
        struct epoll_event t = e.ev[0];
        e.ev[0] = e.ev[1];
        e.ev[1] = t;
    }
    removing_loop = &loop;
    other = wb;
    calls_of_other = 0;
    rt__loop_dispatch(&loop, &e);
    ck_assert_int_eq(calls_of_other, 0);
    rt__loop_remove(&loop, &wa);
    for (int i = 0; i < 2; i++) {
        close(a[i]);
        close(b[i]);
    }
    rt__loop_close(&loop);
}
END_TEST

static void *signal_soon(void *arg)
{
    usleep(10000);
    rt__wake_signal(arg);
    return NULL;
}

/* A wait that expects events soon and gets none looks for them no longer
 * than RT__LINGER_NS, then sleeps until its timer; one whose event comes
 * while it looks, or after, ends with it. */
START_TEST(a_lingering_wait_ends_as_any_wait)
{
    rt__loop loop;
    rt__timer t = {0};
    rt__wake w;
    ck_assert_int_eq(rt__loop_init(&loop), 0);
    ck_assert_int_eq(rt__wake_open(&w), 0);
    ck_assert_int_eq(rt__wake_watch(&loop, &w, on_wake), 0);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    uint64_t start = rt__now_ns();
    rt__linger(p[0]); /* never readable */
    uint64_t took = rt__now_ns() - start;
    ck_assert_uint_ge(took, RT__LINGER_NS);
    ck_assert_uint_lt(took, 1000000000ull);
    ck_assert_int_eq(write(p[1], "x", 1), 1);
    rt__linger(p[0]); /* readable: it returns, and reads nothing */
    char c;
    ck_assert_int_eq(read(p[0], &c, 1), 1);
    fired = 0;
    rt__timer_arm(&loop, &t, rt__now_ns() + 20000000, note);
    rt__events e;
    start = rt__now_ns();
    rt__loop_wait(&loop, &e, 1, 1);
    ck_assert_uint_ge(rt__now_ns() - start, 15000000); /* slept until the timer */
    rt__loop_dispatch(&loop, &e);
    ck_assert_int_eq(fired, 1);
    woken = 0;
    pthread_t th;
    pthread_create(&th, NULL, signal_soon, &w);
    rt__loop_wait(&loop, &e, 1, 1); /* no timer: only the signal ends it */
    pthread_join(th, NULL);
    rt__loop_dispatch(&loop, &e);
    ck_assert_int_eq(woken, 1);
    close(p[0]);
    close(p[1]);
    rt__wake_close(&loop, &w);
    rt__loop_close(&loop);
}
END_TEST

Suite *loop_suite(void)
{
    Suite *s = suite_create("loop");
    TCase *tc = tcase_create("timers and wake-ups");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, timers_fire_in_order_and_only_when_due);
    tcase_add_test(tc, a_wake_up_from_another_thread_ends_the_wait);
    tcase_add_test(tc, a_watch_removed_mid_dispatch_is_not_called);
    tcase_add_test(tc, a_lingering_wait_ends_as_any_wait);
    suite_add_tcase(s, tc);
    return s;
}

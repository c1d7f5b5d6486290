/*
 * test_node.c - the node contract, on its own: the dispatcher drives a
 * scripted node, with no process, and the test plays the node's part
 * (answers, deaths) to check what becomes of each task: leases, answers,
 * retries, cancels, time limits, worker recycling, leases refused.
 */
#include "tests.h"

#include "../lib/base/alloc.h"
#include "../lib/base/shm.h"
#include "../lib/dispatch/dispatch.h" /* internal: the contract is driven directly */

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* ---- the scripted node ------------------------------------------------------ */

typedef struct fake_worker {
    int id;
    void *owner;         /* the dispatcher's lease, NULL while idle */
    size_t calls;        /* tasks sent in its life */
    uint64_t sent[64];   /* their ids, in order */
    size_t answered;
    int retired, stopped, killed, gone;
    uint64_t busy_us;    /* what busy_us() says */
} fake_worker;

typedef struct fake_node {
    rt__node node;       /* first */
    fake_worker w[32];
    int nw;
    int lease_errno;     /* set: every lease fails with it */
    int leases, sends, kills;
    uint64_t board_claims; /* board entries claimed: a seq is the count
                              above the worker's id */
} fake_node;

static rt__worker *op_lease(rt__node *n, int fresh, int max_calls, rt__amount cpu,
                            void *owner, size_t *calls)
{
    fake_node *f = (fake_node *)n;
    (void)max_calls, (void)cpu;
    if (f->lease_errno) {
        errno = f->lease_errno;
        return NULL;
    }
    fake_worker *w = NULL;
    for (int i = 0; !fresh && !w && i < f->nw; i++)
        if (!f->w[i].owner && !f->w[i].retired && !f->w[i].gone)
            w = &f->w[i];
    if (!w) {
        ck_assert_int_lt(f->nw, 32);
        w = &f->w[f->nw++];
        memset(w, 0, sizeof *w);
        w->id = f->nw;
    }
    w->owner = owner;
    *calls = w->calls;
    f->leases++;
    return (rt__worker *)w;
}

static int op_devices(rt__node *n, rt__worker *w, const rt__devices *d)
{
    (void)n, (void)w, (void)d;
    return 0;
}

static int op_send(rt__node *n, rt__worker *wk, const rt__task *t,
                   const rt__actor_spec *actor)
{
    fake_worker *w = (fake_worker *)wk;
    (void)actor;
    ck_assert_ptr_nonnull(w->owner);
    ck_assert_int_eq(w->gone, 0);
    ck_assert_uint_lt(w->calls, 64);
    w->sent[w->calls++] = t->call.id;
    ((fake_node *)n)->sends++;
    return 0;
}

static void op_release(rt__node *n, rt__worker *wk, int retire)
{
    fake_worker *w = (fake_worker *)wk;
    (void)n;
    ck_assert_uint_eq(w->answered, w->calls); /* never with a task in flight */
    w->owner = NULL;
    w->retired |= retire;
}

static void op_stop(rt__node *n, rt__worker *w)
{
    (void)n;
    ((fake_worker *)w)->stopped = 1;
}

static void op_kill(rt__node *n, rt__worker *w)
{
    ((fake_worker *)w)->killed = 1;
    ((fake_node *)n)->kills++;
}

static uint64_t op_lane(rt__node *n, rt__worker *w)
{
    (void)n;
    return (uint64_t)((fake_worker *)w)->id;
}

static uint64_t op_busy_us(rt__node *n, rt__worker *w, uint64_t now_ns)
{
    (void)n, (void)now_ns;
    return ((fake_worker *)w)->busy_us;
}

static void op_flush(rt__node *n, int caller_waits)
{
    (void)n, (void)caller_waits;
}

static int op_await(rt__node *n, rt__worker *w, int timeout_us)
{
    (void)n, (void)w, (void)timeout_us;
    return 0;
}

/* A board without memory: every claim succeeds, entries are never read. */
static uint64_t op_board_claim(rt__node *n, rt__worker *w)
{
    return ++((fake_node *)n)->board_claims << 8 | (uint64_t)((fake_worker *)w)->id;
}

static void op_board_give_back(rt__node *n, uint64_t seq)
{
    (void)n, (void)seq;
}

static const rt__node_ops fake_ops = {op_lease, op_devices, op_send, op_release, op_stop,
                                      op_kill, op_lane, op_busy_us, op_flush, op_await,
                                      NULL, NULL, NULL, NULL, NULL, NULL, op_board_claim,
                                      op_board_give_back};

/* ---- the scene ------------------------------------------------------------- */

static rt__dispatch d;
static fake_node f;

static int fake_fn(const void *arg, size_t len, rt_result *r)
{
    (void)arg, (void)len, (void)r;
    return 0;
}

/* A dispatcher with one node of `cpus` CPUs: the fake. */
static void scene(int cpus)
{
    rt__dispatch_init(&d);
    rt__names names;
    rt__res total = {.cpu = (rt__amount)cpus * RT__UNIT};
    rt__names_define(&names, NULL, 0, &total);
    ck_assert_int_eq(rt__sched_init(&d.sched, &names), 0);
    ck_assert_int_eq(rt__sched_add_node(&d.sched, &(rt__node_spec){.total = total}), 0);
    memset(&f, 0, sizeof f);
    f.node.ops = &fake_ops;
    f.node.ev = rt__dispatch_events(&d);
    d.node = rt__calloc(1, sizeof *d.node); /* as rt__dispatch_add_node() grows it */
    ck_assert_ptr_nonnull(d.node);
    d.node[0] = &f.node;
}

static void scene_end(void)
{
    rt__dispatch_free(&d, "the test ended");
    for (rt__task *t; (t = rt__tasks_pop(&d.out.done));)
        rt__task_free(t);
}

/* Hand the dispatcher t, a one-CPU task of handle id. */
static void absorb(rt__task *t, uint64_t id)
{
    t->call.id = id;
    t->call.seq = (uint32_t)id;
    t->call.cpu = RT__UNIT;
    rt__tasks q = {0};
    rt__tasks_push(&q, t);
    rt__dispatch_absorb(&d, &q);
}

/* Submit a task that takes the object `taken` (its record, held). */
static rt__task *submit_taking(uint64_t id, rt__task *taken)
{
    rt_arg arg = RT_ARG_REF(((rt_ref){taken->call.id}));
    rt__task *t = NULL;
    ck_assert_int_eq(rt__task_new_args(RT__KIND_TASK, (rt__any_fn)fake_fn, NULL, NULL, 0, &arg, 1,
                                       &t), 0);
    rt__task_args(t)[0].object = taken;
    taken->obj.holds++;
    absorb(t, id);
    return t;
}

/* Submit a one-CPU task; returns its record (the dispatcher's). */
static rt__task *submit(uint64_t id, int retries, int max_calls, uint32_t timeout_ms)
{
    rt__task *t = NULL;
    ck_assert_int_eq(rt__task_new(RT__KIND_TASK, (rt__any_fn)fake_fn, NULL, NULL, 0, &id,
                                  sizeof id, &t), 0);
    t->run.retries_left = retries;
    t->call.max_calls = max_calls;
    if (timeout_ms) {
        ck_assert_ptr_nonnull(rt__task_more(t));
        t->call.more->timeout_ms = timeout_ms;
    }
    absorb(t, id);
    return t;
}

/* The outcome of task id once finished, or -1 while it is not. */
static int outcome(uint64_t id)
{
    for (rt__task *t = d.out.done.head; t; t = t->next)
        if (t->call.id == id)
            return t->obj.status;
    return -1;
}

static const char *message(uint64_t id)
{
    for (rt__task *t = d.out.done.head; t; t = t->next)
        if (t->call.id == id)
            return t->obj.error ? t->obj.error : "";
    return "";
}

/* The node's part: worker w answers its oldest task in flight, which
 * ran run_us. */
static void answer_after(fake_worker *w, int status, const char *bytes, uint64_t run_us)
{
    ck_assert_uint_lt(w->answered, w->calls);
    size_t len = bytes ? strlen(bytes) + 1 : 0;
    rt__answer a = {.id = w->sent[w->answered++], .status = status, .len = len, .run_us = run_us};
    if (len) {
        a.result = rt__buf_alloc(len);
        memcpy(a.result, bytes, len);
    }
    f.node.ev.answered(f.node.ev.ctx, w->owner, &a);
}

static void answer(fake_worker *w, int status, const char *bytes)
{
    answer_after(w, status, bytes, 1);
}

/* The node's part: worker w is gone (SIGKILL), `started` of its tasks in
 * flight had started. */
static void lose(fake_worker *w, size_t started)
{
    rt__loss loss = {.pid = 4000 + w->id, .wait_status = SIGKILL, .started = started};
    void *owner = w->owner;
    w->gone = 1;
    w->owner = NULL;
    f.node.ev.lost(f.node.ev.ctx, owner, &loss);
}

/* ---- the contract ---------------------------------------------------------- */

/* The first task of a class, 100, answered: the class is timed from
 * then on, so that the tasks submitted after 100 (and before this) are
 * pipelined (a class never seen gets one task at a time). */
static fake_worker *warm_up(void)
{
    rt__dispatch_run(&d, 0);
    fake_worker *w = &f.w[f.nw - 1];
    answer(w, 0, NULL);
    ck_assert_int_eq(outcome(100), RT_OK);
    return w;
}

/* Tasks go out on a lease, one at a time while their class is new, their
 * answers become results in order, and the lease ends (its worker back to
 * the node) when nothing is left. */
START_TEST(answers_become_results_and_the_lease_ends)
{
    scene(1);
    submit(1, 3, 0, 0);
    submit(2, 3, 0, 0);
    rt__dispatch_run(&d, 0);
    ck_assert_int_eq(f.leases, 1);
    ck_assert_int_eq(f.sends, 1);
    fake_worker *w = &f.w[0];
    answer(w, 0, "one");
    ck_assert_int_eq(outcome(1), RT_OK);
    ck_assert_int_eq(outcome(2), -1);
    ck_assert_ptr_nonnull(w->owner); /* task 2 still to run */
    rt__dispatch_run(&d, 0);
    ck_assert_int_eq(f.sends, 2);
    ck_assert_int_eq(f.leases, 1);
    answer(w, 7, "two");
    ck_assert_int_eq(outcome(2), RT_ETASK);
    ck_assert_str_eq(d.out.done.tail->obj.result, "two"); /* the bytes of a failed task too */
    ck_assert_ptr_null(w->owner);
    ck_assert_int_eq(w->retired, 0);
    scene_end();
}
END_TEST

/* A death: the task that had started spends a retry and goes first on a
 * new worker; the one that had not started is sent again for free; with
 * no retry left the task fails, naming the worker and the signal. */
START_TEST(a_death_costs_the_started_task_a_retry)
{
    scene(1);
    submit(100, 0, 0, 0);
    submit(1, 1, 0, 0);
    submit(2, 0, 0, 0);
    fake_worker *first = warm_up();
    rt__dispatch_run(&d, 0);
    ck_assert_uint_eq(first->calls, 3);
    lose(first, 1); /* task 1 had started, task 2 not */
    ck_assert_int_eq(outcome(1), -1);
    ck_assert_int_eq(outcome(2), -1);
    rt__dispatch_run(&d, 0);
    fake_worker *w = &f.w[1];
    ck_assert_uint_eq(w->calls, 2);
    ck_assert_uint_eq(w->sent[0], 1); /* the retried first */
    ck_assert_uint_eq(w->sent[1], 2);
    lose(w, 2); /* both started: 1 has no retry left, nor has 2 */
    ck_assert_int_eq(outcome(1), RT_EWORKERDIED);
    ck_assert_int_eq(outcome(2), RT_EWORKERDIED);
    ck_assert_msg(strstr(message(1), "pid 4002") && strstr(message(1), "signal 9"), "%s",
                  message(1));
    scene_end();
}
END_TEST

/* Cancels: a queued task fails at once; a running one with "drop" fails
 * when its answer comes (the result dropped); with "kill" its worker is
 * killed and its loss fails it without a retry. */
START_TEST(cancels_end_tasks_as_asked)
{
    scene(1);
    submit(100, 0, 0, 0);
    rt__task *a = submit(1, 3, 0, 0), *b = submit(2, 3, 0, 0);
    submit(3, 3, 0, 0);
    fake_worker *w = warm_up();
    rt__dispatch_run(&d, 0);
    ck_assert_uint_eq(w->calls, 4); /* pipelined */
    a->run.cancelling = RT__CANCEL_DROP;
    rt__dispatch_cancel(&d, a);
    answer(w, 0, "dropped");
    ck_assert_int_eq(outcome(1), RT_ECANCELLED);
    ck_assert_ptr_null(d.out.done.head->obj.result);
    b->run.cancelling = RT__CANCEL_KILL;
    rt__dispatch_cancel(&d, b);
    ck_assert_int_eq(f.kills, 1);
    lose(w, 1);
    ck_assert_int_eq(outcome(2), RT_ECANCELLED);
    ck_assert_int_eq(outcome(3), -1); /* not started: sent again */
    rt__task *late = submit(4, 3, 0, 0);
    late->run.cancelling = RT__CANCEL_DROP;
    rt__dispatch_cancel(&d, late); /* still queued: at once */
    ck_assert_int_eq(outcome(4), RT_ECANCELLED);
    rt__dispatch_run(&d, 0);
    answer(&f.w[1], 0, NULL);
    ck_assert_int_eq(outcome(3), RT_OK);
    scene_end();
}
END_TEST

/* A time limit: from the round that sends the task, and while it has run
 * less, nothing happens and the dispatcher says when to look again (what
 * is left); past it, its worker is killed and the loss fails it with
 * RT_EKILLED, never retried. */
START_TEST(a_time_limit_kills_the_worker)
{
    scene(1);
    submit(1, 3, 0, 100);
    rt__dispatch_run(&d, 0);
    /* The round that sends it plans the look: no other event may come
     * before the task ends (a quiet runtime). */
    ck_assert_int_ge(d.check_ms, 100);
    ck_assert_int_le(d.check_ms, 101);
    fake_worker *w = &f.w[0];
    w->busy_us = 40000;
    rt__dispatch_run(&d, 0);
    ck_assert_int_eq(f.kills, 0);
    ck_assert_int_ge(d.check_ms, 60);
    ck_assert_int_le(d.check_ms, 61); /* exactly what is left: no polling */
    w->busy_us = 100000;
    rt__dispatch_run(&d, 0);
    ck_assert_int_eq(f.kills, 1);
    lose(w, 1);
    ck_assert_int_eq(outcome(1), RT_EKILLED);
    ck_assert_msg(strstr(message(1), "timeout_ms (100 ms)") != NULL, "%s", message(1));
    rt__dispatch_run(&d, 0);
    ck_assert_int_eq(d.check_ms, -1); /* nothing timed runs */
    scene_end();
}
END_TEST

/* max_calls: a worker retires after that many tasks, and the rest go to
 * a fresh one; max_calls 0 keeps reusing one worker across leases. */
START_TEST(max_calls_retires_workers)
{
    scene(1);
    for (uint64_t id = 1; id <= 3; id++)
        submit(id, 3, 1, 0);
    for (int i = 0; i < 3; i++) {
        rt__dispatch_run(&d, 0);
        ck_assert_int_eq(f.nw, i + 1);
        ck_assert_uint_eq(f.w[i].calls, 1);
        answer(&f.w[i], 0, NULL);
        ck_assert_int_eq(f.w[i].retired, 1);
    }
    for (uint64_t id = 4; id <= 6; id++) {
        submit(id, 3, 0, 0);
        rt__dispatch_run(&d, 0);
        answer(&f.w[3], 0, NULL);
    }
    ck_assert_int_eq(f.nw, 4); /* one worker, three leases */
    ck_assert_int_eq(f.w[3].retired, 0);
    for (uint64_t id = 1; id <= 6; id++)
        ck_assert_int_eq(outcome(id), RT_OK);
    scene_end();
}
END_TEST

/* A lease the node cannot give now (EAGAIN) leaves the task queued, and
 * it goes out once the node can; a lasting failure (no process can be
 * started) fails the task with the reason. */
START_TEST(refused_leases_wait_or_fail)
{
    scene(1);
    f.lease_errno = EAGAIN;
    submit(1, 3, 0, 0);
    rt__dispatch_run(&d, 0);
    ck_assert_int_eq(f.sends, 0);
    ck_assert_int_eq(outcome(1), -1);
    f.lease_errno = 0;
    rt__dispatch_run(&d, 0);
    ck_assert_int_eq(f.sends, 1);
    answer(&f.w[0], 0, NULL);
    ck_assert_int_eq(outcome(1), RT_OK);
    scene_end();
}
END_TEST

/* A node that answers a task it was not asked breaks the contract: its
 * worker is killed, and the task in flight ends with the loss. */
START_TEST(an_answer_to_another_task_kills_the_worker)
{
    scene(1);
    submit(1, 0, 0, 0);
    rt__dispatch_run(&d, 0);
    fake_worker *w = &f.w[0];
    rt__answer a = {.id = 99};
    f.node.ev.answered(f.node.ev.ctx, w->owner, &a);
    ck_assert_int_eq(f.kills, 1);
    ck_assert_int_eq(outcome(1), -1);
    lose(w, 1);
    ck_assert_int_eq(outcome(1), RT_EWORKERDIED);
    scene_end();
}
END_TEST

/* An actor whose process dies restarts on a new worker while it has
 * restarts: the call it held fails without running again, saying so;
 * the constructor runs again first, and later calls go to the new
 * process; with none left, calls fail with its epitaph. */
START_TEST(an_actor_restarts_then_dies)
{
    scene(1);
    rt__actor *a = calloc(1, sizeof *a + sizeof "counter");
    memcpy(a->name, "counter", sizeof "counter");
    a->handle = 50;
    a->restarts_left = 1;
    rt__task *create = NULL;
    ck_assert_int_eq(rt__task_new(RT__KIND_CREATE, (rt__any_fn)fake_fn, "counter", NULL, 0,
                                  NULL, 0, &create), 0);
    create->call.id = a->handle;
    create->call.cpu = RT__UNIT;
    create->call.actor = a;
    rt__tasks q = {0};
    rt__tasks_push(&q, create);
    rt__dispatch_absorb(&d, &q);
    rt__dispatch_run(&d, 0);
    fake_worker *first = &f.w[0];
    ck_assert_uint_eq(first->sent[0], 50);
    answer(first, 0, NULL); /* constructed */
    rt__task *call = NULL;
    ck_assert_int_eq(rt__task_new(RT__KIND_CALL, (rt__any_fn)fake_fn, NULL, NULL, 0, NULL, 0,
                                  &call), 0);
    call->call.id = call->call.seq = 51;
    call->call.actor = a;
    rt__tasks_push(&q, call);
    rt__dispatch_absorb(&d, &q);
    rt__dispatch_run(&d, 0);
    ck_assert_uint_eq(first->sent[1], 51);
    lose(first, 1); /* the call had started */
    ck_assert_int_eq(outcome(51), RT_EACTORDIED);
    ck_assert_msg(strstr(message(51), "restarts (0 restarts left") != NULL, "%s", message(51));
    rt__dispatch_run(&d, 0);
    fake_worker *second = &f.w[1];
    ck_assert_uint_eq(second->sent[0], 50); /* the constructor again, first */
    answer(second, 0, NULL);
    lose(second, 0); /* no restart left: dead */
    ck_assert_int_eq(a->death, RT__DEATH_CRASHED);
    ck_assert_msg(strstr(a->epitaph, "the actor counter (pid 4002) died") != NULL, "%s",
                  a->epitaph);
    ck_assert_ptr_eq(d.out.buried, a);
    d.out.buried = NULL; /* the runtime would publish it; the scene frees it */
    d.out.declared = NULL;
    scene_end();
}
END_TEST

/* A graph's task filed early goes out in any pass that finds room for
 * it, behind a task that was ready first in its line (it once waited
 * for the next round, a round trip per task of a chain). */
START_TEST(an_early_task_goes_out_behind_a_ready_one)
{
    scene(1);
    submit(100, 0, 0, 0);
    rt__dispatch_run(&d, 0); /* its class is new: 100 goes alone */
    fake_worker *w = &f.w[0];
    rt__task *p = submit(101, 0, 0, 0);
    submit(102, 0, 0, 0);
    rt__task *q = submit(103, 0, 0, 0);
    submit_taking(104, p);
    submit_taking(105, q);
    answer_after(w, 0, NULL, 666); /* 100: 3 such tasks are 2 ms, the window */
    rt__dispatch_run(&d, 0);
    ck_assert_uint_eq(w->calls, 4); /* 101 to 103: no room for 104 and 105, filed early */
    answer_after(w, 0, NULL, 666); /* 101: 104 is ready now, first in line */
    answer_after(w, 0, NULL, 666); /* 102 */
    rt__dispatch_run(&d, 0);
    ck_assert_uint_eq(w->calls, 6);
    ck_assert_uint_eq(w->sent[4], 104);
    ck_assert_uint_eq(w->sent[5], 105); /* early: 103 is still in flight */
    ck_assert_uint_ne(q->run.board_seq, 0);
    scene_end();
}
END_TEST

Suite *node_suite(void)
{
    Suite *s = suite_create("node");
    TCase *tc = tcase_create("contract");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, answers_become_results_and_the_lease_ends);
    tcase_add_test(tc, a_death_costs_the_started_task_a_retry);
    tcase_add_test(tc, cancels_end_tasks_as_asked);
    tcase_add_test(tc, a_time_limit_kills_the_worker);
    tcase_add_test(tc, max_calls_retires_workers);
    tcase_add_test(tc, refused_leases_wait_or_fail);
    tcase_add_test(tc, an_answer_to_another_task_kills_the_worker);
    tcase_add_test(tc, an_actor_restarts_then_dies);
    tcase_add_test(tc, an_early_task_goes_out_behind_a_ready_one);
    suite_add_tcase(s, tc);
    return s;
}

/* dispatch.c - leases, sends, answers, losses; the lives of actors are
 * actors.c's (lives.h between them). */
#include "dispatch.h"

#include "lives.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/linger.h"
#include "base/shm.h"
#include "sched/scheduler.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

rt__node *rt__dispatch_node_of(const rt__dispatch *d, const rt__lease *l)
{
    return d->node[l->grant.node];
}

/* The time a timeline's records of this round say, read once a round: a
 * clock read per task cost as much as the rest of its record. */
static uint64_t timeline_now(rt__dispatch *d)
{
    if (!d->timeline_ns)
        d->timeline_ns = rt__now_ns();
    return d->timeline_ns;
}

/* Take t off a list of tasks (of n) where it may be. */
static void unlist(rt__task **list, size_t *n, const rt__task *t)
{
    for (size_t i = 0; i < *n; i++)
        if (list[i] == t) {
            memmove(list + i, list + i + 1, (*n - i - 1) * sizeof *list);
            (*n)--;
            return;
        }
}

/* t's run ended: it no longer waits to go on. */
static void forget_resume(rt__dispatch *d, rt__task *t)
{
    if (t->run.resuming) {
        unlist(d->resuming, &d->nresuming, t);
        unlist(d->out.resumed, &d->out.nresumed, t);
        t->run.resuming = 0;
    }
}

void rt__dispatch_finish(rt__dispatch *d, rt__task *t, int status)
{
    forget_resume(d, t);
    if (t->run.early && rt__task_deps(t))
        rt__graph_detach(t); /* filed early, it ends before its objects */
    t->run.early = 0;
    t->obj.status = status;
    t->run.cls = NULL; /* its class may go: only tasks queued or in flight have one */
    rt__tasks parts = {0};
    if (rt__task_parts(t) || t->run.packed)
        rt__task_end_parts(t, &parts); /* several results: each its own object */
    rt__tasks_push(&d->out.done, t);
    rt__graph_ended(&d->graph, t);
    for (rt__task *p; (p = rt__tasks_pop(&parts));) {
        rt__tasks_push(&d->out.done, p);
        rt__graph_ended(&d->graph, p);
    }
}

/* ---- leases ------------------------------------------------------------- */

/* The lease is over; its worker goes back to its node, which keeps it for
 * another lease unless it spent its max_calls. */
static void end_lease(rt__dispatch *d, rt__lease *l)
{
    rt__dispatch_node_of(d, l)->ops->release(rt__dispatch_node_of(d, l), l->worker, l->budget == 0);
    rt__sched_unlease(&d->sched, l);
}

/* What l holds, in buffers of the round holder's, valid until the next
 * call. */
static rt__devices describe(rt__dispatch *d, const rt__lease *l)
{
    static char gpus[RT__INSTANCE_MAX * RT__ID_LEN], accel[sizeof gpus],
        cpus[sizeof gpus], memory[sizeof gpus];
    rt__sched_describe(&d->sched, &l->grant, gpus, accel, cpus, memory);
    return (rt__devices){gpus, accel, cpus, l->grant.gpu.each, memory, "", ""};
}

static int tell_devices(rt__dispatch *d, rt__lease *l)
{
    rt__devices dev = describe(d, l);
    return rt__dispatch_node_of(d, l)->ops->devices(rt__dispatch_node_of(d, l), l->worker, &dev);
}

/* Limits that waiting will not lift: descriptors, processes. */
static int lasting(int err)
{
    return err == EMFILE || err == ENFILE;
}


/* A class whose worker cannot be started (and no other worker can take
 * its tasks) fails, with the reason, rather than wait for a limit that
 * will not change: an actor dies, a task class's pending tasks fail. */
static void cannot_start(rt__dispatch *d, rt__class *c, int err)
{
    rt__actor *a = c->owner;
    if (a) {
        a->ctor_status = err;
        rt__actors_set_death(d, a, RT__DEATH_NOSTART);
        rt__actors_bury(d, a);
        return;
    }
    for (rt__task *t; (t = rt__sched_pop(&d->sched, c));) {
        rt__task_fail(t, RT_ESYS, "no worker could be started for the task: %s%s",
                      strerror(err), err == EMFILE ? " (raise the descriptor limit, "
                                                     "ulimit -n)" : "");
        rt__dispatch_finish(d, t, RT_ESYS);
    }
    rt__sched_release_class(&d->sched, c);
}

/* A lease of c on g, with a worker of the node g names.  0 when it could
 * not be had now (the next round tries again). */
static int grant(rt__dispatch *d, rt__class *c, const rt__grant *g)
{
    rt__node *n = d->node[g->node];
    rt__lease *l = rt__sched_lease(&d->sched, c, g);
    size_t calls;
    if (!l) {
        d->retry_soon = 1;
        return 0;
    }
    errno = 0;
    rt__worker *w = n->ops->lease(n, c->owner != NULL, c->max_calls, c->req.cpu, l, &calls);
    if (!w) {
        int err = errno;
        rt__sched_unlease(&d->sched, l);
        if (lasting(err))
            cannot_start(d, c, err);
        else
            d->retry_soon |= err != EAGAIN;
        return 0;
    }
    rt__sched_bind(l, w, calls);
    if (c->owner)
        d->running_actors++;
    if (tell_devices(d, l) < 0) {
        end_lease(d, l); /* out of memory */
        d->retry_soon = 1;
        return 0;
    }
    return 1;
}

/* Grant leases, one decision at a time.  When a class is blocked, the
 * leases of younger classes that sit idle between tasks are ended once to
 * make room for it. */
static void grant_leases(rt__dispatch *d)
{
    int reclaimed = 0;
    for (;;) {
        rt__grant g;
        rt__class *c = rt__sched_decide(&d->sched, &g);
        if (!c && d->sched.blocked && !reclaimed) {
            for (rt__lease *l; (l = rt__sched_reclaimable(&d->sched));)
                end_lease(d, l);
            reclaimed = 1;
            continue;
        }
        if (!c || !grant(d, c, &g))
            return;
    }
}

/* ---- sending -------------------------------------------------------------- */

/* t leaves its worker (answered, lost, taken back): its board entry goes
 * back, voided if it never posted on it. */
static void give_back(rt__dispatch *d, const rt__lease *l, rt__task *t)
{
    if (!t->run.board_seq)
        return;
    rt__node *n = rt__dispatch_node_of(d, l);
    n->ops->board_give_back(n, t->run.board_seq);
    t->run.board_seq = 0;
}

/* A task that others wait for posts its result on the node's board, so
 * that they may be sent now and take it there (board.h); not one of
 * several results, which are one object each only once split. */
static void claim_board(rt__dispatch *d, rt__node *n, rt__worker *w, rt__task *t)
{
    if (t->run.waiters && t->call.kind == RT__KIND_TASK && !rt__task_parts(t) && n->ops->board_claim &&
        d->sched.nnodes == 1)
        t->run.board_seq = n->ops->board_claim(n, w);
}

static void send_task(rt__dispatch *d, rt__lease *l, rt__task *t, uint64_t now)
{
    rt__node *n = rt__dispatch_node_of(d, l);
    rt__actor_spec spec = {0};
    if (t->run.early && t->obj.status != RT_OK) { /* failed along the graph meanwhile */
        rt__dispatch_finish(d, t, t->obj.status);
        return;
    }
    claim_board(d, n, l->worker, t);
    if (t->call.kind == RT__KIND_CREATE)
        spec = (rt__actor_spec){t->call.actor->handle, (uint64_t)(uintptr_t)t->call.actor->fini,
                                (uint64_t)t->call.actor->concurrency};
    if (n->ops->send(n, l->worker, t, t->call.kind == RT__KIND_CREATE ? &spec : NULL) < 0) {
        give_back(d, l, t);
        rt__task_fail(t, RT_ENOMEM, "no memory to send the task");
        if (t->call.kind == RT__KIND_CREATE) {
            rt__sched_push_front(&d->sched, t->run.cls, t); /* the actor keeps it */
            d->retry_soon = 1;
        } else
            rt__dispatch_finish(d, t, RT_ENOMEM);
        return;
    }
    rt__sched_sent(l, t, now);
    if (rt__task_timeout_ms(t) && rt__timeouts_add(&d->timeouts, t, l) < 0)
        rt__warn("no memory to watch a task's timeout_ms: it runs without its limit");
    if (t->run.board_seq && d->sched.nnodes == 1)
        rt__graph_sent(&d->graph, t);
}

/* Have the runtime run a round within ms (check_ms). */
static void look_again_in(rt__dispatch *d, uint64_t ms)
{
    int within = ms > INT_MAX ? INT_MAX : (int)ms;
    if (d->check_ms < 0 || within < d->check_ms)
        d->check_ms = within;
}

/* Kill the workers of tasks that ran past their limit (their loss fails
 * them with RT_EKILLED), and say when to look again. */
static void expire(rt__dispatch *d, uint64_t now)
{
    for (size_t i = 0; i < d->timeouts.n; i++) {
        rt__task *t = d->timeouts.v[i].task;
        rt__lease *l = d->timeouts.v[i].lease;
        uint64_t limit_us = (uint64_t)rt__task_timeout_ms(t) * 1000, ran_us = 0;
        if (l->inflight.head == t && !t->run.cancelling)
            ran_us = rt__dispatch_node_of(d, l)->ops->busy_us(rt__dispatch_node_of(d, l), l->worker, now);
        if (ran_us >= limit_us) {
            t->run.cancelling = RT__CANCEL_TIMEOUT;
            rt__dispatch_node_of(d, l)->ops->kill(rt__dispatch_node_of(d, l), l->worker);
            continue;
        }
        /* Look again when it could pass its limit at the soonest: when
         * what it has left has passed if it runs (it is then exact on
         * this machine); a whole limit from now if it waits in its worker
         * (a round comes sooner anyway when the task before it answers). */
        look_again_in(d, (limit_us - ran_us) / 1000 + 1);
    }
}

static int takes_turns(const rt__dispatch *d, const rt__lease *l, uint64_t now)
{
    rt__node *n = rt__dispatch_node_of(d, l);
    return rt__sched_takes_turns(l, n->ops->busy_us(n, l->worker, now));
}

/* Whether every lease of c that takes turns has room for one more task
 * filed early (scheduler.h). */
static int all_have_room(const rt__dispatch *d, const rt__class *c, uint64_t now)
{
    for (const rt__lease *l = rt__sched_first_lease(c); l; l = rt__sched_next_lease(c, l))
        if (takes_turns(d, l, now) && !rt__sched_room(l))
            return 0;
    return 1;
}

/* Give each lease of c its share, and end those left with nothing.  A
 * graph's tasks filed early wait at the head of the line for a turn: one
 * to each lease that takes turns, once all have room (the round passes
 * again for the next).  One that comes to the head in a pass, behind
 * ready tasks the pass sent, has its turn in the next pass: it once
 * waited for the next round, and a chain of quick tasks whose rounds each
 * began with a ready task went a link per round trip through the
 * runtime.  Given its turn in the same pass instead, it went before the
 * ready tasks of the leases after (Task Bench's stencil at 100 us tasks:
 * 93 % against 97 %). */
static void feed_class(rt__dispatch *d, rt__class *c, uint64_t now)
{
    int in_turn = c->pending.head && c->pending.head->run.early && all_have_room(d, c, now);
    int sent = 0;
    for (rt__lease *l = rt__sched_first_lease(c), *next; l; l = next) {
        next = rt__sched_next_lease(c, l);
        rt__node *n = rt__dispatch_node_of(d, l);
        size_t share = rt__sched_share(l, n->ops->busy_us(n, l->worker, now), now);
        for (rt__task *t; (t = c->pending.head);) {
            if (t->run.early) {
                if (in_turn && takes_turns(d, l, now)) {
                    send_task(d, l, rt__sched_pop(&d->sched, c), now);
                    d->filed_early = 1; /* another pass for the next */
                } else if (!in_turn && sent) {
                    d->filed_early = 1; /* it came to the head in this pass */
                }
                break;
            }
            if (!share--)
                break;
            send_task(d, l, rt__sched_pop(&d->sched, c), now);
            sent = 1;
        }
        if (rt__sched_lease_idle(l))
            end_lease(d, l); /* may free c when it was its last lease */
        if (!next)
            return;
    }
}

static void feed(rt__dispatch *d)
{
    uint64_t now = rt__now_ns();
    for (rt__class *c = rt__sched_feedable(&d->sched), *next; c; c = next) {
        next = rt__sched_next_feedable(&d->sched, c);
        if (rt__sched_may_feed(&d->sched, c))
            feed_class(d, c, now);
    }
}

/* A caller waits on its worker only for tasks this quick, and for at
 * most a few times their usual run time: never long on the round. */
#define AWAIT_MAX_US 200.0
#define AWAIT_SLACK_US 500.0

int rt__dispatch_await(rt__dispatch *d, rt__task *t)
{
    rt__class *c = t->run.cls;
    /* A class seen for the first time (classes go when they empty) gets
     * the slack alone: a long task costs the caller that much, once. */
    if (!c || (c->timed && c->run_us > AWAIT_MAX_US) || c->pending.count)
        return 0;
    for (rt__lease *l = rt__sched_first_lease(c); l; l = rt__sched_next_lease(c, l)) {
        if (l->inflight.head != t)
            continue;
        rt__node *n = rt__dispatch_node_of(d, l);
        int timeout_us = (int)(4 * (c->timed ? c->run_us : 0) + AWAIT_SLACK_US);
        return n->ops->await && n->ops->await(n, l->worker, timeout_us);
    }
    return 0;
}

void rt__dispatch_flush(rt__dispatch *d, int caller_waits)
{
    d->timeline_ns = 0; /* the round ends: the next reads the clock again */
    for (int i = 0; i < d->sched.nnodes; i++)
        d->node[i]->ops->flush(d->node[i], caller_waits);
}

static int resume(rt__dispatch *d); /* tasks that wait for others, below */
static void steal_when_due(rt__dispatch *d); /* with the answers, below */

void rt__dispatch_run(rt__dispatch *d, int caller_waits)
{
    d->retry_soon = 0;
    d->check_ms = -1;
    if (d->unhealthy)
        rt__health_fail_never(d);
    if (!rt__list_empty(&d->sched.unplaced))
        rt__sched_place_groups(&d->sched, &d->out.placed);
    steal_when_due(d);
    /* Tasks filed early while feeding (their objects just sent) may need
     * leases of their own: another pass, while that files more. */
    for (int pass = 0; pass < 64; pass++) {
        d->filed_early = 0;
        if (!d->nresuming || !resume(d))
            grant_leases(d);
        feed(d);
        if (!d->filed_early)
            break;
    }
    /* After feeding: a task this round sent is looked at again in time
     * even when no other event comes before it ends. */
    if (d->timeouts.n)
        expire(d, rt__now_ns());
    rt__dispatch_flush(d, caller_waits);
}

/* ---- absorbing submissions ---------------------------------------------- */

/* A task cancelled (sent: while it ran), killed at its time limit, or
 * whose placement group was removed: its outcome, whatever the worker
 * did. */
static void fail_cancelled(rt__dispatch *d, rt__task *t, int sent)
{
    if (t->run.cancelling == RT__CANCEL_TIMEOUT) {
        rt__task_fail(t, RT_EKILLED, "the task ran longer than its timeout_ms (%u ms): "
                      "its worker was killed", rt__task_timeout_ms(t));
        rt__dispatch_finish(d, t, RT_EKILLED);
        return;
    }
    if (t->run.cancelling == RT__CANCEL_MEMORY) {
        rt__task_fail(t, RT_EKILLED, "the task held more GPU memory than its share "
                      "(rt_config.gpu_memory_kill): its worker was killed");
        rt__dispatch_finish(d, t, RT_EKILLED);
        return;
    }
    const char *why = t->run.cancelling == RT__CANCEL_GROUP ? "its placement group was removed"
                      : !sent ? "rt_cancel: cancelled before it ran"
                      : t->run.cancelling == RT__CANCEL_KILL
                          ? "rt_cancel: its worker was killed"
                          : "rt_cancel: it ran to its end; its result was dropped";
    rt__task_fail(t, RT_ECANCELLED, "%s", why);
    rt__dispatch_finish(d, t, RT_ECANCELLED);
}

void rt__dispatch_file(rt__dispatch *d, rt__task *t)
{
    if (t->call.kind == RT__KIND_CALL) {
        rt__actors_release_held(d, t->call.actor);
        return;
    }
    if (t->obj.status != RT_OK || rt__remote_lost(t)) {
        rt__dispatch_finish(d, t, t->obj.status);
        return;
    }
    rt__res req;
    rt__task_request(t, &req);
    if (req.group && !rt__sched_group(&d->sched, req.group)) {
        t->run.cancelling = RT__CANCEL_GROUP;
        fail_cancelled(d, t, 0);
        return;
    }
    if (rt__remote_place(d, t, &req))
        return; /* filed again once its objects are here */
    rt__class *c = rt__sched_class(&d->sched, &req, t->call.max_calls);
    if (!c) {
        rt__task_fail(t, RT_ENOMEM, "no memory for a scheduling class");
        rt__dispatch_finish(d, t, RT_ENOMEM);
        return;
    }
    if (t->call.nested)
        rt__sched_push_front(&d->sched, c, t);
    else
        rt__sched_push(&d->sched, c, t);
}

/* A new record: an actor's constructor, a call, or a task, which waits
 * first for the objects it takes. */
static void absorb_one(rt__dispatch *d, rt__task *t)
{
    if (t->call.kind == RT__KIND_CREATE) {
        rt__actors_absorb(d, t);
        return;
    }
    int waits = t->call.args_form == RT__ARGS_LIST ? rt__graph_wait(t) : 0;
    if (t->call.kind == RT__KIND_CALL)
        rt__actors_absorb_call(d, t);
    else if (waits <= 0)
        rt__dispatch_file(d, t);
    else if (d->sched.nnodes == 1)
        rt__graph_try_early(&d->graph, t);
}

/* A timeline's queued time is when the round took the task in. */
void rt__dispatch_absorb(rt__dispatch *d, rt__tasks *incoming)
{
    uint64_t now = d->timeline && incoming->count ? timeline_now(d) : 0;
    for (rt__task *t; (t = rt__tasks_pop(incoming));) {
        t->run.queued_ns = now;
        absorb_one(d, t);
    }
}

/* ---- tasks that wait for others --------------------------------------------- */

/* The last n tasks in flight on l will never run there: they go back in
 * line, first. */
static void take_back(rt__dispatch *d, rt__lease *l, size_t n)
{
    rt__tasks q = {0};
    rt__sched_take_back(l, n, &q);
    for (rt__task *b = q.head; b; b = b->next) {
        rt__timeouts_remove(&d->timeouts, b);
        give_back(d, l, b);
    }
    rt__sched_requeue(&d->sched, l->cls, &q);
}

/* l's running task t waits for others, or goes on (t NULL). */
static void lend_lease(rt__dispatch *d, rt__lease *l, const rt__task *t)
{
    rt__node *n = rt__dispatch_node_of(d, l);
    if (!n->ops->lend)
        return;
    /* A task past the node's limit of waiting workers lends its CPUs all
     * the same, with no worker in its place (idle ones take the work):
     * else such tasks could hold every CPU while what they wait for gets
     * none. */
    long back = n->ops->lend(n, l->worker, t != NULL);
    rt__sched_lend(&d->sched, l, t);
    if (back > 0)
        take_back(d, l, (size_t)back);
}

/* Append t to a list; 0, or -1 without memory. */
static int list_add(rt__task ***list, size_t *n, size_t *cap, rt__task *t)
{
    if (*n == *cap) {
        size_t grown = *cap ? *cap * 2 : 16;
        rt__task **p = rt__realloc(*list, grown * sizeof *p);
        if (!p)
            return -1;
        *list = p;
        *cap = grown;
    }
    (*list)[(*n)++] = t;
    return 0;
}

/* t has its CPUs back (or never lent them): its caller may go on. */
static void resumed(rt__dispatch *d, rt__task *t)
{
    if (list_add(&d->out.resumed, &d->out.nresumed, &d->out.cap_resumed, t) < 0) {
        rt__warn("no memory to let a waiting task go on: it waits for its end");
        return;
    }
    t->run.resuming = 1;
}

/* Tasks wait this long for their CPUs back, then take them anyway. */
#define RESUME_WAIT_NS 10000000ull

/* Give the tasks that wait for their CPUs back what the nodes have free,
 * in order.  1 while some still wait: no new lease may take CPUs then.
 * When none could go on for RESUME_WAIT_NS, all go, leaving the node
 * short for a while (as Ray does): the CPUs they wait for may be held by
 * tasks that wait too, for tasks that no lease can take while these wait
 * (tasks that could not lend theirs, past the node's limit: node.h). */
static int resume(rt__dispatch *d)
{
    uint64_t now = rt__now_ns();
    if (!d->resume_since_ns)
        d->resume_since_ns = now;
    int anyway = now - d->resume_since_ns > RESUME_WAIT_NS;
    size_t kept = 0;
    for (size_t i = 0; i < d->nresuming; i++) {
        rt__task *t = d->resuming[i];
        rt__lease *l = rt__sched_lease_of(t->run.cls, t);
        if (l && l->lent_by == t && !anyway &&
            rt__sched_pool(&d->sched, l->cls, &l->grant, 0)->res.cpu < l->cls->req.cpu) {
            d->resuming[kept++] = t;
            continue;
        }
        if (l && l->lent_by == t)
            lend_lease(d, l, NULL);
        t->run.resuming = 0;
        resumed(d, t);
    }
    if (kept < d->nresuming || !kept)
        d->resume_since_ns = kept ? now : 0; /* some went on: wait afresh */
    d->nresuming = kept;
    if (kept)
        look_again_in(d, RESUME_WAIT_NS / 1000000 + 1);
    return kept > 0;
}

void rt__dispatch_lend(rt__dispatch *d, rt__task *t, int lend, rt__task *awaited,
                       unsigned run)
{
    if (run != rt__task_attempt(t))
        return;
    /* t may be in flight behind a task whose answer is on its way. */
    rt__lease *l = t->call.kind == RT__KIND_TASK && t->run.cls ? rt__sched_lease_of(t->run.cls, t) : NULL;
    if (!lend) {
        if (l && l->lent_by == t &&
            list_add(&d->resuming, &d->nresuming, &d->cap_resuming, t) == 0)
            t->run.resuming = 1;
        else
            resumed(d, t);
        return;
    }
    if (!l || l->lent_by)
        return;
    lend_lease(d, l, t);
    /* What it waits for runs next where it waits in its class's queue, as
     * a work-first scheduler runs a waiting task's own child: the waiting
     * tasks then stay one chain per CPU, not a tree. */
    if (awaited && awaited->run.cls && awaited->call.kind == RT__KIND_TASK &&
        rt__sched_withdraw(&d->sched, awaited->run.cls, awaited))
        rt__sched_push_front(&d->sched, awaited->run.cls, awaited);
}

/* Whether awaited can run in l's worker, inside the wait of the task
 * that runs there: a task of l's class (what the lease holds is what it
 * needs), with one argument of bytes, no time limit (which would kill
 * the task it runs inside) and a call left of max_calls. */
static int fits_inside(const rt__lease *l, const rt__task *awaited)
{
    return awaited && awaited->run.cls == l->cls && awaited->call.kind == RT__KIND_TASK &&
           awaited->call.args_form != RT__ARGS_LIST && awaited->call.arg_fd < 0 &&
           !rt__task_timeout_ms(awaited) && !awaited->run.cancelling && l->budget;
}

/* Give awaited, queued or sent to a worker that has not started it (l's,
 * behind its running task, or another's, often one still starting), to
 * l's worker to run inside the wait of its task `waiting`.  Whether it
 * was. */
static int give_inside(rt__dispatch *d, rt__lease *l, const rt__task *waiting,
                       rt__task *awaited)
{
    rt__node *n = rt__dispatch_node_of(d, l);
    if (!n->ops->take_back || !fits_inside(l, awaited))
        return 0;
    rt__lease *at = rt__sched_lease_of(l->cls, awaited);
    rt__node *m = at ? rt__dispatch_node_of(d, at) : NULL;
    if (at && m->ops->take_back) { /* back in line, unless it started */
        long back = m->ops->take_back(m, at->worker);
        if (back > 0)
            take_back(d, at, (size_t)back);
        if (at != l && rt__sched_lease_idle(at))
            end_lease(d, at);
    }
    if (!rt__sched_withdraw(&d->sched, l->cls, awaited))
        return 0; /* it runs, or is not filed yet */
    n->ops->given_inside(n, l->worker);
    rt__sched_sent_inside(l, awaited, waiting);
    return 1;
}

int rt__dispatch_lend_or_give(rt__dispatch *d, rt__task *t, rt__task *awaited, unsigned run,
                              uint64_t lane)
{
    rt__lease *l = run == rt__task_attempt(t) && t->call.kind == RT__KIND_TASK && t->run.cls
                       ? rt__sched_lease_of(t->run.cls, t) : NULL;
    rt__node *n = l ? rt__dispatch_node_of(d, l) : NULL;
    if (l && !l->lent_by && n->ops->lane(n, l->worker) == lane && give_inside(d, l, t, awaited))
        return 1;
    rt__dispatch_lend(d, t, 1, awaited, run);
    return 0;
}

/* ---- cancels --------------------------------------------------------------- */

/* A task that waits (for objects, or behind an actor's earlier calls)
 * never runs. */
static void cancel_waiting(rt__dispatch *d, rt__task *t)
{
    rt__task_fail(t, RT_ECANCELLED, "rt_cancel: cancelled before it ran");
    if (t->run.parked)
        rt__remote_unpark_one(d, t);
    if (rt__task_deps(t))
        rt__graph_detach(t);
    rt__dispatch_file(d, t);
}

void rt__dispatch_cancel(rt__dispatch *d, rt__task *t)
{
    rt__class *c = t->run.cls;
    if (!c) {
        if (!t->run.ended && t->obj.status == RT_OK)
            cancel_waiting(d, t);
        return; /* else finished, waiting to be published */
    }
    if (rt__sched_withdraw(&d->sched, c, t)) {
        fail_cancelled(d, t, 0);
        if (!c->owner)
            rt__sched_release_class(&d->sched, c);
        return;
    }
    rt__lease *l = rt__sched_lease_of(c, t);
    rt__node *n = l ? rt__dispatch_node_of(d, l) : NULL;
    if (l)
        give_back(d, l, t); /* what it has not posted is never taken */
    if (l && t->run.cancelling >= RT__CANCEL_KILL && t->call.kind == RT__KIND_TASK)
        n->ops->kill(n, l->worker); /* lost: on_lost() */
    else if (l && n->ops->ask_stop)
        n->ops->ask_stop(n, l->worker, t->call.id); /* it may stop itself (rt_cancelled()) */
}


/* ---- what nodes report ---------------------------------------------------- */

/* A task's answer: its result kept, or it fails, or (retry_exceptions)
 * it is filed again.  What this run came to: RT_OK or an error code. */
static int take_result(rt__dispatch *d, const rt__lease *l, rt__task *t, rt__answer *r)
{
    char why[160];
    int rc = rt__answer_outcome(r, why, sizeof why);
    if (rc != RT_OK && rc != RT_ETASK) {
        rt__answer_drop(r);
        rt__task_fail(t, rc, "%s", why);
        rt__dispatch_finish(d, t, rc);
        return rc;
    }
    if (r->status && t->call.retry_exceptions && t->run.retries_left > 0) {
        rt__remote_drop(d, l, t, r); /* as Ray: the failed run's result is not kept */
        t->run.retries_left--;
        rt__task_count_run(&t->run.runs_failed);
        rt__dispatch_file(d, t);
        return RT_ETASK; /* this run's outcome, though the task goes on */
    }
    t->obj.task_status = r->status;
    t->obj.result = r->result;
    t->obj.result_len = r->len;
    t->run.packed = (unsigned char)r->packed;
    r->result = NULL; /* the task's now */
    if (r->held)
        rt__remote_adopt(d, l, t, r);
    if (rc == RT_ETASK)
        rt__task_fail(t, RT_ETASK, "%s", why);
    rt__dispatch_finish(d, t, rc);
    return rc;
}

/* The texts that name t's actor in the timeline, kept once per actor;
 * 0 for a task (a call's name is its method's). */
static uint32_t actor_texts(rt__dispatch *d, const rt__task *t)
{
    rt__actor *a = t->call.actor;
    if (a && !a->timeline_texts)
        a->timeline_texts = rt__timeline_actor(d->timeline, a->name, a->handle);
    return a ? a->timeline_texts : 0;
}

/* Record how t's run on l ended, when a timeline is kept: after ran_us,
 * or lost with its worker (a death, marked where it happened).  Its end
 * is when the round read its answer. */
/* s into the timeline, or a warning that it is not. */
static void keep_span(rt__dispatch *d, const rt__span *s, const char *name,
                      const rt__devices *dev)
{
    if (rt__timeline_add(d->timeline, s, name, dev ? dev->gpus : NULL,
                         dev ? dev->accel : NULL) < 0)
        rt__warn("no memory to record a task in the timeline: it is left out");
}

static void record(rt__dispatch *d, const rt__lease *l, const rt__task *t, uint64_t ran_us,
                   int status, unsigned attempt)
{
    uint64_t now = timeline_now(d);
    rt__span s = {.id = t->call.id, .fn = (const void *)t->call.fn, .node = l->grant.node,
                  .gpu_peak = l->gpu_peak,
                  .lane = rt__dispatch_node_of(d, l)->ops->lane(rt__dispatch_node_of(d, l), l->worker),
                  .queued_ns = t->run.queued_ns, .started_ns = now - ran_us * 1000,
                  .ended_ns = now, .status = status,
                  .retries = (int)attempt, .call = t->call.kind == RT__KIND_CALL,
                  .actor = actor_texts(d, t),
                  .gpu_share = (float)l->grant.gpu.each / RT__UNIT,
                  .accel_share = (float)l->grant.accel.each / RT__UNIT};
    rt__devices dev = {0};
    if (l->grant.gpu.each || l->grant.accel.each) /* a CPU task's devices are none */
        dev = describe(d, l);
    keep_span(d, &s, rt__task_named(t), &dev);
}

void rt__dispatch_record_elsewhere(rt__dispatch *d, rt__span *s, uint64_t waited_us,
                                   uint64_t ran_us)
{
    if (!d->timeline)
        return;
    s->ended_ns = timeline_now(d);
    s->started_ns = s->ended_ns - ran_us * 1000;
    s->queued_ns = s->started_ns - waited_us * 1000;
    keep_span(d, s, NULL, NULL);
}

/* Whether more answers of c's quick tasks are about to come: the round's
 * holder then lingers before it sleeps (linger.h). */
static int answers_soon(const rt__class *c)
{
    return c->run_us * 1000 < (double)RT__LINGER_NS && (c->inflight || c->pending.count);
}

int rt__dispatch_answers_soon(rt__dispatch *d)
{
    int soon = d->answers_soon;
    d->answers_soon = 0;
    return soon;
}

/* t's worker did not run it (bounced): a board entry it takes was not
 * there.  It waits for its objects as any task, never early again: a
 * producer whose result does not fit would bounce it again and again
 * until its answer came.  Its objects may have ended meanwhile, or one
 * failed. */
static void not_run(rt__dispatch *d, rt__task *t)
{
    t->run.bounced = 1;
    t->run.early = 0;
    if (t->obj.status != RT_OK)
        rt__dispatch_finish(d, t, t->obj.status);
    else if (!rt__task_deps(t))
        rt__dispatch_file(d, t);
}

/* Take back the tasks queued behind o's running task when that task has
 * run far longer than its class's usually do (stalled: they would wait
 * there while other workers idle); when it has not yet, note when it
 * will have (steal_at_ns), to look again then.  1 when some came back. */
static int steal_from(rt__dispatch *d, rt__lease *o, uint64_t now)
{
    rt__node *n = rt__dispatch_node_of(d, o);
    if (o->inflight.count < 2 || o->lent_by || o->inside || !n->ops->take_back)
        return 0;
    uint64_t left_us = rt__sched_stalls_in_us(o, n->ops->busy_us(n, o->worker, now), now);
    if (left_us) {
        uint64_t at = now + left_us * 1000;
        if (!d->steal_at_ns || at < d->steal_at_ns)
            d->steal_at_ns = at;
        look_again_in(d, left_us / 1000 + 1);
        return 0;
    }
    long back = n->ops->take_back(n, o->worker);
    if (back <= 0)
        return 0;
    take_back(d, o, (size_t)back);
    return 1;
}

/* l has nothing left to do: what waits behind a stalled task of its class
 * in another worker comes back for it, now or when that task stalls (a
 * worker that ran out of work just before would else never look again,
 * and a quick task waited out a long one; its lease ends meanwhile). */
static void steal_for(rt__dispatch *d, const rt__lease *l)
{
    uint64_t now = rt__now_ns();
    for (rt__lease *o = rt__sched_first_lease(l->cls); o; o = rt__sched_next_lease(l->cls, o))
        if (o != l && steal_from(d, o, now))
            return;
}

/* The time noted by steal_from() has come: whatever is stalled by now
 * gives back its queue (the CPUs of the leases that ran out of work are
 * free for it). */
static void steal_when_due(rt__dispatch *d)
{
    uint64_t now = rt__now_ns();
    if (d->steal_at_ns > now)
        look_again_in(d, (d->steal_at_ns - now) / 1000000 + 1);
    if (!d->steal_at_ns || d->steal_at_ns > now)
        return;
    d->steal_at_ns = 0;
    for (rt__class *c = rt__sched_first_class(&d->sched); c; c = rt__sched_next_class(&d->sched, c))
        for (rt__lease *o = rt__sched_first_lease(c); o && !c->owner; o = rt__sched_next_lease(c, o))
            steal_from(d, o, now);
}

static void on_answered(void *ctx, void *owner, rt__answer *r)
{
    rt__dispatch *d = ctx;
    rt__lease *l = owner;
    rt__task *t = rt__sched_in_flight(l, r->id);
    if (!t) { /* not what this worker was asked */
        rt__answer_drop(r);
        rt__dispatch_node_of(d, l)->ops->kill(rt__dispatch_node_of(d, l), l->worker);
        return;
    }
    give_back(d, l, t);
    if (r->bounced && t->call.kind == RT__KIND_TASK) {
        rt__sched_recall(l); /* unrun: not timed */
        rt__answer_drop(r);
        rt__timeouts_remove(&d->timeouts, t);
        if (t->run.cancelling)
            fail_cancelled(d, t, 0);
        else
            not_run(d, t);
        if (rt__sched_lease_idle(l))
            end_lease(d, l);
        return;
    }
    rt__sched_answered(l, r->run_us, rt__now_ns());
    d->answers_soon |= answers_soon(l->cls);
    rt__timeouts_remove(&d->timeouts, t);
    if (l->lent_by == t) /* it ended before the runtime heard that it goes on */
        lend_lease(d, l, NULL);
    unsigned attempt = rt__task_attempt(t); /* this run's, before a retry counts */
    int outcome = RT_OK;
    if (t->call.kind == RT__KIND_CREATE) {
        rt__actors_constructed(d, t, r);
    } else if (t->run.cancelling) {
        rt__remote_drop(d, l, t, r);
        fail_cancelled(d, t, 1);
        outcome = t->obj.status;
    } else if (t->run.early && t->obj.status != RT_OK) {
        /* An object it took from the board failed before its answer
         * came (a cancel dropped its producer's result): as if it never
         * ran, as a task filed late would not have. */
        rt__remote_drop(d, l, t, r);
        rt__dispatch_finish(d, t, t->obj.status);
        outcome = t->obj.status;
    } else {
        outcome = take_result(d, l, t, r);
    }
    if (d->timeline && t->call.kind != RT__KIND_CREATE)
        record(d, l, t, r->run_us, outcome, attempt);
    l->gpu_peak = 0; /* the next task's own */
    l->gpu_over = 0;
    if (rt__sched_lease_idle(l))
        steal_for(d, l);
    if (rt__sched_lease_idle(l))
        end_lease(d, l);
}

/* Why a task that started in a lost worker failed. */
static void explain_loss(rt__task *t, const rt__lease *l, const rt__loss *loss)
{
    int ws = loss->wait_status;
    if (l->gpu_sick)
        rt__task_fail(t, RT_EWORKERDIED, "its GPU became unhealthy (%s): its worker "
                      "(pid %d) was killed, and no retry was left", l->gpu_sick, loss->pid);
    else if (loss->spawn_errno)
        rt__task_fail(t, RT_EWORKERDIED, "no worker could be started: %s",
                      strerror(loss->spawn_errno));
    else if (loss->broke)
        rt__task_fail(t, RT_EWORKERDIED, "the worker (pid %d) sent bytes that break "
                      "rtask's protocol and was killed (did the task write to the "
                      "worker's socket?)", loss->pid);
    else if (loss->lost_channel)
        rt__task_fail(t, RT_EWORKERDIED, "the worker (pid %d) lost its connection "
                      "to the runtime (did the task close its descriptors?)", loss->pid);
    else if (WIFSIGNALED(ws))
        rt__task_fail(t, RT_EWORKERDIED, "the worker (pid %d) was killed by signal "
                      "%d (%s)", loss->pid, WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    else
        rt__task_fail(t, RT_EWORKERDIED, "the worker (pid %d) exited with status %d",
                      loss->pid, WEXITSTATUS(ws));
}

/* Tasks that started spend a retry, and go back first in line while they
 * have one; the others never ran and go back after them, in their order,
 * for free. */
static void on_lost(void *ctx, void *owner, const rt__loss *loss)
{
    rt__dispatch *d = ctx;
    rt__lease *l = owner;
    if (l->cls->owner) {
        rt__actors_lost(d, l, loss);
        return;
    }
    rt__tasks retried = {0}, unstarted = {0};
    size_t started = loss->started;
    for (rt__task *t; (t = rt__sched_recall(l)); started -= started > 0) {
        rt__timeouts_remove(&d->timeouts, t);
        give_back(d, l, t);
        if (started && d->timeline)
            record(d, l, t, 0, RT_EWORKERDIED, rt__task_attempt(t));
        if (t->run.early && t->obj.status != RT_OK) {
            rt__dispatch_finish(d, t, t->obj.status); /* failed along the graph */
        } else if (t->run.cancelling) {
            fail_cancelled(d, t, 1); /* never run again */
        } else if (!started) {
            rt__tasks_push(&unstarted, t);
        } else if (t->run.retries_left > 0) {
            forget_resume(d, t); /* the next run waits for nothing yet */
            t->run.retries_left--;
            rt__task_count_run(&t->run.runs_lost);
            rt__tasks_push(&retried, t);
        } else {
            explain_loss(t, l, loss);
            rt__dispatch_finish(d, t, RT_EWORKERDIED);
        }
    }
    rt__tasks_append(&retried, &unstarted);
    rt__sched_requeue(&d->sched, l->cls, &retried);
    rt__sched_unlease(&d->sched, l); /* after the requeue, which keeps the class */
}

static void on_failed(void *ctx, const char *why)
{
    rt__dispatch *d = ctx;
    d->failed = why;
}

static void on_took_back(void *ctx, void *owner, size_t n)
{
    rt__lease *l = owner;
    if (!l->cls->owner) /* an actor lends nothing */
        take_back(ctx, l, n);
}

int rt__dispatch_where(const rt__dispatch *d, const rt__task *t, int *node, uint64_t *pid)
{
    const rt__lease *l = t->run.cls ? rt__sched_lease_of(t->run.cls, t) : NULL;
    if (!l)
        return 0;
    rt__node *n = rt__dispatch_node_of(d, l);
    *node = l->grant.node;
    *pid = l->grant.node == 0 ? n->ops->lane(n, l->worker) : 0;
    return 1;
}

int rt__dispatch_actor_where(const rt__dispatch *d, const rt__actor *a, int *node,
                             uint64_t *pid)
{
    const rt__lease *l = a->cls ? rt__sched_first_lease(a->cls) : NULL;
    rt__node *n = l ? rt__dispatch_node_of(d, l) : NULL;
    *node = l ? l->grant.node : -1;
    *pid = l && l->grant.node == 0 ? n->ops->lane(n, l->worker) : 0;
    return l != NULL;
}

/* The graph's calls (graph.h): a task filed early goes to the head of
 * its line (feed_class()); one that failed along the graph ends now when
 * it waits in line, else with its worker's answer. */
static void graph_file(void *owner, rt__task *t)
{
    rt__dispatch_file(owner, t);
}

static void graph_file_early(void *owner, rt__task *t)
{
    rt__dispatch *d = owner;
    d->filed_early = 1;
    rt__dispatch_file(d, t);
}

static void graph_early_failed(void *owner, rt__task *t)
{
    rt__dispatch *d = owner;
    rt__class *c = t->run.cls;
    if (c && rt__sched_withdraw(&d->sched, c, t)) {
        rt__dispatch_finish(d, t, t->obj.status);
        rt__sched_release_class(&d->sched, c);
    }
}

void rt__dispatch_init(rt__dispatch *d)
{
    memset(d, 0, sizeof *d);
    rt__link_init(&d->actors);
    rt__link_init(&d->out.placed);
    d->check_ms = -1;
    d->graph = (rt__graph){.file = graph_file, .file_early = graph_file_early,
                           .early_failed = graph_early_failed, .owner = d};
}

void rt__dispatch_take_outbox(rt__dispatch *d, rt__outbox *into)
{
    *into = d->out;
    rt__link_init(&into->placed);
    rt__list_move_all(&into->placed, &d->out.placed);
    d->out = (rt__outbox){0};
    rt__link_init(&d->out.placed);
}

int rt__outbox_any(const rt__outbox *o)
{
    return o->done.count || o->nresumed || o->buried || o->declared ||
           !rt__list_empty(&o->placed) || o->narrived;
}

void rt__outbox_free(rt__outbox *o)
{
    for (size_t i = 0; i < o->narrived; i++)
        rt__buf_free(o->arrived[i].bytes);
    rt__free(o->arrived);
    rt__free(o->resumed);
    *o = (rt__outbox){0};
}

rt__node_events rt__dispatch_events(rt__dispatch *d)
{
    return (rt__node_events){d, on_answered, on_lost, on_failed, on_took_back,
                             rt__remote_pulled, rt__health_gpu};
}

int rt__dispatch_add_node(rt__dispatch *d, const rt__offer *offer, rt__node *n)
{
    int i = d->sched.nnodes;
    rt__node **grown = rt__realloc(d->node, (size_t)(i + 1) * sizeof *grown);
    if (grown)
        d->node = grown;
    uint64_t *bytes = grown ? rt__realloc(d->node_bytes, (size_t)(i + 1) * sizeof *bytes) : NULL;
    if (bytes) {
        d->node_bytes = bytes;
        bytes[i] = 0;
    }
    if (!bytes || rt__offer_add_node(offer, &d->sched) < 0)
        return -1;
    rt__node_listen(n, rt__dispatch_events(d));
    d->node[i] = n;
    return 0;
}

/* ---- the end -------------------------------------------------------------- */

void rt__dispatch_free(rt__dispatch *d, const char *why)
{
    /* The tasks that wait for objects fail along the graph as the tasks
     * they wait for fail here. */
    rt__tasks orphans = {0};
    for (rt__actor *a = RT__FIRST(&d->actors, rt__actor, link); a;
         a = RT__NEXT(&d->actors, a, rt__actor, link)) {
        for (rt__task *t = a->held.head; t; t = t->next)
            if (rt__task_deps(t))
                rt__graph_detach(t);
        rt__tasks_append(&orphans, &a->held);
        if (a->cls) {
            rt__sched_discard(&d->sched, a->cls, &orphans);
            a->cls = NULL;
        }
    }
    rt__sched_free(&d->sched, &orphans);
    for (rt__task *t = orphans.head; t; t = t->next) {
        t->run.cls = NULL; /* freed: a task filed early then fails here, not there */
        t->run.board_seq = 0; /* the board goes with the node: no result yet */
    }
    rt__tasks_append(&orphans, &d->parked);
    rt__free(d->pulls);
    d->pulls = NULL;
    d->npulls = d->cap_pulls = 0;
    rt__free(d->resuming);
    d->resuming = NULL;
    d->nresuming = d->cap_resuming = 0;
    for (rt__task *t; (t = rt__tasks_pop(&orphans));) {
        if (t->call.kind == RT__KIND_CREATE)
            continue; /* the actor's own record, freed with it */
        rt__task_fail(t, RT_ESHUTDOWN, "%s", why);
        rt__dispatch_finish(d, t, RT_ESHUTDOWN);
    }
    while (!rt__list_empty(&d->actors))
        rt__actors_forget(RT__FIRST(&d->actors, rt__actor, link));
    d->out.buried = d->out.declared = NULL; /* forgotten with the rest */
    d->running_actors = 0;
    rt__timeouts_free(&d->timeouts);
    rt__free(d->node); /* the nodes are their owners' */
    d->node = NULL;
    rt__free(d->node_bytes);
    d->node_bytes = NULL;
    d->check_ms = -1;
    d->steal_at_ns = 0;
}

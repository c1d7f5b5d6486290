/*
 * round.c - the runtime's round, and the one way into it.
 *
 * A round takes what the application threads submitted (the exchange,
 * under the lock), lets the dispatcher act on it and on what the nodes
 * reported, and publishes what finished.  Whoever holds the round (a
 * baton, runtime.h) runs it, always through the same steps: the runtime
 * thread in its loop (rt__round_loop()), after the loop's watches and
 * timers have run; or an application thread that submitted a task while
 * the runtime thread slept (rt__submitted()), or that waits in rt_get()
 * for a quick task's answer and reads it from the worker itself
 * (rt__await()).
 */
#include "calls.h"

#include "runtime.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/process.h"
#include "node/sink.h"

#include <errno.h>

#define RETRY_NS 10000000ull /* after a lease failed for lack of memory */
#define ACTOR_GRACE_NS 2000000000ull /* for actors' destructors at rt_shutdown() */
#define RECHECKS_MAX 4 /* rounds on end, taking what came meanwhile (rt__round_here()) */

/* ---- waking the runtime thread ----------------------------------------------- */

static int need_wake(rt__runtime *rt)
{
    if (!rt->loop_asleep || rt->round_coming || rt->round_rechecks)
        return 0;
    rt->loop_asleep = 0;
    return rt->queued == 0 && rt->incoming.count == 1 ? RT__WAKE_IDLE : RT__WAKE;
}

/* A late wake-up after rt_shutdown() must not write to a descriptor
 * that was closed, or reused by then: the loop is closed only once no
 * thread is writing to it. */
void rt__wake_runtime(rt__runtime *rt)
{
    pthread_mutex_lock(&rt->wake_lock);
    int open = rt->loop_open;
    rt->wakers += open;
    pthread_mutex_unlock(&rt->wake_lock);
    if (!open)
        return;
    rt__loop_wake(&rt->loop);
    pthread_mutex_lock(&rt->wake_lock);
    if (--rt->wakers == 0)
        pthread_cond_broadcast(&rt->wakers_gone);
    pthread_mutex_unlock(&rt->wake_lock);
}

void rt__wakers_open(rt__runtime *rt)
{
    pthread_mutex_lock(&rt->wake_lock);
    rt->loop_open = 1;
    pthread_mutex_unlock(&rt->wake_lock);
}

void rt__wakers_close(rt__runtime *rt)
{
    pthread_mutex_lock(&rt->wake_lock);
    rt->loop_open = 0;
    while (rt->wakers > 0)
        pthread_cond_wait(&rt->wakers_gone, &rt->wake_lock);
    pthread_mutex_unlock(&rt->wake_lock);
    rt__loop_close(&rt->loop);
}

/* ---- the round: a baton, not a lock ----------------------------------------- */

/* [L] Take the round when nobody holds it: 1 when taken. */
static int round_grab_locked(rt__runtime *rt)
{
    if (rt->round_held)
        return 0;
    rt->round_held = 1;
    return 1;
}

/* [L] A thread that only tries the round (a submitter, a caller that
 * awaits its task, the MPI bridge) leaves it to one that waits for it
 * (rt__round_take()), which does the work it would have done.  Taking
 * it again as soon as it was given, an application's thread making
 * synchronous calls kept the runtime thread waiting for it a whole run:
 * woken at each give for nothing, a context switch on the caller's CPUs
 * (15 to 20 us a call, against 2.9, in one run of 20 000 in three). */
int rt__round_try_locked(rt__runtime *rt)
{
    return !rt->round_waiting && round_grab_locked(rt);
}

static int round_try(rt__runtime *rt)
{
    pthread_mutex_lock(&rt->lock);
    int taken = rt__round_try_locked(rt);
    pthread_mutex_unlock(&rt->lock);
    return taken;
}

void rt__round_take(rt__runtime *rt)
{
    pthread_mutex_lock(&rt->lock);
    while (!round_grab_locked(rt)) {
        rt->round_waiting++;
        pthread_cond_wait(&rt->round_free, &rt->lock);
        rt->round_waiting--;
    }
    pthread_mutex_unlock(&rt->lock);
}

/* [L] */
static void round_give_locked(rt__runtime *rt)
{
    rt->round_held = 0;
    rt->round_rechecks = 0;
    if (rt->round_waiting)
        pthread_cond_signal(&rt->round_free);
}

void rt__round_give(rt__runtime *rt)
{
    pthread_mutex_lock(&rt->lock);
    round_give_locked(rt);
    pthread_mutex_unlock(&rt->lock);
}

int rt__submit(rt__runtime *rt, rt__task *t)
{
    t->call.seq = rt->next_seq++;
    rt__tasks_push(&rt->incoming, t);
    return need_wake(rt);
}

int rt__submit_ref(rt__runtime *rt, rt__task *t, rt_ref *ref)
{
    void *old;
    if (rt__table_adopt(&rt->tasks, t, &t->call.id, &old) < 0)
        return rt__error(RT_ENOMEM, "no memory for the handle");
    ref->id = t->call.id;
    return rt__submit(rt, t);
}

int rt__submit_kill(rt__runtime *rt, rt__actor *a, int restart)
{
    a->kill_requested |= !restart;
    a->restart_requested |= restart;
    if (a->kill_queued)
        return 0; /* the runtime will take it */
    a->kill_queued = 1;
    a->next_kill = rt->kills;
    rt->kills = a;
    return need_wake(rt);
}

int rt__submit_ask(rt__runtime *rt, rt__ask *c)
{
    c->next = rt->asks;
    rt->asks = c;
    return need_wake(rt);
}

int rt__ask_answered_locked(rt__runtime *rt, rt__ask *c, rt__task *given)
{
    if (!c->may_run)
        return 1;
    if (given) {
        given->obj.holds++; /* its argument is read for the caller */
        c->given = given;
        c->given_run = rt__task_attempt(given);
    }
    c->answered = 1;
    pthread_cond_broadcast(&rt->answered); /* its caller waits */
    return --c->refs == 0;
}

/* The runtime is done with c (having given `given` to its caller). */
static void ask_done(rt__runtime *rt, rt__ask *c, rt__task *given)
{
    int last = 1;
    if (c->may_run) {
        pthread_mutex_lock(&rt->lock);
        last = rt__ask_answered_locked(rt, c, given);
        pthread_mutex_unlock(&rt->lock);
    }
    if (last)
        rt__free(c);
}

/* ---- the exchange, under the lock --------------------------------------- */

/* [L] Publish finished tasks: rt_get() may take them from now on.  Whether
 * a waiting thread should hear of them. */
static int publish_tasks(rt__runtime *rt, rt__tasks *done, rt__exchange *x)
{
    int published = 0;
    for (rt__task *t; (t = rt__tasks_pop(done));) {
        published |= t->obj.awaited; /* before it may be freed */
        if (t->obj.watched)
            x->notify |= rt__notices_publish(rt, t);
        if (t->obj.has_children)
            rt__children_forget_locked(rt, t);
        rt__checkpoint_note(rt, t, &x->keep);
        rt__objects_publish(rt, t, &x->orphans);
    }
    return published || (rt->any_waiters && rt->nended >= rt->any_wake_at);
}

/* [L] Tell the tasks whose wait ended that they have their CPUs back;
 * before publishing, while none of them can be freed. */
static int publish_resumed(const rt__outbox *out)
{
    for (size_t i = 0; i < out->nresumed; i++) {
        rt__task *t = out->resumed[i];
        t->obj.going_on = 1;
        t->obj.went_run = (unsigned char)rt__task_attempt(t);
        t->run.resuming = 0;
    }
    return out->nresumed > 0;
}

/* [L] Replace dead actors in the table by their epitaphs, once nothing
 * refers to them; before that, declare them dead. */
static rt__actor *publish_actors(rt__runtime *rt, const rt__outbox *out)
{
    for (rt__actor *a = out->declared; a; a = a->next_declared) {
        a->declared_dead = 1;
        rt__actor_unname_locked(rt, a);
    }
    for (rt__actor *a = out->buried; a; a = a->next_kill) {
        rt__actor_unname_locked(rt, a);
        rt__table_retire(&rt->actors, a->handle, a->tombstone);
        a->tombstone = NULL; /* the table's now */
    }
    return out->buried;
}

/* ---- errands ------------------------------------------------------------ */

int rt__errand_ask(rt__runtime *rt, const char *call, rt__errand_fn *run, void *ctx)
{
    if (rt__process_forked()) /* a stale copy: not even its round is ours */
        return rt__check_running(rt, call);
    rt__errand e = {.run = run, .ctx = ctx, .call = call};
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, call);
    if (rc == 0) {
        e.next = rt->errands;
        rt->errands = &e;
    }
    pthread_mutex_unlock(&rt->lock);
    if (rc < 0)
        return rc;
    /* As a submission: a round here when the round is free (the errand
     * is its work, as a task is), else the runtime thread's next. */
    rt__submitted(rt, RT__WAKE_IDLE);
    pthread_mutex_lock(&rt->lock);
    while (!e.done)
        rt__wait_change(rt, -1, NULL);
    rc = e.rc;
    pthread_mutex_unlock(&rt->lock);
    return rc < 0 ? rt__error(rc, "%s", e.why) : rc;
}

/* [L] e ran (or cannot): its asker may go, and frees it. */
static void errand_done(rt__runtime *rt, rt__errand *e, int rc, const char *why)
{
    e->rc = rc;
    if (rc < 0)
        snprintf(e->why, sizeof e->why, "%s", why);
    e->done = 1;
    pthread_cond_broadcast(&rt->changed);
}

/* Run the errands an exchange took (round held, [L] not held). */
static void run_errands(rt__runtime *rt, rt__errand *list)
{
    for (rt__errand *e = list, *next; e; e = next) {
        int rc = e->run(rt, e->ctx);
        pthread_mutex_lock(&rt->lock);
        next = e->next; /* e is the asker's once done */
        errand_done(rt, e, rc, rt__last_error());
        pthread_mutex_unlock(&rt->lock);
    }
}

void rt__errands_fail_locked(rt__runtime *rt, rt__errand *list)
{
    char why[256];
    for (rt__errand *e = list, *next; e; e = next) {
        next = e->next;
        snprintf(why, sizeof why, "%s: the runtime was shut down", e->call);
        errand_done(rt, e, RT_ESHUTDOWN, why);
    }
}

/* [L] Take what was asked of tasks, after publishing: a task published
 * (done, perhaps freed by rt_get() or as an orphan) is left alone; the
 * others cannot be freed before the next exchange. */
static void take_asks(rt__runtime *rt, rt__exchange *x)
{
    x->asks = NULL;
    for (rt__ask *c = rt->asks, *next; c; c = next) {
        next = c->next;
        if (c->task->obj.state == RT__TASK_DONE) {
            c->next = x->dropped;
            x->dropped = c;
            continue;
        }
        if (c->how < RT__ASK_LEND && c->how > c->task->run.cancelling)
            c->task->run.cancelling = (unsigned char)c->how;
        if (c->awaited && c->awaited->obj.state == RT__TASK_DONE)
            c->awaited = NULL; /* it may be freed once the lock is let go */
        c->next = x->asks;
        x->asks = c;
    }
    rt->asks = NULL;
}

void rt__exchange_locked(rt__runtime *rt, rt__exchange *x)
{
    rt__dispatch *d = &rt->dispatch;
    x->incoming = rt->incoming;
    rt->incoming = (rt__tasks){0};
    x->kills = rt->kills;
    rt->kills = NULL;
    for (rt__actor *a = x->kills; a; a = a->next_kill) {
        a->kill_queued = 0;
        a->restarting = a->restart_requested && !a->kill_requested;
        a->restart_requested = 0;
    }
    rt__dispatch_take_outbox(d, &x->out);
    x->published = publish_actors(rt, &x->out);
    rt->queued = d->sched.npending;
    int changed = publish_resumed(&x->out);
    changed |= rt__groups_publish(&x->out.placed);
    changed |= rt__objects_arrived(rt, &x->out);
    x->pulls = rt->pull_asks;
    x->npulls = rt->npull_asks;
    rt->pull_asks = NULL;
    rt->npull_asks = rt->cap_pull_asks = 0;
    changed |= publish_tasks(rt, &x->out.done, x);
    take_asks(rt, x);
    x->errands = rt->errands;
    rt->errands = NULL;
    if (d->failed && (rt->state == RT__RUNNING || rt->state == RT__STARTING)) {
        rt->state = RT__STOPPING;
        rt->stop_reason = d->failed;
        changed = 1;
    }
    if (changed && rt->waiters) {
        rt->any_wake_at = 0; /* each says again what it waits for */
        pthread_cond_broadcast(&rt->changed);
    }
}

/* ---- the runtime thread ------------------------------------------------ */

/* What the exchange left of objects other ranks hold: bytes nobody took,
 * pulls readers ask for, tasks that may go on now that bytes came, and
 * records freed here whose holders must drop them. */
static void take_objects(rt__runtime *rt, rt__exchange *x)
{
    rt__dispatch *d = &rt->dispatch;
    int came = x->out.narrived > 0;
    rt__outbox_free(&x->out);
    for (size_t i = 0; i < x->npulls; i++)
        rt__dispatch_pull(d, x->pulls[i].holder, x->pulls[i].object, x->pulls[i].run);
    rt__free(x->pulls);
    if (came)
        rt__dispatch_unpark(d);
    rt__forgotten f[64];
    for (size_t n; (n = rt__task_forgotten(f, 64)) > 0;)
        rt__dispatch_forget(d, f, n);
}

/* Take what the application threads left, act on it, publish what is
 * done; returns the state the runtime was in. */
static rt__state exchange_and_act(rt__runtime *rt)
{
    rt__dispatch *d = &rt->dispatch;
    rt__exchange x = {0};
    if (d->out.done.count) /* a task's lines come before its result */
        rt__sink_drain(RT__OUTPUT_WAIT_MS);
    pthread_mutex_lock(&rt->lock);
    if (rt->state == RT__STOPPED) {
        /* Its books are gone (life.c's finish_shutdown() freed them, the
         * round held): a thread that holds the round after it (a task's
         * call read from its connection as the runtime ended, which held
         * the round for the GET behind it) has nothing to run. */
        pthread_mutex_unlock(&rt->lock);
        return RT__STOPPED;
    }
    rt__exchange_locked(rt, &x);
    rt__state state = rt->state;
    /* From here a submission must wake us: we may be in epoll_wait. */
    rt->loop_asleep = 1;
    rt->round_coming = 0;
    pthread_mutex_unlock(&rt->lock);
    if (x.notify)
        rt__notices_signal(rt);
    rt__tasks_free(&x.orphans);
    rt__checkpoint_write(rt, &x.keep);
    take_objects(rt, &x);
    rt__dispatch_absorb(d, &x.incoming);
    for (rt__ask *c = x.asks, *next; c; c = next) {
        next = c->next;
        int given = 0;
        if (c->may_run)
            given = rt__dispatch_lend_or_give(d, c->task, c->awaited, c->run, c->lane);
        else if (c->how >= RT__ASK_LEND)
            rt__dispatch_lend(d, c->task, c->how == RT__ASK_LEND, c->awaited, c->run);
        else
            rt__dispatch_cancel(d, c->task);
        ask_done(rt, c, given ? c->awaited : NULL);
    }
    for (rt__ask *c = x.dropped, *next; c; c = next) {
        next = c->next;
        ask_done(rt, c, NULL);
    }
    for (rt__actor *a = x.kills, *next; a; a = next) {
        next = a->next_kill;
        rt__dispatch_kill(d, a, a->restarting);
    }
    rt__dispatch_free_actors(x.published); /* after absorb: no call refers to them */
    run_errands(rt, x.errands);
    return state;
}

/* When stopping, actors get end of file so that their destructors run;
 * the thread waits for their exits for up to ACTOR_GRACE_NS, then the
 * fork server kills what is left.  Returns 1 while it should wait. */
static int wait_for_actors(rt__runtime *rt, uint64_t *deadline)
{
    rt__dispatch *d = &rt->dispatch;
    if (d->failed)
        return 0;
    if (*deadline == 0)
        *deadline = rt__now_ns() + ACTOR_GRACE_NS;
    return rt__dispatch_stop_actors(d) > 0 && rt__now_ns() < *deadline;
}

/* What a round left for the next one at once: what it must publish. */
static int more_now(rt__runtime *rt)
{
    return rt__outbox_any(&rt->dispatch.out);
}

/* What a round left for later: a retry, a task that may pass its
 * timeout_ms, the actors' grace when stopping.  Only the runtime thread
 * arms the timers for it (plan_later()). */
static int more_later(rt__runtime *rt, rt__state state)
{
    rt__dispatch *d = &rt->dispatch;
    return state == RT__STOPPING || d->retry_soon || d->check_ms >= 0;
}

/* A due timer ends the loop's wait: the round that follows does the
 * work. */
static void due(rt__timer *t)
{
    (void)t;
}

static void plan_later(rt__runtime *rt, rt__state state, int again, uint64_t grace_end)
{
    rt__dispatch *d = &rt->dispatch;
    rt__loop *loop = &rt->loop;
    uint64_t now = rt__now_ns();
    if (state == RT__STOPPING) {
        if (!rt->grace.armed)
            rt__timer_arm(loop, &rt->grace, grace_end, due);
        return;
    }
    if ((d->retry_soon || again) && !rt->retry.armed)
        rt__timer_arm(loop, &rt->retry, now + RETRY_NS, due);
    if (d->check_ms >= 0)
        rt__timer_arm(loop, &rt->expiry, now + (uint64_t)d->check_ms * 1000000, due);
    else
        rt__timer_disarm(loop, &rt->expiry);
}

/* The last thing the runtime thread does: the fork server kills and reaps
 * every worker when its socket ends, and is reaped, before this thread
 * (its parent-death signal) is gone.  What the workers printed is
 * relayed. */
static void stop_node(rt__runtime *rt)
{
    rt__local_stop(rt->local);
    rt->local = NULL;
}

/* The round: the one way the runtime's work is done, by whoever holds
 * the baton.  First the loop's watches and timers that fired (found;
 * NULL for a caller that did not wait on the loop), then the exchange
 * with the application threads, then the dispatcher's work and a serving
 * rank's (caller_waits: as node.h's flush).  Returns the state the
 * runtime was in; *again when the cluster wants another round soon. */
static rt__state run_round(rt__runtime *rt, rt__events *found, int *again, int caller_waits)
{
    *again = 0;
    if (found)
        rt__loop_dispatch(&rt->loop, found);
    rt__state state = exchange_and_act(rt);
    if (state == RT__STARTING || state == RT__RUNNING) {
        *again = rt->cluster && rt__cluster_round(rt->cluster);
        rt__dispatch_run(&rt->dispatch, caller_waits);
    }
    return state;
}

void rt__round_loop(rt__runtime *rt)
{
    rt__events events = {.n = 0};
    uint64_t deadline = 0;
    for (;;) {
        rt__round_take(rt);
        int again;
        rt__state state = run_round(rt, &events, &again, 0);
        if (state == RT__STOPPING) {
            if (!wait_for_actors(rt, &deadline)) {
                stop_node(rt);
                rt__round_give(rt);
                return;
            }
            rt__dispatch_flush(&rt->dispatch, 0);
        }
        int block = !more_now(rt), soon = rt__dispatch_answers_soon(&rt->dispatch) |
                                          (rt->cluster && rt__cluster_calls_soon(rt->cluster));
        if (block)
            plan_later(rt, state, again, deadline);
        if (block && rt->recording) /* the pages of records to come, while idle */
            rt__timeline_prepare(&rt->timeline);
        rt__round_give(rt);
        rt__loop_wait(&rt->loop, &events, block, soon); /* without the round */
    }
}

/* The round on an application thread, which holds the baton and did not
 * wait on the loop.  Returns 1 when the runtime thread must still be
 * woken for what is left (it alone arms the loop's timers). */
static int round_here(rt__runtime *rt, int caller_waits)
{
    int again;
    rt__state state = run_round(rt, NULL, &again, caller_waits);
    return state == RT__STOPPING || again || more_now(rt) || more_later(rt, state);
}

void rt__round_hold(rt__runtime *rt)
{
    rt__round_take(rt);
    pthread_mutex_lock(&rt->lock);
    rt->round_coming = 1;
    rt->round_rechecks = 1; /* rt__round_here() follows */
    pthread_mutex_unlock(&rt->lock);
}

/* [L] Whether something was submitted that woke nobody, left to the
 * holder that rechecks (need_wake()). */
static int came_meanwhile(const rt__runtime *rt)
{
    return rt->incoming.count > 0 || rt->kills || rt->asks;
}

/* Rounds while submissions come meanwhile, up to a few: a thread that
 * submits as the round ends (the application's next synchronous call,
 * as the bridge's round hands it the answer of the one before) wakes no
 * thread, and finds its work taken.  More than that goes to the runtime
 * thread, so that the bridge's thread goes back to MPI.  After a first
 * round that said still (the runtime thread is wanted after); the round
 * is then given back. */
static void rounds_here(rt__runtime *rt, int caller_waits, int still)
{
    for (int rounds = 1;; rounds++) {
        pthread_mutex_lock(&rt->lock);
        if (!came_meanwhile(rt))
            break;
        if (rounds == RECHECKS_MAX) {
            still = 1;
            break;
        }
        pthread_mutex_unlock(&rt->lock);
        still |= round_here(rt, caller_waits);
    }
    round_give_locked(rt);
    pthread_mutex_unlock(&rt->lock);
    if (still)
        rt__wake_runtime(rt);
}

void rt__round_here(rt__runtime *rt, int caller_waits)
{
    rounds_here(rt, caller_waits, round_here(rt, caller_waits));
}

void rt__round_bridge(rt__runtime *rt)
{
    int still = round_here(rt, 0);
    if (rt->cluster)
        rt__cluster_await(rt->cluster);
    rounds_here(rt, 0, still);
}

int rt__round_take_running(rt__runtime *rt)
{
    pthread_mutex_lock(&rt->lock);
    int taken = (rt->state == RT__RUNNING || rt->state == RT__STARTING) &&
                rt__round_try_locked(rt);
    rt->round_rechecks |= taken; /* rt__round_here() follows */
    pthread_mutex_unlock(&rt->lock);
    return taken;
}

void rt__submitted(rt__runtime *rt, int how)
{
    if (how == RT__WAKE_IDLE && round_try(rt)) {
        int still = round_here(rt, 1); /* its caller returns at once */
        rt__round_give(rt);
        if (!still)
            return;
    }
    rt__wake_runtime(rt);
}

int rt__submit_done(rt__runtime *rt, rt__task *t, int rc)
{
    pthread_mutex_unlock(&rt->lock);
    if (rc < 0) {
        rt__task_free(t);
        return rc;
    }
    if (rc)
        rt__submitted(rt, rc);
    return 0;
}

void rt__await(rt__runtime *rt, rt_ref ref)
{
    pthread_mutex_lock(&rt->lock);
    rt__task *t = rt->state == RT__RUNNING ? rt__table_find(&rt->tasks, ref.id)
                                              : NULL;
    /* A task done already (or gone) needs no round; the runtime thread at
     * work will answer. */
    if (!t || t->obj.state == RT__TASK_DONE || !rt__round_try_locked(rt)) {
        pthread_mutex_unlock(&rt->lock);
        return;
    }
    /* Holding the round, nobody else can finish the task, so it stays. */
    pthread_mutex_unlock(&rt->lock);
    /* The wait is the node's (on the task's worker); what it read goes
     * through the node's reports, then through the round as any other. */
    int still = rt__dispatch_await(&rt->dispatch, t) && round_here(rt, 1);
    rt__round_give(rt);
    if (still)
        rt__wake_runtime(rt);
}


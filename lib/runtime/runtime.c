/* runtime.c - rt_init(), rt_shutdown() and the runtime thread's loop. */
#include "runtime.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/process.h"
#include "base/thread.h"
#include "node/sink.h"
#include "sched/offer.h"

#include <dlfcn.h>
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define ACTOR_GRACE_NS 2000000000ull /* for actors' destructors at rt_shutdown() */
#define RETRY_NS 10000000ull /* after a lease failed for lack of memory */
#define OUTPUT_WAIT_MS 100 /* for task output to be written before results */

rt__runtime rt__rt = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake_lock = PTHREAD_MUTEX_INITIALIZER,
    .loop = {.epoll_fd = -1, .wake = {.fd = -1}},
    .actors = {.fifo = 1},
};

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_cond(void)
{
    rt__cond_init_monotonic(&rt__rt.changed);
    pthread_cond_init(&rt__rt.round_free, NULL);
    pthread_cond_init(&rt__rt.settled, NULL);
    pthread_cond_init(&rt__rt.wakers_gone, NULL);
}

/* A child the application forks (without exec) after rt_init() is not
 * the runtime's: what it copied belongs to the parent, and its locks may
 * have been held by a parent thread at the fork.  It starts with no
 * runtime, and may start its own with rt_init().  Its copies of the
 * runtime's descriptors stay open (they close on exec); they keep nothing
 * of the parent's alive, since the runtime ends its sockets with
 * shutdown(). */
static void forked_child(void)
{
    rt__sink_forked();
    pthread_mutex_init(&rt__rt.lock, NULL);
    pthread_mutex_init(&rt__rt.wake_lock, NULL);
    init_cond();
    rt__rt.round_held = rt__rt.round_waiting = rt__rt.changing = 0;
    rt__rt.loop_open = rt__rt.wakers = 0;
    if (rt__rt.state == RT__STOPPED)
        return;
    rt__loop_close(&rt__rt.loop);
    rt__rt.state = RT__STOPPED;
    rt__rt.was_shut_down = 0;
    rt__rt.waiters = 0;
    rt__rt.queued = 0;
    rt__rt.incoming = (rt__tasks){0};
    rt__rt.kills = NULL;
    rt__rt.cancels = NULL;
    rt__rt.tasks = (rt__table){0};
    rt__rt.actors = (rt__table){.fifo = 1};
    rt__rt.local = NULL;
    rt__dispatch_init(&rt__rt.dispatch);
}

static void init_once(void)
{
    init_cond();
    pthread_atfork(NULL, NULL, forked_child);
}

static int need_wake(void)
{
    if (!rt__rt.loop_asleep)
        return 0;
    rt__rt.loop_asleep = 0;
    return rt__rt.queued == 0 && rt__rt.incoming.count == 1 ? RT__WAKE_IDLE : RT__WAKE;
}

/* A late wake-up after rt_shutdown() must not write to a descriptor
 * that was closed, or reused by then: the loop is closed only once no
 * thread is writing to it. */
static void wake(void)
{
    pthread_mutex_lock(&rt__rt.wake_lock);
    int open = rt__rt.loop_open;
    rt__rt.wakers += open;
    pthread_mutex_unlock(&rt__rt.wake_lock);
    if (!open)
        return;
    rt__loop_wake(&rt__rt.loop);
    pthread_mutex_lock(&rt__rt.wake_lock);
    if (--rt__rt.wakers == 0)
        pthread_cond_broadcast(&rt__rt.wakers_gone);
    pthread_mutex_unlock(&rt__rt.wake_lock);
}

static void open_loop_for_wakers(void)
{
    pthread_mutex_lock(&rt__rt.wake_lock);
    rt__rt.loop_open = 1;
    pthread_mutex_unlock(&rt__rt.wake_lock);
}

static void close_loop(void)
{
    pthread_mutex_lock(&rt__rt.wake_lock);
    rt__rt.loop_open = 0;
    while (rt__rt.wakers > 0)
        pthread_cond_wait(&rt__rt.wakers_gone, &rt__rt.wake_lock);
    pthread_mutex_unlock(&rt__rt.wake_lock);
    rt__loop_close(&rt__rt.loop);
}

/* ---- the round: a baton, not a lock ----------------------------------------- */

/* [L] Take the round when nobody holds it: 1 when taken. */
static int round_try_locked(void)
{
    if (rt__rt.round_held)
        return 0;
    rt__rt.round_held = 1;
    return 1;
}

static int round_try(void)
{
    pthread_mutex_lock(&rt__rt.lock);
    int taken = round_try_locked();
    pthread_mutex_unlock(&rt__rt.lock);
    return taken;
}

void rt__round_take(void)
{
    pthread_mutex_lock(&rt__rt.lock);
    while (!round_try_locked()) {
        rt__rt.round_waiting++;
        pthread_cond_wait(&rt__rt.round_free, &rt__rt.lock);
        rt__rt.round_waiting--;
    }
    pthread_mutex_unlock(&rt__rt.lock);
}

void rt__round_give(void)
{
    pthread_mutex_lock(&rt__rt.lock);
    rt__rt.round_held = 0;
    if (rt__rt.round_waiting)
        pthread_cond_signal(&rt__rt.round_free);
    pthread_mutex_unlock(&rt__rt.lock);
}

int rt__submit(rt__task *t)
{
    t->seq = rt__rt.next_seq++;
    if (rt__rt.recording)
        t->queued_ns = rt__now_ns();
    rt__tasks_push(&rt__rt.incoming, t);
    return need_wake();
}

int rt__submit_ref(rt__task *t, rt_ref *ref)
{
    void *old;
    if (rt__table_add(&rt__rt.tasks, t, &t->id, &old) < 0)
        return rt__error(RT_ENOMEM, "no memory for the handle");
    ref->id = t->id;
    return rt__submit(t);
}

int rt__submit_kill(rt__actor *a)
{
    a->kill_requested = 1;
    a->next_kill = rt__rt.kills;
    rt__rt.kills = a;
    return need_wake();
}

int rt__submit_cancel(rt__cancel *c)
{
    c->next = rt__rt.cancels;
    rt__rt.cancels = c;
    return need_wake();
}

int rt__check_code(const void *fn, const char *call, const char *what)
{
    /* A submitter calls one function many times: the last one that passed
     * is not looked up again. */
    static _Thread_local const void *passed;
    static _Thread_local unsigned passed_generation;
    if (fn == passed && passed_generation == rt__rt.code_generation)
        return 0;
    if (!rt__code_map_has(&rt__rt.code, fn)) {
        Dl_info info;
        const char *object = dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "?";
        return rt__error(RT_EINVAL, "%s: %s is in %s, loaded after rt_init(): the workers, "
                         "forked from the fork server that rt_init() started, do not have "
                         "it (load it before rt_init())", call, what, object);
    }
    passed = fn;
    passed_generation = rt__rt.code_generation;
    return 0;
}

int rt__check_running(const char *call)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "%s: not available inside a task", call);
    if (rt__rt.state == RT__RUNNING)
        return 0;
    if (rt__rt.state == RT__STARTING)
        return rt__error(RT_ENOTINIT, "%s: rt_init() has not returned yet", call);
    if (rt__rt.state == RT__STOPPING)
        return rt__error(RT_ESHUTDOWN, "%s: the runtime is stopping%s%s%s", call,
                         rt__rt.stop_reason ? " (" : "",
                         rt__rt.stop_reason ? rt__rt.stop_reason : "",
                         rt__rt.stop_reason ? ")" : "");
    if (rt__rt.was_shut_down)
        return rt__error(RT_ESHUTDOWN, "%s: the runtime was shut down", call);
    return rt__error(RT_ENOTINIT, "%s: call rt_init() first", call);
}

/* ---- the exchange, under the lock --------------------------------------- */

/* What the runtime thread takes and gives in one exchange. */
typedef struct exchange {
    rt__tasks incoming;    /* taken: submitted tasks */
    rt__actor *kills;      /* taken: kills asked for */
    rt__cancel *cancels;   /* taken: cancels of tasks not done, each ask
                              copied into its task's cancelling */
    rt__cancel *dropped;   /* taken: cancels of tasks done, to free */
    rt__actor *published;  /* given: dead actors, now only epitaphs */
    rt__tasks orphans;     /* given: finished tasks nobody wants, to free */
} exchange;

/* [L] Publish finished tasks: rt_get() may take them from now on. */
static int publish_tasks(rt__tasks *done, rt__tasks *orphans)
{
    int published = done->count > 0;
    for (rt__task *t; (t = rt__tasks_pop(done));) {
        t->state = RT__TASK_DONE;
        if (t->orphan)
            rt__tasks_push(orphans, t);
    }
    return published;
}

/* [L] Replace dead actors in the table by their epitaphs, once nothing
 * refers to them; before that, declare them dead. */
static rt__actor *publish_actors(rt__dispatch *d)
{
    for (rt__actor *a = d->declared; a; a = a->next_declared)
        a->declared_dead = 1;
    d->declared = NULL;
    rt__actor *list = d->buried;
    for (rt__actor *a = list; a; a = a->next_kill) {
        rt__table_retire(&rt__rt.actors, a->handle, a->tombstone);
        a->tombstone = NULL; /* the table's now */
    }
    d->buried = NULL;
    return list;
}

/* [L] Take the cancels asked for, after publishing: a task published
 * (done, perhaps freed by rt_get() or as an orphan) is left alone; the
 * others cannot be freed before the next exchange. */
static void take_cancels(exchange *x)
{
    x->cancels = NULL;
    for (rt__cancel *c = rt__rt.cancels, *next; c; c = next) {
        next = c->next;
        if (c->task->state == RT__TASK_DONE) {
            c->next = x->dropped;
            x->dropped = c;
            continue;
        }
        if (c->how > c->task->cancelling)
            c->task->cancelling = (unsigned char)c->how;
        c->next = x->cancels;
        x->cancels = c;
    }
    rt__rt.cancels = NULL;
}

static void exchange_locked(exchange *x)
{
    rt__dispatch *d = &rt__rt.dispatch;
    x->incoming = rt__rt.incoming;
    rt__rt.incoming = (rt__tasks){0};
    x->kills = rt__rt.kills;
    rt__rt.kills = NULL;
    x->published = publish_actors(d);
    rt__rt.queued = d->sched.npending;
    int changed = publish_tasks(&d->done, &x->orphans);
    take_cancels(x);
    if (d->failed && (rt__rt.state == RT__RUNNING || rt__rt.state == RT__STARTING)) {
        rt__rt.state = RT__STOPPING;
        rt__rt.stop_reason = d->failed;
        changed = 1;
    }
    if (changed && rt__rt.waiters)
        pthread_cond_broadcast(&rt__rt.changed);
}

/* ---- the runtime thread ------------------------------------------------ */

static void free_tasks(rt__tasks *q)
{
    for (rt__task *t; (t = rt__tasks_pop(q));)
        rt__task_free(t);
}

/* Take what the application threads left, act on it, publish what is
 * done; returns the state the runtime was in. */
static rt__state exchange_and_act(void)
{
    rt__dispatch *d = &rt__rt.dispatch;
    exchange x = {0};
    if (d->done.count) /* a task's lines come before its result */
        rt__sink_drain(OUTPUT_WAIT_MS);
    pthread_mutex_lock(&rt__rt.lock);
    exchange_locked(&x);
    rt__state state = rt__rt.state;
    /* From here a submission must wake us: we may be in epoll_wait. */
    rt__rt.loop_asleep = 1;
    pthread_mutex_unlock(&rt__rt.lock);
    free_tasks(&x.orphans);
    rt__dispatch_absorb(d, &x.incoming);
    for (rt__cancel *c = x.cancels, *next; c; c = next) {
        next = c->next;
        rt__dispatch_cancel(d, c->task);
        rt__free(c);
    }
    for (rt__cancel *c = x.dropped, *next; c; c = next) {
        next = c->next;
        rt__free(c);
    }
    for (rt__actor *a = x.kills, *next; a; a = next) {
        next = a->next_kill;
        rt__dispatch_kill(d, a);
    }
    rt__dispatch_free_actors(x.published); /* after absorb: no call refers to them */
    return state;
}

/* When stopping, actors get end of file so that their destructors run;
 * the thread waits for their exits for up to ACTOR_GRACE_NS, then the
 * fork server kills what is left.  Returns 1 while it should wait. */
static int wait_for_actors(uint64_t *deadline)
{
    rt__dispatch *d = &rt__rt.dispatch;
    if (d->failed)
        return 0;
    if (*deadline == 0)
        *deadline = rt__now_ns() + ACTOR_GRACE_NS;
    return rt__dispatch_stop_actors(d) > 0 && rt__now_ns() < *deadline;
}

/* What a round left for the next one at once: what it must publish. */
static int more_now(void)
{
    rt__dispatch *d = &rt__rt.dispatch;
    return d->done.count || d->buried || d->declared;
}

/* What a round left for later: a retry, a task that may pass its
 * timeout_ms, the actors' grace when stopping.  Only the runtime thread
 * arms the timers for it (plan_later()). */
static int more_later(rt__state state)
{
    rt__dispatch *d = &rt__rt.dispatch;
    return state == RT__STOPPING || d->retry_soon || d->check_ms >= 0;
}

/* A due timer ends the loop's wait: the round that follows does the
 * work. */
static void due(rt__timer *t)
{
    (void)t;
}

static void plan_later(rt__state state, int again, uint64_t grace_end)
{
    rt__dispatch *d = &rt__rt.dispatch;
    rt__loop *loop = &rt__rt.loop;
    uint64_t now = rt__now_ns();
    if (state == RT__STOPPING) {
        if (!rt__rt.grace.armed)
            rt__timer_arm(loop, &rt__rt.grace, grace_end, due);
        return;
    }
    if ((d->retry_soon || again) && !rt__rt.retry.armed)
        rt__timer_arm(loop, &rt__rt.retry, now + RETRY_NS, due);
    if (d->check_ms >= 0)
        rt__timer_arm(loop, &rt__rt.expiry, now + (uint64_t)d->check_ms * 1000000, due);
    else
        rt__timer_disarm(loop, &rt__rt.expiry);
}

/* The last thing the runtime thread does: the fork server kills and reaps
 * every worker when its socket ends, and is reaped, before this thread
 * (its parent-death signal) is gone.  What the workers printed is
 * relayed. */
static void stop_node(void)
{
    rt__local_stop(rt__rt.local);
    rt__rt.local = NULL;
}

static void *loop(void *unused)
{
    rt__dispatch *d = &rt__rt.dispatch;
    rt__events events = {.n = 0};
    uint64_t deadline = 0;
    (void)unused;
    for (;;) {
        rt__round_take();
        rt__loop_dispatch(&rt__rt.loop, &events);
        rt__state state = exchange_and_act();
        int again = 0;
        if (state != RT__STOPPING) { /* STARTING or RUNNING */
            again = rt__rt.cluster && rt__cluster_round(rt__rt.cluster);
            rt__dispatch_run(d);
        } else if (wait_for_actors(&deadline)) {
            rt__dispatch_flush(d);
        } else {
            stop_node();
            rt__round_give();
            return NULL;
        }
        int block = !more_now();
        if (block)
            plan_later(state, again, deadline);
        rt__round_give();
        rt__loop_wait(&rt__rt.loop, &events, block); /* without the round */
    }
}

/* A round on an application thread, which holds the round.  Returns 1
 * when the runtime thread must still be woken for what is left. */
static int round_here(void)
{
    rt__state state = exchange_and_act();
    if (state != RT__RUNNING)
        return 1;
    rt__dispatch_run(&rt__rt.dispatch);
    return more_now() || more_later(state);
}

void rt__submitted(int how)
{
    if (how == RT__WAKE_IDLE && round_try()) {
        int still = round_here();
        rt__round_give();
        if (!still)
            return;
    }
    wake();
}

int rt__submit_done(rt__task *t, int rc)
{
    pthread_mutex_unlock(&rt__rt.lock);
    if (rc < 0) {
        rt__task_free(t);
        return rc;
    }
    if (rc)
        rt__submitted(rc);
    return 0;
}

void rt__await(rt_ref ref)
{
    pthread_mutex_lock(&rt__rt.lock);
    if (!round_try_locked()) {
        pthread_mutex_unlock(&rt__rt.lock);
        return; /* the runtime thread is at work: it will answer */
    }
    /* Holding the round, nobody else can finish the task, so it stays. */
    rt__task *t = rt__rt.state == RT__RUNNING ? rt__table_find(&rt__rt.tasks, ref.id)
                                              : NULL;
    int waiting = t && t->state != RT__TASK_DONE;
    pthread_mutex_unlock(&rt__rt.lock);
    int still = waiting && rt__dispatch_await(&rt__rt.dispatch, t) && round_here();
    rt__round_give();
    if (still)
        wake();
}

/* ---- rt_init ------------------------------------------------------------ */

#define STR_(x) #x
#define STR(x) STR_(x)

RT_EXPORT const char *rt_version(void)
{
    return STR(RT_VERSION_MAJOR) "." STR(RT_VERSION_MINOR) "." STR(RT_VERSION_PATCH);
}

RT_EXPORT void rt_config_init(rt_config *config)
{
    rt_config init = RT_CONFIG_INIT;
    *config = init;
}

/* Every worker costs three descriptors here, so, as servers do, take the
 * soft limit up to the hard one: thousands of actors need it. */
static void raise_descriptor_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int start_scheduler(const rt__offer *set)
{
    rt__dispatch *d = &rt__rt.dispatch;
    rt__dispatch_init(d);
    d->timeline = rt__rt.recording ? &rt__rt.timeline : NULL;
    if (rt__sched_init(&d->sched, &set->names) < 0 || rt__offer_add_node(set, &d->sched) < 0) {
        rt__tasks none = {0};
        rt__sched_free(&d->sched, &none);
        return rt__error(RT_ENOMEM, "rt_init: no memory for the scheduler");
    }
    d->node[0] = rt__local_node(rt__rt.local);
    return 0;
}

/* Fork the server first, while this process has nothing else of ours
 * open, then the descriptors the runtime thread waits on. */
static int start_node(const rt__offer *set)
{
    rt__node_events ev = rt__dispatch_events(&rt__rt.dispatch);
    rt__keep keep = {set->keep_fds, set->nkeep_fds};
    int rc = rt__local_start(&rt__rt.local, &ev, &set->families, set->workers,
                             set->max_workers, keep);
    if (rc < 0)
        return rc;
    int failed = rt__loop_init(&rt__rt.loop) < 0;
    if (!failed)
        open_loop_for_wakers();
    if (failed || rt__local_attach(rt__rt.local, &rt__rt.loop) < 0) {
        rc = errno == EMFILE || errno == ENFILE
                 ? rt__syserror("rt_init: no worker could be started (raise the "
                                "descriptor limit, ulimit -n)")
                 : rt__syserror("rt_init: setting up the runtime thread");
        rt__local_stop(rt__rt.local);
        close_loop();
        return rc;
    }
    rc = start_scheduler(set);
    if (rc < 0) {
        rt__local_stop(rt__rt.local);
        close_loop();
    }
    return rc;
}

/* What rt_init() hands the runtime thread, and what the thread answers
 * once it has started the node. */
typedef struct startup {
    const rt__offer *set;
    sem_t ready;
    int rc;
    char error[256];
} startup;

/* The runtime thread starts the node itself: the fork server dies with
 * the thread that forks it, and this one lives until rt_shutdown(), so
 * the application's main thread may end first (pthread_exit) and the fork
 * server still dies with the application, however it ends. */
static void *thread_main(void *arg)
{
    startup *st = arg;
    int rc = st->rc = start_node(st->set);
    if (rc < 0)
        snprintf(st->error, sizeof st->error, "%s", rt_last_error());
    sem_post(&st->ready); /* st is gone after this */
    return rc < 0 ? NULL : loop(NULL);
}

/* The runtime thread takes no signal: they belong to the application. */
static int start_thread(const rt__offer *set)
{
    startup st = {.set = set};
    sem_init(&st.ready, 0, 0);
    int err = rt__thread_start(&rt__rt.thread, NULL, thread_main, &st);
    if (err) {
        sem_destroy(&st.ready);
        return rt__error(RT_ESYS, "rt_init: pthread_create: %s", strerror(err));
    }
    while (sem_wait(&st.ready) < 0 && errno == EINTR)
        ;
    sem_destroy(&st.ready);
    if (st.rc < 0) {
        pthread_join(rt__rt.thread, NULL);
        return rt__error(st.rc, "%s", st.error);
    }
    return 0;
}

/* ---- rt_init() and rt_shutdown() one at a time --------------------------- */

static void set_state(rt__state state)
{
    pthread_mutex_lock(&rt__rt.lock);
    rt__rt.state = state;
    pthread_mutex_unlock(&rt__rt.lock);
}

/* Wait for the change at work (rt_init(), rt_shutdown()) to end, then
 * begin one, when the state is `from` (-1: any but STOPPED): 1 when
 * begun, 0 when the state is otherwise. */
static int begin_change(int from)
{
    pthread_mutex_lock(&rt__rt.lock);
    while (rt__rt.changing)
        pthread_cond_wait(&rt__rt.settled, &rt__rt.lock);
    int begin = from < 0 ? rt__rt.state != RT__STOPPED : (int)rt__rt.state == from;
    rt__rt.changing = begin;
    pthread_mutex_unlock(&rt__rt.lock);
    return begin;
}

static void settle(void)
{
    pthread_mutex_lock(&rt__rt.lock);
    rt__rt.changing = 0;
    pthread_cond_broadcast(&rt__rt.settled);
    pthread_mutex_unlock(&rt__rt.lock);
}

static int start(const rt__offer *set)
{
    raise_descriptor_limit();
    rt__code_map_take(&rt__rt.code); /* what the fork server will have */
    rt__rt.code_generation++;
    pthread_mutex_lock(&rt__rt.lock);
    rt__rt.state = RT__STARTING; /* before the thread, which checks it */
    rt__rt.was_shut_down = 0;
    rt__rt.stop_reason = NULL;
    rt__rt.loop_asleep = 0;
    rt__rt.queued = 0;
    pthread_mutex_unlock(&rt__rt.lock);
    int rc = start_thread(set);
    if (rc < 0)
        set_state(RT__STOPPED);
    return rc;
}

static void stop_runtime(void);

/* A program that ends without rt_shutdown() gets it at exit, on one
 * machine as on rank 0 of a cluster: the workers' last output is relayed,
 * actors' destructors run, the timeline is written, and the other ranks
 * are told to stop.  A child the program forked has no runtime (see
 * forked_child), so the handler does nothing there. */
static void shutdown_at_exit(void)
{
    rt_shutdown();
}

static void shutdown_at_exit_once(void)
{
    static int registered;
    if (!registered)
        registered = atexit(shutdown_at_exit) == 0;
}

/* A rank other than 0 serves until rank 0 shuts down, then ends.  Its
 * tasks are in rank 0's timeline; it writes none of its own, which would
 * replace rank 0's file where the ranks share a file system. */
static _Noreturn void serve_until_shutdown(void)
{
    rt__free(rt__rt.timeline_path);
    rt__rt.timeline_path = NULL;
    rt__cluster_wait(rt__rt.cluster);
    stop_runtime();
    settle(); /* for the program's exit handlers */
    exit(0);
}

/* Join the MPI job, once the local node runs (its fork server forked
 * before MPI starts). */
static int join_cluster(const rt__offer *set)
{
    rt__cluster *c;
    int rc = rt__cluster_join(&c, set);
    if (rc == 0) {
        rt__round_take();
        rt__rt.cluster = c; /* ended with the runtime, whatever happens */
        rc = rt__cluster_start(c, &rt__rt.loop, &rt__rt.dispatch,
                               rt__local_node(rt__rt.local));
        rt__round_give();
    }
    if (rc < 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", rt_last_error());
        stop_runtime();
        /* A failed rt_init() leaves the runtime as if it had never been
         * started: later calls are RT_ENOTINIT, not RT_ESHUTDOWN. */
        pthread_mutex_lock(&rt__rt.lock);
        rt__rt.was_shut_down = 0;
        pthread_mutex_unlock(&rt__rt.lock);
        return rt__error(rc, "%s", why);
    }
    if (rt__cluster_serving(c))
        serve_until_shutdown();
    return 0;
}

/* A timeline is kept when the configuration asks or RTASK_TIMELINE names
 * the file that rt_shutdown() writes; its time 0 is now. */
static void start_timeline(const rt_config *config)
{
    const char *path = getenv("RTASK_TIMELINE");
    rt__timeline_free(&rt__rt.timeline);
    rt__free(rt__rt.timeline_path);
    rt__rt.timeline_path = path && *path ? rt__strdup(path) : NULL;
    rt__rt.recording = (config && config->timeline) || rt__rt.timeline_path;
    rt__rt.timeline.origin_ns = rt__now_ns();
}

RT_EXPORT int rt_init_config(const rt_config *config)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_init: not available inside a task");
    rt__offer set;
    int rc = rt__offer_resolve(config, &set);
    int cluster = rc < 0 ? rc : rt__cluster_wanted(config);
    if (cluster < 0)
        return cluster;
    pthread_once(&once, init_once);
    if (!begin_change(RT__STOPPED))
        return rt__error(RT_EALREADY, "rt_init: the runtime is already running");
    start_timeline(config);
    rc = start(&set);
    if (rc == 0 && cluster)
        rc = join_cluster(&set);
    if (rc == 0) {
        shutdown_at_exit_once();
        pthread_mutex_lock(&rt__rt.lock);
        if (rt__rt.state == RT__STARTING) /* not stopped by a failure since */
            rt__rt.state = RT__RUNNING;
        pthread_mutex_unlock(&rt__rt.lock);
    }
    settle();
    return rc;
}

RT_EXPORT int rt_init(double num_gpus)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_gpus = num_gpus;
    return rt_init_config(&c);
}

/* ---- rt_shutdown ---------------------------------------------------------- */

/* [L] Let threads blocked in rt_get()/rt_wait() see the end and leave
 * before the records they look at are freed. */
static void let_waiters_leave(void)
{
    pthread_cond_broadcast(&rt__rt.changed);
    while (rt__rt.waiters > 0)
        pthread_cond_wait(&rt__rt.changed, &rt__rt.lock);
}

static void free_task_item(void *item)
{
    rt__task_free(item);
}

/* Actors are freed by the dispatcher; the table owns only epitaphs. */
static void free_epitaph(void *item)
{
    if (((rt__epitaph *)item)->dead)
        rt__free(item);
}

/* The thread has stopped: fail what is left, publish it, then free the
 * tables once no caller can look at them. */
static void finish_shutdown(void)
{
    rt__dispatch *d = &rt__rt.dispatch;
    exchange x = {0};
    rt__round_take(); /* a late submitter's round waits, then finds it stopped */
    /* No call gets past rt__check_running() now: the tables are ours. */
    pthread_mutex_lock(&rt__rt.lock);
    rt__tasks incoming = rt__rt.incoming;
    rt__table actors = rt__rt.actors;
    rt__rt.incoming = (rt__tasks){0};
    rt__rt.actors = (rt__table){.fifo = 1};
    rt__rt.kills = NULL;
    for (rt__cancel *c = rt__rt.cancels, *next; c; c = next) {
        next = c->next; /* the tasks fail with the others */
        rt__free(c);
    }
    rt__rt.cancels = NULL;
    pthread_mutex_unlock(&rt__rt.lock);
    rt__table_free(&actors, free_epitaph); /* before the actors it tells apart */
    rt__dispatch_absorb(d, &incoming);
    rt__dispatch_free(d, "the runtime was shut down");
    if (rt__rt.timeline_path && rt__timeline_write(&rt__rt.timeline, rt__rt.timeline_path) < 0)
        rt__warn("RTASK_TIMELINE: %s", rt_last_error());
    pthread_mutex_lock(&rt__rt.lock);
    exchange_locked(&x);
    rt__rt.state = RT__STOPPED;
    rt__rt.was_shut_down = 1;
    let_waiters_leave();
    rt__table tasks = rt__rt.tasks;
    rt__rt.tasks = (rt__table){0};
    pthread_mutex_unlock(&rt__rt.lock);
    rt__round_give();
    free_tasks(&x.orphans);
    rt__table_free(&tasks, free_task_item);
    if (rt__rt.cluster) {
        rt__cluster_end(rt__rt.cluster);
        rt__rt.cluster = NULL;
    }
    close_loop();
    rt__sink_drain(OUTPUT_WAIT_MS * 10); /* what the workers printed, before we return */
}

RT_EXPORT int rt_shutdown(void)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_shutdown: not available inside a task");
    pthread_once(&once, init_once);
    if (begin_change(-1)) {
        stop_runtime();
        settle();
    }
    return 0;
}

/* By the thread that began a change. */
static void stop_runtime(void)
{
    pthread_mutex_lock(&rt__rt.lock);
    rt__state state = rt__rt.state;
    if (state != RT__STOPPED)
        rt__rt.state = RT__STOPPING;
    pthread_mutex_unlock(&rt__rt.lock);
    if (state != RT__STOPPED) {
        wake();
        pthread_join(rt__rt.thread, NULL);
        finish_shutdown();
    }
}

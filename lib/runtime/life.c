/*
 * life.c - the runtime's life: the process's one runtime, rt_init()
 * and rt_shutdown() (rt__runtime_start() and rt__runtime_stop()), and
 * what a forked child makes of it.
 */
#include "calls.h"
#include "runtime.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/process.h"
#include "base/shm.h"
#include "base/thread.h"
#include "node/client.h"
#include "node/sink.h"
#include "sched/offer.h"

#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

/* The process's runtime: the public calls have no handle to name one. */
static rt__runtime the_runtime;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Its locks and conditions, as if nobody held or waited on them. */
static void init_locks(rt__runtime *rt)
{
    pthread_mutex_init(&rt->lock, NULL);
    pthread_mutex_init(&rt->wake_lock, NULL);
    rt__cond_init_monotonic(&rt->changed);
    pthread_cond_init(&rt->answered, NULL);
    pthread_cond_init(&rt->round_free, NULL);
    pthread_cond_init(&rt->settled, NULL);
    pthread_cond_init(&rt->wakers_gone, NULL);
}

/* A runtime as rt_init() finds it: stopped, holding nothing.  Which
 * rt_init() took the code map is kept, so that a cache of it (calls.c)
 * is never taken for the new one's. */
static void make_blank(rt__runtime *rt)
{
    unsigned generation = rt->code_generation;
    memset(rt, 0, sizeof *rt);
    rt->code_generation = generation;
    init_locks(rt);
    rt->blank = 1;
    rt->was_dumpable = -1;
    rt->loop.epoll_fd = -1;
    rt->loop.wake.fd = -1;
    rt->notices.fd = -1;
    rt->actors.fifo = 1;
    rt->groups.fifo = 1; /* a removed group's handle stays unknown long */
    rt__dispatch_init(&rt->dispatch);
}

/* A child the application forks (without exec) after rt_init() is not
 * the runtime's: what it copied belongs to the parent, and its locks may
 * have been held by a parent thread at the fork.  It starts with a blank
 * runtime, and may start its own with rt_init(); the copied records are
 * left alone.  Its copies of the loop's descriptors are closed; the
 * others stay open (they close on exec) and keep nothing of the parent's
 * alive, since the runtime ends its sockets with shutdown(). */
static void forked_child(void)
{
    rt__runtime *rt = &the_runtime;
    rt__sink_forked();
    if (rt->blank) {
        /* A blank runtime's copy (each worker the fork server forks has
         * one): only a lock a parent thread held may need resetting.
         * Blanking its 46 KB again made 12 pages of every fresh worker
         * copies of the fork server's. */
        init_locks(rt);
        return;
    }
    if (rt->state != RT__STOPPED)
        rt__loop_close(&rt->loop);
    make_blank(rt);
}

static void init_once(void)
{
    make_blank(&the_runtime);
    pthread_atfork(NULL, NULL, forked_child);
}

rt__runtime *rt__runtime_here(void)
{
    pthread_once(&once, init_once);
    return &the_runtime;
}

/* ---- rt_init() ------------------------------------------------------------ */

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

static int start_scheduler(rt__runtime *rt, const rt__offer *set)
{
    rt__dispatch *d = &rt->dispatch;
    rt__dispatch_init(d);
    d->timeline = rt->recording ? &rt->timeline : NULL;
    d->gpu_memory_kill = set->gpu_memory_kill;
    if (rt__sched_init(&d->sched, &set->names) < 0 ||
        rt__dispatch_add_node(d, set, rt__local_node(rt->local)) < 0) {
        rt__tasks none = {0};
        rt__sched_free(&d->sched, &none);
        rt__free(d->node); /* grown, maybe, before the node failed */
        rt__free(d->node_bytes);
        d->node = NULL;
        d->node_bytes = NULL;
        return rt__error(RT_ENOMEM, "rt_init: no memory for the scheduler");
    }
    return 0;
}

/* A worker's thread knocks at the door: its calls are served here
 * (rt__door_hooks), or on rank 0 when this rank serves it. */
static void on_door(rt__watch *w, uint32_t events)
{
    rt__runtime *rt = RT__OWNER(w, rt__runtime, w_door);
    (void)events;
    int connection = rt__client_door_accept(w->fd);
    if (connection < 0)
        return;
    if (rt->cluster && rt__cluster_serving(rt->cluster))
        rt__cluster_tunnel(rt->cluster, connection);
    else
        rt->door_hooks.serve(connection, 0);
}

/* Close what start_books() opened (a map never opened is empty). */
static void stop_books(rt__runtime *rt)
{
    rt__notices_close(rt);
    rt__streams_free(rt);
    rt__objects_running_free(rt);
    rt__idmap_free(&rt->named); /* its actors are freed with the dispatcher */
    rt__children_free(rt);
}

/* The notices, streams, running orphans, actors' names and tasks'
 * children: after the fork server, which would copy their memory and
 * lose it (make_blank() in forked children). */
static int start_books(rt__runtime *rt)
{
    int rc = rt__notices_open(rt);
    if (rc < 0)
        return rc;
    if (rt__idmap_init(&rt->streams) < 0 || rt__idmap_init(&rt->running_orphans) < 0 ||
        rt__idmap_init(&rt->named) < 0 || rt__idmap_init(&rt->children) < 0) {
        stop_books(rt);
        return rt__error(RT_ENOMEM, "rt_init: no memory for the streams");
    }
    return 0;
}

/* Fork the server first, while this process has nothing else of ours
 * open, then the descriptors the runtime thread waits on. */
static int start_node(rt__runtime *rt, const rt__offer *set)
{
    rt__keep keep = {set->keep_fds, set->nkeep_fds, rt->was_dumpable < 0 /* no guard */};
    int rc = rt__local_start(&rt->local, &set->families, set->workers, set->max_workers,
                             keep, &set->machine);
    if (rc < 0)
        return rc;
    int failed = rt__loop_init(&rt->loop) < 0;
    if (!failed)
        rt__wakers_open(rt);
    if (failed || rt__local_attach(rt->local, &rt->loop) < 0 ||
        rt__loop_add(&rt->loop, &rt->w_door, rt__local_door(rt->local), EPOLLIN,
                     on_door) < 0) {
        rc = rt__local_start_error("rt_init: setting up the runtime thread");
        rt__local_stop(rt->local);
        rt__wakers_close(rt);
        return rc;
    }
    rc = start_books(rt);
    if (rc == 0 && (rc = start_scheduler(rt, set)) < 0)
        stop_books(rt);
    if (rc < 0) {
        rt__local_stop(rt->local);
        rt__wakers_close(rt);
    }
    return rc;
}

/* What rt_init() hands the runtime thread, and what the thread answers
 * once it has started the node. */
typedef struct startup {
    rt__runtime *rt;
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
    rt__runtime *rt = st->rt;
    int rc = st->rc = start_node(rt, st->set);
    /* Named once the fork server is forked: it, and the workers it forks,
     * bear the application's name. */
    rt__thread_name("rtask-runtime");
    if (rc < 0)
        snprintf(st->error, sizeof st->error, "%s", rt__last_error());
    sem_post(&st->ready); /* st is gone after this */
    if (rc == 0)
        rt__round_loop(rt);
    return NULL;
}

/* The runtime thread takes no signal: they belong to the application. */
static int start_thread(rt__runtime *rt, const rt__offer *set)
{
    startup st = {.rt = rt, .set = set};
    sem_init(&st.ready, 0, 0);
    int err = rt__thread_start(&rt->thread, NULL, thread_main, &st);
    if (err) {
        sem_destroy(&st.ready);
        return rt__error(RT_ESYS, "rt_init: pthread_create: %s", strerror(err));
    }
    while (sem_wait(&st.ready) < 0 && errno == EINTR)
        ;
    sem_destroy(&st.ready);
    if (st.rc < 0) {
        pthread_join(rt->thread, NULL);
        return rt__error(st.rc, "%s", st.error);
    }
    return 0;
}

/* ---- rt_init() and rt_shutdown() one at a time --------------------------- */

static void set_state(rt__runtime *rt, rt__state state)
{
    pthread_mutex_lock(&rt->lock);
    rt->state = state;
    pthread_mutex_unlock(&rt->lock);
}

/* Wait for the change at work (rt_init(), rt_shutdown()) to end, then
 * begin one, when the state is `from` (-1: any but STOPPED): 1 when
 * begun, 0 when the state is otherwise. */
static int begin_change(rt__runtime *rt, int from)
{
    pthread_mutex_lock(&rt->lock);
    while (rt->changing)
        pthread_cond_wait(&rt->settled, &rt->lock);
    int begin = from < 0 ? rt->state != RT__STOPPED : (int)rt->state == from;
    rt->changing = begin;
    rt->blank &= !begin; /* what the change writes is forgotten at a fork */
    pthread_mutex_unlock(&rt->lock);
    return begin;
}

static void settle(rt__runtime *rt)
{
    pthread_mutex_lock(&rt->lock);
    rt->changing = 0;
    pthread_cond_broadcast(&rt->settled);
    pthread_mutex_unlock(&rt->lock);
}

static int start(rt__runtime *rt, const rt__offer *set)
{
    raise_descriptor_limit();
    rt__code_map_take(&rt->code); /* what the fork server will have */
    rt->code_generation++;
    pthread_mutex_lock(&rt->lock);
    rt->state = RT__STARTING; /* before the thread, which checks it */
    rt->was_shut_down = 0;
    rt->stop_reason = NULL;
    rt->loop_asleep = 0;
    rt->queued = 0;
    rt->store_used = 0;
    rt->store_size = set->store_bytes;
    rt__shm_pool_open(set->store_bytes / RT__POOL_SHARE);
    pthread_mutex_unlock(&rt->lock);
    int rc = start_thread(rt, set);
    if (rc < 0)
        set_state(rt, RT__STOPPED);
    return rc;
}

static void stop_runtime(rt__runtime *rt);

/* A program that ends without rt_shutdown() gets it at exit, on one
 * machine as on rank 0 of a cluster: the workers' last output is relayed,
 * actors' destructors run, the timeline is written, and the other ranks
 * are told to stop.  A child the program forked has no runtime (see
 * forked_child), so the handler does nothing there. */
static void shutdown_at_exit(void)
{
    rt__runtime_stop(rt__runtime_here());
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
static _Noreturn void serve_until_shutdown(rt__runtime *rt)
{
    rt__free(rt->timeline_path);
    rt->timeline_path = NULL;
    rt__cluster_wait(rt->cluster);
    stop_runtime(rt);
    settle(rt); /* for the program's exit handlers */
    exit(0);
}

/* The bridge's thread holds the round for what other ranks sent. */
static int bridge_takes_round(void *rt)
{
    return rt__round_take_running(rt);
}

static void bridge_runs_round(void *rt)
{
    rt__round_bridge(rt); /* the bridge goes back to MPI */
}

/* Join the MPI job, once the local node runs (its fork server forked
 * before MPI starts). */
static int join_cluster(rt__runtime *rt, const rt__offer *set)
{
    rt__cluster *c;
    int rc = rt__cluster_join(&c, set);
    if (rc == 0) {
        rt__round_take(rt);
        rt->cluster = c; /* ended with the runtime, whatever happens */
        rt__serve_setup setup = {rt->checkpoint.dir[0] ? rt->checkpoint.dir : NULL,
                                 rt->spill.dir[0] ? rt->spill.dir : NULL, rt->store_size,
                                 rt->recording};
        rt__round_hook round = {bridge_takes_round, bridge_runs_round, rt};
        rc = rt__cluster_start(c, &rt->loop, &rt->dispatch, rt__local_node(rt->local),
                               rt->door_hooks.serve, &setup, &round);
        rt__round_give(rt);
    }
    if (rc < 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", rt__last_error());
        stop_runtime(rt);
        /* A failed rt_init() leaves the runtime as if it had never been
         * started: later calls are RT_ENOTINIT, not RT_ESHUTDOWN. */
        pthread_mutex_lock(&rt->lock);
        rt->was_shut_down = 0;
        pthread_mutex_unlock(&rt->lock);
        return rt__error(rc, "%s", why);
    }
    if (rt__cluster_serving(c))
        serve_until_shutdown(rt);
    return 0;
}

/* A timeline is kept when the configuration asks or RTASK_TIMELINE names
 * the file that rt_shutdown() writes; its time 0 is now. */
static void start_timeline(rt__runtime *rt, const rt_config *config)
{
    const char *path = getenv("RTASK_TIMELINE");
    rt__timeline_free(&rt->timeline);
    rt__free(rt->timeline_path);
    rt->timeline_path = path && *path ? rt__strdup(path) : NULL;
    rt->recording = (config && config->timeline) || rt->timeline_path;
    rt->timeline.origin_ns = rt__now_ns();
}

/* Processes of one user open each other's memory and descriptors
 * through /proc/<pid> (and ptrace(2)) unless the one opened is not
 * dumpable: a task could write any object's shared memory there.  With
 * the guard, the application is not, nor what it forks from now on (the
 * fork server, the workers), until rt_shutdown(). */
static int start_guard(rt__runtime *rt, const rt_config *config)
{
    const char *env = getenv("RTASK_GUARD_MEMORY");
    int want = config ? config->guard_memory : 0;
    rt->was_dumpable = -1;
    if (want != 0 && want != 1)
        return rt__error(RT_EINVAL, "rt_init: guard_memory must be 0 or 1; %d is invalid",
                         want);
    if (!want && env && *env) { /* the variable, when the configuration says no */
        if (strcmp(env, "0") != 0 && strcmp(env, "1") != 0)
            return rt__error(RT_EINVAL,
                             "rt_init: RTASK_GUARD_MEMORY must be 0 or 1, not \"%s\"", env);
        want = *env == '1';
    }
    if (!want)
        return 0;
    int was = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (was < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return rt__syserror("rt_init: guard_memory: prctl(PR_SET_DUMPABLE)");
    rt->was_dumpable = was;
    return 0;
}

static void end_guard(rt__runtime *rt)
{
    if (rt->was_dumpable >= 0)
        prctl(PR_SET_DUMPABLE, rt->was_dumpable, 0, 0, 0);
    rt->was_dumpable = -1;
}

int rt__runtime_start(rt__runtime *rt, const rt_config *config, rt__door_hooks hooks)
{
    rt__offer set;
    int rc = rt__offer_resolve(config, &set);
    int cluster = rc < 0 ? rc : rt__cluster_wanted(config);
    if (cluster < 0)
        return cluster;
    if (!begin_change(rt, RT__STOPPED))
        return rt__error(RT_EALREADY, "rt_init: the runtime is already running");
    rt->door_hooks = hooks; /* before the runtime thread watches the door */
    start_timeline(rt, config);
    rc = rt__spill_open(rt, config ? config->spill_dir : NULL);
    if (rc == 0)
        rc = rt__checkpoint_open(rt, config ? config->checkpoint_dir : NULL);
    if (rc == 0)
        rc = start_guard(rt, config);
    if (rc == 0 && (rc = start(rt, &set)) < 0)
        end_guard(rt);
    if (rc == 0 && cluster)
        rc = join_cluster(rt, &set);
    if (rc == 0) {
        shutdown_at_exit_once();
        pthread_mutex_lock(&rt->lock);
        if (rt->state == RT__STARTING) /* not stopped by a failure since */
            rt->state = RT__RUNNING;
        pthread_mutex_unlock(&rt->lock);
        rt->door_hooks.opened();
    }
    settle(rt);
    return rc;
}

/* ---- rt_shutdown ---------------------------------------------------------- */

/* [L] Let threads blocked in rt_get()/rt_wait() see the end and leave
 * before the records they look at are freed. */
static void let_waiters_leave(rt__runtime *rt)
{
    pthread_cond_broadcast(&rt->changed);
    while (rt->waiters > 0)
        pthread_cond_wait(&rt->changed, &rt->lock);
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
static void finish_shutdown(rt__runtime *rt)
{
    rt__dispatch *d = &rt->dispatch;
    rt__exchange x = {0};
    rt__round_take(rt); /* a late submitter's round waits, then finds it stopped */
    /* No call gets past rt__check_running() now: the tables are ours. */
    pthread_mutex_lock(&rt->lock);
    rt__tasks incoming = rt->incoming;
    rt__table actors = rt->actors;
    rt->incoming = (rt__tasks){0};
    rt->actors = (rt__table){.fifo = 1};
    rt__table groups = rt->groups; /* their records are the scheduler's */
    rt->groups = (rt__table){.fifo = 1};
    rt->kills = NULL;
    for (rt__ask *c = rt->asks, *next; c; c = next) {
        next = c->next; /* the tasks fail with the others */
        if (rt__ask_answered_locked(rt, c, NULL))
            rt__free(c);
    }
    rt->asks = NULL;
    pthread_mutex_unlock(&rt->lock);
    rt__table_free(&actors, free_epitaph); /* before the actors it tells apart */
    rt__table_free(&groups, NULL);
    rt__dispatch_absorb(d, &incoming);
    rt__dispatch_free(d, "the runtime was shut down");
    char *trace = NULL; /* RTASK_TIMELINE's: rendered here, written after the round */
    size_t trace_len = 0;
    if (rt->timeline_path &&
        rt__timeline_render(&rt->timeline, &trace, &trace_len) < 0)
        rt__warn("RTASK_TIMELINE: %s", rt__last_error());
    pthread_mutex_lock(&rt->lock);
    rt__exchange_locked(rt, &x);
    rt__errands_fail_locked(rt, x.errands); /* the books are gone */
    rt->state = RT__STOPPED;
    rt->was_shut_down = 1;
    let_waiters_leave(rt);
    rt__objects_end_views(rt, &x.orphans);
    rt__table tasks = rt->tasks;
    rt->tasks = (rt__table){0};
    pthread_mutex_unlock(&rt->lock);
    rt__free(rt->pull_asks);
    rt->pull_asks = NULL;
    rt->npull_asks = rt->cap_pull_asks = 0;
    rt__checkpoint_write(rt, &x.keep); /* the round's still: it writes them */
    rt__checkpoint_close(rt);
    rt__round_give(rt);
    if (trace && rt__timeline_save(trace, trace_len, rt->timeline_path) < 0)
        rt__warn("RTASK_TIMELINE: %s", rt__last_error());
    free(trace);
    rt__free(x.pulls);
    rt__outbox_free(&x.out);
    rt__tasks_free(&x.orphans);
    rt__table_free(&tasks, free_task_item); /* and the files of those spilled */
    rt__spill_close(rt);
    rt__forgotten none[64]; /* the ranks that held them are gone */
    while (rt__task_forgotten(none, 64) > 0)
        continue;
    stop_books(rt); /* no rt_ready() is left: they are waiters */
    rt__shm_pool_close(); /* what was kept for reuse, and what comes back later */
    if (rt->cluster) {
        rt__cluster_end(rt->cluster);
        rt->cluster = NULL;
    }
    rt__wakers_close(rt);
    rt__sink_drain(RT__OUTPUT_WAIT_MS * 10); /* what the workers printed, before we return */
    end_guard(rt); /* the workers are gone */
}

int rt__runtime_stop(rt__runtime *rt)
{
    if (begin_change(rt, -1)) {
        stop_runtime(rt);
        settle(rt);
    }
    return 0;
}

/* By the thread that began a change. */
static void stop_runtime(rt__runtime *rt)
{
    if (rt->door_hooks.closing) /* none before the first rt_init() */
        rt->door_hooks.closing();
    pthread_mutex_lock(&rt->lock);
    rt__state state = rt->state;
    if (state != RT__STOPPED)
        rt->state = RT__STOPPING;
    pthread_mutex_unlock(&rt->lock);
    if (state != RT__STOPPED) {
        rt__wake_runtime(rt);
        pthread_join(rt->thread, NULL);
        finish_shutdown(rt);
    }
    rt->door_hooks.close(); /* after every call its threads wait in ended */
}

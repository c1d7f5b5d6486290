/* local.c - the local node: its operations on workers, its pool, its
 * start and stop.  Each worker's record is workers.c's. */
#include "local.h"

#include "client.h"
#include "forkserver.h"
#include "workers.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/linger.h"
#include "base/shm.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/* Keep target_idle workers idle, and as many spares (fresh ones) as
 * tasks that need them call for (spares.h). */
static int wants_workers(const rt__local *l)
{
    /* Every round asks: the clock only once a lease has needed a spare. */
    return !l->spawn_failing && l->task_workers < l->max &&
           (l->nidle < l->target_idle ||
            (l->spares.last_ns &&
             l->nfresh < rt__spares_wanted(&l->spares, rt__now_ns())));
}

static void top_up(rt__local *l)
{
    while (wants_workers(l)) {
        rt__worker *w = rt__workers_start(l);
        if (!w)
            return;
        l->task_workers++;
        rt__workers_idle_add(l, w);
    }
}

/* ---- the node's operations -------------------------------------------- */

/* Prefer a worker that runs already, and among those the one that ran the
 * most: it was used last, its caches are warm. */
static int better(const rt__worker *w, const rt__worker *than)
{
    if (!than || (w->pid && !than->pid))
        return 1;
    return (w->pid != 0) == (than->pid != 0) && w->calls > than->calls;
}

static int can_serve(const rt__worker *w, int fresh, int max_calls)
{
    if (fresh)
        return w->calls == 0;
    return max_calls == 0 || w->calls < (size_t)max_calls;
}

static void retire(rt__worker *w)
{
    rt__local *l = w->node;
    rt__workers_idle_remove(l, w);
    w->retiring = 1;
    /* One that answered its last task is leaving by itself: its end of
     * file will close our end, not in the round of its caller. */
    if (!w->leaving)
        rt__workers_close_socket(w);
}

static rt__worker *find_idle(rt__local *l, int fresh, int max_calls)
{
    rt__worker *found = NULL, *unfit = NULL;
    for (rt__worker *w = RT__FIRST(&l->idle, rt__worker, idle_link); w;
         w = RT__NEXT(&l->idle, w, rt__worker, idle_link)) {
        if (!can_serve(w, fresh, max_calls))
            unfit = w;
        else if (better(w, found))
            found = w;
    }
    /* Make room: the pool keeps its size, and a worker takes the retired
     * one's place once it has exited. */
    if (!found && unfit && l->task_workers >= l->max)
        retire(unfit);
    return found;
}

/* An actor's process is its own: it is started for the actor, never
 * taken from the pool of task workers, and not counted against max. */
static rt__worker *op_lease(rt__node *n, int fresh, int max_calls, rt__amount cpu,
                            void *owner, size_t *calls)
{
    (void)cpu; /* the leases of this node's own tasks' tasks are its caller's */
    rt__local *l = (rt__local *)n;
    rt__worker *w = fresh ? NULL : find_idle(l, fresh, max_calls);
    if (!fresh && max_calls == 1)
        rt__spares_leased(&l->spares, rt__now_ns());
    if (w) {
        rt__workers_idle_remove(l, w);
    } else {
        int backing_off = l->spawn_failing && l->running > 0 &&
                          rt__now_ns() < l->spawn_retry_ns;
        if (!fresh && (l->task_workers >= l->max || backing_off)) {
            errno = EAGAIN; /* a running worker will take the lease */
            return NULL;
        }
        if (!(w = rt__workers_start(l))) {
            if (errno == 0)
                errno = ENOMEM;
            /* Out of descriptors with workers running: tasks wait for
             * them.  With none, nothing would ever run: the caller fails. */
            if (!fresh && l->task_workers > 0 && (errno == EMFILE || errno == ENFILE))
                errno = EAGAIN;
            return NULL;
        }
        if (fresh)
            w->actor = 1;
        else
            l->task_workers++;
    }
    w->owner = owner;
    w->max_calls = fresh || max_calls < 0 ? 0 : (size_t)max_calls;
    *calls = w->calls - w->taken_back;
    return w;
}

/* Send a message that sets worker state (its name, its devices) unless
 * the worker already has that state; *sent remembers what it has. */
static int same_state(const char *sent, const char *now)
{
    return sent && strcmp(sent, now) == 0;
}

static int remember(char **sent, const char *now)
{
    char *copy = rt__strdup(now);
    if (!copy)
        return -1;
    rt__free(*sent);
    *sent = copy;
    return 0;
}

/* The devices w was last told of, if any, and d differs: compared in
 * place, since a synchronous task gets a lease, and so this question, each
 * time. */
static int new_devices(const rt__worker *w, const rt__devices *d)
{
    return !w->devices_text || !rt__devices_same(&w->devices_sent, d);
}

static int op_devices(rt__node *n, rt__worker *w, const rt__devices *d)
{
    rt__local *l = (rt__local *)n;
    if (!new_devices(w, d))
        return 0;
    char env[4096];
    rt__devices with_env = *d;
    with_env.env = env;
    with_env.accel_name = l->families.accel == RT__FAM_NONE
                              ? "" : rt__families[l->families.accel].resource;
    rt__held held = {d->gpus, d->share, d->memory, d->accel};
    if (rt__family_env(&l->families, &held, env, sizeof env) >= sizeof env)
        env[0] = '\0'; /* ids longer than any real machine's: none named */
    /* Encoded once: sent, and kept (decoded) to compare the next lease's. */
    char *text = rt__devices_encode(&with_env), *copy = NULL;
    rt__devices sent;
    if (!text || rt__devices_decode(text, strlen(text), &sent, &copy) < 0 ||
        rt__proto_send_devices(&w->chan, text) < 0) {
        rt__free(text);
        rt__free(copy);
        return -1;
    }
    rt__free(text);
    rt__free(w->devices_text);
    w->devices_text = copy;
    w->devices_sent = sent;
    rt__workers_dirty(w);
    return 0;
}

/* Workers name their output after the function unless a task gives a
 * name (an empty NAME means the function).  An actor's calls keep the
 * name its constructor brought.  A worker's first task, once its process
 * is known, is labelled here instead: the worker writes no marker, and
 * its task (a fresh worker's, a GPU task's) is spared two writes that
 * would wake the runtime thread. */
static int send_name(rt__worker *w, const rt__task *t)
{
    const char *name = rt__task_named(t) ? rt__task_named(t) : "";
    int label = w->calls == 0 && w->pid > 0;
    if (t->call.kind == RT__KIND_CALL || (!label && same_state(w->name_sent, name)))
        return 0;
    if (remember(&w->name_sent, name) < 0 || rt__proto_send_name(&w->chan, name, label) < 0)
        return -1;
    if (label) {
        rt__relay_label(&w->out, (uint64_t)(uintptr_t)t->call.fn, rt__task_named(t), w->pid);
        rt__relay_label(&w->err, (uint64_t)(uintptr_t)t->call.fn, rt__task_named(t), w->pid);
    }
    return 0;
}

/* A task's own variables (rt_opts.env_vars) go to a worker that does not
 * have them already ("": none, as a new worker has); an actor's calls
 * keep those its constructor brought. */
static int send_env(rt__worker *w, const rt__task *t)
{
    const char *vars = rt__task_env(t) ? rt__task_env(t) : "";
    if (t->call.kind == RT__KIND_CALL || same_state(w->env_sent ? w->env_sent : "", vars))
        return 0;
    return remember(&w->env_sent, vars) < 0 || rt__proto_send_env(&w->chan, vars) < 0 ? -1 : 0;
}

/* The message of a record: by its kind, and whether it takes a list. */
static uint32_t msg_of(const rt__task *t)
{
    int list = t->call.args_form != RT__ARGS_ONE;
    switch (t->call.kind) {
    case RT__KIND_CREATE: return RT__MSG_CREATE;
    case RT__KIND_CALL: return list ? RT__MSG_CALL_ARGS : RT__MSG_CALL;
    default: return list ? RT__MSG_TASK_ARGS : RT__MSG_TASK;
    }
}

/* The task, with its arguments' list encoded now: objects' memfds go as
 * they are, so that the worker maps what the store holds. */
static int send_task(rt__worker *w, const rt__task *t)
{
    rt__task_msg m = {.type = msg_of(t), .id = t->call.id, .fn = (uint64_t)(uintptr_t)t->call.fn,
                      .attempt = rt__task_attempt(t),
                      .arg = rt__task_arg(t), .arg_fd = t->call.arg_fd, .nargs = rt__task_nargs(t),
                      .by_fd = 1};
    if (t->call.args_form != RT__ARGS_LIST) {
        m.len = t->call.arg_len;
        return rt__proto_send_task(&w->chan, &m);
    }
    rt__arg_msg *args = rt__malloc((rt__task_nargs(t) + 1) * sizeof *args);
    if (!args)
        return -1;
    rt__task_arg_msgs(t, args);
    m.args = args;
    int rc = rt__proto_send_task(&w->chan, &m);
    rt__free(args);
    return rc;
}

/* A worker told that its next task is its last leaves its process as
 * that task left it, and exits once it has answered it (worker.c): a
 * fresh worker's task (a GPU task's, by default) is spared the undoing,
 * and its caller the worker's retirement. */
static int send_last(rt__worker *w, const rt__task *t)
{
    size_t ran = w->calls - w->taken_back;
    if (t->call.kind != RT__KIND_TASK || !w->max_calls || ran + 1 < w->max_calls)
        return 0;
    w->last_task = t->call.id;
    return rt__proto_send_last(&w->chan);
}

/* A worker that answered with a large result gets, with its next task,
 * a memfd of the pool as large, so that its next result is written into
 * pages that exist already (shm.h).  Without one it makes its own. */
static int send_spare(rt__worker *w)
{
    int fd = w->last_large ? rt__shm_pool_take(RT__BUF_HDR + w->last_large, w->shm_owner)
                           : -1;
    w->last_large = 0;
    return fd < 0 ? 0 : rt__proto_send_spare(&w->chan, fd);
}

static int op_send(rt__node *n, rt__worker *w, const rt__task *t,
                   const rt__actor_spec *actor)
{
    (void)n;
    if (send_name(w, t) < 0 || send_env(w, t) < 0 || send_spare(w) < 0 ||
        (t->run.board_seq && rt__proto_send_post(&w->chan, t->run.board_seq) < 0) ||
        send_last(w, t) < 0 ||
        (actor && rt__proto_send_actor(&w->chan, actor->handle, actor->fini,
                                       actor->concurrency) < 0) ||
        send_task(w, t) < 0)
        return -1;
    w->calls++;
    rt__workers_dirty(w);
    return 0;
}

/* Fence off what w was sent after the task it started last (worker.h):
 * how many tasks that takes back now, the last ones in flight. */
static size_t take_back(rt__local *l, rt__worker *w)
{
    _Atomic uint64_t *starts = &l->slots[w->slot].starts;
    uint64_t now = atomic_load(starts), ahead, skip, sent = w->calls - w->inside;
    do {
        uint64_t last = now >> RT__SKIP_BITS;
        skip = now & RT__SKIP_MAX;
        ahead = sent > last ? sent - last : 0;
        if (ahead > RT__SKIP_MAX || ahead <= skip)
            return 0; /* nothing new behind it (or more than a fence holds) */
    } while (!atomic_compare_exchange_weak(starts, &now, now - skip + ahead));
    w->taken_back += ahead - skip;
    return ahead - skip;
}

/* While its task waits, w does not count against the node's workers (a
 * task in its place may need one), but at most max workers wait so.  Past
 * that, w still counts, but the tasks sent behind its task are taken back
 * all the same: the one it waits for may be among them. */
static long op_lend(rt__node *n, rt__worker *w, int lend)
{
    rt__local *l = (rt__local *)n;
    if (w->actor || w->gone || (unsigned)lend == w->lent)
        return -1;
    if (lend && l->lent >= l->max)
        return (long)take_back(l, w);
    w->lent = lend != 0;
    l->lent += lend ? 1 : (size_t)-1;
    l->task_workers += lend ? (size_t)-1 : 1;
    return lend ? (long)take_back(l, w) : 0;
}

static long op_take_back(rt__node *n, rt__worker *w)
{
    return w->actor || w->gone ? -1 : (long)take_back((rt__local *)n, w);
}

static void op_given_inside(rt__node *n, rt__worker *w)
{
    (void)n;
    w->calls++;
    w->inside++;
}

static void op_ask_stop(rt__node *n, rt__worker *w, uint64_t task)
{
    rt__local *l = (rt__local *)n;
    atomic_store(&l->slots[w->slot].cancelled, task);
}

static void op_release(rt__node *n, rt__worker *w, int retire_it)
{
    rt__local *l = (rt__local *)n;
    w->owner = NULL;
    if (retire_it || w->actor || w->chan.fd < 0 || w->leaving) {
        retire(w);
    } else {
        rt__workers_idle_add(l, w);
    }
}

static void op_stop(rt__node *n, rt__worker *w)
{
    (void)n;
    w->retiring = 1;
    w->stop_sending = 1;
    rt__workers_shut_if_stopping(w);
}

static void op_kill(rt__node *n, rt__worker *w)
{
    (void)n;
    rt__workers_kill(w);
}

static uint64_t op_lane(rt__node *n, rt__worker *w)
{
    (void)n;
    return (uint64_t)w->pid;
}

static uint64_t op_busy_us(rt__node *n, rt__worker *w, uint64_t now_ns)
{
    const rt__run_slot *slot = &((rt__local *)n)->slots[w->slot];
    if (!atomic_load(&slot->running))
        return 0;
    uint64_t since = atomic_load(&slot->since_ns);
    return now_ns > since ? (now_ns - since) / 1000 : 0;
}

static void op_flush(rt__node *n, int caller_waits)
{
    rt__local *l = (rt__local *)n;
    while (l->dirty) {
        rt__worker *w = l->dirty;
        l->dirty = w->dnext;
        w->dirty = 0;
        rt__workers_flush(w, caller_waits);
    }
    /* New workers are for later tasks: an application thread that runs
     * this round (a synchronous task) leaves the forks to the runtime
     * thread rather than make its caller wait for them.  It wakes that
     * thread only when the idle pool is short or no spare is left: one
     * taken from several is replaced once the thread is up anyway (its
     * worker's exit wakes it), not while the task that took it runs,
     * where the fork would compete with it for the CPUs. */
    if (pthread_equal(pthread_self(), l->thread))
        top_up(l);
    else if (wants_workers(l) && (l->nidle == 0 || l->nfresh == 0))
        rt__wake_signal(&l->refill);
    rt__workers_flush_forkserver(l);
}

/* Whether w's journal holds answers not yet received (or says that some
 * it sent wait in the socket: rt__journal_holds()). */
static int journal_holds(const void *worker)
{
    const rt__worker *w = worker;
    return rt__journal_holds(&w->node->slots[w->slot].journal, w->answered) != 0;
}

/* The caller sends a task and waits for its answer; reading it here
 * spares the runtime thread a wake-up and the caller another.  Unwatched
 * meanwhile (its events set to none: cheaper than out of the loop and
 * back, and it cannot fail), the socket wakes nobody else; it is watched
 * again once its answer is read, as a readable socket watched would wake
 * the runtime thread for nothing (and it would then wait for the round).
 * What that thread's last wait found for it is read then, and finds
 * nothing more.
 *
 * While the slot says that we wait, a worker that kept its answer in its
 * journal does not send it (worker.c): it is read there, and neither the
 * worker's send nor our receive is in the wait (a system call each on a
 * Unix socket, 1 us here, where a pipe's takes 0.25).  The worker sends
 * it later, and that copy is dropped (rt__workers_read_answers()).  Each
 * side writes its word, then reads the other's: once we stop waiting,
 * either the worker sees it and sends, or we find the answer it kept. */
static int op_await(rt__node *n, rt__worker *w, int timeout_us)
{
    rt__local *l = (rt__local *)n;
    int fd = w->chan.fd;
    if (fd < 0)
        return 0;
    rt__workers_flush(w, 1); /* the task may still wait in our buffer */
    uint32_t events = w->w_sock.events;
    rt__loop_modify(l->loop, &w->w_sock, 0);
    rt__run_slot *slot = &l->slots[w->slot];
    size_t before = w->answered;
    int read = 0, what;
    uint64_t until = rt__now_ns() + RT__LINGER_NS;
    atomic_store(&slot->awaited, RT__AWAIT_NOW); /* a last task's worker lets us read first */
    while (w->answered == before && w->chan.fd >= 0 &&
           (what = rt__linger_until(fd, until, journal_holds, w)))
        read |= rt__workers_read_answers(w, what == 2);
    atomic_store(&slot->awaited, RT__AWAIT_NONE); /* before the journal is read again */
    read |= rt__workers_read_answers(w, 0); /* kept while it saw us wait */
    if (w->answered == before && w->chan.fd >= 0) {
        /* A quick task's answer comes before a sleep would end. */
        struct pollfd p = {.fd = fd, .events = POLLIN};
        struct timespec ts = {timeout_us / 1000000, (long)(timeout_us % 1000000) * 1000};
        if (ppoll(&p, 1, &ts, NULL) > 0)
            read |= rt__workers_read_answers(w, 1);
    }
    if (w->w_sock.fd >= 0) /* not lost meanwhile */
        rt__loop_modify(l->loop, &w->w_sock, events);
    return read;
}

void rt__local_unhold(rt__local *l)
{
    for (int i = 0; i < RT__SOON_KEPT; i++) {
        uint32_t slot = atomic_load(&l->soon[i]), soon = RT__AWAIT_SOON;
        if (slot)
            atomic_compare_exchange_strong(&l->slots[slot - 1].awaited, &soon, RT__AWAIT_NONE);
    }
}

static uint64_t op_board_claim(rt__node *n, rt__worker *w)
{
    return rt__board_claim(&((rt__local *)n)->board, w->slot);
}

static void op_board_give_back(rt__node *n, uint64_t seq)
{
    rt__board_give_back(&((rt__local *)n)->board, seq);
}

static const rt__node_ops local_ops = {
    .lease = op_lease,
    .devices = op_devices,
    .send = op_send,
    .release = op_release,
    .stop = op_stop,
    .kill = op_kill,
    .lane = op_lane,
    .busy_us = op_busy_us,
    .flush = op_flush,
    .await = op_await,
    .lend = op_lend,
    .take_back = op_take_back,
    .given_inside = op_given_inside,
    .ask_stop = op_ask_stop,
    .board_claim = op_board_claim,
    .board_give_back = op_board_give_back,
};

/* ---- start and stop -------------------------------------------------------- */

static int alloc_books(rt__local *l)
{
    l->free_slots = rt__calloc(SLOTS_MAX, sizeof *l->free_slots);
    l->by_slot = rt__calloc(SLOTS_MAX, sizeof *l->by_slot);
    if (!l->free_slots || !l->by_slot)
        return -1;
    for (size_t i = 0; i < SLOTS_MAX; i++)
        l->free_slots[i] = (uint32_t)(SLOTS_MAX - 1 - i);
    l->nfree = SLOTS_MAX;
    return 0;
}

static void free_books(rt__local *l)
{
    if (l->door >= 0)
        close(l->door);
    if (l->slots)
        munmap(l->slots, SLOTS_MAX * sizeof *l->slots);
    rt__board_unmap(l->board.board);
    rt__board_keeper_free(&l->board);
    rt__free(l->gpus);
    rt__free(l->free_slots);
    rt__free(l->by_slot);
    rt__free(l);
}

/* The worker whose process is pid, or NULL. */
static rt__worker *worker_of(rt__local *l, pid_t pid)
{
    for (rt__worker *w = RT__FIRST(&l->all, rt__worker, link); w;
         w = RT__NEXT(&l->all, w, rt__worker, link))
        if (w->pid == pid)
            return w;
    return NULL;
}

static void stop_watching_gpus(rt__local *l)
{
    if (l->gpu_watch < 0)
        return;
    if (l->loop && l->w_gpu.fd == l->gpu_watch)
        rt__loop_remove(l->loop, &l->w_gpu);
    close(l->gpu_watch);
    l->gpu_watch = -1;
}

/* A watcher that ends within this long of its start counts as a quick
 * death; after QUICK_DEATHS_MAX in a row no other is started. */
#define WATCHER_QUICK_NS (10ull * 1000000000ull)
#define QUICK_DEATHS_MAX 3

static void on_gpu_watch(rt__watch *watch, uint32_t events);

/* Start a watcher and hear it on the loop (when attached): 0, or -1. */
static int start_watching_gpus(rt__local *l)
{
    l->watcher = 0;
    l->unwatched = 0;
    l->watcher_since_ns = rt__now_ns();
    if (rt__gpu_watch_start(l->gpus, &l->gpu_watch) < 0) {
        l->gpu_watch = -1;
        return -1;
    }
    if (l->loop && rt__loop_add(l->loop, &l->w_gpu, l->gpu_watch, EPOLLIN, on_gpu_watch) < 0) {
        close(l->gpu_watch); /* unwatched: the watcher ends */
        l->gpu_watch = -1;
        return -1;
    }
    return 0;
}

/* How a warning names a watcher: by its pid once it said it watches
 * (pid > 0); else it ended as it started. */
static const char *watcher_named(char *out, size_t n, pid_t pid)
{
    if (pid > 0)
        snprintf(out, n, "the GPUs' watcher (pid %d)", (int)pid);
    else
        snprintf(out, n, "the GPUs' watcher, as it started,");
    return out;
}

/* The watcher ended.  One that said NVML could not start leaves nothing
 * to watch, or, for one that replaced a dead one, nothing more.  Any
 * other died (killed, crashed; or it could not be forked), after it said
 * it watches or before: start another, which reads again what NVML still
 * knows (a GPU lost meanwhile), unless watchers keep dying at once. */
static void watcher_ended(rt__local *l)
{
    pid_t pid = l->watcher, dead = l->replacing;
    int unwatched = l->unwatched;
    char who[48];
    stop_watching_gpus(l);
    l->replacing = 0;
    if (unwatched && dead)
        rt__warn("%s ended, and no other could start: GPU health is no longer watched",
                 watcher_named(who, sizeof who, dead));
    if (unwatched)
        return;
    watcher_named(who, sizeof who, pid);
    int quick = rt__now_ns() - l->watcher_since_ns < WATCHER_QUICK_NS;
    l->quick_deaths = quick ? l->quick_deaths + 1 : 0;
    if (l->quick_deaths >= QUICK_DEATHS_MAX) {
        rt__warn("%s ended, as the %d before it did soon after they started: GPU health is "
                 "no longer watched", who, QUICK_DEATHS_MAX - 1);
        return;
    }
    if (start_watching_gpus(l) < 0)
        rt__warn("%s ended, and no other could be started (%s): GPU health is no longer "
                 "watched", who, strerror(errno));
    else /* said once the new one watches; -1: the dead one's pid was never known */
        l->replacing = pid ? pid : dead ? dead : -1;
}

/* What the watcher saw: each record to the listener, a usage with the
 * lease of the worker whose process it names. */
static void on_gpu_watch(rt__watch *watch, uint32_t events)
{
    rt__local *l = RT__OWNER(watch, rt__local, w_gpu);
    rt__gpu_event e[64];
    long n;
    (void)events;
    while ((n = rt__gpu_watch_read(l->gpu_watch, e, 64)) > 0)
        for (long i = 0; i < n; i++) {
            if (e[i].kind == RT__GPU_UNWATCHED) {
                l->unwatched = 1;
                continue;
            }
            if (e[i].kind == RT__GPU_WATCHING) {
                l->watcher = (pid_t)e[i].pid;
                char who[48];
                if (l->replacing)
                    rt__warn("%s ended; watcher %d watches the GPUs from now on",
                             watcher_named(who, sizeof who, l->replacing), (int)l->watcher);
                l->replacing = 0;
                continue;
            }
            rt__worker *w = e[i].kind == RT__GPU_USAGE ? worker_of(l, (pid_t)e[i].pid) : NULL;
            if (l->node.ev.gpu)
                l->node.ev.gpu(l->node.ev.ctx, &l->node, &e[i], w ? w->owner : NULL, w != NULL);
        }
    if (n < 0)
        watcher_ended(l);
}

int rt__local_start(rt__local **out, const rt__family_set *families, size_t target_idle,
                    size_t max, rt__keep keep, const rt__machine *gpus)
{
    rt__local *l = rt__calloc(1, sizeof *l);
    if (l)
        l->door = -1;
    if (!l || alloc_books(l) < 0) {
        if (l)
            free_books(l);
        return rt__error(RT_ENOMEM, "rt_init: no memory for the worker pool");
    }
    l->node.ops = &local_ops;
    l->families = *families;
    rt__link_init(&l->all);
    rt__link_init(&l->idle);
    l->target_idle = target_idle;
    l->max = max;
    l->w_forkserver.fd = -1;
    l->refill.fd = -1;
    l->gpu_watch = -1;
    l->slots = mmap(NULL, SLOTS_MAX * sizeof *l->slots, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (l->slots == MAP_FAILED) {
        l->slots = NULL;
        free_books(l);
        return rt__syserror("rt_init: mmap");
    }
    /* Without a board, graphs run as well, each step through the runtime. */
    if (rt__board_keeper_init(&l->board, rt__board_map(SLOTS_MAX)) < 0) {
        free_books(l);
        return rt__error(RT_ENOMEM, "rt_init: no memory for the result board");
    }
    /* The workers keep their end of the door, besides what keep says. */
    int ctl, theirs, kept[RT__KEEP_MAX + 1];
    if (keep.n > RT__KEEP_MAX || rt__client_door_open(&l->door, &theirs) < 0) {
        int rc = rt__local_start_error("rt_init: the workers' door");
        free_books(l);
        return rc;
    }
    memcpy(kept, keep.fd, (size_t)keep.n * sizeof *kept);
    kept[keep.n] = theirs;
    l->forkserver_pid = rt__forkserver_start(&ctl, &l->forkserver_exited, l->slots,
                                             SLOTS_MAX, l->board.board,
                                             (rt__keep){kept, keep.n + 1, keep.shared_memory});
    close(theirs); /* the fork server's and its workers' now */
    if (l->forkserver_pid < 0) {
        int rc = rt__local_start_error("rt_init: fork");
        free_books(l);
        return rc;
    }
    rt__chan_init(&l->forkserver, ctl);
    rt__workers_nonblocking(ctl);
    /* Forked as early as the fork server, while little of ours is held. */
    if (gpus && (l->gpus = rt__malloc(sizeof *l->gpus))) {
        *l->gpus = *gpus;
        (void)start_watching_gpus(l);
    }
    *out = l;
    return 0;
}

int rt__local_start_error(const char *step)
{
    if (errno == EMFILE || errno == ENFILE)
        return rt__syserror("rt_init: no worker could be started (raise the "
                            "descriptor limit, ulimit -n)");
    return rt__syserror(step);
}

static void on_refill(rt__wake *w)
{
    rt__local *l = RT__OWNER(w, rt__local, refill);
    top_up(l);
    rt__workers_flush_forkserver(l);
}

int rt__local_attach(rt__local *l, rt__loop *loop)
{
    l->loop = loop;
    l->thread = pthread_self();
    if (rt__wake_open(&l->refill) < 0 || rt__wake_watch(loop, &l->refill, on_refill) < 0 ||
        rt__loop_add(loop, &l->w_forkserver, l->forkserver.fd, EPOLLIN, rt__workers_on_forkserver) < 0)
        return -1;
    if (l->gpu_watch >= 0 && rt__loop_add(loop, &l->w_gpu, l->gpu_watch, EPOLLIN, on_gpu_watch) < 0) {
        close(l->gpu_watch); /* unwatched: the watcher ends */
        l->gpu_watch = -1;
    }
    errno = 0;
    top_up(l);
    if (l->task_workers == 0 && l->target_idle > 0)
        return -1; /* with errno: not one worker can start */
    if (l->task_workers < l->target_idle && errno != EAGAIN)
        rt__warn("only %zu of the %zu workers asked for could start (%s); tasks "
                 "share those", l->task_workers, l->target_idle, strerror(errno));
    return 0;
}

rt__node *rt__local_node(rt__local *l)
{
    return &l->node;
}

int rt__local_door(const rt__local *l)
{
    return l->door;
}

pid_t rt__local_forkserver(const rt__local *l)
{
    return l->forkserver_pid;
}

void rt__local_stop(rt__local *l)
{
    stop_watching_gpus(l); /* its pipe closed: the watcher ends */
    if (l->forkserver.fd >= 0)
        rt__forkserver_stop(l->forkserver.fd, l->forkserver_exited);
    rt__chan_close(&l->forkserver);
    rt__wake_close(NULL, &l->refill);
    for (rt__worker *w; (w = RT__FIRST(&l->all, rt__worker, link));) {
        rt__list_remove(&w->link);
        rt__workers_free(w); /* relays the output the worker left */
    }
    free_books(l);
}

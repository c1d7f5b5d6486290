/* local.c - the local node: start, feed, read, retire and forget workers. */
#include "local.h"

#include "forkserver.h"
#include "output.h"
#include "spares.h"
#include "worker.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/list.h"
#include "base/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run slots are mapped before the fork server is forked, so the mapping
 * cannot grow later: map room for this many workers at once (512 MiB of
 * addresses).  Pages are touched only as workers use them, and a freed
 * slot is the first one reused. */
#define SLOTS_MAX 32768
/* A worker holds six descriptors here until its SPAWN reaches the fork
 * server, three afterwards: start at most this many at a time. */
#define STARTING_MAX 256
/* After a fork failed (the process limit), tasks wait for the workers
 * that run, and a new one is tried again after this long. */
#define SPAWN_RETRY_NS 1000000000ull


struct rt__worker {
    rt__link link;             /* in the list of workers, or the graveyard */
    rt__link idle_link;        /* in the idle list while idle */
    rt__worker *dnext;         /* in the list of workers with output to send */
    rt__local *node;
    uint32_t slot;             /* its run slot; also its key with the fork server */
    pid_t pid;                 /* 0 until the fork server says */
    rt__chan chan;             /* fd -1 once closed; input may remain */
    rt__relay out, err;
    rt__watch w_sock, w_out, w_err;
    void *owner;               /* the dispatcher's lease, NULL while idle */
    size_t calls;              /* tasks sent to it in its life */
    size_t answered;           /* answers it gave */
    char *name_sent;           /* the NAME last sent, or NULL */
    rt__devices devices_sent;  /* the devices last sent, pointing into */
    char *devices_text;        /* this, or NULL before any */
    unsigned dirty : 1, retiring : 1, stop_sending : 1, shut : 1, gone : 1, actor : 1,
        broke : 1, send_failed : 1;
    int wait_status;           /* how it exited */
    int spawn_errno;           /* why the fork server could not fork it */
    uint64_t spawn_ns;         /* when the fork server was asked for it */
};

struct rt__local {
    rt__node node;             /* ops and events: what the dispatcher sees */
    rt__family_set families;   /* what its tasks are told of their devices */
    rt__loop *loop;
    pid_t forkserver_pid;
    int forkserver_exited;        /* its pidfd: readable once it has ended */
    rt__chan forkserver;
    rt__watch w_forkserver;
    int failed;                /* the fork server is gone */
    rt__run_slot *slots;
    uint32_t *free_slots;      /* a stack of unused slot numbers */
    size_t nfree;
    rt__worker **by_slot;
    rt__link all, idle, graveyard; /* workers: running, idle (also in all), gone */
    rt__worker *dirty;
    size_t nidle, task_workers;
    size_t nfresh;             /* idle workers that never ran a task */
    rt__spares spares;         /* how many of those to keep */
    pthread_t thread;          /* the runtime thread, which forks them */
    rt__wake refill;           /* other threads ask it to */
    size_t starting;           /* asked for, not yet reported by the fork server */
    size_t target_idle, max;
    int spawn_failing;         /* the last spawn failed: no idle top-ups */
    uint64_t spawn_retry_ns;   /* and no new worker before then, while one runs */
    size_t running;            /* workers whose process runs */
};

/* ---- lists ----------------------------------------------------------------- */


static void idle_add(rt__local *l, rt__worker *w)
{
    rt__list_push_front(&l->idle, &w->idle_link);
    l->nidle++;
    l->nfresh += w->calls == 0;
}

static void idle_remove(rt__local *l, rt__worker *w)
{
    if (w->idle_link.next == &w->idle_link)
        return; /* not idle */
    rt__list_remove(&w->idle_link);
    l->nidle--;
    l->nfresh -= w->calls == 0;
}

static void mark_dirty(rt__worker *w)
{
    if (w->dirty)
        return;
    w->dirty = 1;
    w->dnext = w->node->dirty;
    w->node->dirty = w;
}

/* ---- sockets and output ------------------------------------------------- */

/* No more tasks: the end of file makes the worker exit.  shutdown()
 * gives it even while a child the application forked holds a copy of
 * our end; close() alone would not. */
static void close_socket(rt__worker *w)
{
    rt__loop_remove(w->node->loop, &w->w_sock);
    if (w->chan.fd >= 0) {
        shutdown(w->chan.fd, SHUT_RDWR);
        close(w->chan.fd);
    }
    w->chan.fd = -1;
}

static void on_socket(rt__watch *wt, uint32_t events);

static void relay(rt__local *l, rt__watch *wt, rt__relay *r)
{
    long got;
    while ((got = rt__relay_read(r)) > 0)
        ;
    if (got == 0 || (errno != EAGAIN && errno != ENOMEM))
        rt__loop_remove(l->loop, wt); /* closed when the worker is freed */
}

static void on_stdout(rt__watch *wt, uint32_t events)
{
    rt__worker *w = RT__OWNER(wt, rt__worker, w_out);
    (void)events;
    relay(w->node, wt, &w->out);
}

static void on_stderr(rt__watch *wt, uint32_t events)
{
    rt__worker *w = RT__OWNER(wt, rt__worker, w_err);
    (void)events;
    relay(w->node, wt, &w->err);
}

/* A task's lines are in its pipes before its answer is in the socket:
 * relaying them first keeps them ahead of rt_get(). */
static void relay_output(rt__worker *w)
{
    if (w->w_out.fd >= 0)
        relay(w->node, &w->w_out, &w->out);
    if (w->w_err.fd >= 0)
        relay(w->node, &w->w_err, &w->err);
}

static void kill_process(rt__worker *w)
{
    if (w->pid > 0)
        kill(w->pid, SIGKILL);
    close_socket(w);
}

/* It broke the protocol: nothing more it says can be trusted. */
static void kill_worker(rt__worker *w)
{
    w->broke = 1;
    kill_process(w);
}

/* An answer in the one shape nodes hand up (node.h): its bytes copied
 * out of the channel or the journal, or its memfd mapped (privately: a
 * buffer rt_free() releases) and closed.  A memfd that is not sealed, or
 * shorter than it says, is refused. */
static rt__answer adopt(const rt__result_msg *r)
{
    rt__answer a = {.id = r->id, .status = r->status, .sys_errno = r->sys_errno,
                    .run_us = r->run_us, .len = r->len};
    if (r->fd >= 0) {
        a.result = rt__shm_open(r->fd, r->len, 1);
        a.refused = !a.result && errno == EPROTO;
        close(r->fd);
    } else if (r->len && (a.result = rt__buf_alloc(r->len))) {
        memcpy(a.result, r->data, r->len);
    }
    return a;
}

/* Hand an answer to the dispatcher: 0, or -1 when it answers no task
 * the worker was sent (r's memfd is closed then). */
static int answer(void *ctx, const rt__result_msg *r)
{
    rt__worker *w = ctx;
    const rt__node_events *ev = &w->node->node.ev;
    if (w->broke || !w->owner || w->answered == w->calls) {
        if (r->fd >= 0)
            close(r->fd);
        return -1;
    }
    w->answered++;
    rt__answer a = adopt(r);
    ev->answered(ev->ctx, w->owner, &a);
    return 0;
}

/* Hand every complete answer to the dispatcher.  A message that is not
 * an answer to a task it was sent breaks the protocol: the worker is
 * killed, and its loss reported when it has exited. */
static void take_answers(rt__worker *w)
{
    rt__hdr h;
    const char *payload;
    int fds[RT__MSG_MAX_FDS], more = 0;
    while (w->chan.fd >= 0 && (more = rt__chan_next(&w->chan, &h, &payload, fds)) > 0) {
        rt__result_msg r;
        /* A bad message's descriptors are closed by the reader. */
        if (rt__proto_read_result(&h, payload, fds, &r) < 0 || answer(w, &r) < 0) {
            more = -1;
            break;
        }
    }
    if (more < 0)
        kill_worker(w);
}

static void flush_worker(rt__worker *w);

static void on_socket(rt__watch *wt, uint32_t events)
{
    rt__worker *w = RT__OWNER(wt, rt__worker, w_sock);
    if (events & EPOLLOUT)
        flush_worker(w);
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || w->chan.fd < 0)
        return;
    relay_output(w);
    long got = rt__chan_fill(&w->chan);
    if (got > 0)
        take_answers(w);
    else if (got == 0 || (errno != EAGAIN && errno != ENOMEM))
        close_socket(w); /* its exit is reported by the fork server */
}

/* ---- starting workers ------------------------------------------------------ */

static int nonblocking(int fd)
{
    return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Our ends of the worker's socket and pipes in mine[], its ends in theirs[]. */
static int make_endpoints(int mine[3], int theirs[3])
{
    int sv[2], out[2], err[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) < 0)
        goto close_sv;
    if (pipe2(err, O_CLOEXEC) < 0)
        goto close_out;
    int ours[3] = {sv[0], out[0], err[0]}, given[3] = {sv[1], out[1], err[1]};
    for (int i = 0; i < 3; i++) {
        mine[i] = ours[i];
        theirs[i] = given[i];
        nonblocking(mine[i]);
    }
    return 0;
close_out:
    close(out[0]);
    close(out[1]);
close_sv:
    close(sv[0]);
    close(sv[1]);
    return -1;
}

static void flush_forkserver(rt__local *l);

static void worker_free(rt__worker *w)
{
    rt__local *l = w->node;
    l->free_slots[l->nfree++] = w->slot;
    l->by_slot[w->slot] = NULL;
    rt__chan_close(&w->chan);
    rt__relay_close(&w->out);
    rt__relay_close(&w->err);
    rt__free(w->name_sent);
    rt__free(w->devices_text);
    rt__free(w);
}

static int watch_worker(rt__local *l, rt__worker *w)
{
    if (rt__loop_add(l->loop, &w->w_sock, w->chan.fd, EPOLLIN, on_socket) < 0)
        return -1;
    if (rt__loop_add(l->loop, &w->w_out, w->out.fd, EPOLLIN, on_stdout) < 0 ||
        rt__loop_add(l->loop, &w->w_err, w->err.fd, EPOLLIN, on_stderr) < 0) {
        rt__loop_remove(l->loop, &w->w_sock);
        rt__loop_remove(l->loop, &w->w_out);
        return -1;
    }
    return 0;
}

static rt__worker *new_worker(rt__local *l, int mine[3])
{
    rt__worker *w = rt__calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->node = l;
    rt__link_init(&w->link);
    rt__link_init(&w->idle_link);
    w->slot = l->free_slots[--l->nfree];
    /* What a new worker finds: the journal's data needs no zeroing. */
    memset(&l->slots[w->slot], 0, offsetof(rt__run_slot, journal.data));
    l->by_slot[w->slot] = w;
    w->w_sock.fd = w->w_out.fd = w->w_err.fd = -1;
    rt__chan_init(&w->chan, mine[0]);
    rt__relay_init(&w->out, mine[1], stdout);
    rt__relay_init(&w->err, mine[2], stderr);
    return w;
}

/* Ask the fork server for a worker.  It is usable at once: what is sent
 * to it waits in its socket until the process runs. */
static rt__worker *start_worker(rt__local *l)
{
    int mine[3], theirs[3];
    if (l->failed || l->nfree == 0 || l->starting >= STARTING_MAX) {
        errno = EAGAIN;
        return NULL;
    }
    if (make_endpoints(mine, theirs) < 0)
        return NULL;
    rt__worker *w = new_worker(l, mine);
    if (!w) {
        errno = ENOMEM;
        for (int i = 0; i < 3; i++) {
            close(mine[i]);
            close(theirs[i]);
        }
        return NULL;
    }
    if (watch_worker(l, w) < 0) {
        for (int i = 0; i < 3; i++)
            close(theirs[i]);
        worker_free(w);
        return NULL;
    }
    if (rt__proto_send_spawn(&l->forkserver, w->slot, w->slot, theirs) < 0) {
        rt__loop_remove(l->loop, &w->w_sock);
        rt__loop_remove(l->loop, &w->w_out);
        rt__loop_remove(l->loop, &w->w_err);
        worker_free(w);
        return NULL;
    }
    rt__list_push_front(&l->all, &w->link);
    l->starting++;
    w->spawn_ns = rt__now_ns();
    flush_forkserver(l); /* its three descriptors leave with it */
    return w;
}

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
        rt__worker *w = start_worker(l);
        if (!w)
            return;
        l->task_workers++;
        idle_add(l, w);
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
    idle_remove(l, w);
    w->retiring = 1;
    close_socket(w);
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
static rt__worker *op_lease(rt__node *n, int fresh, int max_calls, void *owner,
                            size_t *calls)
{
    rt__local *l = (rt__local *)n;
    rt__worker *w = fresh ? NULL : find_idle(l, fresh, max_calls);
    if (!fresh && max_calls == 1)
        rt__spares_leased(&l->spares, rt__now_ns());
    if (w) {
        idle_remove(l, w);
    } else {
        int backing_off = l->spawn_failing && l->running > 0 &&
                          rt__now_ns() < l->spawn_retry_ns;
        if (!fresh && (l->task_workers >= l->max || backing_off)) {
            errno = EAGAIN; /* a running worker will take the lease */
            return NULL;
        }
        if (!(w = start_worker(l))) {
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
    *calls = w->calls;
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
    char *text = rt__devices_encode(&with_env), *copy = NULL;
    rt__devices sent;
    if (!text || rt__devices_decode(text, strlen(text), &sent, &copy) < 0 ||
        rt__proto_send_devices(&w->chan, &with_env) < 0) {
        rt__free(text);
        rt__free(copy);
        return -1;
    }
    rt__free(text);
    rt__free(w->devices_text);
    w->devices_text = copy;
    w->devices_sent = sent;
    mark_dirty(w);
    return 0;
}

/* Workers name their output after the function unless a task gives a
 * name (an empty NAME means the function).  An actor's calls keep the
 * name its constructor brought. */
static int send_name(rt__worker *w, const rt__task *t)
{
    const char *name = t->name ? t->name : "";
    if (t->kind == RT__KIND_CALL || same_state(w->name_sent, name))
        return 0;
    if (remember(&w->name_sent, name) < 0 || rt__proto_send_name(&w->chan, name) < 0)
        return -1;
    return 0;
}

static const uint32_t msg_of_kind[] = {
    [RT__KIND_TASK] = RT__MSG_TASK,
    [RT__KIND_CREATE] = RT__MSG_CREATE,
    [RT__KIND_CALL] = RT__MSG_CALL,
};

static int op_send(rt__node *n, rt__worker *w, const rt__task *t, uint64_t fini)
{
    (void)n;
    rt__task_msg m = {.type = msg_of_kind[t->kind], .id = t->id,
                      .fn = (uint64_t)(uintptr_t)t->fn, .arg = rt__task_arg(t),
                      .len = t->arg_len, .arg_fd = t->arg_fd};
    if (send_name(w, t) < 0 ||
        (t->kind == RT__KIND_CREATE && rt__proto_send_actor(&w->chan, fini) < 0) ||
        rt__proto_send_task(&w->chan, &m) < 0)
        return -1;
    w->calls++;
    mark_dirty(w);
    return 0;
}

static void op_release(rt__node *n, rt__worker *w, int retire_it)
{
    rt__local *l = (rt__local *)n;
    w->owner = NULL;
    if (retire_it || w->actor || w->chan.fd < 0) {
        retire(w);
    } else {
        idle_add(l, w);
    }
}

/* End of file for the worker once all it was sent has gone; the socket
 * stays open for what it still answers. */
static void shut_if_stopping(rt__worker *w)
{
    if (w->stop_sending && !w->shut && w->chan.fd >= 0 && rt__chan_unsent(&w->chan) == 0) {
        shutdown(w->chan.fd, SHUT_WR);
        w->shut = 1;
    }
}

static void op_stop(rt__node *n, rt__worker *w)
{
    (void)n;
    w->retiring = 1;
    w->stop_sending = 1;
    shut_if_stopping(w);
}

static void op_kill(rt__node *n, rt__worker *w)
{
    (void)n;
    kill_worker(w);
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

/* Send what w has queued; ask epoll for EPOLLOUT only while its socket is
 * full, so that an idle loop is not woken by writable sockets. */
static void flush_worker(rt__worker *w)
{
    if (w->chan.fd < 0 || w->send_failed)
        return;
    int rc = rt__chan_flush(&w->chan);
    if (rc < 0) {
        /* It died or closed its end (the fork server will tell): nothing
         * more can reach it, but what it sent before is still to read. */
        w->send_failed = 1;
        rt__loop_modify(w->node->loop, &w->w_sock, EPOLLIN);
        return;
    }
    rt__loop_modify(w->node->loop, &w->w_sock, EPOLLIN | (rc == 1 ? EPOLLOUT : 0));
    shut_if_stopping(w);
}

static void flush_forkserver(rt__local *l)
{
    if (l->failed || rt__chan_unsent(&l->forkserver) == 0)
        return;
    int rc = rt__chan_flush(&l->forkserver);
    rt__loop_modify(l->loop, &l->w_forkserver, EPOLLIN | (rc == 1 ? EPOLLOUT : 0));
}

static void bury_graveyard(rt__local *l)
{
    for (rt__worker *w; (w = RT__FIRST(&l->graveyard, rt__worker, link));) {
        rt__list_remove(&w->link);
        worker_free(w);
    }
}

static void op_flush(rt__node *n)
{
    rt__local *l = (rt__local *)n;
    bury_graveyard(l); /* no callback of this round can reach them now */
    while (l->dirty) {
        rt__worker *w = l->dirty;
        l->dirty = w->dnext;
        w->dirty = 0;
        flush_worker(w);
    }
    /* New workers are for later tasks: an application thread that runs
     * this round (a synchronous task) leaves the forks to the runtime
     * thread rather than make its caller wait for them. */
    if (pthread_equal(pthread_self(), l->thread))
        top_up(l);
    else if (wants_workers(l))
        rt__wake_signal(&l->refill);
    flush_forkserver(l);
}

/* The caller sends a task and waits for its answer; reading it here
 * spares the runtime thread a wake-up and the caller another.  Out of the
 * loop meanwhile, the socket wakes nobody else. */
static int op_await(rt__node *n, rt__worker *w, int timeout_us)
{
    rt__local *l = (rt__local *)n;
    int fd = w->chan.fd;
    if (fd < 0)
        return 0;
    flush_worker(w); /* the task may still wait in our buffer */
    rt__loop_remove(l->loop, &w->w_sock);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    struct timespec ts = {timeout_us / 1000000, (long)(timeout_us % 1000000) * 1000};
    int ready = ppoll(&p, 1, &ts, NULL) > 0;
    if (rt__loop_add(l->loop, &w->w_sock, fd, EPOLLIN, on_socket) < 0) {
        kill_process(w); /* unwatched, it could not be heard */
        return 0;
    }
    if (ready)
        on_socket(&w->w_sock, (uint32_t)EPOLLIN);
    return ready;
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
};

/* ---- what the fork server says ------------------------------------------- */

static void unlink_worker(rt__local *l, rt__worker *w)
{
    rt__list_remove(&w->link);
    idle_remove(l, w);
    if (w->dirty) {
        rt__worker **link = &l->dirty;
        while (*link != w)
            link = &(*link)->dnext;
        *link = w->dnext;
        w->dirty = 0;
    }
}

/* How many of the tasks w had in flight had started: they run in the
 * order sent, and the answered ones are no longer in flight.  A worker
 * that could not be started ran nothing; its first task fails only when
 * no worker runs at all, since then nothing could run it. */
static size_t started_in_flight(const rt__local *l, const rt__worker *w,
                                uint64_t started)
{
    size_t inflight = w->calls - w->answered;
    if (w->spawn_errno)
        return inflight && l->running == 0 ? 1 : 0;
    uint64_t n = started > w->answered ? started - w->answered : 0;
    return n < inflight ? (size_t)n : inflight;
}

/* Read what the worker left in its socket and pipes, and tell the
 * dispatcher; the record is freed after this round of callbacks. */
static void worker_gone(rt__local *l, rt__worker *w)
{
    const rt__run_slot *slot = &l->slots[w->slot];
    w->gone = 1;
    relay_output(w);
    /* A process the worker forked may hold its socket open: read what is
     * there now and stop, rather than wait for an end of file. */
    while (w->chan.fd >= 0 && rt__chan_fill(&w->chan) > 0)
        ;
    take_answers(w);
    /* Then the results it had not sent: a death costs only the task that
     * was running.  A worker that broke the protocol is not believed. */
    if (!w->broke)
        rt__journal_replay(&slot->journal, w->answered, answer, w);
    close_socket(w);
    rt__loop_remove(l->loop, &w->w_out);
    rt__loop_remove(l->loop, &w->w_err);
    rt__relay_close(&w->out);
    rt__relay_close(&w->err);
    unlink_worker(l, w);
    if (!w->actor)
        l->task_workers--;
    if (w->pid > 0)
        l->running--;
    rt__loss loss = {.pid = w->pid, .wait_status = w->wait_status,
                     .spawn_errno = w->spawn_errno,
                     .lost_channel = (int)atomic_load(&slot->lost), .broke = w->broke,
                     .started = started_in_flight(l, w, atomic_load(&slot->started))};
    rt__list_push_back(&l->graveyard, &w->link);
    if (w->owner)
        l->node.ev.lost(l->node.ev.ctx, w->owner, &loss);
}

static void notice(rt__local *l, const rt__hdr *h)
{
    rt__worker *w = h->id < SLOTS_MAX ? l->by_slot[h->id] : NULL;
    if (!w || w->gone)
        return;
    switch (h->type) {
    case RT__MSG_SPAWNED:
        w->pid = (pid_t)h->word;
        /* Killed before the fork server said which process it is (a force
         * cancel right after a lease): its socket is closed, but a task
         * it already read would keep it alive.  Kill it now. */
        if (w->broke)
            kill(w->pid, SIGKILL);
        rt__spares_started(&l->spares, rt__now_ns() - w->spawn_ns);
        l->spawn_failing = 0;
        l->starting--;
        l->running++;
        return;
    case RT__MSG_SPAWN_FAILED:
        w->spawn_errno = (int)h->word;
        l->spawn_failing = 1;
        l->spawn_retry_ns = rt__now_ns() + SPAWN_RETRY_NS;
        l->starting--;
        break;
    case RT__MSG_EXITED:
        w->wait_status = (int)h->word;
        break;
    default:
        return;
    }
    worker_gone(l, w);
}

static void on_forkserver(rt__watch *wt, uint32_t events)
{
    rt__local *l = RT__OWNER(wt, rt__local, w_forkserver);
    if (events & EPOLLOUT)
        flush_forkserver(l);
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        return;
    long got = rt__chan_fill(&l->forkserver);
    if (got < 0 && (errno == EAGAIN || errno == ENOMEM))
        return; /* without memory, epoll calls again: it is level-triggered */
    if (got <= 0) {
        /* It died (killed by someone): every worker died with it. */
        rt__loop_remove(l->loop, wt);
        l->failed = 1;
        l->node.ev.failed(l->node.ev.ctx, "its fork server died");
        return;
    }
    rt__hdr h;
    const char *payload;
    int fds[RT__MSG_MAX_FDS];
    while (rt__chan_next(&l->forkserver, &h, &payload, fds) > 0)
        notice(l, &h);
}

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
    if (l->slots)
        munmap(l->slots, SLOTS_MAX * sizeof *l->slots);
    rt__free(l->free_slots);
    rt__free(l->by_slot);
    rt__free(l);
}

int rt__local_start(rt__local **out, const rt__family_set *families, size_t target_idle,
                    size_t max, rt__keep keep)
{
    rt__local *l = rt__calloc(1, sizeof *l);
    if (!l || alloc_books(l) < 0) {
        if (l)
            free_books(l);
        return rt__error(RT_ENOMEM, "rt_init: no memory for the worker pool");
    }
    l->node.ops = &local_ops;
    l->families = *families;
    rt__link_init(&l->all);
    rt__link_init(&l->idle);
    rt__link_init(&l->graveyard);
    l->target_idle = target_idle;
    l->max = max;
    l->w_forkserver.fd = -1;
    l->refill.fd = -1;
    l->slots = mmap(NULL, SLOTS_MAX * sizeof *l->slots, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (l->slots == MAP_FAILED) {
        l->slots = NULL;
        free_books(l);
        return rt__syserror("rt_init: mmap");
    }
    int ctl;
    l->forkserver_pid = rt__forkserver_start(&ctl, &l->forkserver_exited, l->slots,
                                             SLOTS_MAX, keep);
    if (l->forkserver_pid < 0) {
        int rc = rt__syserror("rt_init: fork");
        free_books(l);
        return rc;
    }
    rt__chan_init(&l->forkserver, ctl);
    nonblocking(ctl);
    *out = l;
    return 0;
}

static void on_refill(rt__wake *w)
{
    rt__local *l = RT__OWNER(w, rt__local, refill);
    top_up(l);
    flush_forkserver(l);
}

int rt__local_attach(rt__local *l, rt__loop *loop)
{
    l->loop = loop;
    l->thread = pthread_self();
    if (rt__wake_open(&l->refill) < 0 || rt__wake_watch(loop, &l->refill, on_refill) < 0 ||
        rt__loop_add(loop, &l->w_forkserver, l->forkserver.fd, EPOLLIN, on_forkserver) < 0)
        return -1;
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

pid_t rt__local_forkserver(const rt__local *l)
{
    return l->forkserver_pid;
}

void rt__local_stop(rt__local *l)
{
    if (l->forkserver.fd >= 0)
        rt__forkserver_stop(l->forkserver.fd, l->forkserver_exited);
    rt__chan_close(&l->forkserver);
    rt__wake_close(NULL, &l->refill);
    bury_graveyard(l);
    for (rt__worker *w; (w = RT__FIRST(&l->all, rt__worker, link));) {
        rt__list_remove(&w->link);
        worker_free(w); /* relays the output the worker left */
    }
    free_books(l);
}

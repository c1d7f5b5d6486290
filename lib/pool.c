/* pool.c - start, feed, read, retire and forget worker processes. */
#include "pool.h"

#include "actor.h"
#include "sched.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

int rt__pool_init(rt__pool *p, int epoll_fd, rt__chan *forkserver,
                  rt__watch *w_forkserver, size_t target_idle, size_t max,
                  rt__run_slot *slots)
{
    memset(p, 0, sizeof *p);
    p->epoll_fd = epoll_fd;
    p->forkserver = forkserver;
    p->w_forkserver = w_forkserver;
    p->target_idle = target_idle;
    p->max = max;
    p->slots = slots;
    p->slot_used = calloc(max, 1);
    return p->slot_used ? 0 : -1;
}

/* ---- epoll ------------------------------------------------------------- */

static int watch_add(rt__pool *p, rt__watch *w, rt__watch_kind kind, int fd,
                     rt__worker *worker, rt__relay *relay)
{
    *w = (rt__watch){.kind = kind, .fd = fd, .worker = worker, .relay = relay};
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = w};
    return epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

static void watch_del(rt__pool *p, rt__watch *w)
{
    if (w->fd >= 0)
        epoll_ctl(p->epoll_fd, EPOLL_CTL_DEL, w->fd, NULL);
    w->fd = -1;
}

/* Send what c holds; ask epoll for EPOLLOUT only while the socket is full,
 * so an idle runtime thread is not woken by writable sockets. */
static int flush_watched(rt__pool *p, rt__chan *c, rt__watch *w)
{
    int rc = rt__chan_flush(c);
    int want_out = rc == 1;
    if (rc >= 0 && want_out != w->want_out) {
        struct epoll_event ev = {.events = EPOLLIN | (want_out ? EPOLLOUT : 0),
                                 .data.ptr = w};
        epoll_ctl(p->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
        w->want_out = want_out;
    }
    return rc;
}

/* ---- starting workers -------------------------------------------------- */

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

static int take_slot(rt__pool *p, size_t *slot)
{
    for (size_t i = 0; i < p->max; i++)
        if (!p->slot_used[i]) {
            p->slot_used[i] = 1;
            memset(&p->slots[i], 0, sizeof p->slots[i]);
            *slot = i;
            return 0;
        }
    return -1;
}

static void worker_free(rt__pool *p, rt__worker *w)
{
    p->slot_used[w->slot] = 0;
    rt__chan_close(&w->chan);
    rt__relay_close(&w->out);
    rt__relay_close(&w->err);
    free(w->name_sent);
    free(w->devices_sent);
    free(w);
}

static int watch_worker(rt__pool *p, rt__worker *w)
{
    if (watch_add(p, &w->w_sock, RT__WATCH_SOCKET, w->chan.fd, w, NULL) < 0)
        return -1;
    if (watch_add(p, &w->w_out, RT__WATCH_OUTPUT, w->out.fd, w, &w->out) < 0) {
        watch_del(p, &w->w_sock);
        return -1;
    }
    if (watch_add(p, &w->w_err, RT__WATCH_OUTPUT, w->err.fd, w, &w->err) < 0) {
        watch_del(p, &w->w_sock);
        watch_del(p, &w->w_out);
        return -1;
    }
    return 0;
}

/* Ask the fork server for a worker.  It is usable at once: what is sent
 * to it waits in its socket until the process runs. */
static rt__worker *start_worker(rt__pool *p)
{
    rt__worker *w = calloc(1, sizeof *w);
    int mine[3], theirs[3];
    if (!w)
        return NULL;
    if (take_slot(p, &w->slot) < 0) { /* the pool is full */
        free(w);
        return NULL;
    }
    if (make_endpoints(mine, theirs) < 0) {
        p->slot_used[w->slot] = 0;
        free(w);
        return NULL;
    }
    w->key = ++p->next_key;
    rt__chan_init(&w->chan, mine[0]);
    rt__relay_init(&w->out, mine[1], stdout);
    rt__relay_init(&w->err, mine[2], stderr);
    rt__hdr h = {.type = RT__MSG_SPAWN, .nfds = 3, .id = w->key, .word = w->slot};
    if (watch_worker(p, w) < 0) {
        for (int i = 0; i < 3; i++)
            close(theirs[i]);
        worker_free(p, w);
        return NULL;
    }
    if (rt__chan_put(p->forkserver, &h, NULL, theirs) < 0) {
        watch_del(p, &w->w_sock);
        watch_del(p, &w->w_out);
        watch_del(p, &w->w_err);
        worker_free(p, w);
        return NULL;
    }
    w->next = p->all;
    p->all = w;
    p->count++;
    return w;
}

static int is_idle(const rt__worker *w)
{
    return !w->lease && !w->retiring && !w->gone && w->chan.fd >= 0;
}

static size_t idle_count(const rt__pool *p)
{
    size_t n = 0;
    for (const rt__worker *w = p->all; w; w = w->next)
        n += (size_t)is_idle(w);
    return n;
}

void rt__pool_top_up(rt__pool *p)
{
    if (p->spawn_failing)
        return; /* a lease will try again; idle spares can wait */
    for (size_t idle = idle_count(p); idle < p->target_idle; idle++)
        if (!start_worker(p))
            return;
}

/* A worker that ran max_calls tasks of any kind cannot serve a class
 * with that limit: it would retire before its first task.  An actor gets
 * a process that never ran anything. */
static int can_serve(const rt__worker *w, const rt__class *cls)
{
    if (cls->actor)
        return w->calls == 0;
    return cls->max_calls == 0 || w->calls < cls->max_calls;
}

/* Prefer a worker that runs already, and among those the one that ran
 * the most: it was used last, its caches are warm. */
static int better(const rt__worker *w, const rt__worker *than)
{
    if (!than || (w->pid && !than->pid))
        return 1;
    return (w->pid != 0) == (than->pid != 0) && w->calls > than->calls;
}

/* Move w to the end of the list, so that the list holds leased workers
 * in the order of their leases: the scheduler feeds them in that order,
 * and the first task of a class goes to its first lease. */
static void move_to_end(rt__pool *p, rt__worker *w)
{
    rt__worker **link = &p->all;
    while (*link != w)
        link = &(*link)->next;
    *link = w->next;
    while (*link)
        link = &(*link)->next;
    *link = w;
    w->next = NULL;
}

rt__worker *rt__pool_lease(rt__pool *p, rt__class *cls)
{
    rt__worker *found = NULL, *unfit = NULL;
    for (rt__worker *w = p->all; w; w = w->next) {
        if (!is_idle(w))
            continue;
        if (!can_serve(w, cls))
            unfit = w;
        else if (better(w, found))
            found = w;
    }
    if (!found && unfit)
        rt__pool_unlease(p, unfit, 1); /* make room: the pool keeps its size */
    if (!found)
        found = start_worker(p);
    if (found) {
        found->lease = cls;
        move_to_end(p, found);
    }
    return found;
}

/* No more tasks: closing our end of the socket makes the worker exit. */
static void close_socket(rt__pool *p, rt__worker *w)
{
    watch_del(p, &w->w_sock);
    if (w->chan.fd >= 0)
        close(w->chan.fd);
    w->chan.fd = -1;
}

void rt__pool_unlease(rt__pool *p, rt__worker *w, int retire)
{
    w->lease = NULL;
    if (retire) {
        w->retiring = 1;
        close_socket(p, w);
    }
}

void rt__pool_kill(rt__pool *p, rt__worker *w)
{
    if (w->pid > 0)
        kill(w->pid, SIGKILL);
    close_socket(p, w);
}

/* ---- tasks ------------------------------------------------------------- */

/* Send a message that sets worker state (its name, its devices) unless
 * the worker already has that state; *sent remembers what it has. */
static int send_state(rt__worker *w, char **sent, const rt__hdr *h,
                      const char *payload)
{
    if (*sent && strlen(*sent) == h->len && memcmp(*sent, payload, h->len) == 0)
        return 0;
    char *copy = strndup(payload, h->len);
    if (!copy || rt__chan_put(&w->chan, h, payload, NULL) < 0) {
        free(copy);
        return -1;
    }
    free(*sent);
    *sent = copy;
    return 0;
}

/* Workers name their output after the function unless a task gives a
 * name (an empty NAME means the function). */
static int send_name(rt__worker *w, const char *name)
{
    rt__hdr h = {.type = RT__MSG_NAME, .len = name ? strlen(name) : 0};
    return send_state(w, &w->name_sent, &h, name ? name : "");
}

int rt__pool_send_devices(rt__worker *w, const char *payload, size_t len,
                          uint64_t word)
{
    rt__hdr h = {.type = RT__MSG_DEVICES, .word = word, .len = len};
    return send_state(w, &w->devices_sent, &h, payload);
}

static const uint32_t msg_of_kind[] = {
    [RT__KIND_TASK] = RT__MSG_TASK,
    [RT__KIND_CREATE] = RT__MSG_CREATE,
    [RT__KIND_CALL] = RT__MSG_CALL,
};

/* A constructor goes with the destructor its worker must run at the end. */
static int send_actor(rt__worker *w, const rt__task *t)
{
    rt_actor_fini_fn fini = t->cls->actor->fini;
    rt__hdr h = {.type = RT__MSG_ACTOR, .word = (uint64_t)(uintptr_t)fini};
    return rt__chan_put(&w->chan, &h, NULL, NULL);
}

static int send_task(rt__worker *w, const rt__task *t)
{
    rt__hdr h = {.type = msg_of_kind[t->kind], .id = t->id,
                 .word = (uint64_t)(uintptr_t)t->fn, .len = t->arg_len};
    if (t->arg_fd < 0)
        return rt__chan_put(&w->chan, &h, t->tail, NULL);
    /* The channel closes what it sends; the task keeps its memfd for a
     * retry on another worker. */
    int fd = fcntl(t->arg_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    h.nfds = 1;
    return rt__chan_put(&w->chan, &h, NULL, &fd);
}

int rt__pool_send(rt__worker *w, rt__task *t)
{
    /* An actor's calls keep the name its constructor brought. */
    if (t->kind != RT__KIND_CALL && send_name(w, t->name) < 0)
        return -1;
    if ((t->kind == RT__KIND_CREATE && send_actor(w, t) < 0) || send_task(w, t) < 0)
        return -1;
    t->next = NULL;
    if (w->tail)
        w->tail->next = t;
    else
        w->head = t;
    w->tail = t;
    w->inflight++;
    w->calls++;
    return 0;
}

rt__task *rt__pool_pop(rt__worker *w)
{
    rt__task *t = w->head;
    if (!t)
        return NULL;
    w->head = t->next;
    if (!w->head)
        w->tail = NULL;
    w->inflight--;
    return t;
}

/* End of file for the worker once all it was sent has gone; the socket
 * stays open for what it still answers. */
static void shut_if_stopping(rt__worker *w)
{
    if (w->stop_sending && !w->shut && rt__chan_unsent(&w->chan) == 0) {
        shutdown(w->chan.fd, SHUT_WR);
        w->shut = 1;
    }
}

void rt__pool_stop_sending(rt__worker *w)
{
    w->retiring = 1;
    w->stop_sending = 1;
    if (w->chan.fd >= 0)
        shut_if_stopping(w);
}

void rt__pool_flush(rt__pool *p)
{
    if (rt__chan_unsent(p->forkserver))
        flush_watched(p, p->forkserver, p->w_forkserver);
    for (rt__worker *w = p->all; w; w = w->next) {
        if (w->chan.fd < 0)
            continue;
        if (rt__chan_unsent(&w->chan) && flush_watched(p, &w->chan, &w->w_sock) < 0)
            close_socket(p, w); /* it died; the fork server will tell */
        else
            shut_if_stopping(w);
    }
}

/* ---- input ------------------------------------------------------------- */

void rt__pool_read(rt__pool *p, rt__worker *w)
{
    long got = rt__chan_fill(&w->chan);
    if (got > 0)
        w->has_input = 1;
    else if (got == 0 || errno != EAGAIN)
        close_socket(p, w); /* its exit is reported by the fork server */
}

void rt__pool_relay(rt__pool *p, rt__watch *w)
{
    long got;
    while ((got = rt__relay_read(w->relay)) > 0)
        ;
    if (got == 0 || errno != EAGAIN)
        watch_del(p, w); /* closed when the worker is removed */
}

rt__worker *rt__pool_find_key(rt__pool *p, uint64_t key)
{
    for (rt__worker *w = p->all; w; w = w->next)
        if (w->key == key)
            return w;
    return NULL;
}

rt__worker *rt__pool_find_pid(rt__pool *p, pid_t pid)
{
    for (rt__worker *w = p->all; w; w = w->next)
        if (w->pid == pid)
            return w;
    return NULL;
}

uint64_t rt__pool_busy_us(const rt__pool *p, const rt__worker *w, uint64_t now_ns)
{
    const rt__run_slot *slot = &p->slots[w->slot];
    if (!atomic_load(&slot->running))
        return 0;
    uint64_t since = atomic_load(&slot->since_ns);
    return now_ns > since ? (now_ns - since) / 1000 : 0;
}

void rt__pool_drain(rt__pool *p, rt__worker *w)
{
    w->started = atomic_load(&p->slots[w->slot].started);
    w->lost = (int)atomic_load(&p->slots[w->slot].lost);
    /* A process the worker forked may hold its socket open: read what is
     * there now and stop, rather than wait for an end of file. */
    while (w->chan.fd >= 0 && rt__chan_fill(&w->chan) > 0)
        w->has_input = 1;
    close_socket(p, w);
    watch_del(p, &w->w_out);
    watch_del(p, &w->w_err);
    rt__relay_close(&w->out);
    rt__relay_close(&w->err);
}

void rt__pool_remove(rt__pool *p, rt__worker *w)
{
    rt__worker **link = &p->all;
    while (*link != w)
        link = &(*link)->next;
    *link = w->next;
    p->count--;
    worker_free(p, w);
}

void rt__pool_free(rt__pool *p)
{
    while (p->all) {
        rt__worker *w = p->all;
        p->all = w->next;
        worker_free(p, w);
    }
    p->count = 0;
    free(p->slot_used);
    p->slot_used = NULL;
}

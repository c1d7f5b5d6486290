/* workers.c - each worker's record: its start, its socket and pipes,
 * its answers, and its loss (workers.h). */
#include "workers.h"

#include "forkserver.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- lists ----------------------------------------------------------------- */


void rt__workers_idle_add(rt__local *l, rt__worker *w)
{
    rt__list_push_front(&l->idle, &w->idle_link);
    l->nidle++;
    l->nfresh += w->calls == 0;
}

void rt__workers_idle_remove(rt__local *l, rt__worker *w)
{
    if (w->idle_link.next == &w->idle_link)
        return; /* not idle */
    rt__list_remove(&w->idle_link);
    l->nidle--;
    l->nfresh -= w->calls == 0;
}

void rt__workers_dirty(rt__worker *w)
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
void rt__workers_close_socket(rt__worker *w)
{
    rt__loop_remove(w->node->loop, &w->w_sock);
    if (w->chan.fd >= 0) {
        shutdown(w->chan.fd, SHUT_RDWR);
        close(w->chan.fd);
    }
    w->chan.fd = -1;
}


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
 * relaying them first keeps them ahead of rt_get().  One look at both
 * first: after most tasks they are empty.  (poll() passes over a closed
 * one, whose descriptor is -1.) */
static void relay_output(rt__worker *w)
{
    struct pollfd p[2] = {{w->w_out.fd, POLLIN, 0}, {w->w_err.fd, POLLIN, 0}};
    int any = poll(p, 2, 0);
    if (w->w_out.fd >= 0 && (any < 0 || p[0].revents))
        relay(w->node, &w->w_out, &w->out);
    if (w->w_err.fd >= 0 && (any < 0 || p[1].revents))
        relay(w->node, &w->w_err, &w->err);
}

void rt__workers_kill_process(rt__worker *w)
{
    if (w->pid > 0)
        kill(w->pid, SIGKILL);
    rt__workers_close_socket(w);
}

/* It broke the protocol: nothing more it says can be trusted. */
void rt__workers_kill(rt__worker *w)
{
    w->broke = 1;
    rt__workers_kill_process(w);
}

/* An answer in the one shape nodes hand up (node.h): its bytes copied
 * out of the channel or the journal, or its memfd mapped (privately: a
 * buffer rt__buf_free() releases), which keeps the memfd for workers to map
 * as an argument.  A memfd that is not sealed, or shorter than it says,
 * is refused. */
static rt__answer adopt(const rt__result_msg *r)
{
    rt__answer a = {.id = r->id, .status = r->status, .sys_errno = r->sys_errno,
                    .bounced = r->bounced, .packed = r->packed, .run_us = r->run_us,
                    .len = r->len};
    if (r->fd >= 0) {
        a.result = rt__shm_open(r->fd, r->len, RT__SHM_BUFFER);
        a.refused = !a.result && errno == EPROTO;
        if (!a.result)
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
    if (w->broke || !w->owner || w->answered + w->taken_back == w->calls) {
        if (r->fd >= 0)
            close(r->fd);
        return -1;
    }
    w->answered++;
    w->leaving |= r->id == w->last_task; /* it exits once it has sent it */
    w->last_large = r->fd >= 0 ? r->len : 0;
    rt__answer a = adopt(r);
    if (r->fd >= 0 && a.result)
        rt__shm_owned_by(a.result, w->shm_owner); /* it may write it still */
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
        if (rt__proto_read_result(&h, payload, fds, &r) < 0) {
            more = -1;
            break;
        }
        if (++w->read_from_socket <= w->answered) {
            if (r.fd >= 0) /* none: a result in the journal has no memfd */
                close(r.fd);
            continue; /* read from its journal already */
        }
        if (answer(w, &r) < 0) {
            more = -1;
            break;
        }
    }
    if (more < 0)
        rt__workers_kill(w);
}


void rt__workers_on_socket(rt__watch *wt, uint32_t events)
{
    rt__worker *w = RT__OWNER(wt, rt__worker, w_sock);
    if (events & EPOLLOUT)
        rt__workers_flush(w, 0);
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || w->chan.fd < 0)
        return;
    relay_output(w);
    long got = rt__chan_fill(&w->chan);
    if (got > 0)
        take_answers(w);
    else if (got == 0 || (errno != EAGAIN && errno != ENOMEM))
        rt__workers_close_socket(w); /* its exit is reported by the fork server */
}

int rt__workers_read_answers(rt__worker *w, int ready)
{
    const rt__journal *j = &w->node->slots[w->slot].journal;
    size_t before = w->answered;
    if (ready || rt__journal_holds(j, w->answered) < 0)
        rt__workers_on_socket(&w->w_sock, (uint32_t)EPOLLIN);
    if (!w->broke && w->chan.fd >= 0 && rt__journal_holds(j, w->answered) > 0) {
        relay_output(w); /* its lines come before its answer */
        (void)rt__journal_take_live(j, w->answered, w->node->journal_copy, &w->journal_read,
                                    answer, w);
    }
    return ready || w->answered > before;
}

/* End of file for the worker once all it was sent has gone; the socket
 * stays open for what it still answers. */
void rt__workers_shut_if_stopping(rt__worker *w)
{
    if (w->stop_sending && !w->shut && w->chan.fd >= 0 && rt__chan_unsent(&w->chan) == 0) {
        shutdown(w->chan.fd, SHUT_WR);
        w->shut = 1;
    }
}

/* Tasks sent for a caller that returns at once are often waited for at
 * once (rt_get()); the others are not (worker.h's RT__AWAIT_SOON).  The
 * await in progress, if any, is this thread's own: it holds the round. */
static void say_who_may_wait(rt__worker *w, int caller_waits)
{
    if (rt__chan_unsent(&w->chan) == 0)
        return;
    rt__local *l = w->node;
    atomic_store(&l->slots[w->slot].awaited, caller_waits ? RT__AWAIT_SOON : RT__AWAIT_NONE);
    /* Written by the round's holder alone: the last entry is this one's
     * when it waits again at once (a synchronous caller's loop). */
    uint32_t next = atomic_load(&l->soon_next);
    if (caller_waits && atomic_load(&l->soon[(next - 1) % RT__SOON_KEPT]) != w->slot + 1) {
        atomic_store(&l->soon[next % RT__SOON_KEPT], w->slot + 1);
        atomic_store(&l->soon_next, next + 1);
    }
}

/* What w has queued goes in its inbox rather than on its socket while it
 * is awake and has handled all that came on the socket (inbox.h): 1
 * then.  One that said meanwhile that it may sleep is woken on the
 * socket. */
static int put_in_inbox(rt__worker *w)
{
    rt__run_slot *slot = &w->node->slots[w->slot];
    rt__inbox *in = &slot->inbox;
    const char *bytes = rt__chan_unsent_bytes(&w->chan);
    if (!bytes || !rt__inbox_put(in, slot->inbox_room, w->inbox_put + 1, w->sent, bytes,
                                 rt__chan_unsent(&w->chan)))
        return 0;
    w->inbox_put++;
    rt__chan_sent_elsewhere(&w->chan);
    if (rt__inbox_missed(in))
        (void)rt__proto_send_wake(&w->chan); /* into the room just emptied */
    return rt__chan_unsent(&w->chan) == 0;
}

/* Send what w has queued; ask epoll for EPOLLOUT only while its socket is
 * full, so that an idle loop is not woken by writable sockets. */
void rt__workers_flush(rt__worker *w, int caller_waits)
{
    if (w->chan.fd < 0 || w->send_failed)
        return;
    say_who_may_wait(w, caller_waits);
    if (put_in_inbox(w)) {
        rt__workers_shut_if_stopping(w);
        return;
    }
    size_t unsent = rt__chan_unsent(&w->chan);
    int rc = rt__chan_flush(&w->chan);
    w->sent += unsent - rt__chan_unsent(&w->chan);
    if (rc < 0) {
        /* It died or closed its end (the fork server will tell): nothing
         * more can reach it, but what it sent before is still to read. */
        w->send_failed = 1;
        rt__loop_modify(w->node->loop, &w->w_sock, EPOLLIN);
        return;
    }
    rt__loop_modify(w->node->loop, &w->w_sock, EPOLLIN | (rc == 1 ? EPOLLOUT : 0));
    rt__workers_shut_if_stopping(w);
}

void rt__workers_flush_forkserver(rt__local *l)
{
    if (l->failed || rt__chan_unsent(&l->forkserver) == 0)
        return;
    int rc = rt__chan_flush(&l->forkserver);
    rt__loop_modify(l->loop, &l->w_forkserver, EPOLLIN | (rc == 1 ? EPOLLOUT : 0));
}

/* ---- starting workers ------------------------------------------------------ */

int rt__workers_nonblocking(int fd)
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
        rt__workers_nonblocking(mine[i]);
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


void rt__workers_free(rt__worker *w)
{
    rt__local *l = w->node;
    l->free_slots[l->nfree++] = w->slot;
    l->by_slot[w->slot] = NULL;
    rt__shm_owner_ended(w->shm_owner);
    rt__chan_close(&w->chan);
    rt__relay_close(&w->out);
    rt__relay_close(&w->err);
    rt__free(w->name_sent);
    rt__free(w->env_sent);
    rt__free(w->devices_text);
    rt__free(w);
}

static int watch_worker(rt__local *l, rt__worker *w)
{
    if (rt__loop_add(l->loop, &w->w_sock, w->chan.fd, EPOLLIN, rt__workers_on_socket) < 0)
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
    /* What a new worker finds: the journal's data, and the inbox's room,
     * need no zeroing. */
    memset(&l->slots[w->slot], 0, offsetof(rt__run_slot, journal.data));
    l->by_slot[w->slot] = w;
    w->shm_owner = rt__shm_owner_new();
    w->w_sock.fd = w->w_out.fd = w->w_err.fd = -1;
    rt__chan_init(&w->chan, mine[0]);
    rt__relay_init(&w->out, mine[1], stdout);
    rt__relay_init(&w->err, mine[2], stderr);
    return w;
}

/* Ask the fork server for a worker.  It is usable at once: what is sent
 * to it waits in its socket until the process runs. */
rt__worker *rt__workers_start(rt__local *l)
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
        rt__workers_free(w);
        return NULL;
    }
    if (rt__proto_send_spawn(&l->forkserver, w->slot, w->slot, theirs) < 0) {
        rt__loop_remove(l->loop, &w->w_sock);
        rt__loop_remove(l->loop, &w->w_out);
        rt__loop_remove(l->loop, &w->w_err);
        rt__workers_free(w);
        return NULL;
    }
    rt__list_push_front(&l->all, &w->link);
    l->starting++;
    w->spawn_ns = rt__now_ns();
    rt__workers_flush_forkserver(l); /* its three descriptors leave with it */
    return w;
}

/* ---- what the fork server says ------------------------------------------- */

static void unlink_worker(rt__local *l, rt__worker *w)
{
    rt__list_remove(&w->link);
    rt__workers_idle_remove(l, w);
    if (w->dirty) {
        rt__worker **link = &l->dirty;
        while (*link != w)
            link = &(*link)->dnext;
        *link = w->dnext;
        w->dirty = 0;
    }
}

/* How many of the tasks w had in flight had started: they run in the
 * order sent, and the answered ones are no longer in flight, nor those
 * taken back (all but the ones to skip after the last started were
 * passed by then).  A worker that could not be started ran nothing; its
 * first task fails only when no worker runs at all, since then nothing
 * could run it. */
static size_t started_in_flight(const rt__local *l, const rt__worker *w, uint64_t starts)
{
    size_t inflight = w->calls - w->answered - w->taken_back;
    if (w->spawn_errno)
        return inflight && l->running == 0 ? 1 : 0;
    uint64_t skip = starts & RT__SKIP_MAX;
    uint64_t passed = w->taken_back > skip ? w->taken_back - skip : 0;
    uint64_t started = (starts >> RT__SKIP_BITS) - passed + w->inside;
    uint64_t n = started > w->answered ? started - w->answered : 0;
    return n < inflight ? (size_t)n : inflight;
}

/* Read what the worker left in its socket and pipes, tell the
 * dispatcher, and free the record. */
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
    rt__workers_close_socket(w);
    rt__loop_remove(l->loop, &w->w_out);
    rt__loop_remove(l->loop, &w->w_err);
    rt__relay_close(&w->out);
    rt__relay_close(&w->err);
    unlink_worker(l, w);
    if (w->lent)
        l->lent--;
    else if (!w->actor)
        l->task_workers--;
    if (w->pid > 0)
        l->running--;
    rt__loss loss = {.pid = w->pid, .wait_status = w->wait_status,
                     .spawn_errno = w->spawn_errno,
                     .lost_channel = (int)atomic_load(&slot->lost), .broke = w->broke,
                     .started = started_in_flight(l, w, atomic_load(&slot->starts))};
    if (w->owner)
        l->node.ev.lost(l->node.ev.ctx, w->owner, &loss);
    rt__workers_free(w); /* its watches are removed: no callback can reach it */
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

void rt__workers_on_forkserver(rt__watch *wt, uint32_t events)
{
    rt__local *l = RT__OWNER(wt, rt__local, w_forkserver);
    if (events & EPOLLOUT)
        rt__workers_flush_forkserver(l);
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

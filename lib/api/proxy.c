/*
 * proxy.c - the calls tasks make, made in the application.
 *
 * A worker's thread that calls rt_remote(), rt_get()... connects through
 * the door (node/client.h), here or on another rank (cluster/tunnel.h);
 * for each connection the runtime thread has a proxy thread started
 * here, which makes each call it reads with the public calls themselves,
 * as any thread of the application would, and replies.  So a task's
 * rt_get() waits in the application exactly as the application's own
 * does, and what a task may do is what the application may do, checked
 * by the same code.
 *
 * Two things are a task's own.  While its rt_get() or rt_wait() waits,
 * its CPUs are lent (rt__call_lend()), so that the tasks it waits for can
 * run.  And the handles it makes are its: when it ends, those it did not
 * consume, release or return in its result are released (END), before
 * its result goes out, the actors it created are killed but those made
 * detached, and the placement groups it made are removed.
 *
 * The list of proxies is this module's alone: the runtime thread adds to
 * it when a worker's thread knocks at the door (rt__proxies_serve()),
 * and rt_shutdown() ends them all, after the runtime, so that every call
 * a proxy waits in has returned.
 *
 * Threads are bounded: a worker process has at most
 * RT__TASK_THREADS_MAX threads calling at once, the application at most
 * PROXIES_MAX proxies in all.  A thread past either bound is refused
 * with a reply that says so, and its connection closed; it may call
 * again once others have ended (their connections close with them).
 */
#include "proxy.h"

#include "args.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/linger.h"
#include "base/shm.h"
#include "base/thread.h"
#include "node/callmsg.h"
#include "runtime/calls.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROXY_STACK (256 * 1024)
#define RT__TASK_THREADS_MAX 64 /* one worker's threads calling at once */
#define PROXIES_MAX 1024        /* every connection, other ranks' too */

/* A handle a task made: an object's, or an actor's or a placement
 * group's, which end with the task. */
enum { MADE_OBJECT, MADE_ACTOR, MADE_GROUP };

struct made {
    uint64_t id;
    int kind;
};

typedef struct proxy {
    struct proxy *next;
    pthread_t thread;
    rt__chan chan;
    _Atomic int ended;  /* its thread is done: join it */
    pid_t peer;         /* the worker process that connected (or 0) */
    int rank;           /* where it runs: 0 here, else the tunnel's rank */
    struct made *made;  /* handles its tasks made and still hold (id 0:
                           one consumed below base) */
    size_t nmade, cap;
    size_t base;        /* made[base..] are the running task's */
    size_t *bases;      /* those of the tasks it runs inside (RUN) */
    size_t nbases, cap_bases;
    rt_arg *args;       /* room for a submission's arguments */
    struct rt__task *held; /* an object another rank holds, whose bytes the
                              worker's rank takes for its GET: held until
                              the worker's next call, or NULL */
    _Atomic int named;    /* it answered RT__NAMED_OK: its worker may send
                             named SUBMITs */
    _Atomic int draining; /* it may have read named SUBMITs not made yet */
    char *submission;     /* a named SUBMIT's payload, copied while the
                             channel reads on (get_follows()) */
    size_t submission_cap;
    int holding;          /* it holds the round for the GET that follows
                             a named SUBMIT (hold_for_get()) */
} proxy;

/* The runtime thread adds to the list and takes the ended ones off;
 * rt_shutdown() empties it once that thread has ended.  Proxies look
 * through it for their worker's other connections (siblings_drained()):
 * while one looks, none is freed. */
static struct {
    pthread_mutex_t lock;
    proxy *all;
    size_t looking;    /* proxies polling others' connections */
    _Atomic int named; /* some proxy answered RT__NAMED_OK */
} proxies = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- the handles a connection's tasks made ------------------------------------------ */

static void made(proxy *p, uint64_t id, int kind)
{
    if (p->nmade == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        struct made *grown = rt__realloc(p->made, cap * sizeof *grown);
        if (!grown)
            return; /* not released at the task's end: rt_shutdown() frees it */
        p->made = grown;
        p->cap = cap;
    }
    p->made[p->nmade++] = (struct made){id, kind};
}

/* A handle consumed: one of an outer task's (below base) leaves a 0,
 * so that every task's range stays where it is. */
static void unmade_kind(proxy *p, uint64_t id, int kind)
{
    for (size_t i = p->nmade; i-- > 0;)
        if (p->made[i].id == id && p->made[i].kind == kind) {
            p->made[i] = i < p->base ? (struct made){0} : p->made[--p->nmade];
            return;
        }
}

static void unmade(proxy *p, uint64_t id)
{
    unmade_kind(p, id, MADE_OBJECT);
}

/* Whether the running task made handle id. */
static int made_here(const proxy *p, uint64_t id)
{
    for (size_t i = p->base; i < p->nmade; i++)
        if (p->made[i].id == id && p->made[i].kind == MADE_OBJECT)
            return 1;
    return 0;
}

/* A task starts inside the running one's wait (RUN): its handles start
 * a range of their own.  0, or -1 without memory. */
static int inside_starts(proxy *p)
{
    if (p->nbases == p->cap_bases) {
        size_t cap = p->cap_bases ? p->cap_bases * 2 : 16;
        size_t *grown = rt__realloc(p->bases, cap * sizeof *grown);
        if (!grown)
            return -1;
        p->bases = grown;
        p->cap_bases = cap;
    }
    p->bases[p->nbases++] = p->base;
    p->base = p->nmade;
    return 0;
}

/* It ended (its END, if it made handles, came first): the waiting task
 * runs again.  A worker that says so out of turn changes nothing of
 * another connection's. */
static void inside_ended(proxy *p)
{
    if (p->nbases)
        p->base = p->bases[--p->nbases];
}

static int is_kept(uint64_t id, const uint64_t *kept, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (kept[i] == id)
            return 1;
    return 0;
}

/* A task ended: release what it made but for kept (its result names
 * them), kill its actors and remove its placement groups.  A handle
 * consumed elsewhere since is refused, harmlessly, and so is an actor
 * killed or a group removed already. */
static void release_made(proxy *p, const uint64_t *kept, size_t nkept)
{
    for (size_t i = p->base; i < p->nmade; i++) {
        const struct made *m = &p->made[i];
        if (m->kind == MADE_ACTOR)
            (void)rt_actor_kill((rt_actor){m->id});
        else if (m->kind == MADE_GROUP)
            (void)rt_pg_remove((rt_pg){m->id});
        else if (m->id && !is_kept(m->id, kept, nkept))
            (void)rt_release((rt_ref){m->id});
    }
    p->nmade = p->base;
}

/* ---- named submissions (node/callmsg.h) ------------------------------------------- */

/* Whether h is a named SUBMIT: a worker here submits under a handle of
 * its own, and waits for no reply. */
static int is_named(const proxy *p, const rt__hdr *h)
{
    return h->type == RT__CALL_SUBMIT && h->id && p->rank == 0 && p->peer;
}

/* Whether id has a named SUBMIT's shape. */
static int named_id(uint64_t id)
{
    return rt__id_made_on(id, 0);
}

#define DRAIN_WAIT_NS 1000000000ull /* a worker that stalls its connections
                                       waits that long for itself */

/* Whether one of n connections, polled, may still hold named SUBMITs not
 * made: p->draining is read after the poll, and is set before a proxy
 * takes bytes from its socket (take_call()). */
static int any_busy(proxy *const *of, const struct pollfd *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!atomic_load(&of[i]->ended) &&
            ((fds[i].revents & POLLIN) || atomic_load(&of[i]->draining)))
            return 1;
    return 0;
}

/* A thread of p's worker may name a handle that another thread of it has
 * just made: a named SUBMIT written on that thread's connection before
 * the handle was returned.  Wait until each of the worker's other
 * connections that may carry named SUBMITs has made those it was sent. */
static void siblings_drained(const proxy *p)
{
    uint64_t start = rt__now_ns();
    for (;;) {
        proxy *of[RT__TASK_THREADS_MAX];
        struct pollfd fds[RT__TASK_THREADS_MAX];
        size_t n = 0;
        pthread_mutex_lock(&proxies.lock);
        for (proxy *q = proxies.all; q && n < RT__TASK_THREADS_MAX; q = q->next)
            if (q != p && q->peer == p->peer && atomic_load(&q->named)) {
                fds[n] = (struct pollfd){.fd = q->chan.fd, .events = POLLIN};
                of[n++] = q;
            }
        proxies.looking += n > 0;
        pthread_mutex_unlock(&proxies.lock);
        if (n == 0)
            return;
        (void)poll(fds, n, 0);
        int busy = any_busy(of, fds, n);
        pthread_mutex_lock(&proxies.lock);
        proxies.looking--;
        pthread_mutex_unlock(&proxies.lock);
        if (!busy || rt__now_ns() - start > DRAIN_WAIT_NS)
            return;
        sched_yield();
    }
}

/* Before a call of p's worker that names ids: those of named SUBMITs on
 * its other connections are made. */
static void drained_for(const proxy *p, const uint64_t *ids, size_t n)
{
    if (!p->peer || !atomic_load(&proxies.named))
        return;
    for (size_t i = 0; i < n; i++)
        if (named_id(ids[i])) {
            siblings_drained(p);
            return;
        }
}

/* The next call on p's connection (rt__callmsg_take()), p->draining kept:
 * set before bytes leave the socket, cleared once nothing read is left,
 * or at the first call read that is not a named SUBMIT (a worker's thread
 * sends nothing after a call but its next, once answered). */
static int take_call(proxy *p, rt__hdr *h, const char **payload, size_t *len, int *fd)
{
    if (p->chan.in.head == p->chan.in.tail) {
        atomic_store(&p->draining, 0);
        struct pollfd pfd = {.fd = p->chan.fd, .events = POLLIN};
        if (!rt__linger(p->chan.fd))
            while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
                ;
    }
    atomic_store(&p->draining, 1);
    int got = rt__callmsg_take(&p->chan, h, payload, len, fd);
    if (got <= 0 || !is_named(p, h))
        atomic_store(&p->draining, 0);
    return got;
}

/* ---- one call ----------------------------------------------------------------------- */

static int reply(proxy *p, int rc, uint64_t value, const void *data, size_t len, int fd)
{
    return rt__callmsg_put_reply(&p->chan, rc, value, rc < 0 ? rt_last_error() : NULL,
                                 data, len, fd);
}

static int reply_bytes(proxy *p, int rc, const void *data, size_t len)
{
    return rt__callmsg_put_object(&p->chan, rc, rc < 0 ? rt_last_error() : NULL, data, len);
}

/* Whether the worker's thread hung up: its process died, and its task
 * may run again elsewhere, under the same id (the runtime tells the runs
 * apart: rt__call_lend()). */
static int worker_gone(const proxy *p)
{
    struct pollfd pfd = {.fd = p->chan.fd, .events = POLLRDHUP};
    return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

#define LOOK_MAX 8 /* a longer list is not looked at: its task lends at once */

/* Whether the asking task will wait for refs (not num_ready of them are
 * ready now): then it lends its CPUs meanwhile, and *awaited is one it
 * waits for. */
static int waits_for(const proxy *p, uint64_t task, const rt_ref *refs, size_t n,
                     size_t num_ready, long timeout_ms, rt_ref *awaited)
{
    if (!task || timeout_ms == 0 || n == 0 || worker_gone(p))
        return 0;
    *awaited = refs[0];
    if (n > LOOK_MAX)
        return 1;
    size_t index[LOOK_MAX], ready;
    if (rt_wait_indices(refs, n, num_ready, 0, index, &ready) < 0 || ready >= num_ready)
        return 0;
    for (size_t i = 0, k = 0; i < n; i++) {
        if (k < ready && index[k] == i) {
            k++;
            continue;
        }
        *awaited = refs[i]; /* the first not ready */
        break;
    }
    return 1;
}

/* Run `run` of task is about to wait for refs: it lends its CPUs when it
 * will wait (rt__call_lend()).  Whether it did. */
static int lend(const proxy *p, uint64_t task, uint64_t run, const rt_ref *refs, size_t n,
                size_t num_ready, long timeout_ms)
{
    rt_ref awaited;
    return waits_for(p, task, refs, n, num_ready, timeout_ms, &awaited) &&
           rt__call_lend(rt__runtime_here(), task, (unsigned)run, 1, awaited);
}

#define GONE_CHECK_MS 100 /* how often a run waiting for its CPUs looks at its worker */

/* The run goes on after waiting: it takes its CPUs back, and waits for
 * them, unless its worker is gone (a run that is over waits for nothing). */
static void go_on(const proxy *p, uint64_t task, uint64_t run, int lent)
{
    rt__runtime *rt = rt__runtime_here();
    if (!lent || worker_gone(p))
        return;
    (void)rt__call_lend(rt, task, (unsigned)run, 0, (rt_ref){0});
    while (!rt__call_went_on(rt, task, (unsigned)run, GONE_CHECK_MS) && !worker_gone(p))
        ;
}

/* The round p held since a named SUBMIT (hold_for_get()) takes it and
 * what came after (the offer of its GET), and is given back. */
static void run_held_round(proxy *p)
{
    if (p->holding) {
        p->holding = 0;
        rt__call_run_round(rt__runtime_here());
    }
}

/* Run `run` of task waits, with no time limit, for ref, a task it made,
 * on a thread that may run it: the runtime gives it to the task to run
 * when it is queued, as work-first runtimes do (then RUN is queued, and
 * 1 returned; -1 without memory), or lends the task's CPUs meanwhile
 * (*lent, as lend() says) and 0 is returned. */
static int give_or_lend(proxy *p, uint64_t task, uint64_t run, rt_ref ref, int *lent)
{
    rt__runtime *rt = rt__runtime_here();
    rt_ref awaited;
    struct rt__ask *a = waits_for(p, task, &ref, 1, 1, -1, &awaited)
                     ? rt__call_offer(rt, task, (unsigned)run, ref, (uint64_t)p->peer) : NULL;
    run_held_round(p);
    rt__given g;
    *lent = a != NULL;
    if (!a || !rt__call_given(rt, a, &g))
        return 0;
    *lent = 0;
    rt__callmsg_run m = {g.id, g.fn, g.run, g.arg, g.len};
    int rc = rt__callmsg_put_run(&p->chan, &m) == 0 && inside_starts(p) == 0 ? 1 : -1;
    rt__call_unhold(rt, g.task);
    return rc;
}

/* The answer to a GET of another rank's task (rt__call_get_held()'s rc
 * and *at): where the object's bytes are, which the task's rank takes
 * from there (HELD_AT), or the error. */
static int reply_held(proxy *p, rt_ref ref, int keep, int rc, const rt__held_at *at)
{
    if (!keep && rc != RT_ETIMEDOUT && rc != RT_EBADREF)
        unmade(p, ref.id);
    if (rc < 0)
        return reply(p, rc, 0, NULL, 0, -1);
    p->held = at->hold;
    rt__callmsg_held_at where = {at->object, at->run, at->holder, at->len};
    return rt__callmsg_put(&p->chan, RT__CALL_HELD_AT, 0, 0, &where, sizeof where);
}

/* The task took ref's answer from its run inside the wait (callmsg.h's
 * RT__RAN_AND_TOOK): the handle goes unanswered, as a consumed one.  The
 * answer, sent first on the worker's socket, is recorded and freed as a
 * released task's.  A handle the connection did not make is left as it
 * is: nothing was given to run under it. */
static int answer_taken(proxy *p, rt_ref ref)
{
    if (made_here(p, ref.id)) {
        unmade(p, ref.id);
        (void)rt_release(ref);
    }
    return 0;
}

/* A GET with this much time reads a quick task's answer before it lends
 * (rt__call_await(), which waits at most a few of the task's runs). */
#define AWAIT_FIRST_MS 10

static int do_get(proxy *p, const rt__hdr *h, const char *payload, size_t len)
{
    rt__callmsg_get g;
    if (len != sizeof g)
        return -1;
    memcpy(&g, payload, sizeof g);
    rt_ref ref = {h->id};
    int lent;
    if (!p->holding) /* a GET held for follows its SUBMIT on this connection */
        drained_for(p, &ref.id, 1);
    if (g.ran_inside)
        inside_ended(p);
    if (g.ran_inside == RT__RAN_AND_TOOK)
        return answer_taken(p, ref);
    int may_run = g.may_run && g.timeout_ms < 0 && p->peer && made_here(p, ref.id);
    if (!may_run) /* nothing to offer: the round held for it goes on */
        run_held_round(p);
    if (g.timeout_ms < 0 || g.timeout_ms >= AWAIT_FIRST_MS)
        rt__call_await(rt__runtime_here(), ref);
    if (may_run) {
        int given = give_or_lend(p, h->word, g.attempt, ref, &lent);
        if (given)
            return given > 0 ? 0 : -1; /* the RUN is the reply */
    } else {
        lent = lend(p, h->word, g.attempt, &ref, 1, 1, (long)g.timeout_ms);
    }
    int rc, out;
    rt__held_at at;
    if (p->rank > 0 && (rc = rt__call_get_held(rt__runtime_here(), ref, (long)g.timeout_ms,
                                              (int)g.keep, &at)) != 0) {
        go_on(p, h->word, g.attempt, lent);
        return reply_held(p, ref, (int)g.keep, rc, &at);
    }
    if (g.keep) {
        rt_view view;
        rc = rt_get_view(ref, &view, (long)g.timeout_ms);
        go_on(p, h->word, g.attempt, lent);
        out = reply_bytes(p, rc, view.data, view.len);
        if (rc == 0 || rc == RT_ETASK)
            (void)rt_view_release(&view);
        return out;
    }
    void *data = NULL;
    size_t n = 0;
    rc = rt_get(ref, &data, &n, (long)g.timeout_ms);
    go_on(p, h->word, g.attempt, lent);
    if (rc != RT_ETIMEDOUT && rc != RT_EBADREF)
        unmade(p, ref.id);
    out = reply_bytes(p, rc, data, n);
    rt__buf_free(data);
    return out;
}

/* rt_stream_next(), lending the task's CPUs while the stream's task
 * runs, as rt_get() does. */
static int do_stream_next(proxy *p, const rt__hdr *h, const char *payload, size_t len)
{
    rt__callmsg_get g;
    if (len != sizeof g)
        return -1;
    memcpy(&g, payload, sizeof g);
    rt_ref ref = {h->id}, item = {0};
    int lent = lend(p, h->word, g.attempt, &ref, 1, 1, (long)g.timeout_ms);
    int rc = rt_stream_next(ref, &item, (long)g.timeout_ms);
    go_on(p, h->word, g.attempt, lent);
    if (rc == 0)
        made(p, item.id, MADE_OBJECT);
    return reply(p, rc, item.id, NULL, 0, -1);
}

/* Placement groups a task makes are its own, as its actors are (Ray's
 * groups end with their creator): removed when it ends, unless it
 * removes them first.  Its wait for one lends its CPUs. */
static int do_group(proxy *p, const rt__hdr *h, const char *payload, size_t len)
{
    rt_pg pg = {h->id};
    rt_bundle bundles[RT_PG_BUNDLES_MAX];
    rt__callmsg_get g;
    size_t n;
    int strategy, rc;
    switch (h->type) {
    case RT__CALL_PG_CREATE:
        if (rt__callmsg_read_group(payload, len, bundles, &n, &strategy) < 0)
            return -1;
        rc = rt_pg_create(bundles, n, strategy, &pg);
        if (rc == 0)
            made(p, pg.id, MADE_GROUP);
        return reply(p, rc, pg.id, NULL, 0, -1);
    case RT__CALL_PG_WAIT: {
        if (len != sizeof g)
            return -1;
        memcpy(&g, payload, sizeof g);
        int lent = g.timeout_ms && !worker_gone(p) &&
                   rt__call_lend(rt__runtime_here(), h->word, (unsigned)g.attempt, 1,
                                 (rt_ref){0});
        rc = rt_pg_wait(pg, (long)g.timeout_ms);
        go_on(p, h->word, g.attempt, lent);
        return reply(p, rc, 0, NULL, 0, -1);
    }
    default:
        rc = rt_pg_remove(pg);
        if (rc == 0)
            unmade_kind(p, pg.id, MADE_GROUP);
        return reply(p, rc, 0, NULL, 0, -1);
    }
}

static int do_wait(proxy *p, const rt__hdr *h, const char *payload, size_t len)
{
    rt__callmsg_wait w;
    if (len < sizeof w)
        return -1;
    memcpy(&w, payload, sizeof w);
    if (w.n > (len - sizeof w) / sizeof(rt_ref) || len != sizeof w + w.n * sizeof(rt_ref))
        return -1;
    size_t n = (size_t)w.n;
    rt_ref *refs = rt__malloc((n + 1) * sizeof *refs);
    size_t *index = rt__malloc((n + 1) * sizeof *index);
    unsigned char *ready = rt__calloc(n + 1, 1);
    int rc = refs && index && ready ? 0 : rt__error(RT_ENOMEM, "rt_wait: out of memory");
    size_t count = 0;
    if (rc == 0) {
        memcpy(refs, payload + sizeof w, n * sizeof *refs);
        for (size_t i = 0; i < n; i++)
            drained_for(p, &refs[i].id, 1);
        int lent = lend(p, h->word, w.attempt, refs, n, (size_t)w.num_ready,
                        (long)w.timeout_ms);
        rc = rt_wait_indices(refs, n, (size_t)w.num_ready, (long)w.timeout_ms, index, &count);
        go_on(p, h->word, w.attempt, lent);
    }
    for (size_t i = 0; rc == 0 && i < count; i++)
        ready[index[i]] = 1;
    int out = reply(p, rc, count, ready, rc == 0 ? n : 0, -1);
    rt__free(refs);
    rt__free(index);
    rt__free(ready);
    return out;
}

/* Whether the task's rank may have made handle id for a task its task
 * submitted (cluster/tunnel.c): its own ranks' handles, never from here. */
static int may_name(const proxy *p, uint64_t id)
{
    return p->rank > 0 && rt__id_made_on(id, p->rank);
}

/* Whether a named SUBMIT is what a worker names (node/callmsg.h): a
 * handle of the shape, a task of default options whose arguments are
 * bytes.  Anything else breaks the protocol. */
static int named_as_sent(uint64_t id, const rt__submission *s)
{
    if (!named_id(id) || s->opts)
        return 0;
    for (size_t i = 0; i < s->nargs; i++)
        if (s->args[i].ref.id)
            return 0;
    return 1;
}

/* A worker's task took, single: the reply says that a submission like it
 * may go named from now on. */
static int reply_named_ok(proxy *p, uint64_t id)
{
    static const char ok = RT__NAMED_OK;
    atomic_store(&p->named, 1);
    atomic_store(&proxies.named, 1);
    return reply(p, 0, id, &ok, 1, -1);
}

/* A named SUBMIT that its task's GET follows at once (rt_remote() then
 * rt_get() in a task, the synchronous call) is taken with that GET in
 * one round, so that the task runs inside the wait (give_or_lend()), as
 * a queued task would, not in another worker, and its answer needs no
 * reply (RT__RAN_AND_TOOK): one trip to the application, as for the
 * application's own call.  A GET that is not there this soon (the task
 * computes first) does not come at once: the SUBMIT goes on alone. */
#define GET_FOLLOWS_NS 20000ull

/* Whether the next call read on p is a GET of id that may run it: 1 or
 * 0, or -1 when no whole call follows in the buffer yet. */
static int next_is_get(const proxy *p, uint64_t id)
{
    const rt__bytes *in = &p->chan.in;
    rt__hdr h;
    const char *payload;
    rt__callmsg_get g;
    long got = rt__msg_read(in->data + in->head, in->tail - in->head, &h, &payload);
    if (got == 0)
        return -1;
    if (got < 0 || h.type != RT__CALL_GET || h.id != id || h.nfds || h.len != sizeof g)
        return 0;
    memcpy(&g, payload, sizeof g);
    return g.may_run && g.timeout_ms < 0 && !g.keep;
}

/* Whether the next call on p is a GET of id that may run it, there or
 * coming within GET_FOLLOWS_NS.  It may read more into the channel's
 * buffer: nothing may point into it. */
static int get_follows(proxy *p, uint64_t id)
{
    uint64_t start = rt__now_ns();
    for (;;) {
        int next = next_is_get(p, id);
        if (next >= 0)
            return next;
        struct pollfd pfd = {.fd = p->chan.fd, .events = POLLIN};
        if (rt__now_ns() - start > GET_FOLLOWS_NS || poll(&pfd, 1, 0) < 0)
            return 0;
        if (!pfd.revents)
            sched_yield();
        else if (rt__chan_fill(&p->chan) <= 0)
            return 0; /* take_call() hears of it */
    }
}

/* Before a named SUBMIT of p's is made: hold the round when its GET
 * follows (get_follows()), until that GET offers to run it.  To wait for
 * the GET, the channel reads on: the SUBMIT's payload is copied first
 * (*payload then points to the copy); a call there already needs no
 * copy. */
static void hold_for_get(proxy *p, uint64_t id, const char **payload, size_t len)
{
    if (p->rank != 0 || !p->peer)
        return;
    int follows = next_is_get(p, id);
    if (follows < 0) {
        if (len > p->submission_cap) {
            char *grown = rt__realloc(p->submission, len);
            if (!grown)
                return;
            p->submission = grown;
            p->submission_cap = len;
        }
        if (len)
            memcpy(p->submission, *payload, len);
        *payload = p->submission;
        follows = get_follows(p, id);
    }
    if (follows) {
        rt__call_hold_round(rt__runtime_here());
        p->holding = 1;
    }
}

static int do_submit(proxy *p, const rt__hdr *h, const char *payload, size_t len)
{
    rt__submission s;
    rt_opts opts;
    int named = is_named(p, h);
    if (!p->args && !(p->args = rt__malloc(RT_ARGS_MAX * sizeof *p->args)))
        return named ? 0 : reply(p, rt__error(RT_ENOMEM, "a task's call: out of memory"),
                                 0, NULL, 0, -1);
    if (named)
        hold_for_get(p, h->id, &payload, len);
    if (rt__callmsg_read_submission(payload, len, &s, &opts, p->args) < 0)
        return -1;
    rt_ref refs[RT_RETURNS_MAX] = {{0}};
    int create = s.form == RT__SUBMIT_CREATE;
    int task = s.form == RT__SUBMIT_TASK || s.form == RT__SUBMIT_TASK_ARGS;
    if (h->id && !(task && (named ? named_as_sent(h->id, &s) : may_name(p, h->id))))
        return -1;
    s.id = h->id;
    /* A named one read after its task ended or was cancelled (its worker
     * sent many, then was killed) is dropped: nothing waits for it, and
     * it would run as if its parent had not been stopped. */
    if (named && h->word && !rt__call_runs(rt__runtime_here(), h->word))
        return 0;
    for (size_t i = 0; i < s.nargs; i++)
        drained_for(p, &s.args[i].ref.id, 1);
    int rc = task     ? rt__remote_task(&s, 1, refs)
             : create ? rt__actor_create_form(&s, refs)
                      : rt__actor_call_form(&s, refs);
    /* Its rank or its worker answered it: the handle tells why it failed
     * (a named one's failure goes when the task ends, unless the handle
     * named something already, which stays as it was). */
    if (rc < 0 && s.id && rt__call_put_failed(rt__runtime_here(), s.id, rc) == 0 && named)
        made(p, s.id, MADE_OBJECT);
    size_t n = rc == 0 && task && s.opts && s.opts->num_returns > 1
                   ? (size_t)s.opts->num_returns : 1;
    if (rc == 0 && task && h->word)
        rt__call_child(rt__runtime_here(), h->word, refs[0]); /* cancelled with it */
    for (size_t i = 0; rc == 0 && i < n && (!create || !s.opts || !s.opts->detached); i++)
        made(p, refs[i].id, create ? MADE_ACTOR : MADE_OBJECT);
    if (named)
        return 0;
    if (rc == 0 && task && n == 1 && p->rank == 0 && p->peer)
        return reply_named_ok(p, refs[0].id);
    /* Several results: their handles, as the reply's bytes. */
    return reply(p, rc > 0 ? 0 : rc, refs[0].id, n > 1 ? refs : NULL, n > 1 ? n * sizeof *refs : 0,
                 -1); /* rc 1: found by its name */
}

/* An object whose bytes the worker's rank kept (cluster/tunnel.c): its
 * record here names that rank as their holder.  Only the other rank's
 * tunnel makes this call, never a worker: from here it breaks the
 * protocol. */
static int do_put_held(proxy *p, const char *payload, size_t len)
{
    rt__callmsg_held held;
    if (p->rank <= 0 || len != sizeof held)
        return -1;
    memcpy(&held, payload, sizeof held);
    rt_ref ref = {0};
    int rc = rt__call_put_held(rt__runtime_here(), p->rank, held.len, held.hash, &ref);
    if (rc == 0)
        made(p, ref.id, MADE_OBJECT);
    return reply(p, rc, ref.id, NULL, 0, -1);
}

/* The worker called again, or is gone: its rank has the bytes of the
 * object it got last (reply_held()), or needs them no more. */
static void let_go(proxy *p)
{
    if (p->held)
        rt__call_unhold(rt__runtime_here(), p->held);
    p->held = NULL;
}

/* Make the call h asks for and queue the reply: 0, or -1 when the
 * message breaks the protocol. */
static int serve_one(proxy *p, const rt__hdr *h, const char *payload, size_t len)
{
    rt_ref ref = {h->id};
    int rc;
    uint64_t force;
    switch (h->type) {
    case RT__CALL_SUBMIT:
        return do_submit(p, h, payload, len);
    case RT__CALL_PUT:
        rc = rt_put(payload, len, &ref);
        if (rc == 0)
            made(p, ref.id, MADE_OBJECT);
        return reply(p, rc, ref.id, NULL, 0, -1);
    case RT__CALL_PUT_HELD:
        return do_put_held(p, payload, len);
    case RT__CALL_INSIDE: /* the tunnel's; no reply */
        if (p->rank <= 0 || len || h->word > 1)
            return -1;
        if (h->word)
            inside_ended(p);
        return h->word ? 0 : inside_starts(p);
    case RT__CALL_GET:
        return do_get(p, h, payload, len);
    case RT__CALL_WAIT:
        return do_wait(p, h, payload, len);
    case RT__CALL_STREAM_NEXT:
        return do_stream_next(p, h, payload, len);
    case RT__CALL_PG_CREATE:
    case RT__CALL_PG_WAIT:
    case RT__CALL_PG_REMOVE:
        return do_group(p, h, payload, len);
    case RT__CALL_CANCEL:
        if (len != sizeof force)
            return -1;
        memcpy(&force, payload, sizeof force);
        drained_for(p, &ref.id, 1);
        return reply(p, rt_cancel(ref, force > 3 ? -1 : (int)force), 0, NULL, 0, -1);
    case RT__CALL_RELEASE:
        drained_for(p, &ref.id, 1);
        rc = rt_release(ref);
        if (rc == 0)
            unmade(p, ref.id);
        return reply(p, rc, 0, NULL, 0, -1);
    case RT__CALL_YIELD:
        rc = rt_put(payload, len, &ref);
        if (rc == 0 && (rc = rt__call_stream_add(rt__runtime_here(), h->word, ref)) < 0)
            (void)rt_release(ref);
        return reply(p, rc, 0, NULL, 0, -1);
    case RT__CALL_KILL:
        if (len && len != 8)
            return -1;
        rc = len ? rt_actor_restart((rt_actor){h->id}) : rt_actor_kill((rt_actor){h->id});
        return reply(p, rc, 0, NULL, 0, -1);
    case RT__CALL_ACTOR_GET: {
        rt_actor found = {0};
        if (!len || payload[len - 1])
            return -1;
        rc = rt_actor_get(payload, &found);
        return reply(p, rc, found.id, NULL, 0, -1);
    }
    case RT__CALL_END:
        if (len % 8)
            return -1;
        drained_for(p, (const uint64_t *)(const void *)payload, len / 8);
        if (len && h->word) /* its result names handles of this run */
            rt__call_unkept(rt__runtime_here(), h->word);
        release_made(p, (const uint64_t *)(const void *)payload, len / 8);
        return reply(p, 0, 0, NULL, 0, -1);
    default:
        return -1;
    }
}

/* A proxy's thread: calls until the worker's thread is gone (or breaks
 * the protocol, or the runtime ends); then what its tasks still held is
 * released. */
static void *serve(void *arg)
{
    proxy *p = arg;
    rt__thread_name("rtask-proxy");
    for (;;) {
        rt__hdr h;
        const char *payload;
        size_t len;
        int fd;
        if (take_call(p, &h, &payload, &len, &fd) <= 0)
            break;
        if (fd >= 0)
            close(fd); /* only a reply carries an object */
        let_go(p);
        int rc = serve_one(p, &h, payload, len);
        if (h.type != RT__CALL_SUBMIT || rc < 0)
            run_held_round(p); /* the call after the SUBMIT was not its GET */
        rt__callmsg_done(&h, payload, len);
        if (rc < 0)
            rt__warn("a task's %s call broke the protocol: its connection is closed",
                     rt__callmsg_name(h.type));
        if (rc < 0 || rt__chan_flush(&p->chan) < 0)
            break;
    }
    run_held_round(p);
    let_go(p);
    p->base = 0; /* every task of the connection ended */
    release_made(p, NULL, 0);
    shutdown(p->chan.fd, SHUT_RDWR); /* now, not when joined: the caller hears */
    atomic_store(&p->ended, 1);
    return NULL;
}

/* ---- the proxies -------------------------------------------------------------------- */

static void proxy_free(proxy *p)
{
    rt__chan_close(&p->chan);
    rt__free(p->made);
    rt__free(p->bases);
    rt__free(p->args);
    rt__free(p->submission);
    rt__free(p);
}

/* Take the proxies whose thread ended (all: every one) off the list,
 * for join(). */
static proxy *take_ended(int all)
{
    proxy *ended = NULL;
    pthread_mutex_lock(&proxies.lock);
    if (!all && proxies.looking) { /* the next connection takes them */
        pthread_mutex_unlock(&proxies.lock);
        return NULL;
    }
    for (proxy **at = &proxies.all; *at;) {
        proxy *p = *at;
        if (!all && !atomic_load(&p->ended)) {
            at = &p->next;
            continue;
        }
        *at = p->next;
        p->next = ended;
        ended = p;
    }
    pthread_mutex_unlock(&proxies.lock);
    return ended;
}

/* Every thread first, then the memory: a proxy of the list may still be
 * looking at another (siblings_drained()). */
static void join(proxy *list)
{
    for (proxy *p = list; p; p = p->next)
        pthread_join(p->thread, NULL);
    for (proxy *p = list, *next; p; p = next) {
        next = p->next;
        proxy_free(p);
    }
}

/* The process at the other end of fd; 0 when it is this one (a call
 * relayed from another rank) or unknown. */
static pid_t peer_of(int fd)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.pid == getpid())
        return 0;
    return cred.pid;
}

/* Whether one more connection from peer passes the bounds (the ended
 * proxies were joined just before). */
static int room_for(pid_t peer)
{
    size_t all = 0, theirs = 0;
    for (const proxy *p = proxies.all; p; p = p->next) {
        all++;
        theirs += peer && p->peer == peer && !atomic_load(&p->ended);
    }
    return all < PROXIES_MAX && theirs < RT__TASK_THREADS_MAX;
}

/* Refuse a connection: its first call gets a reply that says why. */
static void refuse(int fd, pid_t peer)
{
    rt__chan chan;
    rt__chan_init(&chan, fd);
    if (rt__callmsg_put_reply(&chan, RT_ENOMEM, 0,
                              peer ? "a task's call: the task's worker has "
                                     "64 threads calling rtask already; "
                                     "call from fewer threads at once"
                                   : "a task's call: the application serves 1024 "
                                     "threads of tasks already; call from fewer at once",
                              NULL, 0, -1) == 0)
        (void)rt__chan_flush(&chan); /* a small reply into a new socket: no wait */
    rt__chan_close(&chan);
}

void rt__proxies_serve(int fd, int rank)
{
    join(take_ended(0));
    pid_t peer = peer_of(fd);
    if (!room_for(peer)) {
        refuse(fd, peer);
        return;
    }
    proxy *p = rt__calloc(1, sizeof *p);
    if (!p) {
        close(fd); /* the worker's call fails: the application is out of memory */
        return;
    }
    rt__chan_init(&p->chan, fd);
    p->peer = peer;
    p->rank = rank;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, PROXY_STACK);
    int rc = rt__thread_start(&p->thread, &attr, serve, p);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        proxy_free(p);
        return;
    }
    pthread_mutex_lock(&proxies.lock);
    p->next = proxies.all;
    proxies.all = p;
    pthread_mutex_unlock(&proxies.lock);
}

void rt__proxies_stop(void)
{
    /* The workers are gone with the runtime: each connection ends. */
    proxy *all = take_ended(1);
    for (proxy *p = all; p; p = p->next)
        shutdown(p->chan.fd, SHUT_RDWR);
    join(all);
}

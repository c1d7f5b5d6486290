/* tunnel.c - tasks' calls across ranks: their frames as CALL messages. */
#include "tunnel.h"

#include "image.h"
#include "serve.h"
#include "store.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/idmap.h"
#include "base/list.h"
#include "base/random.h"
#include "base/shm.h"
#include "node/callmsg.h"
#include "node/keep.h"
#include "node/task.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

struct child;

/* One connection: a worker's thread's, on the rank it runs on; a
 * proxy's, on rank 0.  Both sides name it by the worker's rank's number. */
typedef struct conn {
    rt__idnode byid;  /* first; key(): the worker's rank and number */
    rt__tunnel *tunnel;
    int rank;         /* where its frames go: 0, or the worker's rank */
    uint64_t number;
    rt__chan chan;
    rt__watch watch;
    uint64_t kept;    /* another rank's: a PUT's bytes kept under this
                         number, until rank 0's reply names them; or 0 */
    rt__task *fetching; /* another rank's: the object whose bytes the
                           worker's GET waits for (HELD_AT), or NULL */
    rt__link fetch;     /* on the tunnel's list while fetching */
    struct child *deferred;  /* another rank's: the task placed here that
                                its thread submitted last, until its GET */
    struct child *handed;    /* those handed to rank 0 on this connection,
                                oldest first, until rank 0 answers */
    struct child **handed_tail;
    struct child *running;   /* the one running inside the innermost wait */
    rt__hdr parked;          /* a frame that waits for a task placed here
                                to be rank 0's, */
    char *parked_payload;    /* its payload's copy (NULL: none parked), */
    int parked_fd;           /* and its memfd, or -1 */
} conn;

struct rt__tunnel {
    rt__bridge *bridge;
    rt__loop *loop;
    void (*serve)(int connection, int rank); /* rank 0's alone */
    rt__idmap conns;
    uint64_t next_number;
    rt__fn_cache places;           /* SUBMITs' functions, both ways */
    rt_arg *args;                  /* room to decode a SUBMIT */
    rt__store *store;              /* another rank's: where tasks' PUTs stay */
    int hashed;                    /* the job keeps checkpoints: hash them */
    int recording;                 /* the job keeps a timeline: rank 0 hears
                                      of the tasks placed here (RAN) */
    uint64_t last_kept;            /* the number of the last PUT kept */
    rt__link fetching;             /* connections whose GET waits for bytes */
    rt__serve *serving;            /* another rank's: its leases' workers */
    int rank;                      /* another rank's: its number */
    rt__idmap children;            /* the tasks placed here, by handle */
    rt__link deferred;             /* those waiting for their GET, oldest first */
    rt__timer hand_timer;          /* hands those waiting too long to rank 0 */
    uint64_t draw;                 /* the random state of their handles */
    size_t parked;                 /* connections with a frame parked */
    int calls_soon;                /* answered a call itself: more comes */
    rt__ran_fn *ran;               /* rank 0's: hears the RANs */
    void *ran_ctx;
};

/* A kept PUT's run until rank 0 names it: no object's (runs are small). */
#define KEPT_RUN UINT_MAX

#define NUMBER_BITS 48 /* a rank's numbers never reach this */

static uint64_t key(int rank, uint64_t number)
{
    return (uint64_t)rank << NUMBER_BITS | number;
}

static conn *find(const rt__tunnel *r, int rank, uint64_t number)
{
    return (conn *)rt__idmap_find(&r->conns, key(rank, number));
}

/* ---- connections ---------------------------------------------------------------- */

static void on_conn(rt__watch *w, uint32_t events);

/* Watch fd as k's connection; NULL (fd closed) without memory. */
static conn *conn_open(rt__tunnel *r, int rank, uint64_t number, int fd)
{
    conn *k = rt__calloc(1, sizeof *k);
    if (!k) {
        close(fd);
        return NULL;
    }
    *k = (conn){.byid.id = key(rank, number), .tunnel = r, .rank = rank,
                .number = number, .watch.fd = -1, .parked_fd = -1};
    k->handed_tail = &k->handed;
    rt__chan_init(&k->chan, fd);
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        rt__loop_add(r->loop, &k->watch, fd, EPOLLIN, on_conn) < 0) {
        rt__chan_close(&k->chan);
        rt__free(k);
        return NULL;
    }
    rt__idmap_add(&r->conns, &k->byid);
    return k;
}

static void fetch_end(conn *k)
{
    rt__store_unuse(k->tunnel->store, k->fetching);
    rt__list_remove(&k->fetch);
    k->fetching = NULL;
}

static void children_end(conn *k);

static void conn_close(conn *k)
{
    if (k->kept) /* the worker's thread went before rank 0 answered */
        rt__store_forget(k->tunnel->store, k->kept, KEPT_RUN);
    if (k->fetching)
        fetch_end(k);
    children_end(k);
    rt__loop_remove(k->tunnel->loop, &k->watch);
    rt__idmap_remove(&k->tunnel->conns, &k->byid);
    rt__chan_close(&k->chan);
    rt__free(k);
}

/* The other side hears that the connection is gone: a proxy ends and
 * releases what the worker's tasks held; a worker's call fails. */
static void hang_up(rt__tunnel *r, int rank, uint64_t number)
{
    rt__rank_msg m = {.type = RT__RANK_HANGUP, .lease = number, .fd = -1};
    if (rt__bridge_send(r->bridge, rank, &m) < 0)
        rt__warn("no memory to tell rank %d that a task's connection closed", rank);
    rt__bridge_flush(r->bridge);
}

static int hand_over(struct child *c);

/* A task placed here that k's thread submitted still runs: rank 0 gets
 * it before the hang-up, as it would have got it before the thread went. */
static void conn_lost(conn *k)
{
    if (k->deferred && hand_over(k->deferred) < 0)
        rt__warn("no memory to hand a task to rank 0 as its caller's thread went: "
                 "it does not run");
    hang_up(k->tunnel, k->rank, k->number);
    conn_close(k);
}

/* Send what k queued, watching for room when the socket is full, and
 * for more frames unless one is parked. */
static int flush(conn *k)
{
    int rc = rt__chan_flush(&k->chan);
    if (rc < 0)
        return -1;
    rt__loop_modify(k->tunnel->loop, &k->watch,
                    (k->parked_payload ? 0 : EPOLLIN) | (rc ? EPOLLOUT : 0));
    return 0;
}

/* ---- frames out ----------------------------------------------------------------- */

/* A function as its place; none (an actor class's missing constructor
 * or destructor) as the zero place, which no function has (the
 * program's own object is named "", but its offset 0 is its ELF header).
 * -1 when no object holds it. */
static int place_of(rt__tunnel *r, uint64_t fn, rt__fn_place *place)
{
    *place = (rt__fn_place){0};
    return fn ? rt__fn_cache_place(&r->places, (const void *)(uintptr_t)fn, place) : 0;
}

static uint64_t function_at(rt__tunnel *r, const rt__fn_place *place)
{
    return place->object[0] || place->offset
               ? (uint64_t)(uintptr_t)rt__fn_cache_find(&r->places, place) : 0;
}

/* A SUBMIT's functions as their places (an actor's constructor and
 * destructor, for a CREATE), which rank 0 turns into its own addresses;
 * -1 when the payload is no submission or no object holds them. */
static int place_functions(rt__tunnel *r, const char *payload, size_t len, int fd,
                           rt__rank_msg *m)
{
    const char *bytes = fd >= 0 ? rt__shm_open(fd, len, RT__SHM_VIEW) : payload;
    rt__submission s;
    rt_opts opts;
    int rc = bytes && rt__callmsg_read_submission(bytes, len, &s, &opts, r->args) == 0 &&
                     place_of(r, s.fn, &m->fn) == 0 &&
                     place_of(r, s.form == RT__SUBMIT_CREATE ? s.actor : 0, &m->fini) == 0
                 ? 0 : -1;
    if (fd >= 0 && bytes)
        rt__shm_unmap((void *)bytes, len);
    return rc;
}

/* One frame of k to the other side: its payload inline, or in the memfd
 * fd (which is the bridge's then).  0, or -1 when k must close: also when
 * fd is no memfd the bridge can map for its length, which the MPI thread
 * would take for a rank it cannot reach. */
static int send_raw(conn *k, const rt__hdr *h, const char *payload, int fd)
{
    rt__tunnel *r = k->tunnel;
    rt__rank_msg m = rt__rank_call(k->number, h);
    if (fd >= 0 && h->len == 0) {
        close(fd); /* nothing to follow */
        fd = -1;
    }
    if (fd >= 0 && rt__shm_fits(fd, (size_t)h->len) < 0) {
        close(fd);
        return -1;
    }
    m.fd = fd;
    m.bytes = fd >= 0 ? NULL : payload;
    rt__callmsg_ran ran;
    if (h->type == RT__CALL_RAN && h->len == sizeof ran) {
        memcpy(&ran, payload, sizeof ran);
        if (place_of(r, ran.fn, &m.fn) < 0)
            return -1;
    }
    if (h->type == RT__CALL_SUBMIT &&
        place_functions(r, payload, (size_t)h->len, fd, &m) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return rt__bridge_send(r->bridge, k->rank, &m);
}

static int tell(conn *k, struct child *c);

/* send_raw(), once rank 0 knows which task placed here makes the call
 * (tell()). */
static int send_frame(conn *k, const rt__hdr *h, const char *payload, int fd)
{
    if (k->running && tell(k, k->running) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return send_raw(k, h, payload, fd);
}

/* A task's rt_put() on this rank: its bytes stay here, in the store,
 * under a number of this tunnel's until rank 0's reply names them
 * (kept_named()); rank 0 hears only their length and hash, as a
 * PUT_HELD.  Bytes that cannot be kept (no memory) go to rank 0 as any
 * frame.  0, or -1 when k must close (its memfd is not one a reader may
 * map). */
static int keep_put(conn *k, const rt__hdr *h, const char *payload, int fd)
{
    rt__tunnel *r = k->tunnel;
    size_t len = (size_t)h->len;
    const char *bytes = fd >= 0 ? rt__shm_open(fd, len, RT__SHM_VIEW) : payload;
    if (!bytes) {
        close(fd);
        return -1;
    }
    void *copy = rt__task_object_bytes(bytes, len); /* the worker's no more */
    if (fd >= 0)
        rt__shm_unmap((void *)bytes, len);
    rt__callmsg_held held = {len, {0, 0}};
    if (copy && r->hashed) {
        rt__hash sum = rt__put_hash(copy, len);
        held.hash[0] = sum.a;
        held.hash[1] = sum.b;
    }
    if (!copy || rt__store_keep(r->store, r->last_kept + 1, KEPT_RUN, copy, len) < 0) {
        rt__buf_free(copy);
        return send_frame(k, h, payload, fd);
    }
    if (fd >= 0)
        close(fd);
    k->kept = ++r->last_kept;
    rt__hdr put = {.type = RT__CALL_PUT_HELD, .id = h->id, .word = h->word,
                   .len = sizeof held};
    return send_frame(k, &put, (const char *)&held, -1);
}

/* Rank 0 answered k's PUT_HELD: the kept bytes take the handle's id, or
 * go when the call failed. */
static void kept_named(conn *k, const rt__hdr *h)
{
    rt__store *store = k->tunnel->store;
    if (h->type != RT__CALL_REPLY || (uint32_t)h->id != 0 || !h->word ||
        rt__store_rename(store, k->kept, KEPT_RUN, h->word, 0) < 0)
        rt__store_forget(store, k->kept, KEPT_RUN);
    k->kept = 0;
}

/* ---- local first: tasks this rank places itself ------------------------------------ */

/* A task that a task here submitted, which this rank placed itself (Ray's
 * local first): its SUBMIT was answered here, with a handle of this
 * rank's (node/callmsg.h's RT__ID_FOREIGN).  It waits (DEFERRED) for its
 * parent's GET, which runs it inside the wait, in the parent's worker
 * (RUNNING, then DONE until the GET is answered); rank 0 never hears of
 * it.  Anything else that needs it (another call of the thread, a
 * call of another thread that names it, its parent's GET when the
 * worker may not run it, HAND_AFTER_NS without a GET) hands it to rank
 * 0 as its SUBMIT with the handle (HANDED), which rank 0 places as any
 * task; once rank 0 answered that, it is rank 0's alone. */
enum { DEFERRED, HANDED, RUNNING, DONE };

#define HAND_AFTER_NS 5000000ull /* a task placed here waits that long for its GET */

typedef struct child {
    rt__idnode byid;       /* first; its handle */
    rt__link deferred;     /* on the tunnel's list while DEFERRED */
    struct child *next;    /* on its connection's handed list */
    conn *k;               /* the connection it was submitted on */
    int state;
    int waited;            /* its parent's GET waits for its answer */
    int told;              /* RUNNING: rank 0 was told it runs (INSIDE) */
    int cancelled;         /* rt_cancel() asked it to stop: its result goes */
    int taken;             /* its parent took its answer from its run
                              (RT__RAN_AND_TOOK): its GET is not answered */
    struct child *outer;   /* RUNNING: the one whose wait it runs inside,
                              if that runs inside a wait too */
    uint64_t parent;       /* the task that submitted it */
    uint64_t lane;         /* RUNNING: the lease it runs in */
    uint64_t since_ns;     /* when */
    rt__amount cpu;        /* what it asks for */
    rt__hdr h;             /* its SUBMIT, */
    char *submission;      /* with its payload (its argument inside) */
    rt__callmsg_run run;   /* what its parent's worker runs */
    rt__answer answer;     /* DONE: how it ended, its bytes the child's */
} child;

static child *child_find(const rt__tunnel *r, uint64_t id)
{
    return (id & RT__ID_FOREIGN) && r->children.nbuckets
               ? (child *)rt__idmap_find(&r->children, id) : NULL;
}

static void unpark_all(rt__tunnel *r);

static void child_free(rt__tunnel *r, child *c)
{
    if (c->k && c->k->deferred == c)
        c->k->deferred = NULL;
    if (c->state == DEFERRED)
        rt__list_remove(&c->deferred);
    rt__idmap_remove(&r->children, &c->byid);
    rt__answer_drop(&c->answer);
    rt__free(c->submission);
    rt__free(c);
    unpark_all(r); /* a frame parked for it may go now */
}

/* A handle no task here has: the bit, this rank, 47 random bits. */
static uint64_t child_id(rt__tunnel *r)
{
    uint64_t id;
    do {
        id = RT__ID_FOREIGN | (uint64_t)r->rank << RT__ID_RANK_SHIFT |
             (rt__random_next(&r->draw) & ((1ULL << RT__ID_RANK_SHIFT) - 1));
    } while (child_find(r, id));
    return id;
}

/* Hand c to rank 0 on its connection: its SUBMIT, with its handle; the
 * reply is not the worker's (deliver_call()).  Its caller there is the
 * first of its callers that rank 0 knows (one placed here runs inside
 * that one's wait), so that a cancel of it reaches c.  0, or -1 when c's
 * connection must close. */
static int hand_over(child *c)
{
    conn *k = c->k;
    for (child *p; (p = child_find(k->tunnel, c->h.word));)
        c->h.word = p->parent;
    if (send_frame(k, &c->h, c->submission, -1) < 0)
        return -1;
    if (k->deferred == c)
        k->deferred = NULL;
    rt__list_remove(&c->deferred);
    c->state = HANDED;
    c->next = NULL;
    *k->handed_tail = c;
    k->handed_tail = &c->next;
    return 0;
}

/* Rank 0 answered a hand-over on k: the task is rank 0's from now on
 * (a failure is there too, under its handle). */
static void handed_answered(conn *k, const rt__hdr *h)
{
    child *c = k->handed;
    if (!(k->handed = c->next))
        k->handed_tail = &k->handed;
    if ((uint32_t)h->id != 0)
        rt__warn("a task placed on this rank could not be handed to rank 0: reading it "
                 "says why");
    child_free(k->tunnel, c);
}

static void on_hand_timer(rt__timer *t)
{
    rt__tunnel *r = RT__OWNER(t, rt__tunnel, hand_timer);
    uint64_t now = rt__now_ns();
    while (!rt__list_empty(&r->deferred)) {
        child *c = RT__OWNER(r->deferred.next, child, deferred);
        if (now - c->since_ns < HAND_AFTER_NS) {
            rt__timer_arm(r->loop, &r->hand_timer, c->since_ns + HAND_AFTER_NS, on_hand_timer);
            break;
        }
        if (hand_over(c) < 0)
            conn_lost(c->k);
    }
    rt__bridge_flush(r->bridge);
}

/* Whether options ask for nothing a worker here does not give a task run
 * inside another's wait: CPUs alone (*cpu), no placement, no time limit,
 * no variables, no recycling, one result. */
static int plain(const rt_opts *o, rt__amount *cpu)
{
    *cpu = RT__UNIT;
    if (!o)
        return 1;
    return (o->num_cpus == RT_DEFAULT ||
            rt__amount_parse(o->num_cpus, "num_cpus", cpu) == 0) &&
           (o->num_gpus == 0 || o->num_gpus == RT_DEFAULT) &&
           (o->max_calls == 0 || o->max_calls == RT_DEFAULT) && (!o->resources || !*o->resources) &&
           !o->accelerator_type && !o->gpu_memory && !o->timeout_ms && !o->retry_exceptions &&
           (!o->label_selector || !*o->label_selector) && !o->placement_group.id &&
           (!o->env_vars || !*o->env_vars) && (o->num_returns <= 1 || o->num_returns == RT_DEFAULT);
}

/* k's task submits a task under handle id (the worker's, named; else
 * this rank's): DEFERRED, waiting for its parent's GET.  NULL without
 * memory. */
static child *child_new(conn *k, uint64_t id, const rt__hdr *h, const char *payload)
{
    rt__tunnel *r = k->tunnel;
    if (!r->children.nbuckets && rt__idmap_init(&r->children) < 0)
        return NULL;
    child *c = rt__calloc(1, sizeof *c);
    char *copy = rt__malloc(h->len ? (size_t)h->len : 1);
    if (!c || !copy) {
        rt__free(c);
        rt__free(copy);
        return NULL;
    }
    memcpy(copy, payload, (size_t)h->len);
    *c = (child){.byid.id = id, .k = k, .state = DEFERRED, .parent = h->word,
                 .since_ns = rt__now_ns(), .h = *h, .submission = copy};
    c->h.id = c->run.task = id;
    rt__idmap_add(&r->children, &c->byid);
    rt__list_push_back(&r->deferred, &c->deferred);
    k->deferred = c;
    if (!r->hand_timer.armed)
        rt__timer_arm(r->loop, &r->hand_timer, c->since_ns + HAND_AFTER_NS, on_hand_timer);
    return c;
}

/* A SUBMIT of k's task that this rank may place itself: a task of one
 * argument of bytes, asking for what its parent's worker gives (plain()),
 * in a job without checkpoints (rank 0 keys those).  Answered here (but
 * a named one, node/callmsg.h, which gets no reply: one this rank does
 * not place goes to rank 0 at once, under its handle); the reply says
 * that such a task may go named.  1 when it was (or -1 when k must
 * close), 0 when rank 0 places it. */
static int place_here(conn *k, const rt__hdr *h, const char *payload)
{
    rt__tunnel *r = k->tunnel;
    rt__submission s;
    rt_opts opts;
    rt__amount cpu;
    child *c;
    int decoded = h->len <= RT__MSG_MAX_INLINE &&
               rt__callmsg_read_submission(payload, (size_t)h->len, &s, &opts, r->args) == 0;
    if (h->id && !decoded)
        return -1; /* a named one that is no submission */
    if (!r->serving || r->hashed || !decoded || s.form != RT__SUBMIT_TASK || s.nargs != 1 ||
        s.args[0].ref.id || !plain(s.opts, &cpu)) {
        if (!h->id)
            return 0;
        c = child_new(k, h->id, h, payload); /* its reply is not the worker's */
        return c && hand_over(c) == 0 ? 1 : -1;
    }
    if (!(c = child_new(k, h->id ? h->id : child_id(r), h, payload)))
        return h->id ? -1 : 0; /* a named one's reply would not be the worker's */
    const char *arg = s.args[0].len ? c->submission + ((const char *)s.args[0].data - payload)
                                    : "";
    c->cpu = cpu;
    c->run = (rt__callmsg_run){c->byid.id, s.fn, 0, arg, s.args[0].len};
    r->calls_soon = 1; /* its GET */
    static const char ok = RT__NAMED_OK;
    return h->id ? 1
           : rt__callmsg_put_reply(&k->chan, RT_OK, c->byid.id, NULL, &ok, 1, -1) < 0 ? -1 : 1;
}

/* Rank 0's timeline hears how c ran (RAN): its wait from its SUBMIT, its
 * run, its outcome, in the lane of the lease it ran in.  Sent as it ends,
 * beside its answer, not before it. */
static int tell_ran(conn *k, const child *c, int status)
{
    uint64_t ran_ns = c->answer.run_us * 1000, since = rt__now_ns() - c->since_ns;
    uint64_t waited_us = since > ran_ns ? (since - ran_ns) / 1000 : 0;
    rt__callmsg_ran ran = {c->run.fn, c->lane, waited_us > UINT32_MAX ? UINT32_MAX : (uint32_t)waited_us,
                           c->answer.run_us > UINT32_MAX ? UINT32_MAX : (uint32_t)c->answer.run_us,
                           status, 0};
    rt__hdr h = {.type = RT__CALL_RAN, .id = c->byid.id, .len = sizeof ran};
    return send_raw(k, &h, (const char *)&ran, -1);
}

/* c's run in its parent's wait is over: the calls after are its
 * parent's, and rank 0, if it was told c ran, hears that it ended. */
static int run_over(conn *k, child *c)
{
    if (k->running == c)
        k->running = c->outer;
    if (!c->told)
        return 0;
    c->told = 0;
    rt__hdr ended = {.type = RT__CALL_INSIDE, .id = c->byid.id, .word = 1};
    return send_frame(k, &ended, NULL, -1);
}

/* c's GET answered with how it ended, unless its parent took the answer
 * from its run; c is gone then. */
static int answer_child(conn *k, child *c)
{
    char why[160];
    if (run_over(k, c) < 0)
        return -1;
    if (c->cancelled) {
        c->answer.sys_errno = c->answer.refused = c->answer.status = 0;
        rt__answer_drop(&c->answer);
        c->answer.len = 0;
    }
    rt__answer *a = &c->answer;
    int rc = rt__answer_outcome(a, why, sizeof why);
    if (c->cancelled) { /* as rank 0 says it */
        rc = RT_ECANCELLED;
        snprintf(why, sizeof why, "rt_cancel: it ran to its end; its result was dropped");
    }
    if (k->tunnel->recording && tell_ran(k, c, rc) < 0)
        return -1;
    int out = c->taken ? 0
              : rt__callmsg_put_object(&k->chan, rc, rc == RT_OK ? NULL : why,
                                       rc == RT_OK || rc == RT_ETASK ? a->result : NULL,
                                       rc == RT_OK || rc == RT_ETASK ? a->len : 0);
    child_free(k->tunnel, c);
    return out;
}

static void on_child_answered(void *ctx, rt__answer *a)
{
    rt__tunnel *r = ctx;
    child *c = child_find(r, a->id);
    if (!c || c->state != RUNNING)
        return; /* its thread went meanwhile */
    c->answer = *a;
    a->result = NULL; /* c's now */
    c->state = DONE;
    conn *k = c->k;
    if (c->waited && (answer_child(k, c) < 0 || flush(k) < 0))
        conn_lost(k);
}

/* Its parent's cancel stops c, which runs inside its wait: its result
 * goes, as a cancelled task's. */
static void on_child_stopped(void *ctx, uint64_t id)
{
    child *c = child_find(ctx, id);
    if (c)
        c->cancelled = 1;
}

/* The RUN that gives c to its parent's worker, queued. */
static int give_run(void *ctx)
{
    child *c = ctx;
    c->k->tunnel->calls_soon = 1; /* its answer, and the GET after */
    return rt__callmsg_put_run(&c->k->chan, &c->run);
}

/* The GET of c on its own connection: run inside the wait when its
 * parent's worker may (RUN), and answered once it ran; else c goes to
 * rank 0, and the GET after it. */
static int get_child(conn *k, child *c, const rt__hdr *h, const char *payload, int fd)
{
    rt__callmsg_get g;
    int read = h->len == sizeof g && fd < 0;
    if (read)
        memcpy(&g, payload, sizeof g);
    if (c->state != DEFERRED) { /* asked again, after running it */
        c->waited = 1;
        c->taken = read && g.ran_inside == RT__RAN_AND_TOOK;
        if (c->taken && run_over(k, c) < 0)
            return -1;
        return c->state == DONE ? answer_child(k, c) : 0;
    }
    if (read) {
        int given = g.may_run && g.timeout_ms < 0 && !g.keep
                        ? rt__serve_inside(k->tunnel->serving, c->parent, c->byid.id, c->cpu,
                                           give_run, c, &c->lane)
                        : -1;
        if (given == -2)
            return -1;
        if (given == 0) {
            k->deferred = NULL;
            rt__list_remove(&c->deferred);
            c->state = RUNNING;
            c->outer = k->running;
            k->running = c;
            return 0;
        }
    }
    return hand_over(c) < 0 ? -1 : send_frame(k, h, payload, fd);
}

/* rt_cancel() of c while it runs inside its parent's wait. */
static int cancel_child(conn *k, child *c, const char *payload, size_t len)
{
    uint64_t force;
    if (len != sizeof force)
        return -1;
    memcpy(&force, payload, sizeof force);
    if (c->state == RUNNING) { /* else it ended: left as it is, as any task */
        c->cancelled = 1;
        (void)rt__serve_stop_inside(k->tunnel->serving, c->byid.id, (force & RT_CANCEL_FORCE) != 0);
    }
    return rt__callmsg_put_reply(&k->chan, RT_OK, 0, NULL, NULL, 0, -1);
}

/* Whether handle id is a task placed here that another connection than k
 * submitted and that is not rank 0's yet: one still DEFERRED is handed
 * to rank 0 now. */
static int pending(conn *k, uint64_t id)
{
    child *c = child_find(k->tunnel, id);
    if (!c || c->k == k || (c->state != DEFERRED && c->state != HANDED))
        return 0;
    /* Not handed (no memory): the frame goes, and rank 0 knows no such handle. */
    return c->state == HANDED || hand_over(c) == 0;
}

/* Whether a frame of k names a task placed here that is not rank 0's
 * yet, on another connection (pending()): rank 0 serves the two
 * connections with two threads, so k's frame waits until it is. */
static int names_pending(conn *k, const rt__hdr *h, const char *payload, int fd)
{
    rt__tunnel *r = k->tunnel;
    size_t len = (size_t)h->len, n = 0;
    const char *bytes = payload;
    const uint64_t *ids = NULL;
    rt__submission s;
    rt_opts opts;
    int named = 0;
    switch (h->type) {
    case RT__CALL_GET:
    case RT__CALL_CANCEL:
    case RT__CALL_RELEASE:
    case RT__CALL_STREAM_NEXT:
        return pending(k, h->id);
    case RT__CALL_WAIT:
    case RT__CALL_END:
    case RT__CALL_SUBMIT:
        break;
    default:
        return 0;
    }
    if (fd >= 0 && !(bytes = rt__shm_open(fd, len, RT__SHM_VIEW)))
        return 0; /* rank 0 refuses it as it is */
    if (h->type == RT__CALL_WAIT && len >= sizeof(rt__callmsg_wait)) {
        ids = (const uint64_t *)(const void *)(bytes + sizeof(rt__callmsg_wait));
        n = (len - sizeof(rt__callmsg_wait)) / sizeof *ids;
    } else if (h->type == RT__CALL_END) {
        ids = (const uint64_t *)(const void *)bytes;
        n = len / sizeof *ids;
    }
    for (size_t i = 0; i < n; i++)
        named |= pending(k, ids[i]);
    if (h->type == RT__CALL_SUBMIT &&
        rt__callmsg_read_submission(bytes, len, &s, &opts, r->args) == 0)
        for (size_t i = 0; i < s.nargs; i++)
            named |= pending(k, s.args[i].ref.id);
    if (fd >= 0)
        rt__shm_unmap((void *)bytes, len);
    return named;
}

/* Keep k's frame until the tasks it names are rank 0's; k reads no more
 * meanwhile.  0, or -1 without memory. */
static int park(conn *k, const rt__hdr *h, const char *payload, int fd)
{
    size_t len = fd >= 0 ? 0 : (size_t)h->len;
    if (!(k->parked_payload = rt__malloc(len ? len : 1))) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    memcpy(k->parked_payload, payload, len);
    k->parked = *h;
    k->parked_fd = fd;
    k->tunnel->parked++;
    return flush(k);
}

/* Rank 0's proxy keeps each task's handles apart, to release them when
 * it ends: before the first call it hears from c, a task placed here
 * that runs inside a wait, it is told that c runs (INSIDE), and the ones
 * c runs inside before it. */
static int tell(conn *k, child *c)
{
    if (!c || c->told)
        return 0;
    if (tell(k, c->outer) < 0)
        return -1;
    c->told = 1;
    rt__hdr starts = {.type = RT__CALL_INSIDE, .id = c->byid.id};
    return send_raw(k, &starts, NULL, -1);
}

/* k closes: its tasks placed here are forgotten (one waiting for its GET
 * was handed to rank 0 by conn_lost(), or its thread went on purpose),
 * and its parked frame dropped. */
static void children_end(conn *k)
{
    rt__tunnel *r = k->tunnel;
    if (k->parked_payload) {
        rt__free(k->parked_payload);
        k->parked_payload = NULL;
        if (k->parked_fd >= 0)
            close(k->parked_fd);
        r->parked--;
    }
    for (rt__idnode *n = r->children.count ? rt__idmap_any(&r->children) : NULL; n;) {
        child *c = (child *)n;
        n = rt__idmap_after(&r->children, n);
        if (c->k == k) {
            c->k->deferred = NULL;
            c->k = NULL;
            child_free(r, c);
            n = r->children.count ? rt__idmap_any(&r->children) : NULL; /* again */
        }
    }
}

static int from_worker(conn *k, const rt__hdr *h, const char *payload, int fd);
static int forward(conn *k);

/* Each frame parked for a task placed here that is rank 0's now goes
 * on, and its connection reads again (one at a time: a frame may park
 * again, or free what the scan holds). */
static void unpark_all(rt__tunnel *r)
{
    for (rt__idnode *n = r->parked ? rt__idmap_any(&r->conns) : NULL; n;) {
        conn *k = (conn *)n;
        if (!k->parked_payload) {
            n = rt__idmap_after(&r->conns, n);
            continue;
        }
        rt__hdr h = k->parked;
        char *payload = k->parked_payload;
        k->parked_payload = NULL;
        r->parked--;
        int rc = from_worker(k, &h, payload, k->parked_fd);
        rt__free(payload);
        if (rc < 0 || (!k->parked_payload && (forward(k) < 0 || flush(k) < 0)))
            conn_lost(k);
        n = r->parked ? rt__idmap_any(&r->conns) : NULL; /* from the start */
    }
}

/* Whether a worker's SUBMIT under handle id is a named one this rank
 * takes (node/callmsg.h): of this rank's shape, new, and inline. */
static int named_here(const rt__tunnel *r, uint64_t id, int fd)
{
    return r->rank > 0 && rt__id_made_on(id, r->rank) && fd < 0 && !child_find(r, id);
}

/* One frame of a worker's thread here, on its way to rank 0, unless this
 * rank answers it: a task it places itself, that task's GET, and its
 * cancel while it runs.  A PUT_HELD, HELD_AT, INSIDE, RAN or a SUBMIT
 * with a handle is the tunnels' to make, but a named SUBMIT
 * (named_here()): from a worker it breaks the protocol.  0, or -1 when
 * k must close. */
static int from_worker(conn *k, const rt__hdr *h, const char *payload, int fd)
{
    rt__tunnel *r = k->tunnel;
    int mine = h->type == RT__CALL_GET || h->type == RT__CALL_CANCEL;
    child *c = mine ? child_find(r, h->id) : NULL;
    if (h->type == RT__CALL_PUT_HELD || h->type == RT__CALL_HELD_AT ||
        h->type == RT__CALL_INSIDE || h->type == RT__CALL_RAN ||
        (h->type == RT__CALL_SUBMIT && h->id && !named_here(r, h->id, fd))) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (c && c->k == k && h->type == RT__CALL_GET && c->state != HANDED)
        return get_child(k, c, h, payload, fd);
    if (k->deferred && hand_over(k->deferred) < 0) { /* any other call: rank 0 places it */
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (c && h->type == RT__CALL_CANCEL && c->state >= RUNNING) {
        if (fd >= 0)
            close(fd);
        return cancel_child(k, c, payload, (size_t)h->len);
    }
    if (h->type == RT__CALL_YIELD && k->running && h->word == k->running->byid.id) {
        /* Its handle is its parent's GET's, which consumes it: nobody
         * could read what it yields. */
        if (fd >= 0)
            close(fd);
        return rt__callmsg_put_reply(&k->chan, RT_OK, 0, NULL, NULL, 0, -1);
    }
    if (r->children.count && names_pending(k, h, payload, fd))
        return park(k, h, payload, fd);
    int placed = h->type == RT__CALL_SUBMIT && fd < 0 ? place_here(k, h, payload) : 0;
    if (placed)
        return placed < 0 ? -1 : 0;
    if (h->type == RT__CALL_PUT && h->len && !k->kept)
        return keep_put(k, h, payload, fd);
    return send_frame(k, h, payload, fd);
}

/* One frame a worker's thread (another rank's tunnel) or a proxy (rank
 * 0's) wrote, to the other side. */
static int pass_on(conn *k, const rt__hdr *h, const char *payload, int fd)
{
    return k->tunnel->store ? from_worker(k, h, payload, fd) : send_frame(k, h, payload, fd);
}

/* Forward every whole frame read, until one is parked; -1 when k must
 * close. */
static int forward(conn *k)
{
    rt__hdr h;
    const char *payload;
    int fds[RT__MSG_MAX_FDS], more = 0;
    while (!k->parked_payload && (more = rt__chan_next(&k->chan, &h, &payload, fds)) > 0) {
        for (uint32_t i = 1; i < h.nfds; i++)
            close(fds[i]);
        if (pass_on(k, &h, payload, h.nfds ? fds[0] : -1) < 0)
            return -1;
    }
    rt__bridge_flush(k->tunnel->bridge);
    /* What this rank answered itself (local first) goes now. */
    return k->chan.out.tail != k->chan.out.head && flush(k) < 0 ? -1 : more;
}

static void on_conn(rt__watch *w, uint32_t events)
{
    conn *k = RT__OWNER(w, conn, watch);
    if ((events & EPOLLOUT) && flush(k) < 0) {
        conn_lost(k);
        return;
    }
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        return;
    long got = rt__chan_fill(&k->chan);
    if (got < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (got <= 0 || forward(k) < 0)
        conn_lost(k);
}

/* ---- frames in ------------------------------------------------------------------ */

/* Another rank: answer k's GET with the bytes fetched, from a memfd
 * without a copy when they are in one, or with the error of their loss. */
static void answer_fetch(conn *k)
{
    const rt__task *o = k->fetching;
    size_t len = o->obj.result_len;
    int rc;
    if (rt__store_missing(o)) {
        char why[128];
        snprintf(why, sizeof why, "rt_get: the object's %zu bytes were lost: its rank "
                 "no longer holds them", len);
        rc = rt__callmsg_put_reply(&k->chan, RT_EWORKERDIED, 0, why, NULL, 0, -1);
    } else {
        rc = rt__callmsg_put_object(&k->chan, RT_OK, NULL, rt__task_bytes(o), len);
    }
    fetch_end(k);
    if (rc < 0 || flush(k) < 0)
        conn_lost(k);
}

/* Another rank: rank 0 answered k's GET with where the object's bytes
 * are (HELD_AT): here, or on a rank they are pulled from, rank to rank.
 * The worker's answer waits for them. */
static void fetch(conn *k, const rt__rank_msg *m)
{
    rt__tunnel *r = k->tunnel;
    rt__callmsg_held_at at;
    int pull = 0;
    if (m->len != sizeof at || k->fetching) {
        conn_lost(k); /* rank 0 does not send that */
        return;
    }
    memcpy(&at, m->bytes, sizeof at);
    rt__rank_ref ref = {at.object, at.run, at.holder};
    rt__task *o = at.len <= SIZE_MAX ? rt__store_use(r->store, &ref, (size_t)at.len, &pull)
                                     : NULL;
    if (!o) {
        if (rt__callmsg_put_reply(&k->chan, RT_ENOMEM, 0, "rt_get: no memory for an "
                                  "object of another rank", NULL, 0, -1) < 0 || flush(k) < 0)
            conn_lost(k);
        return;
    }
    k->fetching = o;
    rt__list_push_back(&r->fetching, &k->fetch);
    if (pull) {
        rt__store_pull(r->store, r->bridge, &ref);
        rt__bridge_flush(r->bridge);
    }
    if (rt__store_ready(o) || rt__store_missing(o))
        answer_fetch(k);
}

void rt__tunnel_objects_came(rt__tunnel *r)
{
    rt__link *at = r->fetching.next;
    while (at != &r->fetching) {
        conn *k = RT__OWNER(at, conn, fetch);
        at = at->next; /* k leaves the list when answered */
        if (rt__store_ready(k->fetching) || rt__store_missing(k->fetching))
            answer_fetch(k);
    }
}

/* Rank 0: a SUBMIT with its functions at this process's addresses (NULL,
 * refused by the call, when their object is not loaded here). */
static int put_submission(rt__tunnel *r, conn *k, const rt__hdr *h, const rt__rank_msg *m)
{
    rt__submission s;
    rt_opts opts;
    if (rt__callmsg_read_submission(m->bytes, m->len, &s, &opts, r->args) < 0)
        return -1;
    s.fn = function_at(r, &m->fn);
    s.id = h->id; /* a handle its rank made (local first), or 0 */
    if (s.form == RT__SUBMIT_CREATE)
        s.actor = function_at(r, &m->fini);
    return rt__callmsg_put_submission(&k->chan, h->word, &s);
}

/* Rank 0: a worker's thread on rank `from` makes its first call. */
static conn *open_for_proxy(rt__tunnel *r, int from, uint64_t number)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return NULL;
    conn *k = conn_open(r, from, number, sv[0]);
    if (k)
        r->serve(sv[1], from);
    else
        close(sv[1]);
    return k;
}

/* Rank 0: a RAN of rank `from` (a task it placed itself ended) goes to
 * whoever hears them, its function at this process's address; a proxy
 * never sees it. */
static void heard_ran(rt__tunnel *r, int from, const rt__hdr *h, const rt__rank_msg *m)
{
    rt__callmsg_ran ran;
    if (!r->ran || m->len != sizeof ran || !m->bytes)
        return;
    memcpy(&ran, m->bytes, sizeof ran);
    ran.fn = function_at(r, &m->fn);
    r->ran(r->ran_ctx, from, h->id, &ran);
}

static void deliver_call(rt__tunnel *r, int from, const rt__rank_msg *m)
{
    rt__hdr h;
    rt__rank_call_read(m, &h);
    if (h.type == RT__CALL_RAN && r->serve) {
        heard_ran(r, from, &h, m);
        return;
    }
    conn *k = find(r, from, m->lease);
    if (!k && r->serve && !(k = open_for_proxy(r, from, m->lease))) {
        hang_up(r, from, m->lease); /* out of memory or descriptors */
        return;
    }
    if (!k)
        return; /* a reply to a worker's thread that has gone */
    if (k->handed && h.type == RT__CALL_REPLY) { /* the first reply after a hand-over */
        handed_answered(k, &h);
        return;
    }
    if (k->kept)
        kept_named(k, &h);
    if (h.type == RT__CALL_HELD_AT && r->store) {
        fetch(k, m);
        return;
    }
    int rc = h.type == RT__CALL_SUBMIT && r->serve
                 ? put_submission(r, k, &h, m)
                 : rt__callmsg_put(&k->chan, h.type, h.id, h.word, m->bytes, m->len);
    if (rc < 0 || flush(k) < 0)
        conn_lost(k);
}

void rt__tunnel_deliver(rt__tunnel *r, int from, const rt__rank_msg *m)
{
    if (m->type == RT__RANK_CALL) {
        deliver_call(r, from, m);
    } else {
        conn *k = find(r, from, m->lease);
        if (k)
            conn_close(k);
    }
    rt__buf_free(m->owned);
}

/* ---- the tunnel ----------------------------------------------------------------- */

rt__tunnel *rt__tunnel_new(rt__bridge *b, rt__loop *loop, void (*serve)(int connection, int rank))
{
    rt__tunnel *r = rt__calloc(1, sizeof *r);
    if (!r)
        return NULL;
    *r = (rt__tunnel){.bridge = b, .loop = loop, .serve = serve};
    rt__link_init(&r->fetching);
    rt__link_init(&r->deferred);
    r->args = rt__malloc(RT_ARGS_MAX * sizeof *r->args);
    if (!r->args || rt__idmap_init(&r->conns) < 0) {
        rt__free(r->args);
        rt__free(r);
        return NULL;
    }
    return r;
}

void rt__tunnel_hear_ran(rt__tunnel *r, rt__ran_fn *ran, void *ctx)
{
    r->ran = ran;
    r->ran_ctx = ctx;
}

void rt__tunnel_serve(rt__tunnel *r, rt__serve *s, int rank, int hashed, int recording)
{
    r->recording = recording;
    r->serving = s;
    r->rank = rank;
    r->store = rt__serve_store(s);
    r->hashed = hashed;
    rt__serve_on_inside(s, on_child_answered, on_child_stopped, r);
}

int rt__tunnel_calls_soon(rt__tunnel *r)
{
    int soon = r->calls_soon;
    r->calls_soon = 0;
    return soon;
}

/* A worker's thread connects: what the other connections sent is read
 * first, so that a named SUBMIT that a thread of its worker sent before
 * is taken before this thread's first call may name its handle (the
 * worker names none while it has another connection: node/client.c). */
static void read_what_was_sent(rt__tunnel *r)
{
    size_t n = r->conns.count, i = 0;
    uint64_t *keys = n ? rt__malloc(n * sizeof *keys) : NULL;
    for (rt__idnode *x = keys ? rt__idmap_any(&r->conns) : NULL; x && i < n;
         x = rt__idmap_after(&r->conns, x))
        keys[i++] = x->id;
    for (size_t j = 0; j < i; j++) {
        conn *k = (conn *)rt__idmap_find(&r->conns, keys[j]); /* it may have closed */
        struct pollfd p = {.fd = k ? k->chan.fd : -1, .events = POLLIN};
        if (k && poll(&p, 1, 0) > 0)
            on_conn(&k->watch, EPOLLIN);
    }
    rt__free(keys);
}

void rt__tunnel_accept(rt__tunnel *r, int connection)
{
    read_what_was_sent(r);
    if (!conn_open(r, 0, r->next_number++, connection))
        rt__warn("no memory to tunnel a task's calls to rank 0: its call fails");
}

void rt__tunnel_free(rt__tunnel *r)
{
    if (!r)
        return;
    for (rt__idnode *n; (n = rt__idmap_any(&r->conns));)
        conn_close((conn *)n);
    rt__idmap_free(&r->conns);
    rt__idmap_free(&r->children); /* each went with its connection */
    if (r->hand_timer.armed)
        rt__timer_disarm(r->loop, &r->hand_timer);
    rt__free(r->args);
    rt__free(r);
}

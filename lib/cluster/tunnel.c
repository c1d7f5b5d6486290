/* tunnel.c - tasks' calls across ranks: their frames as CALL messages. */
#include "tunnel.h"

#include "image.h"
#include "store.h"
#include "base/alloc.h"
#include "base/error.h"
#include "base/idmap.h"
#include "base/list.h"
#include "base/shm.h"
#include "node/callmsg.h"
#include "node/keep.h"
#include "node/task.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

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
    uint64_t last_kept;            /* the number of the last PUT kept */
    rt__link fetching;             /* connections whose GET waits for bytes */
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
                .number = number, .watch.fd = -1};
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

static void conn_close(conn *k)
{
    if (k->kept) /* the worker's thread went before rank 0 answered */
        rt__store_forget(k->tunnel->store, k->kept, KEPT_RUN);
    if (k->fetching)
        fetch_end(k);
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

static void conn_lost(conn *k)
{
    hang_up(k->tunnel, k->rank, k->number);
    conn_close(k);
}

/* Send what k queued, watching for room when the socket is full. */
static int flush(conn *k)
{
    int rc = rt__chan_flush(&k->chan);
    if (rc < 0)
        return -1;
    rt__loop_modify(k->tunnel->loop, &k->watch, rc ? EPOLLIN | EPOLLOUT : EPOLLIN);
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
    const char *bytes = fd >= 0 ? rt__shm_open(fd, len, 0) : payload;
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
static int send_frame(conn *k, const rt__hdr *h, const char *payload, int fd)
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
    if (h->type == RT__CALL_SUBMIT &&
        place_functions(r, payload, (size_t)h->len, fd, &m) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return rt__bridge_send(r->bridge, k->rank, &m);
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
    const char *bytes = fd >= 0 ? rt__shm_open(fd, len, 0) : payload;
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

/* One frame a worker's thread (another rank's tunnel) or a proxy (rank
 * 0's) wrote, to the other side.  A PUT_HELD is the tunnel's to make:
 * from a worker it breaks the protocol. */
static int pass_on(conn *k, const rt__hdr *h, const char *payload, int fd)
{
    int worker = k->tunnel->store != NULL;
    if (worker && h->type == RT__CALL_PUT_HELD) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (worker && h->type == RT__CALL_PUT && h->len && !k->kept)
        return keep_put(k, h, payload, fd);
    return send_frame(k, h, payload, fd);
}

/* Forward every whole frame read; -1 when k must close. */
static int forward(conn *k)
{
    rt__hdr h;
    const char *payload;
    int fds[RT__MSG_MAX_FDS], more;
    while ((more = rt__chan_next(&k->chan, &h, &payload, fds)) > 0) {
        for (uint32_t i = 1; i < h.nfds; i++)
            close(fds[i]);
        if (pass_on(k, &h, payload, h.nfds ? fds[0] : -1) < 0)
            return -1;
    }
    rt__bridge_flush(k->tunnel->bridge);
    return more;
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

static void deliver_call(rt__tunnel *r, int from, const rt__rank_msg *m)
{
    conn *k = find(r, from, m->lease);
    if (!k && r->serve && !(k = open_for_proxy(r, from, m->lease))) {
        hang_up(r, from, m->lease); /* out of memory or descriptors */
        return;
    }
    if (!k)
        return; /* a reply to a worker's thread that has gone */
    rt__hdr h;
    rt__rank_call_read(m, &h);
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
    r->args = rt__malloc(RT_ARGS_MAX * sizeof *r->args);
    if (!r->args || rt__idmap_init(&r->conns) < 0) {
        rt__free(r->args);
        rt__free(r);
        return NULL;
    }
    return r;
}

void rt__tunnel_hold_objects(rt__tunnel *r, rt__store *store, int hashed)
{
    r->store = store;
    r->hashed = hashed;
}

void rt__tunnel_accept(rt__tunnel *r, int connection)
{
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
    rt__free(r->args);
    rt__free(r);
}

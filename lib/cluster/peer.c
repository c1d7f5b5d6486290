/* peer.c - another rank's node: node operations as messages. */
#include "peer.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/idmap.h"
#include "base/shm.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


/* Rank 0's lease on the rank. */
typedef struct proxy {
    rt__idnode byid;         /* first */
    void *owner;
    size_t inflight;         /* sent, not answered */
    uint64_t busy_since_ns;  /* since when its oldest task in flight may run */
} proxy;

struct rt__peer {
    rt__node node;           /* first: the node interface's pointer is p's */
    rt__bridge *bridge;
    int rank;
    uint64_t next_id;
    rt__idmap proxies;
    rt__fn_cache *places;    /* where the functions sent live, every peer's */
    char why[256];           /* why the node failed, for the dispatcher */
};

static void forget(rt__peer *p, proxy *x)
{
    rt__idmap_remove(&p->proxies, &x->byid);
    rt__free(x);
}

/* A message without words: STOP, KILL. */
static int send_plain(rt__peer *p, uint32_t type, const proxy *x)
{
    rt__rank_msg m = {.type = type, .lease = x->byid.id, .fd = -1};
    return rt__bridge_send(p->bridge, p->rank, &m);
}

static rt__worker *op_lease(rt__node *n, int fresh, int max_calls, rt__amount cpu,
                            void *owner, size_t *calls)
{
    rt__peer *p = (rt__peer *)n;
    proxy *x = rt__malloc(sizeof *x);
    if (!x)
        return NULL; /* errno ENOMEM */
    *x = (proxy){.byid.id = p->next_id++, .owner = owner};
    rt__rank_msg m = rt__rank_lease(x->byid.id, fresh, max_calls, cpu);
    if (rt__bridge_send(p->bridge, p->rank, &m) < 0) {
        rt__free(x);
        return NULL;
    }
    rt__idmap_add(&p->proxies, &x->byid);
    *calls = 0; /* the rank leases again past a worker's max_calls */
    return (rt__worker *)x;
}

static int op_devices(rt__node *n, rt__worker *w, const rt__devices *d)
{
    rt__peer *p = (rt__peer *)n;
    char *text = rt__devices_encode(d);
    if (!text)
        return -1;
    rt__rank_msg m = {.type = RT__RANK_DEVICES, .lease = ((proxy *)w)->byid.id,
                      .text = text, .fd = -1};
    int rc = rt__bridge_send(p->bridge, p->rank, &m);
    rt__free(text);
    return rc;
}

/* An entry of the table that is an object another rank holds: no bytes
 * here, so "mapped" (proto.h: a memfd without data), its ref after the
 * table. */
#define ELSEWHERE INT_MAX

/* The arguments of t as the table carries them, into args (room for
 * t->nargs): bytes, mapped here when they are in a memfd, or objects
 * other ranks hold (*remote counts them).  0, or -1 when one could not
 * be mapped (those that were are unmapped by unmap_args()). */
static int arg_msgs(const rt__task *t, rt__arg_msg *args, size_t *remote)
{
    int rc = 0;
    rt__task_arg_msgs(t, args);
    *remote = 0;
    for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
        const rt__task *o = rt__task_args(t)[i].object;
        if (o && o->obj.holder) { /* pulled by the rank, from the holder */
            args[i] = (rt__arg_msg){.len = o->obj.result_len, .fd = ELSEWHERE};
            ++*remote;
        } else if (!args[i].data && args[i].len &&
                   !(args[i].data = rt__shm_open(args[i].fd, args[i].len, RT__SHM_VIEW))) {
            rc = -1;
        }
    }
    return rc;
}

static void unmap_args(const rt__task *t, const rt__arg_msg *args)
{
    for (uint32_t i = 0; i < rt__task_nargs(t); i++)
        if (!rt__task_args(t)[i].object && rt__task_args(t)[i].fd >= 0 && args[i].data)
            rt__shm_unmap((void *)args[i].data, args[i].len);
}

/* A task of several arguments crosses to another rank as one table with
 * every argument inline (objects' bytes copied) but for objects that
 * other ranks hold: those are named after the table, and the rank pulls
 * them from their holder, never through here.  The table in an
 * rt__buf_free()-able buffer, or NULL without memory. */
static char *flatten(const rt__task *t, size_t *len, size_t *remote)
{
    rt__arg_msg *args = rt__calloc(rt__task_nargs(t) + 1, sizeof *args);
    char *table = NULL;
    if (args && arg_msgs(t, args, remote) == 0) {
        size_t table_len = rt__args_size(args, rt__task_nargs(t), 0);
        *len = table_len + *remote * sizeof(rt__rank_ref);
        if ((table = rt__buf_alloc(*len))) {
            rt__args_write(table, args, rt__task_nargs(t), 0);
            char *at = table + table_len;
            for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
                const rt__task *o = rt__task_args(t)[i].object;
                if (!o || !o->obj.holder)
                    continue;
                rt__rank_ref ref = {o->call.id, o->obj.held_run, o->obj.holder};
                memcpy(at, &ref, sizeof ref);
                at += sizeof ref;
            }
        }
    }
    if (args)
        unmap_args(t, args);
    rt__free(args);
    return table;
}

static int op_send(rt__node *n, rt__worker *w, const rt__task *t,
                   const rt__actor_spec *actor)
{
    /* Only the destructor goes: the rank's actor runs one method at a
     * time, and its context names no actor. */
    uint64_t fini = actor ? actor->fini : 0;
    rt__peer *p = (rt__peer *)n;
    proxy *x = (proxy *)w;
    char *table = NULL;
    size_t len = t->call.args_form == RT__ARGS_LIST ? 0 : t->call.arg_len, remote = 0;
    if (t->call.args_form == RT__ARGS_LIST && !(table = flatten(t, &len, &remote)))
        return -1;
    char label[RT__RANK_LABEL];
    rt__rank_msg m = rt__rank_task(x->byid.id, t, fini != 0, remote, label);
    m.bytes = table ? table : rt__task_arg(t);
    m.len = len;
    if ((t->call.fn && rt__fn_cache_place(p->places, (const void *)t->call.fn, &m.fn) < 0) ||
        (fini && rt__fn_cache_place(p->places, (const void *)(uintptr_t)fini, &m.fini) < 0)) {
        rt__buf_free(table);
        return -1;
    }
    if (table && m.len >= RT__SHM_MIN)
        m.owned = table; /* in pieces, the message's */
    if (t->call.arg_fd >= 0 && (m.fd = dup(t->call.arg_fd)) < 0)
        return -1;
    int rc = rt__bridge_send(p->bridge, p->rank, &m);
    if (!m.owned)
        rt__buf_free(table);
    if (rc < 0)
        return -1;
    if (x->inflight++ == 0)
        x->busy_since_ns = rt__now_ns();
    return 0;
}

static void op_release(rt__node *n, rt__worker *w, int retire)
{
    rt__peer *p = (rt__peer *)n;
    rt__rank_msg m = rt__rank_release(((proxy *)w)->byid.id, retire);
    rt__bridge_send(p->bridge, p->rank, &m);
    forget(p, (proxy *)w);
}

static void op_stop(rt__node *n, rt__worker *w)
{
    send_plain((rt__peer *)n, RT__RANK_STOP, (proxy *)w);
}

static void op_kill(rt__node *n, rt__worker *w)
{
    send_plain((rt__peer *)n, RT__RANK_KILL, (proxy *)w);
}

/* The rank's worker process is not known here: its lease names it. */
static uint64_t op_lane(rt__node *n, rt__worker *w)
{
    (void)n;
    return ((const proxy *)w)->byid.id;
}

/* From rank 0's side: since it last heard from the worker, or sent to it
 * when idle. */
static uint64_t op_busy_us(rt__node *n, rt__worker *w, uint64_t now_ns)
{
    const proxy *x = (const proxy *)w;
    (void)n;
    if (!x->inflight || now_ns < x->busy_since_ns)
        return 0;
    return (now_ns - x->busy_since_ns) / 1000;
}

static void op_flush(rt__node *n, int caller_waits)
{
    (void)caller_waits; /* another rank's caller reads no journal here */
    rt__bridge_flush(((rt__peer *)n)->bridge);
}

/* Answers come through the bridge's thread, which delivers them in a
 * round of its own.  (A caller that spun here for them, holding the
 * round, made a fourth spinning thread on 2 CPUs and gained nothing in
 * turns; where a rank's answer takes longer than a spin, as over a
 * network, it would only cost the caller's CPU and the round.) */
static int op_await(rt__node *n, rt__worker *w, int timeout_us)
{
    (void)n, (void)w, (void)timeout_us;
    return 0;
}

/* The rank lends on its own node, and sends back later what the worker
 * will not run now (took_back()). */
static long op_lend(rt__node *n, rt__worker *w, int lend)
{
    rt__peer *p = (rt__peer *)n;
    proxy *x = (proxy *)w;
    rt__rank_msg m = {.type = RT__RANK_LEND, .lease = x->byid.id, .w = {(uint64_t)(lend != 0)},
                      .fd = -1};
    return rt__bridge_send(p->bridge, p->rank, &m) < 0 ? -1 : 0;
}

/* The rank's node tells the task (its worker's slot). */
static void op_ask_stop(rt__node *n, rt__worker *w, uint64_t task)
{
    rt__peer *p = (rt__peer *)n;
    rt__rank_msg m = {.type = RT__RANK_ASK_STOP, .lease = ((proxy *)w)->byid.id,
                      .w = {task}, .fd = -1};
    rt__bridge_send(p->bridge, p->rank, &m);
}

/* Objects the rank holds: asked for (OBJECT answers), and freed. */
static void op_pull(rt__node *n, uint64_t object, unsigned run)
{
    rt__peer *p = (rt__peer *)n;
    rt__rank_msg m = rt__rank_object(RT__RANK_PULL, object, run, 1);
    if (rt__bridge_send(p->bridge, p->rank, &m) < 0)
        p->node.ev.pulled(p->node.ev.ctx, object, NULL, 0, 0);
}

static void op_forget(rt__node *n, uint64_t object, unsigned run)
{
    rt__peer *p = (rt__peer *)n;
    rt__rank_msg m = rt__rank_object(RT__RANK_FREE, object, run, 1);
    rt__bridge_send(p->bridge, p->rank, &m);
}

static const rt__node_ops peer_ops = {op_lease, op_devices, op_send, op_release, op_stop,
                                      op_kill, op_lane, op_busy_us, op_flush, op_await,
                                      op_lend, NULL, NULL, op_ask_stop, op_pull, op_forget,
                                      NULL, NULL};

/* What a pull asked for: the bytes are the event's (the message's own,
 * or a copy of small ones). */
static void object_came(rt__peer *p, const rt__rank_msg *m)
{
    uint64_t id;
    unsigned run;
    int found;
    void *bytes = rt__rank_object_take(m, &id, &run, &found);
    p->node.ev.pulled(p->node.ev.ctx, id, bytes, m->len, found);
}

static void answered(rt__peer *p, proxy *x, const rt__rank_msg *m)
{
    rt__answer r;
    rt__rank_answer_read(m, &r);
    if (x->inflight > 0)
        x->inflight--;
    x->busy_since_ns = rt__now_ns();
    p->node.ev.answered(p->node.ev.ctx, x->owner, &r);
}

static void lost(rt__peer *p, proxy *x, const rt__rank_msg *m)
{
    rt__loss loss;
    rt__rank_lost_read(m, &loss);
    void *owner = x->owner;
    forget(p, x);
    p->node.ev.lost(p->node.ev.ctx, owner, &loss);
}

void rt__peer_deliver(rt__peer *p, const rt__rank_msg *m)
{
    proxy *x = (proxy *)rt__idmap_find(&p->proxies, m->lease);
    if (m->type == RT__RANK_OBJECT) {
        object_came(p, m);
    } else if (m->type == RT__RANK_GPU) {
        rt__gpu_event e;
        int ours;
        rt__rank_gpu_read(m, &e, &ours);
        p->node.ev.gpu(p->node.ev.ctx, &p->node, &e, x ? x->owner : NULL, ours);
    } else if (m->type == RT__RANK_FAILED) {
        snprintf(p->why, sizeof p->why, "rank %d: %s", p->rank, m->text);
        p->node.ev.failed(p->node.ev.ctx, p->why);
    } else if (m->type == RT__RANK_ANSWER && x) {
        answered(p, x, m);
    } else if (m->type == RT__RANK_LOST && x) {
        lost(p, x, m);
    } else if (m->type == RT__RANK_TOOK_BACK && x) {
        size_t n = m->w[0] < x->inflight ? (size_t)m->w[0] : x->inflight;
        x->inflight -= n;
        p->node.ev.took_back(p->node.ev.ctx, x->owner, n);
    } else {
        rt__buf_free(m->owned); /* for a lease released meanwhile */
    }
}

rt__peer *rt__peer_new(rt__bridge *b, int rank, rt__fn_cache *places)
{
    rt__peer *p = rt__malloc(sizeof *p);
    if (!p)
        return NULL;
    memset(p, 0, sizeof *p);
    if (rt__idmap_init(&p->proxies) < 0) {
        rt__free(p);
        return NULL;
    }
    p->node.ops = &peer_ops;
    p->bridge = b;
    p->rank = rank;
    p->places = places;
    p->next_id = 1;
    return p;
}

rt__node *rt__peer_node(rt__peer *p)
{
    return &p->node;
}

void rt__peer_free(rt__peer *p)
{
    rt__rank_msg m = {.type = RT__RANK_SHUTDOWN, .fd = -1};
    rt__bridge_send(p->bridge, p->rank, &m);
    for (rt__idnode *n; (n = rt__idmap_any(&p->proxies));)
        forget(p, (proxy *)n);
    rt__idmap_free(&p->proxies);
    rt__free(p);
}

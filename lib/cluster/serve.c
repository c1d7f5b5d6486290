/* serve.c - rank 0's leases, carried out on this rank's local node. */
#include "serve.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/idmap.h"
#include "base/list.h"
#include "base/shm.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

typedef struct lease {
    rt__idnode byid;       /* first; rank 0's number */
    rt__link waiting;      /* on the list of leases that wait for a worker */
    int fresh, max_calls;
    rt__worker *w;         /* the local worker, or NULL */
    size_t budget;         /* tasks w may still take */
    rt__tasks queue;       /* waiting for w */
    rt__tasks inflight;    /* sent to w, in order */
    uint64_t fini;         /* an actor's destructor, for its constructor */
    rt__devices devices;   /* the lease's devices, pointing into */
    char *devices_text;    /* this, or NULL before rank 0 sends them */
    int stop;              /* an actor's: finish once its tasks are sent */
} lease;

struct rt__serve {
    rt__bridge *bridge;
    rt__node *local;
    rt__idmap leases;
    rt__link waiting;      /* leases without a worker, oldest first */
    rt__fn_cache functions; /* the functions rank 0 sent, found here */
};

static void reply(rt__serve *s, const rt__rank_msg *m)
{
    if (rt__bridge_send(s->bridge, 0, m) < 0)
        rt__warn("no memory for a %s message to rank 0: dropped", rt__rank_name(m->type));
}

static void drop_tasks(rt__tasks *q)
{
    for (rt__task *t; (t = rt__tasks_pop(q));)
        rt__task_free(t);
}

static void lease_free(rt__serve *s, lease *l)
{
    rt__idmap_remove(&s->leases, &l->byid);
    rt__list_remove(&l->waiting);
    drop_tasks(&l->queue);
    drop_tasks(&l->inflight);
    rt__free(l->devices_text);
    rt__free(l);
}

static void send_loss(rt__serve *s, uint64_t id, const rt__loss *loss)
{
    rt__rank_msg m = rt__rank_lost(id, loss);
    reply(s, &m);
}

/* The lease's worker is gone: rank 0 hears of it, and the lease ends. */
static void report_loss(rt__serve *s, lease *l, const rt__loss *loss)
{
    send_loss(s, l->byid.id, loss);
    lease_free(s, l);
}

/* ---- giving tasks to workers --------------------------------------------------- */

static int apply_devices(rt__serve *s, lease *l)
{
    return l->devices_text ? s->local->ops->devices(s->local, l->w, &l->devices) : 0;
}

/* A worker for l: 1 when it has one, 0 when it waits. */
static int get_worker(rt__serve *s, lease *l)
{
    size_t calls = 0;
    l->w = s->local->ops->lease(s->local, l->fresh, l->max_calls, l, &calls);
    if (!l->w)
        return 0;
    l->budget = l->max_calls > 0 ? (size_t)l->max_calls - calls : SIZE_MAX;
    if (apply_devices(s, l) < 0)
        rt__warn("no memory for a worker's devices: it runs without them");
    return 1;
}

static void feed(rt__serve *s, lease *l)
{
    while (l->w && l->budget > 0 && l->queue.head) {
        rt__task *t = rt__tasks_pop(&l->queue);
        /* Rank 0 sends neither the actor's handle nor its concurrency. */
        rt__actor_spec spec = {0, l->fini, 1};
        if (s->local->ops->send(s->local, l->w, t, &spec) < 0) {
            rt__tasks_push_front(&l->queue, t);
            return; /* out of memory: again next round */
        }
        rt__tasks_push(&l->inflight, t);
        l->budget--;
    }
    if (l->w && l->stop && !l->queue.head)
        s->local->ops->stop(s->local, l->w);
}

/* Past its worker's max_calls with tasks still to run, a lease takes
 * another worker once the first has answered. */
static void renew(rt__serve *s, lease *l)
{
    if (l->w && l->budget == 0 && !l->inflight.head && l->queue.head) {
        s->local->ops->release(s->local, l->w, 1);
        l->w = NULL;
        rt__list_push_back(&s->waiting, &l->waiting);
    }
}

int rt__serve_run(rt__serve *s)
{
    int still = 0;
    rt__bridge_flush(s->bridge); /* what the last events answered */
    for (rt__link *k = s->waiting.next, *next; k != &s->waiting; k = next) {
        next = k->next;
        lease *l = RT__OWNER(k, lease, waiting);
        if (get_worker(s, l)) {
            rt__list_remove(&l->waiting);
            feed(s, l);
        } else if (errno != EAGAIN) {
            still = 1; /* starting a process failed: soon again */
        }
    }
    rt__bridge_flush(s->bridge);
    return still;
}

/* ---- what the local node reports --------------------------------------------- */

static void on_answered(void *ctx, void *owner, rt__answer *a)
{
    rt__serve *s = ctx;
    lease *l = owner;
    rt__task *t = rt__tasks_pop(&l->inflight); /* answers come in order */
    rt__rank_msg m = rt__rank_answer(l->byid.id, a);
    rt__task_free(t);
    reply(s, &m);
    rt__answer_drop(a); /* copied into the message, or the message's now (NULL) */
    renew(s, l);
}

static void on_lost(void *ctx, void *owner, const rt__loss *loss)
{
    report_loss(ctx, owner, loss);
}

static void on_failed(void *ctx, const char *why)
{
    rt__serve *s = ctx;
    rt__rank_msg m = {.type = RT__RANK_FAILED, .text = why, .fd = -1};
    reply(s, &m);
}

/* ---- what rank 0 sends ------------------------------------------------------------ */

static void start_lease(rt__serve *s, const rt__rank_msg *m)
{
    lease *l = rt__malloc(sizeof *l);
    if (!l) {
        rt__loss none = {.spawn_errno = ENOMEM};
        send_loss(s, m->lease, &none);
        return;
    }
    memset(l, 0, sizeof *l);
    l->byid.id = m->lease;
    rt__rank_lease_read(m, &l->fresh, &l->max_calls);
    rt__link_init(&l->waiting);
    rt__idmap_add(&s->leases, &l->byid);
    rt__list_push_back(&s->waiting, &l->waiting);
}

/* What the node adds (the accelerators' name, the environment) is this
 * rank's own to add. */
static int set_devices(lease *l, const rt__rank_msg *m)
{
    rt__devices d;
    char *copy;
    if (rt__devices_decode(m->text, strlen(m->text), &d, &copy) < 0)
        return -1;
    d.accel_name = d.env = "";
    rt__free(l->devices_text);
    l->devices_text = copy;
    l->devices = d;
    return 0;
}

/* A task record for the local node, its function found in this process;
 * a constructor's destructor goes to the lease. */
static rt__task *make_task(rt__serve *s, lease *l, const rt__rank_msg *m)
{
    rt__rank_task_words w;
    int valid = rt__rank_task_read(m, &w) == 0;
    void *fn = valid && w.has_fn ? rt__fn_cache_find(&s->functions, &m->fn) : NULL;
    void *fini = valid && w.has_fini ? rt__fn_cache_find(&s->functions, &m->fini) : NULL;
    if (!valid || (w.has_fn && !fn) || (w.has_fini && !fini)) {
        rt__warn("rank 0 sent a function this program does not have: dropped");
        return NULL;
    }
    rt__task *t = NULL;
    rt__task_new(w.kind, (rt__any_fn)fn, m->text[0] ? m->text : NULL, 0, m->bytes, m->len,
                 &t);
    if (t) {
        t->id = w.id;
        t->runs_lost = (uint16_t)w.attempt; /* the worker hears which run it is */
        t->args_form = w.table ? RT__ARGS_TABLE : RT__ARGS_ONE;
        l->fini = w.has_fini ? (uint64_t)(uintptr_t)fini : l->fini;
    }
    return t;
}

static void take_task(rt__serve *s, lease *l, const rt__rank_msg *m)
{
    rt__task *t = make_task(s, l, m);
    if (!t) {
        /* Rank 0 hears of it as a lost worker, and its retry rule applies. */
        if (l->w) {
            s->local->ops->kill(s->local, l->w);
        } else {
            rt__loss loss = {.spawn_errno = ENOMEM};
            report_loss(s, l, &loss);
        }
        return;
    }
    rt__tasks_push(&l->queue, t);
    feed(s, l);
}

/* Rank 0 lent the CPUs of l's running task, or took them back: the local
 * node makes room for another worker meanwhile, and what l's worker will
 * not run now (queued behind the task, or still waiting here) goes back
 * to rank 0, which sends it elsewhere. */
static void lend(rt__serve *s, lease *l, int lending)
{
    long back = l->w ? s->local->ops->lend(s->local, l->w, lending) : -1;
    if (!lending)
        return;
    rt__tasks taken = {0};
    rt__tasks_split_tail(&l->inflight, back > 0 ? (size_t)back : 0, &taken);
    rt__tasks_append(&taken, &l->queue);
    rt__rank_msg m = {.type = RT__RANK_TOOK_BACK, .lease = l->byid.id,
                      .w = {taken.count}, .fd = -1};
    if (l->budget != SIZE_MAX)
        l->budget += back > 0 ? (size_t)back : 0;
    drop_tasks(&taken);
    if (m.w[0])
        reply(s, &m);
}

/* Stop or kill: with no worker yet, the lease is over at once. */
static void end_lease(rt__serve *s, lease *l, int kill)
{
    if (l->w && kill) {
        s->local->ops->kill(s->local, l->w);
    } else if (l->w) {
        l->stop = 1;
        feed(s, l);
    } else {
        rt__loss none = {0};
        report_loss(s, l, &none);
    }
}

int rt__serve_deliver(rt__serve *s, const rt__rank_msg *m)
{
    if (m->type == RT__RANK_SHUTDOWN)
        return 1;
    if (m->type == RT__RANK_LEASE) {
        start_lease(s, m);
        return 0;
    }
    lease *l = (lease *)rt__idmap_find(&s->leases, m->lease);
    if (!l) {
        /* Its worker was lost meanwhile, and rank 0 will hear of it. */
    } else if (m->type == RT__RANK_DEVICES) {
        if (set_devices(l, m) < 0)
            rt__warn("bad or unaffordable devices for a lease: left as they were");
        else if (l->w && apply_devices(s, l) < 0)
            rt__warn("no memory for a worker's devices: it runs without them");
    } else if (m->type == RT__RANK_TASK) {
        take_task(s, l, m);
    } else if (m->type == RT__RANK_RELEASE) {
        if (l->w)
            s->local->ops->release(s->local, l->w, rt__rank_release_read(m));
        lease_free(s, l);
    } else if (m->type == RT__RANK_STOP || m->type == RT__RANK_KILL) {
        end_lease(s, l, m->type == RT__RANK_KILL);
    } else if (m->type == RT__RANK_LEND) {
        lend(s, l, m->w[0] != 0);
    }
    rt_free(m->owned);
    return 0;
}

rt__serve *rt__serve_new(rt__bridge *b, rt__node *local)
{
    rt__serve *s = rt__malloc(sizeof *s);
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    if (rt__idmap_init(&s->leases) < 0) {
        rt__free(s);
        return NULL;
    }
    s->bridge = b;
    s->local = local;
    rt__link_init(&s->waiting);
    rt__node_listen(local, (rt__node_events){s, on_answered, on_lost, on_failed, NULL});
    return s;
}

void rt__serve_free(rt__serve *s)
{
    for (rt__idnode *n; (n = rt__idmap_any(&s->leases));)
        lease_free(s, (lease *)n);
    rt__idmap_free(&s->leases);
    rt__free(s);
}

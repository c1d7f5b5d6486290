/* serve.c - rank 0's leases, carried out on this rank's local node. */
#include "serve.h"

#include "store.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/idmap.h"
#include "base/list.h"
#include "base/shm.h"
#include "node/callmsg.h"
#include "node/keep.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct lease {
    rt__idnode byid;       /* first; rank 0's number */
    rt__link waiting;      /* on the list of leases that wait for a worker */
    rt__link pulling;      /* on the list of those whose next task waits for
                              objects pulled from other ranks */
    int fresh, max_calls;
    rt__amount cpu;        /* the CPUs it holds */
    rt__worker *w;         /* the local worker, or NULL */
    size_t budget;         /* tasks w may still take */
    rt__tasks queue;       /* waiting for w */
    rt__tasks inflight;    /* sent to w, in order */
    uint64_t fini;         /* an actor's destructor, for its constructor */
    double run_us;         /* how long its tasks run, lately (0 at first) */
    rt__devices devices;   /* the lease's devices, pointing into */
    char *devices_text;    /* this, or NULL before rank 0 sends them */
    int stop;              /* an actor's: finish once its tasks are sent */
} lease;

struct rt__serve {
    const char *kept_dir;   /* checkpoints: where the results kept here go
                               (node/keep.h), or NULL */
    rt__bridge *bridge;
    rt__node *local;
    rt__idmap leases;
    rt__link waiting;      /* leases without a worker, oldest first */
    rt__link pulling;      /* leases whose next task waits for objects */
    rt__fn_cache functions; /* the functions rank 0 sent, found here */
    rt__store *store;       /* objects held here: results kept, copies pulled */
    lease *awaited;         /* the lease of the last task that the
                               messages just delivered brought
                               (rt__serve_await()) */
    int delivered_tasks;    /* how many tasks they brought */
    void (*inside_answered)(void *ctx, rt__answer *a); /* local first's */
    void (*inside_stopped)(void *ctx, uint64_t child);
    void *inside_ctx;
};

/* The bridge's thread waits on a worker for a task's answer only when
 * the task came alone and its lease's tasks take this long at most, and
 * then for a few times that: MPI waits meanwhile. */
#define AWAIT_MAX_US 200.0
#define AWAIT_SLACK_US 50.0

static void reply(rt__serve *s, const rt__rank_msg *m)
{
    if (rt__bridge_send(s->bridge, 0, m) < 0)
        rt__warn("no memory for a %s message to rank 0: dropped", rt__rank_name(m->type));
}

/* A task is done here: the objects it took are no longer its. */
static void free_task(rt__serve *s, rt__task *t)
{
    for (uint32_t i = 0; t->call.args_form == RT__ARGS_LIST && i < rt__task_nargs(t); i++)
        if (rt__task_args(t)[i].object)
            rt__store_unuse(s->store, rt__task_args(t)[i].object);
    rt__task_free(t);
}

static void drop_tasks(rt__serve *s, rt__tasks *q)
{
    for (rt__task *t; (t = rt__tasks_pop(q));)
        free_task(s, t);
}

static void lease_free(rt__serve *s, lease *l)
{
    if (s->awaited == l)
        s->awaited = NULL;
    rt__idmap_remove(&s->leases, &l->byid);
    rt__list_remove(&l->waiting);
    rt__list_remove(&l->pulling);
    drop_tasks(s, &l->queue);
    drop_tasks(s, &l->inflight);
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
    l->w = s->local->ops->lease(s->local, l->fresh, l->max_calls, l->cpu, l, &calls);
    if (!l->w)
        return 0;
    l->budget = l->max_calls > 0 ? (size_t)l->max_calls - calls : SIZE_MAX;
    if (apply_devices(s, l) < 0)
        rt__warn("no memory for a worker's devices: it runs without them");
    return 1;
}

/* Whether t may go to its worker: 1 when every object it takes is here,
 * 0 while one is being pulled, -1 when one could not be (its holder had
 * it not). */
static int task_ready(const rt__task *t)
{
    int ready = 1;
    for (uint32_t i = 0; t->call.args_form == RT__ARGS_LIST && i < rt__task_nargs(t); i++) {
        const rt__task *o = rt__task_args(t)[i].object;
        if (o && rt__store_missing(o))
            return -1;
        if (o && !rt__store_ready(o))
            ready = 0;
    }
    return ready;
}

/* t never runs: an object it takes is lost.  Rank 0 hears it as an
 * answer of a task that could not run. */
static void fail_unready(rt__serve *s, lease *l, rt__task *t)
{
    rt__answer a = {.id = t->call.id, .sys_errno = ENODATA};
    rt__rank_msg m = rt__rank_answer(l->byid.id, &a);
    free_task(s, t);
    reply(s, &m);
}

/* The queue's first task: 1 when it may go now; else it waits for the
 * objects it takes (l joins the pulling list), or it failed (and the
 * next one is looked at, once the tasks before it have answered: rank 0
 * hears answers in order). */
static int head_ready(rt__serve *s, lease *l)
{
    for (rt__task *t; (t = l->queue.head);) {
        int ready = task_ready(t);
        if (ready > 0)
            return 1;
        if (ready == 0) {
            if (l->pulling.next == &l->pulling)
                rt__list_push_back(&s->pulling, &l->pulling);
            return 0;
        }
        if (l->inflight.head)
            return 0; /* on_answered() feeds again */
        fail_unready(s, l, rt__tasks_pop(&l->queue));
    }
    return 0;
}

static void feed(rt__serve *s, lease *l)
{
    while (l->w && l->budget > 0 && head_ready(s, l)) {
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
    rt__store_sweep(s->store);
    return still;
}

/* ---- what the local node reports --------------------------------------------- */

/* A large result stays here, where it was made, until rank 0 frees it:
 * rank 0 pulls it when it is read there, other ranks when their tasks
 * take it, and tasks here take it as it is.  Several results (packed)
 * go to rank 0, which makes each an object.  With checkpoints, one kept
 * here is written here too (rank 0 writes those it gets); rank 0 takes
 * it back if it turns out to name handles. */
static void keep_result(rt__serve *s, const rt__task *t, rt__answer *a)
{
    if ((t->call.kind == RT__KIND_TASK || t->call.kind == RT__KIND_CALL) && a->len >= RT__SHM_MIN &&
        a->result && !a->refused && !a->sys_errno && !a->packed &&
        rt__store_keep(s->store, a->id, rt__task_attempt(t), a->result, a->len) == 0) {
        if (s->kept_dir && rt__task_key(t) && a->status == 0)
            (void)rt__keep_write(s->kept_dir, rt__task_key(t), a->result, a->len, 1);
        a->result = NULL;
        a->held = 1;
    }
}

/* Whether t is the record of a task that this rank placed itself and
 * runs inside its parent's wait (rt__serve_inside()): it has this rank's
 * handle and no function.  (A task that has such a handle and was handed
 * to rank 0 comes from there as any task, with its function.) */
static int placed_here(const rt__task *t)
{
    return (t->call.id & RT__ID_FOREIGN) && !t->call.fn;
}

static void on_answered(void *ctx, void *owner, rt__answer *a)
{
    rt__serve *s = ctx;
    lease *l = owner;
    rt__task *t = rt__tasks_pop(&l->inflight); /* answers come in order */
    l->run_us = l->run_us ? 0.75 * l->run_us + 0.25 * (double)a->run_us : (double)a->run_us;
    if (placed_here(t)) { /* rank 0 knows nothing of it */
        s->inside_answered(s->inside_ctx, a);
        free_task(s, t);
        rt__answer_drop(a);
        renew(s, l);
        return;
    }
    keep_result(s, t, a);
    rt__rank_msg m = rt__rank_answer(l->byid.id, a);
    free_task(s, t);
    reply(s, &m);
    rt__answer_drop(a); /* copied into the message, or the message's now (NULL) */
    renew(s, l);
    feed(s, l); /* a task that could not get its objects may fail now */
}

static void on_lost(void *ctx, void *owner, const rt__loss *loss)
{
    report_loss(ctx, owner, loss);
}

/* What the GPUs' watcher saw here goes to rank 0, which decides. */
static void on_gpu(void *ctx, rt__node *from, const rt__gpu_event *e, void *owner, int ours)
{
    rt__serve *s = ctx;
    (void)from;
    rt__rank_msg m = rt__rank_gpu(owner ? ((lease *)owner)->byid.id : 0, e, ours);
    reply(s, &m);
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
    rt__rank_lease_read(m, &l->fresh, &l->max_calls, &l->cpu);
    rt__link_init(&l->waiting);
    rt__link_init(&l->pulling);
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

/* The record of a task whose table names objects other ranks hold (w's
 * remote of them, their refs after the table): each becomes one of ours,
 * here already or pulled from its holder, and the task waits for them
 * (feed()).  NULL with the error set when the message is not such a
 * task, or without memory. */
static rt__task *task_of_objects(rt__serve *s, const rt__rank_task_words *w, void *fn,
                                 const rt__rank_msg *m)
{
    size_t refs_len = w->remote * sizeof(rt__rank_ref), table_len = m->len - refs_len, n;
    rt_value *vals = rt__calloc(RT_ARGS_MAX, sizeof *vals);
    rt_arg *args = rt__calloc(RT_ARGS_MAX, sizeof *args);
    rt__task *t = NULL;
    int ok = vals && args && rt__args_read(m->bytes, table_len, NULL, w->remote, vals, NULL, &n) == 0;
    size_t remote = 0;
    for (size_t i = 0; ok && i < n; i++) {
        args[i] = vals[i].data || !vals[i].len ? RT_ARG_BYTES(vals[i].data, vals[i].len)
                                              : RT_ARG_REF(((rt_ref){1}));
        remote += !vals[i].data && vals[i].len;
    }
    ok = ok && remote == w->remote &&
         rt__task_new_args(w->kind, (rt__any_fn)fn, w->name[0] ? w->name : NULL, w->env, 0,
                           args, n, &t) == 0;
    const char *refs = (const char *)m->bytes + table_len;
    for (size_t i = 0, k = 0; ok && i < n; i++) {
        if (!args[i].ref.id)
            continue;
        rt__rank_ref ref;
        int must_pull;
        memcpy(&ref, refs + k++ * sizeof ref, sizeof ref);
        rt__task *o = rt__store_use(s->store, &ref, vals[i].len, &must_pull);
        if (!o) {
            ok = 0;
            break;
        }
        rt__task_args(t)[i].object = o;
        if (must_pull)
            rt__store_pull(s->store, s->bridge, &ref);
    }
    if (!ok && t) {
        free_task(s, t);
        t = NULL;
    }
    rt__free(vals);
    rt__free(args);
    return t;
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
    if (w.remote)
        t = task_of_objects(s, &w, fn, m);
    else
        rt__task_new(w.kind, (rt__any_fn)fn, w.name[0] ? w.name : NULL, w.env, 0, m->bytes,
                     m->len, &t);
    if (t && w.key[0] && !rt__task_more(t)) { /* a key needs t's more */
        rt__task_free(t);
        t = NULL;
    }
    if (t) {
        t->call.id = w.id;
        if (w.key[0])
            memcpy(t->call.more->key, w.key, sizeof w.key);
        t->run.runs_lost = (unsigned char)w.attempt; /* the worker hears which run it is */
        if (!w.remote)
            t->call.args_form = w.table ? RT__ARGS_TABLE : RT__ARGS_ONE;
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
    s->delivered_tasks++;
    s->awaited = l;
}

int rt__serve_await(rt__serve *s)
{
    lease *l = s->delivered_tasks == 1 ? s->awaited : NULL;
    s->awaited = NULL;
    s->delivered_tasks = 0;
    /* A new lease's first task (a synchronous caller's lease is new each
     * time) gets the slack alone: a long one costs MPI that much, once. */
    if (!l || !l->w || l->inflight.count != 1 || l->queue.head || l->run_us > AWAIT_MAX_US ||
        !s->local->ops->await ||
        !s->local->ops->await(s->local, l->w, (int)(4 * l->run_us + AWAIT_SLACK_US)))
        return 0;
    rt__bridge_flush(s->bridge); /* the answer, for the bridge's next pass */
    return 1;
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
    drop_tasks(s, &taken);
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

/* Another rank pulls an object held here: its bytes go from where they
 * are (a memfd, sent without a copy), or found 0. */
static void send_object(rt__serve *s, int to, const rt__rank_msg *pulled)
{
    uint64_t id;
    unsigned run;
    int found;
    rt__rank_object_read(pulled, &id, &run, &found);
    const rt__task *o = rt__store_find(s->store, id, run);
    int fd = o ? rt__shm_fd(o->obj.result) : -1;
    rt__rank_msg m = rt__rank_object(RT__RANK_OBJECT, id, run, o != NULL);
    if (o) {
        m.len = o->obj.result_len;
        m.bytes = o->obj.result;
        if (fd >= 0 && (m.fd = dup(fd)) < 0)
            m = rt__rank_object(RT__RANK_OBJECT, id, run, 0);
        else if (fd < 0 && m.len >= RT__SHM_MIN && (m.owned = rt__buf_alloc(m.len)))
            memcpy(m.owned, o->obj.result, m.len); /* the message's, freed once sent */
        else if (fd < 0 && m.len >= RT__SHM_MIN)
            m = rt__rank_object(RT__RANK_OBJECT, id, run, 0);
    }
    if (rt__bridge_send(s->bridge, to, &m) < 0)
        rt__warn("no memory to send object %llu to rank %d", (unsigned long long)id, to);
}

/* A pulled object came: the leases whose next task waited for it go on. */
static void object_arrived(rt__serve *s, const rt__rank_msg *m)
{
    uint64_t id;
    unsigned run;
    int found;
    void *bytes = rt__rank_object_take(m, &id, &run, &found);
    rt__store_arrived(s->store, id, run, bytes, found);
    rt__link waiting = s->pulling;
    if (rt__list_empty(&s->pulling))
        return;
    /* Each waiting lease is fed again: those still waiting join anew. */
    waiting.next->prev = &waiting;
    waiting.prev->next = &waiting;
    rt__link_init(&s->pulling);
    while (!rt__list_empty(&waiting)) {
        lease *l = RT__OWNER(waiting.next, lease, pulling);
        rt__list_remove(&l->pulling);
        feed(s, l);
    }
}

static uint64_t stop_inside(rt__serve *s, lease *l, uint64_t task);

int rt__serve_deliver(rt__serve *s, int from, const rt__rank_msg *m)
{
    if (m->type == RT__RANK_PULL) {
        send_object(s, from, m);
        return 0;
    }
    if (m->type == RT__RANK_OBJECT) {
        object_arrived(s, m);
        return 0;
    }
    if (from != 0) {
        rt__buf_free(m->owned);
        return 0;
    }
    if (m->type == RT__RANK_FREE) {
        uint64_t id;
        unsigned run;
        int found;
        rt__rank_object_read(m, &id, &run, &found);
        rt__store_forget(s->store, id, run);
        return 0;
    }
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
    } else if (m->type == RT__RANK_ASK_STOP && l->w) {
        s->local->ops->ask_stop(s->local, l->w, stop_inside(s, l, m->w[0]));
    }
    rt__buf_free(m->owned);
    return 0;
}

/* ---- local first: tasks run inside their parents' waits -------------------------- */

/* Rank 0 asks l's task `task` to stop (a cancel, recursive unless it says
 * not, which rank 0 has done for the tasks it knows): the tasks this
 * rank placed inside its wait stop too.  They come before it in flight,
 * the innermost first, which is the one its worker runs: the task to ask. */
static uint64_t stop_inside(rt__serve *s, lease *l, uint64_t task)
{
    rt__task *t = l->inflight.head;
    while (t && placed_here(t))
        t = t->next;
    if (!t || t->call.id != task || t == l->inflight.head)
        return task;
    for (t = l->inflight.head; placed_here(t); t = t->next)
        s->inside_stopped(s->inside_ctx, t->call.id);
    return l->inflight.head->call.id;
}

/* The lease whose worker runs task id (in flight there), and the task. */
static lease *running(rt__serve *s, uint64_t id, rt__task **task)
{
    for (rt__idnode *n = rt__idmap_any(&s->leases); n; n = rt__idmap_after(&s->leases, n)) {
        lease *l = (lease *)n;
        for (rt__task *t = l->inflight.head; t; t = t->next)
            if (t->call.id == id) {
                *task = t;
                return l;
            }
    }
    return NULL;
}

/* Whether l's worker may run a task asking for cpu inside a wait: it
 * has a call left, no devices (the child would see them), and CPUs. */
static int may_run_inside(const lease *l, rt__amount cpu)
{
    int devices = l->devices_text && (*l->devices.gpus || *l->devices.accel);
    return l->w && l->budget > 0 && !devices && l->cpu >= cpu;
}

int rt__serve_inside(rt__serve *s, uint64_t parent, uint64_t child, rt__amount cpu,
                     int (*give)(void *ctx), void *ctx, uint64_t *lease_number)
{
    rt__task *p;
    lease *l = running(s, parent, &p);
    if (!l || p->call.kind != RT__KIND_TASK || !may_run_inside(l, cpu))
        return -1;
    rt__task *t = rt__task_new_held(child, NULL, 0);
    if (!t)
        return -1;
    if (give(ctx) < 0) { /* the worker will not run it */
        rt__task_free(t);
        return -2;
    }
    rt__tasks_insert_before(&l->inflight, t, p); /* its answer comes first */
    s->local->ops->given_inside(s->local, l->w);
    if (l->budget != SIZE_MAX)
        l->budget--;
    *lease_number = l->byid.id;
    return 0;
}

void rt__serve_on_inside(rt__serve *s, void (*answered)(void *ctx, rt__answer *a),
                         void (*stopped)(void *ctx, uint64_t child), void *ctx)
{
    s->inside_answered = answered;
    s->inside_stopped = stopped;
    s->inside_ctx = ctx;
}

int rt__serve_stop_inside(rt__serve *s, uint64_t child, int kill)
{
    rt__task *t;
    lease *l = running(s, child, &t);
    if (!l || !l->w)
        return -1;
    if (kill)
        s->local->ops->kill(s->local, l->w);
    else
        s->local->ops->ask_stop(s->local, l->w, child);
    return 0;
}

rt__serve *rt__serve_new(rt__bridge *b, rt__node *local, const rt__serve_setup *setup)
{
    rt__serve *s = rt__malloc(sizeof *s);
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    s->kept_dir = setup->kept_dir;
    if (rt__idmap_init(&s->leases) < 0) {
        rt__free(s);
        return NULL;
    }
    if (!(s->store = rt__store_new(setup->store_size, setup->spill_dir))) {
        rt__idmap_free(&s->leases);
        rt__free(s);
        return NULL;
    }
    s->bridge = b;
    s->local = local;
    rt__link_init(&s->waiting);
    rt__link_init(&s->pulling);
    rt__node_listen(local, (rt__node_events){s, on_answered, on_lost, on_failed, NULL, NULL,
                                              on_gpu});
    return s;
}

rt__store *rt__serve_store(rt__serve *s)
{
    return s->store;
}

void rt__serve_free(rt__serve *s)
{
    for (rt__idnode *n; (n = rt__idmap_any(&s->leases));)
        lease_free(s, (lease *)n);
    rt__idmap_free(&s->leases);
    rt__store_free(s->store);
    rt__free(s);
}

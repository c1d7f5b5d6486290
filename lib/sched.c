/* sched.c - classes, leases, dispatch, results and retries. */
#include "sched.h"

#include "actor.h"
#include "pool.h"
#include "runtime.h"
#include "shm.h"
#include "worker.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tasks in flight per worker.  A worker gets about PIPELINE_US of work
 * at a time, judged from its class's recent run times: thousands of no-op
 * tasks, so that it never waits for the runtime thread, but one long task
 * at a time, so that a short task is not stuck behind a long one while
 * another worker idles.  Until a class has a measurement it gets one. */
#define WINDOW_MAX 1024
#define PIPELINE_US 2000.0
/* A worker whose task has run this much longer than its class's tasks
 * usually do gets nothing more queued behind it: other workers take the
 * class's tasks while it finishes. */
#define STALL_FACTOR 4.0
#define STALL_SLACK_US 50.0

void rt__sched_init(rt__sched *s, const rt__node *node)
{
    memset(s, 0, sizeof *s);
    s->names = node->names;
    s->total = node->total;
    s->free = node->total;
    s->bind_cpus = node->bind_cpus;
    memcpy(s->gpu_cpus, node->gpu_cpus, sizeof s->gpu_cpus);
    rt__instances_init(&s->gpus, (int)(node->total.gpu / RT__UNIT),
                       (const char(*)[RT__ID_LEN])node->gpu_ids);
    s->neuron_index = rt__names_find(&node->names, RT__NEURON);
    if (s->neuron_index >= 0)
        rt__instances_init(&s->neuron,
                           (int)(node->total.custom[s->neuron_index] / RT__UNIT), NULL);
}

rt__class *rt__sched_class(rt__sched *s, const rt__res *req, int max_calls)
{
    for (rt__class *c = s->classes; c; c = c->next)
        if (!c->actor && c->max_calls == max_calls && rt__res_equal(&c->req, req))
            return c;
    rt__class *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->req = *req;
    c->max_calls = max_calls;
    c->next = s->classes;
    s->classes = c;
    return c;
}

rt__class *rt__sched_actor_class(rt__sched *s, const rt__res *req,
                                 struct rt__actor *actor)
{
    rt__class *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->req = *req;
    c->actor = actor;
    c->next = s->classes;
    s->classes = c;
    return c;
}

void rt__sched_drop_class(rt__sched *s, rt__class *c)
{
    rt__class **link = &s->classes;
    while (*link != c)
        link = &(*link)->next;
    *link = c->next;
    free(c);
}

static void push_back(rt__class *c, rt__task *t)
{
    t->next = NULL;
    if (c->tail)
        c->tail->next = t;
    else
        c->head = t;
    c->tail = t;
    c->pending++;
}

static void push_front(rt__class *c, rt__task *t)
{
    t->next = c->head;
    c->head = t;
    if (!c->tail)
        c->tail = t;
    c->pending++;
}

rt__task *rt__sched_pop(rt__class *c)
{
    rt__task *t = c->head;
    if (!t)
        return NULL;
    c->head = t->next;
    if (!c->head)
        c->tail = NULL;
    c->pending--;
    return t;
}

void rt__sched_finish(rt__sched *s, rt__task *t, int status)
{
    s->finished += (size_t)rt__task_finish(t, status);
}

void rt__sched_absorb(rt__task *list)
{
    while (list) {
        rt__task *t = list;
        list = t->next;
        push_back(t->cls, t);
    }
}

/* ---- leases ------------------------------------------------------------ */

static rt__amount neuron_of(const rt__sched *s, const rt__res *req)
{
    return s->neuron_index >= 0 ? req->custom[s->neuron_index] : 0;
}

/* Whether c's request fits what is free now, and on which instances. */
static int fits(const rt__sched *s, const rt__class *c, rt__grant *g)
{
    return rt__res_fits(&s->free, &c->req) &&
           rt__instances_pick(&s->gpus, c->req.gpu, &g->gpu) &&
           rt__instances_pick(&s->neuron, neuron_of(s, &c->req), &g->neuron);
}

void rt__sched_take(rt__sched *s, rt__class *c, const rt__grant *g)
{
    rt__res_take(&s->free, &c->req);
    rt__instances_take(&s->gpus, &g->gpu);
    rt__instances_take(&s->neuron, &g->neuron);
    c->leases++;
}

void rt__sched_give(rt__sched *s, rt__class *c, const rt__grant *g)
{
    rt__res_give(&s->free, &c->req);
    rt__instances_give(&s->gpus, &g->gpu);
    rt__instances_give(&s->neuron, &g->neuron);
    c->leases--;
}

static int budget_spent(const rt__worker *w)
{
    return w->lease->max_calls > 0 && w->calls >= w->lease->max_calls;
}

static void end_lease(rt__sched *s, rt__worker *w)
{
    rt__sched_give(s, w->lease, &w->grant);
    rt__pool_unlease(&rt__rt.pool, w, budget_spent(w));
}

/* A task class wants a lease per task it has; an actor wants its one. */
static int wants_lease(const rt__class *c)
{
    if (c->actor)
        return c->pending > 0 && c->leases == 0;
    return c->pending > 0 && c->leases < c->pending + c->inflight;
}

/* Whether a (with pending tasks) has an older pending task than b; any
 * class is older than no class. */
static int older(const rt__class *a, const rt__class *b)
{
    return !b || a->head->seq < b->head->seq;
}

/* Whether c must wait for the blocked class: it is younger. */
static int held_back(const rt__class *c, const rt__class *blocked)
{
    return blocked && c != blocked && c->pending > 0 && !older(c, blocked);
}

/* End the leases whose workers have nothing in flight and either nothing
 * more to do or, younger than the blocked class, must make room for it.
 * An actor's lease ends only with its process. */
static void end_idle_leases(rt__sched *s, const rt__class *blocked)
{
    for (rt__worker *w = rt__rt.pool.all; w; w = w->next)
        if (w->lease && !w->lease->actor && w->inflight == 0 &&
            (budget_spent(w) || w->lease->pending == 0 || held_back(w->lease, blocked)))
            end_lease(s, w);
}

rt__class *rt__sched_decide(rt__sched *s, rt__grant *g)
{
    rt__class *best = NULL;
    rt__grant candidate;
    s->blocked = NULL;
    for (rt__class *c = s->classes; c; c = c->next) {
        if (!wants_lease(c) || !(older(c, best) && older(c, s->blocked)))
            continue;
        if (fits(s, c, &candidate)) {
            best = c;
            *g = candidate;
        } else if (c->leases == 0) {
            s->blocked = c;
        }
    }
    return best && older(best, s->blocked) ? best : NULL;
}

/* The CPUs near the lease's GPUs, as one list ("" when unknown, or when
 * binding is off), appended to buf. */
static size_t format_cpus(const rt__sched *s, const rt__pick *gpu, char *buf,
                          size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; s->bind_cpus && gpu->each && i < s->gpus.count; i++) {
        if (!rt__pick_has(gpu, i))
            continue;
        if (!s->gpu_cpus[i][0]) {
            buf[0] = '\0'; /* one unknown: do not bind at all */
            return 0;
        }
        if (len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                                    s->gpu_cpus[i]);
    }
    return len < size ? len : 0;
}

/* Describe the lease's instances to its worker:
 * "GPU ids\nneuron ids\nCPUs to bind to". */
static int send_devices(rt__sched *s, rt__worker *w)
{
    static char buf[3 * RT__INSTANCE_MAX * RT__CPUS_LEN];
    size_t third = sizeof buf / 3;
    size_t len = rt__pick_format(&w->grant.gpu, &s->gpus, buf, third);
    buf[len++] = '\n';
    len += rt__pick_format(&w->grant.neuron, &s->neuron, buf + len, third);
    buf[len++] = '\n';
    len += format_cpus(s, &w->grant.gpu, buf + len, third);
    return rt__pool_send_devices(w, buf, len, s->neuron_index >= 0);
}

/* Grant leases, one decision at a time.  When a class is blocked, the
 * leases of younger classes that sit idle between tasks are ended once to
 * make room, and the blocked class is returned so that they are not fed
 * either: they drain, and their resources go to the blocked class. */
static rt__class *grant_leases(rt__sched *s)
{
    int reclaimed = 0;
    for (;;) {
        rt__grant g;
        rt__class *c = rt__sched_decide(s, &g);
        if (!c && s->blocked && !reclaimed) {
            end_idle_leases(s, s->blocked);
            reclaimed = 1;
            continue;
        }
        rt__worker *w = c ? rt__pool_lease(&rt__rt.pool, c) : NULL;
        if (!w)
            return s->blocked;
        w->grant = g;
        rt__sched_take(s, c, &g);
        if (send_devices(s, w) < 0) {
            end_lease(s, w); /* out of memory; the next pass tries again */
            return NULL;
        }
    }
}

/* ---- dispatch ---------------------------------------------------------- */

/* How many more tasks w should get: the class's tasks, pending and in
 * flight, spread evenly over its leases (so a worker busy with a long task
 * gets nothing more while another one idles), within the window and the
 * worker's max_calls budget. */
static size_t window_of(const rt__class *c)
{
    if (!c->timed)
        return 1;
    if (c->run_us * WINDOW_MAX <= PIPELINE_US)
        return WINDOW_MAX;
    size_t w = (size_t)(PIPELINE_US / c->run_us);
    return w ? w : 1;
}

static int stalled(const rt__worker *w, uint64_t now_ns)
{
    const rt__class *c = w->lease;
    double limit = STALL_FACTOR * (c->timed ? c->run_us : 0) + STALL_SLACK_US;
    return (double)rt__pool_busy_us(&rt__rt.pool, w, now_ns) > limit;
}

static size_t share_of(const rt__worker *w, uint64_t now_ns)
{
    const rt__class *c = w->lease;
    if (w->inflight && stalled(w, now_ns))
        return 0;
    size_t fair = (c->pending + c->inflight + c->leases - 1) / c->leases;
    size_t window = window_of(c);
    size_t limit = fair < window ? fair : window;
    size_t share = w->inflight < limit ? limit - w->inflight : 0;
    if (share > c->pending)
        share = c->pending;
    if (c->max_calls > 0) {
        size_t left = (size_t)(c->max_calls - w->calls);
        if (share > left)
            share = left;
    }
    return share;
}

static void feed(rt__sched *s, rt__class *blocked)
{
    uint64_t now = rt__now_ns();
    for (rt__worker *w = rt__rt.pool.all; w; w = w->next) {
        rt__class *c = w->lease;
        if (!c || c->pending == 0 || held_back(c, blocked) || w->chan.fd < 0)
            continue;
        for (size_t n = share_of(w, now); n > 0; n--) {
            rt__task *t = rt__sched_pop(c);
            if (rt__pool_send(w, t) < 0) {
                rt__sched_finish(s, t, RT_ENOMEM);
                continue;
            }
            t->state = RT__TASK_DISPATCHED;
            c->inflight++;
        }
    }
}

void rt__sched_run(rt__sched *s)
{
    end_idle_leases(s, NULL);
    rt__class *blocked = grant_leases(s);
    feed(s, blocked);
}

/* ---- results and failures --------------------------------------------- */

/* Fold a task's run time into its class's moving average. */
static void note_run_time(rt__class *c, uint64_t word)
{
    double us = (double)(word >> RT__RESULT_TIME_SHIFT);
    c->run_us = c->timed ? 0.75 * c->run_us + 0.25 * us : us;
    c->timed = 1;
}

/* A constructor's answer: only its status matters. */
static void take_created(rt__sched *s, rt__task *t, const rt__hdr *h,
                         const int *fds, int pid)
{
    if (h->nfds)
        close(fds[0]);
    t->task_status = (int)(uint32_t)h->word;
    int status = h->word & RT__RESULT_SYSFAIL ? RT_ESYS
                 : t->task_status           ? RT_ETASK
                                            : RT_OK;
    rt__actor_created(s, t, status, pid);
}

static void take_result(rt__sched *s, rt__task *t, const rt__hdr *h,
                        const char *payload, const int *fds, int pid)
{
    note_run_time(t->cls, h->word);
    if (t->kind == RT__KIND_CREATE) {
        take_created(s, t, h, fds, pid);
        return;
    }
    if (h->word & RT__RESULT_SYSFAIL) {
        t->sys_errno = (int)(h->word & 0xffffffffu);
        rt__sched_finish(s, t, RT_ESYS);
        return;
    }
    t->task_status = (int)(uint32_t)h->word;
    t->result_len = h->len;
    if (h->nfds) {
        t->result = rt__shm_map(fds[0], h->len, 1);
        close(fds[0]);
    } else if (h->len) {
        t->result = rt__buf_alloc(h->len);
        if (t->result)
            memcpy(t->result, payload, h->len);
    }
    if (!t->result && h->len) {
        t->result_len = 0;
        rt__sched_finish(s, t, RT_ENOMEM);
        return;
    }
    rt__sched_finish(s, t, t->task_status ? RT_ETASK : RT_OK);
}

void rt__sched_results(rt__sched *s, rt__worker *w)
{
    rt__hdr h;
    const char *payload;
    int fds[RT__MSG_MAX_FDS];
    int more;
    while ((more = rt__chan_next(&w->chan, &h, &payload, fds)) > 0) {
        rt__task *t = w->head;
        if (h.type != RT__MSG_RESULT || !t || t->id != h.id) {
            more = -1; /* not what this worker was asked: stop trusting it */
            for (uint32_t i = 0; i < h.nfds; i++)
                close(fds[i]);
            break;
        }
        rt__pool_pop(w);
        t->cls->inflight--;
        take_result(s, t, &h, payload, fds, w->pid);
    }
    if (more < 0)
        rt__pool_kill(&rt__rt.pool, w);
}

void rt__sched_requeue(rt__task *t)
{
    t->state = RT__TASK_QUEUED;
    push_front(t->cls, t);
}

/* How many of w's tasks in flight had started when it died: they run in
 * the order sent, and those answered are no longer in flight. */
static size_t started_in_flight(const rt__worker *w)
{
    if (w->spawn_errno)
        return w->inflight ? 1 : 0; /* the first one fails: nothing can run it */
    uint64_t answered = (uint64_t)w->calls - w->inflight;
    uint64_t started = w->started > answered ? w->started - answered : 0;
    return started < w->inflight ? (size_t)started : w->inflight;
}

/* A task that started in a lost worker: its effects may have happened,
 * so it runs again only while it has retries. */
static void spend_retry(rt__sched *s, rt__task *t, const rt__worker *w)
{
    if (t->retries_left > 0) {
        t->retries_left--;
        rt__sched_requeue(t);
        return;
    }
    t->wait_status = w->wait_status;
    t->worker_pid = w->pid;
    t->sys_errno = w->spawn_errno;
    t->lost = (unsigned char)w->lost;
    rt__sched_finish(s, t, RT_EWORKERDIED);
}

/* A lost worker's tasks that started spend a retry; the others never ran
 * and go back first in line, in their order, for free. */
void rt__sched_worker_lost(rt__sched *s, rt__worker *w)
{
    if (w->lease && w->lease->actor) {
        rt__actor_lost(s, w);
        return;
    }
    size_t started = started_in_flight(w);
    rt__task *spent = NULL, *unsent = NULL; /* both reversed */
    for (rt__task *t; (t = rt__pool_pop(w)); started -= started > 0) {
        t->cls->inflight--;
        rt__task **list = started ? &spent : &unsent;
        t->next = *list;
        *list = t;
    }
    for (rt__task *t = unsent, *next; t; t = next) {
        next = t->next;
        rt__sched_requeue(t);
    }
    for (rt__task *t = spent, *next; t; t = next) {
        next = t->next;
        spend_retry(s, t, w);
    }
    if (w->lease) {
        rt__sched_give(s, w->lease, &w->grant);
        w->lease = NULL;
    }
}

void rt__sched_free(rt__sched *s)
{
    for (rt__worker *w = rt__rt.pool.all; w; w = w->next)
        for (rt__task *t; (t = rt__pool_pop(w));)
            rt__sched_finish(s, t, RT_ESHUTDOWN);
    while (s->classes) {
        rt__class *c = s->classes;
        s->classes = c->next;
        while (c->head)
            rt__sched_finish(s, rt__sched_pop(c), RT_ESHUTDOWN);
        free(c);
    }
}

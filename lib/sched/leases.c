/* leases.c - leases: a class's hold on a worker, and how much work each
 * is given at a time (its share); what a grant holds, described. */
#include "scheduler.h"

#include "base/alloc.h"

#include <stdio.h>
#include <string.h>

/* Tasks in flight per worker.  A worker gets about PIPELINE_US of work
 * at a time, judged from its class's recent run times: thousands of no-op
 * tasks, so that it never waits for the runtime thread, but two long
 * tasks at a time, the next one waiting behind the one that runs, so that
 * the worker goes on to it without a trip through the runtime thread
 * (with one, every task of 1 ms waited tens of microseconds for its
 * successor: 80 to 94 % efficiency), and no more, so that a short task is
 * not stuck behind long ones while another worker idles (a worker whose
 * task runs long gets nothing behind it, rt__sched_stalled(), and what
 * waits there is taken back for a worker that runs out of work).  Until a
 * class has a measurement it gets one. */
#define WINDOW_MAX 1024
#define PIPELINE_US 2000.0
/* A worker whose task has run this much longer than its class's tasks
 * usually do gets nothing more queued behind it: other workers take the
 * class's tasks while it finishes. */
#define STALL_FACTOR 4.0
#define STALL_SLACK_US 50.0

/* ---- leases ---------------------------------------------------------------- */

rt__lease *rt__sched_lease(rt__sched *s, rt__class *c, const rt__grant *g)
{
    rt__lease *l = rt__calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->cls = c;
    l->grant = *g;
    l->budget = SIZE_MAX;
    rt__list_push_back(&c->leased, &l->link);
    rt__sched_take(s, c, g);
    return l;
}

void rt__sched_bind(rt__lease *l, void *worker, size_t calls)
{
    size_t max = (size_t)l->cls->max_calls;
    l->worker = worker;
    if (max > 0)
        l->budget = calls < max ? max - calls : 0;
}

void rt__sched_unlease(rt__sched *s, rt__lease *l)
{
    rt__class *c = l->cls;
    if (l->lent_by)
        rt__sched_lend(s, l, NULL);
    rt__sched_give(s, c, &l->grant);
    rt__list_remove(&l->link);
    rt__free(l);
    if (!c->owner)
        rt__sched_release_class(s, c);
}

int rt__sched_lease_idle(const rt__lease *l)
{
    return !l->cls->owner && l->inflight.count == 0 &&
           (l->cls->pending.count == 0 || l->budget == 0);
}

rt__lease *rt__sched_reclaimable(const rt__sched *s)
{
    for (rt__class *c = rt__sched_feedable(s); c; c = rt__sched_next_feedable(s, c)) {
        if (c->owner || rt__sched_may_feed(s, c))
            continue;
        for (rt__lease *l = rt__sched_first_lease(c); l; l = rt__sched_next_lease(c, l))
            if (l->inflight.count == 0)
                return l;
    }
    return NULL;
}

/* ---- shares ---------------------------------------------------------------- */

static size_t window_of(const rt__class *c)
{
    if (!c->timed)
        return 1;
    if (c->run_us * WINDOW_MAX <= PIPELINE_US)
        return WINDOW_MAX;
    size_t w = (size_t)(PIPELINE_US / c->run_us);
    return w > 2 ? w : 2;
}

static double stall_limit_us(const rt__class *c)
{
    return STALL_FACTOR * (c->timed ? c->run_us : 0) + STALL_SLACK_US;
}

uint64_t rt__sched_stalls_in_us(const rt__lease *l, uint64_t busy_us, uint64_t now_ns)
{
    double limit = stall_limit_us(l->cls);
    double quiet_us = now_ns > l->quiet_since_ns
                          ? (double)(now_ns - l->quiet_since_ns) / 1000.0 : 0;
    double longest = (double)busy_us > quiet_us ? (double)busy_us : quiet_us;
    return longest > limit ? 0 : (uint64_t)(limit - longest) + 1;
}

int rt__sched_stalled(const rt__lease *l, uint64_t busy_us, uint64_t now_ns)
{
    return l->inflight.count && rt__sched_stalls_in_us(l, busy_us, now_ns) == 0;
}

int rt__sched_takes_turns(const rt__lease *l, uint64_t busy_us)
{
    return !l->lent_by && !l->inside && (double)busy_us <= stall_limit_us(l->cls);
}

size_t rt__sched_room(const rt__lease *l)
{
    size_t window = window_of(l->cls);
    if (l->lent_by || l->inside || !l->budget || l->inflight.count >= window)
        return 0;
    return window - l->inflight.count < l->budget ? window - l->inflight.count : l->budget;
}

size_t rt__sched_share(const rt__lease *l, uint64_t busy_us, uint64_t now_ns)
{
    const rt__class *c = l->cls;
    /* A threaded actor runs that many at once, long or not. */
    size_t at_once = c->concurrency > l->inflight.count ? c->concurrency - l->inflight.count : 0;
    if (at_once > c->pending.count)
        at_once = c->pending.count;
    if (l->lent_by || l->inside || rt__sched_stalled(l, busy_us, now_ns))
        return at_once;
    size_t fair = (c->pending.count + c->inflight + c->leases - 1) / c->leases;
    size_t window = window_of(c);
    size_t limit = fair < window ? fair : window;
    size_t share = l->inflight.count < limit ? limit - l->inflight.count : 0;
    if (share > c->pending.count)
        share = c->pending.count;
    if (share < at_once)
        share = at_once;
    return share < l->budget ? share : l->budget;
}

void rt__sched_sent(rt__lease *l, rt__task *t, uint64_t now_ns)
{
    if (l->inflight.count == 0)
        l->quiet_since_ns = now_ns;
    rt__tasks_push(&l->inflight, t);
    l->cls->inflight++;
    if (l->budget != SIZE_MAX)
        l->budget--;
}

void rt__sched_sent_inside(rt__lease *l, rt__task *t, const rt__task *waiting)
{
    rt__tasks_insert_before(&l->inflight, t, waiting);
    l->cls->inflight++;
    l->inside++;
    t->run.inside = 1;
    if (l->budget != SIZE_MAX)
        l->budget--;
}

rt__task *rt__sched_recall(rt__lease *l)
{
    rt__task *t = rt__tasks_pop(&l->inflight);
    if (!t)
        return NULL;
    l->cls->inflight--;
    l->inside -= t->run.inside;
    t->run.inside = 0;
    return t;
}

void rt__sched_lend(rt__sched *s, rt__lease *l, const rt__task *t)
{
    rt__amount cpu = l->cls->req.cpu;
    if (!t == !l->lent_by)
        return;
    rt__sched_pool(s, l->cls, &l->grant, 0)->res.cpu += t ? cpu : -cpu;
    l->lent_by = t;
    s->gave += t != NULL; /* a group that waits may fit now */
}

void rt__sched_take_back(rt__lease *l, size_t n, rt__tasks *q)
{
    if (n == 0 || n > l->inflight.count)
        return;
    rt__tasks_split_tail(&l->inflight, n, q);
    l->cls->inflight -= n;
    if (l->budget != SIZE_MAX)
        l->budget += n;
}

rt__task *rt__sched_in_flight(rt__lease *l, uint64_t id)
{
    rt__task *t = l->inflight.head;
    if (!t || t->call.id == id || l->cls->concurrency < 2)
        return t && t->call.id == id ? t : NULL;
    for (rt__task *prev = t; (t = prev->next); prev = t)
        if (t->call.id == id) { /* to the front, where rt__sched_answered() takes it */
            prev->next = t->next;
            if (l->inflight.tail == t)
                l->inflight.tail = prev;
            rt__tasks_push_front(&l->inflight, t);
            l->inflight.count--; /* push_front counted it again */
            return t;
        }
    return NULL;
}

rt__task *rt__sched_answered(rt__lease *l, uint64_t run_us, uint64_t now_ns)
{
    rt__task *t = rt__sched_recall(l);
    if (!t)
        return NULL;
    l->quiet_since_ns = now_ns;
    rt__class *c = l->cls;
    c->run_us = c->timed ? 0.75 * c->run_us + 0.25 * (double)run_us : (double)run_us;
    c->timed = 1;
    return t;
}

/* ---- descriptions ------------------------------------------------------------ */

/* The CPUs near the lease's GPUs, as one list ("" when any is unknown). */
static void format_cpus(const rt__sched_node *n, const rt__pick *gpu, char *buf,
                        size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; n->bind_cpus && gpu->each && i < n->free.gpus.count; i++) {
        if (!rt__pick_has(gpu, i))
            continue;
        if (!n->gpu_cpus[i][0] || len >= size) {
            buf[0] = '\0';
            return;
        }
        len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                                n->gpu_cpus[i]);
    }
    if (len >= size)
        buf[0] = '\0';
}

/* The bytes of memory g's share of each of its GPUs is, "21474836480,0"
 * (0: unknown). */
static void format_memory(const rt__sched_node *n, const rt__pick *gpu, char *buf,
                          size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; gpu->each && i < n->free.gpus.count && len < size; i++)
        if (rt__pick_has(gpu, i))
            len += (size_t)snprintf(buf + len, size - len, "%s%llu", len ? "," : "",
                                    (unsigned long long)((unsigned __int128)n->free.gpus.bytes[i] *
                                                         (uint64_t)gpu->each / RT__UNIT));
    if (len >= size)
        buf[0] = '\0';
}

void rt__sched_describe(const rt__sched *s, const rt__grant *g, char *gpus,
                        char *accel, char *cpus, char *memory)
{
    const rt__sched_node *n = s->node[g->node];
    size_t size = RT__INSTANCE_MAX * RT__ID_LEN;
    rt__pick_format(&g->gpu, &n->free.gpus, gpus, size);
    rt__pick_format(&g->accel, &n->free.accel, accel, size);
    format_cpus(n, &g->gpu, cpus, size);
    format_memory(n, &g->gpu, memory, size);
}

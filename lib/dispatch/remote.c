/* remote.c - objects that other ranks hold: their tasks' large results,
 * which stay where they were made.  Their records here have no bytes
 * (holder says who has them) until something here reads them: then they
 * are pulled.  A task placed on another rank pulls them itself, from the
 * holder (cluster/serve.c); a task that could run elsewhere is kept off
 * this node, and placement prefers the node that holds most of its
 * argument bytes. */
#include "dispatch.h"

#include "lives.h"

#include "base/alloc.h"
#include "base/shm.h"

#include <string.h>

void rt__remote_adopt(rt__dispatch *d, const rt__lease *l, rt__task *t, const rt__answer *r)
{
    (void)d;
    t->obj.result = NULL;
    t->obj.result_len = r->len;
    t->obj.holder = (uint16_t)l->grant.node;
    t->obj.held_run = (unsigned char)rt__task_attempt(t);
}

void rt__remote_drop(rt__dispatch *d, const rt__lease *l, const rt__task *t, rt__answer *r)
{
    rt__node *n = rt__dispatch_node_of(d, l);
    if (r->held && n->ops->forget)
        n->ops->forget(n, r->id, rt__task_attempt(t));
    rt__answer_drop(r);
}

/* ---- pulling ------------------------------------------------------------------- */

/* Whether o's bytes must come here first: it is another rank's, and
 * they are not here yet. */
static int must_come(const rt__task *o)
{
    return o && o->obj.holder && !o->obj.result && o->obj.result_len && o->obj.status == RT_OK;
}

void rt__dispatch_pull(rt__dispatch *d, int holder, uint64_t object, unsigned run)
{
    for (size_t i = 0; i < d->npulls; i++)
        if (d->pulls[i].object == object && d->pulls[i].run == run)
            return; /* asked already */
    rt__node *n = holder < d->sched.nnodes ? d->node[holder] : NULL;
    if (!n || !n->ops->pull)
        return;
    if (d->npulls == d->cap_pulls) {
        size_t cap = d->cap_pulls ? 2 * d->cap_pulls : 16;
        rt__pull *v = rt__realloc(d->pulls, cap * sizeof *v);
        if (!v)
            return; /* asked again when something else comes */
        d->pulls = v;
        d->cap_pulls = cap;
    }
    d->pulls[d->npulls++] = (rt__pull){object, run, holder};
    n->ops->pull(n, object, run);
}

int rt__remote_lost(rt__task *t)
{
    for (uint32_t i = 0; t->call.args_form == RT__ARGS_LIST && i < rt__task_nargs(t); i++) {
        const rt__task *o = rt__task_args(t)[i].object;
        if (o && o->obj.holder && o->obj.status != RT_OK) {
            rt__task_fail(t, RT_EDEPENDENCY, "an object the task takes was lost: %s",
                          o->obj.error ? o->obj.error : "its rank no longer holds it");
            return 1;
        }
    }
    return 0;
}

/* Pull what t takes that must come here; 1 when something must. */
static int pull_args(rt__dispatch *d, const rt__task *t)
{
    int some = 0;
    for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
        const rt__task *o = rt__task_args(t)[i].object;
        if (must_come(o)) {
            rt__dispatch_pull(d, o->obj.holder, o->call.id, o->obj.held_run);
            some = 1;
        }
    }
    return some;
}

void rt__remote_pulled(void *ctx, uint64_t object, void *bytes, size_t len, int found)
{
    rt__dispatch *d = ctx;
    for (size_t i = 0; i < d->npulls; i++)
        if (d->pulls[i].object == object) {
            d->pulls[i] = d->pulls[--d->npulls];
            break;
        }
    if (d->out.narrived == d->out.cap_arrived) {
        size_t cap = d->out.cap_arrived ? 2 * d->out.cap_arrived : 16;
        rt__arrival *v = rt__realloc(d->out.arrived, cap * sizeof *v);
        if (!v) {
            rt__buf_free(bytes); /* pulled again when asked again */
            return;
        }
        d->out.arrived = v;
        d->out.cap_arrived = cap;
    }
    d->out.arrived[d->out.narrived++] = (rt__arrival){object, bytes, len, found};
}

/* ---- placing near the objects ------------------------------------------------------ */

/* The node that holds most of the bytes t takes (this node: 0), + 1; 0
 * when they are few. */
static int64_t near_node(rt__dispatch *d, const rt__task *t)
{
    const rt__arg *args = rt__task_args(t);
    uint32_t nargs = rt__task_nargs(t);
    uint64_t most = 0, *bytes = d->node_bytes;
    int best = 0;
    for (uint32_t i = 0; i < nargs; i++) {
        const rt__task *o = args[i].object;
        if (o && o->obj.holder < d->sched.nnodes)
            bytes[o->obj.holder] += o->obj.result_len;
    }
    /* The most, the lowest node first on a tie; each entry back to 0. */
    for (uint32_t i = 0; i < nargs; i++) {
        const rt__task *o = args[i].object;
        int node = o ? o->obj.holder : 0;
        if (!o || node >= d->sched.nnodes || !bytes[node])
            continue;
        if (bytes[node] > most || (bytes[node] == most && node < best)) {
            most = bytes[node];
            best = node;
        }
        bytes[node] = 0;
    }
    return most >= RT__SHM_MIN ? best + 1 : 0;
}

/* Wait here until what t takes has come (it is filed again then). */
static void park(rt__dispatch *d, rt__task *t)
{
    t->run.parked = 1;
    rt__tasks_push(&d->parked, t);
}

int rt__remote_place(rt__dispatch *d, rt__task *t, rt__res *req)
{
    if (t->call.args_form != RT__ARGS_LIST || d->sched.nnodes < 2)
        return 0; /* one node: every object is here, and no choice to make */
    req->near = near_node(d, t);
    int missing = 0;
    for (uint32_t i = 0; i < rt__task_nargs(t) && !missing; i++)
        missing = must_come(rt__task_args(t)[i].object);
    if (!missing)
        return 0;
    /* Another rank pulls the bytes from their holder itself: this node
     * takes the task only when no other could. */
    rt__res elsewhere = *req;
    elsewhere.elsewhere = 1;
    if (!req->group && rt__sched_feasible(&d->sched, &elsewhere) == 0) {
        req->elsewhere = 1;
        return 0;
    }
    pull_args(d, t);
    park(d, t);
    return 1;
}

int rt__remote_call_waits(rt__dispatch *d, const rt__task *t)
{
    const rt__actor *a = t->call.actor;
    const rt__lease *l = a->cls ? rt__sched_first_lease(a->cls) : NULL;
    if (t->call.args_form != RT__ARGS_LIST || (l && l->grant.node != 0))
        return 0; /* its actor's rank pulls them itself */
    return pull_args(d, t);
}

void rt__remote_unpark_one(rt__dispatch *d, rt__task *t)
{
    rt__tasks keep = {0};
    for (rt__task *p; (p = rt__tasks_pop(&d->parked));)
        if (p != t)
            rt__tasks_push(&keep, p);
    d->parked = keep;
    t->run.parked = 0;
}

rt__task *rt__dispatch_parked_object(const rt__dispatch *d, uint64_t id)
{
    for (const rt__task *t = d->parked.head; t; t = t->next)
        for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
            rt__task *o = rt__task_args(t)[i].object;
            if (o && o->call.id == id && o->obj.holder)
                return o;
        }
    return NULL;
}

void rt__dispatch_unpark(rt__dispatch *d)
{
    rt__tasks still = {0}, go = {0};
    for (rt__task *t; (t = rt__tasks_pop(&d->parked));) {
        int waits = 0;
        for (uint32_t i = 0; i < rt__task_nargs(t); i++)
            waits |= must_come(rt__task_args(t)[i].object);
        rt__tasks_push(waits && !rt__remote_lost(t) ? &still : &go, t);
    }
    d->parked = still;
    for (rt__task *t; (t = rt__tasks_pop(&go));) {
        t->run.parked = 0;
        rt__dispatch_file(d, t);
    }
    for (rt__actor *a = RT__FIRST(&d->actors, rt__actor, link); a;
         a = RT__NEXT(&d->actors, a, rt__actor, link))
        if (a->held.head)
            rt__actors_release_held(d, a);
}

void rt__dispatch_forget(rt__dispatch *d, const rt__forgotten *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rt__node *node = f[i].holder < d->sched.nnodes ? d->node[f[i].holder] : NULL;
        if (node && node->ops->forget)
            node->ops->forget(node, f[i].object, f[i].run);
    }
}

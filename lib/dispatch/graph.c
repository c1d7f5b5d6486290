/* graph.c - tasks that wait for the objects they take (graph.h). */
#include "graph.h"

#include "node/output.h"

#include "base/alloc.h"
#include "base/error.h"

#include <string.h>

/* What names a task in a message: its name, else its function's. */
static const char *name_of(const rt__task *t)
{
    return t->call.fn ? rt__task_name((uint64_t)(uintptr_t)t->call.fn, rt__task_named(t)) : "object";
}

/* t never runs: the object o it takes failed.  A failure that came along
 * the graph already names the first task that failed: it is passed on. */
static void fail_dependent(rt__task *t, const rt__task *o)
{
    if (o->obj.status == RT_EDEPENDENCY && o->obj.error)
        rt__task_fail(t, RT_EDEPENDENCY, "%s", o->obj.error);
    else
        rt__task_fail(t, RT_EDEPENDENCY, "an object it takes failed: %s (ref %#llx) "
                      "ended with %s: %s", name_of(o), (unsigned long long)o->call.id,
                      rt__strerror(o->obj.status), o->obj.error ? o->obj.error : "no message");
}

int rt__graph_wait(rt__task *t)
{
    uint32_t left = 0;
    for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
        rt__task *o = rt__task_args(t)[i].object;
        if (o && !o->run.ended)
            left++;
        else if (o && o->obj.status != RT_OK) {
            fail_dependent(t, o);
            return -1;
        }
    }
    if (!left)
        return 0;
    rt__deps *w = rt__malloc(sizeof *w + left * sizeof(rt__edge));
    if (!w) {
        rt__task_fail(t, RT_ENOMEM, "no memory to wait for the objects the task takes");
        return -1;
    }
    w->task = t;
    w->left = left;
    rt__edge *e = w->edge;
    for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
        rt__task *o = rt__task_args(t)[i].object;
        if (!o || o->run.ended)
            continue;
        *e = (rt__edge){.next = o->run.waiters, .deps = w};
        o->run.waiters = e++;
    }
    t->run.deps = w;
    return 1;
}

void rt__graph_detach(rt__task *t)
{
    t->run.deps->task = NULL; /* its edges still count down, then free it */
    t->run.deps = NULL;
}

/* One edge whose object ended: a failure ends the task that waits; the
 * last object ends its wait.  A task filed early is filed already: a
 * failure ends it where it is (g->early_failed). */
static void visit(rt__graph *g, rt__edge *e)
{
    rt__deps *w = e->deps;
    rt__task *t = w->task;
    if (t && e->object->obj.status != RT_OK) {
        fail_dependent(t, e->object);
        rt__graph_detach(t);
        if (t->run.early)
            g->early_failed(g->owner, t);
        else
            g->file(g->owner, t);
    }
    if (--w->left)
        return;
    if ((t = w->task)) {
        t->run.deps = NULL;
        if (!t->run.early)
            g->file(g->owner, t);
        t->run.early = 0; /* filed already; its objects are all here now */
    }
    rt__free(w);
}

/* ---- early: tasks sent before their objects end (board.h) -------------- */

/* Whether t may be filed before the objects it takes end: each has ended
 * well, or is in flight with a board entry its worker posts on (sent
 * before t, so that t's wait never holds up its own producer). */
static int may_go_early(const rt__task *t)
{
    if (t->run.early || t->run.bounced || t->call.kind != RT__KIND_TASK || t->obj.status != RT_OK)
        return 0;
    for (uint32_t i = 0; i < rt__task_nargs(t); i++) {
        const rt__task *o = rt__task_args(t)[i].object;
        if (o && (o->run.ended ? o->obj.status != RT_OK : !o->run.board_seq))
            return 0;
    }
    return 1;
}

int rt__graph_try_early(rt__graph *g, rt__task *t)
{
    if (!may_go_early(t))
        return 0;
    t->run.early = 1;
    g->file_early(g->owner, t);
    return 1;
}

void rt__graph_sent(rt__graph *g, const rt__task *p)
{
    for (rt__edge *e = p->run.waiters; e; e = e->next)
        if (e->deps->task)
            rt__graph_try_early(g, e->deps->task);
}

void rt__graph_ended(rt__graph *g, rt__task *p)
{
    p->run.ended = 1;
    for (rt__edge *e = p->run.waiters, *next; e; e = next) {
        next = e->next;
        e->object = p;
        e->next = g->visit;
        g->visit = e;
    }
    p->run.waiters = NULL;
    if (g->visiting)
        return; /* the visit under way takes these too */
    g->visiting = 1;
    for (rt__edge *e; (e = g->visit);) {
        g->visit = e->next;
        visit(g, e);
    }
    g->visiting = 0;
}

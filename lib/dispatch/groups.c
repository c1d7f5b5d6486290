/* groups.c - placement groups in the round: placed once they
 * fit (dispatch.c asks each round), and removed: their tasks and actors
 * end, and what they reserved goes back (sched/scheduler.h). */
#include "dispatch.h"

#include "lives.h"

void rt__dispatch_add_group(rt__dispatch *d, rt__group *g)
{
    rt__sched_group_add(&d->sched, g);
    rt__sched_place_groups(&d->sched, &d->out.placed);
}

/* The tasks of c end: those in flight with their workers, killed, and
 * those queued at once.  The last may free c. */
static void end_tasks(rt__dispatch *d, rt__class *c)
{
    for (rt__lease *l = rt__sched_first_lease(c); l; l = rt__sched_next_lease(c, l)) {
        for (rt__task *t = l->inflight.head; t; t = t->next)
            t->run.cancelling = RT__CANCEL_GROUP;
        if (l->inflight.head)
            rt__dispatch_cancel(d, l->inflight.head); /* kills the worker */
    }
    for (size_t n = c->pending.count; n > 0; n--) {
        rt__task *t = c->pending.head;
        t->run.cancelling = RT__CANCEL_GROUP;
        rt__dispatch_cancel(d, t);
    }
}

void rt__dispatch_remove_group(rt__dispatch *d, rt__group *g)
{
    rt__class *next;
    for (rt__class *c = RT__FIRST(&g->classes, rt__class, in_group); c; c = next) {
        next = RT__NEXT(&g->classes, c, rt__class, in_group);
        if (c->owner)
            rt__actors_end(d, c->owner, RT__DEATH_GROUP);
        else
            end_tasks(d, c);
    }
    rt__sched_group_remove(&d->sched, g);
}

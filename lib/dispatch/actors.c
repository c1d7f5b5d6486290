/* actors.c - the lives of actors: creation, restarts, kills, deaths and
 * the epitaphs their calls fail with (lives.h). */
#include "dispatch.h"

#include "lives.h"
#include "sched/scheduler.h"

#include "base/alloc.h"
#include "base/shm.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/* How the actor's process ended, from its wait status. */
static void describe_crash(const rt__actor *a, char *text, size_t size)
{
    int ws = a->wait_status;
    if (!a->pid)
        snprintf(text, size, "the actor %s died before it started: rt_actor_restart() "
                 "found no restart left (max_restarts)", a->name);
    else if (WIFSIGNALED(ws))
        snprintf(text, size, "the actor %s (pid %d) died: killed by signal %d (%s)",
                 a->name, a->pid, WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    else
        snprintf(text, size, "the actor %s (pid %d) died: it exited with status %d",
                 a->name, a->pid, WEXITSTATUS(ws));
}

static void compose_epitaph(rt__actor *a)
{
    char text[320];
    switch (a->death) {
    case RT__DEATH_KILLED:
        snprintf(text, sizeof text, "the actor %s was killed", a->name);
        break;
    case RT__DEATH_GROUP:
        snprintf(text, sizeof text, "the actor %s was killed: its placement group was "
                 "removed", a->name);
        break;
    case RT__DEATH_CTOR:
        snprintf(text, sizeof text, "the actor %s is dead: its constructor returned %d",
                 a->name, a->ctor_status);
        break;
    case RT__DEATH_NOSTART:
        snprintf(text, sizeof text, "the actor %s could not start its process: %s%s",
                 a->name, strerror(a->ctor_status),
                 a->ctor_status == EMFILE ? " (raise the descriptor limit, ulimit -n: "
                                            "each worker needs 3 in the application)"
                                          : "");
        break;
    default:
        if (a->gpu_failed[0])
            snprintf(text, sizeof text, "the actor %s died: its GPU became unhealthy (%s)",
                     a->name, a->gpu_failed);
        else
            describe_crash(a, text, sizeof text);
    }
    size_t len = strlen(text) + 1;
    rt__free(a->epitaph);
    rt__free(a->tombstone);
    a->epitaph = rt__strdup(text);
    a->tombstone = rt__malloc(sizeof *a->tombstone + len);
    if (a->tombstone) {
        a->tombstone->dead = 1;
        memcpy(a->tombstone->text, text, len);
    }
}

/* A call fails because its actor died: it gets a copy of the epitaph. */
void rt__actors_fail_call(rt__dispatch *d, rt__task *t, rt__actor *a)
{
    rt__task_fail(t, RT_EACTORDIED, "%s", a->epitaph ? a->epitaph : "the actor died");
    rt__dispatch_finish(d, t, RT_EACTORDIED);
}

/* A call that the actor's process held when it died, while the actor
 * restarts: the call is not run again, and says how the process ended. */
static void fail_restarting_call(rt__dispatch *d, rt__task *t, rt__actor *a)
{
    char text[320];
    describe_crash(a, text, sizeof text);
    rt__task_fail(t, RT_EACTORDIED, "%s; it restarts (%d restart%s left after this one)",
                  text, a->restarts_left - 1, a->restarts_left - 1 == 1 ? "" : "s");
    rt__dispatch_finish(d, t, RT_EACTORDIED);
}

static void fail_pending_calls(rt__dispatch *d, rt__actor *a)
{
    for (rt__task *t; a->cls && (t = rt__sched_pop(&d->sched, a->cls));)
        if (t != a->create)
            rt__actors_fail_call(d, t, a);
    for (rt__task *t; (t = rt__tasks_pop(&a->held));) {
        if (rt__task_deps(t))
            rt__graph_detach(t);
        rt__actors_fail_call(d, t, a);
    }
}

/* A call ready to go (or failed): to the actor, unless it is dead. */
static void file_call(rt__dispatch *d, rt__task *t)
{
    rt__actor *a = t->call.actor;
    if (t->obj.status != RT_OK || rt__remote_lost(t))
        rt__dispatch_finish(d, t, t->obj.status);
    else if (a->death || !a->cls)
        rt__actors_fail_call(d, t, a);
    else
        rt__sched_push(&d->sched, a->cls, t);
}

void rt__actors_absorb_call(rt__dispatch *d, rt__task *t)
{
    rt__actor *a = t->call.actor;
    if ((rt__task_deps(t) || a->held.count || rt__remote_call_waits(d, t)) && !a->death &&
        a->cls)
        rt__tasks_push(&a->held, t);
    else {
        if (rt__task_deps(t)) /* its actor is dead: it fails now */
            rt__graph_detach(t);
        file_call(d, t);
    }
}

/* Calls go in order, each once the objects it takes exist, and are here
 * when its actor is (remote.c). */
void rt__actors_release_held(rt__dispatch *d, rt__actor *a)
{
    while (a->held.head && !rt__task_deps(a->held.head) &&
           (a->death || !rt__remote_call_waits(d, a->held.head)))
        file_call(d, rt__tasks_pop(&a->held));
}

/* From the next exchange on, calls to the actor fail at once. */
void rt__actors_set_death(rt__dispatch *d, rt__actor *a, rt__death death)
{
    if (a->death)
        return;
    a->death = death;
    compose_epitaph(a);
    a->next_declared = d->out.declared;
    d->out.declared = a;
}

/* The actor will run no more: fail what waits, forget its class once no
 * process holds it, and hand it to the runtime to publish. */
void rt__actors_bury(rt__dispatch *d, rt__actor *a)
{
    fail_pending_calls(d, a);
    if (a->cls && a->cls->leases == 0) {
        rt__tasks none = {0};
        rt__sched_discard(&d->sched, a->cls, &none);
        a->cls = NULL;
    }
    if (!a->cls && !a->buried) {
        a->buried = 1;
        a->next_kill = d->out.buried; /* next_kill links the buried list too */
        d->out.buried = a;
    }
}

void rt__actors_constructed(rt__dispatch *d, rt__task *create, rt__answer *r)
{
    rt__actor *a = create->call.actor;
    rt__answer_drop(r);
    if ((r->sys_errno == 0 && r->status == 0) || a->killed)
        return;
    /* The worker leaves after a failed constructor; its exit ends the
     * lease, and calls already sent to it fail then. */
    a->ctor_status = r->sys_errno ? RT_ESYS : r->status;
    rt__actors_set_death(d, a, RT__DEATH_CTOR);
    fail_pending_calls(d, a);
}

void rt__dispatch_kill(rt__dispatch *d, rt__actor *a, int restart)
{
    if (a->killed)
        return;
    if (restart) { /* its loss restarts it, as a crash's would */
        rt__lease *l = a->cls ? rt__sched_first_lease(a->cls) : NULL;
        if (l)
            rt__dispatch_node_of(d, l)->ops->kill(rt__dispatch_node_of(d, l), l->worker);
        else if (a->restarts_left > 0)
            a->restarts_left--; /* waiting for its resources: it starts anew once placed */
        else
            rt__actors_end(d, a, RT__DEATH_CRASHED);
        return;
    }
    rt__actors_end(d, a, RT__DEATH_KILLED);
}

void rt__actors_gpu_failed(rt__actor *a, const char *why)
{
    snprintf(a->gpu_failed, sizeof a->gpu_failed, "%s", why);
}

void rt__actors_end(rt__dispatch *d, rt__actor *a, rt__death death)
{
    if (a->killed)
        return;
    a->killed = 1;
    rt__actors_set_death(d, a, death);
    rt__lease *l = a->cls ? rt__sched_first_lease(a->cls) : NULL;
    if (l)
        rt__dispatch_node_of(d, l)->ops->stop(rt__dispatch_node_of(d, l), l->worker);
    rt__actors_bury(d, a);
}

/* The actor's process is gone.  Calls it held are not run again: their
 * effects may have happened.  It restarts while it has restarts left. */
void rt__actors_lost(rt__dispatch *d, rt__lease *l, const rt__loss *loss)
{
    rt__actor *a = l->cls->owner;
    a->pid = loss->pid;
    a->wait_status = loss->wait_status;
    int restart = !a->killed && !a->death && a->restarts_left > 0 && !loss->spawn_errno;
    if (loss->spawn_errno) {
        a->ctor_status = loss->spawn_errno;
        rt__actors_set_death(d, a, RT__DEATH_NOSTART);
    } else if (!restart) {
        rt__actors_set_death(d, a, RT__DEATH_CRASHED);
    }
    /* Calls with retries left go again, after the constructor. */
    rt__tasks again = {0};
    if (restart) {
        rt__tasks_push(&again, a->create);
        a->gpu_failed[0] = '\0'; /* it said nothing: the actor lives on */
    }
    for (rt__task *t; (t = rt__sched_recall(l));)
        if (t == a->create)
            continue;
        else if (restart && t->run.retries_left > 0) {
            t->run.retries_left--;
            rt__task_count_run(&t->run.runs_lost);
            rt__tasks_push(&again, t);
        } else if (restart)
            fail_restarting_call(d, t, a);
        else
            rt__actors_fail_call(d, t, a);
    rt__sched_unlease(&d->sched, l);
    d->running_actors--;
    if (restart) {
        a->restarts_left--;
        rt__sched_requeue(&d->sched, a->cls, &again);
    } else {
        rt__actors_bury(d, a);
    }
}

void rt__actors_forget(rt__actor *a)
{
    rt__list_remove(&a->link);
    rt__task_free(a->create);
    rt__free(a->epitaph);
    rt__free(a->tombstone);
    rt__free(a);
}

void rt__dispatch_free_actors(rt__actor *published)
{
    while (published) {
        rt__actor *a = published;
        published = a->next_kill;
        rt__actors_forget(a);
    }
}

/* A new actor's constructor: the actor gets its class, and joins the list
 * the dispatcher keeps. */
void rt__actors_absorb(rt__dispatch *d, rt__task *t)
{
    rt__actor *a = t->call.actor;
    rt__res req;
    rt__task_request(t, &req);
    a->create = t;
    rt__list_push_back(&d->actors, &a->link);
    a->cls = rt__sched_actor_class(&d->sched, &req, a);
    if (a->cls)
        a->cls->concurrency = (size_t)a->concurrency;
    if (!a->cls) {
        int group_gone = req.group && !rt__sched_group(&d->sched, req.group);
        a->ctor_status = RT_ENOMEM;
        rt__actors_set_death(d, a, group_gone ? RT__DEATH_GROUP : RT__DEATH_CTOR);
        rt__actors_bury(d, a);
        return;
    }
    rt__sched_push(&d->sched, a->cls, t);
}

size_t rt__dispatch_stop_actors(rt__dispatch *d)
{
    for (rt__actor *a = RT__FIRST(&d->actors, rt__actor, link); a;
         a = RT__NEXT(&d->actors, a, rt__actor, link)) {
        rt__lease *l = a->cls ? rt__sched_first_lease(a->cls) : NULL;
        if (l)
            rt__dispatch_node_of(d, l)->ops->stop(rt__dispatch_node_of(d, l), l->worker);
    }
    return d->running_actors;
}

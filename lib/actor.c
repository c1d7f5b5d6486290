/* actor.c - rt_actor_create(), rt_actor_call(), rt_actor_kill(), and what
 * the runtime thread does when an actor starts, dies or is killed. */
#include "actor.h"

#include "error.h"
#include "pool.h"
#include "runtime.h"
#include "worker.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define DEFAULT_NAME "actor"

/* [L] */
static rt__actor *actors;
static uint64_t next_actor_id;

static rt__actor *find(rt_actor handle)
{
    for (rt__actor *a = actors; a; a = a->next)
        if (a->id == handle.id)
            return a;
    return NULL;
}

/* ---- the public calls ---------------------------------------------------- */

static rt__actor *new_actor(const char *name)
{
    size_t len = strlen(name) + 1;
    rt__actor *a = calloc(1, sizeof *a + len);
    if (a)
        memcpy(a->name, name, len);
    return a;
}

/* [L] Register the actor and queue its constructor. */
static int start_actor(rt__actor *a, rt__task *create, rt__request *r)
{
    int rc = rt__check_running("rt_actor_create");
    if (rc == 0)
        rc = rt__request_resources(r);
    if (rc == 0 && !(a->cls = rt__sched_actor_class(&rt__rt.sched, &r->res, a)))
        rc = rt__error(RT_ENOMEM, "rt_actor_create: no memory for its class");
    if (rc < 0)
        return rc;
    a->id = ++next_actor_id;
    a->next = actors;
    actors = a;
    a->create = create;
    create->cls = a->cls;
    return rt__task_enqueue(create);
}

RT_EXPORT int rt_actor_create(const rt_actor_class *cls, const rt_opts *opts,
                              const void *arg, size_t arg_len, rt_actor *actor)
{
    if (rt__in_worker)
        return rt__error(RT_EINWORKER, "rt_actor_create: not inside a task");
    if (!cls || !actor || (!arg && arg_len))
        return rt__error(RT_EINVAL, "rt_actor_create: %s is NULL",
                         !cls ? "the class" : !actor ? "actor" : "arg");
    const char *name = opts && opts->name ? opts->name
                       : cls->name       ? cls->name
                                         : DEFAULT_NAME;
    rt__request r;
    rt__task *create = NULL;
    rt__actor *a = NULL;
    int rc = rt__request_resolve(opts, 1, &r);
    if (rc == 0)
        rc = rt__task_new(RT__KIND_CREATE, (rt__any_fn)cls->init, name, arg, arg_len,
                          &create);
    if (rc == 0 && !(a = new_actor(name)))
        rc = rt__error(RT_ENOMEM, "rt_actor_create: no memory for the actor");
    if (rc < 0)
        goto fail;
    a->fini = cls->fini;
    a->restarts_left = r.max_restarts;
    pthread_mutex_lock(&rt__rt.lock);
    rc = start_actor(a, create, &r);
    if (rc >= 0)
        actor->id = a->id;
    pthread_mutex_unlock(&rt__rt.lock);
    if (rc < 0)
        goto fail;
    if (rc)
        rt__wake();
    return 0;
fail:
    if (create)
        rt__task_free(create);
    free(a);
    return rc;
}

int rt__actor_death_error(rt__death death, const char *name, int pid, int ws,
                          int ctor_status)
{
    switch (death) {
    case RT__DEATH_KILLED:
        return rt__error(RT_EACTORDIED, "the actor %s was killed", name);
    case RT__DEATH_CTOR:
        return rt__error(RT_EACTORDIED, "the actor %s is dead: its constructor "
                                        "returned %d", name, ctor_status);
    default:
        if (WIFSIGNALED(ws))
            return rt__error(RT_EACTORDIED, "the actor %s (pid %d) died: killed by "
                                            "signal %d (%s)", name, pid,
                             WTERMSIG(ws), strsignal(WTERMSIG(ws)));
        return rt__error(RT_EACTORDIED, "the actor %s (pid %d) died: it exited "
                                        "with status %d", name, pid, WEXITSTATUS(ws));
    }
}

/* [L] Check that calls may go to the actor. */
static int callable(rt__actor *a)
{
    if (!a)
        return rt__error(RT_EBADREF, "rt_actor_call: unknown actor");
    if (a->kill_requested)
        return rt__actor_death_error(RT__DEATH_KILLED, a->name, a->pid, 0, 0);
    if (a->death)
        return rt__actor_death_error(a->death, a->name, a->pid, a->wait_status,
                                     a->ctor_status);
    return 0;
}

RT_EXPORT int rt_actor_call(rt_actor actor, rt_method method, const void *arg,
                            size_t arg_len, rt_ref *ref)
{
    if (rt__in_worker)
        return rt__error(RT_EINWORKER, "rt_actor_call: not inside a task");
    if (!method || !ref || (!arg && arg_len))
        return rt__error(RT_EINVAL, "rt_actor_call: %s is NULL",
                         !method ? "the method" : !ref ? "ref" : "arg");
    /* No name: the actor's worker keeps the one its constructor brought. */
    rt__task *t;
    int rc = rt__task_new(RT__KIND_CALL, (rt__any_fn)method, NULL, arg, arg_len, &t);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&rt__rt.lock);
    rc = rt__check_running("rt_actor_call");
    rt__actor *a = rc == 0 ? find(actor) : NULL;
    if (rc == 0)
        rc = callable(a);
    if (rc == 0) {
        t->cls = a->cls;
        rc = rt__task_submit(t, ref);
    }
    pthread_mutex_unlock(&rt__rt.lock);
    if (rc < 0) {
        rt__task_free(t);
        return rc;
    }
    if (rc)
        rt__wake();
    return 0;
}

RT_EXPORT int rt_actor_kill(rt_actor actor)
{
    if (rt__in_worker)
        return rt__error(RT_EINWORKER, "rt_actor_kill: not inside a task");
    pthread_mutex_lock(&rt__rt.lock);
    int rc = rt__check_running("rt_actor_kill");
    rt__actor *a = rc == 0 ? find(actor) : NULL;
    if (rc == 0 && !a)
        rc = rt__error(RT_EBADREF, "rt_actor_kill: unknown actor");
    int wake = 0;
    if (a && !a->kill_requested) {
        a->kill_requested = 1;
        wake = rt__need_wake();
    }
    pthread_mutex_unlock(&rt__rt.lock);
    if (wake)
        rt__wake();
    return rc;
}

/* ---- the runtime thread ------------------------------------------------ */

static rt__actor *actor_of(const rt__task *t)
{
    return t->cls->actor;
}

/* Fail a call because its actor died; the message is made by rt_get(),
 * under the lock, while the actor's name still exists. */
static void fail_call(rt__sched *s, rt__task *t, rt__actor *a, rt__death death)
{
    t->death = (unsigned char)death;
    t->name = (char *)a->name;
    t->worker_pid = a->pid;
    t->wait_status = a->wait_status;
    t->task_status = a->ctor_status;
    rt__sched_finish(s, t, RT_EACTORDIED);
}

/* The actor will run no more: fail its waiting calls, and forget its
 * class once nothing refers to it. */
static void bury(rt__sched *s, rt__actor *a, rt__death death)
{
    if (!a->death)
        a->death = death;
    for (rt__task *t; (t = rt__sched_pop(a->cls));)
        if (t != a->create)
            fail_call(s, t, a, a->death);
    if (a->cls->leases == 0 && a->cls->inflight == 0) {
        rt__sched_drop_class(s, a->cls);
        a->cls = NULL;
    }
}

void rt__actor_created(rt__sched *s, rt__task *create, int status, int pid)
{
    rt__actor *a = actor_of(create);
    a->pid = pid;
    if (status == RT_OK || a->killed)
        return;
    /* The worker leaves after a failed constructor; its exit ends the
     * lease.  Calls already sent to it fail then. */
    a->ctor_status = status == RT_ETASK ? create->task_status : status;
    bury(s, a, RT__DEATH_CTOR);
}

void rt__actor_lost(rt__sched *s, rt__worker *w)
{
    rt__actor *a = w->lease->actor;
    a->pid = w->pid;
    a->wait_status = w->wait_status;
    int restart = !a->killed && !a->death && a->restarts_left > 0;
    if (!restart && !a->death)
        a->death = a->killed ? RT__DEATH_KILLED : RT__DEATH_CRASHED;
    /* Calls it held are not run again: their effects may have happened. */
    for (rt__task *t; (t = rt__pool_pop(w));) {
        a->cls->inflight--;
        if (t != a->create)
            fail_call(s, t, a, a->death ? a->death : RT__DEATH_CRASHED);
    }
    rt__sched_give(s, a->cls, &w->grant);
    w->lease = NULL;
    if (restart) {
        a->restarts_left--;
        rt__sched_requeue(a->create);
    } else {
        bury(s, a, a->death);
    }
}

/* The worker that runs the actor, if its lease was granted. */
static rt__worker *worker_of(const rt__actor *a)
{
    for (rt__worker *w = rt__rt.pool.all; a->cls && w; w = w->next)
        if (w->lease == a->cls)
            return w;
    return NULL;
}

/* Calls not yet sent fail; the worker gets end of file after those it
 * has, so it finishes them, runs the destructor and exits, and its exit
 * gives the resources back (rt__actor_lost). */
static void kill_now(rt__sched *s, rt__actor *a)
{
    a->killed = 1;
    if (!a->cls)
        return; /* already dead */
    rt__worker *w = worker_of(a);
    if (w)
        rt__pool_stop_sending(w);
    bury(s, a, RT__DEATH_KILLED);
}

void rt__actor_reap_kills(rt__sched *s)
{
    for (rt__actor *a = actors; a; a = a->next)
        if (a->kill_requested && !a->killed)
            kill_now(s, a);
}

int rt__actors_stopping(void)
{
    int running = 0;
    for (rt__actor *a = actors; a; a = a->next) {
        rt__worker *w = worker_of(a);
        if (w && !w->gone) {
            rt__pool_stop_sending(w);
            running = 1;
        }
    }
    return running;
}

void rt__actors_free(void)
{
    while (actors) {
        rt__actor *a = actors;
        actors = a->next;
        rt__task_free(a->create);
        free(a);
    }
}

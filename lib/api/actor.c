/* actor.c - rt_actor_create(), rt_actor_call() and rt_actor_kill().  What
 * the runtime thread does with actors is in dispatch.c. */
#include "dispatch/actor.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/process.h"
#include "runtime/request.h"
#include "runtime/runtime.h"

#include <string.h>

#define DEFAULT_NAME "actor"

static rt__actor *new_actor(const char *name, const rt_actor_class *cls,
                            const rt__request *r)
{
    size_t len = strlen(name) + 1;
    rt__actor *a = rt__calloc(1, sizeof *a + len);
    if (!a)
        return NULL;
    memcpy(a->name, name, len);
    a->fini = cls->fini;
    a->restarts_left = r->max_restarts;
    return a;
}

/* [L] Give the actor a handle and queue its constructor; *old gets the
 * epitaph of a dead actor whose slot it took, for the caller to free. */
static int start_actor(rt__actor *a, rt__task *create, rt__request *r, void **old)
{
    int rc = rt__check_running("rt_actor_create");
    if (rc == 0 && create->fn)
        rc = rt__check_code((const void *)create->fn, "rt_actor_create", "the constructor");
    if (rc == 0 && a->fini)
        rc = rt__check_code((const void *)(uintptr_t)a->fini, "rt_actor_create",
                            "the destructor");
    if (rc == 0)
        rc = rt__request_place(&rt__rt.dispatch.sched, r, create);
    if (rc == 0 && rt__table_add(&rt__rt.actors, a, &a->handle, old) < 0)
        rc = rt__error(RT_ENOMEM, "rt_actor_create: no memory for its handle");
    if (rc < 0)
        return rc;
    create->actor = a;
    create->id = a->handle; /* how its answer is matched */
    return rt__submit(create);
}

RT_EXPORT int rt_actor_create(const rt_actor_class *cls, const rt_opts *opts,
                              const void *arg, size_t arg_len, rt_actor *actor)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_actor_create: not available inside a task");
    if (!cls || !actor || (!arg && arg_len))
        return rt__error(RT_EINVAL, "rt_actor_create: %s is NULL",
                         !cls ? "the class" : !actor ? "actor" : "arg");
    const char *name = opts && opts->name ? opts->name
                       : cls->name       ? cls->name
                                         : DEFAULT_NAME;
    rt__request r;
    rt__task *create = NULL;
    rt__actor *a = NULL;
    void *old = NULL;
    int rc = rt__request_resolve(opts, 1, &r);
    if (rc == 0)
        rc = rt__task_new(RT__KIND_CREATE, (rt__any_fn)cls->init, name, rt__request_needs(&r), arg,
                          arg_len, &create);
    if (rc == 0 && !(a = new_actor(name, cls, &r)))
        rc = rt__error(RT_ENOMEM, "rt_actor_create: no memory for the actor");
    if (rc < 0) {
        if (create)
            rt__task_free(create);
        return rc;
    }
    pthread_mutex_lock(&rt__rt.lock);
    rc = start_actor(a, create, &r, &old);
    if (rc >= 0)
        actor->id = a->handle;
    int refused = rc < 0;
    rc = rt__submit_done(create, rc); /* unlocks */
    if (refused)
        rt__free(a);
    rt__free(old);
    return rc;
}

/* [L] The live actor behind a handle, or an error: unknown, or dead (its
 * epitaph says why), or killed. */
static int find_live(rt_actor handle, const char *call, rt__actor **out)
{
    rt__actor *a = rt__table_find(&rt__rt.actors, handle.id);
    if (!a)
        return rt__error(RT_EBADREF, "%s: unknown actor", call);
    if (a->dead)
        return rt__error(RT_EACTORDIED, "%s", ((rt__epitaph *)(void *)a)->text);
    *out = a;
    if (a->kill_requested)
        return rt__error(RT_EACTORDIED, "the actor %s was killed", a->name);
    if (a->declared_dead) /* its epitaph was written before it was declared */
        return rt__error(RT_EACTORDIED, "%s", a->epitaph ? a->epitaph : "the actor died");
    return 0;
}

RT_EXPORT int rt_actor_call(rt_actor actor, rt_method method, const void *arg,
                            size_t arg_len, rt_ref *ref)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_actor_call: not available inside a task");
    if (!method || !ref || (!arg && arg_len))
        return rt__error(RT_EINVAL, "rt_actor_call: %s is NULL",
                         !method ? "the method" : !ref ? "ref" : "arg");
    /* No name: the actor's worker keeps the one its constructor brought. */
    rt__task *t;
    rt__actor *a = NULL;
    int rc = rt__task_new(RT__KIND_CALL, (rt__any_fn)method, NULL, 0, arg, arg_len, &t);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&rt__rt.lock);
    rc = rt__check_running("rt_actor_call");
    if (rc == 0)
        rc = rt__check_code((const void *)(uintptr_t)method, "rt_actor_call", "the method");
    if (rc == 0)
        rc = find_live(actor, "rt_actor_call", &a);
    if (rc == 0) {
        t->actor = a;
        rc = rt__submit_ref(t, ref);
    }
    return rt__submit_done(t, rc);
}

RT_EXPORT int rt_actor_kill(rt_actor actor)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_actor_kill: not available inside a task");
    rt__actor *a = NULL;
    int wake = 0;
    pthread_mutex_lock(&rt__rt.lock);
    int rc = rt__check_running("rt_actor_kill");
    if (rc == 0)
        rc = find_live(actor, "rt_actor_kill", &a);
    if (rc == RT_EACTORDIED)
        rc = 0; /* killing a dead actor does nothing */
    else if (rc == 0)
        wake = rt__submit_kill(a);
    pthread_mutex_unlock(&rt__rt.lock);
    if (wake)
        rt__submitted(wake);
    return rc;
}

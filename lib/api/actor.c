/* actor.c - rt_actor_create(), rt_actor_call() and rt_actor_kill().  What
 * the runtime thread does with actors is in dispatch/dispatch.c. */
#include "base/alloc.h"
#include "base/error.h"
#include "base/process.h"
#include "runtime/calls.h"

#include "args.h"

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
    int rc = rt__request_resolve(opts, 1, &r);
    if (rc == 0)
        rc = rt__task_new(RT__KIND_CREATE, (rt__any_fn)cls->init, name, rt__request_needs(&r),
                          arg, arg_len, &create);
    if (rc == 0 && !(a = new_actor(name, cls, &r)))
        rc = rt__error(RT_ENOMEM, "rt_actor_create: no memory for the actor");
    if (rc < 0) {
        if (create)
            rt__task_free(create);
        return rc;
    }
    return rt__call_actor_create(rt__runtime_here(), a, create, &r, actor);
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
    int rc = rt__task_new(RT__KIND_CALL, (rt__any_fn)method, NULL, 0, arg, arg_len, &t);
    if (rc < 0)
        return rc;
    return rt__call_actor_call(rt__runtime_here(), actor, t, NULL, "rt_actor_call", ref);
}

RT_EXPORT int rt_actor_call_args(rt_actor actor, rt_method_args method, const rt_arg *args,
                                 size_t nargs, rt_ref *ref)
{
    rt__task *t;
    int rc = rt__check_args("rt_actor_call_args", (const void *)method, args, nargs, ref);
    if (rc == 0)
        rc = rt__task_new_args(RT__KIND_CALL, (rt__any_fn)method, NULL, 0, args, nargs, &t);
    if (rc < 0)
        return rc;
    return rt__call_actor_call(rt__runtime_here(), actor, t, args, "rt_actor_call_args", ref);
}

RT_EXPORT int rt_actor_kill(rt_actor actor)
{
    if (rt__process_forked())
        return rt__error(RT_EINWORKER, "rt_actor_kill: not available inside a task");
    return rt__call_actor_kill(rt__runtime_here(), actor);
}

/* actor.c - rt_actor_create(), rt_actor_call(), rt_actor_get() and
 * rt_actor_kill().  What the round does with actors is in
 * dispatch/actors.c. */
#include "base/alloc.h"
#include "base/error.h"
#include "runtime/calls.h"

#include "args.h"
#include "front.h"

#include <string.h>

#define DEFAULT_NAME "actor"

static rt__actor *new_actor(const char *name, uint64_t fini, const rt__request *r)
{
    size_t len = strlen(name) + 1;
    rt__actor *a = rt__calloc(1, sizeof *a + len);
    if (!a)
        return NULL;
    memcpy(a->name, name, len);
    a->fini = (rt_actor_fini_fn)(uintptr_t)fini;
    a->restarts_left = r->max_restarts;
    a->task_retries = r->max_task_retries;
    a->concurrency = r->max_concurrency;
    return a;
}

/* An actor, from the application or (through its proxy) from a task. */
int rt__actor_create_form(const rt__submission *s, rt_ref *ref)
{
    const rt_opts *opts = s->opts;
    const char *name = opts && opts->name ? opts->name
                       : s->class_name    ? s->class_name
                                          : DEFAULT_NAME;
    rt__request r;
    rt__task *create = NULL;
    rt__actor *a = NULL;
    int rc = rt__request_resolve(opts, 1, &r);
    if (rc == 0)
        rc = rt__task_new(RT__KIND_CREATE, (rt__any_fn)(uintptr_t)s->fn, name, r.env,
                          rt__request_needs(&r), s->args[0].data, s->args[0].len, &create);
    if (rc == 0 && !(a = new_actor(name, s->actor, &r)))
        rc = rt__error(RT_ENOMEM, "rt_actor_create: no memory for the actor");
    if (rc < 0) {
        if (create)
            rt__task_free(create);
        return rc;
    }
    rt_actor out = {0};
    rc = rt__call_actor_create(rt__runtime_here(), a, create, &r, &out);
    ref->id = out.id;
    return rc;
}

RT_EXPORT int rt_actor_create(const rt_actor_class *cls, const rt_opts *opts,
                              const void *arg, size_t arg_len, rt_actor *actor)
{
    if (!cls || !actor || (!arg && arg_len))
        return rt__error(RT_EINVAL, "rt_actor_create: %s is NULL",
                         !cls ? "the class" : !actor ? "actor" : "arg");
    int rc = rt__check_len("rt_actor_create", "arg_len", arg_len);
    rt_arg one = RT_ARG_BYTES(arg ? arg : "", arg_len);
    rt__submission s = {.form = RT__SUBMIT_CREATE, .fn = (uint64_t)(uintptr_t)cls->init,
                        .actor = (uint64_t)(uintptr_t)cls->fini, .class_name = cls->name,
                        .opts = opts, .args = &one, .nargs = 1};
    rt_ref ref = {0};
    if (rc == 0)
        rc = rt__front_here()->submit(&s, &ref);
    actor->id = rc >= 0 ? ref.id : 0;
    return rc > 0 ? 0 : rc; /* found by its name (get_if_exists) */
}

int rt__actor_call_form(const rt__submission *s, rt_ref *ref)
{
    int list = s->form == RT__SUBMIT_CALL_ARGS;
    rt__any_fn method = (rt__any_fn)(uintptr_t)s->fn;
    /* No name: the actor's worker keeps the one its constructor brought. */
    rt__task *t;
    int rc = list ? rt__task_new_args(RT__KIND_CALL, method, NULL, NULL, 0, s->args,
                                      s->nargs, &t)
                  : rt__task_new(RT__KIND_CALL, method, NULL, NULL, 0, s->args[0].data,
                                 s->args[0].len, &t);
    if (rc < 0)
        return rc;
    return rt__call_actor_call(rt__runtime_here(), (rt_actor){s->actor}, t,
                               list ? s->args : NULL,
                               list ? "rt_actor_call_args" : "rt_actor_call", ref);
}

RT_EXPORT int rt_actor_call(rt_actor actor, rt_method method, const void *arg,
                            size_t arg_len, rt_ref *ref)
{
    if (!method || !ref || (!arg && arg_len))
        return rt__error(RT_EINVAL, "rt_actor_call: %s is NULL",
                         !method ? "the method" : !ref ? "ref" : "arg");
    int rc = rt__check_len("rt_actor_call", "arg_len", arg_len);
    rt_arg one = RT_ARG_BYTES(arg ? arg : "", arg_len);
    rt__submission s = {RT__SUBMIT_CALL, (uint64_t)(uintptr_t)method, actor.id, NULL, &one, 1,
                        NULL, 0};
    return rc < 0 ? rc : rt__front_here()->submit(&s, ref);
}

RT_EXPORT int rt_actor_call_args(rt_actor actor, rt_method_args method, const rt_arg *args,
                                 size_t nargs, rt_ref *ref)
{
    int rc = rt__check_args("rt_actor_call_args", (const void *)method, args, nargs, ref);
    rt__submission s = {RT__SUBMIT_CALL_ARGS, (uint64_t)(uintptr_t)method, actor.id, NULL,
                        args, nargs, NULL, 0};
    return rc < 0 ? rc : rt__front_here()->submit(&s, ref);
}

int rt__app_actor_kill(rt_actor actor)
{
    return rt__call_actor_kill(rt__runtime_here(), actor, 0);
}

RT_EXPORT int rt_actor_kill(rt_actor actor)
{
    return rt__front_here()->actor_kill(actor);
}

int rt__app_actor_get(const char *name, rt_actor *actor)
{
    return rt__call_actor_get(rt__runtime_here(), name, actor);
}

RT_EXPORT int rt_actor_get(const char *name, rt_actor *actor)
{
    if (!name || !*name || !actor)
        return rt__error(RT_EINVAL, "rt_actor_get: %s", !actor ? "actor is NULL"
                                                        : "no name given");
    return rt__front_here()->actor_get(name, actor);
}

int rt__app_actor_restart(rt_actor actor)
{
    return rt__call_actor_kill(rt__runtime_here(), actor, 1);
}

RT_EXPORT int rt_actor_restart(rt_actor actor)
{
    return rt__front_here()->actor_restart(actor);
}

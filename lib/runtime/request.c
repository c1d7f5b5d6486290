/* request.c - task and actor options, checked and matched with the node. */
#include "request.h"

#include "base/error.h"
#include "devices/family.h"
#include "sched/scheduler.h"
#include "sched/labels.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_MAX_RETRIES 3 /* as Ray */
#define NAME_MAX_BYTES 200
#define TIMEOUT_MAX_MS 2000000000L /* about 23 days */
#define ENV_MAX_BYTES 8192
#define ENV_LINE_MAX 1023 /* a worker sets a variable of this much at most */

/* env_vars: "NAME=value" lines (empty ones skipped); NULL when it names
 * none.  0, or RT_EINVAL with a message. */
static int resolve_env(const char *text, const char **out)
{
    *out = NULL;
    if (!text)
        return 0;
    if (strlen(text) > ENV_MAX_BYTES)
        return rt__error(RT_EINVAL, "env_vars is longer than %d bytes", ENV_MAX_BYTES);
    for (const char *p = text; *p; p += strcspn(p, "\n"), p += *p == '\n') {
        size_t len = strcspn(p, "\n"), name = strcspn(p, "=");
        if (len == 0)
            continue;
        if (name >= len || name == 0)
            return rt__error(RT_EINVAL, "env_vars: \"%.*s\" is not NAME=value",
                             (int)(len > 40 ? 40 : len), p);
        if (len > ENV_LINE_MAX)
            return rt__error(RT_EINVAL, "env_vars: %.*s's line is longer than %d bytes",
                             (int)(name > 40 ? 40 : name), p, ENV_LINE_MAX);
        *out = text;
    }
    return 0;
}

/* A count field: RT_DEFAULT, or 0 in a struct that was only zeroed, takes
 * the default; other negatives are refused. */
static int resolve_count(int v, int zeroed, int dflt, const char *what, int *out)
{
    if (v == RT_DEFAULT || (zeroed && v == 0)) {
        *out = dflt;
        return 0;
    }
    if (v < 0)
        return rt__error(RT_EINVAL, "%s must be RT_DEFAULT or >= 0; %d is invalid",
                         what, v);
    *out = v;
    return 0;
}

/* A GPU amount is a fraction of one GPU or a whole number of them. */
static int resolve_gpus(double gpus, rt__amount *out)
{
    int rc = rt__amount_parse(gpus == RT_DEFAULT ? 0 : gpus, "num_gpus", out);
    if (rc == 0 && *out > RT__UNIT && *out % RT__UNIT)
        rc = rt__error(RT_EINVAL, "GPU quantities above 1 must be whole numbers; "
                                  "%g is invalid", gpus);
    return rc;
}

/* Accelerators besides GPUs (family.h), each by its family's rule: one
 * family per request, never with GPUs, since a node's are of one kind. */
static int check_families(const rt__request *r)
{
    const char *seen = NULL;
    for (int i = 0; i < r->nitems; i++) {
        rt__family f = rt__family_of_resource(r->items[i].name);
        if (f == RT__FAM_NONE || r->items[i].amount == 0)
            continue;
        int rc = rt__family_check(f, (double)r->items[i].amount / RT__UNIT);
        if (rc < 0)
            return rc;
        if (r->res.gpu > 0 || r->res.gpu_bytes > 0 || seen)
            return rt__error(RT_EINVAL, "a request cannot have both %s and %s; ask for "
                             "one kind of accelerator", seen ? seen : "GPUs",
                             r->items[i].name);
        seen = r->items[i].name;
    }
    return 0;
}

/* Custom resources, other accelerators among them, and the accelerator
 * type, which is a custom resource too. */
static int resolve_items(const rt_opts *o, rt__request *r)
{
    int rc = rt__items_parse(o->resources, "resources", r->items, &r->nitems);
    if (rc == 0)
        rc = check_families(r);
    if (rc == 0 && o->accelerator_type) {
        char name[RT__NAME_LEN + 32];
        snprintf(name, sizeof name, RT__ACCEL_PREFIX "%s", o->accelerator_type);
        rc = *o->accelerator_type
                 ? rt__items_add(r->items, &r->nitems, name, RT__ACCEL_AMOUNT,
                                 "accelerator_type")
                 : rt__error(RT_EINVAL, "accelerator_type is empty; use NULL for any");
    }
    return rc;
}

/* Tasks hold 1 CPU by default and actors none, as in Ray: an actor that
 * mostly waits for calls should not keep a CPU from tasks. */
static int resolve_cpus(const rt_opts *o, int zeroed, int actor, rt__amount *out)
{
    double cpus = o->num_cpus;
    if (cpus == RT_DEFAULT || (zeroed && cpus == 0))
        cpus = actor ? 0 : 1;
    return rt__amount_parse(cpus, "num_cpus", out);
}

/* A 0-or-1 option that only tasks take: rc, or an error naming it
 * (why: what an actor does instead). */
static int task_flag(int rc, int actor, int value, const char *name, const char *why)
{
    if (rc == 0 && (value & ~1))
        rc = rt__error(RT_EINVAL, "%s must be 0 or 1; %d is invalid", name, value);
    if (rc == 0 && actor && value)
        rc = rt__error(RT_EINVAL, "%s is for tasks: %s", name, why);
    return rc;
}

/* The placement group and its bundle (-1: any).  A group's bundles say
 * where its tasks run: a label selector of their own would only narrow
 * that, and a share of GPU memory asks for what a bundle does not hold. */
static int resolve_group(const rt_opts *o, int zeroed, rt__request *r)
{
    int bundle = o->bundle_index == RT_DEFAULT || (zeroed && o->bundle_index == 0)
                     ? -1 : o->bundle_index;
    r->res.group = o->placement_group.id;
    r->res.bundle = bundle;
    if (bundle < -1)
        return rt__error(RT_EINVAL, "bundle_index must be RT_DEFAULT or >= 0; %d is "
                         "invalid", o->bundle_index);
    if (!r->res.group && bundle >= 0)
        return rt__error(RT_EINVAL, "bundle_index %d without a placement_group", bundle);
    if (r->res.group && r->selector)
        return rt__error(RT_EINVAL, "label_selector and placement_group: a group's tasks "
                                    "run where its bundles are (give the bundles "
                                    "label selectors)");
    if (r->res.group && r->res.gpu_bytes)
        return rt__error(RT_EINVAL, "gpu_memory in a placement group: its bundles hold "
                                    "GPUs by number; give num_gpus");
    return 0;
}

int rt__request_resolve(const rt_opts *o, int actor, rt__request *r)
{
    rt_opts dflt = RT_OPTS_INIT;
    if (!o)
        o = &dflt;
    int zeroed = o->init_magic_ != RT_OPTS_MAGIC_;
    memset(&r->res, 0, sizeof r->res);
    int rc = resolve_cpus(o, zeroed, actor, &r->res.cpu);
    if (rc == 0)
        rc = resolve_gpus(o->num_gpus, &r->res.gpu);
    r->res.gpu_bytes = o->gpu_memory;
    r->selector = o->label_selector && *o->label_selector ? o->label_selector : NULL;
    if (rc == 0)
        rc = rt__selector_check(r->selector);
    if (rc == 0 && o->gpu_memory > (unsigned long long)INT64_MAX)
        rc = rt__error(RT_EINVAL, "gpu_memory of %llu bytes is too large", o->gpu_memory);
    if (rc == 0 && r->res.gpu && r->res.gpu_bytes)
        rc = rt__error(RT_EINVAL, "num_gpus and gpu_memory are two ways to ask for GPU; "
                                  "give one");
    /* GPU tasks get a fresh worker each, so GPU memory a task leaks dies
     * with its process.  Actors have a process of their own anyway. */
    int gpu = r->res.gpu > 0 || r->res.gpu_bytes > 0;
    if (rc == 0)
        rc = resolve_count(o->max_calls, zeroed, gpu ? 1 : 0, "max_calls", &r->max_calls);
    if (rc == 0)
        rc = resolve_count(o->max_retries, zeroed, DEFAULT_MAX_RETRIES,
                           "max_retries", &r->max_retries);
    if (rc == 0)
        rc = resolve_count(o->max_restarts, zeroed, 0, "max_restarts",
                           &r->max_restarts);
    if (rc == 0)
        rc = resolve_count(o->max_task_retries, zeroed, 0, "max_task_retries",
                           &r->max_task_retries);
    if (rc == 0)
        rc = resolve_count(o->max_concurrency, zeroed, 1, "max_concurrency",
                           &r->max_concurrency);
    if (rc == 0 && (r->max_concurrency < 1 || r->max_concurrency > RT__CONCURRENCY_MAX))
        rc = rt__error(RT_EINVAL, "max_concurrency must be from 1 to %d; %d is invalid",
                       RT__CONCURRENCY_MAX, r->max_concurrency);
    if (rc == 0 && !actor && r->max_concurrency != 1)
        rc = rt__error(RT_EINVAL, "max_concurrency is for actors: a task runs alone in "
                                  "its worker");
    if (rc == 0 && !actor && r->max_task_retries)
        rc = rt__error(RT_EINVAL, "max_task_retries is for actors: a task's runs are "
                                  "max_retries");
    if (rc == 0)
        rc = resolve_items(o, r);
    if (rc == 0)
        rc = resolve_group(o, zeroed, r);
    if (rc == 0 && (o->timeout_ms < 0 || o->timeout_ms > TIMEOUT_MAX_MS))
        rc = rt__error(RT_EINVAL, "timeout_ms must be from 0 (no limit) to %ld; %ld is "
                       "invalid", TIMEOUT_MAX_MS, o->timeout_ms);
    if (rc == 0 && actor && o->timeout_ms)
        rc = rt__error(RT_EINVAL, "timeout_ms is for tasks: an actor lives until it is "
                                  "killed (rt_actor_kill())");
    r->timeout_ms = (uint32_t)(rc == 0 ? o->timeout_ms : 0);
    rc = task_flag(rc, actor, o->retry_exceptions, "retry_exceptions",
                   "an actor's calls are never run again");
    r->retry_exceptions = rc == 0 && o->retry_exceptions;
    if (rc == 0 && o->name && strlen(o->name) > NAME_MAX_BYTES)
        rc = rt__error(RT_EINVAL, "name is longer than %d bytes", NAME_MAX_BYTES);
    if (rc == 0)
        rc = resolve_env(o->env_vars, &r->env);
    if (rc == 0 && (o->get_if_exists & ~1 || o->detached & ~1))
        rc = rt__error(RT_EINVAL, "%s must be 0 or 1; %d is invalid",
                       o->get_if_exists & ~1 ? "get_if_exists" : "detached",
                       o->get_if_exists & ~1 ? o->get_if_exists : o->detached);
    if (rc == 0 && !actor && (o->get_if_exists || o->detached))
        rc = rt__error(RT_EINVAL, "%s is for actors", o->get_if_exists ? "get_if_exists"
                                                                        : "detached");
    if (rc == 0 && (o->num_returns < RT_DEFAULT || o->num_returns > RT_RETURNS_MAX))
        rc = rt__error(RT_EINVAL, "num_returns must be from 1 to RT_RETURNS_MAX (%d), or "
                       "RT_DEFAULT; %d is invalid", RT_RETURNS_MAX, o->num_returns);
    r->num_returns = rc == 0 && o->num_returns > 1 ? o->num_returns : 1;
    if (rc == 0 && actor && r->num_returns > 1)
        rc = rt__error(RT_EINVAL, "num_returns is for tasks: an actor's calls give one "
                                  "result each");
    rc = task_flag(rc, actor, o->nondeterministic, "nondeterministic",
                   "actors are never taken from a checkpoint");
    r->nondeterministic = rc == 0 && o->nondeterministic;
    r->named = actor && o->name && *o->name;
    r->get_if_exists = o->get_if_exists;
    r->detached = o->detached;
    if (rc == 0 && r->get_if_exists && !r->named)
        rc = rt__error(RT_EINVAL, "get_if_exists needs a name: opts.name");
    if (actor) {
        r->max_calls = 0;
        r->max_retries = 0;
    }
    return rc;
}

/* The custom resources of a request, in the room the record has for
 * them (one per item asked for); an unused entry has index -1. */
static void needs_of(const rt__res *res, int nnames, rt__need *needs, int room)
{
    int n = 0;
    for (int i = 0; i < nnames && n < room; i++)
        if (res->custom[i])
            needs[n++] = (rt__need){i, res->custom[i]};
    if (res->gpu_bytes && n < room)
        needs[n++] = (rt__need){RT__NEED_GPU_BYTES, (rt__amount)res->gpu_bytes};
    if (res->nodes && n < room)
        needs[n++] = (rt__need){RT__NEED_NODES, (rt__amount)(intptr_t)res->nodes};
    if (res->group && n + 1 < room) {
        needs[n++] = (rt__need){RT__NEED_GROUP, (rt__amount)res->group};
        needs[n++] = (rt__need){RT__NEED_BUNDLE, (rt__amount)res->bundle};
    }
    while (n < room)
        needs[n++] = (rt__need){-1, 0};
}

int rt__request_needs(const rt__request *r)
{
    return r->nitems + (r->res.gpu_bytes > 0) + (r->selector != NULL) +
           2 * (r->res.group != 0);
}

int rt__request_place(const rt__sched *s, const rt__group *group, rt__request *r,
                      rt__task *t)
{
    int rc = rt__res_request(&s->names, r->items, r->nitems, &r->res);
    if (rc == 0)
        rc = rt__sched_select(s, r->selector, &r->res.nodes);
    if (rc == 0)
        rc = group ? rt__group_admits(s, group, &r->res) : rt__sched_feasible(s, &r->res);
    if (rc == 0)
        rc = rt__request_write(s, r, t);
    return rc;
}

int rt__request_bundle(const rt__sched *s, const rt_bundle *b, rt__res *res)
{
    rt__request r;
    memset(&r, 0, sizeof r);
    int rc = rt__amount_parse(b->num_cpus, "num_cpus", &r.res.cpu);
    if (rc == 0)
        rc = resolve_gpus(b->num_gpus, &r.res.gpu);
    if (rc == 0)
        rc = rt__items_parse(b->resources, "resources", r.items, &r.nitems);
    if (rc == 0)
        rc = check_families(&r);
    if (rc == 0)
        rc = rt__res_request(&s->names, r.items, r.nitems, &r.res);
    const char *selector = b->label_selector && *b->label_selector ? b->label_selector : NULL;
    if (rc == 0)
        rc = rt__selector_check(selector);
    if (rc == 0)
        rc = rt__sched_select(s, selector, &r.res.nodes);
    rt__res none;
    memset(&none, 0, sizeof none);
    none.nodes = r.res.nodes;
    if (rc == 0 && rt__res_equal(&r.res, &none))
        rc = rt__error(RT_EINVAL, "it holds nothing: give num_cpus, num_gpus or resources");
    *res = r.res;
    return rc;
}

int rt__request_write(const rt__sched *s, const rt__request *r, rt__task *t)
{
    if (r->timeout_ms) {
        if (!rt__task_more(t))
            return rt__error(RT_ENOMEM, "no memory for the task's time limit");
        t->call.more->timeout_ms = r->timeout_ms;
    }
    t->call.cpu = r->res.cpu;
    t->call.gpu = r->res.gpu;
    t->call.max_calls = r->max_calls;
    t->call.retry_exceptions = (unsigned char)r->retry_exceptions;
    t->run.retries_left = r->max_retries;
    needs_of(&r->res, s->names.count, (rt__need *)(void *)t->tail, t->call.nneeds);
    return 0;
}

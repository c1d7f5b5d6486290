/*
 * state.c - the state API (rt_list_tasks() and its kin): what the
 * runtime holds now, read by the round's holder, which alone may look at
 * where tasks run (an errand: round.c), under the lock for the handle
 * tables.  Each list is one rt__buf_alloc()ed array for rt_free().
 */
#include "calls.h"

#include "runtime.h"

#include "base/alloc.h"
#include "base/error.h"
#include "node/output.h"

#include <stdio.h>
#include <string.h>

typedef struct listing {
    const char *call;
    size_t each;                              /* bytes of an entry */
    const rt__table *(*table)(rt__runtime *); /* the table listed */
    /* Fill entry out from item (handle id); 0 when the item is not
     * listed here. */
    int (*fill)(rt__runtime *rt, void *item, uint64_t id, void *out);
    void *list;       /* what the errand made */
    size_t n;
} listing;

static double amount(rt__amount a)
{
    return (double)a / RT__UNIT;
}

/* The round holder's errand: a first look for the size under the lock,
 * the array made outside it, then filled under it (what came meanwhile
 * past the first count is left out). */
static int list_table(rt__runtime *rt, void *ctx)
{
    listing *l = ctx;
    pthread_mutex_lock(&rt->lock);
    uint32_t cap = l->table(rt)->used;
    pthread_mutex_unlock(&rt->lock);
    char *out = rt__buf_alloc((size_t)cap * l->each + 1);
    if (!out)
        return rt__error(RT_ENOMEM, "%s: no memory for %u entries", l->call, cap);
    size_t n = 0;
    pthread_mutex_lock(&rt->lock);
    const rt__table *t = l->table(rt);
    for (uint32_t i = 0; i < t->used && n < cap; i++) {
        uint64_t id;
        void *item = rt__table_at(t, i, &id);
        n += item && l->fill(rt, item, id, out + n * l->each);
    }
    pthread_mutex_unlock(&rt->lock);
    l->list = out;
    l->n = n;
    return 0;
}

static const rt__table *tasks_of(rt__runtime *rt)
{
    return &rt->tasks;
}

/* ---- tasks ------------------------------------------------------------------------ */

static int fill_task(rt__runtime *rt, void *item, uint64_t id, void *out)
{
    rt__task *t = item;
    rt_task_info *i = out;
    if (!t->call.fn)
        return 0; /* rt_put()'s */
    *i = (rt_task_info){.ref = {id}, .node = -1, .num_cpus = amount(t->call.cpu),
                        .num_gpus = amount(t->call.gpu), .attempt = rt__task_attempt(t),
                        .actor = {t->call.kind == RT__KIND_CALL && t->call.actor ? t->call.actor->handle : 0}};
    snprintf(i->name, sizeof i->name, "%s", rt__task_name((uint64_t)(uintptr_t)t->call.fn, rt__task_named(t)));
    uint64_t pid = 0;
    if (t->obj.state == RT__TASK_DONE || t->run.ended) {
        i->state = t->obj.status == RT_OK ? RT_TASK_FINISHED : RT_TASK_FAILED;
        i->error = t->obj.status;
    } else if (rt__dispatch_where(&rt->dispatch, t, &i->node, &pid)) {
        i->state = RT_TASK_RUNNING;
        i->pid = (long)pid;
    }
    return 1;
}


/* ---- objects ------------------------------------------------------------------------ */

static int fill_object(rt__runtime *rt, void *item, uint64_t id, void *out)
{
    rt__task *t = item;
    (void)rt;
    if (!(t->obj.state == RT__TASK_DONE && t->obj.status == RT_OK))
        return 0; /* no bytes (yet) */
    *(rt_object_info *)out = (rt_object_info){.ref = {id}, .size = t->obj.result_len,
                                              .node = t->obj.holder, .holds = t->obj.holds,
                                              .put = !t->call.fn && !rt__task_whole(t)};
    return 1;
}


/* ---- actors -------------------------------------------------------------------------- */

static const rt__table *actors_of(rt__runtime *rt)
{
    return &rt->actors;
}

static int fill_actor(rt__runtime *rt, void *item, uint64_t id, void *out)
{
    rt__actor *a = item;
    rt_actor_info *i = out;
    if (a->dead)
        return 0; /* an epitaph: buried */
    uint64_t pid = 0;
    *i = (rt_actor_info){.actor = {id}, .named = a->named, .restarts_left = a->restarts_left};
    snprintf(i->name, sizeof i->name, "%s", a->name);
    int placed = rt__dispatch_actor_where(&rt->dispatch, a, &i->node, &pid);
    i->pid = (long)pid;
    i->state = a->declared_dead || a->kill_requested || a->death ? RT_ACTOR_DEAD
               : a->restarting                                  ? RT_ACTOR_RESTARTING
               : placed && (pid > 0 || i->node > 0)             ? RT_ACTOR_ALIVE
                                                                : RT_ACTOR_PENDING;
    return 1;
}


/* ---- placement groups ------------------------------------------------------------------ */

static const rt__table *groups_of(rt__runtime *rt)
{
    return &rt->groups;
}

static int fill_group(rt__runtime *rt, void *item, uint64_t id, void *out)
{
    const rt__group *g = item;
    rt_pg_info *i = out;
    (void)rt;
    if (g->state == RT__GROUP_REMOVED)
        return 0;
    *i = (rt_pg_info){.pg = {id}, .strategy = g->strategy, .nbundles = g->nbundles,
                      .state = g->state == RT__GROUP_PLACED ? RT_PG_CREATED : RT_PG_PENDING};
    for (size_t k = 0; k < g->nbundles; k++) {
        i->num_cpus += amount(g->bundle[k].res.cpu);
        i->num_gpus += amount(g->bundle[k].res.gpu);
    }
    return 1;
}

/* ---- the lists ------------------------------------------------------------------------ */

int rt__call_list(rt__runtime *rt, rt__list_kind kind, void **out, size_t *n)
{
    static const listing kinds[] = {
        [RT__LIST_TASKS] = {.call = "rt_list_tasks", .each = sizeof(rt_task_info),
                            .table = tasks_of, .fill = fill_task},
        [RT__LIST_ACTORS] = {.call = "rt_list_actors", .each = sizeof(rt_actor_info),
                             .table = actors_of, .fill = fill_actor},
        [RT__LIST_OBJECTS] = {.call = "rt_list_objects", .each = sizeof(rt_object_info),
                              .table = tasks_of, .fill = fill_object},
        [RT__LIST_GROUPS] = {.call = "rt_list_placement_groups", .each = sizeof(rt_pg_info),
                             .table = groups_of, .fill = fill_group},
    };
    listing l = kinds[kind];
    int rc = rt__errand_ask(rt, l.call, list_table, &l);
    if (rc == 0)
        *out = l.list, *n = l.n;
    return rc;
}

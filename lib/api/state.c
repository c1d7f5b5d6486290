/* state.c - the state API, rt_list_tasks() and its kin, and the report
 * rtask-status(1) prints from it (statusd.c serves it). */
#include "statusd.h"

#include "base/error.h"
#include "runtime/calls.h"

#include "front.h"

#include <string.h>

/* A list of kind for call: the checks, then the runtime's books. */
static int list(const char *call, rt__list_kind kind, void **out, size_t *n)
{
    if (!out || !n)
        return rt__error(RT_EINVAL, "%s: NULL argument", call);
    int rc = rt__front_here()->application_only(call, "the state is the application's "
                                                "(rtask-status(1) reads it from outside)");
    return rc < 0 ? rc : rt__call_list(rt__runtime_here(), kind, out, n);
}

RT_EXPORT int rt_list_tasks(rt_task_info **out, size_t *n)
{
    void *l = NULL;
    int rc = list("rt_list_tasks", RT__LIST_TASKS, out ? &l : NULL, n);
    if (rc == 0)
        *out = l;
    return rc;
}

RT_EXPORT int rt_list_actors(rt_actor_info **out, size_t *n)
{
    void *l = NULL;
    int rc = list("rt_list_actors", RT__LIST_ACTORS, out ? &l : NULL, n);
    if (rc == 0)
        *out = l;
    return rc;
}

RT_EXPORT int rt_list_objects(rt_object_info **out, size_t *n)
{
    void *l = NULL;
    int rc = list("rt_list_objects", RT__LIST_OBJECTS, out ? &l : NULL, n);
    if (rc == 0)
        *out = l;
    return rc;
}

RT_EXPORT int rt_list_placement_groups(rt_pg_info **out, size_t *n)
{
    void *l = NULL;
    int rc = list("rt_list_placement_groups", RT__LIST_GROUPS, out ? &l : NULL, n);
    if (rc == 0)
        *out = l;
    return rc;
}

/* ---- the report ------------------------------------------------------------------- */

static const char *task_states[] = {"WAITING", "RUNNING", "FINISHED", "FAILED"};
static const char *actor_states[] = {"PENDING", "ALIVE", "RESTARTING", "DEAD"};
static const char *group_states[] = {"PENDING", "CREATED"};
static const char *strategies[] = {"PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"};

/* What the report shows of a handle: its slot, not the handle.  A handle
 * is a secret that only who was given it knows (a task cannot reach
 * others' objects by guessing), and a task's process is the user's too,
 * so it could read the report: the slot alone (the handle's low half)
 * reaches nothing. */
static unsigned slot_of(uint64_t handle)
{
    return (unsigned)(handle & 0xffffffffu);
}

/* A name as a JSON string's body: quotes, backslashes and controls
 * escaped. */
static void json_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

static void each_task(FILE *f, const void *entry, int json)
{
    const rt_task_info *t = entry;
    if (!json) {
        fprintf(f, "%-6u %-24s %-9s %4d %7ld %5.2f %5.2f %7u\n", slot_of(t->ref.id),
                t->name, task_states[t->state], t->node, t->pid, t->num_cpus, t->num_gpus,
                t->attempt);
        return;
    }
    fprintf(f, "{\"slot\": %u, \"name\": \"", slot_of(t->ref.id));
    json_text(f, t->name);
    fprintf(f, "\", \"state\": \"%s\", \"error\": %d, \"node\": %d, \"pid\": %ld, "
            "\"num_cpus\": %g, \"num_gpus\": %g, \"attempt\": %u, \"actor_slot\": %u}",
            task_states[t->state], t->error, t->node, t->pid, t->num_cpus, t->num_gpus,
            t->attempt, slot_of(t->actor.id));
}

static void each_actor(FILE *f, const void *entry, int json)
{
    const rt_actor_info *a = entry;
    if (!json) {
        fprintf(f, "%-6u %-24s %-10s %4d %7ld %8d\n", slot_of(a->actor.id),
                a->name, actor_states[a->state], a->node, a->pid, a->restarts_left);
        return;
    }
    fprintf(f, "{\"slot\": %u, \"name\": \"", slot_of(a->actor.id));
    json_text(f, a->name);
    fprintf(f, "\", \"named\": %s, \"state\": \"%s\", \"node\": %d, \"pid\": %ld, "
            "\"restarts_left\": %d}", a->named ? "true" : "false", actor_states[a->state],
            a->node, a->pid, a->restarts_left);
}

static void each_object(FILE *f, const void *entry, int json)
{
    const rt_object_info *o = entry;
    if (!json)
        fprintf(f, "%-6u %12zu %4d %5u %s\n", slot_of(o->ref.id), o->size,
                o->node, o->holds, o->put ? "rt_put" : "result");
    else
        fprintf(f, "{\"slot\": %u, \"size\": %zu, \"node\": %d, \"holds\": %u, "
                "\"put\": %s}", slot_of(o->ref.id), o->size, o->node, o->holds,
                o->put ? "true" : "false");
}

static void each_group(FILE *f, const void *entry, int json)
{
    const rt_pg_info *g = entry;
    if (!json)
        fprintf(f, "%-6u %-8s %-13s %7zu %5.2f %5.2f\n", slot_of(g->pg.id),
                group_states[g->state], strategies[g->strategy], g->nbundles, g->num_cpus,
                g->num_gpus);
    else
        fprintf(f, "{\"slot\": %u, \"state\": \"%s\", \"strategy\": \"%s\", \"bundles\": %zu, "
                "\"num_cpus\": %g, \"num_gpus\": %g}", slot_of(g->pg.id),
                group_states[g->state], strategies[g->strategy], g->nbundles, g->num_cpus,
                g->num_gpus);
}


/* Each node's resources: total and free, from the books' census. */
static int print_nodes(FILE *f, int json)
{
    rt_resource *total = NULL, *free_now = NULL;
    size_t n = 0, m = 0;
    int rc = rt_cluster_resources(&total, &n);
    if (rc == 0)
        rc = rt_available_resources(&free_now, &m);
    fputs(json ? "[" : "NODE RESOURCE                          TOTAL  AVAILABLE\n", f);
    for (size_t i = 0, k = 0; rc == 0 && i < n; i++) {
        double left = 0;
        for (size_t j = 0; j < m; j++)
            if (free_now[j].node == total[i].node && strcmp(free_now[j].name, total[i].name) == 0)
                left = free_now[j].amount;
        if (total[i].node < 0)
            continue; /* the sums, which `status` shows */
        if (json) {
            fprintf(f, "%s{\"node\": %d, \"resource\": \"", k++ ? ", " : "", total[i].node);
            json_text(f, total[i].name);
            fprintf(f, "\", \"total\": %g, \"available\": %g}", total[i].amount, left);
        } else {
            fprintf(f, "%4d %-30s %8g %10g\n", total[i].node, total[i].name, total[i].amount,
                    left);
        }
    }
    fputs(json ? "]\n" : "", f);
    rt_free(total);
    rt_free(free_now);
    return rc;
}

/* As `ray status`: the whole machine's (or job's) resources, used of
 * total, and how many tasks, actors, objects and groups are in each
 * state. */
static int print_status(FILE *f, int json)
{
    rt_resource *total = NULL, *free_now = NULL;
    rt_task_info *tasks = NULL;
    rt_actor_info *actors = NULL;
    rt_object_info *objects = NULL;
    rt_pg_info *groups = NULL;
    size_t n = 0, m = 0, nt = 0, na = 0, no = 0, ng = 0;
    int rc = rt_cluster_resources(&total, &n);
    if (rc == 0)
        rc = rt_available_resources(&free_now, &m);
    if (rc == 0)
        rc = rt_list_tasks(&tasks, &nt);
    if (rc == 0)
        rc = rt_list_actors(&actors, &na);
    if (rc == 0)
        rc = rt_list_objects(&objects, &no);
    if (rc == 0)
        rc = rt_list_placement_groups(&groups, &ng);
    size_t ts[4] = {0}, as[4] = {0}, gs[2] = {0}, bytes = 0;
    for (size_t i = 0; rc == 0 && i < nt; i++)
        ts[tasks[i].state]++;
    for (size_t i = 0; rc == 0 && i < na; i++)
        as[actors[i].state]++;
    for (size_t i = 0; rc == 0 && i < no; i++)
        bytes += objects[i].size;
    for (size_t i = 0; rc == 0 && i < ng; i++)
        gs[groups[i].state]++;
    fputs(json ? "{\"resources\": [" : "======== rtask status ========\nResources (used/total)\n", f);
    for (size_t i = 0, k = 0; rc == 0 && i < n; i++) {
        if (total[i].node >= 0)
            continue;
        double left = 0;
        for (size_t j = 0; j < m; j++)
            if (free_now[j].node < 0 && strcmp(free_now[j].name, total[i].name) == 0)
                left = free_now[j].amount;
        if (json) {
            fprintf(f, "%s{\"resource\": \"", k++ ? ", " : "");
            json_text(f, total[i].name);
            fprintf(f, "\", \"used\": %g, \"total\": %g}", total[i].amount - left,
                    total[i].amount);
        } else {
            fprintf(f, " %g/%g %s\n", total[i].amount - left, total[i].amount, total[i].name);
        }
    }
    if (rc == 0 && json)
        fprintf(f, "], \"tasks\": {\"WAITING\": %zu, \"RUNNING\": %zu, \"FINISHED\": %zu, "
                "\"FAILED\": %zu}, \"actors\": {\"PENDING\": %zu, \"ALIVE\": %zu, "
                "\"RESTARTING\": %zu, \"DEAD\": %zu}, \"objects\": {\"count\": %zu, "
                "\"bytes\": %zu}, \"placement_groups\": {\"PENDING\": %zu, \"CREATED\": %zu}}\n",
                ts[0], ts[1], ts[2], ts[3], as[0], as[1], as[2], as[3], no, bytes, gs[0], gs[1]);
    else if (rc == 0)
        fprintf(f, "Tasks: %zu waiting, %zu running, %zu finished, %zu failed\n"
                "Actors: %zu pending, %zu alive, %zu restarting, %zu dead\n"
                "Objects: %zu, %zu bytes\n"
                "Placement groups: %zu pending, %zu created\n",
                ts[0], ts[1], ts[2], ts[3], as[0], as[1], as[2], as[3], no, bytes, gs[0], gs[1]);
    rt_free(total);
    rt_free(free_now);
    rt_free(tasks);
    rt_free(actors);
    rt_free(objects);
    rt_free(groups);
    return rc;
}

/* As `ray summary tasks`: how many tasks of each name are in each state. */
static int print_summary(FILE *f, int json)
{
    rt_task_info *t = NULL;
    size_t n = 0;
    int rc = rt_list_tasks(&t, &n);
    fputs(json ? "[" : "NAME                     WAITING  RUNNING FINISHED   FAILED\n", f);
    for (size_t i = 0, k = 0; rc == 0 && i < n; i++) {
        size_t count[4] = {0};
        int first = 1;
        for (size_t j = 0; j < n && first; j++)
            first = j >= i || strcmp(t[j].name, t[i].name) != 0;
        if (!first)
            continue; /* counted with its name's first */
        for (size_t j = i; j < n; j++)
            count[t[j].state] += strcmp(t[j].name, t[i].name) == 0;
        if (json) {
            fprintf(f, "%s{\"name\": \"", k++ ? ", " : "");
            json_text(f, t[i].name);
            fprintf(f, "\", \"WAITING\": %zu, \"RUNNING\": %zu, \"FINISHED\": %zu, "
                    "\"FAILED\": %zu}", count[0], count[1], count[2], count[3]);
        } else {
            fprintf(f, "%-24s %8zu %8zu %8zu %8zu\n", t[i].name, count[0], count[1], count[2],
                    count[3]);
        }
    }
    fputs(json ? "]\n" : "", f);
    rt_free(t);
    return rc;
}

/* The lists, as `ray list` names them: each a table under its header,
 * or a JSON array. */
static const struct {
    const char *what, *header;
    size_t each;
    rt__list_kind kind;
    void (*one)(FILE *f, const void *entry, int json);
} lists[] = {
    {"tasks", "SLOT   NAME                     STATE     NODE     PID  CPUS  GPUS "
     "ATTEMPT\n", sizeof(rt_task_info), RT__LIST_TASKS, each_task},
    {"actors", "SLOT   NAME                     STATE      NODE     PID RESTARTS\n",
     sizeof(rt_actor_info), RT__LIST_ACTORS, each_actor},
    {"objects", "SLOT           SIZE NODE HOLDS MADE BY\n", sizeof(rt_object_info),
     RT__LIST_OBJECTS, each_object},
    {"placement-groups", "SLOT   STATE    STRATEGY      BUNDLES  CPUS  GPUS\n",
     sizeof(rt_pg_info), RT__LIST_GROUPS, each_group},
};

static int print_list(FILE *f, size_t k, int json)
{
    void *list = NULL;
    size_t n = 0;
    int rc = rt__call_list(rt__runtime_here(), lists[k].kind, &list, &n);
    fputs(rc < 0 ? "" : json ? "[" : lists[k].header, f);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (json && i)
            fputs(", ", f);
        lists[k].one(f, (const char *)list + i * lists[k].each, json);
    }
    fputs(rc == 0 && json ? "]\n" : "", f);
    rt_free(list);
    return rc;
}

int rt__state_report(FILE *f, const char *what, int json)
{
    if (strcmp(what, "status") == 0)
        return print_status(f, json);
    if (strcmp(what, "summary") == 0)
        return print_summary(f, json);
    if (strcmp(what, "nodes") == 0)
        return print_nodes(f, json);
    for (size_t k = 0; k < sizeof lists / sizeof *lists; k++)
        if (strcmp(what, lists[k].what) == 0)
            return print_list(f, k, json);
    return rt__error(RT_EINVAL, "rtask-status: no such list: %s", what);
}

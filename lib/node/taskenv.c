/* taskenv.c - what a task sees of its worker's lease (taskenv.h). */
#include "taskenv.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/process.h"
#include "devices/detect.h"
#include "devices/family.h"
#include "devices/instance.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* The environment a task starts with: the one the worker was forked
 * with, plus the variables that name its lease's devices.  A task may
 * change its environment (setenv, unsetenv, putenv, or writing into a
 * string getenv() gave it); the next task gets this one back, so nothing
 * leaks from task to task. */
static struct {
    char **base;      /* copies of the worker's first environment; never
                         handed to putenv(), so no task can write them */
    char **seen;      /* environ's entries right after the last reset */
    size_t nseen;
    char *seen_text;  /* and their text, one after the other */
    struct env_run {  /* that text as runs of entries that lie one after
                         the other in memory too (as exec() leaves them):
                         compared a run at a time */
        const char *at;
        size_t len;
    } *runs;
    size_t nruns;
    int unseen;       /* environ is the lease's, not recorded yet */
    int left;         /* a last task left environ as it made it */
    rt__devices dev;  /* the lease's devices, from the last DEVICES */
    char *dev_mem;    /* what dev points into */
    char *vars;       /* the tasks' own variables (ENV), or NULL */
    const char *ids[2][RT__INSTANCE_MAX]; /* [0] GPUs, [1] the node's other
                                             accelerators (dev.accel_name) */
    size_t nids[2];
    char *ids_buf;    /* what ids point into */
    cpu_set_t first_cpus; /* the worker's CPUs before any binding */
} env;

extern char **environ;

static size_t env_count(char **e)
{
    size_t n = 0;
    while (e && e[n])
        n++;
    return n;
}

void rt__taskenv_capture(void)
{
    sched_getaffinity(0, sizeof env.first_cpus, &env.first_cpus);
    size_t n = env_count(environ);
    env.base = rt__calloc(n + 1, sizeof *env.base);
    for (size_t i = 0; env.base && i < n; i++)
        env.base[i] = rt__strdup(environ[i]);
}

static void env_snapshot(void)
{
    size_t text = 0;
    rt__free(env.seen);
    rt__free(env.seen_text);
    rt__free(env.runs);
    env.nseen = env_count(environ);
    env.nruns = 0;
    env.seen = rt__malloc((env.nseen + 1) * sizeof *env.seen);
    env.runs = rt__malloc((env.nseen + 1) * sizeof *env.runs);
    for (size_t i = 0; env.runs && i < env.nseen; i++) {
        size_t len = strlen(environ[i]) + 1;
        struct env_run *last = env.nruns ? &env.runs[env.nruns - 1] : NULL;
        if (last && last->at + last->len == environ[i])
            last->len += len;
        else
            env.runs[env.nruns++] = (struct env_run){environ[i], len};
        text += len;
    }
    env.seen_text = env.runs ? rt__malloc(text + 1) : NULL;
    env.unseen = 0;
    if (!env.seen || !env.seen_text)
        return; /* without a snapshot, every task gets a reset */
    memcpy(env.seen, environ, env.nseen * sizeof *env.seen);
    char *p = env.seen_text;
    for (size_t i = 0; i < env.nseen; i++)
        p = stpcpy(p, environ[i]) + 1;
}

/* Cheap enough to run after every task (a pass over the environment's
 * bytes): a change replaces, adds or removes an entry of environ, or
 * writes into one. */
static int env_changed(void)
{
    if (!env.seen || !env.seen_text || env_count(environ) != env.nseen)
        return 1;
    if (memcmp(environ, env.seen, env.nseen * sizeof *env.seen) != 0)
        return 1; /* an entry replaced */
    /* The same entries, whose bytes (their ends included) are as they
     * were: they had that many, so reading them is safe. */
    const char *p = env.seen_text;
    for (size_t i = 0; i < env.nruns; i++) {
        if (memcmp(env.runs[i].at, p, env.runs[i].len) != 0)
            return 1;
        p += env.runs[i].len;
    }
    return 0;
}

/* Put back one of the first environment's entries, "NAME=value", as a
 * copy: the base itself is never handed out. */
static void env_restore(const char *entry)
{
    const char *eq = strchr(entry, '=');
    char name[256];
    if (!eq || (size_t)(eq - entry) >= sizeof name)
        return;
    memcpy(name, entry, (size_t)(eq - entry));
    name[eq - entry] = '\0';
    setenv(name, eq + 1, 1);
}

/* The lease's variables, "NAME=value" lines ("NAME": removed). */
static void env_apply(const char *lines)
{
    char entry[1024];
    for (const char *p = lines; *p; p += strcspn(p, "\n"), p += *p == '\n') {
        size_t n = strcspn(p, "\n");
        if (n >= sizeof entry)
            continue;
        memcpy(entry, p, n);
        entry[n] = '\0';
        char *eq = strchr(entry, '=');
        if (eq)
            *eq = '\0';
        if (*entry && eq)
            setenv(entry, eq + 1, 1);
        else if (*entry)
            unsetenv(entry);
    }
}

static void env_reset(void)
{
    clearenv();
    for (size_t i = 0; env.base && env.base[i]; i++)
        env_restore(env.base[i]);
    env_apply(env.dev.env ? env.dev.env : "");
    env_apply(env.vars ? env.vars : "");
    env_snapshot();
    env.left = 0;
}

/* Split "0,1" and "2" into the id lists that rt_get_gpu_ids() and
 * rt_get_accelerator_ids() return.  0, or -1 without memory. */
static int split_ids(void)
{
    const char *lists[2] = {env.dev.gpus, env.dev.accel};
    size_t a = strlen(lists[0]), b = strlen(lists[1]);
    rt__free(env.ids_buf);
    env.ids_buf = rt__malloc(a + b + 2);
    env.nids[0] = env.nids[1] = 0;
    if (!env.ids_buf)
        return -1;
    memcpy(env.ids_buf, lists[0], a + 1);
    memcpy(env.ids_buf + a + 1, lists[1], b + 1);
    char *p[2] = {env.ids_buf, env.ids_buf + a + 1};
    for (int list = 0; list < 2; list++) {
        char *save;
        for (char *id = strtok_r(p[list], ",", &save); id; id = strtok_r(NULL, ",", &save))
            if (env.nids[list] < RT__INSTANCE_MAX)
                env.ids[list][env.nids[list]++] = id;
    }
    return 0;
}

/* A lease with GPUs binds the worker to the CPUs near them; any other
 * lease gives it back the CPUs it started with (a worker never bound has
 * them). */
static void bind_cpus(void)
{
    static int bound;
    cpu_set_t set;
    if (*env.dev.cpus && rt__cpulist_parse(env.dev.cpus, &set) == 0) {
        sched_setaffinity(0, sizeof set, &set);
        bound = 1;
    } else if (bound) {
        sched_setaffinity(0, sizeof env.first_cpus, &env.first_cpus);
        bound = 0;
    }
}

/* A worker's first devices come before its first task, into the
 * environment it was forked with, which is the first environment: the
 * variables go on top of it, without the rebuild a later lease needs
 * (tens of microseconds that a fresh worker's task would wait for), and
 * without the record, which a fresh worker's only task does not need. */
int rt__taskenv_set_devices(const rt__hdr *h, const char *payload)
{
    int first = env.dev_mem == NULL;
    rt__free(env.dev_mem);
    if (rt__proto_read_devices(h, payload, &env.dev, &env.dev_mem) < 0 || split_ids() < 0)
        return -1;
    if (first) {
        env_apply(env.dev.env);
        env.unseen = 1;
    } else {
        env_reset();
    }
    bind_cpus();
    return 0;
}

/* The environment is made anew now: the variables of the tasks before
 * go, these come (an actor's, at its start, for its life: its calls do
 * not reset the environment). */
int rt__taskenv_set_vars(const rt__hdr *h, const char *payload)
{
    if (h->type != RT__MSG_ENV || h->nfds || (h->len && !payload))
        return -1;
    rt__free(env.vars);
    env.vars = h->len ? rt__strndup(payload, (size_t)h->len) : NULL;
    if (h->len && !env.vars)
        return -1;
    env_reset();
    return 0;
}

static void forget_devices(void)
{
    rt__free(env.dev_mem);
    rt__free(env.ids_buf);
    env.dev = (rt__devices){0};
    env.dev_mem = env.ids_buf = NULL;
    env.nids[0] = env.nids[1] = 0;
}

void rt__taskenv_rehearse(void)
{
    static const char sample[] = "0\n\n\n10000\n0\n\nRT__REHEARSAL=1\nRT__REHEARSAL";
    if (rt__devices_decode(sample, sizeof sample - 1, &env.dev, &env.dev_mem) == 0 &&
        split_ids() == 0)
        env_apply(env.dev.env); /* sets the variable, then removes it */
    forget_devices();
}

void rt__taskenv_before_task(int last)
{
    if (env.left)
        env_reset();
    else if (env.unseen && !last)
        env_snapshot();
}

void rt__taskenv_after_task(int last)
{
    if (last)
        env.left = 1;
    else if (env_changed())
        env_reset();
}

int rt__taskenv_ids(const char *call, const char *resource, const char *const **ids,
                    size_t *n)
{
    if (!resource || !ids || !n)
        return rt__error(RT_EINVAL, "%s: NULL argument", call);
    int list = strcmp(resource, "GPU") == 0                      ? 0
               : rt__family_of_resource(resource) != RT__FAM_NONE ? 1
                                                                    : -1;
    if (list < 0)
        return rt__error(RT_EINVAL, "%s: %s is not an accelerator "
                         "(GPU, neuron_cores, TPU, HPU or NPU)", call, resource);
    if (!rt__process_forked())
        return rt__error(RT_EINVAL, "%s: only inside a task or an actor", call);
    /* Another family than the node's: this task holds none of it. */
    int held = list == 0 || (env.dev.accel_name && strcmp(resource, env.dev.accel_name) == 0);
    *ids = env.ids[list];
    *n = held ? env.nids[list] : 0;
    return 0;
}


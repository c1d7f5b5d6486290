/* offer.c - check rt_init()'s configuration and complete it with what
 * device detection finds. */
#include "offer.h"

#include "error.h"
#include "visible.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS_PER_CPU_MAX 8 /* a cap for zero-CPU tasks, which need no CPU */
#define WORKERS_MIN_MAX 64

static int online_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Whether a detected device is a GPU of the node. */
static int counts_as_gpu(const rt__offer *node, const rt__device *d)
{
    return d->kind == RT__DEV_GPU || (node->other_gpus && d->kind == RT__DEV_OTHER_GPU);
}

/* Whether d is in MIG mode with an instance whose UUID starts with id. */
static int has_mig(const rt__device *d, const char *id)
{
    for (int j = 0; j < d->migs; j++)
        if (strncmp(d->mig_uuid[j], id, strlen(id)) == 0)
            return 1;
    return 0;
}

/* The detected GPU an id names: an index (in bus order, NVIDIA's first),
 * a GPU-<uuid> or a prefix of one, or one of its MIG instances. */
static const rt__device *gpu_named(const rt__offer *node, const char *id)
{
    const rt__machine *m = &node->machine;
    int uuid = strncmp(id, "GPU-", 4) == 0, mig = strncmp(id, "MIG-", 4) == 0;
    char *end;
    long k = uuid || mig ? -1 : strtol(id, &end, 10);
    for (int i = 0; i < m->count; i++) {
        const rt__device *d = &m->dev[i];
        if (!counts_as_gpu(node, d))
            continue;
        if (mig ? has_mig(d, id)
                : uuid ? d->uuid[0] && strncmp(d->uuid, id, strlen(id)) == 0 : k-- == 0)
            return d;
    }
    return NULL;
}

/* The GPUs detection offers, as CUDA numbers them without
 * CUDA_VISIBLE_DEVICES: each by its index, except that a GPU in MIG mode
 * offers its instances, by UUID (as `nvidia-smi -L` lists them).  Their
 * ids go to ids unless it is NULL; returns how many. */
static int detected_gpus(const rt__offer *node, char (*ids)[RT__ID_LEN])
{
    const rt__machine *m = &node->machine;
    int n = 0, index = 0;
    for (int i = 0; i < m->count && n < RT__INSTANCE_MAX; i++) {
        const rt__device *d = &m->dev[i];
        if (!counts_as_gpu(node, d))
            continue;
        for (int j = 0; j < d->migs && n < RT__INSTANCE_MAX; j++, n++)
            if (ids)
                snprintf(ids[n], RT__ID_LEN, "%s", d->mig_uuid[j]);
        if (!d->migs && ids)
            snprintf(ids[n], RT__ID_LEN, "%d", index);
        n += !d->migs;
        index++;
    }
    return n;
}

/* Whether an entry of the list names a GPU detected here (a MIG id, or a
 * GPU-<uuid> where detection learnt no UUID, cannot be checked). */
static int names_a_gpu(const rt__offer *out, const char *id)
{
    int uuid_known = 0, mig_known = 0;
    for (int k = 0; k < out->machine.count; k++) {
        uuid_known |= out->machine.dev[k].uuid[0] != '\0';
        mig_known |= out->machine.dev[k].migs > 0;
    }
    int checkable = strncmp(id, "MIG-", 4) == 0 ? mig_known
                    : strncmp(id, "GPU-", 4) != 0 || uuid_known;
    return !checkable || gpu_named(out, id) != NULL;
}

/* The GPUs CUDA_VISIBLE_DEVICES lists, if it is set: -1 when it is not.
 * As CUDA reads it, the first entry that is not an id, repeats one, or
 * (when the GPUs are detected) names none ends the list, with a warning. */
static int visible_gpus(rt__offer *out, int detected)
{
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (!cvd)
        return -1;
    const char *bad, *why;
    int n = rt__visible_parse(cvd, out->gpu_ids, RT__INSTANCE_MAX, &bad, &why);
    for (int i = 0; detected && i < n; i++) {
        if (!names_a_gpu(out, out->gpu_ids[i])) {
            bad = out->gpu_ids[i], why = "names no GPU here", n = i;
            break;
        }
    }
    if (bad)
        rt__warn("CUDA_VISIBLE_DEVICES=\"%s\": \"%.*s\" %s, so only the %d entries "
                 "before it count, as in CUDA", cvd, (int)strcspn(bad, ","), bad, why, n);
    return n;
}


/* Ids and locality of the n GPUs offered: the listed ids, else the
 * detected ones, else (a logical count) indices. */
static void name_gpus(rt__offer *node, int n, int listed, int detect)
{
    int found = listed < 0 && detect ? detected_gpus(node, node->gpu_ids) : 0;
    for (int i = 0; i < n; i++) {
        if (listed < 0 && i >= found)
            snprintf(node->gpu_ids[i], RT__ID_LEN, "%d", i);
        const rt__device *d = gpu_named(node, node->gpu_ids[i]);
        snprintf(node->gpu_cpus[i], RT__CPUS_LEN, "%s", d ? d->cpus : "");
        /* A GPU no detected one answers to (a logical one, a MIG id without
         * NVML) has the type of the machine's first GPU. */
        const rt__device *first = rt__machine_nth(&node->machine, RT__DEV_GPU, 0);
        const rt__device *typed = d ? d : first;
        snprintf(node->gpu_types[i], RT__TYPE_LEN, "%s", typed ? typed->type : "");
    }
}

/* How many GPUs, and their ids.  An explicit count is logical (it may
 * exceed the machine's), but not CUDA_VISIBLE_DEVICES's list. */
static int resolve_gpus(const rt_config *c, int detect, rt__offer *out)
{
    double gpus = c->num_gpus;
    int listed = visible_gpus(out, detect);
    int found = detected_gpus(out, NULL);
    if (detect)
        gpus = listed >= 0 && listed < found ? listed : found;
    if (isnan(gpus) || gpus < 0 || gpus != floor(gpus) || gpus > RT__INSTANCE_MAX)
        return rt__error(RT_EINVAL, "rt_init: num_gpus must be RT_DETECT or a "
                                    "whole number from 0 to %d, not %g",
                         RT__INSTANCE_MAX, gpus);
    if (listed >= 0 && gpus > listed)
        return rt__error(RT_EINVAL, "rt_init: num_gpus is %g but "
                                    "CUDA_VISIBLE_DEVICES=\"%s\" lists %d GPU%s",
                         gpus, getenv("CUDA_VISIBLE_DEVICES"), listed,
                         listed == 1 ? "" : "s");
    out->total.gpu = (rt__amount)gpus * RT__UNIT;
    name_gpus(out, (int)gpus, listed, detect);
    return 0;
}

/* The node's types: the one given, which all its GPUs are; else each
 * type its GPUs have (a node may hold several); else Neuron's. */
static int add_types(const rt_config *c, rt__offer *node, rt__item *items, int *n)
{
    int gpus = (int)(node->total.gpu / RT__UNIT), rc = 0;
    for (int i = 0; c->accelerator_type && i < gpus; i++)
        snprintf(node->gpu_types[i], RT__TYPE_LEN, "%s", c->accelerator_type);
    const rt__device *neuron = rt__machine_nth(&node->machine, RT__DEV_NEURON, 0);
    const char *only = c->accelerator_type ? c->accelerator_type
                       : gpus == 0 && neuron ? neuron->type : NULL;
    for (int i = -1; rc == 0 && i < gpus; i++) {
        const char *type = i < 0 ? only : node->gpu_types[i];
        char name[RT__NAME_LEN + 32];
        snprintf(name, sizeof name, RT__ACCEL_PREFIX "%s", type ? type : "");
        if (type && *type && rt__items_find(items, *n, name) < 0)
            rc = rt__items_add(items, n, name, RT__UNIT, "rt_init: accelerator_type");
    }
    return rc;
}

/* Custom resources, neuron cores among them (detected ones unless given),
 * and the node's accelerator type: the custom resource
 * "accelerator_type:T" = 1. */
static int resolve_resources(const rt_config *c, rt__offer *out)
{
    rt__item items[RT__CUSTOM_MAX];
    int n;
    const char *what = "rt_init: resources";
    int rc = rt__items_parse(c->resources, what, items, &n);
    if (rc == 0)
        rc = rt__items_whole(items, n, RT__NEURON, what);
    int neuron = rt__items_find(items, n, RT__NEURON);
    int cores = rt__machine_neuron_cores(&out->machine);
    if (rc == 0 && neuron < 0 && cores > 0)
        rc = rt__items_add(items, &n, RT__NEURON, (rt__amount)cores * RT__UNIT, what);
    neuron = rt__items_find(items, n, RT__NEURON);
    if (rc == 0 && neuron >= 0 && items[neuron].amount > RT__INSTANCE_MAX * RT__UNIT)
        rc = rt__error(RT_EINVAL, "%s: at most %d " RT__NEURON, what, RT__INSTANCE_MAX);
    if (rc == 0)
        rc = add_types(c, out, items, &n);
    if (rc == 0)
        rt__names_define(&out->names, items, n, &out->total);
    return rc;
}

static int resolve_workers(int workers, int zeroed, double cpus, rt__offer *out)
{
    if (workers == RT_DEFAULT || (zeroed && workers == 0))
        workers = (int)ceil(cpus);
    if (workers < 0)
        return rt__error(RT_EINVAL, "rt_init: num_workers must be RT_DEFAULT or "
                                    ">= 0; %d is invalid", workers);
    out->workers = (size_t)workers;
    out->max_workers = (size_t)ceil(cpus) * WORKERS_PER_CPU_MAX;
    if (out->max_workers < WORKERS_MIN_MAX)
        out->max_workers = WORKERS_MIN_MAX;
    if (out->max_workers < out->workers)
        out->max_workers = out->workers;
    return 0;
}

int rt__offer_resolve(const rt_config *c, rt__offer *out)
{
    rt_config dflt = RT_CONFIG_INIT;
    if (!c)
        c = &dflt;
    int zeroed = c->init_magic_ != RT_CONFIG_MAGIC_;
    double cpus = c->num_cpus;
    if (cpus == RT_DETECT || (zeroed && cpus == 0))
        cpus = online_cpus();
    memset(out, 0, sizeof *out);
    rt__detect_opts detect = {.root = c->sysfs_root};
    int rc = rt__detect(&detect, &out->machine);
    if (rc < 0)
        return rc;
    out->other_gpus = c->other_gpus != 0;
    out->bind_cpus = c->bind_cpus == RT_DEFAULT || (zeroed && c->bind_cpus == 0)
                         ? 1 : c->bind_cpus != 0;
    rc = rt__amount_parse(cpus, "num_cpus", &out->total.cpu);
    if (rc == 0)
        rc = resolve_gpus(c, c->num_gpus == RT_DETECT || (zeroed && c->num_gpus == 0),
                          out);
    if (rc == 0)
        rc = resolve_resources(c, out);
    if (rc == 0)
        rc = resolve_workers(c->num_workers, zeroed, cpus, out);
    return rc;
}

void rt__offer_describe(const rt__offer *node, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "CPU=%g GPU=%g",
                                  (double)node->total.cpu / RT__UNIT,
                                  (double)node->total.gpu / RT__UNIT);
    for (int i = 0; i < node->names.count && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, " %s=%g", node->names.name[i],
                                (double)node->total.custom[i] / RT__UNIT);
}

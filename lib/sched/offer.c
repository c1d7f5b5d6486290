/* offer.c - check rt_init()'s configuration and complete it with what
 * device detection finds. */
#include "offer.h"

#include "scheduler.h"
#include "visible.h"
#include "base/error.h"

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
    return d->kind == node->families.gpu;
}

/* The family of the node's GPUs: the vendor given, else NVIDIA's if it
 * has any, else AMD's, else Intel's, as Ray picks (with GPUs of two
 * vendors, the first vendor's alone are the resource "GPU"). */
static int choose_gpu_family(const char *vendor, rt__offer *out)
{
    out->families.gpu = RT__FAM_NVIDIA;
    for (int f = 0; f < RT__FAM_GPUS; f++) {
        if (vendor ? strcmp(vendor, rt__families[f].vendor) == 0
                   : rt__machine_instances(&out->machine, (rt__family)f) > 0) {
            out->families.gpu = (rt__family)f;
            return 0;
        }
    }
    return vendor ? rt__error(RT_EINVAL, "rt_init: gpu_vendor \"%s\" is not \"nvidia\", "
                              "\"amd\" or \"intel\"", vendor)
                  : 0;
}

/* The instance of d (in MIG mode) whose UUID starts with id, or -1. */
static int mig_of(const rt__device *d, const char *id)
{
    for (int j = 0; j < d->migs; j++)
        if (strncmp(d->mig_uuid[j], id, strlen(id)) == 0)
            return j;
    return -1;
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
        if (mig ? mig_of(d, id) >= 0
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

/* The value of the variable that lists a family's devices, as set before
 * rt_init(), or NULL.  HIP reads CUDA_VISIBLE_DEVICES when its own is not
 * set, and AMD's runtime ROCR_VISIBLE_DEVICES. */
static const char *visible_value(rt__family f, const char **var)
{
    static const char *const amd[] = {"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
                                      "ROCR_VISIBLE_DEVICES"};
    *var = rt__families[f].variable;
    const char *v = getenv(*var);
    for (size_t i = 1; !v && f == RT__FAM_AMD && i < sizeof amd / sizeof *amd; i++)
        if ((v = getenv(amd[i])))
            *var = amd[i];
    return v;
}

/* AMD GPUs: HIP_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES that disagree
 * leave no telling which GPUs HIP would use (Ray refuses them too). */
static int check_amd_variables(rt__offer *out)
{
    const char *hip = getenv("HIP_VISIBLE_DEVICES"), *cuda = getenv("CUDA_VISIBLE_DEVICES");
    if (out->families.gpu != RT__FAM_AMD)
        return 0;
    out->families.cuda_alias = cuda != NULL;
    if (hip && cuda && strcmp(hip, cuda) != 0)
        return rt__error(RT_EINVAL, "rt_init: HIP_VISIBLE_DEVICES=\"%s\" and "
                         "CUDA_VISIBLE_DEVICES=\"%s\" disagree, and HIP reads both: set "
                         "one of them", hip, cuda);
    return 0;
}

/* The devices a family's variable lists, if it is set: -1 when it is
 * not.  As CUDA reads CUDA_VISIBLE_DEVICES, the first entry that is not
 * an id, repeats one, or (when the devices are detected, so that valid()
 * can tell) names none ends the list, with a warning. */
static int visible_ids(rt__offer *out, rt__family f, int detected, char (*ids)[RT__ID_LEN],
                       int (*valid)(const rt__offer *, rt__family, const char *))
{
    const char *var, *value = visible_value(f, &var);
    if (!value)
        return -1;
    const char *list = rt__family_listed(f, value), *bad, *why;
    if (!list) {
        rt__warn("%s=\"%s\" selects no Level Zero device; ignored", var, value);
        return -1;
    }
    int n = rt__visible_parse(list, ids, RT__INSTANCE_MAX, &bad, &why);
    for (int i = 0; detected && i < n; i++) {
        if (!valid(out, f, ids[i])) {
            bad = ids[i], n = i;
            why = f < RT__FAM_GPUS ? "names no GPU here" : "names no device here";
            break;
        }
    }
    if (bad) {
        char kept[48];
        if (n == 0)
            snprintf(kept, sizeof kept, "no entry counts");
        else if (n == 1)
            snprintf(kept, sizeof kept, "only the entry before it counts");
        else
            snprintf(kept, sizeof kept, "only the %d entries before it count", n);
        rt__warn("%s=\"%s\": \"%.*s\" %s, so %s, as in CUDA", var, value,
                 (int)strcspn(bad, ","), bad, why, kept);
    }
    return n;
}

static int gpu_valid(const rt__offer *out, rt__family f, const char *id)
{
    (void)f;
    return names_a_gpu(out, id);
}

/* An accelerator of the other families is named by its index. */
static int index_valid(const rt__offer *out, rt__family f, const char *id)
{
    char *end;
    long k = strtol(id, &end, 10);
    return !*end && k >= 0 && k < rt__machine_instances(&out->machine, f);
}

/* Ids, locality, memory, bus id and health of the n GPUs offered: the
 * listed ids, else the detected ones, else (a logical count) indices.
 * The memory given in the configuration is every GPU's; else NVML's, of
 * the whole GPU or of the MIG instance. */
static void name_gpus(rt__offer *node, int n, int listed, int detect, uint64_t memory)
{
    int found = listed < 0 && detect ? detected_gpus(node, node->gpu_ids) : 0;
    for (int i = 0; i < n; i++) {
        if (listed < 0 && i >= found)
            snprintf(node->gpu_ids[i], RT__ID_LEN, "%d", i);
        const rt__device *d = gpu_named(node, node->gpu_ids[i]);
        snprintf(node->gpu_cpus[i], RT__CPUS_LEN, "%s", d ? d->cpus : "");
        int mig = d ? mig_of(d, node->gpu_ids[i]) : -1;
        uint64_t mib = !d ? 0 : mig >= 0 ? d->mig_memory_mib[mig] : d->memory_mib;
        node->gpu_bytes[i] = memory ? memory : mib << 20;
        snprintf(node->gpu_bus[i], sizeof node->gpu_bus[i], "%s", d ? d->bus_id : "");
        snprintf(node->gpu_sick[i], sizeof node->gpu_sick[i], "%s", d ? d->unhealthy : "");
        /* A GPU no detected one answers to (a logical one, a MIG id without
         * NVML) has the type of the machine's first GPU. */
        const rt__device *first = rt__machine_nth(&node->machine, node->families.gpu, 0);
        const rt__device *typed = d ? d : first;
        snprintf(node->gpu_types[i], RT__TYPE_LEN, "%s", typed ? typed->type : "");
    }
}

/* The family's variable lists more GPUs than were found: only those
 * found are offered, which the user should hear of (a count above the
 * machine's is for num_gpus to give, as logical GPUs). */
static void warn_unseen(const rt__offer *out, int listed, int found)
{
    const char *var, *value = visible_value(out->families.gpu, &var);
    rt__warn("%s=\"%s\" lists %d GPU%s but %d %s detected here, so %d %s offered; "
             "set num_gpus to offer logical GPUs", var, value, listed,
             listed == 1 ? "" : "s", found, found == 1 ? "was" : "were", found,
             found == 1 ? "is" : "are");
}

/* How many GPUs, and their ids.  An explicit count is logical (it may
 * exceed the machine's), but not what the family's variable lists. */
static int resolve_gpus(const rt_config *c, int detect, rt__offer *out)
{
    double gpus = c->num_gpus;
    int listed = visible_ids(out, out->families.gpu, detect, out->gpu_ids, gpu_valid);
    int found = detected_gpus(out, NULL);
    if (detect)
        gpus = listed >= 0 && listed < found ? listed : found;
    if (detect && listed > found)
        warn_unseen(out, listed, found);
    if (isnan(gpus) || gpus < 0 || gpus != floor(gpus) || gpus > RT__INSTANCE_MAX)
        return rt__error(RT_EINVAL, "rt_init: num_gpus must be RT_DETECT or a "
                                    "whole number from 0 to %d, not %g",
                         RT__INSTANCE_MAX, gpus);
    const char *var, *value = visible_value(out->families.gpu, &var);
    if (listed >= 0 && gpus > listed)
        return rt__error(RT_EINVAL, "rt_init: num_gpus is %g but %s=\"%s\" lists %d "
                         "GPU%s", gpus, var, value, listed, listed == 1 ? "" : "s");
    out->total.gpu = (rt__amount)gpus * RT__UNIT;
    name_gpus(out, (int)gpus, listed, detect, c->gpu_memory);
    return 0;
}

/* The node's types: the one given, which all its GPUs are; else each
 * type its GPUs have (a node may hold several); else its other
 * accelerators' (Neuron's, a TPU's...). */
static int add_types(const rt_config *c, rt__offer *node, rt__item *items, int *n)
{
    int gpus = (int)(node->total.gpu / RT__UNIT), rc = 0;
    size_t len = c->accelerator_type ? strlen(c->accelerator_type) : 1;
    if (len == 0 || len >= RT__TYPE_LEN)
        return rt__error(RT_EINVAL, "rt_init: accelerator_type must have 1 to %d bytes; "
                         "\"%s\" is invalid (NULL takes the detected types)",
                         RT__TYPE_LEN - 1, c->accelerator_type);
    for (int i = 0; c->accelerator_type && i < gpus; i++)
        snprintf(node->gpu_types[i], RT__TYPE_LEN, "%s", c->accelerator_type);
    const rt__device *accel = rt__machine_nth(&node->machine, node->families.accel, 0);
    const char *only = c->accelerator_type ? c->accelerator_type
                       : gpus == 0 && accel ? accel->type : NULL;
    for (int i = -1; rc == 0 && i < gpus; i++) {
        const char *type = i < 0 ? only : node->gpu_types[i];
        char name[RT__NAME_LEN + 32];
        snprintf(name, sizeof name, RT__ACCEL_PREFIX "%s", type ? type : "");
        if (type && *type && rt__items_find(items, *n, name) < 0)
            rc = rt__items_add(items, n, name, RT__UNIT, "rt_init: accelerator_type");
    }
    return rc;
}

/* The family given in the configuration's resources ("TPU=4"), at most
 * one: -1 and an error when two are; RT__FAM_NONE when none is. */
static int given_family(const rt__item *items, int n, rt__family *given)
{
    const char *what = "rt_init: resources";
    *given = RT__FAM_NONE;
    for (int i = 0; i < n; i++) {
        rt__family f = rt__family_of_resource(items[i].name);
        if (f == RT__FAM_NONE)
            continue;
        if (*given != RT__FAM_NONE)
            return rt__error(RT_EINVAL, "%s: a node offers one accelerator family "
                             "besides GPUs, not both %s and %s", what,
                             rt__families[*given].resource, items[i].name);
        if (items[i].amount > RT__INSTANCE_MAX * RT__UNIT)
            return rt__error(RT_EINVAL, "%s: at most %d %s", what, RT__INSTANCE_MAX,
                             items[i].name);
        *given = f;
    }
    return *given == RT__FAM_NONE ? 0 : rt__items_whole(items, n, rt__families[*given].resource, what);
}

/* The detected family besides GPUs: the first found of Neuron, TPU,
 * Gaudi and Ascend (a machine with two is unheard of: the others are
 * named in a warning). */
static rt__family detected_family(const rt__machine *m)
{
    rt__family found = RT__FAM_NONE;
    for (int f = RT__FAM_GPUS; f < RT__FAM_COUNT; f++) {
        int n = rt__machine_instances(m, (rt__family)f);
        if (n && found == RT__FAM_NONE)
            found = (rt__family)f;
        else if (n)
            rt__warn("%d %s %s found but not offered: a node offers one accelerator "
                     "family besides GPUs (%s here)", n, rt__families[f].name,
                     rt__families[f].resource, rt__families[found].resource);
    }
    return found;
}

/* The node's other accelerators: the family given, else the detected one
 * (those its variable lists, if it is set before rt_init()). */
static int resolve_accel(rt__offer *out, rt__item *items, int *n)
{
    rt__family f;
    int rc = given_family(items, *n, &f);
    if (rc < 0)
        return rc;
    int given = f != RT__FAM_NONE;
    if (!given)
        f = detected_family(&out->machine);
    out->families.accel = f;
    if (f == RT__FAM_NONE)
        return 0;
    int count = rt__machine_instances(&out->machine, f);
    int listed = visible_ids(out, f, count > 0, out->accel_ids, index_valid);
    if (given)
        count = (int)(items[rt__items_find(items, *n, rt__families[f].resource)].amount /
                      RT__UNIT);
    else if (listed >= 0 && listed < count)
        count = listed;
    /* As for GPUs (and as Ray raises): what the variable excludes is not
     * offered, whatever count is given. */
    const char *var, *value = visible_value(f, &var);
    if (given && listed >= 0 && count > listed)
        return rt__error(RT_EINVAL, "rt_init: %s is %d but %s=\"%s\" lists %d",
                         rt__families[f].resource, count, var, value, listed);
    out->families.accel_total = count;
    return given ? 0 : rt__items_add(items, n, rt__families[f].resource,
                                     (rt__amount)count * RT__UNIT, "rt_init: resources");
}

/* Custom resources, other accelerators among them (detected ones unless
 * given), and the node's accelerator types: the custom resources
 * "accelerator_type:T" = 1. */
static int resolve_resources(const rt_config *c, rt__offer *out)
{
    rt__item items[RT__CUSTOM_MAX];
    int n;
    int rc = rt__items_parse(c->resources, "rt_init: resources", items, &n);
    if (rc == 0)
        rc = resolve_accel(out, items, &n);
    if (rc == 0)
        rc = add_types(c, out, items, &n);
    if (rc == 0)
        rt__names_define(&out->names, items, n, &out->total);
    return rc;
}

/* The type the node's "accelerator-type" label says: the configured one,
 * else its first GPU's, else its other accelerators' (if typed). */
static const char *node_type(const rt_config *c, const rt__offer *node)
{
    const rt__device *accel = rt__machine_nth(&node->machine, node->families.accel, 0);
    if (c->accelerator_type)
        return c->accelerator_type;
    if (node->total.gpu >= RT__UNIT)
        return node->gpu_types[0];
    return accel ? accel->type : "";
}

/* The labels: $RTASK_LABELS's, then the configuration's (the later of
 * one key wins), then the built-in ones, which win over both. */
static int resolve_labels(const rt_config *c, rt__offer *out)
{
    char host[256] = "";
    int rc = rt__labels_add(out->labels, getenv("RTASK_LABELS"), "RTASK_LABELS");
    if (rc == 0)
        rc = rt__labels_add(out->labels, c->labels, "rt_init: labels");
    gethostname(host, sizeof host - 1);
    const char *type = node_type(c, out);
    if (*type)
        (void)rt__labels_set(out->labels, "accelerator-type", type);
    if (rc == 0 && rt__labels_set(out->labels, "hostname", host) < 0)
        rt__warn("rt_init: this node has no \"hostname\" label: its name \"%s\" is not "
                 "a label's value, or the labels are full", host);
    return rc;
}

/* The object store takes 30 % of the machine's memory by default, as
 * Ray's does. */
#define STORE_SHARE 0.3

static uint64_t default_store_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0)
        return (uint64_t)1 << 30;
    return (uint64_t)((double)pages * (double)size * STORE_SHARE);
}

/* rt_config.keep_fds: descriptors, ended by -1. */
static int resolve_keep_fds(const int *keep, rt__offer *out)
{
    for (int i = 0; keep && keep[i] != -1; i++) {
        if (keep[i] < 0)
            return rt__error(RT_EINVAL, "rt_init: keep_fds[%d] is %d, not a descriptor "
                             "(the list ends with -1)", i, keep[i]);
        if (i == RT__KEEP_FDS_MAX)
            return rt__error(RT_EINVAL, "rt_init: keep_fds names more than %d descriptors",
                             RT__KEEP_FDS_MAX);
        out->keep_fds[out->nkeep_fds++] = keep[i];
    }
    return 0;
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

/* MPS enforcement: as configured, else on when a control daemon listens
 * in its pipe directory (where CUDA clients look for it). */
static void resolve_mps(int asked, int zeroed, rt__offer *out)
{
    const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    char control[512];
    snprintf(control, sizeof control, "%s/control", dir && *dir ? dir : "/tmp/nvidia-mps");
    if (asked == RT_DEFAULT || (zeroed && asked == 0)) {
        out->families.mps = access(control, F_OK) == 0;
        snprintf(out->mps_why, sizeof out->mps_why, "%s (%s MPS control daemon at %s)",
                 out->families.mps ? "on" : "off", out->families.mps ? "an" : "no", control);
    } else {
        out->families.mps = asked != 0;
        snprintf(out->mps_why, sizeof out->mps_why, "%s (rt_config.gpu_mps)",
                 out->families.mps ? "on" : "off");
    }
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
    rt__family_read_noset(&out->families);
    resolve_mps(c->gpu_mps, zeroed, out);
    rc = choose_gpu_family(c->gpu_vendor, out);
    if (rc == 0)
        rc = check_amd_variables(out);
    if (rc < 0)
        return rc;
    out->bind_cpus = c->bind_cpus == RT_DEFAULT || (zeroed && c->bind_cpus == 0)
                         ? 1 : c->bind_cpus != 0;
    rc = rt__amount_parse(cpus, "num_cpus", &out->total.cpu);
    if (rc == 0)
        rc = resolve_gpus(c, c->num_gpus == RT_DETECT || (zeroed && c->num_gpus == 0),
                          out);
    if (rc == 0)
        rc = resolve_resources(c, out);
    if (rc == 0)
        rc = resolve_labels(c, out);
    if (rc == 0)
        rc = resolve_workers(c->num_workers, zeroed, cpus, out);
    if (rc == 0)
        rc = resolve_keep_fds(c->keep_fds, out);
    out->store_bytes = c->object_store_bytes ? c->object_store_bytes : default_store_bytes();
    if (rc == 0 && c->gpu_memory_kill != 0 && c->gpu_memory_kill != 1)
        rc = rt__error(RT_EINVAL, "rt_init: gpu_memory_kill must be 0 or 1; %d is invalid",
                       c->gpu_memory_kill);
    out->gpu_memory_kill = c->gpu_memory_kill == 1;
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

int rt__offer_add_node(const rt__offer *o, rt__sched *s)
{
    rt__res total = {.cpu = o->total.cpu, .gpu = o->total.gpu};
    for (int i = 0; i < o->names.count; i++) {
        int j = rt__sched_name(s, o->names.name[i]);
        if (j < 0)
            return -1;
        total.custom[j] = o->total.custom[i];
    }
    char labels[RT__LABELS_LEN], rank[16];
    memcpy(labels, o->labels, sizeof labels);
    snprintf(rank, sizeof rank, "%d", s->nnodes);
    if (rt__labels_set(labels, "rank", rank) < 0)
        rt__warn("rt_init: node %d has no \"rank\" label: its labels are full", s->nnodes);
    rt__node_spec spec = {total, (int)(o->total.gpu / RT__UNIT),
                          (const char(*)[RT__ID_LEN])o->gpu_ids,
                          (const char(*)[RT__CPUS_LEN])o->gpu_cpus,
                          (const char(*)[RT__TYPE_LEN])o->gpu_types, o->gpu_bytes,
                          (const char(*)[RT__ID_LEN])o->accel_ids, o->bind_cpus, labels,
                          (const char(*)[16])o->gpu_bus, (const char(*)[96])o->gpu_sick};
    return rt__sched_add_node(s, &spec);
}

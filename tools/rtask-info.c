/*
 * rtask-info - print the devices rtask detects and the resources rt_init()
 * would offer, like `nvidia-smi -L` next to `ray status`.
 *
 *   rtask-info [--root DIR] [--xml FILE] [--pci-ids FILE] [--json] [--cluster]
 *   rtask-info --version
 *
 * With --cluster, under mpirun, every rank detects its machine and rank 0
 * prints them all.
 */
#include <rtask.h>

#include "../lib/runtime/cluster.h" /* internal: the same joining as rt_init() */
#include "../lib/sched/offer.h"   /* internal: the same resolution as rt_init() */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: rtask-info [--root DIR] [--xml FILE] [--pci-ids FILE] [--json] "
               "[--cluster]\n"
               "  --root DIR      read sys/ and proc/ under DIR (default /)\n"
               "  --xml FILE      read an hwloc XML topology instead of the machine\n"
               "  --pci-ids FILE  the PCI id database (default "
               "/usr/share/misc/pci.ids)\n"
               "  --json          print JSON\n"
               "  --cluster       under mpirun: every rank's node, printed by rank 0\n"
               "  --version       the version, and whether hwloc is built in\n");
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

/* The version, and how detection was built: a machine whose first build
 * lacked hwloc detects through PCI sysfs alone. */
static void print_version(void)
{
    char hwloc[32];
    rt__detect_hwloc_version(hwloc, sizeof hwloc);
    printf("rtask-info %d.%d.%d\n", RT_VERSION_MAJOR, RT_VERSION_MINOR, RT_VERSION_PATCH);
    if (hwloc[0])
        printf("hwloc (%s): built in (PCI devices through hwloc, then PCI sysfs)\n", hwloc);
    else
        printf("hwloc: not built in (PCI devices through PCI sysfs only)\n");
}

/* The node's labels as the scheduler has them: with its rank's. */
static void labels_of(const rt__offer *node, int rank, char out[RT__LABELS_LEN])
{
    char number[16];
    memcpy(out, node->labels, RT__LABELS_LEN);
    snprintf(number, sizeof number, "%d", rank);
    (void)rt__labels_set(out, "rank", number);
}

/* "k=v,..." as a JSON object (keys and values need no escapes). */
static void json_labels(const char *labels)
{
    printf("{");
    for (const char *at = labels; *at;) {
        size_t pair = strcspn(at, ","), key = strcspn(at, "=");
        printf("%s\"%.*s\": \"%.*s\"", at == labels ? "" : ", ", (int)key, at,
               (int)(pair - key - 1), at + key + 1);
        at += pair + (at[pair] == ',');
    }
    printf("}");
}

/* One node as a JSON object; a cluster's nodes say their rank and host. */
static void print_json(const rt__offer *node, int rank, const char *host)
{
    const rt__machine *m = &node->machine;
    printf("{\n");
    if (host) {
        printf("  \"rank\": %d,\n  \"host\": ", rank);
        json_string(host);
        printf(",\n");
    }
    char hwloc[32];
    rt__detect_hwloc_version(hwloc, sizeof hwloc);
    printf("  \"hwloc\": ");
    if (hwloc[0])
        json_string(hwloc);
    else
        printf("null");
    printf(",\n  \"source\": ");
    json_string(m->source);
    printf(",\n  \"devices\": [");
    for (int i = 0; i < m->count; i++) {
        const rt__device *d = &m->dev[i];
        printf("%s\n    {\"kind\": \"%s\", \"bus_id\": ", i ? "," : "", rt__families[d->kind].name);
        json_string(d->bus_id);
        printf(", \"vendor\": \"%04x\", \"device\": \"%04x\", \"model\": ", d->vendor,
               d->device);
        json_string(d->model);
        printf(", \"type\": ");
        json_string(d->type);
        printf(", \"numa_node\": %d, \"cpus\": ", d->numa_node);
        json_string(d->cpus);
        printf(", \"cores\": %d, \"uuid\": ", d->cores);
        json_string(d->uuid);
        printf(", \"memory_mib\": %llu, \"compute_capability\": \"%d.%d\", \"unhealthy\": ",
               d->memory_mib, d->cc_major, d->cc_minor);
        json_string(d->unhealthy);
        printf("}");
    }
    printf("\n  ],\n  \"resources\": {\"CPU\": %g, \"GPU\": %g",
           (double)node->total.cpu / RT__UNIT, (double)node->total.gpu / RT__UNIT);
    for (int i = 0; i < node->names.count; i++) {
        printf(", ");
        json_string(node->names.name[i]);
        printf(": %g", (double)node->total.custom[i] / RT__UNIT);
    }
    printf("},\n  \"gpu_ids\": [");
    for (int i = 0; i < (int)(node->total.gpu / RT__UNIT); i++) {
        printf("%s", i ? ", " : "");
        json_string(node->gpu_ids[i]);
    }
    rt__family accel = node->families.accel;
    printf("],\n  \"gpu_family\": \"%s\", \"gpu_variable\": \"%s\",\n",
           rt__families[node->families.gpu].name, rt__families[node->families.gpu].variable);
    if (accel != RT__FAM_NONE)
        printf("  \"accelerator_family\": \"%s\", \"accelerator_resource\": \"%s\", "
               "\"accelerator_variable\": \"%s\",\n", rt__families[accel].name,
               rt__families[accel].resource, rt__families[accel].variable);
    printf("  \"mps\": %s, \"mps_why\": ", node->families.mps ? "true" : "false");
    json_string(node->mps_why);
    printf(",\n  \"gpu_memory\": [");
    for (int i = 0; i < (int)(node->total.gpu / RT__UNIT); i++)
        printf("%s%llu", i ? ", " : "", (unsigned long long)node->gpu_bytes[i]);
    char labels[RT__LABELS_LEN];
    labels_of(node, rank, labels);
    printf("],\n  \"bind_cpus\": %s,\n  \"labels\": ", node->bind_cpus ? "true" : "false");
    json_labels(labels);
    printf("\n}");
}

/* Which family a resource is, and the variable that tells tasks theirs. */
static void print_family(const rt__offer *node, rt__family fam, int count)
{
    const rt__family_info *f = &rt__families[fam];
    printf("  %s: %d x %s; a task is told its own in %s", f->resource, count, f->name,
           f->variable);
    if (node->families.noset >> fam & 1)
        printf(" (left alone: RTASK_NOSET_%s)", f->variable);
    printf("\n");
}

static void print_text(const rt__offer *node, int rank)
{
    const rt__machine *m = &node->machine;
    printf("Devices (found by %s):\n", m->source);
    if (m->count == 0)
        printf("  none\n");
    for (int i = 0; i < m->count; i++) {
        char line[512];
        rt__device_describe(&m->dev[i], i, line, sizeof line);
        printf("  %s\n", line);
        for (int j = 0; j < m->dev[i].migs; j++)
            printf("    MIG instance %d: %s, memory %llu MiB\n", j, m->dev[i].mig_uuid[j],
                   m->dev[i].mig_memory_mib[j]);
    }
    char totals[2048];
    rt__offer_describe(node, totals, sizeof totals);
    printf("Resources rt_init() would offer:\n  %s\n", totals);
    int gpus = (int)(node->total.gpu / RT__UNIT);
    for (int i = 0; i < gpus; i++)
        printf("  GPU id %s%s%s%s: local CPUs %s\n", node->gpu_ids[i],
               node->gpu_types[i][0] ? " (" : "", node->gpu_types[i],
               node->gpu_types[i][0] ? ")" : "",
               node->gpu_cpus[i][0] ? node->gpu_cpus[i] : "unknown (not bound)");
    if (gpus > 0)
        print_family(node, node->families.gpu, gpus);
    if (gpus > 0 && node->families.gpu == RT__FAM_NVIDIA)
        printf("  GPU shares held by MPS: %s\n", node->mps_why);
    if (node->families.accel != RT__FAM_NONE)
        print_family(node, node->families.accel, node->families.accel_total);
    char labels[RT__LABELS_LEN];
    labels_of(node, rank, labels);
    printf("Labels:\n  %s\n", labels);
}

typedef struct listing {
    int json;
    int count;
} listing;

static void print_node(void *arg, int rank, const char *host, const rt__offer *node)
{
    listing *l = arg;
    if (l->json) {
        printf("%s", l->count++ ? ",\n" : "[\n");
        print_json(node, rank, host);
    } else {
        printf("%sNode %d (rank %d, host %s)\n", l->count++ ? "\n" : "", rank, rank, host);
        print_text(node, rank);
    }
}

/* Join the MPI job as rt_init() does, without starting a runtime: rank 0
 * prints every rank's node, in rank order. */
static int print_cluster(const rt__offer *node, int json)
{
    rt__cluster *cl;
    if (rt__cluster_join(&cl, node) < 0) {
        fprintf(stderr, "rtask-info: %s\n", rt_last_error());
        return 1;
    }
    listing l = {json, 0};
    rt__cluster_nodes(cl, print_node, &l);
    if (json && l.count)
        printf("\n]\n");
    rt__cluster_end(cl);
    return 0;
}

int main(int argc, char **argv)
{
    rt_config c = RT_CONFIG_INIT;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--version") == 0) {
            print_version();
            return 0;
        } else if (strcmp(arg, "--json") == 0) {
            json = 1;
        } else if (strcmp(arg, "--cluster") == 0) {
            c.cluster = "mpi";
        } else if (strcmp(arg, "--root") == 0 && val) {
            c.sysfs_root = val;
            i++;
        } else if (strcmp(arg, "--xml") == 0 && val) {
            setenv("RTASK_HWLOC_XML", val, 1);
            i++;
        } else if (strcmp(arg, "--pci-ids") == 0 && val) {
            setenv("RTASK_PCI_IDS", val, 1);
            i++;
        } else {
            usage(strcmp(arg, "--help") == 0 ? stdout : stderr);
            return strcmp(arg, "--help") == 0 ? 0 : 2;
        }
    }
    static rt__offer node;
    if (rt__offer_resolve(&c, &node) < 0) {
        fprintf(stderr, "rtask-info: %s\n", rt_last_error());
        return 1;
    }
    int cluster = rt__cluster_wanted(&c);
    if (cluster < 0) {
        fprintf(stderr, "rtask-info: %s\n", rt_last_error());
        return 2;
    }
    if (cluster)
        return print_cluster(&node, json);
    if (json)
        print_json(&node, 0, NULL);
    else
        print_text(&node, 0);
    printf("%s", json ? "\n" : "");
    return 0;
}

/*
 * offer.h - what this machine offers as a node: the configuration of rt_init() checked
 * and completed by device detection.
 *
 * CPUs, GPUs (with their ids and the CPUs near each), custom resources,
 * neuron cores and the accelerator type, as rt_init() will offer them,
 * and the pool sizes.  rtask-info prints the same without starting
 * anything.
 */
#ifndef RT_OFFER_H
#define RT_OFFER_H

#include "rtask.h"
#include "devices/detect.h"
#include "devices/family.h"
#include "devices/instance.h"
#include "devices/resources.h"
#include "labels.h"

#include <stddef.h>

#define RT__KEEP_FDS_MAX 64

typedef struct rt__offer {
    rt__names names;
    rt__res total;
    size_t workers;
    size_t max_workers;
    int bind_cpus;                /* bind workers to their GPUs' CPUs */
    rt__family_set families;      /* its GPUs' family and its other one */
    char mps_why[600];            /* why MPS shares are enforced or not */
    char gpu_ids[RT__INSTANCE_MAX][RT__ID_LEN];   /* "" = its index */
    char gpu_cpus[RT__INSTANCE_MAX][RT__CPUS_LEN]; /* "" = unknown */
    char gpu_types[RT__INSTANCE_MAX][RT__TYPE_LEN]; /* "" = untyped */
    uint64_t gpu_bytes[RT__INSTANCE_MAX]; /* memory of each; 0 = unknown */
    char gpu_bus[RT__INSTANCE_MAX][16];   /* the PCI bus id of each one's GPU;
                                             "" = unknown (logical) */
    char gpu_sick[RT__INSTANCE_MAX][96];  /* why each is unhealthy; "" = it
                                             is not */
    char accel_ids[RT__INSTANCE_MAX][RT__ID_LEN]; /* "" = its index */
    rt__machine machine;          /* what detection found */
    int keep_fds[RT__KEEP_FDS_MAX]; /* the application's, left open in workers */
    int nkeep_fds;
    uint64_t store_bytes;         /* what the objects held may take */
    int gpu_memory_kill;          /* rt_config's */
    char labels[RT__LABELS_LEN];  /* the node's labels, its rank's but for
                                     "rank" (rt__offer_add_node()) */
} rt__offer;

/* Check the configuration (NULL = defaults) and complete it.  0, or
 * RT_EINVAL with a message. */
int rt__offer_resolve(const rt_config *config, rt__offer *node);
/* Add the node to a scheduler, its resource names made the scheduler's
 * (a cluster's ranks may have names that rank 0 has not), labelled with
 * its rank, which is its index there.  0, or -1 when out of room. */
struct rt__sched;
int rt__offer_add_node(const rt__offer *o, struct rt__sched *s);
/* The resource totals, "CPU=2 GPU=4 accelerator_type:V100=1 ...". */
void rt__offer_describe(const rt__offer *node, char *buf, size_t size);

#endif

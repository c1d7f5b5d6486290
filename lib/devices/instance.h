/*
 * instance.h - resources that come in numbered instances: GPUs and the
 * other accelerator families (neuron cores, TPU chips...).
 *
 * Each instance has capacity 1 (RT__UNIT).  A fractional request lands on
 * one instance, chosen by best fit as Ray does: among those where it fits,
 * the one it leaves with the least, ties to the lowest index, so one GPU
 * fills up before the next is touched.  A whole request takes that many
 * wholly free instances, lowest index first.  What a lease holds is a
 * pick: a set of instances and the amount taken from each.
 *
 * An instance may have a type (the custom resource "accelerator_type:T"
 * of its GPU, by index): a node may hold GPUs of several types, and a
 * request for a type is placed on instances of that type alone.
 *
 * A GPU instance may know its memory: a request in bytes then takes the
 * fraction of it that they are, rounded up (20 GB of an 80 GB GPU is
 * 0.25), so that requests in bytes and in fractions share one GPU without
 * over-committing either.
 */
#ifndef RT_INSTANCE_H
#define RT_INSTANCE_H

#include "resources.h"

#include <stddef.h>
#include <stdint.h>

#define RT__INSTANCE_MAX 256
#define RT__ID_LEN 64 /* "3", "GPU-6f1c...", "MIG-..." */
#define RT__CPUS_LEN 128 /* a CPU list near an instance, "0-19,40-59" */
#define RT__TYPE_LEN 32  /* an accelerator type, "V100" */
#define RT__ANY_TYPE (-1)

typedef struct rt__instances {
    int count;
    rt__amount free[RT__INSTANCE_MAX];
    const char (*id)[RT__ID_LEN];          /* what tasks are told, count of
                                              them, kept by the node (its
                                              pools' copies share them);
                                              NULL: their indexes */
    signed char type[RT__INSTANCE_MAX];    /* a custom resource index, or
                                              RT__ANY_TYPE: untyped */
    uint64_t bytes[RT__INSTANCE_MAX];      /* its memory; 0 = unknown */
    unsigned char sick[RT__INSTANCE_MAX];  /* unhealthy: it takes nothing
                                              more, and counts for no
                                              request's feasibility; read
                                              and written through
                                              rt__instance_sick/sicken */
} rt__instances;

/* Instance i's health.  The round's holder marks it unhealthy while a
 * submission, under the runtime's lock alone, reads it for the request's
 * feasibility: both go through these, atomically. */
int rt__instance_sick(const rt__instances *in, int i);
void rt__instance_sicken(rt__instances *in, int i);

typedef struct rt__pick {
    rt__amount each; /* taken from every instance in mask; 0 = none */
    uint64_t mask[RT__INSTANCE_MAX / 64];
} rt__pick;

/* count instances, all free, named by ids (kept, not copied: they must
 * outlive in and its copies), or by their indexes when ids is NULL. */
void rt__instances_init(rt__instances *in, int count, const char (*ids)[RT__ID_LEN]);
/* What instance i is called: its id, or its index written into buf. */
const char *rt__instance_name(const rt__instances *in, int i, char buf[16]);
/* Choose where amount goes (a fraction of one, or a whole number), on
 * instances of the type (RT__ANY_TYPE: any).  Returns 1 and fills pick,
 * or 0 when it does not fit now. */
int rt__instances_pick(const rt__instances *in, rt__amount amount, int type, rt__pick *pick);
/* Choose the instance of the type that bytes of its memory fit best
 * (each instance's fraction is its own).  1 and fills pick, or 0. */
int rt__instances_pick_bytes(const rt__instances *in, uint64_t bytes, int type,
                             rt__pick *pick);
/* Whether amount could ever fit on instances of the type, all free. */
int rt__instances_could(const rt__instances *in, rt__amount amount, int type);
/* The most memory an instance of the type has, 0 when none knows it. */
uint64_t rt__instances_largest(const rt__instances *in, int type);
void rt__instances_take(rt__instances *in, const rt__pick *pick);
void rt__instances_give(rt__instances *in, const rt__pick *pick);
/* Whether instance i is in the pick. */
int rt__pick_has(const rt__pick *pick, int i);
/* Write the picked ids as "0,3" into buf (always terminated); returns the
 * length.  size must hold RT__INSTANCE_MAX * RT__ID_LEN bytes. */
size_t rt__pick_format(const rt__pick *pick, const rt__instances *in, char *buf,
                       size_t size);

#endif

/*
 * family.h - the accelerator families rtask schedules, as Ray does: the
 * resource each one is, the variable that tells a task its devices, and
 * what a request for it may ask.
 *
 * NVIDIA, AMD and Intel GPUs are all the resource "GPU"; a node's GPUs
 * are one family's (offer.h says which).  The other families are custom
 * resources placed on numbered instances like GPUs: AWS Neuron
 * ("neuron_cores"), Google TPU ("TPU", whole chips), Intel Gaudi ("HPU")
 * and Huawei Ascend ("NPU").  A node has at most one of these.
 */
#ifndef RT_FAMILY_H
#define RT_FAMILY_H

#include <stddef.h>

typedef enum rt__family {
    RT__FAM_NONE = -1,
    RT__FAM_NVIDIA, RT__FAM_AMD, RT__FAM_INTEL, /* the GPU families */
    RT__FAM_NEURON, RT__FAM_TPU, RT__FAM_HPU, RT__FAM_NPU,
    RT__FAM_COUNT
} rt__family;

#define RT__FAM_GPUS 3 /* families below this one are GPUs */

typedef struct rt__family_info {
    const char *name;      /* "NVIDIA GPU", as rtask-info shows it */
    const char *vendor;    /* "nvidia", as rt_config.gpu_vendor names a GPU
                              family; NULL for the others */
    const char *resource;  /* "GPU", "neuron_cores", "TPU", "HPU", "NPU" */
    const char *variable;  /* what names a task's devices */
    int fractions;         /* a request may ask for a fraction of one */
} rt__family_info;

extern const rt__family_info rt__families[RT__FAM_COUNT];

/* The non-GPU family whose resource is name, or RT__FAM_NONE. */
rt__family rt__family_of_resource(const char *name);

/* Whether a task may ask for amount of f's resource: 0, or RT_EINVAL
 * with a message ("TPU requests must be 1, 2, 4 or 8 chips"). */
int rt__family_check(rt__family f, double amount);

/* The ids a family's variable lists, as set before rt_init(): the value
 * itself, except Intel's "level_zero:0,1", which lists "0,1" (NULL when
 * it names another backend). */
const char *rt__family_listed(rt__family f, const char *value);

/* What a node tells its tasks of their devices. */
typedef struct rt__family_set {
    rt__family gpu;     /* its GPUs' family (NVIDIA when it has none: the
                           GPUs given by count are CUDA's) */
    rt__family accel;   /* its other family, or RT__FAM_NONE */
    int accel_total;    /* how many instances of it the node has */
    unsigned noset;     /* a bit per family whose variables are left
                           alone (RTASK_NOSET_<VARIABLE>=1) */
    int mps;            /* hold tasks to their GPU shares through NVIDIA
                           MPS's client variables */
    int cuda_alias;     /* AMD GPUs on a node whose application had
                           CUDA_VISIBLE_DEVICES, which HIP reads too: a
                           task gets it equal to HIP_VISIBLE_DEVICES */
} rt__family_set;

/* Read the RTASK_NOSET_<VARIABLE> switches into s->noset. */
void rt__family_read_noset(rt__family_set *s);

/* A task's devices, as the environment names them: GPU ids ("0,3"), its
 * share of each GPU (in units of 1/10000), the bytes of memory that share
 * is of each ("21474836480,0"; 0 = unknown), and its other accelerators'
 * ids. */
typedef struct rt__held {
    const char *gpus;
    long share;
    const char *memory;
    const char *accel;
} rt__held;

/* The environment of a task that holds h: lines "NAME=value", or "NAME"
 * for a variable to remove, each ended by a newline, written into buf
 * (always terminated).  Returns the length, or size when it did not fit.
 * With s->mps, NVIDIA GPUs come with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
 * (the share, rounded up to a percent) and CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
 * ("0=20480MB,1=...", the share of each GPU whose memory is known). */
size_t rt__family_env(const rt__family_set *s, const rt__held *h, char *buf, size_t size);

#endif

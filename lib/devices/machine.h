/*
 * machine.h - a machine's accelerators as detection found them (detect.h)
 * and NVML completed them (nvml.h): plain data, which the GPUs' watcher
 * (watch.h) and the node's offer read, and a cluster's ranks send as
 * bytes.
 */
#ifndef RT_MACHINE_H
#define RT_MACHINE_H

#include "family.h"
#include "instance.h"

#define RT__DEVICE_MAX 64

#define RT__MIG_MAX 7 /* instances of one GPU (an A100 or H100 has 7) */

typedef struct rt__device {
    rt__family kind;
    char bus_id[16];          /* "0000:3b:00.0"; "neuron0", "accel0"... */
    unsigned vendor, device;  /* PCI ids */
    unsigned pci_class;       /* base and sub class: 0x0302 */
    char model[96];           /* driver, hwloc or pci.ids name; may be "" */
    char type[RT__TYPE_LEN];  /* accelerator type ("V100"); may be "" */
    char uuid[96];            /* "GPU-..." where the driver says (NVML's
                                 NVML_DEVICE_UUID_V2_BUFFER_SIZE) */
    int numa_node;            /* -1: unknown or none */
    char cpus[RT__CPUS_LEN];  /* local CPUs as a list ("0-19"); may be "" */
    int cores;                /* the instances it offers: 1, or a Neuron
                                 device's cores */
    unsigned long long memory_mib; /* NVML: the GPU's memory; 0 = unknown */
    int cc_major, cc_minor;   /* NVML: CUDA compute capability; 0 = unknown */
    int migs;                 /* NVML: in MIG mode, its instances, which are
                                 offered as the GPUs instead of it */
    char mig_uuid[RT__MIG_MAX][96]; /* "MIG-...", or on drivers R450-R465
                                       "MIG-GPU-<uuid>/<gi>/<ci>" */
    unsigned long long mig_memory_mib[RT__MIG_MAX]; /* each instance's */
    char unhealthy[96];       /* why the GPU cannot be used ("NVML: GPU is
                                 lost"); "" when it can */
} rt__device;

typedef struct rt__machine {
    char source[24];          /* "hwloc", "hwloc XML", "sysfs", "+NVML" after
                                 one (plain data:
                                 a cluster's ranks send it as bytes) */
    int count;
    rt__device dev[RT__DEVICE_MAX]; /* PCI bus order */
} rt__machine;

#endif

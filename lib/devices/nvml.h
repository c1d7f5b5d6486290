/*
 * nvml.h - what NVIDIA's management library knows of the GPUs, where the
 * driver installed it: loaded at run time, never a build dependency.
 */
#ifndef RT_NVML_H
#define RT_NVML_H

#include "detect.h"

/* Complete the NVIDIA GPUs of m, matched by PCI bus id, with what NVML
 * says: the exact name ("NVIDIA H100 80GB HBM3"), UUID, memory, compute
 * capability, and the instances of a GPU in MIG mode.  The library is $RTASK_NVML_LIBRARY, else
 * libnvidia-ml.so.1.  Returns how many GPUs it completed; 0 when NVML is
 * not there or fails (detection then stands as it was). */
int rt__nvml_complete(rt__machine *m);

#endif

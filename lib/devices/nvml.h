/*
 * nvml.h - what NVIDIA's management library knows of the GPUs, where the
 * driver installed it: loaded at run time, never a build dependency.
 */
#ifndef RT_NVML_H
#define RT_NVML_H

#include "machine.h"

/* Complete the NVIDIA GPUs of m, matched by PCI bus id, with what NVML
 * says: the exact name ("NVIDIA H100 80GB HBM3"), UUID, memory, compute
 * capability, and the instances of a GPU in MIG mode (with their
 * memory).  Where NVML answers, a GPU it does not list, one whose device
 * file is missing under root (/dev/nvidiaN), and one in MIG mode with no
 * instance leave m; one whose queries say it is lost (or may not be
 * asked) stays, unhealthy; each with a warning, as is NVML failing.  The
 * library is $RTASK_NVML_LIBRARY, else libnvidia-ml.so.1.  Returns how
 * many GPUs NVML knew (when it knew none, or none that can be used, none
 * is offered, as the warnings say); -1 when NVML is not there or fails
 * (detection then stands as it was). */
int rt__nvml_complete(rt__machine *m, const char *root);
/* The watcher process's life (watch.h): watch m's NVIDIA GPUs and write
 * what happens to them on out as rt__gpu_event records, until out's
 * reader is gone; exits at once when NVML cannot start. */
_Noreturn void rt__nvml_watch(const rt__machine *m, int out);

#endif

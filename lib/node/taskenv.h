/*
 * taskenv.h - what a task sees of its worker's lease, inside the worker:
 * the environment it starts with (the worker's first one, plus the
 * variables that name the lease's devices, put back after a task that
 * changed it), the CPUs near its GPUs, and the ids that
 * rt_get_gpu_ids() and rt_get_accelerator_ids() return.
 */
#ifndef RT_TASKENV_H
#define RT_TASKENV_H

#include "proto.h"

/* At the worker's start: the environment to come back to. */
void rt__taskenv_capture(void);
/* A DEVICES message: the lease's devices from now on.  0, or -1 when it
 * breaks the protocol or without memory (the worker leaves). */
int rt__taskenv_set_devices(const rt__hdr *h, const char *payload);
/* A task ended: what it changed in the environment is put back. */
void rt__taskenv_after_task(void);

#endif

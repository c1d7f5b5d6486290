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
/* The ids of resource's devices the running task holds, for call
 * (rt_get_gpu_ids(3), rt_get_accelerator_ids(3)). */
int rt__taskenv_ids(const char *call, const char *resource, const char *const **ids,
                    size_t *n);
/* A DEVICES message: the lease's devices from now on.  0, or -1 when it
 * breaks the protocol or without memory (the worker leaves). */
int rt__taskenv_set_devices(const rt__hdr *h, const char *payload);
/* An ENV message: the next tasks' own variables, set over the lease's
 * (an empty one: none).  0, or -1 when it breaks the protocol or without
 * memory (the worker leaves). */
int rt__taskenv_set_vars(const rt__hdr *h, const char *payload);
/* A worker idle from its start runs once, on devices of its own, what
 * its first DEVICES will run (parsing, splitting the ids, setting and
 * removing a variable), so that the code and the memory it touches are
 * in place before a task waits for them.  Nothing of it stays. */
void rt__taskenv_rehearse(void);
/* A task is about to run; last: the worker retires after it.  It gets
 * the lease's environment back if a last task before it left it changed
 * (one taken back may be followed by another), and the environment is
 * recorded, to be checked after it, unless nothing runs after it. */
void rt__taskenv_before_task(int last);
/* A task ended: what it changed in the environment is put back, or after
 * a last task, before the next if one comes. */
void rt__taskenv_after_task(int last);

#endif

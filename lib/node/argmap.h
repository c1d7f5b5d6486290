/*
 * argmap.h - the objects a worker's tasks take as arguments, mapped.
 *
 * A task's argument that is an object comes as a memfd, which the worker
 * maps for the task.  Mapping it anew for each task costs a page fault
 * per 16 pages of it each time: for one object read by many tasks (a
 * fan-out), most of their cost.  So the worker keeps the mapping of the
 * last task's objects: a next task that takes one of them finds it
 * mapped, its pages in place.
 *
 * Only shared memory sealed against writes (F_SEAL_FUTURE_WRITE, as every
 * object is before it reaches a worker) is kept, and it is mapped shared
 * and read-only: the kernel then never lets the mapping be made writable
 * (memfd_create(2)), so no task changes what a later one reads there.
 * What is kept is bounded by the last task's objects: taking another
 * object unmaps those no task uses, and so does rt__argmap_forget(),
 * which the worker calls once it has waited a while for work.  Safe
 * from any thread.
 */
#ifndef RT_ARGMAP_H
#define RT_ARGMAP_H

#include <stddef.h>

/* The len bytes of the object in memfd fd (which the caller still
 * closes), mapped read-only: kept, or mapped for this task alone when
 * the memfd is not sealed against writes.  NULL with errno when it
 * cannot be mapped (EPROTO: not a memfd that holds len bytes). */
const void *rt__argmap_take(int fd, size_t len);
/* A task is done with what rt__argmap_take() gave it. */
void rt__argmap_drop(const void *data, size_t len);
/* Whether mappings no task uses are kept. */
int rt__argmap_kept(void);
/* Unmap the mappings no task uses. */
void rt__argmap_forget(void);

#endif

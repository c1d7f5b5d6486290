/*
 * procstate.h - what a task may change in its worker process, besides
 * the environment (worker.c), that the next task in that worker must not
 * inherit: the working directory, the umask, the signal mask and the
 * standard signals' dispositions.
 *
 * Checking them costs system calls (about 10 us here), more than a no-op
 * task's whole run.  A task that changes any of them makes a system call,
 * which takes at least as long as the cheapest one; a task whose function
 * ran for less than half of that (measured when the fork server starts)
 * made none, so nothing is checked after it.  Nor after a task after
 * which the worker retires (last), unless another comes all the same.
 */
#ifndef RT_PROCSTATE_H
#define RT_PROCSTATE_H

#include <stdint.h>

/* In the fork server: time the cheapest system call, for its workers. */
void rt__procstate_calibrate(void);
/* In a worker, before its first task: remember the state to restore. */
void rt__procstate_capture(void);
/* Before a task: put back what a last task before it changed. */
void rt__procstate_before_task(void);
/* After a task whose function ran for ran_ns: put back what it changed,
 * or after a last task, before the next if one comes. */
void rt__procstate_after_task(uint64_t ran_ns, int last);

#endif

/*
 * procstate.h - what a task may change in its worker process, besides
 * the environment (worker.c), that the next task in that worker must not
 * inherit: the working directory, the umask, the signal mask and the
 * standard signals' dispositions.
 *
 * Checking them costs system calls (about 4 us here), more than a no-op
 * task's whole run.  A task that changes any of them makes a system call,
 * which takes at least as long as the cheapest one; a task that ran for
 * less than half of that (measured when the fork server starts) made
 * none, so nothing is checked after it.
 */
#ifndef RT_PROCSTATE_H
#define RT_PROCSTATE_H

#include <stdint.h>

/* In the fork server: time the cheapest system call, for its workers. */
void rt__procstate_calibrate(void);
/* In a worker, before its first task: remember the state to restore. */
void rt__procstate_capture(void);
/* After a task that ran for ran_ns: put back what it changed. */
void rt__procstate_restore(uint64_t ran_ns);

#endif

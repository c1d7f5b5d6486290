/*
 * procstate.h - what a task may change in its worker process, besides
 * the environment (worker.c), that the next task in that worker must not
 * inherit: the working directory, the umask, the signal mask and the
 * standard signals' dispositions.
 *
 * Checking them costs system calls (about 3 us here, most of it reading
 * /proc/self/stat), more than a small task's whole run.  A task that
 * changes any of them makes a system call, so only a task that made one
 * is checked.  The worker's thread watches for its task's first system
 * call with Linux's syscall user dispatch (5.11 and later, x86-64): that
 * call raises SIGSYS, whose handler notes it and lets it and every later
 * one through (about 1.6 us, once per task).  Where dispatch cannot be
 * had (another architecture, an older kernel, valgrind, ThreadSanitizer),
 * a task whose function ran for less than half of the cheapest system
 * call (measured when the fork server starts) made none; any other is
 * checked.
 *
 * Other threads are not watched: a thread a task left running could
 * change the process meanwhile.  Starting one takes a system call, so
 * the task that started it is checked, and while the process has
 * threads besides the worker's own, every task is.
 *
 * Nothing is checked after a task after which the worker retires (last),
 * unless another comes all the same.
 */
#ifndef RT_PROCSTATE_H
#define RT_PROCSTATE_H

#include <stdint.h>

/* In the fork server: time the cheapest system call, for its workers. */
void rt__procstate_calibrate(void);
/* In a worker, before its first task: remember the state to restore,
 * and start watching its thread's system calls where it can. */
void rt__procstate_capture(void);
/* The worker's own threads, its first among them, are n now (its
 * flusher started): more than that are a task's. */
void rt__procstate_own_threads(int n);
/* Before a task: put back what a last task before it changed. */
void rt__procstate_before_task(void);
/* Right before the task's function, and right after it returns: its
 * system calls are noted in between. */
void rt__procstate_watch(void);
void rt__procstate_unwatch(void);
/* After a task whose function ran for ran_ns: put back what it changed,
 * or after a last task, before the next if one comes. */
void rt__procstate_after_task(uint64_t ran_ns, int last);

#endif

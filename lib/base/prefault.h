/*
 * prefault.h - a forked process makes its pages its own ahead of need.
 *
 * After fork() every page a process writes is first copied (copy on
 * write), and every page of code it runs is first mapped: a fault each,
 * about 2 us on the virtual machines rtask runs on.  A fresh worker's
 * first task makes tens of them, in its caller's wait.  A worker that
 * waits idle for its first task (a spare, one of the idle pool) takes
 * those faults before, while nobody waits: the pages it had from the
 * fork server that it is likely to write (its heap, the libraries' data,
 * the stack below it), a bounded amount, and only pages that exist, so
 * that it grows by no more than what its first tasks would copy.
 */
#ifndef RT_PREFAULT_H
#define RT_PREFAULT_H

/* Copy the pages this process shares with its parent that its next
 * work is likely to write.  Linux 5.14 or later (MADV_POPULATE_WRITE);
 * before, it does nothing.  Cost: about 100 us for a worker of the
 * usual size. */
void rt__prefault_writes(void);

#endif

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
 * that it grows by no more than what its first tasks would copy.  It
 * stops as soon as work comes: a task never waits for more than one run
 * of pages.
 */
#ifndef RT_PREFAULT_H
#define RT_PREFAULT_H

#include <stddef.h>

/* Copy the pages this process shares with its parent that its next
 * work is likely to write, until work_came(ctx) says 1 (it is asked
 * between runs of pages).  Linux 5.14 or later (MADV_POPULATE_WRITE);
 * before, it does nothing.  Cost: about 250 us for a worker of the
 * usual size on the machine of the README's figures. */
void rt__prefault_writes(int (*work_came)(void *ctx), void *ctx);
/* Map [start, start + len) for writing: pages of a shared mapping this
 * process inherited (a fork keeps none of them mapped), or fresh
 * anonymous memory (the kernel zeroes each page now, not at its first
 * write). */
void rt__prefault_range(void *start, size_t len);
/* Make the calling thread's next allocations (tens of kilobytes) land
 * on pages of its own. */
void rt__prefault_heap(void);

#endif

/*
 * warm.h - a forked process's pages mapped before it needs them.
 *
 * fork() gives a child its parent's memory without its page tables for
 * the code (mapped on first use) nor private copies of the data (copied
 * on first write).  On the machines rtask runs on a page fault costs
 * microseconds, and a fresh worker's first task takes tens of them: the
 * difference between a spare worker's first task and a reused worker's.
 * A worker with nothing to do yet takes those faults ahead of time.
 */
#ifndef RT_WARM_H
#define RT_WARM_H

/* Map the code and read-only data of every library (each mapping up to
 * a bound), copy the writable private pages (up to RT__WARM_COPY_MAX in
 * all: that much memory per process at most) and grow the stack and the
 * heap's free top a little.  Stops early once fd is readable (work came:
 * it must not wait for this).  Single-threaded processes only. */
#define RT__WARM_COPY_MAX (1u << 20)
void rt__warm_pages(int fd);

#endif

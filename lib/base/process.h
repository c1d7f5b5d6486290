/*
 * process.h - what this process is to rtask: the application, or one of
 * the processes rt_init() forks from it (the fork server, the workers).
 *
 * A forked process holds a stale copy of the application's runtime: the
 * public calls that would use it fail there with RT_EINWORKER.  Like
 * errno, this is one fact about the whole process, set once, which is
 * why it is the one global that every layer may read.
 */
#ifndef RT_PROCESS_H
#define RT_PROCESS_H

#include <stddef.h>

/* In the fork server, right after it is forked; its workers inherit it. */
void rt__process_is_forked(void);
/* 1 in the fork server and in workers, 0 in the application. */
int rt__process_forked(void);
/* In a process just forked from the application: close every descriptor
 * but 0, 1, 2 and the n of keep (negative ones are ignored), which the
 * application had open, so that none outlives the application's own
 * close of it. */
void rt__process_close_all_but(const int *keep, int n);

/* A mapping: len bytes at at. */
typedef struct rt__mapping {
    const void *at;
    size_t len;
} rt__mapping;

/* In a process just forked from the application: unmap every shared
 * mapping it inherited that it can write, but those that overlap one of
 * the n in keep, so that no worker writes the application's shared
 * memory (MPI's between the ranks of a machine, its own).  No
 * allocation, as above. */
void rt__process_unmap_shared_but(const rt__mapping *keep, int n);
/* Seal a mapping (mseal(2), Linux 6.10 and later): from now on it cannot
 * be moved, grown, unmapped or protected otherwise, so that a task
 * cannot grow its worker's part of memory shared with other workers
 * (mremap(2)) into theirs.  0, or -1 with errno (ENOSYS before 6.10). */
int rt__process_seal(const rt__mapping *m);

#endif

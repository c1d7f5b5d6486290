/*
 * forkserver.h - the small process that forks every worker.
 *
 * The runtime thread forks it first thing, while the application is still
 * small, so that later forks copy only this image: starting a worker costs
 * the same whatever the application grows to.  It is not the
 * application's child (an intermediate forks it and exits), so that an
 * application that waits for all its children does not wait for it; it
 * watches the application through a pidfd and ends with it, and ends at
 * rt_shutdown() when its socket reaches end of file.  It talks to the
 * runtime thread over that socket (SPAWN in; SPAWNED, SPAWN_FAILED and
 * EXITED out) and is the parent of every worker, so it reaps them.
 */
#ifndef RT_FORKSERVER_H
#define RT_FORKSERVER_H

#include "worker.h"

#include <stddef.h>
#include <sys/types.h>

/* The application's descriptors that the fork server, and so every
 * worker, keeps open besides 0, 1 and 2 (rt_config.keep_fds). */
typedef struct rt__keep {
    const int *fd;
    int n;
    int shared_memory; /* and the shared memory it could write (0: the
                          fork server unmaps it, under the guard) */
} rt__keep;

#define RT__KEEP_MAX 64 /* descriptors of the application that keep may name */

/* Fork the fork server; *ctl gets the application's end of its socket,
 * *exited a descriptor readable once it has ended (-1 on a kernel without
 * pidfds).  Workers get their slot in slots[nslots] (shared memory, see
 * worker.h); a SPAWN message names it.  They share the board (board.h;
 * NULL: none).  Every descriptor the application had open is closed in
 * it, but 0, 1, 2 and keep's, and without keep.shared_memory every
 * writable shared mapping but theirs is unmapped.  Returns the pid, or
 * -1 with errno set. */
pid_t rt__forkserver_start(int *ctl, int *exited, rt__run_slot *slots, size_t nslots,
                           struct rt__board *board, rt__keep keep);
/* Tell it to stop, and wait until it has killed and reaped every worker
 * and ended (10 s at most); closes exited.  The caller closes ctl. */
void rt__forkserver_stop(int ctl, int exited);

#endif

/*
 * watch.h - the GPUs watched while the runtime runs: a process of its own
 * holds NVML open, waits for the GPUs' critical events (XIDs, ECC errors,
 * a GPU lost) and looks at the processes that use their memory, and
 * writes what it sees as records on a pipe.
 *
 * A process, not a thread: NVML's waits block, its library leaves
 * descriptors and threads behind after nvmlShutdown(), and the process
 * takes all of that with it when it ends.  Like the fork server it is no
 * child of the application (which may wait for its own children) and it
 * ends when the application does, or when its pipe closes.
 */
#ifndef RT_WATCH_H
#define RT_WATCH_H

#include "gpu_event.h"
#include "machine.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Start watching m's NVIDIA GPUs where NVML can be loaded: *fd gets the
 * read end of the records' pipe (non-blocking, close-on-exec).  0, or -1
 * when there is nothing to watch (no NVIDIA GPU) or no process could be
 * started (whether it watches is told by its first record).  The
 * watcher ends by itself when NVML cannot start (RT__GPU_UNWATCHED, then
 * end of file), when fd is closed, or when the application ends; end of
 * file before either record is a watcher that could not be forked, or
 * was killed or crashed first.  A watcher that begins reports the GPUs lost before
 * it did (what a watcher started again missed). */
int rt__gpu_watch_start(const rt__machine *m, int *fd);
/* The records waiting on fd, up to max: how many; 0 when none waits; -1
 * at end of file (the watcher has ended). */
long rt__gpu_watch_read(int fd, rt__gpu_event *out, size_t max);
/* Whether a record leaves its GPU healthy: watching, a usage, a corrected ECC
 * error, or an XID that is an application's fault (13, 31, 43, 45, 68,
 * 109: as NVIDIA's Kubernetes device plugin counts them). */
int rt__gpu_event_harmless(const rt__gpu_event *e);
/* What a record says, "XID 79 (the GPU has fallen off the bus)". */
void rt__gpu_event_describe(const rt__gpu_event *e, char *buf, size_t size);

#endif

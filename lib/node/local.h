/*
 * local.h - the local node: this machine's fork server and its worker
 * processes, behind the node interface (node.h).
 *
 * Workers are forked by the fork server on request; the node keeps each
 * one's socket, output pipes and run slot.  A worker is usable as soon as
 * it is requested: what is sent to it waits in its socket until it runs.
 * Output lines are relayed to the application's stdout and stderr with
 * their "(name pid=N)" prefix before the answers that follow them.
 */
#ifndef RT_LOCAL_H
#define RT_LOCAL_H

#include "forkserver.h"
#include "node.h"
#include "base/loop.h"
#include "devices/detect.h"
#include "devices/family.h"

#include <stddef.h>

typedef struct rt__local rt__local;

/* Map the run slots and fork the fork server: the first thing rt_init()
 * does, while the process holds nothing else of ours; and the GPUs'
 * watcher for gpus (devices/watch.h; NULL: none), whose records become
 * the node's gpu events.  target_idle workers are kept ready; at most max
 * workers run tasks (actors have processes of their own besides).  Tasks
 * are told their devices in the variables of families.  0, or a negative
 * error code with a message. */
int rt__local_start(rt__local **out, const rt__family_set *families, size_t target_idle,
                    size_t max, rt__keep keep, const rt__machine *gpus);
/* Watch the fork server and the workers on loop, and start the idle
 * workers.  0, or -1 with errno when not one worker could start (some
 * but not all: a warning). */
int rt__local_attach(rt__local *l, rt__loop *loop);
/* rt_init()'s error for a step of starting that failed with errno: out of
 * descriptors means no worker can start, which is what the user must
 * hear (and raise ulimit -n); anything else names the step. */
int rt__local_start_error(const char *step);
rt__node *rt__local_node(rt__local *l);
/* The fork server's pid (for the tests, which look at its workers). */
pid_t rt__local_forkserver(const rt__local *l);
/* The application's end of the door through which workers' threads
 * connect to make calls (client.h); rt__local_stop() closes it. */
int rt__local_door(const rt__local *l);
/* A thread is about to wait without reading answers itself (rt_wait(),
 * rt_notify()): the answers that workers hold for a caller that may
 * read them in their journals (worker.h's RT__AWAIT_SOON) go now: those
 * of the last few workers told so (a caller that waits otherwise than
 * the others may find an older one's held, 5 us at most).  Any thread,
 * any time: it only turns words of the run slots. */
void rt__local_unhold(rt__local *l);
/* Stop: the fork server kills and reaps every worker when its socket
 * closes; reap it, relay what the workers printed, free everything. */
void rt__local_stop(rt__local *l);

#endif

/*
 * timeline.h - a record of every task and actor call that ended, for
 * rt_timeline(): Chrome's trace-event JSON (Perfetto, chrome://tracing
 * and rtask-timeline(1) read it), one lane per worker process, a lane
 * group per node.
 *
 * The dispatcher appends an entry when a task ends, only while recording
 * is on (rt_config.timeline or RTASK_TIMELINE): otherwise nothing here
 * runs.  Entries are plain data; names are resolved when the file is
 * written.
 */
#ifndef RT_TIMELINE_H
#define RT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rt__span {
    uint64_t id;             /* the task's handle */
    const void *fn;          /* named by its symbol unless name is set */
    char name[64];           /* rt_opts.name, or "" */
    int node;
    uint64_t lane;           /* the worker process (its pid on this machine) */
    char gpus[64];           /* the GPU ids it held, "0,1"; "" */
    char accel[64];          /* the ids of its accelerator family's instances */
    double gpu_share;        /* how much of each of those GPUs: 0.25, 1 */
    double accel_share;      /* and of each of those accelerators */
    uint64_t queued_ns, started_ns, ended_ns;
    int status;              /* RT_OK, RT_ETASK, RT_EWORKERDIED... */
    int retries;             /* runs before this one that were lost */
    int call;                /* an actor's call, not a task */
    uint64_t gpu_peak;       /* the most GPU memory its process was seen to
                                hold, in bytes; 0: none seen */
    int mark;                /* not a run: an instant on node's timeline, a
                                GPU's event (name says it, gpus names the
                                GPU's bus id) at started_ns */
} rt__span;

typedef struct rt__timeline {
    rt__span *v;
    size_t n, cap;
    uint64_t origin_ns;      /* time 0 of the file: rt_init() */
} rt__timeline;

/* 0, or -1 when out of memory (the span is lost, and the file says so). */
int rt__timeline_add(rt__timeline *tl, const rt__span *s);
/* Write the spans to path: 0, or RT_ESYS / RT_EINVAL with a message. */
int rt__timeline_write(const rt__timeline *tl, const char *path);
void rt__timeline_free(rt__timeline *tl);

#endif

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

/* An entry as the dispatcher describes it; the timeline keeps it in
 * fewer bytes (timeline.c).  Texts live in the timeline's text, at an
 * offset (0: none). */
typedef struct rt__span {
    uint64_t id;             /* the task's handle */
    const void *fn;          /* named by its symbol unless it has a name */
    uint64_t lane;           /* the worker process (its pid on this machine;
                                on another rank, its lease's number): kept
                                in 32 bits */
    uint64_t queued_ns, started_ns, ended_ns;
    uint64_t gpu_peak;       /* the most GPU memory its process was seen to
                                hold, in bytes; 0: none seen */
    uint32_t name;           /* rt_opts.name; a mark's event */
    uint32_t actor;          /* an actor's call: the actor's texts
                                (rt__timeline_actor); the call has no name
                                of its own then */
    uint32_t devices;        /* the GPU ids it held ("0,1"), then the ids of
                                its accelerator family's instances; a mark's
                                GPU bus id */
    float gpu_share;         /* how much of each of those GPUs: 0.25, 1 */
    float accel_share;       /* and of each of those accelerators */
    int32_t node;
    int32_t status;          /* RT_OK, RT_ETASK, RT_EWORKERDIED... */
    int32_t retries;         /* runs before this one that were lost */
    uint8_t call;            /* an actor's call, not a task */
    uint8_t mark;            /* not a run: an instant on node's timeline (a
                                GPU's event) at started_ns */
} rt__span;

typedef struct rt__entry rt__entry;
typedef struct rt__entry_extra rt__entry_extra;

/* Entries in chunks mapped with their pages present (a page fault per
 * few dozen tasks cost more than the rest of recording), what few of
 * them have besides in an array, texts in one buffer. */
typedef struct rt__timeline {
    rt__entry **chunk;
    size_t nchunks, chunks_cap, n; /* n entries in all */
    rt__entry *ahead;        /* the next chunk, mapped ahead of need, or NULL */
    size_t ahead_present;    /* its bytes whose pages are present */
    rt__entry_extra *extra;
    size_t nextra, extra_cap;
    char *text;
    size_t text_len, text_cap;
    uint64_t origin_ns;      /* time 0 of the file: rt_init() */
} rt__timeline;

/* Append s with its texts (each NULL or "" for none; gpus and accel go
 * together): 0, or -1 when out of memory (the span is lost). */
int rt__timeline_add(rt__timeline *tl, const rt__span *s, const char *name, const char *gpus,
                     const char *accel);
/* Keep an actor's texts, its name then its handle in decimal, for its
 * runs' spans to share: their offset, or 0 when out of memory (its runs
 * are then written without their actor). */
uint32_t rt__timeline_actor(rt__timeline *tl, const char *name, uint64_t handle);
/* While nothing else is to be done: make a step of the next chunk's
 * pages present (the kernel zeroes fresh pages, which is most of what a
 * record costs when its own add does it), once entries are kept. */
void rt__timeline_prepare(rt__timeline *tl);
/* The spans as Chrome trace-event JSON, in *text (free()) of *len bytes,
 * made in memory by the round's holder; then written to path by whoever
 * asked, outside the round.  0, or RT_ENOMEM / RT_ESYS / RT_EINVAL with
 * a message. */
int rt__timeline_render(const rt__timeline *tl, char **text, size_t *len);
int rt__timeline_save(const char *text, size_t len, const char *path);
void rt__timeline_free(rt__timeline *tl);

#endif

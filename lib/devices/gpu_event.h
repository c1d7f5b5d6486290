/*
 * gpu_event.h - what the GPUs' watcher writes on its pipe (watch.h), as
 * NVML's side of it (nvml.c) makes each record.
 */
#ifndef RT_GPU_EVENT_H
#define RT_GPU_EVENT_H

#include <stdint.h>

typedef enum rt__gpu_kind {
    RT__GPU_XID = 1,    /* a critical XID: code is its number */
    RT__GPU_ECC,        /* a double-bit ECC error */
    RT__GPU_ECC1,       /* a single-bit ECC error (corrected) */
    RT__GPU_LOST,       /* the GPU is lost (off the bus) */
    RT__GPU_USAGE,      /* process pid holds code bytes of the GPU's memory
                           (0: no longer) */
    RT__GPU_WATCHING,   /* NVML started: watcher pid watches from now on
                           (its first record) */
    RT__GPU_UNWATCHED   /* NVML could not start: watcher pid ends, nothing
                           is watched (its only record; a watcher that ends
                           with neither was killed, or crashed, first) */
} rt__gpu_kind;

/* One record, written whole (it is smaller than PIPE_BUF). */
typedef struct rt__gpu_event {
    uint32_t kind;
    uint32_t pid;
    uint64_t code;
    char bus_id[16];   /* the GPU's, as detection names it */
} rt__gpu_event;

#endif

/*
 * spares.h - how many fresh workers to keep forked ahead of need.
 *
 * A task that needs a fresh worker (max_calls = 1, the default for GPU
 * tasks) would otherwise wait for a fork of the fork server and the new
 * process's start.  The local node keeps spares: never-used workers,
 * idle, blocked on their sockets (so they cost no CPU), refilled in the
 * background.  How many follows the rate of such tasks: enough to cover
 * the leases that come while one spare is being replaced, bounded, and
 * none once such tasks stop coming.  Decisions only; the node forks.
 */
#ifndef RT_SPARES_H
#define RT_SPARES_H

#include <stddef.h>
#include <stdint.h>

#define RT__SPARES_MAX 8

typedef struct rt__spares {
    uint64_t last_ns;   /* the last lease that needed a fresh worker; 0:
                           none yet (the node reads it) */
    double gap_ns;      /* moving average of the time between them */
    double start_ns;    /* moving average of a worker's start */
} rt__spares;

/* A lease needed a fresh worker at now_ns. */
void rt__spares_leased(rt__spares *s, uint64_t now_ns);
/* A worker took took_ns from the fork server's request to its start. */
void rt__spares_started(rt__spares *s, uint64_t took_ns);
/* How many fresh workers to keep idle at now_ns: 0 when no lease has
 * needed one for a while, else from 1 to RT__SPARES_MAX. */
size_t rt__spares_wanted(const rt__spares *s, uint64_t now_ns);

#endif

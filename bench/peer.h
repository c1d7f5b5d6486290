/* peer.h - what the C peers (peer_openmp.c, peer_starpu.c) share: their
 * figures as peers.py prints them, "PEER|name|unit|median", so that the
 * benchmark reads all of its peers alike. */
#ifndef RT_BENCH_PEER_H
#define RT_BENCH_PEER_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PEER_REPS 5

static inline double peer_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int peer_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* StarPU as the peers run it: 2 CPU workers, no GPU, quiet (set before
 * starpu_init()). */
static inline void peer_starpu_env(void)
{
    setenv("STARPU_NCPU", "2", 1);
    setenv("STARPU_NCUDA", "0", 1);
    setenv("STARPU_NOPENCL", "0", 1);
    setenv("STARPU_SILENT", "1", 1);
}

/* Median over PEER_REPS runs of fn(n) (seconds), printed as a rate (n per
 * second) or as microseconds per unit. */
static inline void peer_report(const char *name, int as_rate, double (*fn)(size_t),
                               size_t n)
{
    double v[PEER_REPS];
    for (int i = 0; i < PEER_REPS; i++)
        v[i] = as_rate ? (double)n / fn(n) : fn(n) / (double)n * 1e6;
    qsort(v, PEER_REPS, sizeof *v, peer_cmp);
    printf("PEER|%s|%s|%.6g\n", name, as_rate ? "tasks/s" : "us/task", v[PEER_REPS / 2]);
    fflush(stdout);
}

#endif

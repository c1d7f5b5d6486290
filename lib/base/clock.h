/*
 * clock.h - timeouts on CLOCK_MONOTONIC, which the clock cannot step.
 */
#ifndef RT_CLOCK_H
#define RT_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t rt__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A condition variable whose timed waits use CLOCK_MONOTONIC. */
static inline void rt__cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}

/* The CLOCK_MONOTONIC time timeout_us (>= 0) from now. */
static inline struct timespec rt__deadline_after_us(long long timeout_us)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long ns = ts.tv_nsec + timeout_us % 1000000 * 1000;
    ts.tv_sec += (time_t)(timeout_us / 1000000 + ns / 1000000000L);
    ts.tv_nsec = (long)(ns % 1000000000L);
    return ts;
}

/* The CLOCK_MONOTONIC time timeout_ms (>= 0) from now. */
static inline struct timespec rt__deadline_after(long timeout_ms)
{
    return rt__deadline_after_us((long long)timeout_ms * 1000);
}

#endif

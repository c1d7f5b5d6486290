/*
 * clock.h - timeouts on CLOCK_MONOTONIC, which the clock cannot step.
 */
#ifndef RT_CLOCK_H
#define RT_CLOCK_H

#include <pthread.h>
#include <time.h>

/* A condition variable whose timed waits use CLOCK_MONOTONIC. */
static inline void rt__cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}

/* The CLOCK_MONOTONIC time timeout_ms (>= 0) from now. */
static inline struct timespec rt__deadline_after(long timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

#endif

/*
 * thread.h - rtask's own threads, which take no signal: signals belong
 * to the application (or, in a worker, to the task).
 */
#ifndef RT_THREAD_H
#define RT_THREAD_H

#include <pthread.h>
#include <signal.h>

/* pthread_create() with every signal blocked in the new thread; returns
 * what pthread_create() does. */
static inline int rt__thread_start(pthread_t *thread, const pthread_attr_t *attr,
                                   void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(thread, attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

#endif

/*
 * thread.h - rtask's own threads, which take no signal: signals belong
 * to the application (or, in a worker, to the task), and which bear a
 * name of their own ("rtask-...", rtask(7)), so that `top -H`, a
 * debugger or /proc tell them from the application's.
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

/* The calling thread's name (15 bytes at most), as its first act: a
 * thread named by another could have ended, and its handle with it.
 * An actor's threads that run its methods keep the process's name. */
static inline void rt__thread_name(const char *name)
{
    (void)pthread_setname_np(pthread_self(), name); /* a name is only a help */
}

#endif

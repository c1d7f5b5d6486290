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

/* pthread_create() with every signal blocked in the new thread, named
 * name (15 bytes at most; NULL: the process's name, as an actor's
 * threads that run its methods keep); returns what pthread_create()
 * does. */
static inline int rt__thread_start(pthread_t *thread, const pthread_attr_t *attr,
                                   void *(*fn)(void *), void *arg, const char *name)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(thread, attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!err && name)
        (void)pthread_setname_np(*thread, name); /* a name is only a help */
    return err;
}

#endif

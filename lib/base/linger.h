/*
 * linger.h - looking for work a little while before sleeping.
 *
 * On the virtual machines rtask runs on, a thread that sleeps in a system
 * call and is woken by another process costs tens of microseconds of CPU
 * on both sides, more than a small task.  Where work is about to come (a
 * graph's next step, the answers of quick tasks), a thread about to wait
 * looks for it first, yielding the CPU to anyone who wants it, for at
 * most RT__LINGER_NS.  Whether work is about to come is the caller's
 * guess: lingering where it does not only burns that much CPU.
 */
#ifndef RT_LINGER_H
#define RT_LINGER_H

#define RT__LINGER_NS 50000ull

/* Return once fd is readable (1), or after RT__LINGER_NS (0). */
int rt__linger(int fd);

#endif

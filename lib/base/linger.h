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

#include <stdint.h>

#define RT__LINGER_NS 50000ull

/* Return once fd is readable (1), or after RT__LINGER_NS (0). */
int rt__linger(int fd);
/* Linger until `until` (rt__now_ns()) for fd, or for what found(ctx)
 * looks at in memory (another process's words): 2 once fd is readable,
 * 1 once found() says so (it is asked first), 0 at the end. */
int rt__linger_until(int fd, uint64_t until, int (*found)(const void *ctx), const void *ctx);

#endif

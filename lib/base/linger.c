/* linger.c - looking for work a little while before sleeping (linger.h). */
#include "linger.h"

#include "clock.h"

#include <poll.h>
#include <sched.h>

int rt__linger(int fd)
{
    if (fd < 0)
        return 0; /* a closed channel: nothing will come */
    return rt__linger_until(fd, rt__now_ns() + RT__LINGER_NS, NULL, NULL) != 0;
}

int rt__linger_until(int fd, uint64_t until, int (*found)(const void *ctx), const void *ctx)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (;;) {
        if (found && found(ctx))
            return 1;
        if (poll(&p, 1, 0) > 0)
            return 2;
        if (rt__now_ns() >= until)
            return 0;
        sched_yield();
    }
}

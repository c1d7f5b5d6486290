/* linger.c - looking for work a little while before sleeping (linger.h). */
#include "linger.h"

#include "clock.h"

#include <poll.h>
#include <sched.h>

void rt__linger(int fd)
{
    if (fd < 0)
        return; /* a closed channel: nothing will come */
    uint64_t start = rt__now_ns();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, 0) == 0 && rt__now_ns() - start < RT__LINGER_NS)
        sched_yield();
}

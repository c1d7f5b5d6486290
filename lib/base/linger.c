/* linger.c - looking for work a little while before sleeping (linger.h). */
#include "linger.h"

#include "clock.h"

#include <poll.h>
#include <sched.h>

int rt__linger(int fd)
{
    if (fd < 0)
        return 0; /* a closed channel: nothing will come */
    uint64_t start = rt__now_ns();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int ready;
    while (!(ready = poll(&p, 1, 0) > 0) && rt__now_ns() - start < RT__LINGER_NS)
        sched_yield();
    return ready;
}

/* random.c - numbers nobody can guess (random.h). */
#include "random.h"

#include "clock.h"

#include <sys/random.h>
#include <unistd.h>

static uint64_t seed(const uint64_t *state)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != sizeof s)
        s = rt__now_ns() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^
            (uint64_t)(uintptr_t)state;
    return s ? s : 1;
}

uint64_t rt__random_next(uint64_t *state)
{
    if (!*state)
        *state = seed(state);
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545f4914f6cdd1dull;
}

/*
 * random.h - numbers nobody can guess: the generations of handles, and
 * the handles that ranks and workers make for the tasks they submit.
 */
#ifndef RT_RANDOM_H
#define RT_RANDOM_H

#include <stdint.h>

/* The next number of the stream whose state is *state (xorshift64*).  A
 * state of 0 is seeded first, from getrandom(), or where that fails from
 * the clock, the process and the state's address: a stream that starts
 * in a forked process is its own. */
uint64_t rt__random_next(uint64_t *state);

#endif

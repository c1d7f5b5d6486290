/* fuzz.h - what the libFuzzer targets share: the input as a C string. */
#ifndef RT_FUZZ_H
#define RT_FUZZ_H

#include "../../lib/wire.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input with a terminating NUL, for parsers of strings; free it. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

/* A channel whose input holds the bytes, as if received; 0 or -1. */
static inline int fuzz_channel(rt__chan *c, const uint8_t *data, size_t size)
{
    rt__chan_init(c, -1);
    c->in.data = malloc(size + 1);
    if (!c->in.data)
        return -1;
    memcpy(c->in.data, data, size);
    c->in.cap = size + 1;
    c->in.tail = size;
    return 0;
}

#endif

/* fuzz.h - what the libFuzzer targets share: the input as a C string. */
#ifndef RT_FUZZ_H
#define RT_FUZZ_H

#include "../../lib/node/wire.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Each message of a channel holding the input, decoded by fn as one
 * side of the wire decodes what it receives. */
typedef void (*fuzz_message_fn)(const rt__hdr *h, const char *payload, int *fds);
static inline void fuzz_messages(const uint8_t *data, size_t size, fuzz_message_fn fn)
{
    rt__chan c;
    if (fuzz_channel(&c, data, size) < 0)
        return;
    rt__hdr h;
    const char *payload;
    int fds[RT__MSG_MAX_FDS];
    while (rt__chan_next(&c, &h, &payload, fds) > 0)
        fn(&h, payload, fds);
    rt__chan_close(&c);
}

/* The input as a file of this process's own, for readers of files: its
 * path, or NULL; unlink it after. */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[96];
    snprintf(path, sizeof path, "/tmp/rtask-fuzz-%s-%d", name, (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    size_t wrote = fwrite(data, 1, size, f);
    return fclose(f) == 0 && wrote == size ? path : NULL;
}

#endif

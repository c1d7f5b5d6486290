/* sparse.c - a mostly-zero buffer packed as runs (sparse.h).  Each step
 * is two lengths, 4 bytes each (zeros, then bytes as they are), and the
 * bytes; zeros shorter than a step's lengths stay among the bytes, so a
 * packing is never more than one step longer than what it packs. */
#include "sparse.h"

#include <stdint.h>
#include <string.h>

#define STEP 8 /* the two lengths, as RT__SPARSE_BOUND() counts them */

/* Zero bytes from data[at], up to len. */
static size_t zeros_at(const unsigned char *data, size_t at, size_t len)
{
    size_t n = 0;
    while (at + n < len && data[at + n] == 0)
        n++;
    return n;
}

static void put_u32(unsigned char *p, size_t v)
{
    uint32_t w = (uint32_t)v;
    memcpy(p, &w, sizeof w);
}

size_t rt__sparse_pack(const void *data, size_t len, void *out)
{
    const unsigned char *in = data;
    unsigned char *o = out;
    size_t at = 0, used = 0;
    while (at < len) {
        size_t zeros = zeros_at(in, at, len), start = at + zeros, end = start;
        /* Bytes as they are, up to the next run of zeros worth a step
         * (whose step the run pays for: the bound holds). */
        while (end < len) {
            size_t z = zeros_at(in, end, len);
            if (z >= STEP)
                break;
            end += z ? z : 1;
        }
        put_u32(o + used, zeros);
        put_u32(o + used + 4, end - start);
        memcpy(o + used + STEP, in + start, end - start);
        used += STEP + (end - start);
        at = end;
    }
    return used;
}

int rt__sparse_unpack(const void *packed, size_t packed_len, void *out, size_t len)
{
    const unsigned char *p = packed;
    unsigned char *o = out;
    size_t at = 0, used = 0;
    while (used < packed_len) {
        uint32_t zeros, bytes;
        if (packed_len - used < STEP)
            return -1;
        memcpy(&zeros, p + used, sizeof zeros);
        memcpy(&bytes, p + used + 4, sizeof bytes);
        used += STEP;
        if (zeros > len - at || bytes > len - at - zeros || bytes > packed_len - used)
            return -1;
        memset(o + at, 0, zeros);
        memcpy(o + at + zeros, p + used, bytes);
        at += (size_t)zeros + bytes;
        used += bytes;
    }
    return at == len ? 0 : -1;
}

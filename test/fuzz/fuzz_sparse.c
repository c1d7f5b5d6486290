/* fuzz_sparse.c - a packed description (sparse.h), as rank 0 gathers one
 * from every rank: unpacking any bytes is safe, and what unpacks packs
 * again into a packing that unpacks to the same bytes. */
#include "fuzz.h"

#include "../../lib/base/sparse.h"

#include <string.h>

#define LEN 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char out[LEN], again[LEN], packed[RT__SPARSE_BOUND(LEN)];
    if (rt__sparse_unpack(data, size, out, LEN) < 0)
        return 0;
    size_t len = rt__sparse_pack(out, LEN, packed);
    if (len > RT__SPARSE_BOUND(LEN) || rt__sparse_unpack(packed, len, again, LEN) < 0 ||
        memcmp(out, again, LEN) != 0)
        __builtin_trap();
    return 0;
}

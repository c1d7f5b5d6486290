/* fuzz_rankmsg.c - a message between ranks (rankmsg.h): decoding any
 * bytes is safe, and what decodes encodes back to the same bytes. */
#include "fuzz.h"

#include "../../lib/base/alloc.h"
#include "../../lib/cluster/rankmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rt__rank_msg m;
    int follows;
    if (rt__rank_decode((const char *)data, size, &m, &follows) < 0)
        return 0;
    if (follows)
        m.fd = 0; /* any descriptor: the bytes are not inline */
    char *again;
    size_t len;
    if (rt__rank_encode(&m, &again, &len) < 0)
        return 0;
    if (len != size || memcmp(again, data, size) != 0)
        __builtin_trap();
    rt__free(again);
    return 0;
}

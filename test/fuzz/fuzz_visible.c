/* fuzz_visible.c - CUDA_VISIBLE_DEVICES as CUDA reads it. */
#include "fuzz.h"

#include "../../lib/sched/visible.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char ids[RT__INSTANCE_MAX][RT__ID_LEN];
    char *s = fuzz_string(data, size);
    const char *bad, *why;
    if (s)
        (void)rt__visible_parse(s, ids, RT__INSTANCE_MAX, &bad, &why);
    free(s);
    return 0;
}

/* fuzz_resources.c - the resources string, "name=amount,...". */
#include "fuzz.h"

#include "../../lib/devices/resources.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    rt__item items[RT__CUSTOM_MAX];
    int n = 0;
    if (s)
        (void)rt__items_parse(s, "fuzz", items, &n);
    free(s);
    return 0;
}

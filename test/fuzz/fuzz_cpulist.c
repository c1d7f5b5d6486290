/* fuzz_cpulist.c - CPU lists, "0-3,8,10-11", as sysfs writes them. */
#include "fuzz.h"

#include "../../lib/devices/detect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    cpu_set_t set;
    if (s)
        (void)rt__cpulist_parse(s, &set);
    free(s);
    return 0;
}

/* fuzz_hwloc_xml.c - an hwloc XML topology (RTASK_HWLOC_XML), which could
 * hold anything.  Each input costs a fork: detection loads a file in a child
 * first, because hwloc itself crashes on some (corpus/hwloc_xml/). */
#include "fuzz.h"

#include "../../lib/devices/detect.h"

#include <unistd.h>

/* hwloc sizes a bitmap by the largest index in it and allows any: a PU
 * without os_index is index 2^32-1, and its cpuset costs 512 MiB, which
 * would stay mapped here and make every later fork (detection loads the file
 * in a child first) copy it.  Bounding hwloc's allocations is hwloc's to do;
 * here its big ones fail instead, which also tries our path for a topology
 * hwloc cannot load. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "max_allocation_size_mb=64:allocator_may_return_null=1:quarantine_size_mb=8";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("xml", data, size);
    if (!path)
        return 0;
    static rt__machine m;
    rt__detect_opts o = {.root = "/", .hwloc_xml = path, .pci_ids = "/dev/null"};
    rt__detect(&o, &m);
    unlink(path);
    return 0;
}

/* fuzz_pci_ids.c - a PCI id database, which a machine could have anything
 * in, read while detecting a fake machine's GPUs by PCI sysfs. */
#include "fuzz.h"

#include "../../lib/devices/detect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("ids", data, size);
    if (!path)
        return 0;
    static rt__machine m;
    rt__detect_opts o = {.root = "test/fake/h100x8", .no_hwloc = 1, .pci_ids = path};
    rt__detect(&o, &m);
    unlink(path);
    return 0;
}

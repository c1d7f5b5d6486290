/* fuzz_detect.c - the files detection reads that a machine could have
 * anything in: a PCI id database, and an hwloc XML topology (the first
 * input byte says which). */
#include "fuzz.h"

#include "../../lib/detect.h"

#include <stdio.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/rtask-fuzz-%d", (int)getpid());
    if (size < 1)
        return 0;
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    fwrite(data + 1, 1, size - 1, f);
    fclose(f);
    static rt__machine m;
    rt__detect_opts o = {.root = "test/fake/h100x8", .no_hwloc = 1, .pci_ids = path};
    if (data[0] & 1)
        o = (rt__detect_opts){.root = "/", .hwloc_xml = path, .pci_ids = "/dev/null"};
    rt__detect(&o, &m);
    unlink(path);
    return 0;
}

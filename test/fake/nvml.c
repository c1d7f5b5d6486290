/* nvml.c - a fake libnvidia-ml.so.1 for the tests: two H100s, at the bus
 * ids of test/fake/h100x8's first two GPUs, answered as NVML would; the
 * second is in MIG mode, with instances in slots 0 and 2 of 7. */
#include "../../lib/devices/nvml_abi.h"

#include <stdio.h>
#include <string.h>

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *d);
int nvmlDeviceGetName(nvml_device d, char *name, unsigned len);
int nvmlDeviceGetUUID(nvml_device d, char *uuid, unsigned len);
int nvmlDeviceGetPciInfo_v3(nvml_device d, nvml_pci_info *p);
int nvmlDeviceGetMemoryInfo(nvml_device d, nvml_memory *m);
int nvmlDeviceGetCudaComputeCapability(nvml_device d, int *major, int *minor);
int nvmlDeviceGetMigMode(nvml_device d, unsigned *current, unsigned *pending);
int nvmlDeviceGetMaxMigDeviceCount(nvml_device d, unsigned *n);
int nvmlDeviceGetMigDeviceHandleByIndex(nvml_device d, unsigned i, nvml_device *mig);

static const unsigned buses[] = {0x18, 0x2a};
static int inited;

#define INVALID_ARGUMENT 2
#define UNINITIALIZED 1
#define NOT_FOUND 6
#define MIG_HANDLE 100 /* + the slot */

static int index_of(nvml_device d)
{
    size_t i = (size_t)d - 1;
    return inited && i < 2 ? (int)i : -1;
}

int nvmlInit_v2(void)
{
    inited = 1;
    return 0;
}

int nvmlShutdown(void)
{
    inited = 0;
    return 0;
}

int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = 2;
    return inited ? 0 : UNINITIALIZED;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *d)
{
    *d = (nvml_device)(size_t)(i + 1);
    return i < 2 ? 0 : INVALID_ARGUMENT;
}

int nvmlDeviceGetName(nvml_device d, char *name, unsigned len)
{
    return index_of(d) < 0 ? INVALID_ARGUMENT
                           : (snprintf(name, len, "NVIDIA H100 80GB HBM3"), 0);
}

int nvmlDeviceGetUUID(nvml_device d, char *uuid, unsigned len)
{
    size_t slot = (size_t)d - MIG_HANDLE;
    if (inited && slot < 7)
        return snprintf(uuid, len, "MIG-a1b2c3d4-0000-4000-8000-00000000010%zu", slot), 0;
    int i = index_of(d);
    return i < 0 ? INVALID_ARGUMENT
                 : (snprintf(uuid, len, "GPU-b0f1e2d3-0000-4000-8000-00000000000%d", i), 0);
}

int nvmlDeviceGetPciInfo_v3(nvml_device d, nvml_pci_info *p)
{
    int i = index_of(d);
    if (i < 0)
        return INVALID_ARGUMENT;
    memset(p, 0, sizeof *p);
    p->bus = buses[i];
    snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", buses[i]);
    return 0;
}

int nvmlDeviceGetMemoryInfo(nvml_device d, nvml_memory *m)
{
    if (index_of(d) < 0)
        return INVALID_ARGUMENT;
    m->total = 81559ull << 20;
    m->free = m->total;
    m->used = 0;
    return 0;
}

int nvmlDeviceGetCudaComputeCapability(nvml_device d, int *major, int *minor)
{
    if (index_of(d) < 0)
        return INVALID_ARGUMENT;
    *major = 9;
    *minor = 0;
    return 0;
}

int nvmlDeviceGetMigMode(nvml_device d, unsigned *current, unsigned *pending)
{
    int i = index_of(d);
    if (i < 0)
        return INVALID_ARGUMENT;
    *current = *pending = i == 1;
    return 0;
}

int nvmlDeviceGetMaxMigDeviceCount(nvml_device d, unsigned *n)
{
    *n = index_of(d) == 1 ? 7 : 0;
    return index_of(d) < 0 ? INVALID_ARGUMENT : 0;
}

int nvmlDeviceGetMigDeviceHandleByIndex(nvml_device d, unsigned i, nvml_device *mig)
{
    if (index_of(d) != 1 || i >= 7)
        return INVALID_ARGUMENT;
    if (i != 0 && i != 2)
        return NOT_FOUND;
    *mig = (nvml_device)(size_t)(MIG_HANDLE + i);
    return 0;
}

/* nvml.c - a fake libnvidia-ml.so.1 for the tests: the eight H100s of
 * test/fake/h100x8, answered as NVML would; the second is in MIG mode,
 * with instances in slots 0 and 2 of 7.
 *
 * $RTASK_FAKE_NVML (read at nvmlInit_v2) changes it, with words separated
 * by commas:
 *   count=N         NVML sees the first N GPUs only (a container's)
 *   old-mig-uuids   MIG instances named MIG-GPU-<uuid>/<gi>/<ci> (R450-R465)
 *   empty-mig       the second GPU is in MIG mode with no instance
 *   init-fails      nvmlInit_v2 fails: the driver and library differ
 *   init-ms=N       nvmlInit_v2 takes N ms (a watcher killed as it starts)
 *   lost=K          GPU K's queries answer GPU_IS_LOST
 *   nodev=K         GPU K's minor number has no /dev/nvidiaN (K = all: no GPU's has)
 *   events=PATH     events come from the lines appended to PATH, read as
 *                   they come: "xid K CODE", "ecc K" (double bit), "ecc1 K"
 *                   (single bit), "lost K"
 *   procs=PATH      the processes using each GPU: PATH's lines "PID K BYTES",
 *                   read at each query
 */
#include "../../lib/devices/nvml_abi.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *d);
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvml_device *d);
int nvmlDeviceGetName(nvml_device d, char *name, unsigned len);
int nvmlDeviceGetUUID(nvml_device d, char *uuid, unsigned len);
int nvmlDeviceGetPciInfo_v3(nvml_device d, nvml_pci_info *p);
int nvmlDeviceGetMemoryInfo(nvml_device d, nvml_memory *m);
int nvmlDeviceGetCudaComputeCapability(nvml_device d, int *major, int *minor);
int nvmlDeviceGetMinorNumber(nvml_device d, unsigned *minor);
int nvmlDeviceGetMigMode(nvml_device d, unsigned *current, unsigned *pending);
int nvmlDeviceGetMaxMigDeviceCount(nvml_device d, unsigned *n);
int nvmlDeviceGetMigDeviceHandleByIndex(nvml_device d, unsigned i, nvml_device *mig);
int nvmlEventSetCreate(nvml_event_set *set);
int nvmlDeviceRegisterEvents(nvml_device d, unsigned long long types, nvml_event_set set);
int nvmlEventSetWait_v2(nvml_event_set set, nvml_event_data *data, unsigned timeout_ms);
int nvmlEventSetFree(nvml_event_set set);
int nvmlDeviceGetComputeRunningProcesses_v3(nvml_device d, unsigned *count,
                                            nvml_process_info *infos);
const char *nvmlErrorString(int rc);

#define GPUS 8
static const unsigned buses[GPUS] = {0x18, 0x2a, 0x3a, 0x5d, 0x9b, 0xab, 0xba, 0xdb};

static struct {
    int inited;
    unsigned count;
    int old_mig, empty_mig, init_fails, lost, nodev, init_ms;
    char events[256], procs[256];
    long events_read; /* bytes of the events file taken */
} fake;

#define MIG_HANDLE 100 /* + the slot */

static int index_of(nvml_device d)
{
    size_t i = (size_t)d - 1;
    return fake.inited && i < fake.count ? (int)i : -1;
}

/* The error a query of GPU i gets first: lost, or none. */
static int broken(int i)
{
    return i == fake.lost ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
}

static void configure(void)
{
    memset(&fake, 0, sizeof fake);
    fake.count = GPUS;
    fake.lost = fake.nodev = -1;
    const char *spec = getenv("RTASK_FAKE_NVML");
    char words[1024];
    snprintf(words, sizeof words, "%s", spec ? spec : "");
    for (char *save, *w = strtok_r(words, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (strncmp(w, "count=", 6) == 0)
            fake.count = (unsigned)atoi(w + 6);
        else if (strcmp(w, "old-mig-uuids") == 0)
            fake.old_mig = 1;
        else if (strcmp(w, "empty-mig") == 0)
            fake.empty_mig = 1;
        else if (strcmp(w, "init-fails") == 0)
            fake.init_fails = 1;
        else if (strncmp(w, "init-ms=", 8) == 0)
            fake.init_ms = atoi(w + 8);
        else if (strncmp(w, "lost=", 5) == 0)
            fake.lost = atoi(w + 5);
        else if (strncmp(w, "nodev=", 6) == 0)
            fake.nodev = strcmp(w + 6, "all") == 0 ? -2 : atoi(w + 6);
        else if (strncmp(w, "events=", 7) == 0)
            snprintf(fake.events, sizeof fake.events, "%s", w + 7);
        else if (strncmp(w, "procs=", 6) == 0)
            snprintf(fake.procs, sizeof fake.procs, "%s", w + 6);
    }
}

int nvmlInit_v2(void)
{
    configure();
    if (fake.init_ms > 0) /* a slow start, which a test may cut short */
        usleep((useconds_t)fake.init_ms * 1000);
    if (fake.init_fails)
        return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
    fake.inited = 1;
    return 0;
}

int nvmlShutdown(void)
{
    fake.inited = 0;
    return 0;
}

const char *nvmlErrorString(int rc)
{
    return rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH ? "RM has detected an NVML/RM version mismatch"
           : rc == NVML_ERROR_GPU_IS_LOST           ? "GPU is lost"
                                                    : "Unknown Error";
}

int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = fake.count;
    return fake.inited ? 0 : NVML_ERROR_UNINITIALIZED;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *d)
{
    *d = (nvml_device)(size_t)(i + 1);
    return i < fake.count ? 0 : NVML_ERROR_INVALID_ARGUMENT;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvml_device *d)
{
    unsigned dom, bus, dev, fn;
    if (!fake.inited)
        return NVML_ERROR_UNINITIALIZED;
    if (sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < fake.count; i++)
        if (buses[i] == bus && dom == 0 && dev == 0 && fn == 0) {
            *d = (nvml_device)(size_t)(i + 1);
            return 0;
        }
    return NVML_ERROR_NOT_FOUND;
}

int nvmlDeviceGetName(nvml_device d, char *name, unsigned len)
{
    int i = index_of(d);
    return i < 0 ? NVML_ERROR_INVALID_ARGUMENT
           : broken(i) ? broken(i)
                       : (snprintf(name, len, "NVIDIA H100 80GB HBM3"), 0);
}

static int mig_uuid(size_t slot, char *uuid, unsigned len)
{
    int need = fake.old_mig ? snprintf(NULL, 0, "MIG-GPU-b0f1e2d3-0000-4000-8000-000000000001/%zu/0",
                                       slot + 1)
                            : 40;
    if ((unsigned)need >= len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    if (fake.old_mig)
        snprintf(uuid, len, "MIG-GPU-b0f1e2d3-0000-4000-8000-000000000001/%zu/0", slot + 1);
    else
        snprintf(uuid, len, "MIG-a1b2c3d4-0000-4000-8000-00000000010%zu", slot);
    return 0;
}

int nvmlDeviceGetUUID(nvml_device d, char *uuid, unsigned len)
{
    size_t slot = (size_t)d - MIG_HANDLE;
    if (fake.inited && slot < 7)
        return mig_uuid(slot, uuid, len);
    int i = index_of(d);
    return i < 0 ? NVML_ERROR_INVALID_ARGUMENT
           : broken(i) ? broken(i)
                       : (snprintf(uuid, len, "GPU-b0f1e2d3-0000-4000-8000-00000000000%d", i), 0);
}

int nvmlDeviceGetPciInfo_v3(nvml_device d, nvml_pci_info *p)
{
    int i = index_of(d);
    if (i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(p, 0, sizeof *p);
    p->bus = buses[i];
    snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02X:00.0", buses[i]);
    return 0;
}

int nvmlDeviceGetMemoryInfo(nvml_device d, nvml_memory *m)
{
    size_t slot = (size_t)d - MIG_HANDLE;
    if (fake.inited && slot < 7) { /* a 1g.10gb instance */
        m->total = 9984ull << 20;
        m->free = m->total;
        m->used = 0;
        return 0;
    }
    int i = index_of(d);
    if (i < 0 || broken(i))
        return i < 0 ? NVML_ERROR_INVALID_ARGUMENT : broken(i);
    m->total = 81559ull << 20;
    m->free = m->total;
    m->used = 0;
    return 0;
}

int nvmlDeviceGetCudaComputeCapability(nvml_device d, int *major, int *minor)
{
    int i = index_of(d);
    if (i < 0 || broken(i))
        return i < 0 ? NVML_ERROR_INVALID_ARGUMENT : broken(i);
    *major = 9;
    *minor = 0;
    return 0;
}

int nvmlDeviceGetMinorNumber(nvml_device d, unsigned *minor)
{
    int i = index_of(d);
    if (i < 0 || broken(i))
        return i < 0 ? NVML_ERROR_INVALID_ARGUMENT : broken(i);
    *minor = i == fake.nodev || fake.nodev == -2 ? 200 + (unsigned)i : (unsigned)i;
    return 0;
}

int nvmlDeviceGetMigMode(nvml_device d, unsigned *current, unsigned *pending)
{
    int i = index_of(d);
    if (i < 0 || broken(i))
        return i < 0 ? NVML_ERROR_INVALID_ARGUMENT : broken(i);
    *current = *pending = i == 1;
    return 0;
}

int nvmlDeviceGetMaxMigDeviceCount(nvml_device d, unsigned *n)
{
    *n = index_of(d) == 1 ? 7 : 0;
    return index_of(d) < 0 ? NVML_ERROR_INVALID_ARGUMENT : 0;
}

int nvmlDeviceGetMigDeviceHandleByIndex(nvml_device d, unsigned i, nvml_device *mig)
{
    if (index_of(d) != 1 || i >= 7)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (fake.empty_mig || (i != 0 && i != 2))
        return NVML_ERROR_NOT_FOUND;
    *mig = (nvml_device)(size_t)(MIG_HANDLE + i);
    return 0;
}

/* ---- events ------------------------------------------------------------------- */

int nvmlEventSetCreate(nvml_event_set *set)
{
    *set = (nvml_event_set)(size_t)1;
    return fake.inited ? 0 : NVML_ERROR_UNINITIALIZED;
}

int nvmlDeviceRegisterEvents(nvml_device d, unsigned long long types, nvml_event_set set)
{
    (void)types, (void)set;
    return index_of(d) < 0 ? NVML_ERROR_INVALID_ARGUMENT : 0;
}

/* The next whole line appended to the events file: 1, or 0 when none
 * is there yet. */
static int read_event(char *line, size_t size)
{
    FILE *f = fake.events[0] ? fopen(fake.events, "r") : NULL;
    int got = f && fseek(f, fake.events_read, SEEK_SET) == 0 && fgets(line, (int)size, f) &&
              strchr(line, '\n');
    if (got)
        fake.events_read += (long)strlen(line);
    if (f)
        fclose(f);
    return got;
}

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The next line appended to the events file, or 0 within timeout_ms.
 * Between looks it sleeps until the file changes (inotify), as NVML's
 * wait sleeps in the driver: a watcher costs nothing while no event
 * comes (a look every millisecond took a share of the CPUs that the
 * bench then charged to watching). */
static int next_event(char *line, size_t size, unsigned timeout_ms)
{
    static int changes = -1;
    if (changes < 0 && fake.events[0] && (changes = inotify_init1(IN_CLOEXEC)) >= 0 &&
        inotify_add_watch(changes, fake.events, IN_MODIFY) < 0) {
        close(changes);
        changes = -1;
    }
    long long end = now_ms() + timeout_ms;
    for (;;) {
        if (read_event(line, size))
            return 1;
        long long left = end - now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = {changes, POLLIN, 0};
        char drained[4096];
        if (changes < 0) /* no inotify: a look each millisecond */
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        else if (poll(&p, 1, (int)left) > 0 && read(changes, drained, sizeof drained) < 0)
            return 0;
    }
}

int nvmlEventSetWait_v2(nvml_event_set set, nvml_event_data *data, unsigned timeout_ms)
{
    char line[128], kind[16];
    int gpu = -1;
    unsigned long long code = 0;
    (void)set;
    if (!next_event(line, sizeof line, timeout_ms))
        return NVML_ERROR_TIMEOUT;
    memset(data, 0, sizeof *data);
    if (sscanf(line, "%15s %d %llu", kind, &gpu, &code) < 2 || gpu < 0 || gpu >= GPUS)
        return NVML_ERROR_UNKNOWN;
    data->device = (nvml_device)(size_t)(gpu + 1);
    data->gpu_instance_id = data->compute_instance_id = 0xffffffffu;
    if (strcmp(kind, "lost") == 0)
        return NVML_ERROR_GPU_IS_LOST;
    data->event_type = strcmp(kind, "xid") == 0    ? NVML_EVENT_XID_CRITICAL
                       : strcmp(kind, "ecc1") == 0 ? NVML_EVENT_SINGLE_BIT_ECC
                                                   : NVML_EVENT_DOUBLE_BIT_ECC;
    data->event_data = code;
    return 0;
}

int nvmlEventSetFree(nvml_event_set set)
{
    (void)set;
    return 0;
}

/* ---- processes ------------------------------------------------------------------ */

int nvmlDeviceGetComputeRunningProcesses_v3(nvml_device d, unsigned *count,
                                            nvml_process_info *infos)
{
    int i = index_of(d);
    if (i < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned n = 0, room = *count;
    FILE *f = fake.procs[0] ? fopen(fake.procs, "r") : NULL;
    unsigned pid;
    int gpu;
    unsigned long long bytes;
    while (f && fscanf(f, "%u %d %llu", &pid, &gpu, &bytes) == 3)
        if (gpu == i) {
            if (n < room)
                infos[n] = (nvml_process_info){pid, bytes, 0xffffffffu, 0xffffffffu};
            n++;
        }
    if (f)
        fclose(f);
    *count = n;
    return n > room ? NVML_ERROR_INSUFFICIENT_SIZE : 0;
}

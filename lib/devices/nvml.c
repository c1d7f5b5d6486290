/* nvml.c - NVML through dlopen: names, UUIDs, memory, compute capability. */
#include "nvml.h"

#include "models.h"
#include "nvml_abi.h"
#include "base/alloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct nvml_api {
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned *n);
    int (*by_index)(unsigned i, nvml_device *d);
    int (*name)(nvml_device d, char *name, unsigned len);
    int (*uuid)(nvml_device d, char *uuid, unsigned len);
    int (*pci)(nvml_device d, nvml_pci_info *p);
    int (*memory)(nvml_device d, nvml_memory *m);
    int (*capability)(nvml_device d, int *major, int *minor);
    /* MIG, from drivers 450 on; NULL before */
    int (*mig_mode)(nvml_device d, unsigned *current, unsigned *pending);
    int (*mig_count)(nvml_device d, unsigned *n);
    int (*mig_by_index)(nvml_device d, unsigned i, nvml_device *mig);
} nvml_api;

static int load(void *dl, nvml_api *api)
{
    static const char *const names[] = {
        "nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2",
        "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName", "nvmlDeviceGetUUID",
        "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetMemoryInfo",
        "nvmlDeviceGetCudaComputeCapability",
    };
    void *fns[sizeof names / sizeof *names];
    _Static_assert(sizeof fns + 3 * sizeof(void *) == sizeof(nvml_api),
                   "one pointer per call, then the three of MIG");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!(fns[i] = dlsym(dl, names[i])))
            return -1;
    memcpy(api, fns, sizeof fns);
    *(void **)&api->mig_mode = dlsym(dl, "nvmlDeviceGetMigMode");
    *(void **)&api->mig_count = dlsym(dl, "nvmlDeviceGetMaxMigDeviceCount");
    *(void **)&api->mig_by_index = dlsym(dl, "nvmlDeviceGetMigDeviceHandleByIndex");
    return 0;
}

/* The detected NVIDIA GPU at NVML's bus id, or NULL. */
static rt__device *match(rt__machine *m, const nvml_pci_info *p)
{
    for (int i = 0; i < m->count; i++) {
        unsigned dom, bus, dev, fn;
        rt__device *d = &m->dev[i];
        if (d->kind == RT__FAM_NVIDIA &&
            sscanf(d->bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4 &&
            dom == p->domain && bus == p->bus && dev == p->device && fn == 0)
            return d;
    }
    return NULL;
}

/* A GPU in MIG mode: its instances' UUIDs, as `nvidia-smi -L` lists them
 * (an empty slot is skipped). */
static void read_migs(const nvml_api *api, nvml_device h, rt__device *d)
{
    unsigned current, pending, n;
    if (!api->mig_mode || !api->mig_count || !api->mig_by_index ||
        api->mig_mode(h, &current, &pending) != NVML_SUCCESS || current != 1 ||
        api->mig_count(h, &n) != NVML_SUCCESS)
        return;
    for (unsigned i = 0; i < n && d->migs < RT__MIG_MAX; i++) {
        nvml_device mig;
        char uuid[sizeof d->mig_uuid[0]];
        if (api->mig_by_index(h, i, &mig) == NVML_SUCCESS &&
            api->uuid(mig, uuid, sizeof uuid) == NVML_SUCCESS &&
            memchr(uuid, '\0', sizeof uuid) && strncmp(uuid, "MIG-", 4) == 0)
            snprintf(d->mig_uuid[d->migs++], sizeof d->mig_uuid[0], "%s", uuid);
    }
}

static int complete(const nvml_api *api, unsigned i, rt__machine *m)
{
    nvml_device h;
    nvml_pci_info pci;
    rt__device *d;
    if (api->by_index(i, &h) != NVML_SUCCESS || api->pci(h, &pci) != NVML_SUCCESS ||
        !(d = match(m, &pci)))
        return 0;
    char name[sizeof d->model], uuid[sizeof d->uuid];
    if (api->name(h, name, sizeof name) == NVML_SUCCESS && memchr(name, '\0', sizeof name)) {
        snprintf(d->model, sizeof d->model, "%s", name);
        rt__accelerator_type(d->model, d->type, sizeof d->type);
    }
    if (api->uuid(h, uuid, sizeof uuid) == NVML_SUCCESS && memchr(uuid, '\0', sizeof uuid))
        snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    nvml_memory mem;
    if (api->memory(h, &mem) == NVML_SUCCESS)
        d->memory_mib = mem.total >> 20;
    int major, minor;
    if (api->capability(h, &major, &minor) == NVML_SUCCESS && major > 0 && major < 100 &&
        minor >= 0 && minor < 100)
        d->cc_major = major, d->cc_minor = minor;
    read_migs(api, h, d);
    return 1;
}

static int complete_here(rt__machine *m)
{
    const char *path = getenv("RTASK_NVML_LIBRARY");
    void *dl = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    nvml_api api;
    if (!dl)
        return 0;
    int done = 0;
    unsigned n;
    if (load(dl, &api) == 0 && api.init() == NVML_SUCCESS) {
        if (api.count(&n) == NVML_SUCCESS)
            for (unsigned i = 0; i < n && i < RT__DEVICE_MAX; i++)
                done += complete(&api, i, m);
        api.shutdown();
    }
    dlclose(dl);
    return done;
}

/* Read exactly len bytes: 0, or -1. */
static int read_all(int fd, void *buf, size_t len)
{
    for (size_t got = 0; got < len;) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n <= 0 && !(n < 0 && errno == EINTR))
            return -1;
        got += n > 0 ? (size_t)n : 0;
    }
    return 0;
}

/* NVML is asked in a child process that hands back the completed machine
 * and exits: the driver's library leaves descriptors (eventfds, pipes)
 * and threads behind even after nvmlShutdown() and dlclose(), one more
 * eventfd with every rt_init(), which the application would keep (seen
 * with driver 580 on an H100).  Where no child can be had, it is asked
 * here. */
int rt__nvml_complete(rt__machine *m)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return complete_here(m);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        int32_t done = complete_here(m);
        _exit(write(p[1], &done, sizeof done) == sizeof done &&
              write(p[1], m, sizeof *m) == (ssize_t)sizeof *m ? 0 : 1);
    }
    close(p[1]);
    int32_t done = 0;
    rt__machine *answer = rt__malloc(sizeof *answer); /* too large for a stack */
    if (pid > 0 && answer && read_all(p[0], &done, sizeof done) == 0 &&
        read_all(p[0], answer, sizeof *answer) == 0 && done > 0)
        *m = *answer;
    rt__free(answer);
    close(p[0]);
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return pid < 0 ? complete_here(m) : done;
}

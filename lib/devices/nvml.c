/* nvml.c - NVML through dlopen: names, UUIDs, memory, compute capability. */
#include "nvml.h"

#include "models.h"
#include "gpu_event.h"
#include "nvml_abi.h"
#include "base/alloc.h"
#include "base/error.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct nvml_api {
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned *n);
    int (*by_bus)(const char *bus_id, nvml_device *d);
    int (*name)(nvml_device d, char *name, unsigned len);
    int (*uuid)(nvml_device d, char *uuid, unsigned len);
    int (*memory)(nvml_device d, nvml_memory *m);
    int (*capability)(nvml_device d, int *major, int *minor);
    /* Optional: NULL where the driver lacks them. */
    const char *(*error)(int rc);
    int (*minor)(nvml_device d, unsigned *minor);
    int (*mig_mode)(nvml_device d, unsigned *current, unsigned *pending);
    int (*mig_count)(nvml_device d, unsigned *n);
    int (*mig_by_index)(nvml_device d, unsigned i, nvml_device *mig);
} nvml_api;

#define REQUIRED 8 /* the calls before `error` */

/* The calls, in nvml_api's order.  *missing names a required one the
 * library lacks. */
static int load(void *dl, nvml_api *api, const char **missing)
{
    static const char *const names[] = {
        "nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2",
        "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetName", "nvmlDeviceGetUUID",
        "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetCudaComputeCapability",
        "nvmlErrorString", "nvmlDeviceGetMinorNumber", "nvmlDeviceGetMigMode",
        "nvmlDeviceGetMaxMigDeviceCount", "nvmlDeviceGetMigDeviceHandleByIndex",
    };
    void *fns[sizeof names / sizeof *names];
    _Static_assert(sizeof fns == sizeof(nvml_api), "one pointer per call");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!(fns[i] = dlsym(dl, names[i])) && i < REQUIRED) {
            *missing = names[i];
            return -1;
        }
    memcpy(api, fns, sizeof fns);
    return 0;
}

static const char *error_text(const nvml_api *api, int rc)
{
    const char *text = api->error ? api->error(rc) : NULL;
    return text ? text : "an NVML error";
}

/* Why d is no GPU to offer, or NULL: set by complete_gpu(). */
typedef struct verdict {
    const char *drop;   /* not offered, and why */
    char why[128];
} verdict;

/* A query answered that the GPU is lost, or that we may not ask: it is
 * unhealthy from the start. */
static int broken(const nvml_api *api, rt__device *d, int rc)
{
    if (rc != NVML_ERROR_GPU_IS_LOST && rc != NVML_ERROR_NO_PERMISSION)
        return 0;
    if (!d->unhealthy[0])
        snprintf(d->unhealthy, sizeof d->unhealthy, "NVML: %s", error_text(api, rc));
    return 1;
}

/* A GPU in MIG mode: its instances' UUIDs (of up to 96 bytes, as NVML
 * documents) and memory, as `nvidia-smi -L` lists them (an empty slot is
 * skipped); one that has none offers nothing. */
static void read_migs(const nvml_api *api, nvml_device h, rt__device *d, verdict *v)
{
    unsigned current, pending, n;
    if (!api->mig_mode || !api->mig_count || !api->mig_by_index ||
        api->mig_mode(h, &current, &pending) != NVML_SUCCESS || current != 1 ||
        api->mig_count(h, &n) != NVML_SUCCESS)
        return;
    for (unsigned i = 0; i < n && d->migs < RT__MIG_MAX; i++) {
        nvml_device mig;
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        nvml_memory mem;
        if (api->mig_by_index(h, i, &mig) != NVML_SUCCESS ||
            api->uuid(mig, uuid, sizeof uuid) != NVML_SUCCESS ||
            !memchr(uuid, '\0', sizeof uuid) || strncmp(uuid, "MIG-", 4) != 0)
            continue;
        if (strlen(uuid) >= RT__ID_LEN) {
            rt__warn("NVIDIA GPU at %s: its MIG instance %s has a name too long for a "
                     "device id: not offered", d->bus_id, uuid);
            continue;
        }
        snprintf(d->mig_uuid[d->migs], sizeof d->mig_uuid[0], "%s", uuid);
        d->mig_memory_mib[d->migs++] =
            api->memory(mig, &mem) == NVML_SUCCESS ? mem.total >> 20 : 0;
    }
    if (d->migs == 0)
        v->drop = "it is in MIG mode with no instance: CUDA has nothing to run there";
}

/* Whether the device file of minor number `minor` is there under root:
 * a container is given the files of its GPUs alone. */
static int device_file(const char *root, unsigned minor, char *path, size_t size)
{
    snprintf(path, size, "%s%sdev/nvidia%u", root, root[strlen(root) - 1] == '/' ? "" : "/",
             minor);
    return access(path, F_OK) == 0;
}

/* Complete detected NVIDIA GPU d with what NVML says of it, or say why it
 * is not one to offer.  1 when NVML knows it. */
static int complete_gpu(const nvml_api *api, const char *root, rt__device *d, verdict *v)
{
    nvml_device h;
    int rc = api->by_bus(d->bus_id, &h);
    if (rc == NVML_ERROR_NOT_FOUND) {
        v->drop = "NVML does not list it (in a container given other GPUs, sysfs still "
                  "shows them all)";
        return 0;
    }
    if (rc != NVML_SUCCESS)
        return broken(api, d, rc);
    unsigned minor;
    char path[512];
    if (api->minor && (rc = api->minor(h, &minor)) == NVML_SUCCESS &&
        !device_file(root, minor, path, sizeof path)) {
        snprintf(v->why, sizeof v->why, "its device file %.100s is missing", path);
        v->drop = v->why;
        return 1; /* NVML knows it: its word stands, though none is left */
    }
    char name[sizeof d->model], uuid[sizeof d->uuid];
    if (!broken(api, d, rc = api->name(h, name, sizeof name)) && rc == NVML_SUCCESS &&
        memchr(name, '\0', sizeof name)) {
        snprintf(d->model, sizeof d->model, "%s", name);
        rt__accelerator_type(d->model, d->type, sizeof d->type);
    }
    if (!broken(api, d, rc = api->uuid(h, uuid, sizeof uuid)) && rc == NVML_SUCCESS &&
        memchr(uuid, '\0', sizeof uuid))
        snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    nvml_memory mem;
    if (!broken(api, d, rc = api->memory(h, &mem)) && rc == NVML_SUCCESS)
        d->memory_mib = mem.total >> 20;
    int major, minor_cc;
    if (!broken(api, d, rc = api->capability(h, &major, &minor_cc)) && rc == NVML_SUCCESS &&
        major > 0 && major < 100 && minor_cc >= 0 && minor_cc < 100)
        d->cc_major = major, d->cc_minor = minor_cc;
    if (!d->unhealthy[0])
        read_migs(api, h, d, v);
    return 1;
}

/* Every NVIDIA GPU detected, completed; those NVML says are none to
 * offer leave the machine, each with a warning.  How many it knows. */
static int complete_all(const nvml_api *api, const char *root, rt__machine *m)
{
    int done = 0, kept = 0;
    for (int i = 0; i < m->count; i++) {
        rt__device *d = &m->dev[i];
        verdict v = {NULL, ""};
        if (d->kind == RT__FAM_NVIDIA)
            done += complete_gpu(api, root, d, &v);
        if (v.drop)
            rt__warn("NVIDIA GPU at %s is not offered: %s", d->bus_id, v.drop);
        else if (d->unhealthy[0])
            rt__warn("NVIDIA GPU at %s: %s; it is unhealthy: no task gets it", d->bus_id,
                     d->unhealthy);
        if (!v.drop)
            m->dev[kept++] = *d;
    }
    m->count = kept;
    return done;
}

static int complete_here(rt__machine *m, const char *root)
{
    const char *path = getenv("RTASK_NVML_LIBRARY");
    path = path && *path ? path : "libnvidia-ml.so.1";
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        return -1; /* no NVIDIA driver: nothing to say */
    nvml_api api;
    const char *missing = NULL;
    int done = -1, rc;
    unsigned n;
    if (load(dl, &api, &missing) < 0) {
        rt__warn("NVML (%s) lacks %s: GPUs are offered as detection found them, without "
                 "their memory or MIG instances", path, missing);
    } else if ((rc = api.init()) != NVML_SUCCESS) {
        rt__warn("NVML: nvmlInit_v2 failed: %s%s: GPUs are offered as detection found them, "
                 "without their memory (gpu_memory requests are refused) or MIG instances",
                 error_text(&api, rc),
                 rc == NVML_ERROR_LIB_RM_VERSION_MISMATCH
                     ? " (the driver and its library differ, as after an upgrade without "
                       "a reboot)"
                     : "");
    } else {
        if ((rc = api.count(&n)) == NVML_SUCCESS)
            done = complete_all(&api, root, m);
        else
            rt__warn("NVML: nvmlDeviceGetCount failed: %s", error_text(&api, rc));
        api.shutdown();
    }
    dlclose(dl);
    return done;
}

/* ---- watching ------------------------------------------------------------------ */

/* What the watcher calls besides nvml_api's; NULL where the driver lacks
 * them (then it watches less). */
typedef struct watch_api {
    int (*set_create)(nvml_event_set *set);
    int (*reg)(nvml_device d, unsigned long long types, nvml_event_set set);
    int (*wait)(nvml_event_set set, nvml_event_data *data, unsigned timeout_ms);
    int (*procs)(nvml_device d, unsigned *count, nvml_process_info *infos);
} watch_api;

#define WATCH_WAIT_MS 100 /* a wait for events; between, the watcher looks
                             whether its reader is still there */
#define USAGE_EVERY 3     /* waits between looks at the processes */
#define USAGE_MAX 256     /* processes remembered, over every GPU */

/* A process seen holding a GPU's memory at the last look. */
typedef struct usage {
    int gpu;
    unsigned pid;
    int seen;
} usage;

typedef struct watched {
    int n;
    nvml_device h[RT__DEVICE_MAX];
    const char *bus[RT__DEVICE_MAX];
    usage use[USAGE_MAX];
    int nuse;
} watched;

static void put(int out, uint32_t kind, const char *bus, uint64_t code, unsigned pid)
{
    rt__gpu_event e = {.kind = kind, .pid = pid, .code = code};
    snprintf(e.bus_id, sizeof e.bus_id, "%s", bus);
    if (write(out, &e, sizeof e) != (ssize_t)sizeof e)
        _exit(0); /* the reader is gone */
}

/* What the processes hold of each GPU, at every look (a reused worker's
 * hold between tasks is judged from its looks while idle, health.c), and
 * a process gone (0 bytes) once. */
static void look_at_usage(const watch_api *w, watched *g, int out)
{
    nvml_process_info infos[64];
    for (int k = 0; k < g->nuse; k++)
        g->use[k].seen = 0;
    for (int i = 0; i < g->n; i++) {
        unsigned count = 64;
        if (w->procs(g->h[i], &count, infos) != NVML_SUCCESS)
            continue;
        for (unsigned j = 0; j < count; j++) {
            int k = 0;
            while (k < g->nuse && !(g->use[k].gpu == i && g->use[k].pid == infos[j].pid))
                k++;
            if (k == g->nuse && g->nuse == USAGE_MAX)
                continue;
            if (k == g->nuse)
                g->use[g->nuse++] = (usage){i, infos[j].pid, 0};
            g->use[k].seen = 1;
            put(out, RT__GPU_USAGE, g->bus[i], infos[j].used_gpu_memory, infos[j].pid);
        }
    }
    for (int k = 0; k < g->nuse;)
        if (!g->use[k].seen) {
            put(out, RT__GPU_USAGE, g->bus[g->use[k].gpu], 0, g->use[k].pid);
            g->use[k] = g->use[--g->nuse];
        } else {
            k++;
        }
}

/* An event NVML waited for, as a record. */
static void report(const nvml_api *api, const watched *g, int rc, const nvml_event_data *e,
                   int out)
{
    for (int i = 0; i < g->n; i++) {
        nvml_memory mem;
        if (rc == NVML_ERROR_GPU_IS_LOST ? (e->device == g->h[i] ||
                                            api->memory(g->h[i], &mem) == NVML_ERROR_GPU_IS_LOST)
                                         : e->device == g->h[i])
            put(out,
                rc == NVML_ERROR_GPU_IS_LOST                    ? RT__GPU_LOST
                : e->event_type & NVML_EVENT_XID_CRITICAL       ? RT__GPU_XID
                : e->event_type & NVML_EVENT_DOUBLE_BIT_ECC     ? RT__GPU_ECC
                                                                : RT__GPU_ECC1,
                g->bus[i], e->event_data, 0);
    }
}

/* Whether out's reader is gone (a pipe's write end polls POLLERR then). */
static int reader_gone(int out)
{
    struct pollfd p = {out, 0, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

void rt__nvml_watch(const rt__machine *m, int out)
{
    const char *path = getenv("RTASK_NVML_LIBRARY");
    void *dl = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    nvml_api api;
    const char *missing;
    if (!dl || load(dl, &api, &missing) < 0 || api.init() != NVML_SUCCESS) {
        put(out, RT__GPU_UNWATCHED, "", 0, (unsigned)getpid());
        _exit(0);
    }
    watch_api w;
    *(void **)&w.set_create = dlsym(dl, "nvmlEventSetCreate");
    *(void **)&w.reg = dlsym(dl, "nvmlDeviceRegisterEvents");
    *(void **)&w.wait = dlsym(dl, "nvmlEventSetWait_v2");
    *(void **)&w.procs = dlsym(dl, "nvmlDeviceGetComputeRunningProcesses_v3");
    static watched g;
    put(out, RT__GPU_WATCHING, "", 0, (unsigned)getpid());
    for (int i = 0; i < m->count && g.n < RT__DEVICE_MAX; i++) {
        if (m->dev[i].kind != RT__FAM_NVIDIA)
            continue;
        nvml_memory mem;
        int rc = api.by_bus(m->dev[i].bus_id, &g.h[g.n]);
        if (rc == NVML_SUCCESS && api.memory(g.h[g.n], &mem) == NVML_ERROR_GPU_IS_LOST)
            rc = NVML_ERROR_GPU_IS_LOST;
        if (rc == NVML_ERROR_GPU_IS_LOST) /* lost before this watcher began */
            put(out, RT__GPU_LOST, m->dev[i].bus_id, 0, 0);
        else if (rc == NVML_SUCCESS)
            g.bus[g.n++] = m->dev[i].bus_id;
    }
    nvml_event_set set = NULL;
    if (w.set_create && w.reg && w.wait && w.set_create(&set) != NVML_SUCCESS)
        set = NULL;
    for (int i = 0; set && i < g.n; i++)
        w.reg(g.h[i], NVML_EVENT_XID_CRITICAL | NVML_EVENT_DOUBLE_BIT_ECC |
                          NVML_EVENT_SINGLE_BIT_ECC, set);
    for (unsigned round = 0; !reader_gone(out); round++) {
        nvml_event_data e = {0};
        int rc = set ? w.wait(set, &e, WATCH_WAIT_MS) : NVML_ERROR_TIMEOUT;
        if (rc == NVML_SUCCESS || rc == NVML_ERROR_GPU_IS_LOST)
            report(&api, &g, rc, &e, out);
        else if (rc != NVML_ERROR_TIMEOUT || !set)
            usleep(WATCH_WAIT_MS * 1000);
        if (w.procs && round % USAGE_EVERY == 0)
            look_at_usage(&w, &g, out);
    }
    _exit(0);
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
int rt__nvml_complete(rt__machine *m, const char *root)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return complete_here(m, root);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        int32_t done = complete_here(m, root);
        _exit(write(p[1], &done, sizeof done) == sizeof done &&
              write(p[1], m, sizeof *m) == (ssize_t)sizeof *m ? 0 : 1);
    }
    close(p[1]);
    int32_t done = -1;
    rt__machine *answer = rt__malloc(sizeof *answer); /* too large for a stack */
    if (pid > 0 && answer && read_all(p[0], &done, sizeof done) == 0 &&
        read_all(p[0], answer, sizeof *answer) == 0 && done >= 0)
        *m = *answer; /* NVML answered: its word stands, as its warnings say */
    else
        done = -1;
    rt__free(answer);
    close(p[0]);
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return pid < 0 ? complete_here(m, root) : done;
}

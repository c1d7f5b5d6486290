/* watch.c - the watcher process, its records and what they mean. */
#include "watch.h"

#include "nvml.h"
#include "base/process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int nvidia_gpus(const rt__machine *m)
{
    int n = 0;
    for (int i = 0; i < m->count; i++)
        n += m->dev[i].kind == RT__FAM_NVIDIA;
    return n;
}

/* In the intermediate process: fork the watcher, which no longer is the
 * application's child once this one exits. */
static _Noreturn void start_watcher(const rt__machine *m, int out)
{
    pid_t pid = fork();
    if (pid == 0) {
        rt__process_close_all_but(&out, 1);
        rt__process_is_forked();
        signal(SIGPIPE, SIG_DFL); /* a closed pipe ends it */
        rt__nvml_watch(m, out);
    }
    _exit(pid < 0);
}

int rt__gpu_watch_start(const rt__machine *m, int *fd)
{
    int p[2];
    if (nvidia_gpus(m) == 0 || pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fflush(NULL); /* buffered stdio would be flushed once more by each copy */
    pid_t mid = fork();
    if (mid == 0) {
        close(p[0]);
        start_watcher(m, p[1]);
    }
    close(p[1]);
    /* Whether the watcher began is told by its first record, not by the
     * intermediate's status (a leak checker gives it one of its own). */
    while (mid > 0 && waitpid(mid, NULL, 0) < 0 && errno == EINTR)
        continue;
    if (mid < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
        close(p[0]);
        return -1;
    }
    *fd = p[0];
    return 0;
}

long rt__gpu_watch_read(int fd, rt__gpu_event *out, size_t max)
{
    ssize_t got;
    while ((got = read(fd, out, max * sizeof *out)) < 0 && errno == EINTR)
        continue;
    if (got == 0)
        return -1;
    if (got < 0)
        return errno == EAGAIN ? 0 : -1;
    return got / (ssize_t)sizeof *out; /* records are written whole */
}

int rt__gpu_event_harmless(const rt__gpu_event *e)
{
    static const uint64_t application[] = {13, 31, 43, 45, 68, 109};
    if (e->kind == RT__GPU_USAGE || e->kind == RT__GPU_ECC1 || e->kind == RT__GPU_WATCHING ||
        e->kind == RT__GPU_UNWATCHED)
        return 1;
    for (size_t i = 0; e->kind == RT__GPU_XID && i < sizeof application / sizeof *application;
         i++)
        if (e->code == application[i])
            return 1;
    return 0;
}

/* What some XIDs mean, as NVIDIA's XID catalogue says. */
static const char *xid_meaning(uint64_t xid)
{
    switch (xid) {
    case 13: return "graphics engine exception: an application's fault";
    case 31: return "GPU memory page fault: an application's fault";
    case 43: return "GPU stopped processing: an application's fault";
    case 45: return "preemptive cleanup: an application ended";
    case 48: return "a double-bit ECC error";
    case 63: return "ECC page retirement or row remapping";
    case 64: return "ECC page retirement or row remapping failed";
    case 68: return "video processor exception: an application's fault";
    case 74: return "an NVLink error";
    case 79: return "the GPU has fallen off the bus";
    case 92: return "a high single-bit ECC error rate";
    case 94: return "a contained ECC error";
    case 95: return "an uncontained ECC error";
    case 109: return "context switch timeout: an application's fault";
    case 119: return "a GSP RPC timeout";
    case 120: return "a GSP error";
    default: return "a critical error";
    }
}

void rt__gpu_event_describe(const rt__gpu_event *e, char *buf, size_t size)
{
    switch (e->kind) {
    case RT__GPU_XID:
        snprintf(buf, size, "XID %llu (%s)", (unsigned long long)e->code, xid_meaning(e->code));
        break;
    case RT__GPU_ECC:
        snprintf(buf, size, "a double-bit ECC error");
        break;
    case RT__GPU_ECC1:
        snprintf(buf, size, "a single-bit ECC error (corrected)");
        break;
    case RT__GPU_LOST:
        snprintf(buf, size, "NVML: GPU is lost");
        break;
    default:
        snprintf(buf, size, "process %u holds %llu bytes of its memory", e->pid,
                 (unsigned long long)e->code);
    }
}

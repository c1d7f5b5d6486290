/* process.c - whether this process is the application or a fork of it,
 * and what a fork closes. */
#include "process.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int forked;

void rt__process_is_forked(void)
{
    forked = 1;
}

int rt__process_forked(void)
{
    return forked;
}

static int kept(int fd, const int *keep, int n)
{
    if (fd <= STDERR_FILENO)
        return 1;
    for (int i = 0; i < n; i++)
        if (keep[i] == fd)
            return 1;
    return 0;
}

/* The descriptors are read from /proc/self/fd, whose own descriptor is
 * closed last.  No allocation: this runs right after a fork of a threaded
 * process, where an allocator's lock may be held forever (glibc's malloc
 * mends its own; ASan's does not). */
void rt__process_close_all_but(const int *keep, int n)
{
    int own = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (own < 0)
        return;
    _Alignas(struct dirent64) char buf[4096];
    long got;
    while ((got = syscall(SYS_getdents64, own, buf, sizeof buf)) > 0) {
        for (long at = 0; at < got;) {
            const struct dirent64 *e = (const struct dirent64 *)(void *)(buf + at);
            at += e->d_reclen;
            char *end;
            long fd = strtol(e->d_name, &end, 10);
            if (*end == '\0' && end != e->d_name && fd != own && !kept((int)fd, keep, n))
                close((int)fd);
        }
    }
    close(own);
}

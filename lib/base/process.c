/* process.c - whether this process is the application or a fork of it,
 * and what a fork closes, unmaps and seals. */
#include "process.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* Whether [lo, hi) overlaps one of the n mappings of keep. */
static int overlaps(uintptr_t lo, uintptr_t hi, const rt__mapping *keep, int n)
{
    for (int i = 0; i < n; i++) {
        uintptr_t at = (uintptr_t)keep[i].at;
        if (lo < at + keep[i].len && at < hi)
            return 1;
    }
    return 0;
}

/* One line of /proc/self/maps ("lo-hi perms ..."): whether it is a
 * writable shared mapping that keep does not name, with its range. */
static int to_unmap(const char *line, const rt__mapping *keep, int n, uintptr_t *lo,
                    uintptr_t *hi)
{
    char *end;
    *lo = (uintptr_t)strtoull(line, &end, 16);
    if (*end != '-')
        return 0;
    *hi = (uintptr_t)strtoull(end + 1, &end, 16);
    return end[0] == ' ' && end[1] && end[2] == 'w' && end[3] && end[4] == 's' &&
           !overlaps(*lo, *hi, keep, n);
}

/* Lines are read through a buffer on the stack; the ranges found are
 * unmapped after the pass (the file changes as they go), and the file
 * read again when the pass stopped at FOUND_MAX (a bounded number of
 * times: one that cannot be unmapped is found again). */
void rt__process_unmap_shared_but(const rt__mapping *keep, int n)
{
    enum { FOUND_MAX = 64, PASSES_MAX = 64 };
    uintptr_t lo[FOUND_MAX], hi[FOUND_MAX];
    int found = FOUND_MAX;
    for (int pass = 0; pass < PASSES_MAX && found == FOUND_MAX; pass++) {
        int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return;
        char buf[4096];
        size_t have = 0;
        ssize_t got;
        found = 0;
        while (found < FOUND_MAX && (got = read(fd, buf + have, sizeof buf - 1 - have)) > 0) {
            have += (size_t)got;
            buf[have] = 0;
            char *line = buf, *nl;
            while (found < FOUND_MAX && (nl = strchr(line, '\n'))) {
                *nl = 0;
                found += to_unmap(line, keep, n, &lo[found], &hi[found]);
                line = nl + 1;
            }
            have -= (size_t)(line - buf); /* a line cut short waits for the rest */
            memmove(buf, line, have);
            if (have == sizeof buf - 1)
                have = 0; /* no line is that long: drop it */
        }
        close(fd);
        for (int i = 0; i < found; i++)
            munmap((void *)lo[i], hi[i] - lo[i]);
    }
}

int rt__process_seal(const rt__mapping *m)
{
#ifdef SYS_mseal
    return (int)syscall(SYS_mseal, m->at, m->len, 0);
#elif defined(__x86_64__) || defined(__aarch64__)
    return (int)syscall(462, m->at, m->len, 0); /* mseal: one number on both */
#else
    (void)m;
    errno = ENOSYS;
    return -1;
#endif
}

/* warm.c - a forked process's pages mapped before it needs them (warm.h). */
#include "warm.h"

#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_READ /* Linux 5.14; older kernels answer EINVAL */
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

#define READ_MAX (4u << 20)   /* of one mapping's code or read-only data */
#define STACK_BYTES (32u << 10)
#define HEAP_BYTES (64u << 10)

static int work_came(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) != 0;
}

/* The pages a first call touches below the caller's frame. */
static void __attribute__((noinline)) grow_stack(void)
{
    volatile char room[STACK_BYTES];
    for (size_t i = 0; i < sizeof room; i += 4096)
        room[i] = 0;
}

/* Pages at the heap's top, kept there by free() (below glibc's trim
 * threshold), for the first task's allocations. */
static void grow_heap(void)
{
    char *p = malloc(HEAP_BYTES);
    if (p)
        memset(p, 0, HEAP_BYTES);
    free(p);
}

/* One line of /proc/self/maps: private file mappings' code and read-only
 * data are mapped (shared with the page cache: no memory), writable
 * private ones copied while *copy_left lasts.  Shared mappings are the
 * process's channels to others: left alone. */
static void warm_mapping(const char *line, size_t *copy_left)
{
    uintptr_t from, to;
    char perms[5];
    if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &from, &to, perms) != 3 ||
        perms[3] != 'p' || perms[0] != 'r' || strstr(line, "[v"))
        return; /* [vvar], [vdso], [vsyscall]: the kernel's */
    size_t len = to - from;
    if (perms[1] == 'w') {
        if (len > *copy_left)
            return;
        *copy_left -= len;
        (void)madvise((void *)from, len, MADV_POPULATE_WRITE);
    } else if (len <= READ_MAX) {
        (void)madvise((void *)from, len, MADV_POPULATE_READ);
    }
}

void rt__warm_pages(int fd)
{
    grow_stack();
    grow_heap();
    FILE *maps = fopen("/proc/self/maps", "re");
    char line[512];
    size_t copy_left = RT__WARM_COPY_MAX;
    while (maps && !work_came(fd) && fgets(line, sizeof line, maps))
        warm_mapping(line, &copy_left);
    if (maps)
        fclose(maps);
}

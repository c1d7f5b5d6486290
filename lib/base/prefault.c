/* prefault.c - a forked process makes its pages its own (prefault.h). */
#include "prefault.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define SMALL_MAX ((size_t)256 << 10)  /* larger mappings are someone's
                                          buffers, not a worker's: skipped */
#define HEAP_TOP ((size_t)1 << 20)     /* of the heap: its end, where
                                          malloc() carves from */
#define STACK_BELOW ((size_t)64 << 10) /* the frames a task's calls make */
#define TOTAL_MAX ((size_t)4 << 20)
#define HEAP_AHEAD ((size_t)32 << 10)  /* freed, a block under 64 KiB makes
                                          malloc() trim nothing */
#define VEC_MAX (HEAP_TOP / 4096)      /* mincore()'s answer, one byte a page */
#define RUN_MAX 32                     /* pages copied between two looks for
                                          work: about 10 us here */

typedef struct until {
    int (*work_came)(void *ctx);
    void *ctx;
} until;

/* Copy the pages of [start, end) that exist (resident: shared with the
 * parent), a run at a time.  0, 1 when work came, or -1 when the kernel
 * cannot. */
static int populate_existing(uintptr_t start, uintptr_t end, size_t page, const until *u)
{
    unsigned char vec[VEC_MAX];
    size_t n = (end - start) / page;
    if (n > VEC_MAX || mincore((void *)start, end - start, vec) < 0)
        return 0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && j - i < RUN_MAX && (vec[j] & 1); j++)
            ;
        if (j == i) {
            j++; /* not there: nothing to copy */
            continue;
        }
        if (u->work_came(u->ctx))
            return 1;
        if (madvise((void *)(start + i * page), (j - i) * page, MADV_POPULATE_WRITE) < 0 &&
            errno == EINVAL)
            return -1;
    }
    return 0;
}

/* The part of a private writable mapping worth copying: [*start, *end)
 * narrowed, or 0 for none.  sp is an address on our stack. */
static int window(uintptr_t *start, uintptr_t *end, const char *name, uintptr_t sp,
                  size_t page)
{
    if (strstr(name, "[stack]")) {
        if (sp < *start || sp >= *end)
            return 0; /* we run on another stack */
        uintptr_t below = sp & ~(uintptr_t)(page - 1);
        *start = below - STACK_BELOW > *start ? below - STACK_BELOW : *start;
        *end = below;
    } else if (strstr(name, "[heap]")) {
        *start = *end - *start > HEAP_TOP ? *end - HEAP_TOP : *start;
    } else if (*end - *start > SMALL_MAX || strchr(name, '[')) {
        return 0; /* a buffer, a thread's stack, [vvar] and the like */
    }
    return *end > *start;
}

void rt__prefault_writes(int (*work_came)(void *ctx), void *ctx)
{
    until u = {work_came, ctx};
    if (work_came(ctx))
        return;
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), total = 0;
    uintptr_t sp = (uintptr_t)&page;
    char line[512];
    while (total < TOTAL_MAX && fgets(line, sizeof line, maps)) {
        uintptr_t start, end;
        char perms[5];
        int name_at = 0;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s %*s %*s %*s %n", &start, &end,
                   perms, &name_at) < 3 || strcmp(perms, "rw-p") != 0 ||
            !window(&start, &end, line + name_at, sp, page))
            continue;
        int rc = populate_existing(start, end, page, &u);
        if (rc != 0)
            break; /* work came, or before Linux 5.14 */
        total += end - start;
    }
    fclose(maps);
}

void rt__prefault_range(void *start, size_t len)
{
    (void)madvise(start, len, MADV_POPULATE_WRITE); /* before Linux 5.14: faults later */
}

void rt__prefault_heap(void)
{
    char *ahead = malloc(HEAP_AHEAD);
    if (!ahead)
        return;
    memset(ahead, 0, HEAP_AHEAD);
    free(ahead); /* its pages, now ours, serve the next allocations */
}

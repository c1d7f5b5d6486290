/*
 * spill.c - section 15: objects of 4 times the store, which spill to
 * files and come back (rt_put(3), "Spilling"), beside the same work done
 * by hand on the same bytes in the same folder (raw_run()).  Both read a
 * page cache warm alike (the files were just written), start with
 * nothing dirty to write back, and take turns at going first.
 */
#include "bench.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define OBJECTS 16 /* of the store's size / 4 each: 4 times the store */

/* What section 15 measures, in seconds. */
typedef struct spill_times {
    double put, get;
} spill_times;

static void write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n <= 0)
            check(-1, "write");
        p += n;
        len -= (size_t)n;
    }
}

/* rtask: OBJECTS puts of `each` bytes into a store of `store` bytes,
 * then every object read back with rt_get(). */
static spill_times rtask_run(const char *dir, const char *data, size_t each, size_t store)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 1;
    c.num_gpus = 0;
    c.object_store_bytes = store;
    c.spill_dir = dir;
    check(rt_init_config(&c), "rt_init");
    rt_ref refs[OBJECTS];
    spill_times t;
    double t0 = now();
    for (int i = 0; i < OBJECTS; i++)
        check(rt_put(data, each, &refs[i]), "rt_put");
    t.put = now() - t0;
    t0 = now();
    for (int i = 0; i < OBJECTS; i++) {
        void *bytes;
        check(rt_get(refs[i], &bytes, NULL, RT_FOREVER), "rt_get");
        rt_free(bytes);
    }
    t.get = now() - t0;
    check(rt_shutdown(), "rt_shutdown");
    return t;
}

/* A memfd of len bytes mapped, filled from data: as an object's. */
static void *memfd_with(const char *data, size_t len, int *fd)
{
    *fd = memfd_create("raw", MFD_CLOEXEC);
    void *m = *fd >= 0 && ftruncate(*fd, (off_t)len) == 0
                  ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0) : MAP_FAILED;
    if (m == MAP_FAILED)
        check(-1, "memfd");
    if (data)
        memcpy(m, data, len);
    return m;
}

/* Raw, the same work by hand: each object's bytes copied into a memfd
 * of its own, as a put does; once 4 are held, the oldest written to a
 * file in the folder and let go, as a spill does; then the files read
 * back, each into a fresh memfd, as rt_get() does, and everything let
 * go. */
#define SPILLED (OBJECTS - 4)
static spill_times raw_run(const char *dir, const char *data, size_t each)
{
    char path[SPILLED][512];
    void *held[OBJECTS];
    int fds[OBJECTS];
    spill_times t;
    double t0 = now();
    for (int i = 0; i < OBJECTS; i++) {
        held[i] = memfd_with(data, each, &fds[i]);
        int old = i - 4;
        if (old < 0)
            continue;
        snprintf(path[old], sizeof path[old], "%s/raw-%d", dir, old);
        int fd = open(path[old], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
            check(-1, "open");
        write_all(fd, held[old], each);
        close(fd);
        munmap(held[old], each);
        close(fds[old]);
    }
    t.put = now() - t0;
    t0 = now();
    for (int i = 0; i < OBJECTS; i++) {
        if (i < SPILLED) {
            int fd = open(path[i], O_RDONLY | O_CLOEXEC);
            held[i] = memfd_with(NULL, each, &fds[i]);
            if (fd < 0 || read(fd, held[i], each) != (ssize_t)each)
                check(-1, "read back");
            close(fd);
            unlink(path[i]);
        }
        munmap(held[i], each);
        close(fds[i]);
    }
    t.get = now() - t0;
    return t;
}

/* Write back what dir's file system holds dirty. */
static void settle(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || syncfs(fd) < 0)
        check(-1, "syncfs");
    close(fd);
}

void bench_spill(void)
{
    printf("\n15. Objects of 4 times the store: spilled to files, read back\n");
    size_t each = scaled(16) << 20; /* a store of 64 MiB */
    char dir[] = "/tmp/rtask-bench-spill-XXXXXX";
    const char *tmp = getenv("TMPDIR");
    char where[512];
    snprintf(where, sizeof where, "%s/rtask-bench-spill-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *made = mkdtemp(where);
    if (!made && !(made = mkdtemp(dir)))
        check(-1, "mkdtemp");
    char *data = malloc(each);
    if (!data)
        check(-1, "malloc");
    memset(data, 0x5a, each);
    double rt_put_s[REPS], rt_get_s[REPS], raw_put_s[REPS], raw_get_s[REPS];
    for (int r = 0; r < REPS; r++) {
        /* Each run starts with no dirty page in the folder's file system
         * (the kernel slows writers down by what others left to write),
         * and the runs take turns at going first. */
        spill_times a, b;
        settle(made);
        if (r & 1)
            b = raw_run(made, data, each);
        else
            a = rtask_run(made, data, each, 4 * each);
        settle(made);
        if (r & 1)
            a = rtask_run(made, data, each, 4 * each);
        else
            b = raw_run(made, data, each);
        rt_put_s[r] = a.put, rt_get_s[r] = a.get;
        raw_put_s[r] = b.put, raw_get_s[r] = b.get;
    }
    double mib = (double)OBJECTS * (double)each / (1 << 20);
    double rp = mib / median(rt_put_s, REPS), rg = mib / median(rt_get_s, REPS);
    double wp = mib / median(raw_put_s, REPS), wg = mib / median(raw_get_s, REPS);
    row("rtask, 16 puts, 12 of them spilling", rp, "MiB/s", "objects put per second");
    row("raw: 16 memfds filled, 12 written to files", wp, "MiB/s",
        "each let go once written; same folder");
    row("rtask, rt_get of the 16, 12 read back", rg, "MiB/s", "");
    row("raw: the 12 files read into fresh memfds", wg, "MiB/s",
        "memory workers could map, as an object's");
    verdict("spilling puts / raw", rp / wp, 0.8, 0);
    verdict("reading back / raw", rg / wg, 0.8, 0);
    free(data);
    rmdir(made);
}

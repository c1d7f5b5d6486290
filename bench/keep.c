/*
 * keep.c - section 16: checkpoints (rtask_checkpoint(7)).  What keeping a
 * small task's result costs (runs with and without a folder, taking
 * turns), beside the raw work: the same bytes written to a new file,
 * renamed, and the file system flushed as often; and how long a run
 * takes that finds half its results kept, beside half of a whole run.
 */
#include "bench.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEPT_BYTES (48 + 8) /* a kept file: its header, and a small result */

/* A task that gives its argument back, after napping *arg ms. */
int nap_echo(const void *arg, size_t len, rt_result *r);
int nap_echo(const void *arg, size_t len, rt_result *r)
{
    nap(arg, len, r);
    return rt_result_set(r, arg, len);
}

/* n tasks (i, ms) submitted then collected, with checkpoints in dir (or
 * none): seconds. */
static double run_tasks(const char *dir, int from, int n, int ms)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.num_gpus = 0;
    c.checkpoint_dir = dir;
    check(rt_init_config(&c), "rt_init");
    rt_ref *refs = malloc((size_t)n * sizeof *refs);
    if (!refs)
        check(-1, "malloc");
    double t0 = now();
    for (int i = 0; i < n; i++) {
        int arg[2] = {ms, from + i};
        check(rt_remote(nap_echo, NULL, arg, sizeof arg, &refs[i]), "rt_remote");
    }
    for (int i = 0; i < n; i++)
        check(rt_get(refs[i], NULL, NULL, RT_FOREVER), "rt_get");
    double t = now() - t0;
    free(refs);
    check(rt_shutdown(), "rt_shutdown");
    return t;
}

/* Raw: n files of KEPT_BYTES written under a temporary name and renamed,
 * the file system flushed as rtask flushes it (every 64 files, or once
 * 100 ms passed since the first not flushed): seconds. */
static double raw_keep(const char *dir, int n)
{
    char bytes[KEPT_BYTES] = {0}, tmp[600], path[600];
    double t0 = now(), first = 0;
    int unsynced = 0;
    for (int i = 0; i < n; i++) {
        snprintf(tmp, sizeof tmp, "%s/.tmp-%d", dir, i);
        snprintf(path, sizeof path, "%s/raw-%d", dir, i);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, bytes, sizeof bytes) != (ssize_t)sizeof bytes ||
            close(fd) < 0 || rename(tmp, path) < 0)
            check(-1, "write and rename");
        if (unsynced++ == 0)
            first = now();
        if (unsynced < 64 && now() - first < 0.1)
            continue;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || syncfs(fd) < 0)
            check(-1, "syncfs");
        close(fd);
        unsynced = 0;
    }
    double t = now() - t0;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/raw-%d", dir, i);
        unlink(path);
    }
    return t;
}

/* A fresh folder of its own, under $TMPDIR or /tmp. */
static char *fresh_folder(char *buf, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, len, "%s/rtask-bench-kept-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *made = mkdtemp(buf);
    if (!made)
        check(-1, "mkdtemp");
    return made;
}

static void remove_folder(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        check(-1, "rm -rf");
}

void bench_keep(void)
{
    printf("\n16. Checkpoints: results kept in a folder, a killed run resumed\n");
    int n = (int)scaled(2000);
    double with[REPS], without[REPS], raw[REPS];
    char buf[600];
    for (int r = 0; r < REPS; r++) {
        char *dir = fresh_folder(buf, sizeof buf);
        if (r & 1) {
            without[r] = run_tasks(NULL, r * n, n, 0);
            with[r] = run_tasks(dir, r * n, n, 0);
        } else {
            with[r] = run_tasks(dir, r * n, n, 0);
            without[r] = run_tasks(NULL, r * n, n, 0);
        }
        raw[r] = raw_keep(dir, n);
        remove_folder(dir);
    }
    double cost_us = (median(with, REPS) - median(without, REPS)) / n * 1e6;
    double raw_us = median(raw, REPS) / n * 1e6;
    row("rtask, what keeping a no-op task's result adds", cost_us > 0 ? cost_us : 0, "us",
        "2 000 tasks, with a folder and without, taking turns");
    row("raw: write 56 bytes, rename, flush as rtask", raw_us, "us",
        "same folder; every 64 files or 100 ms");
    verdict("kept task / raw write+rename", (cost_us > 0 ? cost_us : 0) / raw_us, 1.5, 1);

    /* A run that finds half its results kept, beside half a whole run. */
    int m = (int)scaled(400), ms = 2;
    double half[REPS], whole[REPS];
    for (int r = 0; r < REPS; r++) {
        char *dir = fresh_folder(buf, sizeof buf);
        whole[r] = run_tasks(NULL, 0, m, ms);
        run_tasks(dir, 0, m / 2, ms); /* the killed run's share */
        half[r] = run_tasks(dir, 0, m, ms);
        remove_folder(dir);
    }
    double resumed = median(half, REPS), full = median(whole, REPS);
    row("rtask, a run resumed with half its results kept", resumed * 1e3, "ms",
        "400 tasks of 2 ms on 2 workers");
    row("half of a whole run (no folder)", full / 2 * 1e3, "ms", "the work left");
    verdict("resumed / the share of work left", resumed / (full / 2), 1.2, 1);
}

/*
 * health.c - section 14: what watching the GPUs costs, and how soon a GPU
 * that fails leaves what is available.  On this machine the GPUs are the
 * fake ones of the tests (test/fake/h100x8, test/fake/nvml.c): the
 * watcher process runs as it would with NVIDIA's library, and an XID is a
 * line appended to the file the fake reads its events from.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char events[64];

/* rt_init() on the fake H100s; watched through the fake NVML, or with no
 * NVML at all. */
static void start(int watched)
{
    char lib[512], scenario[128];
    ssize_t n = readlink("/proc/self/exe", lib, sizeof lib - 64);
    check(n > 0 ? 0 : -1, "readlink");
    lib[n] = '\0';
    strcpy(strrchr(lib, '/') + 1, "../test/libnvidia-ml.so.1");
    snprintf(scenario, sizeof scenario, "events=%s", events);
    setenv("RTASK_NVML_LIBRARY", watched ? lib : "/nonexistent/libnvidia-ml.so.1", 1);
    setenv("RTASK_FAKE_NVML", scenario, 1);
    setenv("RTASK_PCI_IDS", "test/fake/pci.ids", 1);
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.sysfs_root = "test/fake/h100x8";
    check(rt_init_config(&c), "rt_init");
    unsetenv("RTASK_NVML_LIBRARY");
    unsetenv("RTASK_FAKE_NVML");
}

static double gpus_available(void)
{
    rt_resource *list;
    size_t n;
    double gpus = -1;
    check(rt_available_resources(&list, &n), "rt_available_resources");
    for (size_t i = 0; i < n; i++)
        if (list[i].node < 0 && strcmp(list[i].name, "GPU") == 0)
            gpus = list[i].amount;
    rt_free(list);
    return gpus;
}

/* Seconds from an XID appended to the events file to the GPU gone from
 * rt_available_resources(). */
static double xid_to_unavailable(int gpu)
{
    double before = gpus_available(), start = now();
    FILE *f = fopen(events, "a");
    fprintf(f, "xid %d 79\n", gpu);
    fclose(f);
    while (gpus_available() == before && now() - start < 10)
        continue;
    return now() - start;
}

/* One run of each figure in a runtime started watched or not: the
 * pipelined rate and the synchronous call's microseconds. */
static void run_once(int watched, double *rate, double *sync_us)
{
    rt_opts o = RT_OPTS_INIT;
    start(watched);
    submit_all_get_all(10000, submit_task, &o); /* warm up */
    *rate = (double)scaled(200000) / submit_all_get_all(scaled(200000), submit_task, &o);
    *sync_us = one_at_a_time(scaled(10000), submit_task, &o) / (double)scaled(10000) * 1e6;
    check(rt_shutdown(), "rt_shutdown");
}

void bench_health(void)
{
    printf("\n14. Watching the GPUs (NVML: the tests' fake, on 8 fake H100s)\n");
    snprintf(events, sizeof events, "/tmp/rtask-bench-events-%d", (int)getpid());
    fclose(fopen(events, "w"));
    /* The two take turns at going first, each run in a runtime of its
     * own, as the machine's state drifts. */
    double rates[2][REPS], syncs[2][REPS];
    for (int r = 0; r < REPS; r++)
        for (int k = 0; k < 2; k++) {
            int watched = (r + k) & 1;
            run_once(watched, &rates[watched][r], &syncs[watched][r]);
        }
    double rate_off = median(rates[0], REPS), sync_off = median(syncs[0], REPS);
    double rate_on = median(rates[1], REPS), sync_on = median(syncs[1], REPS);
    start(1);
    double took[REPS];
    for (int i = 0; i < REPS; i++)
        took[i] = xid_to_unavailable(2 + i) * 1e3;
    check(rt_shutdown(), "rt_shutdown");
    unlink(events);
    row("no-op tasks pipelined, watched", rate_on, "tasks/s", "");
    row("no-op tasks pipelined, no NVML", rate_off, "tasks/s", "");
    row("sync rt_remote + rt_get, watched", sync_on, "us", "");
    row("sync rt_remote + rt_get, no NVML", sync_off, "us", "");
    verdict("rate, no NVML / watched", rate_off / rate_on, 1.02, 1);
    verdict("sync, watched / no NVML", sync_on / sync_off, 1.02, 1);
    double xid = median(took, REPS);
    row("an XID to the GPU gone from available", xid, "ms",
        "the fake wakes as its file grows (inotify)");
    verdict("XID to unavailable / 10 ms", xid / 10, 1, 1);
}

/*
 * nested.c - work that makes work (section 13): a task's synchronous
 * call against the application's, fib(20) as tasks against independent
 * ones (and the worker processes it needs), a batch against single
 * submissions, and how soon an event loop hears of a result against a
 * pipe round trip; each beside what it is measured against in the same
 * run.
 */
#include "bench.h"

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int fib_task(const void *arg, size_t len, rt_result *r);
int stamp(const void *arg, size_t len, rt_result *r);


int fib_task(const void *arg, size_t len, rt_result *r)
{
    uint64_t n, v, a, b;
    if (len != sizeof n)
        return 1;
    memcpy(&n, arg, sizeof n);
    v = n;
    if (n >= 2) {
        uint64_t x = n - 1, y = n - 2;
        rt_ref rx, ry;
        void *px, *py;
        if (rt_remote(fib_task, NULL, &x, sizeof x, &rx) < 0 ||
            rt_remote(fib_task, NULL, &y, sizeof y, &ry) < 0 ||
            rt_get(rx, &px, NULL, RT_FOREVER) < 0 || rt_get(ry, &py, NULL, RT_FOREVER) < 0)
            return 2;
        memcpy(&a, px, sizeof a);
        memcpy(&b, py, sizeof b);
        rt_free(px);
        rt_free(py);
        v = a + b;
    }
    return rt_result_set(r, &v, sizeof v);
}

/* The time it ends, CLOCK_MONOTONIC, in seconds. */
int stamp(const void *arg, size_t len, rt_result *r)
{
    (void)arg, (void)len;
    double t = now();
    return rt_result_set(r, &t, sizeof t);
}

/* ---- the worker processes fib needs ------------------------------------------------ */

/* Processes named as this one, this one aside: the fork server and its
 * workers (the application's children would count too; it has none). */
static int count_ours(void)
{
    static char comm[64];
    if (!comm[0]) {
        FILE *f = fopen("/proc/self/comm", "r");
        if (!f || !fgets(comm, sizeof comm, f))
            strcpy(comm, "?");
        if (f)
            fclose(f);
    }
    DIR *d = opendir("/proc");
    int n = 0;
    char path[64], name[64];
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || atoi(e->d_name) == getpid())
            continue;
        snprintf(path, sizeof path, "/proc/%.40s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(name, sizeof name, f) && strcmp(name, comm) == 0)
            n++;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

static volatile int sampling;
static int peak;

static void *sample(void *unused)
{
    (void)unused;
    while (sampling) {
        int n = count_ours() - 1; /* the fork server */
        if (n > peak)
            peak = n;
        usleep(10000); /* reading /proc costs: not too often */
    }
    return NULL;
}

/* ---- the figures -------------------------------------------------------------------- */

static double nested_call_us(size_t n)
{
    double v[REPS];
    for (int i = 0; i < REPS; i++) {
        uint64_t calls = n;
        rt_ref ref;
        void *took;
        check(rt_remote(nested_calls, NULL, &calls, sizeof calls, &ref), "rt_remote");
        check(rt_get(ref, &took, NULL, RT_FOREVER), "rt_get");
        memcpy(&v[i], took, sizeof v[i]);
        rt_free(took);
        v[i] = v[i] / (double)n * 1e6;
    }
    return median(v, REPS);
}

static double fib_seconds(uint64_t n)
{
    rt_ref ref;
    double t0 = now();
    check(rt_remote(fib_task, NULL, &n, sizeof n, &ref), "rt_remote");
    check(rt_get(ref, NULL, NULL, RT_FOREVER), "rt_get");
    return now() - t0;
}

static double batch_seconds(size_t n, int batch)
{
    rt_ref *refs = malloc(n * sizeof *refs);
    rt_value *args = calloc(n, sizeof *args);
    if (!refs || !args)
        check(RT_ENOMEM, "malloc");
    double t0 = now();
    if (batch)
        check(rt_remote_batch(noop, NULL, args, n, refs), "rt_remote_batch");
    else
        for (size_t i = 0; i < n; i++)
            check(rt_remote(noop, NULL, NULL, 0, &refs[i]), "rt_remote");
    double took = now() - t0;
    for (size_t i = 0; i < n; i++)
        check(rt_get(refs[i], NULL, NULL, RT_FOREVER), "rt_get");
    free(refs);
    free(args);
    return took;
}

/* From a task's end (its own clock) to poll() seeing the notices'
 * descriptor, in microseconds: the median of n.  The event loop looks
 * for it 50 us before it sleeps, as the raw limit's sides do. */
static double notice_us(size_t n)
{
    int fd;
    check(rt_notify_fd(&fd), "rt_notify_fd");
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        rt_ref ref;
        check(rt_remote(stamp, NULL, NULL, 0, &ref), "rt_remote");
        check(rt_notify(ref, i), "rt_notify");
        struct pollfd p = {fd, POLLIN, 0};
        linger_for(fd);
        while (poll(&p, 1, -1) < 0)
            ;
        double seen = now();
        rt_notice note;
        size_t got;
        check(rt_ready(&note, 1, &got), "rt_ready");
        void *ended;
        check(rt_get(ref, &ended, NULL, RT_FOREVER), "rt_get");
        double t;
        memcpy(&t, ended, sizeof t);
        rt_free(ended);
        v[i] = (seen - t) * 1e6;
    }
    double q = quantile(v, n, 0.5);
    free(v);
    return q;
}

void bench_nested(double rt_rate, double rt_sync, double raw_rt, double raw_poll)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.num_gpus = 0;
    check(rt_init_config(&c), "rt_init");

    printf("13. Work that makes work (tasks that submit tasks)\n");
    (void)nested_call_us(scaled(2000)); /* warm up */
    double nested = nested_call_us(scaled(5000));
    row("rtask, a task's rt_remote + rt_get", nested, "us",
        "named: the wait alone goes and comes back");
    row("rtask, the application's (section 2)", rt_sync, "us", "");
    row("raw: pipe round trip, both polling 50 us", raw_poll, "us", "");
    verdict("nested call / application's call", nested / rt_sync, 1.2, 1);

    uint64_t depth = scaled(20) >= 20 ? 20 : 15;
    size_t tasks = depth == 20 ? 21891 : 1973;
    pthread_t sampler;
    sampling = 1;
    peak = 0;
    pthread_create(&sampler, NULL, sample, NULL);
    double fib[REPS];
    for (int i = 0; i < REPS; i++)
        fib[i] = fib_seconds(depth);
    sampling = 0;
    pthread_join(sampler, NULL);
    double fib_rate = (double)tasks / median(fib, REPS);
    char what[64];
    snprintf(what, sizeof what, "rtask, fib(%u) as tasks", (unsigned)depth);
    row(what, fib_rate, "tasks/s", "num_cpus 1 each, 2 CPUs");
    row("  peak worker processes", (double)peak, "", "waiting tasks lend their CPU");
    row("rtask, independent pipelined (section 1)", rt_rate, "tasks/s", "");
    row("  fib / independent", fib_rate / rt_rate, "x", "no goal: four calls a task");

    size_t n = scaled(100000);
    double singles[REPS], batches[REPS];
    for (int i = 0; i < REPS; i++) {
        singles[i] = batch_seconds(n, 0);
        batches[i] = batch_seconds(n, 1);
    }
    double one_by_one = median(singles, REPS), at_once = median(batches, REPS);
    row("rtask, 100 000 rt_remote calls", one_by_one * 1e3, "ms", "submission only");
    row("rtask, one rt_remote_batch of 100 000", at_once * 1e3, "ms", "");
    verdict("singles / batch", one_by_one / at_once, 2, 0);

    double heard = notice_us(scaled(2000));
    row("rtask, task's end to poll() waking", heard, "us", "median; the loop polls 50 us first");
    row("raw: pipe round trip, both polling 50 us", raw_poll, "us", "rtask's state");
    row("raw: pipe round trip, blocking at once", raw_rt, "us", "information");
    verdict("event loop hears / polling pipe round trip", heard / raw_poll, 1, 1);
    check(rt_shutdown(), "rt_shutdown");
    printf("\n");
}

/*
 * scale.c - figures that must not grow with what the runtime has seen:
 * many live actors, many task shapes, and short tasks beside a long one.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static void start_with(double cpus, int workers, const char *resources)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = cpus;
    c.num_gpus = 0;
    c.num_workers = workers;
    c.resources = resources;
    check(rt_init_config(&c), "rt_init");
}

static void start(double cpus, int workers)
{
    start_with(cpus, workers, NULL);
}

/* ---- 7. many live actors ---------------------------------------------- */

/* Each worker costs the application three descriptors: as many actors as
 * the hard limit allows, up to want, with some to spare. */
static size_t actors_the_limit_allows(size_t want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max == RLIM_INFINITY)
        return want;
    size_t fit = rl.rlim_max > 300 ? (size_t)(rl.rlim_max - 300) / 3 : 0;
    return fit < want ? fit : want;
}

/* Median microseconds of one synchronous call to a. */
static double sync_call_us(rt_actor a, size_t n)
{
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        rt_ref ref;
        double t0 = now();
        check(rt_actor_call(a, actor_noop, NULL, 0, &ref), "rt_actor_call");
        check(rt_get(ref, NULL, NULL, RT_FOREVER), "rt_get");
        v[i] = (now() - t0) * 1e6;
    }
    double m = median(v, (int)n);
    free(v);
    return m;
}

/* Submit calls round-robin over all actors, then collect them. */
static double calls_per_second(const rt_actor *a, size_t n, size_t calls)
{
    rt_ref *refs = malloc(calls * sizeof *refs);
    double t0 = now();
    for (size_t i = 0; i < calls; i++)
        check(rt_actor_call(a[i % n], actor_noop, NULL, 0, &refs[i]), "rt_actor_call");
    for (size_t i = 0; i < calls; i++)
        check(rt_get(refs[i], NULL, NULL, RT_FOREVER), "rt_get");
    double rate = (double)calls / (now() - t0);
    free(refs);
    return rate;
}

static double one_actor_call_us(size_t n)
{
    static const rt_actor_class cls = {"One", actor_init, NULL};
    rt_actor a;
    start(2, 2);
    check(rt_actor_create(&cls, NULL, NULL, 0, &a), "rt_actor_create");
    sync_call_us(a, 100); /* warm up */
    double us = sync_call_us(a, n);
    check(rt_shutdown(), "rt_shutdown");
    return us;
}

void bench_many_actors(void)
{
    static const rt_actor_class cls = {"Many", actor_init, NULL};
    size_t want = scaled(10000), n = actors_the_limit_allows(want);
    printf("7. %zu live actors%s\n", n,
           n < want ? " (the descriptor limit allows no more here)" : "");
    double one_us = one_actor_call_us(scaled(2000)); /* first: a quiet machine */
    rt_actor *a = malloc(n * sizeof *a);
    start(2, 2);
    double t0 = now();
    for (size_t i = 0; i < n; i++)
        check(rt_actor_create(&cls, NULL, NULL, 0, &a[i]), "rt_actor_create");
    double created = (double)n / (now() - t0); /* handles: processes start later */
    double started = calls_per_second(a, n, n); /* each one's first call */
    double ready = (double)n / (now() - t0);
    double rate = calls_per_second(a, n, 10 * n);
    double many_us = sync_call_us(a[0], scaled(2000));
    check(rt_shutdown(), "rt_shutdown");
    free(a);
    row("rt_actor_create calls", created, "/s", "returns before the process runs");
    row("actors created and answering", ready, "/s", "create, then a first call each");
    row("  first calls", started, "calls/s", "");
    row("pipelined calls spread over all", rate, "calls/s", "10 per actor");
    row("one synchronous call, all alive", many_us, "us", "median");
    row("one synchronous call, one alive", one_us, "us", "median");
    verdict("call with many / call with one", many_us / one_us, 1.2, 1);
    printf("\n");
}

/* ---- 8. many shapes ------------------------------------------------------ */

/* One wave: a task of each shape, all submitted, then collected.  A
 * shape is 0.0001 to 0.1 CPU times 0.0001 to 0.01 of a custom resource. */
static void one_wave(size_t shapes, rt_ref *refs)
{
    rt_opts o = RT_OPTS_INIT;
    char res[32];
    o.resources = res;
    for (size_t i = 0; i < shapes; i++) {
        o.num_cpus = 0.0001 * (double)(1 + i % 1000);
        snprintf(res, sizeof res, "a=%.4f", 0.0001 * (double)(1 + i / 1000));
        check(rt_remote(noop, &o, NULL, 0, &refs[i]), "rt_remote");
    }
    for (size_t i = 0; i < shapes; i++)
        check(rt_get(refs[i], NULL, NULL, RT_FOREVER), "rt_get");
}

void bench_many_shapes(void)
{
    size_t shapes = scaled(100000), tasks = scaled(10000000), waves = tasks / shapes;
    printf("8. %zu no-op tasks in %zu shapes, in waves of one task per shape\n",
           waves * shapes, shapes);
    rt_ref *refs = malloc(shapes * sizeof *refs);
    start_with(2, 2, "a=1");
    one_wave(shapes, refs); /* the first wave sets up workers and buffers */
    long before = rss_kib();
    double t0 = now();
    for (size_t w = 1; w < waves; w++)
        one_wave(shapes, refs);
    double rate = (double)((waves - 1) * shapes) / (now() - t0);
    long after = rss_kib();
    check(rt_shutdown(), "rt_shutdown");
    free(refs);
    row("tasks", rate, "tasks/s", "a lease per task: no two alike");
    row("resident memory after the first wave", (double)before / 1024, "MB", "");
    row("resident memory after the last", (double)after / 1024, "MB", "");
    verdict("growth / 10 MB", (double)(after - before) / 1024 / 10, 1, 1);
    printf("\n");
}

/* ---- 9. short tasks beside a long one ------------------------------------ */

/* The 99th percentile of n synchronous no-op naps, in microseconds. */
static double p99_us(size_t n)
{
    double *v = malloc(n * sizeof *v);
    int zero = 0;
    for (size_t i = 0; i < n; i++) {
        rt_ref ref;
        double t0 = now();
        check(rt_remote(nap, NULL, &zero, sizeof zero, &ref), "rt_remote");
        check(rt_get(ref, NULL, NULL, RT_FOREVER), "rt_get");
        v[i] = (now() - t0) * 1e6;
    }
    double p = quantile(v, n, 0.99);
    free(v);
    return p;
}

void bench_beside_a_long_task(void)
{
    printf("9. A no-op task's latency while a long task of the same function runs\n");
    size_t n = scaled(5000);
    start(2, 2);
    p99_us(200); /* warm up */
    double alone = p99_us(n);
    int long_ms = (int)(n / 2) + 500; /* outlasts the measurement */
    rt_ref slow;
    check(rt_remote(nap, NULL, &long_ms, sizeof long_ms, &slow), "rt_remote");
    double beside = p99_us(n);
    check(rt_get(slow, NULL, NULL, RT_FOREVER), "rt_get");
    check(rt_shutdown(), "rt_shutdown");
    row("p99 alone", alone, "us", "");
    row("p99 beside a long task", beside, "us", "2 workers: one is busy");
    verdict("beside / alone", beside / alone, 2, 1);
    printf("\n");
}

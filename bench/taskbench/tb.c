/* tb.c - Task Bench's shapes, kernel and sweep (tb.h). */
#include "tb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *tb_name(tb_shape s)
{
    static const char *const names[TB_SHAPES] = {
        "trivial", "no_comm", "stencil_1d", "fft", "tree", "nearest", "spread", "all_to_all"};
    return names[s];
}

double tb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

long tb_width(tb_shape s, long width, long t)
{
    if (s != TB_TREE)
        return width;
    return t >= 62 || (1L << t) >= width ? width : 1L << t;
}

/* ceil(log2(width)), at least 1: the butterfly's levels. */
static long levels(long width)
{
    long k = 0;
    while ((1L << k) < width)
        k++;
    return k ? k : 1;
}

/* Add point p to deps unless it is out of range or there already. */
static int add(long *deps, int n, long p, long width)
{
    if (p < 0 || p >= width)
        return n;
    for (int j = 0; j < n; j++)
        if (deps[j] == p)
            return n;
    deps[n] = p;
    return n + 1;
}

static int sorted(long *deps, int n)
{
    for (int a = 1; a < n; a++)
        for (int b = a; b > 0 && deps[b - 1] > deps[b]; b--) {
            long x = deps[b];
            deps[b] = deps[b - 1];
            deps[b - 1] = x;
        }
    return n;
}

int tb_deps(tb_shape s, long width, long t, long i, long *deps)
{
    int n = 0;
    if (t == 0)
        return 0;
    long before = tb_width(s, width, t - 1), k = (t - 1) % levels(width);
    switch (s) {
    case TB_TRIVIAL:
        return 0;
    case TB_NO_COMM:
        return add(deps, 0, i, before);
    case TB_STENCIL_1D:
        for (long p = i - 1; p <= i + 1; p++)
            n = add(deps, n, p, before);
        return n;
    case TB_FFT:
        n = add(deps, n, i - (1L << k), before);
        n = add(deps, n, i, before);
        return sorted(deps, add(deps, n, i + (1L << k), before));
    case TB_TREE:
        return add(deps, 0, i / 2, before);
    case TB_NEAREST:
        for (long p = i - TB_RADIX / 2; p <= i + (TB_RADIX - 1) / 2; p++)
            n = add(deps, n, p, before);
        return n;
    case TB_SPREAD:
        for (long r = 0; r < TB_RADIX; r++)
            n = add(deps, n, (i + r * width / TB_RADIX + (r ? t % TB_RADIX : 0)) % width,
                    before);
        return sorted(deps, n);
    default:
        for (long p = 0; p < before; p++)
            n = add(deps, n, p, before);
        return n;
    }
}

long tb_tasks(tb_shape s, long width, long steps)
{
    long n = 0;
    for (long t = 0; t < steps; t++)
        n += tb_width(s, width, t);
    return n;
}

double tb_kernel(long iters, double seed)
{
    double a[8];
    for (int j = 0; j < 8; j++)
        a[j] = seed + j;
    for (long k = 0; k < iters; k++)
        for (int j = 0; j < 8; j++)
            a[j] = a[j] * 0.999999 + 0.000001; /* a multiply and an add each */
    double sum = 0;
    for (int j = 0; j < 8; j++)
        sum += a[j];
    return sum;
}

int tb_run_task(const tb_task *t, const tb_out *const *in, int n, tb_out *out)
{
    long deps[TB_WIDTH_MAX];
    int want = tb_deps((tb_shape)t->shape, t->width, t->step, t->point, deps);
    double seed = 0;
    if (n != want) {
        fprintf(stderr, "taskbench: step %ld point %ld got %d inputs, not %d\n", t->step,
                t->point, n, want);
        return -1;
    }
    for (int j = 0; j < n; j++) {
        if (in[j]->step != t->step - 1 || in[j]->point != deps[j]) {
            fprintf(stderr, "taskbench: step %ld point %ld: input %d came from step %ld "
                    "point %ld, not step %ld point %ld\n", t->step, t->point, j, in[j]->step,
                    in[j]->point, t->step - 1, deps[j]);
            return -1;
        }
        seed += in[j]->value * 1e-9;
    }
    *out = (tb_out){t->step, t->point, tb_kernel(t->iters, seed)};
    return 0;
}

/* The best of a few runs of the kernel: seconds per iteration. */
static double measure_iteration(void)
{
    volatile double sink = 0;
    double best = 1e9;
    long iters = 1L << 22;
    for (int r = 0; r < 5; r++) {
        double start = tb_now();
        sink += tb_kernel(iters, r);
        double took = (tb_now() - start) / (double)iters;
        best = took < best ? took : best;
    }
    (void)sink;
    return best;
}

double tb_iteration_seconds(void)
{
    const char *given = getenv("TB_SECONDS_PER_ITER");
    double v = given ? strtod(given, NULL) : 0;
    return v > 0 ? v : measure_iteration();
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int tb_main(int argc, char **argv, long *steps, long *width)
{
    if (argc > 1 && strcmp(argv[1], "peak") == 0) {
        double runs[7];
        for (int i = 0; i < 7; i++)
            runs[i] = measure_iteration();
        qsort(runs, 7, sizeof *runs, by_value);
        printf("%.6e\n", runs[3]); /* the median of seven bests */
        return 1;
    }
    *steps = argc > 1 ? atol(argv[1]) : 1000;
    *width = argc > 2 ? atol(argv[2]) : 4;
    if (*steps < 1 || *width < 1 || *width > TB_WIDTH_MAX) {
        fprintf(stderr, "taskbench: steps >= 1, 1 <= width <= %d\n", TB_WIDTH_MAX);
        exit(2);
    }
    return 0;
}

/* One point of a sweep, run TB_REPS times: the median run's efficiency
 * and granularity, and the runs' lowest and highest efficiency. */
typedef struct point {
    double efficiency, granularity, lowest, highest;
} point;

/* A run of long tasks needs fewer steps to be measured: about RUN_SECONDS
 * of work, at least MIN_STEPS steps, at most the steps asked for. */
#define RUN_SECONDS 0.3
#define MIN_STEPS 20

static long steps_for(long width, long steps, long iters, double per_iter, int cores)
{
    double fit = RUN_SECONDS * cores / ((double)width * (double)iters * per_iter);
    return fit >= (double)steps ? steps : fit < MIN_STEPS ? MIN_STEPS : (long)fit;
}

static point measure_point(tb_runner run, tb_shape s, int cores, long width, long steps,
                           long iters, double per_iter)
{
    double took[TB_REPS];
    steps = steps_for(width, steps, iters, per_iter, cores);
    for (int r = 0; r < TB_REPS; r++)
        took[r] = run(s, width, steps, iters);
    qsort(took, TB_REPS, sizeof *took, by_value);
    double work = (double)tb_tasks(s, width, steps) * (double)iters * per_iter / cores;
    return (point){work / took[TB_REPS / 2], took[TB_REPS / 2] * cores / (double)tb_tasks(s, width, steps),
                   work / took[TB_REPS - 1], work / took[0]};
}

void tb_sweep(const char *system, tb_runner run, int cores, long width, long steps,
              long most, double per_iter)
{
    printf("PEAK|%s|%.4g GFLOP/s per core\n", system, TB_FLOPS_PER_ITER / per_iter / 1e9);
    for (int s = 0; s < TB_SHAPES; s++) {
        double metg = -1;
        point above = {0, 0, 0, 0};
        /* Steps of the square root of 2, from coarse to fine: METG lies
         * where efficiency first falls below 50 %, between two of them. */
        for (double step = (double)most; step >= 1; step /= 1.41421356) {
            long iters = lround(step);
            point p = measure_point(run, (tb_shape)s, cores, width, steps, iters, per_iter);
            printf("TB|%s|%s|%ld|%ld|%.3f|%.3f|%.3f|%.3f|%.3f\n", system, tb_name((tb_shape)s),
                   width, iters, p.efficiency, p.granularity * 1e6, p.lowest, p.highest,
                   (double)iters * per_iter * 1e6);
            fflush(stdout);
            if (p.efficiency >= 0.5) {
                above = p;
                metg = p.granularity * 1e6;
                continue;
            }
            if (metg >= 0) /* interpolated to 50 % */
                metg = 1e6 * (above.granularity + (0.5 - above.efficiency) *
                              (p.granularity - above.granularity) /
                              (p.efficiency - above.efficiency));
            break;
        }
        printf("METG|%s|%s|%ld|%.3f\n", system, tb_name((tb_shape)s), width, metg);
        fflush(stdout);
    }
}

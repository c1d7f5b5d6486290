/* tb.c - Task Bench's shapes, kernel and sweep (tb.h). */
#include "tb.h"

#include <math.h>
#include <stdio.h>
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

double tb_iteration_seconds(void)
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

void tb_sweep(const char *system, tb_runner run, int cores, long width, long steps,
              long most, double per_iter)
{
    printf("PEAK|%s|%.4g GFLOP/s per core\n", system, TB_FLOPS_PER_ITER / per_iter / 1e9);
    for (int s = 0; s < TB_SHAPES; s++) {
        double metg = -1;
        long tasks = tb_tasks((tb_shape)s, width, steps);
        /* Steps of the square root of 2: METG falls between two of them. */
        for (double step = (double)most; step >= 1; step /= 1.41421356) {
            long iters = lround(step);
            double took = run((tb_shape)s, width, steps, iters);
            double efficiency = (double)tasks * (double)iters * per_iter / (cores * took);
            double granularity = took * cores / (double)tasks;
            printf("TB|%s|%s|%ld|%.3f|%.3f\n", system, tb_name((tb_shape)s), iters, efficiency,
                   granularity * 1e6);
            fflush(stdout);
            if (efficiency >= 0.5)
                metg = granularity * 1e6;
            else if (efficiency < 0.25)
                break; /* far past it: smaller ones only take longer to say so */
        }
        printf("METG|%s|%s|%.3f\n", system, tb_name((tb_shape)s), metg);
        fflush(stdout);
    }
}

/* tb_openmp.c - Task Bench on OpenMP tasks (2 threads of one process):
 * each point's output a cell of a step's array, dependencies by depend
 * clauses on the cells. */
#include "tb.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static double cell[2][TB_WIDTH_MAX];

/* The kernel, seeded with the inputs' cells, into the output's. */
static void task(const long *deps, int n, const double *in, double *out, long iters)
{
    double seed = 0;
    for (int j = 0; j < n; j++)
        seed += in[deps[j]] * 1e-9;
    *out = tb_kernel(iters, seed);
}

static double run(tb_shape s, long width, long steps, long iters)
{
    double start = tb_now();
#pragma omp parallel
#pragma omp single
    for (long t = 0; t < steps; t++) {
        double *in = cell[(t + 1) % 2], *out = cell[t % 2];
        for (long i = 0; i < tb_width(s, width, t); i++) {
            long deps[TB_WIDTH_MAX];
            int n = tb_deps(s, width, t, i, deps);
            /* Up to three cells named (every shape here has at most three
             * inputs at width 2), the first repeated to fill; none: no
             * input. */
            long a = n ? deps[0] : 0, b = n > 1 ? deps[1] : a, c = n > 2 ? deps[2] : a;
            if (n)
#pragma omp task firstprivate(deps, n, in, out, i, iters) \
    depend(in : in[a], in[b], in[c]) depend(out : out[i])
                task(deps, n, in, &out[i], iters);
            else
#pragma omp task firstprivate(deps, n, in, out, i, iters) depend(out : out[i])
                task(deps, n, in, &out[i], iters);
        }
    }
    return tb_now() - start;
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 1000;
    double per_iter = tb_iteration_seconds();
    omp_set_num_threads(2);
    tb_sweep("OpenMP", run, 2, 2, steps, 1L << 18, per_iter);
    return 0;
}

/* tb_openmp.c - Task Bench on OpenMP tasks (2 threads of one process):
 * each point's output a cell of a step's array, dependencies by depend
 * clauses on the cells its inputs are. */
#include "tb.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static tb_out cell[2][TB_WIDTH_MAX];

/* The task: its inputs checked, the kernel, its output in its cell. */
static void task(tb_task t, const long *deps, int n, const tb_out *in, tb_out *out)
{
    const tb_out *inputs[TB_WIDTH_MAX];
    for (int j = 0; j < n; j++)
        inputs[j] = &in[deps[j]];
    if (tb_run_task(&t, inputs, n, out) < 0)
        exit(1); /* a wrong input fails the run */
}

/* The parallel region ends when every task has ended. */
static double run(tb_shape s, long width, long steps, long iters)
{
    double start = tb_now();
#pragma omp parallel
#pragma omp single
    for (long t = 0; t < steps; t++) {
        tb_out *in = cell[(t + 1) % 2], *out = cell[t % 2];
        for (long i = 0; i < tb_width(s, width, t); i++) {
            long deps[TB_WIDTH_MAX];
            int n = tb_deps(s, width, t, i, deps);
            tb_task tk = {s, width, t, i, iters};
#pragma omp task firstprivate(tk, deps, n, in, out, i) \
    depend(iterator(j = 0 : n), in : in[deps[j]]) depend(out : out[i])
            task(tk, deps, n, in, &out[i]);
        }
    }
    return tb_now() - start;
}

int main(int argc, char **argv)
{
    long steps, width;
    if (tb_main(argc, argv, &steps, &width))
        return 0;
    double per_iter = tb_iteration_seconds();
    omp_set_num_threads(2);
    tb_sweep("OpenMP", run, 2, width, steps, 1L << 18, per_iter);
    return 0;
}

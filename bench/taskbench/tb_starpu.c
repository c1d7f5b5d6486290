/* tb_starpu.c - Task Bench on StarPU 1.3 (2 CPU workers, threads of one
 * process): each point's output a data handle, dependencies implicit
 * from the handles a task reads and writes. */
#include "tb.h"

#include "../peer.h"

#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>

static tb_out cell[2][TB_WIDTH_MAX];
static starpu_data_handle_t handle[2][TB_WIDTH_MAX];

/* Inputs first, the output last; what the task is (tb_task) in cl_arg.
 * A wrong input fails the run. */
static void task(void *buffers[], void *arg)
{
    int n = STARPU_TASK_GET_NBUFFERS(starpu_task_get_current());
    tb_task t;
    const tb_out *inputs[TB_WIDTH_MAX];
    starpu_codelet_unpack_args(arg, &t);
    for (int j = 0; j < n - 1; j++)
        inputs[j] = (const tb_out *)STARPU_VARIABLE_GET_PTR(buffers[j]);
    if (tb_run_task(&t, inputs, n - 1, (tb_out *)STARPU_VARIABLE_GET_PTR(buffers[n - 1])) < 0)
        exit(1);
}

static struct starpu_codelet codelet = {
    .cpu_funcs = {task}, .nbuffers = STARPU_VARIABLE_NBUFFERS, .name = "tb"};

static double run(tb_shape s, long width, long steps, long iters)
{
    double start = tb_now();
    for (long t = 0; t < steps; t++) {
        for (long i = 0; i < tb_width(s, width, t); i++) {
            long deps[TB_WIDTH_MAX];
            struct starpu_data_descr d[TB_WIDTH_MAX + 1];
            int n = tb_deps(s, width, t, i, deps);
            for (int j = 0; j < n; j++)
                d[j] = (struct starpu_data_descr){handle[(t + 1) % 2][deps[j]], STARPU_R};
            d[n] = (struct starpu_data_descr){handle[t % 2][i], STARPU_W};
            tb_task tk = {s, width, t, i, iters};
            if (starpu_task_insert(&codelet, STARPU_DATA_MODE_ARRAY, d, n + 1, STARPU_VALUE,
                                   &tk, sizeof tk, 0) != 0)
                exit(1);
        }
    }
    starpu_task_wait_for_all();
    return tb_now() - start;
}

int main(int argc, char **argv)
{
    long steps, width;
    if (tb_main(argc, argv, &steps, &width))
        return 0;
    double per_iter = tb_iteration_seconds();
    peer_starpu_env();
    if (starpu_init(NULL) != 0)
        return 1;
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < TB_WIDTH_MAX; i++)
            starpu_variable_data_register(&handle[p][i], STARPU_MAIN_RAM,
                                          (uintptr_t)&cell[p][i], sizeof cell[p][i]);
    tb_sweep("StarPU", run, 2, width, steps, 1L << 18, per_iter);
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < TB_WIDTH_MAX; i++)
            starpu_data_unregister(handle[p][i]);
    starpu_shutdown();
    return 0;
}

/* tb_rtask.c - Task Bench on rtask: every task in a worker process of its
 * own, its inputs the outputs of the tasks before it (objects, by ref). */
#include "tb.h"

#include <rtask.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A task: the kernel, seeded with what its inputs say; its output is the
 * kernel's result.  The last argument is its iterations. */
static int tb_task(const rt_value *args, size_t n, rt_result *r)
{
    long iters;
    double seed = 0;
    memcpy(&iters, args[n - 1].data, sizeof iters);
    for (size_t j = 0; j + 1 < n; j++) {
        double in;
        memcpy(&in, args[j].data, sizeof in);
        seed += in * 1e-9;
    }
    double out = tb_kernel(iters, seed);
    return rt_result_set(r, &out, sizeof out);
}

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "tb_rtask: %s: %s\n", what, rt_last_error());
        exit(1);
    }
}

static double run(tb_shape s, long width, long steps, long iters)
{
    rt_ref step[2][TB_WIDTH_MAX];
    rt_arg args[TB_WIDTH_MAX + 1];
    long deps[TB_WIDTH_MAX];
    double start = tb_now();
    for (long t = 0; t < steps; t++) {
        rt_ref *now = step[t % 2], *before = step[(t + 1) % 2];
        for (long i = 0; i < tb_width(s, width, t); i++) {
            int n = tb_deps(s, width, t, i, deps);
            for (int j = 0; j < n; j++)
                args[j] = RT_ARG_REF(before[deps[j]]);
            args[n] = RT_ARG_BYTES(&iters, sizeof iters);
            check(rt_remote_args(tb_task, NULL, args, (size_t)n + 1, &now[i]), "rt_remote_args");
        }
        for (long i = 0; t > 0 && i < tb_width(s, width, t - 1); i++)
            (void)rt_release(before[i]); /* the tasks that take them hold them */
    }
    for (long i = 0; i < tb_width(s, width, steps - 1); i++)
        check(rt_get(step[(steps - 1) % 2][i], NULL, NULL, RT_FOREVER), "rt_get");
    return tb_now() - start;
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 1000;
    double per_iter = tb_iteration_seconds();
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    check(rt_init_config(&c), "rt_init");
    run(TB_TRIVIAL, 2, 100, 1); /* workers started */
    tb_sweep("rtask", run, 2, 2, steps, 1L << 18, per_iter);
    check(rt_shutdown(), "rt_shutdown");
    return 0;
}

/* tb_rtask.c - Task Bench on rtask: tasks in 2 reused worker processes,
 * each task's inputs the outputs of the tasks before it (objects, by
 * ref), checked as Task Bench checks them. */
#include "tb.h"

#include <rtask.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A task: its inputs, then what it is (tb_task); its output a tb_out. */
static int tb_task_fn(const rt_value *args, size_t n, rt_result *r)
{
    tb_task t;
    tb_out in[TB_WIDTH_MAX], out;
    const tb_out *inputs[TB_WIDTH_MAX];
    if (n < 1 || n > TB_WIDTH_MAX + 1 || args[n - 1].len != sizeof t)
        return 1;
    memcpy(&t, args[n - 1].data, sizeof t);
    for (size_t j = 0; j + 1 < n; j++) {
        if (args[j].len != sizeof in[j])
            return 2;
        memcpy(&in[j], args[j].data, sizeof in[j]);
        inputs[j] = &in[j];
    }
    if (tb_run_task(&t, inputs, (int)n - 1, &out) < 0)
        return 3;
    return rt_result_set(r, &out, sizeof out);
}

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "tb_rtask: %s: %s\n", what, rt_last_error());
        exit(1);
    }
}

/* Every task's handle is kept until the end, where all are waited for
 * (rt_wait(), as StarPU's starpu_task_wait_for_all()), then each result
 * taken: the clock stops when every task has ended, not only the last
 * step's (in a trivial graph they run in any order). */
static double run(tb_shape s, long width, long steps, long iters)
{
    rt_ref *refs = malloc((size_t)(width * steps) * sizeof *refs);
    rt_arg args[TB_WIDTH_MAX + 1];
    long deps[TB_WIDTH_MAX];
    if (!refs)
        exit(1);
    double start = tb_now();
    for (long t = 0; t < steps; t++) {
        rt_ref *now = refs + t * width, *before = now - width;
        for (long i = 0; i < tb_width(s, width, t); i++) {
            tb_task task = {s, width, t, i, iters};
            int n = tb_deps(s, width, t, i, deps);
            for (int j = 0; j < n; j++)
                args[j] = RT_ARG_REF(before[deps[j]]);
            args[n] = RT_ARG_BYTES(&task, sizeof task);
            check(rt_remote_args(tb_task_fn, NULL, args, (size_t)n + 1, &now[i]),
                  "rt_remote_args");
        }
    }
    size_t n = 0, ready;
    for (long t = 0; t < steps; t++) /* the refs in use, together */
        for (long i = 0; i < tb_width(s, width, t); i++)
            refs[n++] = refs[t * width + i];
    check(rt_wait(refs, n, n, RT_FOREVER, &ready), "rt_wait");
    for (size_t k = 0; k < n; k++)
        check(rt_get(refs[k], NULL, NULL, RT_FOREVER), "a task");
    double took = tb_now() - start;
    free(refs);
    return took;
}

int main(int argc, char **argv)
{
    long steps, width;
    if (tb_main(argc, argv, &steps, &width))
        return 0;
    double per_iter = tb_iteration_seconds();
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    check(rt_init_config(&c), "rt_init");
    run(TB_TRIVIAL, width, 100, 1); /* workers started */
    tb_sweep("rtask", run, 2, width, steps, 1L << 18, per_iter);
    check(rt_shutdown(), "rt_shutdown");
    return 0;
}

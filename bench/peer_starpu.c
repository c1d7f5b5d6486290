/* peer_starpu.c - StarPU tasks doing rtask's no-op work on 2 CPU workers:
 * all submitted then waited for, and one synchronous task at a time.
 * StarPU's workers are threads of the process; rtask's are processes. */
#include "peer.h"

#include <starpu.h>

static void noop(void *buffers[], void *arg)
{
    (void)buffers;
    (void)arg;
}

static struct starpu_codelet noop_codelet = {
    .cpu_funcs = {noop},
    .nbuffers = 0,
    .name = "noop",
};

static double pipelined(size_t n)
{
    double start = peer_now();
    for (size_t i = 0; i < n; i++)
        if (starpu_task_insert(&noop_codelet, 0) != 0)
            exit(1);
    starpu_task_wait_for_all();
    return peer_now() - start;
}

static double one_at_a_time(size_t n)
{
    double start = peer_now();
    for (size_t i = 0; i < n; i++) {
        struct starpu_task *t = starpu_task_create();
        t->cl = &noop_codelet;
        t->synchronous = 1;
        if (starpu_task_submit(t) != 0)
            exit(1);
    }
    return peer_now() - start;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 20000;
    setenv("STARPU_NCPU", "2", 1);
    setenv("STARPU_NCUDA", "0", 1);
    setenv("STARPU_NOPENCL", "0", 1);
    setenv("STARPU_SILENT", "1", 1);
    if (starpu_init(NULL) != 0)
        return 1;
    pipelined(1000);
    peer_report("StarPU submit all", 1, pipelined, n * 10);
    peer_report("StarPU synchronous task", 0, one_at_a_time, n);
    starpu_shutdown();
    return 0;
}

/* peer_openmp.c - OpenMP tasks doing rtask's no-op work, with 2 threads:
 * all submitted then waited for, and one at a time.  Threads of one
 * process share everything; rtask's workers are processes. */
#include "peer.h"

#include <omp.h>

static volatile unsigned long ran;

static void noop(void)
{
    ran++; /* a side effect, so that the task is not optimised away */
}

/* n tasks from one thread of a team of two, each waited for (OpenMP may
 * then run it on the waiting thread) or all at the end. */
static double tasks(size_t n, int wait_each)
{
    double start = peer_now();
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        for (size_t i = 0; i < n; i++) {
#pragma omp task
            noop();
            if (wait_each) {
#pragma omp taskwait
            }
        }
#pragma omp taskwait
    }
    return peer_now() - start;
}

static double pipelined(size_t n)
{
    return tasks(n, 0);
}

static double one_at_a_time(size_t n)
{
    return tasks(n, 1);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 20000;
    pipelined(1000); /* the thread team started */
    peer_report("OpenMP tasks submit all", 1, pipelined, n * 10);
    peer_report("OpenMP task + taskwait", 0, one_at_a_time, n);
    return 0;
}

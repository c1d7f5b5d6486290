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

/* A chain: each task adds one to the value the one before wrote
 * (depend(inout) on one variable orders them). */
static double chain(size_t n)
{
    unsigned long value = 0;
    double start = peer_now();
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        for (size_t i = 0; i < n; i++) {
#pragma omp task depend(inout : value) shared(value)
            value++;
        }
#pragma omp taskwait
    }
    if (value != n)
        exit(1);
    return peer_now() - start;
}

/* A tree reduction of n tasks in all, ten inputs per reducer: leaves
 * write their slot; each reducer reads ten slots (depend(in)) and writes
 * one (depend(out)). */
static double tree(size_t n)
{
    size_t leaves = n - n / 10;
    unsigned long *v = malloc((n + n / 8 + 16) * sizeof *v); /* leaves and reducers */
    double start = peer_now();
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        for (size_t i = 0; i < leaves; i++) {
#pragma omp task depend(out : v[i]) firstprivate(i)
            v[i] = i;
        }
        size_t from = 0, count = leaves, at = leaves;
        while (count > 1) {
            size_t next = at;
            for (size_t i = 0; i < count; i += 10, at++) {
                size_t k = count - i < 10 ? count - i : 10, first = from + i, out = at;
#pragma omp task depend(in : v[first : k]) depend(out : v[out]) firstprivate(first, k, out)
                {
                    unsigned long sum = 0;
                    for (size_t j = 0; j < k; j++)
                        sum += v[first + j];
                    v[out] = sum;
                }
            }
            from = next;
            count = at - next;
        }
#pragma omp taskwait
    }
    double t = peer_now() - start;
    free(v);
    return t;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 20000;
    pipelined(1000); /* the thread team started */
    peer_report("OpenMP tasks submit all", 1, pipelined, n * 10);
    peer_report("OpenMP task + taskwait", 0, one_at_a_time, n);
    peer_report("OpenMP chain (depend)", 0, chain, n / 2);
    peer_report("OpenMP tree (depend)", 1, tree, n * 50);
    return 0;
}

/*
 * tb.h - Task Bench (Slaughter et al., SC 2020) as rtask's benchmark runs
 * it: the task graphs' shapes and the compute-bound kernel, written from
 * the paper's definitions, and the sweep that finds METG(50 %).
 *
 * A graph has `steps` steps of `width` points (fewer in a tree's first
 * steps); the task at point i of step t takes the outputs of the points
 * of step t - 1 that tb_deps() names, runs the kernel for `iters`
 * iterations and gives an output.  Each system (rtask, OpenMP, StarPU)
 * runs graphs its own way (tb_runner) and tb_sweep() does the rest.
 */
#ifndef TB_H
#define TB_H

#include <stddef.h>

typedef enum tb_shape {
    TB_TRIVIAL,     /* no dependence */
    TB_NO_COMM,     /* each point on itself */
    TB_STENCIL_1D,  /* i - 1, i, i + 1 */
    TB_FFT,         /* i - 2^k, i, i + 2^k: a butterfly, k cycling */
    TB_TREE,        /* a binary tree that widens: i / 2 */
    TB_NEAREST,     /* the RADIX nearest points */
    TB_SPREAD,      /* RADIX points spread over the width */
    TB_ALL_TO_ALL,  /* every point */
    TB_SHAPES
} tb_shape;

#define TB_RADIX 3
#define TB_WIDTH_MAX 64
#define TB_FLOPS_PER_ITER 16.0 /* tb_kernel()'s */

const char *tb_name(tb_shape s);
/* The points of step t. */
long tb_width(tb_shape s, long width, long t);
/* The points of step t - 1 that point i of step t takes, into deps (room
 * for TB_WIDTH_MAX), in increasing order, each once; how many. */
int tb_deps(tb_shape s, long width, long t, long i, long *deps);
/* How many tasks a graph has. */
long tb_tasks(tb_shape s, long width, long steps);
/* The compute-bound kernel: iters iterations of TB_FLOPS_PER_ITER
 * floating-point operations on registers; its result depends on seed,
 * so that nothing can be skipped. */
double tb_kernel(long iters, double seed);

/* Run one graph and return the seconds it took, from the first task
 * submitted to the last one done. */
typedef double (*tb_runner)(tb_shape s, long width, long steps, long iters);

/* For each shape, run graphs of width x steps on `cores` cores with the
 * kernel's iterations stepping down by the square root of 2 from `most`,
 * and print for each run its efficiency (the kernel's FLOP rate against
 * cores x one core's peak, per_iter says) and task granularity (seconds x
 * cores / tasks), then
 * METG(50 %): the smallest granularity whose efficiency is 50 % or more.
 * Lines "TB|system|shape|iters|efficiency|granularity_us" and
 * "METG|system|shape|us" (-1: never 50 %). */
void tb_sweep(const char *system, tb_runner run, int cores, long width, long steps,
              long most, double per_iter);
/* Seconds per kernel iteration on one core, at its best: measured before
 * the system starts its threads, which could take the core meanwhile. */
double tb_iteration_seconds(void);

double tb_now(void);

#endif

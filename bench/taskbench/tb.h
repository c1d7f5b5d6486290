/*
 * tb.h - Task Bench (Slaughter et al., SC 2020) as rtask's benchmark runs
 * it: the task graphs' shapes and the compute-bound kernel, written from
 * the paper's definitions, and the sweep that finds METG(50 %).
 *
 * A graph has `steps` steps of `width` points (fewer in a tree's first
 * steps); the task at point i of step t takes the outputs of the points
 * of step t - 1 that tb_deps() names, checks that they are those
 * (tb_check(), as Task Bench validates every input), runs the kernel for
 * `iters` iterations and gives an output that says where it was made.
 * Each system (rtask, OpenMP, StarPU) runs graphs its own way
 * (tb_runner) and tb_sweep() does the rest.
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
#define TB_REPS 3              /* runs of each point: their median counts */

/* A task's output: where it was made, and the kernel's result. */
typedef struct tb_out {
    long step, point;
    double value;
} tb_out;

/* What a task is: its graph and place, and the kernel's iterations. */
typedef struct tb_task {
    int shape;
    long width, step, point, iters;
} tb_task;

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
/* Task t, given its n inputs in order: checks that input j is the output
 * of the j-th point tb_deps() names at step t - 1 (and that n is right),
 * then runs the kernel on them.  0 and *out, or -1 with a line on stderr
 * when an input is wrong: the run must then fail. */
int tb_run_task(const tb_task *t, const tb_out *const *in, int n, tb_out *out);

/* Run one graph and return the seconds it took, from the first task
 * submitted until every task has ended. */
typedef double (*tb_runner)(tb_shape s, long width, long steps, long iters);

/* For each shape, run graphs of width x steps on `cores` cores with the
 * kernel's iterations stepping down by the square root of 2 from `most`,
 * TB_REPS times each, and print for each point the median run's
 * efficiency (the kernel's FLOP rate against cores x one core's peak,
 * per_iter says), the spread of the runs' efficiencies and the task
 * granularity (seconds x cores / tasks), then METG(50 %): the
 * granularity at which efficiency crosses 50 %, interpolated between the
 * two points around it (as Task Bench's scripts do).  A point of long
 * tasks runs fewer steps (about 0.3 s of work, at least 20 steps).
 * Lines "TB|system|shape|width|iters|efficiency|granularity_us|lowest|
 * highest|task_us" (task_us: the kernel's time at peak) and
 * "METG|system|shape|width|us" (-1: never 50 %). */
void tb_sweep(const char *system, tb_runner run, int cores, long width, long steps,
              long most, double per_iter);
/* Seconds per kernel iteration on one core at its best: every system's
 * peak, one number.  From TB_SECONDS_PER_ITER when the run measured it
 * once for all (tb_main()'s "peak"); else measured here, before the
 * system starts its threads. */
double tb_iteration_seconds(void);
/* A program's arguments: "peak" (print tb_iteration_seconds() measured
 * the best of several times, and return 1: exit), or [steps [width]]
 * (defaults 1000 and 4). */
int tb_main(int argc, char **argv, long *steps, long *width);

double tb_now(void);

#endif

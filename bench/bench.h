/* bench.h - what the benchmark's files share. */
#ifndef RT_BENCH_H
#define RT_BENCH_H

#include <rtask.h>

#include <stddef.h>

#define REPS 5

/* Tasks and an actor class; extern so that dladdr() names them. */
int noop(const void *arg, size_t len, rt_result *r);
int nap(const void *arg, size_t len, rt_result *r);
int actor_init(const void *arg, size_t len, void **state);
int actor_noop(void *state, const void *arg, size_t len, rt_result *r);

double now(void);
double median(double *v, int n);
/* The value at fraction q (0.99) of v, which is sorted in place. */
double quantile(double *v, size_t n, double q);
void check(int rc, const char *what);
size_t scaled(size_t n);
long rss_kib(void);
void row(const char *what, double value, const char *unit, const char *note);
void verdict(const char *what, double ratio, double limit, int lower_is_better);

/* scale.c */
void bench_many_actors(void);
void bench_many_shapes(void);
void bench_beside_a_long_task(void);

#endif

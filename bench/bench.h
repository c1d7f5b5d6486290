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

/* measure.c */
double now(void);
/* Look for fd to be readable for up to 50 us, yielding the CPU, as
 * rtask's threads do before they sleep (lib/base/linger.h). */
void linger_for(int fd);
double median(double *v, int n);
/* The value at fraction q (0.99) of v, which is sorted in place. */
double quantile(double *v, size_t n, double q);
void check(int rc, const char *what);
size_t scaled(size_t n);
long rss_kib(void);
void row(const char *what, double value, const char *unit, const char *note);
void verdict(const char *what, double ratio, double limit, int lower_is_better);
int fill(const void *arg, size_t len, rt_result *r);
/* One submission: a no-op task with options, or a no-op actor call. */
typedef int (*submit_fn)(const void *with, rt_ref *ref);
int submit_task(const void *opts, rt_ref *ref);
/* A task: arg (a uint64_t) synchronous no-op calls with default options,
 * which a wait with no time limit may run itself; their time in seconds. */
int nested_calls(const void *arg, size_t len, rt_result *r);
/* Submit n, then collect n (the pipelined figure); submit and collect one
 * at a time (the synchronous figure).  Seconds. */
double submit_all_get_all(size_t n, submit_fn submit, const void *with);
double one_at_a_time(size_t n, submit_fn submit, const void *with);
/* A result of size bytes from fill(), with opts: seconds from submission
 * to rt_get()'s return, and of them the task's filling. */
void big_result(size_t size, const rt_opts *opts, double *total, double *filling);
void shm_result_raw(size_t size, double *fill, double *handoff);

/* scale.c */
void bench_many_actors(void);
void bench_many_shapes(void);
void bench_beside_a_long_task(void);

/* deaths.c */
void bench_deaths(void);

/* graph.c: the C peers' figures on the same chain and tree (0: none). */
typedef struct graph_peers {
    double omp_chain_us, omp_tree_rate, starpu_chain_us, starpu_tree_rate;
} graph_peers;
void bench_objects(double rt_rate, double rt_sync, const graph_peers *peers);

/* nested.c: section 13, beside sections 1 and 2 and the pipe's round trip. */
void bench_nested(double rt_rate, double rt_sync, double raw_rt, double raw_poll);

/* health.c: section 14. */
void bench_health(void);

/* spill.c: section 15. */
void bench_spill(void);

/* keep.c: section 16. */
void bench_keep(void);

#endif

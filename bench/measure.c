/*
 * measure.c - what every benchmark program shares: clocks, medians, the
 * report's rows and verdicts, and the tasks and submission loops measured.
 */
#include "bench.h"

#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}


void linger_for(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (double start = now(); poll(&p, 1, 0) == 0 && (now() - start) * 1e9 < 50000;)
        sched_yield();
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}


double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}


double quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}


void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "bench: %s: %s (%s)\n", what, rt_strerror(rc), rt_last_error());
        exit(1);
    }
}


int noop(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    (void)r;
    return 0;
}


/* Fill a result of the asked size and put the fill time in its first
 * double, so that the hand-off can be told apart from the filling. */
int fill(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    size_t size = *(const size_t *)arg;
    double start = now();
    char *p = rt_result_alloc(r, size);
    if (!p)
        return 1;
    memset(p, 1, size);
    double took = now() - start;
    memcpy(p, &took, sizeof took);
    return 0;
}


/* arg: how many synchronous no-op calls to make; their time in seconds. */
int nested_calls(const void *arg, size_t len, rt_result *r)
{
    uint64_t n;
    if (len != sizeof n)
        return 1;
    memcpy(&n, arg, sizeof n);
    double t0 = now();
    for (uint64_t i = 0; i < n; i++) {
        rt_ref ref;
        if (rt_remote(noop, NULL, NULL, 0, &ref) < 0 || rt_get(ref, NULL, NULL, RT_FOREVER) < 0)
            return 2;
    }
    double took = now() - t0;
    return rt_result_set(r, &took, sizeof took);
}

int submit_task(const void *opts, rt_ref *ref)
{
    return rt_remote(noop, opts, NULL, 0, ref);
}


/* Submit n, then collect n: the pipelined figure. */
double submit_all_get_all(size_t n, submit_fn submit, const void *with)
{
    rt_ref *refs = malloc(n * sizeof *refs);
    double start = now();
    for (size_t i = 0; i < n; i++)
        check(submit(with, &refs[i]), "submit");
    for (size_t i = 0; i < n; i++)
        check(rt_get(refs[i], NULL, NULL, RT_FOREVER), "rt_get");
    double took = now() - start;
    free(refs);
    return took;
}


/* Submit and collect one at a time: the synchronous figure. */
double one_at_a_time(size_t n, submit_fn submit, const void *with)
{
    double start = now();
    for (size_t i = 0; i < n; i++) {
        rt_ref ref;
        check(submit(with, &ref), "submit");
        check(rt_get(ref, NULL, NULL, RT_FOREVER), "rt_get");
    }
    return now() - start;
}


/* Total time and the part the task spent filling, for one big result. */
void big_result(size_t size, const rt_opts *opts, double *total, double *filling)
{
    double start = now();
    rt_ref ref;
    check(rt_remote(fill, opts, &size, sizeof size, &ref), "rt_remote");
    void *data;
    size_t len;
    check(rt_get(ref, &data, &len, RT_FOREVER), "rt_get");
    *total = now() - start;
    memcpy(filling, data, sizeof *filling);
    rt_free(data);
}


/* The raw limit of a large result in rtask's state: memory whose pages
 * exist (a memfd used before) but that the writer may not keep mapped
 * (a mapping it could make writable again would let it change what others
 * read).  *fill: map it writable (populated) and fill it; *handoff: the
 * writer unmaps it, a reader maps it to read (populated). */
void shm_result_raw(size_t size, double *fill, double *handoff)
{
    static int fd = -1;
    static size_t had;
    if (fd < 0 || had != size) {
        if (fd >= 0)
            close(fd);
        fd = memfd_create("bench", MFD_CLOEXEC);
        had = size;
        if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
            perror("bench: memfd");
            exit(1);
        }
    }
    double start = now();
    char *w = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (w == MAP_FAILED) {
        perror("bench: mmap");
        exit(1);
    }
    memset(w, 1, size);
    double filled = now();
    munmap(w, size);
    const char *r = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    double read = now();
    if (r == MAP_FAILED || r[size - 1] != 1)
        exit(1);
    munmap((void *)r, size);
    *fill = filled - start;
    *handoff = read - filled;
}

void row(const char *what, double value, const char *unit, const char *note)
{
    printf("  %-44s %12.4g %-8s %s\n", what, value, unit, note);
}


void verdict(const char *what, double ratio, double limit, int lower_is_better)
{
    int ok = lower_is_better ? ratio <= limit : ratio >= limit;
    printf("  %-44s %12.3g %-8s target %s %g: %s\n", what, ratio, "x",
           lower_is_better ? "<=" : ">=", limit, ok ? "met" : "MISSED");
}


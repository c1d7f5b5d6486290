/* quicksort.c - a recursive quicksort of 10 million ints as tasks.
 *
 *   quicksort [N]        (default: 10000000)
 *
 * A task takes an array (an object: mapped, not copied), partitions it,
 * puts each half as an object of its own (rt_put() from inside a task),
 * submits a task for each and waits for both: each task is one level of
 * the recursion, every task asks for one CPU, and the machine may have
 * two.  It works because a task waiting in rt_get() lends its CPU to the
 * tasks it waits for.  Small arrays are sorted in place with qsort().
 */
#include "example.h"

#include <stdint.h>
#include <string.h>

#define CUTOFF 500000 /* ints below which a task sorts by itself */

int sort_task(const rt_value *args, size_t nargs, rt_result *result);

static int by_value(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The sorted array of the object ref, into dst. */
static int read_sorted(rt_ref ref, int *dst, size_t n)
{
    rt_view v;
    int rc = rt_get_view(ref, &v, RT_FOREVER);
    if (rc < 0)
        return rc;
    memcpy(dst, v.data, n * sizeof *dst);
    (void)rt_view_release(&v);
    return 0;
}

int sort_task(const rt_value *args, size_t nargs, rt_result *result)
{
    (void)nargs;
    size_t n = args[0].len / sizeof(int);
    int *out = rt_result_alloc(result, n * sizeof(int));
    if (!out)
        return 1;
    memcpy(out, args[0].data, n * sizeof(int));
    if (n < CUTOFF) {
        qsort(out, n, sizeof *out, by_value);
        return 0;
    }
    /* Partition around the median of three: below, equal, above. */
    int a = out[0], b = out[n / 2], c = out[n - 1];
    int pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    size_t lo = 0, eq = 0, hi = n;
    while (eq < hi) {
        if (out[eq] < pivot) {
            int t = out[lo];
            out[lo++] = out[eq];
            out[eq++] = t;
        } else if (out[eq] > pivot) {
            int t = out[--hi];
            out[hi] = out[eq];
            out[eq] = t;
        } else {
            eq++;
        }
    }
    rt_ref halves[2], sorted[2];
    size_t start[2] = {0, hi}, count[2] = {lo, n - hi};
    for (int i = 0; i < 2; i++) {
        check(rt_put(out + start[i], count[i] * sizeof(int), &halves[i]), "rt_put");
        rt_arg arg = RT_ARG_REF(halves[i]);
        check(rt_remote_args(sort_task, NULL, &arg, 1, &sorted[i]), "rt_remote_args");
        check(rt_release(halves[i]), "rt_release"); /* the task holds it */
    }
    for (int i = 0; i < 2; i++)
        check(read_sorted(sorted[i], out + start[i], count[i]), "the sorted half");
    for (int i = 0; i < 2; i++)
        check(rt_release(sorted[i]), "rt_release");
    return 0;
}

int main(int argc, char **argv)
{
    /* rt_init() first, before the data is made: the fork server is a
     * copy of this process as it is then (rt_init(3)). */
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_gpus = 0;
    check(rt_init_config(&c), "rt_init");
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    int *data = malloc(n * sizeof *data);
    if (!data)
        return 1;
    uint64_t x = 88172645463325252ull; /* xorshift: the same data every run */
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        data[i] = (int)(x % 1000000000);
    }
    rt_ref array, sorted;
    check(rt_put(data, n * sizeof *data, &array), "rt_put");
    rt_arg arg = RT_ARG_REF(array);
    check(rt_remote_args(sort_task, NULL, &arg, 1, &sorted), "rt_remote_args");
    check(rt_release(array), "rt_release");
    int *out;
    size_t len;
    check(rt_get(sorted, (void **)&out, &len, RT_FOREVER), "rt_get");
    size_t bad = 0;
    for (size_t i = 1; i < n; i++)
        bad += out[i - 1] > out[i];
    printf("sorted %zu ints: %s, first %d, last %d\n", len / sizeof *out,
           bad ? "NOT IN ORDER" : "in order", out[0], out[n - 1]);
    rt_free(out);
    free(data);
    check(rt_shutdown(), "rt_shutdown");
    return bad != 0;
}

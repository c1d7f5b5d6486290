/*
 * graph.c - objects and the task graph (section 12): a chain of dependent
 * tasks, a tree reduction, one large object read by 64 tasks, 64 large
 * results, and a large result's fill; each beside what it is measured
 * against in the same run.
 */
#include "bench.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAN_IN 10
#define LARGE_SIZE ((size_t)16 << 20)
#define LARGE_COUNT 64

/* ---- tasks --------------------------------------------------------------------------- */

int add_one(const rt_value *args, size_t n, rt_result *r);
int leaf(const void *arg, size_t len, rt_result *r);
int gate(const void *arg, size_t len, rt_result *r);
int sum_args(const rt_value *args, size_t n, rt_result *r);
int read_all(const rt_value *args, size_t n, rt_result *r);
int make_large(const void *arg, size_t len, rt_result *r);

int add_one(const rt_value *args, size_t n, rt_result *r)
{
    (void)n;
    uint64_t v;
    memcpy(&v, args[0].data, sizeof v);
    v++;
    return rt_result_set(r, &v, sizeof v);
}

int leaf(const void *arg, size_t len, rt_result *r)
{
    return rt_result_set(r, arg, len);
}

/* Hold a CPU until the application says so (the byte at arg, shared). */
static volatile int *gate_open;

int gate(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    (void)r;
    while (!*gate_open)
        usleep(1000);
    return 0;
}

int sum_args(const rt_value *args, size_t n, rt_result *r)
{
    uint64_t sum = 0, v;
    for (size_t i = 0; i < n; i++) {
        memcpy(&v, args[i].data, sizeof v);
        sum += v;
    }
    return rt_result_set(r, &sum, sizeof sum);
}

/* The sum of every 64-bit word: each byte is read once. */
static uint64_t sum_words(const void *data, size_t len)
{
    const uint64_t *w = data;
    uint64_t sum = 0;
    for (size_t i = 0; i < len / 8; i++)
        sum += w[i];
    return sum;
}

int read_all(const rt_value *args, size_t n, rt_result *r)
{
    (void)n;
    uint64_t sum = sum_words(args[0].data, args[0].len);
    return rt_result_set(r, &sum, sizeof sum);
}

/* LARGE_SIZE bytes of the pattern seed + word index, written in place. */
static void write_pattern(uint64_t *w, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len / 8; i++)
        w[i] = seed + i;
}

int make_large(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    uint64_t seed = *(const uint64_t *)arg;
    uint64_t *w = rt_result_alloc(r, LARGE_SIZE);
    if (!w)
        return 1;
    write_pattern(w, LARGE_SIZE, seed);
    return 0;
}

/* ---- the figures ----------------------------------------------------------------------- */

static double chain(size_t steps)
{
    uint64_t zero = 0;
    rt_ref prev;
    double start = now();
    check(rt_put(&zero, sizeof zero, &prev), "rt_put");
    for (size_t i = 0; i < steps; i++) {
        rt_ref next;
        check(rt_remote_args(add_one, NULL, &RT_ARG_REF(prev), 1, &next), "rt_remote_args");
        check(rt_release(prev), "rt_release");
        prev = next;
    }
    uint64_t *v;
    check(rt_get(prev, (void **)&v, NULL, RT_FOREVER), "rt_get");
    double took = now() - start;
    if (*v != steps) {
        fprintf(stderr, "bench: the chain gave %llu\n", (unsigned long long)*v);
        exit(1);
    }
    rt_free(v);
    return took / (double)steps;
}

/* Bytes the application's heap has in use. */
static double heap_in_use(void)
{
    return (double)mallinfo2().uordblks;
}

/* A tree reduction of about n tasks: leaves, then sums of FAN_IN; its
 * rate.  With gated, two gate tasks hold both CPUs until the whole tree
 * is submitted: *bytes_per_task is then the application's memory per
 * task with all of them held at once (and the rate means nothing). */
static double tree(size_t n, int gated, double *bytes_per_task)
{
    size_t leaves = n - n / FAN_IN, tasks = leaves;
    rt_ref *level = malloc(leaves * sizeof *level), gates[2];
    double heap_before = heap_in_use();
    double start = now();
    *gate_open = !gated;
    for (int i = 0; gated && i < 2; i++)
        check(rt_remote(gate, NULL, NULL, 0, &gates[i]), "rt_remote");
    for (size_t i = 0; i < leaves; i++)
        check(rt_remote(leaf, NULL, &i, sizeof i, &level[i]), "rt_remote");
    for (size_t count = leaves; count > 1;) {
        size_t m = 0;
        for (size_t i = 0; i < count; i += FAN_IN, tasks++) {
            size_t k = count - i < FAN_IN ? count - i : FAN_IN;
            rt_arg args[FAN_IN];
            for (size_t j = 0; j < k; j++)
                args[j] = RT_ARG_REF(level[i + j]);
            rt_ref parent;
            check(rt_remote_args(sum_args, NULL, args, k, &parent), "rt_remote_args");
            for (size_t j = 0; j < k; j++)
                check(rt_release(level[i + j]), "rt_release");
            level[m++] = parent;
        }
        count = m;
    }
    double heap_after = heap_in_use();
    *gate_open = 1;
    for (int i = 0; gated && i < 2; i++)
        check(rt_release(gates[i]), "rt_release");
    uint64_t *v;
    check(rt_get(level[0], (void **)&v, NULL, RT_FOREVER), "rt_get");
    double took = now() - start;
    if (*v != (uint64_t)leaves * (leaves - 1) / 2) {
        fprintf(stderr, "bench: the tree gave %llu\n", (unsigned long long)*v);
        exit(1);
    }
    rt_free(v);
    free(level);
    *bytes_per_task = (heap_after - heap_before) / (double)tasks;
    return (double)tasks / took;
}

static long shmem_kib(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Shmem: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* One object of size bytes read whole by 64 tasks: seconds, and the
 * shared memory it took beyond its own size (what a copy would add). */
static double fan_out(size_t size, long *extra_kib)
{
    char *data = malloc(size);
    write_pattern((uint64_t *)(void *)data, size, 7);
    long before = shmem_kib(), peak = before;
    rt_ref obj, refs[64];
    check(rt_put(data, size, &obj), "rt_put");
    free(data);
    double start = now(); /* the reads, not the making of the object */
    for (int i = 0; i < 64; i++)
        check(rt_remote_args(read_all, NULL, &RT_ARG_REF(obj), 1, &refs[i]), "rt_remote_args");
    check(rt_release(obj), "rt_release");
    for (int i = 0; i < 64; i++) {
        long s = shmem_kib();
        peak = s > peak ? s : peak;
        uint64_t *v;
        check(rt_get(refs[i], (void **)&v, NULL, RT_FOREVER), "rt_get");
        rt_free(v);
    }
    double took = now() - start;
    *extra_kib = peak - before - (long)(size >> 10);
    return took;
}

typedef struct half_reads {
    const uint64_t *data;
    size_t size;
    uint64_t sum;
} half_reads;

static void *read_32_times(void *arg)
{
    half_reads *h = arg;
    for (int i = 0; i < 32; i++)
        h->sum += sum_words(h->data, h->size);
    return NULL;
}

/* The same reads in one process, of a buffer mapped once, by two
 * threads (32 reads each), as rtask's two workers share them. */
static double fan_out_inline(size_t size)
{
    uint64_t *data = mmap(NULL, size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (data == MAP_FAILED)
        return 0;
    write_pattern(data, size, 7);
    half_reads halves[2] = {{data, size, 0}, {data, size, 0}};
    pthread_t other;
    double start = now();
    int two = pthread_create(&other, NULL, read_32_times, &halves[1]) == 0;
    read_32_times(&halves[0]);
    if (two)
        pthread_join(other, NULL);
    else
        read_32_times(&halves[1]);
    double took = now() - start;
    munmap(data, size);
    return took;
}

/* 64 results of 16 MiB, each checksummed by the caller as it comes. */
static double large_results(void)
{
    rt_ref refs[LARGE_COUNT];
    double start = now();
    for (uint64_t i = 0; i < LARGE_COUNT; i++)
        check(rt_remote(make_large, NULL, &i, sizeof i, &refs[i]), "rt_remote");
    volatile uint64_t sink = 0;
    for (int i = 0; i < LARGE_COUNT; i++) {
        void *data;
        size_t len;
        check(rt_get(refs[i], &data, &len, RT_FOREVER), "rt_get");
        sink += sum_words(data, len);
        rt_free(data);
    }
    return now() - start;
}

/* The same work inline, in the caller: each result filled, checksummed
 * and freed, in malloc()'s buffer, which reuses the last one, warm (the
 * state rtask's results are in: the bench warms its pool of memfds, and
 * each result reuses one), or in fresh memory each time (for
 * information: what neither does). */
static double large_results_inline(int fresh)
{
    volatile uint64_t sink = 0;
    double start = now();
    for (uint64_t i = 0; i < LARGE_COUNT; i++) {
        uint64_t *w = fresh ? mmap(NULL, LARGE_SIZE, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                            : malloc(LARGE_SIZE);
        if (w == MAP_FAILED || !w)
            return 0;
        write_pattern(w, LARGE_SIZE, i);
        sink += sum_words(w, LARGE_SIZE);
        if (fresh)
            munmap(w, LARGE_SIZE);
        else
            free(w);
    }
    return now() - start;
}

/* memset of size bytes already touched: what filling costs at best. */
static double memset_touched(size_t size)
{
    char *p = malloc(size);
    memset(p, 2, size); /* not 0: malloc + memset 0 may become calloc */
    __asm__ volatile("" : : "r"(p) : "memory");
    double start = now();
    memset(p, 1, size);
    __asm__ volatile("" : : "r"(p) : "memory"); /* the bytes are wanted */
    double took = now() - start;
    free(p);
    return took;
}

void bench_objects(double rt_rate, double rt_sync, const graph_peers *peers)
{
    printf("\n12. Objects and the task graph\n");
    gate_open = mmap(NULL, sizeof *gate_open, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0); /* before the workers */
    if (gate_open == MAP_FAILED) {
        perror("bench: mmap");
        exit(1);
    }
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.num_gpus = 0;
    check(rt_init_config(&c), "rt_init");

    size_t steps = scaled(10000);
    chain(1000); /* warm up */
    double ch[REPS];
    for (int i = 0; i < REPS; i++)
        ch[i] = chain(steps) * 1e6;
    double step_us = median(ch, REPS);
    row("rtask, chain of 10 000: per step", step_us, "us", "each takes the one before");
    row("rtask, synchronous rt_remote + rt_get (sec. 2)", rt_sync, "us", "through the caller");
    row("C, OpenMP depend(inout) chain", peers->omp_chain_us, "us/task", "threads");
    row("C, StarPU chain on one data handle", peers->starpu_chain_us, "us/task",
        "threads; 0: not installed");
    verdict("chain step / synchronous call", step_us / rt_sync, 0.5, 1);

    size_t n_tree = scaled(1000000);
    double per_task[3], rates[3], unused;
    for (int i = 0; i < 3; i++) {
        rates[i] = tree(n_tree, 0, &unused);
        tree(n_tree, 1, &per_task[i]);
    }
    double rate = median(rates, 3), bytes = median(per_task, 3);
    row("rtask, tree reduction of 1 000 000 tasks", rate, "tasks/s", "fan-in 10");
    row("  memory with the whole tree held, per task", bytes, "bytes", "heap in use");
    row("rtask, independent no-op tasks (sec. 1)", rt_rate, "tasks/s", "");
    row("C, OpenMP depend tree", peers->omp_tree_rate, "tasks/s", "threads");
    row("C, StarPU tree of data handles", peers->starpu_tree_rate, "tasks/s",
        "threads; 0: not installed");
    verdict("tree rate / independent rate", rate / rt_rate, 0.5, 0);
    verdict("bytes per task / 300", bytes / 300, 1, 1);

    size_t big = scaled(1024) << 20;
    double fo[3], fi[3];
    long extra[3];
    for (int i = 0; i < 3; i++) {
        fo[i] = fan_out(big, &extra[i]);
        fi[i] = fan_out_inline(big);
    }
    double fan = median(fo, 3), fan_inline = median(fi, 3);
    long most = extra[0] > extra[1] ? extra[0] : extra[1];
    most = most > extra[2] ? most : extra[2];
    row("rtask, 1 GiB object read whole by 64 tasks", fan, "s", "2 workers");
    row("  shared memory beyond the object", (double)most / 1024, "MiB", "a copy would be 1024");
    row("raw: 64 reads of a mapped 1 GiB, one process", fan_inline, "s",
        "2 threads, 32 reads each");
    verdict("fan-out / 64 reads in one process", fan / fan_inline, 1.2, 1);

    large_results(); /* warm up: the pool holds 16 MiB memfds */
    double lr[REPS], li[REPS], lw[REPS];
    for (int i = 0; i < REPS; i++) {
        lr[i] = large_results();
        li[i] = large_results_inline(1);
        lw[i] = large_results_inline(0);
    }
    double through = median(lr, REPS), reused = median(lw, REPS);
    row("rtask, 64 results of 16 MiB, caller checksums", through, "s",
        "2 workers fill, pooled memfds reused");
    row("inline, one buffer reused", reused, "s", "one thread fills and sums, warm");
    row("inline, a fresh buffer each (information)", median(li, REPS), "s",
        "page faults that neither pays");
    verdict("rtask / inline into a reused buffer", through / reused, 1.0, 1);

    size_t size = (size_t)256 << 20;
    double tot[REPS], fil[REPS], ms[REPS], raw_fill[REPS], raw_hand[REPS];
    big_result(size, NULL, &tot[0], &fil[0]); /* warm up: a memfd that size in the pool */
    for (int i = 0; i < REPS; i++) {
        big_result(size, NULL, &tot[i], &fil[i]);
        ms[i] = memset_touched(size);
        shm_result_raw(size, &raw_fill[i], &raw_hand[i]);
    }
    double fill_ms = median(fil, REPS) * 1e3, memset_ms = median(ms, REPS) * 1e3;
    row("rtask, a task filling a 256 MiB result", fill_ms, "ms", "rt_result_alloc + memset");
    row("raw: memset of 256 MiB already touched", memset_ms, "ms", "");
    row("raw: map 256 MiB of a used memfd + memset", median(raw_fill, REPS) * 1e3, "ms",
        "information: a worker may not keep it mapped");
    verdict("fill / memset", fill_ms / memset_ms, 2, 1);
    check(rt_shutdown(), "rt_shutdown");
}

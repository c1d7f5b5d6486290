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

/* value += 1; and the sum of the inputs into the last buffer. */
static void add_one(void *buffers[], void *arg)
{
    (void)arg;
    (*(unsigned long *)STARPU_VARIABLE_GET_PTR(buffers[0]))++;
}

static void sum_into_last(void *buffers[], void *arg)
{
    int n = STARPU_TASK_GET_NBUFFERS(starpu_task_get_current());
    (void)arg;
    unsigned long sum = 0;
    for (int i = 0; i < n - 1; i++)
        sum += *(unsigned long *)STARPU_VARIABLE_GET_PTR(buffers[i]);
    *(unsigned long *)STARPU_VARIABLE_GET_PTR(buffers[n - 1]) = sum;
}

static struct starpu_codelet add_codelet = {
    .cpu_funcs = {add_one}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "add"};

/* Leaves (no input) and reducers (up to ten): the output written last. */
static struct starpu_codelet sum_codelet = {
    .cpu_funcs = {sum_into_last}, .nbuffers = STARPU_VARIABLE_NBUFFERS, .name = "sum"};

/* A chain on one data handle: StarPU orders the tasks (implicit
 * dependencies, sequential consistency). */
static double chain(size_t n)
{
    unsigned long value = 0;
    starpu_data_handle_t h;
    starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof value);
    double start = peer_now();
    for (size_t i = 0; i < n; i++)
        if (starpu_task_insert(&add_codelet, STARPU_RW, h, 0) != 0)
            exit(1);
    starpu_task_wait_for_all();
    double t = peer_now() - start;
    starpu_data_unregister(h);
    return value == n ? t : (exit(1), 0);
}

/* A tree reduction of n tasks in all: leaves write their handle (a task
 * each), reducers read ten handles and write one. */
static double tree(size_t n)
{
    size_t leaves = n - n / 10, slots = n + n / 8 + 16;
    unsigned long *v = calloc(slots, sizeof *v);
    starpu_data_handle_t *h = malloc(slots * sizeof *h);
    for (size_t i = 0; i < slots; i++)
        starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&v[i], sizeof *v);
    double start = peer_now();
    for (size_t i = 0; i < leaves; i++)
        if (starpu_task_insert(&sum_codelet, STARPU_W, h[i], 0) != 0)
            exit(1);
    size_t from = 0, count = leaves, at = leaves;
    while (count > 1) {
        size_t next = at;
        for (size_t i = 0; i < count; i += 10, at++) {
            size_t k = count - i < 10 ? count - i : 10;
            struct starpu_data_descr d[11];
            for (size_t j = 0; j < k; j++)
                d[j] = (struct starpu_data_descr){h[from + i + j], STARPU_R};
            d[k] = (struct starpu_data_descr){h[at], STARPU_W};
            if (starpu_task_insert(&sum_codelet, STARPU_DATA_MODE_ARRAY, d, (int)k + 1, 0) != 0)
                exit(1);
        }
        from = next;
        count = at - next;
    }
    starpu_task_wait_for_all();
    double t = peer_now() - start;
    for (size_t i = 0; i < slots; i++)
        starpu_data_unregister(h[i]);
    free(h);
    free(v);
    return t;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 20000;
    peer_starpu_env();
    if (starpu_init(NULL) != 0)
        return 1;
    pipelined(1000);
    peer_report("StarPU submit all", 1, pipelined, n * 10);
    peer_report("StarPU synchronous task", 0, one_at_a_time, n);
    peer_report("StarPU chain (data handle)", 0, chain, n / 2);
    peer_report("StarPU tree (data handles)", 1, tree, n * 5);
    starpu_shutdown();
    return 0;
}

/*
 * decide.c - the cost of one scheduling decision.
 *
 * White box: it drives the scheduler's decision function directly, on a
 * node of 64 CPUs, 8 GPUs, 4 FPGAs and 8 neuron cores with no worker, so
 * that the figure is the decision alone: which class gets the next lease
 * and on which GPU or neuron core instances.  Each lease takes its
 * class's first task; leases are held in a ring and the oldest is given
 * back whenever nothing fits, its task queued again at the end as a new
 * submission, so that every shape keeps competing.
 */
#include "../lib/sched/scheduler.h" /* internal: drives the scheduler directly */

#include <stdlib.h>
#include <time.h>

double decision_ns(size_t pending, size_t decisions);

/* Mixed shapes: CPU only, fractions, whole GPUs, custom, neuron cores. */
static const struct shape {
    double cpu, gpu, fpga, neuron;
} shapes[] = {
    {1, 0, 0, 0},   {1, 0.25, 0, 0}, {1, 0.5, 0, 0}, {0.5, 1, 0, 0},
    {1, 2, 0, 0},   {2, 0, 0, 0},    {1, 0, 1, 0},   {1, 0, 0, 1},
    {1, 0, 0, 2},   {0.25, 0.1, 0, 0}, {4, 4, 0, 0}, {1, 0.3, 1, 0},
};
#define NSHAPES (sizeof shapes / sizeof *shapes)
#define RING 4096

static rt__amount units(double v)
{
    return (rt__amount)(v * RT__UNIT + 0.5);
}

static rt__class *class_of(rt__sched *s, const struct shape *sh)
{
    rt__res req = {.cpu = units(sh->cpu), .gpu = units(sh->gpu)};
    req.custom[rt__names_find(&s->names, "fpga")] = units(sh->fpga);
    req.custom[rt__names_find(&s->names, "neuron_cores")] = units(sh->neuron);
    return rt__sched_class(s, &req, 0);
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double decision_ns(size_t pending, size_t decisions)
{
    rt__item items[RT__CUSTOM_MAX];
    int n;
    rt__names names;
    rt__res total = {.cpu = 64 * RT__UNIT, .gpu = 8 * RT__UNIT};
    rt__items_parse("fpga=4,neuron_cores=8", "bench", items, &n);
    rt__names_define(&names, items, n, &total);
    static rt__sched s;
    rt__sched_init(&s, &names);
    rt__sched_add_node(&s, &(rt__node_spec){.total = total, .ngpus = 8});

    rt__task **tasks = malloc(pending * sizeof *tasks);
    for (size_t i = 0; i < pending; i++) {
        tasks[i] = calloc(1, sizeof **tasks);
        tasks[i]->call.seq = i;
        rt__sched_push(&s, class_of(&s, &shapes[i % NSHAPES]), tasks[i]);
    }

    static struct held {
        rt__class *c;
        rt__grant g;
        rt__task *t;
    } ring[RING];
    size_t head = 0, count = 0;
    uint64_t seq = pending;
    double start = seconds();
    for (size_t d = 0; d < decisions; d++) {
        rt__grant g;
        rt__class *c = rt__sched_decide(&s, &g);
        if (c && count < RING) {
            rt__sched_take(&s, c, &g);
            rt__task *t = rt__sched_pop(&s, c);
            c->inflight++;
            ring[(head + count++) % RING] = (struct held){c, g, t};
        } else if (count) {
            struct held *h = &ring[head];
            rt__sched_give(&s, h->c, &h->g);
            h->c->inflight--;
            h->t->call.seq = seq++;
            rt__sched_push(&s, h->c, h->t);
            head = (head + 1) % RING;
            count--;
        }
    }
    double elapsed = seconds() - start;
    for (; count; count--, head = (head + 1) % RING) {
        rt__sched_give(&s, ring[head].c, &ring[head].g);
        ring[head].c->inflight--;
    }
    rt__tasks orphans = {0};
    rt__sched_free(&s, &orphans);
    for (size_t i = 0; i < pending; i++)
        free(tasks[i]);
    free(tasks);
    return elapsed / (double)decisions * 1e9;
}

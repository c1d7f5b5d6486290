/*
 * test_placement.c - white-box tests of placement: the scheduler's
 * decisions and the GPU / neuron core instances, driven directly on a
 * node with no worker.
 */
#include "tests.h"

#include "../lib/sched/scheduler.h" /* internal: this test drives the scheduler */

#include <stdlib.h>
#include <string.h>

#define CLASSES 24
#define HELD_MAX 4096

/* A lease as the test holds it: its class, its instances, and the task
 * it runs, which goes back to the end of its queue when the lease ends,
 * as a new submission, so that every class keeps asking. */
typedef struct held {
    rt__class *c;
    rt__grant g;
    rt__task *t;
} held;

static rt__task *start_one(rt__sched *s, rt__class *c)
{
    rt__task *t = rt__sched_pop(s, c);
    c->inflight++;
    return t;
}

static void finish_one(rt__sched *s, rt__task *t, uint64_t seq)
{
    t->run.cls->inflight--;
    t->call.seq = seq;
    rt__sched_push(s, t->run.cls, t);
}

static rt__amount pick_of(const rt__amount *choices, size_t n)
{
    return choices[(size_t)rand() % n];
}

/* A random request: CPUs, a GPU fraction or whole GPUs, an FPGA, neuron
 * cores (never with GPUs). */
static rt__res random_request(const rt__sched *s)
{
    static const rt__amount cpu[] = {0, 2500, 5000, 10000, 20000};
    static const rt__amount gpu[] = {0, 0, 1000, 2500, 3000, 5000, 7500, 10000,
                                     20000, 30000};
    static const rt__amount small[] = {0, 0, 0, 10000, 20000};
    rt__res r = {.cpu = pick_of(cpu, 5), .gpu = pick_of(gpu, 10)};
    r.custom[0] = pick_of(small, 5);
    if (r.gpu == 0)
        r.custom[s->node[0]->accel_index] = pick_of(small, 5);
    if (r.cpu == 0 && r.gpu == 0 && r.custom[0] == 0 && r.custom[s->node[0]->accel_index] == 0)
        r.cpu = 10000; /* a request for nothing would always fit */
    return r;
}

/* The checks below run after each of 100 000 steps: they return what is
 * wrong, or NULL, since every ck_assert costs a write to Check's pipe. */

static const char *check_instances(const rt__instances *in, const held *h, int nheld,
                                   int accel)
{
    for (int i = 0; i < in->count; i++) {
        rt__amount used = 0;
        for (int k = 0; k < nheld; k++) {
            const rt__pick *p = accel ? &h[k].g.accel : &h[k].g.gpu;
            if (rt__pick_has(p, i))
                used += p->each;
        }
        if (in->free[i] < 0)
            return "an instance is over-committed";
        if (in->free[i] + used != RT__UNIT)
            return "an instance's free and held amounts do not add up to 1";
    }
    return NULL;
}

/* Nothing is over-committed and every amount is accounted for. */
static const char *check_invariants(const rt__sched *sched, const held *h, int nheld)
{
    const rt__sched_node *s = sched->node[0];
    rt__res used = {0};
    for (int k = 0; k < nheld; k++)
        rt__res_give(&used, &h[k].c->req);
    const rt__res *free = &s->free.res;
    if (free->cpu < 0 || free->gpu < 0)
        return "CPUs or GPUs over-committed";
    if (free->cpu + used.cpu != s->total.cpu || free->gpu + used.gpu != s->total.gpu)
        return "CPU or GPU amounts do not add up";
    for (int i = 0; i < sched->names.count; i++)
        if (free->custom[i] < 0 || free->custom[i] + used.custom[i] != s->total.custom[i])
            return "a custom resource is over-committed or does not add up";
    const char *err = check_instances(&s->free.gpus, h, nheld, 0);
    return err ? err : check_instances(&s->free.accel, h, nheld, 1);
}

/* A fraction went where it leaves the least, ties to the lowest index; a
 * whole request took the lowest wholly free instances. */
static const char *check_pick(const rt__instances *in, rt__amount amount,
                              const rt__pick *p)
{
    if (amount == 0)
        return p->each == 0 ? NULL : "a pick for nothing holds something";
    int chosen = 0, best = -1, skipped_free = 0;
    rt__amount want = amount < RT__UNIT ? 1 : amount / RT__UNIT;
    for (int i = 0; i < in->count; i++) {
        if (in->free[i] >= amount && (best < 0 || in->free[i] < in->free[best]))
            best = i;
        if (rt__pick_has(p, i)) {
            chosen++;
            if (in->free[i] < p->each)
                return "picked an instance without room";
            if (skipped_free)
                return "a whole request skipped a lower free instance";
        } else if (amount >= RT__UNIT && in->free[i] == RT__UNIT && chosen < want) {
            skipped_free = 1;
        }
    }
    if (chosen != want)
        return "picked the wrong number of instances";
    if (amount < RT__UNIT && !rt__pick_has(p, best))
        return "a fraction is not on the best fit";
    return NULL;
}

static rt__task *fake_tasks(rt__sched *s, rt__class **classes, size_t per_class)
{
    rt__task *all = calloc(CLASSES * per_class, sizeof *all);
    ck_assert_ptr_nonnull(all);
    for (size_t i = 0; i < CLASSES * per_class; i++) {
        all[i].call.seq = i;
        rt__sched_push(s, classes[i % CLASSES], &all[i]);
    }
    return all;
}

/* 100 000 random decisions and releases on 4 GPUs, 8 CPUs, 2 FPGAs and
 * 4 neuron cores: after every step, nothing is over-committed, every
 * amount is accounted for, and every pick obeys the packing rules. */
START_TEST(random_requests_never_overcommit)
{
    srand(12345);
    rt__item items[RT__CUSTOM_MAX];
    int n;
    rt__names names;
    rt__res total = {.cpu = 8 * RT__UNIT, .gpu = 4 * RT__UNIT};
    ck_ok(rt__items_parse("fpga=2,neuron_cores=4", "test", items, &n));
    rt__names_define(&names, items, n, &total);
    static rt__sched s;
    ck_assert_int_eq(rt__sched_init(&s, &names), 0);
    ck_assert_int_eq(rt__sched_add_node(&s, &(rt__node_spec){.total = total, .ngpus = 4}), 0);
    const rt__sched_node *node = s.node[0];
    rt__class *classes[CLASSES];
    for (int i = 0; i < CLASSES; i++) {
        rt__res req = random_request(&s);
        classes[i] = rt__sched_class(&s, &req, 0);
    }
    rt__task *tasks = fake_tasks(&s, classes, 100);
    static held h[HELD_MAX];
    int nheld = 0, granted[2] = {0};
    uint64_t next_seq = CLASSES * 100;
    size_t steps = scaled(100000);
    for (size_t step = 0; step < steps; step++) {
        rt__grant g;
        rt__class *c = rand() % 2 ? rt__sched_decide(&s, &g) : NULL;
        const char *err = NULL;
        if (c && nheld < HELD_MAX) {
            err = check_pick(&node->free.gpus, c->req.gpu, &g.gpu);
            if (!err)
                err = check_pick(&node->free.accel, c->req.custom[node->accel_index], &g.accel);
            rt__sched_take(&s, c, &g);
            h[nheld++] = (held){c, g, start_one(&s, c)};
            granted[c == classes[0] ? 0 : 1]++;
        } else if (nheld) {
            int k = rand() % nheld;
            rt__sched_give(&s, h[k].c, &h[k].g);
            finish_one(&s, h[k].t, next_seq++);
            h[k] = h[--nheld];
        }
        if (!err)
            err = check_invariants(&s, h, nheld);
        if (err)
            ck_abort_msg("step %zu: %s", step, err);
    }
    /* Every class had its turn, the first not more than its share. */
    ck_assert_int_gt(granted[0] + granted[1], (int)steps / 10);
    ck_assert_int_gt(granted[0], 0);
    ck_assert_int_lt(granted[0], (granted[0] + granted[1]) / 4);
    for (int k = 0; k < nheld; k++) { /* give back so the classes can go */
        rt__sched_give(&s, h[k].c, &h[k].g);
        h[k].c->inflight--;
    }
    rt__tasks orphans = {0};
    rt__sched_free(&s, &orphans);
    ck_assert_uint_eq(orphans.count, CLASSES * 100 - (size_t)nheld);
    free(tasks);
}
END_TEST

/* The reference's three 0.5-GPU holders on three GPUs: 0, 0, 1; then a
 * whole GPU takes 2, and a second whole one cannot fit. */
START_TEST(fractions_pack_then_wholes_take_free_gpus)
{
    rt__instances in;
    rt__instances_init(&in, 3, NULL);
    rt__pick p;
    int expect[] = {0, 0, 1};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(rt__instances_pick(&in, RT__UNIT / 2, RT__ANY_TYPE, &p), 1);
        ck_assert_int_eq(rt__pick_has(&p, expect[i]), 1);
        rt__instances_take(&in, &p);
    }
    ck_assert_int_eq(rt__instances_pick(&in, RT__UNIT, RT__ANY_TYPE, &p), 1);
    ck_assert_int_eq(rt__pick_has(&p, 2), 1);
    rt__instances_take(&in, &p);
    ck_assert_int_eq(rt__instances_pick(&in, RT__UNIT, RT__ANY_TYPE, &p), 0);
    /* 0.5 is left on GPU 1 only: a quarter goes there, not to GPU 0. */
    ck_assert_int_eq(rt__instances_pick(&in, RT__UNIT / 4, RT__ANY_TYPE, &p), 1);
    ck_assert_int_eq(rt__pick_has(&p, 1), 1);
    char buf[RT__INSTANCE_MAX * RT__ID_LEN];
    ck_assert_int_eq(rt__instances_pick(&in, 0, RT__ANY_TYPE, &p), 1);
    ck_assert_int_eq(rt__pick_format(&p, &in, buf, sizeof buf), 0);
}
END_TEST

/* A node of two types, A100 (type 3) on 0-1 and V100 (type 5) on 2-3:
 * a V100 request gets V100s only, its fractions pack on one V100, and an
 * untyped request takes any GPU. */
START_TEST(typed_instances_take_their_type)
{
    rt__instances in;
    rt__instances_init(&in, 4, NULL);
    in.type[0] = in.type[1] = 3;
    in.type[2] = in.type[3] = 5;
    rt__pick p;
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(rt__instances_pick(&in, RT__UNIT / 2, 5, &p), 1);
        ck_assert_int_eq(rt__pick_has(&p, 2), 1);
        rt__instances_take(&in, &p);
    }
    ck_assert_int_eq(rt__instances_pick(&in, 2 * RT__UNIT, 5, &p), 0); /* one V100 left */
    ck_assert_int_eq(rt__instances_could(&in, 2 * RT__UNIT, 5), 1);
    ck_assert_int_eq(rt__instances_could(&in, 3 * RT__UNIT, 5), 0);
    ck_assert_int_eq(rt__instances_pick(&in, RT__UNIT, 5, &p), 1);
    ck_assert_int_eq(rt__pick_has(&p, 3), 1);
    ck_assert_int_eq(rt__instances_pick(&in, 2 * RT__UNIT, RT__ANY_TYPE, &p), 1);
    ck_assert_int_eq(rt__pick_has(&p, 0) && rt__pick_has(&p, 1), 1);
}
END_TEST

Suite *placement_suite(void)
{
    Suite *s = suite_create("placement");
    TCase *tc = tcase_create("instances");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, random_requests_never_overcommit);
    tcase_add_test(tc, fractions_pack_then_wholes_take_free_gpus);
    tcase_add_test(tc, typed_instances_take_their_type);
    suite_add_tcase(s, tc);
    return s;
}

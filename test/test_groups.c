/*
 * test_groups.c - placement groups: strategies over nodes of different
 * shapes, driven on the scheduler directly (white box), and the public
 * calls on this machine: reservation, waiting, tasks and actors in a
 * group, and removal.
 */
#include "tests.h"

#include "../lib/sched/scheduler.h" /* internal: the strategy tests drive the scheduler */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define U RT__UNIT

/* Three nodes: 0 with 4 CPUs and 2 GPUs, 1 with 8 CPUs and 4 GPUs, 2
 * with 2 CPUs and none; labels zone=a, b, c. */
static void three_nodes(rt__sched *s)
{
    rt__names names = {0};
    static const struct {
        rt__amount cpu;
        int gpus;
        const char *labels;
    } shape[] = {{4 * U, 2, "zone=a"}, {8 * U, 4, "zone=b"}, {2 * U, 0, "zone=c"}};
    ck_assert_int_eq(rt__sched_init(s, &names), 0);
    for (int i = 0; i < 3; i++) {
        rt__node_spec spec = {.total = {.cpu = shape[i].cpu, .gpu = shape[i].gpus * U},
                              .ngpus = shape[i].gpus, .labels = shape[i].labels};
        ck_assert_int_eq(rt__sched_add_node(s, &spec), 0);
    }
}

/* A group of n bundles of cpu CPUs and gpu GPUs each. */
static rt__group *group_of(size_t n, rt__amount cpu, rt__amount gpu, int strategy)
{
    static uint64_t next_id = 1;
    rt__group *g = rt__group_new(n);
    ck_assert_ptr_nonnull(g);
    g->strategy = strategy;
    g->byid.id = next_id++;
    for (size_t k = 0; k < n; k++) {
        g->bundle[k].res.cpu = cpu;
        g->bundle[k].res.gpu = gpu;
        g->bundle[k].gpu_type = RT__ANY_TYPE;
    }
    return g;
}

/* Place g at once: the nodes of its bundles written to where ("0,1,1"),
 * or "-" when it does not fit now. */
static void place_now(rt__sched *s, rt__group *g, char *where, size_t size)
{
    rt__link placed;
    rt__link_init(&placed);
    rt__sched_group_add(s, g);
    rt__sched_place_groups(s, &placed);
    if (g->state != RT__GROUP_PLACED) {
        snprintf(where, size, "-");
        return;
    }
    ck_assert_ptr_eq(placed.next, &g->link);
    rt__list_remove(&g->link);
    size_t used = 0;
    for (size_t k = 0; k < g->nbundles && used < size; k++)
        used += (size_t)snprintf(where + used, size - used, "%s%d", k ? "," : "",
                                 g->bundle[k].node);
}

static const char *placement(rt__sched *s, rt__group *g)
{
    static char where[256];
    ck_assert_int_eq(rt__sched_group_check(s, g), 0);
    place_now(s, g, where, sizeof where);
    return where;
}

static void free_sched(rt__sched *s)
{
    rt__tasks orphans = {0};
    rt__sched_free(s, &orphans);
    ck_assert_uint_eq(orphans.count, 0);
}

/* Each strategy on three nodes of different shapes, and what the
 * reservations leave the nodes. */
START_TEST(strategies_lay_bundles_as_ray_does)
{
    static rt__sched s;
    three_nodes(&s);
    /* STRICT_PACK: the first node that holds both. */
    rt__group *g = group_of(2, 2 * U, U, RT_PG_STRICT_PACK);
    ck_assert_str_eq(placement(&s, g), "0,0");
    ck_assert_int_eq(s.node[0]->free.res.cpu, 0);
    ck_assert_int_eq(s.node[0]->free.res.gpu, 0);
    rt__sched_group_remove(&s, g);
    ck_assert_int_eq(s.node[0]->free.res.cpu, 4 * U);
    ck_assert_int_eq(s.node[0]->free.gpus.free[0] + s.node[0]->free.gpus.free[1], 2 * U);
    /* PACK: one node when one holds them all (node 0 cannot: node 1). */
    g = group_of(3, 2 * U, U, RT_PG_PACK);
    ck_assert_str_eq(placement(&s, g), "1,1,1");
    rt__sched_group_remove(&s, g);
    /* PACK over several: fill the node used first, then the next. */
    g = group_of(6, U, U, RT_PG_PACK);
    ck_assert_str_eq(placement(&s, g), "0,0,1,1,1,1");
    rt__sched_group_remove(&s, g);
    /* SPREAD: a node each, then again from the first that fits. */
    g = group_of(4, U, 0, RT_PG_SPREAD);
    ck_assert_str_eq(placement(&s, g), "0,1,2,0");
    rt__sched_group_remove(&s, g);
    /* STRICT_SPREAD: a node each, or never. */
    g = group_of(2, 0, U, RT_PG_STRICT_SPREAD);
    ck_assert_str_eq(placement(&s, g), "0,1");
    rt__sched_group_remove(&s, g);
    g = group_of(4, U, 0, RT_PG_STRICT_SPREAD);
    ck_assert_int_eq(rt__sched_group_check(&s, g), RT_EINFEASIBLE);
    ck_assert_ptr_nonnull(strstr(rt_last_error(), "each on a node of its own"));
    rt__group_free(g);
    g = group_of(1, 9 * U, 0, RT_PG_PACK); /* no node has 9 CPUs */
    ck_assert_int_eq(rt__sched_group_check(&s, g), RT_EINFEASIBLE);
    rt__group_free(g);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(s.node[i]->free.res.cpu, s.node[i]->total.cpu);
    free_sched(&s);
}
END_TEST

/* A bundle's label selector picks its nodes. */
START_TEST(bundles_go_where_their_labels_match)
{
    static rt__sched s;
    three_nodes(&s);
    rt__group *g = group_of(2, U, 0, RT_PG_SPREAD);
    ck_assert_int_eq(rt__sched_select(&s, "zone=in(b,c)", &g->bundle[0].res.nodes), 0);
    ck_assert_int_eq(rt__sched_select(&s, "zone=!b", &g->bundle[1].res.nodes), 0);
    ck_assert_str_eq(placement(&s, g), "1,0");
    rt__sched_group_remove(&s, g);
    free_sched(&s);
}
END_TEST

/* Past 64 nodes: a selector picks node 99 alone, and a task of its
 * class is granted there; the same selector gives the same set. */
START_TEST(a_label_picks_a_node_past_the_sixty_fourth)
{
    static rt__sched s;
    rt__names names = {0};
    ck_assert_int_eq(rt__sched_init(&s, &names), 0);
    for (int i = 0; i < 130; i++) {
        char labels[32];
        snprintf(labels, sizeof labels, "slot=%d", i);
        rt__node_spec spec = {.total = {.cpu = U}, .labels = labels};
        ck_assert_int_eq(rt__sched_add_node(&s, &spec), 0);
    }
    rt__res req = {.cpu = U};
    const rt__nodeset *again;
    ck_assert_int_eq(rt__sched_select(&s, "slot=99", &req.nodes), 0);
    ck_assert_int_eq(rt__sched_select(&s, "slot=99", &again), 0);
    ck_assert_ptr_eq(again, req.nodes);
    for (int i = 0; i < 130; i++)
        ck_assert_int_eq(rt__res_on_node(&req, i), i == 99);
    ck_assert_int_eq(rt__sched_select(&s, "slot=in(3,129)", &again), 0);
    ck_assert_ptr_ne(again, req.nodes);
    ck_assert_int_eq(rt__res_on_node(&(rt__res){.nodes = again}, 129), 1);
    ck_assert_int_eq(rt__sched_select(&s, "slot=130", &again), RT_EINFEASIBLE);
    rt__class *c = rt__sched_class(&s, &req, 0);
    rt__task t = {.call.seq = 1};
    rt__sched_push(&s, c, &t);
    rt__grant grant;
    ck_assert_ptr_eq(rt__sched_decide(&s, &grant), c);
    ck_assert_int_eq(grant.node, 99);
    ck_assert_ptr_eq(rt__sched_pop(&s, c), &t);
    ck_assert_int_eq(rt__sched_release_class(&s, c), 1);
    free_sched(&s);
}
END_TEST

/* Reserved is reserved: a class outside the group cannot take it, one in
 * the group takes from its bundle alone, and a group that did not fit is
 * placed once enough comes back. */
START_TEST(a_reservation_is_for_its_group_alone)
{
    static rt__sched s;
    three_nodes(&s);
    rt__group *big = group_of(1, 8 * U, 4 * U, RT_PG_PACK);
    ck_assert_str_eq(placement(&s, big), "1");
    rt__res outside = {.gpu = 3 * U};
    ck_assert_int_eq(rt__sched_feasible(&s, &outside), 0); /* node 1 could, empty */
    rt__class *c = rt__sched_class(&s, &outside, 0);
    rt__task t = {.call.seq = 1};
    rt__sched_push(&s, c, &t);
    rt__grant grant;
    ck_assert_ptr_null(rt__sched_decide(&s, &grant)); /* node 1 is the group's */
    ck_assert_ptr_eq(rt__sched_pop(&s, c), &t);
    ck_assert_int_eq(rt__sched_release_class(&s, c), 1);
    rt__res inside = {.gpu = 3 * U, .group = big->byid.id, .bundle = -1};
    c = rt__sched_class(&s, &inside, 0);
    ck_assert_ptr_eq(c->group, big);
    rt__sched_push(&s, c, &t);
    ck_assert_ptr_eq(rt__sched_decide(&s, &grant), c);
    ck_assert_int_eq(grant.node, 1);
    ck_assert_int_eq(grant.bundle, 0);
    rt__sched_take(&s, c, &grant);
    ck_assert_int_eq(big->bundle[0].free.res.gpu, U);
    ck_assert_int_eq(s.node[1]->free.res.gpu, 0);
    /* A second group waits for node 1; it is placed once the first goes
     * and its lease ends. */
    rt__group *next = group_of(1, 0, 4 * U, RT_PG_PACK);
    ck_assert_str_eq(placement(&s, next), "-");
    rt__sched_group_remove(&s, big);
    ck_assert_int_eq(s.node[1]->free.res.gpu, U); /* what the lease does not hold */
    rt__link placed;
    rt__link_init(&placed);
    rt__sched_place_groups(&s, &placed);
    ck_assert_int_eq(next->state, RT__GROUP_UNPLACED);
    ck_assert_ptr_eq(rt__sched_pop(&s, c), &t);
    rt__sched_give(&s, c, &grant);
    ck_assert_int_eq(rt__sched_release_class(&s, c), 1); /* frees big too */
    ck_assert_int_eq(s.node[1]->free.res.gpu, 4 * U);
    rt__sched_place_groups(&s, &placed);
    ck_assert_int_eq(next->state, RT__GROUP_PLACED);
    ck_assert_int_eq(next->bundle[0].node, 1);
    rt__list_remove(&next->link);
    free_sched(&s);
}
END_TEST

/* ---- the public calls ---------------------------------------------------- */

static rt_opts in_group(rt_pg pg, int bundle)
{
    rt_opts o = RT_OPTS_INIT;
    o.placement_group = pg;
    o.bundle_index = bundle;
    return o;
}

/* Two bundles of a CPU take both CPUs of the node: the group's tasks run
 * in them, a task outside waits until the group is removed. */
START_TEST(a_group_reserves_and_gives_back)
{
    start_with(2, 0, 1);
    rt_bundle b[2] = {{.num_cpus = 1}, {.num_cpus = 1}};
    rt_pg pg;
    ck_ok(rt_pg_create(b, 2, RT_PG_PACK, &pg));
    ck_ok(rt_pg_wait(pg, 10000));
    ck_assert(available("CPU") == 0);
    uint64_t x = 21;
    for (int k = -1; k < 2; k++) {
        rt_opts o = in_group(pg, k);
        ck_assert_uint_eq(call_u64(t_double, &o, &x, sizeof x), 42);
    }
    rt_ref outside;
    ck_ok(rt_remote(t_double, NULL, &x, sizeof x, &outside));
    ck_fails(rt_get(outside, NULL, NULL, 300), RT_ETIMEDOUT, "timed out");
    ck_ok(rt_pg_remove(pg));
    ck_assert_uint_eq(get_u64(outside, 10000), 42);
    ck_assert(available("CPU") == 2);
    ck_ok(rt_shutdown());
}
END_TEST

/* Wrong groups and requests are refused at once, with what is wrong. */
START_TEST(bad_groups_and_requests_are_refused)
{
    start_with(2, 1, 1);
    rt_bundle one = {.num_cpus = 1}, empty = {0}, gpus = {.num_gpus = 2},
              frac = {.num_gpus = 1.5}, labels = {.num_cpus = 1, .label_selector = "zone=x"};
    rt_bundle two[2] = {{.num_cpus = 1}, {.num_cpus = 1}};
    rt_bundle four[4] = {{.num_cpus = 1}, {.num_cpus = 1}, {.num_cpus = 1}, {.num_cpus = 1}};
    rt_pg pg;
    ck_fails(rt_pg_create(&one, 0, RT_PG_PACK, &pg), RT_EINVAL, "1 to 256 bundles");
    ck_fails(rt_pg_create(&one, 1, 7, &pg), RT_EINVAL, "strategy 7");
    ck_fails(rt_pg_create(NULL, 1, RT_PG_PACK, &pg), RT_EINVAL, "bundles is NULL");
    ck_fails(rt_pg_create(&empty, 1, RT_PG_PACK, &pg), RT_EINVAL, "bundle 0: it holds nothing");
    ck_fails(rt_pg_create(&frac, 1, RT_PG_PACK, &pg), RT_EINVAL, "whole numbers");
    ck_fails(rt_pg_create(&gpus, 1, RT_PG_PACK, &pg), RT_EINFEASIBLE,
             "bundle 0: a request for 2 GPU can never be met: no node has more than 1");
    ck_fails(rt_pg_create(four, 4, RT_PG_STRICT_PACK, &pg), RT_EINFEASIBLE,
             "the 4 bundles all on one node: a request for 4 CPU can never be met: no node "
             "has more than 2");
    ck_fails(rt_pg_create(&labels, 1, RT_PG_PACK, &pg), RT_EINFEASIBLE, "picks no node");
    ck_fails(rt_pg_create(two, 2, RT_PG_STRICT_SPREAD, &pg), RT_EINFEASIBLE,
             "the 2 bundles each on a node of its own, and the runtime has 1 node");
    ck_ok(rt_pg_create(&one, 1, RT_PG_PACK, &pg));
    rt_opts o = in_group(pg, 1);
    rt_ref ref;
    uint64_t x = 1;
    ck_fails(rt_remote(t_double, &o, &x, sizeof x, &ref), RT_EINVAL, "has 1 bundles");
    o = in_group(pg, 0);
    o.num_cpus = 2;
    ck_fails(rt_remote(t_double, &o, &x, sizeof x, &ref), RT_EINFEASIBLE,
             "no bundle of the placement group");
    o = in_group(pg, RT_DEFAULT);
    o.label_selector = "zone=a";
    ck_fails(rt_remote(t_double, &o, &x, sizeof x, &ref), RT_EINVAL, "label_selector");
    o = in_group((rt_pg){0}, 0);
    ck_fails(rt_remote(t_double, &o, &x, sizeof x, &ref), RT_EINVAL,
             "without a placement_group");
    ck_ok(rt_pg_remove(pg));
    ck_fails(rt_pg_remove(pg), RT_EBADREF, "unknown or removed");
    ck_fails(rt_pg_wait(pg, 0), RT_EBADREF, "unknown or removed");
    o = in_group(pg, 0);
    ck_fails(rt_remote(t_double, &o, &x, sizeof x, &ref), RT_EBADREF, "placement_group");
    ck_ok(rt_shutdown());
    ck_fails(rt_pg_create(&one, 1, RT_PG_PACK, &pg), RT_ESHUTDOWN, "shut down");
}
END_TEST

/* A group that does not fit now waits: rt_pg_wait() times out, then
 * succeeds once a task ends; its task, submitted early, runs then. */
START_TEST(a_group_waits_for_room)
{
    start_with(2, 0, 1);
    uint64_t ms = 600, x = 4;
    rt_ref busy, inside;
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &busy));
    usleep(100 * 1000); /* it runs */
    rt_bundle both = {.num_cpus = 2};
    rt_pg pg;
    ck_ok(rt_pg_create(&both, 1, RT_PG_STRICT_PACK, &pg));
    rt_opts o = in_group(pg, 0);
    ck_ok(rt_remote(t_double, &o, &x, sizeof x, &inside));
    ck_fails(rt_pg_wait(pg, 100), RT_ETIMEDOUT, "not placed");
    ck_ok(rt_pg_wait(pg, 10000));
    ck_assert_uint_eq(get_u64(inside, 10000), 8);
    ck_ok(rt_get(busy, NULL, NULL, 10000));
    ck_ok(rt_pg_remove(pg));
    ck_ok(rt_shutdown());
}
END_TEST

static int count_init(const void *arg, size_t len, void **state)
{
    (void)arg;
    (void)len;
    *state = calloc(1, sizeof(uint64_t));
    return *state ? 0 : 1;
}

static void count_fini(void *state)
{
    free(state);
}

static int count_add(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    uint64_t *n = state;
    ++*n;
    return rt_result_set(r, n, sizeof *n);
}

/* count_add, after 300 ms. */
static int count_slow_add(void *state, const void *arg, size_t len, rt_result *r)
{
    usleep(300 * 1000);
    return count_add(state, arg, len, r);
}

/* Removing a group ends its work: a running task is killed, a queued one
 * fails, its actor dies as rt_actor_kill() kills it (a call sent
 * finishes, with its result; a later one fails); each says why. */
START_TEST(removing_a_group_ends_its_tasks_and_actors)
{
    start_with(2, 0, 1);
    rt_bundle b = {.num_cpus = 1};
    rt_pg pg;
    ck_ok(rt_pg_create(&b, 1, RT_PG_PACK, &pg));
    rt_opts o = in_group(pg, 0);
    uint64_t ms = 30000;
    rt_ref running, queued, call;
    ck_ok(rt_remote(t_sleep_ms, &o, &ms, sizeof ms, &running));
    ck_ok(rt_remote(t_sleep_ms, &o, &ms, sizeof ms, &queued));
    static const rt_actor_class counter = {"counter", count_init, count_fini};
    rt_opts ao = in_group(pg, 0);
    ao.num_cpus = 0;
    rt_actor a;
    ck_ok(rt_actor_create(&counter, &ao, NULL, 0, &a));
    ck_ok(rt_actor_call(a, count_add, NULL, 0, &call));
    ck_assert_uint_eq(get_u64(call, 10000), 1);
    rt_ref slow;
    ck_ok(rt_actor_call(a, count_slow_add, NULL, 0, &slow));
    usleep(200 * 1000); /* the long task runs, and the slow call */
    ck_ok(rt_pg_remove(pg));
    ck_assert_uint_eq(get_u64(slow, 10000), 2);
    ck_fails(rt_get(running, NULL, NULL, 10000), RT_ECANCELLED, "placement group was removed");
    ck_fails(rt_get(queued, NULL, NULL, 10000), RT_ECANCELLED, "placement group was removed");
    int rc = rt_actor_call(a, count_add, NULL, 0, &call);
    if (rc == 0)
        rc = rt_get(call, NULL, NULL, 10000);
    ck_assert_int_eq(rc, RT_EACTORDIED);
    ck_assert_ptr_nonnull(strstr(rt_last_error(), "placement group was removed"));
    ck_assert(available("CPU") == 2);
    ck_ok(rt_shutdown());
}
END_TEST

/* A bundle of one GPU: the group's tasks share that GPU, a task outside
 * gets the other one. */
START_TEST(a_bundle_holds_its_gpu)
{
    start_with(2, 2, 1);
    rt_bundle b = {.num_gpus = 1};
    rt_pg pg;
    ck_ok(rt_pg_create(&b, 1, RT_PG_PACK, &pg));
    ck_ok(rt_pg_wait(pg, 10000));
    rt_opts o = in_group(pg, 0);
    o.num_cpus = 0;
    o.num_gpus = 0.5;
    char inside[64];
    snprintf(inside, sizeof inside, "%s", env_seen(&o, "GPU CUDA_VISIBLE_DEVICES"));
    rt_opts out = RT_OPTS_INIT;
    out.num_gpus = 1;
    out.num_cpus = 0;
    const char *outside = env_seen(&out, "GPU CUDA_VISIBLE_DEVICES");
    ck_assert_msg(strcmp(inside, outside) != 0, "in %s, out %s", inside, outside);
    o.num_gpus = 2;
    rt_ref ref;
    ck_fails(rt_remote(t_env, &o, "GPU", 3, &ref), RT_EINFEASIBLE, "no bundle");
    ck_ok(rt_pg_remove(pg));
    ck_ok(rt_shutdown());
}
END_TEST

/* In a task: submit t_double(5) into the group whose handle is the
 * argument (bundle 0) and return its result. */
int t_into_group(const void *arg, size_t len, rt_result *r)
{
    rt_opts o = RT_OPTS_INIT;
    if (len != sizeof o.placement_group.id)
        return 1;
    memcpy(&o.placement_group.id, arg, len);
    o.bundle_index = 0;
    o.num_cpus = 0.5;
    uint64_t x = 5;
    rt_ref ref;
    void *data;
    size_t n;
    if (rt_remote(t_double, &o, &x, sizeof x, &ref) < 0 || rt_get(ref, &data, &n, 30000) < 0)
        return 3;
    int rc = rt_result_set(r, data, n);
    rt_free(data);
    return rc;
}

/* A task submits into a group: its options cross with the call. */
START_TEST(a_task_submits_into_a_group)
{
    start_with(2, 0, 1);
    rt_bundle b = {.num_cpus = 1};
    rt_pg pg;
    ck_ok(rt_pg_create(&b, 1, RT_PG_PACK, &pg));
    ck_assert_uint_eq(call_u64(t_into_group, NULL, &pg.id, sizeof pg.id), 10);
    ck_ok(rt_pg_remove(pg));
    ck_ok(rt_shutdown());
}
END_TEST

/* A task makes a group of its own (its wait lends its CPU, which the
 * group needs), runs a task in it, and answers with the result and the
 * group. */
static int t_own_group(const void *arg, size_t len, rt_result *r)
{
    (void)arg, (void)len;
    rt_bundle b = {.num_cpus = 2};
    rt_pg pg;
    rt_opts o = RT_OPTS_INIT;
    uint64_t x = 21, out[2];
    rt_ref ref;
    void *data;
    if (rt_pg_create(&b, 1, RT_PG_PACK, &pg) < 0 || rt_pg_wait(pg, 30000) < 0) {
        fprintf(stderr, "t_own_group: %s\n", rt_last_error());
        return 1;
    }
    o.placement_group = pg;
    o.num_cpus = 0; /* the group's CPUs are lent by this task's wait */
    if (rt_remote(t_double, &o, &x, sizeof x, &ref) < 0 || rt_get(ref, &data, NULL, 30000) < 0)
        return 2;
    memcpy(&out[0], data, sizeof out[0]);
    rt_free(data);
    out[1] = pg.id;
    return rt_result_set(r, out, sizeof out);
}

/* Ray's groups end with their creator: a task's group is removed when the
 * task ends, and what it reserved comes back. */
START_TEST(a_tasks_group_ends_with_it)
{
    start_with(2, 0, 1);
    rt_ref ref;
    uint64_t *out;
    ck_ok(rt_remote(t_own_group, NULL, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&out, NULL, 60000));
    ck_assert_uint_eq(out[0], 42);
    rt_pg pg = {out[1]};
    rt_free(out);
    ck_fails(rt_pg_wait(pg, 0), RT_EBADREF, "");
    rt_bundle b = {.num_cpus = 2}; /* the whole machine again */
    ck_ok(rt_pg_create(&b, 1, RT_PG_PACK, &pg));
    ck_ok(rt_pg_wait(pg, 30000));
    ck_ok(rt_pg_remove(pg));
    ck_ok(rt_shutdown());
}
END_TEST

/* Many groups made and removed: every resource comes back. */
START_TEST(groups_come_and_go)
{
    start_with(2, 0, 1);
    rt_bundle b = {.num_cpus = 0.5};
    for (int i = 0; i < 500; i++) {
        rt_pg pg[3];
        for (int k = 0; k < 3; k++)
            ck_ok(rt_pg_create(&b, 1, RT_PG_PACK, &pg[k]));
        for (int k = 0; k < 3; k++)
            ck_ok(rt_pg_wait(pg[k], 10000));
        for (int k = 0; k < 3; k++)
            ck_ok(rt_pg_remove(pg[k]));
    }
    ck_assert(available("CPU") == 2);
    ck_ok(rt_shutdown());
}
END_TEST

Suite *groups_suite(void)
{
    Suite *s = suite_create("groups");
    TCase *tc = tcase_create("strategies");
    tcase_add_test(tc, strategies_lay_bundles_as_ray_does);
    tcase_add_test(tc, bundles_go_where_their_labels_match);
    tcase_add_test(tc, a_label_picks_a_node_past_the_sixty_fourth);
    tcase_add_test(tc, a_reservation_is_for_its_group_alone);
    suite_add_tcase(s, tc);
    tc = tcase_create("calls");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_group_reserves_and_gives_back);
    tcase_add_test(tc, bad_groups_and_requests_are_refused);
    tcase_add_test(tc, a_group_waits_for_room);
    tcase_add_test(tc, removing_a_group_ends_its_tasks_and_actors);
    tcase_add_test(tc, a_bundle_holds_its_gpu);
    tcase_add_test(tc, a_task_submits_into_a_group);
    tcase_add_test(tc, a_tasks_group_ends_with_it);
    tcase_add_test(tc, groups_come_and_go);
    suite_add_tcase(s, tc);
    return s;
}

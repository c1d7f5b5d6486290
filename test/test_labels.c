/*
 * test_labels.c - nodes' labels and label selectors: the parser and
 * matcher alone, then tasks, actors and nested calls that select this
 * node (the MPI suite selects among ranks).
 */
#include "tests.h"

#include "../lib/sched/labels.h" /* internal: the parser and the matcher */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the parser and the matcher ------------------------------------------------ */

START_TEST(labels_are_parsed_set_and_read)
{
    char labels[RT__LABELS_LEN] = "", value[RT__LABEL_LEN];
    ck_ok(rt__labels_add(labels, "zone=us-west, tier=gpu,zone=eu", "test"));
    ck_assert_str_eq(labels, "tier=gpu,zone=eu"); /* the later of a key wins */
    ck_ok(rt__labels_set(labels, "rack", "r1.b_2"));
    ck_assert_int_eq(rt__labels_get(labels, "zone", value), 0);
    ck_assert_str_eq(value, "eu");
    ck_assert_int_eq(rt__labels_get(labels, "rack", value), 0);
    ck_assert_str_eq(value, "r1.b_2");
    ck_assert_int_eq(rt__labels_get(labels, "zon", value), -1);
    ck_assert_int_eq(rt__labels_add(labels, NULL, "test"), 0);
    ck_assert_int_eq(rt__labels_set(labels, "bad key", "v"), -1);
    ck_assert_int_eq(rt__labels_set(labels, "k", ""), -1);
    ck_assert_str_eq(labels, "tier=gpu,zone=eu,rack=r1.b_2");
}
END_TEST

START_TEST(bad_labels_are_refused_and_nothing_changes)
{
    static const char *const bad[] = {"zone", "=x", "zone=", "zone=a b", "zone=a,",
                                      "zone=a,,b=c", "zone=(a)", "zone=a=b", "k=v;x=y",
                                      "zone=!a"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char labels[RT__LABELS_LEN] = "rank=1";
        ck_fails(rt__labels_add(labels, bad[i], "RTASK_LABELS"), RT_EINVAL, "RTASK_LABELS");
        ck_assert_str_eq(labels, "rank=1");
    }
    char long_value[RT__LABEL_LEN + 8], labels[RT__LABELS_LEN] = "";
    memset(long_value, 'v', sizeof long_value);
    memcpy(long_value, "k=", 2);
    long_value[sizeof long_value - 1] = '\0';
    ck_fails(rt__labels_add(labels, long_value, "labels"), RT_EINVAL, "at most 63");
    /* Too many in all. */
    char many[4096] = "";
    for (int i = 0; i < 200; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%skey%d=value", i ? "," : "",
                 i);
    ck_fails(rt__labels_add(labels, many, "labels"), RT_EINVAL, "too many labels");
    ck_assert_str_eq(labels, "");
}
END_TEST

START_TEST(selectors_match_as_ray_says)
{
    const char *node = "accelerator-type=H100,zone=us-west,rank=1";
    static const struct {
        const char *selector;
        int matches;
    } cases[] = {
        {"", 1},
        {"zone=us-west", 1},
        {"zone=us-east", 0},
        {"zone=!us-east", 1},
        {"zone=!us-west", 0},
        {"missing=!x", 1},          /* no such label: "not x" holds */
        {"missing=x", 0},
        {"accelerator-type=in(H100,A100)", 1},
        {"accelerator-type=in(A100, V100)", 0},
        {"accelerator-type=!in(A100,V100)", 1},
        {"accelerator-type=!in(H100)", 0},
        {"missing=!in(a,b)", 1},
        {"missing=in(a,b)", 0},
        {"zone=us-west, rank=1", 1},  /* every term must hold */
        {"zone=us-west,rank=2", 0},
        {"accelerator-type=in(H100,A100),zone=!us-east,rank=!0", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ck_ok(rt__selector_check(cases[i].selector));
        ck_assert_msg(rt__selector_matches(cases[i].selector, node) == cases[i].matches,
                      "\"%s\" should %smatch", cases[i].selector,
                      cases[i].matches ? "" : "not ");
    }
}
END_TEST

START_TEST(bad_selectors_are_refused)
{
    static const char *const bad[] = {"zone", "zone=", "=a", "zone=in(", "zone=in()",
                                      "zone=in(a,)", "zone=in(a b)", "zone=!",
                                      "zone=a,", "zone=a;b=c", "zone=in(a))", "zone==a",
                                      "zone=!!a"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_fails(rt__selector_check(bad[i]), RT_EINVAL, "is not a selector");
}
END_TEST

/* ---- tasks that select ---------------------------------------------------------- */

static void init_labelled(void)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.num_gpus = 0;
    c.labels = "zone=us-west,tier=cpu";
    ck_ok(rt_init_config(&c));
}

static rt_opts selecting(const char *selector)
{
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = selector;
    return o;
}

START_TEST(tasks_run_where_their_selector_picks)
{
    init_labelled();
    static const char *const runs[] = {"zone=us-west", "zone=!us-east,tier=in(cpu,gpu)",
                                       "rank=0", "hostname=!nowhere", ""};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        rt_opts o = selecting(runs[i]);
        uint64_t v = 21;
        ck_assert_uint_eq(call_u64(t_double, &o, &v, sizeof v), 42);
    }
    rt_opts o = selecting("zone=us-east");
    rt_ref r;
    ck_fails(rt_remote(t_double, &o, NULL, 0, &r), RT_EINFEASIBLE, "picks no node");
    o = selecting("zone=in(us-west");
    ck_fails(rt_remote(t_double, &o, NULL, 0, &r), RT_EINVAL, "is not a selector");
    static const rt_actor_class none = {"none", NULL, NULL};
    rt_actor a;
    o = selecting("tier=gpu");
    ck_fails(rt_actor_create(&none, &o, NULL, 0, &a), RT_EINFEASIBLE, "tier=gpu");
    o = selecting("tier=cpu");
    ck_ok(rt_actor_create(&none, &o, NULL, 0, &a));
    ck_ok(rt_actor_kill(a));
    ck_ok(rt_shutdown());
}
END_TEST

/* Submits t_double with the selector it is given: the rc, and the
 * result when it ran. */
static int submit_selected(const void *arg, size_t len, rt_result *res)
{
    char selector[256];
    snprintf(selector, sizeof selector, "%.*s", (int)len, (const char *)arg);
    rt_opts o = selecting(selector);
    uint64_t v = 4, out[2] = {0, 0};
    rt_ref r;
    int rc = rt_remote(t_double, &o, &v, sizeof v, &r);
    if (rc == 0) {
        void *data;
        rc = rt_get(r, &data, NULL, 30000);
        if (rc == 0) {
            memcpy(&out[1], data, sizeof out[1]);
            rt_free(data);
        }
    }
    out[0] = (uint64_t)(int64_t)rc;
    return rt_result_set(res, out, sizeof out);
}

START_TEST(a_task_submits_with_a_selector)
{
    init_labelled();
    static const struct {
        const char *selector;
        int rc;
    } cases[] = {{"tier=cpu", 0}, {"tier=gpu", RT_EINFEASIBLE}, {"tier=", RT_EINVAL}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rt_ref r;
        void *data;
        ck_ok(rt_remote(submit_selected, NULL, cases[i].selector, strlen(cases[i].selector),
                        &r));
        ck_ok(rt_get(r, &data, NULL, 30000));
        const uint64_t *out = data;
        ck_assert_int_eq((int)(int64_t)out[0], cases[i].rc);
        ck_assert_uint_eq(out[1], cases[i].rc == 0 ? 8 : 0);
        rt_free(data);
    }
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(malformed_labels_fail_rt_init)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 1;
    c.num_workers = 1;
    c.labels = "zone=us west";
    ck_fails(rt_init_config(&c), RT_EINVAL, "rt_init: labels");
    c.labels = NULL;
    setenv("RTASK_LABELS", "zone", 1);
    ck_fails(rt_init_config(&c), RT_EINVAL, "RTASK_LABELS");
    setenv("RTASK_LABELS", "zone=us-east", 1);
    c.labels = "tier=cpu";
    ck_ok(rt_init_config(&c));
    rt_opts o = selecting("zone=us-east,tier=cpu");
    uint64_t v = 1;
    ck_assert_uint_eq(call_u64(t_double, &o, &v, sizeof v), 2);
    ck_ok(rt_shutdown());
    unsetenv("RTASK_LABELS");
}
END_TEST

Suite *labels_suite(void)
{
    Suite *s = suite_create("labels");
    TCase *tc = tcase_create("labels");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, labels_are_parsed_set_and_read);
    tcase_add_test(tc, bad_labels_are_refused_and_nothing_changes);
    tcase_add_test(tc, selectors_match_as_ray_says);
    tcase_add_test(tc, bad_selectors_are_refused);
    tcase_add_test(tc, tasks_run_where_their_selector_picks);
    tcase_add_test(tc, a_task_submits_with_a_selector);
    tcase_add_test(tc, malformed_labels_fail_rt_init);
    suite_add_tcase(s, tc);
    return s;
}

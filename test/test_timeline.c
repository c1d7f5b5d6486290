/*
 * test_timeline.c - rt_timeline(): every task and actor call that ended,
 * as trace-event JSON, with its name, id, GPUs, status and retries;
 * RTASK_TIMELINE written by rt_shutdown(); refused when nothing was
 * recorded; and rtask-timeline(1) draws it.
 */
#include "tests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path)
{
    static char text[65536];
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

START_TEST(timeline_records_what_ended)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.num_gpus = 2;
    c.timeline = 1;
    ck_ok(rt_init_config(&c));
    rt_opts gpu = RT_OPTS_INIT, named = RT_OPTS_INIT;
    gpu.num_gpus = 1;
    named.name = "my \"step\"";
    uint64_t x = 1;
    call_u64(t_double, &gpu, &x, sizeof x);
    call_u64(t_double, &named, &x, sizeof x);
    rt_ref ref;
    ck_ok(rt_remote(t_fail, NULL, NULL, 0, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_ETASK, "returned");
    char path[128], svg[160], cmd[512];
    temp_path(path, sizeof path, "timeline");
    ck_ok(rt_timeline(path));
    const char *text = slurp(path);
    ck_assert_int_eq(count(text, "\"ph\":\"X\""), 3);
    ck_assert_int_eq(count(text, "\"name\":\"t_double\""), 1);
    ck_assert_int_eq(count(text, "\"name\":\"my \\\"step\\\"\""), 1);
    ck_assert_int_eq(count(text, "\"gpus\":\"0\""), 1);
    ck_assert_int_eq(count(text, "\"status\":\"task returned an error\""), 1);
    snprintf(cmd, sizeof cmd, "python3 -m json.tool %s > /dev/null", path);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(svg, sizeof svg, "%s.svg", path);
    snprintf(cmd, sizeof cmd, "build/tools/rtask-timeline %s > %s", path, svg);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(count(slurp(svg), "<rect"), 3 + 3); /* runs, then the legend */
    unlink(svg);
    unlink(path);
    ck_fails(rt_timeline(""), RT_EINVAL, "no path");
    ck_ok(rt_shutdown());
}
END_TEST

/* Without rt_config.timeline or RTASK_TIMELINE there is nothing to write;
 * with RTASK_TIMELINE, rt_shutdown() writes it. */
START_TEST(timeline_off_and_at_shutdown)
{
    start_runtime();
    ck_fails(rt_timeline("/tmp/never"), RT_EINVAL, "nothing was recorded");
    ck_ok(rt_shutdown());
    char path[128];
    temp_path(path, sizeof path, "atexit");
    setenv("RTASK_TIMELINE", path, 1);
    start_runtime();
    uint64_t x = 2;
    ck_assert_uint_eq(call_u64(t_double, NULL, &x, sizeof x), 4);
    ck_ok(rt_shutdown());
    ck_assert_int_eq(count(slurp(path), "\"ph\":\"X\""), 1);
    unlink(path);
}
END_TEST

Suite *timeline_suite(void)
{
    Suite *s = suite_create("timeline");
    TCase *tc = tcase_create("timeline");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, timeline_records_what_ended);
    tcase_add_test(tc, timeline_off_and_at_shutdown);
    suite_add_tcase(s, tc);
    return s;
}

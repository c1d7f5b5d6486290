/*
 * test_timeline.c - rt_timeline(): every task and actor call that ended,
 * as trace-event JSON, with its name, id, GPUs, status and retries;
 * RTASK_TIMELINE written by rt_shutdown(); refused when nothing was
 * recorded; and rtask-timeline(1) draws it.
 */
#include "tests.h"

#include "dispatch/timeline.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

/* The timeline written now to a new file at path (room for 128): its text. */
static const char *write_timeline(char *path, const char *what)
{
    temp_path(path, 128, what);
    ck_ok(rt_timeline(path));
    return slurp(path);
}

/* A runtime that records, with as many workers as CPUs. */
static void start_recording(double cpus, double gpus)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = cpus;
    c.num_workers = (int)cpus;
    c.num_gpus = gpus;
    c.timeline = 1;
    ck_ok(rt_init_config(&c));
}

START_TEST(timeline_records_what_ended)
{
    start_recording(2, 2);
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
    const char *text = write_timeline(path, "timeline");
    ck_assert_int_eq(count(text, "\"ph\":\"X\""), 3);
    ck_assert_int_eq(count(text, "\"name\":\"t_double\""), 1);
    ck_assert_int_eq(count(text, "\"name\":\"my \\\"step\\\"\""), 1);
    ck_assert_int_eq(count(text, "\"gpus\":\"0\""), 1);
    ck_assert_int_eq(count(text, "\"status\":\"task returned an error\""), 1);
    snprintf(cmd, sizeof cmd, "python3 -m json.tool %s > /dev/null", path);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(svg, sizeof svg, "%s.svg", path);
    snprintf(cmd, sizeof cmd, "build/tools/rtask-timeline --view workers %s > %s", path, svg);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(count(slurp(svg), "<title>"), 3); /* a bar per run */
    unlink(svg);
    unlink(path);
    ck_fails(rt_timeline(""), RT_EINVAL, "no path");
    ck_ok(rt_shutdown());
}
END_TEST

/* Fails on its first two runs, then succeeds. */
int tl_fail_twice(const void *arg, size_t len, rt_result *r);
int tl_fail_twice(const void *arg, size_t len, rt_result *r)
{
    (void)arg, (void)len, (void)r;
    rt_context ctx;
    return rt_get_context(&ctx) < 0 ? 100 : ctx.attempt < 2 ? 7 : 0;
}

/* Each run is recorded with its own outcome and attempt: a function that
 * failed twice (retry_exceptions) is two failed runs, then a success. */
START_TEST(timeline_records_each_run_as_it_ended)
{
    start_recording(2, 0);
    rt_opts o = RT_OPTS_INIT;
    o.retry_exceptions = 1;
    o.max_retries = 2;
    rt_ref ref;
    ck_ok(rt_remote(tl_fail_twice, &o, NULL, 0, &ref));
    ck_ok(rt_get(ref, NULL, NULL, 60000));
    char path[128];
    const char *text = write_timeline(path, "retried");
    ck_assert_int_eq(count(text, "\"ph\":\"X\""), 3);
    ck_assert_int_eq(count(text, "\"status\":\"task returned an error\",\"retries\":0"), 1);
    ck_assert_int_eq(count(text, "\"status\":\"task returned an error\",\"retries\":1"), 1);
    ck_assert_int_eq(count(text, "\"status\":\"success\",\"retries\":2"), 1);
    unlink(path);
    ck_ok(rt_shutdown());
}
END_TEST

/* Lines of a file that hold what, counted a line at a time (the file may
 * be larger than slurp() reads). */
static int count_lines(const char *path, const char *what)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, what) != NULL;
    fclose(f);
    return n;
}

/* Records are kept in chunks of a few thousand, names apart: more tasks
 * than one chunk holds are all written, each with its own name. */
START_TEST(timeline_keeps_every_record_and_its_name)
{
    start_recording(2, 0);
    size_t n = scaled(20000);
    rt_ref *refs = malloc(n * sizeof *refs);
    ck_assert_ptr_nonnull(refs);
    rt_opts odd = RT_OPTS_INIT;
    odd.name = "odd one";
    for (size_t i = 0; i < n; i++)
        ck_ok(rt_remote(t_echo, i % 2 ? &odd : NULL, NULL, 0, &refs[i]));
    for (size_t i = 0; i < n; i++)
        ck_ok(rt_get(refs[i], NULL, NULL, 60000));
    free(refs);
    char path[128];
    temp_path(path, sizeof path, "many");
    ck_ok(rt_timeline(path));
    ck_assert_int_eq(count_lines(path, "\"ph\":\"X\""), (int)n);
    ck_assert_int_eq(count_lines(path, "\"name\":\"odd one\""), (int)(n / 2));
    ck_assert_int_eq(count_lines(path, "\"name\":\"t_echo\""), (int)(n - n / 2));
    unlink(path);
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

/* A program that ends without rt_shutdown() still writes RTASK_TIMELINE:
 * rt_shutdown() runs at exit, on one machine as on rank 0 of a cluster. */
START_TEST(timeline_written_at_exit)
{
    char path[128];
    temp_path(path, sizeof path, "atexit");
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setenv("RTASK_TIMELINE", path, 1);
        start_runtime();
        uint64_t x = 2;
        rt_ref ref;
        if (rt_remote(t_double, NULL, &x, sizeof x, &ref) < 0 ||
            rt_get(ref, NULL, NULL, 60000) < 0)
            _exit(2);
        exit(0); /* no rt_shutdown() */
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    ck_assert_int_eq(count(slurp(path), "\"ph\":\"X\""), 1);
    unlink(path);
}
END_TEST

/* What rtask-timeline does with path: its exit status, and what it
 * printed on stdout and stderr in out. */
static int draw(const char *args, const char *path, char *out, size_t size)
{
    char cmd[512], log[128];
    temp_path(log, sizeof log, "drawn");
    snprintf(cmd, sizeof cmd, "build/tools/rtask-timeline %s %s > %s 2>&1", args, path, log);
    int status = system(cmd);
    snprintf(out, size, "%s", slurp(log));
    unlink(log);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* rtask-timeline(1): what is not a timeline is refused with status 1. */
START_TEST(rtask_timeline_refuses_what_is_not_a_timeline)
{
    static char out[65536];
    char path[128];
    temp_path(path, sizeof path, "notatimeline");
    ck_assert_int_eq(draw("", "/etc/passwd", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "not a timeline rtask wrote") != NULL, "%s", out);
    write_file(path, "", 0);
    ck_assert_int_eq(draw("", path, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "an empty file") != NULL, "%s", out);
    unsigned char noise[4096];
    for (size_t i = 0; i < sizeof noise; i++)
        noise[i] = (unsigned char)(i * 2654435761u >> 13);
    write_file(path, noise, sizeof noise);
    ck_assert_int_eq(draw("", path, out, sizeof out), 1);
    /* A timeline cut short, and one with a line that is not rtask's. */
    const char *cut = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
                      "{\"name\":\"f\",\"cat\":\"task\",\"ph\":\"X\",\"ts\":1,\"dur\":2,"
                      "\"pid\":0,\"tid\":7,\"args\":{\"status\":\"success\"}},\n";
    write_file(path, cut, strlen(cut));
    ck_assert_int_eq(draw("", path, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "ends too soon") != NULL, "%s", out);
    char odd[1024];
    snprintf(odd, sizeof odd, "%s{\"x\":1}\n]}\n", cut);
    write_file(path, odd, strlen(odd));
    ck_assert_int_eq(draw("", path, out, sizeof out), 1);
    snprintf(odd, sizeof odd, "%s]}\n", cut); /* the same, whole: drawn */
    write_file(path, odd, strlen(odd));
    ck_assert_int_eq(draw("", path, out, sizeof out), 0);
    ck_assert_int_eq(draw("--view gpus", path, out, sizeof out), 1); /* no GPU in it */
    ck_assert_msg(strstr(out, "nothing to show") != NULL, "%s", out);
    ck_assert_int_eq(draw("", "/tmp", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "Is a directory") != NULL, "%s", out);
    ck_assert_int_eq(draw("--view nonsense", path, out, sizeof out), 2);
    unlink(path);
}
END_TEST

/* The picture: a round time axis, a title a person reads, and a lane per
 * GPU where four quarter-GPU tasks stand side by side as quarters. */
START_TEST(rtask_timeline_shows_gpus_shared)
{
    start_recording(4, 1);
    rt_opts quarter = RT_OPTS_INIT;
    quarter.num_gpus = 0.25;
    rt_ref refs[4];
    uint64_t ms = 150;
    for (int i = 0; i < 4; i++)
        ck_ok(rt_remote(t_sleep_ms, &quarter, &ms, sizeof ms, &refs[i]));
    for (int i = 0; i < 4; i++)
        ck_ok(rt_get(refs[i], NULL, NULL, 60000));
    char path[128];
    temp_path(path, sizeof path, "quarters");
    ck_ok(rt_timeline(path));
    ck_ok(rt_shutdown());
    static char svg[65536];
    /* The whole span from rt_init(), then from the first run (the
     * default), then a span that holds no run. */
    ck_assert_int_eq(draw("--view gpus --from 0", path, svg, sizeof svg), 0);
    ck_assert_msg(strstr(svg, ">0<") && strstr(svg, "0 ms<"), "no round ticks: %s", svg);
    ck_assert_msg(strstr(svg, "after rt_init()") == NULL, "%s", svg);
    ck_assert_int_eq(draw("--view gpus --from 100", path, svg, sizeof svg), 1);
    ck_assert_msg(strstr(svg, "nothing to show") != NULL, "%s", svg);
    ck_assert_int_eq(draw("--view gpus --from 1 --to 0.5", path, svg, sizeof svg), 2);
    ck_assert_int_eq(draw("--view gpus", path, svg, sizeof svg), 0);
    unlink(path);
    ck_assert_int_eq(count(svg, ">node 0, GPU 0<"), 1);
    ck_assert_int_eq(count(svg, "(0.25 of each)"), 4);
    /* A quarter of the 44-pixel lane each, at four heights. */
    ck_assert_int_eq(count(svg, "height=\"10.0\""), 4);
    ck_assert_int_eq(count(svg, "worker"), 0);
    ck_assert_msg(strstr(svg, "0 ms<"), "no round ticks: %s", svg); /* where it starts */
    ck_assert_msg(strstr(svg, "e+") == NULL, "a number a person cannot read: %s", svg);
    const char *title = strstr(svg, "rtask timeline: 4 runs over ");
    ck_assert_msg(title != NULL, "%s", svg);
    double len;
    char unit[4];
    ck_assert_int_eq(sscanf(title, "rtask timeline: 4 runs over %lf %3[a-z]", &len, unit), 2);
    ck_assert_str_eq(unit, "ms");
    ck_assert_msg(strstr(title, "after rt_init()<"), "the title says where it starts: %s", svg);
}
END_TEST

int tl_step(void *state, const void *arg, size_t len, rt_result *r);
int tl_step(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state, (void)arg, (void)len, (void)r;
    return 0;
}

/* An actor's runs carry its name and handle, and rtask-timeline names
 * its worker's row by it ("Trainer 0", "Trainer 1", in the order they
 * were made); a long name is written whole where there is room for it. */
START_TEST(rtask_timeline_names_actors_rows)
{
    start_recording(2, 0);
    static const rt_actor_class trainer = {"Trainer", NULL, NULL};
    rt_actor a[2];
    for (int i = 0; i < 2; i++) {
        rt_ref call;
        ck_ok(rt_actor_create(&trainer, NULL, NULL, 0, &a[i]));
        ck_ok(rt_actor_call(a[i], tl_step, NULL, 0, &call));
        ck_ok(rt_get(call, NULL, NULL, 60000));
    }
    rt_opts long_name = RT_OPTS_INIT;
    long_name.name = "load_and_normalise_the_shards";
    uint64_t ms = 200;
    rt_ref slow;
    ck_ok(rt_remote(t_sleep_ms, &long_name, &ms, sizeof ms, &slow));
    ck_ok(rt_get(slow, NULL, NULL, 60000));
    for (int i = 0; i < 2; i++)
        ck_ok(rt_actor_kill(a[i]));
    char path[128], pattern[96];
    const char *text = write_timeline(path, "actors");
    ck_assert_int_eq(count(text, "\"name\":\"tl_step\",\"cat\":\"actor call\""), 2);
    for (int i = 0; i < 2; i++) {
        snprintf(pattern, sizeof pattern, "\"actor\":\"Trainer\",\"actor_id\":%" PRIu64 "}",
                 a[i].id);
        ck_assert_msg(count(text, pattern) >= 1, "%s not in %s", pattern, text);
    }
    ck_ok(rt_shutdown());
    static char svg[65536];
    ck_assert_int_eq(draw("--view workers --from 0", path, svg, sizeof svg), 0);
    unlink(path);
    ck_assert_int_eq(count(svg, ">node 0, Trainer 0<"), 1);
    ck_assert_int_eq(count(svg, ">node 0, Trainer 1<"), 1);
    ck_assert_int_eq(count(svg, ">node 0, worker "), 1);
    /* In its bar (200 ms of the chart's) and in the legend, whole. */
    ck_assert_int_eq(count(svg, ">load_and_normalise_the_shards<"), 2);
}
END_TEST

/* The timeline keeps an entry in fewer bytes than it is told (times
 * before the end in microseconds, the rest in an extra where a task has
 * it): what it writes is what it was told, for a short CPU task and for
 * a GPU task that waited and ran for hours. */
START_TEST(timeline_entries_write_what_they_were_told)
{
    const uint64_t s0 = 1000000000, hour = 3600000000000ull;
    rt__timeline tl = {.origin_ns = s0};
    rt__span quick = {.id = 7, .lane = 4242, .queued_ns = s0 + 1000, .started_ns = s0 + 5000,
                      .ended_ns = s0 + 12000, .node = 1, .status = RT_ETASK, .call = 1};
    rt__span slow = {.id = 8, .lane = 99, .queued_ns = s0, .started_ns = s0 + 5 * hour,
                     .ended_ns = s0 + 10 * hour, .gpu_peak = 123, .gpu_share = 0.5f,
                     .retries = 2};
    ck_assert_int_eq(rt__timeline_add(&tl, &quick, "quick", NULL, NULL), 0);
    ck_assert_int_eq(rt__timeline_add(&tl, &slow, "slow", "0,1", NULL), 0);
    char *text;
    size_t len;
    ck_assert_int_eq(rt__timeline_render(&tl, &text, &len), 0);
    rt__timeline_free(&tl);
    ck_assert_uint_eq(strlen(text), len);
    ck_assert_msg(strstr(text, "{\"name\":\"quick\",\"cat\":\"actor call\",\"ph\":\"X\","
                               "\"ts\":5.000,\"dur\":7.000,\"pid\":1,\"tid\":4242,\"args\":"
                               "{\"id\":7,\"gpus\":\"\",\"gpu_share\":0,\"accel\":\"\","
                               "\"accel_share\":0,\"queued_us\":1.000,\"status\":\"task "),
                  "%s", text);
    ck_assert_msg(strstr(text, "{\"name\":\"slow\",\"cat\":\"task\",\"ph\":\"X\","
                               "\"ts\":18000000000.000,\"dur\":18000000000.000,\"pid\":0,"
                               "\"tid\":99,\"args\":{\"id\":8,\"gpus\":\"0,1\","
                               "\"gpu_share\":0.5,\"accel\":\"\",\"accel_share\":0,"
                               "\"queued_us\":0.000,\"status\":\"success\",\"retries\":2,"
                               "\"gpu_mem_peak\":123}}"),
                  "%s", text);
    free(text);
}
END_TEST

/* Entries land in chunks mapped ahead a step at a time (as the runtime
 * thread does while idle), partly ready or whole when the last is full,
 * and none is lost or out of order. */
START_TEST(timeline_chunks_made_ahead_keep_every_entry)
{
    enum { N = 40000 }; /* three chunks */
    rt__timeline tl = {.origin_ns = 1};
    rt__timeline_prepare(&tl); /* nothing kept yet: nothing mapped */
    ck_assert_ptr_null(tl.ahead);
    for (uint64_t i = 1; i <= N; i++) {
        rt__span s = {.id = i, .lane = 7, .queued_ns = i * 1000, .started_ns = i * 1000,
                      .ended_ns = i * 1000 + 1000};
        ck_assert_int_eq(rt__timeline_add(&tl, &s, NULL, NULL, NULL), 0);
        for (int k = 0; k < (i < 20000 ? 1 : 30) && i % 1000 == 0; k++)
            rt__timeline_prepare(&tl);
    }
    char path[256], line[512];
    temp_path(path, sizeof path, "ahead");
    char *text;
    size_t len;
    ck_assert_int_eq(rt__timeline_render(&tl, &text, &len), 0);
    ck_assert_int_eq(rt__timeline_save(text, len, path), 0);
    free(text);
    rt__timeline_free(&tl);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    uint64_t want = 1, id;
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, "\"id\":");
        if (!at)
            continue;
        ck_assert_int_eq(sscanf(at, "\"id\":%" SCNu64, &id), 1);
        ck_assert_uint_eq(id, want);
        want++;
    }
    fclose(f);
    unlink(path);
    ck_assert_uint_eq(want, N + 1);
}
END_TEST

Suite *timeline_suite(void)
{
    Suite *s = suite_create("timeline");
    TCase *tc = tcase_create("timeline");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, timeline_records_what_ended);
    tcase_add_test(tc, timeline_records_each_run_as_it_ended);
    tcase_add_test(tc, timeline_keeps_every_record_and_its_name);
    tcase_add_test(tc, timeline_off_and_at_shutdown);
    tcase_add_test(tc, timeline_written_at_exit);
    tcase_add_test(tc, rtask_timeline_refuses_what_is_not_a_timeline);
    tcase_add_test(tc, rtask_timeline_shows_gpus_shared);
    tcase_add_test(tc, rtask_timeline_names_actors_rows);
    tcase_add_test(tc, timeline_entries_write_what_they_were_told);
    tcase_add_test(tc, timeline_chunks_made_ahead_keep_every_entry);
    suite_add_tcase(s, tc);
    return s;
}

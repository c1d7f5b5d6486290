/*
 * test_health.c - GPUs that fail and tasks that overstep, with the fake
 * NVML (test/fake/nvml.c) on test/fake/h100x8: events are lines appended
 * to a file the fake reads as they come, and the processes that use a
 * GPU's memory are a file's lines.
 */
#include "tests.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAKE "test/fake/"

static char events[256], procs[256];

/* rt_init() on the eight H100s (nine GPUs: the second is two MIG
 * instances), watched through the fake NVML with an events file and a
 * processes file of their own. */
static void start_watched(int gpu_memory_kill)
{
    char scenario[600];
    temp_path(events, sizeof events, "events");
    temp_path(procs, sizeof procs, "procs");
    fclose(fopen(events, "w"));
    fclose(fopen(procs, "w"));
    snprintf(scenario, sizeof scenario, "events=%s,procs=%s", events, procs);
    use_fake_nvml(scenario);
    setenv("RTASK_PCI_IDS", FAKE "pci.ids", 1);
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 4;
    c.num_workers = 1;
    c.sysfs_root = FAKE "h100x8";
    c.gpu_memory_kill = gpu_memory_kill;
    c.timeline = 1;
    ck_ok(rt_init_config(&c));
    leave_fake_nvml();
}

/* Whether the timeline rt_timeline() writes now has text in it. */
static int timeline_has(const char *text)
{
    char path[256], buf[65536];
    temp_path(path, sizeof path, "timeline");
    ck_ok(rt_timeline(path));
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    unlink(path);
    return strstr(buf, text) != NULL;
}

static void stop_watched(void)
{
    ck_ok(rt_shutdown());
    unlink(events);
    unlink(procs);
}

static void append(const char *path, const char *line)
{
    FILE *f = fopen(path, "a");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s\n", line);
    fclose(f);
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* Wait up to 10 s for the GPUs available to be want. */
static void wait_gpus(double want)
{
    for (int i = 0; i < 1000 && available("GPU") != want; i++)
        sleep_ms(10);
    ck_assert_msg(available("GPU") == want, "%g GPUs available, not %g", available("GPU"),
                  want);
}

/* After sleeping for its argument's milliseconds: "<CUDA_VISIBLE_DEVICES>
 * <attempt>". */
/* When process pid started (clock ticks since boot), or 0. */
static unsigned long long started(pid_t pid)
{
    char path[64], line[1024];
    unsigned long long ticks = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    char *at = f && fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
    /* After the name: state and 19 fields more, then the start time. */
    if (at && sscanf(at + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
                            "%*d %*d %*d %*d %llu", &ticks) != 1)
        ticks = 0;
    if (f)
        fclose(f);
    return ticks;
}

/* Whether process pid has the fake NVML loaded. */
static int has_nvml(pid_t pid)
{
    char path[64], line[512];
    int found = 0;
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *maps = fopen(path, "r");
    while (maps && !found && fgets(line, sizeof line, maps))
        found = strstr(line, "/libnvidia-ml.so.1") != NULL;
    if (maps)
        fclose(maps);
    return found;
}

/* The GPUs' watcher: the process other than this one that has the fake
 * NVML loaded, the one started last (an earlier test's may still be
 * ending); 0 when there is none. */
static pid_t watcher_pid(void)
{
    DIR *proc = opendir("/proc");
    struct dirent *d;
    pid_t found = 0;
    unsigned long long newest = 0;
    while (proc && (d = readdir(proc))) {
        pid_t pid = (pid_t)atoi(d->d_name);
        unsigned long long since = pid > 0 && pid != getpid() ? started(pid) : 0;
        if (since >= newest && since && has_nvml(pid)) {
            found = pid;
            newest = since;
        }
    }
    if (proc)
        closedir(proc);
    return found;
}

int t_gpu_run(const void *arg, size_t len, rt_result *r)
{
    uint64_t ms = 0;
    memcpy(&ms, arg, len < sizeof ms ? len : sizeof ms);
    sleep_ms((long)ms);
    rt_context ctx;
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    char out[160];
    if (rt_get_context(&ctx) < 0)
        return 1;
    snprintf(out, sizeof out, "%s %d", cvd ? cvd : "-", ctx.attempt);
    return rt_result_set(r, out, strlen(out) + 1);
}

static rt_opts whole_gpu(int max_retries)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 1;
    o.num_cpus = 0;
    o.max_retries = max_retries;
    return o;
}

/* An XID that is not an application's takes its GPU out of service:
 * rt_unhealthy_gpus() names it, it is no longer available, and what
 * needs it can never run. */
START_TEST(an_xid_takes_a_gpu_out_of_service)
{
    start_watched(0);
    wait_gpus(9);
    append(events, "xid 3 79");
    wait_gpus(8);
    ck_unhealthy(1, 0, "3", "0000:5d:00.0", "XID 79 (the GPU has fallen off the bus)");
    rt_opts o = whole_gpu(0);
    o.num_gpus = 9;
    rt_ref ref;
    ck_fails(rt_remote(t_gpu_run, &o, NULL, 0, &ref), RT_EINFEASIBLE, "healthy GPUs");
    /* An application's XID and a corrected ECC error leave it in service;
     * a lost GPU and a double-bit ECC error do not. */
    append(events, "xid 4 13");
    append(events, "ecc1 4");
    sleep_ms(300);
    ck_assert(available("GPU") == 8);
    append(events, "lost 5");
    append(events, "ecc 6");
    wait_gpus(6);
    ck_unhealthy(3, 1, "5", "0000:ab:00.0", "NVML: GPU is lost");
    ck_unhealthy(3, 2, "6", "0000:ba:00.0", "a double-bit ECC error");
    ck_assert(timeline_has("{\"name\":\"XID 79 (the GPU has fallen off the bus)\",\"cat\":"
                           "\"gpu\",\"ph\":\"i\""));
    ck_assert(timeline_has("\"name\":\"XID 13 (graphics engine exception"));
    stop_watched();
}
END_TEST

/* A task running on a GPU that fails is run again on a healthy one (a
 * retry spent); with no retry left it fails, and says why. */
START_TEST(a_task_on_a_failing_gpu_runs_again_elsewhere)
{
    start_watched(0);
    rt_opts o = whole_gpu(1);
    uint64_t ms = 3000; /* it still runs when the XID comes, even under valgrind */
    rt_ref ref, last;
    ck_ok(rt_remote(t_gpu_run, &o, &ms, sizeof ms, &ref));
    sleep_ms(300); /* it runs, on GPU 0 */
    append(events, "xid 0 79");
    char *s;
    ck_ok(rt_get(ref, (void **)&s, NULL, 60000));
    ck_assert_msg(strncmp(s, "0 ", 2) != 0 && strstr(s, " 1"), "ran as \"%s\"", s);
    rt_free(s);
    o = whole_gpu(0);
    ck_ok(rt_remote(t_gpu_run, &o, &ms, sizeof ms, &last));
    sleep_ms(300); /* on the first healthy GPU: the first MIG instance */
    append(events, "xid 1 94");
    ck_fails(rt_get(last, NULL, NULL, 60000), RT_EWORKERDIED,
             "its GPU became unhealthy (XID 94 (a contained ECC error))");
    stop_watched();
}
END_TEST

/* A request that only the GPUs that failed could have held fails with
 * RT_EINFEASIBLE instead of waiting for ever. */
START_TEST(what_no_healthy_gpu_can_hold_fails)
{
    start_watched(0);
    rt_opts one = whole_gpu(0), nine = whole_gpu(0);
    nine.num_gpus = 9;
    uint64_t ms = 3000;
    rt_ref busy, waits;
    ck_ok(rt_remote(t_gpu_run, &one, &ms, sizeof ms, &busy));
    sleep_ms(200);
    ck_ok(rt_remote(t_gpu_run, &nine, NULL, 0, &waits)); /* waits for busy */
    append(events, "xid 7 79");
    ck_fails(rt_get(waits, NULL, NULL, 60000), RT_EINFEASIBLE, "healthy GPUs");
    ck_ok(rt_get(busy, NULL, NULL, 60000));
    stop_watched();
}
END_TEST

/* GPUs that fail while the application submits tasks that need every
 * GPU: each is refused at once, or runs, or fails with RT_EINFEASIBLE
 * once a GPU is out (or, running on it then, RT_EWORKERDIED with no
 * retry left); none waits for ever.  The submissions read the
 * GPUs' health while the round marks one unhealthy (under TSan: no
 * race). */
START_TEST(a_gpu_failing_while_tasks_are_submitted)
{
    start_watched(0);
    rt_opts all = whole_gpu(0);
    all.num_gpus = 9;
    enum { N = 2000 };
    static rt_ref refs[N];
    static int submitted[N];
    int refused = 0, ran = 0, failed = 0;
    for (int i = 0; i < N; i++) {
        if (i % 200 == 100) { /* a GPU of the eight each time */
            char xid[32];
            snprintf(xid, sizeof xid, "xid %d 79", i / 200);
            append(events, xid);
        }
        submitted[i] = rt_remote(t_gpu_run, &all, NULL, 0, &refs[i]);
        ck_assert_msg(submitted[i] == 0 || submitted[i] == RT_EINFEASIBLE, "%s",
                      rt_last_error());
        refused += submitted[i] != 0;
        if (i % 8 == 0)
            sleep_ms(1);
    }
    for (int i = 0; i < N; i++) {
        if (submitted[i] != 0)
            continue;
        int rc = rt_get(refs[i], NULL, NULL, 60000);
        ck_assert_msg(rc == 0 || rc == RT_EINFEASIBLE || rc == RT_EWORKERDIED, "%d: %s", rc,
                      rt_last_error());
        ran += rc == 0;
        failed += rc != 0;
    }
    ck_assert_int_gt(refused, 0); /* the GPU went out of service */
    ck_assert_int_eq(ran + failed + refused, N);
    stop_watched();
}
END_TEST

/* An actor's method: its GPU. */
static int gpu_of(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state, (void)arg, (void)len;
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    return rt_result_set(r, cvd ? cvd : "-", strlen(cvd ? cvd : "-") + 1);
}

static char *ask(rt_actor a, int *rc)
{
    rt_ref ref;
    char *s = NULL;
    *rc = rt_actor_call(a, gpu_of, NULL, 0, &ref);
    if (*rc == 0)
        *rc = rt_get(ref, (void **)&s, NULL, 60000);
    return s;
}

/* An actor whose GPU fails restarts on a healthy one under max_restarts;
 * with none left it dies, and its epitaph names the event. */
START_TEST(an_actor_on_a_failing_gpu_restarts_elsewhere)
{
    start_watched(0);
    static const rt_actor_class plain = {"plain", NULL, NULL};
    rt_opts o = whole_gpu(RT_DEFAULT);
    o.max_restarts = 1;
    rt_actor a;
    ck_ok(rt_actor_create(&plain, &o, NULL, 0, &a));
    int rc;
    char *was = ask(a, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(was, "0");
    rt_free(was);
    append(events, "xid 0 79");
    char *now = NULL;
    for (int i = 0; i < 500; i++) { /* calls fail while it restarts */
        rt_free(now);
        now = ask(a, &rc);
        if (rc == 0 && strcmp(now, "0") != 0)
            break;
        sleep_ms(10);
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_str_ne(now, "0");
    rt_free(now);
    append(events, "xid 1 79"); /* its new GPU: the first MIG instance */
    for (int i = 0; i < 500 && rc != RT_EACTORDIED; i++) {
        rt_free(ask(a, &rc));
        sleep_ms(10);
    }
    ck_assert_int_eq(rc, RT_EACTORDIED);
    ck_assert_msg(strstr(rt_last_error(), "its GPU became unhealthy (XID 79"), "%s",
                  rt_last_error());
    stop_watched();
}
END_TEST

/* The fake NVML's processes file says pid holds bytes of GPU 0. */
static void holds(uint64_t pid, unsigned long long bytes)
{
    fclose(fopen(procs, "w"));
    char line[64];
    snprintf(line, sizeof line, "%llu 0 %llu", (unsigned long long)pid, bytes);
    append(procs, line);
}

/* An actor's method: its process. */
static int pid_of(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state, (void)arg, (void)len;
    uint64_t pid = (uint64_t)getpid();
    return rt_result_set(r, &pid, sizeof pid);
}

static void actor_grows(void)
{
    start_watched(0);
    static const rt_actor_class model = {"model", NULL, NULL};
    rt_opts o = whole_gpu(RT_DEFAULT);
    rt_actor a;
    rt_ref ref;
    ck_ok(rt_actor_create(&model, &o, NULL, 0, &a));
    ck_ok(rt_actor_call(a, pid_of, NULL, 0, &ref));
    uint64_t pid = get_u64(ref, 60000);
    holds(pid, 500000000);
    sleep_ms(1000); /* the watcher looks every 300 ms */
    ck_ok(rt_actor_call(a, pid_of, NULL, 0, &ref));
    ck_assert_uint_eq(get_u64(ref, 60000), pid);
    holds(pid, 9000000000); /* its state grew: a model loaded, a cache */
    sleep_ms(1000);
    stop_watched();
}

/* An actor holds its GPU memory between calls by design: its growth is
 * its state, not a leak, and nothing is said of it. */
START_TEST(an_actor_whose_gpu_memory_grows_is_not_named)
{
    const char *out = capture_output(actor_grows);
    ck_assert_msg(!strstr(out, "keeps "), "%s", out);
}
END_TEST

/* The pid a t_pid_then_sleep task wrote to path (up to 10 s). */
static int pid_in(const char *path)
{
    int pid = 0;
    for (int i = 0; i < 1000 && pid <= 0; i++) {
        FILE *f = fopen(path, "r");
        if (f && fscanf(f, "%d", &pid) != 1)
            pid = 0;
        if (f)
            fclose(f);
        if (pid <= 0)
            sleep_ms(10);
    }
    return pid;
}

static rt_ref quarter_gpu_sleeper(char *path, size_t size)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 0.25;
    o.num_cpus = 0;
    o.max_retries = 0;
    temp_path(path, size, "pid");
    rt_ref ref;
    ck_ok(rt_remote(t_pid_then_sleep, &o, path, strlen(path) + 1, &ref));
    return ref;
}

static void over_share_killed(void)
{
    start_watched(1);
    char path[256], line[64];
    rt_ref ref = quarter_gpu_sleeper(path, sizeof path);
    snprintf(line, sizeof line, "%d 0 30000000000", pid_in(path)); /* 30 GB of 80 */
    append(procs, line);
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EKILLED, "more GPU memory than its share");
    ck_assert(timeline_has("\"gpu_mem_peak\":30000000000"));
    unlink(path);
    stop_watched();
}

/* A task that holds more of a GPU's memory than its share is named; with
 * rt_config.gpu_memory_kill it is killed and fails with RT_EKILLED. */
START_TEST(a_task_over_its_gpu_memory_share_is_named_and_killed)
{
    const char *out = capture_output(over_share_killed);
    ck_assert_msg(strstr(out, "t_pid_then_sleep (handle ") &&
                      strstr(out, "holds 30000000000 bytes of the memory of the GPU at "
                                  "0000:18:00.0 on node 0, more than its share of "
                                  "21380202496: killed"), "%s", out);
}
END_TEST

static void reused_worker_keeps_memory(void)
{
    start_watched(0);
    rt_opts o = whole_gpu(0);
    o.max_calls = 0; /* reuse the worker */
    uint64_t ms = 0;
    rt_ref ref;
    ck_ok(rt_remote(t_getpid, &o, NULL, 0, &ref));
    uint64_t pid = get_u64(ref, 60000);
    holds(pid, 500000000); /* its own, a context: no word */
    sleep_ms(1000);        /* the watcher looks every 300 ms */
    ck_ok(rt_remote(t_gpu_run, &o, &ms, sizeof ms, &ref));
    ck_ok(rt_get(ref, NULL, NULL, 60000));
    holds(pid, 2500000000); /* its second task left 2 GB behind */
    sleep_ms(1000);
    stop_watched();
}

/* A reused worker that holds GPU memory between tasks is named when it
 * holds more after a later task than after its first (which is its GPU
 * library's own, a CUDA context): that is the leak max_calls exists for. */
START_TEST(a_worker_whose_gpu_memory_grows_is_named)
{
    const char *out = capture_output(reused_worker_keeps_memory);
    const char *said = strstr(out, "keeps ");
    ck_assert_msg(said && strstr(said, "keeps 2500000000 bytes of the memory of the GPU at "
                                       "0000:18:00.0 after its task ended, 2000000000 more "
                                       "than after its first"),
                  "%s", out);
    ck_assert_msg(!strstr(said + 1, "keeps "), "said twice: %s", out);
}
END_TEST

/* A runtime whose GPUs are watched: its watcher, once it watches. */
static pid_t watched_by(void)
{
    start_watched(0);
    wait_gpus(9);
    pid_t first = 0;
    for (int i = 0; i < 500 && !(first = watcher_pid()); i++)
        sleep_ms(10);
    ck_assert_int_gt(first, 0);
    sleep_ms(500); /* it said it watches */
    return first;
}

/* Kill watcher pid; the one after it finds GPU 2 lost meanwhile: that
 * one. */
static pid_t kill_watcher_find_lost(pid_t pid)
{
    char scenario[600];
    snprintf(scenario, sizeof scenario, "events=%s,procs=%s,lost=2", events, procs);
    use_fake_nvml(scenario); /* what the next watcher finds */
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    wait_gpus(8);
    ck_unhealthy(1, 0, "2", "0000:3a:00.0", "NVML: GPU is lost");
    pid_t next = watcher_pid();
    ck_assert_int_gt(next, 0);
    ck_assert_int_ne(next, pid);
    return next;
}

/* A watcher killed is seen at once and replaced; the new one reads again
 * what NVML knows (a GPU lost while none watched) and sees what comes. */
START_TEST(a_killed_watcher_is_replaced)
{
    (void)kill_watcher_find_lost(watched_by());
    append(events, "xid 4 79");
    wait_gpus(7);
    leave_fake_nvml();
    stop_watched();
}
END_TEST

/* A watcher killed as it starts (its NVML still starting, before its
 * first record) is replaced too: it did not say that NVML could not
 * start. */
START_TEST(a_watcher_killed_as_it_starts_is_replaced)
{
    pid_t first = watched_by(), second = 0;
    char scenario[600];
    snprintf(scenario, sizeof scenario, "events=%s,procs=%s,init-ms=2000", events, procs);
    use_fake_nvml(scenario); /* the next watcher starts slowly */
    ck_assert_int_eq(kill(first, SIGKILL), 0);
    for (int i = 0; i < 500 && ((second = watcher_pid()) == first || !second); i++)
        sleep_ms(10);
    ck_assert_int_gt(second, 0);
    ck_assert_int_ne(second, first);
    (void)kill_watcher_find_lost(second); /* within its 2 s start */
    leave_fake_nvml();
    stop_watched();
}
END_TEST

Suite *health_suite(void)
{
    Suite *s = suite_create("health");
    TCase *tc = tcase_create("watched");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, an_xid_takes_a_gpu_out_of_service);
    tcase_add_test(tc, a_gpu_failing_while_tasks_are_submitted);
    tcase_add_test(tc, a_killed_watcher_is_replaced);
    tcase_add_test(tc, a_watcher_killed_as_it_starts_is_replaced);
    tcase_add_test(tc, a_task_on_a_failing_gpu_runs_again_elsewhere);
    tcase_add_test(tc, what_no_healthy_gpu_can_hold_fails);
    tcase_add_test(tc, an_actor_on_a_failing_gpu_restarts_elsewhere);
    tcase_add_test(tc, a_task_over_its_gpu_memory_share_is_named_and_killed);
    tcase_add_test(tc, a_worker_whose_gpu_memory_grows_is_named);
    tcase_add_test(tc, an_actor_whose_gpu_memory_grows_is_not_named);
    suite_add_tcase(s, tc);
    return s;
}

/*
 * bench.c - rtask's figures next to Python's process pools and the raw
 * limits of this machine, measured in the same run.
 *
 * Every figure is the median of REPS runs; ratios compare medians.  Run
 * it with `make bench` (RT_BENCH_SMALL=1 for a quick pass).
 */
#include "bench.h"

#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG 64

int sleep_ms(const void *arg, size_t len, rt_result *r);

static int small_run;

double decision_ns(size_t pending, size_t decisions); /* decide.c */

/* ---- measuring ------------------------------------------------------------ */

/* The median over REPS runs of fn(n), which returns seconds; per unit. */
static double median_per(double (*fn)(size_t), size_t n, int reps)
{
    double v[REPS];
    for (int i = 0; i < reps; i++)
        v[i] = fn(n) / (double)n;
    return median(v, reps);
}

size_t scaled(size_t n)
{
    return small_run ? n / 10 + 1 : n;
}

/* ---- the tasks ------------------------------------------------------------ */

int actor_init(const void *arg, size_t len, void **state)
{
    (void)arg;
    (void)len;
    *state = NULL;
    return 0;
}

int actor_noop(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    (void)arg;
    (void)len;
    (void)r;
    return 0;
}

/* Sleep for arg ms; 0 is a no-op that makes no system call. */
int nap(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    (void)r;
    int ms = *(const int *)arg;
    if (ms)
        usleep((useconds_t)ms * 1000);
    return 0;
}

int sleep_ms(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    (void)r;
    usleep((useconds_t)(*(const int *)arg * 1000));
    return 0;
}

/* ---- raw limits ----------------------------------------------------------- */

/* The raw limits in rtask's own state, when lingering is set: each side
 * looks for the next message for up to 50 us, yielding the CPU, as
 * rtask's workers and runtime thread do (lib/base/linger.h), before it
 * blocks in read(); else it blocks at once. */
static int lingering;

static ssize_t read_msg(int fd, char *buf)
{
    if (lingering)
        linger_for(fd);
    return read(fd, buf, MSG);
}

/* A child that answers every MSG-byte message on in with one on out. */
static pid_t echo_child(int *to_child, int *from_child)
{
    int a[2], b[2];
    if (pipe(a) < 0 || pipe(b) < 0)
        exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        char buf[MSG];
        close(a[1]);
        close(b[0]);
        while (read_msg(a[0], buf) == MSG && write(b[1], buf, MSG) == MSG)
            ;
        _exit(0);
    }
    close(a[0]);
    close(b[1]);
    *to_child = a[1];
    *from_child = b[0];
    return pid;
}

static void end_child(pid_t pid, int to, int from)
{
    close(to);
    close(from);
    waitpid(pid, NULL, 0);
}

static double pipe_round_trips(size_t n)
{
    int to, from;
    pid_t pid = echo_child(&to, &from);
    char buf[MSG] = {0};
    double start = now();
    for (size_t i = 0; i < n; i++)
        if (write(to, buf, MSG) != MSG || read_msg(from, buf) != MSG)
            exit(1);
    double took = now() - start;
    end_child(pid, to, from);
    return took;
}

/* The same, both sides lingering first, as rtask's do. */
static double pipe_round_trips_lingering(size_t n)
{
    lingering = 1;
    double took = pipe_round_trips(n);
    lingering = 0;
    return took;
}

/* rtask's synchronous call in its own state and ways, bare.  The task
 * goes to a lingering worker in its run slot's inbox, and its answer
 * comes back in the worker's journal: shared memory both ways, where
 * each side polls for up to 50 us, yielding, as rtask's do, before it
 * sleeps in read().  Each message has a mailbox: the writer copies its
 * bytes and counts them in, then writes a byte on the mailbox's pipe
 * only when the reader is not polling (rtask's wakes are sent then); a
 * reader that sleeps reads bytes until its message is there, stale ones
 * too. */
typedef struct mailbox {
    _Atomic uint64_t seq;
    _Atomic int polling;
    char bytes[MSG];
    int wake[2];
} mailbox;

static void mail_put(mailbox *m, const char *msg)
{
    memcpy(m->bytes, msg, MSG);
    atomic_fetch_add(&m->seq, 1);
    if (!atomic_load(&m->polling) && write(m->wake[1], "", 1) != 1)
        exit(1);
}

static int mail_there(const mailbox *m, uint64_t seq)
{
    return atomic_load(&m->seq) >= seq;
}

static void mail_await(mailbox *m, uint64_t seq, char *out)
{
    atomic_store(&m->polling, 1);
    for (double start = now(); !mail_there(m, seq) && (now() - start) * 1e9 < 50000;)
        sched_yield();
    atomic_store(&m->polling, 0);
    char byte;
    while (!mail_there(m, seq))
        if (read(m->wake[0], &byte, 1) != 1)
            exit(1);
    memcpy(out, m->bytes, MSG);
}

static double memory_round_trips(size_t n)
{
    mailbox *box = mmap(NULL, 2 * sizeof *box, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (box == MAP_FAILED || pipe(box[0].wake) < 0 || pipe(box[1].wake) < 0)
        exit(1);
    char buf[MSG] = {0};
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t i = 1; i <= n; i++) {
            mail_await(&box[0], i, buf);
            mail_put(&box[1], buf);
        }
        _exit(0);
    }
    double start = now();
    for (size_t i = 1; i <= n; i++) {
        mail_put(&box[0], buf);
        mail_await(&box[1], i, buf);
    }
    double took = now() - start;
    waitpid(pid, NULL, 0);
    for (int i = 0; i < 2; i++) {
        close(box[i].wake[0]);
        close(box[i].wake[1]);
    }
    munmap(box, 2 * sizeof *box);
    return took;
}

/* Messages in flight by the thousand, one system call per message. */
static double pipe_pipelined(size_t n)
{
    int to, from;
    pid_t pid = echo_child(&to, &from);
    char buf[MSG] = {0};
    double start = now();
    for (size_t done = 0; done < n; done += 256) {
        for (int i = 0; i < 256; i++)
            if (write(to, buf, MSG) != MSG)
                exit(1);
        for (int i = 0; i < 256; i++)
            if (read(from, buf, MSG) != MSG)
                exit(1);
    }
    double took = now() - start;
    end_child(pid, to, from);
    return took;
}

static double fork_exit_wait(size_t n)
{
    double start = now();
    for (size_t i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        waitpid(pid, NULL, 0);
    }
    return now() - start;
}

static double memcpy_once(size_t size)
{
    char *src = malloc(size), *dst = malloc(size);
    memset(src, 1, size);
    memset(dst, 2, size);
    double start = now();
    memcpy(dst, src, size);
    double took = now() - start;
    if (dst[size - 1] != 1)
        exit(1);
    free(src);
    free(dst);
    return took;
}

/* ---- rtask figures --------------------------------------------------------- */

static int submit_call(const void *actor, rt_ref *ref)
{
    return rt_actor_call(*(const rt_actor *)actor, actor_noop, NULL, 0, ref);
}

static double noop_pipelined(size_t n)
{
    return submit_all_get_all(n, submit_task, NULL);
}

static double noop_sync(size_t n)
{
    return one_at_a_time(n, submit_task, NULL);
}

static rt_actor bench_actor;

static double actor_pipelined(size_t n)
{
    return submit_all_get_all(n, submit_call, &bench_actor);
}

static double actor_sync(size_t n)
{
    return one_at_a_time(n, submit_call, &bench_actor);
}

static double noop_fresh_worker(size_t n)
{
    rt_opts o = RT_OPTS_INIT;
    o.max_calls = 1;
    return submit_all_get_all(n, submit_task, &o);
}

/* The latency of one synchronous task with opts after a pause of gap_us:
 * time for the runtime to replace a spare worker, as between GPU tasks
 * that do work.  Microseconds. */
static double sync_after_pause(const rt_opts *opts, long gap_us)
{
    usleep((useconds_t)gap_us);
    double start = now();
    rt_ref ref;
    check(rt_remote(noop, opts, NULL, 0, &ref), "rt_remote");
    check(rt_get(ref, NULL, NULL, RT_FOREVER), "rt_get");
    return (now() - start) * 1e6;
}

/* Synchronous tasks with opts a and with opts b, in blocks that
 * alternate (each pair of blocks in the other order from the last: this
 * machine's pace drifts by 2x within seconds).  *a_us and *b_us: the
 * medians of all their tasks; returns the median of the blocks' ratios
 * of a to b, which a slow moment moves less than the ratio of the two
 * medians. */
static double sync_blocks(const rt_opts *a, const rt_opts *b, double *a_us, double *b_us)
{
    enum { BLOCKS = 8, PER = 50 };
    size_t per = scaled(PER);
    double *va = malloc(BLOCKS * per * sizeof *va), *vb = malloc(BLOCKS * per * sizeof *vb);
    double ratio[BLOCKS];
    if (!va || !vb)
        exit(1);
    for (int k = 0; k < BLOCKS; k++) {
        double *ka = va + k * per, *kb = vb + k * per;
        for (int half = 0; half < 2; half++) {
            int a_now = half == (k & 1);
            for (size_t i = 0; i < per; i++)
                (a_now ? ka : kb)[i] = sync_after_pause(a_now ? a : b, 2000);
        }
        ratio[k] = quantile(ka, per, 0.5) / quantile(kb, per, 0.5);
    }
    *a_us = quantile(va, BLOCKS * per, 0.5);
    *b_us = quantile(vb, BLOCKS * per, 0.5);
    free(va);
    free(vb);
    return median(ratio, BLOCKS);
}

/* Touch size bytes so that they count in the application's RSS. */
static void *grow_app(size_t size)
{
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 1, size);
    return p;
}

long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* The application's memory for n queued tasks: two long tasks hold both
 * CPUs while n no-ops of the same shape wait behind them. */
static double queued_bytes_per_task(size_t n)
{
    int ms = 1000;
    rt_ref block[2];
    for (int i = 0; i < 2; i++)
        check(rt_remote(sleep_ms, NULL, &ms, sizeof ms, &block[i]), "rt_remote");
    usleep(100000);
    rt_ref *refs = malloc(n * sizeof *refs);
    memset(refs, 0, n * sizeof *refs);
    long before = rss_kib();
    for (size_t i = 0; i < n; i++)
        check(rt_remote(noop, NULL, NULL, 0, &refs[i]), "rt_remote");
    long after = rss_kib();
    for (size_t i = 0; i < n; i++)
        check(rt_get(refs[i], NULL, NULL, RT_FOREVER), "rt_get");
    for (int i = 0; i < 2; i++)
        check(rt_get(block[i], NULL, NULL, RT_FOREVER), "rt_get");
    free(refs);
    return (double)(after - before) * 1024.0 / (double)n;
}

/* ---- peers ---------------------------------------------------------------- */

typedef struct peer {
    char name[64], unit[16];
    double value;
} peer;

/* Read one peer program's figures into p; returns how many. */
static int read_peer(const char *program, size_t n, peer *p, int max)
{
    char cmd[256], line[256];
    snprintf(cmd, sizeof cmd, "%s %zu 2>/dev/null", program, n);
    FILE *f = popen(cmd, "r");
    int count = 0;
    while (f && count < max && fgets(line, sizeof line, f))
        if (sscanf(line, "PEER|%63[^|]|%15[^|]|%lf", p[count].name, p[count].unit,
                   &p[count].value) == 3)
            count++;
    if (f)
        pclose(f);
    return count;
}

/* Python's process pools, OpenMP tasks, and StarPU where it is installed
 * (a missing peer's figures are 0, "not run"). */
static int run_peers(peer *p, int max, size_t n)
{
    static const char *const programs[] = {"python3 bench/peers.py",
                                           "build/bench/rtask-peer-openmp",
                                           "build/bench/rtask-peer-starpu"};
    int count = 0;
    for (size_t i = 0; i < sizeof programs / sizeof *programs; i++)
        count += read_peer(programs[i], n, p + count, max - count);
    return count;
}

static double peer_value(const peer *p, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(p[i].name, name) == 0)
            return p[i].value;
    return 0;
}

/* Seconds per no-op task, pipelined, in a runtime of its own that records
 * a timeline or not. */
static double per_task_with(int timeline, size_t n)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.timeline = timeline;
    check(rt_init_config(&c), "rt_init");
    noop_pipelined(10000);
    double per = noop_pipelined(n) / (double)n;
    check(rt_shutdown(), "rt_shutdown");
    return per;
}

/* What recording a timeline costs each task: no-op tasks pipelined with
 * rt_config.timeline on and off, in pairs of runs, each pair in the other
 * order from the last (this machine's pace drifts); the median of the
 * pairs' differences, which a slow moment of one run moves less than the
 * difference of the two medians. */
static void bench_timeline(void)
{
    printf("\n10. Timeline recording (rt_config.timeline = 1)\n");
    enum { PAIRS = 15 };
    double on[PAIRS], off[PAIRS], diff[PAIRS];
    size_t n = scaled(50000);
    for (int i = 0; i < PAIRS; i++) {
        int on_first = i & 1;
        double first = per_task_with(on_first, n), second = per_task_with(!on_first, n);
        on[i] = on_first ? first : second;
        off[i] = on_first ? second : first;
        diff[i] = on[i] - off[i];
    }
    double per_on = median(on, PAIRS), per_off = median(off, PAIRS);
    double median_diff_ns = median(diff, PAIRS) * 1e9;
    double cost_ns = median_diff_ns > 0 ? median_diff_ns : 0;
    row("rtask, recording", 1 / per_on, "tasks/s", "no-op tasks, pipelined");
    row("rtask, not recording", 1 / per_off, "tasks/s", "the same, in runs alternating");
    row("cost per task", cost_ns, "ns", "an entry of 48 bytes; median of 15 pairs");
    verdict("cost per task / 50 ns", cost_ns / 50, 1, 1);
}

/* ---- report --------------------------------------------------------------- */

int main(void)
{
    const char *small = getenv("RT_BENCH_SMALL");
    small_run = small && *small && *small != '0';
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.num_gpus = 4; /* logical: GPU tasks take the fresh-worker path */
    check(rt_init_config(&c), "rt_init");
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("rtask %d.%d.%d benchmarks: 2 workers, medians of %d runs\n\n",
           RT_VERSION_MAJOR, RT_VERSION_MINOR, RT_VERSION_PATCH, REPS);

    size_t n_peer = scaled(20000);
    peer peers[16];
    int np = run_peers(peers, 16, n_peer);

    printf("1. No-op tasks, reused workers, all submitted then all collected\n");
    noop_pipelined(10000); /* warm up: workers started, classes timed */
    double rt_rate = 1 / median_per(noop_pipelined, scaled(500000), REPS);
    double raw_rate = 1 / median_per(pipe_pipelined, scaled(500000), REPS);
    row("rtask", rt_rate, "tasks/s", "");
    row("Python multiprocessing.Pool.map", peer_value(peers, np, "Pool.map chunksize=1"),
        "tasks/s", "chunksize=1");
    row("Python ProcessPoolExecutor", peer_value(peers, np, "ProcessPoolExecutor submit all"),
        "tasks/s", "submit all, wait");
    row("C, OpenMP tasks, 2 threads", peer_value(peers, np, "OpenMP tasks submit all"),
        "tasks/s", "threads of one process");
    row("C, StarPU 1.3 tasks, 2 CPU workers", peer_value(peers, np, "StarPU submit all"),
        "tasks/s", "threads; 0: not installed");
    row("raw: pipe, one syscall per message", raw_rate, "msg/s", "256 in flight");
    verdict("rtask / 1M tasks/s", rt_rate / 1e6, 1, 0);
    printf("\n");

    printf("2. One synchronous rt_remote + rt_get\n");
    double rt_sync = median_per(noop_sync, scaled(20000), REPS) * 1e6;
    double raw_rt = median_per(pipe_round_trips, scaled(20000), REPS) * 1e6;
    double raw_poll = median_per(pipe_round_trips_lingering, scaled(20000), REPS) * 1e6;
    double raw_same = median_per(memory_round_trips, scaled(20000), REPS) * 1e6;
    row("rtask", rt_sync, "us", "worker and runtime poll 50 us, then sleep");
    row("Python Pool.apply", peer_value(peers, np, "Pool.apply (sync)"), "us", "");
    row("Python ProcessPoolExecutor", peer_value(peers, np, "ProcessPoolExecutor submit+result"),
        "us", "submit().result()");
    row("C, OpenMP task + taskwait", peer_value(peers, np, "OpenMP task + taskwait"), "us",
        "may run on the waiting thread");
    row("C, StarPU synchronous task", peer_value(peers, np, "StarPU synchronous task"), "us",
        "0: not installed");
    row("raw: shared memory both ways, polling 50 us", raw_same, "us",
        "64 bytes, rtask's state and ways");
    row("raw: pipe round trip, both polling 50 us", raw_poll, "us", "information");
    row("raw: pipe round trip, blocking at once", raw_rt, "us", "information");
    verdict("rtask / shared memory both ways", rt_sync / raw_same, 1.5, 1);
    printf("\n");

    printf("2b. Actor method calls (one actor, no-op method)\n");
    static const rt_actor_class cls = {"BenchActor", actor_init, NULL};
    check(rt_actor_create(&cls, NULL, NULL, 0, &bench_actor), "rt_actor_create");
    actor_pipelined(10000); /* warm up */
    double actor_rate = 1 / median_per(actor_pipelined, scaled(500000), REPS);
    double actor_us = median_per(actor_sync, scaled(20000), REPS) * 1e6;
    row("rtask, pipelined calls", actor_rate, "calls/s", "one actor: one process");
    row("rtask tasks, pipelined (section 1)", rt_rate, "tasks/s", "2 workers");
    row("rtask, one synchronous call", actor_us, "us", "");
    row("rtask task, synchronous (section 2)", rt_sync, "us", "");
    row("raw: shared memory both ways, polling 50 us", raw_same, "us", "as section 2");
    verdict("sync call / shared memory both ways", actor_us / raw_same, 1.5, 1);
    check(rt_actor_kill(bench_actor), "rt_actor_kill");
    printf("\n");

    printf("3. max_calls = 1: a fresh worker per task\n");
    size_t n_fresh = scaled(2000);
    double fresh_small = median_per(noop_fresh_worker, n_fresh, REPS) * 1e6;
    double raw_fork_small = median_per(fork_exit_wait, scaled(500), REPS) * 1e6;
    size_t big = small_run ? (size_t)1 << 30 : (size_t)4 << 30;
    void *ballast = grow_app(big);
    double fresh_big = median_per(noop_fresh_worker, n_fresh, REPS) * 1e6;
    double raw_fork_big = median_per(fork_exit_wait, 3, 3) * 1e6;
    row("rtask, application at 10 MB", fresh_small, "us/task", "");
    row(small_run ? "rtask, application at 1 GB" : "rtask, application at 4 GB",
        fresh_big, "us/task", ballast ? "touched after rt_init" : "(no memory: skipped)");
    row("Python Pool maxtasksperchild=1", peer_value(peers, np, "Pool maxtasksperchild=1"),
        "us/task", "");
    row("raw: fork + exit + wait, 10 MB app", raw_fork_small, "us",
        "as the fork server forks");
    row("raw: fork + exit + wait, big app", raw_fork_big, "us", "what forking the app costs");
    verdict("rtask at 10 MB / 300 us", fresh_small / 300, 1, 1);
    verdict("max_calls=1 rate / raw fork rate", raw_fork_small / fresh_small, 0.8, 0);
    verdict("rtask big / rtask 10 MB (flat)", fresh_big / fresh_small, 1.2, 1);
    if (ballast)
        munmap(ballast, big);
    ballast = NULL;
    rt_opts gpu = RT_OPTS_INIT, cpu = RT_OPTS_INIT;
    gpu.num_gpus = 0.25; /* default max_calls: a fresh worker per task */
    double gpu_us, cpu_us, ratio = sync_blocks(&gpu, &cpu, &gpu_us, &cpu_us);
    row("rtask, sync 0.25-GPU task, spare worker", gpu_us, "us", "2 ms between tasks");
    row("rtask, sync CPU task, reused worker", cpu_us, "us", "the same, in blocks alternating");
    verdict("GPU task / reused CPU task", ratio, 1.5, 1);
    printf("\n");

    printf("4. A 256 MiB result handed to the caller\n");
    size_t size = (size_t)256 << 20;
    double tot[REPS], fil[REPS], hand[REPS], cpy[REPS], raw_fill[REPS], raw_hand[REPS];
    for (int i = 0; i < REPS; i++) {
        big_result(size, NULL, &tot[i], &fil[i]);
        hand[i] = tot[i] - fil[i];
        cpy[i] = memcpy_once(size);
        shm_result_raw(size, &raw_fill[i], &raw_hand[i]);
    }
    double handoff = median(hand, REPS) * 1e3, copy = median(cpy, REPS) * 1e3;
    row("rtask, submit to rt_get return", median(tot, REPS) * 1e3, "ms", "");
    row("  of which the task filling it", median(fil, REPS) * 1e3, "ms", "memset in the worker");
    row("  hand-off (the rest)", handoff, "ms", "memfd: no copy; the worker unmaps it");
    row("raw: one memcpy of 256 MiB", copy, "ms", "");
    row("raw: writer unmaps, reader maps, a memfd", median(raw_hand, REPS) * 1e3, "ms",
        "information: rtask's own steps, bare");
    verdict("hand-off / memcpy", handoff / copy, 2, 1);
    printf("\n");

    printf("5. Memory of queued tasks in the application\n");
    size_t queued = scaled(1000000);
    double per = queued_bytes_per_task(queued);
    row("rtask, per queued task", per, "bytes", "");
    row("rtask, for 1 000 000 queued tasks", per * 1e6 / 1e6, "MB", "");
    verdict("MB per million / 200 MB", per / 200, 1, 1);
    check(rt_shutdown(), "rt_shutdown");
    printf("\n");

    printf("6. One scheduling decision, 10 000 pending tasks of 12 shapes\n");
    double dec[REPS];
    for (int i = 0; i < REPS; i++)
        dec[i] = decision_ns(10000, scaled(1000000));
    double decide = median(dec, REPS);
    row("rtask, class + GPU/neuron instances chosen", decide, "ns", "8 GPUs, 64 CPUs");
    verdict("decision / 2 us", decide / 2000, 1, 1);
    printf("\n");

    bench_many_actors();
    bench_many_shapes();
    bench_beside_a_long_task();
    bench_timeline();
    bench_deaths();
    graph_peers gp = {peer_value(peers, np, "OpenMP chain (depend)"),
                      peer_value(peers, np, "OpenMP tree (depend)"),
                      peer_value(peers, np, "StarPU chain (data handle)"),
                      peer_value(peers, np, "StarPU tree (data handles)")};
    bench_objects(rt_rate, rt_sync, &gp);
    bench_nested(rt_rate, rt_sync, raw_rt, raw_poll);
    bench_health();
    bench_spill();
    bench_keep();
    return 0;
}

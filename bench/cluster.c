/*
 * cluster.c - rtask over MPI, next to MPI's own figures measured in the
 * same run: `make bench` runs it under mpirun with 3 ranks on this machine,
 * then with 32 for `scale` (C6: what an idle job and rank 0 cost per rank).
 *
 * It uses MPI itself, as rt_init(3) allows: before rt_init() every rank
 * takes part in MPI's ping-pong, message rate and 256 MiB transfer between
 * ranks 0 and 1; then rank 0 drives rtask.  Rank 0 offers the resource
 * "near", the others "far", so that a task's options say where it runs.
 */
#include "bench.h"

#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PINGS 2000
#define RATE_MSGS 100000
#define WINDOW 64
#define BIG ((size_t)256 << 20)

static int rank;
static char *big_buffer; /* 256 MiB, every page touched */

/* ---- MPI's own figures --------------------------------------------------------- */

/* Seconds per round trip of one byte between ranks 0 and 1. */
static double ping_pong(void)
{
    char byte = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    for (int i = 0; i < PINGS; i++) {
        if (rank == 0) {
            MPI_Send(&byte, 1, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&byte, 1, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&byte, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&byte, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (now() - start) / PINGS;
}

/* 64-byte messages per second from rank 1 to rank 0, WINDOW in flight. */
static double message_rate(void)
{
    char buf[WINDOW][64];
    MPI_Request req[WINDOW];
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    for (int done = 0; rank <= 1 && done < RATE_MSGS; done += WINDOW) {
        for (int i = 0; i < WINDOW; i++) {
            if (rank == 1)
                MPI_Isend(buf[i], 64, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req[i]);
            else
                MPI_Irecv(buf[i], 64, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[i]);
        }
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
    }
    return RATE_MSGS / (now() - start);
}

/* Seconds to move 256 MiB from rank 1 to rank 0: into buf, or, when buf
 * is NULL, into new memory, as a result that the caller keeps must go. */
static double move_big(char *buf)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    if (rank == 1) {
        MPI_Send(big_buffer, (int)BIG, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    } else if (rank == 0) {
        char *into = buf ? buf : malloc(BIG);
        MPI_Recv(into, (int)BIG, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (!buf)
            free(into);
    }
    return now() - start;
}

/* Every rank runs fn REPS times; rank 0's median. */
static double median_of(double (*fn)(void))
{
    double v[REPS];
    for (int i = 0; i < REPS; i++)
        v[i] = fn();
    return median(v, REPS);
}

static double move_big_touched(void)
{
    return move_big(big_buffer);
}

static double move_big_new(void)
{
    return move_big(NULL);
}

/* ---- rtask's figures (rank 0) ----------------------------------------------------- */

static rt_opts where(const char *resource)
{
    rt_opts o = RT_OPTS_INIT;
    o.resources = resource;
    return o;
}

static double rate(const rt_opts *o, size_t n)
{
    double v[REPS];
    for (int i = 0; i < REPS; i++)
        v[i] = n / submit_all_get_all(n, submit_task, o);
    return median(v, REPS);
}

static double sync_call(const rt_opts *o, size_t n)
{
    double v[REPS];
    for (int i = 0; i < REPS; i++)
        v[i] = one_at_a_time(n, submit_task, o) / (double)n;
    return median(v, REPS);
}

/* The median of REPS tasks' nested_calls() figures, seconds per call,
 * each task making n calls, placed by selector (NULL: default options,
 * as its calls, which puts it on rank 0, whose machine is filled first). */
static double nested_call(const char *selector, uint64_t n)
{
    double v[REPS];
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = selector;
    for (int i = 0; i < REPS; i++) {
        rt_ref ref;
        double *took;
        check(rt_remote(nested_calls, selector ? &o : NULL, &n, sizeof n, &ref), "rt_remote");
        check(rt_get(ref, (void **)&took, NULL, RT_FOREVER), "rt_get");
        v[i] = n ? *took / (double)n : 0;
        rt_free(took);
    }
    return median(v, REPS);
}

/* The hand-off of a 256 MiB result: from submission to rt_get(), less the
 * filling in the worker. */
static double big_handoff(const rt_opts *o)
{
    double v[REPS];
    for (int i = 0; i < REPS; i++) {
        double total, filling;
        big_result(BIG, o, &total, &filling);
        v[i] = total - filling;
    }
    return median(v, REPS);
}

/* Internal, for this figure: the payload bytes rank 0 received. */
struct rt__runtime;
struct rt__runtime *rt__runtime_here(void);
uint64_t rt__call_payload_in(struct rt__runtime *rt, uint64_t *messages);

/* A task that reads nothing of its argument: its length. */
static int length_of(const rt_value *args, size_t n, rt_result *res)
{
    uint64_t len = n ? args[0].len : 0;
    return rt_result_set(res, &len, sizeof len);
}

/* A 256 MiB object made on rank 1, read by a task on rank 2: seconds
 * from submitting the reader to its result (the object made before),
 * and the payload bytes rank 0 received meanwhile. */
static double cross_read(uint64_t *through)
{
    rt_opts on1 = RT_OPTS_INIT, on2 = RT_OPTS_INIT;
    on1.label_selector = "rank=1";
    on2.label_selector = "rank=2";
    size_t size = BIG;
    rt_ref made, read;
    size_t ready;
    check(rt_remote(fill, &on1, &size, sizeof size, &made), "rt_remote");
    check(rt_wait(&made, 1, 1, RT_FOREVER, &ready), "rt_wait");
    uint64_t before = rt__call_payload_in(rt__runtime_here(), NULL);
    double start = now();
    check(rt_remote_args(length_of, &on2, &RT_ARG_REF(made), 1, &read), "rt_remote_args");
    uint64_t len;
    void *data;
    check(rt_get(read, &data, NULL, RT_FOREVER), "rt_get");
    double took = now() - start;
    memcpy(&len, data, sizeof len);
    rt_free(data);
    *through = rt__call_payload_in(rt__runtime_here(), NULL) - before;
    check(len == BIG ? 0 : -1, "the object's length");
    check(rt_release(made), "rt_release");
    return took;
}

/* The median of REPS runs after one untimed: the first one or two runs
 * after C3's hand-offs were up to 4 times slower here, their copy spent
 * mostly zeroing new pages in the kernel (clear_page_erms), as later
 * runs' is not; MPI's figure was taken at the start, before any of that. */
static double cross_read_median(uint64_t *through)
{
    double v[REPS];
    uint64_t unused;
    (void)cross_read(&unused);
    *through = 0;
    for (int i = 0; i < REPS; i++) {
        uint64_t t;
        v[i] = cross_read(&t);
        *through += t;
    }
    return median(v, REPS);
}

/* Placement groups of one bundle (half a CPU, on the nodes selector
 * picks) made, waited for and removed, per second. */
static double groups_per_second(const char *selector, size_t n)
{
    rt_bundle b = {.num_cpus = 0.5, .label_selector = selector};
    double v[REPS];
    for (int i = 0; i < REPS; i++) {
        double start = now();
        for (size_t k = 0; k < n; k++) {
            rt_pg pg;
            check(rt_pg_create(&b, 1, RT_PG_PACK, &pg), "rt_pg_create");
            check(rt_pg_wait(pg, 10000), "rt_pg_wait");
            check(rt_pg_remove(pg), "rt_pg_remove");
        }
        v[i] = n / (now() - start);
    }
    return median(v, REPS);
}

/* ---- many ranks: what rank 0 and an idle job cost per rank ---------------------- */

/* CPU seconds used so far by every process of this job on this machine:
 * the ranks, their fork servers and workers all have this program's
 * name.  The same count for rtask and for MPI alone. */
static double job_cpu(void)
{
    char self[64] = "", path[300], line[1024];
    FILE *f = fopen("/proc/self/comm", "r");
    if (!f || !fgets(self, sizeof self, f))
        check(-1, "/proc/self/comm");
    fclose(f);
    self[strcspn(self, "\n")] = '\0';
    double ticks = 0, hz = (double)sysconf(_SC_CLK_TCK);
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        char *open, *close;
        unsigned long utime, stime;
        if (fgets(line, sizeof line, f) && (open = strchr(line, '(')) &&
            (close = strrchr(line, ')')) && (size_t)(close - open - 1) == strlen(self) &&
            !strncmp(open + 1, self, strlen(self)) &&
            sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                   &utime, &stime) == 2)
            ticks += (double)(utime + stime);
        fclose(f);
    }
    if (d)
        closedir(d);
    return ticks / hz;
}

/* Rank 0's resident memory, in bytes. */
static double rss_bytes(void)
{
    char line[256];
    double kib = 0;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %lf kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib * 1024;
}

#define IDLE_S 2
#define IDLE_WINDOWS 3 /* each idle figure: the median of so many windows */
#define SETTLE_S 12 /* rtask's bridges reach their longest sleep (20 ms) */
#define RAW_SLEEP_US 20000

/* Rank 0: the job's CPU per rank and second while it does nothing (rank
 * 0 sleeps; the others wait as they would): the median of IDLE_WINDOWS
 * windows of IDLE_S seconds, as noisy as one window is on a shared VM. */
static double idle_cpu_per_rank(int size)
{
    double v[IDLE_WINDOWS];
    for (int i = 0; i < IDLE_WINDOWS; i++) {
        double before = job_cpu();
        sleep(IDLE_S);
        v[i] = (job_cpu() - before) / IDLE_S / size;
    }
    return median(v, IDLE_WINDOWS);
}

/* The raw way to wait idle for a message, as rtask's settled bridges
 * do: look (MPI_Iprobe()), sleep RAW_SLEEP_US, again, until rank 0's
 * byte comes.  Rank 0 measures the job meanwhile, then sends it. */
static double raw_idle(int size)
{
    double idle = 0;
    char byte = 0;
    if (rank == 0) {
        idle = idle_cpu_per_rank(size);
        for (int r = 1; r < size; r++)
            MPI_Send(&byte, 1, MPI_BYTE, r, 5, MPI_COMM_WORLD);
        return idle;
    }
    for (int came = 0; !came;) {
        MPI_Iprobe(0, 5, MPI_COMM_WORLD, &came, MPI_STATUS_IGNORE);
        if (!came)
            usleep(RAW_SLEEP_US);
    }
    MPI_Recv(&byte, 1, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return 0;
}

/* `scale`: many ranks on this machine.  MPI alone first: the ranks wait
 * for rank 0 as a raw poller would, then in MPI_Barrier() (MPI's own
 * blocking wait); then rtask's job, idle once its bridges settled, then
 * a graph over every rank. */
static int scale(int size)
{
    double mpi_idle = 0, rss_mpi = rss_bytes();
    double raw = raw_idle(size);
    if (rank == 0)
        mpi_idle = idle_cpu_per_rank(size);
    MPI_Barrier(MPI_COMM_WORLD);
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.cluster = "mpi";
    check(rt_init_config(&c), "rt_init"); /* the others serve inside */
    double rss_joined = rss_bytes();
    sleep(SETTLE_S);
    double rtask_idle = idle_cpu_per_rank(size);
    /* A no-op task on every rank by its label, 20 rounds. */
    double cpu0 = job_cpu(), start = now();
    for (int round = 0; round < 20; round++) {
        rt_ref refs[size];
        for (int k = 0; k < size; k++) {
            char selector[32];
            snprintf(selector, sizeof selector, "rank=%d", k);
            rt_opts o = RT_OPTS_INIT;
            o.label_selector = selector;
            o.num_cpus = 0.01;
            check(rt_remote(noop, &o, NULL, 0, &refs[k]), "rt_remote");
        }
        for (int k = 0; k < size; k++)
            check(rt_get(refs[k], NULL, NULL, RT_FOREVER), "rt_get");
    }
    double took = now() - start, work_cpu = job_cpu() - cpu0;
    double rss_worked = rss_bytes();
    printf("C6. %d ranks on this machine: what the job costs per rank\n", size);
    row("rtask, idle: the job's CPU per rank", rtask_idle * 1e3, "ms/s",
        "bridges settled (20 ms sleeps)");
    row("raw: ranks polling MPI_Iprobe every 20 ms", raw * 1e3, "ms/s", "the same wait, bare");
    row("peer: MPI ranks waiting in MPI_Barrier", mpi_idle * 1e3, "ms/s",
        "MPI's own blocking wait spins");
    row("rank 0's memory per rank, rtask's share", (rss_worked - rss_mpi) / size / 1024, "KiB",
        "after a graph over every rank");
    row("rank 0's memory per rank, once joined", (rss_joined - rss_mpi) / size / 1024, "KiB", "");
    row("raw: rank 0's memory with MPI alone, per rank", rss_mpi / size / 1024, "KiB",
        "MPI_Init's");
    row("a no-op task on every rank, per round", took / 20 * 1e3, "ms",
        "one task per rank by its label");
    row("the job's CPU per task of those rounds", work_cpu / (20.0 * size) * 1e6, "us", "");
    verdict("idle rtask / raw polling, CPU per rank", rtask_idle / raw, 2, 1);
    check(rt_shutdown(), "rt_shutdown");
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    int level, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "scale") == 0)
        return scale(size);
    big_buffer = malloc(BIG);
    memset(big_buffer, 1, BIG);
    double rtt = median_of(ping_pong), mrate = median_of(message_rate);
    double mpi_big = median_of(move_big_touched), mpi_big_new = median_of(move_big_new);
    free(big_buffer);

    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_workers = 2;
    c.resources = rank == 0 ? "near=1000" : "far=1000";
    c.cluster = "mpi";
    check(rt_init_config(&c), "rt_init"); /* ranks 1 and 2 serve inside */
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("rtask over MPI: %d ranks on this machine, 2 workers each, medians of %d runs\n\n",
           size, REPS);
    rt_opts near = where("near=0.001"), far = where("far=0.001");

    printf("C1. No-op tasks, pipelined\n");
    double local = rate(&near, 200000), remote = rate(&far, 200000);
    row("rtask, on rank 0 (local)", local, "tasks/s", "");
    row("rtask, placed on ranks 1 and 2", remote, "tasks/s", "");
    row("raw: MPI 64-byte messages, rank 1 to 0", mrate, "msg/s", "64 in flight");
    verdict("remote / local", remote / local, 0.5, 0);
    printf("\n");

    printf("C2. One synchronous rt_remote + rt_get\n");
    double sync_local = sync_call(&near, 5000) * 1e6, sync_remote = sync_call(&far, 5000) * 1e6;
    row("rtask, on rank 0", sync_local, "us", "");
    row("rtask, on rank 1 or 2", sync_remote, "us", "");
    row("raw: MPI ping-pong, one byte", rtt * 1e6, "us", "round trip");
    verdict("remote / (local + 2 MPI round trips)", sync_remote / (sync_local + 2 * rtt * 1e6),
            1, 1);
    printf("\n");

    printf("C3. A 256 MiB result from another rank\n");
    double hand_local = big_handoff(&near) * 1e3, hand_remote = big_handoff(&far) * 1e3;
    row("rtask hand-off, on rank 0", hand_local, "ms", "memfd: no copy");
    row("rtask hand-off, from rank 1 or 2", hand_remote, "ms", "into new memory, the caller's");
    row("raw: MPI moves 256 MiB into new memory", mpi_big_new * 1e3, "ms", "malloc per transfer");
    row("raw: MPI moves 256 MiB into touched memory", mpi_big * 1e3, "ms", "the same buffer each time");
    verdict("remote hand-off / MPI into new memory", hand_remote / (mpi_big_new * 1e3), 2, 1);
    printf("\n");

    printf("C4. A 256 MiB object made on rank 1, read by a task on rank 2\n");
    uint64_t through;
    double cross = cross_read_median(&through);
    row("rtask, the reader's task, submitted to result", cross * 1e3, "ms",
        "pulled into new shared memory: what a task read is never reused");
    row("bytes through rank 0, all runs", (double)through, "bytes", "payload rank 0 received");
    row("raw: MPI moves 256 MiB into new memory", mpi_big_new * 1e3, "ms",
        "(C3) malloc per transfer, as rtask's");
    row("raw: MPI moves 256 MiB into touched memory", mpi_big * 1e3, "ms", "information");
    verdict("reader / MPI into new memory", cross / mpi_big_new, 1.5, 1);
    printf("\n");

    printf("C5. Placement groups of one bundle: create, wait, remove\n");
    double pg_local = groups_per_second("rank=0", 20000);
    double pg_remote = groups_per_second("rank=!0", 20000);
    row("rtask, a bundle on rank 0", pg_local, "groups/s", "");
    row("rtask, a bundle on rank 1 or 2", pg_remote, "groups/s", "placed by rank 0");
    row("Ray 2.50, its benchmark cluster (published)", 650, "groups/s", "not measured here");
    verdict("rtask on other ranks / Ray", pg_remote / 650, 10, 0);
    printf("\n");

    printf("C7. A task's synchronous call, default options\n");
    double nested_local = nested_call(NULL, 2000) * 1e6;
    double nested_remote = nested_call("rank=1", 2000) * 1e6;
    /* Rank 0's messages for tasks of 2000 calls, less those for tasks of
     * none (their own answers): the calls'. */
    uint64_t m0, m1, m2;
    (void)rt__call_payload_in(rt__runtime_here(), &m0);
    (void)nested_call("rank=1", 0);
    (void)rt__call_payload_in(rt__runtime_here(), &m1);
    (void)nested_call("rank=1", 2000);
    (void)rt__call_payload_in(rt__runtime_here(), &m2);
    double per_call = ((double)(m2 - m1) - (double)(m1 - m0)) / (REPS * 2000.0);
    per_call = per_call > 0 ? per_call : 0;
    row("rtask, in a task on rank 0", nested_local, "us", "");
    row("rtask, in a task on rank 1", nested_remote, "us", "");
    row("messages rank 0 received per call", per_call, "", "its bridge's count, less a task's own");
    row("raw: MPI ping-pong, one byte", rtt * 1e6, "us", "round trip");
    verdict("on rank 1 / on rank 0", nested_remote / nested_local, 1.2, 1);
    verdict("messages through rank 0 per call", per_call, 0, 1);
    check(rt_shutdown(), "rt_shutdown");
    MPI_Finalize();
    return 0;
}

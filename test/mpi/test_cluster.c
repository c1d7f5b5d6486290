/* test_cluster.c - rtask over MPI, run by mk/check-mpi under mpirun.
 *
 * Every rank runs this program; rt_init() returns on rank 0 only, which
 * runs the suite named by argv[1] (Check, in one process: the runtime
 * joins the job once).  Each rank has its own fake machine
 * (RTASK_SYSFS_ROOT), which tasks report to say where they ran:
 *   pair     rank 0 test/fake/v100x4, rank 1 test/fake/h100x8
 *   trio     rank 0 test/fake/none, rank 1 v100x4, rank 2 h100x8
 *   single   no mpirun: a one-node cluster
 *   families rank 0 test/fake/none, rank 1 test/fake/tpu-v4: a serving
 *            rank tells its tasks its own family's devices
 *   stranger rank 1 runs another program: rt_init() fails on rank 0
 *   graphdies rank 1, holding a graph's objects, dies: the job ends
 *   gpuhealth rank 1's GPUs are watched (the fake NVML): an XID there is
 *            seen on rank 0
 *   unended  rank 0 runs a task and returns from main without
 *            rt_shutdown(): every rank still ends, with status 0
 *   rankdies a task kills its rank (rank 1) while rank 0 waits forever:
 *            the job ends (mpirun aborts it) instead of hanging
 *   nodefails a task kills rank 1's fork server: rank 0's runtime stops
 *            with that reason, and every rank still ends with status 0
 *   ranksilent a task stops rank 1 (SIGSTOP): rank 0 declares it dead after
 *            RTASK_RANK_TIMEOUT, its wait ends naming it, and
 *            rt_shutdown() ends the job within its minute
 */
#include <check.h>
#include <rtask.h>

#include "../../lib/node/callmsg.h" /* internal: the frames of tasks' calls */
#include "../../lib/node/client.h"  /* internal: a connection through the door */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ck_ok(call)                                                                \
    do {                                                                           \
        int rc_ = (call);                                                          \
        ck_assert_msg(rc_ == 0, "%s = %d (%s)", #call, rc_, rt_last_error());     \
    } while (0)

static int trio; /* the suite runs with 3 ranks */

/* ---- tasks ------------------------------------------------------------------- */

/* Where it ran: "<fake machine> <CUDA_VISIBLE_DEVICES>". */
static int where(const void *arg, size_t len, rt_result *res)
{
    char buf[512];
    const char *root = getenv("RTASK_SYSFS_ROOT");
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    (void)arg, (void)len;
    snprintf(buf, sizeof buf, "%s %s", root ? root : "/", cvd && *cvd ? cvd : "-");
    return rt_result_set(res, buf, strlen(buf) + 1);
}

/* Where it ran and its TPU variables: "<machine> <chips> <bounds>". */
static int tpu_where(const void *arg, size_t len, rt_result *res)
{
    char buf[512];
    const char *chips = getenv("TPU_VISIBLE_CHIPS");
    const char *bounds = getenv("TPU_CHIPS_PER_HOST_BOUNDS");
    (void)arg, (void)len;
    snprintf(buf, sizeof buf, "%s %s %s", getenv("RTASK_SYSFS_ROOT"), chips ? chips : "-",
             bounds ? bounds : "-");
    return rt_result_set(res, buf, strlen(buf) + 1);
}

/* Says so on stdout, for mk/check-mpi to find with its prefix. */
static int hello(const void *arg, size_t len, rt_result *res)
{
    (void)arg, (void)len, (void)res;
    printf("hello from %s\n", getenv("RTASK_SYSFS_ROOT"));
    fflush(stdout);
    return 0;
}

/* A result of the size asked for, each byte its offset's low byte. */
static int bytes(const void *arg, size_t len, rt_result *res)
{
    size_t n;
    (void)len;
    memcpy(&n, arg, sizeof n);
    unsigned char *p = rt_result_alloc(res, n);
    if (!p)
        return 1;
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)i;
    return 0;
}

/* Joins a rendezvous of n tasks in a directory: marks itself there and
 * waits (20 s at most) until n are; returns how many it saw. */
static int rendezvous(const void *arg, size_t len, rt_result *res)
{
    char dir[256], mark[300];
    int n = 0, want;
    (void)len;
    memcpy(&want, arg, sizeof want);
    snprintf(dir, sizeof dir, "%s", (const char *)arg + sizeof want);
    snprintf(mark, sizeof mark, "%s/%d", dir, (int)getpid());
    fclose(fopen(mark, "w"));
    for (int i = 0; i < 2000 && n < want; i++) {
        n = 0;
        DIR *d = opendir(dir);
        for (struct dirent *e; d && (e = readdir(d));)
            n += e->d_name[0] != '.';
        if (d)
            closedir(d);
        usleep(10000);
    }
    return rt_result_set(res, &n, sizeof n);
}

/* Killed by SIGKILL the first time (its marker file is made first), so
 * its retry runs on a fresh worker; returns the attempt number. */
static int dies_once(const void *arg, size_t len, rt_result *res)
{
    (void)len;
    struct stat st;
    if (stat(arg, &st) < 0) {
        fclose(fopen(arg, "w"));
        kill(getpid(), SIGKILL);
    }
    int attempt = 2;
    return rt_result_set(res, &attempt, sizeof attempt);
}

/* Whether process pid's environment has entry (NAME=value). */
static int has_env(int pid, const char *entry)
{
    char path[64], env[65536];
    snprintf(path, sizeof path, "/proc/%d/environ", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(env, 1, sizeof env - 1, f) : 0;
    if (f)
        fclose(f);
    env[n] = '\0';
    for (size_t at = 0; at < n; at += strlen(env + at) + 1)
        if (strcmp(env + at, entry) == 0)
            return 1;
    return 0;
}

/* The process of the rank that runs the calling task (the fork server
 * was adopted by init, so not an ancestor): the one of this program, with
 * this rank's MPI environment, outside the workers' process group; 0
 * when none is found. */
static int rank_pid(void)
{
    char self[512], exe[512], path[64], entry[64];
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (!rank || n <= 0)
        return 0;
    self[n] = '\0';
    snprintf(entry, sizeof entry, "OMPI_COMM_WORLD_RANK=%s", rank);
    DIR *proc = opendir("/proc");
    struct dirent *d;
    int found = 0;
    while (proc && !found && (d = readdir(proc))) {
        int pid = atoi(d->d_name);
        snprintf(path, sizeof path, "/proc/%d/exe", pid);
        ssize_t m = pid > 1 ? readlink(path, exe, sizeof exe - 1) : -1;
        if (m <= 0 || getpgid(pid) == getpgid(0))
            continue;
        exe[m] = '\0';
        if (strcmp(exe, self) == 0 && has_env(pid, entry))
            found = pid;
    }
    if (proc)
        closedir(proc);
    return found;
}

/* Kills the rank that runs it. */
static int kill_rank(const void *arg, size_t len, rt_result *res)
{
    (void)arg, (void)len, (void)res;
    int rank = rank_pid();
    return rank ? kill(rank, SIGKILL) : 1;
}

/* Stops the rank that runs it (SIGSTOP): it is there, and silent. */
static int stop_rank(const void *arg, size_t len, rt_result *res)
{
    (void)arg, (void)len, (void)res;
    int rank = rank_pid();
    return rank ? kill(rank, SIGSTOP) : 1;
}

/* Kills the fork server of the rank that runs it, and waits for the death
 * that follows (its parent-death signal), so that it never answers. */
static int kill_fork_server(const void *arg, size_t len, rt_result *res)
{
    (void)arg, (void)len, (void)res;
    kill(getppid(), SIGKILL);
    for (;;)
        pause();
    return 0;
}

/* An actor: a counter. */
static int counter_init(const void *arg, size_t len, void **state)
{
    (void)arg, (void)len;
    *state = calloc(1, sizeof(int));
    return *state ? 0 : 1;
}

static void counter_fini(void *state)
{
    free(state);
}

static int counter_add(void *state, const void *arg, size_t len, rt_result *res)
{
    int *count = state, by;
    (void)len;
    memcpy(&by, arg, sizeof by);
    *count += by;
    char buf[512];
    snprintf(buf, sizeof buf, "%d %s", *count, getenv("RTASK_SYSFS_ROOT"));
    return rt_result_set(res, buf, strlen(buf) + 1);
}

/* A method that needs no state: the rank's machine. */
static int where_method(void *state, const void *arg, size_t len, rt_result *res)
{
    (void)state, (void)arg, (void)len;
    const char *root = getenv("RTASK_SYSFS_ROOT");
    return rt_result_set(res, root, strlen(root) + 1);
}

/* What a task on another rank hands the work it makes: a counter actor
 * and an object of rank 0's application, and where to send its child. */
typedef struct afar_args {
    rt_actor counter;
    rt_ref object;
    char child_type[64];
} afar_args;

#define AFAR_BIG ((size_t)3 << 20) /* past a message: the bytes go as memfds */

static int counts(const unsigned char *p, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != (unsigned char)i;
    return bad == 0;
}

static int sleep_ms(const void *arg, size_t len, rt_result *res)
{
    uint64_t ms;
    (void)len, (void)res;
    memcpy(&ms, arg, sizeof ms);
    usleep((useconds_t)(ms * 1000));
    return 0;
}

/* On another rank, makes work as the application would: a child task
 * on the type asked for, a large result and a large object of its own,
 * a call of the actor, and a view of rank 0's object.  Says
 * "<child's machine> <large ok> <put ok> <actor's answer> <object>". */
static int calls_from_afar(const void *arg, size_t len, rt_result *res)
{
    afar_args a;
    if (len != sizeof a)
        return 1;
    memcpy(&a, arg, sizeof a);
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 1;
    o.accelerator_type = a.child_type;
    size_t n = AFAR_BIG;
    int by = 5;
    rt_ref child, large, mine, call;
    void *where_it_ran, *big, *back, *answer;
    size_t big_len, back_len;
    unsigned char *put = malloc(n);
    for (size_t i = 0; put && i < n; i++)
        put[i] = (unsigned char)i;
    rt_view view;
    if (!put || rt_remote(where, &o, NULL, 0, &child) < 0 ||
        rt_remote(bytes, &o, &n, sizeof n, &large) < 0 || rt_put(put, n, &mine) < 0 ||
        rt_actor_call(a.counter, counter_add, &by, sizeof by, &call) < 0 ||
        rt_get(child, &where_it_ran, NULL, 60000) < 0 ||
        rt_get(large, &big, &big_len, 60000) < 0 || rt_get(mine, &back, &back_len, 60000) < 0 ||
        rt_get(call, &answer, NULL, 60000) < 0 || rt_get_view(a.object, &view, 60000) < 0) {
        fprintf(stderr, "calls_from_afar: %s\n", rt_last_error());
        return 2;
    }
    char buf[1024];
    snprintf(buf, sizeof buf, "%s %d %d %s %.*s", (char *)where_it_ran,
             big_len == n && counts(big, n), back_len == n && counts(back, n),
             (char *)answer, (int)view.len, (const char *)view.data);
    rt_view_release(&view);
    rt_free(where_it_ran);
    rt_free(big);
    rt_free(back);
    rt_free(answer);
    free(put);
    return rt_result_set(res, buf, strlen(buf) + 1);
}

/* Makes an object and a task, then dies in the middle of waiting: its
 * rank hangs up its connection, and rank 0 releases what it made. */
static int makes_work_and_dies(const void *arg, size_t len, rt_result *res)
{
    rt_ref mine, child;
    uint64_t ms = 200;
    (void)arg, (void)len, (void)res;
    if (rt_put("left behind", 11, &mine) < 0 || rt_remote(sleep_ms, NULL, &ms, sizeof ms,
                                                           &child) < 0)
        return 2;
    if (fork() == 0) { /* kills its parent while rank 0 makes its call */
        usleep(50000);
        kill(getppid(), SIGKILL);
        _exit(0);
    }
    return rt_get(child, NULL, NULL, 60000) < 0 ? 3 : 4;
}

/* fib(n) as tasks, all on rank 1: each waits for two of its own.  After
 * n, a marker's path: the first task of n 6 dies once its children run
 * (the marker is made first), so they run on with their caller gone and
 * the task runs again. */
static int fib_on_rank_one(const void *arg, size_t len, rt_result *res)
{
    char buf[sizeof(uint64_t) + 256];
    uint64_t n, v;
    struct stat st;
    if (len < sizeof n || len > sizeof buf)
        return 1;
    memcpy(buf, arg, len);
    memcpy(&n, buf, sizeof n);
    v = n;
    if (n >= 2) {
        rt_opts o = RT_OPTS_INIT;
        o.label_selector = "rank=1";
        uint64_t a, b;
        rt_ref rx, ry;
        void *px, *py;
        for (int i = 1; i <= 2; i++) {
            uint64_t child = n - (uint64_t)i;
            memcpy(buf, &child, sizeof child);
            if (rt_remote(fib_on_rank_one, &o, buf, len, i == 1 ? &rx : &ry) < 0)
                return 2;
        }
        const char *marker = len > sizeof n ? buf + sizeof n : NULL;
        if (marker && n == 6 && stat(marker, &st) < 0) {
            fclose(fopen(marker, "w"));
            kill(getpid(), SIGKILL);
        }
        if (rt_get(rx, &px, NULL, RT_FOREVER) < 0 || rt_get(ry, &py, NULL, RT_FOREVER) < 0)
            return 3;
        memcpy(&a, px, sizeof a);
        memcpy(&b, py, sizeof b);
        rt_free(px);
        rt_free(py);
        v = a + b;
    }
    return rt_result_set(res, &v, sizeof v);
}

/* ---- helpers -------------------------------------------------------------------- */

/* Where it ran, then each argument's length and byte sum:
 * "<machine> <len>:<sum> ...". */
static int args_seen(const rt_value *args, size_t n, rt_result *res)
{
    char buf[512];
    int at = snprintf(buf, sizeof buf, "%s", getenv("RTASK_SYSFS_ROOT"));
    for (size_t i = 0; i < n && at < 400; i++) {
        unsigned long sum = 0;
        for (size_t j = 0; j < args[i].len; j++)
            sum += ((const unsigned char *)args[i].data)[j];
        at += snprintf(buf + at, sizeof buf - (size_t)at, " %zu:%lu", args[i].len, sum);
    }
    return rt_result_set(res, buf, strlen(buf) + 1);
}

/* What sum_args() saw: its arguments' bytes summed, their length, and
 * the node it ran on. */
typedef struct sum_seen {
    uint64_t sum, len;
    int node;
} sum_seen;

static int sum_args(const rt_value *args, size_t n, rt_result *res)
{
    sum_seen s = {0, 0, -1};
    rt_context ctx;
    if (rt_get_context(&ctx) == 0)
        s.node = ctx.node;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < args[i].len; j++)
            s.sum += ((const unsigned char *)args[i].data)[j];
        s.len += args[i].len;
    }
    return rt_result_set(res, &s, sizeof s);
}

static int sum_method(void *state, const rt_value *args, size_t n, rt_result *res)
{
    (void)state;
    return sum_args(args, n, res);
}

/* Its argument with 1 added to each byte. */
static int plus_one(const rt_value *args, size_t n, rt_result *res)
{
    unsigned char *out = n == 1 ? rt_result_alloc(res, args[0].len) : NULL;
    if (!out)
        return 1;
    for (size_t j = 0; j < args[0].len; j++)
        out[j] = (unsigned char)(((const unsigned char *)args[0].data)[j] + 1);
    return 0;
}

static int fails(const void *arg, size_t len, rt_result *res)
{
    (void)arg, (void)len, (void)res;
    return 5;
}

static rt_opts gpu_opts(double gpus, const char *type)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = gpus;
    o.accelerator_type = type;
    return o;
}

/* Run fn and return its result (rt_free() it). */
static char *run(rt_fn fn, const rt_opts *o, const void *arg, size_t len)
{
    rt_ref r;
    void *data = NULL;
    ck_ok(rt_remote(fn, o, arg, len, &r));
    ck_ok(rt_get(r, &data, NULL, 60000));
    return data;
}

static void ck_ran_on(const char *result, const char *machine)
{
    ck_assert_msg(strncmp(result, machine, strlen(machine)) == 0, "ran on \"%s\", not %s",
                  result, machine);
}

/* An actor of a class with neither constructor nor destructor, made
 * with o, runs on machine. */
static void ck_plain_actor_on(const rt_opts *o, const char *machine)
{
    static const rt_actor_class plain = {"plain", NULL, NULL};
    rt_actor a;
    rt_ref ref;
    ck_ok(rt_actor_create(&plain, o, NULL, 0, &a));
    ck_ok(rt_actor_call(a, where_method, NULL, 0, &ref));
    char *r;
    ck_ok(rt_get(ref, (void **)&r, NULL, 60000));
    ck_assert_str_eq(r, machine);
    rt_free(r);
    ck_ok(rt_actor_kill(a));
}

/* The number of entries in a CUDA_VISIBLE_DEVICES list. */
static int count_ids(const char *list)
{
    int n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    return n;
}

/* ---- tests ----------------------------------------------------------------------- */

START_TEST(test_type_picks_node)
{
    rt_opts v = gpu_opts(1, RT_ACCEL_NVIDIA_TESLA_V100), h = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
    char *a = run(where, &v, NULL, 0), *b = run(where, &h, NULL, 0);
    ck_ran_on(a, "test/fake/v100x4");
    ck_ran_on(b, "test/fake/h100x8");
    ck_assert_int_eq(count_ids(strchr(b, ' ') + 1), 1);
    rt_free(a);
    rt_free(b);
}
END_TEST

START_TEST(test_six_gpus_on_the_eight)
{
    rt_opts o = gpu_opts(6, NULL);
    char *r = run(where, &o, NULL, 0);
    ck_ran_on(r, "test/fake/h100x8");
    ck_assert_int_eq(count_ids(strchr(r, ' ') + 1), 6);
    rt_free(r);
}
END_TEST

START_TEST(test_larger_than_any_node)
{
    rt_opts nine = gpu_opts(9, NULL), four = gpu_opts(4, NULL);
    rt_ref r;
    ck_assert_int_eq(rt_remote(where, &nine, NULL, 0, &r), RT_EINFEASIBLE);
    ck_assert_int_eq(rt_remote(where, &four, NULL, 0, &r), 0);
    ck_ok(rt_get(r, NULL, NULL, 60000));
    rt_opts other = gpu_opts(1, RT_ACCEL_NVIDIA_A100);
    ck_assert_int_eq(rt_remote(where, &other, NULL, 0, &r), RT_EINFEASIBLE);
}
END_TEST

START_TEST(test_twelve_at_once)
{
    char arg[300];
    int want = 12;
    memcpy(arg, &want, sizeof want);
    snprintf(arg + sizeof want, sizeof arg - sizeof want, "/tmp/rtask-mpi-%d", (int)getpid());
    mkdir(arg + sizeof want, 0700);
    rt_opts o = gpu_opts(1, NULL);
    o.num_cpus = 0; /* GPUs alone bound them: a rank here has 2 CPUs */
    rt_ref refs[12];
    for (int i = 0; i < 12; i++)
        ck_ok(rt_remote(rendezvous, &o, arg, sizeof arg, &refs[i]));
    for (int i = 0; i < 12; i++) {
        void *seen;
        ck_ok(rt_get(refs[i], &seen, NULL, 60000));
        ck_assert_int_eq(*(int *)seen, 12);
        rt_free(seen);
    }
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", arg + sizeof want);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static void check_bytes(size_t n)
{
    rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100); /* on rank 1 or 2 */
    rt_ref r;
    void *data;
    size_t len;
    ck_ok(rt_remote(bytes, &o, &n, sizeof n, &r));
    ck_ok(rt_get(r, &data, &len, 60000));
    ck_assert_uint_eq(len, n);
    const unsigned char *p = data;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != (unsigned char)i;
    ck_assert_uint_eq(bad, 0);
    rt_free(data);
}

START_TEST(test_remote_results)
{
    check_bytes(1);
    check_bytes((size_t)256 << 20);
}
END_TEST

/* A task of several arguments on rank 1 or 2: objects of rank 0 (small,
 * large) and of another remote task, and bytes, arrive whole; a failed
 * remote task fails what takes it. */
START_TEST(test_remote_task_takes_objects)
{
    rt_opts h = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
    size_t big = 300 * 1024, n = 1000;
    unsigned char *large = malloc(big);
    memset(large, 2, big);
    rt_ref small, huge, made, r, bad, after;
    ck_ok(rt_put("abc", 3, &small));
    ck_ok(rt_put(large, big, &huge));
    ck_ok(rt_remote(bytes, &h, &n, sizeof n, &made));
    rt_arg args[] = {RT_ARG_REF(small), RT_ARG_BYTES("zz", 2), RT_ARG_REF(huge),
                     RT_ARG_REF(made)};
    ck_ok(rt_remote_args(args_seen, &h, args, 4, &r));
    char *seen;
    ck_ok(rt_get(r, (void **)&seen, NULL, 60000));
    unsigned long made_sum = 0;
    for (size_t i = 0; i < n; i++)
        made_sum += (unsigned char)i;
    char want[256];
    snprintf(want, sizeof want, "test/fake/h100x8 3:294 2:244 %zu:%zu %zu:%lu", big, 2 * big,
             n, made_sum);
    ck_assert_str_eq(seen, want);
    rt_free(seen);
    ck_ok(rt_remote(fails, &h, NULL, 0, &bad));
    ck_ok(rt_remote_args(args_seen, &h, &RT_ARG_REF(bad), 1, &after));
    ck_assert_int_eq(rt_get(after, NULL, NULL, 60000), RT_EDEPENDENCY);
    ck_assert_msg(strstr(rt_last_error(), "returned 5"), "%s", rt_last_error());
    rt_release(small);
    rt_release(huge);
    rt_release(made);
    rt_release(bad);
    free(large);
}
END_TEST

START_TEST(test_remote_output)
{
    rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
    rt_free(run(hello, &o, NULL, 0));
}
END_TEST

START_TEST(test_remote_actor)
{
    static const rt_actor_class counter = {"counter", counter_init, counter_fini};
    rt_opts o = gpu_opts(2, RT_ACCEL_NVIDIA_H100);
    rt_actor a;
    rt_ref refs[20];
    ck_ok(rt_actor_create(&counter, &o, NULL, 0, &a));
    for (int i = 0; i < 20; i++) {
        int by = i + 1;
        ck_ok(rt_actor_call(a, counter_add, &by, sizeof by, &refs[i]));
    }
    for (int i = 0; i < 20; i++) {
        char *r;
        ck_ok(rt_get(refs[i], (void **)&r, NULL, 60000));
        ck_assert_int_eq(atoi(r), (i + 1) * (i + 2) / 2); /* in order */
        ck_assert_ptr_nonnull(strstr(r, "test/fake/h100x8"));
        rt_free(r);
    }
    ck_ok(rt_actor_kill(a));
    int by = 1;
    rt_ref after;
    int rc = rt_actor_call(a, counter_add, &by, sizeof by, &after);
    if (rc == 0)
        rc = rt_get(after, NULL, NULL, 60000);
    ck_assert_int_eq(rc, RT_EACTORDIED);
    /* Its two GPUs are free again: eight fit on its node. */
    rt_opts eight = gpu_opts(8, NULL);
    rt_free(run(where, &eight, NULL, 0));
}
END_TEST

/* A class with neither constructor nor destructor, placed on rank 1. */
START_TEST(test_remote_actor_without_constructor)
{
    rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
    ck_plain_actor_on(&o, "test/fake/h100x8");
}
END_TEST

START_TEST(test_remote_worker_killed)
{
    char marker[64];
    snprintf(marker, sizeof marker, "/tmp/rtask-mpi-dies-%d", (int)getpid());
    unlink(marker);
    rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
    o.max_retries = 1;
    int *attempt = (int *)run(dies_once, &o, marker, strlen(marker) + 1);
    ck_assert_int_eq(*attempt, 2);
    rt_free(attempt);
    unlink(marker);
}
END_TEST

/* A task on another rank submits tasks, calls an actor and reads
 * objects made anywhere: every handle is rank 0's, and its calls are made
 * there, whatever rank it runs on. */
START_TEST(test_remote_task_makes_work)
{
    static const rt_actor_class counter = {"counter", counter_init, counter_fini};
    afar_args a = {.child_type = RT_ACCEL_NVIDIA_TESLA_V100};
    rt_opts no_cpu = RT_OPTS_INIT; /* a node may have a single CPU, for the task */
    no_cpu.num_cpus = 0;
    rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
    ck_ok(rt_actor_create(&counter, &no_cpu, NULL, 0, &a.counter));
    ck_ok(rt_put("from rank 0", 11, &a.object));
    char *r = run(calls_from_afar, &o, &a, sizeof a);
    ck_ran_on(r, "test/fake/v100x4 "); /* then its GPU */
    ck_assert_msg(strstr(r, " 1 1 5 test/fake/"), "%s", r);
    ck_assert_msg(strstr(r, " from rank 0"), "%s", r);
    rt_free(r);
    /* The actor counted once; the object is still the application's. */
    int by = 1;
    rt_ref ref;
    ck_ok(rt_actor_call(a.counter, counter_add, &by, sizeof by, &ref));
    ck_ok(rt_get(ref, (void **)&r, NULL, 60000));
    ck_assert_int_eq(atoi(r), 6);
    rt_free(r);
    ck_ok(rt_release(a.object));
    ck_ok(rt_actor_kill(a.counter));
}
END_TEST

/* A task on another rank that dies while rank 0 makes its call: it is
 * reported dead, and the rank's next tasks still make calls. */
START_TEST(test_remote_caller_dies)
{
    rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
    rt_ref r;
    ck_ok(rt_remote(makes_work_and_dies, &o, NULL, 0, &r));
    ck_assert_int_eq(rt_get(r, NULL, NULL, 60000), RT_EWORKERDIED);
    /* Its child on its own rank, whose CPU it lends while it waits. */
    afar_args a = {.child_type = RT_ACCEL_NVIDIA_H100};
    rt_opts no_cpu = RT_OPTS_INIT;
    no_cpu.num_cpus = 0;
    static const rt_actor_class counter = {"counter", counter_init, counter_fini};
    ck_ok(rt_actor_create(&counter, &no_cpu, NULL, 0, &a.counter));
    ck_ok(rt_put("still here", 10, &a.object));
    char *s = run(calls_from_afar, &o, &a, sizeof a);
    ck_assert_msg(strstr(s, " 1 1 5 test/fake/") && strstr(s, " still here"), "%s", s);
    rt_free(s);
    ck_ok(rt_release(a.object));
    ck_ok(rt_actor_kill(a.counter));
}
END_TEST

/* Label selectors pick ranks: by the built-in labels (rank,
 * accelerator-type, hostname) and by each rank's RTASK_LABELS (machine=,
 * set by mk/check-mpi); a selector no rank matches fails at once. */
/* The machine it ran on and RT_ENV_TEST ("-": unset). */
static int env_where(const void *arg, size_t len, rt_result *res)
{
    char buf[512];
    const char *root = getenv("RTASK_SYSFS_ROOT"), *v = getenv("RT_ENV_TEST");
    (void)arg, (void)len;
    snprintf(buf, sizeof buf, "%s %s", root ? root : "/", v ? v : "-");
    return rt_result_set(res, buf, strlen(buf) + 1);
}

/* env_vars go with a task to the rank that runs it, and are that task's
 * alone there too. */
START_TEST(test_env_vars_on_another_rank)
{
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = "machine=h100x8";
    o.name = "with_vars";
    o.env_vars = "RT_ENV_TEST=set\nRT_ENV_OTHER=1";
    char *r = run(env_where, &o, NULL, 0);
    ck_assert_str_eq(r, "test/fake/h100x8 set");
    rt_free(r);
    o.env_vars = NULL;
    r = run(env_where, &o, NULL, 0);
    ck_assert_str_eq(r, "test/fake/h100x8 -");
    rt_free(r);
}
END_TEST

/* A task on another rank creates a detached, named counter (with its
 * constructor and destructor, found on rank 0 by their places) and adds
 * 5 to it. */
static int make_detached_counter(const void *arg, size_t len, rt_result *res)
{
    static const rt_actor_class counter = {"counter", counter_init, counter_fini};
    rt_opts o = RT_OPTS_INIT;
    o.name = "afar";
    o.detached = 1;
    rt_actor a;
    rt_ref ref;
    int by = 5;
    void *v;
    (void)arg, (void)len;
    if (rt_actor_create(&counter, &o, NULL, 0, &a) < 0 ||
        rt_actor_call(a, counter_add, &by, sizeof by, &ref) < 0 ||
        rt_get(ref, &v, NULL, 60000) < 0)
        return 1;
    rt_free(v);
    return rt_result_set(res, &a, sizeof a);
}

/* Makes the file at arg (a path), then up to a minute until cancelled. */
static int until_cancelled(const void *arg, size_t len, rt_result *res)
{
    char path[256];
    (void)res;
    snprintf(path, sizeof path, "%.*s", (int)len, (const char *)arg);
    fclose(fopen(path, "w"));
    for (int i = 0; i < 60000 && !rt_cancelled(); i++)
        usleep(1000);
    return 0;
}

/* Submits until_cancelled (its arg passed on) on the h100x8 rank and
 * waits for it. */
static int waits_for_child(const void *arg, size_t len, rt_result *res)
{
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = "machine=h100x8";
    rt_ref child;
    (void)res;
    return rt_remote(until_cancelled, &o, arg, len, &child) < 0 ||
           rt_get(child, NULL, NULL, RT_FOREVER) != RT_ECANCELLED;
}

/* Ray's recursive cancel across ranks: the child that a task on another
 * rank submitted is cancelled with it, so the waiting parent ends. */
START_TEST(test_cancel_reaches_children_on_other_ranks)
{
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = "machine=h100x8";
    rt_ref parent;
    char path[64];
    snprintf(path, sizeof path, "/tmp/rtask-mpi-child-%d", (int)getpid());
    unlink(path);
    ck_ok(rt_remote(waits_for_child, &o, path, strlen(path), &parent));
    for (int i = 0; i < 6000 && access(path, F_OK) < 0; i++)
        usleep(10000); /* until the child runs */
    unlink(path);
    ck_ok(rt_cancel(parent, 0));
    ck_assert_int_eq(rt_get(parent, NULL, NULL, 30000), RT_ECANCELLED);
}
END_TEST

/* Actors that tasks on other ranks create, and names: the application
 * finds it by its name once the task is over. */
START_TEST(test_actor_made_on_another_rank)
{
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = "machine=h100x8";
    rt_actor *made = (rt_actor *)run(make_detached_counter, &o, NULL, 0);
    rt_actor found;
    ck_ok(rt_actor_get("afar", &found));
    ck_assert_uint_eq(found.id, made->id);
    rt_free(made);
    int by = 1;
    rt_ref ref;
    ck_ok(rt_actor_call(found, counter_add, &by, sizeof by, &ref));
    char *r;
    ck_ok(rt_get(ref, (void **)&r, NULL, 60000));
    ck_assert_msg(strncmp(r, "6 ", 2) == 0, "%s", r);
    rt_free(r);
    ck_ok(rt_actor_kill(found));
}
END_TEST

START_TEST(test_labels_pick_ranks)
{
    static const struct {
        const char *selector, *machine;
    } cases[] = {
        {"machine=h100x8", "test/fake/h100x8"},
        {"machine=in(v100x4,none),accelerator-type=V100", "test/fake/v100x4"},
        {"accelerator-type=!in(V100),machine=!none", "test/fake/h100x8"},
        {"rank=1", NULL}, /* trio: v100x4; pair: h100x8 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rt_opts o = RT_OPTS_INIT;
        o.label_selector = cases[i].selector;
        char *r = run(where, &o, NULL, 0);
        const char *want = cases[i].machine ? cases[i].machine
                           : trio ? "test/fake/v100x4" : "test/fake/h100x8";
        ck_ran_on(r, want);
        rt_free(r);
    }
    rt_opts o = RT_OPTS_INIT;
    o.num_cpus = 0;
    o.label_selector = "machine=h100x8";
    ck_plain_actor_on(&o, "test/fake/h100x8");
    rt_ref ref;
    o.label_selector = "machine=tpu-v4";
    ck_assert_int_eq(rt_remote(where, &o, NULL, 0, &ref), RT_EINFEASIBLE);
    o.label_selector = "machine=h100x8,rank=0";
    ck_assert_int_eq(rt_remote(where, &o, NULL, 0, &ref), RT_EINFEASIBLE);
}
END_TEST

/* Internal, for this test: the payload bytes rank 0 received. */
struct rt__runtime;
struct rt__runtime *rt__runtime_here(void);
uint64_t rt__call_payload_in(struct rt__runtime *rt, uint64_t *messages);

static sum_seen get_seen(rt_ref ref)
{
    sum_seen *s, out;
    ck_ok(rt_get(ref, (void **)&s, NULL, 60000));
    out = *s;
    rt_free(s);
    return out;
}

/* The sum of n bytes made by bytes(), each plus add. */
static uint64_t bytes_sum(size_t n, unsigned add)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (unsigned char)(i + add);
    return sum;
}

/* A graph over 3 ranks whose objects cross ranks: each large result
 * stays on the rank that made it, tasks on other ranks pull it from
 * there, and rank 0 receives none of their bytes; a task free to go
 * anywhere goes where its object is; rank 0 pulls what it reads, and a
 * task on rank 0 gets the bytes too. */
START_TEST(test_objects_stay_where_made)
{
    size_t big = ((size_t)9 << 20) + 4097; /* pulled in pieces, the last short */
    rt_opts on0 = RT_OPTS_INIT, on1 = RT_OPTS_INIT, on2 = RT_OPTS_INIT;
    on0.label_selector = "rank=0";
    on1.label_selector = "rank=1";
    on2.label_selector = "rank=2";
    uint64_t before = rt__call_payload_in(rt__runtime_here(), NULL);
    rt_ref a, b, back, near, here;
    ck_ok(rt_remote(bytes, &on1, &big, sizeof big, &a));
    ck_ok(rt_remote_args(plus_one, &on2, &RT_ARG_REF(a), 1, &b));
    ck_ok(rt_remote_args(sum_args, &on1, &RT_ARG_REF(b), 1, &back));
    ck_ok(rt_remote_args(sum_args, NULL, &RT_ARG_REF(b), 1, &near));
    sum_seen s = get_seen(back);
    ck_assert_uint_eq(s.len, big);
    ck_assert_uint_eq(s.sum, bytes_sum(big, 1));
    ck_assert_int_eq(s.node, 1);
    ck_assert_int_eq(get_seen(near).node, 2);
    uint64_t through = rt__call_payload_in(rt__runtime_here(), NULL) - before;
    ck_assert_msg(through < 4096, "%llu bytes came through rank 0",
                  (unsigned long long)through);
    ck_ok(rt_remote_args(sum_args, &on0, &RT_ARG_REF(a), 1, &here));
    s = get_seen(here);
    ck_assert_int_eq(s.node, 0);
    ck_assert_uint_eq(s.sum, bytes_sum(big, 0));
    static const rt_actor_class plain = {"plain", NULL, NULL};
    rt_actor actor;
    rt_ref called;
    on0.num_cpus = 0;
    ck_ok(rt_actor_create(&plain, &on0, NULL, 0, &actor));
    ck_ok(rt_actor_call_args(actor, sum_method, &RT_ARG_REF(b), 1, &called));
    s = get_seen(called);
    ck_assert_int_eq(s.node, 0);
    ck_assert_uint_eq(s.sum, bytes_sum(big, 1));
    ck_ok(rt_actor_kill(actor));
    unsigned char *data;
    size_t len;
    ck_ok(rt_get(b, (void **)&data, &len, 60000));
    ck_assert_uint_eq(len, big);
    ck_assert_int_eq(data[0], 1);
    ck_assert_int_eq(data[big - 1], (unsigned char)big);
    rt_free(data);
    ck_assert(rt__call_payload_in(rt__runtime_here(), NULL) - before >= 2 * big);
    ck_ok(rt_release(a));
}
END_TEST

/* Puts 100 bytes and 1 MiB (i + 7 each), and returns both handles. */
static int puts_two(const void *arg, size_t len, rt_result *res)
{
    size_t big = (size_t)1 << 20;
    unsigned char *data = malloc(big);
    rt_ref refs[2];
    (void)arg, (void)len;
    if (!data)
        return 1;
    for (size_t i = 0; i < big; i++)
        data[i] = (unsigned char)(i + 7);
    int failed = rt_put(data, 100, &refs[0]) < 0 || rt_put(data, big, &refs[1]) < 0;
    free(data);
    return failed ? 1 : rt_result_set(res, refs, sizeof refs);
}

/* What a task on rank 1 puts stays on rank 1, small or large: tasks on
 * rank 2 pull it from there and tasks on rank 1 take it where it is, and
 * rank 0 receives none of its bytes, until the application reads it. */
START_TEST(test_puts_stay_where_made)
{
    size_t big = (size_t)1 << 20, n;
    rt_opts on1 = RT_OPTS_INIT, on2 = RT_OPTS_INIT;
    on1.label_selector = "rank=1";
    on2.label_selector = "rank=2";
    uint64_t before = rt__call_payload_in(rt__runtime_here(), NULL);
    rt_ref maker, *made, there, on_one;
    ck_ok(rt_remote(puts_two, &on1, NULL, 0, &maker));
    ck_ok(rt_get(maker, (void **)&made, &n, 60000));
    ck_assert_uint_eq(n, 2 * sizeof(rt_ref));
    rt_ref small = made[0], large = made[1];
    rt_free(made);
    rt_arg both[2] = {RT_ARG_REF(small), RT_ARG_REF(large)};
    ck_ok(rt_remote_args(sum_args, &on2, both, 2, &there));
    ck_ok(rt_remote_args(sum_args, &on1, both, 2, &on_one));
    uint64_t sum = bytes_sum(100, 7) + bytes_sum(big, 7);
    sum_seen s = get_seen(there);
    ck_assert_int_eq(s.node, 2);
    ck_assert_uint_eq(s.len, 100 + big);
    ck_assert_uint_eq(s.sum, sum);
    s = get_seen(on_one);
    ck_assert_int_eq(s.node, 1);
    ck_assert_uint_eq(s.sum, sum);
    uint64_t through = rt__call_payload_in(rt__runtime_here(), NULL) - before;
    ck_assert_msg(through < 4096, "%llu bytes came through rank 0",
                  (unsigned long long)through);
    unsigned char *data;
    ck_ok(rt_get(small, (void **)&data, &n, 60000));
    ck_assert_uint_eq(n, 100);
    ck_assert_int_eq(data[0], 7);
    ck_assert_int_eq(data[99], 106);
    rt_free(data);
    ck_ok(rt_release(large));
}
END_TEST

/* The sum of an object's bytes, read with rt_get() (keep 0) or
 * rt_get_view(); its length in *len.  UINT64_MAX when it cannot be read. */
static uint64_t sum_of(rt_ref ref, int keep, size_t *len)
{
    uint64_t sum = 0;
    rt_view view;
    void *data = NULL;
    int rc = keep ? rt_get_view(ref, &view, 60000) : rt_get(ref, &data, len, 60000);
    if (rc != 0)
        return UINT64_MAX;
    if (keep) {
        data = (void *)view.data;
        *len = view.len;
    }
    for (size_t i = 0; i < *len; i++)
        sum += ((const unsigned char *)data)[i];
    if (keep)
        rc = rt_view_release(&view) || rt_release(ref);
    else
        rt_free(data);
    return rc ? UINT64_MAX : sum;
}

/* Reads back what it puts (100 bytes with rt_get(), 1 MiB with
 * rt_get_view()), and the 1 MiB result of a task it submits to rank
 * `arg`: their sums and lengths, three pairs. */
static int reads_where_held(const void *arg, size_t len, rt_result *res)
{
    size_t big = (size_t)1 << 20;
    unsigned char *data = malloc(big);
    uint64_t out[6];
    rt_ref small, large, made;
    rt_opts there = RT_OPTS_INIT;
    char selector[32];
    if (len != sizeof(int) || !data)
        return 1;
    for (size_t i = 0; i < big; i++)
        data[i] = (unsigned char)(i + 7);
    snprintf(selector, sizeof selector, "rank=%d", *(const int *)arg);
    there.label_selector = selector;
    int failed = rt_put(data, 100, &small) < 0 || rt_put(data, big, &large) < 0 ||
                 rt_remote(bytes, &there, &big, sizeof big, &made) < 0;
    free(data);
    size_t n[3] = {0};
    out[0] = failed ? UINT64_MAX : sum_of(small, 0, &n[0]);
    out[2] = failed ? UINT64_MAX : sum_of(large, 1, &n[1]);
    out[4] = failed ? UINT64_MAX : sum_of(made, 0, &n[2]);
    out[1] = n[0], out[3] = n[1], out[5] = n[2];
    return rt_result_set(res, out, sizeof out);
}

/* A task on rank 1 that reads with rt_get() what it put, and the result
 * of a task on rank 2, takes the bytes from where they are (its own
 * rank's store, or rank 2, rank to rank): rank 0 says where, and receives
 * none of them; and the same from rank 2, with a result made on rank 1. */
START_TEST(test_gets_in_tasks_take_bytes_where_they_are)
{
    size_t big = (size_t)1 << 20;
    uint64_t before = rt__call_payload_in(rt__runtime_here(), NULL);
    for (int reader = 1; reader <= 2; reader++) {
        rt_opts on = RT_OPTS_INIT;
        int maker = 3 - reader;
        on.label_selector = reader == 1 ? "rank=1" : "rank=2";
        rt_ref ref;
        uint64_t *out;
        ck_ok(rt_remote(reads_where_held, &on, &maker, sizeof maker, &ref));
        ck_ok(rt_get(ref, (void **)&out, NULL, 60000));
        ck_assert_uint_eq(out[0], bytes_sum(100, 7));
        ck_assert_uint_eq(out[1], 100);
        ck_assert_uint_eq(out[2], bytes_sum(big, 7));
        ck_assert_uint_eq(out[3], big);
        ck_assert_uint_eq(out[4], bytes_sum(big, 0));
        ck_assert_uint_eq(out[5], big);
        rt_free(out);
    }
    uint64_t through = rt__call_payload_in(rt__runtime_here(), NULL) - before;
    ck_assert_msg(through < 8192, "%llu bytes came through rank 0",
                  (unsigned long long)through);
}
END_TEST

/* Its node, its process and its argument (an int, or 0). */
static int whoami(const void *arg, size_t len, rt_result *res)
{
    int out[3] = {-1, (int)getpid(), 0};
    rt_context ctx;
    if (rt_get_context(&ctx) == 0)
        out[0] = ctx.node;
    if (len == sizeof(int))
        memcpy(&out[2], arg, sizeof(int));
    return rt_result_set(res, out, sizeof out);
}

static int returns_3(const void *arg, size_t len, rt_result *res)
{
    (void)arg, (void)len, (void)res;
    return 3;
}

/* Whether ref's whoami() ran on node, in process pid, with argument i
 * (read with no time limit: a wait that may run it). */
static int ran_as(rt_ref ref, int node, int pid, int i)
{
    int *out;
    size_t n;
    if (rt_get(ref, (void **)&out, &n, RT_FOREVER) != 0)
        return 0;
    int ok = n == 3 * sizeof(int) && (node < 0 || out[0] == node) && (pid < 0 || out[1] == pid) &&
             out[2] == i;
    rt_free(out);
    return ok;
}

/* arg: n.  n synchronous calls of whoami() with default options: how
 * many ran on its node, inside its own wait (its process). */
static int calls_of_its_own(const void *arg, size_t len, rt_result *res)
{
    int n, here = 0;
    rt_context ctx;
    if (len != sizeof n || rt_get_context(&ctx) != 0)
        return 1;
    memcpy(&n, arg, sizeof n);
    for (int i = 0; i < n; i++) {
        rt_ref ref;
        here += rt_remote(whoami, NULL, &i, sizeof i, &ref) == 0 &&
                ran_as(ref, ctx.node, (int)getpid(), i);
    }
    return rt_result_set(res, &here, sizeof here);
}

struct reader {
    rt_ref ref;
    int node, i, ok;
};

static void *read_in_thread(void *arg)
{
    struct reader *r = arg;
    r->ok = ran_as(r->ref, r->node, -1, r->i);
    return NULL;
}

/* arg: n.  As calls_of_its_own(), but each handle checked for the shape
 * of its rank's named ones (node/callmsg.h), and every tenth read by a
 * thread started at once (the task is then handed to rank 0, which
 * places it anywhere): {ran right, named}. */
static int named_of_its_own(const void *arg, size_t len, rt_result *res)
{
    int n, counts[2] = {0, 0};
    rt_context ctx;
    if (len != sizeof n || rt_get_context(&ctx) != 0)
        return 1;
    memcpy(&n, arg, sizeof n);
    for (int i = 0; i < n; i++) {
        struct reader r = {{0}, -1, i, 0}; /* another thread's read: rank 0 places it */
        pthread_t th;
        if (rt_remote(whoami, NULL, &i, sizeof i, &r.ref) != 0)
            return 2;
        counts[1] += rt__id_made_on(r.ref.id, ctx.node);
        if (i % 10 == 9 && pthread_create(&th, NULL, read_in_thread, &r) == 0)
            pthread_join(th, NULL);
        else
            r.ok = ran_as(r.ref, ctx.node, (int)getpid(), i); /* inside the wait */
        counts[0] += r.ok;
    }
    return rt_result_set(res, counts, sizeof counts);
}

/* Puts 3 bytes and reads them back: 0 when it could. */
static int puts_inside(const void *arg, size_t len, rt_result *res)
{
    rt_ref ref;
    char *back = NULL;
    (void)arg, (void)len, (void)res;
    int ok = rt_put("abc", 3, &ref) == 0 && rt_get(ref, (void **)&back, NULL, 60000) == 0 &&
             memcmp(back, "abc", 3) == 0;
    rt_free(back);
    return ok ? 0 : 1;
}

/* Runs until rt_cancel() asks it to stop (5 s at most): 0 when asked. */
static int until_asked_to_stop(const void *arg, size_t len, rt_result *res)
{
    (void)arg, (void)len, (void)res;
    for (int i = 0; i < 500 && !rt_cancelled(); i++)
        usleep(10000);
    return rt_cancelled() ? 0 : 1;
}

static void *cancel_soon(void *ref)
{
    usleep(100000);
    return rt_cancel(*(rt_ref *)ref, 0) == 0 ? ref : NULL;
}

/* The ways a task's task leaves its rank's hands, each checked: a bit
 * for each that went as it should. */
static int placed_then_handed(const void *arg, size_t len, rt_result *res)
{
    rt_context ctx;
    rt_ref ref, kept, refs[1];
    rt_opts here = RT_OPTS_INIT;
    int bits = 0, three = 3, seven = 7, *got;
    (void)arg, (void)len;
    if (rt_get_context(&ctx) != 0 || rt_put("kept", 4, &kept) != 0)
        return 1;
    /* It fails: its error, as rank 0 gives it. */
    if (rt_remote(returns_3, NULL, NULL, 0, &ref) == 0 &&
        rt_get(ref, NULL, NULL, RT_FOREVER) == RT_ETASK && strstr(rt_last_error(), "returned 3"))
        bits |= 1;
    /* Not waited for at once: rank 0 gets it, and it runs. */
    if (rt_remote(whoami, NULL, &seven, sizeof seven, &ref) == 0) {
        usleep(20000);
        bits |= ran_as(ref, -1, -1, 7) << 1;
    }
    /* Waited for with rt_wait(). */
    size_t ready = 0;
    if (rt_remote(whoami, NULL, &seven, sizeof seven, &refs[0]) == 0 &&
        rt_wait(refs, 1, 1, 60000, &ready) == 0 && ready == 1)
        bits |= ran_as(refs[0], -1, -1, 7) << 2;
    /* A task inside the wait that makes its own calls, inside its wait. */
    if (rt_remote(calls_of_its_own, NULL, &three, sizeof three, &ref) == 0 &&
        rt_get(ref, (void **)&got, NULL, RT_FOREVER) == 0) {
        bits |= (*got == 3) << 3;
        rt_free(got);
    }
    /* One that makes handles: the parent's own live on. */
    if (rt_remote(puts_inside, NULL, NULL, 0, &ref) == 0 &&
        rt_get(ref, NULL, NULL, RT_FOREVER) == 0 &&
        rt_get(kept, (void **)&got, NULL, 60000) == 0) {
        bits |= (memcmp(got, "kept", 4) == 0) << 4;
        rt_free(got);
    }
    /* Options this rank does not place: rank 0 does. */
    here.label_selector = ctx.node == 1 ? "rank=1" : "rank=2";
    if (rt_remote(whoami, &here, &seven, sizeof seven, &ref) == 0)
        bits |= ran_as(ref, ctx.node, -1, 7) << 5;
    /* Cancelled by another thread while its parent waits for it. */
    pthread_t th;
    void *cancelled = NULL;
    if (rt_remote(until_asked_to_stop, NULL, NULL, 0, &ref) == 0 &&
        pthread_create(&th, NULL, cancel_soon, &ref) == 0) {
        int rc = rt_get(ref, NULL, NULL, RT_FOREVER);
        pthread_join(th, &cancelled);
        bits |= (rc == RT_ECANCELLED && cancelled) << 6;
    }
    return rt_result_set(res, &bits, sizeof bits);
}

/* Local first: a task on rank 1 whose tasks ask for CPUs alone has them
 * placed by rank 1, each run inside its wait, and rank 0 hears nothing of
 * them (its bridge counts what it received); whatever else its tasks
 * need goes to rank 0 and comes right.  (On a loaded machine a thread
 * may be kept from its GET past the time a task waits for it, which then
 * goes to rank 0: a few may.) */
START_TEST(test_nested_calls_stay_on_their_rank)
{
    rt_opts on1 = RT_OPTS_INIT;
    on1.label_selector = "rank=1";
    uint64_t messages[3];
    int counts[2] = {0, 100}, here[2];
    for (int i = 0; i < 2; i++) {
        rt_ref ref;
        int *got;
        (void)rt__call_payload_in(rt__runtime_here(), &messages[i]);
        ck_ok(rt_remote(calls_of_its_own, &on1, &counts[i], sizeof counts[i], &ref));
        ck_ok(rt_get(ref, (void **)&got, NULL, 60000));
        here[i] = *got;
        rt_free(got);
        (void)rt__call_payload_in(rt__runtime_here(), &messages[i + 1]);
    }
    ck_assert_int_eq(here[0], 0);
    ck_assert_msg(here[1] >= 90, "%d of 100 ran inside their caller's wait", here[1]);
    uint64_t none = messages[1] - messages[0], hundred = messages[2] - messages[1];
    ck_assert_msg(hundred <= none + 2 + 8 * (uint64_t)(100 - here[1]),
                  "rank 0 received %llu messages for a task of 100 calls (%d placed on its "
                  "rank), %llu for one of none", (unsigned long long)hundred, here[1],
                  (unsigned long long)none);
    rt_ref ref;
    int *bits;
    ck_ok(rt_remote(placed_then_handed, &on1, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&bits, NULL, 60000));
    ck_assert_int_eq(*bits, 0x7f);
    rt_free(bits);
}
END_TEST

/* A task's tasks that its rank placed itself go named after the first
 * (the worker makes their handles, of its rank's shape, and waits for no
 * reply), and come right, also to a thread of the task that reads one as
 * soon as it is made (its rank reads what was sent before the thread's
 * connection). */
/* fn(n) run on rank 1: its result (rt_free() it), and its handle's id in
 * *id. */
static int *on_rank_1(rt_fn fn, int n, uint64_t *id)
{
    rt_opts on1 = RT_OPTS_INIT;
    on1.label_selector = "rank=1";
    rt_ref ref;
    int *got;
    ck_ok(rt_remote(fn, &on1, &n, sizeof n, &ref));
    *id = ref.id;
    ck_ok(rt_get(ref, (void **)&got, NULL, 60000));
    return got;
}

START_TEST(test_named_calls_on_their_rank)
{
    int n = 100;
    uint64_t id;
    int *counts = on_rank_1(named_of_its_own, n, &id);
    ck_assert_int_eq(counts[0], n);
    ck_assert_int_ge(counts[1], n - 10); /* a few may go before the mark */
    rt_free(counts);
}
END_TEST

/* The "tid" (lane) of line's span, or -1. */
static long long lane_of(const char *line)
{
    const char *tid = strstr(line, "\"tid\":");
    return tid ? atoll(tid + 6) : -1;
}

/* With a timeline kept (RTASK_TIMELINE on every rank), the tasks a rank
 * placed itself are in rank 0's: on their rank, in their caller's lane,
 * under their own handles.  (Those handed to rank 0 are in it as any
 * task: each of the caller's tasks is there once.) */
START_TEST(test_tasks_placed_on_a_rank_are_in_the_timeline)
{
    int n = 20;
    uint64_t parent;
    int *got = on_rank_1(calls_of_its_own, n, &parent);
    int placed = *got;
    rt_free(got);
    ck_assert_int_ge(placed, n / 2);
    char path[] = "/tmp/rtask-timeline-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_ok(rt_timeline(path));
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[4096], id[64];
    long long parent_lane = -1, lanes[64];
    int children = 0, beside = 0;
    snprintf(id, sizeof id, "\"id\":%llu,", (unsigned long long)parent);
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, "\"id\":");
        if (!strstr(line, "\"ph\":\"X\"") || !at)
            continue;
        if (strstr(line, id))
            parent_lane = lane_of(line);
        if ((strtoull(at + 5, NULL, 10) & RT__ID_FOREIGN) && children < 64)
            lanes[children++] = strstr(line, "\"pid\":1,") ? lane_of(line) : -1;
    }
    fclose(f);
    unlink(path);
    for (int i = 0; i < children; i++)
        beside += parent_lane >= 0 && lanes[i] == parent_lane;
    ck_assert_msg(children == n, "%d children in the timeline, %d placed on rank 1", children, placed);
    ck_assert_msg(beside >= placed, "%d of the %d placed on rank 1 are in their caller's lane "
                  "(%lld)", beside, placed, parent_lane);
}
END_TEST

/* Waits, with a time limit (so that its rank hands it to rank 0), for a
 * task of its own that runs until asked to stop. */
static int waits_a_while(const void *arg, size_t len, rt_result *res)
{
    rt_ref ref;
    (void)arg, (void)len, (void)res;
    return rt_remote(until_asked_to_stop, NULL, NULL, 0, &ref) == 0 &&
                   rt_get(ref, NULL, NULL, 60000) == 0 ? 0 : 1;
}

/* arg: a mode byte, then a path.  Waits for a task of its own that runs
 * until asked to stop (mode 0), or for one that waits a while for such a
 * task of its own (1), and writes there what its wait returned and how
 * long it took. */
static int waits_for_stopping_child(const void *arg, size_t len, rt_result *res)
{
    char path[256];
    rt_ref ref;
    (void)res;
    if (len < 2)
        return 1;
    rt_fn child = *(const char *)arg ? waits_a_while : until_asked_to_stop;
    snprintf(path, sizeof path, "%.*s", (int)len - 1, (const char *)arg + 1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = rt_remote(child, NULL, NULL, 0, &ref);
    if (rc == 0)
        rc = rt_get(ref, NULL, NULL, RT_FOREVER);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%d %ld\n", rc, ms);
        fclose(f);
    }
    return 0;
}

/* rt_cancel() of a task on rank 1 reaches the task it waits for, which
 * rank 1 placed itself (inside the wait): asked to stop, it does, and its
 * parent's wait says RT_ECANCELLED, as for any child of a cancelled task;
 * and so does a task that such a task submitted and rank 1 handed to
 * rank 0 (it waited with a time limit). */
/* Cancels a task on rank 1 that waits as waits_for_stopping_child() does
 * in mode, 300 ms after its start: what its wait returned, and after how
 * many ms (-1: it wrote nothing). */
static long cancel_case(char mode, int *rc)
{
    char arg[64] = {mode}, *path = arg + 1;
    strcpy(path, "/tmp/rtask-mpi-cancel-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    rt_opts on1 = RT_OPTS_INIT;
    on1.label_selector = "rank=1";
    rt_ref ref;
    ck_ok(rt_remote(waits_for_stopping_child, &on1, arg, 1 + strlen(path), &ref));
    usleep(300000);
    ck_ok(rt_cancel(ref, 0));
    ck_assert_int_eq(rt_get(ref, NULL, NULL, 60000), RT_ECANCELLED);
    long ms = -1;
    for (int i = 0; i < 200 && ms < 0; i++) {
        FILE *f = fopen(path, "r");
        if (f && fscanf(f, "%d %ld", rc, &ms) != 2)
            ms = -1;
        if (f)
            fclose(f);
        if (ms < 0)
            usleep(50000);
    }
    unlink(path);
    return ms;
}

START_TEST(test_cancel_reaches_a_task_placed_on_its_rank)
{
    for (char mode = 0; mode < 2; mode++) {
        int rc = 0;
        long ms = cancel_case(mode, &rc);
        ck_assert_int_eq(rc, RT_ECANCELLED);
        ck_assert_msg(ms >= 0 && ms < 4000, "mode %d: its child stopped after %ld ms", mode, ms);
    }
}
END_TEST

/* A worker's door to its rank (white box): its one datagram socket. */
static int door_of_worker(void)
{
    for (int fd = 3; fd < 1024; fd++) {
        int type;
        socklen_t n = sizeof type;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &n) == 0 && type == SOCK_DGRAM)
            return fd;
    }
    return -1;
}

/* A connection through the door, opened as a task's thread's first call
 * opens one; -1 when it cannot be. */
static int connect_through_door(void)
{
    int door = door_of_worker();
    return door < 0 ? -1 : rt__client_door_connect(door);
}

/* Sends frame h (with payload, or the descriptor *fd, which goes) on a
 * connection of its own and waits 30 s at most for its rank to close it:
 * 1 when it did, 0 when not, -1 when the frame could not be sent. */
static int closed_after(const rt__hdr *h, const void *payload, const int *fd)
{
    int closed = -1, conn = connect_through_door();
    if (conn < 0)
        return -1;
    rt__chan chan;
    rt__chan_init(&chan, conn);
    if (rt__chan_put(&chan, h, payload, fd) == 0 && rt__chan_flush(&chan) == 0) {
        struct pollfd pf = {.fd = conn, .events = POLLIN};
        char byte;
        closed = poll(&pf, 1, 30000) == 1 && read(conn, &byte, 1) == 0;
    }
    rt__chan_close(&chan);
    return closed;
}

/* Sends a YIELD whose 100 000 bytes are said to be in a pipe, not a
 * memfd: closed_after()'s answer. */
static int forges_an_unmappable_frame(const void *arg, size_t len, rt_result *res)
{
    int p[2], closed = -1;
    (void)arg, (void)len;
    if (pipe(p) == 0) {
        rt__hdr h = {.type = RT__CALL_YIELD, .nfds = 1, .len = 100000};
        close(p[1]);
        closed = closed_after(&h, NULL, &p[0]);
    }
    return rt_result_set(res, &closed, sizeof closed);
}

/* Sends each frame only a tunnel makes (a SUBMIT with a handle, a
 * PUT_HELD, a HELD_AT, an INSIDE), each on a connection of its own: how
 * many its rank closed. */
static int forges_the_tunnels_frames(const void *arg, size_t len, rt_result *res)
{
    uint64_t words[4] = {0};
    rt__hdr frames[4] = {
        {.type = RT__CALL_SUBMIT, .id = RT__ID_FOREIGN | 1, .len = sizeof words},
        {.type = RT__CALL_PUT_HELD, .len = sizeof(rt__callmsg_held)},
        {.type = RT__CALL_HELD_AT, .len = sizeof(rt__callmsg_held_at)},
        {.type = RT__CALL_INSIDE, .id = RT__ID_FOREIGN | 1}};
    int closed = 0;
    (void)arg, (void)len;
    for (int i = 0; i < 4; i++)
        closed += closed_after(&frames[i], words, NULL) == 1;
    return rt_result_set(res, &closed, sizeof closed);
}

/* A task on rank 1 sends its rank a frame whose bytes no memfd holds: its
 * rank closes that connection, and the job goes on (the frame is never
 * handed to MPI, whose thread would take rank 0 for unreachable); and so
 * for each frame that only a rank's tunnel makes. */
START_TEST(test_unmappable_frame_ends_its_connection_only)
{
    rt_opts on1 = RT_OPTS_INIT;
    on1.label_selector = "rank=1";
    int *closed;
    rt_ref ref;
    ck_ok(rt_remote(forges_an_unmappable_frame, &on1, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&closed, NULL, 60000));
    ck_assert_int_eq(*closed, 1);
    rt_free(closed);
    ck_ok(rt_remote(forges_the_tunnels_frames, &on1, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&closed, NULL, 60000));
    ck_assert_int_eq(*closed, 4);
    rt_free(closed);
    char *r = run(where, &on1, NULL, 0);
    ck_ran_on(r, "test/fake/v100x4");
    rt_free(r);
}
END_TEST

/* Where a task in bundle k of pg runs. */
static char *run_in(rt_pg pg, int k)
{
    rt_opts o = RT_OPTS_INIT;
    o.placement_group = pg;
    o.bundle_index = k;
    o.num_cpus = 0.1;
    return run(where, &o, NULL, 0);
}

static void ck_bundle_on(rt_pg pg, int k, const char *machine)
{
    char *r = run_in(pg, k);
    ck_ran_on(r, machine);
    rt_free(r);
}

/* Placement groups over the ranks' machines (pair: v100x4, h100x8; trio:
 * none, v100x4, h100x8): each strategy, a bundle's labels, a group no
 * placement could hold, an actor in a bundle on another rank ended by
 * the group's removal, and everything given back. */
START_TEST(test_groups_over_ranks)
{
    rt_bundle gpu = {.num_cpus = 0.1, .num_gpus = 1};
    rt_bundle two[2] = {gpu, gpu}, six[6] = {gpu, gpu, gpu, gpu, gpu, gpu};
    rt_bundle four[4] = {gpu, gpu, gpu, gpu};
    rt_pg spread, pack, labelled;
    ck_ok(rt_pg_create(two, 2, RT_PG_STRICT_SPREAD, &spread));
    ck_ok(rt_pg_wait(spread, 60000));
    ck_bundle_on(spread, 0, "test/fake/v100x4");
    ck_bundle_on(spread, 1, "test/fake/h100x8");
    ck_ok(rt_pg_create(six, 6, RT_PG_STRICT_PACK, &pack)); /* 8 H100s; 3 V100s free */
    ck_ok(rt_pg_wait(pack, 60000));
    for (int k = 0; k < 6; k += 5)
        ck_bundle_on(pack, k, "test/fake/h100x8");
    rt_pg pg;
    ck_assert_int_eq(rt_pg_create(four, 4, RT_PG_STRICT_SPREAD, &pg), RT_EINFEASIBLE);
    rt_bundle v100s = {.num_cpus = 0.1, .num_gpus = 2, .label_selector = "machine=v100x4"};
    ck_ok(rt_pg_create(&v100s, 1, RT_PG_PACK, &labelled));
    ck_ok(rt_pg_wait(labelled, 60000));
    ck_bundle_on(labelled, 0, "test/fake/v100x4");
    /* An actor in the H100 bundle of spread, on its rank, dies with it. */
    static const rt_actor_class plain = {"plain", NULL, NULL};
    rt_opts o = RT_OPTS_INIT;
    o.num_cpus = 0;
    o.placement_group = spread;
    o.bundle_index = 1;
    rt_actor a;
    rt_ref ref;
    char *r;
    ck_ok(rt_actor_create(&plain, &o, NULL, 0, &a));
    ck_ok(rt_actor_call(a, where_method, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&r, NULL, 60000));
    ck_assert_str_eq(r, "test/fake/h100x8");
    rt_free(r);
    ck_ok(rt_pg_remove(spread));
    int rc = rt_actor_call(a, where_method, NULL, 0, &ref);
    if (rc == 0)
        rc = rt_get(ref, NULL, NULL, 60000);
    ck_assert_int_eq(rc, RT_EACTORDIED);
    ck_ok(rt_pg_remove(pack));
    ck_ok(rt_pg_remove(labelled));
    /* Everything is back: 12 GPUs free once the actor's process ended. */
    double gpus = 0;
    for (int tries = 0; tries < 600 && gpus != 12; tries++) {
        rt_resource *list;
        size_t n;
        ck_ok(rt_available_resources(&list, &n));
        for (size_t i = 0; i < n; i++)
            if (list[i].node == -1 && strcmp(list[i].name, "GPU") == 0)
                gpus = list[i].amount;
        rt_free(list);
        usleep(100 * 1000);
    }
    ck_assert(gpus == 12);
}
END_TEST

/* Recursion on another rank: its tasks lend their CPUs there while they
 * wait, and what was queued behind them comes back to be sent elsewhere,
 * so that fib(10) (177 tasks, 1 CPU each) ends on a rank of few CPUs;
 * and it still does when one of them dies with its children running. */
START_TEST(test_recursion_on_another_rank)
{
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = "rank=1";
    char arg[sizeof(uint64_t) + 64];
    uint64_t n = 10;
    memcpy(arg, &n, sizeof n);
    uint64_t *v = (uint64_t *)run(fib_on_rank_one, &o, arg, sizeof n);
    ck_assert_uint_eq(*v, 55);
    rt_free(v);
    /* Again, one of its tasks dying with its children running. */
    char *marker = arg + sizeof n;
    snprintf(marker, 64, "/tmp/rtask-mpi-fib-%d", (int)getpid());
    unlink(marker);
    v = (uint64_t *)run(fib_on_rank_one, &o, arg, sizeof n + strlen(marker) + 1);
    ck_assert_uint_eq(*v, 55);
    rt_free(v);
    struct stat st;
    ck_assert_int_eq(stat(marker, &st), 0); /* it did die once */
    unlink(marker);
}
END_TEST

/* Three results: 8 bytes, BIG_PART bytes of 0x5a (a large answer, which
 * a serving rank would keep were it one result) and "ok". */
#define BIG_PART ((size_t)300 * 1024)
static int three_results(const void *arg, size_t len, rt_result *res)
{
    (void)arg;
    (void)len;
    uint64_t eight = 8;
    char *big = malloc(BIG_PART);
    if (!big)
        return 1;
    memset(big, 0x5a, BIG_PART);
    int rc = rt_result_set(res, &eight, sizeof eight) ||
             rt_result_set_at(res, 1, big, BIG_PART) || rt_result_set_at(res, 2, "ok", 3);
    free(big);
    return rc;
}

/* On a rank: submit three_results anywhere and check each result. */
static int reads_three(const void *arg, size_t len, rt_result *res)
{
    (void)arg;
    (void)len;
    rt_opts o = RT_OPTS_INIT;
    o.num_returns = 3;
    rt_ref refs[3];
    void *data;
    size_t n;
    if (rt_remote_n(three_results, &o, NULL, 0, refs) < 0)
        return 10;
    if (rt_get(refs[2], &data, &n, 60000) < 0 || n != 3 || strcmp(data, "ok") != 0)
        return 11;
    rt_free(data);
    if (rt_get(refs[1], &data, &n, 60000) < 0 || n != BIG_PART ||
        ((unsigned char *)data)[BIG_PART - 1] != 0x5a)
        return 12;
    rt_free(data);
    return rt_release(refs[0]) < 0 ? 13 : rt_result_set(res, "fine", 5);
}

/* Several results made on rank 1 reach rank 0, each its own object, the
 * large one too; and a task there submits a task of several results. */
START_TEST(test_several_results_on_another_rank)
{
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = "rank=1";
    o.num_returns = 3;
    rt_ref refs[3];
    void *data;
    size_t n;
    ck_ok(rt_remote_n(three_results, &o, NULL, 0, refs));
    ck_ok(rt_get(refs[1], &data, &n, 60000));
    ck_assert_uint_eq(n, BIG_PART);
    ck_assert_uint_eq(((unsigned char *)data)[0], 0x5a);
    ck_assert_uint_eq(((unsigned char *)data)[BIG_PART - 1], 0x5a);
    rt_free(data);
    ck_ok(rt_get(refs[0], &data, &n, 60000));
    ck_assert_uint_eq(n, 8);
    ck_assert_uint_eq(*(uint64_t *)data, 8);
    rt_free(data);
    ck_ok(rt_release(refs[2]));
    o.num_returns = 1;
    char *r = run(reads_three, &o, NULL, 0);
    ck_assert_str_eq(r, "fine");
    rt_free(r);
}
END_TEST

START_TEST(test_cpu_task_on_rank_zero)
{
    char *r = run(where, NULL, NULL, 0);
    ck_ran_on(r, "test/fake/none");
    rt_free(r);
}
END_TEST

START_TEST(test_single_node)
{
    char *r = run(where, NULL, NULL, 0);
    ck_assert_ptr_nonnull(r);
    rt_free(r);
    rt_opts o = gpu_opts(1, NULL);
    rt_ref ref;
    ck_assert_int_eq(rt_remote(where, &o, NULL, 0, &ref), RT_EINFEASIBLE);
}
END_TEST

START_TEST(test_tpu_chips_on_rank_one)
{
    rt_opts o = RT_OPTS_INIT;
    o.resources = "TPU=2";
    char *r = run(tpu_where, &o, NULL, 0);
    ck_assert_str_eq(r, "test/fake/tpu-v4 0,1 1,2,1");
    rt_free(r);
    o.resources = "TPU=1";
    o.accelerator_type = RT_ACCEL_GOOGLE_TPU_V4;
    r = run(tpu_where, &o, NULL, 0);
    ck_assert_str_eq(r, "test/fake/tpu-v4 0 1,1,1");
    rt_free(r);
}
END_TEST

/* ---- many ranks: make check-mpi's job of 128 on one machine ------------- */

/* How many nodes the job has (rt_cluster_resources(): node -1 is the
 * sums, then each node's entries). */
static int job_nodes(void)
{
    rt_resource *r;
    size_t n;
    int most = -1;
    ck_ok(rt_cluster_resources(&r, &n));
    for (size_t i = 0; i < n; i++)
        most = r[i].node > most ? r[i].node : most;
    rt_free(r);
    const char *size = getenv("OMPI_COMM_WORLD_SIZE"); /* under mpirun */
    if (size)
        ck_assert_int_eq(most + 1, atoi(size));
    return most + 1;
}

/* The rank it runs on, as 8 bytes. */
static int rank_of(const void *arg, size_t len, rt_result *res)
{
    rt_context ctx;
    (void)arg, (void)len;
    uint64_t node = rt_get_context(&ctx) == 0 ? (uint64_t)ctx.node : UINT64_MAX;
    return rt_result_set(res, &node, sizeof node);
}

/* The sum of its arguments, each 8 bytes. */
static int sum_u64(const rt_value *args, size_t n, rt_result *res)
{
    uint64_t sum = 0, v;
    for (size_t i = 0; i < n; i++) {
        if (args[i].len != sizeof v)
            return 1;
        memcpy(&v, args[i].data, sizeof v);
        sum += v;
    }
    return rt_result_set(res, &sum, sizeof sum);
}

/* Options that pin a task to rank k by its "rank" label, written into
 * selector. */
static rt_opts on_rank(int k, char selector[32])
{
    snprintf(selector, 32, "rank=%d", k);
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = selector;
    o.num_cpus = 0.01;
    return o;
}

/* The 8 bytes that ref's task returned (the handle consumed). */
static uint64_t u64_of(rt_ref ref, long timeout_ms)
{
    uint64_t *v, got;
    ck_ok(rt_get(ref, (void **)&v, NULL, timeout_ms));
    got = *v;
    rt_free(v);
    return got;
}

/* A rank-local nested workload: its rank times 4, from 4 children it
 * submits to its own rank and reads. */
static int four_children_here(const void *arg, size_t len, rt_result *res)
{
    rt_context ctx;
    char selector[32];
    rt_ref child[4];
    uint64_t sum = 0;
    (void)arg, (void)len;
    if (rt_get_context(&ctx) < 0)
        return 1;
    rt_opts o = on_rank(ctx.node, selector);
    for (int i = 0; i < 4; i++)
        if (rt_remote(rank_of, &o, NULL, 0, &child[i]) < 0)
            return 2;
    for (int i = 0; i < 4; i++) {
        uint64_t *v;
        if (rt_get(child[i], (void **)&v, NULL, RT_FOREVER) < 0)
            return 3;
        sum += *v;
        rt_free(v);
    }
    return rt_result_set(res, &sum, sizeof sum);
}

/* fn once on each of the n ranks, pinned by its label: the handles
 * (free()). */
static rt_ref *on_every_rank(rt_fn fn, int n)
{
    rt_ref *refs = calloc((size_t)n, sizeof *refs);
    ck_assert_ptr_nonnull(refs);
    for (int k = 0; k < n; k++) {
        char selector[32];
        rt_opts o = on_rank(k, selector);
        ck_ok(rt_remote(fn, &o, NULL, 0, &refs[k]));
    }
    return refs;
}

/* A graph over every rank: one task pinned to each by its "rank" label,
 * and one task that takes all their results; each rank ran its own. */
START_TEST(test_graph_over_every_rank)
{
    int n = job_nodes();
    ck_assert_int_ge(n, 2);
    rt_ref *refs = on_every_rank(rank_of, n);
    rt_arg *parts = calloc((size_t)n, sizeof *parts);
    ck_assert_ptr_nonnull(parts);
    for (int k = 0; k < n; k++)
        parts[k] = RT_ARG_REF(refs[k]);
    rt_opts o = RT_OPTS_INIT;
    o.num_cpus = 0.01;
    rt_ref total;
    ck_ok(rt_remote_args(sum_u64, &o, parts, (size_t)n, &total));
    ck_assert_uint_eq(u64_of(total, 600000), (uint64_t)n * (uint64_t)(n - 1) / 2);
    for (int k = 0; k < n; k++)
        ck_assert_uint_eq(u64_of(refs[k], 600000), (uint64_t)k);
    free(parts);
    free(refs);
}
END_TEST

/* A STRICT_SPREAD group of one bundle per rank: each bundle on its own
 * rank, and a task in each runs there. */
START_TEST(test_group_over_every_rank)
{
    int n = job_nodes();
    rt_bundle *b = calloc((size_t)n, sizeof *b);
    unsigned char *seen = calloc((size_t)n, 1);
    rt_ref *refs = calloc((size_t)n, sizeof *refs);
    ck_assert(b && seen && refs);
    for (int k = 0; k < n; k++)
        b[k] = (rt_bundle){.num_cpus = 0.1};
    rt_pg pg;
    ck_ok(rt_pg_create(b, (size_t)n, RT_PG_STRICT_SPREAD, &pg));
    ck_ok(rt_pg_wait(pg, 600000));
    for (int k = 0; k < n; k++) {
        rt_opts o = RT_OPTS_INIT;
        o.placement_group = pg;
        o.bundle_index = k;
        o.num_cpus = 0.1;
        ck_ok(rt_remote(rank_of, &o, NULL, 0, &refs[k]));
    }
    for (int k = 0; k < n; k++) {
        uint64_t node = u64_of(refs[k], 600000);
        ck_assert_uint_lt(node, (uint64_t)n);
        ck_assert_msg(!seen[node], "two bundles on rank %d", (int)node);
        seen[node] = 1;
    }
    ck_ok(rt_pg_remove(pg));
    free(b);
    free(seen);
    free(refs);
}
END_TEST

/* On every rank at once, a task whose children run on its own rank. */
START_TEST(test_nested_work_on_every_rank)
{
    int n = job_nodes();
    rt_ref *refs = on_every_rank(four_children_here, n);
    for (int k = 0; k < n; k++)
        ck_assert_uint_eq(u64_of(refs[k], 600000), 4 * (uint64_t)k);
    free(refs);
}
END_TEST

/* The voluntary context switches of this process's thread named name
 * (rtask names its threads: rtask(7)), or -1 when none is. */
static long thread_switches(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    long switches = -1;
    for (struct dirent *e; d && switches < 0 && (e = readdir(d));) {
        char path[300], line[256];
        snprintf(path, sizeof path, "/proc/self/task/%.64s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        int named = f && fgets(line, sizeof line, f) && strcspn(line, "\n") == strlen(name) &&
                    strncmp(line, name, strlen(name)) == 0;
        if (f)
            fclose(f);
        snprintf(path, sizeof path, "/proc/self/task/%.64s/status", e->d_name);
        f = named ? fopen(path, "r") : NULL;
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
                switches = atol(line + 24);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return switches;
}

/* Synchronous calls on rank 1 leave rank 0's runtime thread asleep: the
 * bridge's thread delivers each answer and runs the round that follows
 * (cluster/bridge.h), which takes the application's next call too.
 * Before, the runtime thread woke at each answer (500 times here). */
START_TEST(test_remote_calls_leave_the_runtime_thread_asleep)
{
    enum { CALLS = 500 };
    rt_opts on1 = RT_OPTS_INIT;
    on1.label_selector = "rank=1";
    long before = 0;
    for (int i = 0; i < 2 * CALLS; i++) { /* the first half warms up */
        if (i == CALLS)
            before = thread_switches("rtask-runtime");
        rt_ref ref;
        ck_ok(rt_remote_args(sum_args, &on1, NULL, 0, &ref));
        sum_seen s = get_seen(ref);
        ck_assert_int_eq(s.node, 1);
    }
    long woke = thread_switches("rtask-runtime") - before;
    ck_assert_int_ge(before, 0);
    ck_assert_msg(woke < CALLS / 4, "the runtime thread woke %ld times in %d calls", woke,
                  CALLS);
}
END_TEST

static Suite *suite(const char *which)
{
    Suite *s = suite_create(which);
    TCase *tc = tcase_create(which);
    tcase_set_timeout(tc, 240);
    if (strcmp(which, "pair") == 0 || strcmp(which, "trio") == 0) {
        tcase_add_test(tc, test_type_picks_node);
        tcase_add_test(tc, test_six_gpus_on_the_eight);
        tcase_add_test(tc, test_larger_than_any_node);
        tcase_add_test(tc, test_twelve_at_once);
        tcase_add_test(tc, test_remote_results);
        tcase_add_test(tc, test_remote_task_takes_objects);
        tcase_add_test(tc, test_remote_output);
        tcase_add_test(tc, test_remote_actor);
        tcase_add_test(tc, test_remote_actor_without_constructor);
        tcase_add_test(tc, test_remote_worker_killed);
        tcase_add_test(tc, test_remote_task_makes_work);
        tcase_add_test(tc, test_remote_caller_dies);
        tcase_add_test(tc, test_labels_pick_ranks);
        tcase_add_test(tc, test_env_vars_on_another_rank);
        tcase_add_test(tc, test_actor_made_on_another_rank);
        tcase_add_test(tc, test_cancel_reaches_children_on_other_ranks);
        tcase_add_test(tc, test_recursion_on_another_rank);
        tcase_add_test(tc, test_several_results_on_another_rank);
        tcase_add_test(tc, test_groups_over_ranks);
    }
    if (strcmp(which, "trio") == 0) {
        tcase_add_test(tc, test_cpu_task_on_rank_zero);
        tcase_add_test(tc, test_objects_stay_where_made);
        tcase_add_test(tc, test_puts_stay_where_made);
        tcase_add_test(tc, test_unmappable_frame_ends_its_connection_only);
        tcase_add_test(tc, test_gets_in_tasks_take_bytes_where_they_are);
        tcase_add_test(tc, test_nested_calls_stay_on_their_rank);
        tcase_add_test(tc, test_named_calls_on_their_rank);
        tcase_add_test(tc, test_cancel_reaches_a_task_placed_on_its_rank);
        tcase_add_test(tc, test_remote_calls_leave_the_runtime_thread_asleep);
    }
    if (strcmp(which, "timeline") == 0)
        tcase_add_test(tc, test_tasks_placed_on_a_rank_are_in_the_timeline);
    if (strcmp(which, "many") == 0) {
        tcase_set_timeout(tc, 900);
        tcase_add_test(tc, test_graph_over_every_rank);
        tcase_add_test(tc, test_group_over_every_rank);
        tcase_add_test(tc, test_nested_work_on_every_rank);
    }
    if (strcmp(which, "single") == 0)
        tcase_add_test(tc, test_single_node);
    if (strcmp(which, "families") == 0)
        tcase_add_test(tc, test_tpu_chips_on_rank_one);
    suite_add_tcase(s, tc);
    return s;
}

/* The sum of the bytes of its one argument. */
static int checksum_of(const rt_value *args, size_t n, rt_result *res)
{
    uint64_t sum = 0;
    for (size_t i = 0; n == 1 && i < args[0].len; i++)
        sum += ((const unsigned char *)args[0].data)[i];
    return rt_result_set(res, &sum, sizeof sum);
}

/* Log a run (a byte appended to $KEPT_LOG, when set), then give *arg
 * bytes of 0x6b. */
static int logged_bytes(const void *arg, size_t len, rt_result *res)
{
    (void)len;
    const char *log = getenv("KEPT_LOG");
    int fd = log ? open(log, O_WRONLY | O_APPEND | O_CREAT, 0600) : -1;
    if (log && (fd < 0 || write(fd, "x", 1) != 1))
        return 1;
    if (fd >= 0)
        close(fd);
    size_t n = *(const size_t *)arg;
    char *out = rt_result_alloc(res, n);
    if (!out)
        return 2;
    memset(out, 0x6b, n);
    return 0;
}

/* With $RTASK_CHECKPOINT_DIR: a small and a large result made on rank 1
 * (the large one stays there, and rank 1 keeps it); run twice with the
 * same folder, the second run takes both from it.  Prints how many ran. */
static int kept(void)
{
    const char *log = getenv("KEPT_LOG");
    struct stat st;
    long before = log && stat(log, &st) == 0 ? (long)st.st_size : 0;
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = "rank=1";
    size_t sizes[2] = {100, 300 * 1024};
    int bad = 0;
    for (int i = 0; i < 2; i++) {
        rt_ref r;
        void *data;
        size_t n;
        if (rt_remote(logged_bytes, &o, &sizes[i], sizeof sizes[i], &r) < 0 ||
            rt_get(r, &data, &n, 60000) < 0) {
            fprintf(stderr, "kept: %s\n", rt_last_error());
            return 1;
        }
        bad |= n != sizes[i] || ((unsigned char *)data)[n - 1] != 0x6b;
        rt_free(data);
    }
    long after = log && stat(log, &st) == 0 ? (long)st.st_size : 0;
    printf("kept: ran %ld, %s\n", after - before, bad ? "WRONG" : "results right");
    return rt_shutdown() < 0 || bad;
}

/* The spill files in dir. */
static int spill_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, "rtask-spill-", 12) == 0;
    if (d)
        closedir(d);
    return n;
}

/* Every rank's store of 1 MiB spills to $SPILL_DIR: 8 large results made
 * on rank 1 stay there, most of them in files, and come back whole when
 * rank 0 reads them or a task there takes one.  Before rt_init(): the
 * configuration is this mode's. */
static int spilled(void)
{
    const char *dir = getenv("SPILL_DIR");
    rt_config c = RT_CONFIG_INIT;
    c.object_store_bytes = 1 << 20;
    c.spill_dir = dir;
    if (!dir || rt_init_config(&c) < 0) { /* only rank 0 returns */
        fprintf(stderr, "spill: %s\n", rt_last_error());
        return 1;
    }
    rt_opts o = RT_OPTS_INIT;
    o.label_selector = "rank=1";
    enum { N = 8 };
    size_t size = 512 * 1024;
    rt_ref refs[N], sum;
    size_t ready;
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad |= rt_remote(logged_bytes, &o, &size, sizeof size, &refs[i]) < 0;
    bad |= bad || rt_wait(refs, N, N, 60000, &ready) < 0;
    int files = spill_files(dir);
    bad |= rt_remote_args(checksum_of, &o, &RT_ARG_REF(refs[0]), 1, &sum) < 0;
    for (int i = 0; !bad && i < N; i++) {
        void *data;
        size_t n;
        bad |= rt_get(refs[i], &data, &n, 60000) < 0 || n != size ||
               ((unsigned char *)data)[0] != 0x6b || ((unsigned char *)data)[n - 1] != 0x6b;
        rt_free(data);
    }
    void *v;
    bad |= bad || rt_get(sum, &v, NULL, 60000) < 0 || *(uint64_t *)v != 0x6b * (uint64_t)size;
    if (!bad)
        rt_free(v);
    printf("spill: %s with %d files at the peak\n", bad ? "WRONG" : "results right", files);
    return rt_shutdown() < 0 || bad;
}

/* Rank 0 of a job whose rank 1 runs another program: rt_init() fails. */
static int stranger(void)
{
    int rc = rt_init(RT_DETECT);
    int ok = rc == RT_EINVAL && strstr(rt_last_error(), "another program") != NULL;
    printf("stranger: rt_init = %d (%s): %s\n", rc, rt_last_error(), ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "pair";
    if (strcmp(which, "stranger") == 0)
        return stranger();
    if (strcmp(which, "spill") == 0)
        return spilled();
    if (rt_init(RT_DETECT) < 0) { /* RTASK_CLUSTER=mpi; only rank 0 returns */
        fprintf(stderr, "rt_init: %s\n", rt_last_error());
        return 1;
    }
    if (strcmp(which, "kept") == 0)
        return kept();
    if (strcmp(which, "rankdies") == 0) {
        rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
        rt_ref r, r2;
        if (rt_remote(kill_rank, &o, NULL, 0, &r) < 0 ||
            rt_remote(where, &o, NULL, 0, &r2) < 0)
            return 1;
        int rc = rt_get(r2, NULL, NULL, RT_FOREVER);
        printf("rankdies: rank 0 went on: %d (%s)\n", rc, rt_last_error());
        return 1;
    }
    if (strcmp(which, "ranksilent") == 0) {
        /* A task stops rank 1: rank 0 declares it dead after
         * RTASK_RANK_TIMEOUT, and rt_shutdown() ends the job naming it. */
        rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
        rt_ref r;
        if (rt_remote(stop_rank, &o, NULL, 0, &r) < 0)
            return 1;
        int rc = rt_get(r, NULL, NULL, RT_FOREVER);
        printf("ranksilent: rank 0's wait ended: %d (%s)\n", rc, rt_last_error());
        fflush(stdout);
        rc = rt_shutdown();
        printf("ranksilent: rt_shutdown returned %d\n", rc);
        return 1;
    }
    if (strcmp(which, "gpuhealth") == 0) {
        /* Rank 1's GPUs are watched there (the fake NVML, its events in
         * $RTASK_TEST_EVENTS): an XID on its GPU 3 reaches rank 0. */
        FILE *f = fopen(getenv("RTASK_TEST_EVENTS"), "a");
        if (!f)
            return 1;
        fprintf(f, "xid 3 79\n");
        fclose(f);
        rt_gpu_health *sick = NULL;
        size_t n = 0;
        for (int i = 0; i < 6000 && n == 0; i++) { /* up to a minute, on a busy machine */
            rt_free(sick);
            if (rt_unhealthy_gpus(&sick, &n) < 0)
                return 1;
            usleep(10000);
        }
        int ok = n == 1 && sick[0].node == 1 && strcmp(sick[0].bus_id, "0000:5d:00.0") == 0 &&
                 strstr(sick[0].why, "XID 79") != NULL;
        printf("gpuhealth: %zu unhealthy%s%s: %s\n", n, n ? ", " : "", n ? sick[0].why : "",
               ok ? "ok" : "WRONG");
        rt_free(sick);
        return rt_shutdown() == 0 && ok ? 0 : 1;
    }
    if (strcmp(which, "graphdies") == 0) {
        /* A graph whose objects rank 1 holds, then rank 1 dies: rank 0's
         * pull of them never gets garbage; the job ends. */
        rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
        size_t big = (size_t)1 << 20, ready;
        rt_ref a, b, k;
        if (rt_remote(bytes, &o, &big, sizeof big, &a) < 0 ||
            rt_remote_args(sum_args, &o, &RT_ARG_REF(a), 1, &b) < 0 ||
            rt_wait(&b, 1, 1, 60000, &ready) < 0 || ready != 1 ||
            rt_remote(kill_rank, &o, NULL, 0, &k) < 0)
            return 1;
        sleep(1);
        unsigned char *data;
        size_t len;
        int rc = rt_get(a, (void **)&data, &len, RT_FOREVER);
        printf("graphdies: rank 0 went on: %d (%s)%s\n", rc, rt_last_error(),
               rc == 0 && (len != big || data[1] != 1) ? ": GARBAGE" : "");
        return 1;
    }
    if (strcmp(which, "nodefails") == 0) {
        rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
        rt_ref r;
        if (rt_remote(kill_fork_server, &o, NULL, 0, &r) < 0)
            return 1;
        int rc = rt_get(r, NULL, NULL, 60000);
        int ok = rc == RT_ESHUTDOWN && strstr(rt_last_error(), "rank 1") != NULL;
        printf("nodefails: rt_get = %d (%s): %s\n", rc, rt_last_error(), ok ? "ok" : "WRONG");
        return rt_shutdown() == 0 && ok ? 0 : 1;
    }
    if (strcmp(which, "unended") == 0) {
        rt_opts o = gpu_opts(1, RT_ACCEL_NVIDIA_H100);
        rt_ref r;
        return rt_remote(where, &o, NULL, 0, &r) == 0 && rt_get(r, NULL, NULL, 60000) == 0
                   ? 0 : 1;
    }
    trio = strcmp(which, "trio") == 0;
    SRunner *sr = srunner_create(suite(which));
    srunner_set_fork_status(sr, CK_NOFORK); /* the runtime joins the job once */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int ended = rt_shutdown() == 0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%s: rt_shutdown took %.1f s\n", which, took);
    ended = ended && took < 60;
    if (strcmp(which, "single") == 0) { /* a process joins a job once */
        int rc = rt_init(RT_DETECT);
        ended = ended && rc == RT_EINVAL && strstr(rt_last_error(), "once") != NULL;
        printf("single: rt_init again = %d (%s)\n", rc, rt_last_error());
    }
    return ended && !failed ? 0 : 1;
}

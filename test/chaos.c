/*
 * chaos.c - `make check-chaos`: work goes on while workers are killed and
 * stopped at random.  Every task and call must end in a right value or a
 * clear error, no task may run more often than its retries allow, and
 * rt_shutdown() must leave no process and no descriptor behind.
 */
#include "tests.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the victims ---------------------------------------------------------- */

static _Atomic long finished;
static _Atomic int killing;
static _Atomic long kills; /* workers the killer found and killed */

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* SIGKILL a random worker about once per `every` finished tasks. */
static void *killer(void *arg)
{
    long every = *(long *)arg, last = 0;
    unsigned seed = 12345;
    while (atomic_load(&killing)) {
        sleep_us(200);
        if (atomic_load(&finished) - last < every)
            continue;
        last = atomic_load(&finished);
        pid_t pids[64];
        int n = worker_pids(pids, 64);
        if (n && kill(pids[rand_r(&seed) % n], SIGKILL) == 0)
            atomic_fetch_add(&kills, 1);
    }
    return NULL;
}

/* ---- runs --------------------------------------------------------------- */

static void start(int workers_n)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = workers_n;
    c.num_gpus = 0;
    c.num_workers = workers_n;
    ck_ok(rt_init_config(&c));
}

/* Every task ran at most max_runs times, and each that succeeded ran;
 * returns how many ran more than once. */
static long check_log(const char *path, const int *ok, long n, int max_runs)
{
    int *runs = calloc((size_t)n, sizeof *runs);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    uint64_t id;
    while (fread(&id, sizeof id, 1, f) == 1) {
        ck_assert_uint_lt(id, (uint64_t)n);
        runs[id]++;
    }
    fclose(f);
    unlink(path);
    long too_often = 0, lost = 0, again = 0;
    for (long i = 0; i < n; i++) {
        too_often += runs[i] > max_runs;
        lost += ok[i] && runs[i] == 0;
        again += runs[i] > 1;
    }
    free(runs);
    ck_assert_msg(too_often == 0, "%ld tasks ran more often than their retries allow",
                  too_often);
    ck_assert_msg(lost == 0, "%ld tasks succeeded without running", lost);
    return again;
}

/* n logged tasks, each checked, with a worker killed every 100 tasks. */
static void tasks_under_fire(long n, int max_retries)
{
    int fds = count_fds();
    start(2);
    log_record rec = {.id = 0};
    temp_path(rec.path, sizeof rec.path, max_retries ? "chaos-retry" : "chaos-once");
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = max_retries;
    rt_ref *refs = malloc((size_t)n * sizeof *refs);
    int *ok = calloc((size_t)n, sizeof *ok);
    long every = 100, done = 0, died = 0;
    pthread_t th;
    atomic_store(&finished, 0);
    atomic_store(&kills, 0);
    atomic_store(&killing, 1);
    pthread_create(&th, NULL, killer, &every);
    for (long i = 0; i < n; i++) {
        rec.id = (uint64_t)i;
        ck_ok(rt_remote(t_log, &o, &rec, sizeof rec, &refs[i]));
    }
    for (long i = 0; i < n; i++) {
        uint64_t *v = NULL;
        int rc = rt_get(refs[i], (void **)&v, NULL, 60000);
        ck_assert_msg(rc == 0 || rc == RT_EWORKERDIED, "task %ld: %d (%s)", i, rc,
                      rt_last_error());
        if (rc == 0)
            ck_assert_uint_eq(*v, (uint64_t)i);
        ok[i] = rc == 0;
        done += rc == 0;
        died += rc != 0;
        rt_free(v);
        atomic_fetch_add(&finished, 1);
    }
    atomic_store(&killing, 0);
    pthread_join(th, NULL);
    ck_ok(rt_shutdown());
    long again = check_log(rec.path, ok, n, max_retries + 1), killed = atomic_load(&kills);
    printf("chaos: %ld tasks, max_retries %d, %ld workers killed: %ld done, %ld failed with "
           "their worker, %ld run again, 0 lost, 0 hung, 0 run too often\n", n, max_retries,
           killed, done, died, again);
    ck_assert_int_gt(killed, 0); /* the fire was real */
    /* A death costs at most the task that was running (the journal keeps
     * the results of those that returned). */
    ck_assert_msg(died <= killed, "%ld tasks failed for %ld kills", died, killed);
    ck_assert_msg(again <= killed, "%ld tasks ran again for %ld kills", again, killed);
    free(refs);
    free(ok);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert(waitpid(-1, NULL, WNOHANG) < 0);
}

START_TEST(tasks_while_workers_are_killed)
{
    tasks_under_fire((long)scaled(100000), 3);
}
END_TEST

START_TEST(tasks_at_most_once_while_workers_are_killed)
{
    tasks_under_fire((long)scaled(100000), 0);
}
END_TEST

static int echo_method(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    return rt_result_set(r, arg, len);
}

/* 10 actors x 1 000 calls; actors' processes killed at random: every call
 * ends in its own value or RT_EACTORDIED. */
START_TEST(actors_killed_at_random)
{
    int fds = count_fds();
    start(2);
    static const rt_actor_class cls = {"Chaos", NULL, NULL};
    enum { ACTORS = 10 };
    long calls = (long)scaled(1000);
    rt_actor a[ACTORS];
    for (int k = 0; k < ACTORS; k++)
        ck_ok(rt_actor_create(&cls, NULL, NULL, 0, &a[k]));
    rt_ref *refs = malloc((size_t)(ACTORS * calls) * sizeof *refs);
    long every = 500, values = 0, deaths = 0;
    pthread_t th;
    atomic_store(&finished, 0);
    atomic_store(&kills, 0);
    atomic_store(&killing, 1);
    pthread_create(&th, NULL, killer, &every);
    for (long i = 0; i < ACTORS * calls; i++) {
        uint64_t x = (uint64_t)i;
        int rc = rt_actor_call(a[i % ACTORS], echo_method, &x, sizeof x, &refs[i]);
        ck_assert_msg(rc == 0 || rc == RT_EACTORDIED, "call %ld: %d", i, rc);
        if (rc != 0)
            refs[i].id = 0;
        atomic_fetch_add(&finished, 1);
    }
    for (long i = 0; i < ACTORS * calls; i++) {
        if (!refs[i].id) {
            deaths++;
            continue;
        }
        uint64_t *v = NULL;
        int rc = rt_get(refs[i], (void **)&v, NULL, 60000);
        ck_assert_msg(rc == 0 || rc == RT_EACTORDIED, "call %ld: %d (%s)", i, rc,
                      rt_last_error());
        if (rc == 0)
            ck_assert_uint_eq(*v, (uint64_t)i);
        values += rc == 0;
        deaths += rc != 0;
        rt_free(v);
    }
    atomic_store(&killing, 0);
    pthread_join(th, NULL);
    ck_ok(rt_shutdown());
    printf("chaos: %d actors x %ld calls, %ld processes killed: %ld values, %ld "
           "RT_EACTORDIED, 0 hung\n", ACTORS, calls, atomic_load(&kills), values, deaths);
    ck_assert_int_gt(atomic_load(&kills), 0);
    free(refs);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert(waitpid(-1, NULL, WNOHANG) < 0);
}
END_TEST

int chaos_sum(const rt_value *args, size_t n, rt_result *r);
int chaos_sum(const rt_value *args, size_t n, rt_result *r)
{
    uint64_t sum = 0, v;
    for (size_t i = 0; i < n; i++) {
        memcpy(&v, args[i].data, sizeof v);
        sum += v;
    }
    return rt_result_set(r, &sum, sizeof sum);
}

enum { LEAVES = 100 };

/* A tree reduction of LEAVES leaves (t_double of 0..99), ten at a time,
 * each task with opts o: its root, whose sum is LEAVES * (LEAVES - 1). */
static rt_ref reduce_tree(const rt_opts *o)
{
    rt_ref level[LEAVES];
    for (uint64_t i = 0; i < LEAVES; i++)
        ck_ok(rt_remote(t_double, o, &i, sizeof i, &level[i]));
    for (size_t n = LEAVES; n > 1; n /= 10)
        for (size_t i = 0; i < n; i += 10) {
            rt_arg args[10];
            for (int k = 0; k < 10; k++)
                args[k] = RT_ARG_REF(level[i + k]);
            rt_ref parent;
            ck_ok(rt_remote_args(chaos_sum, o, args, 10, &parent));
            for (int k = 0; k < 10; k++)
                ck_ok(rt_release(level[i + k]));
            level[i / 10] = parent;
        }
    return level[0];
}

/* Tree reductions (100 leaves each, ten at a time) while workers are
 * killed and nothing is retried: each root ends with its sum or with
 * the error of its cause (a worker's death, passed along the graph as
 * RT_EDEPENDENCY); nothing hangs, nothing is left behind. */
START_TEST(a_graph_while_workers_are_killed)
{
    int fds = count_fds();
    start(2);
    long trees = (long)scaled(300), sums = 0, caused = 0;
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 0;
    rt_ref *roots = malloc((size_t)trees * sizeof *roots);
    long every = 2;
    pthread_t th;
    atomic_store(&finished, 0);
    atomic_store(&kills, 0);
    atomic_store(&killing, 1);
    pthread_create(&th, NULL, killer, &every);
    for (long t = 0; t < trees; t++) {
        roots[t] = reduce_tree(&o);
        atomic_fetch_add(&finished, 1);
    }
    for (long t = 0; t < trees; t++) {
        uint64_t *v = NULL;
        int rc = rt_get(roots[t], (void **)&v, NULL, 60000);
        ck_assert_msg(rc == 0 || rc == RT_EDEPENDENCY || rc == RT_EWORKERDIED,
                      "tree %ld: %d (%s)", t, rc, rt_last_error());
        if (rc == RT_EDEPENDENCY)
            ck_assert_msg(strstr(rt_last_error(), "signal 9"), "tree %ld: %s", t,
                          rt_last_error());
        if (rc == 0)
            ck_assert_uint_eq(*v, (uint64_t)LEAVES * (LEAVES - 1)); /* twice 0..99 */
        sums += rc == 0;
        caused += rc != 0;
        rt_free(v);
        atomic_fetch_add(&finished, 1);
    }
    atomic_store(&killing, 0);
    pthread_join(th, NULL);
    ck_ok(rt_shutdown());
    printf("chaos: %ld trees of %d leaves, %ld workers killed: %ld sums, %ld failed with "
           "their cause, 0 hung\n", trees, LEAVES, atomic_load(&kills), sums, caused);
    ck_assert_int_gt(atomic_load(&kills), 0);
    free(roots);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert(waitpid(-1, NULL, WNOHANG) < 0);
}
END_TEST

/* Workers killed at random under recursive computations: each
 * top-level result is right or an error that says why; nothing hangs and
 * nothing is left, not even a proxy thread's descriptor. */
START_TEST(recursion_while_workers_are_killed)
{
    int fds = count_fds();
    start(2);
    long roots = (long)scaled(30), right = 0, failed = 0;
    long every = 1;
    pthread_t th;
    atomic_store(&finished, 0);
    atomic_store(&kills, 0);
    atomic_store(&killing, 1);
    pthread_create(&th, NULL, killer, &every);
    for (long i = 0; i < roots; i++) {
        uint64_t n = 10, *v = NULL;
        rt_ref ref;
        ck_ok(rt_remote(t_fib, NULL, &n, sizeof n, &ref));
        int rc = rt_get(ref, (void **)&v, NULL, 60000);
        ck_assert_msg(rc == 0 || rc == RT_EWORKERDIED || rc == RT_ETASK, "root %ld: %d (%s)",
                      i, rc, rt_last_error());
        if (rc == 0)
            ck_assert_uint_eq(*v, 55);
        right += rc == 0;
        failed += rc != 0;
        rt_free(v);
        atomic_fetch_add(&finished, 1);
    }
    atomic_store(&killing, 0);
    pthread_join(th, NULL);
    ck_ok(rt_shutdown());
    printf("chaos: %ld fib(10) roots, %ld workers killed: %ld right, %ld failed with "
           "their cause, 0 hung\n", roots, atomic_load(&kills), right, failed);
    ck_assert_int_gt(atomic_load(&kills), 0);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert(waitpid(-1, NULL, WNOHANG) < 0);
}
END_TEST

/* A worker stopped for 5 s: the others take the work, and when it goes
 * on, its tasks finish too. */
START_TEST(a_worker_stopped_for_five_seconds)
{
    int fds = count_fds();
    start(2);
    uint64_t ms = 1000;
    rt_ref first;
    ck_ok(rt_remote(t_sleep_ms, NULL, &ms, sizeof ms, &first));
    sleep_us(200000);
    pid_t pids[64];
    int n = worker_pids(pids, 64);
    ck_assert_int_gt(n, 0);
    for (int k = 0; k < n; k++)
        kill(pids[k], SIGSTOP); /* the one running `first` among them */
    sleep_us(100000);
    for (int k = 1; k < n; k++)
        kill(pids[k], SIGCONT); /* all but one go on */
    enum { N = 2000 };
    static rt_ref refs[N];
    for (uint64_t i = 0; i < N; i++)
        ck_ok(rt_remote(t_double, NULL, &i, sizeof i, &refs[i]));
    sleep_us(5000000);
    kill(pids[0], SIGCONT);
    for (uint64_t i = 0; i < N; i++) {
        uint64_t *v;
        ck_ok(rt_get(refs[i], (void **)&v, NULL, 60000));
        ck_assert_uint_eq(*v, 2 * i);
        rt_free(v);
    }
    ck_ok(rt_get(first, NULL, NULL, 60000));
    ck_ok(rt_shutdown());
    printf("chaos: a worker stopped for 5 s: %d tasks done, 0 lost\n", N);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert(waitpid(-1, NULL, WNOHANG) < 0);
}
END_TEST

/* ---- hostile tasks ------------------------------------------------------------- */

static _Atomic int hostile_on;

/* A large result (a memfd) of the byte given. */
int chaos_fill(const void *arg, size_t len, rt_result *r);
int chaos_fill(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    unsigned char *p = rt_result_alloc(r, T_BIG_RESULT);
    if (!p)
        return 1;
    memset(p, *(const unsigned char *)arg, T_BIG_RESULT);
    return 0;
}

/* Hostile tasks, one after another, each in a worker of its own
 * (max_calls = 1): they overrun their results, forge every board entry
 * they can reach, and scribble on every shared mapping they can write
 * or make writable. */
static void *send_hostile(void *unused)
{
    (void)unused;
    rt_opts o = RT_OPTS_INIT;
    o.max_calls = 1;
    o.max_retries = 0;
    static const rt_fn kinds[] = {t_overrun, t_forge_board, t_scribble_shared};
    uint64_t ms = 50;
    for (unsigned i = 0; atomic_load(&hostile_on); i++) {
        rt_ref ref;
        if (rt_remote(kinds[i % 3], &o, &ms, sizeof ms, &ref) == 0)
            (void)rt_get(ref, NULL, NULL, 60000); /* whatever it did to itself */
        atomic_fetch_add(&kills, 1);
    }
    return NULL;
}

/* Graphs (tree reductions) and large results among hostile tasks: no
 * other task's result is ever wrong, nothing fails, nothing hangs. */
START_TEST(hostile_tasks_change_no_other_result)
{
    int fds = count_fds();
    start(3);
    long trees = (long)scaled(200);
    pthread_t th;
    atomic_store(&kills, 0);
    atomic_store(&hostile_on, 1);
    pthread_create(&th, NULL, send_hostile, NULL);
    for (long t = 0; t < trees; t++) {
        rt_ref big;
        unsigned char byte = (unsigned char)t;
        ck_ok(rt_remote(chaos_fill, NULL, &byte, 1, &big));
        ck_assert_uint_eq(get_u64(reduce_tree(NULL), 60000), (uint64_t)LEAVES * (LEAVES - 1));
        unsigned char *b;
        size_t len;
        ck_ok(rt_get(big, (void **)&b, &len, 60000));
        for (size_t i = 0; i < len; i++)
            ck_assert_msg(b[i] == byte, "tree %ld: byte %zu of a large result changed", t, i);
        rt_free(b);
    }
    atomic_store(&hostile_on, 0);
    pthread_join(th, NULL);
    ck_ok(rt_shutdown());
    printf("chaos: %ld trees of %d leaves and %ld large results among %ld hostile tasks: "
           "all right\n", trees, LEAVES, trees, atomic_load(&kills));
    ck_assert_int_gt(atomic_load(&kills), 0);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert(waitpid(-1, NULL, WNOHANG) < 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chaos");
    TCase *tc = tcase_create("chaos");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tasks_while_workers_are_killed);
    tcase_add_test(tc, tasks_at_most_once_while_workers_are_killed);
    tcase_add_test(tc, actors_killed_at_random);
    tcase_add_test(tc, a_graph_while_workers_are_killed);
    tcase_add_test(tc, recursion_while_workers_are_killed);
    tcase_add_test(tc, a_worker_stopped_for_five_seconds);
    tcase_add_test(tc, hostile_tasks_change_no_other_result);
    suite_add_tcase(s, tc);
    return run_and_free(srunner_create(s));
}

/* test_actors.c - actors: state, order, GPUs held for life, death,
 * restarts, kills and destructors. */
#include "tests.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- a counter actor: state is a number, methods read and bump it ---- */

typedef struct counter {
    uint64_t value;
    char fini_path[128]; /* the destructor writes "fini <value>" here */
} counter;

int counter_init(const void *arg, size_t len, void **state);
void counter_fini(void *state);
int counter_next(void *state, const void *arg, size_t len, rt_result *r);
int counter_pid(void *state, const void *arg, size_t len, rt_result *r);
int counter_sleep(void *state, const void *arg, size_t len, rt_result *r);
int actor_devices(void *state, const void *arg, size_t len, rt_result *r);
int failing_init(const void *arg, size_t len, void **state);

/* arg: an optional path for the destructor's note. */
int counter_init(const void *arg, size_t len, void **state)
{
    counter *c = calloc(1, sizeof *c);
    if (!c)
        return 1;
    if (len && len < sizeof c->fini_path)
        memcpy(c->fini_path, arg, len);
    *state = c;
    return 0;
}

void counter_fini(void *state)
{
    counter *c = state;
    if (c->fini_path[0]) {
        FILE *f = fopen(c->fini_path, "w");
        if (f) {
            fprintf(f, "fini %llu", (unsigned long long)c->value);
            fclose(f);
        }
    }
    free(c);
}

int counter_next(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    counter *c = state;
    c->value++;
    return rt_result_set(r, &c->value, sizeof c->value);
}

int counter_pid(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    (void)arg;
    (void)len;
    uint64_t pid = (uint64_t)getpid();
    return rt_result_set(r, &pid, sizeof pid);
}

int counter_sleep(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    (void)len;
    (void)r;
    uint64_t ms = *(const uint64_t *)arg;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    return 0;
}

/* As the reference's ping: print the ids and CUDA_VISIBLE_DEVICES, and
 * return them too. */
int actor_devices(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    return t_devices(arg, len, r);
}

int failing_init(const void *arg, size_t len, void **state)
{
    (void)arg;
    (void)len;
    (void)state;
    return 7;
}

static const rt_actor_class counter_class = {"Counter", counter_init, counter_fini};

static uint64_t call_actor_u64(rt_actor a, rt_method m)
{
    rt_ref ref;
    ck_ok(rt_actor_call(a, m, NULL, 0, &ref));
    return get_u64(ref, 60000);
}

/* m(arg), arg a string or NULL: its result, a string the caller frees. */
static char *call_actor_str(rt_actor a, rt_method m, const char *arg)
{
    rt_ref ref;
    char *s;
    ck_ok(rt_actor_call(a, m, arg, arg ? strlen(arg) + 1 : 0, &ref));
    ck_ok(rt_get(ref, (void **)&s, NULL, 60000));
    return s;
}

/* ---- the reference's examples ------------------------------------------- */

int use_gpu(const void *arg, size_t len, rt_result *r);

static int print_devices(void)
{
    const char *const *ids;
    size_t n;
    if (rt_get_gpu_ids(&ids, &n) < 0)
        return 1;
    printf("rt_get_gpu_ids(): [%s]\n", n ? ids[0] : "");
    printf("CUDA_VISIBLE_DEVICES: %s\n", getenv("CUDA_VISIBLE_DEVICES"));
    return 0;
}

int use_gpu(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    (void)r;
    return print_devices();
}

int gpu_actor_ping(void *state, const void *arg, size_t len, rt_result *r);
int gpu_actor_ping(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    return use_gpu(arg, len, r) || counter_pid(state, arg, len, r);
}

static uint64_t gpu_actor_pid, use_gpu_pid;

/* ray.init(num_gpus=2); an actor with 1 GPU pings; then a task with 1 GPU. */
static void reference_gpu_actor(void)
{
    start_with(2, 2, 2);
    rt_actor_class cls = {"GPUActor", counter_init, counter_fini};
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 1;
    rt_actor actor;
    ck_ok(rt_actor_create(&cls, &o, NULL, 0, &actor));
    gpu_actor_pid = call_actor_u64(actor, gpu_actor_ping);
    rt_ref ref;
    ck_ok(rt_remote(use_gpu, &o, NULL, 0, &ref));
    ck_ok(rt_get(ref, NULL, NULL, 60000));
    use_gpu_pid = 0;
    ck_ok(rt_shutdown());
}

START_TEST(reference_gpu_actor_then_task)
{
    const char *text = capture_output(reference_gpu_actor);
    char want[512];
    snprintf(want, sizeof want,
             "(GPUActor pid=%d) rt_get_gpu_ids(): [0]\n"
             "(GPUActor pid=%d) CUDA_VISIBLE_DEVICES: 0\n",
             (int)gpu_actor_pid, (int)gpu_actor_pid);
    ck_assert_msg(strstr(text, want), "no \"%s\" in:\n%s", want, text);
    const char *task = strstr(text, "(use_gpu pid=");
    ck_assert_msg(task, "no use_gpu line in:\n%s", text);
    int pid;
    ck_assert_int_eq(sscanf(task, "(use_gpu pid=%d)", &pid), 1);
    snprintf(want, sizeof want,
             "(use_gpu pid=%d) rt_get_gpu_ids(): [1]\n"
             "(use_gpu pid=%d) CUDA_VISIBLE_DEVICES: 1\n", pid, pid);
    ck_assert_msg(strstr(text, want), "no \"%s\" in:\n%s", want, text);
    ck_assert_int_ne(pid, (int)gpu_actor_pid);
}
END_TEST

/* ray.init(num_gpus=3); three 0.5-GPU actors pack: [0], [0], [1]. */
START_TEST(fractional_actors_pack)
{
    start_with(3, 3, 2);
    rt_actor_class cls = {"FractionalGPUActor", counter_init, NULL};
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 0.5;
    rt_actor actors[3];
    for (int i = 0; i < 3; i++)
        ck_ok(rt_actor_create(&cls, &o, NULL, 0, &actors[i]));
    const char *want[] = {"ids=0 cvd=0", "ids=0 cvd=0", "ids=1 cvd=1"};
    for (int i = 0; i < 3; i++) {
        char *seen = call_actor_str(actors[i], actor_devices, NULL);
        ck_assert_msg(strncmp(seen, want[i], strlen(want[i])) == 0,
                      "actor %d saw \"%s\"", i, seen);
        rt_free(seen);
    }
    /* The ids never change for the actor's life. */
    char *again = call_actor_str(actors[2], actor_devices, NULL);
    ck_assert_msg(strncmp(again, "ids=1 cvd=1", 11) == 0, "then saw \"%s\"", again);
    rt_free(again);
    ck_ok(rt_shutdown());
}
END_TEST

/* ---- order, state, limits ----------------------------------------------- */

START_TEST(ten_thousand_calls_run_in_order)
{
    start_with(2, 0, 2);
    rt_actor a;
    ck_ok(rt_actor_create(&counter_class, NULL, NULL, 0, &a));
    size_t n = scaled(10000);
    rt_ref *refs = malloc(n * sizeof *refs);
    for (size_t i = 0; i < n; i++)
        ck_ok(rt_actor_call(a, counter_next, NULL, 0, &refs[i]));
    for (size_t i = 0; i < n; i++) {
        uint64_t *v;
        ck_ok(rt_get(refs[i], (void **)&v, NULL, 60000));
        if (*v != i + 1)
            ck_abort_msg("call %zu returned %llu", i, (unsigned long long)*v);
        rt_free(v);
    }
    free(refs);
    /* max_calls does not apply to actors: one process throughout. */
    rt_opts o = RT_OPTS_INIT;
    o.max_calls = 1;
    rt_actor b;
    ck_ok(rt_actor_create(&counter_class, &o, NULL, 0, &b));
    uint64_t pid = call_actor_u64(b, counter_pid);
    ck_assert_uint_eq(call_actor_u64(b, counter_pid), pid);
    ck_assert_uint_eq(call_actor_u64(b, counter_next), 1);
    ck_ok(rt_shutdown());
}
END_TEST

/* Calls run in the order made whichever way each goes to the actor: on
 * its socket (an argument in a memfd), or in its inbox while it lingers
 * (small ones, inbox.h), in bursts and one at a time. */
START_TEST(calls_run_in_order_by_socket_and_inbox)
{
    start_with(2, 0, 2);
    rt_actor a;
    ck_ok(rt_actor_create(&counter_class, NULL, NULL, 0, &a));
    enum { N = 600, LARGE = 200 * 1024 };
    char *large = calloc(1, LARGE);
    rt_ref refs[4];
    uint64_t made = 0;
    for (unsigned burst = 0; made < N; burst++) {
        unsigned n = 1 + burst * 7 % 4;
        for (unsigned i = 0; i < n; i++) {
            size_t len = (burst + i) % 3 == 0 ? LARGE : 8;
            ck_ok(rt_actor_call(a, counter_next, large, len, &refs[i]));
        }
        for (unsigned i = 0; i < n; i++) {
            uint64_t *v;
            ck_ok(rt_get(refs[i], (void **)&v, NULL, 60000));
            ck_assert_uint_eq(*v, ++made);
            rt_free(v);
        }
        if (burst % 5 == 4)
            usleep(burst % 3 * 40); /* within its lingering, or not */
    }
    free(large);
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(infeasible_or_bad_actors_are_refused)
{
    start_with(2, 2, 2);
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 3;
    rt_actor a;
    ck_fails(rt_actor_create(&counter_class, &o, NULL, 0, &a), RT_EINFEASIBLE,
             "a request for 3 GPU can never be met: the runtime has 2 in all");
    o.num_gpus = 1.5;
    ck_fails(rt_actor_create(&counter_class, &o, NULL, 0, &a), RT_EINVAL,
             "GPU quantities above 1 must be whole numbers");
    ck_fails(rt_actor_create(NULL, NULL, NULL, 0, &a), RT_EINVAL, "the class is NULL");
    rt_actor forged = {12345};
    rt_ref ref;
    ck_fails(rt_actor_call(forged, counter_next, NULL, 0, &ref), RT_EBADREF, "unknown");
    ck_fails(rt_actor_kill(forged), RT_EBADREF, "unknown");
    /* A constructor that fails kills the actor; its calls say why. */
    rt_actor_class bad = {"Broken", failing_init, NULL};
    ck_ok(rt_actor_create(&bad, NULL, NULL, 0, &a));
    ck_ok(rt_actor_call(a, counter_next, NULL, 0, &ref));
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EACTORDIED,
             "the actor Broken is dead: its constructor returned 7");
    ck_fails(rt_actor_call(a, counter_next, NULL, 0, &ref), RT_EACTORDIED,
             "constructor returned 7");
    ck_ok(rt_shutdown());
}
END_TEST

int state_address(void *state, const void *arg, size_t len, rt_result *r);
int state_address(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    uint64_t address = (uint64_t)(uintptr_t)state;
    return rt_result_set(r, &address, sizeof address);
}

/* Like a Python class without __init__: no constructor, a NULL state. */
START_TEST(an_actor_needs_no_constructor)
{
    start_with(2, 0, 2);
    rt_actor_class plain = {"Plain", NULL, NULL};
    rt_actor a;
    ck_ok(rt_actor_create(&plain, NULL, NULL, 0, &a));
    ck_assert_uint_eq(call_actor_u64(a, state_address), 0);
    ck_assert_uint_eq(call_actor_u64(a, counter_pid), call_actor_u64(a, counter_pid));
    ck_ok(rt_shutdown());
}
END_TEST

/* ---- death, restarts, kills ------------------------------------------------ */

START_TEST(sigkilled_actor_fails_its_calls)
{
    start_with(2, 0, 2);
    rt_actor a;
    ck_ok(rt_actor_create(&counter_class, NULL, NULL, 0, &a));
    uint64_t pid = call_actor_u64(a, counter_pid);
    uint64_t ms = 5000;
    rt_ref slow, queued;
    ck_ok(rt_actor_call(a, counter_sleep, &ms, sizeof ms, &slow));
    ck_ok(rt_actor_call(a, counter_next, NULL, 0, &queued));
    usleep(200000);
    kill((pid_t)pid, SIGKILL);
    char want[128];
    snprintf(want, sizeof want, "the actor Counter (pid %d) died: killed by signal 9",
             (int)pid);
    ck_fails(rt_get(slow, NULL, NULL, 60000), RT_EACTORDIED, want);
    ck_fails(rt_get(queued, NULL, NULL, 60000), RT_EACTORDIED, want);
    rt_ref later;
    ck_fails(rt_actor_call(a, counter_next, NULL, 0, &later), RT_EACTORDIED, want);
    ck_ok(rt_shutdown());
}
END_TEST

/* A Counter holding cpus that restarts once. */
static rt_actor restartable_counter(double cpus)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_cpus = cpus;
    o.max_restarts = 1;
    rt_actor a;
    ck_ok(rt_actor_create(&counter_class, &o, NULL, 0, &a));
    return a;
}

/* m's answer, called until one is answered: calls sent to a process that
 * had died fail, and later ones reach the restarted actor. */
static uint64_t first_answer(rt_actor a, rt_method m)
{
    for (int tries = 0; tries < 100; tries++) {
        rt_ref ref;
        uint64_t *v;
        ck_ok(rt_actor_call(a, m, NULL, 0, &ref));
        if (rt_get(ref, (void **)&v, NULL, 60000) == 0) {
            uint64_t out = *v;
            rt_free(v);
            return out;
        }
    }
    ck_abort_msg("the actor never answered again");
    return 0;
}

START_TEST(max_restarts_runs_the_constructor_again)
{
    start_with(2, 0, 2);
    rt_actor a = restartable_counter(RT_DEFAULT);
    ck_assert_uint_eq(call_actor_u64(a, counter_next), 1);
    ck_assert_uint_eq(call_actor_u64(a, counter_next), 2);
    uint64_t pid = call_actor_u64(a, counter_pid);
    kill((pid_t)pid, SIGKILL);
    /* Calls made after the death go to the restarted actor, whose state
     * its constructor made anew. */
    uint64_t pid2 = first_answer(a, counter_pid);
    ck_assert_uint_ne(pid2, pid);
    ck_assert_uint_eq(call_actor_u64(a, counter_next), 1);
    kill((pid_t)pid2, SIGKILL);
    /* No restart left: it is dead. */
    rt_ref ref;
    int rc = 0;
    for (int tries = 0; tries < 100 && rc == 0; tries++) {
        rc = rt_actor_call(a, counter_next, NULL, 0, &ref);
        if (rc == 0)
            rc = rt_get(ref, NULL, NULL, 60000);
    }
    ck_fails(rc, RT_EACTORDIED, "killed by signal 9");
    ck_ok(rt_shutdown());
}
END_TEST

int counter_die(void *state, const void *arg, size_t len, rt_result *r);
int counter_die(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    (void)arg;
    (void)len;
    (void)r;
    raise(SIGKILL);
    return 0;
}

/* A call whose process dies while the actor restarts says who died and
 * how, as the last call of a dead actor does. */
START_TEST(a_call_lost_to_a_restart_says_why)
{
    start_with(2, 0, 2);
    rt_actor a = restartable_counter(RT_DEFAULT);
    uint64_t pid = call_actor_u64(a, counter_pid);
    rt_ref ref;
    ck_ok(rt_actor_call(a, counter_die, NULL, 0, &ref));
    char want[128];
    snprintf(want, sizeof want, "the actor Counter (pid %llu) died: killed by signal 9",
             (unsigned long long)pid);
    ck_fails(rt_get(ref, NULL, NULL, 60000), RT_EACTORDIED, want);
    ck_assert_msg(strstr(rt_last_error(), "restarts") != NULL, "%s", rt_last_error());
    ck_assert_uint_eq(call_actor_u64(a, counter_next), 1); /* restarted */
    ck_ok(rt_shutdown());
}
END_TEST

/* ---- an actor's process keeps its environment ---------------------------- */

int actor_setenv(void *state, const void *arg, size_t len, rt_result *r);
int actor_getenv(void *state, const void *arg, size_t len, rt_result *r);

/* arg: "NAME=value" (NUL-terminated). */
int actor_setenv(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    (void)len;
    (void)r;
    return putenv(strdup(arg));
}

/* arg: a name; the result: its value, or "-". */
int actor_getenv(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state;
    (void)len;
    const char *v = getenv(arg);
    v = v ? v : "-";
    return rt_result_set(r, v, strlen(v) + 1);
}

/* What a method sets stays for the next method, CUDA_VISIBLE_DEVICES too,
 * as in Ray; tasks that share a worker still start clean. */
START_TEST(an_actor_keeps_its_environment)
{
    start_with(2, 2, 2);
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 1;
    rt_actor a;
    ck_ok(rt_actor_create(&counter_class, &o, NULL, 0, &a));
    const char *sets[] = {"MASTER_ADDR=10.0.0.1", "CUDA_VISIBLE_DEVICES=7"};
    for (int i = 0; i < 2; i++) {
        rt_ref ref;
        ck_ok(rt_actor_call(a, actor_setenv, sets[i], strlen(sets[i]) + 1, &ref));
        ck_ok(rt_get(ref, NULL, NULL, 60000));
    }
    char *v = call_actor_str(a, actor_getenv, "MASTER_ADDR");
    ck_assert_str_eq(v, "10.0.0.1");
    rt_free(v);
    v = call_actor_str(a, actor_getenv, "CUDA_VISIBLE_DEVICES");
    ck_assert_str_eq(v, "7");
    rt_free(v);
    ck_ok(rt_shutdown());
}
END_TEST

/* ---- queueing: actors never wait behind requests that cannot start ---- */

static void init_with(double cpus, double gpus, const char *resources)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = cpus;
    c.num_gpus = gpus;
    c.resources = resources;
    c.num_workers = 1;
    ck_ok(rt_init_config(&c));
}

static rt_actor make_actor(double cpus, double gpus, const char *resources)
{
    rt_opts o = RT_OPTS_INIT;
    o.num_cpus = cpus;
    o.num_gpus = gpus;
    o.resources = resources;
    rt_actor a;
    ck_ok(rt_actor_create(&counter_class, &o, NULL, 0, &a));
    return a;
}

/* The actor's next count, within 10 s (a call that waits behind another
 * request would wait forever). */
static uint64_t answered(rt_actor a)
{
    rt_ref ref;
    ck_ok(rt_actor_call(a, counter_next, NULL, 0, &ref));
    return get_u64(ref, 10000);
}

/* Two 1-CPU actors on 1 CPU, both created before either is called: the
 * first answers while the second waits for the CPU it holds. */
START_TEST(an_actor_answers_while_another_waits_for_its_cpu)
{
    init_with(1, 0, NULL);
    rt_actor first = make_actor(1, 0, NULL), second = make_actor(1, 0, NULL);
    (void)second;
    ck_assert_uint_eq(answered(first), 1);
    ck_assert_uint_eq(answered(first), 2);
    ck_ok(rt_shutdown());
}
END_TEST

/* What an actor asks for, besides no CPU. */
typedef struct ask {
    double gpus;
    const char *resources;
} ask;

/* One actor holds part of the runtime's resources; a second asks for what
 * it cannot have while the first lives; a third, asking for what is left,
 * starts past the second and answers. */
static void starts_past_a_waiting_actor(double gpus, const char *resources, ask held,
                                        ask waits, ask fits)
{
    init_with(2, gpus, resources);
    rt_actor holder = make_actor(0, held.gpus, held.resources);
    ck_assert_uint_eq(answered(holder), 1);
    make_actor(0, waits.gpus, waits.resources);
    rt_actor later = make_actor(0, fits.gpus, fits.resources);
    ck_assert_uint_eq(answered(later), 1);
    ck_ok(rt_shutdown());
}

/* Custom=1: one actor holds 0.7; another asking 0.7 can never start while
 * it lives, so one asking 0.3 starts past it. */
START_TEST(a_small_actor_starts_past_one_that_cannot)
{
    starts_past_a_waiting_actor(0, "Custom=1", (ask){0, "Custom=0.7"}, (ask){0, "Custom=0.7"},
                                (ask){0, "Custom=0.3"});
}
END_TEST

/* Two GPUs: a 1-GPU actor holds one, a 2-GPU actor waits for both, and
 * another 1-GPU actor starts on the other. */
START_TEST(one_gpu_actors_start_while_a_two_gpu_actor_waits)
{
    starts_past_a_waiting_actor(2, NULL, (ask){1, NULL}, (ask){2, NULL}, (ask){1, NULL});
}
END_TEST

/* A task that waits for the CPU an actor holds does not hold back that
 * actor's calls. */
START_TEST(a_queued_task_does_not_block_the_actor_it_waits_for)
{
    init_with(1, 0, NULL);
    rt_actor a = make_actor(1, 0, NULL);
    ck_assert_uint_eq(answered(a), 1);
    rt_ref task;
    uint64_t x = 1;
    ck_ok(rt_remote(t_double, NULL, &x, sizeof x, &task));
    ck_assert_uint_eq(answered(a), 2);
    ck_ok(rt_actor_kill(a)); /* the CPU comes free: the task runs */
    ck_assert_uint_eq(get_u64(task, 10000), 2);
    ck_ok(rt_shutdown());
}
END_TEST

/* A restarting actor gives its CPU back while its process is down and
 * takes it again first (its constructor keeps its place in line); a task
 * submitted meanwhile waits for the actor to end, then runs: nothing
 * waits forever. */
START_TEST(a_restarting_actor_keeps_its_place_and_nothing_hangs)
{
    init_with(1, 0, NULL);
    rt_actor a = restartable_counter(1);
    uint64_t pid = call_actor_u64(a, counter_pid);
    ck_assert(available("CPU") == 0);
    rt_ref task;
    uint64_t x = 4;
    kill((pid_t)pid, SIGKILL);
    ck_ok(rt_remote(t_double, NULL, &x, sizeof x, &task));
    ck_assert_uint_eq(first_answer(a, counter_next), 1); /* restarted, counting anew */
    ck_assert(available("CPU") == 0);
    ck_fails(rt_get(task, NULL, NULL, 300), RT_ETIMEDOUT, "timed out");
    ck_ok(rt_actor_kill(a));
    ck_assert_uint_eq(get_u64(task, 10000), 8);
    ck_ok(rt_shutdown());
}
END_TEST

static char fini_path[128];

static int file_says(const char *path, const char *want)
{
    char got[64] = "";
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            size_t n = fread(got, 1, sizeof got - 1, f);
            got[n] = '\0';
            fclose(f);
            if (strcmp(got, want) == 0)
                return 1;
        }
        usleep(10000);
    }
    return 0;
}

/* Killing runs the destructor, ends the process and gives the GPU back:
 * an actor waiting for it starts, and calls made meanwhile wait. */
START_TEST(kill_runs_the_destructor_and_frees_the_gpu)
{
    start_with(2, 1, 2);
    temp_path(fini_path, sizeof fini_path, "fini");
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 1;
    rt_actor first, second;
    ck_ok(rt_actor_create(&counter_class, &o, fini_path, strlen(fini_path), &first));
    ck_assert_uint_eq(call_actor_u64(first, counter_next), 1);
    ck_ok(rt_actor_create(&counter_class, &o, NULL, 0, &second));
    rt_ref waiting;
    ck_ok(rt_actor_call(second, actor_devices, NULL, 0, &waiting));
    ck_fails(rt_get(waiting, NULL, NULL, 300), RT_ETIMEDOUT, "timed out");
    ck_ok(rt_actor_kill(first));
    ck_ok(rt_actor_kill(first)); /* twice is fine */
    char *seen;
    ck_ok(rt_get(waiting, (void **)&seen, NULL, 60000));
    ck_assert_str_eq(seen, "ids=0 cvd=0 order=PCI_BUS_ID neuron=-");
    rt_free(seen);
    ck_assert_msg(file_says(fini_path, "fini 1"), "the destructor did not run");
    unlink(fini_path);
    rt_ref ref;
    ck_fails(rt_actor_call(first, counter_next, NULL, 0, &ref), RT_EACTORDIED,
             "the actor Counter was killed");
    ck_ok(rt_shutdown());
}
END_TEST

START_TEST(shutdown_runs_destructors)
{
    start_with(2, 0, 2);
    temp_path(fini_path, sizeof fini_path, "fini");
    rt_actor a;
    ck_ok(rt_actor_create(&counter_class, NULL, fini_path, strlen(fini_path), &a));
    ck_assert_uint_eq(call_actor_u64(a, counter_next), 1);
    ck_assert_uint_eq(call_actor_u64(a, counter_next), 2);
    ck_ok(rt_shutdown());
    ck_assert_msg(file_says(fini_path, "fini 2"), "the destructor did not run");
    unlink(fini_path);
}
END_TEST

/* ---- names, and actors that tasks create ------------------------------------ */

static rt_opts named(const char *name, int get_if_exists)
{
    rt_opts o = RT_OPTS_INIT;
    o.name = name;
    o.get_if_exists = get_if_exists;
    return o;
}

/* Ray's named actors: one live actor has a name; rt_actor_get() finds
 * it; get_if_exists takes it instead of a second; the name is free again
 * once its actor is killed. */
START_TEST(a_name_is_one_live_actors)
{
    start_with(2, 0, 2);
    rt_opts o = named("the-counter", 0);
    rt_actor a, found, twin;
    ck_ok(rt_actor_create(&counter_class, &o, NULL, 0, &a));
    ck_ok(rt_actor_get("the-counter", &found));
    ck_assert_uint_eq(found.id, a.id);
    ck_fails(rt_actor_create(&counter_class, &o, NULL, 0, &twin), RT_EEXIST, "the-counter");
    ck_assert_str_eq(rt_strerror(RT_EEXIST), "an actor of that name exists");
    o = named("the-counter", 1);
    ck_ok(rt_actor_create(&counter_class, &o, NULL, 0, &twin));
    ck_assert_uint_eq(twin.id, a.id);
    ck_assert_uint_eq(call_actor_u64(found, counter_next), 1);
    ck_assert_uint_eq(call_actor_u64(twin, counter_next), 2); /* one state */
    ck_fails(rt_actor_get("no-such-actor", &found), RT_EBADREF, "no-such-actor");
    o = named(NULL, 1);
    ck_fails(rt_actor_create(&counter_class, &o, NULL, 0, &twin), RT_EINVAL, "opts.name");
    rt_opts for_a_task = RT_OPTS_INIT;
    for_a_task.detached = 1;
    rt_ref ref;
    ck_fails(rt_remote(t_echo, &for_a_task, NULL, 0, &ref), RT_EINVAL, "for actors");
    ck_ok(rt_actor_kill(a));
    ck_fails(rt_actor_get("the-counter", &found), RT_EBADREF, "the-counter");
    o = named("the-counter", 0);
    ck_ok(rt_actor_create(&counter_class, &o, NULL, 0, &twin));
    ck_assert_uint_ne(twin.id, a.id);
    ck_assert_uint_eq(call_actor_u64(twin, counter_next), 1);
    ck_ok(rt_shutdown());
}
END_TEST

/* A task creates an actor, calls it, and answers with its handle; with
 * detached (arg "1") the actor lives on under its name. */
static int make_an_actor(const void *arg, size_t len, rt_result *r)
{
    rt_opts o = RT_OPTS_INIT;
    o.name = "made-by-a-task";
    o.detached = len && *(const char *)arg == '1';
    rt_actor a, found;
    rt_ref ref;
    void *v;
    if (rt_actor_create(&counter_class, &o, NULL, 0, &a) < 0 ||
        rt_actor_get("made-by-a-task", &found) < 0 || found.id != a.id ||
        rt_actor_call(a, counter_next, NULL, 0, &ref) < 0 || rt_get(ref, &v, NULL, 60000) < 0)
        return 1;
    rt_free(v);
    return rt_result_set(r, &a, sizeof a);
}

static rt_actor actor_made_by_a_task(const char *detached)
{
    rt_ref ref;
    rt_actor *a;
    ck_ok(rt_remote(make_an_actor, NULL, detached, strlen(detached), &ref));
    ck_ok(rt_get(ref, (void **)&a, NULL, 60000));
    rt_actor copy = *a;
    rt_free(a);
    return copy;
}

/* Ray's actors are owned by who made them: one a task creates dies when
 * the task ends, unless it is detached, when it outlives the task (and
 * rt_actor_get() finds it from anywhere). */
START_TEST(an_actor_a_task_creates_dies_with_it_unless_detached)
{
    start_with(2, 0, 2);
    rt_actor a = actor_made_by_a_task("0");
    rt_ref ref;
    ck_fails(rt_actor_call(a, counter_next, NULL, 0, &ref), RT_EACTORDIED, "killed");
    rt_actor found;
    ck_fails(rt_actor_get("made-by-a-task", &found), RT_EBADREF, "made-by-a-task");
    a = actor_made_by_a_task("1");
    ck_ok(rt_actor_get("made-by-a-task", &found));
    ck_assert_uint_eq(found.id, a.id);
    ck_assert_uint_eq(call_actor_u64(a, counter_next), 2); /* the task's call was 1 */
    ck_ok(rt_actor_kill(a));
    ck_ok(rt_shutdown());
}
END_TEST

/* A task restarts an actor the application made (Ray lets any worker). */
static int restart_it(const void *arg, size_t len, rt_result *r)
{
    (void)r;
    rt_actor a;
    if (len != sizeof a)
        return 1;
    memcpy(&a, arg, sizeof a);
    return rt_actor_restart(a) < 0;
}

START_TEST(a_task_restarts_an_actor)
{
    start_with(2, 0, 2);
    rt_opts o = RT_OPTS_INIT;
    o.max_restarts = 1;
    o.max_task_retries = 1; /* a call sent as the process is killed runs again */
    rt_actor a;
    ck_ok(rt_actor_create(&counter_class, &o, NULL, 0, &a));
    uint64_t pid = call_actor_u64(a, counter_pid);
    rt_ref ref;
    ck_ok(rt_remote(restart_it, NULL, &a, sizeof a, &ref));
    ck_ok(rt_get(ref, NULL, NULL, 60000));
    ck_assert_uint_ne(call_actor_u64(a, counter_pid), pid);
    ck_ok(rt_shutdown());
}
END_TEST

Suite *actors_suite(void)
{
    Suite *s = suite_create("actors");
    TCase *tc = tcase_create("actors");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, reference_gpu_actor_then_task);
    tcase_add_test(tc, fractional_actors_pack);
    tcase_add_test(tc, ten_thousand_calls_run_in_order);
    tcase_add_test(tc, calls_run_in_order_by_socket_and_inbox);
    tcase_add_test(tc, infeasible_or_bad_actors_are_refused);
    tcase_add_test(tc, an_actor_needs_no_constructor);
    tcase_add_test(tc, sigkilled_actor_fails_its_calls);
    tcase_add_test(tc, max_restarts_runs_the_constructor_again);
    tcase_add_test(tc, a_call_lost_to_a_restart_says_why);
    tcase_add_test(tc, an_actor_keeps_its_environment);
    tcase_add_test(tc, an_actor_answers_while_another_waits_for_its_cpu);
    tcase_add_test(tc, a_small_actor_starts_past_one_that_cannot);
    tcase_add_test(tc, one_gpu_actors_start_while_a_two_gpu_actor_waits);
    tcase_add_test(tc, a_queued_task_does_not_block_the_actor_it_waits_for);
    tcase_add_test(tc, a_restarting_actor_keeps_its_place_and_nothing_hangs);
    tcase_add_test(tc, kill_runs_the_destructor_and_frees_the_gpu);
    tcase_add_test(tc, shutdown_runs_destructors);
    tcase_add_test(tc, a_name_is_one_live_actors);
    tcase_add_test(tc, an_actor_a_task_creates_dies_with_it_unless_detached);
    tcase_add_test(tc, a_task_restarts_an_actor);
    suite_add_tcase(s, tc);
    return s;
}

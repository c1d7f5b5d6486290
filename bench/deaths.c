/*
 * deaths.c - what a worker's death costs: workers SIGKILLed at random,
 * one per 100 tasks, counting the tasks that fail (max_retries = 0) or run
 * twice (the default) per kill.  Ray's answer, and the goal, is the task
 * that was running: 1 per kill at most.
 */
#include "bench.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define WAVE 100     /* tasks per kill */
#define SPIN_US 10   /* each task's work: a wave lasts about 500 us */

/* How often each task ran: shared with the workers, which are forked
 * after it is mapped. */
static _Atomic uint32_t *runs;

/* Count this run, spin SPIN_US, and answer with the worker's pid. */
int counted(const void *arg, size_t len, rt_result *r);
int counted(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    atomic_fetch_add(&runs[*(const uint64_t *)arg], 1);
    for (double end = now() + SPIN_US * 1e-6; now() < end;)
        ;
    uint64_t pid = (uint64_t)getpid();
    return rt_result_set(r, &pid, sizeof pid);
}

static void sleep_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* n tasks in waves of WAVE; while each wave runs, one of the workers
 * that answered the last wave is killed.  *per_kill: failed tasks per kill
 * (max_retries 0), or tasks run more than once per kill. */
static void under_fire(size_t n, int max_retries, double *per_kill)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 2;
    c.num_gpus = 0;
    c.num_workers = 2;
    for (size_t i = 0; i < n; i++)
        runs[i] = 0;
    check(rt_init_config(&c), "rt_init");
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = max_retries;
    unsigned seed = 7;
    pid_t seen[2] = {0, 0};
    long kills = 0, failed = 0, twice = 0;
    rt_ref refs[WAVE];
    for (uint64_t first = 0; first + WAVE <= n; first += WAVE) {
        for (uint64_t i = 0; i < WAVE; i++) {
            uint64_t id = first + i;
            check(rt_remote(counted, &o, &id, sizeof id, &refs[i]), "rt_remote");
        }
        sleep_us(rand_r(&seed) % 400);
        pid_t victim = seen[rand_r(&seed) % 2];
        kills += victim > 0 && kill(victim, SIGKILL) == 0;
        for (int i = 0; i < WAVE; i++) {
            uint64_t *pid = NULL;
            int rc = rt_get(refs[i], (void **)&pid, NULL, RT_FOREVER);
            failed += rc != 0;
            if (rc == 0)
                seen[(i * 2) / WAVE] = (pid_t)*pid;
            rt_free(pid);
        }
    }
    check(rt_shutdown(), "rt_shutdown");
    for (size_t i = 0; i < n; i++)
        twice += runs[i] > 1;
    long cost = max_retries ? twice : failed;
    *per_kill = kills ? (double)cost / (double)kills : 0;
}

void bench_deaths(void)
{
    printf("\n11. Workers SIGKILLed at random, one per %d tasks of %d us\n", WAVE, SPIN_US);
    size_t n = scaled(20000);
    runs = mmap(NULL, n * sizeof *runs, PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (runs == MAP_FAILED) {
        perror("bench: mmap");
        exit(1);
    }
    double once[REPS], again[REPS];
    for (int i = 0; i < REPS; i++) {
        under_fire(n, 0, &once[i]);
        under_fire(n, 3, &again[i]);
    }
    double failed = median(once, REPS), twice = median(again, REPS);
    row("rtask, max_retries = 0: tasks failed per kill", failed, "tasks", "");
    row("rtask, default: tasks run twice per kill", twice, "tasks", "");
    row("Ray: the task that was running", 1, "tasks", "at most, per kill");
    verdict("failed per kill / 1", failed, 1, 1);
    verdict("run twice per kill / 1", twice, 1, 1);
    munmap(runs, n * sizeof *runs);
}

/* cluster_sweep.c - a sweep on half GPUs, over every machine of an MPI
 * job.
 *
 * The same program runs on one machine and, unchanged, on many:
 *
 *     ./cluster_sweep                                    one machine
 *     RTASK_CLUSTER=mpi mpirun -np 2 ./cluster_sweep     every rank's GPUs
 *
 * Twenty-four trials, each on half a GPU, score one learning rate each;
 * a trial waits half a second for its "GPU", so they all run at once if
 * there are twelve GPUs in the job.  Each trial says which machine ran
 * it; the program prints how many trials each machine ran, and the best
 * rate.  On one machine with eight GPUs (test/fake/h100x8), sixteen run at
 * once and the last eight after them. */
#include "example.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct trial {
    double learning_rate;
    double score;
    char machine[64]; /* the fake machine the rank read, or the host */
} trial;

int run_trial(const void *arg, size_t len, rt_result *result);

int run_trial(const void *arg, size_t len, rt_result *result)
{
    if (len != sizeof(trial))
        return 1;
    trial t = *(const trial *)arg;
    double off = t.learning_rate - 0.1; /* the best rate, as training would find */
    t.score = 1.0 / (1.0 + 100 * off * off);
    const char *fake = getenv("RTASK_SYSFS_ROOT");
    if (fake)
        snprintf(t.machine, sizeof t.machine, "%s", fake);
    else
        gethostname(t.machine, sizeof t.machine - 1);
    nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL); /* the "GPU" */
    return rt_result_set(result, &t, sizeof t);
}

enum { TRIALS = 24, MACHINES = 64 };

int main(void)
{
    check(rt_init(RT_DETECT), "rt_init"); /* RTASK_CLUSTER=mpi: only rank 0 returns */
    rt_opts half_gpu = RT_OPTS_INIT;
    half_gpu.num_gpus = 0.5;
    half_gpu.num_cpus = 0; /* it waits on its GPU (and mpirun gives a rank one core) */

    rt_ref refs[TRIALS];
    for (int i = 0; i < TRIALS; i++) {
        trial t = {.learning_rate = 0.01 * (i + 1)};
        check(rt_remote(run_trial, &half_gpu, &t, sizeof t, &refs[i]), "rt_remote");
    }
    char machine[MACHINES][64];
    int ran[MACHINES] = {0}, machines = 0;
    trial best = {0};
    for (int i = 0; i < TRIALS; i++) {
        trial *t;
        check(rt_get(refs[i], (void **)&t, NULL, RT_FOREVER), "trial");
        int m = 0;
        while (m < machines && strcmp(machine[m], t->machine) != 0)
            m++;
        if (m == machines && machines < MACHINES)
            snprintf(machine[machines++], sizeof machine[0], "%s", t->machine);
        ran[m < MACHINES ? m : 0]++;
        if (t->score > best.score)
            best = *t;
        rt_free(t);
    }
    for (int m = 0; m < machines; m++)
        printf("%s ran %d trials\n", machine[m], ran[m]);
    printf("best: lr %g, score %.3f, on %s\n", best.learning_rate, best.score,
           best.machine);
    return rt_shutdown() < 0;
}

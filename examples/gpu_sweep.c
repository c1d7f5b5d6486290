/* gpu_sweep.c - a hyper-parameter sweep on fractional GPUs.
 *
 * Eight trials of one model, each with its own learning rate, each on half
 * a GPU and half a CPU (a trial mostly waits for its GPU): with 2 GPUs and
 * 2 CPUs, four trials run at a time and every GPU is shared by two.  A
 * trial fits y = 3x + 2 by gradient descent and waits a little, standing
 * for the training a real one would run on its GPU, then hands back its
 * loss and the device it was given.  The results are gathered in the
 * order the trials finish, with rt_wait(), and printed in trial order
 * with the best one.  Which trial got which GPU varies from run to run. */
#include "example.h"

#include <string.h>
#include <time.h>

typedef struct trial {
    double learning_rate;
    double loss, w, b;
    char gpu[16];  /* what rt_get_gpu_ids() said */
    int isolated;  /* CUDA_VISIBLE_DEVICES named that GPU alone */
} trial;

int train_trial(const void *arg, size_t len, rt_result *result);

/* Full-batch gradient descent on 64 points of y = 3x + 2, x in [0, 1). */
static void fit(trial *t)
{
    enum { POINTS = 64, STEPS = 300 };
    t->w = t->b = 0;
    for (int step = 0; step <= STEPS; step++) {
        double dw = 0, db = 0, loss = 0;
        for (int i = 0; i < POINTS; i++) {
            double x = (double)i / POINTS, error = t->w * x + t->b - (3 * x + 2);
            dw += error * x;
            db += error;
            loss += error * error;
        }
        t->loss = loss / POINTS;
        t->w -= t->learning_rate * 2 * dw / POINTS;
        t->b -= t->learning_rate * 2 * db / POINTS;
    }
}

int train_trial(const void *arg, size_t len, rt_result *result)
{
    if (len != sizeof(trial))
        return 1;
    trial t = *(const trial *)arg;
    const char *const *ids;
    size_t n;
    if (rt_get_gpu_ids(&ids, &n) < 0 || n != 1)
        return 1;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(t.gpu, sizeof t.gpu, "%s", ids[0]);
    t.isolated = visible && strcmp(visible, ids[0]) == 0;
    fit(&t);
    nanosleep(&(struct timespec){0, 200 * 1000 * 1000}, NULL); /* the "GPU" */
    return rt_result_set(result, &t, sizeof t);
}

enum { TRIALS = 8 };
static const double learning_rates[TRIALS] = {0.001, 0.003, 0.01, 0.03,
                                              0.1,   0.3,   1.0,  3.0};

/* Take each trial's result as soon as it is ready. */
static void gather(rt_ref *refs, trial *trials)
{
    rt_ref pending[TRIALS];
    memcpy(pending, refs, sizeof pending);
    size_t left = TRIALS, ready;
    while (left > 0) {
        check(rt_wait(pending, left, 1, RT_FOREVER, &ready), "rt_wait");
        for (size_t r = 0; r < ready; r++) {
            int i = 0;
            while (refs[i].id != pending[r].id)
                i++;
            trial *done;
            check(rt_get(refs[i], (void **)&done, NULL, 0), "trial");
            trials[i] = *done;
            rt_free(done);
        }
        memmove(pending, pending + ready, (left - ready) * sizeof *pending);
        left -= ready;
    }
}

int main(void)
{
    check(rt_init(2), "rt_init");
    rt_opts half_gpu = RT_OPTS_INIT;
    half_gpu.num_gpus = 0.5;
    half_gpu.num_cpus = 0.5;

    rt_ref refs[TRIALS];
    trial trials[TRIALS];
    for (int i = 0; i < TRIALS; i++) {
        trial t = {.learning_rate = learning_rates[i]};
        check(rt_remote(train_trial, &half_gpu, &t, sizeof t, &refs[i]), "rt_remote");
    }
    gather(refs, trials);

    int best = 0;
    for (int i = 0; i < TRIALS; i++) {
        trial *t = &trials[i];
        printf("trial %d  lr %-5g  ", i, t->learning_rate);
        if (t->loss < 1e6) /* false for NaN too */
            printf("loss %-9.3g w %-5.3g b %-5.3g", t->loss, t->w, t->b);
        else
            printf("%-31s", "diverged");
        printf("  on GPU %s%s\n", t->gpu,
               t->isolated ? "" : " (CUDA_VISIBLE_DEVICES does not match!)");
        if (t->loss < trials[best].loss)
            best = i;
    }
    printf("best: trial %d, lr %g, loss %.3g\n", best, trials[best].learning_rate,
           trials[best].loss);
    return rt_shutdown() < 0;
}

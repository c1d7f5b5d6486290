/* param_sweep.c - a hyper-parameter sweep whose 32 trials share one data
 * set, put once into the object store.
 *
 * The data set (16 MiB of points on a noisy line y = 2.5 x + 1) is given
 * to rt_put() once; each trial takes it as an object, mapped into its
 * worker without a copy, and its own learning rate as bytes, fits the
 * line by gradient descent and hands back its final loss.  Without
 * objects, each of the 32 trials would get its own 16 MiB copy. */
#include "example.h"

#include <stdint.h>
#include <string.h>

enum { POINTS = 1 << 21, TRIALS = 32, STEPS = 20 };

typedef struct fit {
    float rate, a, b;
    double loss;
} fit;

int train(const rt_value *args, size_t nargs, rt_result *result);

/* Gradient descent on the mean squared error of y = a x + b. */
int train(const rt_value *args, size_t nargs, rt_result *result)
{
    (void)nargs;
    const float *xy = args[0].data;
    size_t n = args[0].len / (2 * sizeof *xy);
    fit f = {.a = 0, .b = 0};
    memcpy(&f.rate, args[1].data, sizeof f.rate);
    for (int step = 0; step <= STEPS; step++) {
        double ga = 0, gb = 0, loss = 0;
        for (size_t i = 0; i < n; i++) {
            double err = f.a * xy[2 * i] + f.b - xy[2 * i + 1];
            ga += err * xy[2 * i];
            gb += err;
            loss += err * err;
        }
        f.loss = loss / (double)n;
        f.a -= (float)(f.rate * 2 * ga / (double)n);
        f.b -= (float)(f.rate * 2 * gb / (double)n);
    }
    return rt_result_set(result, &f, sizeof f);
}

int main(void)
{
    check(rt_init(0), "rt_init"); /* first, before the data is made */
    float *xy = malloc(2 * POINTS * sizeof *xy);
    uint32_t seed = 1;
    for (size_t i = 0; i < POINTS; i++) {
        seed = seed * 1664525u + 1013904223u;
        float noise = (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
        xy[2 * i] = (float)i / POINTS;
        xy[2 * i + 1] = 2.5f * xy[2 * i] + 1 + 0.1f * noise;
    }
    rt_ref data, trials[TRIALS];
    check(rt_put(xy, 2 * POINTS * sizeof *xy, &data), "rt_put");
    free(xy); /* the store has its copy */
    for (int t = 0; t < TRIALS; t++) {
        float rate = 0.05f * (float)(t + 1);
        rt_arg args[] = {RT_ARG_REF(data), RT_ARG_BYTES(&rate, sizeof rate)};
        check(rt_remote_args(train, NULL, args, 2, &trials[t]), "rt_remote_args");
    }
    check(rt_release(data), "rt_release"); /* the trials hold it */
    fit best = {.loss = -1};
    for (int t = 0; t < TRIALS; t++) {
        fit *f;
        check(rt_get(trials[t], (void **)&f, NULL, RT_FOREVER), "rt_get");
        if (best.loss < 0 || f->loss < best.loss)
            best = *f;
        rt_free(f);
    }
    printf("%d trials on one %zu MiB data set: best learning rate %.2f, loss %.4f\n",
           TRIALS, (size_t)(2 * POINTS * sizeof(float)) >> 20, best.rate, best.loss);
    return rt_shutdown() < 0;
}

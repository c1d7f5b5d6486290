/* param_server.c - a parameter server: 8 worker tasks push gradients
 * straight to an actor, with no stop in this program.
 *
 * The actor holds a model (a vector of weights).  Each worker task gets
 * the actor's handle in its argument bytes, and for a number of rounds
 * pulls the weights from the actor, computes a gradient towards its own
 * target, and pushes it: rt_actor_call() from inside a task.  The actor
 * applies each push as it comes (its calls run one at a time).  This
 * program only starts the workers and reads the final model.
 */
#include "example.h"

#include <stdint.h>
#include <string.h>

#define DIM 4
#define WORKERS 8
#define ROUNDS 40

typedef struct model {
    double w[DIM];
    uint64_t pushes;
} model;

int server_init(const void *arg, size_t len, void **state);
int server_pull(void *state, const void *arg, size_t len, rt_result *result);
int server_push(void *state, const void *arg, size_t len, rt_result *result);
int worker(const void *arg, size_t len, rt_result *result);

int server_init(const void *arg, size_t len, void **state)
{
    (void)arg, (void)len;
    *state = calloc(1, sizeof(model));
    return *state ? 0 : 1;
}

int server_pull(void *state, const void *arg, size_t len, rt_result *result)
{
    (void)arg, (void)len;
    return rt_result_set(result, state, sizeof(model));
}

/* Apply a gradient: w -= 0.5 * g. */
int server_push(void *state, const void *arg, size_t len, rt_result *result)
{
    (void)result;
    model *m = state;
    if (len != sizeof(double) * DIM)
        return 1;
    const double *g = arg;
    for (int i = 0; i < DIM; i++)
        m->w[i] -= 0.5 * g[i];
    m->pushes++;
    return 0;
}

/* A worker (arg: the server's handle) pulls the weights and pushes the
 * gradient of the loss
 * (w - target)^2 / 2 on its share of the data, whose target is 1, 2, 3,
 * 4 (the same for all: the data are one distribution). */
int worker(const void *arg, size_t len, rt_result *result)
{
    (void)len, (void)result;
    rt_actor server;
    memcpy(&server, arg, sizeof server);
    for (int round = 0; round < ROUNDS; round++) {
        rt_ref pulled, pushed;
        model *m;
        check(rt_actor_call(server, server_pull, NULL, 0, &pulled), "pull");
        check(rt_get(pulled, (void **)&m, NULL, RT_FOREVER), "pull result");
        double g[DIM];
        for (int i = 0; i < DIM; i++) {
            g[i] = (m->w[i] - (i + 1)) / WORKERS;
        }
        rt_free(m);
        check(rt_actor_call(server, server_push, g, sizeof g, &pushed), "push");
        check(rt_release(pushed), "release"); /* the push needs no answer */
    }
    return 0;
}

int main(void)
{
    check(rt_init(0), "rt_init");
    static const rt_actor_class server = {"ParameterServer", server_init, free};
    rt_actor ps;
    check(rt_actor_create(&server, NULL, NULL, 0, &ps), "rt_actor_create");
    rt_ref workers[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        check(rt_remote(worker, NULL, &ps, sizeof ps, &workers[i]), "rt_remote");
    for (int i = 0; i < WORKERS; i++)
        check(rt_get(workers[i], NULL, NULL, RT_FOREVER), "worker");
    rt_ref ref;
    model *m;
    check(rt_actor_call(ps, server_pull, NULL, 0, &ref), "pull");
    check(rt_get(ref, (void **)&m, NULL, RT_FOREVER), "model");
    printf("%llu pushes from %d workers\n", (unsigned long long)m->pushes, WORKERS);
    printf("weights:");
    for (int i = 0; i < DIM; i++)
        printf(" %.1f", m->w[i]);
    printf("\n");
    rt_free(m);
    check(rt_shutdown(), "rt_shutdown");
    return 0;
}

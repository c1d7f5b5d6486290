/* app_mpi.c - a program that uses MPI itself, as rt_init(3) allows: it
 * initializes MPI with MPI_THREAD_MULTIPLE, uses it on every rank before
 * rt_init(), on rank 0 alone after it (MPI_COMM_SELF), and finalizes it
 * after rt_shutdown().  Run by mk/check-mpi under mpirun with 2 ranks. */
#include <mpi.h>
#include <rtask.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value rank 0 broadcast before rt_init(), as this rank's worker sees
 * it: from the environment the rank set. */
static int seen(const void *arg, size_t len, rt_result *res)
{
    (void)arg, (void)len;
    int v = atoi(getenv("APP_VALUE"));
    return rt_result_set(res, &v, sizeof v);
}

int main(int argc, char **argv)
{
    int level, rank, value = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        value = 42;
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD); /* every rank, before rt_init */
    char env[32];
    snprintf(env, sizeof env, "%d", value + rank);
    setenv("APP_VALUE", env, 1);
    rt_config c = RT_CONFIG_INIT;
    c.cluster = "mpi";
    if (rt_init_config(&c) < 0) { /* rank 1 serves inside, and exits there */
        fprintf(stderr, "app_mpi: rt_init: %s\n", rt_last_error());
        return 1;
    }
    rt_opts o = RT_OPTS_INIT;
    o.num_gpus = 1;
    o.accelerator_type = RT_ACCEL_NVIDIA_H100; /* rank 1's */
    rt_ref r;
    void *v = NULL;
    int ok = rt_remote(seen, &o, NULL, 0, &r) == 0 && rt_get(r, &v, NULL, 60000) == 0 &&
             *(int *)v == 43;
    rt_free(v);
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF); /* rank 0 alone */
    ok = ok && sum == 1 && rt_shutdown() == 0;
    MPI_Finalize();
    printf("app_mpi: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}

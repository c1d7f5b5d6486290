/*
 * cluster.c - rtask over MPI, next to MPI's own figures measured in the
 * same run: `make bench` runs it under mpirun with 3 ranks on this machine.
 *
 * It uses MPI itself, as rt_init(3) allows: before rt_init() every rank
 * takes part in MPI's ping-pong, message rate and 256 MiB transfer between
 * ranks 0 and 1; then rank 0 drives rtask.  Rank 0 offers the resource
 * "near", the others "far", so that a task's options say where it runs.
 */
#include "bench.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
    int level, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
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
    check(rt_shutdown(), "rt_shutdown");
    MPI_Finalize();
    return 0;
}

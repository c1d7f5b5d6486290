/*
 * mpi_ops.h - what rtask asks of MPI, as the module built with mpicc gives it.
 *
 * Programs never link MPI: rt_init() loads the module (lib/mpi/module.c,
 * built as rtask-mpi.so by mpicc where MPI is installed) with dlopen and
 * RTLD_GLOBAL, and finds this table under the symbol RT__MPI_SYMBOL.  The
 * module is a thin layer over MPI on a communicator of its own; every call
 * is made by one thread, the bridge's (bridge.h).
 */
#ifndef RT_MPI_OPS_H
#define RT_MPI_OPS_H

#include <stddef.h>

#define RT__MPI_SYMBOL "rt__mpi_module"
#define RT__MPI_ABI 1
/* The largest piece one call moves; larger payloads go in pieces. */
#define RT__MPI_PIECE ((size_t)1 << 30)

typedef struct rt__mpi {
    int abi; /* RT__MPI_ABI */
    /* Join the job: initialize MPI unless the application did (it then
     * needs MPI_THREAD_MULTIPLE), and make the communicator.  0, or -1
     * with a message in err. */
    int (*join)(int *rank, int *size, char *err, size_t errlen);
    /* Every rank gives len bytes; rank 0 gets them all in rank order. */
    int (*gather)(const void *mine, size_t len, void *all);
    /* Rank 0's len bytes to every rank. */
    int (*bcast)(void *buf, size_t len);
    /* Post a send of len <= RT__MPI_PIECE bytes; *req is its request. */
    int (*isend)(const void *buf, size_t len, int rank, int tag, void **req);
    /* 1 when the send has completed (req freed), 0 when not yet. */
    int (*test)(void **req);
    /* A message waiting, from any rank: 1 with who sent it, its tag and
     * length; 0 when none.  It also makes MPI progress. */
    int (*probe)(int *rank, int *tag, size_t *len);
    /* Receive the message probe() found, or the next with that tag from
     * rank, into buf (blocking). */
    int (*recv)(void *buf, size_t len, int rank, int tag);
    /* Leave the job: free the communicator, and finalize MPI when it was
     * initialized here, or when finalize is set (a serving rank, whose
     * program never gets past rt_init() to finalize it). */
    void (*leave)(int finalize);
    /* The end of every rank, with a message (a rank that cannot go on). */
    void (*abort)(int code);
} rt__mpi;

#endif

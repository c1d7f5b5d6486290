/* module.c - the MPI module (rtask-mpi.so): rtask's needs (../mpi_ops.h) met
 * with MPI calls, built by mpicc.  Every call runs on the bridge thread. */
#include "../mpi_ops.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

static MPI_Comm comm = MPI_COMM_NULL;
static int we_initialized;

/* A process rt_init() guards (rt_config.guard_memory) is not dumpable.
 * Open MPI's single copy between the ranks of one machine (CMA) reads
 * another rank's memory as ptrace(2) would, which fails there: it is
 * turned off, unless the job set it. */
static void use_no_single_copy(void)
{
    if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
        setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
}

static int join(int *rank, int *size, char *err, size_t errlen)
{
    int inited = 0, level = 0;
    MPI_Initialized(&inited);
    if (inited) {
        MPI_Query_thread(&level);
        if (level < MPI_THREAD_MULTIPLE) {
            snprintf(err, errlen, "the application initialized MPI below "
                     "MPI_THREAD_MULTIPLE, which rtask's own thread needs");
            return -1;
        }
    } else {
        use_no_single_copy();
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &level) != MPI_SUCCESS) {
            snprintf(err, errlen, "MPI_Init_thread failed");
            return -1;
        }
        we_initialized = 1;
    }
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Comm_dup failed");
        return -1;
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, size);
    return 0;
}

static int ok(int rc)
{
    return rc == MPI_SUCCESS ? 0 : -1;
}

static int gather(const void *mine, size_t len, void *all)
{
    return ok(MPI_Gather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, 0, comm));
}

static int bcast(void *buf, size_t len)
{
    return ok(MPI_Bcast(buf, (int)len, MPI_BYTE, 0, comm));
}

static int isend(const void *buf, size_t len, int rank, int tag, void **req)
{
    MPI_Request *r = malloc(sizeof *r);
    if (!r)
        return -1;
    if (MPI_Isend(buf, (int)len, MPI_BYTE, rank, tag, comm, r) != MPI_SUCCESS) {
        free(r);
        return -1;
    }
    *req = r;
    return 0;
}

static int test(void **req)
{
    int done = 0;
    if (MPI_Test(*req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return -1;
    if (done) {
        free(*req);
        *req = NULL;
    }
    return done;
}

static int probe(int *rank, int *tag, size_t *len)
{
    int found = 0, count = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &found, &st) != MPI_SUCCESS)
        return -1;
    if (!found)
        return 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    *rank = st.MPI_SOURCE;
    *tag = st.MPI_TAG;
    *len = (size_t)count;
    return 1;
}

static int recv(void *buf, size_t len, int rank, int tag)
{
    return ok(MPI_Recv(buf, (int)len, MPI_BYTE, rank, tag, comm, MPI_STATUS_IGNORE));
}

static void leave(int finalize)
{
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    if (we_initialized || finalize)
        MPI_Finalize();
}

static void abort_all(int code)
{
    MPI_Abort(comm != MPI_COMM_NULL ? comm : MPI_COMM_WORLD, code);
}

const rt__mpi rt__mpi_module = {RT__MPI_ABI, join, gather, bcast, isend, test,
                                probe, recv, leave, abort_all};

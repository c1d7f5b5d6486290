/* cluster.c - joining an MPI job, and the ranks' parts in it. */
#include "cluster.h"

#include "base/alloc.h"
#include "base/error.h"
#include "cluster/bridge.h"
#include "cluster/image.h"
#include "cluster/peer.h"
#include "cluster/tunnel.h"
#include "cluster/serve.h"
#include "node/output.h"

#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RT_MPI_MODULE_DIR
#define RT_MPI_MODULE_DIR "/usr/local/lib/rtask"
#endif
#define MODULE_NAME "rtask-mpi.so"
#define BYE_WAIT_MS 60000 /* how long rank 0 waits for the ranks to stop */

/* What a rank tells rank 0 when it joins: its offer is plain data, and
 * every rank runs the same program. */
typedef struct node_desc {
    char identity[192];
    char host[64];
    rt__offer offer;
} node_desc;

struct rt__cluster {
    rt__bridge *bridge;
    int rank, size;
    rt__peer **peer;                /* rank 0: the other ranks' nodes,
                                       size of them (rank 0's NULL) */
    rt__fn_cache *places;           /* rank 0: the functions they were sent */
    rt__serve *serve;               /* the others: what serves rank 0 */
    rt__tunnel *tunnel;               /* tasks' calls, to rank 0 */
    node_desc *descs;               /* rank 0, from join to start: every
                                       rank's, in rank order */
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int shutdown;                   /* [mu] rank 0 said SHUTDOWN */
};

static int joined_once; /* MPI cannot be joined again after it is left */

int rt__cluster_wanted(const rt_config *config)
{
    const char *kind = config && config->cluster ? config->cluster : getenv("RTASK_CLUSTER");
    if (!kind || !*kind || strcmp(kind, "none") == 0)
        return 0;
    if (strcmp(kind, "mpi") == 0)
        return 1;
    return rt__error(RT_EINVAL, "rt_init: unknown cluster \"%.64s\" (%s): use \"mpi\" or "
                     "none", kind, config && config->cluster ? "rt_config.cluster"
                                                             : "RTASK_CLUSTER");
}

/* RTASK_MPI_MODULE, else beside the shared library we are in, else where
 * `make install` puts it. */
static void module_path(char *path, size_t size)
{
    const char *env = getenv("RTASK_MPI_MODULE");
    Dl_info info;
    if (env && *env) {
        snprintf(path, size, "%s", env);
    } else if (dladdr((void *)module_path, &info) && info.dli_fname &&
               strstr(info.dli_fname, "librtask.so")) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        snprintf(path, size, "%s/rtask/%s", dirname(dir), MODULE_NAME);
    } else {
        snprintf(path, size, "%s/%s", RT_MPI_MODULE_DIR, MODULE_NAME);
    }
}

static void describe(const rt__offer *set, node_desc *d)
{
    memset(d, 0, sizeof *d);
    rt__image_identity(d->identity, sizeof d->identity);
    gethostname(d->host, sizeof d->host - 1);
    d->offer = *set;
}

/* Rank 0: the first rank whose program differs, or 0. */
static int first_stranger(const node_desc *all, int size)
{
    for (int r = 1; r < size; r++)
        if (strcmp(all[r].identity, all[0].identity) != 0)
            return r;
    return 0;
}

/* Every rank gives its description; rank 0 checks them and says whether
 * the job goes on (0) or which rank runs another program. */
static int meet(rt__cluster *c, const rt__offer *set)
{
    static node_desc mine; /* large; one join per process */
    describe(set, &mine);
    node_desc *all = c->rank == 0 ? rt__calloc((size_t)c->size, sizeof *all) : NULL;
    int verdict = all || c->rank != 0 ? 0 : -1;
    if (rt__bridge_gather(c->bridge, &mine, sizeof mine, all) < 0)
        verdict = -1;
    if (all && verdict == 0)
        verdict = first_stranger(all, c->size);
    if (rt__bridge_bcast(c->bridge, &verdict, sizeof verdict) < 0)
        verdict = -1;
    if (verdict != 0 && c->rank == 0) {
        int rc = verdict < 0 ? rt__error(RT_ENOMEM, "rt_init: ranks could not meet")
                             : rt__error(RT_EINVAL, "rt_init: rank %d runs another program "
                                         "than rank 0 (%s, not %s): every rank must run "
                                         "the same binary", verdict, all[verdict].identity,
                                         all[0].identity);
        rt__free(all);
        return rc;
    }
    if (verdict != 0) {
        fprintf(stderr, "rtask: rank %d: %s; leaving the job\n", c->rank,
                verdict == c->rank ? "this program is not rank 0's"
                                   : "another rank runs a program that is not rank 0's");
        rt__bridge_close(c->bridge, 1);
        exit(0); /* 1 would make mpirun kill rank 0 before it reports */
    }
    c->descs = all;
    return 0;
}

int rt__cluster_join(rt__cluster **out, const rt__offer *set)
{
    if (joined_once)
        return rt__error(RT_EINVAL, "rt_init: cluster \"mpi\": a process joins an MPI "
                         "job once (MPI cannot start again after it ends)");
    char path[1024];
    module_path(path, sizeof path);
    rt__cluster *c = rt__calloc(1, sizeof *c);
    if (!c)
        return rt__error(RT_ENOMEM, "rt_init: no memory for the cluster");
    int rc = rt__bridge_open(&c->bridge, path, &c->rank, &c->size);
    if (rc < 0) {
        rt__free(c);
        return rc;
    }
    joined_once = 1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cond, NULL);
    if (c->size > RT__NODES_MAX)
        rc = rt__error(RT_EINVAL, "rt_init: %d ranks: rtask drives %d at most", c->size,
                       RT__NODES_MAX);
    else if (!(c->peer = rt__calloc((size_t)c->size, sizeof *c->peer)))
        rc = rt__error(RT_ENOMEM, "rt_init: no memory for %d ranks", c->size);
    else
        rc = meet(c, set);
    if (rc < 0) {
        rt__cluster_end(c);
        return rc;
    }
    *out = c;
    return 0;
}

int rt__cluster_serving(const rt__cluster *c)
{
    return c->rank != 0;
}

void rt__cluster_nodes(const rt__cluster *c, rt__cluster_node_fn fn, void *arg)
{
    for (int r = 0; c->descs && r < c->size; r++)
        fn(arg, r, c->descs[r].host, &c->descs[r].offer);
}

/* ---- rank 0 ------------------------------------------------------------------- */

static int is_call(const rt__rank_msg *m)
{
    return m->type == RT__RANK_CALL || m->type == RT__RANK_HANGUP;
}

static void to_peer(void *ctx, int from, const rt__rank_msg *m)
{
    rt__cluster *c = ctx;
    if (from > 0 && from < c->size && is_call(m))
        rt__tunnel_deliver(c->tunnel, from, m);
    else if (from > 0 && from < c->size && c->peer[from])
        rt__peer_deliver(c->peer[from], m);
    else
        rt__buf_free(m->owned);
}

static int start_peers(rt__cluster *c, rt__loop *loop, rt__dispatch *d)
{
    if (!(c->places = rt__calloc(1, sizeof *c->places)))
        return rt__error(RT_ENOMEM, "rt_init: no memory for the other ranks' nodes");
    for (int r = 1; r < c->size; r++) {
        if (!(c->peer[r] = rt__peer_new(c->bridge, r, c->places)) ||
            rt__dispatch_add_node(d, &c->descs[r].offer, rt__peer_node(c->peer[r])) < 0)
            return rt__error(RT_ENOMEM, "rt_init: no room for rank %d's node (its "
                             "resources, or memory)", r);
    }
    return rt__bridge_attach(c->bridge, loop, to_peer, c) < 0
               ? rt__syserror("rt_init: watching the MPI bridge")
               : 0;
}

/* ---- the other ranks ------------------------------------------------------------ */

static void to_serve(void *ctx, int from, const rt__rank_msg *m)
{
    rt__cluster *c = ctx;
    if (from == 0 && is_call(m)) {
        rt__tunnel_deliver(c->tunnel, from, m);
        return;
    }
    if (!rt__serve_deliver(c->serve, from, m))
        return;
    pthread_mutex_lock(&c->mu);
    c->shutdown = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->mu);
}

static int start_serving(rt__cluster *c, rt__loop *loop, rt__node *local,
                         const rt__serve_setup *setup)
{
    char label[128];
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    snprintf(label, sizeof label, ", node=%d host=%s", c->rank, host);
    rt__output_node(label);
    if (!(c->serve = rt__serve_new(c->bridge, local, setup)))
        return rt__error(RT_ENOMEM, "rt_init: no memory to serve rank 0");
    rt__tunnel_keep_puts(c->tunnel, rt__serve_store(c->serve), setup->kept_dir != NULL);
    return rt__bridge_attach(c->bridge, loop, to_serve, c) < 0
               ? rt__syserror("rt_init: watching the MPI bridge")
               : 0;
}

int rt__cluster_start(rt__cluster *c, rt__loop *loop, rt__dispatch *d, rt__node *local,
                      void (*serve_calls)(int connection, int rank), const rt__serve_setup *setup)
{
    c->tunnel = rt__tunnel_new(c->bridge, loop, c->rank == 0 ? serve_calls : NULL);
    int rc = !c->tunnel ? rt__error(RT_ENOMEM, "rt_init: no memory to tunnel tasks' calls")
             : c->rank == 0 ? start_peers(c, loop, d)
                            : start_serving(c, loop, local, setup);
    rt__free(c->descs);
    c->descs = NULL;
    return rc;
}

void rt__cluster_tunnel(rt__cluster *c, int connection)
{
    rt__tunnel_accept(c->tunnel, connection);
}

int rt__cluster_round(rt__cluster *c)
{
    return c->serve ? rt__serve_run(c->serve) : 0;
}

uint64_t rt__cluster_payload_in(const rt__cluster *c)
{
    return rt__bridge_payload_in(c->bridge);
}

void rt__cluster_wait(rt__cluster *c)
{
    pthread_mutex_lock(&c->mu);
    while (!c->shutdown)
        pthread_cond_wait(&c->cond, &c->mu);
    pthread_mutex_unlock(&c->mu);
}

/* ---- the end ------------------------------------------------------------------ */

/* Rank 0: a rank that neither said BYE nor died would hold up MPI's
 * end (MPI_Finalize waits for every rank) for as long as it is stopped
 * or hung; name it and end the job instead, within rt_shutdown()'s
 * minute. */
static void end_job_if_held_up(rt__cluster *c, const unsigned char *served)
{
    for (int r = 1; c->rank == 0 && r < c->size; r++) {
        int left = rt__bridge_left(c->bridge, r);
        if ((served && !served[r]) || left == 1)
            continue; /* a rank that never served (another program) left already */
        fprintf(stderr, "rtask: rt_shutdown: rank %d %s; MPI cannot end while it is held "
                "up: the job is ended (MPI_Abort)\n", r,
                left == 2 ? "was declared dead for its silence (RTASK_RANK_TIMEOUT)"
                          : "did not stop");
        rt__bridge_end_job(c->bridge, 1);
    }
}

void rt__cluster_end(rt__cluster *c)
{
    rt__bridge_detach(c->bridge);
    rt__tunnel_free(c->tunnel); /* rank 0's proxies end; workers' calls fail */
    int stopped = 0;
    /* Without memory for it, every rank counts as served. */
    unsigned char *served = rt__calloc((size_t)c->size, 1);
    for (int r = 1; r < c->size && c->peer; r++) {
        if (c->peer[r]) {
            rt__peer_free(c->peer[r]);
            if (served)
                served[r] = 1;
            stopped += rt__bridge_left(c->bridge, r) != 2; /* a silent one is not waited for */
        }
    }
    if (stopped && rt__bridge_wait_byes(c->bridge, stopped, BYE_WAIT_MS) < stopped)
        rt__warn("rt_shutdown: not every rank stopped within %d s", BYE_WAIT_MS / 1000);
    end_job_if_held_up(c, served);
    rt__free(served);
    rt__free(c->peer);
    rt__free(c->places);
    if (c->serve) {
        rt__serve_free(c->serve);
        rt__rank_msg bye = {.type = RT__RANK_BYE, .fd = -1};
        rt__bridge_send(c->bridge, 0, &bye);
    }
    rt__free(c->descs);
    rt__bridge_close(c->bridge, c->rank != 0); /* a serving rank exits next */
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cond);
    rt__free(c);
}

/* cluster.c - joining an MPI job, and the ranks' parts in it. */
#include "cluster.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/sparse.h"
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
    unsigned char *descs;           /* rank 0, from join to start: every
                                       rank's, packed (sparse.h), in rank
                                       order, desc_slot bytes each: its
                                       packed length, then the packing */
    size_t desc_slot;
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

/* Rank 0: no memory to meet the others, which wait in a collective:
 * only ending the job ends them. */
static _Noreturn void cannot_meet(rt__cluster *c)
{
    fprintf(stderr, "rtask: rt_init: rank 0 has no memory to meet %d ranks; the job ends\n",
            c->size);
    rt__bridge_end_job(c->bridge, 1);
}

/* Every rank gives its description, packed: rank 0 keeps each in a slot
 * as long as the longest (the lengths are gathered first), a few KiB
 * where a description is 187 KiB.  0, or -1 when MPI failed. */
static int gather_descs(rt__cluster *c, const rt__offer *set)
{
    static node_desc mine; /* large; one join per process */
    static unsigned char packed[sizeof(uint64_t) + RT__SPARSE_BOUND(sizeof mine)];
    describe(set, &mine);
    uint64_t len = rt__sparse_pack(&mine, sizeof mine, packed + sizeof len), slot = 0;
    memcpy(packed, &len, sizeof len);
    uint64_t *lens = c->rank == 0 ? rt__calloc((size_t)c->size, sizeof *lens) : NULL;
    if (c->rank == 0 && !lens)
        cannot_meet(c);
    int rc = rt__bridge_gather(c->bridge, &len, sizeof len, lens);
    for (int r = 0; lens && r < c->size; r++)
        slot = lens[r] > slot ? lens[r] : slot;
    rt__free(lens);
    slot += sizeof len;
    /* Every rank takes part in every collective, whatever failed: the
     * slot, rank 0's, is the same everywhere. */
    if (rt__bridge_bcast(c->bridge, &slot, sizeof slot) < 0 || slot > sizeof packed)
        return -1;
    c->desc_slot = (size_t)slot;
    if (c->rank == 0 && !(c->descs = rt__calloc((size_t)c->size, c->desc_slot)))
        cannot_meet(c);
    return rt__bridge_gather(c->bridge, packed, c->desc_slot, c->descs) < 0 || rc < 0 ? -1 : 0;
}

/* Rank r's description, unpacked into d: 0, or -1 when its packing is
 * not one. */
static int desc_of(const rt__cluster *c, int r, node_desc *d)
{
    const unsigned char *slot = c->descs + (size_t)r * c->desc_slot;
    uint64_t len;
    memcpy(&len, slot, sizeof len);
    return len <= c->desc_slot - sizeof len &&
                   rt__sparse_unpack(slot + sizeof len, (size_t)len, d, sizeof *d) == 0
               ? 0 : -1;
}

/* Rank 0: the first rank whose program differs from rank 0's (its
 * identity and rank 0's in theirs and ours), or whose description cannot
 * be read; 0 when none, -1 without memory. */
static int first_stranger(const rt__cluster *c, char *theirs, char *ours, size_t size)
{
    node_desc *d = rt__malloc(sizeof *d);
    int stranger = d ? 0 : -1;
    if (d && desc_of(c, 0, d) == 0)
        snprintf(ours, size, "%s", d->identity);
    for (int r = 1; d && r < c->size && !stranger; r++) {
        int readable = desc_of(c, r, d) == 0;
        snprintf(theirs, size, "%s", readable ? d->identity : "a description that cannot be read");
        if (!readable || strcmp(theirs, ours) != 0)
            stranger = r;
    }
    rt__free(d);
    return stranger;
}

/* Every rank gives its description; rank 0 checks them and says whether
 * the job goes on (0) or which rank runs another program. */
static int meet(rt__cluster *c, const rt__offer *set)
{
    char theirs[sizeof ((node_desc *)0)->identity] = "", ours[sizeof theirs] = "";
    int verdict = gather_descs(c, set);
    if (verdict == 0 && c->rank == 0)
        verdict = first_stranger(c, theirs, ours, sizeof theirs);
    if (rt__bridge_bcast(c->bridge, &verdict, sizeof verdict) < 0)
        verdict = -1;
    if (verdict != 0 && c->rank == 0)
        return verdict < 0 ? rt__error(RT_ENOMEM, "rt_init: ranks could not meet")
                           : rt__error(RT_EINVAL, "rt_init: rank %d runs another program "
                                       "than rank 0 (%s, not %s): every rank must run "
                                       "the same binary", verdict, theirs, ours);
    if (verdict != 0) {
        fprintf(stderr, "rtask: rank %d: %s; leaving the job\n", c->rank,
                verdict == c->rank ? "this program is not rank 0's"
                                   : "another rank runs a program that is not rank 0's");
        rt__bridge_close(c->bridge, 1);
        exit(0); /* 1 would make mpirun kill rank 0 before it reports */
    }
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
    node_desc *d = c->descs ? rt__malloc(sizeof *d) : NULL;
    for (int r = 0; d && r < c->size; r++)
        if (desc_of(c, r, d) == 0) /* each was read once already (meet()) */
            fn(arg, r, d->host, &d->offer);
    rt__free(d);
}

/* ---- rank 0 ------------------------------------------------------------------- */

static int is_call(const rt__rank_msg *m)
{
    return m->type == RT__RANK_CALL || m->type == RT__RANK_HANGUP;
}

/* A task that rank `rank` placed itself ended: into the timeline. */
static void ran_there(void *ctx, int rank, uint64_t id, const rt__callmsg_ran *ran)
{
    rt__span s = {.id = id, .fn = (const void *)(uintptr_t)ran->fn, .lane = ran->lane,
                  .node = rank, .status = ran->status};
    rt__dispatch_record_elsewhere(ctx, &s, ran->waited_us, ran->ran_us);
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

static int start_peers(rt__cluster *c, rt__loop *loop, rt__dispatch *d,
                       const rt__round_hook *round)
{
    node_desc *desc = rt__malloc(sizeof *desc); /* one rank's at a time */
    if (!desc || !(c->places = rt__calloc(1, sizeof *c->places))) {
        rt__free(desc);
        return rt__error(RT_ENOMEM, "rt_init: no memory for the other ranks' nodes");
    }
    int rc = 0;
    for (int r = 1; r < c->size && rc == 0; r++) {
        if (desc_of(c, r, desc) < 0 || !(c->peer[r] = rt__peer_new(c->bridge, r, c->places)) ||
            rt__dispatch_add_node(d, &desc->offer, rt__peer_node(c->peer[r])) < 0)
            rc = rt__error(RT_ENOMEM, "rt_init: no room for rank %d's node (its "
                           "resources, or memory)", r);
    }
    rt__free(desc);
    if (rc == 0 && rt__bridge_attach(c->bridge, loop, to_peer, c, round) < 0)
        rc = rt__syserror("rt_init: watching the MPI bridge");
    return rc;
}

/* ---- the other ranks ------------------------------------------------------------ */

static void to_serve(void *ctx, int from, const rt__rank_msg *m)
{
    rt__cluster *c = ctx;
    if (from == 0 && is_call(m)) {
        rt__tunnel_deliver(c->tunnel, from, m);
        return;
    }
    int shutdown = rt__serve_deliver(c->serve, from, m);
    if (m->type == RT__RANK_OBJECT)
        rt__tunnel_objects_came(c->tunnel);
    if (!shutdown)
        return;
    pthread_mutex_lock(&c->mu);
    c->shutdown = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->mu);
}

static int start_serving(rt__cluster *c, rt__loop *loop, rt__node *local,
                         const rt__serve_setup *setup, const rt__round_hook *round)
{
    char label[128];
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    snprintf(label, sizeof label, ", node=%d host=%s", c->rank, host);
    rt__output_node(label);
    if (!(c->serve = rt__serve_new(c->bridge, local, setup)))
        return rt__error(RT_ENOMEM, "rt_init: no memory to serve rank 0");
    rt__tunnel_serve(c->tunnel, c->serve, c->rank, setup->kept_dir != NULL, setup->recording);
    return rt__bridge_attach(c->bridge, loop, to_serve, c, round) < 0
               ? rt__syserror("rt_init: watching the MPI bridge")
               : 0;
}

int rt__cluster_start(rt__cluster *c, rt__loop *loop, rt__dispatch *d, rt__node *local,
                      void (*serve_calls)(int connection, int rank), const rt__serve_setup *setup,
                      const rt__round_hook *round)
{
    c->tunnel = rt__tunnel_new(c->bridge, loop, c->rank == 0 ? serve_calls : NULL);
    if (c->tunnel && c->rank == 0)
        rt__tunnel_hear_ran(c->tunnel, ran_there, d);
    int rc = !c->tunnel ? rt__error(RT_ENOMEM, "rt_init: no memory to tunnel tasks' calls")
             : c->rank == 0 ? start_peers(c, loop, d, round)
                            : start_serving(c, loop, local, setup, round);
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

int rt__cluster_await(rt__cluster *c)
{
    return c->serve ? rt__serve_await(c->serve) : 0;
}

int rt__cluster_calls_soon(rt__cluster *c)
{
    return rt__tunnel_calls_soon(c->tunnel);
}

uint64_t rt__cluster_payload_in(const rt__cluster *c, uint64_t *messages)
{
    return rt__bridge_payload_in(c->bridge, messages);
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

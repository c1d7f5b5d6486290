/* bridge.c - the MPI bridge as other threads see it: opening it (the
 * module, the thread, the job joined), handing it messages, taking what
 * arrived on the loop, closing it.  The thread itself is mpi_thread.c's. */
#include "bridge.h"

#include "mpi_thread.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/list.h"
#include "base/shm.h"
#include "base/thread.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- startup ---------------------------------------------------------------- */


typedef struct gather_args {
    const void *mine;
    void *all;
    size_t len;
} gather_args;

static int gather(rt__bridge *b, void *arg)
{
    gather_args *g = arg;
    return b->mpi->gather(g->mine, g->len, g->all);
}

static int bcast(rt__bridge *b, void *arg)
{
    gather_args *g = arg;
    return b->mpi->bcast(g->all, g->len);
}

int rt__bridge_gather(rt__bridge *b, const void *mine, size_t len, void *all)
{
    gather_args g = {mine, all, len};
    return rt__mpi_thread_call(b, gather, &g);
}

int rt__bridge_bcast(rt__bridge *b, void *buf, size_t len)
{
    gather_args g = {NULL, buf, len};
    return rt__mpi_thread_call(b, bcast, &g);
}

static const rt__mpi *load_module(const char *path)
{
    /* RTLD_GLOBAL: Open MPI's own plugins need libmpi's symbols. */
    void *dl = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!dl) {
        rt__error(RT_EINVAL, "rt_init: cluster \"mpi\": cannot load the MPI module "
                  "%s: %s (build it with MPI installed, or set RTASK_MPI_MODULE)",
                  path, dlerror());
        return NULL;
    }
    const rt__mpi *mpi = dlsym(dl, RT__MPI_SYMBOL);
    if (!mpi || mpi->abi != RT__MPI_ABI) {
        rt__error(RT_EINVAL, "rt_init: %s is not an rtask MPI module of this version",
                  path);
        dlclose(dl);
        return NULL;
    }
    return mpi; /* never unloaded: MPI cannot be loaded twice */
}

static void bridge_free(rt__bridge *b)
{
    for (incoming *in = b->arrived, *next; in; in = next) {
        next = in->next;
        rt__buf_free(in->m.owned);
        rt__incoming_free(in);
    }
    rt__wake_close(NULL, &b->arrivals);
    rt__free(b->batch);
    rt__free(b->batch_in);
    rt__free(b->piece);
    rt__free(b->left);
    rt__free(b->heard_ns);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->work);
    pthread_cond_destroy(&b->answered);
    rt__free(b);
}

int rt__bridge_open(rt__bridge **out, const char *path, int *rank, int *size)
{
    const rt__mpi *mpi = load_module(path);
    if (!mpi)
        return RT_EINVAL;
    rt__bridge *b = rt__malloc(sizeof *b);
    if (!b)
        return rt__error(RT_ENOMEM, "rt_init: no memory for the MPI bridge");
    memset(b, 0, sizeof *b);
    b->mpi = mpi;
    b->staged_tail = &b->staged;
    b->queued_tail = &b->queued;
    b->arrived_tail = &b->arrived;
    pthread_mutex_init(&b->mu, NULL);
    rt__cond_init_monotonic(&b->work);
    rt__cond_init_monotonic(&b->answered);
    if (rt__wake_open(&b->arrivals) < 0) {
        int rc = rt__syserror("rt_init: eventfd for the MPI bridge");
        bridge_free(b);
        return rc;
    }
    b->call = rt__mpi_thread_join; /* made by the thread before anything else */
    int err = rt__thread_start(&b->thread, NULL, rt__mpi_thread_main, b);
    if (err) {
        bridge_free(b);
        return rt__error(RT_ESYS, "rt_init: pthread_create: %s", strerror(err));
    }
    pthread_mutex_lock(&b->mu);
    while (b->call)
        pthread_cond_wait(&b->answered, &b->mu);
    int rc = b->call_rc;
    pthread_mutex_unlock(&b->mu);
    if (rc < 0) {
        /* MPI is up, and the other ranks wait in rtask's first collective:
         * only ending the job ends them. */
        fprintf(stderr, "rtask: rt_init: joining the MPI job: %s; the job ends\n",
                b->error);
        rt__mpi_thread_end_job(b, 1);
    }
    *rank = b->rank;
    *size = b->size;
    *out = b;
    return 0;
}

/* ---- the round holder's side ------------------------------------------------- */

void rt__bridge_deliver(rt__bridge *b)
{
    pthread_mutex_lock(&b->mu);
    incoming *list = b->arrived;
    b->arrived = NULL;
    b->arrived_tail = &b->arrived;
    pthread_mutex_unlock(&b->mu);
    for (incoming *in = list, *next; in; in = next) {
        next = in->next;
        b->cb(b->ctx, in->from, &in->m);
        rt__incoming_free(in);
    }
}

static void on_arrival(rt__wake *w)
{
    rt__bridge_deliver(RT__OWNER(w, rt__bridge, arrivals));
}

int rt__bridge_attach(rt__bridge *b, rt__loop *loop, rt__rank_deliver cb, void *ctx,
                      const rt__round_hook *round)
{
    b->cb = cb;
    b->ctx = ctx;
    if (rt__wake_watch(loop, &b->arrivals, on_arrival) < 0)
        return -1;
    pthread_mutex_lock(&b->mu);
    b->loop = loop;
    b->round = *round;
    int waiting = b->arrived != NULL;
    pthread_mutex_unlock(&b->mu);
    if (waiting) /* what came before the loop was there */
        rt__wake_signal(&b->arrivals);
    return 0;
}

void rt__bridge_detach(rt__bridge *b)
{
    pthread_mutex_lock(&b->mu);
    rt__loop *loop = b->loop;
    b->loop = NULL;
    b->round = (rt__round_hook){0};
    pthread_mutex_unlock(&b->mu);
    if (loop)
        rt__loop_remove(loop, &b->arrivals.watch);
}

static void stage(rt__bridge *b, outgoing *o)
{
    *b->staged_tail = o;
    b->staged_tail = &o->next;
}

/* m, whose bytes are inline, joins the batch open for rank `to` (length
 * first), which is staged already; a new one when none is or when it
 * would pass BATCH_MAX.  One buffer for the many messages of a round:
 * a buffer and a record each, copied into a batch by the bridge's thread
 * and freed there, took half of rank 0's bridge thread in a stream of
 * small tasks to other ranks (malloc and free). */
static int stage_in_batch(rt__bridge *b, int to, const rt__rank_msg *m)
{
    uint64_t len = rt__rank_encoded_len(m);
    outgoing *bt = b->batch[to];
    if (bt && bt->len + sizeof len + len > BATCH_MAX)
        bt = NULL;
    if (!bt) {
        if (!(bt = rt__outgoing_new(to, TAG_BATCH, 1)))
            return -1;
        stage(b, bt);
        b->batch[to] = bt;
    }
    if (rt__reserve(&bt->buf, &bt->cap, bt->len, sizeof len + len, BATCH_FIRST) < 0)
        return -1;
    memcpy(bt->buf + bt->len, &len, sizeof len);
    rt__rank_encode_into(m, bt->buf + bt->len + sizeof len);
    bt->len += sizeof len + len;
    return 0;
}

int rt__bridge_send(rt__bridge *b, int to, const rt__rank_msg *m)
{
    int follows = m->fd >= 0 || m->owned;
    if (!follows)
        return stage_in_batch(b, to, m);
    size_t piece = rt__piece_of(m->type), pieces = (m->len + piece - 1) / piece;
    outgoing *o = rt__outgoing_new(to, TAG_MSG, 1 + pieces);
    if (o)
        o->len = rt__rank_encoded_len(m);
    if (!o || !(o->buf = rt__malloc(o->len))) {
        rt__free(o);
        if (m->fd >= 0)
            close(m->fd);
        rt__buf_free(m->owned);
        return -1;
    }
    rt__rank_encode_into(m, o->buf);
    o->fd = m->fd;
    o->owned = m->owned;
    o->bulk_len = m->len;
    o->piece = piece;
    b->batch[to] = NULL; /* what comes after goes after it (MPI keeps the order) */
    stage(b, o);
    return 0;
}

void rt__bridge_flush(rt__bridge *b)
{
    if (!b->staged)
        return;
    for (outgoing *o = b->staged; o; o = o->next)
        b->batch[o->to] = NULL; /* the bridge thread's from here */
    pthread_mutex_lock(&b->mu);
    *b->queued_tail = b->staged;
    b->queued_tail = b->staged_tail;
    pthread_cond_signal(&b->work);
    pthread_mutex_unlock(&b->mu);
    b->staged = NULL;
    b->staged_tail = &b->staged;
}

uint64_t rt__bridge_payload_in(const rt__bridge *b, uint64_t *messages)
{
    if (messages)
        *messages = b->messages_in;
    return b->payload_in;
}

int rt__bridge_wait_byes(rt__bridge *b, int n, long timeout_ms)
{
    rt__bridge_flush(b);
    struct timespec until = rt__deadline_after(timeout_ms);
    pthread_mutex_lock(&b->mu);
    while (b->byes < n && pthread_cond_timedwait(&b->answered, &b->mu, &until) == 0)
        ;
    int got = b->byes;
    pthread_mutex_unlock(&b->mu);
    return got;
}

int rt__bridge_left(rt__bridge *b, int rank)
{
    pthread_mutex_lock(&b->mu);
    int left = rank > 0 && rank < b->size ? b->left[rank] : 0;
    pthread_mutex_unlock(&b->mu);
    return left;
}

static int end_job(rt__bridge *b, void *code)
{
    rt__mpi_thread_end_job(b, *(int *)code);
}

void rt__bridge_end_job(rt__bridge *b, int code)
{
    rt__bridge_detach(b);
    (void)rt__mpi_thread_call(b, end_job, &code);
    _exit(code); /* in case the bridge thread is gone */
}

void rt__bridge_close(rt__bridge *b, int finalize)
{
    rt__bridge_detach(b);
    rt__bridge_flush(b);
    pthread_mutex_lock(&b->mu);
    b->closing = 1;
    b->finalize = finalize;
    pthread_cond_signal(&b->work);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->thread, NULL);
    bridge_free(b);
}

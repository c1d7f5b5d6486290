/* bridge.c - the MPI thread: sends, receives, and hands messages over. */
#include "bridge.h"

#include "mpi_ops.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/list.h"
#include "base/shm.h"
#include "base/thread.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TAG_MSG 1   /* one message, whose bytes follow as pieces */
#define TAG_PIECE 2
#define TAG_BATCH 3 /* messages without pieces, each a length and its bytes */
#define BATCH_MAX ((size_t)1 << 20) /* bytes a batch grows to before it goes */
#define SPIN_POLLS 200      /* polls with a yield before backing off */
#define BACKOFF_MAX_US 1000 /* the longest sleep between idle polls */

/* A message queued for another rank, then in flight: its encoded part,
 * and the bytes that follow it, mapped from their memfd or in a buffer
 * it owns. */
typedef struct outgoing {
    struct outgoing *next;
    int to, tag;
    char *buf;
    size_t len;
    int fd;
    void *owned;
    void *map;
    size_t bulk_len;
    size_t nreqs;
    void *reqs[]; /* the encoded part's, then each piece's */
} outgoing;

typedef struct incoming {
    struct incoming *next;
    int from;
    char *buf;
    rt__rank_msg m;
} incoming;

/* A call the bridge thread makes for a waiting thread. */
typedef int (*bridge_call)(rt__bridge *b, void *arg);

struct rt__bridge {
    const rt__mpi *mpi;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work;      /* the bridge thread: something to do */
    pthread_cond_t answered;  /* callers: a call ended, a BYE came */
    outgoing *staged, **staged_tail; /* sent, not yet handed over: by one
                                        thread at a time (the runtime's round) */
    outgoing *queued, **queued_tail; /* [mu] */
    incoming *arrived, **arrived_tail; /* [mu] */
    bridge_call call;         /* [mu] to make, or NULL */
    void *call_arg;           /* [mu] */
    int call_rc;              /* [mu] */
    int closing;              /* [mu] */
    int finalize;             /* [mu] even if the application began MPI */
    int byes;                 /* [mu] */
    rt__loop *loop;           /* [mu] where arrivals are delivered */
    rt__bridge_cb cb;
    void *ctx;
    rt__wake arrivals;        /* the loop takes what arrived */
    outgoing *inflight;       /* bridge thread only */
    outgoing **batch;         /* bridge thread only: one being made per rank */
    int rank, size;
    char error[256];
};

/* End the whole job: for a rank that cannot go on (MPI is up, and the
 * other ranks would wait for it forever). */
static _Noreturn void end_job(rt__bridge *b, int code);

/* ---- the bridge thread ------------------------------------------------------ */

static void outgoing_free(outgoing *o)
{
    if (o->owned)
        rt_free(o->owned);
    else if (o->map)
        rt__shm_unmap(o->map, o->bulk_len);
    if (o->fd >= 0)
        close(o->fd);
    rt__free(o->buf);
    rt__free(o);
}

/* Hand a list of messages (linked, last at *tail) to the loop. */
static void arrive(rt__bridge *b, incoming *in, incoming **tail)
{
    pthread_mutex_lock(&b->mu);
    *b->arrived_tail = in;
    b->arrived_tail = tail;
    int deliver = b->loop != NULL;
    pthread_mutex_unlock(&b->mu);
    if (deliver)
        rt__wake_signal(&b->arrivals);
}

/* A message that says another rank cannot be reached, as if it had sent
 * it: the runtime thread fails that node. */
static void unreachable(rt__bridge *b, int rank, const char *what)
{
    incoming *in = rt__malloc(sizeof *in);
    if (!in)
        end_job(b, 1);
    memset(in, 0, sizeof *in);
    in->from = rank;
    in->m.type = RT__RANK_FAILED;
    in->m.text = what;
    in->m.fd = -1;
    arrive(b, in, &in->next);
}

static void post(rt__bridge *b, outgoing *o)
{
    const rt__mpi *mpi = b->mpi;
    int failed = mpi->isend(o->buf, o->len, o->to, o->tag, &o->reqs[0]) < 0;
    if (!failed && o->owned) {
        o->map = o->owned;
    } else if (!failed && o->fd >= 0) {
        o->map = rt__shm_open(o->fd, o->bulk_len, 0);
        failed = !o->map;
        if (o->map)
            madvise((char *)o->map - RT__BUF_HDR, RT__BUF_HDR + o->bulk_len,
                    MADV_POPULATE_READ);
    }
    if (!failed && o->map) {
        for (size_t i = 1; !failed && i < o->nreqs; i++) {
            size_t off = (i - 1) * RT__MPI_PIECE, n = o->bulk_len - off;
            failed = mpi->isend((char *)o->map + off, n < RT__MPI_PIECE ? n : RT__MPI_PIECE,
                                o->to, TAG_PIECE, &o->reqs[i]) < 0;
        }
    }
    if (failed)
        unreachable(b, o->to, "MPI could not send to it");
    o->next = b->inflight;
    b->inflight = o;
}

static outgoing *outgoing_new(int to, int tag, size_t nreqs)
{
    outgoing *o = rt__malloc(sizeof *o + nreqs * sizeof(void *));
    if (o) {
        memset(o, 0, sizeof *o + nreqs * sizeof(void *));
        o->to = to;
        o->tag = tag;
        o->fd = -1;
        o->nreqs = nreqs;
    }
    return o;
}

static void post_batch(rt__bridge *b, int to)
{
    if (b->batch[to])
        post(b, b->batch[to]);
    b->batch[to] = NULL;
}

/* Add o's bytes to the batch for its rank: 0, or -1 without memory. */
static int batch_add(rt__bridge *b, outgoing *o)
{
    outgoing *bt = b->batch[o->to];
    if (bt && bt->len + sizeof(uint64_t) + o->len > BATCH_MAX) {
        post_batch(b, o->to);
        bt = NULL;
    }
    if (!bt && !(bt = b->batch[o->to] = outgoing_new(o->to, TAG_BATCH, 1)))
        return -1;
    char *grown = rt__realloc(bt->buf, bt->len + sizeof(uint64_t) + o->len);
    if (!grown)
        return -1;
    uint64_t len = o->len;
    memcpy(grown + bt->len, &len, sizeof len);
    memcpy(grown + bt->len + sizeof len, o->buf, o->len);
    bt->buf = grown;
    bt->len += sizeof len + o->len;
    outgoing_free(o);
    return 0;
}

/* Send what was queued: messages with pieces alone, the others in one
 * batch per rank, in their order (MPI keeps the order between two ranks). */
static void post_all(rt__bridge *b, outgoing *list)
{
    for (outgoing *o = list, *next; o; o = next) {
        next = o->next;
        if (o->fd >= 0 || o->owned || batch_add(b, o) < 0) {
            post_batch(b, o->to);
            post(b, o);
        }
    }
    for (int r = 0; r < b->size; r++)
        post_batch(b, r);
}

/* Free the sends that completed; 1 when any did. */
static int progress(rt__bridge *b)
{
    int moved = 0;
    for (outgoing **p = &b->inflight; *p;) {
        outgoing *o = *p;
        int done = 1;
        for (size_t i = 0; i < o->nreqs; i++)
            if (o->reqs[i] && b->mpi->test(&o->reqs[i]) == 0)
                done = 0;
        if (done) {
            *p = o->next;
            outgoing_free(o);
            moved = 1;
        } else {
            p = &o->next;
        }
    }
    return moved;
}

/* The pieces that follow a message, into a buffer the receiver keeps:
 * the heap's pages come faster than a memfd's, and the caller of
 * rt_get() frees them alike. */
static void *receive_pieces(rt__bridge *b, int from, size_t len)
{
    char *data = rt__buf_alloc(len);
    if (!data) {
        rt__warn("no memory for %zu bytes from rank %d: the job ends", len, from);
        end_job(b, 1);
    }
    /* Every page made in one call, not in a fault each while MPI copies
     * (where the kernel can: Linux 5.14 and later). */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)data + page - 1) & ~(page - 1);
    if (len > 2 * page)
        madvise((void *)first, ((uintptr_t)data + len - first) & ~(page - 1),
                MADV_POPULATE_WRITE);
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0; off += RT__MPI_PIECE) {
        size_t n = len - off < RT__MPI_PIECE ? len - off : RT__MPI_PIECE;
        rc = b->mpi->recv(data + off, n, from, TAG_PIECE);
    }
    if (rc < 0) {
        rt_free(data);
        return NULL;
    }
    return data;
}

static void count_bye(rt__bridge *b)
{
    pthread_mutex_lock(&b->mu);
    b->byes++;
    pthread_cond_broadcast(&b->answered);
    pthread_mutex_unlock(&b->mu);
}

/* Decode one message of buf (which it then owns) and take its pieces if
 * they follow: the message to hand over, or NULL (a BYE is counted here;
 * a message that cannot be read is dropped with a warning). */
static incoming *take_message(rt__bridge *b, int from, char *buf, size_t len,
                              int may_follow)
{
    incoming *in = rt__malloc(sizeof *in);
    int follows = 0;
    if (!in || rt__rank_decode(buf, len, &in->m, &follows) < 0 ||
        (follows && (!may_follow || !(in->m.owned = receive_pieces(b, from, in->m.len))))) {
        rt__warn("a message from rank %d could not be read: dropped", from);
        rt__free(in);
        rt__free(buf);
        return NULL;
    }
    if (in->m.type == RT__RANK_BYE) {
        count_bye(b);
        rt__free(in);
        rt__free(buf);
        return NULL;
    }
    if (in->m.owned)
        in->m.bytes = in->m.owned;
    in->from = from;
    in->buf = buf;
    in->next = NULL;
    return in;
}

/* The messages of a batch, each copied out of it, handed over at once. */
static void take_batch(rt__bridge *b, int from, const char *buf, size_t len)
{
    incoming *list = NULL, **tail = &list;
    uint64_t n;
    for (size_t at = 0; len - at >= sizeof n; at += sizeof n + n) {
        memcpy(&n, buf + at, sizeof n);
        char *one = n <= len - at - sizeof n ? rt__malloc(n ? n : 1) : NULL;
        if (!one) {
            rt__warn("a batch from rank %d could not be read: dropped", from);
            break;
        }
        memcpy(one, buf + at + sizeof n, n);
        incoming *in = take_message(b, from, one, n, 0);
        if (in) {
            *tail = in;
            tail = &in->next;
        }
    }
    if (list)
        arrive(b, list, tail);
}

/* Take one MPI message; 1 when one came, 0 when none, -1 on failure. */
static int receive_one(rt__bridge *b)
{
    int from, tag;
    size_t len;
    int found = b->mpi->probe(&from, &tag, &len);
    if (found <= 0)
        return found;
    char *buf = rt__malloc(len ? len : 1);
    if (!buf || b->mpi->recv(buf, len, from, tag) < 0 ||
        (tag != TAG_MSG && tag != TAG_BATCH)) {
        rt__warn("a message from rank %d could not be received: dropped", from);
        rt__free(buf);
        return -1;
    }
    if (tag == TAG_MSG) {
        incoming *in = take_message(b, from, buf, len, 1);
        if (in)
            arrive(b, in, &in->next);
        return 1;
    }
    take_batch(b, from, buf, len);
    rt__free(buf);
    return 1;
}

static int receive(rt__bridge *b)
{
    int got = 0;
    for (int i = 0; i < 64 && receive_one(b) > 0; i++)
        got = 1;
    return got;
}

/* Poll at once while messages flow; then yield a while, then sleep a
 * little longer each time, up to BACKOFF_MAX_US, unless woken. */
static void idle_wait(rt__bridge *b, unsigned idle)
{
    if (idle < SPIN_POLLS) {
        sched_yield();
        return;
    }
    long long us = (long long)(idle - SPIN_POLLS + 1) * 20;
    struct timespec until = rt__deadline_after_us(us < BACKOFF_MAX_US ? us : BACKOFF_MAX_US);
    pthread_mutex_lock(&b->mu);
    if (!b->queued && !b->call && !b->closing)
        pthread_cond_timedwait(&b->work, &b->mu, &until);
    pthread_mutex_unlock(&b->mu);
}

/* The bridge thread's first act: join, and make room for its batches. */
static int join(rt__bridge *b, void *unused)
{
    (void)unused;
    if (b->mpi->join(&b->rank, &b->size, b->error, sizeof b->error) < 0)
        return -1;
    if (!(b->batch = rt__calloc((size_t)b->size, sizeof *b->batch))) {
        snprintf(b->error, sizeof b->error, "no memory");
        return -1;
    }
    return 0;
}

/* Make the call a thread waits for, and tell it the outcome. */
static int make_call(rt__bridge *b)
{
    pthread_mutex_lock(&b->mu);
    bridge_call call = b->call;
    void *arg = b->call_arg;
    pthread_mutex_unlock(&b->mu);
    if (!call)
        return 0;
    int rc = call(b, arg);
    pthread_mutex_lock(&b->mu);
    b->call_rc = rc;
    b->call = NULL;
    pthread_cond_broadcast(&b->answered);
    pthread_mutex_unlock(&b->mu);
    return rc;
}

static void *bridge_main(void *arg)
{
    rt__bridge *b = arg;
    unsigned idle = 0;
    if (make_call(b) < 0) /* join */
        return NULL;      /* rt__bridge_open() ends the job */
    for (;;) {
        make_call(b);
        pthread_mutex_lock(&b->mu);
        outgoing *take = b->queued;
        b->queued = NULL;
        b->queued_tail = &b->queued;
        int closing = b->closing;
        pthread_mutex_unlock(&b->mu);
        post_all(b, take);
        int busy = (take != NULL) | progress(b) | receive(b);
        if (closing && !b->inflight && !take)
            break;
        /* A large send moves only while MPI is called: no backing off. */
        idle = busy || b->inflight ? 0 : idle + 1;
        idle_wait(b, idle);
    }
    b->mpi->leave(b->finalize);
    return NULL;
}

/* Make a call on the bridge thread and wait for it. */
static int call_on_bridge(rt__bridge *b, bridge_call call, void *arg)
{
    pthread_mutex_lock(&b->mu);
    b->call = call;
    b->call_arg = arg;
    pthread_cond_signal(&b->work);
    while (b->call)
        pthread_cond_wait(&b->answered, &b->mu);
    int rc = b->call_rc;
    pthread_mutex_unlock(&b->mu);
    return rc;
}

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
    return call_on_bridge(b, gather, &g);
}

int rt__bridge_bcast(rt__bridge *b, void *buf, size_t len)
{
    gather_args g = {NULL, buf, len};
    return call_on_bridge(b, bcast, &g);
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
        rt_free(in->m.owned);
        rt__free(in->buf);
        rt__free(in);
    }
    rt__wake_close(NULL, &b->arrivals);
    rt__free(b->batch);
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
    b->call = join; /* made by the thread before anything else */
    int err = rt__thread_start(&b->thread, NULL, bridge_main, b);
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
        end_job(b, 1);
    }
    *rank = b->rank;
    *size = b->size;
    *out = b;
    return 0;
}

/* ---- the runtime thread's side ------------------------------------------------ */

static void on_arrival(rt__wake *w)
{
    rt__bridge *b = RT__OWNER(w, rt__bridge, arrivals);
    pthread_mutex_lock(&b->mu);
    incoming *list = b->arrived;
    b->arrived = NULL;
    b->arrived_tail = &b->arrived;
    pthread_mutex_unlock(&b->mu);
    for (incoming *in = list, *next; in; in = next) {
        next = in->next;
        b->cb(b->ctx, in->from, &in->m);
        rt__free(in->buf);
        rt__free(in);
    }
}

int rt__bridge_attach(rt__bridge *b, rt__loop *loop, rt__bridge_cb cb, void *ctx)
{
    b->cb = cb;
    b->ctx = ctx;
    if (rt__wake_watch(loop, &b->arrivals, on_arrival) < 0)
        return -1;
    pthread_mutex_lock(&b->mu);
    b->loop = loop;
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
    pthread_mutex_unlock(&b->mu);
    if (loop)
        rt__loop_remove(loop, &b->arrivals.watch);
}

int rt__bridge_send(rt__bridge *b, int to, const rt__rank_msg *m)
{
    int follows = m->fd >= 0 || m->owned;
    size_t pieces = follows ? (m->len + RT__MPI_PIECE - 1) / RT__MPI_PIECE : 0;
    outgoing *o = outgoing_new(to, TAG_MSG, 1 + pieces);
    if (!o || rt__rank_encode(m, &o->buf, &o->len) < 0) {
        rt__free(o);
        if (m->fd >= 0)
            close(m->fd);
        rt_free(m->owned);
        return -1;
    }
    o->fd = m->fd;
    o->owned = m->owned;
    o->bulk_len = follows ? m->len : 0;
    *b->staged_tail = o;
    b->staged_tail = &o->next;
    return 0;
}

void rt__bridge_flush(rt__bridge *b)
{
    if (!b->staged)
        return;
    pthread_mutex_lock(&b->mu);
    *b->queued_tail = b->staged;
    b->queued_tail = b->staged_tail;
    pthread_cond_signal(&b->work);
    pthread_mutex_unlock(&b->mu);
    b->staged = NULL;
    b->staged_tail = &b->staged;
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

static _Noreturn void end_job(rt__bridge *b, int code)
{
    b->mpi->abort(code);
    _exit(code); /* MPI_Abort does not return; in case it did */
}

/* mpi_thread.c - the one thread that calls MPI: sends, receives, and
 * hands messages over (mpi_thread.h). */
#include "mpi_thread.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/list.h"
#include "base/shm.h"
#include "base/thread.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- the bridge thread ------------------------------------------------------ */

void rt__outgoing_free(outgoing *o)
{
    if (o->owned)
        rt__buf_free(o->owned);
    else if (o->map)
        rt__shm_unmap(o->map, o->bulk_len);
    if (o->fd >= 0)
        close(o->fd);
    rt__free(o->buf);
    rt__free(o);
}

void rt__incoming_free(incoming *in)
{
    if (in->block) {
        if (--in->block->left == 0)
            rt__free(in->block); /* in with it */
        return;
    }
    rt__free(in->buf);
    rt__free(in);
}

/* Hand a list of messages (linked, last at *tail) to the loop. */
static void arrive(rt__bridge *b, incoming *in, incoming **tail)
{
    pthread_mutex_lock(&b->mu);
    *b->arrived_tail = in;
    b->arrived_tail = tail;
    pthread_mutex_unlock(&b->mu);
    b->arrived_new = 1;
}

/* What arrived goes to the runtime: here, in a round of our own, when the
 * round is free; else through the loop, whose thread the eventfd wakes.
 * Once per pass, whatever came. */
static void hand_over(rt__bridge *b)
{
    b->arrived_new = 0;
    pthread_mutex_lock(&b->mu);
    int attached = b->loop != NULL;
    rt__round_hook round = b->round;
    pthread_mutex_unlock(&b->mu);
    if (!attached)
        return; /* rt__bridge_attach() hands over what came before */
    if (round.take && round.take(round.ctx)) {
        rt__bridge_deliver(b);
        round.run(round.ctx);
    } else {
        rt__wake_signal(&b->arrivals);
    }
}

/* A message that says another rank cannot be reached, as if it had sent
 * it: the runtime thread fails that node.  what is freed with the
 * message when owned. */
static void unreachable(rt__bridge *b, int rank, const char *what, char *owned)
{
    incoming *in = rt__malloc(sizeof *in);
    if (!in)
        rt__mpi_thread_end_job(b, 1);
    memset(in, 0, sizeof *in);
    in->from = rank;
    in->m.type = RT__RANK_FAILED;
    in->m.text = what;
    in->m.fd = -1;
    in->buf = owned;
    arrive(b, in, &in->next);
}

static void post(rt__bridge *b, outgoing *o)
{
    const rt__mpi *mpi = b->mpi;
    int failed = mpi->isend(o->buf, o->len, o->to, o->tag, &o->reqs[0]) < 0;
    if (!failed && o->owned) {
        o->map = o->owned;
    } else if (!failed && o->fd >= 0) {
        o->map = rt__shm_open(o->fd, o->bulk_len, RT__SHM_VIEW);
        failed = !o->map;
        if (o->map)
            madvise((char *)o->map - RT__BUF_HDR, RT__BUF_HDR + o->bulk_len,
                    MADV_POPULATE_READ);
    }
    if (!failed && o->map) {
        for (size_t i = 1; !failed && i < o->nreqs; i++) {
            size_t off = (i - 1) * o->piece, n = o->bulk_len - off;
            failed = mpi->isend((char *)o->map + off, n < o->piece ? n : o->piece, o->to,
                                TAG_PIECE, &o->reqs[i]) < 0;
        }
    }
    if (failed)
        unreachable(b, o->to, "MPI could not send to it", NULL);
    o->next = b->inflight;
    b->inflight = o;
}

outgoing *rt__outgoing_new(int to, int tag, size_t nreqs)
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

/* Send what was queued, in its order (MPI keeps the order between two
 * ranks): batches of small messages, and messages with pieces. */
static void post_all(rt__bridge *b, outgoing *list)
{
    for (outgoing *o = list, *next; o; o = next) {
        next = o->next;
        post(b, o);
    }
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
            rt__outgoing_free(o);
            moved = 1;
        } else {
            p = &o->next;
        }
    }
    return moved;
}

/* The pieces of len bytes, each at most piece, into data; or, with fd
 * (>= 0; piece is then RT__OBJECT_PIECE), through the bridge's piece
 * buffer into memfd fd, new, whose mapping data is.  MPI copying into a
 * new memfd's pages made them a fault each, 150 ms per 256 MiB here,
 * where write() makes them and copies in 80 (a memfd of the pool comes
 * with its pages mapped: MPI writes those).  Without memory for the
 * buffer, MPI writes the mapping. */
static int receive_into(rt__bridge *b, int from, char *data, size_t len, size_t piece, int fd)
{
    if (fd >= 0 && !b->piece && !(b->piece = rt__malloc(piece)))
        fd = -1;
    int rc = 0;
    for (size_t off = 0; off < len && rc == 0; off += piece) {
        size_t n = len - off < piece ? len - off : piece;
        rc = b->mpi->recv(fd >= 0 ? b->piece : data + off, n, from, TAG_PIECE);
        if (rc == 0 && fd >= 0)
            rc = rt__shm_write_at(fd, off, b->piece, n);
    }
    return rc;
}

/* The pieces of an object another rank pulled go into shared memory: a
 * task here maps it from there, uncopied.  NULL when there is none to
 * be had (the heap takes them then).  Another rank than 0 keeps the
 * mapping made for it (rt__shm_keep()): only its tasks read the object,
 * by its memfd, and unmapping 256 MiB to map them again took 11 ms.
 * Rank 0's application may read it with rt_get(), and may write what
 * it reads: it gets a private mapping of its own. */
static void *receive_shared(rt__bridge *b, int from, size_t len, int *failed)
{
    void *data;
    int made, fd = rt__shm_create_made(len, &data, &made);
    if (fd < 0)
        return NULL;
    *failed = receive_into(b, from, data, len, RT__OBJECT_PIECE, made ? fd : -1) < 0;
    if (!*failed && b->rank != 0 && rt__shm_seal(fd) == 0)
        return rt__shm_keep(data, len, fd);
    rt__shm_done(data, len);
    void *buf = !*failed && rt__shm_seal(fd) == 0 ? rt__shm_open(fd, len, RT__SHM_BUFFER) : NULL;
    if (!buf)
        close(fd);
    *failed |= !buf;
    return buf;
}

/* The pieces that follow a message, into a buffer the receiver keeps:
 * the heap's pages come faster than a memfd's, and the caller of
 * rt_get() frees them alike; but an object pulled for a task goes into
 * shared memory. */
static void *receive_pieces(rt__bridge *b, int from, size_t len, uint32_t type)
{
    int failed = 0;
    void *shared = type == RT__RANK_OBJECT ? receive_shared(b, from, len, &failed) : NULL;
    if (shared || failed)
        return shared;
    char *data = rt__buf_alloc(len);
    if (!data) {
        rt__warn("no memory for %zu bytes from rank %d: the job ends", len, from);
        rt__mpi_thread_end_job(b, 1);
    }
    /* Every page made in one call, not in a fault each while MPI copies
     * (where the kernel can: Linux 5.14 and later). */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = ((uintptr_t)data + page - 1) & ~(page - 1);
    if (len > 2 * page)
        madvise((void *)first, ((uintptr_t)data + len - first) & ~(page - 1),
                MADV_POPULATE_WRITE);
    if (receive_into(b, from, data, len, RT__MPI_PIECE, -1) < 0) {
        rt__buf_free(data);
        return NULL;
    }
    return data;
}

static void count_bye(rt__bridge *b, int from)
{
    pthread_mutex_lock(&b->mu);
    b->byes++;
    if (!b->left[from])
        b->left[from] = 1;
    pthread_cond_broadcast(&b->answered);
    pthread_mutex_unlock(&b->mu);
}

/* Decode the message of len bytes at buf into in (zeroed), and take its
 * pieces if they follow: 1 to hand it over; 0 when it was a BYE (counted
 * here) or could not be read (dropped with a warning). */
static int read_message(rt__bridge *b, int from, const char *buf, size_t len,
                        int may_follow, incoming *in)
{
    int follows = 0;
    if (rt__rank_decode(buf, len, &in->m, &follows) < 0 ||
        (follows && (!may_follow ||
                     !(in->m.owned = receive_pieces(b, from, in->m.len, in->m.type))))) {
        rt__warn("a message from rank %d could not be read: dropped", from);
        return 0;
    }
    if (in->m.type == RT__RANK_BYE) {
        count_bye(b, from);
        return 0;
    }
    if (in->m.owned)
        in->m.bytes = in->m.owned;
    b->payload_in += in->m.len;
    b->messages_in++;
    in->from = from;
    return 1;
}

/* The messages of a batch (each length first) that can be read whole:
 * how many. */
static size_t batch_count(int from, const char *buf, size_t len)
{
    size_t count = 0;
    uint64_t n;
    for (size_t at = 0; len - at >= sizeof n; at += sizeof n + n, count++) {
        memcpy(&n, buf + at, sizeof n);
        if (n > len - at - sizeof n) {
            rt__warn("a batch from rank %d is cut short: its end is dropped", from);
            break;
        }
    }
    return count;
}

/* The messages of a batch, handed over at once, in one block with a copy
 * of its bytes (a buffer and a record each, each copied out, took a
 * quarter of rank 0's bridge thread in a stream of small tasks). */
static void take_batch(rt__bridge *b, int from, const char *buf, size_t len)
{
    size_t count = batch_count(from, buf, len);
    incoming_block *block = count ? rt__malloc(sizeof *block + count * sizeof(incoming) + len)
                                  : NULL;
    if (!block) {
        if (count)
            rt__warn("no memory for a batch from rank %d: dropped", from);
        return;
    }
    incoming *ins = (incoming *)(block + 1), *list = NULL, **tail = &list;
    char *bytes = (char *)(ins + count);
    memcpy(bytes, buf, len);
    block->left = 0;
    uint64_t n;
    for (size_t k = 0, at = 0; k < count; k++, at += sizeof n + n) {
        memcpy(&n, bytes + at, sizeof n);
        memset(&ins[k], 0, sizeof ins[k]);
        if (!read_message(b, from, bytes + at + sizeof n, n, 0, &ins[k]))
            continue;
        ins[k].block = block;
        block->left++;
        *tail = &ins[k];
        tail = &ins[k].next;
    }
    if (list)
        arrive(b, list, tail);
    else
        rt__free(block);
}

/* Room for a batch of len bytes: one buffer, reused, as each message is
 * copied out of it; a new one each time was mapped and faulted in anew
 * (a megabyte, the batches of a stream of small tasks).  NULL without
 * memory. */
static char *batch_room(rt__bridge *b, size_t len)
{
    if (len > b->batch_in_cap) {
        rt__free(b->batch_in);
        b->batch_in = rt__malloc(len);
        b->batch_in_cap = b->batch_in ? len : 0;
    }
    return b->batch_in;
}

/* Take one MPI message: 2 when one came, 1 when it was only a sign of
 * life, 0 when none, -1 on failure. */
static int receive_one(rt__bridge *b)
{
    int from, tag;
    size_t len;
    int found = b->mpi->probe(&from, &tag, &len);
    if (found <= 0)
        return found;
    b->heard_ns[from] = b->now_ns;
    int batch = tag == TAG_BATCH;
    char *buf = batch ? batch_room(b, len ? len : 1) : rt__malloc(len ? len : 1);
    if (buf && tag == TAG_ALIVE && b->mpi->recv(buf, len, from, tag) == 0) {
        rt__free(buf);
        return 1; /* heard: that is all it says, and no work */
    }
    if (!buf || b->mpi->recv(buf, len, from, tag) < 0 || (tag != TAG_MSG && !batch)) {
        rt__warn("a message from rank %d could not be received: dropped", from);
        if (!batch)
            rt__free(buf);
        return -1;
    }
    if (batch) {
        take_batch(b, from, buf, len);
        return 2;
    }
    incoming *in = rt__calloc(1, sizeof *in);
    if (in && read_message(b, from, buf, len, 1, in)) {
        in->buf = buf;
        arrive(b, in, &in->next);
    } else {
        if (!in)
            rt__warn("no memory for a message from rank %d: dropped", from);
        rt__free(in);
        rt__free(buf);
    }
    return 2;
}

/* 1 when work came: the signs of life of idle ranks keep no bridge from
 * backing off (rank 0 hears one from every rank each second). */
static int receive(rt__bridge *b)
{
    int got = 0, rc;
    for (int i = 0; i < 64 && (rc = receive_one(b)) > 0; i++)
        got |= rc == 2;
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

/* How long a rank may be silent: RTASK_RANK_TIMEOUT seconds (0: for
 * ever), SILENT_DEFAULT_S when unset or unreadable (with a warning). */
static uint64_t silent_limit_ns(void)
{
    const char *text = getenv("RTASK_RANK_TIMEOUT");
    char *end;
    if (!text || !*text)
        return SILENT_DEFAULT_S * 1000000000ull;
    errno = 0;
    double s = strtod(text, &end);
    if (errno || *end || s < 0 || s > 1e9 || s != s) {
        rt__warn("RTASK_RANK_TIMEOUT=\"%.32s\" is not a number of seconds: %d s",
                 text, SILENT_DEFAULT_S);
        return SILENT_DEFAULT_S * 1000000000ull;
    }
    return (uint64_t)(s * 1e9);
}

/* The bridge thread's first act: join, and make room for its batches. */
int rt__mpi_thread_join(rt__bridge *b, void *unused)
{
    (void)unused;
    if (b->mpi->join(&b->rank, &b->size, b->error, sizeof b->error) < 0)
        return -1;
    b->batch = rt__calloc((size_t)b->size, sizeof *b->batch);
    b->left = rt__calloc((size_t)b->size, 1);
    b->heard_ns = rt__calloc((size_t)b->size, sizeof *b->heard_ns);
    if (!b->batch || !b->left || !b->heard_ns) {
        snprintf(b->error, sizeof b->error, "no memory");
        return -1;
    }
    uint64_t now = rt__now_ns();
    for (int r = 0; r < b->size; r++)
        b->heard_ns[r] = now;
    b->silent_ns = b->rank == 0 ? silent_limit_ns() : 0;
    return 0;
}

/* A serving rank says it is there, when it said nothing for a while and
 * its last word went out: rank 0 tells a stopped or hung rank by its
 * silence. */
static void say_alive(rt__bridge *b)
{
    uint64_t now = b->now_ns;
    if (b->alive_req && !b->mpi->test(&b->alive_req))
        return;
    b->alive_req = NULL;
    if (now - b->alive_ns < ALIVE_EVERY_NS)
        return;
    b->alive_ns = now;
    static const char none;
    if (b->mpi->isend(&none, 0, 0, TAG_ALIVE, &b->alive_req) < 0)
        b->alive_req = NULL;
}

/* Rank 0: a rank silent past the limit is declared dead, as a node that
 * failed (unreachable()); once. */
static void look_for_silence(rt__bridge *b)
{
    uint64_t now = b->now_ns;
    if (!b->silent_ns || now - b->looked_ns < ALIVE_EVERY_NS / 10)
        return;
    b->looked_ns = now;
    for (int r = 1; r < b->size; r++) {
        if (now - b->heard_ns[r] <= b->silent_ns)
            continue;
        pthread_mutex_lock(&b->mu);
        int gone = b->left[r] != 0;
        if (!gone)
            b->left[r] = 2;
        pthread_mutex_unlock(&b->mu);
        if (gone)
            continue;
        char *why = rt__malloc(96); /* the message's text: freed with it */
        if (!why)
            rt__mpi_thread_end_job(b, 1);
        snprintf(why, 96, "silent for %.0f s (RTASK_RANK_TIMEOUT): declared dead",
                 (double)(now - b->heard_ns[r]) / 1e9);
        rt__warn("rank %d has been %s", r, why);
        unreachable(b, r, why, why);
    }
}

static void keep_alive(rt__bridge *b)
{
    if (b->rank == 0)
        look_for_silence(b);
    else
        say_alive(b);
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

void *rt__mpi_thread_main(void *arg)
{
    rt__bridge *b = arg;
    rt__thread_name("rtask-mpi");
    unsigned idle = 0;
    if (make_call(b) < 0) /* join */
        return NULL;      /* rt__bridge_open() ends the job */
    for (;;) {
        b->now_ns = rt__now_ns();
        make_call(b);
        pthread_mutex_lock(&b->mu);
        outgoing *take = b->queued;
        b->queued = NULL;
        b->queued_tail = &b->queued;
        int closing = b->closing;
        pthread_mutex_unlock(&b->mu);
        post_all(b, take);
        int busy = (take != NULL) | progress(b) | receive(b);
        keep_alive(b);
        int handed = b->arrived_new;
        if (handed)
            hand_over(b);
        if (closing && !b->inflight && !take)
            break;
        /* A large send moves only while MPI is called: no backing off. */
        idle = busy || b->inflight ? 0 : idle + 1;
        /* What a round of ours answered goes out at once: a yield here
         * gave the CPU away for 3 to 9 us (a synchronous call to another
         * rank had two). */
        if (!handed)
            idle_wait(b, idle);
    }
    b->mpi->leave(b->finalize);
    return NULL;
}

/* Make a call on the bridge thread and wait for it. */
int rt__mpi_thread_call(rt__bridge *b, bridge_call call, void *arg)
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

_Noreturn void rt__mpi_thread_end_job(rt__bridge *b, int code)
{
    b->mpi->abort(code);
    _exit(code); /* MPI_Abort does not return; in case it did */
}

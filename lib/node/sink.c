/* sink.c - task output written by a thread of its own, bounded. */
#include "sink.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/thread.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define SINK_MAX ((size_t)1 << 20) /* bytes of output waiting, at most */
#define RECORD_HDR 5               /* a stream byte and a 32-bit length */

enum { OUT, ERR };

static struct {
    pthread_mutex_t lock;
    pthread_cond_t more;    /* lines were queued */
    pthread_cond_t written; /* a batch was written */
    char *fill, *spare;     /* records waiting; the thread's other buffer */
    size_t len;
    uint64_t put, done;     /* lines queued, lines written */
    size_t dropped[2];      /* lines dropped since the last notice */
    int started, stuck;
} sink = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_conds(void)
{
    rt__cond_init_monotonic(&sink.more);
    rt__cond_init_monotonic(&sink.written);
}

static void write_records(const char *p, size_t len)
{
    for (const char *end = p + len; p < end;) {
        uint32_t n;
        FILE *to = p[0] == ERR ? stderr : stdout;
        memcpy(&n, p + 1, sizeof n);
        fwrite(p + RECORD_HDR, 1, n, to);
        p += RECORD_HDR + n;
    }
}

static void tell_dropped(const size_t *dropped)
{
    static const char *const name[2] = {"stdout", "stderr"};
    for (int s = OUT; s <= ERR; s++)
        if (dropped[s])
            fprintf(stderr, "rtask: %zu lines of task output to %s were dropped: it was "
                            "not read fast enough\n", dropped[s], name[s]);
}

/* Take what waits, write it without the lock, say it is written. */
static void *writer(void *unused)
{
    (void)unused;
    rt__thread_name("rtask-output");
    pthread_mutex_lock(&sink.lock);
    for (;;) {
        while (!sink.len && !sink.dropped[OUT] && !sink.dropped[ERR])
            pthread_cond_wait(&sink.more, &sink.lock);
        char *batch = sink.fill;
        size_t len = sink.len, dropped[2] = {sink.dropped[OUT], sink.dropped[ERR]};
        uint64_t upto = sink.put;
        sink.fill = sink.spare;
        sink.spare = NULL;
        sink.len = 0;
        sink.dropped[OUT] = sink.dropped[ERR] = 0;
        pthread_mutex_unlock(&sink.lock);
        write_records(batch, len);
        tell_dropped(dropped);
        fflush(stdout); /* only this thread waits on a stdout nobody reads */
        fflush(stderr);
        pthread_mutex_lock(&sink.lock);
        sink.spare = batch;
        sink.done = upto;
        sink.stuck = 0;
        pthread_cond_broadcast(&sink.written);
    }
    return NULL;
}

/* Under the lock: the thread, started once, takes no signal. */
static void start_writer(void)
{
    pthread_t thread;
    pthread_attr_t attr;
    pthread_once(&once, init_conds);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sink.started = rt__thread_start(&thread, &attr, writer, NULL) == 0;
    pthread_attr_destroy(&attr);
}

void rt__sink_put(FILE *to, const char *prefix, const char *line, size_t len)
{
    size_t plen = strlen(prefix), nl = len == 0 || line[len - 1] != '\n';
    uint32_t n = (uint32_t)(plen + len + nl);
    int stream = to == stderr ? ERR : OUT;
    pthread_mutex_lock(&sink.lock);
    if (!sink.started)
        start_writer();
    if (!sink.fill)
        sink.fill = rt__malloc(SINK_MAX);
    if (!sink.started || !sink.fill || sink.len + RECORD_HDR + n > SINK_MAX) {
        sink.dropped[stream]++;
        if (sink.started)
            pthread_cond_signal(&sink.more); /* the notice, once it moves */
        pthread_mutex_unlock(&sink.lock);
        return;
    }
    char *p = sink.fill + sink.len;
    p[0] = (char)stream;
    memcpy(p + 1, &n, sizeof n);
    memcpy(p + RECORD_HDR, prefix, plen);
    memcpy(p + RECORD_HDR + plen, line, len);
    if (nl)
        p[RECORD_HDR + plen + len] = '\n';
    sink.len += RECORD_HDR + n;
    sink.put++;
    pthread_cond_signal(&sink.more);
    pthread_mutex_unlock(&sink.lock);
}

int rt__sink_drain(int timeout_ms)
{
    struct timespec deadline = rt__deadline_after(timeout_ms);
    pthread_mutex_lock(&sink.lock);
    uint64_t target = sink.put;
    while (sink.done < target && !sink.stuck)
        if (pthread_cond_timedwait(&sink.written, &sink.lock, &deadline) == ETIMEDOUT)
            sink.stuck = 1;
    int rc = sink.done >= target ? 0 : -1;
    pthread_mutex_unlock(&sink.lock);
    return rc;
}

void rt__sink_forked(void)
{
    pthread_mutex_init(&sink.lock, NULL);
    if (sink.started)
        init_conds();
    sink.started = sink.stuck = 0;
    sink.len = 0;
    sink.put = sink.done = 0;
}

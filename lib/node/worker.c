/* worker.c - run tasks in a worker process and send their results back. */
#include "worker.h"

#include "argmap.h"
#include "board.h"
#include "callmsg.h"
#include "client.h"
#include "output.h"
#include "procstate.h"
#include "taskenv.h"
#include "proto.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/linger.h"
#include "base/prefault.h"
#include "base/process.h"
#include "base/shm.h"
#include "base/thread.h"

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The result of the running task.  data is heap memory (from
 * rt__buf_alloc) unless fd >= 0, when it is the memfd's mapping.  A task
 * of several results sets the others with rt_result_set_at(): copies, in
 * the heap, packed with the first when the task returns (pack()). */
struct rt_result {
    void *data;
    size_t len;
    int fd;
    rt_value *more;  /* results 1 .. nmore, at more[index - 1]; or NULL */
    size_t nmore;
};

/* Results wait in the channel while the batch of tasks that came with
 * them runs, and go out when the batch ends, so that a burst of no-op
 * tasks costs one send; the journal keeps them meanwhile (journal.h),
 * where a caller that waits for them reads them first (they go later
 * then: answers_read_from_journal()).  A task that runs longer than
 * FLUSH_AFTER_NS must not hold back the results of the tasks before it: a
 * helper thread, the flusher, looks every FLUSH_TICK_NS and sends them
 * then (see flusher()).  Its tick is ten times that: each of its wake-ups
 * is taken from the tasks' CPU (a 100 us tick cost tasks of 80 us a
 * quarter of their speed on 2 CPUs: 146 against 119 us a task).  A tick
 * that finds a short task running doubles the next, up to
 * FLUSH_TICK_MAX_NS: in a stream of short tasks, which send their results
 * at their batch's end anyway, its wake-ups took 2 to 3 % of the tasks'
 * CPU at 1 ms (Task Bench, 100 us tasks); a long task is still seen
 * within one tick, and after a pause the tick is short again. */
#define FLUSH_AFTER_NS 100000
#define FLUSH_TICK_NS 1000000
#define FLUSH_TICK_MAX_NS 16000000
/* A task that ran this long sends its answer as it ends, not at the
 * flusher's next tick: the runtime keeps about 2 ms of such tasks queued
 * in the worker (2 of 1 ms), and an answer held up to a tick left the
 * worker waiting for its next task (Task Bench at 1 ms: 84 to 93 %
 * before, 90 to 94.5 % after, in the same minutes).  The send costs
 * under 1 % of such a task; at 100 us it cost a tenth of their speed. */
#define SEND_AT_ONCE_NS 500000
/* How long a worker that waits for work keeps the mappings of the
 * objects its last tasks took (argmap.h): the next task of a fan-out
 * comes within a round trip through the runtime. */
#define ARGS_KEPT_MS 2
/* How long a worker idle from its start waits for its first task before
 * it takes that task's page faults ahead (rehearse()).  The spares of a
 * stream of max_calls = 1 tasks have theirs by then: the copies would
 * take the CPU those tasks run on (a fifth of the stream's pace on 2
 * CPUs); a spare that waits longer, as between GPU tasks, still has its
 * pages ready. */
#define REHEARSE_AFTER_MS 1

static struct {
    rt__chan chan;
    rt__run_slot *slot;
    uint64_t received;   /* tasks received in the worker's life */
    uint64_t inbox_taken; /* batches taken from its inbox (inbox.h) */
    uint64_t results;    /* results queued in the worker's life */
    char *name_given;    /* from the last NAME message; NULL = symbol */
    int name_new;        /* a NAME came since the last announce */
    uint64_t announced_fn; /* the function whose name the output streams
                              carry now, or 0 */
    uint64_t labelled_task; /* the task (its ordinal, received) whose lines
                               the runtime labels: it needs no marker */
    rt__board *board;    /* the node's, or NULL */
    uint64_t post_seq;   /* from a POST: the next task posts its result */
    int last_due;        /* from a LAST: the next task is the last */
    int leaving;         /* it ran its last task: it exits once answered */
} self;

/* The flusher thread.  It is started with the first batch of more than
 * one task, so a worker that runs one task per batch (a fresh GPU worker,
 * a synchronous caller) never has it.  The channel is the main thread's,
 * which lends it while a task runs (the task never touches it): then the
 * flusher may take it to send what waits, and the main thread takes it
 * back when the task returns, waiting only if a send is under way.  No
 * lock is held across the send. */
enum { CHAN_MAIN, CHAN_LENT, CHAN_SENDING };

static struct {
    _Atomic uint32_t chan;    /* futex: CHAN_*, who may use the channel */
    _Atomic uint32_t busy;    /* futex: 1 while a task runs with results of
                                 its batch waiting */
    _Atomic uint32_t task_no; /* futex: counts the tasks run */
    _Atomic int parked;       /* the flusher waits for task_no to change */
    int started;
} flush;

/* The arguments of a task of several: those that came by ARG (mapped,
 * read-only, until the task returns; errno_ says why one could not be
 * mapped), then the whole list read from the task's table. */
static struct {
    rt_value mapped[RT_ARGS_MAX];
    size_t nmapped;
    int errno_;
    rt_value list[RT_ARGS_MAX];
    unsigned char board[RT_ARGS_MAX]; /* list[i] is a board entry's seq */
    unsigned char (*posted)[RT__BOARD_BYTES]; /* their bytes, copied (made
                                                 when first needed) */
    size_t n;
} args;

/* The actor this worker is, if it is one. */
static struct {
    void *state;
    rt_actor_fini_fn fini;
    uint64_t handle;
    uint64_t concurrency; /* methods at once (rt_opts.max_concurrency) */
    int created;
} actor;

/* An actor that runs several methods at once has threads of its own for
 * them: the main thread reads each call and queues it here (its bytes
 * copied out of the channel, its mapped arguments handed over), the
 * threads run them and send their results, one at a time, in the order
 * they end. */
typedef struct call_job {
    struct call_job *next;
    rt__task_msg m;
    char *bytes;        /* the argument (or table) copied, or NULL: */
    const void *mapped_arg; /* its memfd's, mapped when it came (NULL: failed) */
    int map_errno;
    rt_value mapped[RT_ARGS_MAX];
    size_t nmapped;
} call_job;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;  /* a job came, or one ended */
    call_job *head, *tail;
    unsigned threads, busy;  /* threads: 0 while methods run on the main thread */
    pthread_mutex_t sending; /* the channel's output, between the threads */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0,
          PTHREAD_MUTEX_INITIALIZER};

/* The task the calling thread runs: what rt_task_context() says. */
static _Thread_local rt__running running_here;

/* Exit: after the actor's destructor, when it was created. */
static _Noreturn void leave(void)
{
    if (actor.created && actor.fini) {
        actor.created = 0;
        actor.fini(actor.state);
    }
    fflush(stdout);
    fflush(stderr);
    _exit(0); /* not exit(): atexit handlers belong to the application */
}

/* A task that calls exit() ends its worker with that status, and nothing
 * else: the atexit handlers the worker inherited are the application's,
 * and must not run in a copy of it.  Registered last, this runs first. */
static void exit_now(int status, void *unused)
{
    (void)unused;
    fflush(stdout);
    fflush(stderr);
    _exit(status);
}

/* Its last answer sent, the worker exits (nothing is sent after a last
 * task).  The exit's teardown of its memory took 300 to 500 us here, on
 * the CPU it was woken on: its caller's, when a caller waits for the
 * answer on the worker (a synchronous GPU task's was 15x a reused
 * worker's).  It lets that thread run first; not otherwise, where the
 * yield delayed the next fresh worker (max_calls = 1, pipelined). */
static _Noreturn void leave_after_last(void)
{
    if (atomic_load(&self.slot->awaited) == RT__AWAIT_NOW)
        sched_yield();
    leave();
}

/* The socket failed: a task closed or broke it.  Say so in the run slot,
 * so that the runtime blames the task and explains the failure. */
static _Noreturn void leave_lost(void)
{
    atomic_store(&self.slot->lost, 1);
    leave();
}

/* The first result's bytes go; the others stay. */
static void first_drop(rt_result *r)
{
    if (r->fd >= 0) {
        rt__shm_done(r->data, r->len);
        rt__shm_pool_give(r->fd);
    } else {
        rt__buf_free(r->data);
    }
    r->data = NULL;
    r->len = 0;
    r->fd = -1;
}

static void result_drop(rt_result *r)
{
    first_drop(r);
    for (size_t i = 0; i < r->nmore; i++)
        rt__free((void *)(uintptr_t)r->more[i].data);
    rt__free(r->more);
    r->more = NULL;
    r->nmore = 0;
}

void *rt__result_alloc(rt_result *result, size_t len)
{
    if (!result)
        return NULL;
    first_drop(result);
    if (len >= RT__SHM_MIN) {
        result->fd = rt__shm_create(len, &result->data);
        if (result->fd < 0)
            return NULL;
    } else if (!(result->data = rt__buf_alloc(len))) {
        return NULL;
    }
    result->len = len;
    return result->data;
}

int rt__result_set_at(rt_result *r, unsigned index, const void *data, size_t len)
{
    if (index > r->nmore) {
        rt_value *grown = rt__realloc(r->more, index * sizeof *grown);
        if (!grown)
            return -1;
        memset(grown + r->nmore, 0, (index - r->nmore) * sizeof *grown);
        r->more = grown;
        r->nmore = index;
    }
    void *copy = rt__malloc(len ? len : 1);
    if (!copy)
        return -1;
    if (len)
        memcpy(copy, data, len);
    rt__free((void *)(uintptr_t)r->more[index - 1].data);
    r->more[index - 1] = (rt_value){copy, len};
    return 0;
}

/* The task returned: results it set with rt_result_set_at() go as one,
 * packed after the first (a RESULTS); without memory for that, the
 * worker could not run it (ENOMEM). */
static void pack(rt_result *r, rt__result_msg *m)
{
    if (!r->nmore)
        return;
    rt_value parts[RT_RETURNS_MAX];
    size_t n = r->nmore + 1;
    parts[0] = (rt_value){r->data, r->len};
    memcpy(parts + 1, r->more, r->nmore * sizeof *parts);
    size_t size = rt__parts_size(parts, n);
    rt_result packed = {.fd = -1};
    void *dst = size ? rt__result_alloc(&packed, size) : NULL;
    if (dst)
        rt__parts_write(dst, parts, n);
    else
        m->sys_errno = ENOMEM;
    m->packed = dst != NULL;
    result_drop(r);
    *r = packed;
}

/* What every task does as its function returns: its results packed, and
 * what it made that they do not name released (client.h). */
static void task_returned(rt_result *r, rt__result_msg *m)
{
    pack(r, m);
    rt__client_task_end(r->data, r->len);
}

/* Put the name marker into both output streams when the function or the
 * given name changes, so that the application prefixes each line with
 * the task that wrote it; unless the runtime labels this task's lines
 * itself (output.h).  The name is looked up only for a marker: the
 * symbol's lookup costs a fresh worker's first task microseconds. */
static void announce(uint64_t fn)
{
    int labelled = self.received == self.labelled_task;
    if (fn == self.announced_fn && !self.name_new)
        return;
    self.announced_fn = fn;
    self.name_new = 0;
    if (labelled)
        return;
    char line[320];
    memcpy(line, RT__NAME_MARK, RT__NAME_MARK_LEN);
    int n = snprintf(line + RT__NAME_MARK_LEN, sizeof line - RT__NAME_MARK_LEN,
                     "%d %.255s\n", (int)getpid(), rt__task_name(fn, self.name_given));
    size_t len = RT__NAME_MARK_LEN + (size_t)n;
    if (len > sizeof line)
        len = sizeof line;
    fflush(stdout);
    fflush(stderr);
    if (write(STDOUT_FILENO, line, len) < 0 || write(STDERR_FILENO, line, len) < 0)
        return; /* nobody reads our output any more; the task can still run */
}

/* Send what the channel holds; the journal empties once it is all sent.
 * By the channel's user of the moment.  0, or -1 when the socket failed. */
static int flush_channel(void)
{
    if (rt__chan_flush(&self.chan) < 0)
        return -1;
    rt__journal_clear(&self.slot->journal, self.results);
    return 0;
}

/* A task told to post (its seq) leaves its result on the board, or that
 * it has none: after its answer is in the journal, so that a consumer
 * never takes a result that the worker's death would lose. */
static void post(uint64_t seq, const rt__result_msg *m, const rt_result *r, int inline_bytes)
{
    if (seq && self.board)
        rt__board_post(self.board, seq, r->data, r->len,
                       !m->bounced && !m->sys_errno && !m->status && inline_bytes);
}

/* Make r m's bytes: large ones go as the memfd they are in, read-only
 * and sealed from here on (system calls: before any lock). */
static void seal_result(rt__result_msg *m, rt_result *r)
{
    m->data = r->data;
    m->len = r->len;
    m->fd = r->fd;
    if (r->fd >= 0) {
        r->fd = -1; /* the channel owns it now */
        rt__shm_done(r->data, r->len); /* unmapped: nothing here writes it now */
        r->data = NULL;
        m->data = NULL;
        rt__shm_seal(m->fd); /* an unsealed one is refused by the reader */
    }
}

/* Queue m, r's answer sealed, and keep it in the journal; what the
 * journal cannot keep (a memfd, or no room) is sent at once.  Then post
 * it under post_seq (or 0); r is spent. */
static void queue_result(rt__result_msg *m, rt_result *r, uint64_t post_seq)
{
    int inline_bytes = m->fd < 0;
    int queued = rt__proto_send_result(&self.chan, m) == 0, sent = 1;
    if (queued) {
        self.results++;
        if (rt__journal_keep(&self.slot->journal, m, self.results) < 0)
            sent = flush_channel() == 0;
    }
    if (!queued)
        leave();
    if (!sent)
        leave_lost();
    post(post_seq, m, r, inline_bytes);
    result_drop(r);
}

static void send_result(rt__result_msg *m, rt_result *r, uint64_t post_seq)
{
    seal_result(m, r);
    queue_result(m, r, post_seq);
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val,
                  const struct timespec *timeout)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, timeout, NULL, 0);
}

/* While results of a batch wait, look at the running task every tick:
 * once it has run FLUSH_AFTER_NS, send them, then sleep until the next
 * task, so that a long task costs the flusher one wake-up. */
static void *flusher(void *unused)
{
    (void)unused;
    rt__thread_name("rtask-flusher");
    long tick_ns = FLUSH_TICK_NS;
    for (;;) {
        if (!atomic_load(&flush.busy)) {
            uint64_t idle_since = rt__now_ns();
            futex(&flush.busy, FUTEX_WAIT_PRIVATE, 0, NULL);
            if (rt__now_ns() - idle_since > FLUSH_TICK_MAX_NS)
                tick_ns = FLUSH_TICK_NS; /* not a stream: short ticks again */
            continue;
        }
        nanosleep(&(struct timespec){tick_ns / 1000000000, tick_ns % 1000000000}, NULL);
        uint32_t no = atomic_load(&flush.task_no);
        if (!atomic_load(&self.slot->running) ||
            rt__now_ns() - atomic_load(&self.slot->since_ns) < FLUSH_AFTER_NS) {
            tick_ns = tick_ns < FLUSH_TICK_MAX_NS / 2 ? 2 * tick_ns : FLUSH_TICK_MAX_NS;
            continue;
        }
        tick_ns = FLUSH_TICK_NS;
        uint32_t lent = CHAN_LENT;
        if (atomic_compare_exchange_strong(&flush.chan, &lent, CHAN_SENDING)) {
            if (rt__chan_unsent(&self.chan))
                (void)flush_channel(); /* a failure is the main thread's to see */
            atomic_store(&flush.chan, CHAN_LENT);
            futex(&flush.chan, FUTEX_WAKE_PRIVATE, 1, NULL);
        }
        atomic_store(&flush.parked, 1);
        if (atomic_load(&flush.task_no) == no)
            futex(&flush.task_no, FUTEX_WAIT_PRIVATE, no, NULL);
        atomic_store(&flush.parked, 0);
    }
    return NULL;
}

static void start_flusher(void)
{
    pthread_attr_t attr;
    pthread_t thread;
    flush.started = 1;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (rt__thread_start(&thread, &attr, flusher, NULL) != 0)
        flush.started = 0; /* results then wait for the batch's end */
    else
        rt__procstate_own_threads(2);
    pthread_attr_destroy(&attr);
}

/* A task starts: the flusher may use the channel meanwhile, and works
 * only while results of the batch wait in it (each wake-up of its costs
 * the other workers CPU: none for a task that is alone in its batch). */
static void lend_channel(void)
{
    int waiting = rt__chan_unsent(&self.chan) > 0; /* still ours to look at */
    atomic_store(&flush.chan, CHAN_LENT);
    if (flush.started && waiting && !atomic_exchange(&flush.busy, 1))
        futex(&flush.busy, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* Move the lent channel to `to`, once a send under way is over. */
static void take_lent_channel(uint32_t to)
{
    uint32_t state = CHAN_LENT;
    while (!atomic_compare_exchange_strong(&flush.chan, &state, to)) {
        if (state != CHAN_SENDING)
            break; /* not lent: the main thread's already */
        futex(&flush.chan, FUTEX_WAIT_PRIVATE, CHAN_SENDING, NULL);
        state = CHAN_LENT;
    }
}

/* A task ended: the channel is the main thread's again, once a send the
 * flusher began is over. */
static void reclaim_channel(void)
{
    take_lent_channel(CHAN_MAIN);
}

/* A task ended: wake the flusher if it sleeps until then. */
static void task_ended(void)
{
    atomic_fetch_add(&flush.task_no, 1);
    if (atomic_load(&flush.parked))
        futex(&flush.task_no, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* An ARG: its memfd mapped until the task it belongs to returns. */
static void take_arg(const rt__hdr *h, const int *fds)
{
    int fd;
    size_t len;
    if (rt__proto_read_arg(h, fds, &fd, &len) < 0 || args.nmapped == RT_ARGS_MAX)
        leave(); /* the stream is corrupt */
    const void *data = rt__argmap_take(fd, len);
    close(fd);
    if (!data && !args.errno_)
        args.errno_ = errno;
    args.mapped[args.nmapped++] = (rt_value){data, len};
}

/* A memfd of the runtime's pool, for the next large result. */
static void take_spare(const rt__hdr *h, const int *fds)
{
    int fd;
    size_t len;
    if (rt__proto_read_arg(h, fds, &fd, &len) < 0)
        leave(); /* the stream is corrupt */
    rt__shm_pool_give(fd);
}

/* Whether the task just received may start: not when the runtime took
 * it back (rt__run_slot), which it may do until the worker says here
 * that it starts. */
static int claim_start(void)
{
    uint64_t ordinal = ++self.received;
    uint64_t starts = atomic_load(&self.slot->starts);
    do {
        uint64_t last = starts >> RT__SKIP_BITS, skip = starts & RT__SKIP_MAX;
        if (ordinal <= last + skip)
            return 0;
    } while (!atomic_compare_exchange_weak(&self.slot->starts, &starts,
                                           ordinal << RT__SKIP_BITS));
    return 1;
}

static void drop_args(void)
{
    for (size_t i = 0; i < args.nmapped; i++)
        if (args.mapped[i].data)
            rt__argmap_drop(args.mapped[i].data, args.mapped[i].len);
    args.nmapped = 0;
    args.n = 0;
    args.errno_ = 0;
}

static int takes_list(const rt__task_msg *m)
{
    return m->type == RT__MSG_TASK_ARGS || m->type == RT__MSG_CALL_ARGS;
}

/* Call what the message names: a task, an actor's constructor (which
 * sets the actor's state) or one of its methods; list and n are the
 * arguments of a task of several. */
static int invoke(const rt__task_msg *m, const void *arg, const rt_value *list, size_t n,
                  rt_result *r)
{
    switch (m->type) {
    case RT__MSG_TASK_ARGS:
        return ((rt_fn_args)(uintptr_t)m->fn)(list, n, r);
    case RT__MSG_CALL_ARGS:
        return ((rt_method_args)(uintptr_t)m->fn)(actor.state, list, n, r);
    case RT__MSG_CREATE: {
        /* A class without a constructor has a NULL state. */
        rt_actor_init_fn init = (rt_actor_init_fn)(uintptr_t)m->fn;
        int status = init ? init(arg, m->len, &actor.state) : 0;
        actor.created = status == 0;
        return status;
    }
    case RT__MSG_CALL:
        return ((rt_method)(uintptr_t)m->fn)(actor.state, arg, m->len, r);
    default:
        return ((rt_fn)(uintptr_t)m->fn)(arg, m->len, r);
    }
}

static void flush_or_leave(void);

/* A task about to sleep on the board holds back no answer of its batch. */
static void flush_before_sleep(void)
{
    if (rt__chan_unsent(&self.chan))
        flush_or_leave();
}

/* The arguments of task `task` that are board entries, waited for and
 * copied: 0, or -1 when one is not there or the task is cancelled
 * meanwhile (it bounces). */
static int read_board(uint64_t task)
{
    rt__board_wait wait = {self.chan.fd, &self.slot->cancelled, task, flush_before_sleep};
    for (size_t i = 0; i < args.n; i++) {
        if (!args.board[i])
            continue;
        uint64_t seq;
        memcpy(&seq, args.list[i].data, sizeof seq);
        if (!args.posted && !(args.posted = rt__malloc(RT_ARGS_MAX * sizeof *args.posted)))
            return -1;
        long len = self.board ? rt__board_read(self.board, seq, args.posted[i], &wait) : -1;
        if (len < 0)
            return -1;
        args.list[i] = (rt_value){args.posted[i], (size_t)len};
    }
    return 0;
}

/* Tasks that share a worker each start from the lease's environment
 * and the worker's first directory, umask and signals; an actor's
 * process keeps what its constructor and methods set, as Ray's does
 * (distributed setups export MASTER_ADDR and the like).  A task after
 * which the worker retires (last) leaves its process as it is. */
static int is_task(const rt__task_msg *m)
{
    return m->type == RT__MSG_TASK || m->type == RT__MSG_TASK_ARGS;
}

static void run_task(const rt__task_msg *m, uint64_t post_seq, int last)
{
    rt_result r = {.fd = -1};
    rt__result_msg answer = {.id = m->id};
    const void *arg = m->arg;
    if (m->arg_fd >= 0) {
        arg = rt__shm_open(m->arg_fd, m->len, RT__SHM_VIEW);
        close(m->arg_fd);
        if (!arg)
            answer.sys_errno = errno;
    }
    if (arg && takes_list(m) &&
        rt__args_read(arg, m->len, args.mapped, args.nmapped, args.list,
                      m->type == RT__MSG_TASK_ARGS ? args.board : NULL, &args.n) < 0)
        leave(); /* the stream is corrupt */
    if (arg && args.errno_)
        answer.sys_errno = args.errno_;
    if (!answer.sys_errno && arg && m->type == RT__MSG_TASK_ARGS)
        answer.bounced = read_board(m->id) < 0;
    if (answer.sys_errno || answer.bounced) {
        if (arg && m->arg_fd >= 0)
            rt__shm_unmap((void *)arg, m->len);
        drop_args();
        send_result(&answer, &r, post_seq);
        return;
    }
    announce(m->fn);
    if (is_task(m)) {
        rt__taskenv_before_task(last);
        rt__procstate_before_task();
    }
    atomic_store(&self.slot->since_ns, rt__now_ns());
    atomic_store(&self.slot->running, m->id);
    running_here = (rt__running){.task = m->id, .attempt = m->attempt, .actor = actor.handle,
                                 .lends = is_task(m)};
    lend_channel();
    uint64_t start = rt__now_ns();
    if (is_task(m))
        rt__procstate_watch();
    answer.status = invoke(m, arg, args.list, args.n, &r);
    rt__procstate_unwatch();
    uint64_t ran_ns = rt__now_ns() - start;
    task_returned(&r, &answer);
    running_here = (rt__running){0};
    atomic_store(&self.slot->running, 0);
    reclaim_channel();
    task_ended();
    if (is_task(m)) {
        rt__taskenv_after_task(last);
        rt__procstate_after_task(ran_ns, last);
    }
    answer.run_us = ran_ns / 1000;
    fflush(stdout);
    fflush(stderr);
    if (m->arg_fd >= 0)
        rt__shm_unmap((void *)arg, m->len);
    drop_args();
    send_result(&answer, &r, post_seq);
    if (ran_ns >= SEND_AT_ONCE_NS)
        flush_or_leave();
}

/* ---- a task run inside a waiting one ------------------------------------------- */

/* Whether the waiting task may take the answer of the task it ran inside
 * its wait from that run (RT__RAN_AND_TOOK): it ended well, with one
 * result of inline bytes, and nobody asked it to stop, so that the
 * runtime records the same.  Then *copy (rt__buf_alloc()'s) and *len
 * hold its bytes. */
static int copy_for_waiter(const rt_result *r, const rt__result_msg *m, uint64_t task,
                           void **copy, size_t *len)
{
    if (m->status || m->sys_errno || m->packed || r->fd >= 0 ||
        atomic_load(&self.slot->cancelled) == task || !(*copy = rt__buf_alloc(r->len)))
        return 0;
    if (r->len)
        memcpy(*copy, r->data, r->len);
    *len = r->len;
    return 1;
}

/* The answer of a task run inside a wait, which the waiting task took
 * from the run itself (RT__RAN_AND_TOOK), is wanted at once by nobody
 * but a task that takes its object: it stays in the channel (and the
 * journal), and goes with the next send, at the flusher's next tick
 * (FLUSH_TICK_NS), at the task's end, or before a wait of the task that
 * may need it (rt__worker_send_held()).  1 when it stays.  Sent at once,
 * each woke the runtime thread, which then took the CPUs of the call's
 * next hand-offs (a task's synchronous call 13 us; 8.4 with its answers
 * sent 64 at a time). */
static _Atomic int inside_held;

static int hold_inside_answer(void)
{
    if (!flush.started)
        start_flusher();
    if (!flush.started)
        return 0;
    atomic_store(&inside_held, 1);
    if (!atomic_exchange(&flush.busy, 1))
        futex(&flush.busy, FUTEX_WAKE_PRIVATE, 1, NULL);
    task_ended(); /* a flusher parked until the next task looks again */
    return 1;
}

int rt__worker_run_inside(const rt__callmsg_run *in, void **taken, size_t *len)
{
    rt__running outer = running_here;
    uint64_t outer_since = atomic_load(&self.slot->since_ns);
    rt__task_msg m = {.type = RT__MSG_TASK, .id = in->task, .fn = in->fn, .arg = in->arg,
                      .len = in->len, .arg_fd = -1};
    rt_result r = {.fd = -1};
    rt__result_msg answer = {.id = in->task};
    uint64_t start = rt__now_ns();
    atomic_store(&self.slot->since_ns, start);
    atomic_store(&self.slot->running, in->task);
    running_here = (rt__running){.task = in->task, .attempt = (unsigned)in->attempt,
                                 .lends = 1};
    if (in->arg)
        answer.status = invoke(&m, in->arg, NULL, 0, &r);
    else
        answer.sys_errno = ENOMEM; /* its argument could not be copied */
    answer.run_us = (rt__now_ns() - start) / 1000;
    task_returned(&r, &answer);
    int took = taken && copy_for_waiter(&r, &answer, in->task, taken, len);
    running_here = outer;
    atomic_store(&self.slot->running, outer.task);
    atomic_store(&self.slot->since_ns, outer_since);
    fflush(stdout);
    fflush(stderr);
    /* The channel is lent while the outer task runs: taken as the
     * flusher takes it, and the answer sent now, since the task that
     * waits for it asks for it next, unless it took it from this run.
     * Lent again with no wake-up: only this thread, the task's
     * (running_here is its own), ever waits for it (take_lent_channel()). */
    take_lent_channel(CHAN_SENDING);
    send_result(&answer, &r, 0);
    int rc = took && hold_inside_answer() ? 0 : flush_channel();
    atomic_store(&flush.chan, CHAN_LENT);
    if (rc < 0)
        leave_lost();
    return took;
}

void rt__worker_send_held(void)
{
    uint32_t lent = CHAN_LENT;
    if (!atomic_exchange(&inside_held, 0) ||
        !atomic_compare_exchange_strong(&flush.chan, &lent, CHAN_SENDING))
        return;
    int rc = flush_channel();
    atomic_store(&flush.chan, CHAN_LENT);
    futex(&flush.chan, FUTEX_WAKE_PRIVATE, 1, NULL); /* the task's thread may wait */
    if (rc < 0)
        leave_lost();
}

static void flush_or_leave(void)
{
    if (pool.threads)
        pthread_mutex_lock(&pool.sending);
    int rc = flush_channel();
    if (pool.threads)
        pthread_mutex_unlock(&pool.sending);
    if (rc < 0)
        leave_lost();
}

/* Whether the batch's answers, all kept in the journal (queue_result()
 * sends what it cannot keep), are read there by a caller that waits for
 * them (local.c's await, which says so in the slot): then they go with
 * the next batch's, or before the worker sleeps if none comes while it
 * lingers, and the runtime drops them (journal.h).  Sent at the latest
 * then, whatever the journal holds: a task that scribbled on it delays
 * its answer, never loses it.  The journal's count is written before
 * the slot is read, both in the one order of sequentially consistent
 * operations (journal.c).
 *
 * The caller says that it waits a little after its task went: a task
 * read in the inbox (inbox.h) is often done before.  Sending its answer
 * then woke the runtime thread, which took the caller's CPU (8 to 12 us
 * a synchronous call, against 5 before the inbox).  So the answers of a
 * quick batch sent for a caller that returns at once (RT__AWAIT_SOON: an
 * application's rt_remote(), a task's call; its rt_get() waits so for
 * tasks this quick only) are held up to AWAIT_GRACE_NS for the caller to
 * say it waits, and sent then if it did not.  A thread that waits
 * otherwise (rt_wait(), an event loop's rt_notify()) turns the word back
 * (rt__local_unhold()), and they go at once: held, an event loop's
 * notice took 14.4 us against 7.6 before the inbox.  Holding them only
 * after a caller waited so for the batch before spared those too, but a
 * caller that found its task done, the runtime thread having been
 * quicker, no longer said so: whole runs of 20 000 calls stayed at 8 to
 * 12 us. */
#define AWAIT_GRACE_NS 5000
#define AWAIT_QUICK_NS 200000 /* dispatch.c's AWAIT_MAX_US */
static uint64_t await_due_ns; /* answers held for a caller that may wait: sent by then */

static int answers_read_from_journal(uint64_t batch_start)
{
    if (pool.threads)
        return 0; /* an actor's threads send as they end */
    uint32_t awaited = atomic_load(&self.slot->awaited);
    if (awaited == RT__AWAIT_NOW) {
        await_due_ns = 0;
        return 1;
    }
    /* A worker that leaves would hold them until its exit. */
    if (awaited != RT__AWAIT_SOON || self.leaving || !rt__chan_unsent(&self.chan) ||
        rt__now_ns() - batch_start > AWAIT_QUICK_NS) { /* the clock read only for a caller */
        await_due_ns = 0; /* all go now */
        return 0;
    }
    if (!await_due_ns) /* the first answers held set the time */
        await_due_ns = rt__now_ns() + AWAIT_GRACE_NS;
    return 1;
}

/* While it lingers: whether the caller said it waits (its answers stay
 * then), or did not in time, or another thread waits otherwise
 * (rt__local_unhold(): they go now). */
static int await_settled(void)
{
    return await_due_ns && (atomic_load(&self.slot->awaited) != RT__AWAIT_SOON ||
                            rt__now_ns() >= await_due_ns);
}

static void settle_await(void)
{
    if (atomic_load(&self.slot->awaited) != RT__AWAIT_NOW)
        flush_or_leave();
    await_due_ns = 0;
}

/* ---- an actor's threads ---------------------------------------------------------- */

/* One method on one of the actor's threads, from its job to its result. */
static void run_call(call_job *job)
{
    const rt__task_msg *m = &job->m;
    rt_result r = {.fd = -1};
    rt__result_msg answer = {.id = m->id};
    const void *arg = m->arg_fd >= 0 ? job->mapped_arg : job->bytes;
    rt_value list[RT_ARGS_MAX];
    size_t n = 0;
    if (!arg)
        answer.sys_errno = job->map_errno;
    for (size_t i = 0; i < job->nmapped && !answer.sys_errno; i++)
        if (!job->mapped[i].data)
            answer.sys_errno = EIO; /* it could not be mapped when it came */
    if (!answer.sys_errno && m->type == RT__MSG_CALL_ARGS &&
        rt__args_read(arg, m->len, job->mapped, job->nmapped, list, NULL, &n) < 0)
        answer.sys_errno = EPROTO;
    if (!answer.sys_errno) {
        uint64_t start = rt__now_ns();
        atomic_store(&self.slot->since_ns, start);
        atomic_store(&self.slot->running, m->id);
        running_here = (rt__running){.task = m->id, .attempt = m->attempt,
                                     .actor = actor.handle};
        answer.status = invoke(m, arg, list, n, &r);
        task_returned(&r, &answer);
        running_here = (rt__running){0};
        answer.run_us = (rt__now_ns() - start) / 1000;
    }
    fflush(stdout);
    fflush(stderr);
    if (m->arg_fd >= 0 && arg)
        rt__shm_unmap((void *)arg, m->len);
    for (size_t i = 0; i < job->nmapped; i++)
        if (job->mapped[i].data)
            rt__argmap_drop(job->mapped[i].data, job->mapped[i].len);
    seal_result(&answer, &r);
    pthread_mutex_lock(&pool.sending);
    queue_result(&answer, &r, 0);
    int rc = flush_channel(); /* the main thread may wait in a read */
    pthread_mutex_unlock(&pool.sending);
    if (rc < 0)
        leave_lost();
}

static void *call_thread(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        call_job *job = pool.head;
        if (!job) {
            pthread_cond_wait(&pool.changed, &pool.lock);
            continue;
        }
        if (!(pool.head = job->next))
            pool.tail = NULL;
        pool.busy++;
        pthread_mutex_unlock(&pool.lock);
        run_call(job);
        rt__free(job->bytes);
        rt__free(job);
        pthread_mutex_lock(&pool.lock);
        pool.busy--;
        pthread_cond_broadcast(&pool.changed);
    }
    return NULL;
}

/* The constructor succeeded: start the threads its concurrency asks for
 * (as many as can be had; none: the main thread runs the methods). */
static void start_threads(void)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (uint64_t i = 0; actor.concurrency > 1 && i < actor.concurrency; i++) {
        pthread_t th;
        if (rt__thread_start(&th, &attr, call_thread, NULL) != 0)
            break;
        pool.threads++;
    }
    pthread_attr_destroy(&attr);
}

/* Queue a call for the threads; its bytes leave the channel with it. */
static void queue_call(const rt__task_msg *m)
{
    call_job *job = rt__calloc(1, sizeof *job);
    if (!job || (m->arg_fd < 0 && !(job->bytes = rt__malloc(m->len + 1))))
        leave(); /* no memory: the runtime fails the actor's calls */
    job->m = *m;
    if (m->arg_fd < 0) {
        memcpy(job->bytes, m->arg, m->len);
    } else {
        /* Mapped now, and the descriptor closed: while methods run, the
         * worker holds none they could open again writable (shm.h). */
        job->mapped_arg = rt__shm_open(m->arg_fd, m->len, RT__SHM_VIEW);
        job->map_errno = errno;
        close(m->arg_fd);
    }
    job->nmapped = args.nmapped;
    memcpy(job->mapped, args.mapped, args.nmapped * sizeof *args.mapped);
    args.nmapped = 0; /* the job unmaps them */
    args.errno_ = 0;
    pthread_mutex_lock(&pool.lock);
    if (pool.tail)
        pool.tail->next = job;
    else
        pool.head = job;
    pool.tail = job;
    pthread_cond_signal(&pool.changed);
    pthread_mutex_unlock(&pool.lock);
}

/* End of file: the calls queued and running end first. */
static void drain_calls(void)
{
    pthread_mutex_lock(&pool.lock);
    while (pool.head || pool.busy)
        pthread_cond_wait(&pool.changed, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
}

static void set_name(const rt__hdr *h, const char *payload)
{
    rt__free(self.name_given);
    self.name_given = h->len ? rt__strndup(payload, (size_t)h->len) : NULL;
    self.labelled_task = h->word ? self.received + 1 : 0;
    self.name_new = 1;
}

static void handle_task(const rt__hdr *h, const char *payload, const int *fds)
{
    rt__task_msg m;
    uint64_t post_seq = self.post_seq; /* the POST before it was its */
    int last = self.last_due;
    self.post_seq = 0;
    self.last_due = 0;
    if (rt__proto_read_task(h, payload, fds, &m) < 0)
        leave(); /* the stream is corrupt */
    if (!claim_start()) { /* the runtime took it back: it runs elsewhere */
        if (m.arg_fd >= 0)
            close(m.arg_fd);
        drop_args();
        return;
    }
    if (pool.threads && (m.type == RT__MSG_CALL || m.type == RT__MSG_CALL_ARGS)) {
        queue_call(&m);
        return;
    }
    run_task(&m, is_task(&m) ? post_seq : 0, last);
    self.leaving = last;
    if (m.type != RT__MSG_CREATE)
        return;
    flush_or_leave();
    if (!actor.created)
        leave(); /* a failed constructor leaves no actor to call */
    start_threads();
}

static void handle(const rt__hdr *h, const char *payload, const int *fds)
{
    switch (h->type) {
    case RT__MSG_TASK:
    case RT__MSG_CALL:
    case RT__MSG_CREATE:
    case RT__MSG_TASK_ARGS:
    case RT__MSG_CALL_ARGS:
        handle_task(h, payload, fds);
        break;
    case RT__MSG_ARG:
        take_arg(h, fds);
        break;
    case RT__MSG_SPARE:
        take_spare(h, fds);
        break;
    case RT__MSG_POST:
        if (h->nfds || h->len || !h->id)
            leave(); /* the stream is corrupt */
        self.post_seq = h->id;
        break;
    case RT__MSG_LAST:
        if (h->nfds || h->len || h->id || h->word)
            leave(); /* the stream is corrupt */
        self.last_due = 1;
        break;
    case RT__MSG_WAKE:
        if (h->nfds || h->len)
            leave(); /* the stream is corrupt */
        break;
    case RT__MSG_ACTOR:
        actor.fini = (rt_actor_fini_fn)(uintptr_t)h->word;
        actor.handle = h->id;
        actor.concurrency = 1;
        if (h->len == sizeof actor.concurrency)
            memcpy(&actor.concurrency, payload, sizeof actor.concurrency);
        break;
    case RT__MSG_NAME:
        set_name(h, payload);
        break;
    case RT__MSG_DEVICES:
        if (rt__taskenv_set_devices(h, payload) < 0)
            leave(); /* corrupt, or no memory for its ids */
        break;
    case RT__MSG_ENV:
        if (rt__taskenv_set_vars(h, payload) < 0)
            leave(); /* corrupt, or no memory for them */
        break;
    default:
        leave(); /* a message a worker never gets: the stream is corrupt */
    }
}

int rt__worker_cancelled(void)
{
    return running_here.task && atomic_load(&self.slot->cancelled) == running_here.task;
}

const rt__running *rt__worker_running(void)
{
    return running_here.task ? &running_here : NULL;
}

/* Whether a message comes on the socket within timeout_ms (an error
 * counts as one: the next read finds it). */
static int message_within(int sock, int timeout_ms)
{
    struct pollfd p = {.fd = sock, .events = POLLIN};
    return poll(&p, 1, timeout_ms) != 0;
}

/* Whether a message waits on the socket *ctx. */
static int message_waits(void *ctx)
{
    return message_within(*(const int *)ctx, 0);
}

/* A message of the batch: a second task in one batch starts the flusher,
 * which a single task at a time never needs. */
static void handle_counted(const rt__hdr *h, const char *payload, const int *fds, int *tasks)
{
    int is_task = h->type == RT__MSG_TASK || h->type == RT__MSG_CALL ||
                  h->type == RT__MSG_TASK_ARGS || h->type == RT__MSG_CALL_ARGS;
    if (is_task && ++*tasks == 2 && !flush.started)
        start_flusher();
    handle(h, payload, fds);
}

/* The messages the application put in the inbox, if any, handled as if
 * they came on the socket.  Their bytes stay until the next take, as a
 * channel's stay until its next fill. */
static void handle_inbox(int *tasks)
{
    static _Alignas(RT__MSG_ALIGN) char batch[RT__INBOX_BYTES];
    static const int no_fds[RT__MSG_MAX_FDS] = {-1, -1, -1};
    size_t len = rt__inbox_take(&self.slot->inbox, self.slot->inbox_room, &self.inbox_taken, batch);
    for (size_t at = 0; at < len;) {
        rt__hdr h;
        const char *payload;
        long size = rt__msg_read(batch + at, len - at, &h, &payload);
        if (size <= 0 || h.nfds)
            leave(); /* a task scribbled on its inbox */
        handle_counted(&h, payload, no_fds, tasks);
        at += (size_t)size;
    }
}

enum { ON_SOCKET = 2, IN_INBOX = 1 }; /* as rt__linger_until() says */

static int inbox_holds(const void *unused)
{
    (void)unused;
    return rt__inbox_holds(&self.slot->inbox, self.inbox_taken);
}

static int inbox_or_await(const void *unused)
{
    return inbox_holds(unused) || await_settled();
}

/* Where the next messages are: IN_INBOX, ON_SOCKET, or 0 when none came
 * while it lingered (linger.h), if `linger`; answers held for a caller
 * are settled meanwhile.  Before it may sleep, the worker says so, and
 * looks at its inbox once more (inbox.h). */
static int wait_for_task(int sock, int linger)
{
    int what = 0;
    if (linger) {
        uint64_t until = rt__now_ns() + RT__LINGER_NS;
        while ((what = rt__linger_until(sock, until, inbox_or_await, NULL)) == IN_INBOX &&
               !inbox_holds(NULL))
            settle_await();
    }
    if (what)
        return what;
    rt__inbox_awake(&self.slot->inbox, 0);
    return inbox_holds(NULL) ? IN_INBOX : 0;
}

/* The objects the last tasks took stay mapped while tasks come back to
 * back (argmap.h); a worker that waited ARGS_KEPT_MS for its next one
 * unmaps them, so that what it keeps of objects their owner freed is
 * soon given back. */
static void forget_args_when_idle(int sock)
{
    if (rt__argmap_kept() && !message_within(sock, ARGS_KEPT_MS))
        rt__argmap_forget();
}

/* What a worker idle from its start does while it waits: its first
 * task's page faults, which would be in that task's wait (prefault.h),
 * and its first devices' code, on devices of its own (taskenv.h). */
static void rehearse(int sock)
{
    rt__taskenv_rehearse();
    rt__prefault_range(self.slot, sizeof *self.slot);
    rt__prefault_heap();
    (void)rt__chan_prepare(&self.chan); /* else its first answer allocates */
    drop_args(); /* writes the pages of the task's bookkeeping */
    rt__prefault_writes(message_waits, &sock);
}

_Noreturn void rt__worker_main(int sock, int out, int err, rt__run_slot *slot,
                               rt__board *board)
{
    self.slot = slot;
    self.board = board;
    rt__alloc_forked();
    rt__shm_pool_forked(SIZE_MAX / 2); /* the spares the runtime sends: it bounds them */
    on_exit(exit_now, NULL);
    rt__client_worker_starts(
        (rt__client_worker){rt__worker_running, rt__worker_run_inside, rt__worker_send_held});
    rt__taskenv_capture();
    rt__procstate_capture();
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    close(out);
    close(err);
    /* Lines reach the application while a long task still runs. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    rt__chan_init(&self.chan, sock);
    /* A worker idle from its start (a spare, one of the idle pool) takes
     * its first task's page faults once it has waited REHEARSE_AFTER_MS,
     * until that task comes (prefault.h); one whose task comes sooner
     * goes straight to it. */
    if (!message_within(sock, REHEARSE_AFTER_MS))
        rehearse(sock);
    /* A worker whose last task came soon after the batch before (a
     * graph's steps, quick tasks one after the other) expects the next
     * as soon, and lingers for it (linger.h): on its socket, and in its
     * inbox (inbox.h). */
    uint64_t gap_ns = UINT64_MAX, sock_bytes = 0;
    for (;;) {
        uint64_t idle_since = rt__now_ns();
        rt__inbox_handled(&slot->inbox, sock_bytes - rt__chan_unread(&self.chan));
        int coming = wait_for_task(sock, gap_ns < RT__LINGER_NS);
        long got = 1;
        if (coming != IN_INBOX) {
            if (!coming && rt__chan_unsent(&self.chan)) {
                flush_or_leave(); /* answers read from the journal go before a sleep */
                await_due_ns = 0;
            }
            forget_args_when_idle(sock);
            got = rt__chan_fill(&self.chan);
            sock_bytes += got > 0 ? (uint64_t)got : 0;
        }
        uint64_t batch_start = rt__now_ns();
        gap_ns = batch_start - idle_since;
        rt__inbox_awake(&slot->inbox, 0); /* its next tasks: on the socket while it runs */
        int tasks = 0;
        handle_inbox(&tasks); /* before what came on the socket (inbox.h) */
        if (got == 0) { /* end of file: retired, or the application is gone */
            drain_calls();
            leave();
        }
        if (got < 0)
            leave_lost();
        rt__hdr h;
        const char *payload;
        int fds[RT__MSG_MAX_FDS];
        int more;
        while ((more = rt__chan_next(&self.chan, &h, &payload, fds)) > 0)
            handle_counted(&h, payload, fds, &tasks);
        if (more < 0)
            leave();
        rt__inbox_awake(&slot->inbox, 1); /* between batches (over what a task wrote) */
        if (!answers_read_from_journal(batch_start))
            flush_or_leave();
        if (self.leaving)
            leave_after_last();
        atomic_store(&flush.busy, 0); /* the batch ended: its results went, or are read */
    }
}

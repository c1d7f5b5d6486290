/* client.c - the public calls made inside a worker, sent to the application. */
#include "client.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/random.h"
#include "base/shm.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/* The workers' end of the door (inherited from the application), and
 * the worker this process is: a process a task forks has copies of both,
 * and of its thread's connection, which are not its to use. */
static int door = -1;
static pid_t worker_pid;

/* A word that is 1 in the worker and 0 in a process a task forked, on a
 * page the kernel wipes in a fork's child (MADV_WIPEONFORK): each call
 * reads it rather than ask getpid() (a system call, two in a task's
 * synchronous call); NULL where the kernel cannot wipe pages. */
static _Atomic uint32_t *not_forked;

static rt__client_worker worker_of;

void rt__client_worker_starts(rt__client_worker worker)
{
    worker_pid = getpid();
    worker_of = worker;
    long page = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p != MAP_FAILED && madvise(p, (size_t)page, MADV_WIPEONFORK) == 0) {
        not_forked = p;
        atomic_store(not_forked, 1);
    } else if (p != MAP_FAILED) {
        munmap(p, (size_t)page);
    }
}

/* Whether this is the worker's process, not a copy a task forked. */
static int in_worker(void)
{
    return not_forked ? atomic_load_explicit(not_forked, memory_order_relaxed) != 0
                      : getpid() == worker_pid;
}

#define NAMED_FNS 8 /* functions a connection names the tasks of, at most */

/* The calling thread's connection, and the handles its task made that
 * are not consumed yet (the proxy keeps the same list). */
static _Thread_local struct {
    rt__chan chan;
    int open;
    int refused; /* the application closed it after its reply */
    uint64_t *made; /* 0: one consumed below base */
    size_t nmade, cap;
    size_t base; /* made[base..] are the running task's (a task run inside
                    another's wait starts a range of its own) */
    uint64_t named_fns[NAMED_FNS]; /* functions whose tasks go named */
    unsigned named_next;           /* the entry the next one takes */
    int named_rank;                /* the rank whose shape they have */
    uint64_t last_named;           /* the handle of the last one */
    uint64_t draw;                 /* the random state of named handles */
} conn;

/* The process's connections open: a task's tasks go named only while the
 * calling thread's is the one (another thread that names such a handle
 * then connects after it was sent: cluster/tunnel.c reads it first). */
static _Atomic int open_conns;

/* The calling thread's connection is closed now (or was not open). */
static void conn_gone(void)
{
    if (conn.open)
        atomic_fetch_sub(&open_conns, 1);
    conn.open = 0;
}

/* A thread that ends closes its connection (its proxy then releases what
 * it still held): threads a task starts come and go. */
static pthread_key_t conn_key;
static pthread_once_t conn_key_once = PTHREAD_ONCE_INIT;

static void close_conn(void *unused)
{
    (void)unused;
    conn_gone();
    rt__chan_close(&conn.chan);
    rt__free(conn.made);
    memset(&conn, 0, sizeof conn);
}

static void make_conn_key(void)
{
    (void)pthread_key_create(&conn_key, close_conn);
}

/* ---- the door --------------------------------------------------------------------- */

int rt__client_door_open(int *ours, int *theirs)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    *ours = sv[0];
    *theirs = door = sv[1];
    return 0;
}

int rt__client_door_accept(int door_fd)
{
    char byte;
    struct iovec iov = {&byte, 1};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * 4)];
    } ctl;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf};
    ssize_t got;
    while ((got = recvmsg(door_fd, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (got < 0)
        return -1;
    int fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int got_fd;
            memcpy(&got_fd, CMSG_DATA(c) + i * sizeof(int), sizeof got_fd);
            if (fd < 0 && i == 0 && n == 1 && !(mh.msg_flags & MSG_CTRUNC))
                fd = got_fd;
            else
                close(got_fd); /* not what a worker sends: trust none of it */
        }
    }
    return fd;
}

int rt__client_door_connect(int door_fd)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    char byte = 'c';
    struct iovec iov = {&byte, 1};
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
    ssize_t sent;
    while ((sent = sendmsg(door_fd, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    int err = errno;
    close(sv[1]);
    if (sent < 0) {
        close(sv[0]);
        errno = err;
        return -2;
    }
    return sv[0];
}

/* Open the calling thread's connection through the door. */
static int connect_door(void)
{
    if (door < 0)
        return rt__error(RT_EINWORKER, "this process has no way to the application "
                         "(a process forked by a task?)");
    int fd = rt__client_door_connect(door);
    if (fd == -1)
        return rt__syserror("a task's call: socketpair");
    if (fd < 0)
        return rt__error(RT_EINWORKER, "calls from a task are made through the "
                         "application, which runs on rank 0: this task runs on a rank "
                         "that serves it, where they are not available (%s)",
                         strerror(errno));
    rt__chan_init(&conn.chan, fd);
    conn.open = 1;
    atomic_fetch_add(&open_conns, 1);
    pthread_once(&conn_key_once, make_conn_key);
    (void)pthread_setspecific(conn_key, &conn); /* non-NULL: close_conn() at exit */
    return 0;
}

/* ---- one call ----------------------------------------------------------------------- */

/* The word of a request: the task that asks, when it may lend its CPUs
 * while it waits. */
static uint64_t asker(void)
{
    const rt__running *r = worker_of.running();
    return r && r->lends ? r->task : 0;
}

/* Which run of it this is: a run that is over cannot lend another's. */
static uint64_t asker_run(void)
{
    const rt__running *r = worker_of.running();
    return r ? r->attempt : 0;
}

typedef struct reply {
    rt__hdr h;
    const char *payload;
    size_t len;
    rt__callmsg_reply r;
} reply;

/* The connection broke: the application is gone, or closed it. */
static int lost(void)
{
    rt__chan_close(&conn.chan);
    conn_gone();
    return rt__error(RT_ESHUTDOWN, "a task's call: the application is gone");
}

/* Whether the application closed the connection after its reply. */
static int hung_up(void)
{
    struct pollfd p = {.fd = conn.chan.fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP));
}

/* Whether bytes of a reply wait to be read. */
static int has_reply(void)
{
    struct pollfd p = {.fd = conn.chan.fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

#define GIVEN_RUN 1 /* finish(): not a reply, but a task to run (*run) */

/* Send what is queued and wait for the REPLY; its rc is returned, with
 * its message as this thread's last error.  Release with done().  With
 * run, a RUN may come instead: GIVEN_RUN, and *run. */
static int finish_or_run(reply *out, rt__callmsg_run *run)
{
    int fd;
    /* A connection refused (hung_up()) may be closed before the call is
     * written; its reply says why all the same. */
    if (rt__chan_flush(&conn.chan) < 0 && !has_reply())
        return lost();
    int got = rt__callmsg_take(&conn.chan, &out->h, &out->payload, &out->len, &fd);
    if (got <= 0)
        return lost();
    out->r = (rt__callmsg_reply){.fd = fd};
    if (run && fd < 0 && rt__callmsg_read_run(&out->h, out->payload, out->len, run) == 0)
        return GIVEN_RUN;
    if (rt__callmsg_read_reply(&out->h, out->payload, out->len, fd, &out->r) < 0) {
        if (fd >= 0)
            close(fd);
        rt__callmsg_done(&out->h, out->payload, out->len);
        return lost(); /* not a reply: the stream cannot be trusted */
    }
    if (out->r.rc < 0 && hung_up())
        conn.refused = 1; /* (too many threads): the next call connects anew */
    if (out->r.rc < 0)
        return rt__error(out->r.rc, "%s", out->r.message);
    return 0;
}

static int finish(reply *out)
{
    return finish_or_run(out, NULL);
}

static void done(reply *r)
{
    if (r->r.fd >= 0)
        close(r->r.fd);
    rt__callmsg_done(&r->h, r->payload, r->len);
}

static int open_or_fail(void)
{
    if (!in_worker()) {
        if (conn.open) /* the task's connection: close our copies */
            close_conn(NULL);
        return rt__error(RT_EINWORKER, "a process that a task forked cannot make the "
                         "task's calls: make them in the task's own process");
    }
    if (conn.open && conn.refused) {
        rt__chan_close(&conn.chan);
        conn_gone();
        conn.refused = 0;
    }
    return conn.open ? 0 : connect_door();
}

/* A call with a small payload: its rc, and *value. */
static int simple(uint32_t type, uint64_t id, const void *payload, size_t len,
                  uint64_t *value)
{
    int rc = open_or_fail();
    if (rc < 0)
        return rc;
    if (rt__callmsg_put(&conn.chan, type, id, asker(), payload, len) < 0)
        return rt__error(RT_ENOMEM, "a task's call: out of memory");
    reply r;
    rc = finish(&r);
    if (rc != RT_ESHUTDOWN || conn.open) {
        if (value)
            *value = r.r.value;
        done(&r);
    }
    return rc;
}

/* ---- the handles a task made --------------------------------------------------------- */

static void made(uint64_t id)
{
    if (conn.nmade == conn.cap) {
        size_t cap = conn.cap ? conn.cap * 2 : 16;
        uint64_t *grown = rt__realloc(conn.made, cap * sizeof *grown);
        if (!grown)
            return; /* the proxy's list still has it: it is released at the end */
        conn.made = grown;
        conn.cap = cap;
    }
    conn.made[conn.nmade++] = id;
}

/* As the proxy does: one of an outer task's leaves a 0 (api/proxy.c). */
static void unmade(uint64_t id)
{
    for (size_t i = conn.nmade; i-- > 0;)
        if (conn.made[i] == id) {
            conn.made[i] = i < conn.base ? 0 : conn.made[--conn.nmade];
            return;
        }
}

void rt__client_task_end(const void *result, size_t len)
{
    if (!conn.open || conn.nmade == conn.base)
        return;
    uint64_t *mine = conn.made + conn.base;
    size_t kept = 0;
    for (size_t i = 0; i < conn.nmade - conn.base; i++)
        if (mine[i] && result && memmem(result, len, &mine[i], sizeof mine[i]))
            mine[kept++] = mine[i];
    /* The proxy releases the others before the task's result goes out,
     * so its caller never sees them alive. */
    reply r;
    conn.nmade = conn.base;
    if (rt__callmsg_put(&conn.chan, RT__CALL_END, 0, asker(), mine, kept * 8) < 0)
        (void)lost();
    else if (finish(&r) != RT_ESHUTDOWN || conn.open)
        done(&r);
}

/* ---- submissions sent without waiting ------------------------------------------------ */

/* A task's task like one that rank 0's proxy, or the worker's own rank
 * (local first), took from this connection before (its reply said
 * RT__NAMED_OK), of the same function, with default options and
 * arguments of bytes alone, goes named (node/callmsg.h): under a handle
 * made here, without waiting for a reply, as a worker's call must to be
 * about as quick as the application's.  What the application could
 * refuse only for its own state (it is out of memory, or stopping) then
 * comes from the task's rt_get(). */
#define NAMED_BYTES_MAX ((size_t)64 * 1024) /* a named submission's arguments:
                                               inline (RT__MSG_MAX_INLINE) */

static int names_fn(uint64_t fn)
{
    for (size_t i = 0; i < NAMED_FNS; i++)
        if (conn.named_fns[i] == fn)
            return 1;
    return 0;
}

static int may_go_named(const rt__submission *s)
{
    size_t bytes = 0;
    if (s->opts || (s->form != RT__SUBMIT_TASK && s->form != RT__SUBMIT_TASK_ARGS) ||
        atomic_load(&open_conns) != 1)
        return 0;
    for (size_t i = 0; i < s->nargs; i++) {
        if (s->args[i].ref.id || s->args[i].len > NAMED_BYTES_MAX - bytes)
            return 0;
        bytes += s->args[i].len;
    }
    return names_fn(s->fn);
}

/* The proxy or the rank took s, and its reply r says whether its kind
 * may go named: the handle it made has the shape of the rank's that
 * takes them (rank 0's own handles are not of the shape). */
static void took(const rt__submission *s, const reply *r)
{
    if (s->opts || r->r.len != 1 || *(const char *)r->r.data != RT__NAMED_OK ||
        names_fn(s->fn))
        return;
    conn.named_fns[conn.named_next++ % NAMED_FNS] = s->fn;
    conn.named_rank = r->r.value & RT__ID_FOREIGN ? RT__ID_RANK(r->r.value) : 0;
}

static int submit_named(const rt__submission *s, rt_ref *ref)
{
    rt__submission named = *s;
    named.id = RT__ID_FOREIGN | (uint64_t)conn.named_rank << RT__ID_RANK_SHIFT |
               (rt__random_next(&conn.draw) & ((1ULL << RT__ID_RANK_SHIFT) - 1));
    if (rt__callmsg_put_submission(&conn.chan, asker(), &named) < 0)
        return rt__error(RT_ENOMEM, "a task's call: out of memory");
    if (rt__chan_flush(&conn.chan) < 0) /* now: the task may compute a while */
        return lost();
    ref->id = named.id;
    conn.last_named = named.id;
    made(named.id);
    return 0;
}

/* ---- the calls ---------------------------------------------------------------------- */

/* The answer to a call that makes something the task holds (put: the
 * call's message queued, or -1): its handle in *id, counted as the
 * task's, so that its END comes (a task's actors and groups end with
 * it, its objects are released).  s: the submission it makes, or NULL. */
static int made_by_call(int put, uint64_t *id, const rt__submission *s)
{
    if (put < 0)
        return rt__error(RT_ENOMEM, "a task's call: out of memory");
    reply r;
    int rc = finish(&r);
    if (rc == RT_ESHUTDOWN && !conn.open)
        return rc;
    if (rc == 0) {
        *id = r.r.value;
        made(*id);
        if (s)
            took(s, &r);
    }
    done(&r);
    return rc;
}

/* A task of several results: the reply's bytes are their handles, the
 * first its own (refs has room for num_returns of them). */
static int submit_several(const rt__submission *s, rt_ref *refs, size_t n)
{
    if (rt__callmsg_put_submission(&conn.chan, asker(), s) < 0)
        return rt__error(RT_ENOMEM, "a task's call: out of memory");
    reply r;
    int rc = finish(&r);
    if (rc == RT_ESHUTDOWN && !conn.open)
        return rc;
    if (rc == 0 && r.r.len != n * sizeof *refs)
        rc = lost(); /* not the reply this call has */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        memcpy(&refs[i], (const char *)r.r.data + i * sizeof *refs, sizeof *refs);
        made(refs[i].id);
    }
    done(&r);
    return rc;
}

int rt__client_submit(const rt__submission *s, rt_ref *refs)
{
    int rc = open_or_fail();
    size_t n = s->opts && s->opts->num_returns > 1 ? (size_t)s->opts->num_returns : 1;
    return rc < 0           ? rc
           : n > 1          ? submit_several(s, refs, n)
           : may_go_named(s) ? submit_named(s, refs)
                            : made_by_call(rt__callmsg_put_submission(&conn.chan, asker(), s),
                                           &refs->id, s);
}

int rt__client_put(const void *data, size_t len, rt_ref *ref)
{
    uint64_t id = 0;
    int rc = simple(RT__CALL_PUT, 0, data, len, &id);
    if (rc == 0) {
        ref->id = id;
        made(id);
    }
    return rc;
}

/* Stack a task run inside a wait leaves to the tasks it runs in turn:
 * past that, a wait lends its CPUs instead, and the task it waits for
 * runs in another worker (which may run the next ones inside its wait). */
#define INSIDE_STACK_MIN ((size_t)512 * 1024)

/* The lowest address of the calling thread's stack, or NULL unknown. */
static _Thread_local char *stack_low;

static size_t stack_left(void)
{
    char here;
    if (!stack_low) {
        pthread_attr_t attr;
        void *addr = NULL;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &attr) != 0)
            return 0;
        (void)pthread_attr_getstack(&attr, &addr, &size);
        pthread_attr_destroy(&attr);
        stack_low = addr;
    }
    return stack_low && &here > stack_low ? (size_t)(&here - stack_low) : 0;
}

/* Whether a GET may be given the task it waits for to run: the task's
 * own thread waits, with no time limit, and has stack to spare. */
static uint64_t may_run(long timeout_ms)
{
    return timeout_ms < 0 && asker() && stack_left() > INSIDE_STACK_MIN;
}

/* Run what a RUN gave, inside the wait: its argument copied first (the
 * channel's buffer serves its calls), its handles a range of their own.
 * Its answer goes by the worker's socket, as any task's.  With taken (a
 * GET that consumes its handle): whether the task takes that answer from
 * the run itself, its bytes in *taken and *len (worker.h). */
static int run_given(reply *r, rt__callmsg_run *run, void **taken, size_t *len)
{
    void *arg = rt__malloc(run->len ? run->len : 1);
    if (arg)
        memcpy(arg, run->arg, run->len);
    run->arg = arg; /* NULL: the worker answers that it had no memory */
    done(r);
    size_t base = conn.base;
    conn.base = conn.nmade;
    int took = worker_of.run_inside(run, taken, len);
    conn.nmade = conn.base; /* its END took them */
    conn.base = base;
    rt__free(arg);
    return took;
}

/* The task took ref's answer, bytes, from its run inside the wait: the
 * GET that consumes the handle goes without waiting for a reply, as the
 * answer went to the worker's socket before it (RT__RAN_AND_TOOK). */
static int took_answer(rt_ref ref, rt__callmsg_get *g, void *bytes, size_t n, void **data,
                       size_t *len)
{
    g->ran_inside = RT__RAN_AND_TOOK;
    int rc = rt__callmsg_put(&conn.chan, RT__CALL_GET, ref.id, asker(), g, sizeof *g) < 0
                 ? rt__error(RT_ENOMEM, "a task's call: out of memory")
             : rt__chan_flush(&conn.chan) < 0 ? lost() : 0;
    if (rc == 0)
        unmade(ref.id);
    if (rc < 0 || !data)
        rt__buf_free(bytes);
    if (data)
        *data = rc < 0 ? NULL : bytes;
    if (len)
        *len = rc < 0 || !data ? 0 : n;
    return rc;
}

/* The bytes of a reply as a buffer of the caller's: the object's memfd
 * mapped privately (no copy until written), or a copy. */
static void *adopt(reply *r)
{
    if (r->r.fd >= 0) {
        void *data = rt__shm_open(r->r.fd, r->r.len, RT__SHM_BUFFER);
        if (data) {
            r->r.fd = -1;         /* the buffer's, which closes it: */
            rt__shm_disown(data); /* others read it, the task must not hold it */
        }
        return data;
    }
    void *copy = rt__buf_alloc(r->r.len);
    if (copy && r->r.len)
        memcpy(copy, r->r.data, r->r.len);
    return copy;
}

int rt__client_get(rt_ref ref, void **data, size_t *len, long timeout_ms, int keep)
{
    int rc = open_or_fail();
    if (rc < 0)
        return rc;
    rt__callmsg_get g = {timeout_ms, (uint64_t)keep, asker_run(), may_run(timeout_ms), 0};
    /* Another task may take the object of an answer held back; the last
     * named submission takes none (a synchronous call's wait). */
    if (ref.id != conn.last_named)
        worker_of.send_held();
    reply r;
    rt__callmsg_run run;
    void *taken;
    size_t taken_len;
    for (;;) {
        if (rt__callmsg_put(&conn.chan, RT__CALL_GET, ref.id, asker(), &g, sizeof g) < 0)
            return rt__error(RT_ENOMEM, "a task's call: out of memory");
        if ((rc = finish_or_run(&r, g.may_run ? &run : NULL)) != GIVEN_RUN)
            break;
        if (run_given(&r, &run, keep || run.task != ref.id ? NULL : &taken, &taken_len))
            return took_answer(ref, &g, taken, taken_len, data, len);
        g.ran_inside = RT__RAN_INSIDE;
    }
    if (rc == RT_ESHUTDOWN && !conn.open)
        return rc;
    /* As in the application: a result comes with RT_ETASK too, and any
     * answer but these consumed the handle. */
    if (!keep && rc != RT_ETIMEDOUT && rc != RT_EBADREF)
        unmade(ref.id);
    void *bytes = NULL;
    if ((rc == 0 || rc == RT_ETASK) && data && !(bytes = adopt(&r)))
        rc = rt__error(RT_ENOMEM, "rt_get: no memory for %zu bytes", r.r.len);
    if (data)
        *data = bytes;
    if (len)
        *len = bytes ? r.r.len : 0;
    done(&r);
    return rc;
}

long rt__client_wait(const rt_ref *refs, size_t n, size_t num_ready, long timeout_ms,
                     unsigned char *ready)
{
    int rc = open_or_fail();
    if (rc < 0)
        return rc;
    size_t size = sizeof(rt__callmsg_wait) + n * sizeof *refs;
    rt__callmsg_wait *w = rt__malloc(size);
    if (!w)
        return rt__error(RT_ENOMEM, "rt_wait: no memory for %zu handles", n);
    *w = (rt__callmsg_wait){timeout_ms, num_ready, asker_run(), n};
    worker_of.send_held();
    memcpy(w + 1, refs, n * sizeof *refs);
    rc = rt__callmsg_put(&conn.chan, RT__CALL_WAIT, 0, asker(), w, size);
    rt__free(w);
    if (rc < 0)
        return rt__error(RT_ENOMEM, "a task's call: out of memory");
    reply r;
    if ((rc = finish(&r)) == RT_ESHUTDOWN && !conn.open)
        return rc;
    if (rc == 0 && r.r.len != n)
        rc = rt__error(RT_ESYS, "rt_wait: the application answered for %zu handles, "
                       "not %zu", r.r.len, n);
    if (rc == 0)
        memcpy(ready, r.r.data, n);
    long count = rc < 0 ? rc : (long)r.r.value;
    done(&r);
    return count;
}

int rt__client_cancel(rt_ref ref, int force)
{
    uint64_t how = (uint64_t)force;
    return simple(RT__CALL_CANCEL, ref.id, &how, sizeof how, NULL);
}

int rt__client_release(rt_ref ref)
{
    int rc = simple(RT__CALL_RELEASE, ref.id, NULL, 0, NULL);
    if (rc == 0)
        unmade(ref.id);
    return rc;
}

int rt__client_kill(rt_actor actor)
{
    return simple(RT__CALL_KILL, actor.id, NULL, 0, NULL);
}

int rt__client_restart(rt_actor actor)
{
    static const uint64_t restart = 1;
    return simple(RT__CALL_KILL, actor.id, &restart, sizeof restart, NULL);
}

int rt__client_actor_get(const char *name, rt_actor *actor)
{
    return simple(RT__CALL_ACTOR_GET, 0, name, strlen(name) + 1, &actor->id);
}

int rt__client_stream_next(rt_ref ref, rt_ref *item, long timeout_ms)
{
    rt__callmsg_get g = {timeout_ms, 0, asker_run(), 0, 0};
    worker_of.send_held();
    int rc = simple(RT__CALL_STREAM_NEXT, ref.id, &g, sizeof g, &item->id);
    if (rc == 0)
        made(item->id);
    return rc;
}

int rt__client_pg_create(const rt_bundle *bundles, size_t n, int strategy, rt_pg *pg)
{
    int rc = open_or_fail();
    return rc < 0 ? rc
                  : made_by_call(rt__callmsg_put_group(&conn.chan, asker(), bundles, n,
                                                       strategy), &pg->id, NULL);
}

int rt__client_pg_wait(rt_pg pg, long timeout_ms)
{
    rt__callmsg_get g = {timeout_ms, 0, asker_run(), 0, 0};
    return simple(RT__CALL_PG_WAIT, pg.id, &g, sizeof g, NULL);
}

int rt__client_pg_remove(rt_pg pg)
{
    return simple(RT__CALL_PG_REMOVE, pg.id, NULL, 0, NULL);
}

int rt__client_yield(const void *data, size_t len)
{
    const rt__running *r = worker_of.running();
    if (!r)
        return rt__error(RT_EINVAL, "rt_yield: only a running task yields results");
    int rc = open_or_fail();
    if (rc < 0)
        return rc;
    /* The word names the task even when it lends nothing (an actor's). */
    if (rt__callmsg_put(&conn.chan, RT__CALL_YIELD, 0, r->task, data, len) < 0)
        return rt__error(RT_ENOMEM, "rt_yield: out of memory");
    reply rep;
    if ((rc = finish(&rep)) == RT_ESHUTDOWN && !conn.open)
        return rc;
    done(&rep);
    return rc;
}

/* runtime.c - rt_init(), rt_shutdown() and the runtime thread's loop. */
#include "runtime.h"

#include "actor.h"
#include "error.h"
#include "forkserver.h"
#include "node.h"
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EVENTS_PER_WAIT 64
#define ACTOR_GRACE_S 2.0 /* for actors' destructors at rt_shutdown() */

rt__runtime rt__rt = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake_fd = -1,
    .epoll_fd = -1,
};

/* End of file from the fork server means it died (killed by someone):
 * no worker can be started any more, and every worker died with it.
 * Written by the runtime thread, read under the lock once it stopped. */
static int forkserver_died;

/* rt_init() and rt_shutdown() run one at a time. */
static pthread_mutex_t lifecycle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t cond_once = PTHREAD_ONCE_INIT;

/* Timeouts are measured on CLOCK_MONOTONIC, which the clock cannot step. */
static void init_cond(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&rt__rt.changed, &attr);
    pthread_condattr_destroy(&attr);
}

int rt__need_wake(void)
{
    if (!rt__rt.loop_asleep)
        return 0;
    rt__rt.loop_asleep = 0;
    return 1;
}

void rt__wake(void)
{
    uint64_t one = 1;
    if (write(rt__rt.wake_fd, &one, sizeof one) < 0)
        return; /* the counter is full: the thread is awake anyway */
}

int rt__check_running(const char *call)
{
    if (rt__in_worker)
        return rt__error(RT_EINWORKER, "%s: not available inside a task", call);
    if (rt__rt.state == RT__RUNNING)
        return 0;
    if (rt__rt.state == RT__STOPPING)
        return rt__error(RT_ESHUTDOWN, "%s: the runtime is stopping%s", call,
                         forkserver_died ? " (its fork server died)" : "");
    if (rt__rt.was_shut_down)
        return rt__error(RT_ESHUTDOWN, "%s: the runtime was shut down", call);
    return rt__error(RT_ENOTINIT, "%s: call rt_init() first", call);
}

/* ---- the runtime thread ------------------------------------------------ */

/* Handle what the fork server said: a worker runs, could not start, or
 * exited.  A worker that leaves with tasks or a lease is a lost worker. */
static void forkserver_said(const rt__hdr *h)
{
    rt__pool *p = &rt__rt.pool;
    rt__worker *w;
    switch (h->type) {
    case RT__MSG_SPAWNED:
        if ((w = rt__pool_find_key(p, h->id)))
            w->pid = (pid_t)h->word;
        p->spawn_failing = 0;
        return;
    case RT__MSG_SPAWN_FAILED:
        if (!(w = rt__pool_find_key(p, h->id)))
            return;
        w->spawn_errno = (int)h->word;
        p->spawn_failing = 1;
        break;
    case RT__MSG_EXITED:
        if (!(w = rt__pool_find_pid(p, (pid_t)h->id)))
            return;
        w->wait_status = (int)h->word;
        break;
    default:
        return;
    }
    w->gone = 1;
    rt__pool_drain(p, w);
    rt__sched_results(&rt__rt.sched, w);
    if (w->inflight || w->lease)
        rt__sched_worker_lost(&rt__rt.sched, w);
    rt__pool_remove(p, w);
}

static void read_forkserver(void)
{
    rt__hdr h;
    const char *payload;
    int fds[RT__MSG_MAX_FDS];
    int more;
    while ((more = rt__chan_next(&rt__rt.forkserver, &h, &payload, fds)) > 0)
        forkserver_said(&h);
}

static int forkserver_eof; /* the thread's own view, copied under the lock */

static void read_forkserver_socket(void)
{
    long got = rt__chan_fill(&rt__rt.forkserver);
    if (got == 0 || (got < 0 && errno != EAGAIN)) {
        forkserver_eof = 1;
        epoll_ctl(rt__rt.epoll_fd, EPOLL_CTL_DEL, rt__rt.forkserver.fd, NULL);
    }
}

/* The system-call half of an iteration: runs without the lock. */
static void do_io(struct epoll_event *ev, int n)
{
    /* Output first: a task's lines are in its pipe before its result is in
     * the socket, so relaying them first keeps them ahead of rt_get(). */
    for (int i = 0; i < n; i++) {
        rt__watch *w = ev[i].data.ptr;
        if (w->kind == RT__WATCH_OUTPUT && w->fd >= 0)
            rt__pool_relay(&rt__rt.pool, w);
    }
    for (int i = 0; i < n; i++) {
        rt__watch *w = ev[i].data.ptr;
        uint64_t count;
        switch (w->kind) {
        case RT__WATCH_WAKE:
            if (read(rt__rt.wake_fd, &count, sizeof count) < 0)
                break; /* already read: nothing to do */
            break;
        case RT__WATCH_FORKSERVER:
            if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                read_forkserver_socket();
            break;
        case RT__WATCH_SOCKET:
            if (w->fd >= 0 && (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                rt__pool_read(&rt__rt.pool, w->worker);
            break;
        case RT__WATCH_OUTPUT:
            break;
        }
    }
}

/* The bookkeeping half: runs under the lock.  Returns 0 once stopping. */
static int do_work(void)
{
    rt__sched *s = &rt__rt.sched;
    rt__task *incoming = rt__rt.in_head;
    rt__rt.in_head = rt__rt.in_tail = NULL;
    rt__sched_absorb(incoming);
    if (forkserver_eof) {
        forkserver_died = 1;
        rt__rt.state = RT__STOPPING;
        rt__sched_free(s); /* fails every task with RT_ESHUTDOWN */
        pthread_cond_broadcast(&rt__rt.changed);
        return 0;
    }
    read_forkserver();
    for (rt__worker *w = rt__rt.pool.all; w; w = w->next)
        if (w->has_input) {
            w->has_input = 0;
            rt__sched_results(s, w);
        }
    rt__actor_reap_kills(s);
    if (rt__rt.state == RT__RUNNING) {
        rt__sched_run(s);
        rt__pool_top_up(&rt__rt.pool);
    }
    if (s->finished && rt__rt.waiters)
        pthread_cond_broadcast(&rt__rt.changed);
    s->finished = 0;
    return rt__rt.state == RT__RUNNING;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* [L] When stopping, actors get end of file so that their destructors
 * run; the thread waits for their exits for up to ACTOR_GRACE_S, then the
 * fork server kills what is left.  Returns 1 while it should wait. */
static int wait_for_actors(double *deadline)
{
    if (forkserver_eof)
        return 0;
    if (*deadline == 0)
        *deadline = now_s() + ACTOR_GRACE_S;
    return rt__actors_stopping() && now_s() < *deadline;
}

static void *loop(void *unused)
{
    (void)unused;
    struct epoll_event ev[EVENTS_PER_WAIT];
    int n = 0;
    double deadline = 0;
    for (;;) {
        do_io(ev, n);
        pthread_mutex_lock(&rt__rt.lock);
        int running = do_work() || wait_for_actors(&deadline);
        /* From here a submission must wake us: we may be in epoll_wait. */
        rt__rt.loop_asleep = 1;
        pthread_mutex_unlock(&rt__rt.lock);
        if (!running)
            return NULL;
        rt__pool_flush(&rt__rt.pool);
        n = epoll_wait(rt__rt.epoll_fd, ev, EVENTS_PER_WAIT, deadline ? 50 : -1);
        if (n < 0)
            n = 0; /* EINTR; nothing else can fail on a valid epoll fd */
    }
}

/* ---- rt_init ------------------------------------------------------------ */

RT_EXPORT void rt_config_init(rt_config *config)
{
    rt_config init = RT_CONFIG_INIT;
    *config = init;
}

static int watch(int fd, rt__watch *w, rt__watch_kind kind)
{
    *w = (rt__watch){.kind = kind, .fd = fd};
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = w};
    return epoll_ctl(rt__rt.epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

static rt__run_slot *run_slots;
static size_t run_slots_len;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void free_everything(void)
{
    rt__pool_free(&rt__rt.pool);
    if (run_slots)
        munmap(run_slots, run_slots_len);
    run_slots = NULL;
    close_fd(&rt__rt.epoll_fd);
    close_fd(&rt__rt.wake_fd);
}

/* Kill and reap the fork server: closing its socket is enough, it kills
 * and reaps every worker before it exits. */
static void stop_forkserver(void)
{
    rt__chan_close(&rt__rt.forkserver);
    if (rt__rt.forkserver_pid > 0)
        while (waitpid(rt__rt.forkserver_pid, NULL, 0) < 0 && errno == EINTR)
            ;
    rt__rt.forkserver_pid = 0;
}

/* Fork the server first, while this process has nothing else of ours
 * open, then the descriptors the runtime thread waits on. */
static int start_processes(const rt__node *set)
{
    int ctl;
    run_slots_len = set->max_workers * sizeof *run_slots;
    run_slots = mmap(NULL, run_slots_len, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (run_slots == MAP_FAILED) {
        run_slots = NULL;
        return rt__syserror("rt_init: mmap");
    }
    rt__rt.forkserver_pid = rt__forkserver_start(&ctl, run_slots, set->max_workers);
    if (rt__rt.forkserver_pid < 0) {
        rt__rt.forkserver_pid = 0;
        int rc = rt__syserror("rt_init: fork");
        free_everything();
        return rc;
    }
    rt__chan_init(&rt__rt.forkserver, ctl);
    fcntl(ctl, F_SETFL, fcntl(ctl, F_GETFL) | O_NONBLOCK);
    rt__rt.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    rt__rt.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (rt__rt.epoll_fd < 0 || rt__rt.wake_fd < 0 ||
        watch(rt__rt.wake_fd, &rt__rt.w_wake, RT__WATCH_WAKE) < 0 ||
        watch(ctl, &rt__rt.w_forkserver, RT__WATCH_FORKSERVER) < 0 ||
        rt__pool_init(&rt__rt.pool, rt__rt.epoll_fd, &rt__rt.forkserver,
                      &rt__rt.w_forkserver, set->workers, set->max_workers,
                      run_slots) < 0) {
        int rc = rt__syserror("rt_init: setting up the runtime thread");
        stop_forkserver();
        free_everything();
        return rc;
    }
    rt__sched_init(&rt__rt.sched, set);
    rt__pool_top_up(&rt__rt.pool);
    return 0;
}

/* The runtime thread takes no signal: they belong to the application. */
static int start_thread(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&rt__rt.thread, NULL, loop, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err)
        return rt__error(RT_ESYS, "rt_init: pthread_create: %s", strerror(err));
    return 0;
}


RT_EXPORT int rt_init_config(const rt_config *config)
{
    if (rt__in_worker)
        return rt__error(RT_EINWORKER, "rt_init: not available inside a task");
    rt__node set;
    int rc = rt__node_resolve(config, &set);
    if (rc < 0)
        return rc;
    pthread_once(&cond_once, init_cond);
    pthread_mutex_lock(&lifecycle_lock);
    if (rt__rt.state != RT__STOPPED) {
        pthread_mutex_unlock(&lifecycle_lock);
        return rt__error(RT_EALREADY, "rt_init: the runtime is already running");
    }
    rc = start_processes(&set);
    if (rc == 0) {
        rt__rt.state = RT__RUNNING; /* before the thread, which checks it */
        rt__rt.was_shut_down = 0;
        rt__rt.loop_asleep = 0;
        forkserver_died = forkserver_eof = 0;
        if ((rc = start_thread()) < 0) {
            rt__rt.state = RT__STOPPED;
            rt__sched_free(&rt__rt.sched);
            stop_forkserver();
            free_everything();
        }
    }
    pthread_mutex_unlock(&lifecycle_lock);
    return rc;
}

RT_EXPORT int rt_init(double num_gpus)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_gpus = num_gpus;
    return rt_init_config(&c);
}

/* ---- rt_shutdown --------------------------------------------------------- */

/* [L] Let threads blocked in rt_get()/rt_wait() see the end and leave
 * before the records they look at are freed. */
static void let_waiters_leave(void)
{
    pthread_cond_broadcast(&rt__rt.changed);
    while (rt__rt.waiters > 0)
        pthread_cond_wait(&rt__rt.changed, &rt__rt.lock);
}

RT_EXPORT int rt_shutdown(void)
{
    if (rt__in_worker)
        return rt__error(RT_EINWORKER, "rt_shutdown: not available inside a task");
    pthread_mutex_lock(&lifecycle_lock);
    pthread_mutex_lock(&rt__rt.lock);
    if (rt__rt.state == RT__STOPPED) {
        pthread_mutex_unlock(&rt__rt.lock);
        pthread_mutex_unlock(&lifecycle_lock);
        return 0;
    }
    rt__rt.state = RT__STOPPING;
    pthread_mutex_unlock(&rt__rt.lock);
    rt__wake();
    pthread_join(rt__rt.thread, NULL);

    /* The thread is gone: what it owned is ours now.  Reap the processes
     * first, so that the output they left is complete when we relay it. */
    stop_forkserver();
    for (rt__worker *w = rt__rt.pool.all; w; w = w->next)
        rt__pool_drain(&rt__rt.pool, w);

    pthread_mutex_lock(&rt__rt.lock);
    rt__task *incoming = rt__rt.in_head;
    rt__rt.in_head = rt__rt.in_tail = NULL;
    rt__sched_absorb(incoming);
    rt__sched_free(&rt__rt.sched);
    rt__actors_free();
    rt__rt.state = RT__STOPPED;
    rt__rt.was_shut_down = 1;
    let_waiters_leave();
    rt__table_free(&rt__rt.table);
    pthread_mutex_unlock(&rt__rt.lock);

    free_everything();
    pthread_mutex_unlock(&lifecycle_lock);
    return 0;
}

/* forkserver.c - fork workers on request, reap them, report their exits. */
#include "forkserver.h"

#include "board.h"

#include "procstate.h"
#include "proto.h"
#include "worker.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/process.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long rt_shutdown() waits for the fork server to kill and reap its
 * workers: killed processes end at once, so this is only a bound. */
#define STOP_NS 10000000000ull

typedef struct child {
    pid_t pid;
    uint64_t key; /* the runtime's name for the worker: its run slot */
} child;

typedef struct server {
    rt__chan ctl;
    int watch; /* readable when the application has ended; -1: none */
    rt__run_slot *slots;
    size_t nslots;
    struct rt__board *board;
    int sigfd;
    child *child;
    size_t nchild, cap;
} server;

/* Close what the application had open (O_CLOEXEC or not: nothing is
 * exec'd): a listening socket, a lock file or a pipe's write end held in
 * the fork server and every worker would outlive the application's own
 * close. */
static void close_inherited(int ctl, int watch, rt__keep keep)
{
    int kept[RT__KEEP_MAX + 3] = {ctl, watch};
    int n = 2;
    for (int i = 0; i < keep.n && n < RT__KEEP_MAX + 3; i++)
        kept[n++] = keep.fd[i];
    rt__process_close_all_but(kept, n);
}

/* Under the guard, a worker keeps none of the application's shared
 * memory that it could write (its own, MPI's): the run slots and the
 * board alone.  Otherwise it keeps it, as a child the application forks
 * would (an application may share memory with its tasks that way). */
static void unmap_inherited(rt__run_slot *slots, size_t nslots, const struct rt__board *board)
{
    rt__mapping keep[2] = {{slots, nslots * sizeof *slots}};
    int n = 1;
    if (board)
        keep[n++] = rt__board_mapping(board);
    rt__process_unmap_shared_but(keep, n);
}

static void reset_signals(void)
{
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
}

static _Noreturn void kill_all_and_exit(server *sv)
{
    for (size_t i = 0; i < sv->nchild; i++)
        kill(sv->child[i].pid, SIGKILL);
    for (size_t i = 0; i < sv->nchild; i++)
        waitpid(sv->child[i].pid, NULL, 0);
    /* Unmapped, the slots are not read by a leak checker at exit. */
    munmap(sv->slots, sv->nslots * sizeof *sv->slots);
    rt__board_unmap(sv->board);
    _exit(0);
}

static void send_or_die(server *sv, uint32_t type, uint64_t id, uint64_t word)
{
    if (rt__proto_send_notice(&sv->ctl, type, id, word) < 0 ||
        rt__chan_flush(&sv->ctl) < 0)
        kill_all_and_exit(sv); /* the application is gone or shutting down */
}

static void track(server *sv, pid_t pid, uint64_t key)
{
    if (sv->nchild == sv->cap) {
        size_t cap = sv->cap ? sv->cap * 2 : 16;
        child *p = rt__realloc(sv->child, cap * sizeof *p);
        if (!p) {
            kill(pid, SIGKILL); /* untracked, it could outlive the runtime */
            return;
        }
        sv->child = p;
        sv->cap = cap;
    }
    sv->child[sv->nchild++] = (child){pid, key};
}

/* The key of a child that exited, forgetting it; -1 when unknown. */
static int64_t untrack(server *sv, pid_t pid)
{
    for (size_t i = 0; i < sv->nchild; i++)
        if (sv->child[i].pid == pid) {
            uint64_t key = sv->child[i].key;
            sv->child[i] = sv->child[--sv->nchild];
            return (int64_t)key;
        }
    return -1;
}

/* A worker keeps its own run slot alone: no task can then write into
 * another worker's, and a leak checker that scans the worker's memory
 * when it exits (valgrind) does not read every slot. */
static void keep_own_slot(rt__run_slot *slots, size_t n, size_t mine)
{
    if (mine > 0)
        munmap(slots, mine * sizeof *slots);
    if (mine + 1 < n)
        munmap(slots + mine + 1, (n - mine - 1) * sizeof *slots);
    /* Nor can it grow its own into the next (base/process.h). */
    (void)rt__process_seal(&(rt__mapping){&slots[mine], sizeof *slots});
}

static void spawn(server *sv, uint64_t key, uint64_t slot, const int *fds)
{
    pid_t self = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* Only this worker's three descriptors may stay open: the ones
         * queued for later SPAWNs belong to other workers, and a copy
         * here would keep their sockets and pipes from reaching EOF. */
        rt__chan_close(&sv->ctl);
        close(sv->sigfd);
        if (sv->watch >= 0)
            close(sv->watch);
        /* PR_SET_PDEATHSIG ties the worker to this single-threaded server;
         * checking the parent after setting it closes the race with a
         * server that died in between. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != self)
            _exit(1);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        signal(SIGINT, SIG_DFL);
        keep_own_slot(sv->slots, sv->nslots, slot);
        rt__worker_main(fds[0], fds[1], fds[2], &sv->slots[slot],
                        sv->board && rt__board_keep_own(sv->board, slot) == 0 ? sv->board
                                                                               : NULL);
    }
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    if (pid < 0) {
        send_or_die(sv, RT__MSG_SPAWN_FAILED, key, (uint64_t)errno);
        return;
    }
    track(sv, pid, key);
    send_or_die(sv, RT__MSG_SPAWNED, key, (uint64_t)pid);
}

static void reap(server *sv)
{
    struct signalfd_siginfo si;
    while (read(sv->sigfd, &si, sizeof si) > 0)
        ;
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        int64_t key = untrack(sv, pid);
        if (key >= 0)
            send_or_die(sv, RT__MSG_EXITED, (uint64_t)key, (uint64_t)status);
    }
}

/* Handle what the runtime sent; returns only while the server goes on. */
static void serve_requests(server *sv)
{
    long got = rt__chan_fill(&sv->ctl);
    if (got == 0 || (got < 0 && errno != EINTR))
        kill_all_and_exit(sv); /* end of file: the application is gone */
    rt__hdr h;
    const char *payload;
    int fds[RT__MSG_MAX_FDS];
    int more;
    while ((more = rt__chan_next(&sv->ctl, &h, &payload, fds)) > 0) {
        if (h.type == RT__MSG_SPAWN && h.nfds == 3 && h.word < sv->nslots)
            spawn(sv, h.id, h.word, fds);
        else
            kill_all_and_exit(sv); /* nonsense: trust nothing more */
    }
    if (more < 0)
        kill_all_and_exit(sv);
}

static _Noreturn void serve(int ctl, int watch, rt__run_slot *slots, size_t nslots,
                            struct rt__board *board)
{
    server sv = {.sigfd = -1, .watch = watch, .slots = slots, .nslots = nslots,
                 .board = board};
    rt__chan_init(&sv.ctl, ctl);
    reset_signals();
    rt__procstate_calibrate(); /* its workers inherit the figure */
    /* A process group of its own: the terminal's signals (Ctrl-C, Ctrl-\\,
     * Ctrl-Z) go to the application's group, which decides what they mean;
     * the workers end with the application anyway.  A background group
     * that read the terminal would be stopped, so workers read /dev/null. */
    setpgid(0, 0);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, STDIN_FILENO);
        close(null);
    }
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    sv.sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sv.sigfd < 0)
        _exit(1);
    for (;;) {
        struct pollfd p[3] = {{sv.ctl.fd, POLLIN, 0}, {sv.sigfd, POLLIN, 0},
                              {sv.watch, POLLIN, 0}};
        if (poll(p, sv.watch >= 0 ? 3 : 2, -1) < 0 && errno != EINTR)
            kill_all_and_exit(&sv);
        if (sv.watch >= 0 && p[2].revents)
            kill_all_and_exit(&sv); /* the application ended */
        if (p[1].revents)
            reap(&sv);
        if (p[0].revents)
            serve_requests(&sv);
    }
}

/* A descriptor that becomes readable when process pid ends (pidfd_open,
 * Linux 5.3), or -1. */
static int watch_process(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* In the intermediate process, a one-threaded copy of the application:
 * fork the fork server, tell the application its pid (or -errno) on the
 * fork server's own socket, before the fork server says anything there,
 * and exit, so that the fork server is not the application's child (an
 * application that waits for all its children is not held up by it) but
 * an orphan, which init or the nearest subreaper takes.  It cannot die
 * with its parent (PR_SET_PDEATHSIG), so it watches the application's
 * pidfd: however the application ends, even by SIGKILL, it kills its
 * workers and exits.  The pidfd is opened while the application is still
 * this process's parent, so that it names the application. */
static _Noreturn void start_server(int ctl, pid_t app, rt__run_slot *slots, size_t nslots,
                                   struct rt__board *board, rt__keep keep)
{
    int watch = watch_process(app);
    if (getppid() != app)
        _exit(1); /* the application is gone already */
    pid_t pid = fork();
    if (pid == 0) {
        close_inherited(ctl, watch, keep);
        if (!keep.shared_memory)
            unmap_inherited(slots, nslots, board);
        rt__process_is_forked();
        rt__alloc_forked();
        serve(ctl, watch, slots, nslots, board);
    }
    int32_t said = pid < 0 ? -errno : (int32_t)pid;
    munmap(slots, nslots * sizeof *slots); /* as kill_all_and_exit() */
    rt__board_unmap(board);
    _exit(write(ctl, &said, sizeof said) == sizeof said ? 0 : 1);
}

pid_t rt__forkserver_start(int *ctl, int *exited, rt__run_slot *slots, size_t nslots,
                           struct rt__board *board, rt__keep keep)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    /* Buffered stdio would be flushed once more by every copy. */
    fflush(NULL);
    pid_t app = getpid();
    pid_t mid = fork();
    if (mid == 0) {
        close(sv[0]);
        start_server(sv[1], app, slots, nslots, board, keep);
    }
    int err = mid < 0 ? errno : EAGAIN;
    int32_t said = -err;
    close(sv[1]);
    if (mid > 0) {
        while (read(sv[0], &said, sizeof said) < 0 && errno == EINTR)
            ;
        /* The application may reap it first (a wait() loop of its own). */
        while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    if (said <= 0) {
        close(sv[0]);
        errno = said < 0 ? -said : err;
        return -1;
    }
    *ctl = sv[0];
    /* Not our child: its end is seen through a pidfd, not waitpid(). */
    *exited = watch_process((pid_t)said);
    return (pid_t)said;
}

/* Wait for fd to be readable until deadline: 1, or 0 when it passed. */
static int readable_by(int fd, uint64_t deadline)
{
    uint64_t now = rt__now_ns();
    struct pollfd p = {fd, POLLIN, 0};
    return now < deadline && poll(&p, 1, (int)((deadline - now) / 1000000) + 1) > 0;
}

/* Its end of the socket closes as it exits, after it has killed and
 * reaped every worker (its last notices are dropped: the pool is going);
 * its pidfd then says it has ended. */
void rt__forkserver_stop(int ctl, int exited)
{
    uint64_t deadline = rt__now_ns() + STOP_NS;
    char drop[4096];
    shutdown(ctl, SHUT_WR); /* end of file, whatever copies exist */
    for (;;) {
        ssize_t n = read(ctl, drop, sizeof drop);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            break;
        if (n < 0 && errno == EAGAIN && !readable_by(ctl, deadline))
            break;
    }
    if (exited >= 0) {
        readable_by(exited, deadline);
        close(exited);
    }
}

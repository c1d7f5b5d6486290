/* procstate.c - a task's working directory, umask and signals undone. */
#include "procstate.h"

#include "base/clock.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#define SYSCALL_DISPATCH_FILTER_ALLOW 0
#define SYSCALL_DISPATCH_FILTER_BLOCK 1
#endif
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2 /* si_code of a dispatched system call */
#endif

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define CAN_DISPATCH 1
#else
#define CAN_DISPATCH 0 /* ThreadSanitizer defers signals: no dispatch under it */
#endif
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#undef CAN_DISPATCH
#define CAN_DISPATCH 0
#endif
#endif

/* The worker's first state.  Its signals need no record: the fork server
 * made every disposition the default and the mask empty. */
static struct {
    uint64_t quick_ns; /* a task shorter than this made no system call */
    int dir;           /* the first working directory, or -1 */
    mode_t umask;
    int stat;          /* /proc/self/stat, or -1 */
    int left;          /* a last task left its changes */
    int threads;       /* the worker's own threads */
    int others;        /* the last look found threads besides those */
    int dispatch;      /* the thread's system calls are watched */
} first = {.dir = -1, .stat = -1, .threads = 1};

/* Syscall user dispatch: read by the kernel at each system call of the
 * thread; BLOCK makes it raise SIGSYS instead. */
static volatile char selector = SYSCALL_DISPATCH_FILTER_ALLOW;
static volatile sig_atomic_t made_call; /* the watched task made one */

void rt__procstate_calibrate(void)
{
    uint64_t least = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t start = rt__now_ns();
        (void)getppid();
        uint64_t took = rt__now_ns() - start;
        least = took < least ? took : least;
    }
    first.quick_ns = least / 2;
}

/* ---- watching a task's system calls ------------------------------------------------ */

#if CAN_DISPATCH
/* Where system calls always go through: a byte no code runs from. */
static const char nowhere[1];

/* The task's first system call: note it, let it and the rest through,
 * and make it again (the kernel left the thread just after it, with its
 * number back in rax; `syscall` is 2 bytes).  A SIGSYS of another cause
 * does what the default would. */
static void on_sigsys(int sig, siginfo_t *info, void *context)
{
    ucontext_t *uc = context;
    selector = SYSCALL_DISPATCH_FILTER_ALLOW;
    if (info->si_code != SYS_USER_DISPATCH) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    made_call = 1;
    uc->uc_mcontext.gregs[REG_RIP] -= 2;
}

static int dispatch_on(void)
{
    struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO | SA_NODEFER};
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGSYS, &sa, NULL) == 0 &&
                   prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
                         (unsigned long)nowhere, 1UL, &selector) == 0
               ? 0
               : -1;
}

/* Valgrind runs the task's system calls itself: dispatch would send it
 * its own. */
static int under_valgrind(void)
{
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "vgpreload");
}

/* Dispatch on, and tried once: 1 when it works. */
static int start_watching(void)
{
    if (under_valgrind() || dispatch_on() < 0)
        return 0;
    pid_t parent = getppid();
    made_call = 0;
    selector = SYSCALL_DISPATCH_FILTER_BLOCK;
    pid_t seen = getppid();
    selector = SYSCALL_DISPATCH_FILTER_ALLOW;
    if (made_call && seen == parent)
        return 1;
    prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0UL, 0UL, 0UL);
    signal(SIGSYS, SIG_DFL);
    return 0;
}
#else
static int dispatch_on(void)
{
    return -1;
}

static int start_watching(void)
{
    return 0;
}
#endif

void rt__procstate_watch(void)
{
    made_call = 0;
    if (first.dispatch)
        selector = SYSCALL_DISPATCH_FILTER_BLOCK;
}

void rt__procstate_unwatch(void)
{
    selector = SYSCALL_DISPATCH_FILTER_ALLOW;
}

/* ---- the state, and putting it back ------------------------------------------------ */

void rt__procstate_capture(void)
{
    first.dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    first.umask = umask(0);
    umask(first.umask);
    first.stat = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    first.dispatch = start_watching();
}

void rt__procstate_own_threads(int n)
{
    first.threads = n;
}

/* What /proc/self/stat says of the process: its threads (field 20) and
 * the standard signals blocked, ignored and caught (fields 32 to 34,
 * after the command in parentheses): one read where asking each signal
 * would take 31.  0, or -1. */
typedef struct seen {
    long threads;
    unsigned long long blocked, ignored, caught;
} seen;

static int look(seen *s)
{
    char text[1024];
    ssize_t n = first.stat >= 0 ? pread(first.stat, text, sizeof text - 1, 0) : -1;
    if (n <= 0)
        return -1;
    text[n] = '\0';
    const char *p = strrchr(text, ')');
    for (int field = 3; p && field <= 20; field++)
        p = strchr(p + 1, ' ');
    if (!p || sscanf(p, "%ld", &s->threads) != 1)
        return -1;
    for (int field = 21; p && field <= 32; field++)
        p = strchr(p + 1, ' ');
    return p && sscanf(p, "%llu %llu %llu", &s->blocked, &s->ignored, &s->caught) == 3 ? 0
                                                                                      : -1;
}

static void restore(void)
{
    first.left = 0;
    umask(first.umask);
    if (first.dir >= 0)
        (void)fchdir(first.dir);
    seen s;
    if (look(&s) < 0)
        return;
    first.others = s.threads > first.threads;
    if (s.blocked) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
    }
    for (int sig = 1; sig < 32 && (s.ignored | s.caught); sig++)
        if (((s.ignored | s.caught) >> (sig - 1) & 1) && sig != SIGKILL && sig != SIGSTOP &&
            !(sig == SIGSYS && first.dispatch))
            signal(sig, SIG_DFL);
    /* The task may have set SIGSYS, or dispatch, its own way. */
    if (first.dispatch && dispatch_on() < 0)
        first.dispatch = 0;
}

void rt__procstate_before_task(void)
{
    if (first.left)
        restore();
}

void rt__procstate_after_task(uint64_t ran_ns, int last)
{
    int changed = first.others || (first.dispatch ? made_call : ran_ns >= first.quick_ns);
    if (last)
        first.left |= changed;
    else if (changed)
        restore();
}

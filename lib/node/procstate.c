/* procstate.c - a task's working directory, umask and signals undone. */
#include "procstate.h"

#include "base/clock.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The worker's first state.  Its signals need no record: the fork server
 * made every disposition the default and the mask empty. */
static struct {
    uint64_t quick_ns; /* a task shorter than this made no system call */
    int dir;           /* the first working directory, or -1 */
    mode_t umask;
    int stat;          /* /proc/self/stat, or -1 */
    int left;          /* a last task left its changes */
} first = {.dir = -1, .stat = -1};

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

void rt__procstate_capture(void)
{
    first.dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    first.umask = umask(0);
    umask(first.umask);
    first.stat = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
}

/* The standard signals blocked, ignored and caught, as /proc/self/stat
 * lists them (fields 32 to 34, after the command in parentheses): one
 * read where asking each signal would take 31.  0, or -1. */
static int signal_sets(unsigned long long *blocked, unsigned long long *ignored,
                       unsigned long long *caught)
{
    char text[1024];
    ssize_t n = first.stat >= 0 ? pread(first.stat, text, sizeof text - 1, 0) : -1;
    if (n <= 0)
        return -1;
    text[n] = '\0';
    const char *p = strrchr(text, ')');
    for (int field = 3; p && field <= 32; field++)
        p = strchr(p + 1, ' ');
    return p && sscanf(p, "%llu %llu %llu", blocked, ignored, caught) == 3 ? 0 : -1;
}

static void restore(void)
{
    first.left = 0;
    umask(first.umask);
    if (first.dir >= 0)
        (void)fchdir(first.dir);
    unsigned long long blocked, ignored, caught;
    if (signal_sets(&blocked, &ignored, &caught) < 0)
        return;
    if (blocked) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
    }
    for (int s = 1; s < 32 && (ignored | caught); s++)
        if (((ignored | caught) >> (s - 1) & 1) && s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
}

void rt__procstate_before_task(void)
{
    if (first.left)
        restore();
}

void rt__procstate_after_task(uint64_t ran_ns, int last)
{
    if (last)
        first.left = 1;
    else if (ran_ns >= first.quick_ns)
        restore();
}

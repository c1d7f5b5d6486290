/* statusd.c - the socket rtask-status(1) reads the state from
 * (statusd.h). */
#include "statusd.h"

#include "base/error.h"
#include "base/thread.h"

#include <rtask.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define IO_LIMIT_S 2 /* a client that stalls longer is dropped */

/* Made and ended by the thread that starts or stops the runtime, one at a
 * time (runtime/door.h). */
typedef struct statusd {
    pid_t owner;   /* the process that serves; 0: none */
    int listen_fd;
    int stop[2];   /* a pipe: written to end the thread */
    pthread_t thread;
    struct sockaddr_un where;
} statusd;

static statusd served = {.listen_fd = -1, .stop = {-1, -1}};

int rt__statusd_dir(char *dir, size_t size, int make)
{
    const char *set = getenv("RTASK_STATUS_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
    int n = set && *set   ? snprintf(dir, size, "%s", set)
            : xdg && *xdg ? snprintf(dir, size, "%s/rtask", xdg)
                          : snprintf(dir, size, "/tmp/rtask-%u", (unsigned)geteuid());
    struct stat st;
    if (set && strcmp(set, "off") == 0)
        return errno = ENOENT, -1;
    if (n < 0 || (size_t)n >= size)
        return errno = ENAMETOOLONG, -1;
    if (make && mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -1;
    if (lstat(dir, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
        return errno = EPERM, -1;
    return 0;
}

/* One request: read its line, write its report, hang up.  Only the
 * user's own processes are answered. */
static void answer(int fd)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    struct timeval limit = {IO_LIMIT_S, 0};
    char line[RT__STATUS_REQUEST_MAX + 1], what[RT__STATUS_REQUEST_MAX + 1], how[16] = "";
    ssize_t got = 0;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid()) {
        close(fd);
        return;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    for (ssize_t r; got < RT__STATUS_REQUEST_MAX && !memchr(line, '\n', (size_t)got) &&
                    (r = read(fd, line + got, RT__STATUS_REQUEST_MAX - (size_t)got)) > 0;)
        got += r;
    line[got] = '\0';
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return;
    }
    if (sscanf(line, "%128s %15s", what, how) < 1)
        fputs("error: the request is \"WHAT [json]\"\n", f);
    else if (rt__state_report(f, what, strcmp(how, "json") == 0) < 0)
        fprintf(f, "error: %s\n", rt_last_error());
    fclose(f);
}

static void *serve(void *unused)
{
    (void)unused;
    rt__thread_name("rtask-status");
    for (;;) {
        struct pollfd p[2] = {{served.listen_fd, POLLIN, 0}, {served.stop[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[1].revents)
            break;
        int fd = p[0].revents ? accept4(served.listen_fd, NULL, NULL, SOCK_CLOEXEC) : -1;
        if (fd >= 0)
            answer(fd);
    }
    return NULL;
}

static int listen_at(const char *dir)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    served.where = (struct sockaddr_un){.sun_family = AF_UNIX};
    int n = snprintf(served.where.sun_path, sizeof served.where.sun_path, "%s/%d.sock", dir,
                     (int)getpid());
    if (fd < 0 || n < 0 || (size_t)n >= sizeof served.where.sun_path) {
        if (fd >= 0)
            close(fd);
        return errno = fd < 0 ? errno : ENAMETOOLONG, -1;
    }
    unlink(served.where.sun_path); /* an earlier process of this pid's */
    if (bind(fd, (struct sockaddr *)&served.where, sizeof served.where) < 0 ||
        chmod(served.where.sun_path, 0600) < 0 || listen(fd, 8) < 0) {
        int e = errno;
        close(fd);
        return errno = e, -1;
    }
    return fd;
}

/* A program that exits without rt_shutdown() leaves no socket behind. */
static void unlink_at_exit(void)
{
    if (served.owner == getpid())
        unlink(served.where.sun_path);
}

void rt__statusd_start(void)
{
    char dir[sizeof served.where.sun_path];
    if (served.owner && served.owner != getpid())
        rt__statusd_stop(); /* a forked child's copies of its parent's */
    if (served.owner == getpid() || rt__statusd_dir(dir, sizeof dir, 1) < 0)
        return; /* served already, or off (or no folder of ours: no socket) */
    if ((served.listen_fd = listen_at(dir)) < 0 || pipe2(served.stop, O_CLOEXEC) < 0 ||
        rt__thread_start(&served.thread, NULL, serve, NULL) != 0) {
        rt__warn("rtask-status cannot reach this program: %s", strerror(errno));
        rt__statusd_stop();
        return;
    }
    served.owner = getpid();
    static int registered;
    if (!registered++)
        atexit(unlink_at_exit);
}

/* In a child the application forked, the thread is not there: only the
 * descriptors' copies are closed. */
void rt__statusd_stop(void)
{
    if (served.owner == getpid()) {
        (void)!write(served.stop[1], "", 1);
        pthread_join(served.thread, NULL);
        unlink(served.where.sun_path);
    }
    for (int i = 0; i < 2; i++)
        if (served.stop[i] >= 0)
            close(served.stop[i]);
    if (served.listen_fd >= 0)
        close(served.listen_fd);
    served = (statusd){.listen_fd = -1, .stop = {-1, -1}};
}

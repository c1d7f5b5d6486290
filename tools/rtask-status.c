/*
 * rtask-status - what a running rtask program holds, as `ray status`,
 * `ray list` and `ray summary tasks` show a Ray job.
 *
 *   rtask-status [--pid PID] [--json] [status | summary | list WHAT]
 *   WHAT: tasks, actors, objects, placement-groups, nodes
 *
 * It reads the socket the program's runtime opened at rt_init() in a
 * folder only its user may enter (rtask-status(1)); the program answers
 * from its state API (rt_list_tasks(3)).
 */
#include <rtask.h>

#include "../lib/api/statusd.h" /* internal: the socket's folder and request */

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: rtask-status [--pid PID] [--json] [status | summary | list WHAT]\n"
               "  WHAT            tasks, actors, objects, placement-groups or nodes\n"
               "  --pid PID       the program to ask (needed when several run)\n"
               "  --json          print JSON\n");
}

/* The pid of the one running program with a socket in dir; 0 with a
 * message when none or several run. */
static long find_program(const char *dir)
{
    DIR *d = opendir(dir);
    long found = 0, n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || strcmp(end, ".sock") != 0)
            continue;
        if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
            continue; /* the socket of a program that died */
        if (n++ == 1)
            fprintf(stderr, "rtask-status: several programs run: pid %ld", found);
        if (n > 1)
            fprintf(stderr, ", %ld", pid);
        found = pid;
    }
    if (d)
        closedir(d);
    if (n > 1) {
        fprintf(stderr, "; name one with --pid\n");
        return 0;
    }
    if (n == 0)
        fprintf(stderr, "rtask-status: no rtask program of yours runs (no socket in %s)\n",
                dir);
    return found;
}

/* Ask, and copy the answer to stdout: 0, or 1 when the program says
 * the request failed or cannot be reached. */
static int ask(const char *dir, long pid, const char *request)
{
    struct sockaddr_un at = {.sun_family = AF_UNIX};
    snprintf(at.sun_path, sizeof at.sun_path, "%s/%ld.sock", dir, pid);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&at, sizeof at) < 0) {
        fprintf(stderr, "rtask-status: %s: %s\n", at.sun_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    size_t len = strlen(request);
    int failed = write(fd, request, len) != (ssize_t)len;
    shutdown(fd, SHUT_WR);
    char buf[65536];
    ssize_t got;
    for (int first = 1; !failed && (got = read(fd, buf, sizeof buf)) > 0; first = 0) {
        failed = first && strncmp(buf, "error:", 6) == 0;
        fwrite(buf, 1, (size_t)got, failed ? stderr : stdout);
    }
    close(fd);
    return failed;
}

int main(int argc, char **argv)
{
    long pid = 0;
    int json = 0, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--pid") == 0 && i + 1 < argc) {
            pid = atol(argv[++i]);
        } else {
            int help = strcmp(argv[i], "--help") == 0;
            usage(help ? stdout : stderr);
            return help ? 0 : 2;
        }
    }
    const char *what = i < argc ? argv[i] : "status";
    if (strcmp(what, "list") == 0) {
        what = i + 1 < argc ? argv[i + 1] : "";
        i++;
    } else if (strcmp(what, "status") && strcmp(what, "summary")) {
        usage(stderr);
        return 2;
    }
    if (i + 1 < argc || !*what) {
        usage(stderr);
        return 2;
    }
    char dir[sizeof ((struct sockaddr_un *)0)->sun_path], request[RT__STATUS_REQUEST_MAX];
    if (rt__statusd_dir(dir, sizeof dir, 0) < 0) {
        fprintf(stderr, "rtask-status: the programs' sockets are not reachable: %s\n",
                strerror(errno));
        return 1;
    }
    if (!pid && !(pid = find_program(dir)))
        return 1;
    snprintf(request, sizeof request, "%s%s\n", what, json ? " json" : "");
    return ask(dir, pid, request);
}

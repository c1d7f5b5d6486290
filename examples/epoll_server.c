/* epoll_server.c - a server driven by one epoll loop that hands work to
 * tasks and answers as results come, never blocking in rt_get().
 *
 * A client (a thread here; a network peer in a real server) sends
 * requests "n" on a socket.  The loop reads them, submits a task for
 * each, and asks for a notice when its result is ready (rt_notify(),
 * tagged with the request's number).  The notices' descriptor
 * (rt_notify_fd()) is in the same epoll set as the socket: when it is
 * readable, rt_ready() says which results are ready, and the loop sends
 * each answer back at once, in the order they finish.
 */
#include "example.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define REQUESTS 12

typedef struct message {
    uint64_t id, value;
} message;

int slow_square(const void *arg, size_t len, rt_result *result);

/* The square of n, after n * 20 ms (the work). */
int slow_square(const void *arg, size_t len, rt_result *result)
{
    (void)len;
    uint64_t n;
    memcpy(&n, arg, sizeof n);
    usleep((useconds_t)(n * 20000));
    uint64_t square = n * n;
    return rt_result_set(result, &square, sizeof square);
}

/* The client: send the requests, then read the answers. */
static void *client(void *arg)
{
    int fd = *(int *)arg;
    static uint64_t answers[REQUESTS];
    for (uint64_t i = 0; i < REQUESTS; i++) {
        message m = {i, REQUESTS - i}; /* the last asked is the quickest */
        if (write(fd, &m, sizeof m) != sizeof m)
            return NULL;
    }
    for (int i = 0; i < REQUESTS; i++) {
        message m;
        if (read(fd, &m, sizeof m) != sizeof m || m.id >= REQUESTS)
            return NULL;
        answers[m.id] = m.value;
    }
    for (int i = 0; i < REQUESTS; i++)
        printf("request %2d: %2d squared is %3llu\n", i, REQUESTS - i,
               (unsigned long long)answers[i]);
    return NULL;
}

int main(void)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = 4; /* the tasks sleep: let four at a time */
    c.num_gpus = 0;
    check(rt_init_config(&c), "rt_init");
    int sv[2], notices;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return 1;
    check(rt_notify_fd(&notices), "rt_notify_fd");
    pthread_t th;
    pthread_create(&th, NULL, client, &sv[1]);

    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = sv[0]};
    epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev);
    ev.data.fd = notices;
    epoll_ctl(ep, EPOLL_CTL_ADD, notices, &ev);
    int answered = 0, first_done = -1;
    while (answered < REQUESTS) {
        struct epoll_event got[4];
        int n = epoll_wait(ep, got, 4, -1);
        for (int i = 0; i < n; i++) {
            if (got[i].data.fd == sv[0]) { /* a request: hand it to a task */
                message m;
                if (read(sv[0], &m, sizeof m) != sizeof m)
                    return 1;
                rt_ref ref;
                check(rt_remote(slow_square, NULL, &m.value, sizeof m.value, &ref), "rt_remote");
                check(rt_notify(ref, m.id), "rt_notify");
                continue;
            }
            rt_notice ready[8]; /* results: answer them as they come */
            size_t k;
            check(rt_ready(ready, 8, &k), "rt_ready");
            for (size_t j = 0; j < k; j++) {
                message m = {ready[j].tag, 0};
                void *square;
                check(rt_get(ready[j].ref, &square, NULL, 0), "rt_get"); /* ready: no wait */
                memcpy(&m.value, square, sizeof m.value);
                rt_free(square);
                if (write(sv[0], &m, sizeof m) != sizeof m)
                    return 1;
                if (first_done < 0)
                    first_done = (int)m.id;
                answered++;
            }
        }
    }
    pthread_join(th, NULL);
    printf("answered %d requests as they finished, not in the order asked: %s\n",
           answered, first_done != 0 ? "yes" : "no");
    close(ep);
    close(sv[0]);
    close(sv[1]);
    check(rt_shutdown(), "rt_shutdown");
    return 0;
}

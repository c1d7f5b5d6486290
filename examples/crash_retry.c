/* crash_retry.c - what happens when a task kills its worker.
 *
 * A crashing task is retried max_retries times in a fresh worker, then
 * rt_get() reports which signal ended it.  The pool replaces the worker
 * and the work that was queued behind it goes on. */
#include "example.h"

#include <signal.h>

int crash(const void *arg, size_t len, rt_result *result);
int add_one(const void *arg, size_t len, rt_result *result);

int crash(const void *arg, size_t len, rt_result *result)
{
    (void)arg;
    (void)len;
    (void)result;
    printf("about to crash\n");
    fflush(stdout);
    raise(SIGSEGV);
    return 0;
}

int add_one(const void *arg, size_t len, rt_result *result)
{
    (void)len;
    int y = *(const int *)arg + 1;
    return rt_result_set(result, &y, sizeof y);
}

int main(void)
{
    check(rt_init(0), "rt_init");
    rt_opts o = RT_OPTS_INIT;
    o.max_retries = 1; /* one retry: the task runs twice */
    rt_ref bad, good;
    int x = 41, *y;
    check(rt_remote(crash, &o, NULL, 0, &bad), "rt_remote");
    check(rt_remote(add_one, NULL, &x, sizeof x, &good), "rt_remote");
    int rc = rt_get(bad, NULL, NULL, RT_FOREVER);
    printf("crash: %s: %s\n", rt_strerror(rc), rt_last_error());
    check(rt_get(good, (void **)&y, NULL, RT_FOREVER), "add_one");
    printf("add_one(41) = %d: the pool carried on\n", *y);
    rt_free(y);
    return rt_shutdown() < 0;
}

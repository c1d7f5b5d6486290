/* late_task.c - a task function in a library of its own, which the tests
 * dlopen() after rt_init() (refused) or before it (runs). */
#include <rtask.h>

int late_task(const void *arg, size_t len, rt_result *result);

int late_task(const void *arg, size_t len, rt_result *result)
{
    (void)arg;
    (void)len;
    return rt_result_set(result, "late", 5);
}

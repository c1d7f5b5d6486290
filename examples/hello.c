/* hello.c - the smallest rtask program: square numbers in worker processes.
 *
 * Each task gets an int as its argument bytes and hands back its square;
 * what a task prints reaches our stdout prefixed with "(square pid=N) ". */
#include "example.h"

int square(const void *arg, size_t len, rt_result *result);

int square(const void *arg, size_t len, rt_result *result)
{
    (void)len;
    int x = *(const int *)arg, y = x * x;
    if (x == 3)
        printf("hello from the task that squares %d\n", x);
    return rt_result_set(result, &y, sizeof y);
}

int main(void)
{
    check(rt_init(0), "rt_init"); /* first thing: no GPUs, one worker per CPU */

    enum { N = 8 };
    rt_ref refs[N];
    for (int i = 0; i < N; i++)
        check(rt_remote(square, NULL, &i, sizeof i, &refs[i]), "rt_remote");

    int sum = 0;
    for (int i = 0; i < N; i++) {
        int *y;
        check(rt_get(refs[i], (void **)&y, NULL, RT_FOREVER), "rt_get");
        sum += *y;
        rt_free(y);
    }
    printf("sum of squares 0..%d = %d\n", N - 1, sum);
    return rt_shutdown() < 0;
}

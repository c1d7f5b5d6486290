/* hello.c - the smallest rtask program: square numbers in worker processes.
 *
 * Each task gets an int as its argument bytes and hands back its square;
 * what a task prints reaches our stdout prefixed with "(square pid=N) ". */
#include <rtask.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int square(const void *arg, size_t len, rt_result *result);

int square(const void *arg, size_t len, rt_result *result)
{
    (void)len;
    int x = *(const int *)arg, y = x * x;
    if (x == 3)
        printf("hello from the task that squares %d\n", x);
    return rt_result_set(result, &y, sizeof y);
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "%s: %s (%s)\n", what, rt_strerror(rc), rt_last_error());
    exit(1);
}

int main(void)
{
    int rc = rt_init(0); /* first thing: no GPUs, one worker per CPU */
    if (rc < 0)
        die("rt_init", rc);

    enum { N = 8 };
    rt_ref refs[N];
    for (int i = 0; i < N; i++)
        if ((rc = rt_remote(square, NULL, &i, sizeof i, &refs[i])) < 0)
            die("rt_remote", rc);

    int sum = 0;
    for (int i = 0; i < N; i++) {
        int *y;
        if ((rc = rt_get(refs[i], (void **)&y, NULL, RT_FOREVER)) < 0)
            die("rt_get", rc);
        sum += *y;
        rt_free(y);
    }
    printf("sum of squares 0..%d = %d\n", N - 1, sum);
    return rt_shutdown() < 0;
}

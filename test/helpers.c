/* helpers.c - what several test files need. */
#include "tests.h"

#include "../lib/runtime/calls.h" /* internal: the fork server's pid */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t scaled(size_t n)
{
    const char *small = getenv("RT_TEST_SMALL");
    return small && *small == '1' ? n / 16 + 1 : n;
}

void start_with(double cpus, double gpus, int workers)
{
    rt_config c = RT_CONFIG_INIT;
    c.num_cpus = cpus;
    c.num_gpus = gpus;
    c.num_workers = workers;
    ck_ok(rt_init_config(&c));
}

void start_runtime(void)
{
    start_with(2, 0, 2);
}

/* Where no descriptor is left to open the directory with (a test that
 * lowered the limit), each possible number is asked about instead. */
static int count_fds_by_probing(void)
{
    int n = 0;
    for (int fd = 0; fd < 65536; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d && errno == EMFILE)
        return count_fds_by_probing();
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

void temp_path(char *buf, size_t len, const char *what)
{
    snprintf(buf, len, "/tmp/rtask-test-%d-%s", (int)getpid(), what);
    unlink(buf);
}

uint64_t get_u64(rt_ref ref, long timeout_ms)
{
    uint64_t *v;
    size_t n;
    ck_ok(rt_get(ref, (void **)&v, &n, timeout_ms));
    ck_assert_uint_eq(n, sizeof *v);
    uint64_t out = *v;
    rt_free(v);
    return out;
}

uint64_t call_u64(rt_fn fn, const rt_opts *opts, const void *arg, size_t len)
{
    rt_ref ref;
    ck_ok(rt_remote(fn, opts, arg, len, &ref));
    return get_u64(ref, 60000);
}

uint64_t pattern_word(size_t i)
{
    return (uint64_t)i * 0x9e3779b97f4a7c15u;
}

uint64_t checksum(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h;
}

/* Run fn with stdout and stderr going to one file; return its text. */
char *capture_output(void (*fn)(void))
{
    char path[128];
    temp_path(path, sizeof path, "out");
    FILE *f = fopen(path, "w+");
    ck_assert_ptr_nonnull(f);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);
    fn();
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    static char text[4096];
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(path);
    return text;
}

/* The fork server (not this process's child: see forkserver.h). */
pid_t forkserver_pid(void)
{
    return rt__call_forkserver(rt__runtime_here());
}

int process_gone(pid_t pid)
{
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    int n = fscanf(f, "%*d (%*[^)]) %c", &state);
    fclose(f);
    return n == 1 && (state == 'Z' || state == 'X');
}

int worker_pids(pid_t *pids, int max)
{
    char path[64];
    pid_t server = forkserver_pid();
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)server, (int)server);
    FILE *f = server > 0 ? fopen(path, "r") : NULL;
    int n = 0;
    for (int pid; f && fscanf(f, "%d", &pid) == 1; n++)
        if (pids && n < max)
            pids[n] = pid;
    if (f)
        fclose(f);
    return n < max ? n : max;
}

int count_workers(void)
{
    return worker_pids(NULL, 0x7fffffff);
}

const char *env_seen(const rt_opts *opts, const char *what)
{
    static char out[2048];
    rt_ref ref;
    char *s;
    ck_ok(rt_remote(t_env, opts, what, strlen(what), &ref));
    ck_ok(rt_get(ref, (void **)&s, NULL, 60000));
    snprintf(out, sizeof out, "%s", s);
    rt_free(s);
    return out;
}

double available(const char *name)
{
    rt_resource *list;
    size_t n;
    double amount = -1;
    ck_ok(rt_available_resources(&list, &n));
    for (size_t i = 0; i < n; i++)
        if (list[i].node < 0 && strcmp(list[i].name, name) == 0)
            amount = list[i].amount;
    rt_free(list);
    return amount;
}

void use_fake_nvml(const char *scenario)
{
    char lib[512];
    ssize_t n = readlink("/proc/self/exe", lib, sizeof lib - 32);
    ck_assert_int_gt(n, 0);
    lib[n] = '\0';
    strcpy(strrchr(lib, '/') + 1, "libnvidia-ml.so.1");
    setenv("RTASK_NVML_LIBRARY", lib, 1);
    if (scenario)
        setenv("RTASK_FAKE_NVML", scenario, 1);
    else
        unsetenv("RTASK_FAKE_NVML");
}

void leave_fake_nvml(void)
{
    unsetenv("RTASK_NVML_LIBRARY");
    unsetenv("RTASK_FAKE_NVML");
}

void ck_unhealthy(size_t want, size_t k, const char *id, const char *bus_id, const char *why)
{
    rt_gpu_health *sick;
    size_t n;
    ck_ok(rt_unhealthy_gpus(&sick, &n));
    ck_assert_uint_eq(n, want);
    ck_assert_str_eq(sick[k].id, id);
    ck_assert_str_eq(sick[k].bus_id, bus_id);
    ck_assert_str_eq(sick[k].why, why);
    ck_assert_int_eq(sick[k].node, 0);
    rt_free(sick);
}

int run_and_free(SRunner *sr)
{
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

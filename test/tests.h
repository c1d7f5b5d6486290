/* tests.h - shared helpers and task functions of the rtask test suite. */
#ifndef RT_TESTS_H
#define RT_TESTS_H

#include <check.h>
#include <rtask.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Assert that a call succeeded, naming the error if it did not. */
#define ck_ok(call)                                                          \
    do {                                                                     \
        int rc_ = (call);                                                    \
        ck_assert_msg(rc_ == 0, "%s = %d (%s: %s)", #call, rc_,              \
                      rt_strerror(rc_), rt_last_error());                    \
    } while (0)

/* Assert that a call failed with code and a message containing text. */
#define ck_fails(call, code, text)                                           \
    do {                                                                     \
        int rc_ = (call);                                                    \
        ck_assert_msg(rc_ == (code), "%s = %d, want %d (%s)", #call, rc_,    \
                      (code), rt_last_error());                              \
        ck_assert_msg(strstr(rt_last_error(), (text)) != NULL,               \
                      "message \"%s\" lacks \"%s\"", rt_last_error(), (text)); \
    } while (0)

/* Tests scale down under valgrind (RT_TEST_SMALL=1). */
size_t scaled(size_t n);
/* rt_init() with these CPUs, GPUs (fake ones where the machine has
 * fewer) and workers kept; start_runtime(): 2 CPUs, no GPU, 2 workers,
 * whatever the machine. */
void start_with(double cpus, double gpus, int workers);
void start_runtime(void);
/* Open descriptors of this process. */
int count_fds(void);
/* The fork server (0 when there is none), and how many workers it has. */
pid_t forkserver_pid(void);
/* The fork server's workers: up to max of their pids in pids (NULL: none);
 * how many there are, at most max. */
int worker_pids(pid_t *pids, int max);
/* Whether a process has ended (exited, perhaps not yet reaped). */
int process_gone(pid_t pid);
int count_workers(void);
/* A fresh path under /tmp for a test's files; removed by the caller. */
void temp_path(char *buf, size_t len, const char *what);
/* Run fn with stdout and stderr going to one file; return its text
 * (static storage, 4 KiB at most). */
char *capture_output(void (*fn)(void));
/* What a t_env task with opts reports for what ("RESOURCE VAR..."), in
 * static storage. */
const char *env_seen(const rt_opts *opts, const char *what);
/* What the runtime has free of resource name, summed over its nodes
 * (rt_available_resources()); -1 when it has none of it. */
double available(const char *name);
/* The fake libnvidia-ml.so.1 built beside the suite (test/fake/nvml.c):
 * test/fake/h100x8's eight H100s, the second in MIG mode; scenario, when
 * not NULL, is its $RTASK_FAKE_NVML.  leave_fake_nvml() unsets both. */
void use_fake_nvml(const char *scenario);
void leave_fake_nvml(void);
/* rt_unhealthy_gpus() lists want GPUs, entry k on node 0 with this id,
 * bus id and reason. */
void ck_unhealthy(size_t want, size_t k, const char *id, const char *bus_id, const char *why);
/* Run sr's suites and free it: EXIT_SUCCESS when every test passed. */
int run_and_free(SRunner *sr);
/* A result that is a uint64_t, read within timeout_ms. */
uint64_t get_u64(rt_ref ref, long timeout_ms);
/* Submit fn(arg) with opts and return its result as a uint64_t. */
uint64_t call_u64(rt_fn fn, const rt_opts *opts, const void *arg, size_t len);

/* Task functions (tasks.c); extern so that dladdr() names them. */
int t_echo(const void *arg, size_t len, rt_result *r);
int t_double(const void *arg, size_t len, rt_result *r);
int t_getpid(const void *arg, size_t len, rt_result *r);
int t_fail(const void *arg, size_t len, rt_result *r);
int t_exit3(const void *arg, size_t len, rt_result *r);
int t_count_and_die(const void *arg, size_t len, rt_result *r);
int t_die_once(const void *arg, size_t len, rt_result *r);
int t_pid_then_sleep(const void *arg, size_t len, rt_result *r);
int t_sleep_ms(const void *arg, size_t len, rt_result *r);
int t_big_result(const void *arg, size_t len, rt_result *r);
int t_checksum(const void *arg, size_t len, rt_result *r);
int t_print(const void *arg, size_t len, rt_result *r);
int t_span(const void *arg, size_t len, rt_result *r);
int t_devices(const void *arg, size_t len, rt_result *r);
int t_env(const void *arg, size_t len, rt_result *r);
int t_dirty_env(const void *arg, size_t len, rt_result *r);
int t_dirty_env_args(const rt_value *args, size_t n, rt_result *r);
int t_affinity(const void *arg, size_t len, rt_result *r);
int t_nap(const void *arg, size_t len, rt_result *r);
int t_log(const void *arg, size_t len, rt_result *r);
int t_close_all(const void *arg, size_t len, rt_result *r);
int t_fd_open(const void *arg, size_t len, rt_result *r);
int t_dirty_process(const void *arg, size_t len, rt_result *r);
int t_process_state(const void *arg, size_t len, rt_result *r);
int t_dirty_from_a_thread(const void *arg, size_t len, rt_result *r);
int t_shell(const void *arg, size_t len, rt_result *r);
int t_raise(const void *arg, size_t len, rt_result *r);
int t_forge(const void *arg, size_t len, rt_result *r);
int t_shrink_result(const void *arg, size_t len, rt_result *r);
int t_scribble_env(const void *arg, size_t len, rt_result *r);
int t_chatter(const void *arg, size_t len, rt_result *r);
int t_fib(const void *arg, size_t len, rt_result *r);
/* Hostile tasks: a T_BIG_RESULT result overrun by 16 KiB; every board
 * entry in reach forged for the milliseconds given (a uint64_t); junk
 * over every shared mapping the worker can write or make writable. */
#define T_BIG_RESULT (256 * 1024)
int t_overrun(const void *arg, size_t len, rt_result *r);
int t_forge_board(const void *arg, size_t len, rt_result *r);
int t_scribble_shared(const void *arg, size_t len, rt_result *r);
int t_into_group(const void *arg, size_t len, rt_result *r); /* test_groups.c */
int t_gpu_run(const void *arg, size_t len, rt_result *r);    /* test_health.c */

/* What t_forge() writes onto its worker's socket. */
enum forge_kind {
    FORGE_WRAP = 1, /* a length within 15 of 2^64 */
    FORGE_HUGE,     /* a 2^40-byte payload announced */
    FORGE_FDS       /* three descriptors with one result */
};

/* The argument of t_log(): append id to the file at path, then sleep
 * for sleep_ms, then die if die is set. */
typedef struct log_record {
    char path[112];
    uint64_t id;
    uint64_t die;
    uint64_t sleep_ms;
} log_record;

/* The byte pattern of t_big_result() and the checksum of t_checksum(). */
uint64_t pattern_word(size_t i);
uint64_t checksum(const void *data, size_t len);

Suite *api_suite(void);
Suite *tasks_suite(void);
Suite *workers_suite(void);
Suite *resources_suite(void);
Suite *placement_suite(void);
Suite *actors_suite(void);
Suite *detect_suite(void);
Suite *families_suite(void);
Suite *sharing_suite(void);
Suite *cancel_suite(void);
Suite *timeline_suite(void);
Suite *core_suite(void);
Suite *wire_suite(void);
Suite *alloc_suite(void);
Suite *hostile_suite(void);
Suite *loop_suite(void);
Suite *node_suite(void);
Suite *objects_suite(void);
Suite *nested_suite(void);
Suite *labels_suite(void);
Suite *groups_suite(void);
Suite *health_suite(void);
Suite *isolation_suite(void);
Suite *state_suite(void);
Suite *returns_suite(void);
Suite *checkpoint_suite(void);

#endif

/* tasks.c - the task functions the tests submit. */
#include "tests.h"

#include "node/board.h"

#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int set_u64(rt_result *r, uint64_t v)
{
    return rt_result_set(r, &v, sizeof v);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0)
        ;
}

int t_echo(const void *arg, size_t len, rt_result *r)
{
    return rt_result_set(r, arg, len);
}

int t_double(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    return set_u64(r, 2 * *(const uint64_t *)arg);
}

int t_getpid(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    return set_u64(r, (uint64_t)getpid());
}

int t_fail(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    return rt_result_set(r, "bad input", 10) == 0 ? 7 : 1;
}

int t_exit3(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    (void)r;
    exit(3);
}

/* Append one byte to the file named by arg, then die. */
int t_count_and_die(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    (void)r;
    int fd = open(arg, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0 && write(fd, "x", 1) == 1)
        close(fd);
    raise(SIGKILL);
    return 0;
}

/* Die the first time (the file named by arg does not exist yet). */
int t_die_once(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    int fd = open(arg, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        close(fd);
        raise(SIGKILL);
    }
    return set_u64(r, 42);
}

/* Write our pid into the file named by arg, then sleep for a minute. */
int t_pid_then_sleep(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    (void)r;
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", (const char *)arg);
    FILE *f = fopen(tmp, "w");
    if (f) {
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
        rename(tmp, arg);
    }
    sleep_ms(60000);
    return 0;
}

int t_sleep_ms(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    uint64_t ms = *(const uint64_t *)arg;
    sleep_ms((long)ms);
    return set_u64(r, ms);
}

int t_big_result(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    size_t n = *(const uint64_t *)arg / sizeof(uint64_t);
    uint64_t *w = rt_result_alloc(r, n * sizeof *w);
    if (!w)
        return 1;
    for (size_t i = 0; i < n; i++)
        w[i] = pattern_word(i);
    return 0;
}

int t_checksum(const void *arg, size_t len, rt_result *r)
{
    return set_u64(r, checksum(arg, len));
}

int t_print(const void *arg, size_t len, rt_result *r)
{
    printf("out: %.*s\n", (int)len, (const char *)arg);
    fprintf(stderr, "err: %.*s\n", (int)len, (const char *)arg);
    printf("no newline at the end");
    return set_u64(r, (uint64_t)getpid());
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleep for arg ms; the result is when it started and ended, on the
 * system-wide monotonic clock, to show which tasks overlapped. */
int t_span(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    uint64_t span[2] = {now_ns(), 0};
    sleep_ms((long)*(const uint64_t *)arg);
    span[1] = now_ns();
    return rt_result_set(r, span, sizeof span);
}

/* Tasks cannot submit tasks: report what rt_remote() said. */
/* Sleep for arg ms (if given), then describe what the task was given:
 * "ids=<rt_get_gpu_ids> cvd=<CUDA_VISIBLE_DEVICES> order=<CUDA_DEVICE_ORDER>
 * neuron=<NEURON_RT_VISIBLE_CORES>", "-" for an unset variable. */
int t_devices(const void *arg, size_t len, rt_result *r)
{
    if (len == sizeof(uint64_t))
        sleep_ms((long)*(const uint64_t *)arg);
    const char *const *ids;
    size_t n;
    if (rt_get_gpu_ids(&ids, &n) < 0)
        return 1;
    char joined[512] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s",
                 i ? "," : "", ids[i]);
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    const char *order = getenv("CUDA_DEVICE_ORDER");
    const char *neuron = getenv("NEURON_RT_VISIBLE_CORES");
    char out[1024];
    int len_out = snprintf(out, sizeof out, "ids=%s cvd=%s order=%s neuron=%s", joined,
                           cvd ? cvd : "-", order ? order : "-", neuron ? neuron : "-");
    return rt_result_set(r, out, (size_t)len_out + 1);
}

/* arg is "RESOURCE VAR...": describe what the task was given,
 * "ids=<rt_get_accelerator_ids(RESOURCE)> VAR=<value>...", "-" for an
 * unset variable. */
int t_env(const void *arg, size_t len, rt_result *r)
{
    char words[512], out[2048];
    snprintf(words, sizeof words, "%.*s", (int)len, (const char *)arg);
    char *save, *resource = strtok_r(words, " ", &save);
    const char *const *ids;
    size_t n, used = 0;
    if (!resource || rt_get_accelerator_ids(resource, &ids, &n) < 0)
        return 1;
    used += (size_t)snprintf(out, sizeof out, "ids=");
    for (size_t i = 0; i < n && used < sizeof out; i++)
        used += (size_t)snprintf(out + used, sizeof out - used, "%s%s", i ? "," : "", ids[i]);
    for (char *var; (var = strtok_r(NULL, " ", &save)) && used < sizeof out;) {
        const char *v = getenv(var);
        used += (size_t)snprintf(out + used, sizeof out - used, " %s=%s", var, v ? v : "-");
    }
    return used < sizeof out ? rt_result_set(r, out, used + 1) : 1;
}

/* Report RT_TEST_VAR ("-" when unset), then dirty the environment. */
int t_dirty_env(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    const char *v = getenv("RT_TEST_VAR");
    char out[64];
    snprintf(out, sizeof out, "%s %d", v ? v : "-", (int)getpid());
    setenv("RT_TEST_VAR", "dirty", 1);
    setenv("CUDA_VISIBLE_DEVICES", "7", 1);
    return rt_result_set(r, out, strlen(out) + 1);
}

/* t_dirty_env, taking a list of arguments. */
int t_dirty_env_args(const rt_value *args, size_t n, rt_result *r)
{
    (void)args;
    (void)n;
    return t_dirty_env(NULL, 0, r);
}

/* The CPUs the worker may run on, as a list ("0-1"). */
int t_affinity(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    cpu_set_t set;
    sched_getaffinity(0, sizeof set, &set);
    char out[256] = "";
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%d",
                     out[0] ? "," : "", c);
    return rt_result_set(r, out, strlen(out) + 1);
}

/* Sleep for arg ms (0: a no-op, no system call); the result is the
 * worker's pid. */
int t_nap(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    uint64_t ms = *(const uint64_t *)arg;
    if (ms)
        sleep_ms((long)ms);
    return set_u64(r, (uint64_t)getpid());
}

/* Append the record's id to its file; die right after when told to. */
int t_log(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    const log_record *rec = arg;
    int fd = open(rec->path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0 && write(fd, &rec->id, sizeof rec->id) == sizeof rec->id)
        close(fd);
    sleep_ms((long)rec->sleep_ms);
    if (rec->die)
        raise(SIGKILL);
    return set_u64(r, rec->id);
}

/* Close every descriptor, as daemonising code does, and return: with an
 * argument, a result of that many bytes (one that large travels in a
 * memfd, which cannot reach the runtime without the socket). */
int t_close_all(const void *arg, size_t len, rt_result *r)
{
    for (int fd = 0; fd < 1024; fd++)
        close(fd);
    uint64_t bytes = len == sizeof bytes ? *(const uint64_t *)arg : 0;
    return bytes && !rt_result_alloc(r, bytes);
}

/* Change what a task may change in its process besides the environment:
 * the working directory, the umask, a disposition and the mask. */
int t_dirty_process(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    (void)r;
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    if (chdir("/") < 0)
        return 1;
    umask(0);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    return 0;
}

/* A thread of the worker's that, arg ms after the task returned, makes
 * SIGPIPE ignored and the working directory "/", then ends. */
static void *dirty_later(void *arg)
{
    sleep_ms((long)(uintptr_t)arg);
    signal(SIGPIPE, SIG_IGN);
    if (chdir("/") < 0)
        return NULL;
    return NULL;
}

int t_dirty_from_a_thread(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    (void)r;
    pthread_t thread;
    uint64_t ms = *(const uint64_t *)arg;
    if (pthread_create(&thread, NULL, dirty_later, (void *)(uintptr_t)ms) != 0)
        return 1;
    pthread_detach(thread);
    return 0;
}

/* The exit status of a shell that runs arg's command (the worker forks
 * and execs, as a task's system() does). */
int t_shell(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    int status = system(arg);
    return set_u64(r, WIFEXITED(status) ? (uint64_t)WEXITSTATUS(status) : 1000);
}

/* The worker sends itself signal arg (a task killed by another
 * process). */
int t_raise(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    (void)r;
    kill(getpid(), (int)*(const uint64_t *)arg);
    sleep_ms(1000);
    return 0;
}

/* "pid cwd umask SIGPIPE SIGUSR1": the worker's pid, its working
 * directory, umask in octal, whether SIGPIPE is ignored and SIGUSR1
 * blocked. */
int t_process_state(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    char cwd[512], out[700];
    if (!getcwd(cwd, sizeof cwd))
        return 1;
    mode_t mask = umask(0);
    umask(mask);
    struct sigaction pipe;
    sigaction(SIGPIPE, NULL, &pipe);
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    snprintf(out, sizeof out, "%d %s %03o %s %s", (int)getpid(), cwd, (unsigned)mask,
             pipe.sa_handler == SIG_IGN ? "ignored" : "default",
             sigismember(&now, SIGUSR1) ? "blocked" : "open");
    return rt_result_set(r, out, strlen(out) + 1);
}

/* Whether the worker has a descriptor of the file arg's two words name
 * (st_dev, st_ino: the worker's own descriptors may take the number the
 * application's had): 1 or 0. */
int t_fd_open(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    const uint64_t *id = arg;
    struct stat st;
    for (int fd = 0; fd < 1024; fd++)
        if (fstat(fd, &st) == 0 && (uint64_t)st.st_dev == id[0] && (uint64_t)st.st_ino == id[1])
            return set_u64(r, 1);
    return set_u64(r, 0);
}

/* The worker's socket: the first socket among its descriptors. */
static int worker_socket(void)
{
    for (int fd = 0; fd < 1024; fd++) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
            return fd;
    }
    return -1;
}

/* Write a forged message header onto the worker's socket, as a careless
 * or hostile task could: arg says which (forge_kind). */
int t_forge(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    (void)r;
    struct {
        uint32_t type, nfds;
        uint64_t id, word, len;
    } h = {3 /* RESULT */, 0, 1, 0, 0};
    int kind = *(const int *)arg, sock = worker_socket();
    h.len = kind == FORGE_HUGE ? (uint64_t)1 << 40 : kind == FORGE_WRAP ? UINT64_MAX - 5 : 8;
    h.nfds = kind == FORGE_FDS ? 3 : 0;
    struct iovec iov = {&h, sizeof h};
    union {
        char buf[CMSG_SPACE(3 * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (kind == FORGE_FDS) {
        int fds[3] = {open("/dev/null", O_RDONLY), open("/dev/null", O_RDONLY),
                      open("/dev/null", O_RDONLY)};
        m.msg_control = ctl.buf;
        m.msg_controllen = CMSG_SPACE(sizeof fds);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof fds);
        memcpy(CMSG_DATA(cm), fds, sizeof fds);
    }
    if (sock >= 0 && sendmsg(sock, &m, 0) < 0)
        return 1;
    sleep_ms(50);
    return 0;
}

/* Fill a 1 MiB result in shared memory, then shrink its memfd to nothing
 * behind the runtime's back. */
int t_shrink_result(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    char *p = rt_result_alloc(r, 1 << 20);
    if (!p)
        return 1;
    memset(p, 7, 1 << 20);
    for (int fd = 0; fd < 1024; fd++) {
        char path[64], target[64] = "";
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (readlink(path, target, sizeof target - 1) > 0 &&
            strncmp(target, "/memfd:rtask", 12) == 0 && ftruncate(fd, 0) == 0)
            return 0;
    }
    return 2;
}

/* Report RT_TEST_VAR ("-" when unset) and the pid, then scribble over
 * the variable in place, in the string getenv() returned. */
int t_scribble_env(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    char *v = getenv("RT_TEST_VAR");
    char out[64];
    snprintf(out, sizeof out, "%s %d", v ? v : "-", (int)getpid());
    if (v && *v)
        v[0] = 'X';
    return rt_result_set(r, out, strlen(out) + 1);
}

/* Print arg lines of 1 KiB to stdout; the result is the line count. */
int t_chatter(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    uint64_t lines = *(const uint64_t *)arg;
    char line[1024];
    memset(line, 'y', sizeof line - 1);
    line[sizeof line - 1] = '\0';
    for (uint64_t i = 0; i < lines; i++)
        puts(line);
    return set_u64(r, lines);
}

/* fib(n) as tasks that each submit two and wait for them. */
int t_fib(const void *arg, size_t len, rt_result *r)
{
    uint64_t n, v;
    if (len != sizeof n)
        return 1;
    memcpy(&n, arg, sizeof n);
    v = n;
    if (n >= 2) {
        uint64_t x = n - 1, y = n - 2;
        rt_ref rx, ry;
        if (rt_remote(t_fib, NULL, &x, sizeof x, &rx) < 0 ||
            rt_remote(t_fib, NULL, &y, sizeof y, &ry) < 0)
            return 2;
        void *px, *py;
        if (rt_get(rx, &px, NULL, RT_FOREVER) < 0)
            return 3;
        if (rt_get(ry, &py, NULL, RT_FOREVER) < 0) {
            rt_free(px);
            return 4;
        }
        uint64_t a, b;
        memcpy(&a, px, sizeof a);
        memcpy(&b, py, sizeof b);
        rt_free(px);
        rt_free(py);
        v = a + b;
    }
    return rt_result_set(r, &v, sizeof v);
}

/* ---- hostile tasks (test_isolation.c, chaos.c) ---------------------------- */

/* A T_BIG_RESULT result, then 16 KiB written past its end: an ordinary overrun. */
int t_overrun(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    volatile unsigned char *p = rt_result_alloc(r, T_BIG_RESULT);
    if (!p)
        return 1;
    for (size_t i = 0; i < T_BIG_RESULT + 16 * 1024; i++)
        p[i] = 'X';
    return 0;
}

/* Mark as posted, with bytes of ours, every claimed entry between lo and
 * hi that is not posted yet, as a consumer would find it. */
static void forge_in(char *lo, char *hi)
{
    for (char *p = lo; p + sizeof(rt__board_entry) <= hi; p += sizeof(rt__board_entry)) {
        rt__board_entry *e = (rt__board_entry *)(void *)p;
        uint64_t w = atomic_load(&e->word);
        if (!w || (w & 3) != 0)
            continue;
        e->len = sizeof(uint64_t);
        memset(e->bytes, 0x5a, sizeof(uint64_t));
        if (atomic_compare_exchange_strong(&e->word, &w, w | 1)) {
            atomic_fetch_add(&e->ticket, 1);
            syscall(SYS_futex, &e->ticket, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
        }
    }
}

/* For the milliseconds given: every shared mapping of this worker that
 * it can write, or make writable, forged (forge_in()). */
int t_forge_board(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    (void)r;
    uint64_t until = *(const uint64_t *)arg;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        FILE *maps = fopen("/proc/self/maps", "r");
        char line[512];
        while (maps && fgets(line, sizeof line, maps)) {
            unsigned long lo, hi;
            char perms[5];
            if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 || perms[3] != 's')
                continue;
            if (perms[1] != 'w' &&
                mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) < 0)
                continue; /* read-only for good */
            forge_in((char *)lo, (char *)hi);
        }
        if (maps)
            fclose(maps);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((uint64_t)((now.tv_sec - start.tv_sec) * 1000 +
                        (now.tv_nsec - start.tv_nsec) / 1000000) < until);
    return 0;
}

/* Junk over every shared mapping this worker can write (its own result,
 * its run slot, its board segment...), then a wait for its end. */
int t_scribble_shared(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    (void)r;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && perms[3] == 's' &&
            (perms[1] == 'w' || mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) == 0))
            memset((void *)lo, 0xa5, hi - lo > (1ul << 20) ? 1ul << 20 : hi - lo);
    }
    if (maps)
        fclose(maps);
    return 0;
}

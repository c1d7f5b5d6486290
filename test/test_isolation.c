/*
 * test_isolation.c - a task changes nothing but its own result: not an
 * object another task made, whatever it does with its own buffers and
 * threads, and however the fast paths pass bytes between workers.
 */
#include "tests.h"

#include "../lib/api/proxy.h"    /* internal: the proxies' entry */
#include "../lib/base/shm.h"      /* internal: shared memory */
#include "../lib/node/callmsg.h" /* internal: the frames of tasks' calls */
#include "../lib/node/client.h"  /* internal: the door */
#include "../lib/runtime/table.h" /* internal: handles */

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BIG T_BIG_RESULT

/* One worker, reused, so that every task below shares its process. */
static void start_one_reused_worker(void)
{
    start_with(1, 0, 1);
}

/* Whether n bytes at p are all byte. */
static int all(const unsigned char *p, size_t n, unsigned char byte)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != byte)
            return 0;
    return 1;
}

/* A BIG result of the byte given. */
int t_fill_big(const void *arg, size_t len, rt_result *r);
int t_fill_big(const void *arg, size_t len, rt_result *r)
{
    (void)len;
    unsigned char *p = rt_result_alloc(r, BIG);
    if (!p)
        return 1;
    memset(p, *(const unsigned char *)arg, BIG);
    return 0;
}

static void *scribble_later(void *p)
{
    struct timespec nap = {0, 50 * 1000 * 1000};
    for (int i = 0; i < 10; i++) {
        nanosleep(&nap, NULL);
        memset(p, 'X', BIG);
    }
    return NULL;
}

/* A BIG result of 'a', and a thread left running that writes over it
 * after the task has answered. */
int t_leave_scribbler(const void *arg, size_t len, rt_result *r);
int t_leave_scribbler(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    unsigned char *p = rt_result_alloc(r, BIG);
    pthread_t thread;
    if (!p)
        return 1;
    memset(p, 'a', BIG);
    if (pthread_create(&thread, NULL, scribble_later, p) != 0)
        return 1;
    pthread_detach(thread);
    return 0;
}

static unsigned char *get_big(rt_fn fn, unsigned char byte)
{
    rt_ref ref;
    unsigned char *p;
    size_t len;
    ck_ok(rt_remote(fn, NULL, &byte, 1, &ref));
    ck_ok(rt_get(ref, (void **)&p, &len, 30000));
    ck_assert_uint_eq(len, BIG);
    return p;
}

/* The next task in the same worker overruns its own result: it fails,
 * and the result the caller holds from before is unchanged. */
START_TEST(an_overrun_changes_no_earlier_result)
{
    start_one_reused_worker();
    for (int round = 0; round < 3; round++) {
        unsigned char *a = get_big(t_fill_big, 'a');
        ck_assert(all(a, BIG, 'a'));
        rt_ref ref;
        ck_ok(rt_remote(t_overrun, NULL, NULL, 0, &ref));
        int rc = rt_get(ref, NULL, NULL, 30000);
        ck_assert_msg(rc == RT_EWORKERDIED, "the overrun gave %d (%s)", rc, rt_last_error());
        ck_assert_msg(all(a, BIG, 'a'), "round %d: the earlier result was changed", round);
        rt_free(a);
    }
    ck_ok(rt_shutdown());
}
END_TEST

/* A thread the task left running writes where its result was: the
 * caller's copy never changes, and the pool goes on. */
START_TEST(a_thread_left_running_cannot_change_the_result)
{
    start_one_reused_worker();
    unsigned char *a = get_big(t_leave_scribbler, 'a');
    struct timespec nap = {0, 100 * 1000 * 1000};
    for (int i = 0; i < 6; i++) {
        ck_assert_msg(all(a, BIG, 'a'), "look %d: the result changed after rt_get()", i);
        nanosleep(&nap, NULL);
    }
    unsigned char *b = get_big(t_fill_big, 'b');
    ck_assert(all(b, BIG, 'b'));
    ck_assert(all(a, BIG, 'a'));
    rt_free(a);
    rt_free(b);
    ck_ok(rt_shutdown());
}
END_TEST

/* Every way to write bytes through a descriptor: write(), a hole
 * punched, a shared writable mapping. */
static void write_through(int fd, off_t size)
{
    static char junk[4096];
    memset(junk, 'X', sizeof junk);
    for (off_t at = 0; at < size; at += (off_t)sizeof junk)
        if (pwrite(fd, junk, sizeof junk, at) < 0)
            break;
    (void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, size);
    void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) {
        memset(p, 'X', (size_t)size);
        munmap(p, (size_t)size);
    }
}

/* Whether the descriptor link at path names one of rtask's memfds (not
 * the board's). */
static int names_rtask_memfd(const char *path)
{
    char name[64];
    ssize_t n = readlink(path, name, sizeof name - 1);
    if (n < 0)
        return 0;
    name[n] = 0;
    return strncmp(name, "/memfd:rtask (", 14) == 0;
}

/* Open the memfd at path again, read-write (which its mode does not
 * stop), and write_through() it: 1 when it could be opened. */
static int write_again(const char *path)
{
    struct stat st;
    int again = open(path, O_RDWR | O_CLOEXEC);
    if (again < 0)
        return 0;
    if (fstat(again, &st) == 0)
        write_through(again, st.st_size);
    close(again);
    return 1;
}

/* write_through() each of rtask's memfds that this process holds a
 * descriptor of, as it is and opened again read-write (which its mode
 * does not stop).  Its own spares take the writes; nothing else may. */
static void write_through_descriptors(void)
{
    for (int fd = 3; fd < 1024; fd++) {
        char path[64];
        struct stat st;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (!names_rtask_memfd(path) || fstat(fd, &st) < 0)
            continue;
        write_through(fd, st.st_size);
        write_again(path);
    }
}

/* A hostile task: it views the object named in its last argument's
 * bytes (which others read too), then writes wherever it can
 * (descriptors, then every shared mapping made writable:
 * t_scribble_shared()). */
int i_write_every_memfd(const rt_value *args, size_t n, rt_result *r);
int i_write_every_memfd(const rt_value *args, size_t n, rt_result *r)
{
    rt_ref got;
    rt_view view;
    if (n == 0 || args[n - 1].len != sizeof got)
        return 1;
    memcpy(&got, args[n - 1].data, sizeof got);
    if (rt_get_view(got, &view, RT_FOREVER) < 0)
        return 2;
    write_through_descriptors();
    t_scribble_shared(NULL, 0, r);
    rt_view_release(&view);
    return 0;
}

/* A task that writes through whatever its worker holds of shared memory
 * changes no object it reads: not its arguments (one the application
 * put, one an earlier task of the same worker made), not one it views
 * with rt_get_view(). */
START_TEST(a_task_cannot_write_the_objects_it_reads)
{
    start_one_reused_worker();
    unsigned char *bytes = malloc(BIG), byte = 'b';
    ck_assert_ptr_nonnull(bytes);
    rt_ref put, made, read;
    memset(bytes, 'a', BIG);
    ck_ok(rt_put(bytes, BIG, &put));
    free(bytes);
    ck_ok(rt_remote(t_fill_big, NULL, &byte, 1, &made));
    byte = 'c';
    ck_ok(rt_remote(t_fill_big, NULL, &byte, 1, &read));
    rt_view seen[3];
    ck_ok(rt_get_view(put, &seen[0], 30000));
    ck_ok(rt_get_view(made, &seen[1], 30000));
    ck_ok(rt_get_view(read, &seen[2], 30000));
    rt_arg args[] = {RT_ARG_REF(put), RT_ARG_REF(made), RT_ARG_BYTES(&read, sizeof read)};
    rt_ref hostile;
    ck_ok(rt_remote_args(i_write_every_memfd, NULL, args, 3, &hostile));
    (void)rt_get(hostile, NULL, NULL, 30000); /* whatever became of it */
    ck_assert_msg(all(seen[0].data, BIG, 'a'), "an argument the application put was changed");
    ck_assert_msg(all(seen[1].data, BIG, 'b'), "an argument an earlier task made was changed");
    ck_assert_msg(all(seen[2].data, BIG, 'c'), "an object the task viewed was changed");
    for (int i = 0; i < 3; i++)
        ck_ok(rt_view_release(&seen[i]));
    ck_ok(rt_shutdown());
}
END_TEST

/* A hostile task: a BIG result of 'h', and a copy of each of rtask's
 * memfds its worker holds (its result's among them), opened again
 * read-write and left with a process of its own that outlives the
 * task and its worker: for two seconds it writes 'X' through them. */
int t_leave_a_writer(const void *arg, size_t len, rt_result *r);
int t_leave_a_writer(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    unsigned char *p = rt_result_alloc(r, BIG);
    int copies[64], n = 0;
    if (!p)
        return 1;
    memset(p, 'h', BIG);
    for (int fd = 3; fd < 1024 && n < 64; fd++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        if (names_rtask_memfd(path) && (copies[n] = open(path, O_RDWR)) >= 0)
            n++;
    }
    pid_t child = fork();
    if (child == 0) {
        if (fork() != 0)
            _exit(0);
        setsid();
        for (int fd = 0; fd < 1024; fd++) { /* the worker's socket and pipes too */
            int mine = 0;
            for (int i = 0; i < n; i++)
                mine |= copies[i] == fd;
            if (!mine)
                close(fd);
        }
        struct timespec nap = {0, 10 * 1000 * 1000};
        for (int round = 0; round < 200; round++) {
            for (int i = 0; i < n; i++) {
                struct stat st;
                if (fstat(copies[i], &st) == 0)
                    write_through(copies[i], st.st_size);
            }
            nanosleep(&nap, NULL);
        }
        _exit(0);
    }
    if (child > 0)
        waitpid(child, NULL, 0);
    for (int i = 0; i < n; i++)
        close(copies[i]);
    return 0;
}

/* Shared memory that a worker held writable never holds another
 * worker's result: a task that left a writer behind (with max_calls = 1,
 * so its worker ends) writes nothing the next results of another worker
 * are in, though its result's memory is freed and large results follow. */
START_TEST(memory_a_worker_held_goes_to_no_other_worker)
{
    start_one_reused_worker();
    rt_free(get_big(t_fill_big, 'p')); /* the reused worker gets spares from now on */
    rt_opts o = RT_OPTS_INIT;
    o.max_calls = 1;
    rt_ref hostile;
    ck_ok(rt_remote(t_leave_a_writer, &o, NULL, 0, &hostile));
    unsigned char *h;
    ck_ok(rt_get(hostile, (void **)&h, NULL, 30000));
    rt_free(h); /* its memory is free */
    rt_view seen[4];
    for (int i = 0; i < 4; i++) {
        unsigned char byte = 'c';
        rt_ref made;
        ck_ok(rt_remote(t_fill_big, NULL, &byte, 1, &made));
        ck_ok(rt_get_view(made, &seen[i], 30000));
    }
    struct timespec nap = {0, 300 * 1000 * 1000};
    nanosleep(&nap, NULL);
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(all(seen[i].data, BIG, 'c'), "result %d was written by another "
                      "worker's task", i);
        ck_ok(rt_view_release(&seen[i]));
    }
    ck_ok(rt_shutdown());
}
END_TEST

/* For two seconds: each of rtask's memfds this process holds a
 * descriptor of, opened again read-write and written ('X') as soon as
 * it is seen, again and again. */
static void *open_and_write_for_a_while(void *unused)
{
    (void)unused;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        DIR *fds = opendir("/proc/self/fd");
        for (struct dirent *e; fds && (e = readdir(fds));) {
            char path[300];
            snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
            if (names_rtask_memfd(path))
                write_again(path);
        }
        if (fds)
            closedir(fds);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < 2);
    return NULL;
}

/* A hostile task: it leaves open_and_write_for_a_while() running. */
int t_leave_a_descriptor_writer(const void *arg, size_t len, rt_result *r);
int t_leave_a_descriptor_writer(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    (void)r;
    pthread_t thread;
    if (pthread_create(&thread, NULL, open_and_write_for_a_while, NULL) != 0)
        return 1;
    pthread_detach(thread);
    return 0;
}

/* Its argument's first byte. */
int i_first_byte(const rt_value *args, size_t n, rt_result *r);
int i_first_byte(const rt_value *args, size_t n, rt_result *r)
{
    return n == 1 && args[0].len ? rt_result_set(r, args[0].data, 1) : 1;
}

/* While a thread an earlier task left in a reused worker opens every
 * descriptor it finds there for writing, tasks of that worker take an
 * object as their argument: its memfd comes and goes there, and nothing
 * changes it (shared memory another process reads is sealed against
 * writes before it goes). */
START_TEST(an_argument_cannot_be_opened_for_writing)
{
    start_one_reused_worker();
    unsigned char byte = 'o';
    rt_ref object, spy;
    rt_view seen;
    ck_ok(rt_remote(t_fill_big, NULL, &byte, 1, &object));
    ck_ok(rt_get_view(object, &seen, 30000));
    ck_ok(rt_remote(t_leave_a_descriptor_writer, NULL, NULL, 0, &spy));
    ck_ok(rt_get(spy, NULL, NULL, 30000));
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do { /* while the thread looks */
        rt_ref one;
        char *first;
        ck_ok(rt_remote_args(i_first_byte, NULL, &RT_ARG_REF(object), 1, &one));
        ck_ok(rt_get(one, (void **)&first, NULL, 30000));
        rt_free(first);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < 1);
    ck_assert_msg(all(seen.data, BIG, 'o'), "the object was written through its descriptor");
    ck_ok(rt_view_release(&seen));
    ck_ok(rt_shutdown());
}
END_TEST

/* A memfd frozen for readers (base/shm.h) takes no write: not through
 * its own descriptor, nor one opened again read-write, nor a shared
 * mapping; a private mapping still reads it; and the pool never takes
 * it back to write it again. */
START_TEST(a_frozen_memfd_takes_no_write)
{
    rt__shm_pool_open(1 << 30);
    void *data;
    int fd = rt__shm_create(BIG, &data);
    ck_assert_int_ge(fd, 0);
    memset(data, 'f', BIG);
    rt__shm_done(data, BIG);
    ck_assert_int_eq(rt__shm_seal(fd), 0);
    ck_assert_int_eq(rt__shm_freeze(fd), 0);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int again = open(path, O_RDWR | O_CLOEXEC);
    ck_assert_int_ge(again, 0); /* its mode does not stop this, */
    ck_assert_int_lt(pwrite(again, "X", 1, RT__BUF_HDR), 0); /* the seal stops the write */
    ck_assert_int_lt(pwrite(fd, "X", 1, RT__BUF_HDR), 0);
    ck_assert_ptr_eq(mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_SHARED, again, 0), MAP_FAILED);
    close(again);
    const unsigned char *seen = rt__shm_open(fd, BIG, 0);
    ck_assert_ptr_nonnull(seen);
    ck_assert(all(seen, BIG, 'f'));
    rt__shm_unmap((void *)seen, BIG);
    rt__shm_pool_give(fd);
    ck_assert_int_eq(rt__shm_pool_take(RT__BUF_HDR + BIG, 0), -1);
    rt__shm_pool_close();
}
END_TEST

/* Run as a user without privileges, as untrusted tasks would (root
 * reaches every process whatever the guard): this test's process, which
 * is its own (Check forks one per test), becomes nobody, dumpable as a
 * process of a plain user is.  0 when it cannot: root without Check's
 * fork (CK_FORK=no), where the runner itself would be nobody after. */
static int become_a_plain_user(void)
{
    if (geteuid() != 0)
        return 1;
    const char *fork_each = getenv("CK_FORK");
    if (fork_each && strcmp(fork_each, "no") == 0)
        return 0;
    ck_assert_int_eq(setgroups(0, NULL), 0);
    ck_assert_int_eq(setresgid(65534, 65534, 65534), 0);
    ck_assert_int_eq(setresuid(65534, 65534, 65534), 0);
    ck_assert_int_eq(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
    return 1;
}

/* A hostile task: through /proc/<pid> of the application (its pid in the
 * argument), it opens each of rtask's memfds read-write and writes them
 * (write_through()), and opens the memory for writing.  Its result: how
 * many of those opens worked. */
int t_reach_the_application(const void *arg, size_t len, rt_result *r);
int t_reach_the_application(const void *arg, size_t len, rt_result *r)
{
    pid_t app;
    uint64_t opened = 0;
    char path[64];
    if (len != sizeof app)
        return 1;
    memcpy(&app, arg, sizeof app);
    for (int fd = 0; fd < 1024; fd++) {
        snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)app, fd);
        opened += names_rtask_memfd(path) && write_again(path);
    }
    snprintf(path, sizeof path, "/proc/%d/mem", (int)app);
    int mem = open(path, O_RDWR | O_CLOEXEC);
    if (mem >= 0) {
        opened++;
        close(mem);
    }
    return rt_result_set(r, &opened, sizeof opened);
}

/* A task that opens the application's descriptors and memory through
 * /proc reaches its objects, unless the application is guarded
 * (rt_config.guard_memory): then it opens nothing, and the object it
 * would have written is unchanged.  The process is dumpable again after
 * rt_shutdown(). */
START_TEST(the_guard_keeps_the_applications_memory_from_tasks)
{
    if (!become_a_plain_user())
        return; /* root would reach the application guarded or not */
    int was = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    for (int guarded = 0; guarded < 2; guarded++) {
        rt_config c = RT_CONFIG_INIT;
        c.num_cpus = 1;
        c.guard_memory = guarded;
        ck_ok(rt_init_config(&c));
        ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), guarded ? 0 : was);
        unsigned char byte = 'b';
        rt_ref made, hostile;
        rt_view seen;
        ck_ok(rt_remote(t_fill_big, NULL, &byte, 1, &made));
        ck_ok(rt_get_view(made, &seen, 30000));
        pid_t app = getpid();
        ck_ok(rt_remote(t_reach_the_application, NULL, &app, sizeof app, &hostile));
        uint64_t opened = get_u64(hostile, 30000);
        if (guarded) {
            ck_assert_uint_eq(opened, 0);
            ck_assert_msg(all(seen.data, BIG, 'b'), "a guarded application's object was changed");
        } else {
            ck_assert_msg(opened > 0 && !all(seen.data, BIG, 'b'),
                          "unguarded, the task should reach the object (%llu opened)",
                          (unsigned long long)opened);
        }
        ck_ok(rt_view_release(&seen));
        ck_ok(rt_shutdown());
        ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), was);
    }
}
END_TEST

/* The guard's setting is checked. */
START_TEST(a_bad_guard_setting_is_refused)
{
    rt_config c = RT_CONFIG_INIT;
    c.guard_memory = 2;
    ck_assert_int_eq(rt_init_config(&c), RT_EINVAL);
    ck_assert_ptr_nonnull(strstr(rt_last_error(), "guard_memory"));
    setenv("RTASK_GUARD_MEMORY", "yes", 1);
    ck_assert_int_eq(rt_init(0), RT_EINVAL);
    ck_assert_ptr_nonnull(strstr(rt_last_error(), "RTASK_GUARD_MEMORY"));
    setenv("RTASK_GUARD_MEMORY", "1", 1);
    ck_ok(rt_init(0));
    ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
    ck_ok(rt_shutdown());
    unsetenv("RTASK_GUARD_MEMORY");
}
END_TEST

#ifndef SYS_mseal
#define SYS_mseal 462 /* x86-64 and arm64 alike */
#endif

/* A hostile task: it grows each shared mapping of its worker that it can
 * write (its run slot, its board segment) by a page (mremap(2)), which
 * would reach into the next worker's.  Its result: how many grew, or
 * UINT64_MAX when mappings cannot be sealed here (Linux before 6.10, or
 * valgrind), where nothing stops that. */
int t_grow_shared(const void *arg, size_t len, rt_result *r);
int t_grow_shared(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    uint64_t grown = 0;
    void *probe = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe == MAP_FAILED || syscall(SYS_mseal, probe, 4096, 0) != 0)
        return rt_result_set(r, &(uint64_t){UINT64_MAX}, sizeof grown);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo[16], hi[16];
    int n = 0;
    while (maps && n < 16 && fgets(line, sizeof line, maps)) {
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo[n], &hi[n], perms) == 3 && perms[1] == 'w' &&
            perms[3] == 's')
            n++;
    }
    if (maps)
        fclose(maps);
    for (int i = 0; i < n; i++)
        grown += mremap((void *)lo[i], hi[i] - lo[i], hi[i] - lo[i] + 4096, MREMAP_MAYMOVE) !=
                 MAP_FAILED;
    return rt_result_set(r, &grown, sizeof grown);
}

/* A worker's parts of memory shared with the others (its run slot, its
 * board segment) are sealed: it cannot grow them into its neighbours'. */
START_TEST(a_worker_cannot_grow_into_its_neighbours_memory)
{
    start_with(2, 0, 2);
    rt_opts hostile = RT_OPTS_INIT;
    hostile.max_calls = 1; /* its worker, whatever it did, ends with it */
    hostile.max_retries = 0;
    rt_ref ref;
    ck_ok(rt_remote(t_grow_shared, &hostile, NULL, 0, &ref));
    uint64_t grown = get_u64(ref, 30000);
    if (grown != UINT64_MAX) /* else this kernel cannot seal: rtask(7) says so */
        ck_assert_msg(grown == 0, "%llu shared mappings grew", (unsigned long long)grown);
    ck_ok(rt_shutdown());
}
END_TEST

/* Shared memory the application mapped before rt_init() (as MPI maps
 * its own between the ranks of a machine) is its workers' as a forked
 * child's, unless the application is guarded: then a task that writes
 * every shared mapping of its worker changes none of it. */
START_TEST(a_guarded_applications_shared_memory_is_not_its_workers)
{
    size_t size = 1 << 16;
    unsigned char *mine = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                               -1, 0);
    ck_assert_ptr_ne(mine, MAP_FAILED);
    for (int guarded = 0; guarded < 2; guarded++) {
        memset(mine, 'm', size);
        rt_config c = RT_CONFIG_INIT;
        c.num_cpus = 1;
        c.guard_memory = guarded;
        ck_ok(rt_init_config(&c));
        rt_opts hostile = RT_OPTS_INIT;
        hostile.max_calls = 1;
        hostile.max_retries = 0;
        rt_ref ref;
        ck_ok(rt_remote(t_scribble_shared, &hostile, NULL, 0, &ref));
        (void)rt_get(ref, NULL, NULL, 30000); /* its worker may not survive it */
        ck_assert_msg(all(mine, size, 'm') == guarded, guarded
                      ? "a task wrote a guarded application's shared memory"
                      : "unguarded, a task should reach the application's shared memory");
        ck_ok(rt_shutdown());
    }
    munmap(mine, size);
}
END_TEST

/* ---- the board ------------------------------------------------------------ */

/* Its argument, a uint64_t, plus one. */
int i_add1(const rt_value *args, size_t n, rt_result *r);
int i_add1(const rt_value *args, size_t n, rt_result *r)
{
    uint64_t v;
    if (n != 1 || args[0].len != sizeof v)
        return 1;
    memcpy(&v, args[0].data, sizeof v);
    v++;
    return rt_result_set(r, &v, sizeof v);
}

/* While a task in a worker of its own forges every board entry it can
 * reach, chains run in the other workers: each ends with its right value
 * (a step may take longer, never a wrong input). */
START_TEST(a_task_cannot_forge_another_workers_board_entries)
{
    start_with(3, 0, 3);
    rt_opts hostile = RT_OPTS_INIT;
    hostile.max_calls = 1;  /* nothing else runs in its process */
    hostile.max_retries = 0;
    rt_ref forger;
    uint64_t ms = 1500;
    ck_ok(rt_remote(t_forge_board, &hostile, &ms, sizeof ms, &forger));
    struct timespec nap = {0, 100 * 1000 * 1000};
    nanosleep(&nap, NULL);
    enum { CHAINS = 300, STEPS = 4 };
    static rt_ref last[CHAINS];
    for (int i = 0; i < CHAINS; i++) {
        ck_ok(rt_put(&(uint64_t){0}, sizeof(uint64_t), &last[i]));
        for (int k = 0; k < STEPS; k++) {
            rt_ref next;
            ck_ok(rt_remote_args(i_add1, NULL, &RT_ARG_REF(last[i]), 1, &next));
            ck_ok(rt_release(last[i]));
            last[i] = next;
        }
    }
    int wrong = 0;
    for (int i = 0; i < CHAINS; i++)
        wrong += get_u64(last[i], 60000) != STEPS;
    ck_assert_msg(wrong == 0, "%d of %d chains ended with a wrong value", wrong, CHAINS);
    (void)rt_get(forger, NULL, NULL, 60000);
    ck_ok(rt_shutdown());
}
END_TEST

/* ---- handles -------------------------------------------------------------- */

/* Release every handle a counter would try (generations and slots 1 to
 * 64): how many were taken. */
int i_release_by_counting(const void *arg, size_t len, rt_result *r);
int i_release_by_counting(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    uint64_t taken = 0;
    for (uint64_t gen = 0; gen <= 64; gen++)
        for (uint64_t slot = 1; slot <= 64; slot++)
            taken += rt_release((rt_ref){gen << 32 | slot}) == 0;
    return rt_result_set(r, &taken, sizeof taken);
}

/* A task cannot reach the application's objects by counting handles. */
START_TEST(a_task_cannot_count_its_way_to_other_handles)
{
    start_runtime();
    rt_ref mine[10];
    for (uint64_t i = 0; i < 10; i++)
        ck_ok(rt_put(&i, sizeof i, &mine[i]));
    ck_assert_uint_eq(call_u64(i_release_by_counting, NULL, NULL, 0), 0);
    for (uint64_t i = 0; i < 10; i++)
        ck_assert_uint_eq(get_u64(mine[i], 0), i);
    ck_ok(rt_shutdown());
}
END_TEST

/* A handle or a view of an earlier rt_init() is refused by the next
 * runtime, and reaches none of its objects. */
START_TEST(handles_of_an_earlier_runtime_are_refused)
{
    uint64_t one = 1, two = 2;
    rt_ref old_ref, new_ref;
    rt_view old_view, new_view;
    start_runtime();
    ck_ok(rt_put(&one, sizeof one, &old_ref));
    ck_ok(rt_get_view(old_ref, &old_view, 0));
    rt_view stale = old_view;
    ck_ok(rt_view_release(&old_view));
    ck_ok(rt_shutdown());
    start_runtime();
    ck_ok(rt_put(&two, sizeof two, &new_ref));
    ck_ok(rt_get_view(new_ref, &new_view, 0));
    ck_fails(rt_get(old_ref, NULL, NULL, 0), RT_EBADREF, "unknown or consumed");
    ck_assert_int_eq(rt_view_release(&stale), RT_EBADREF);
    ck_assert_uint_eq(*(const uint64_t *)new_view.data, 2); /* still mapped: still its */
    ck_ok(rt_view_release(&new_view));
    ck_assert_uint_eq(get_u64(new_ref, 0), 2);
    ck_ok(rt_shutdown());
}
END_TEST

/* ---- threads ---------------------------------------------------------------- */

enum { MANY = 200 };
static pthread_barrier_t all_called;

static void *put_and_wait(void *out)
{
    rt_ref ref;
    int rc = rt_put("x", 1, &ref);
    if (rc == RT_ENOMEM && !strstr(rt_last_error(), "64 threads"))
        rc = -100; /* refused, but without saying why */
    *(int *)out = rc;
    pthread_barrier_wait(&all_called); /* every connection open at once */
    return NULL;
}

/* MANY threads call at once: how many were served (low 16 bits), refused
 * (next 16), failed otherwise (next 16); and whether a call after they
 * ended was served (bit 48). */
int i_many_threads(const void *arg, size_t len, rt_result *r);
int i_many_threads(const void *arg, size_t len, rt_result *r)
{
    (void)arg;
    (void)len;
    pthread_t th[MANY];
    int rc[MANY];
    uint64_t ok = 0, refused = 0, other = 0;
    pthread_barrier_init(&all_called, NULL, MANY);
    for (int i = 0; i < MANY; i++)
        if (pthread_create(&th[i], NULL, put_and_wait, &rc[i]) != 0)
            return 1;
    for (int i = 0; i < MANY; i++) {
        pthread_join(th[i], NULL);
        ok += rc[i] == 0;
        refused += rc[i] == RT_ENOMEM;
        other += rc[i] != 0 && rc[i] != RT_ENOMEM;
    }
    rt_ref ref;
    uint64_t after = rt_put("y", 1, &ref) == 0;
    uint64_t v = ok | refused << 16 | other << 32 | after << 48;
    return rt_result_set(r, &v, sizeof v);
}

/* A task's threads that call rtask are bounded: past 64 at once in one
 * worker, a call is refused and says why; once they end, calls go on. */
START_TEST(a_tasks_threads_are_bounded)
{
    start_runtime();
    uint64_t v = call_u64(i_many_threads, NULL, NULL, 0);
    uint64_t ok = v & 0xffff, refused = v >> 16 & 0xffff, other = v >> 32 & 0xffff;
    ck_assert_uint_le(ok, 64);
    ck_assert_uint_eq(ok + refused, MANY);
    ck_assert_uint_eq(other, 0);
    ck_assert_uint_eq(v >> 48, 1);
    ck_ok(rt_shutdown());
}
END_TEST

/* A PUT_HELD says that the caller's rank kept an object's bytes: only
 * another rank's tunnel makes it.  From a worker here (white box: a
 * connection handed to the proxies as the door does) it would make a
 * handle for bytes nobody holds, so the connection is closed and no
 * reply comes; a PUT on the same kind of connection is answered. */
START_TEST(a_worker_here_cannot_claim_an_object_held_elsewhere)
{
    start_runtime();
    for (int claims = 0; claims < 2; claims++) {
        int sv[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        rt__proxies_serve(sv[1], 0); /* no task runs: nobody else knocks */
        rt__chan chan;
        rt__chan_init(&chan, sv[0]);
        rt__callmsg_held held = {100, {0, 0}};
        int rc = claims ? rt__callmsg_put(&chan, RT__CALL_PUT_HELD, 0, 0, &held, sizeof held)
                        : rt__callmsg_put(&chan, RT__CALL_PUT, 0, 0, "x", 1);
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(rt__chan_flush(&chan), 0);
        rt__hdr h;
        const char *payload;
        size_t len;
        int fd;
        int got = rt__callmsg_take(&chan, &h, &payload, &len, &fd);
        ck_assert_int_eq(got, claims ? 0 : 1); /* 0: the end of the stream */
        if (got == 1) {
            ck_assert_uint_eq(h.type, RT__CALL_REPLY);
            ck_assert_uint_eq((uint32_t)h.id, 0);
            ck_assert_uint_ne(h.word, 0);
            rt__callmsg_done(&h, payload, len);
        }
        rt__chan_close(&chan);
    }
    ck_ok(rt_shutdown());
}
END_TEST

/* A handle another rank made (local first) names its item as the table's
 * own do, once: a second item under it is refused; it is listed as it
 * is, and gone once dropped.  The table's own handles never look like
 * one. */
START_TEST(a_handle_made_elsewhere_names_one_item)
{
    rt__table t = {0};
    int a, b;
    void *old;
    uint64_t foreign = RT__ID_FOREIGN | (uint64_t)3 << RT__ID_RANK_SHIFT | 12345, id = foreign;
    ck_assert_int_eq(rt__table_adopt(&t, &a, &id, &old), 0);
    ck_assert_uint_eq(id, foreign);
    ck_assert_ptr_eq(rt__table_find(&t, foreign), &a);
    ck_assert_int_eq(rt__table_adopt(&t, &b, &id, &old), -1); /* taken */
    uint64_t listed;
    ck_assert_ptr_eq(rt__table_at(&t, 0, &listed), &a);
    ck_assert_uint_eq(listed, foreign);
    ck_assert_ptr_null(rt__table_find(&t, 1)); /* slot 0's own handle: not it */
    for (int i = 0; i < 1000; i++) {
        uint64_t own = RT__ID_FOREIGN; /* an out parameter alone */
        ck_assert_int_eq(rt__table_add(&t, &b, &own, &old), 0);
        ck_assert_uint_eq(own & RT__ID_FOREIGN, 0);
        ck_assert_ptr_eq(rt__table_find(&t, own), &b);
        rt__table_drop(&t, own);
    }
    rt__table_drop(&t, foreign);
    ck_assert_ptr_null(rt__table_find(&t, foreign));
    id = foreign;
    ck_assert_int_eq(rt__table_adopt(&t, &b, &id, &old), 0); /* free again */
    ck_assert_ptr_eq(rt__table_find(&t, foreign), &b);
    rt__table_free(&t, NULL);
}
END_TEST

/* Play a worker's thread (white box): a process of its own, the peer of
 * a connection made through a door as a worker's is, sends s and waits
 * up to wait_ms for what comes; then it ends, and what its proxy made
 * goes.  It says what it saw on a pipe and ends by SIGKILL: a fork of
 * the application, it has the runtime's memory but not its threads,
 * which valgrind would count as lost at a normal exit. */
typedef struct {
    pid_t pid;
    int said; /* the pipe's end to read */
} fake_worker;

static fake_worker start_worker(const rt__submission *s, int wait_ms)
{
    int ours, theirs, said[2];
    ck_assert_int_eq(rt__client_door_open(&ours, &theirs), 0);
    ck_assert_int_eq(pipe2(said, O_CLOEXEC), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        rt__chan chan;
        char saw = 3, c;
        int fd = rt__client_door_connect(theirs);
        rt__chan_init(&chan, fd);
        if (fd >= 0 && rt__callmsg_put_submission(&chan, 0, s) == 0 &&
            rt__chan_flush(&chan) == 0) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            saw = poll(&p, 1, wait_ms) <= 0 ? 0 : read(fd, &c, 1) == 0 ? 1 : 2;
        }
        if (write(said[1], &saw, 1) != 1)
            saw = 4;
        kill(getpid(), SIGKILL);
    }
    close(theirs);
    close(said[1]);
    int fd = rt__client_door_accept(ours);
    close(ours);
    ck_assert_int_ge(fd, 0);
    rt__proxies_serve(fd, 0);
    return (fake_worker){pid, said[0]};
}

/* What came to the worker: 1 the end of the stream (the connection
 * closed), 2 a reply, 0 nothing (or it was ended first, end_worker()). */
static int worker_saw(fake_worker w)
{
    char saw = 0;
    int status;
    if (read(w.said, &saw, 1) != 1)
        saw = 0;
    close(w.said);
    ck_assert_int_eq(waitpid(w.pid, &status, 0), w.pid);
    return saw;
}

static int end_worker(fake_worker w)
{
    kill(w.pid, SIGKILL);
    return worker_saw(w);
}

/* Read handle id, once its proxy made it and its task ended (within 10
 * s: valgrind): the rc, and in *value the first 8 bytes. */
static int read_named(uint64_t id, uint64_t *value)
{
    void *got = NULL;
    int rc = RT_EBADREF;
    for (int i = 0; i < 1000 && (rc = rt_get((rt_ref){id}, &got, NULL, 0)) == RT_EBADREF; i++)
        usleep(10 * 1000);
    if (rc == RT_ETIMEDOUT)
        rc = rt_get((rt_ref){id}, &got, NULL, 10000);
    if (got)
        memcpy(value, got, sizeof *value);
    rt_free(got);
    return rc;
}

/* A worker here may submit under a handle it made (a named SUBMIT,
 * node/callmsg.h) only of rank 0's shape, with default options and
 * arguments of bytes: that one is made, with no reply, and a failure
 * the application finds (a function no worker has) stays under its
 * handle.  Another rank's shape, or options, close the connection and
 * make nothing; a handle that names something already changes nothing
 * of it.  (A process of the test is the worker; the same process is
 * never taken for one: the test above.) */
START_TEST(a_worker_names_only_its_own_kind_of_task)
{
    start_runtime();
    uint64_t mine = RT__ID_FOREIGN | 42, other = RT__ID_FOREIGN | (uint64_t)3 << RT__ID_RANK_SHIFT | 42;
    uint64_t v = 21, value = 0;
    rt_arg one = RT_ARG_BYTES(&v, sizeof v);
    rt_opts o = RT_OPTS_INIT;
    rt__submission s = {RT__SUBMIT_TASK, (uint64_t)(uintptr_t)t_double, 0, NULL, &one, 1, NULL,
                        mine};
    fake_worker first = start_worker(&s, 60000); /* made, no reply */
    ck_assert_int_eq(read_named(mine + 0, &value), 0);
    ck_assert_uint_eq(value, 42);

    s.id = mine + 1;
    v = 500;
    fake_worker again = start_worker(&s, 60000);
    rt_ref made = {mine + 1};
    size_t ready;
    for (int i = 0; i < 1000 && rt_wait(&made, 1, 1, 0, &ready) == RT_EBADREF; i++)
        usleep(10 * 1000);
    v = 1; /* the same handle while it names a task: nothing changes */
    ck_assert_int_eq(worker_saw(start_worker(&s, 300)), 0);
    usleep(200 * 1000); /* its proxy saw it end, and released what it made */
    ck_assert_int_eq(read_named(mine + 1, &value), 0);
    ck_assert_uint_eq(value, 1000);
    ck_assert_int_eq(end_worker(again), 0);
    ck_assert_int_eq(end_worker(first), 0);

    s.id = mine + 2;
    s.fn = 1; /* no function of the program: its failure under the handle */
    fake_worker bad = start_worker(&s, 60000);
    ck_assert_int_eq(read_named(mine + 2, &value), RT_EINVAL);
    ck_assert_int_eq(end_worker(bad), 0);

    s.fn = (uint64_t)(uintptr_t)t_double;
    s.id = other;
    ck_assert_int_eq(worker_saw(start_worker(&s, 60000)), 1);
    s.id = mine + 3;
    s.opts = &o;
    ck_assert_int_eq(worker_saw(start_worker(&s, 60000)), 1);
    ck_fails(rt_get((rt_ref){other}, NULL, NULL, 0), RT_EBADREF, "unknown");
    ck_fails(rt_get((rt_ref){mine + 3}, NULL, NULL, 0), RT_EBADREF, "unknown");

    rt_ref obj;
    uint64_t kept = 7;
    void *got;
    ck_ok(rt_put(&kept, sizeof kept, &obj));
    s.opts = NULL;
    s.id = obj.id | RT__ID_FOREIGN; /* not its shape: the table's own handle */
    ck_assert_int_eq(worker_saw(start_worker(&s, 60000)), 1);
    ck_ok(rt_get(obj, &got, NULL, 0));
    ck_assert_uint_eq(*(uint64_t *)got, 7);
    rt_free(got);
    ck_ok(rt_shutdown());
}
END_TEST

Suite *isolation_suite(void)
{
    Suite *s = suite_create("isolation");
    TCase *tc = tcase_create("results");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, an_overrun_changes_no_earlier_result);
    tcase_add_test(tc, a_thread_left_running_cannot_change_the_result);
    tcase_add_test(tc, a_task_cannot_write_the_objects_it_reads);
    tcase_add_test(tc, memory_a_worker_held_goes_to_no_other_worker);
    tcase_add_test(tc, an_argument_cannot_be_opened_for_writing);
    tcase_add_test(tc, a_frozen_memfd_takes_no_write);
    tcase_add_test(tc, a_guarded_applications_shared_memory_is_not_its_workers);
    tcase_add_test(tc, the_guard_keeps_the_applications_memory_from_tasks);
    tcase_add_test(tc, a_bad_guard_setting_is_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("the board");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_task_cannot_forge_another_workers_board_entries);
    tcase_add_test(tc, a_worker_cannot_grow_into_its_neighbours_memory);
    suite_add_tcase(s, tc);
    tc = tcase_create("handles");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_task_cannot_count_its_way_to_other_handles);
    tcase_add_test(tc, handles_of_an_earlier_runtime_are_refused);
    tcase_add_test(tc, a_tasks_threads_are_bounded);
    tcase_add_test(tc, a_worker_here_cannot_claim_an_object_held_elsewhere);
    tcase_add_test(tc, a_handle_made_elsewhere_names_one_item);
    tcase_add_test(tc, a_worker_names_only_its_own_kind_of_task);
    suite_add_tcase(s, tc);
    return s;
}

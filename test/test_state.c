/*
 * test_state.c - the state API (rt_list_tasks(3) and its kin) and
 * rtask-status(1), asked about this very program while it runs.
 */
#include "tests.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Waits (up to 60 s) until the file at arg exists.  Not static: its
 * name is its symbol's. */
int wait_for_gate(const void *arg, size_t len, rt_result *r);
int wait_for_gate(const void *arg, size_t len, rt_result *r)
{
    char path[256];
    (void)r;
    snprintf(path, sizeof path, "%.*s", (int)len, (const char *)arg);
    for (int i = 0; i < 6000 && access(path, F_OK) < 0; i++)
        usleep(10000);
    return 0;
}

static int fails(const void *arg, size_t len, rt_result *r)
{
    (void)arg, (void)len, (void)r;
    return 3;
}

static int ctor(const void *arg, size_t len, void **state)
{
    (void)arg, (void)len;
    *state = NULL;
    return 0;
}

static int pid_of(void *state, const void *arg, size_t len, rt_result *r)
{
    (void)state, (void)arg, (void)len;
    long pid = getpid();
    return rt_result_set(r, &pid, sizeof pid);
}

static size_t count_state(const rt_task_info *t, size_t n, int state)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += t[i].state == state && (state != RT_TASK_RUNNING || t[i].pid > 0);
    return k;
}

/* Until `running` of the tasks run, their workers' pids known (a fresh
 * worker's comes from the fork server), up to 30 s: the list then. */
static rt_task_info *tasks_once_running(size_t running, size_t *n)
{
    rt_task_info *t = NULL;
    for (int i = 0; i < 3000; i++) {
        rt_free(t);
        ck_ok(rt_list_tasks(&t, n));
        if (count_state(t, *n, RT_TASK_RUNNING) == running)
            break;
        usleep(10000);
    }
    return t;
}

static const rt_actor_class keeper = {"Keeper", ctor, NULL};

/* Tasks waiting, running and ended; an object; a named actor; a group:
 * each listed with what it is. */
START_TEST(the_lists_say_what_is_where)
{
    start_runtime(); /* 2 CPUs */
    char gate[128];
    temp_path(gate, sizeof gate, "gate");
    unlink(gate);
    rt_ref refs[3], failed, put;
    for (int i = 0; i < 3; i++)
        ck_ok(rt_remote(wait_for_gate, NULL, gate, strlen(gate), &refs[i]));
    ck_ok(rt_remote(fails, NULL, NULL, 0, &failed));
    ck_ok(rt_put("hello", 6, &put));
    size_t n;
    rt_task_info *t = tasks_once_running(2, &n);
    ck_assert_uint_eq(n, 4);
    ck_assert_uint_eq(count_state(t, n, RT_TASK_RUNNING), 2);
    for (size_t i = 0; i < n; i++) {
        if (t[i].state == RT_TASK_RUNNING) {
            ck_assert_int_eq(t[i].node, 0);
            ck_assert_int_gt(t[i].pid, 0);
            ck_assert_int_ne(t[i].pid, getpid());
            ck_assert_str_eq(t[i].name, "wait_for_gate");
        } else if (t[i].ref.id != failed.id) {
            ck_assert_int_eq(t[i].state, RT_TASK_WAITING);
            ck_assert_int_eq(t[i].node, -1);
        }
        ck_assert(t[i].num_cpus == 1.0);
    }
    rt_free(t);
    rt_object_info *o;
    ck_ok(rt_list_objects(&o, &n));
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(o[0].ref.id, put.id);
    ck_assert_uint_eq(o[0].size, 6);
    ck_assert_int_eq(o[0].put, 1);
    rt_free(o);
    rt_bundle b = {.num_cpus = 1};
    rt_pg pg;
    ck_ok(rt_pg_create(&b, 1, RT_PG_PACK, &pg));
    rt_pg_info *g;
    ck_ok(rt_list_placement_groups(&g, &n));
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(g[0].pg.id, pg.id);
    ck_assert_int_eq(g[0].state, RT_PG_PENDING); /* the CPUs are busy */
    ck_assert(g[0].num_cpus == 1.0);
    rt_free(g);
    fclose(fopen(gate, "w"));
    for (int i = 0; i < 3; i++)
        ck_ok(rt_get(refs[i], NULL, NULL, 60000));
    ck_ok(rt_pg_wait(pg, 30000));
    ck_ok(rt_list_placement_groups(&g, &n));
    ck_assert_int_eq(g[0].state, RT_PG_CREATED);
    rt_free(g);
    ck_ok(rt_pg_remove(pg));
    ck_ok(rt_list_tasks(&t, &n)); /* the three were taken: one is left */
    ck_assert_uint_eq(n, 1);
    for (int i = 0; i < 3000 && t[0].state != RT_TASK_FAILED; i++) {
        rt_free(t);
        usleep(10000);
        ck_ok(rt_list_tasks(&t, &n));
    }
    ck_assert_int_eq(t[0].state, RT_TASK_FAILED);
    ck_assert_int_eq(t[0].error, RT_ETASK);
    rt_free(t);
    rt_opts named = RT_OPTS_INIT;
    named.name = "the-keeper";
    rt_actor a;
    rt_ref ref;
    long *pid;
    ck_ok(rt_actor_create(&keeper, &named, NULL, 0, &a));
    ck_ok(rt_actor_call(a, pid_of, NULL, 0, &ref));
    ck_ok(rt_get(ref, (void **)&pid, NULL, 60000));
    rt_actor_info *ai;
    ck_ok(rt_list_actors(&ai, &n));
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(ai[0].actor.id, a.id);
    ck_assert_str_eq(ai[0].name, "the-keeper");
    ck_assert_int_eq(ai[0].named, 1);
    ck_assert_int_eq(ai[0].state, RT_ACTOR_ALIVE);
    ck_assert_int_eq(ai[0].pid, *pid);
    ck_assert_int_eq(ai[0].node, 0);
    rt_free(ai);
    rt_free(pid);
    ck_fails(rt_list_tasks(NULL, &n), RT_EINVAL, "NULL");
    ck_ok(rt_shutdown());
    ck_fails(rt_list_actors(&ai, &n), RT_ESHUTDOWN, "shut down");
    unlink(gate);
}
END_TEST

/* rtask-status's output for args, into buf: its exit status. */
static int status_tool(const char *args, char *buf, size_t size)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "build/tools/rtask-status %s 2>&1", args);
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "popen: %s", strerror(errno));
    size_t got = fread(buf, 1, size - 1, p);
    buf[got] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* rtask-status asks this program, through its socket in a folder of the
 * user's alone, and prints what the lists say; the socket goes with
 * rt_shutdown(). */
START_TEST(rtask_status_reads_a_running_program)
{
    char dir[128], sock[192], args[256], out[8192];
    temp_path(dir, sizeof dir, "status");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    setenv("RTASK_STATUS_DIR", dir, 1);
    start_runtime();
    snprintf(sock, sizeof sock, "%s/%d.sock", dir, (int)getpid());
    ck_assert_int_eq(access(sock, F_OK), 0);
    rt_opts named = RT_OPTS_INIT;
    named.name = "status-keeper";
    rt_actor a;
    ck_ok(rt_actor_create(&keeper, &named, NULL, 0, &a));
    rt_ref put;
    ck_ok(rt_put("hello", 6, &put));
    snprintf(args, sizeof args, "--pid %d list actors", (int)getpid());
    ck_assert_int_eq(status_tool(args, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "status-keeper") && strstr(out, "NAME"), "%s", out);
    ck_assert_int_eq(status_tool("list objects", out, sizeof out), 0); /* the one program */
    ck_assert_msg(strstr(out, "rt_put") && strstr(out, " 6 "), "%s", out);
    /* A task's process is the user's too: the report names slots, never
     * the handles, which are secrets. */
    char handle[32], slot[48];
    snprintf(handle, sizeof handle, "%llu", (unsigned long long)put.id);
    snprintf(slot, sizeof slot, "\"slot\": %u,", (unsigned)(put.id & 0xffffffffu));
    ck_assert_int_eq(status_tool("--json list objects", out, sizeof out), 0);
    ck_assert_msg(strstr(out, slot) && !strstr(out, handle), "%s", out);
    ck_assert_int_eq(status_tool("--json status", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\"objects\": {\"count\": 1, \"bytes\": 6}") &&
                  strstr(out, "\"resource\": \"CPU\", \"used\": 0, \"total\": 2"), "%s", out);
    ck_assert_int_eq(status_tool("status", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "Actors: ") && strstr(out, "0/2 CPU"), "%s", out);
    ck_assert_int_eq(status_tool("list nothing", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "no such list: nothing"), "%s", out);
    ck_assert_int_eq(status_tool("--frobnicate", out, sizeof out), 2);
    ck_assert_int_eq(status_tool("list", out, sizeof out), 2);
    ck_assert_int_eq(status_tool("--help", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "usage: rtask-status"), "%s", out);
    ck_ok(rt_shutdown());
    ck_assert_int_eq(access(sock, F_OK), -1);
    ck_assert_int_eq(status_tool("status", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "no rtask program of yours runs"), "%s", out);
    unsetenv("RTASK_STATUS_DIR");
    rmdir(dir);
}
END_TEST

Suite *state_suite(void)
{
    Suite *s = suite_create("state");
    TCase *tc = tcase_create("lists");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, the_lists_say_what_is_where);
    tcase_add_test(tc, rtask_status_reads_a_running_program);
    suite_add_tcase(s, tc);
    return s;
}

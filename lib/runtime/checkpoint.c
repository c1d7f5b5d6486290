/*
 * checkpoint.c - results kept in a folder, so that a run of the same
 * program that was killed resumes where it stopped (rtask_checkpoint(7)).
 *
 * Each task has a key: what determines its result, the attempt aside.
 * It is a 128-bit hash of its function (the object it is in and its
 * offset there: the same in every run of the same program), the bytes
 * it takes, the keys of the objects it takes, in their order, and how
 * many results it gives; a part's is its task's and its number; an
 * rt_put() object's, its bytes.  An object without a key (an actor
 * call's result, a nondeterministic task's) gives none to the tasks that
 * take it: they always run.
 *
 * A task that ends well is kept as one file per result, named by the
 * key: written whole under a temporary name, then renamed, and the
 * folder's file system flushed every KEEP_BATCH files or SYNC_NS (and at
 * rt_shutdown()).  A submission whose key has its files (all of them, for
 * several results) becomes those objects at once and never runs.  A file
 * that is cut short, or whose bytes do not hash to what its header says,
 * is not taken: the task runs again, with a warning.  The folder names
 * its program (PROGRAM): another program's is refused.
 *
 * Kept: results that end well and whose bytes are here.  Not kept:
 * failures, actors and their calls, results that name handles (a
 * task's handles are of its run), what a task yielded, and large results
 * that another rank of an MPI job holds.
 */
#include "calls.h"

#include "runtime.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/shm.h"
#include "node/keep.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEEP_BATCH 64
#define SYNC_NS 100000000ULL /* 100 ms */

/* ---- keys ----------------------------------------------------------------------- */

/* Without memory for its rt__more, t has no key: it runs again in a
 * later run, as a nondeterministic task does. */
static void set_key(rt__task *t, rt__hash h)
{
    if (!rt__task_more(t))
        return;
    rt__hash_word(&h, 0x5ca1ab1e); /* a key is never 0, 0: that is none */
    t->call.more->key[0] = h.a | 1;
    t->call.more->key[1] = h.b;
}

static void drop_key(rt__task *t)
{
    if (t->call.more)
        t->call.more->key[0] = t->call.more->key[1] = 0;
}

static int has_key(const rt__task *t)
{
    return rt__task_key(t) != NULL;
}

/* The function, as every run of the program names it. */
static void hash_function(rt__hash *h, const void *fn)
{
    Dl_info info;
    if (dladdr(fn, &info) && info.dli_fname) {
        rt__hash_bytes(h, info.dli_fname, strlen(info.dli_fname));
        rt__hash_word(h, (uint64_t)((const char *)fn - (const char *)info.dli_fbase));
    } else {
        rt__hash_word(h, (uint64_t)(uintptr_t)fn);
    }
}

int rt__call_key_task(rt__runtime *rt, rt__task *t, const rt_arg *args, size_t nargs,
                      int nondeterministic)
{
    if (!rt->checkpoint.dir[0] || nondeterministic || t->call.kind != RT__KIND_TASK)
        return 0;
    rt__hash h = rt__hash_start(1);
    hash_function(&h, (const void *)t->call.fn);
    rt__hash_word(&h, t->call.args_form);
    rt__hash_word(&h, nargs);
    unsigned parts = 1;
    for (const rt__task *p = rt__task_parts(t); p; p = p->next)
        parts++;
    rt__hash_word(&h, parts);
    for (size_t i = 0; i < nargs; i++)
        if (!args[i].ref.id)
            rt__hash_bytes(&h, args[i].data, args[i].len);
        else
            rt__hash_word(&h, ~(uint64_t)i); /* an object's key comes under the lock */
    set_key(t, h);
    return 0;
}

void rt__call_key_object(rt__runtime *rt, rt__task *o, const void *data, size_t len)
{
    if (!rt->checkpoint.dir[0])
        return;
    set_key(o, rt__put_hash(data, len));
}

void rt__call_key_hashed(rt__runtime *rt, rt__task *o, const uint64_t hash[2])
{
    if (rt->checkpoint.dir[0] && (hash[0] || hash[1]))
        set_key(o, (rt__hash){hash[0], hash[1]});
}

void rt__call_unkept(rt__runtime *rt, uint64_t task)
{
    pthread_mutex_lock(&rt->lock);
    rt__task *t = rt__objects_running(rt, task);
    if (t && t->obj.state != RT__TASK_DONE)
        t->obj.unkept = 1;
    pthread_mutex_unlock(&rt->lock);
}

/* [L] t's key gets the keys of the objects it takes (none when one has
 * none), and its parts get theirs. */
static void finish_key(rt__task *t)
{
    const uint64_t *key = rt__task_key(t);
    rt__hash h = {key[0], key[1]};
    const rt__arg *list = rt__task_args(t);
    for (uint32_t i = 0; i < rt__task_nargs(t) && has_key(t); i++) {
        const rt__task *o = list[i].object;
        if (o && !has_key(o))
            drop_key(t);
        else if (o)
            rt__hash_word(&h, rt__task_key(o)[0]), rt__hash_word(&h, rt__task_key(o)[1]);
    }
    if (has_key(t) && rt__task_nargs(t))
        set_key(t, h);
    uint64_t n = 1;
    for (rt__task *p = rt__task_parts(t); p && (key = rt__task_key(t)); p = p->next, n++) {
        rt__hash ph = {key[0], key[1]};
        rt__hash_word(&ph, n);
        set_key(p, ph);
    }
}

/* ---- files ---------------------------------------------------------------------- */

/* Flush what was written to the folder's file system, when enough is
 * waiting (or now). */
static void sync_kept(rt__runtime *rt, int now)
{
    uint64_t t = rt__now_ns();
    if (!rt->checkpoint.unsynced || (!now && rt->checkpoint.unsynced < KEEP_BATCH &&
                                     t - rt->checkpoint.first_unsynced_ns < SYNC_NS))
        return;
    int fd = open(rt->checkpoint.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || syncfs(fd) < 0)
        rt__warn("checkpoints in %s: flushing them: %s", rt->checkpoint.dir, strerror(errno));
    if (fd >= 0)
        close(fd);
    rt->checkpoint.unsynced = 0;
}

/* ---- the runtime's side ------------------------------------------------------------ */

int rt__checkpoint_take(rt__runtime *rt, rt__task *t)
{
    if (!rt->checkpoint.dir[0] || !has_key(t))
        return 0;
    finish_key(t);
    if (!has_key(t))
        return 0;
    pthread_mutex_unlock(&rt->lock);
    int found = 1;
    for (rt__task *x = t; x && found; x = x == t ? rt__task_parts(t) : x->next) {
        size_t len = 0;
        void *bytes = rt__keep_read(rt->checkpoint.dir, rt__task_key(x), &len);
        found = bytes != NULL;
        x->obj.result = bytes;
        x->obj.result_len = len;
    }
    if (!found) /* all or none */
        for (rt__task *x = t; x; x = x == t ? rt__task_parts(t) : x->next) {
            rt__buf_free(x->obj.result);
            x->obj.result = NULL;
            x->obj.result_len = 0;
        }
    pthread_mutex_lock(&rt->lock);
    int rc = rt__check_running(rt, "rt_remote");
    return rc < 0 ? rc : found;
}

void rt__checkpoint_note(rt__runtime *rt, rt__task *t, rt__tasks *keep)
{
    if (!rt->checkpoint.dir[0] || !has_key(t) || t->obj.status != RT_OK)
        return;
    /* One its rank kept (cluster/serve.c) is taken back if it may not
     * be; the others are written (rt__checkpoint_write()). */
    int here = !t->obj.holder && !t->obj.unkept && (t->obj.result || !t->obj.result_len) &&
               !t->obj.spilled;
    if (here || (t->obj.holder && t->obj.unkept)) {
        t->obj.holds++; /* kept alive until written */
        rt__tasks_push(keep, t);
    }
}

void rt__checkpoint_write(rt__runtime *rt, rt__tasks *keep)
{
    if (!keep->count)
        return;
    for (rt__task *t = keep->head; t; t = t->next) {
        if (t->obj.holder) {
            rt__keep_remove(rt->checkpoint.dir, rt__task_key(t));
            continue;
        }
        if (rt__keep_write(rt->checkpoint.dir, rt__task_key(t), t->obj.result,
                           t->obj.result_len, 0) < 0) /* flushed in batches */
            continue;
        if (rt->checkpoint.unsynced++ == 0)
            rt->checkpoint.first_unsynced_ns = rt__now_ns();
        sync_kept(rt, 0); /* every 64 files, or once 100 ms passed */
    }
    rt__tasks freed = {0};
    pthread_mutex_lock(&rt->lock);
    for (rt__task *t; (t = rt__tasks_pop(keep));)
        if (rt__objects_unhold(rt, t))
            rt__tasks_push(&freed, t);
    pthread_mutex_unlock(&rt->lock);
    rt__tasks_free(&freed);
}

/* ---- the folder -------------------------------------------------------------------- */

/* This program, as a line: its path and the hash of its bytes. */
static char *program_line(void)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (n < 0 || fd < 0 || fstat(fd, &st) < 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    exe[n] = 0;
    void *map = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
                           : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED)
        return NULL;
    rt__hash h = rt__hash_start(4);
    rt__hash_bytes(&h, map, (size_t)st.st_size);
    munmap(map, (size_t)st.st_size);
    size_t len = strlen(exe) + 80;
    char *line = rt__malloc(len);
    if (line)
        snprintf(line, len, "rtask checkpoints of %s %016llx%016llx\n", exe,
                 (unsigned long long)h.a, (unsigned long long)h.b);
    return line;
}

/* The folder's PROGRAM file names this program, or is written so. */
static int claim(const char *dir, const char *named, const char *line)
{
    char path[4200], seen[4200];
    snprintf(path, sizeof path, "%s/PROGRAM", dir);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(seen, 1, sizeof seen - 1, f);
        fclose(f);
        seen[n] = 0;
        if (strcmp(seen, line) == 0)
            return 0;
        seen[strcspn(seen, "\n")] = 0;
        return rt__error(RT_EINVAL, "rt_init: %s %s holds another program's results (%s): "
                         "give each program a folder of its own", named, dir, seen);
    }
    if (!(f = fopen(path, "w")) || fputs(line, f) < 0 || fclose(f) != 0)
        return rt__error(RT_ESYS, "rt_init: %s %s: writing PROGRAM: %s", named, dir,
                         strerror(errno));
    return 0;
}

int rt__checkpoint_open(rt__runtime *rt, const char *configured)
{
    const char *env = getenv("RTASK_CHECKPOINT_DIR");
    const char *dir = configured && *configured ? configured : env && *env ? env : NULL;
    const char *named = configured && *configured ? "rt_config.checkpoint_dir"
                                                  : "RTASK_CHECKPOINT_DIR";
    rt->checkpoint.dir[0] = 0;
    rt->checkpoint.unsynced = 0;
    if (!dir)
        return 0;
    if (strlen(dir) >= sizeof rt->checkpoint.dir)
        return rt__error(RT_EINVAL, "rt_init: %s is longer than %d bytes", named,
                         RT__FOLDER_MAX - 1);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return rt__error(RT_EINVAL, "rt_init: %s %s: %s", named, dir, strerror(errno));
    struct stat st;
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) < 0)
        return rt__error(RT_EINVAL, "rt_init: %s %s is not a folder this process may write "
                         "in", named, dir);
    char *line = program_line();
    if (!line)
        return rt__error(RT_ESYS, "rt_init: %s: reading this program: %s", named,
                         strerror(errno));
    int rc = claim(dir, named, line);
    rt__free(line);
    if (rc == 0)
        strcpy(rt->checkpoint.dir, dir);
    return rc;
}

void rt__checkpoint_close(rt__runtime *rt)
{
    if (rt->checkpoint.dir[0])
        sync_kept(rt, 1);
    rt->checkpoint.dir[0] = 0;
}

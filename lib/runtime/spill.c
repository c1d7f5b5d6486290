/*
 * spill.c - objects that move to files when the store is full, and come
 * back when they are read (Ray's object spilling).
 *
 * The store is full when the bytes of the objects it holds pass
 * object_store_bytes.  A put or a submission that finds it so moves
 * objects to files in the spill folder until it has room: objects that
 * ended, whose bytes are here, and that nothing holds (no task that
 * takes them, no view, no copy being read), so that no process maps
 * what leaves.  The first that reads one again (rt_get(), a view, a task
 * that takes it: rt__wait_done(), rt__objects_take_args()) reads it back.
 *
 * Files are written and read outside the lock, one thread spilling at a
 * time; the object is held meanwhile (holds), so that it is not freed
 * under the writer.  An object that something else took hold of while
 * its file was written keeps its bytes, and the file goes.  The books
 * (objects.c) stay the one place that says where the bytes are: in
 * result, or in spill_file.
 */
#include "runtime.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/shm.h"
#include "node/keep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPILL_BATCH 64 /* objects moved by one thread at a time, at most */

/* The folder: the configuration's, $RTASK_SPILL_DIR, or $TMPDIR (/tmp). */
int rt__spill_open(rt__runtime *rt, const char *configured)
{
    const char *env = getenv("RTASK_SPILL_DIR"), *tmp = getenv("TMPDIR");
    const char *dir = configured && *configured ? configured
                      : env && *env              ? env
                      : tmp && *tmp              ? tmp
                                                 : "/tmp";
    const char *named = configured && *configured ? "rt_config.spill_dir"
                        : env && *env             ? "RTASK_SPILL_DIR"
                                                  : NULL;
    struct stat st;
    int usable = stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK) == 0;
    rt->spill.dir[0] = 0;
    if (!usable && named)
        return rt__error(RT_EINVAL, "rt_init: %s \"%s\" is not a folder this process may "
                         "write in", named, dir);
    if (usable && strlen(dir) >= sizeof rt->spill.dir) {
        if (named)
            return rt__error(RT_EINVAL, "rt_init: %s is longer than %d bytes", named,
                             RT__FOLDER_MAX - 1);
        return 0;
    }
    if (usable)
        strcpy(rt->spill.dir, dir);
    return 0; /* a default that cannot be used: objects do not spill */
}

void rt__spill_close(rt__runtime *rt)
{
    rt->spill.dir[0] = 0;
}

/* [L] Whether o may move to a file now. */
static int spillable(const rt__task *o)
{
    return o->obj.state == RT__TASK_DONE && rt__task_bytes(o) && o->obj.result_len &&
           !o->obj.holder && !o->obj.holds && !o->obj.spilling && !o->obj.restoring;
}

/* [L] Up to SPILL_BATCH objects nothing holds, together at least `want`
 * bytes when there are, each held and marked: how many. */
static size_t pick(rt__runtime *rt, size_t want, rt__task **out)
{
    size_t n = 0, bytes = 0;
    for (uint32_t i = 0; i < rt->tasks.used && n < SPILL_BATCH && bytes < want; i++) {
        uint64_t id;
        rt__task *o = rt__table_at(&rt->tasks, i, &id);
        if (!o || !spillable(o))
            continue;
        o->obj.holds++;
        o->obj.spilling = 1;
        bytes += o->obj.result_len;
        out[n++] = o;
    }
    return n;
}

/* The file of object o. */
static char *file_of(const rt__runtime *rt, const rt__task *o)
{
    char name[64];
    snprintf(name, sizeof name, "/rtask-spill-%ld-%016llx", (long)getpid(),
             (unsigned long long)o->call.id);
    size_t len = strlen(rt->spill.dir) + strlen(name) + 1;
    char *path = rt__malloc(len);
    if (path)
        snprintf(path, len, "%s%s", rt->spill.dir, name);
    return path;
}

int rt__spill_make_room(rt__runtime *rt, size_t need)
{
    rt__task *v[SPILL_BATCH];
    char *path[SPILL_BATCH];
    void *gone[SPILL_BATCH];
    size_t over = rt->store_used + need - rt->store_size;
    size_t n = rt->spill.dir[0] && !rt->spill.busy ? pick(rt, over, v) : 0;
    if (n == 0)
        return 0;
    rt->spill.busy = 1;
    for (size_t i = 0; i < n; i++)
        path[i] = file_of(rt, v[i]); /* the directory is fixed while it runs */
    pthread_mutex_unlock(&rt->lock);
    for (size_t i = 0; i < n; i++)
        if (path[i] && rt__keep_spill(path[i], v[i]->obj.result, v[i]->obj.result_len) < 0) {
            rt__warn("spilling an object of %zu bytes to %s: %s", v[i]->obj.result_len,
                     path[i], strerror(errno));
            rt__free(path[i]);
            path[i] = NULL;
        }
    pthread_mutex_lock(&rt->lock);
    rt__tasks freed = {0};
    size_t moved = 0;
    for (size_t i = 0; i < n; i++) {
        rt__task *o = v[i];
        o->obj.spilling = 0;
        gone[i] = NULL;
        if (path[i] && o->obj.holds == 1) { /* nothing took hold of it meanwhile */
            rt__objects_leave(rt, o);
            gone[i] = o->obj.result;
            o->obj.spill_file = path[i];
            o->obj.spilled = 1;
            path[i] = NULL;
            moved++;
        }
        if (rt__objects_unhold(rt, o)) /* released meanwhile */
            rt__tasks_push(&freed, o);
    }
    rt->spill.busy = 0;
    pthread_cond_broadcast(&rt->changed); /* room, and the next spiller's turn */
    pthread_mutex_unlock(&rt->lock);
    for (size_t i = 0; i < n; i++) {
        rt__buf_free(gone[i]);
        if (path[i])
            unlink(path[i]); /* its object kept its bytes */
        rt__free(path[i]);
    }
    rt__tasks_free(&freed);
    pthread_mutex_lock(&rt->lock);
    return moved > 0 ? 1 : -1;
}

void rt__spill_restore(rt__runtime *rt, rt__task *o)
{
    if (o->obj.restoring) { /* another reader is at it: wait for the change */
        (void)rt__wait_change(rt, -1, NULL);
        return;
    }
    o->obj.restoring = 1;
    o->obj.holds++;
    const char *path = o->obj.spill_file;
    size_t len = o->obj.result_len;
    pthread_mutex_unlock(&rt->lock);
    void *bytes = rt__keep_unspill(path, len);
    int why = errno;
    pthread_mutex_lock(&rt->lock);
    o->obj.restoring = 0;
    char *file = o->obj.spill_file;
    o->obj.spilled = 0;
    o->obj.result = bytes;
    if (bytes) {
        rt->store_used += len;
    } else { /* the file goes too: a damaged file stays damaged */
        o->obj.result_len = 0;
        rt__task_fail(o, RT_ESYS, "the object's %zu bytes, spilled to %s, could not be "
                      "read back: %s", len, path, strerror(why));
    }
    pthread_cond_broadcast(&rt->changed);
    int last = rt__objects_unhold(rt, o);
    pthread_mutex_unlock(&rt->lock);
    unlink(file);
    rt__free(file);
    if (last)
        rt__task_free(o);
    pthread_mutex_lock(&rt->lock);
}

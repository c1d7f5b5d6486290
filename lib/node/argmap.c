/* argmap.c - the objects a worker's tasks take as arguments, mapped
 * (argmap.h). */
#include "argmap.h"

#include "base/shm.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#define KEPT_MAX 16 /* objects kept mapped at most */

typedef struct kept_map {
    dev_t dev;
    ino_t ino;         /* the memfd's: the same object, whatever its descriptor */
    size_t len;
    const void *data;
    unsigned users;    /* tasks it is given to now */
} kept_map;

static struct {
    pthread_mutex_t lock;
    kept_map maps[KEPT_MAX];
    size_t n;
    _Atomic size_t any; /* n, for rt__argmap_kept() without the lock */
} kept = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* [kept.lock] Take out the mappings no task uses, into gone (room for
 * KEPT_MAX): their number. */
static size_t take_unused(kept_map *gone)
{
    size_t n = 0;
    for (size_t i = 0; i < kept.n;)
        if (kept.maps[i].users == 0) {
            gone[n++] = kept.maps[i];
            kept.maps[i] = kept.maps[--kept.n];
        } else {
            i++;
        }
    atomic_store(&kept.any, kept.n);
    return n;
}

static void unmap_all(const kept_map *gone, size_t n)
{
    for (size_t i = 0; i < n; i++) /* no lock across a system call */
        rt__shm_unmap((void *)gone[i].data, gone[i].len);
}

/* [kept.lock] The mapping kept of (dev, ino) for len bytes, or NULL. */
static kept_map *find(dev_t dev, ino_t ino, size_t len)
{
    for (size_t i = 0; i < kept.n; i++)
        if (kept.maps[i].dev == dev && kept.maps[i].ino == ino && kept.maps[i].len == len)
            return &kept.maps[i];
    return NULL;
}

const void *rt__argmap_take(int fd, size_t len)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return NULL;
    pthread_mutex_lock(&kept.lock);
    kept_map *k = find(st.st_dev, st.st_ino, len);
    const void *data = k ? k->data : NULL;
    if (k)
        k->users++;
    pthread_mutex_unlock(&kept.lock);
    if (data)
        return data;
    if (!(data = rt__shm_open(fd, len, RT__SHM_SEALED_VIEW)))
        return errno == EPERM ? rt__shm_open(fd, len, RT__SHM_VIEW) : NULL;
    kept_map gone[KEPT_MAX];
    pthread_mutex_lock(&kept.lock);
    size_t ngone = take_unused(gone); /* the last task's objects, but this one */
    if (kept.n < KEPT_MAX) /* else as many in use: this one is the task's alone */
        kept.maps[kept.n++] = (kept_map){st.st_dev, st.st_ino, len, data, 1};
    atomic_store(&kept.any, kept.n);
    pthread_mutex_unlock(&kept.lock);
    unmap_all(gone, ngone);
    return data;
}

void rt__argmap_drop(const void *data, size_t len)
{
    pthread_mutex_lock(&kept.lock);
    size_t i = 0;
    while (i < kept.n && kept.maps[i].data != data)
        i++;
    int found = i < kept.n;
    if (found)
        kept.maps[i].users--;
    pthread_mutex_unlock(&kept.lock);
    if (!found) /* the task's alone */
        rt__shm_unmap((void *)data, len);
}

int rt__argmap_kept(void)
{
    return atomic_load(&kept.any) > 0; /* in the worker's loop: no lock */
}

void rt__argmap_forget(void)
{
    kept_map gone[KEPT_MAX];
    pthread_mutex_lock(&kept.lock);
    size_t n = take_unused(gone);
    pthread_mutex_unlock(&kept.lock);
    unmap_all(gone, n);
}

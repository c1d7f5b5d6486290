/* shm.c - heap and memfd buffers that rt__buf_free() releases, and the pool of
 * memfds kept for reuse. */
#include "shm.h"

#include "alloc.h"
#include "error.h"
#include "rtask.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF_MAGIC 0x7274627566UL
#define POOL_MAX 32 /* memfds kept at most */

typedef struct buf_hdr {
    uint64_t magic;
    uint64_t map_len; /* 0: heap; else the length of the whole mapping */
    int64_t fd;       /* the memfd the buffer owns, or -1 */
    uint64_t owner;   /* the worker it came from (rt__shm_owned_by()), or 0 */
} buf_hdr;

_Static_assert(sizeof(buf_hdr) <= RT__BUF_HDR, "header fits its slot");

/* ---- the pool ------------------------------------------------------------------------ */

typedef struct spare {
    int fd;
    size_t size;    /* of the file */
    uint64_t owner; /* who may take it: that worker, or anybody (0) */
} spare;

static struct {
    pthread_mutex_t lock;
    size_t cap, bytes;  /* allowed, kept */
    int n;
    spare kept[POOL_MAX];
    uint64_t *owners;   /* the workers alive, which their memfds go back to */
    size_t nowners, cap_owners;
    uint64_t last_owner; /* keys are never used twice in a process */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* [pool.lock] Where owner is among the living, or -1. */
static long find_owner(uint64_t owner)
{
    for (size_t i = 0; i < pool.nowners; i++)
        if (pool.owners[i] == owner)
            return (long)i;
    return -1;
}

uint64_t rt__shm_owner_new(void)
{
    pthread_mutex_lock(&pool.lock);
    uint64_t owner = ++pool.last_owner;
    uint64_t *grown = rt__grow(pool.owners, &pool.cap_owners, pool.nowners, sizeof *grown, 16);
    if (grown) { /* else its memfds are closed when freed: safe, only slower */
        pool.owners = grown;
        pool.owners[pool.nowners++] = owner;
    }
    pthread_mutex_unlock(&pool.lock);
    return owner;
}

void rt__shm_owner_ended(uint64_t owner)
{
    int gone[POOL_MAX], ngone = 0;
    pthread_mutex_lock(&pool.lock);
    long at = find_owner(owner);
    if (at >= 0)
        pool.owners[at] = pool.owners[--pool.nowners];
    for (int i = 0; i < pool.n;)
        if (pool.kept[i].owner == owner) {
            gone[ngone++] = pool.kept[i].fd;
            pool.bytes -= pool.kept[i].size;
            pool.kept[i] = pool.kept[--pool.n];
        } else {
            i++;
        }
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < ngone; i++) /* no lock across a system call */
        close(gone[i]);
}

void rt__shm_pool_open(size_t bytes)
{
    pthread_mutex_lock(&pool.lock);
    pool.cap = bytes;
    pthread_mutex_unlock(&pool.lock);
}

void rt__shm_pool_close(void)
{
    spare kept[POOL_MAX];
    pthread_mutex_lock(&pool.lock);
    int n = pool.n;
    for (int i = 0; i < n; i++)
        kept[i] = pool.kept[i];
    pool.n = 0;
    pool.cap = pool.bytes = 0;
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < n; i++) /* no lock across a system call */
        close(kept[i].fd);
}

int rt__shm_freeze(int fd)
{
    return fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE);
}

/* Keep fd for owner (0: anybody), or close it: the pool is full, its
 * owner has ended, or it is frozen. */
static void give(int fd, uint64_t owner)
{
    struct stat st;
    int kept = 0, seals = fcntl(fd, F_GET_SEALS);
    if (seals >= 0 && !(seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) && fstat(fd, &st) == 0) {
        size_t size = (size_t)st.st_size;
        pthread_mutex_lock(&pool.lock);
        if (pool.n < POOL_MAX && size <= pool.cap - pool.bytes && pool.bytes <= pool.cap &&
            (!owner || find_owner(owner) >= 0)) {
            pool.kept[pool.n++] = (spare){fd, size, owner};
            pool.bytes += size;
            kept = 1;
        }
        pthread_mutex_unlock(&pool.lock);
    }
    if (!kept)
        close(fd);
}

void rt__shm_pool_give(int fd)
{
    give(fd, 0);
}

void rt__shm_pool_forked(size_t bytes)
{
    pthread_mutex_init(&pool.lock, NULL); /* a thread may have held it at the fork */
    pool.n = 0;
    pool.bytes = 0;
    pool.cap = bytes;
    pool.nowners = 0; /* no worker of its own */
}

static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

/* What a buffer being written spans: its header and bytes, whole pages,
 * then the guard page. */
static size_t written_span(size_t len)
{
    size_t page = page_size();
    return (RT__BUF_HDR + len + page - 1) / page * page + page;
}

void rt__shm_done(void *data, size_t len)
{
    munmap((char *)data - RT__BUF_HDR, written_span(len));
}

void *rt__shm_keep(void *data, size_t len, int fd)
{
    buf_hdr *h = (buf_hdr *)(void *)((char *)data - RT__BUF_HDR);
    h->map_len = written_span(len); /* its guard page too */
    h->fd = fd;
    return data;
}

/* The smallest memfd kept that holds need bytes and is not more than
 * twice that (a large one stays for a large result). */
int rt__shm_pool_take(size_t need, uint64_t owner)
{
    int best = -1, fd = -1;
    pthread_mutex_lock(&pool.lock);
    for (int i = 0; i < pool.n; i++)
        if (pool.kept[i].size >= need && pool.kept[i].size / 2 <= need &&
            (!pool.kept[i].owner || pool.kept[i].owner == owner) &&
            (best < 0 || pool.kept[i].size < pool.kept[best].size))
            best = i;
    if (best >= 0) {
        fd = pool.kept[best].fd;
        pool.bytes -= pool.kept[best].size;
        pool.kept[best] = pool.kept[--pool.n];
    }
    pthread_mutex_unlock(&pool.lock);
    return fd;
}

/* ---- buffers --------------------------------------------------------------------------- */

static void *hdr_to_data(void *base, uint64_t map_len, int fd)
{
    buf_hdr *h = base;
    h->magic = BUF_MAGIC;
    h->map_len = map_len;
    h->fd = fd;
    h->owner = 0;
    return (char *)base + RT__BUF_HDR;
}

void *rt__buf_alloc(size_t len)
{
    if (len > RT__LEN_MAX)
        return NULL; /* the header added would wrap */
    void *base = rt__malloc(RT__BUF_HDR + len);
    return base ? hdr_to_data(base, 0, -1) : NULL;
}

/* A writable shared mapping of a memfd, with a guard page after it:
 * a task that writes past its result faults in its own worker rather
 * than changing whatever mapping lies next.  MAP_POPULATE when its
 * pages exist (a memfd of the pool): they are mapped in one go, not one
 * fault at a time. */
static void *map_shared(int fd, size_t len, int populate)
{
    size_t span = written_span(len), guard = span - page_size();
    void *base = mmap(NULL, span, PROT_READ | PROT_WRITE,
                      MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
    if (base == MAP_FAILED)
        return NULL;
    if (mprotect((char *)base + guard, span - guard, PROT_NONE) < 0) {
        munmap(base, span);
        return NULL;
    }
    return hdr_to_data(base, RT__BUF_HDR + len, -1);
}

int rt__shm_create(size_t len, void **data)
{
    int made;
    return rt__shm_create_made(len, data, &made);
}

int rt__shm_create_made(size_t len, void **data, int *made)
{
    if (len > RT__LEN_MAX) {
        errno = ENOMEM; /* no mapping is that long, and the sums below would wrap */
        return -1;
    }
    int fd = rt__shm_pool_take(RT__BUF_HDR + len, 0);
    *made = 0;
    if (fd >= 0) {
        if ((*data = map_shared(fd, len, 1)))
            return fd;
        close(fd);
    }
    *made = 1;
    fd = memfd_create("rtask", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)(RT__BUF_HDR + len)) < 0 || !(*data = map_shared(fd, len, 0))) {
        close(fd);
        return -1;
    }
    return fd;
}

int rt__shm_write_at(int fd, size_t at, const void *bytes, size_t n)
{
    const char *p = bytes;
    while (n) {
        ssize_t done = pwrite(fd, p, n, (off_t)(RT__BUF_HDR + at));
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0) {
            errno = done ? errno : EIO;
            return -1;
        }
        p += done, at += (size_t)done, n -= (size_t)done;
    }
    return 0;
}

int rt__shm_seal(int fd)
{
    /* What keeps the reader from SIGBUS.  Not the bytes: the memfd is
     * written again when it comes back from the pool, unless it is
     * frozen (rt__shm_freeze(), which is why F_SEAL_SEAL is not set). */
    int want = F_SEAL_SHRINK | F_SEAL_GROW;
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals >= 0 && (seals & want) == want)
        return 0;
    return fcntl(fd, F_ADD_SEALS, want);
}

int rt__shm_fits(int fd, size_t len)
{
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || !(seals & F_SEAL_SHRINK) || (seals & F_SEAL_SEAL) || fstat(fd, &st) < 0 ||
        (uint64_t)st.st_size < (uint64_t)RT__BUF_HDR + len || len > SIZE_MAX - RT__BUF_HDR) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

/* Whether this kernel keeps a shared read-only mapping of a memfd sealed
 * against writes from being made writable (Linux does since it has the
 * seal, 5.1): tried once, on the first such mapping, base. */
static int sealed_views_hold(void *base)
{
    static _Atomic int known; /* 0: not yet; 1: they hold; 2: they do not */
    int k = atomic_load(&known);
    if (k == 0) {
        k = mprotect(base, page_size(), PROT_READ | PROT_WRITE) == 0 ? 2 : 1;
        if (k == 2)
            mprotect(base, page_size(), PROT_READ);
        atomic_store(&known, k);
    }
    return k == 1;
}

void *rt__shm_open(int fd, size_t len, rt__shm_mode mode)
{
    if (rt__shm_fits(fd, len) < 0)
        return NULL;
    size_t map_len = RT__BUF_HDR + len;
    /* Read-only: a buffer's first page is then made writable for its
     * header, which copies that page alone (a writable private mapping
     * populated would copy them all).  A buffer read here is populated:
     * its pages exist, and the caller reads them all; measured, that
     * beats a fault per 16 pages.  A task's argument is not: it may read
     * a part, and many tasks map the same object at once. */
    int shared = mode == RT__SHM_SEALED_VIEW, seals = shared ? fcntl(fd, F_GET_SEALS) : 0;
    if (shared && (seals < 0 || !(seals & F_SEAL_FUTURE_WRITE))) {
        errno = EPERM;
        return NULL;
    }
    int how = shared ? MAP_SHARED : MAP_PRIVATE | (mode == RT__SHM_BUFFER ? MAP_POPULATE : 0);
    void *base = mmap(NULL, map_len, PROT_READ, how, fd, 0);
    if (base == MAP_FAILED)
        return NULL;
    if (shared && !sealed_views_hold(base)) {
        munmap(base, map_len);
        errno = EPERM;
        return NULL;
    }
    if (mode == RT__SHM_VIEW || shared)
        return (char *)base + RT__BUF_HDR;
    if (mprotect(base, RT__BUF_HDR, PROT_READ | PROT_WRITE) < 0) {
        munmap(base, map_len);
        return NULL;
    }
    return hdr_to_data(base, map_len, fd);
}

void rt__shm_owned_by(const void *data, uint64_t owner)
{
    buf_hdr *h = (buf_hdr *)(void *)((char *)(uintptr_t)data - RT__BUF_HDR);
    if (h->magic == BUF_MAGIC)
        h->owner = owner;
}

void rt__shm_disown(const void *data)
{
    buf_hdr *h = (buf_hdr *)(void *)((char *)(uintptr_t)data - RT__BUF_HDR);
    if (h->magic == BUF_MAGIC && h->fd >= 0) {
        close((int)h->fd);
        h->fd = -1;
    }
}

int rt__shm_fd(const void *data)
{
    if (!data)
        return -1;
    const buf_hdr *h = (const buf_hdr *)(const void *)((const char *)data - RT__BUF_HDR);
    return h->magic == BUF_MAGIC && h->map_len ? (int)h->fd : -1;
}

int rt__buf_write(int fd, const void *data, size_t len)
{
    size_t left = len;
    while (left > 0) {
        ssize_t n = write(fd, (const char *)data + (len - left), left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        left -= (size_t)n;
    }
    return 0;
}

void rt__shm_unmap(void *data, size_t len)
{
    munmap((char *)data - RT__BUF_HDR, RT__BUF_HDR + len);
}

void rt__buf_free(void *data)
{
    if (!data)
        return;
    buf_hdr *h = (buf_hdr *)((char *)data - RT__BUF_HDR);
    if (h->magic != BUF_MAGIC)
        return; /* not ours: leaking beats freeing a foreign pointer */
    h->magic = 0;
    int fd = (int)h->fd;
    uint64_t owner = h->owner;
    if (h->map_len)
        munmap(h, h->map_len);
    else
        rt__free(h);
    if (fd >= 0)
        give(fd, owner); /* closed when another process may map it still: frozen */
}

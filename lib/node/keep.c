/* keep.c - objects' bytes in files: checkpoints, spills; and the hash of
 * keys and sums (keep.h). */
#include "keep.h"

#include "task.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "rtaskck1"

/* ---- the hash ------------------------------------------------------------------ */

rt__hash rt__hash_start(uint64_t tag)
{
    return (rt__hash){0x9e3779b97f4a7c15ULL ^ tag, 0xc2b2ae3d27d4eb4fULL + tag};
}

static uint64_t rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

void rt__hash_word(rt__hash *h, uint64_t w)
{
    h->a = rotl((h->a ^ w) * 0x9e3779b97f4a7c15ULL, 29);
    h->b = rotl((h->b + w) * 0xff51afd7ed558ccdULL, 31) ^ h->a;
}

void rt__hash_bytes(rt__hash *h, const void *data, size_t len)
{
    const unsigned char *p = data;
    rt__hash_word(h, len);
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        rt__hash_word(h, w);
    }
    uint64_t last = 0;
    if (len)
        memcpy(&last, p, len);
    rt__hash_word(h, last);
}

/* ---- the file ------------------------------------------------------------------ */

typedef struct header {
    char magic[8];
    uint64_t key[2];
    uint64_t len;
    uint64_t sum[2]; /* the hash of the bytes */
} header;

static char *path_of(const char *dir, const uint64_t key[2], const char *prefix)
{
    size_t len = strlen(dir) + 64;
    char *path = rt__malloc(len);
    if (path)
        snprintf(path, len, "%s/%s%016llx%016llx", dir, prefix, (unsigned long long)key[0],
                 (unsigned long long)key[1]);
    return path;
}

static rt__hash hash_of(uint64_t tag, const void *data, size_t len)
{
    rt__hash h = rt__hash_start(tag);
    rt__hash_bytes(&h, data, len);
    return h;
}

static rt__hash sum_of(const void *data, size_t len)
{
    return hash_of(3, data, len);
}

rt__hash rt__put_hash(const void *data, size_t len)
{
    return hash_of(2, data, len);
}

void *rt__keep_read(const char *dir, const uint64_t key[2], size_t *len)
{
    char *path = path_of(dir, key, "");
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    header h;
    struct stat st;
    void *bytes = NULL;
    const char *bad = NULL;
    *len = 0;
    if (fd < 0) {
        rt__free(path);
        return NULL; /* not kept: the usual case */
    }
    if (fstat(fd, &st) < 0 || read(fd, &h, sizeof h) != (ssize_t)sizeof h ||
        memcmp(h.magic, MAGIC, 8) != 0 || h.key[0] != key[0] || h.key[1] != key[1])
        bad = "its header is not a checkpoint's";
    else if ((uint64_t)st.st_size != sizeof h + h.len || h.len > RT__LEN_MAX)
        bad = "it is cut short";
    else if (!(bytes = rt__task_object_fill(h.len, rt__task_read_fd, &fd)))
        bad = "it could not be read";
    else {
        rt__hash sum = sum_of(bytes, h.len);
        if (sum.a != h.sum[0] || sum.b != h.sum[1]) {
            bad = "its bytes are not what it says";
            rt__buf_free(bytes);
            bytes = NULL;
        }
    }
    close(fd);
    if (bad)
        rt__warn("checkpoint %s: %s: the task runs again", path, bad);
    rt__free(path);
    *len = bytes ? h.len : 0;
    return bytes;
}

int rt__keep_write(const char *dir, const uint64_t key[2], const void *data, size_t len,
                   int flush)
{
    char *tmp = path_of(dir, key, ".tmp-"), *path = path_of(dir, key, "");
    int fd = tmp && path ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    rt__hash sum = sum_of(data, len);
    header h = {MAGIC, {key[0], key[1]}, len, {sum.a, sum.b}};
    int bad = fd < 0 || write(fd, &h, sizeof h) != (ssize_t)sizeof h ||
              rt__buf_write(fd, data, len) < 0 || (flush && fdatasync(fd) < 0);
    bad |= fd >= 0 && close(fd) < 0;
    if (!bad && rename(tmp, path) < 0)
        bad = 1;
    if (bad) {
        rt__warn("checkpoint %s: %s: the result is not kept", path ? path : "?",
                 strerror(errno));
        if (tmp)
            unlink(tmp);
    }
    rt__free(tmp);
    rt__free(path);
    return bad ? -1 : 0;
}

void rt__keep_remove(const char *dir, const uint64_t key[2])
{
    char *path = path_of(dir, key, "");
    if (path)
        unlink(path);
    rt__free(path);
}

/* ---- spilled objects ------------------------------------------------------------- */

int rt__keep_spill(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int bad = rt__buf_write(fd, data, len) < 0, why = errno;
    if ((close(fd) < 0) | bad) {
        unlink(path);
        errno = bad ? why : errno;
        return -1;
    }
    return 0;
}

void *rt__keep_unspill(const char *path, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    void *bytes = NULL;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size == len)
        bytes = rt__task_object_fill(len, rt__task_read_fd, &fd);
    else
        errno = EPROTO; /* cut short, or grown */
    int why = errno;
    close(fd);
    errno = why;
    return bytes;
}

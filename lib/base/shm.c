/* shm.c - heap and memfd buffers that rt_free() releases. */
#include "shm.h"

#include "alloc.h"
#include "rtask.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF_MAGIC 0x7274627566UL

typedef struct buf_hdr {
    uint64_t magic;
    uint64_t map_len; /* 0: heap; else the length of the whole mapping */
} buf_hdr;

_Static_assert(sizeof(buf_hdr) <= RT__BUF_HDR, "header fits its slot");

static void *hdr_to_data(void *base, uint64_t map_len)
{
    buf_hdr *h = base;
    h->magic = BUF_MAGIC;
    h->map_len = map_len;
    return (char *)base + RT__BUF_HDR;
}

void *rt__buf_alloc(size_t len)
{
    void *base = rt__malloc(RT__BUF_HDR + len);
    return base ? hdr_to_data(base, 0) : NULL;
}

static void *map_shared(int fd, size_t len)
{
    size_t map_len = RT__BUF_HDR + len;
    void *base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return base == MAP_FAILED ? NULL : hdr_to_data(base, map_len);
}

int rt__shm_create(size_t len, void **data)
{
    int fd = memfd_create("rtask", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)(RT__BUF_HDR + len)) < 0 || !(*data = map_shared(fd, len))) {
        close(fd);
        return -1;
    }
    return fd;
}

int rt__shm_seal(int fd)
{
    /* The write seal fails while anyone maps it writable; the others
     * are what keeps the reader from SIGBUS. */
    (void)fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE);
    return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
}

void *rt__shm_open(int fd, size_t len, int writable)
{
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) < 0 ||
        (uint64_t)st.st_size < (uint64_t)RT__BUF_HDR + len || len > SIZE_MAX - RT__BUF_HDR) {
        errno = EPROTO;
        return NULL;
    }
    size_t map_len = RT__BUF_HDR + len;
    /* Private: writing the header that rt_free() reads copies one page. */
    void *base = mmap(NULL, map_len, writable ? PROT_READ | PROT_WRITE : PROT_READ,
                      MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED)
        return NULL;
    return writable ? hdr_to_data(base, map_len) : (char *)base + RT__BUF_HDR;
}

void rt__shm_unmap(void *data, size_t len)
{
    munmap((char *)data - RT__BUF_HDR, RT__BUF_HDR + len);
}

RT_EXPORT void rt_free(void *data)
{
    if (!data)
        return;
    buf_hdr *h = (buf_hdr *)((char *)data - RT__BUF_HDR);
    if (h->magic != BUF_MAGIC)
        return; /* not ours: leaking beats freeing a foreign pointer */
    h->magic = 0;
    if (h->map_len)
        munmap(h, h->map_len);
    else
        rt__free(h);
}

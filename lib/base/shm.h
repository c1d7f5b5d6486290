/*
 * shm.h - result and argument buffers, in the heap or in shared memory.
 *
 * Every buffer rtask hands out starts RT__BUF_HDR bytes after a small
 * header that says how to free it, so that rt_free() works on both kinds.
 * Payloads of RT__SHM_MIN bytes or more travel as a memfd: the producer
 * writes them in place and the consumer maps the same pages, so a 256 MiB
 * result is never copied through a socket.
 */
#ifndef RT_SHM_H
#define RT_SHM_H

#include <stddef.h>

#define RT__BUF_HDR 64
#define RT__SHM_MIN ((size_t)128 * 1024)

/* A heap buffer of len bytes (len may be 0); NULL when out of memory. */
void *rt__buf_alloc(size_t len);
/* A memfd sized for len bytes and mapped read-write; returns the fd (or
 * -1 with errno) and the data pointer in *data. */
int rt__shm_create(size_t len, void **data);
/* The producer, done writing and unmapped: seal the memfd so that its size
 * never changes again (and its bytes, where the kernel allows).  0 or -1. */
int rt__shm_seal(int fd);
/* The consumer: map a memfd that should hold len bytes.  It must be sealed
 * against shrinking and big enough, or a shrink later could kill the
 * reader with SIGBUS: NULL with errno EPROTO then.  A writable (private)
 * mapping is a buffer rt_free() can release. */
void *rt__shm_open(int fd, size_t len, int writable);
/* Unmap what rt__shm_create() or rt__shm_open() returned. */
void rt__shm_unmap(void *data, size_t len);

#endif

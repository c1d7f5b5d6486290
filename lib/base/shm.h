/*
 * shm.h - result and argument buffers, in the heap or in shared memory,
 * and the pool of shared memory kept for reuse.
 *
 * Every buffer rtask hands out starts RT__BUF_HDR bytes after a small
 * header that says how to free it, so that rt__buf_free() works on both kinds.
 * Payloads of RT__SHM_MIN bytes or more travel as a memfd: the producer
 * writes them in place and the consumer maps the same pages, so a 256 MiB
 * result is never copied through a socket.  The producer's mapping ends
 * in a guard page, and is dropped before the bytes are sent: from then
 * on nothing in its process writes them, and a reader sees what was sent.
 *
 * Fresh shared memory costs a page fault per page, several times what
 * writing the page costs.  So memfds whose buffers are freed go to a pool
 * (up to the bytes rt__shm_pool_open() allows) instead of being closed,
 * and rt__shm_create() takes one from there, mapped with its pages
 * already in place (MAP_POPULATE), when one is large enough.  A memfd
 * goes to the pool only when no other process maps it: one given to a
 * task to read is frozen first (rt__shm_freeze()), and the pool refuses
 * it, so reuse never writes what somebody reads; one a worker wrote goes
 * back to that worker alone (the owners below).  The pool is the
 * process's, behind its own lock: rt__buf_free() may run on any thread,
 * after rt_shutdown() too (then the memfd is closed).
 */
#ifndef RT_SHM_H
#define RT_SHM_H

#include <stddef.h>
#include <stdint.h>

#define RT__BUF_HDR 64
#define RT__SHM_MIN ((size_t)128 * 1024)

/* A heap buffer of len bytes (len may be 0); NULL when out of memory. */
void *rt__buf_alloc(size_t len);
/* Free what rt__buf_alloc or rt__shm_create made (rt_free(3)); NULL and
 * foreign pointers are left alone. */
void rt__buf_free(void *data);
/* A memfd for len bytes, from the pool or new, mapped read-write; returns
 * the fd (or -1 with errno) and the data pointer in *data. */
int rt__shm_create(size_t len, void **data);
/* The same, and *made set when the memfd is new: its pages do not exist
 * yet, and writing through the mapping makes them a fault each (a memfd
 * of the pool comes mapped with its pages). */
int rt__shm_create_made(size_t len, void **data, int *made);
/* Write n bytes at offset at of the bytes of memfd fd (rt__shm_create()'s)
 * with write(), not through its mapping: the kernel makes new pages
 * without a fault each.  0, or -1 with errno. */
int rt__shm_write_at(int fd, size_t at, const void *bytes, size_t n);
/* The producer, done writing and unmapped: seal the memfd so that its size
 * never changes again.  0 or -1 (a memfd from the pool is sealed already:
 * that is no error). */
int rt__shm_seal(int fd);
/* Whether fd is a memfd rt__shm_open() maps for len bytes: sealed
 * against shrinking, not against more seals (rt__shm_freeze() must be
 * able to add its own), and big enough.  0, or -1 with errno EPROTO. */
int rt__shm_fits(int fd, size_t len);
/* How rt__shm_open() maps a memfd: a view, which rt__shm_unmap() ends; a
 * view shared with the memfd, of one sealed against writes
 * (rt__shm_freeze()), which the kernel never lets anyone make writable
 * (NULL with errno EPERM when it is not sealed so, or when this kernel
 * would, which the first such view tries); or a buffer that owns fd,
 * its pages mapped at once for a caller that reads them all. */
typedef enum { RT__SHM_VIEW, RT__SHM_SEALED_VIEW, RT__SHM_BUFFER } rt__shm_mode;

/* The consumer: map a memfd that should hold len bytes.  It must be sealed
 * against shrinking and big enough, or a shrink later could kill the
 * reader with SIGBUS: NULL with errno EPROTO then.  A buffer (a private
 * mapping whose header is writable) owns fd from then on: rt__buf_free()
 * releases both (the memfd to the pool); the caller closes fd when it
 * fails. */
void *rt__shm_open(int fd, size_t len, rt__shm_mode mode);
/* The memfd a buffer of rt__shm_open() owns, or -1 (a heap buffer). */
int rt__shm_fd(const void *data);
/* Write a buffer's len bytes to fd (at its offset), from its mapping:
 * a memfd's is populated (rt__shm_open()), and write() from it took 2.9
 * ms for 16 MiB where sendfile() from the memfd took 4.4.  0, or -1
 * with errno. */
int rt__buf_write(int fd, const void *data, size_t len);
/* fd goes to another process, which reads it as an object: from now on
 * nothing writes its bytes, through any descriptor (one opened again
 * through /proc/<pid>/fd too, which a descriptor's mode does not stop)
 * or mapping made after (F_SEAL_FUTURE_WRITE); the pool never takes it
 * back, since that process may map it still.  0, or -1 with errno. */
int rt__shm_freeze(int fd);
/* Unmap what rt__shm_open() (not writable) returned. */
void rt__shm_unmap(void *data, size_t len);
/* The producer is done with the len bytes rt__shm_create() returned:
 * unmap them.  Not made read-only and kept for reuse: a shared mapping
 * of a memfd opened read-write can be made writable again (mprotect()),
 * so a later task in that process could change what others read.
 * Nothing of the mapping is read: a task may have shrunk the memfd
 * under it. */
void rt__shm_done(void *data, size_t len);
/* The producer is done writing the len bytes rt__shm_create() returned
 * in memfd fd (sealed, rt__shm_seal()), and keeps them: a buffer that
 * owns fd, as rt__shm_open()'s is, whose mapping stays writable.  Only
 * for a process that alone writes and reads them, and hands them to
 * tasks by their memfd (frozen then): a rank's copy of an object pulled
 * for its tasks; never in a worker. */
void *rt__shm_keep(void *data, size_t len, int fd);
/* A buffer of rt__shm_open() that others read too (a task's rt_get()):
 * close its memfd now, keeping the mapping.  While task code runs, the
 * process holds no descriptor of what others read, which it could open
 * again writable through /proc/self/fd whatever its mode. */
void rt__shm_disown(const void *data);

/* Keep freed memfds of up to bytes in all for reuse (0: none), or stop
 * and close those kept.  A memfd is given to the pool, or closed when it
 * is closed or full. */
void rt__shm_pool_open(size_t bytes);
void rt__shm_pool_close(void);
void rt__shm_pool_give(int fd);
/* A memfd of the pool that holds need bytes (and not twice as many),
 * one owner may take (see below), now the caller's; -1 when none. */
int rt__shm_pool_take(size_t need, uint64_t owner);

/* Whose memfds go back to whom.  A worker that held a memfd writable may
 * hold it still: its task can open the descriptor again through
 * /proc/self/fd and leave the copy with a child that outlives the task.
 * So a memfd that came from a worker (rt__shm_owned_by(), with the
 * worker's key, never 0) is taken from the pool by that worker alone
 * while it lives, and closed once it has ended: its bytes are never
 * another worker's result.  Memfds no worker held (owner 0) go to
 * anybody.  A new worker's key, never used before in the process (an
 * earlier runtime's worker may have had any other): */
uint64_t rt__shm_owner_new(void);
void rt__shm_owned_by(const void *data, uint64_t owner);
void rt__shm_owner_ended(uint64_t owner);
/* In a process just forked: what the pool held is not this process's
 * (the fork server closed those descriptors); start empty. */
void rt__shm_pool_forked(size_t bytes);

#endif

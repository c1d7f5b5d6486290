/*
 * wire.h - the buffered stream channel that carries messages between the
 * application, the fork server and the workers (what each message means
 * is proto.h's).
 *
 * Every message is a 32-byte header followed by `len` payload bytes
 * (padded to RT__MSG_ALIGN), or,
 * when descriptors travel with it (SCM_RIGHTS), by no payload: the bytes
 * then live in the first descriptor (a memfd, see shm.h).  One recv or
 * send moves many messages, so a burst of tasks costs one system call.
 */
#ifndef RT_WIRE_H
#define RT_WIRE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rt__hdr {
    uint32_t type;  /* rt__msg_type (proto.h) */
    uint32_t nfds;  /* descriptors that travel with this message (0..3) */
    uint64_t id;
    uint64_t word;
    uint64_t len;   /* payload bytes; with descriptors, the bytes they hold */
} rt__hdr;

#define RT__MSG_MAX_FDS 3
#define RT__MSG_ALIGN 16 /* payloads start aligned for any type */
/* The largest payload that travels inline; larger bytes go in a memfd.
 * A header that announces more breaks the protocol. */
#define RT__MSG_MAX_INLINE ((uint64_t)1 << 20)

/* One message as bytes, the form it has in a channel's buffers: its size
 * (header and padded payload; none with descriptors), writing it at dst,
 * and reading one from src's avail bytes: the message's size, 0 when it is
 * not all there, -1 when its header is corrupt (more than RT__MSG_MAX_FDS
 * descriptors, an inline payload over RT__MSG_MAX_INLINE). */
size_t rt__msg_size(const rt__hdr *h);
void rt__msg_write(char *dst, const rt__hdr *h, const void *payload);
long rt__msg_read(const char *src, size_t avail, rt__hdr *h, const char **payload);

/* A growable byte buffer consumed from the front. */
typedef struct rt__bytes {
    char *data;
    size_t head, tail, cap; /* unread bytes are data[head..tail) */
} rt__bytes;

/* A descriptor queue, in the order the descriptors crossed the socket. */
typedef struct rt__fdq {
    int *fd;
    size_t head, tail, cap;
} rt__fdq;

/* One end of a stream socket with its buffers.  The owner decides whether
 * the socket blocks; the functions work either way. */
typedef struct rt__chan {
    int fd;
    rt__bytes in, out;
    rt__fdq in_fds;   /* received, not yet claimed by a message */
    rt__fdq out_fds;  /* queued to go with the unsent output */
    size_t out_fd_at; /* output offset of the first queued descriptor's message */
} rt__chan;

void rt__chan_init(rt__chan *c, int fd);
/* Allocate the output's first buffer now, ahead of the first message
 * (a fresh process's heap grows with a fault).  0, or -1 without memory. */
int rt__chan_prepare(rt__chan *c);
/* Close the socket and every descriptor still queued; free the buffers. */
void rt__chan_close(rt__chan *c);

/* Queue a message; the channel takes ownership of fds (closed once sent).
 * Returns 0, or -1 when out of memory (the fds are closed then too). */
int rt__chan_put(rt__chan *c, const rt__hdr *h, const void *payload,
                 const int *fds);
/* Send queued output.  Returns 0 when all is sent, 1 when the socket is
 * full (non-blocking), -1 on error with errno set. */
int rt__chan_flush(rt__chan *c);
/* One receive into the input buffer.  Returns the byte count, 0 at end of
 * file, -1 on error (errno EAGAIN when a non-blocking socket is empty). */
long rt__chan_fill(rt__chan *c);
/* Take the next complete message: 1 and the header, payload (valid until
 * the next fill) and its descriptors (now the caller's); 0 when none is
 * complete; -1 when the stream is corrupt: more than RT__MSG_MAX_FDS
 * descriptors, an inline payload over RT__MSG_MAX_INLINE, or descriptors
 * announced that did not arrive before the header. */
int rt__chan_next(rt__chan *c, rt__hdr *h, const char **payload, int *fds);
/* Bytes of output not yet sent. */
size_t rt__chan_unsent(const rt__chan *c);
/* The output not yet sent, rt__chan_unsent() bytes, when no descriptor
 * goes with it (else NULL), for a way other than the socket (inbox.h);
 * rt__chan_sent_elsewhere() then drops it. */
const char *rt__chan_unsent_bytes(const rt__chan *c);
void rt__chan_sent_elsewhere(rt__chan *c);
/* Bytes received that no message taken yet holds. */
size_t rt__chan_unread(const rt__chan *c);

#endif

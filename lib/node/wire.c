/* wire.c - the buffered channel that carries messages and descriptors. */
#include "wire.h"

#include "base/alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RECV_CHUNK (256 * 1024)
#define FDS_PER_SEND 64 /* well below the kernel's SCM_MAX_FD (253) */

static int bytes_reserve(rt__bytes *b, size_t extra)
{
    if (b->cap - b->tail >= extra)
        return 0;
    if (b->head > 0) { /* slide the unread bytes down before growing */
        memmove(b->data, b->data + b->head, b->tail - b->head);
        b->tail -= b->head;
        b->head = 0;
        if (b->cap - b->tail >= extra)
            return 0;
    }
    return rt__reserve(&b->data, &b->cap, b->tail, extra, 4096);
}

static int fdq_push(rt__fdq *q, int fd)
{
    if (q->tail == q->cap) {
        if (q->head > 0) {
            memmove(q->fd, q->fd + q->head, (q->tail - q->head) * sizeof(int));
            q->tail -= q->head;
            q->head = 0;
        } else {
            size_t cap = q->cap ? q->cap * 2 : 8;
            int *p = rt__realloc(q->fd, cap * sizeof(int));
            if (!p)
                return -1;
            q->fd = p;
            q->cap = cap;
        }
    }
    q->fd[q->tail++] = fd;
    return 0;
}

static size_t fdq_len(const rt__fdq *q)
{
    return q->tail - q->head;
}

static void fdq_close_all(rt__fdq *q)
{
    while (q->head < q->tail)
        close(q->fd[q->head++]);
    rt__free(q->fd);
    memset(q, 0, sizeof *q);
}

void rt__chan_init(rt__chan *c, int fd)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
}

int rt__chan_prepare(rt__chan *c)
{
    return bytes_reserve(&c->out, 1);
}

void rt__chan_close(rt__chan *c)
{
    if (c->fd >= 0)
        close(c->fd);
    fdq_close_all(&c->in_fds);
    fdq_close_all(&c->out_fds);
    rt__free(c->in.data);
    rt__free(c->out.data);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

/* Payloads are padded so that every header, and so every payload, starts
 * aligned for any type in the peer's buffer: a task reads its argument in
 * place. */
_Static_assert(sizeof(rt__hdr) % RT__MSG_ALIGN == 0, "headers keep payloads aligned");

static size_t padded(const rt__hdr *h)
{
    size_t n = h->nfds ? 0 : h->len;
    return (n + RT__MSG_ALIGN - 1) & ~(size_t)(RT__MSG_ALIGN - 1);
}

size_t rt__msg_size(const rt__hdr *h)
{
    return sizeof *h + padded(h);
}

void rt__msg_write(char *dst, const rt__hdr *h, const void *payload)
{
    size_t n = h->nfds ? 0 : h->len, total = rt__msg_size(h);
    memcpy(dst, h, sizeof *h);
    if (n)
        memcpy(dst + sizeof *h, payload, n);
    memset(dst + sizeof *h + n, 0, total - sizeof *h - n);
}

long rt__msg_read(const char *src, size_t avail, rt__hdr *h, const char **payload)
{
    if (avail < sizeof *h)
        return 0;
    memcpy(h, src, sizeof *h);
    /* Checked before any arithmetic on them. */
    if (h->nfds > RT__MSG_MAX_FDS || (!h->nfds && h->len > RT__MSG_MAX_INLINE))
        return -1;
    size_t total = rt__msg_size(h);
    if (avail < total)
        return 0;
    *payload = src + sizeof *h;
    return (long)total;
}

int rt__chan_put(rt__chan *c, const rt__hdr *h, const void *payload,
                 const int *fds)
{
    size_t total = rt__msg_size(h);
    if (bytes_reserve(&c->out, total) < 0)
        goto fail;
    /* A descriptor must reach the peer no later than its header.  The
     * kernel attaches SCM_RIGHTS to the first byte of a send, so flush
     * sends a message's descriptors with the send that starts at or
     * before that message; remembering where the first one waits is
     * enough because they go out in order. */
    if (h->nfds && fdq_len(&c->out_fds) == 0)
        c->out_fd_at = c->out.tail;
    for (uint32_t i = 0; i < h->nfds; i++) {
        if (fdq_push(&c->out_fds, fds[i]) < 0) {
            c->out_fds.tail -= i; /* no header will follow them */
            goto fail;
        }
    }
    rt__msg_write(c->out.data + c->out.tail, h, payload);
    c->out.tail += total;
    return 0;
fail:
    for (uint32_t i = 0; i < h->nfds; i++)
        close(fds[i]);
    return -1;
}

size_t rt__chan_unsent(const rt__chan *c)
{
    return c->out.tail - c->out.head;
}

const char *rt__chan_unsent_bytes(const rt__chan *c)
{
    return fdq_len(&c->out_fds) ? NULL : c->out.data + c->out.head;
}

void rt__chan_sent_elsewhere(rt__chan *c)
{
    c->out.head = c->out.tail = 0;
}

size_t rt__chan_unread(const rt__chan *c)
{
    return c->in.tail - c->in.head;
}

/* Send once, attaching every queued descriptor whose message starts in
 * the range sent; returns what sendmsg returns. */
static long send_some(rt__chan *c)
{
    struct iovec iov = {c->out.data + c->out.head, rt__chan_unsent(c)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    union {
        char buf[CMSG_SPACE(FDS_PER_SEND * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    size_t nfd = fdq_len(&c->out_fds);
    if (nfd && c->out_fd_at > c->out.head) {
        iov.iov_len = c->out_fd_at - c->out.head; /* the bytes before it first */
        nfd = 0;
    } else if (nfd > FDS_PER_SEND) {
        /* Send one byte with as many as fit, so that the rest go with the
         * next send, which still starts before their headers. */
        nfd = FDS_PER_SEND;
        iov.iov_len = 1;
    }
    if (nfd) {
        memset(&ctl, 0, sizeof ctl);
        m.msg_control = ctl.buf;
        m.msg_controllen = CMSG_SPACE(nfd * sizeof(int));
        struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(nfd * sizeof(int));
        memcpy(CMSG_DATA(cm), c->out_fds.fd + c->out_fds.head, nfd * sizeof(int));
    }
    long sent = sendmsg(c->fd, &m, MSG_NOSIGNAL);
    if (sent > 0 && nfd) {
        for (size_t i = 0; i < nfd; i++)
            close(c->out_fds.fd[c->out_fds.head++]);
        /* Later descriptors may belong to messages inside this range;
         * they go with the next send, still before their headers. */
        c->out_fd_at = c->out.head + (size_t)sent;
    }
    return sent;
}

int rt__chan_flush(rt__chan *c)
{
    while (rt__chan_unsent(c) > 0) {
        long sent = send_some(c);
        if (sent < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN ? 1 : -1;
        }
        c->out.head += (size_t)sent;
    }
    c->out.head = c->out.tail = 0;
    return 0;
}

long rt__chan_fill(rt__chan *c)
{
    if (bytes_reserve(&c->in, RECV_CHUNK) < 0) {
        errno = ENOMEM;
        return -1;
    }
    struct iovec iov = {c->in.data + c->in.tail, c->in.cap - c->in.tail};
    union {
        char buf[CMSG_SPACE(FDS_PER_SEND * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    long got;
    do
        got = recvmsg(c->fd, &m, MSG_CMSG_CLOEXEC);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int *fds = (int *)CMSG_DATA(cm);
        for (size_t i = 0; i < n; i++)
            if (fdq_push(&c->in_fds, fds[i]) < 0)
                close(fds[i]);
    }
    if (m.msg_flags & MSG_CTRUNC) {
        errno = EPROTO;
        return -1;
    }
    c->in.tail += (size_t)got;
    return got;
}

int rt__chan_next(rt__chan *c, rt__hdr *h, const char **payload, int *fds)
{
    size_t avail = c->in.tail - c->in.head;
    if (avail < sizeof *h)
        return 0; /* and in.data may still be NULL */
    long total = rt__msg_read(c->in.data + c->in.head, avail, h, payload);
    if (total <= 0)
        return (int)total;
    if (fdq_len(&c->in_fds) < h->nfds)
        return -1; /* descriptors always arrive before their header */
    for (uint32_t i = 0; i < h->nfds; i++)
        fds[i] = c->in_fds.fd[c->in_fds.head++];
    c->in.head += (size_t)total;
    if (c->in.head == c->in.tail)
        c->in.head = c->in.tail = 0;
    return 1;
}

/* proto.c - encoding and decoding of every message. */
#include "proto.h"

#include "base/alloc.h"
#include "base/shm.h"
#include "devices/resources.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The word of a RESULT: the status in the low 32 bits, or an errno when
 * SYSFAIL says the worker failed, not the task; BOUNCED when it did not
 * run it; above TIME_SHIFT, the run time in microseconds. */
#define RESULT_SYSFAIL (1ULL << 32)
#define RESULT_BOUNCED (1ULL << 33)
#define RESULT_TIME_SHIFT 34
#define RESULT_TIME_MAX ((1ULL << 30) - 1)

/* The word of a task: the function's address, and above TASK_ATTEMPT_SHIFT
 * (no user-space address reaches so high) which run of the task this is. */
#define TASK_ATTEMPT_SHIFT 56
#define TASK_FN_MASK ((1ULL << TASK_ATTEMPT_SHIFT) - 1)

static uint64_t task_word(const rt__task_msg *m)
{
    uint64_t attempt = m->attempt < RT__ATTEMPT_MAX ? m->attempt : RT__ATTEMPT_MAX;
    return (m->fn & TASK_FN_MASK) | attempt << TASK_ATTEMPT_SHIFT;
}

const char *rt__msg_name(uint32_t type)
{
    static const char *const names[RT__MSG_TYPES] = {
        [RT__MSG_TASK] = "TASK",       [RT__MSG_NAME] = "NAME",
        [RT__MSG_RESULT] = "RESULT",   [RT__MSG_SPAWN] = "SPAWN",
        [RT__MSG_SPAWNED] = "SPAWNED", [RT__MSG_SPAWN_FAILED] = "SPAWN_FAILED",
        [RT__MSG_EXITED] = "EXITED",   [RT__MSG_DEVICES] = "DEVICES",
        [RT__MSG_ENV] = "ENV",
        [RT__MSG_ACTOR] = "ACTOR",     [RT__MSG_CREATE] = "CREATE",
        [RT__MSG_CALL] = "CALL",       [RT__MSG_ARG] = "ARG",
        [RT__MSG_TASK_ARGS] = "TASK_ARGS", [RT__MSG_CALL_ARGS] = "CALL_ARGS",
        [RT__MSG_SPARE] = "SPARE",     [RT__MSG_POST] = "POST",
        [RT__MSG_LAST] = "LAST",       [RT__MSG_RESULTS] = "RESULTS",
        [RT__MSG_WAKE] = "WAKE",
    };
    return type < RT__MSG_TYPES && names[type] ? names[type] : "unknown";
}

/* Bytes that go inline, or in a memfd the channel will own. */
static int put_bytes(rt__chan *c, rt__hdr *h, const void *data, int fd)
{
    if (fd < 0)
        return rt__chan_put(c, h, data, NULL);
    h->nfds = 1;
    return rt__chan_put(c, h, NULL, &fd);
}

/* ---- several results as one (RESULTS) ------------------------------------------ */

size_t rt__parts_size(const rt_value *parts, size_t n)
{
    size_t size = 8 * (n + 1);
    for (size_t i = 0; i < n; i++) {
        if (parts[i].len > SIZE_MAX - size)
            return 0;
        size += parts[i].len;
    }
    return size;
}

void rt__parts_write(char *dst, const rt_value *parts, size_t n)
{
    uint64_t word = n;
    memcpy(dst, &word, 8);
    char *bytes = dst + 8 * (n + 1);
    for (size_t i = 0; i < n; i++) {
        word = parts[i].len;
        memcpy(dst + 8 * (i + 1), &word, 8);
        if (parts[i].len)
            memcpy(bytes, parts[i].data, parts[i].len);
        bytes += parts[i].len;
    }
}

int rt__parts_read(const void *src, size_t len, rt_value *out, size_t *n)
{
    const char *at = src;
    uint64_t count, each;
    if (len < 8 || (memcpy(&count, at, 8), count == 0) || count > RT_RETURNS_MAX ||
        len < 8 * (count + 1))
        return -1;
    size_t left = len - 8 * (count + 1);
    const char *bytes = at + 8 * (count + 1);
    for (uint64_t i = 0; i < count; i++) {
        memcpy(&each, at + 8 * (i + 1), 8);
        if (each > left)
            return -1;
        out[i] = (rt_value){bytes, (size_t)each};
        bytes += each;
        left -= (size_t)each;
    }
    *n = (size_t)count;
    return left == 0 ? 0 : -1;
}

/* ---- the argument table ----------------------------------------------------- */

#define ARG_MAPPED (1ULL << 63)
#define ARG_BOARD (1ULL << 62)

static size_t pad16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

static int goes_mapped(const rt__arg_msg *a, int by_fd)
{
    return !a->board && a->fd >= 0 && (by_fd || !a->data);
}

size_t rt__args_size(const rt__arg_msg *args, size_t n, int by_fd)
{
    size_t size = pad16(8 + 8 * n);
    for (size_t i = 0; i < n; i++)
        size += goes_mapped(&args[i], by_fd) ? 0
                : pad16(args[i].board ? sizeof args[i].seq : args[i].len);
    return size;
}

void rt__args_write(char *dst, const rt__arg_msg *args, size_t n, int by_fd)
{
    uint64_t count = n;
    memcpy(dst, &count, 8);
    char *bytes = dst + pad16(8 + 8 * n);
    memset(dst + 8 + 8 * n, 0, pad16(8 + 8 * n) - (8 + 8 * n)); /* every byte sent is set */
    for (size_t i = 0; i < n; i++) {
        int mapped = goes_mapped(&args[i], by_fd);
        uint64_t entry = args[i].board ? ARG_BOARD | sizeof args[i].seq
                                       : args[i].len | (mapped ? ARG_MAPPED : 0);
        memcpy(dst + 8 + 8 * i, &entry, 8);
        if (mapped)
            continue;
        size_t len = args[i].board ? sizeof args[i].seq : args[i].len;
        if (len)
            memcpy(bytes, args[i].board ? (const void *)&args[i].seq : args[i].data, len);
        memset(bytes + len, 0, pad16(len) - len);
        bytes += pad16(len);
    }
}

int rt__args_read(const char *table, size_t len, const rt_value *mapped, size_t nmapped,
                  rt_value *out, unsigned char *board, size_t *n)
{
    uint64_t count;
    if (len < 8)
        return -1;
    memcpy(&count, table, 8);
    if (count > RT_ARGS_MAX || len < pad16(8 + 8 * count))
        return -1;
    size_t at = pad16(8 + 8 * count), used = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t entry;
        memcpy(&entry, table + 8 + 8 * i, 8);
        uint64_t bytes = entry & ~(ARG_MAPPED | ARG_BOARD);
        if (board)
            board[i] = (entry & ARG_BOARD) != 0;
        if ((entry & ARG_BOARD) && (!board || (entry & ARG_MAPPED) || bytes != 8))
            return -1;
        if (entry & ARG_MAPPED) {
            if (used == nmapped || (mapped && mapped[used].len != bytes))
                return -1;
            out[i] = mapped ? mapped[used] : (rt_value){NULL, (size_t)bytes};
            used++;
            continue;
        }
        if (bytes > len - at || pad16(bytes) > len - at)
            return -1;
        out[i] = (rt_value){table + at, (size_t)bytes};
        at += pad16(bytes);
    }
    *n = (size_t)count;
    return used == nmapped ? 0 : -1;
}

/* ---- sending ---------------------------------------------------------------- */

/* What a worker maps and others read: frozen (shm.h), then a copy goes,
 * since the record keeps its memfd for a retry on another worker. */
static int reader_copy(int fd)
{
    return rt__shm_freeze(fd) == 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
}

/* The table, made first (what can fail for lack of memory, before a
 * message is queued), inline or in a memfd of its own when large; then
 * each argument in a memfd as an ARG, then the task with the table. */
static int send_args(rt__chan *c, const rt__task_msg *m)
{
    size_t size = rt__args_size(m->args, m->nargs, m->by_fd);
    rt__hdr h = {.type = m->type, .id = m->id, .word = task_word(m), .len = size};
    void *table;
    int fd = -1;
    if (size >= RT__SHM_MIN) {
        if ((fd = rt__shm_create(size, &table)) < 0)
            return -1;
    } else if (!(table = rt__malloc(size))) {
        return -1;
    }
    rt__args_write(table, m->args, m->nargs, m->by_fd);
    if (fd >= 0) {
        rt__shm_done(table, size);
        table = NULL;
        if (rt__shm_seal(fd) < 0) {
            close(fd);
            return -1;
        }
    }
    int rc = 0;
    for (size_t i = 0; i < m->nargs && rc == 0; i++) {
        if (!goes_mapped(&m->args[i], m->by_fd))
            continue;
        rt__hdr a = {.type = RT__MSG_ARG, .len = m->args[i].len};
        int copy = reader_copy(m->args[i].fd);
        rc = copy < 0 ? -1 : put_bytes(c, &a, NULL, copy);
    }
    if (rc == 0)
        rc = put_bytes(c, &h, table, fd);
    else if (fd >= 0)
        close(fd);
    rt__free(table);
    return rc;
}

int rt__proto_send_task(rt__chan *c, const rt__task_msg *m)
{
    if (m->args)
        return send_args(c, m);
    rt__hdr h = {.type = m->type, .id = m->id, .word = task_word(m), .len = m->len};
    int fd = m->arg_fd >= 0 ? reader_copy(m->arg_fd) : -1;
    if (m->arg_fd >= 0 && fd < 0)
        return -1;
    return put_bytes(c, &h, m->arg, fd);
}

/* A message whose payload is text (NULL: none). */
static int send_text(rt__chan *c, uint32_t type, const char *text, uint64_t word)
{
    rt__hdr h = {.type = type, .len = text ? strlen(text) : 0, .word = word};
    return rt__chan_put(c, &h, text, NULL);
}

int rt__proto_send_name(rt__chan *c, const char *name, int labelled)
{
    return send_text(c, RT__MSG_NAME, name, labelled != 0);
}

int rt__proto_send_env(rt__chan *c, const char *vars)
{
    return send_text(c, RT__MSG_ENV, vars, 0);
}

int rt__proto_send_devices(rt__chan *c, const char *text)
{
    rt__hdr h = {.type = RT__MSG_DEVICES, .len = strlen(text)};
    return rt__chan_put(c, &h, text, NULL);
}

int rt__proto_send_actor(rt__chan *c, uint64_t handle, uint64_t fini, uint64_t concurrency)
{
    rt__hdr h = {.type = RT__MSG_ACTOR, .id = handle, .word = fini, .len = sizeof concurrency};
    return rt__chan_put(c, &h, &concurrency, NULL);
}

static rt__hdr result_header(const rt__result_msg *r)
{
    uint64_t us = r->run_us > RESULT_TIME_MAX ? RESULT_TIME_MAX : r->run_us;
    uint64_t word = r->sys_errno ? RESULT_SYSFAIL | (uint32_t)r->sys_errno
                                 : (uint32_t)r->status;
    if (r->bounced)
        word |= RESULT_BOUNCED;
    return (rt__hdr){.type = r->packed ? RT__MSG_RESULTS : RT__MSG_RESULT, .id = r->id,
                     .word = word | us << RESULT_TIME_SHIFT, .len = r->len};
}

int rt__proto_send_result(rt__chan *c, const rt__result_msg *r)
{
    rt__hdr h = result_header(r);
    return put_bytes(c, &h, r->data, r->fd);
}

size_t rt__proto_write_result(char *dst, size_t room, const rt__result_msg *r)
{
    rt__hdr h = result_header(r);
    size_t size = rt__msg_size(&h);
    if (r->fd >= 0 || size > room)
        return 0;
    rt__msg_write(dst, &h, r->data);
    return size;
}

int rt__proto_send_spare(rt__chan *c, int fd)
{
    rt__hdr h = {.type = RT__MSG_SPARE};
    return put_bytes(c, &h, NULL, fd);
}

int rt__proto_send_post(rt__chan *c, uint64_t seq)
{
    rt__hdr h = {.type = RT__MSG_POST, .id = seq};
    return rt__chan_put(c, &h, NULL, NULL);
}

int rt__proto_send_last(rt__chan *c)
{
    rt__hdr h = {.type = RT__MSG_LAST};
    return rt__chan_put(c, &h, NULL, NULL);
}

int rt__proto_send_wake(rt__chan *c)
{
    rt__hdr h = {.type = RT__MSG_WAKE};
    return rt__chan_put(c, &h, NULL, NULL);
}

int rt__proto_send_spawn(rt__chan *c, uint64_t key, uint64_t slot, int fds[3])
{
    rt__hdr h = {.type = RT__MSG_SPAWN, .nfds = 3, .id = key, .word = slot};
    return rt__chan_put(c, &h, NULL, fds);
}

int rt__proto_send_notice(rt__chan *c, uint32_t type, uint64_t id, uint64_t word)
{
    rt__hdr h = {.type = type, .id = id, .word = word};
    return rt__chan_put(c, &h, NULL, NULL);
}

/* ---- receiving ----------------------------------------------------------- */

static int refuse(const rt__hdr *h, const int *fds)
{
    for (uint32_t i = 0; i < h->nfds; i++)
        close(fds[i]);
    return -1;
}

int rt__proto_read_task(const rt__hdr *h, const char *payload, const int *fds,
                        rt__task_msg *m)
{
    int is_task = h->type == RT__MSG_TASK || h->type == RT__MSG_CREATE ||
                  h->type == RT__MSG_CALL || h->type == RT__MSG_TASK_ARGS ||
                  h->type == RT__MSG_CALL_ARGS;
    uint64_t fn = h->word & TASK_FN_MASK;
    if (!is_task || h->nfds > 1 || (fn == 0 && h->type != RT__MSG_CREATE))
        return refuse(h, fds);
    *m = (rt__task_msg){.type = h->type, .id = h->id, .fn = fn,
                        .attempt = (unsigned)(h->word >> TASK_ATTEMPT_SHIFT),
                        .arg = h->nfds ? NULL : payload, .len = (size_t)h->len,
                        .arg_fd = h->nfds ? fds[0] : -1};
    return 0;
}

int rt__proto_read_arg(const rt__hdr *h, const int *fds, int *fd, size_t *len)
{
    if ((h->type != RT__MSG_ARG && h->type != RT__MSG_SPARE) || h->nfds != 1)
        return refuse(h, fds);
    *fd = fds[0];
    *len = (size_t)h->len;
    return 0;
}

int rt__proto_read_result(const rt__hdr *h, const char *payload, const int *fds,
                          rt__result_msg *r)
{
    if ((h->type != RT__MSG_RESULT && h->type != RT__MSG_RESULTS) || h->nfds > 1)
        return refuse(h, fds);
    int sysfail = (h->word & RESULT_SYSFAIL) != 0;
    *r = (rt__result_msg){.id = h->id, .run_us = h->word >> RESULT_TIME_SHIFT,
                          .status = sysfail ? 0 : (int)(uint32_t)h->word,
                          .sys_errno = sysfail ? (int)(uint32_t)h->word : 0,
                          .bounced = (h->word & RESULT_BOUNCED) != 0,
                          .packed = h->type == RT__MSG_RESULTS,
                          .data = h->nfds ? NULL : payload, .len = (size_t)h->len,
                          .fd = h->nfds ? fds[0] : -1};
    if (sysfail && r->sys_errno == 0)
        r->sys_errno = EPROTO;
    return 0;
}

int rt__proto_read_devices(const rt__hdr *h, const char *payload,
                           rt__devices *d, char **copy)
{
    if (h->type != RT__MSG_DEVICES || h->nfds)
        return -1;
    return rt__devices_decode(payload, (size_t)h->len, d, copy);
}

/* ---- the devices' text ------------------------------------------------------- */

char *rt__devices_encode(const rt__devices *d)
{
    const char *field[6] = {d->gpus, d->accel, d->cpus, d->memory, d->accel_name, d->env};
    size_t len = 32;
    for (int i = 0; i < 6; i++)
        len += strlen(field[i]) + 1;
    char *text = rt__malloc(len);
    if (text)
        snprintf(text, len, "%s\n%s\n%s\n%ld\n%s\n%s\n%s", d->gpus, d->accel, d->cpus,
                 d->share, d->memory, d->accel_name, d->env);
    return text;
}

int rt__devices_decode(const char *text, size_t len, rt__devices *d, char **copy)
{
    char *buf = rt__strndup(text, len), *line[7] = {buf};
    if (!buf)
        return -1;
    for (int i = 1; i < 7; i++) {
        char *nl = strchr(line[i - 1], '\n');
        if (!nl) {
            rt__free(buf);
            return -1;
        }
        *nl = '\0';
        line[i] = nl + 1;
    }
    char *end;
    errno = 0;
    long share = strtol(line[3], &end, 10);
    if (errno || end == line[3] || *end || share < 0 || share > RT__UNIT) {
        rt__free(buf);
        return -1;
    }
    *d = (rt__devices){line[0], line[1], line[2], share, line[4], line[5], line[6]};
    *copy = buf;
    return 0;
}

int rt__devices_same(const rt__devices *a, const rt__devices *b)
{
    return a->share == b->share && strcmp(a->gpus, b->gpus) == 0 &&
           strcmp(a->accel, b->accel) == 0 && strcmp(a->cpus, b->cpus) == 0 &&
           strcmp(a->memory, b->memory) == 0;
}

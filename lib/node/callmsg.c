/* callmsg.c - encoding and decoding of the calls a task makes. */
#include "callmsg.h"

#include "base/alloc.h"
#include "base/linger.h"
#include "base/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

/* The id of a REPLY: the return code in the low 32 bits; REPLY_OBJECT
 * says that the memfd it carries is the object's bytes alone. */
#define REPLY_OBJECT (1ULL << 32)

const char *rt__callmsg_name(uint32_t type)
{
    static const char *const names[RT__CALL_TYPES] = {
        [RT__CALL_SUBMIT] = "SUBMIT", [RT__CALL_PUT] = "PUT",
        [RT__CALL_GET] = "GET",       [RT__CALL_WAIT] = "WAIT",
        [RT__CALL_CANCEL] = "CANCEL", [RT__CALL_RELEASE] = "RELEASE",
        [RT__CALL_KILL] = "KILL",     [RT__CALL_END] = "END",
        [RT__CALL_YIELD] = "YIELD",   [RT__CALL_ACTOR_GET] = "ACTOR_GET",
        [RT__CALL_STREAM_NEXT] = "STREAM_NEXT", [RT__CALL_PG_CREATE] = "PG_CREATE",
        [RT__CALL_PG_WAIT] = "PG_WAIT", [RT__CALL_PG_REMOVE] = "PG_REMOVE",
        [RT__CALL_REPLY] = "REPLY",   [RT__CALL_RUN] = "RUN",
        [RT__CALL_PUT_HELD] = "PUT_HELD", [RT__CALL_HELD_AT] = "HELD_AT",
        [RT__CALL_INSIDE] = "INSIDE",
        [RT__CALL_RAN] = "RAN",
    };
    return type < RT__CALL_TYPES && names[type] ? names[type] : "unknown";
}

/* ---- a payload, built and read in 8-byte steps ------------------------------------ */

typedef struct pack {
    char *data;
    size_t len, cap;
    int failed;
} pack;

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static void put_raw(pack *p, const void *src, size_t n)
{
    if (p->failed || rt__reserve(&p->data, &p->cap, p->len, pad8(n), 256) < 0) {
        p->failed = 1;
        return;
    }
    if (n)
        memcpy(p->data + p->len, src, n);
    memset(p->data + p->len + n, 0, pad8(n) - n); /* every byte sent is set */
    p->len += pad8(n);
}

static void put_u64(pack *p, uint64_t v)
{
    put_raw(p, &v, 8);
}

static void put_f64(pack *p, double v)
{
    put_raw(p, &v, 8);
}

/* Bytes with their length; NULL (a string not given) is UINT64_MAX. */
static void put_blob(pack *p, const void *data, size_t len)
{
    put_u64(p, data ? len : UINT64_MAX);
    if (data)
        put_raw(p, data, len);
}

static void put_str(pack *p, const char *s)
{
    put_blob(p, s, s ? strlen(s) + 1 : 0);
}

typedef struct unpack {
    const char *at;
    size_t left;
    int bad;
} unpack;

static const void *get_raw(unpack *u, size_t n)
{
    if (u->bad || n > u->left || pad8(n) > u->left) {
        u->bad = 1;
        return NULL;
    }
    const void *at = u->at;
    u->at += pad8(n);
    u->left -= pad8(n);
    return at;
}

static uint64_t get_u64(unpack *u)
{
    uint64_t v = 0;
    const void *at = get_raw(u, 8);
    if (at)
        memcpy(&v, at, 8);
    return v;
}

static double get_f64(unpack *u)
{
    uint64_t bits = get_u64(u);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* *len bytes, or NULL: not given (or the payload is short: u->bad). */
static const void *get_blob(unpack *u, size_t *len)
{
    uint64_t n = get_u64(u);
    *len = 0;
    if (n == UINT64_MAX || u->bad)
        return NULL;
    *len = (size_t)n;
    return get_raw(u, (size_t)n);
}

/* A string given must end with its NUL, where it says. */
static const char *get_str(unpack *u)
{
    size_t len;
    const char *s = get_blob(u, &len);
    if (s && (len == 0 || s[len - 1] != '\0' || strlen(s) != len - 1)) {
        u->bad = 1;
        return NULL;
    }
    return s;
}

/* ---- sending ------------------------------------------------------------------------ */

int rt__callmsg_put(rt__chan *c, uint32_t type, uint64_t id, uint64_t word,
                    const void *payload, size_t len)
{
    rt__hdr h = {.type = type, .id = id, .word = word, .len = len};
    int object = type == RT__CALL_REPLY && (id & REPLY_OBJECT); /* a frame relayed */
    if (len <= RT__MSG_MAX_INLINE && !object)
        return rt__chan_put(c, &h, payload, NULL);
    void *data;
    int fd = rt__shm_create(len, &data);
    if (fd < 0)
        return -1;
    memcpy(data, payload, len);
    rt__shm_done(data, len);
    rt__shm_seal(fd); /* an unsealed one is refused by the reader */
    h.nfds = 1;
    return rt__chan_put(c, &h, NULL, &fd);
}

/* A field added to rt_opts must be carried here too (on LP64, where the
 * size is known; the last int, nondeterministic, fills what was padding:
 * offsetof says so). */
_Static_assert(sizeof(void *) != 8 || offsetof(rt_opts, nondeterministic) == 140,
               "put_opts() and read_opts() carry every field of rt_opts");
_Static_assert(sizeof(void *) != 8 || sizeof(rt_opts) == 144,
               "put_opts() and read_opts() carry every field of rt_opts");

static void put_opts(pack *p, const rt_opts *o)
{
    put_u64(p, o != NULL);
    if (!o)
        return;
    put_u64(p, (uint64_t)(uint32_t)o->init_magic_);
    put_str(p, o->name);
    put_f64(p, o->num_cpus);
    put_f64(p, o->num_gpus);
    put_u64(p, (uint64_t)(int64_t)o->max_calls);
    put_u64(p, (uint64_t)(int64_t)o->max_retries);
    put_u64(p, (uint64_t)(int64_t)o->max_restarts);
    put_str(p, o->resources);
    put_str(p, o->accelerator_type);
    put_u64(p, o->gpu_memory);
    put_u64(p, (uint64_t)(int64_t)o->timeout_ms);
    put_u64(p, (uint64_t)(int64_t)o->retry_exceptions);
    put_u64(p, (uint64_t)(int64_t)o->max_task_retries);
    put_u64(p, (uint64_t)(int64_t)o->max_concurrency);
    put_str(p, o->label_selector);
    put_u64(p, o->placement_group.id);
    put_u64(p, (uint64_t)(int64_t)o->bundle_index);
    put_str(p, o->env_vars);
    put_u64(p, (uint64_t)(int64_t)o->get_if_exists);
    put_u64(p, (uint64_t)(int64_t)o->detached);
    put_u64(p, (uint64_t)(int64_t)o->num_returns);
    put_u64(p, (uint64_t)(int64_t)o->nondeterministic);
}

int rt__callmsg_put_submission(rt__chan *c, uint64_t task, const rt__submission *s)
{
    pack p = {0};
    put_u64(&p, (uint64_t)s->form);
    put_u64(&p, s->fn);
    put_u64(&p, s->actor);
    if (s->form == RT__SUBMIT_CREATE)
        put_str(&p, s->class_name ? s->class_name : "");
    put_opts(&p, s->opts);
    put_u64(&p, s->nargs);
    for (size_t i = 0; i < s->nargs; i++) {
        put_u64(&p, s->args[i].ref.id);
        if (!s->args[i].ref.id)
            put_blob(&p, s->args[i].data ? s->args[i].data : "", s->args[i].len);
    }
    int rc = p.failed ? -1 : rt__callmsg_put(c, RT__CALL_SUBMIT, s->id, task, p.data, p.len);
    rt__free(p.data);
    return rc;
}

int rt__callmsg_put_group(rt__chan *c, uint64_t task, const rt_bundle *bundles, size_t n,
                          int strategy)
{
    pack p = {0};
    put_u64(&p, (uint64_t)(int64_t)strategy);
    put_u64(&p, n);
    for (size_t i = 0; i < n; i++) {
        put_f64(&p, bundles[i].num_cpus);
        put_f64(&p, bundles[i].num_gpus);
        put_str(&p, bundles[i].resources);
        put_str(&p, bundles[i].label_selector);
    }
    int rc = p.failed ? -1 : rt__callmsg_put(c, RT__CALL_PG_CREATE, 0, task, p.data, p.len);
    rt__free(p.data);
    return rc;
}

int rt__callmsg_put_reply(rt__chan *c, int rc, uint64_t value, const char *message,
                          const void *data, size_t len, int fd)
{
    uint64_t id = (uint32_t)rc;
    if (fd >= 0) {
        rt__hdr h = {.type = RT__CALL_REPLY, .id = id | REPLY_OBJECT, .word = value,
                     .len = len, .nfds = 1};
        return rt__chan_put(c, &h, NULL, &fd);
    }
    pack p = {0};
    put_str(&p, message ? message : "");
    put_blob(&p, data ? data : "", len);
    int out = p.failed ? -1 : rt__callmsg_put(c, RT__CALL_REPLY, id, value, p.data, p.len);
    rt__free(p.data);
    return out;
}

int rt__callmsg_put_object(rt__chan *c, int rc, const char *message, const void *data,
                           size_t len)
{
    int fd = rc == 0 && data ? rt__shm_fd(data) : -1;
    if (fd >= 0 && rt__shm_freeze(fd) == 0 && (fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) >= 0)
        return rt__callmsg_put_reply(c, rc, 0, message, NULL, len, fd);
    return rt__callmsg_put_reply(c, rc, 0, message, data, len, -1);
}

int rt__callmsg_put_run(rt__chan *c, const rt__callmsg_run *r)
{
    pack p = {0};
    put_u64(&p, r->fn);
    put_u64(&p, r->attempt);
    put_blob(&p, r->arg ? r->arg : "", r->len);
    int rc = p.failed ? -1 : rt__callmsg_put(c, RT__CALL_RUN, r->task, 0, p.data, p.len);
    rt__free(p.data);
    return rc;
}

/* ---- receiving ---------------------------------------------------------------------- */

int rt__callmsg_take(rt__chan *c, rt__hdr *h, const char **payload, size_t *len, int *fd)
{
    int fds[RT__MSG_MAX_FDS];
    int more;
    *fd = -1;
    while ((more = rt__chan_next(c, h, payload, fds)) == 0) {
        rt__linger(c->fd); /* a call's reply, or the next call, is often near */
        long got = rt__chan_fill(c);
        if (got == 0)
            return 0;
        if (got < 0 && errno != EINTR)
            return -1;
    }
    if (more < 0)
        return -1;
    *len = (size_t)h->len;
    if (h->nfds == 0)
        return 1;
    for (uint32_t i = 1; i < h->nfds; i++)
        close(fds[i]);
    if (h->type == RT__CALL_REPLY && (h->id & REPLY_OBJECT)) {
        *fd = fds[0]; /* the object's: mapped by the receiver, privately */
        *payload = NULL;
        return 1;
    }
    *payload = rt__shm_open(fds[0], *len, RT__SHM_VIEW);
    close(fds[0]);
    return *payload ? 1 : -1;
}

void rt__callmsg_done(const rt__hdr *h, const char *payload, size_t len)
{
    if (h->nfds && payload)
        rt__shm_unmap((void *)payload, len);
}

static void read_opts(unpack *u, rt_opts *o)
{
    o->init_magic_ = (int)(uint32_t)get_u64(u);
    o->name = get_str(u);
    o->num_cpus = get_f64(u);
    o->num_gpus = get_f64(u);
    o->max_calls = (int)(int64_t)get_u64(u);
    o->max_retries = (int)(int64_t)get_u64(u);
    o->max_restarts = (int)(int64_t)get_u64(u);
    o->resources = get_str(u);
    o->accelerator_type = get_str(u);
    o->gpu_memory = get_u64(u);
    o->timeout_ms = (long)(int64_t)get_u64(u);
    o->retry_exceptions = (int)(int64_t)get_u64(u);
    o->max_task_retries = (int)(int64_t)get_u64(u);
    o->max_concurrency = (int)(int64_t)get_u64(u);
    o->label_selector = get_str(u);
    o->placement_group.id = get_u64(u);
    o->bundle_index = (int)(int64_t)get_u64(u);
    o->env_vars = get_str(u);
    o->get_if_exists = (int)(int64_t)get_u64(u);
    o->detached = (int)(int64_t)get_u64(u);
    o->num_returns = (int)(int64_t)get_u64(u);
    o->nondeterministic = (int)(int64_t)get_u64(u);
}

int rt__callmsg_read_submission(const char *payload, size_t len, rt__submission *s,
                                rt_opts *opts, rt_arg *args)
{
    unpack u = {payload, len, 0};
    s->form = (int)get_u64(&u);
    s->id = 0; /* the frame's, not the payload's */
    s->fn = get_u64(&u);
    s->actor = get_u64(&u);
    s->class_name = NULL;
    if (s->form == RT__SUBMIT_CREATE && (s->class_name = get_str(&u)) && !*s->class_name)
        s->class_name = NULL;
    s->opts = NULL;
    if (get_u64(&u)) {
        read_opts(&u, opts);
        s->opts = opts;
    }
    uint64_t n = get_u64(&u);
    if (u.bad || s->form < RT__SUBMIT_TASK || s->form > RT__SUBMIT_CREATE ||
        n > RT_ARGS_MAX)
        return -1;
    int one = s->form == RT__SUBMIT_TASK || s->form == RT__SUBMIT_CALL ||
              s->form == RT__SUBMIT_CREATE;
    for (uint64_t i = 0; i < n && !u.bad; i++) {
        args[i] = (rt_arg){.ref = {get_u64(&u)}};
        if (!args[i].ref.id)
            args[i].data = get_blob(&u, &args[i].len);
        if (one && (args[i].ref.id || !args[i].data))
            return -1; /* the one argument is bytes */
    }
    s->args = args;
    s->nargs = (size_t)n;
    return u.bad || u.left || (one && n != 1) ? -1 : 0;
}

int rt__callmsg_read_group(const char *payload, size_t len, rt_bundle *bundles, size_t *n,
                           int *strategy)
{
    unpack u = {payload, len, 0};
    *strategy = (int)(int64_t)get_u64(&u);
    uint64_t count = get_u64(&u);
    if (u.bad || count == 0 || count > RT_PG_BUNDLES_MAX)
        return -1;
    for (uint64_t i = 0; i < count && !u.bad; i++) {
        bundles[i].num_cpus = get_f64(&u);
        bundles[i].num_gpus = get_f64(&u);
        bundles[i].resources = get_str(&u);
        bundles[i].label_selector = get_str(&u);
    }
    *n = (size_t)count;
    return u.bad || u.left ? -1 : 0;
}

int rt__callmsg_read_reply(const rt__hdr *h, const char *payload, size_t len, int fd,
                           rt__callmsg_reply *r)
{
    *r = (rt__callmsg_reply){.rc = (int)(uint32_t)h->id, .value = h->word, .message = "",
                          .fd = fd};
    if (h->type != RT__CALL_REPLY || r->rc > 0)
        return -1;
    if (fd >= 0) {
        r->len = len;
        return 0;
    }
    unpack u = {payload, len, 0};
    r->message = get_str(&u);
    r->data = get_blob(&u, &r->len);
    if (u.bad || u.left || !r->message || !r->data)
        return -1;
    return 0;
}

int rt__callmsg_read_run(const rt__hdr *h, const char *payload, size_t len,
                         rt__callmsg_run *r)
{
    unpack u = {payload, len, 0};
    *r = (rt__callmsg_run){.task = h->id};
    r->fn = get_u64(&u);
    r->attempt = get_u64(&u);
    r->arg = get_blob(&u, &r->len);
    return h->type != RT__CALL_RUN || u.bad || u.left || !r->arg || !r->fn || !r->task ? -1 : 0;
}

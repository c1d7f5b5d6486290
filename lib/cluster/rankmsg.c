/* rankmsg.c - encoding and decoding of the messages between ranks. */
#include "rankmsg.h"

#include "base/alloc.h"
#include "base/shm.h"

#include <stdio.h>
#include <string.h>

/* The fixed part, as bytes: every rank runs the same program, checked
 * when it joins, so the layout is the same everywhere. */
typedef struct fixed {
    uint32_t type;
    uint32_t text_len;       /* with its NUL */
    uint64_t lease;
    uint64_t w[7];
    uint64_t len;            /* of the bytes */
    uint32_t follows;        /* the bytes follow as pieces */
    uint32_t places;         /* bytes of fn's and fini's places (TASK, CALL) */
} fixed;

static int has_places(uint32_t type)
{
    return type == RT__RANK_TASK || type == RT__RANK_CALL;
}

/* A place as its object's name (length first) and offset: the name is
 * "" for the program itself, so a task's message stays small. */
static size_t place_size(const rt__fn_place *p)
{
    return sizeof(uint32_t) + strlen(p->object) + sizeof(uint64_t);
}

static char *put_place(char *out, const rt__fn_place *p)
{
    uint32_t n = (uint32_t)strlen(p->object);
    memcpy(out, &n, sizeof n);
    memcpy(out + sizeof n, p->object, n);
    memcpy(out + sizeof n + n, &p->offset, sizeof p->offset);
    return out + sizeof n + n + sizeof p->offset;
}

/* m's fixed part, and the bytes of its encoding in all. */
static fixed fixed_of(const rt__rank_msg *m, size_t *total)
{
    const char *text = m->text ? m->text : "";
    size_t places = has_places(m->type) ? place_size(&m->fn) + place_size(&m->fini) : 0;
    fixed f = {.type = m->type, .text_len = (uint32_t)strlen(text) + 1,
               .lease = m->lease, .len = m->len, .follows = m->fd >= 0 || m->owned,
               .places = (uint32_t)places};
    memcpy(f.w, m->w, sizeof f.w);
    *total = sizeof f + places + f.text_len + (f.follows ? 0 : m->len);
    return f;
}

size_t rt__rank_encoded_len(const rt__rank_msg *m)
{
    size_t total;
    fixed_of(m, &total);
    return total;
}

void rt__rank_encode_into(const rt__rank_msg *m, char *out)
{
    size_t total;
    fixed f = fixed_of(m, &total);
    memcpy(out, &f, sizeof f);
    out += sizeof f;
    if (f.places)
        out = put_place(put_place(out, &m->fn), &m->fini);
    memcpy(out, m->text ? m->text : "", f.text_len);
    if (!f.follows && m->len)
        memcpy(out + f.text_len, m->bytes, m->len);
}

/* A place from `at`, within `end`; the next byte, or NULL. */
static const char *get_place(const char *at, const char *end, rt__fn_place *p)
{
    uint32_t n;
    if ((size_t)(end - at) < sizeof n)
        return NULL;
    memcpy(&n, at, sizeof n);
    at += sizeof n;
    if (n >= sizeof p->object || (size_t)(end - at) < n + sizeof p->offset ||
        memchr(at, '\0', n))
        return NULL;
    memset(p->object, 0, sizeof p->object);
    memcpy(p->object, at, n);
    memcpy(&p->offset, at + n, sizeof p->offset);
    return at + n + sizeof p->offset;
}

int rt__rank_decode(const char *buf, size_t len, rt__rank_msg *m, int *follows)
{
    fixed f;
    if (len < sizeof f)
        return -1;
    memcpy(&f, buf, sizeof f);
    size_t inline_len = f.follows ? 0 : f.len;
    int placed = has_places(f.type);
    if (f.type == 0 || f.type >= RT__RANK_TYPES || (f.places != 0) != placed ||
        f.follows > 1 || (f.follows && f.len == 0) || f.text_len == 0 ||
        inline_len > len ||
        len - sizeof f < f.places || /* in steps, so that nothing overflows */
        len - sizeof f - f.places < f.text_len ||
        len - sizeof f - f.places - f.text_len != inline_len)
        return -1;
    memset(m, 0, sizeof *m);
    m->type = f.type;
    m->lease = f.lease;
    memcpy(m->w, f.w, sizeof m->w);
    const char *p = buf + sizeof f, *end = p + f.places;
    if (placed && (!(p = get_place(p, end, &m->fn)) || !(p = get_place(p, end, &m->fini)) ||
                 p != end))
        return -1;
    p = end;
    if (strnlen(p, f.text_len) != f.text_len - 1) /* one NUL, at its end */
        return -1;
    m->text = p;
    m->bytes = f.follows ? NULL : p + f.text_len;
    m->len = f.len;
    m->fd = -1;
    m->owned = NULL;
    *follows = (int)f.follows;
    return 0;
}

const char *rt__rank_name(uint32_t type)
{
    static const char *const names[RT__RANK_TYPES] = {
        [RT__RANK_LEASE] = "LEASE",     [RT__RANK_DEVICES] = "DEVICES",
        [RT__RANK_TASK] = "TASK",       [RT__RANK_RELEASE] = "RELEASE",
        [RT__RANK_STOP] = "STOP",       [RT__RANK_KILL] = "KILL",
        [RT__RANK_ANSWER] = "ANSWER",   [RT__RANK_LOST] = "LOST",
        [RT__RANK_FAILED] = "FAILED",   [RT__RANK_SHUTDOWN] = "SHUTDOWN",
        [RT__RANK_BYE] = "BYE",         [RT__RANK_CALL] = "CALL",
        [RT__RANK_HANGUP] = "HANGUP",   [RT__RANK_LEND] = "LEND",
        [RT__RANK_ASK_STOP] = "ASK_STOP",
        [RT__RANK_TOOK_BACK] = "TOOK_BACK", [RT__RANK_PULL] = "PULL",
        [RT__RANK_OBJECT] = "OBJECT",   [RT__RANK_FREE] = "FREE",
        [RT__RANK_GPU] = "GPU",
    };
    return type < RT__RANK_TYPES && names[type] ? names[type] : "unknown";
}

/* ---- the words of each message ------------------------------------------------ */

rt__rank_msg rt__rank_lease(uint64_t lease, int fresh, int max_calls, rt__amount cpu)
{
    return (rt__rank_msg){.type = RT__RANK_LEASE, .lease = lease,
                          .w = {(uint64_t)fresh, (uint64_t)max_calls, (uint64_t)cpu},
                          .fd = -1};
}

void rt__rank_lease_read(const rt__rank_msg *m, int *fresh, int *max_calls, rt__amount *cpu)
{
    *fresh = (int)m->w[0];
    *max_calls = (int)m->w[1];
    *cpu = (rt__amount)m->w[2];
}

rt__rank_msg rt__rank_release(uint64_t lease, int retire)
{
    return (rt__rank_msg){.type = RT__RANK_RELEASE, .lease = lease,
                          .w = {(uint64_t)retire}, .fd = -1};
}

int rt__rank_release_read(const rt__rank_msg *m)
{
    return m->w[0] != 0;
}

#define TASK_FINI 1u  /* a destructor follows */
#define TASK_NO_FN 2u /* no function: a class without a constructor */
#define TASK_TABLE 4u /* the bytes are an argument table (proto.h) */
#define TASK_FLAGS 7u
#define TASK_ATTEMPT_SHIFT 8 /* above the flags: which run it is */

/* The text: the name, then (w[4] > 0) a newline and the variables from
 * byte w[4] on. */
rt__rank_msg rt__rank_task(uint64_t lease, const rt__task *t, int fini, size_t remote,
                           char *label)
{
    uint64_t flags = (fini ? TASK_FINI : 0) | (t->call.fn ? 0 : TASK_NO_FN) |
                     (t->call.args_form != RT__ARGS_ONE ? TASK_TABLE : 0) |
                     (uint64_t)rt__task_attempt(t) << TASK_ATTEMPT_SHIFT;
    const char *name = rt__task_named(t) ? rt__task_named(t) : "", *env = rt__task_env(t);
    size_t env_at = env ? strlen(name) + 1 : 0;
    const uint64_t *key = rt__task_key(t);
    if (env)
        snprintf(label, RT__RANK_LABEL, "%s\n%s", name, env);
    return (rt__rank_msg){.type = RT__RANK_TASK, .lease = lease,
                          .w = {t->call.id, (uint64_t)t->call.kind, flags, remote, env_at,
                                key ? key[0] : 0, key ? key[1] : 0},
                          .text = env ? label : name, .fd = -1};
}

int rt__rank_task_read(const rt__rank_msg *m, rt__rank_task_words *w)
{
    uint64_t kind = m->w[1], flags = m->w[2];
    *w = (rt__rank_task_words){.id = m->w[0], .kind = (rt__task_kind)kind,
                               .has_fn = !(flags & TASK_NO_FN),
                               .has_fini = (flags & TASK_FINI) != 0,
                               .table = (flags & TASK_TABLE) != 0,
                               .attempt = (unsigned)(flags >> TASK_ATTEMPT_SHIFT),
                               .remote = (size_t)m->w[3], .key = {m->w[5], m->w[6]}};
    size_t text_len = strlen(m->text), name_len = m->w[4] ? m->w[4] - 1 : text_len;
    if (name_len >= sizeof w->name || m->w[4] > text_len)
        return -1;
    memcpy(w->name, m->text, name_len);
    w->name[name_len] = '\0';
    w->env = m->w[4] ? m->text + m->w[4] : NULL;
    if (m->w[3] > RT_ARGS_MAX || (m->w[3] && !w->table) ||
        m->w[3] * sizeof(rt__rank_ref) > m->len ||
        (flags & ~(uint64_t)TASK_FLAGS) >> TASK_ATTEMPT_SHIFT > RT__ATTEMPT_MAX ||
        (flags & ~(uint64_t)TASK_FLAGS & ((1u << TASK_ATTEMPT_SHIFT) - 1)) ||
        kind > RT__KIND_CALL ||
        (!w->has_fn && kind != RT__KIND_CREATE) || (w->table && kind == RT__KIND_CREATE))
        return -1;
    return 0;
}

#define ANSWER_REFUSED 1u
#define ANSWER_HELD 2u
#define ANSWER_PACKED 4u
#define ANSWER_LEN_SHIFT 3 /* held: the bytes' length, above the bits */

rt__rank_msg rt__rank_answer(uint64_t lease, rt__answer *a)
{
    uint64_t how = (a->refused ? ANSWER_REFUSED : 0) | (a->held ? ANSWER_HELD : 0) |
                   (a->packed ? ANSWER_PACKED : 0);
    rt__rank_msg m = {.type = RT__RANK_ANSWER, .lease = lease,
                      .w = {a->id, (uint64_t)a->status, (uint64_t)a->sys_errno, a->run_us,
                            how},
                      .bytes = a->result, .len = a->len, .fd = -1};
    if (a->held) { /* the words only: the bytes stay */
        m.bytes = NULL;
        m.len = 0;
        m.w[4] |= (uint64_t)a->len << ANSWER_LEN_SHIFT;
    } else if (a->len >= RT__SHM_MIN) { /* follows as pieces, never copied */
        m.owned = a->result;
        m.bytes = NULL;
        a->result = NULL;
    }
    return m;
}

void rt__rank_answer_read(const rt__rank_msg *m, rt__answer *a)
{
    int held = (m->w[4] & ANSWER_HELD) != 0;
    *a = (rt__answer){.id = m->w[0], .status = (int)m->w[1], .sys_errno = (int)m->w[2],
                      .run_us = m->w[3], .refused = (m->w[4] & ANSWER_REFUSED) != 0,
                      .packed = (m->w[4] & ANSWER_PACKED) != 0,
                      .len = held ? (size_t)(m->w[4] >> ANSWER_LEN_SHIFT) : m->len,
                      .held = held,
                      .result = m->owned};
    if (!held && !m->owned && m->len && (a->result = rt__buf_alloc(m->len)))
        memcpy(a->result, m->bytes, m->len);
}

rt__rank_msg rt__rank_object(uint32_t type, uint64_t object, unsigned run, int found)
{
    return (rt__rank_msg){.type = type, .w = {object, run, (uint64_t)(found != 0)}, .fd = -1};
}

void rt__rank_object_read(const rt__rank_msg *m, uint64_t *object, unsigned *run, int *found)
{
    *object = m->w[0];
    *run = (unsigned)m->w[1];
    *found = m->w[2] != 0;
}

void *rt__rank_object_take(const rt__rank_msg *m, uint64_t *object, unsigned *run,
                           int *found)
{
    rt__rank_object_read(m, object, run, found);
    void *bytes = *found ? m->owned : NULL;
    if (!*found)
        rt__buf_free(m->owned);
    else if (!bytes && (bytes = rt__buf_alloc(m->len)) && m->len)
        memcpy(bytes, m->bytes, m->len);
    *found = bytes != NULL;
    return bytes;
}

#define LOST_CHANNEL 1u
#define LOST_BROKE 2u

rt__rank_msg rt__rank_lost(uint64_t lease, const rt__loss *loss)
{
    uint64_t how = (loss->lost_channel ? LOST_CHANNEL : 0) | (loss->broke ? LOST_BROKE : 0);
    return (rt__rank_msg){.type = RT__RANK_LOST, .lease = lease,
                          .w = {(uint64_t)loss->pid, (uint64_t)loss->wait_status,
                                (uint64_t)loss->spawn_errno, loss->started, how},
                          .fd = -1};
}

void rt__rank_lost_read(const rt__rank_msg *m, rt__loss *loss)
{
    *loss = (rt__loss){.pid = (int)m->w[0], .wait_status = (int)m->w[1],
                       .spawn_errno = (int)m->w[2], .started = (size_t)m->w[3],
                       .lost_channel = (m->w[4] & LOST_CHANNEL) != 0,
                       .broke = (m->w[4] & LOST_BROKE) != 0};
}

rt__rank_msg rt__rank_gpu(uint64_t lease, const rt__gpu_event *e, int ours)
{
    return (rt__rank_msg){.type = RT__RANK_GPU, .lease = lease,
                          .w = {e->kind, e->pid, e->code, (uint64_t)(ours != 0)},
                          .text = e->bus_id, .fd = -1};
}

void rt__rank_gpu_read(const rt__rank_msg *m, rt__gpu_event *e, int *ours)
{
    *e = (rt__gpu_event){.kind = (uint32_t)m->w[0], .pid = (uint32_t)m->w[1], .code = m->w[2]};
    snprintf(e->bus_id, sizeof e->bus_id, "%s", m->text);
    *ours = m->w[3] != 0;
}

rt__rank_msg rt__rank_call(uint64_t connection, const rt__hdr *h)
{
    return (rt__rank_msg){.type = RT__RANK_CALL, .lease = connection,
                          .w = {h->type, h->id, h->word}, .len = (size_t)h->len, .fd = -1};
}

void rt__rank_call_read(const rt__rank_msg *m, rt__hdr *h)
{
    *h = (rt__hdr){.type = (uint32_t)m->w[0], .id = m->w[1], .word = m->w[2],
                   .len = m->len};
}

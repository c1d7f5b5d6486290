/* rankmsg.c - encoding and decoding of the messages between ranks. */
#include "rankmsg.h"

#include "base/alloc.h"

#include <string.h>

/* The fixed part, as bytes: every rank runs the same program, checked
 * when it joins, so the layout is the same everywhere. */
typedef struct fixed {
    uint32_t type;
    uint32_t text_len;       /* with its NUL */
    uint64_t lease;
    uint64_t w[5];
    uint64_t len;            /* of the bytes */
    uint32_t follows;        /* the bytes follow as pieces */
    uint32_t places;         /* bytes of fn's and fini's places (TASK) */
} fixed;

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

int rt__rank_encode(const rt__rank_msg *m, char **out, size_t *out_len)
{
    const char *text = m->text ? m->text : "";
    int task = m->type == RT__RANK_TASK;
    size_t places = task ? place_size(&m->fn) + place_size(&m->fini) : 0;
    fixed f = {.type = m->type, .text_len = (uint32_t)strlen(text) + 1,
               .lease = m->lease, .len = m->len, .follows = m->fd >= 0,
               .places = (uint32_t)places};
    memcpy(f.w, m->w, sizeof f.w);
    size_t inline_len = f.follows ? 0 : m->len;
    size_t total = sizeof f + places + f.text_len + inline_len;
    char *buf = rt__malloc(total), *p = buf;
    if (!buf)
        return -1;
    memcpy(p, &f, sizeof f);
    p += sizeof f;
    if (task)
        p = put_place(put_place(p, &m->fn), &m->fini);
    memcpy(p, text, f.text_len);
    if (inline_len)
        memcpy(p + f.text_len, m->bytes, inline_len);
    *out = buf;
    *out_len = total;
    return 0;
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
    int task = f.type == RT__RANK_TASK;
    if (f.type == 0 || f.type >= RT__RANK_TYPES || (f.places != 0) != task ||
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
    if (task && (!(p = get_place(p, end, &m->fn)) || !(p = get_place(p, end, &m->fini)) ||
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
        [RT__RANK_BYE] = "BYE",
    };
    return type < RT__RANK_TYPES && names[type] ? names[type] : "unknown";
}

/* rankmsg.c - encoding and decoding of the messages between ranks. */
#include "rankmsg.h"

#include "alloc.h"

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
    uint32_t places;         /* 2 when fn and fini follow */
} fixed;

int rt__rank_encode(const rt__rank_msg *m, char **out, size_t *out_len)
{
    const char *text = m->text ? m->text : "";
    fixed f = {.type = m->type, .text_len = (uint32_t)strlen(text) + 1,
               .lease = m->lease, .len = m->len, .follows = m->fd >= 0,
               .places = m->type == RT__RANK_TASK ? 2 : 0};
    memcpy(f.w, m->w, sizeof f.w);
    size_t inline_len = f.follows ? 0 : m->len;
    size_t total = sizeof f + f.places * sizeof(rt__fn_place) + f.text_len + inline_len;
    char *buf = rt__malloc(total), *p = buf;
    if (!buf)
        return -1;
    memcpy(p, &f, sizeof f);
    p += sizeof f;
    if (f.places) {
        memcpy(p, &m->fn, sizeof m->fn);
        memcpy(p + sizeof m->fn, &m->fini, sizeof m->fini);
        p += 2 * sizeof m->fn;
    }
    memcpy(p, text, f.text_len);
    if (inline_len)
        memcpy(p + f.text_len, m->bytes, inline_len);
    *out = buf;
    *out_len = total;
    return 0;
}

/* An object name from another rank ends within its field. */
static int place_ok(const rt__fn_place *p)
{
    return memchr(p->object, '\0', sizeof p->object) != NULL;
}

int rt__rank_decode(const char *buf, size_t len, rt__rank_msg *m, int *follows)
{
    fixed f;
    if (len < sizeof f)
        return -1;
    memcpy(&f, buf, sizeof f);
    size_t places = f.places == 2 ? 2 * sizeof(rt__fn_place) : 0;
    size_t inline_len = f.follows ? 0 : f.len;
    if (f.type == 0 || f.type >= RT__RANK_TYPES ||
        f.places != (f.type == RT__RANK_TASK ? 2u : 0u) || f.follows > 1 ||
        (f.follows && f.len == 0) ||
        f.text_len == 0 || inline_len > len ||
        len - sizeof f < places || /* in steps, so that nothing overflows */
        len - sizeof f - places < f.text_len ||
        len - sizeof f - places - f.text_len != inline_len)
        return -1;
    memset(m, 0, sizeof *m);
    m->type = f.type;
    m->lease = f.lease;
    memcpy(m->w, f.w, sizeof m->w);
    const char *p = buf + sizeof f;
    if (places) {
        memcpy(&m->fn, p, sizeof m->fn);
        memcpy(&m->fini, p + sizeof m->fn, sizeof m->fini);
        if (!place_ok(&m->fn) || !place_ok(&m->fini))
            return -1;
        p += places;
    }
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

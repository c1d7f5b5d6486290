/* labels.c - nodes' labels and the selectors that pick nodes by them. */
#include "labels.h"

#include "base/error.h"

#include <stdio.h>
#include <string.h>

/* ASCII only, whatever the locale: labels cross machines. */
static int alnum(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int value_char(int c)
{
    return alnum(c) || c == '.' || c == '_' || c == '-';
}

static int key_char(int c)
{
    return value_char(c) || c == '/';
}

/* A key or a value at s: its length (1 to RT__LABEL_LEN - 1), or 0. */
static size_t word(const char *s, int (*ok)(int))
{
    size_t n = 0;
    while (s[n] && ok((unsigned char)s[n]))
        n++;
    return n < RT__LABEL_LEN ? n : 0;
}

static const char *skip_spaces(const char *s)
{
    while (*s == ' ')
        s++;
    return s;
}

/* After a pair or a term: its comma (not the last thing) or the end.
 * The next one's start, or NULL. */
static const char *after(const char *at)
{
    at = skip_spaces(at);
    if (*at == ',')
        return *skip_spaces(at + 1) ? at + 1 : NULL;
    return *at ? NULL : at;
}

/* A key and its value, or its list of values (a selector's in(...)). */
typedef struct pair {
    const char *key, *value;
    size_t klen, vlen;
} pair;

/* The pair at *s, moving past it: 1, 0 at the end, -1 when it is none. */
static int next_pair(const char **s, pair *p)
{
    const char *at = skip_spaces(*s);
    if (!*at)
        return 0;
    p->key = at;
    p->klen = word(at, key_char);
    if (!p->klen || at[p->klen] != '=')
        return -1;
    p->value = at + p->klen + 1;
    p->vlen = word(p->value, value_char);
    if (!p->vlen || !(*s = after(p->value + p->vlen)))
        return -1;
    return 1;
}

static int same(const char *a, size_t alen, const char *b, size_t blen)
{
    return alen == blen && memcmp(a, b, alen) == 0;
}

/* ---- a node's labels ------------------------------------------------------------ */

/* Append ",key=value" (no comma first) to buf at *at: 0, or -1 without room. */
static int append(char *buf, size_t *at, const pair *p)
{
    size_t need = (*at ? 1 : 0) + p->klen + 1 + p->vlen;
    if (*at + need >= RT__LABELS_LEN)
        return -1;
    *at += (size_t)snprintf(buf + *at, RT__LABELS_LEN - *at, "%s%.*s=%.*s", *at ? "," : "",
                            (int)p->klen, p->key, (int)p->vlen, p->value);
    return 0;
}

static int set_pair(char out[RT__LABELS_LEN], const pair *set)
{
    char next[RT__LABELS_LEN] = "";
    size_t at = 0;
    const char *s = out;
    pair p;
    while (next_pair(&s, &p) > 0)
        if (!same(p.key, p.klen, set->key, set->klen) && append(next, &at, &p) < 0)
            return -1;
    if (append(next, &at, set) < 0)
        return -1;
    memcpy(out, next, at + 1);
    return 0;
}

int rt__labels_set(char out[RT__LABELS_LEN], const char *key, const char *value)
{
    pair p = {key, value, strlen(key), strlen(value)};
    if (!p.klen || word(key, key_char) != p.klen || !p.vlen ||
        word(value, value_char) != p.vlen)
        return -1;
    return set_pair(out, &p);
}

int rt__labels_add(char out[RT__LABELS_LEN], const char *labels, const char *what)
{
    char next[RT__LABELS_LEN]; /* out changes only when all are good */
    const char *s = labels ? labels : "";
    pair p;
    int more;
    memcpy(next, out, sizeof next);
    while ((more = next_pair(&s, &p)) > 0)
        if (set_pair(next, &p) < 0)
            return rt__error(RT_EINVAL, "%s: too many labels: a node's take at most %d "
                             "bytes in all", what, RT__LABELS_LEN - 1);
    if (more == 0)
        memcpy(out, next, sizeof next);
    if (more < 0)
        return rt__error(RT_EINVAL, "%s: \"%s\" is not a list of labels \"key=value,...\" "
                         "(keys of letters, digits and . _ - /, values of letters, digits "
                         "and . _ -, each at most %d characters)", what, labels,
                         RT__LABEL_LEN - 1);
    return 0;
}

int rt__labels_get(const char *labels, const char *key, char value[RT__LABEL_LEN])
{
    const char *s = labels;
    pair p;
    while (next_pair(&s, &p) > 0)
        if (same(p.key, p.klen, key, strlen(key))) {
            snprintf(value, RT__LABEL_LEN, "%.*s", (int)p.vlen, p.value);
            return 0;
        }
    return -1;
}

/* ---- selectors -------------------------------------------------------------------- */

typedef struct term {
    pair p;     /* p.value: one value, or a list "a,b" */
    int negate; /* key=!... */
} term;

/* An in(...) list at at: its end (the ')'), or NULL. */
static const char *value_list(const char *at)
{
    for (;;) {
        at = skip_spaces(at);
        size_t n = word(at, value_char);
        if (!n)
            return NULL;
        at = skip_spaces(at + n);
        if (*at == ')')
            return at;
        if (*at++ != ',')
            return NULL;
    }
}

/* The term at *s, moving past it: 1, 0 at the end, -1 when it is none. */
static int next_term(const char **s, term *t)
{
    const char *at = skip_spaces(*s), *end;
    if (!*at)
        return 0;
    t->p.key = at;
    t->p.klen = word(at, key_char);
    if (!t->p.klen || at[t->p.klen] != '=')
        return -1;
    at += t->p.klen + 1;
    t->negate = *at == '!';
    at += t->negate;
    if (strncmp(at, "in(", 3) == 0) {
        t->p.value = at + 3;
        if (!(end = value_list(t->p.value)))
            return -1;
        t->p.vlen = (size_t)(end - t->p.value);
        end++;
    } else {
        t->p.value = at;
        t->p.vlen = word(at, value_char);
        end = at + t->p.vlen;
    }
    return t->p.vlen && (*s = after(end)) ? 1 : -1;
}

int rt__selector_check(const char *selector)
{
    const char *s = selector ? selector : "";
    term t;
    int more;
    while ((more = next_term(&s, &t)) > 0)
        ;
    if (more < 0)
        return rt__error(RT_EINVAL, "label_selector: \"%s\" is not a selector: terms "
                         "key=value, key=!value, key=in(a,b) or key=!in(a,b), separated "
                         "by commas", selector);
    return 0;
}

/* Whether value is one of list's values ("a" or "a, b"). */
static int listed(const char *list, size_t len, const char *value)
{
    const char *end = list + len;
    while (list < end) {
        list = skip_spaces(list);
        size_t n = word(list, value_char);
        if (same(list, n, value, strlen(value)))
            return 1;
        list = skip_spaces(list + n) + 1; /* past its comma */
    }
    return 0;
}

int rt__selector_matches(const char *selector, const char *labels)
{
    const char *s = selector ? selector : "";
    term t;
    while (next_term(&s, &t) > 0) {
        char key[RT__LABEL_LEN], value[RT__LABEL_LEN];
        snprintf(key, sizeof key, "%.*s", (int)t.p.klen, t.p.key);
        int has = rt__labels_get(labels, key, value) == 0 && listed(t.p.value, t.p.vlen, value);
        if (has == t.negate)
            return 0;
    }
    return 1;
}

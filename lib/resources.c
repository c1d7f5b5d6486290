/* resources.c - fixed-point amounts and the arithmetic of requests. */
#include "resources.h"

#include "error.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMOUNT_MAX 1e12 /* far above any machine; keeps sums in int64 */

int rt__amount_parse(double v, const char *what, rt__amount *out)
{
    if (isnan(v) || isinf(v))
        return rt__error(RT_EINVAL, "%s must be a finite number, not %g", what, v);
    if (v < 0)
        return rt__error(RT_EINVAL, "%s must not be negative; %g is invalid", what, v);
    if (v > AMOUNT_MAX)
        return rt__error(RT_EINVAL, "%s of %g is too large", what, v);
    rt__amount a = (rt__amount)llround(v * RT__UNIT);
    if (a == 0 && v != 0)
        return rt__error(RT_EINVAL, "%s of %g: precision cannot go beyond 0.0001",
                         what, v);
    *out = a;
    return 0;
}

/* ---- name=amount lists --------------------------------------------------- */

static int name_char(char c)
{
    return isalnum((unsigned char)c) || (c && strchr("_-.:/", c)); /* not NUL */
}

static int find_item(const rt__item *items, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(items[i].name, name) == 0)
            return i;
    return -1;
}

/* Parse one "name=amount" at *s and move *s past it. */
static int parse_item(const char **s, const char *what, rt__item *item)
{
    const char *p = *s;
    size_t len = 0;
    while (name_char(p[len]))
        len++;
    if (len == 0 || p[len] != '=')
        return rt__error(RT_EINVAL, "%s: expected name=amount at \"%s\"", what, p);
    if (len >= RT__NAME_LEN)
        return rt__error(RT_EINVAL, "%s: the name \"%.*s\" is longer than %d bytes",
                         what, (int)len, p, RT__NAME_LEN - 1);
    memcpy(item->name, p, len);
    item->name[len] = '\0';
    if (strcmp(item->name, "CPU") == 0 || strcmp(item->name, "GPU") == 0)
        return rt__error(RT_EINVAL, "%s: %s is not a custom resource; use num_%s",
                         what, item->name, item->name[0] == 'C' ? "cpus" : "gpus");
    char *end;
    double v = strtod(p + len + 1, &end);
    if (end == p + len + 1 || (*end && *end != ','))
        return rt__error(RT_EINVAL, "%s: %s needs a number after '='", what, item->name);
    char label[RT__NAME_LEN + 64];
    snprintf(label, sizeof label, "%s: %s", what, item->name);
    *s = *end ? end + 1 : end;
    return rt__amount_parse(v, label, &item->amount);
}

int rt__items_parse(const char *spec, const char *what, rt__item *items, int *n)
{
    *n = 0;
    for (const char *s = spec ? spec : ""; *s;) {
        if (*n == RT__CUSTOM_MAX)
            return rt__error(RT_EINVAL, "%s: more than %d custom resources", what,
                             RT__CUSTOM_MAX);
        int rc = parse_item(&s, what, &items[*n]);
        if (rc < 0)
            return rc;
        if (find_item(items, *n, items[*n].name) >= 0)
            return rt__error(RT_EINVAL, "%s: %s is given twice", what, items[*n].name);
        (*n)++;
    }
    return 0;
}

void rt__names_define(rt__names *names, const rt__item *items, int n, rt__res *total)
{
    names->count = n;
    for (int i = 0; i < n; i++) {
        memcpy(names->name[i], items[i].name, RT__NAME_LEN);
        total->custom[i] = items[i].amount;
    }
}

int rt__res_request(const rt__names *names, const rt__item *items, int n,
                    rt__res *req)
{
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < names->count && strcmp(names->name[k], items[i].name) != 0)
            k++;
        if (k == names->count && items[i].amount > 0)
            return rt__error(RT_EINFEASIBLE,
                             "the task asks for %g %s but the runtime has no "
                             "resource of that name",
                             (double)items[i].amount / RT__UNIT, items[i].name);
        if (k < names->count)
            req->custom[k] = items[i].amount;
    }
    return 0;
}

/* ---- arithmetic ------------------------------------------------------------ */

int rt__res_fits(const rt__res *free, const rt__res *req)
{
    if (req->cpu > free->cpu)
        return 0;
    for (int i = 0; i < RT__CUSTOM_MAX; i++)
        if (req->custom[i] > free->custom[i])
            return 0;
    return 1;
}

void rt__res_take(rt__res *free, const rt__res *req)
{
    free->cpu -= req->cpu;
    for (int i = 0; i < RT__CUSTOM_MAX; i++)
        free->custom[i] -= req->custom[i];
}

void rt__res_give(rt__res *free, const rt__res *req)
{
    free->cpu += req->cpu;
    for (int i = 0; i < RT__CUSTOM_MAX; i++)
        free->custom[i] += req->custom[i];
}

static int too_much(const char *name, rt__amount want, rt__amount have)
{
    return rt__error(RT_EINFEASIBLE,
                     "the task asks for %g %s but the runtime has %g in all",
                     (double)want / RT__UNIT, name, (double)have / RT__UNIT);
}

int rt__res_feasible(const rt__res *total, const rt__res *req, const rt__names *names)
{
    if (req->cpu > total->cpu)
        return too_much("CPU", req->cpu, total->cpu);
    for (int i = 0; i < names->count; i++)
        if (req->custom[i] > total->custom[i])
            return too_much(names->name[i], req->custom[i], total->custom[i]);
    return 0;
}

int rt__res_equal(const rt__res *a, const rt__res *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

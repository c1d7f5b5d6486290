/* resources.c - fixed-point amounts and the arithmetic of requests. */
#include "resources.h"

#include "base/error.h"

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

int rt__items_find(const rt__item *items, int n, const char *name)
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
    *s = *end ? end + 1 : end;
    if (rt__amount_parse(v, what, &item->amount) == 0)
        return 0;
    /* The message names the item: made only then, not for every call's
     * options. */
    char label[RT__NAME_LEN + 64];
    snprintf(label, sizeof label, "%s: %s", what, item->name);
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
        if (rt__items_find(items, *n, items[*n].name) >= 0)
            return rt__error(RT_EINVAL, "%s: %s is given twice", what, items[*n].name);
        (*n)++;
    }
    return 0;
}

int rt__items_add(rt__item *items, int *n, const char *name, rt__amount amount,
                  const char *what)
{
    if (*n == RT__CUSTOM_MAX)
        return rt__error(RT_EINVAL, "%s: more than %d custom resources with %s",
                         what, RT__CUSTOM_MAX, name);
    size_t len = strlen(name);
    if (len >= RT__NAME_LEN)
        return rt__error(RT_EINVAL, "%s: the name \"%s\" is longer than %d bytes",
                         what, name, RT__NAME_LEN - 1);
    for (size_t i = 0; i < len; i++)
        if (!name_char(name[i]))
            return rt__error(RT_EINVAL, "%s: \"%s\" is not a valid name (letters, "
                                        "digits and _-.:/ only)", what, name);
    snprintf(items[*n].name, RT__NAME_LEN, "%s", name);
    items[*n].amount = amount;
    (*n)++;
    return 0;
}

int rt__items_whole(const rt__item *items, int n, const char *name, const char *what)
{
    int i = rt__items_find(items, n, name);
    if (i >= 0 && items[i].amount % RT__UNIT)
        return rt__error(RT_EINVAL, "%s: %s quantities must be whole numbers; %g is "
                                    "invalid", what, name,
                         (double)items[i].amount / RT__UNIT);
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

int rt__names_find(const rt__names *names, const char *name)
{
    for (int k = 0; k < names->count; k++)
        if (strcmp(names->name[k], name) == 0)
            return k;
    return -1;
}

static int no_such_accelerator(const rt__names *names, const char *wanted)
{
    const char *have = NULL;
    size_t plen = strlen(RT__ACCEL_PREFIX);
    for (int k = 0; k < names->count && !have; k++)
        if (strncmp(names->name[k], RT__ACCEL_PREFIX, plen) == 0)
            have = names->name[k] + plen;
    return rt__error(RT_EINFEASIBLE,
                     "accelerator_type %s: no accelerator of that type here (%s%s)",
                     wanted + plen, have ? "this node has " : "this node has no type",
                     have ? have : "; give one in rt_config.accelerator_type");
}

int rt__res_request(const rt__names *names, const rt__item *items, int n,
                    rt__res *req)
{
    for (int i = 0; i < n; i++) {
        int k = rt__names_find(names, items[i].name);
        if (k >= 0) {
            req->custom[k] = items[i].amount;
        } else if (items[i].amount == 0) {
            continue; /* asking for none of something unknown is harmless */
        } else if (strncmp(items[i].name, RT__ACCEL_PREFIX,
                           strlen(RT__ACCEL_PREFIX)) == 0) {
            return no_such_accelerator(names, items[i].name);
        } else {
            return rt__error(RT_EINFEASIBLE,
                             "a request for %g %s can never be met: the "
                             "runtime has no resource of that name",
                             (double)items[i].amount / RT__UNIT, items[i].name);
        }
    }
    return 0;
}

/* ---- arithmetic ------------------------------------------------------------ */

int rt__res_fits(const rt__res *free, const rt__res *req)
{
    if (req->cpu > free->cpu || req->gpu > free->gpu)
        return 0;
    for (int i = 0; i < RT__CUSTOM_MAX; i++)
        if (req->custom[i] > free->custom[i])
            return 0;
    return 1;
}

void rt__res_take(rt__res *free, const rt__res *req)
{
    free->cpu -= req->cpu;
    free->gpu -= req->gpu;
    for (int i = 0; i < RT__CUSTOM_MAX; i++)
        free->custom[i] -= req->custom[i];
}

void rt__res_give(rt__res *free, const rt__res *req)
{
    free->cpu += req->cpu;
    free->gpu += req->gpu;
    for (int i = 0; i < RT__CUSTOM_MAX; i++)
        free->custom[i] += req->custom[i];
}

static int too_much(const char *name, rt__amount want, rt__amount have, int node)
{
    return rt__error(RT_EINFEASIBLE,
                     node ? "a request for %g %s can never be met: no node has more "
                            "than %g"
                          : "a request for %g %s can never be met: the runtime "
                            "has %g in all",
                     (double)want / RT__UNIT, name, (double)have / RT__UNIT);
}

int rt__res_feasible_on(const rt__res *total, const rt__res *req, const rt__names *names,
                        int node)
{
    if (req->cpu > total->cpu)
        return too_much("CPU", req->cpu, total->cpu, node);
    if (req->gpu > total->gpu)
        return too_much("GPU", req->gpu, total->gpu, node);
    for (int i = 0; i < names->count; i++)
        if (req->custom[i] > total->custom[i])
            return too_much(names->name[i], req->custom[i], total->custom[i], node);
    return 0;
}

int rt__res_feasible(const rt__res *total, const rt__res *req, const rt__names *names)
{
    return rt__res_feasible_on(total, req, names, 0);
}

int rt__res_equal(const rt__res *a, const rt__res *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

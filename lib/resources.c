/* resources.c - fixed-point amounts and the arithmetic of requests. */
#include "resources.h"

#include "error.h"

#include <math.h>

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

int rt__res_fits(const rt__res *free, const rt__res *req)
{
    return req->cpu <= free->cpu;
}

void rt__res_take(rt__res *free, const rt__res *req)
{
    free->cpu -= req->cpu;
}

void rt__res_give(rt__res *free, const rt__res *req)
{
    free->cpu += req->cpu;
}

int rt__res_feasible(const rt__res *total, const rt__res *req)
{
    if (req->cpu > total->cpu)
        return rt__error(RT_EINFEASIBLE,
                         "the task asks for %g CPU but the runtime has %g in all",
                         (double)req->cpu / RT__UNIT, (double)total->cpu / RT__UNIT);
    return 0;
}

int rt__res_equal(const rt__res *a, const rt__res *b)
{
    return a->cpu == b->cpu;
}

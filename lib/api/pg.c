/* pg.c - rt_pg_create(), rt_pg_wait() and rt_pg_remove(): placement
 * groups.  What the runtime does with them is in runtime/groups.c and
 * sched/groups.c. */
#include "front.h"

#include "base/error.h"
#include "runtime/calls.h"

int rt__app_pg_create(const rt_bundle *bundles, size_t n, int strategy, rt_pg *pg)
{
    return rt__call_pg_create(rt__runtime_here(), bundles, n, strategy, pg);
}

int rt__app_pg_wait(rt_pg pg, long timeout_ms)
{
    return rt__call_pg_wait(rt__runtime_here(), pg, timeout_ms);
}

int rt__app_pg_remove(rt_pg pg)
{
    return rt__call_pg_remove(rt__runtime_here(), pg);
}

RT_EXPORT int rt_pg_create(const rt_bundle *bundles, size_t n, int strategy, rt_pg *pg)
{
    if (!bundles || !pg)
        return rt__error(RT_EINVAL, "rt_pg_create: %s is NULL", !pg ? "pg" : "bundles");
    if (n == 0 || n > RT_PG_BUNDLES_MAX)
        return rt__error(RT_EINVAL, "rt_pg_create: a group has 1 to %d bundles; %zu is "
                         "invalid", RT_PG_BUNDLES_MAX, n);
    if (strategy < RT_PG_PACK || strategy > RT_PG_STRICT_SPREAD)
        return rt__error(RT_EINVAL, "rt_pg_create: strategy %d is none of RT_PG_PACK, "
                         "RT_PG_SPREAD, RT_PG_STRICT_PACK, RT_PG_STRICT_SPREAD", strategy);
    return rt__front_here()->pg_create(bundles, n, strategy, pg);
}

RT_EXPORT int rt_pg_wait(rt_pg pg, long timeout_ms)
{
    return rt__front_here()->pg_wait(pg, timeout_ms);
}

RT_EXPORT int rt_pg_remove(rt_pg pg)
{
    return rt__front_here()->pg_remove(pg);
}

/* spares.c - the number of fresh workers kept ahead of need. */
#include "spares.h"

#include <math.h>

/* After this long without a lease that needs a fresh worker, spares are
 * no longer replaced: a job that ran its GPU tasks leaves none behind. */
#define QUIET_NS 1000000000.0
#define WEIGHT 0.2 /* of the newest sample in the moving averages */
#define START_GUESS_NS 300000.0 /* a fork and a start, until measured */

static double blend(double avg, double sample)
{
    return avg > 0 ? avg + WEIGHT * (sample - avg) : sample;
}

void rt__spares_leased(rt__spares *s, uint64_t now_ns)
{
    if (s->last_ns && now_ns > s->last_ns) {
        double gap = (double)(now_ns - s->last_ns);
        s->gap_ns = blend(s->gap_ns, gap < QUIET_NS ? gap : QUIET_NS);
    }
    s->last_ns = now_ns;
}

void rt__spares_started(rt__spares *s, uint64_t took_ns)
{
    s->start_ns = blend(s->start_ns, (double)took_ns);
}

/* While a spare is replaced (start_ns), about start_ns / gap_ns more
 * leases come; one more covers the lease that took the spare. */
size_t rt__spares_wanted(const rt__spares *s, uint64_t now_ns)
{
    if (!s->last_ns || (double)(now_ns - s->last_ns) > QUIET_NS)
        return 0;
    double start = s->start_ns > 0 ? s->start_ns : START_GUESS_NS;
    double need = s->gap_ns > 0 ? ceil(start / s->gap_ns) + 1 : 1;
    return need > RT__SPARES_MAX ? RT__SPARES_MAX : (size_t)need;
}

/*
 * resources.h - logical resources in fixed point.
 *
 * Amounts are counted in 1/10000 units, as Ray does, so that four 0.25
 * requests add up to exactly 1 and no rounding ever over-commits.
 */
#ifndef RT_RESOURCES_H
#define RT_RESOURCES_H

#include <stdint.h>

typedef int64_t rt__amount;
#define RT__UNIT 10000

/* A request, or a node's totals or free amounts. */
typedef struct rt__res {
    rt__amount cpu;
} rt__res;

/* Convert a user's amount; what names it in messages ("num_cpus").
 * Refuses NaN, infinities, negatives, values too large, and non-zero
 * values that round to zero.  Returns 0 or RT_EINVAL. */
int rt__amount_parse(double v, const char *what, rt__amount *out);

/* Whether a request fits in what is free, and taking or giving it back. */
int rt__res_fits(const rt__res *free, const rt__res *req);
void rt__res_take(rt__res *free, const rt__res *req);
void rt__res_give(rt__res *free, const rt__res *req);
/* 0 when a request fits the totals; otherwise RT_EINFEASIBLE, with a
 * message naming the resource. */
int rt__res_feasible(const rt__res *total, const rt__res *req);
int rt__res_equal(const rt__res *a, const rt__res *b);

#endif

/*
 * census.h - the scheduler's books as the application reads them
 * (rt_cluster_resources(), rt_available_resources()).
 */
#ifndef RT_CENSUS_H
#define RT_CENSUS_H

#include "scheduler.h"

#include <rtask.h>

/* One entry per resource for the whole (node -1), then one per resource
 * of each node, "CPU" and "GPU" first: the totals, or what is free when
 * available is set.  Returns the count; with out NULL, counts only. */
size_t rt__sched_census(const rt__sched *s, int available, rt_resource *out);
/* One entry per unhealthy GPU (or MIG instance) of every node; returns
 * the count; with out NULL, counts only. */
size_t rt__sched_sick_census(const rt__sched *s, rt_gpu_health *out);

#endif

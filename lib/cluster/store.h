/*
 * store.h - objects on a rank that serves rank 0: the large results its
 * tasks made and the objects they put, kept where they were made until
 * rank 0 frees them, and copies of other ranks' objects pulled for the tasks here that take
 * them, kept while those tasks last.
 *
 * Each is a record (node/task.h) with the object's bytes as its result,
 * which this rank's tasks take as arguments (by memfd when they are in
 * one); a copy being pulled has no bytes yet.
 */
#ifndef RT_STORE_H
#define RT_STORE_H

#include "bridge.h"
#include "rankmsg.h"

#include "node/task.h"

typedef struct rt__store rt__store;

/* A store of size bytes (0: any), whose results kept that no task here
 * uses spill to files in spill_dir (NULL: none) past it. */
rt__store *rt__store_new(size_t size, const char *spill_dir);
void rt__store_free(rt__store *h);
/* Keep len bytes (rt__buf_free()-able, now h's) that run `run` of task id
 * made; 0, or -1 without memory (they stay the caller's). */
int rt__store_keep(rt__store *h, uint64_t id, unsigned run, void *bytes, size_t len);
/* The object kept as (id, run) is (to, to_run) from now on: a task's
 * rt_put() here, kept before rank 0 named it (tunnel.c).  0, or -1 when
 * there is none. */
int rt__store_rename(rt__store *h, uint64_t id, unsigned run, uint64_t to, unsigned to_run);
/* The record of an object a task here takes, used by it from now on;
 * *pull is set when its bytes must be pulled from its holder (a copy
 * new here).  NULL without memory. */
rt__task *rt__store_use(rt__store *h, const rt__rank_ref *ref, size_t len, int *pull);
/* Ask ref's holder, through b, for the bytes of a copy that
 * rt__store_use() said to pull; they come as OBJECT (or, when they
 * cannot be asked for, the copy is missing at once). */
void rt__store_pull(rt__store *h, rt__bridge *b, const rt__rank_ref *ref);
/* A task that used o is done with it. */
void rt__store_unuse(rt__store *h, rt__task *o);
/* Give back the memory of the objects gone since the last sweep: once
 * what they answered is on its way (their unmapping takes a while). */
void rt__store_sweep(rt__store *h);
/* Rank 0 wants the object no more: it goes once no task here uses it. */
void rt__store_forget(rt__store *h, uint64_t id, unsigned run);
/* The record with the object's bytes (read back when spilled), for
 * another rank that pulls it, or NULL when they are not here. */
const rt__task *rt__store_find(rt__store *h, uint64_t id, unsigned run);
/* A pulled object arrived (bytes, now h's), or its holder had it not
 * (found 0: the copy is marked missing, and the tasks that take it fail). */
void rt__store_arrived(rt__store *h, uint64_t id, unsigned run, void *bytes, int found);
/* Whether o's bytes are here; whether they never will be. */
int rt__store_ready(const rt__task *o);
int rt__store_missing(const rt__task *o);

#endif

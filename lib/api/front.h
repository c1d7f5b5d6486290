/*
 * front.h - the two ways a public call is carried out.  In the
 * application it asks the runtime (runtime/calls.h); inside a task (a
 * worker forked from the application) it asks the application through
 * the door (node/client.h), or is refused where only the application may
 * make it.  Each way is a table, and which one a process uses is one fact
 * about it (base/process.h), read in rt__front_here() alone: the public
 * calls check their arguments, then call the table.
 */
#ifndef RT_FRONT_H
#define RT_FRONT_H

#include "node/callmsg.h"

#include <rtask.h>

typedef struct rt__front {
    /* 0 where call may be made; in a task, RT_EINWORKER with why for a
     * call only the application makes. */
    int (*application_only)(const char *call, const char *why);
    int (*submit)(const rt__submission *s, rt_ref *ref);
    int (*submit_batch)(rt_fn fn, const rt_opts *opts, const rt_value *args, size_t n,
                        rt_ref *refs);
    int (*get)(rt_ref ref, void **data, size_t *len, long timeout_ms);
    /* ready[i] says which of refs are ready: their count, or an error. */
    long (*wait)(const rt_ref *refs, size_t n, size_t num_ready, long timeout_ms,
                 unsigned char *ready);
    int (*cancel)(rt_ref ref, int force);
    int (*release)(rt_ref ref);
    int (*put)(const void *data, size_t len, rt_ref *ref);
    int (*view)(rt_ref ref, rt_view *view, long timeout_ms);
    int (*view_release)(const rt_view *view);
    int (*actor_kill)(rt_actor actor);
    int (*actor_restart)(rt_actor actor);
    int (*actor_get)(const char *name, rt_actor *actor);
    int (*stream_next)(rt_ref ref, rt_ref *item, long timeout_ms);
    int (*pg_create)(const rt_bundle *bundles, size_t n, int strategy, rt_pg *pg);
    int (*pg_wait)(rt_pg pg, long timeout_ms);
    int (*pg_remove)(rt_pg pg);
    int (*yield)(const void *data, size_t len);
    int (*node)(void); /* the node the caller runs on */
} rt__front;

const rt__front *rt__front_here(void);

/* The application's way (remote.c, objects.c, actor.c, pg.c). */
int rt__app_submit(const rt__submission *s, rt_ref *ref);
int rt__app_submit_batch(rt_fn fn, const rt_opts *opts, const rt_value *args, size_t n,
                         rt_ref *refs);
int rt__app_get(rt_ref ref, void **data, size_t *len, long timeout_ms);
long rt__app_wait(const rt_ref *refs, size_t n, size_t num_ready, long timeout_ms,
                  unsigned char *ready);
int rt__app_cancel(rt_ref ref, int force);
int rt__app_release(rt_ref ref);
int rt__app_put(const void *data, size_t len, rt_ref *ref);
int rt__app_view(rt_ref ref, rt_view *view, long timeout_ms);
int rt__app_view_release(const rt_view *view);
int rt__app_actor_kill(rt_actor actor);
int rt__app_actor_restart(rt_actor actor);
int rt__app_actor_get(const char *name, rt_actor *actor);
int rt__app_stream_next(rt_ref ref, rt_ref *item, long timeout_ms);
int rt__app_pg_create(const rt_bundle *bundles, size_t n, int strategy, rt_pg *pg);
int rt__app_pg_wait(rt_pg pg, long timeout_ms);
int rt__app_pg_remove(rt_pg pg);

/* A task's way, where it is more than the client's call (remote.c,
 * objects.c, context.c). */
int rt__task_submit_batch(rt_fn fn, const rt_opts *opts, const rt_value *args, size_t n,
                          rt_ref *refs);
int rt__task_view(rt_ref ref, rt_view *view, long timeout_ms);
int rt__task_view_release(const rt_view *view);
int rt__task_node(void);

#endif

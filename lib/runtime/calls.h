/*
 * calls.h - the small internal API that the public calls (api/) go
 * through: everything they ask of the runtime, and nothing of its
 * insides.  The runtime is opaque here and passed explicitly; the public
 * calls, which have no handle, name the process's one runtime with
 * rt__runtime_here().
 *
 * Each function checks that the runtime runs in this process (not in a
 * worker, not before rt_init() has returned, not after rt_shutdown()),
 * does its work under the runtime's lock, and wakes the runtime when it
 * must.  Records (tasks, actors) are made by the caller before, and
 * freed by the caller after: never under the lock.
 */
#ifndef RT_CALLS_H
#define RT_CALLS_H

#include "door.h"
#include "request.h"

#include "dispatch/actor.h"
#include "node/task.h"

#include <rtask.h>
#include <sys/types.h>

typedef struct rt__runtime rt__runtime;

/* This process's runtime. */
rt__runtime *rt__runtime_here(void);


/* rt_init() and rt_shutdown(). */
int rt__runtime_start(rt__runtime *rt, const rt_config *config, rt__door_hooks hooks);
int rt__runtime_stop(rt__runtime *rt);

/* Queue task t (its fn checked as `call`'s function), placed as r asks,
 * and give it a handle in *ref.  args: the public list t was made from
 * (its objects are held from now on), or NULL.  On failure t is freed. */
int rt__call_submit(rt__runtime *rt, rt__task *t, rt__request *r, const rt_arg *args,
                    const char *call, rt_ref *ref);
/* rt_notify_fd(), rt_notify(), rt_ready() (notices.c). */
int rt__call_notify_fd(rt__runtime *rt, int *fd);
int rt__call_notify(rt__runtime *rt, rt_ref ref, uint64_t tag);
int rt__call_ready(rt__runtime *rt, rt_notice *out, size_t max, size_t *n);
/* rt_yield() from the running task whose handle is task: item joins
 * its stream; rt_stream_next() (streams.c). */
int rt__call_stream_add(rt__runtime *rt, uint64_t task, rt_ref item);
int rt__call_stream_next(rt__runtime *rt, rt_ref ref, rt_ref *item, long timeout_ms);
/* rt_remote_batch(): queue the n records (of one function, each made
 * with room for r's needs), placed as r asks, each with a handle in
 * refs[i]; all or none.  On failure the caller frees them. */
int rt__call_submit_batch(rt__runtime *rt, rt__task **tasks, size_t n, rt__request *r,
                          rt_ref *refs);
/* rt_get(): wait up to timeout_ms (-1: no limit) for ref's object and
 * consume the handle: its bytes in *data (the caller's, rt_free()) and
 * *len (either NULL: dropped), and 0 or the error it ended with (its
 * bytes are set on RT_ETASK); or an error of the wait. */
int rt__call_get(rt__runtime *rt, rt_ref ref, long timeout_ms, void **data, size_t *len);
/* Where an object another rank holds is: its record, held for the caller
 * (rt__call_unhold()), its id, run, holder and length. */
typedef struct rt__held_at {
    rt__task *hold;
    uint64_t object, run, holder, len;
} rt__held_at;
/* rt_get() for a task on another rank, which takes the bytes from where
 * they are: 1 when ref's object is another rank's, with *at (the handle
 * consumed unless keep, the record held); 0 when its bytes are here or
 * it failed (rt_get() then, which finds it done); or an error of the
 * wait, as rt_get()'s. */
int rt__call_get_held(rt__runtime *rt, rt_ref ref, long timeout_ms, int keep,
                      rt__held_at *at);
/* Drop a hold of the caller's (a view, a task given to run) on t. */
void rt__call_unhold(rt__runtime *rt, rt__task *t);
/* With checkpoints (rt_init()), what determines t's result, as far as
 * its function and the bytes it takes say (the objects it takes are
 * added when it is submitted); a nondeterministic task, or any without
 * checkpoints, has none.  Returns 0.  An rt_put() object's: its bytes. */
int rt__call_key_task(rt__runtime *rt, rt__task *t, const rt_arg *args, size_t nargs,
                      int nondeterministic);
void rt__call_key_object(rt__runtime *rt, rt__task *o, const void *data, size_t len);
/* The same key from the hash of the object's bytes that their holder
 * made (rt__call_put_held()): none when hash is 0, 0. */
void rt__call_key_hashed(rt__runtime *rt, rt__task *o, const uint64_t hash[2]);
/* The running task `task` named handles in its result, or yielded: its
 * result is not kept (its handles are its run's). */
void rt__call_unkept(rt__runtime *rt, uint64_t task);
/* rt_put(): o, an object already (rt__task_new_object()), gets a handle
 * once the store has room.  On failure o is freed. */
int rt__call_put(rt__runtime *rt, rt__task *o, rt_ref *ref);
/* rt_put() in a task on another rank, which kept the len bytes: a
 * handle for an object that rank holds, keyed by the hash of its bytes
 * (with checkpoints; 0, 0: none), as rt__call_key_object() would. */
int rt__call_put_held(rt__runtime *rt, int rank, uint64_t len, const uint64_t hash[2],
                      rt_ref *ref);
/* A task with a handle made elsewhere, id (a task of another rank's
 * task, handed here: cluster/tunnel.c; or a worker's named submission:
 * node/callmsg.h), could not be submitted here with rc: the handle names
 * an object failed with rc and the last error's message, which the task
 * gets when it reads it.  0, or -1 when id names something already (or
 * no memory): then nothing changed. */
int rt__call_put_failed(rt__runtime *rt, uint64_t id, int rc);
/* RT_ENOMEM, named call's, when len bytes are more than the whole object
 * store: rt_put() asks before it copies them. */
int rt__call_fits(rt__runtime *rt, size_t len, const char *call);
/* rt_get_view(): wait for ref's object and hold it for a view: 0 or
 * RT_ETASK, with *view set (its bytes and its id); or an error, with no
 * view (a failure other than RT_ETASK has no bytes to view). */
int rt__call_view(rt__runtime *rt, rt_ref ref, long timeout_ms, rt_view *view);
/* rt_view_release(): 0 or RT_EBADREF. */
int rt__call_view_release(rt__runtime *rt, uint64_t view);
/* rt_wait(): wait until num_ready of refs are done (or the time is up);
 * ready[i] says which.  The count, or an error. */
long rt__call_wait(rt__runtime *rt, const rt_ref *refs, size_t n, size_t num_ready,
                   long timeout_ms, unsigned char *ready);
/* rt_cancel(): flags RT_CANCEL_*. */
int rt__call_cancel(rt__runtime *rt, rt_ref ref, int flags);
/* The same for a task another submitted, found by its id (children.c). */
void rt__call_cancel_child(rt__runtime *rt, uint64_t task, int flags);
/* Task parent (running) submitted task (children.c): on record for a
 * cancel of parent, or cancelled now if one was asked already.  The
 * handles of the tasks it submitted, up to max of them into out: how
 * many there are. */
void rt__call_child(rt__runtime *rt, uint64_t parent, rt_ref task);
size_t rt__call_children(rt__runtime *rt, uint64_t parent, uint64_t *out, size_t max);
/* Whether task runs, and no cancel of it was asked. */
int rt__call_runs(rt__runtime *rt, uint64_t task);
/* The task whose handle is task waits for others in a call it made
 * (lend 1), awaited among them: its CPUs are lent meanwhile (rt__ask),
 * and awaited goes first in line; 1 when that was asked, 0 when not (the
 * handle is gone, the task ended).  Its wait over (lend 0, after a 1), it
 * takes them back before any new task takes them: rt__call_went_on()
 * says when it has.  run is the asking run of the task (a worker's
 * rt__task_attempt()): a run that is over asks nothing. */
int rt__call_lend(rt__runtime *rt, uint64_t task, unsigned run, int lend, rt_ref awaited);
/* A task's wait (api/proxy.c) is about to lend its CPUs while it waits
 * for ref: when ref's task is quick and in flight, its answer is read
 * here first, as rt_get() reads it (rt__await()), so that a wait the
 * answer ends at once lends nothing (lending, and taking the CPUs back,
 * is two trips through the runtime thread). */
void rt__call_await(rt__runtime *rt, rt_ref ref);
/* As rt__call_lend() with lend 1, from a caller that may run awaited
 * itself (work-first): the runtime may give it awaited to run instead
 * of lending (rt__dispatch_lend_or_give()), if the task runs in the
 * worker that lane names (its pid: the caller's).  The ask, which the caller
 * passes to rt__call_given(), or NULL when nothing was asked. */
struct rt__ask *rt__call_offer(rt__runtime *rt, uint64_t task, unsigned run, rt_ref awaited,
                              uint64_t lane);
/* A task's submission and its wait for that task, taken by one round:
 * the caller holds the round (rt__call_hold_round()) from before the
 * submission until it made the offer (rt__call_offer()), so that no
 * round sends the task to another worker in between, then runs that
 * round itself and gives the round back (rt__call_run_round()).  It
 * must not wait for the runtime meanwhile. */
void rt__call_hold_round(rt__runtime *rt);
void rt__call_run_round(rt__runtime *rt);
/* What the caller of rt__call_offer() is given to run: the task, held
 * (rt__call_unhold() when its argument was copied), its function, its
 * handle's id, its run, and its argument's bytes. */
typedef struct rt__given {
    rt__task *task;
    uint64_t fn, id;
    unsigned run;
    const void *arg;
    size_t len;
} rt__given;
/* Wait until the runtime answered ask a (rt__call_offer()), which is
 * spent then: 1 when it gave a task to run (*out), 0 when the caller
 * lent its CPUs instead, or the runtime stops. */
int rt__call_given(rt__runtime *rt, struct rt__ask *a, rt__given *out);
/* Wait up to timeout_ms for run `run` of the task to have its CPUs back
 * (or the task to be gone): 1 when it has, 0 when not yet. */
int rt__call_went_on(rt__runtime *rt, uint64_t task, unsigned run, long timeout_ms);
int rt__call_release(rt__runtime *rt, rt_ref ref);

/* Start actor a with its constructor `create`, placed as r asks; its
 * handle in *out: 0.  1 when a live actor has a's name and r takes it
 * (get_if_exists): its handle in *out, and a and create are freed, as
 * they are on failure. */
int rt__call_actor_create(rt__runtime *rt, rt__actor *a, rt__task *create, rt__request *r,
                          rt_actor *out);
/* Queue call t (its method checked) to actor; a handle in *ref; args as
 * rt__call_submit().  On failure t is freed. */
int rt__call_actor_call(rt__runtime *rt, rt_actor actor, rt__task *t, const rt_arg *args,
                        const char *call, rt_ref *ref);
/* rt_actor_get(): the live actor named name. */
int rt__call_actor_get(rt__runtime *rt, const char *name, rt_actor *out);
/* rt_actor_kill(), or (restart) rt_actor_restart(). */
int rt__call_actor_kill(rt__runtime *rt, rt_actor actor, int restart);

/* rt_pg_create() (bundles and strategy checked but for what the nodes
 * say), rt_pg_wait(), rt_pg_remove() (groups.c). */
int rt__call_pg_create(rt__runtime *rt, const rt_bundle *bundles, size_t n, int strategy,
                       rt_pg *pg);
int rt__call_pg_wait(rt__runtime *rt, rt_pg pg, long timeout_ms);
int rt__call_pg_remove(rt__runtime *rt, rt_pg pg);

/* rt_cluster_resources() (available 0) and rt_available_resources(). */
int rt__call_resources(rt__runtime *rt, const char *call, int available,
                       rt_resource **out, size_t *n);
int rt__call_timeline(rt__runtime *rt, const char *path);
/* rt_list_tasks() and its kin (state.c): an array of rt_task_info,
 * rt_actor_info, rt_object_info or rt_pg_info. */
typedef enum { RT__LIST_TASKS, RT__LIST_ACTORS, RT__LIST_OBJECTS, RT__LIST_GROUPS } rt__list_kind;
int rt__call_list(rt__runtime *rt, rt__list_kind kind, void **out, size_t *n);
/* rt_unhealthy_gpus(). */
int rt__call_unhealthy(rt__runtime *rt, rt_gpu_health **out, size_t *n);

/* For tests and tools: the fork server's pid, 0 when none runs; the
 * bytes of payload this rank received from other ranks of its MPI job,
 * and in *messages unless NULL the messages (0 on one machine). */
pid_t rt__call_forkserver(rt__runtime *rt);
uint64_t rt__call_payload_in(rt__runtime *rt, uint64_t *messages);

#endif

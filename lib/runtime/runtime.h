/*
 * runtime.h - the runtime's state, all in one struct: private to the
 * runtime's own modules (mk/check-layers), which take it explicitly:
 * life.c its life (rt_init(), rt_shutdown(), forks), round.c its round
 * and the ways into it, calls.c what the public calls ask (calls.h, the
 * one door from api/).  Nothing else reads its fields.
 *
 * The lock discipline, written once:
 * - `lock` guards the fields marked [L] here and in the task and actor
 *   records.  Application threads take it in every public call.  The
 *   runtime thread takes it once per round of its loop to exchange with
 *   them: it takes what was submitted and the kills asked for, and
 *   publishes the tasks that finished and the actors that died.
 *   `wake_lock` guards the fields marked [W], which say whether the
 *   loop's wake-up may be written to.
 * - No lock is held across a system call, a wait or a large copy:
 *   records and arguments are made before it is taken, results are
 *   copied or mapped by the round's holder outside it, records are freed
 *   after it is released, and whoever waits for something (a task, the
 *   round, the end of rt_init() or rt_shutdown()) waits on a condition,
 *   which releases it.
 * - Everything not marked [L] or [W] is the runtime's work: the
 *   dispatcher, the scheduler, the nodes, the loop's callbacks.  The
 *   round is a baton, not a lock: the thread that holds it (round_held)
 *   does that work, system calls included; the others pass it by or wait
 *   for it (rt__round_take()).  It is the runtime thread's, except while
 *   that thread waits in epoll; then an application thread that submitted
 *   a task when no other waited to be sent may take it and send the task
 *   itself, sparing the runtime thread a wake-up (rt__submitted()), and
 *   one in rt_get() may read its task's answer (rt__await()); in an MPI
 *   job, the bridge's thread delivers what other ranks sent and runs the
 *   round that follows (cluster/bridge.h).  Other
 *   calls that need the round's books (the census, the timeline,
 *   placement groups) do not take it for their own work: they post an
 *   errand, which the round's holder runs between two exchanges; when
 *   the round is free the asker does that round itself, as a submitter
 *   does (rt__errand_ask()).  An errand reads the books and makes what
 *   is asked in memory; what the asker does with it (rt_timeline()
 *   writes a file) it does after, outside the round.
 * - The order, for a thread that holds more than one: `changing` (the
 *   right to start or stop the runtime, below), then the round, then
 *   `lock`, then `wake_lock`.  The round and `changing` are flags under
 *   `lock`, each with a condition to wait on: a thread waits for one only
 *   while it holds none later in that order, and a thread that holds
 *   `lock` never waits for the round, it only tries it
 *   (rt__round_try_locked()).  Unlike `lock`, these two are held across
 *   system calls, as their work is made of them (sends, forks, the MPI
 *   job's joining); what they exclude is the same work on another
 *   thread, never a public call, which needs `lock` alone.
 * - rt_init() and rt_shutdown() run one at a time: `changing` says that
 *   one is at work, and the other waits on `settled`.  rt_init() makes
 *   the state STARTING, and RUNNING only once the node runs and the MPI
 *   job is joined: public calls before that fail with RT_ENOTINIT.  What
 *   rt_init() fixes (the scheduler's resource names and node totals) any
 *   thread may read once the state is RUNNING.
 *
 * The layers, top to bottom, are lib/'s folders (mk/check-layers): the
 * public calls (api/) and the handle tables; the round (here)
 * and the dispatcher (dispatch/), which carries out the scheduler's
 * decisions (sched/) on the nodes (node/node.h): peers (cluster/) and
 * the local node with its fork server, worker processes, protocol and
 * channels (node/); detection (devices/); and base/.
 */
#ifndef RT_RUNTIME_H
#define RT_RUNTIME_H

#include "cluster.h"
#include "door.h"
#include "request.h"
#include "table.h"
#include "base/loop.h"
#include "dispatch/actor.h"
#include "dispatch/dispatch.h"
#include "node/local.h"
#include "node/task.h"

#include "cluster/image.h"

#include <pthread.h>

#define RT__ENDED_LOG 4096

typedef enum rt__state {
    RT__STOPPED,
    RT__STARTING, /* rt_init() is at work */
    RT__RUNNING,
    RT__STOPPING
} rt__state;

#define RT__FOLDER_MAX 1024 /* the longest spill or checkpoint folder's name + 1 */

typedef struct rt__runtime {
    pthread_mutex_t lock;
    pthread_mutex_t wake_lock;
    pthread_cond_t changed;      /* [L] tasks finished, or the state changed */
    pthread_cond_t answered;     /* [L] an ask whose caller waits for its
                                    answer was answered (rt__call_given()):
                                    every ask is, at the latest when the
                                    runtime stops */
    int round_held;              /* [L] a thread does the runtime's work */
    int round_waiting;           /* [L] threads waiting for the round */
    pthread_cond_t round_free;   /* [L] the round was given back */
    int changing;                /* [L] rt_init() or rt_shutdown() at work */
    int blank;                   /* [L] as make_blank() left it: no change
                                    began since (a fork keeps it as is) */
    pthread_cond_t settled;      /* [L] it has ended */
    int loop_open;               /* [W] the loop's wake-up may be written */
    int wakers;                  /* [W] threads writing it now */
    pthread_cond_t wakers_gone;  /* [W] the last of them is done */
    rt__state state;             /* [L] */
    int was_shut_down;           /* [L] explains a call after rt_shutdown() */
    const char *stop_reason;     /* [L] why it stopped by itself, or NULL */
    int waiters;                 /* [L] threads inside pthread_cond_wait */
    int any_waiters;             /* [L] of them, those that any task's end
                                    may concern (not one task's alone) */
    int loop_asleep;             /* [L] the runtime thread may block: wake it */
    int round_coming;            /* [L] a thread holds the round to run it
                                    soon (rt__round_hold()): what is
                                    submitted meanwhile needs no wake */
    int round_rechecks;          /* [L] its holder looks for submissions
                                    before it gives it back
                                    (rt__round_here()): they need none */
    uint32_t next_seq;           /* [L] submission order (it wraps) */
    size_t queued;               /* [L] tasks waiting to be sent, as of the
                                    last exchange */
    rt__table tasks;             /* [L] object handles: tasks', puts' */
    rt__table actors;            /* [L] actor handles */
    rt__table views;             /* [L] open views (rt_get_view()) */
    rt__table groups;            /* [L] placement groups not removed
                                    (sched/scheduler.h) */
    size_t store_used;           /* [L] bytes of the objects held */
    /* [L] The handles of the last RT__ENDED_LOG tasks published, the
     * n-th at ended[n % RT__ENDED_LOG], and how many ever were: a wait
     * for many handles reads what ended since it last looked, rather
     * than every handle (rt__call_wait()). */
    uint64_t ended[RT__ENDED_LOG];
    uint64_t nended;
    /* [L] The least nended at which one of the threads that wait for any
     * task's end wants waking (rt__wait_ends()): a round that publishes
     * less wakes none of them.  Each lowers it as it goes to sleep; a
     * broadcast, waking them all, sets it back to 0. */
    uint64_t any_wake_at;
    size_t store_size;           /* fixed by rt_init(): object_store_bytes */
    int room_waiters;            /* [L] threads waiting for room in it */
    rt__tasks incoming;          /* [L] submitted, not yet taken */
    rt__actor *kills;            /* [L] kills asked for, not yet taken */
    struct rt__ask *asks;        /* [L] cancels and lends asked for, not yet
                                    taken, newest first */
    struct rt__errand *errands;  /* [L] work asked of the round, not yet
                                    taken, newest first */
    rt__loop loop;
    rt__timer retry;             /* the runtime thread's: a lease to try again */
    rt__timer expiry;            /* a task may pass its timeout_ms */
    rt__timer grace;             /* stopping: the actors' destructors' time ends */
    rt__local *local;
    rt__dispatch dispatch;
    rt__cluster *cluster;        /* the MPI job joined, or NULL */
    int recording;               /* keep a timeline (fixed by rt_init()) */
    int was_dumpable;            /* before rt_init()'s guard; -1: no guard */
    rt__timeline timeline;       /* the round holder's: what ended */
    char *timeline_path;         /* RTASK_TIMELINE: rt_shutdown() writes it */
    rt__code_map code;           /* what the fork server has (fixed by rt_init()) */
    unsigned code_generation;    /* which rt_init() took it */
    rt__door_hooks door_hooks;   /* who serve tasks' calls (set by rt_init()) */
    rt__watch w_door;            /* the door they come through */
    struct {
        int fd;                  /* eventfd: readable while notices wait
                                    (fixed by rt_init()) */
        rt__idmap watches;       /* [L] asked for, by handle */
        struct rt__watch_rec *head, *tail; /* [L] ready: the notices */
        size_t count;            /* [L] */
        int signalled;           /* [L] fd was written since the queue was
                                    last emptied */
    } notices;
    rt__idmap streams;           /* [L] what tasks yielded, not yet read */
    rt__idmap named;             /* [L] live actors by name (calls.c) */
    rt__idmap children;          /* [L] tasks that running tasks submitted
                                    (children.c) */
    rt__idmap running_orphans;   /* [L] tasks not done whose handle was
                                    dropped (objects.c) */
    struct {
        /* Where objects spill (fixed by rt_init()), or "": they do not
         * (spill.c).  An array, not a string of the heap: a process the
         * application forks blanks the runtime without freeing. */
        char dir[RT__FOLDER_MAX];
        int busy;                /* [L] a thread moves objects to files */
    } spill;
    struct {
        char dir[RT__FOLDER_MAX]; /* where results are kept (fixed by
                                     rt_init()), or "" (checkpoint.c) */
        size_t unsynced;         /* the round holder's: files written since
                                    the folder was last flushed */
        uint64_t first_unsynced_ns; /* when the first of them was */
    } checkpoint;
    rt__pull *pull_asks;         /* [L] objects other ranks hold that
                                    readers here wait for (objects.c) */
    size_t npull_asks, cap_pull_asks; /* [L] */
    pthread_t thread;
} rt__runtime;

#define RT__OUTPUT_WAIT_MS 100 /* for task output to be written before results */

/* ---- children.c ------------------------------------------------------------------ */

/* [L] parent is published done: its children are forgotten.  And the end
 * of every record (after the runtime stopped). */
void rt__children_forget_locked(rt__runtime *rt, rt__task *parent);
void rt__children_free(rt__runtime *rt);

/* ---- calls.c: actors' names ------------------------------------------------------ */

/* [L] a, killed or dead, leaves its name to the next actor. */
void rt__actor_unname_locked(rt__runtime *rt, rt__actor *a);

/* ---- calls.c: checks every call makes ------------------------------------------- */

/* [L] Fail a public call made when the runtime is not running, in a
 * worker, or after rt_shutdown(); 0 when it is running. */
int rt__check_running(const rt__runtime *rt, const char *call);
/* [L] A thread is about to wait for results without reading them
 * itself: the answers the local node's workers hold for a caller that
 * may read them in their journals go now (node/local.h). */
void rt__unhold_answers(rt__runtime *rt);
/* [L] Wait for a change (a task ended, room in the store, the state)
 * until deadline (timeout_ms < 0: none); RT_ETIMEDOUT when it passed.
 * rt__wait_end() waits the same for t's end: other tasks' ends do not
 * wake it (a thread waiting for the last task of a graph would wake at
 * every round). */
int rt__wait_change(rt__runtime *rt, long timeout_ms, const struct timespec *deadline);
/* [L] As rt__wait_change(), for a thread that needs `ends` more tasks
 * to end: fewer ends than that do not wake it (a wait for all of a
 * graph's tasks would wake at every round). */
int rt__wait_ends(rt__runtime *rt, uint64_t ends, long timeout_ms,
                  const struct timespec *deadline);
int rt__wait_end(rt__runtime *rt, rt__task *t, long timeout_ms,
                 const struct timespec *deadline);
/* [L] Wait until ref's record is done, with its bytes here (pulled from
 * the rank that holds them, if another does, unless how has
 * RT__WAIT_ELSEWHERE): 0 and *t, or an error (RT_EBADREF, RT_ETIMEDOUT
 * with call's message, the runtime's end).  RT__WAIT_AWAIT in how: it
 * may read the answer itself first (rt__await()). */
enum { RT__WAIT_AWAIT = 1, RT__WAIT_ELSEWHERE = 2 };
int rt__wait_done(rt__runtime *rt, rt_ref ref, long timeout_ms, int how,
                  const char *call, rt__task **t);

/* A piece of the round's work that an application thread asks for
 * rather than take the round (the census, the timeline, placement
 * groups: the books they read and change are the round holder's).  The
 * holder runs it between two exchanges, without the lock, and says it is
 * done; what it returned, and its message, go back to the asker. */
typedef int rt__errand_fn(rt__runtime *rt, void *ctx);
typedef struct rt__errand {
    rt__errand_fn *run;
    void *ctx;
    const char *call;         /* the public call that asks */
    int rc;                   /* [L] what run returned */
    int done;                 /* [L] */
    char why[256];            /* [L] its message, when rc < 0 */
    struct rt__errand *next;  /* [L] on rt->errands */
} rt__errand;

/* [L] not held: ask the round to run run(rt, ctx) and wait until it has:
 * what it returned, or the error of a runtime that does not run. */
int rt__errand_ask(rt__runtime *rt, const char *call, rt__errand_fn *run, void *ctx);
/* [L] Fail the errands an exchange took, with RT_ESHUTDOWN, when the
 * books are gone (the round runs the others). */
void rt__errands_fail_locked(rt__runtime *rt, rt__errand *list);

/* ---- round.c: the round and the ways into it ---------------------------------- */

/* Take the round, waiting while another thread holds it; give it back.
 * ([L] not held.)  [L] held: take it if nobody holds it nor waits for
 * it, 1 when taken. */
void rt__round_take(rt__runtime *rt);
void rt__round_give(rt__runtime *rt);
int rt__round_try_locked(rt__runtime *rt);
/* Take the round to run it soon on the calling thread, which then makes
 * calls that need no wake meanwhile; run it there, again while
 * submissions came meanwhile (a few times), and give it back, the
 * runtime thread woken for what is left.  caller_waits: the thread's
 * caller may wait at once for the tasks sent (node/node.h's flush). */
void rt__round_hold(rt__runtime *rt);
void rt__round_here(rt__runtime *rt, int caller_waits);
/* Take the round when it is free and the runtime runs (or starts, as a
 * serving rank's does until it ends): 1 when taken (the MPI bridge's
 * thread, cluster/bridge.h), which then runs rt__round_bridge(): as
 * rt__round_here(rt, 0), and on a serving rank, the answer of a quick
 * task it delivered alone is waited for on its worker after the first
 * round (rt__cluster_await()), for the bridge to send at once. */
int rt__round_take_running(rt__runtime *rt);
void rt__round_bridge(rt__runtime *rt);
/* The runtime thread's loop, from rt_init() to its stop. */
void rt__round_loop(rt__runtime *rt);

/* Wake the runtime thread, from any thread; the loop's wake-up may be
 * written from rt__wakers_open() until rt__wakers_close(), which waits
 * for the writers, then closes the loop. */
void rt__wake_runtime(rt__runtime *rt);
void rt__wakers_open(rt__runtime *rt);
void rt__wakers_close(rt__runtime *rt);

/* [L] Queue a record for the runtime.  Returns 1 when the caller must call
 * rt__submitted() after unlocking. */
int rt__submit(rt__runtime *rt, rt__task *t);
/* What rt__submit() and its kin return besides 0. */
#define RT__WAKE 1      /* wake the runtime thread */
#define RT__WAKE_IDLE 2 /* the same, and no other task waits to be sent */
/* [L] The same, giving the record a handle in *ref first; or RT_ENOMEM. */
int rt__submit_ref(rt__runtime *rt, rt__task *t, rt_ref *ref);
/* [L] Ask the runtime to act on a kill, or (restart) to kill the actor's
 * process as a crash would; same return. */
int rt__submit_kill(rt__runtime *rt, rt__actor *a, int restart);
/* What is asked of a task not done, until the runtime takes it: a cancel
 * (rt_cancel()), or, for a task that waits for others in a nested call,
 * to lend its CPUs or take them back.  A record of its own, so that task
 * records pay nothing for it. */
typedef struct rt__ask {
    struct rt__ask *next;
    rt__task *task;   /* not done when asked */
    int how;          /* RT__CANCEL_*, or RT__ASK_LEND, RT__ASK_GO_ON */
    rt__task *awaited; /* RT__ASK_LEND: a task it waits for, or NULL */
    unsigned run;      /* lends: the run of the task that asks */
    /* A lend whose caller may run awaited itself (rt__call_offer()) is
     * the caller's too, until the runtime has answered it: */
    unsigned char may_run;  /* the caller runs in the worker of pid lane */
    uint64_t lane;
    unsigned char refs;     /* [L] may_run: the caller and the runtime, 2
                               until either is done with it; the last frees */
    unsigned char answered; /* [L] may_run: the runtime acted on it */
    unsigned given_run;     /* [L] with given: its run */
    rt__task *given;        /* [L] answered: awaited, held, when the caller
                               is to run it (rt__dispatch_lend_or_give()) */
} rt__ask;

enum { RT__ASK_LEND = 16, RT__ASK_GO_ON };

/* [L] Ask the runtime to carry out c (rt__malloc()ed; the runtime frees
 * it); returns how to wake it, as rt__submit(). */
int rt__submit_ask(rt__runtime *rt, rt__ask *c);
/* [L] The runtime is done with c, having given its caller `given` to run
 * (or NULL): 1 when c is to be freed now (nobody else holds it). */
int rt__ask_answered_locked(rt__runtime *rt, rt__ask *c, rt__task *given);
/* End a submission made under the lock: unlock, then free t when rc
 * says it failed, or act on rc's wake-up (rt__submitted()).  Returns rc
 * when negative, else 0. */
int rt__submit_done(rt__runtime *rt, rt__task *t, int rc);
/* After a submission that returned how (RT__WAKE...): the runtime thread
 * sleeps.  When no other task waits to be sent, do its round here (the
 * task goes straight to its worker); otherwise, when tasks are being
 * queued by the thousand, or when the round is busy, wake it: it sends
 * them in batches. */
void rt__submitted(rt__runtime *rt, int how);
/* rt_get() is about to sleep for ref ([L] not held): when the runtime
 * thread is idle and the task is in flight and quick, wait for its answer
 * on this thread instead, and publish it. */
void rt__await(rt__runtime *rt, rt_ref ref);

/* What the round's holder takes and gives in one exchange. */
typedef struct rt__exchange {
    rt__tasks incoming;    /* taken: submitted tasks */
    rt__actor *kills;      /* taken: kills asked for */
    rt__ask *asks;         /* taken: asks of tasks not done, in order, each
                              cancel copied into its task's cancelling */
    rt__ask *dropped;      /* taken: asks of tasks done, to free */
    rt__errand *errands;   /* taken: work asked of the round */
    rt__pull *pulls;       /* taken: objects to pull (npulls) */
    size_t npulls;
    rt__outbox out;        /* taken: what the dispatcher left to publish
                              (freed by the taker once published) */
    rt__actor *published;  /* given: dead actors, now only epitaphs */
    rt__tasks orphans;     /* given: finished tasks nobody wants, to free */
    rt__tasks keep;        /* given: finished tasks whose results are to be
                              kept (checkpoint.c), held */
    int notify;            /* given: write the notices' descriptor */
} rt__exchange;

/* [L] The exchange: take what was submitted, publish what finished. */
void rt__exchange_locked(rt__runtime *rt, rt__exchange *x);

/* ---- groups.c: placement groups ------------------------------------------------- */

/* [L] The groups the dispatcher placed (taken from its outbox) are ready
 * now (waiters may go); 1 when there were some. */
int rt__groups_publish(rt__link *placed);

/* ---- notices.c: what an event loop hears (rt_notify()) ----------------------------- */

/* rt_init(): the descriptor and the watches; 0 or an error.  rt_shutdown():
 * close them, once no rt_ready() is left. */
int rt__notices_open(rt__runtime *rt);
void rt__notices_close(rt__runtime *rt);
/* [L] t is published: queue the notices asked for it; 1 when the
 * descriptor must be written (rt__notices_signal(), after unlocking). */
int rt__notices_publish(rt__runtime *rt, rt__task *t);
void rt__notices_signal(rt__runtime *rt);

/* ---- streams.c: what tasks yield (rt_yield()) ------------------------------------- */

typedef struct rt__stream rt__stream;
/* [L] The handle of task goes: so do the handles of what it yielded that
 * were not read, their records into *freed (for the caller to free, with
 * the stream it returns, outside the lock: rt__stream_free()). */
rt__stream *rt__streams_drop(rt__runtime *rt, uint64_t task, rt__tasks *freed);
void rt__stream_free(rt__stream *s);
/* rt_shutdown(): free every stream. */
void rt__streams_free(rt__runtime *rt);

/* ---- checkpoint.c: results kept for a later run --------------------------------- */

/* rt_init(): the folder (rt_config.checkpoint_dir, $RTASK_CHECKPOINT_DIR,
 * or none), made if missing, claimed for this program: 0, or RT_EINVAL
 * (another program's, or unusable).  rt_shutdown(): flush it. */
int rt__checkpoint_open(rt__runtime *rt, const char *dir);
void rt__checkpoint_close(rt__runtime *rt);
/* [L] A submission of t, its objects held: when its results are kept,
 * they become its (and its parts') bytes, the lock released meanwhile:
 * 1; 0 when they are not (t runs); or the runtime's end. */
int rt__checkpoint_take(rt__runtime *rt, rt__task *t);
/* [L] t is published: when its result is to be kept (or, kept by the
 * rank that holds it, taken back: it names handles), hold it into keep.
 * Then ([L] not held, by the round's holder) write (or take back) what
 * keep holds, and let go of it. */
void rt__checkpoint_note(rt__runtime *rt, rt__task *t, rt__tasks *keep);
void rt__checkpoint_write(rt__runtime *rt, rt__tasks *keep);

/* ---- spill.c: objects in files while the store is full ------------------------------ */

/* rt_init(): the spill folder, the configuration's (dir) or the
 * environment's (RTASK_SPILL_DIR, else TMPDIR, else /tmp): 0, or
 * RT_EINVAL when the one named cannot be written in.  rt_shutdown():
 * forget it (each file went with its object). */
int rt__spill_open(rt__runtime *rt, const char *dir);
void rt__spill_close(rt__runtime *rt);
/* [L] The store needs need more bytes (0: to be no longer over full):
 * move objects nothing holds to files, the lock released meanwhile.
 * 1 when some moved, -1 when none could, 0 when none was tried (none
 * may move, or another thread moves them). */
int rt__spill_make_room(rt__runtime *rt, size_t need);
/* [L] o is spilled (rt__objects_spilled()): read its bytes back, or fail
 * it with RT_ESYS when they cannot be; or wait while another thread does.
 * The lock is released meanwhile: look o up again after. */
void rt__spill_restore(rt__runtime *rt, rt__task *o);

/* ---- objects.c: the store's books and the objects' lifetimes -------------------------
 *
 * A record is an object once it ended (or from rt_put()).  It lives while
 * the application's handle names it (until rt_get() or rt_release()
 * drops it: then it is an orphan) or anything holds it (holds): a task
 * not yet finished that takes it, a view, a copy being read.  Its bytes
 * count in the store from the moment it is published until it is freed
 * or rt_get() takes them. */

/* [L] t is published: its bytes enter the store, and the objects it took
 * are held no more by it; what is left with no holder goes to *orphans
 * (t itself too, when it is an orphan). */
void rt__objects_publish(rt__runtime *rt, rt__task *t, rt__tasks *orphans);
/* [L] Drop one hold on o: 1 when o must now be freed (by the caller,
 * outside the lock); its bytes have left the store then. */
int rt__objects_unhold(rt__runtime *rt, rt__task *o);
/* [L] o's bytes leave the store (it is freed, or rt_get() takes them). */
void rt__objects_leave(rt__runtime *rt, rt__task *o);
/* [L] Wait until the store has room for need more bytes (a submission:
 * 0, until it is no longer over full), up to RT__STORE_WAIT_MS; 0 or
 * RT_ENOMEM (or the runtime's end) with a message naming call. */
int rt__objects_room(rt__runtime *rt, size_t need, const char *call);
#define RT__STORE_WAIT_MS 2000
/* Objects that other ranks hold (a task's large result made there): a
 * record with holder set and no bytes until they are pulled here.
 * [L] Whether o is such an object, its bytes not here yet; ask for them
 * (once): 1 when the runtime thread must be woken (after unlocking). */
int rt__objects_elsewhere(const rt__task *o);
/* [L] Whether o's bytes are in a file (spill.c), to read back. */
int rt__objects_spilled(const rt__task *o);
int rt__objects_ask_pull(rt__runtime *rt, rt__task *o);
/* [L] What the dispatcher pulled came (out->arrived): each record, found
 * by handle or among the parked tasks' arguments, gets its bytes, or is
 * lost; the bytes nobody took stay in out->arrived, freed with the
 * outbox after unlocking.  1 when some came. */
int rt__objects_arrived(rt__runtime *rt, rt__outbox *out);
/* The shared memory of freed objects kept for reuse: this share of the
 * store at most (1/8). */
#define RT__POOL_SHARE 8
/* [L] Resolve the objects among args into t's list and hold them; 0 or
 * RT_EBADREF, with nothing held. */
int rt__objects_take_args(rt__runtime *rt, rt__task *t, const rt_arg *args,
                          const char *call);
/* [L] Undo rt__objects_take_args() (the submission failed after it). */
void rt__objects_untake_args(rt__task *t);
/* [L] Drop the application's handle id of an object: its record when it
 * must now be freed (by the caller, outside the lock), else NULL (it is
 * not done, or held: it goes when both are over). */
rt__task *rt__objects_drop_handle(rt__runtime *rt, uint64_t id);
/* [L] At the end: drop every view's hold, freed records into *orphans. */
void rt__objects_end_views(rt__runtime *rt, rt__tasks *orphans);
/* [L] The record of task id while it runs, even when its handle was
 * dropped (its caller's run died, or released it): it still makes calls,
 * and lends its CPUs while it waits.  NULL once it is done and dropped. */
rt__task *rt__objects_running(rt__runtime *rt, uint64_t id);
/* At the end, once every record is published: forget them all. */
void rt__objects_running_free(rt__runtime *rt);

#endif

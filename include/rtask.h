/*
 * rtask.h - run C functions as tasks in a pool of forked worker processes.
 *
 * This is the only public header of rtask.  Every function that can fail
 * returns 0 on success or a negative RT_E* code; rt_strerror() names the
 * code and rt_last_error() gives the detailed message of the calling
 * thread's most recent failure.  Every function is thread-safe.
 *
 * Ownership in one line: the runtime copies everything you pass in, and
 * everything it hands back (result bytes) is yours, freed with rt_free().
 *
 * Copyright (c) 2026 The rtask developers.  MIT licence, see COPYING.
 */
#ifndef RTASK_H
#define RTASK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define RT_EXPORT __attribute__((visibility("default")))
#else
#define RT_EXPORT
#endif

/*
 * RT_NODISCARD: ignoring the code a call returns is warned about, and a
 * cast to void says that it is ignored on purpose, (void)rt_cancel(r, 0),
 * with every compiler.  GCC honours the cast only for the standard
 * attribute, which it accepts in every C mode (the push below keeps
 * -pedantic quiet about it before C23); clang honours it for both.
 */
#if defined(__cplusplus) && __cplusplus >= 201703L
#define RT_NODISCARD [[nodiscard]]
#elif !defined(__cplusplus) && defined(__GNUC__) && !defined(__clang__) && \
    defined(__has_c_attribute)
#if __has_c_attribute(nodiscard)
#define RT_NODISCARD [[nodiscard]]
#define RT_PEDANTIC_OFF_ 1
#endif
#endif
#if !defined(RT_NODISCARD) && (defined(__GNUC__) || defined(__clang__))
#define RT_NODISCARD __attribute__((warn_unused_result))
#elif !defined(RT_NODISCARD)
#define RT_NODISCARD
#endif
#ifdef RT_PEDANTIC_OFF_
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#endif

#define RT_VERSION_MAJOR 0
#define RT_VERSION_MINOR 1
#define RT_VERSION_PATCH 0

/* Error codes: every failing call returns one of these (all negative). */
enum {
    RT_OK = 0,
    RT_EINVAL = -1,       /* an argument is invalid (see rt_last_error()) */
    RT_ENOTINIT = -2,     /* rt_init() has not been called */
    RT_EALREADY = -3,     /* rt_init() was called twice */
    RT_ENOMEM = -4,       /* out of memory */
    RT_ETIMEDOUT = -5,    /* the timeout passed before the result was ready */
    RT_EBADREF = -6,      /* unknown, already consumed or released handle */
    RT_ESHUTDOWN = -7,    /* rt_shutdown() ended the runtime */
    RT_EWORKERDIED = -8,  /* the worker died running the task, retries spent */
    RT_ETASK = -9,        /* the task function returned a non-zero status */
    RT_EINFEASIBLE = -10, /* no node could ever satisfy the request */
    RT_ESYS = -11,        /* a system call failed (errno in rt_last_error()) */
    RT_EINWORKER = -12,   /* called from inside a task, where it is not allowed */
    RT_EACTORDIED = -13,  /* the actor was killed, or died and cannot restart */
    RT_ECANCELLED = -14,  /* rt_cancel() stopped the task */
    RT_EKILLED = -15,     /* the task ran past its timeout_ms and was killed */
    RT_EDEPENDENCY = -16, /* an object the task takes failed: it never ran */
    RT_EEXIST = -17       /* a live actor already has that name */
};

/* Timeouts are in milliseconds; RT_FOREVER waits without limit, 0 polls. */
#define RT_FOREVER (-1L)

/* Special values for counts and amounts in rt_config and rt_opts. */
#define RT_DETECT (-1.0) /* num_cpus / num_gpus: take what the machine has */
#define RT_DEFAULT (-1)  /* num_cpus, num_gpus (in rt_opts: 0), max_calls,
                            max_retries, max_restarts: the documented
                            default */

/* A handle to an object: a submitted task's result, an actor call's, or
 * bytes given to rt_put().  It is a plain value: copy it freely.  It
 * stays valid until rt_get() consumes it or rt_release() drops it; the
 * zero handle is never valid.  Tasks given it as an argument keep the
 * object alive on their own (rtask(7), "Objects"). */
typedef struct rt_ref {
    uint64_t id;
} rt_ref;

/* The result a task hands back; only valid inside the task function. */
typedef struct rt_result rt_result;

/*
 * A task function.  It runs in a worker process, gets a read-only view of
 * the argument bytes (valid until it returns) and may set result bytes
 * with rt_result_set() or rt_result_alloc().  A non-zero return makes
 * rt_get() report RT_ETASK; the result bytes still reach the caller, so
 * a task can explain its failure in them.
 */
typedef int (*rt_fn)(const void *arg, size_t arg_len, rt_result *result);

/*
 * Runtime configuration.  Start from RT_CONFIG_INIT or rt_config_init();
 * a struct that was only zero-initialised works too, and then each field
 * left at 0 takes its default (see rtask(7), "Options and defaults").
 */
typedef struct rt_config {
    int init_magic_;    /* set by RT_CONFIG_INIT; do not touch */
    double num_cpus;    /* CPU resource total; RT_DETECT = online CPUs */
    double num_gpus;    /* GPUs, a whole number; RT_DETECT = detected GPUs
                           (those CUDA_VISIBLE_DEVICES lists, if set) */
    int num_workers;    /* workers started at init and kept idle;
                           RT_DEFAULT = one per CPU */
    const char *resources; /* custom resources and their totals,
                              "name=amount,...", e.g. "fpga=2,disk=0.5";
                              NULL = none.  One accelerator family besides
                              GPUs ("neuron_cores", "TPU", "HPU" or
                              "NPU"), given or detected, is placed like
                              GPUs (rt_init(3)) */
    const char *accelerator_type; /* the GPUs' type (RT_ACCEL_H100...),
                                     or the other accelerators' when the
                                     node has no GPU; NULL = each
                                     detected one */
    const char *sysfs_root; /* where detection reads sys/ and proc/; NULL =
                               $RTASK_SYSFS_ROOT, else "/" */
    int bind_cpus;      /* bind a worker that holds GPUs to the CPUs near
                           them; RT_DEFAULT = yes, 0 = no */
    const char *gpu_vendor; /* whose GPUs are the resource "GPU": "nvidia",
                               "amd" or "intel"; NULL = NVIDIA's if the
                               machine has any, else AMD's, else Intel's */
    const char *cluster; /* "mpi": join the MPI job this process is a rank
                            of (see rt_init(3)); NULL = $RTASK_CLUSTER,
                            else one machine */
    unsigned long long gpu_memory; /* bytes of memory of each GPU, for
                                      rt_opts.gpu_memory; 0 = as NVML
                                      says (unknown without it) */
    int gpu_mps;        /* hold tasks to their GPU shares with NVIDIA MPS:
                           1 = yes, 0 = no; RT_DEFAULT = yes when an MPS
                           daemon runs (rt_init(3)) */
    int timeline;       /* 1: record every task for rt_timeline(); 0 (the
                           default): no record, unless $RTASK_TIMELINE */
    const int *keep_fds; /* descriptors of the application that workers
                            keep open (besides 0, 1 and 2, which they
                            always have), an array ended by -1; NULL =
                            none: every other one is closed in them */
    unsigned long long object_store_bytes; /* bytes the objects held may
                                              take; 0 = 30 % of RAM */
    const char *labels; /* this node's labels, "key=value,...", besides
                           $RTASK_LABELS's and the built-in ones
                           (rtask(7)); NULL = none */
    int gpu_memory_kill; /* 1: a GPU task seen (through NVML) to hold more
                            of a GPU's memory than its share is killed and
                            fails with RT_EKILLED; 0 (the default): a
                            warning names it */
    const char *spill_dir; /* where objects move when the object store is
                              full (rt_put(3), "Spilling"); NULL =
                              $RTASK_SPILL_DIR, else $TMPDIR, else /tmp */
    const char *checkpoint_dir; /* keep every task's result there, and take
                                   it from there instead of running the
                                   task again in a later run
                                   (rtask_checkpoint(7)); NULL =
                                   $RTASK_CHECKPOINT_DIR, else none */
    int guard_memory;   /* 1: for untrusted tasks, the application's process
                           and rtask's are not dumpable (prctl(2)) from
                           rt_init() to rt_shutdown(), so that a task cannot
                           open their memory or descriptors through
                           /proc/<pid> as processes of one user otherwise
                           can (rtask(7), "What a task can reach"); it costs
                           the application its core dumps and debuggers of
                           that user meanwhile.  0 (the default): unless
                           $RTASK_GUARD_MEMORY is 1 */
} rt_config;

#define RT_CONFIG_MAGIC_ 0x72744366
#define RT_CONFIG_INIT \
    { RT_CONFIG_MAGIC_, RT_DETECT, RT_DETECT, RT_DEFAULT, NULL, NULL, NULL, \
      RT_DEFAULT, NULL, NULL, 0, RT_DEFAULT, 0, NULL, 0, NULL, 0, NULL, NULL, 0 }

/* A handle to a placement group (rt_pg_create()); a plain value, valid
 * until rt_pg_remove() or rt_shutdown(); the zero handle is never valid. */
typedef struct rt_pg {
    uint64_t id;
} rt_pg;

/*
 * Options of one task.  Start from RT_OPTS_INIT or rt_opts_init() and set
 * what you need.  A zero-initialised struct also means "all defaults",
 * which is why 0 in max_calls or max_retries means "default" there and
 * only means 0 in a struct made by the initialiser (rtask(7) explains).
 * Strings are copied at submission.
 */
typedef struct rt_opts {
    int init_magic_;    /* set by RT_OPTS_INIT; do not touch */
    const char *name;   /* name in output prefixes; NULL = function symbol
                           (for an actor, its class name).  An actor's
                           name is also its name in the runtime: one
                           live actor at a time has it, and
                           rt_actor_get() finds it */
    double num_cpus;    /* CPUs held while the task runs; default 1 for a
                           task, 0 for an actor (as Ray) */
    double num_gpus;    /* GPUs held: a fraction in (0, 1] or a whole
                           number; default (0 or RT_DEFAULT) none */
    int max_calls;      /* calls before a worker retires; 0 = unlimited;
                           default 1 for GPU tasks, else unlimited; not
                           for actors */
    int max_retries;    /* re-runs after a worker death; default 3; not
                           for actors, whose calls are never re-run */
    int max_restarts;   /* actors only: how often a dead actor is started
                           again; default 0 */
    const char *resources; /* custom resources held while the task runs,
                              "name=amount,..."; NULL = none */
    const char *accelerator_type; /* run only on GPUs (or, with no GPU
                                     asked, accelerators) of this type
                                     (RT_ACCEL_V100...); NULL = any */
    unsigned long long gpu_memory; /* bytes of one GPU's memory, instead
                                      of num_gpus: held as the fraction
                                      they are of the GPU it lands on;
                                      0 = none */
    long timeout_ms;    /* tasks only: kill one that runs longer (not
                           retried: RT_EKILLED); 0 = no limit */
    int retry_exceptions; /* tasks only: 1 = run again, within
                             max_retries, a task whose function returned
                             non-zero; 0 (the default) = do not */
    int max_task_retries; /* actors only: how often a call lost with its
                             actor's process is sent again to the actor
                             restarted (max_restarts); default 0 */
    int max_concurrency;  /* actors only: methods that may run at once, on
                             threads of the actor's process (then in no
                             promised order); default 1 */
    const char *label_selector; /* run only on nodes whose labels match:
                                   "key=value", "key=!value",
                                   "key=in(a,b)", "key=!in(a,b)", terms
                                   separated by commas (rtask(7)); NULL =
                                   any node */
    rt_pg placement_group; /* run on what this group reserved
                              (rt_pg_create()); the zero handle = not in
                              a group */
    int bundle_index;      /* with placement_group: in this bundle
                              (0, 1, ...); RT_DEFAULT (or 0 in a struct
                              that was only zeroed) = any of them */
    const char *env_vars;  /* environment variables for this task alone
                              (an actor: for its life), as Ray's
                              runtime_env env_vars: "NAME=value" lines
                              separated by newlines, set in its worker
                              before its code runs, over the worker's own
                              and its devices' variables, and put back
                              after it; NULL = none */
    int get_if_exists;     /* actors with a name: 1 = when a live actor
                              has the name, give its handle instead of
                              failing with RT_EEXIST (Ray's
                              get_if_exists); 0 (the default) = fail */
    int detached;          /* actors a task creates: 1 = it outlives the
                              task (Ray's lifetime="detached"); 0 (the
                              default) = it is killed when the task that
                              created it ends */
    int num_returns;       /* tasks only: how many results the task gives,
                              each its own object with its own handle, as
                              Ray's num_returns (rt_remote_n()); from 1 to
                              RT_RETURNS_MAX; RT_DEFAULT (or 0) = 1 */
    int nondeterministic;  /* tasks only: 1 = its result may differ from
                              run to run: it always runs, never taken
                              from a checkpoint (rtask_checkpoint(7));
                              0 (the default) = deterministic */
} rt_opts;

/* The most results one task may give (rt_opts.num_returns). */
#define RT_RETURNS_MAX 64

#define RT_OPTS_MAGIC_ 0x72744f70
#define RT_OPTS_INIT \
    { RT_OPTS_MAGIC_, NULL, RT_DEFAULT, 0.0, RT_DEFAULT, RT_DEFAULT, RT_DEFAULT, \
      NULL, NULL, 0, 0, 0, RT_DEFAULT, RT_DEFAULT, NULL, {0}, RT_DEFAULT, NULL, 0, 0, \
      RT_DEFAULT, 0 }

/* Accelerator types, with the names and values of Ray's
 * ray.util.accelerators.  Asking for type T asks for 0.001 of the custom
 * resource "accelerator_type:T", which a node with accelerators of type T
 * has. */
#define RT_ACCEL_NVIDIA_TESLA_V100 "V100"
#define RT_ACCEL_NVIDIA_TESLA_P100 "P100"
#define RT_ACCEL_NVIDIA_TESLA_T4 "T4"
#define RT_ACCEL_NVIDIA_TESLA_P4 "P4"
#define RT_ACCEL_NVIDIA_TESLA_K80 "K80"
#define RT_ACCEL_NVIDIA_TESLA_A10G "A10G"
#define RT_ACCEL_NVIDIA_L4 "L4"
#define RT_ACCEL_NVIDIA_L40S "L40S"
#define RT_ACCEL_NVIDIA_A100 "A100"
#define RT_ACCEL_NVIDIA_H100 "H100"
#define RT_ACCEL_NVIDIA_H200 "H200"
#define RT_ACCEL_NVIDIA_H20 "H20"
#define RT_ACCEL_NVIDIA_A100_40G "A100-40G"
#define RT_ACCEL_NVIDIA_A100_80G "A100-80G"
#define RT_ACCEL_INTEL_MAX_1550 "Intel-GPU-Max-1550"
#define RT_ACCEL_INTEL_MAX_1100 "Intel-GPU-Max-1100"
#define RT_ACCEL_INTEL_GAUDI "Intel-GAUDI"
#define RT_ACCEL_AMD_INSTINCT_MI100 "AMD-Instinct-MI100"
#define RT_ACCEL_AMD_INSTINCT_MI250X "AMD-Instinct-MI250X"
#define RT_ACCEL_AMD_INSTINCT_MI250 "AMD-Instinct-MI250X-MI250"
#define RT_ACCEL_AMD_INSTINCT_MI210 "AMD-Instinct-MI210"
#define RT_ACCEL_AMD_INSTINCT_MI300X "AMD-Instinct-MI300X-OAM"
#define RT_ACCEL_AMD_RADEON_R9_200_HD_7900 "AMD-Radeon-R9-200-HD-7900"
#define RT_ACCEL_AMD_RADEON_HD_7900 "AMD-Radeon-HD-7900"
#define RT_ACCEL_AWS_NEURON_CORE "aws-neuron-core"
#define RT_ACCEL_GOOGLE_TPU_V2 "TPU-V2"
#define RT_ACCEL_GOOGLE_TPU_V3 "TPU-V3"
#define RT_ACCEL_GOOGLE_TPU_V4 "TPU-V4"
#define RT_ACCEL_GOOGLE_TPU_V5P "TPU-V5P"
#define RT_ACCEL_GOOGLE_TPU_V5LITEPOD "TPU-V5LITEPOD"
#define RT_ACCEL_GOOGLE_TPU_V6E "TPU-V6E"
#define RT_ACCEL_HUAWEI_NPU_910B "Ascend910B"
#define RT_ACCEL_HUAWEI_NPU_910B4 "Ascend910B4"

RT_EXPORT void rt_config_init(rt_config *config);
RT_EXPORT void rt_opts_init(rt_opts *opts);

/* Start the runtime: fork the fork server, start the runtime thread and
 * the workers.  Call it early, before threads, big allocations, CUDA or
 * dlopen(): see rt_init(3).  num_gpus may be RT_DETECT. */
RT_NODISCARD RT_EXPORT int rt_init(double num_gpus);
RT_NODISCARD RT_EXPORT int rt_init_config(const rt_config *config);

/* Stop everything: fail pending tasks with RT_ESHUTDOWN, kill the workers
 * and the fork server and reap them, close every descriptor, free every
 * handle.  Safe to call twice; rt_init() may follow. */
RT_EXPORT int rt_shutdown(void);

/* Submit fn(arg) as a task.  The argument bytes are copied before the call
 * returns; opts may be NULL for defaults.  On success *ref is the task's
 * handle. */
RT_NODISCARD RT_EXPORT int rt_remote(rt_fn fn, const rt_opts *opts,
                                     const void *arg, size_t arg_len,
                                     rt_ref *ref);

/* Submit fn(arg) as a task that gives opts->num_returns results (Ray's
 * num_returns=k): refs[0 .. num_returns) get a handle each, the i-th for
 * the result the task sets with rt_result_set_at(result, i, ...).  Each
 * is an object of its own: waited for, read, passed to tasks and
 * released alone.  Otherwise as rt_remote(). */
RT_NODISCARD RT_EXPORT int rt_remote_n(rt_fn fn, const rt_opts *opts, const void *arg,
                                       size_t arg_len, rt_ref *refs);

/* Wait up to timeout_ms for a task's result.  On success (and on
 * RT_ETASK) *data holds the result bytes, owned by the caller and freed
 * with rt_free(), *len their count, and the handle is consumed.  data and
 * len may be NULL to drop the bytes.  On RT_ETIMEDOUT the handle stays
 * valid. */
RT_NODISCARD RT_EXPORT int rt_get(rt_ref ref, void **data, size_t *len,
                                  long timeout_ms);

/* Wait until num_ready of the n handles are ready or timeout_ms passes.
 * refs is reordered in place, stably, so that the *n_ready ready handles
 * come first.  Handles are not consumed. */
RT_NODISCARD RT_EXPORT int rt_wait(rt_ref *refs, size_t n, size_t num_ready,
                                   long timeout_ms, size_t *n_ready);

/* The same, leaving refs as they are: indices[0 .. *n_ready) get the
 * positions in refs of the ready handles, in increasing order (indices
 * has room for n). */
RT_NODISCARD RT_EXPORT int rt_wait_indices(const rt_ref *refs, size_t n, size_t num_ready,
                                           long timeout_ms, size_t *indices,
                                           size_t *n_ready);

/*
 * Results for an event loop (epoll, poll, libuv): rt_notify(ref, tag)
 * asks for a notice when ref's object is ready (at once when it is
 * already); rt_notify_fd() gives a descriptor that is readable while
 * notices wait (watch it for reading; never read it yourself), and
 * rt_ready() takes up to max of them without waiting.  The descriptor is
 * the runtime's, valid until rt_shutdown().
 */
typedef struct rt_notice {
    rt_ref ref;
    uint64_t tag; /* what rt_notify() was given */
} rt_notice;

RT_NODISCARD RT_EXPORT int rt_notify_fd(int *fd);
RT_NODISCARD RT_EXPORT int rt_notify(rt_ref ref, uint64_t tag);
RT_NODISCARD RT_EXPORT int rt_ready(rt_notice *out, size_t max, size_t *n);

/* Cancel a task, as ray.cancel: one still queued is removed; one that
 * runs is stopped by killing its worker when force is set (tasks only,
 * not actor calls), else it runs to its end and its result is dropped.
 * Its rt_get() then fails with RT_ECANCELLED.  The tasks it submitted
 * are cancelled too, and theirs, as Ray's recursive cancel (unless
 * RT_CANCEL_NOT_RECURSIVE), and so are those it submits from then on.
 * A finished task is left as it is.  0, or
 * RT_EBADREF / RT_EINVAL (rt_cancel(3)). */
RT_NODISCARD RT_EXPORT int rt_cancel(rt_ref ref, int force);
/* force is 0 or these flags, or'ed: */
#define RT_CANCEL_FORCE 1         /* kill the worker of a running task */
#define RT_CANCEL_NOT_RECURSIVE 2 /* leave the tasks it submitted running
                                     (Ray's recursive=False) */

/*
 * Streaming results (Ray's generators): a task hands results to its
 * caller one by one with rt_yield(), which returns once the result is an
 * object; the caller reads them in order with rt_stream_next(ref, ...),
 * while the task runs.  At the end *item is the zero handle (and ref's
 * own result may be read with rt_get()).  Each item is a handle, read
 * with rt_get() like any; those never read go with ref's handle.
 */
RT_NODISCARD RT_EXPORT int rt_yield(const void *data, size_t len);
RT_NODISCARD RT_EXPORT int rt_stream_next(rt_ref ref, rt_ref *item, long timeout_ms);

/* Inside a task or an actor's method: 1 when rt_cancel(ref, 0) asked it
 * to stop (it may return early; its result is dropped anyway), else 0. */
RT_EXPORT int rt_cancelled(void);

/* Drop a handle whose result is not wanted; a task still running goes on
 * and its result is discarded.  Tasks that take the object as an
 * argument still get it: only the application's hold is dropped. */
RT_EXPORT int rt_release(rt_ref ref);

/*
 * Objects and the task graph.  rt_put() makes an object of len bytes
 * (copied) in the node's object store; a task's result is one too.  An
 * object is immutable; rt_get() reads it like a task's result.
 */
RT_NODISCARD RT_EXPORT int rt_put(const void *data, size_t len, rt_ref *ref);

/* One argument of rt_remote_args() or rt_actor_call_args(): an object
 * (ref set, data and len unused), or len bytes at data (ref zero),
 * copied at submission.  RT_ARG_REF(r) and RT_ARG_BYTES(p, n) make
 * them. */
typedef struct rt_arg {
    rt_ref ref;
    const void *data;
    size_t len;
} rt_arg;

#ifdef __cplusplus
#define RT_ARG_REF(r) (rt_arg{(r), NULL, 0})
#define RT_ARG_BYTES(p, n) (rt_arg{{0}, (p), (n)})
#else
#define RT_ARG_REF(r) ((rt_arg){(r), NULL, 0})
#define RT_ARG_BYTES(p, n) ((rt_arg){{0}, (p), (n)})
#endif

/* What a task sees of one argument: read-only bytes, valid until the
 * task returns; an object's are mapped, not copied. */
typedef struct rt_value {
    const void *data;
    size_t len;
} rt_value;

/* Submit n tasks of fn at once, task i taking the bytes of args[i]
 * (copied), with the same opts: all or none.  refs[i] gets task i's
 * handle.  Much cheaper per task than n calls of rt_remote(). */
RT_NODISCARD RT_EXPORT int rt_remote_batch(rt_fn fn, const rt_opts *opts,
                                           const rt_value *args, size_t n, rt_ref *refs);

/* A task of several arguments, in the order they were given. */
typedef int (*rt_fn_args)(const rt_value *args, size_t nargs, rt_result *result);
typedef int (*rt_method_args)(void *state, const rt_value *args, size_t nargs,
                              rt_result *result);

/* The most arguments one task may take. */
#define RT_ARGS_MAX 1024

/* Submit fn(args) as a task.  It starts once every object among args
 * exists; if one failed, it fails with RT_EDEPENDENCY without running.
 * Otherwise as rt_remote(). */
RT_NODISCARD RT_EXPORT int rt_remote_args(rt_fn_args fn, const rt_opts *opts,
                                          const rt_arg *args, size_t nargs,
                                          rt_ref *ref);

/* rt_remote_args() for a task of opts->num_returns results, as
 * rt_remote_n(). */
RT_NODISCARD RT_EXPORT int rt_remote_args_n(rt_fn_args fn, const rt_opts *opts,
                                            const rt_arg *args, size_t nargs,
                                            rt_ref *refs);

/* An object read in place, without a copy: data stays valid, and the
 * object alive, until rt_view_release(), whatever happens to the ref. */
typedef struct rt_view {
    const void *data;
    size_t len;
    uint64_t id_; /* the runtime's; do not touch */
} rt_view;

/* Wait up to timeout_ms for ref's object and view it.  The handle is not
 * consumed.  Errors as rt_get() (on RT_ETASK the view is set). */
RT_NODISCARD RT_EXPORT int rt_get_view(rt_ref ref, rt_view *view, long timeout_ms);
/* End a view; 0 or RT_EBADREF.  The view is zeroed. */
RT_EXPORT int rt_view_release(rt_view *view);

/* Free result bytes returned by rt_get().  NULL is ignored. */
RT_EXPORT void rt_free(void *data);

/* Inside a task: copy len bytes as the task's result. */
RT_NODISCARD RT_EXPORT int rt_result_set(rt_result *result, const void *data,
                                         size_t len);
/* Inside a task: get a len-byte result buffer to fill in place (its bytes
 * are undefined until written).  Large buffers live in shared memory and
 * reach the caller without a copy.  Returns NULL when out of memory. */
RT_EXPORT void *rt_result_alloc(rt_result *result, size_t len);
/* Inside a task of several results (rt_remote_n()): copy len bytes as
 * result number index, from 0 (the same as rt_result_set()) to
 * num_returns - 1.  A result never set is empty.  RT_EINVAL past
 * RT_RETURNS_MAX; setting one past the task's num_returns fails the
 * task with RT_EINVAL when it returns. */
RT_NODISCARD RT_EXPORT int rt_result_set_at(rt_result *result, unsigned index,
                                            const void *data, size_t len);

/*
 * Actors: a worker process with state, whose resources are held for its
 * whole life.  The constructor runs in the actor's own process and sets
 * its state; methods run there one at a time, in the order they were
 * called, and answer like tasks (read them with rt_get()/rt_wait()); the
 * destructor, if any, runs when the actor is killed or the runtime shuts
 * down.  A class is plain data: keep it in static storage or copy it.
 */
typedef int (*rt_actor_init_fn)(const void *arg, size_t arg_len, void **state);
typedef void (*rt_actor_fini_fn)(void *state);
typedef int (*rt_method)(void *state, const void *arg, size_t arg_len,
                         rt_result *result);

typedef struct rt_actor_class {
    const char *name;      /* output prefix "(name pid=N)"; NULL = "actor" */
    rt_actor_init_fn init; /* sets the state; non-zero return: creation
                              failed; NULL = no constructor, state NULL */
    rt_actor_fini_fn fini; /* optional */
} rt_actor_class;

/* A handle to an actor; a plain value, valid until rt_shutdown(). */
typedef struct rt_actor {
    uint64_t id;
} rt_actor;

/* Create an actor: opts as for a task (num_gpus, num_cpus, resources,
 * accelerator_type, max_restarts; max_calls does not apply).  Returns at
 * once; calls made before the actor runs wait for its constructor.  With
 * opts->name, RT_EEXIST when a live actor has that name (or, with
 * get_if_exists, that actor's handle, and this one is not made).  A task
 * may create actors too: they die when it ends unless detached. */
RT_NODISCARD RT_EXPORT int rt_actor_create(const rt_actor_class *cls,
                                           const rt_opts *opts, const void *arg,
                                           size_t arg_len, rt_actor *actor);
/* Call method(state, arg) in the actor; *ref is read like a task's. */
RT_NODISCARD RT_EXPORT int rt_actor_call(rt_actor actor, rt_method method,
                                         const void *arg, size_t arg_len,
                                         rt_ref *ref);
/* Call method(state, args) in the actor, as rt_remote_args(): in the
 * order of the calls, each after the objects it takes exist. */
RT_NODISCARD RT_EXPORT int rt_actor_call_args(rt_actor actor, rt_method_args method,
                                              const rt_arg *args, size_t nargs,
                                              rt_ref *ref);
/* Kill an actor: calls not yet sent fail with RT_EACTORDIED, calls sent
 * finish, the destructor runs, the process ends and its resources are
 * released.  Killing a dead actor does nothing. */
RT_EXPORT int rt_actor_kill(rt_actor actor);
/* Kill an actor's process as a crash would (Ray's ray.kill(actor,
 * no_restart=False)): it restarts if max_restarts allows, spending one;
 * its calls in flight are sent again within max_task_retries, or fail
 * with RT_EACTORDIED; its destructor does not run.  An actor still
 * waiting for its resources spends a restart too (it starts anew once
 * placed), or dies there without one. */
RT_NODISCARD RT_EXPORT int rt_actor_restart(rt_actor actor);
/* The live actor named name (rt_opts.name at its creation), from the
 * application or a task (Ray's ray.get_actor): RT_EBADREF when none is.
 * A name is free again once its actor is killed or dead. */
RT_NODISCARD RT_EXPORT int rt_actor_get(const char *name, rt_actor *actor);

/*
 * Placement groups (Ray's): reserve bundles of resources at once, all or
 * nothing, across the nodes, then run tasks and actors in them
 * (rt_opts.placement_group, .bundle_index).  What a group reserves is
 * held for it alone until rt_pg_remove(): rt_pg_create(3).
 */
typedef struct rt_bundle {
    double num_cpus;      /* CPUs; 0 = none */
    double num_gpus;      /* GPUs: a fraction in (0, 1] or a whole number;
                             0 = none */
    const char *resources; /* custom resources, "name=amount,..."; NULL =
                              none */
    const char *label_selector; /* only on nodes whose labels match, as
                                   rt_opts.label_selector; NULL = any */
} rt_bundle;

/* How a group's bundles are laid over the nodes, as Ray's strategies:
 * PACK on as few nodes as it can, SPREAD over as many as it can; the
 * STRICT forms fail rather than do otherwise (all on one node; each on a
 * node of its own). */
enum {
    RT_PG_PACK = 0,
    RT_PG_SPREAD = 1,
    RT_PG_STRICT_PACK = 2,
    RT_PG_STRICT_SPREAD = 3
};

/* The most bundles one group may have. */
#define RT_PG_BUNDLES_MAX 256

/* Reserve n bundles as strategy says; *pg gets the group's handle at
 * once, and the group is placed as soon as every bundle can be (at once
 * when they can now).  RT_EINFEASIBLE when no placement could ever hold
 * the group. */
RT_NODISCARD RT_EXPORT int rt_pg_create(const rt_bundle *bundles, size_t n, int strategy,
                                        rt_pg *pg);
/* Wait up to timeout_ms for the group to be placed: 0, RT_ETIMEDOUT, or
 * RT_EBADREF (unknown or removed). */
RT_NODISCARD RT_EXPORT int rt_pg_wait(rt_pg pg, long timeout_ms);
/* Remove a group: its tasks fail with RT_ECANCELLED (those that run are
 * killed), its actors are killed as rt_actor_kill() kills them (calls
 * sent finish, later ones fail with RT_EACTORDIED), and what it reserved
 * goes back to the nodes as they end.  0 or RT_EBADREF. */
RT_EXPORT int rt_pg_remove(rt_pg pg);

/* Inside a task or an actor: the ids of the GPUs it holds, as strings,
 * in CUDA_VISIBLE_DEVICES order ("0", "3", or "GPU-<uuid>" entries when
 * CUDA_VISIBLE_DEVICES named GPUs so before rt_init()).  *ids points to
 * *n strings owned by the runtime, valid until the task returns. */
RT_NODISCARD RT_EXPORT int rt_get_gpu_ids(const char *const **ids, size_t *n);
/* The same for any accelerator resource: "GPU" or "neuron_cores". */
RT_NODISCARD RT_EXPORT int rt_get_accelerator_ids(const char *resource,
                                                  const char *const **ids,
                                                  size_t *n);

/* Where the calling code runs (Ray's runtime context).  In the
 * application, task and actor are zero. */
typedef struct rt_context {
    rt_ref task;      /* the running task's or actor call's handle */
    rt_actor actor;   /* in an actor (its constructor, a method): its handle */
    int attempt;      /* 0 on the task's first run, 1 on its first retry... */
    int node;         /* the node that runs it: its MPI rank; 0 on one machine */
    int pid;          /* the process that runs it */
    char host[256];   /* that machine's host name */
} rt_context;

/* Fill *ctx; 0, or RT_EINVAL when ctx is NULL. */
RT_NODISCARD RT_EXPORT int rt_get_context(rt_context *ctx);

/*
 * What the runtime holds, as Ray's ray.cluster_resources() and
 * ray.available_resources(): one entry per resource, first the sums over
 * every node (node -1), then each node's (node 0 is this machine's; the
 * others are MPI ranks).  *out is an array of *n entries that the caller
 * frees with rt_free().
 */
typedef struct rt_resource {
    char name[64];  /* "CPU", "GPU", "accelerator_type:H100", "fpga"... */
    double amount;
    int node;       /* -1: all nodes */
} rt_resource;

RT_NODISCARD RT_EXPORT int rt_cluster_resources(rt_resource **out, size_t *n);
RT_NODISCARD RT_EXPORT int rt_available_resources(rt_resource **out, size_t *n);

/* The GPUs (or MIG instances) the runtime no longer gives to any task,
 * and why: NVML said they are lost, or reported a critical error (an
 * XID, a double-bit ECC error).  rt_available_resources() leaves them
 * out.  *out is an array of *n entries, freed with rt_free(). */
typedef struct rt_gpu_health {
    int node;          /* its node (MPI rank) */
    char id[64];       /* as tasks are told it: "3", "MIG-..." */
    char bus_id[16];   /* its GPU's PCI bus id, "0000:3b:00.0" */
    char why[96];      /* "XID 79: the GPU has fallen off the bus" */
} rt_gpu_health;

RT_NODISCARD RT_EXPORT int rt_unhealthy_gpus(rt_gpu_health **out, size_t *n);

/*
 * The state API, as Ray's `ray list tasks|actors|objects|placement-groups`:
 * what the runtime holds now, also shown by rtask-status(1).  Each call
 * puts an array of *n entries in *out, which the caller frees with
 * rt_free().  Tasks (and actor calls) are those whose handles are held:
 * waiting, running, or ended and not yet taken by rt_get().
 */
enum { RT_TASK_WAITING, RT_TASK_RUNNING, RT_TASK_FINISHED, RT_TASK_FAILED };

typedef struct rt_task_info {
    rt_ref ref;         /* its handle */
    char name[64];      /* its name, else its function's ("task": unknown) */
    int state;          /* RT_TASK_* */
    int error;          /* RT_TASK_FAILED: its code (RT_ETASK...) */
    int node;           /* where it runs or ran; -1: not placed yet */
    long pid;           /* its worker's process, on this machine; 0: none
                           yet, or on another rank */
    double num_cpus, num_gpus; /* what it holds while it runs */
    unsigned attempt;   /* its runs before this one (retries) */
    rt_actor actor;     /* an actor's call: its actor; else the zero handle */
} rt_task_info;

enum { RT_ACTOR_PENDING, RT_ACTOR_ALIVE, RT_ACTOR_RESTARTING, RT_ACTOR_DEAD };

typedef struct rt_actor_info {
    rt_actor actor;     /* its handle */
    char name[64];      /* opts.name, else its class's name */
    int named;          /* 1: opts.name, which rt_actor_get() finds */
    int state;          /* RT_ACTOR_*; a dead one is listed until buried */
    int restarts_left;  /* of max_restarts */
    int node;           /* where its process is; -1: none */
    long pid;           /* its (last) process on its node; 0: none yet */
} rt_actor_info;

typedef struct rt_object_info {
    rt_ref ref;         /* its handle */
    size_t size;        /* bytes */
    int node;           /* the node that holds its bytes */
    unsigned holds;     /* tasks waiting for it and views, besides its handle */
    int put;            /* 1: rt_put()'s; 0: a task's result */
} rt_object_info;

enum { RT_PG_PENDING, RT_PG_CREATED };

typedef struct rt_pg_info {
    rt_pg pg;           /* its handle */
    int state;          /* RT_PG_PENDING until placed, then RT_PG_CREATED */
    int strategy;       /* RT_PG_PACK... */
    size_t nbundles;
    double num_cpus, num_gpus; /* what its bundles reserve, in all */
} rt_pg_info;

RT_NODISCARD RT_EXPORT int rt_list_tasks(rt_task_info **out, size_t *n);
RT_NODISCARD RT_EXPORT int rt_list_actors(rt_actor_info **out, size_t *n);
RT_NODISCARD RT_EXPORT int rt_list_objects(rt_object_info **out, size_t *n);
RT_NODISCARD RT_EXPORT int rt_list_placement_groups(rt_pg_info **out, size_t *n);

/* Write every task and actor call that ended so far as Chrome trace-event
 * JSON (Perfetto, chrome://tracing, rtask-timeline(1)) to path; needs
 * rt_config.timeline or $RTASK_TIMELINE (rt_timeline(3)). */
RT_NODISCARD RT_EXPORT int rt_timeline(const char *path);

/* The name of an error code ("invalid argument"); never NULL. */
RT_EXPORT const char *rt_strerror(int code);
/* The version of the library the program runs with, "0.1.0" (the
 * RT_VERSION_* macros say which header it was compiled with). */
RT_EXPORT const char *rt_version(void);
/* The detailed message of this thread's most recent failed call. */
RT_EXPORT const char *rt_last_error(void);

#ifdef RT_PEDANTIC_OFF_
#pragma GCC diagnostic pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* RTASK_H */

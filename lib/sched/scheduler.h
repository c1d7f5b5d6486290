/*
 * scheduler.h - classes, resources, placement and leases: decisions only.
 *
 * Tasks with the same request and worker-reuse rule form a class; an
 * actor is a class of its own.  A class gets leases: its request taken
 * from one node's free resources and instances, and a worker of that node
 * bound to it; the class then pipelines its tasks to the lease's worker
 * without asking again.  The scheduler makes every decision (which class
 * gets the next lease, on which node and instances, how many tasks each
 * lease gets now, when a lease ends) and keeps the books; it makes no
 * system call, knows no wire and no global state, and calls nobody: the
 * dispatcher (dispatch.h) carries its decisions out on the nodes.
 *
 * Records are bounded: a class with no pending task and no lease is freed;
 * a lease is freed when it ends.
 *
 * Plain data the dispatcher reads: rt__lease.worker, .cls, .grant,
 * .inflight and .budget; rt__class.owner, .max_calls, .pending, .leases,
 * .timed and .run_us; rt__sched.blocked, .nnodes and .npending.
 */
#ifndef RT_SCHEDULER_H
#define RT_SCHEDULER_H

#include "base/idmap.h"
#include "base/list.h"
#include "devices/instance.h"
#include "devices/resources.h"
#include "labels.h"
#include "pool.h"
#include "node/task.h"

#include <stddef.h>
#include <stdint.h>

/* The most nodes a job may have: an object's holder is 16 bits
 * (node/task.h).  Node arrays grow to what the job has. */
#define RT__NODES_MAX 65535

typedef struct rt__nodesets rt__nodesets; /* interned node sets (scheduler.c) */

typedef struct rt__lease rt__lease;

typedef struct rt__class {
    rt__idnode byreq;                   /* by a hash of its request (task
                                           classes only) */
    rt__link wait;                      /* on the waiting list while it has
                                           pending tasks */
    rt__link feed;                      /* on the feedable list while it has
                                           pending tasks and a lease */
    rt__res req;
    int gpu_type;                       /* its GPUs' type (a custom resource
                                           index), or RT__ANY_TYPE */
    int max_calls;                      /* 0 = unlimited */
    size_t concurrency;                 /* an actor's: methods at once (its
                                           answers come in any order) */
    void *owner;                        /* the actor of an actor's class, or NULL */
    struct rt__group *group;            /* the placement group its leases
                                           take from (req.group), or NULL */
    rt__link in_group;                  /* in its group's classes */
    rt__link in_all;                    /* in the scheduler's classes */
    rt__tasks pending;                  /* in submission order */
    size_t inflight;                    /* sent, not answered */
    size_t leases;
    rt__link leased;                    /* its leases, in the order granted */
    double run_us;                      /* recent run time (moving average) */
    int timed;                          /* run_us holds a measurement */
} rt__class;

struct rt__lease {
    rt__link link;                      /* in its class's list */
    rt__class *cls;
    rt__grant grant;
    void *worker;                       /* the node's worker, opaque here */
    rt__tasks inflight;                 /* sent, in order */
    size_t budget;                      /* tasks it may still be sent */
    uint64_t quiet_since_ns;            /* its last answer, or when it got work */
    const rt__task *lent_by;            /* its task that waits for others,
                                           its CPUs lent to the node; or NULL */
    size_t inside;                      /* tasks its worker runs inside the
                                           waits of its running ones (in
                                           flight before the task that
                                           waits): it gets no task then */
    const char *gpu_sick;               /* why its worker was killed: a GPU
                                           it holds became unhealthy; or NULL */
    uint64_t gpu_peak;                  /* the most GPU memory its worker was
                                           seen to hold during its task */
    int gpu_over;                       /* it held more than its share */
};

typedef struct rt__sched_node {
    rt__res total;
    rt__pool free;
    /* What would be free once every running task ended: the totals less
     * what actors hold.  A request that does not fit there waits for an
     * actor to end, which may never happen, so it holds no one back. */
    rt__pool unheld;
    int accel_index;                    /* its accelerator family's custom
                                           resource (family.h), or -1 */
    int bind_cpus;                      /* tell workers the CPUs near their GPUs */
    char labels[RT__LABELS_LEN];        /* "key=value,..." (labels.h) */
    /* Per GPU, as many as it has (after the node, in its allocation: a
     * rank without GPUs costs rank 0 nothing for them). */
    char (*gpu_cpus)[RT__CPUS_LEN];     /* the CPUs near it; "" = unknown */
    char (*gpu_bus)[16];                /* its PCI bus id; "" = unknown */
    char (*gpu_sick)[96];               /* why it is unhealthy; "" = it is not
                                           (its instances' sick) */
    /* The ids tasks are told, which its pools and their copies point to
     * (instance.h): kept once per node, not in every copy. */
    char (*gpu_ids)[RT__ID_LEN];
    char (*accel_ids)[RT__ID_LEN];      /* per accelerator instance */
} rt__sched_node;

typedef struct rt__sched {
    rt__names names;                    /* every node's custom resources */
    int nnodes;
    rt__sched_node **node;              /* nnodes of them; added before the
                                           runtime runs (rt_init()) */
    rt__nodesets *nodesets;             /* every rt__res.nodes made, each
                                           once: label selectors' picks */
    rt__idmap classes;                  /* task classes by request */
    rt__link waiting;                   /* classes with pending tasks, oldest
                                           first task first */
    rt__link feedable;                  /* those of them that hold leases */
    size_t npending;                    /* tasks in every class, waiting */
    rt__class *blocked;                 /* set by rt__sched_decide() */
    rt__idmap groups;                   /* placement groups, by handle, until
                                           removed (placement groups, below) */
    rt__link unplaced;                  /* those not placed yet, oldest first */
    rt__link all_groups;                /* every group not removed */
    rt__link all_classes;               /* every class */
    uint64_t gave;                      /* counts what went back to nodes: a
                                           group that did not fit may now */
} rt__sched;

/* Start with no node.  0, or -1 when out of memory. */
int rt__sched_init(rt__sched *s, const rt__names *names);
/* The index of a custom resource, added to the names when new (a node
 * of a cluster offers it); -1 when there are RT__CUSTOM_MAX already. */
int rt__sched_name(rt__sched *s, const char *name);
/* What a node offers, as rt__sched_add_node() takes it.  Arrays have
 * ngpus entries, or are NULL. */
typedef struct rt__node_spec {
    rt__res total;                       /* by the scheduler's names */
    int ngpus;
    const char (*gpu_ids)[RT__ID_LEN];   /* "" or NULL: by index */
    const char (*gpu_cpus)[RT__CPUS_LEN]; /* "" or NULL: unknown */
    const char (*gpu_types)[RT__TYPE_LEN]; /* "" or NULL: untyped */
    const uint64_t *gpu_bytes;           /* each GPU's memory; 0: unknown */
    const char (*accel_ids)[RT__ID_LEN]; /* "" or NULL: by index */
    int bind_cpus;
    const char *labels;                  /* "key=value,..."; NULL: none */
    const char (*gpu_bus)[16];           /* "" or NULL: unknown */
    const char (*gpu_sick)[96];          /* why unhealthy; "" or NULL: healthy */
} rt__node_spec;

/* Add a node; its index is the next one.  Each GPU may have a type
 * ("V100"), whose "accelerator_type:T" the node's totals offer: a request
 * for a type gets GPUs of that type.  The custom resource of an
 * accelerator family in the totals (at most one: "neuron_cores",
 * "TPU"...) is placed on instances like GPUs.  0, or -1 when out of
 * memory or when there are RT__NODES_MAX already. */
int rt__sched_add_node(rt__sched *s, const rt__node_spec *spec);
/* Free a class and its leases at once, giving nothing back; the tasks
 * they hold are moved to *orphans for the caller to fail. */
void rt__sched_discard(rt__sched *s, rt__class *c, rt__tasks *orphans);
/* Free everything; the tasks held are moved to *orphans.  Actors'
 * classes without pending tasks are reached only through their actors:
 * discard them first. */
void rt__sched_free(rt__sched *s, rt__tasks *orphans);

/* The type of GPU req asks for (the index of its "accelerator_type:T"),
 * or RT__ANY_TYPE. */
int rt__sched_gpu_type(const rt__sched *s, const rt__res *req);
/* The GPU at bus id `bus` of node `node` is unhealthy (why: "XID 79:
 * ...", "" for a bus id no GPU has): its instances take nothing more,
 * here and in the bundles of groups placed there.  How many instances
 * became so; 0 when they were already, or none is at that bus id. */
int rt__sched_gpu_unhealthy(rt__sched *s, int node, const char *bus, const char *why);
/* 0 when some node could ever meet req; otherwise RT_EINFEASIBLE with a
 * message naming the resource. */
int rt__sched_feasible(const rt__sched *s, const rt__res *req);
/* The nodes whose labels a selector (checked; NULL: any node) picks, as
 * rt__res.nodes (the same set, the same address): 0, or RT_EINFEASIBLE
 * with a message when it picks none, or RT_ENOMEM.  Any thread. */
int rt__sched_select(const rt__sched *s, const char *selector, const rt__nodeset **nodes);

/* The class of a task request, made on first use; NULL without memory. */
rt__class *rt__sched_class(rt__sched *s, const rt__res *req, int max_calls);
/* A class of its own for an actor (owner); NULL without memory. */
rt__class *rt__sched_actor_class(rt__sched *s, const rt__res *req, void *owner);
/* Queue a task at the end, or first in line (a task sent back). */
void rt__sched_push(rt__sched *s, rt__class *c, rt__task *t);
void rt__sched_push_front(rt__sched *s, rt__class *c, rt__task *t);
/* The class's first pending task, taken off its queue; NULL when none. */
rt__task *rt__sched_pop(rt__sched *s, rt__class *c);
/* Take t off c's queue wherever it is; 1 when it was there. */
int rt__sched_withdraw(rt__sched *s, rt__class *c, rt__task *t);
/* The lease of c that has t in flight, or NULL. */
rt__lease *rt__sched_lease_of(const rt__class *c, const rt__task *t);
/* Free c if it has no task and no lease; returns 1 when it did. */
int rt__sched_release_class(rt__sched *s, rt__class *c);

/* One decision: the class that gets the next lease and where, or NULL
 * when none can go now.  Classes are looked at oldest pending task first.
 * A class that holds no lease and fits nowhere blocks every younger class
 * (it is left in s->blocked), so that a large request is never starved by
 * a stream of smaller ones. */
rt__class *rt__sched_decide(rt__sched *s, rt__grant *g);
/* Where a lease of c on g takes from: g's bundle of c's group, or g's
 * node; its pool of what is free now, or (unheld) once tasks end. */
rt__pool *rt__sched_pool(rt__sched *s, const rt__class *c, const rt__grant *g, int unheld);
/* Take what g names for a lease of c, or give it back. */
void rt__sched_take(rt__sched *s, rt__class *c, const rt__grant *g);
void rt__sched_give(rt__sched *s, rt__class *c, const rt__grant *g);

/* A lease of c on grant g, with no worker yet (rt__sched_bind()).  Takes
 * the resources; NULL without memory (nothing taken). */
rt__lease *rt__sched_lease(rt__sched *s, rt__class *c, const rt__grant *g);
/* l is served by worker, which has run calls tasks in its life: it may
 * be sent what is left of its class's max_calls. */
void rt__sched_bind(rt__lease *l, void *worker, size_t calls);
/* End a lease: its resources go back and the record is freed; its class
 * is freed too when that leaves it empty.  The lease holds no task. */
void rt__sched_unlease(rt__sched *s, rt__lease *l);
/* Whether a lease with nothing in flight should end now: its class has
 * nothing for it, or its worker's budget is spent. */
int rt__sched_lease_idle(const rt__lease *l);
/* A lease that should end to make room for the blocked class: it sits
 * idle between tasks of a younger class.  NULL when none. */
rt__lease *rt__sched_reclaimable(const rt__sched *s);

/* Every class (those without pending task or lease are freed): the
 * first, and the one after c; NULL at the end. */
rt__class *rt__sched_first_class(const rt__sched *s);
rt__class *rt__sched_next_class(const rt__sched *s, const rt__class *c);
/* Classes with pending tasks, oldest first: the first, and the one after
 * c (ask for it before taking c's last task, which takes c off the list);
 * NULL at the end. */
rt__class *rt__sched_waiting(const rt__sched *s);
rt__class *rt__sched_next_waiting(const rt__sched *s, const rt__class *c);
/* c's leases in the order granted: the first, and the one after l; NULL
 * at the end. */
rt__lease *rt__sched_first_lease(const rt__class *c);
rt__lease *rt__sched_next_lease(const rt__class *c, const rt__lease *l);
/* Classes that have pending tasks and leases to send them to: the first,
 * and the one after c (ask before taking c's last task); NULL at the end.
 * Feeding walks these alone, however many classes wait for a lease. */
rt__class *rt__sched_feedable(const rt__sched *s);
rt__class *rt__sched_next_feedable(const rt__sched *s, const rt__class *c);
/* Whether c's leases may get tasks now: classes younger than the blocked
 * class get none, so that they drain and their resources go to it. */
int rt__sched_may_feed(const rt__sched *s, const rt__class *c);
/* How many tasks lease l should get at now_ns; busy_us is how long its
 * worker's current task has run (0 between tasks).  Each worker gets about
 * 2 ms of its class's work at a time, the class's tasks spread evenly over
 * its leases, and a worker whose task runs long, or that has not answered
 * for longer than its class's tasks take, gets nothing more queued behind
 * it: other workers take the class's tasks meanwhile. */
size_t rt__sched_share(const rt__lease *l, uint64_t busy_us, uint64_t now_ns);
/* A graph's tasks sent early (board.h) go one to each lease of their
 * class in turn, while all have room, so that a step's tasks land on
 * different workers and their queues stay in step; quiet workers take
 * their turn (they answer when their batch ends), but not one whose task
 * runs far longer than its class's or waits for others.  What l's window
 * (and max_calls) has room for. */
int rt__sched_takes_turns(const rt__lease *l, uint64_t busy_us);
/* Whether l is stalled: it has work in flight and its task has run far
 * longer than its class's usually do, or it has been quiet that long (it
 * may not have started its task yet).  busy_us as for share. */
int rt__sched_stalled(const rt__lease *l, uint64_t busy_us, uint64_t now_ns);
/* In how many microseconds l, which has tasks in flight, counts as
 * stalled if its task goes on and no answer comes; 0 when it does now. */
uint64_t rt__sched_stalls_in_us(const rt__lease *l, uint64_t busy_us, uint64_t now_ns);
size_t rt__sched_room(const rt__lease *l);
/* l's worker was sent t at now_ns: t joins its tasks in flight. */
void rt__sched_sent(rt__lease *l, rt__task *t, uint64_t now_ns);
/* l's running task `waiting` waits for t, which its worker now runs
 * inside that wait (a task of l's class, withdrawn from its queue): t
 * goes in flight right before `waiting`, answered before it and after the
 * tasks before it (whose answers may still be on their way). */
void rt__sched_sent_inside(rt__lease *l, rt__task *t, const rt__task *waiting);
/* The task in flight on l that an answer names, id: the oldest, or, for
 * an actor that runs several methods at once, any (moved first); NULL
 * when it is not in flight there. */
rt__task *rt__sched_in_flight(rt__lease *l, uint64_t id);
/* The oldest task in flight on l, answered at now_ns after running for
 * run_us: taken off; NULL when none. */
rt__task *rt__sched_answered(rt__lease *l, uint64_t run_us, uint64_t now_ns);
/* The oldest task in flight on l, taken back unanswered (its worker was
 * lost); NULL when none. */
rt__task *rt__sched_recall(rt__lease *l);
/* l's running task t waits for other tasks: its CPUs go back to the
 * node's free resources, and l gets no task until it goes on (t NULL),
 * when it takes them again, even if that leaves the node short for a
 * while (as Ray does).  GPUs and custom resources are not lent. */
void rt__sched_lend(rt__sched *s, rt__lease *l, const rt__task *t);
/* Take the last n tasks in flight on l off, in their order, into *q
 * (which must be empty): its worker will never run them. */
void rt__sched_take_back(rt__lease *l, size_t n, rt__tasks *q);
/* Put tasks back first in line in c, in their order. */
void rt__sched_requeue(rt__sched *s, rt__class *c, rt__tasks *q);

/* The ids of what g holds, "0,3" (GPUs) and "1" (its accelerator
 * family's instances: neuron cores, TPU chips...), the bytes its share of
 * each GPU's memory is ("21474836480,0"; 0 = unknown), and the
 * CPUs near its GPUs ("" when unknown or when binding is off), each
 * written into a buffer of RT__INSTANCE_MAX * RT__ID_LEN bytes. */
void rt__sched_describe(const rt__sched *s, const rt__grant *g, char *gpus,
                        char *accel, char *cpus, char *memory);

/* ---- placement groups (groups.c) -------------------------------------------
 *
 * Placement groups: bundles of resources reserved on nodes at
 * once, all or nothing, for the tasks and actors of the group alone.
 *
 * A bundle, once placed, is carved out of its node's pools (free and
 * unheld alike, as an actor's holding is): its own pools are what its
 * leases take from (rt__sched_pool()).  Strategies, as Ray's: PACK tries
 * one node for every bundle, then fills the nodes it already uses first;
 * SPREAD puts each bundle on a node not used yet while there is one; the
 * STRICT forms fail rather than do otherwise.  Each bundle goes to the
 * first node (in index order) that fits it: greedy, so a group that only
 * an exhaustive search would place waits.
 *
 * A group that does not fit now waits; it is tried again whenever
 * something went back to a node.  Removed, a group leaves the handle map
 * at once, and its bundles go back to their nodes: what its leases hold
 * goes back as they end, to the nodes.  Its record lives while classes
 * take from it (the dispatcher fails their tasks and ends their leases).
 */

enum { RT__GROUP_UNPLACED, RT__GROUP_PLACED, RT__GROUP_REMOVED };

typedef struct rt__bundle {
    rt__res res;          /* what it reserves; .nodes: those its label
                             selector picks (0 = any) */
    int gpu_type;         /* its GPUs' type, or RT__ANY_TYPE */
    int node;             /* placed: where */
    rt__grant grant;      /* placed: what it took there */
    rt__pool free;        /* placed: what its leases may take now */
    rt__pool unheld;      /* the same, less what its actors hold */
} rt__bundle;

typedef struct rt__group {
    rt__idnode byid;      /* in the scheduler's groups until removed */
    rt__link link;        /* on its unplaced list; then on the list of
                             those just placed that rt__sched_place_groups()
                             was given */
    int strategy;         /* RT_PG_* */
    int state;            /* RT__GROUP_* */
    int ready;            /* [L] the runtime's: its placement is published */
    rt__link classes;     /* the classes that take from it (their
                             in_group links) */
    rt__link all;         /* in the scheduler's groups, while not removed */
    uint64_t tried;       /* the scheduler's gave when it last did not fit */
    size_t nbundles;
    rt__bundle bundle[];
} rt__group;

/* A group of n bundles, unplaced, for the caller to fill (res, gpu_type
 * by rt__sched_gpu_type(), strategy); NULL without memory. */
rt__group *rt__group_new(size_t n);
/* Free a group that never joined the scheduler's (or that leaves it). */
void rt__group_free(rt__group *g);
/* 0 when some placement on the nodes, all free, could hold g; otherwise
 * RT_EINFEASIBLE with a message (RT_ENOMEM without memory). */
int rt__sched_group_check(const rt__sched *s, const rt__group *g);
/* g (checked, its handle in byid.id) joins the groups, to be placed. */
void rt__sched_group_add(rt__sched *s, rt__group *g);
/* Place the groups that wait and now fit, in their order; those placed
 * move onto the list at placed. */
void rt__sched_place_groups(rt__sched *s, rt__link *placed);
/* The group whose handle is id, or NULL (unknown or removed). */
rt__group *rt__sched_group(const rt__sched *s, uint64_t id);
/* 0 when a request of g (its bundle, or any: req->bundle < 0) fits what
 * the bundle reserves; otherwise RT_EINFEASIBLE or RT_EINVAL with a
 * message.  Reads what is fixed at creation only. */
int rt__group_admits(const rt__sched *s, const rt__group *g, const rt__res *req);
/* Remove g: out of the map, its bundles back to their nodes; freed now
 * when no class takes from it. */
void rt__sched_group_remove(rt__sched *s, rt__group *g);
/* Class c takes from g from now on, or no longer (it is freed). */
void rt__group_join(rt__group *g, rt__class *c);
void rt__group_leave(rt__class *c);
/* Instance i of node's GPUs is unhealthy: so it is in the bundles placed
 * there. */
void rt__sched_groups_sicken(rt__sched *s, int node, int i);
/* The end: free every group (their classes are gone). */
void rt__sched_groups_free(rt__sched *s);

#endif

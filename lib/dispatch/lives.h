/*
 * lives.h - between the dispatcher's two halves, private to dispatch/:
 * dispatch.c carries tasks to workers and their answers back; actors.c
 * keeps the lives of actors.  What each asks of the other.
 */
#ifndef RT_LIVES_H
#define RT_LIVES_H

#include "dispatch.h"

/* dispatch.c: the node that holds l's worker; t finished with status
 * (into done); t, new or no longer waiting for objects, filed under its
 * class (or its actor), or finished when it failed meanwhile (its
 * status set). */
rt__node *rt__dispatch_node_of(const rt__dispatch *d, const rt__lease *l);
void rt__dispatch_finish(rt__dispatch *d, rt__task *t, int status);
void rt__dispatch_file(rt__dispatch *d, rt__task *t);

/* remote.c: an answer whose bytes its node holds becomes t's object
 * (held there); an answer not taken, its held bytes forgotten there too;
 * the node's event for a pull.  t is about to be filed with req: 1 when
 * it waits (parked) for objects to come here first, else 0, with req
 * steered near its objects (and off this node when they must otherwise
 * come).  A call t to its actor waits while objects must come here (1;
 * they are asked for). */
void rt__remote_adopt(rt__dispatch *d, const rt__lease *l, rt__task *t, const rt__answer *r);
void rt__remote_drop(rt__dispatch *d, const rt__lease *l, const rt__task *t, rt__answer *r);
void rt__remote_pulled(void *ctx, uint64_t object, void *bytes, size_t len, int found);
int rt__remote_place(rt__dispatch *d, rt__task *t, rt__res *req);
int rt__remote_call_waits(rt__dispatch *d, const rt__task *t);
/* 1 when an object t takes was lost with the rank that held it (its
 * bytes can never come): t fails with RT_EDEPENDENCY (its status set). */
int rt__remote_lost(rt__task *t);
/* t, parked, is cancelled: it waits no more. */
void rt__remote_unpark_one(rt__dispatch *d, rt__task *t);

/* health.c: the node event of the GPUs' watcher (node.h): a GPU that
 * fails gets no new lease, its leases end (their tasks retry elsewhere,
 * their actors restart elsewhere), and what can never run again fails;
 * a task's GPU memory is accounted.  While some GPU is unhealthy, each
 * round fails what no healthy GPU could ever hold. */
void rt__health_gpu(void *ctx, rt__node *from, const rt__gpu_event *e, void *owner, int ours);
void rt__health_fail_never(rt__dispatch *d);
/* actors.c: a's process is killed because its GPU failed (why): its
 * epitaph says so if it does not restart. */
void rt__actors_gpu_failed(rt__actor *a, const char *why);

/* actors.c: a new actor's constructor submitted; its answer; its
 * process lost; its death declared (calls fail from the next exchange),
 * and its burial (it runs no more); a call that fails with its epitaph;
 * the record freed. */
void rt__actors_absorb(rt__dispatch *d, rt__task *create);
void rt__actors_constructed(rt__dispatch *d, rt__task *create, rt__answer *r);
void rt__actors_lost(rt__dispatch *d, rt__lease *l, const rt__loss *loss);
void rt__actors_set_death(rt__dispatch *d, rt__actor *a, rt__death death);
/* End a: calls not sent fail, its process finishes those sent, runs its
 * destructor and exits (rt_actor_kill(), a group's removal). */
void rt__actors_end(rt__dispatch *d, rt__actor *a, rt__death death);
void rt__actors_bury(rt__dispatch *d, rt__actor *a);
void rt__actors_fail_call(rt__dispatch *d, rt__task *t, rt__actor *a);
/* A new call; and a call that waited, now ready (or failed): calls go
 * to the actor in the order they were made, so a call that waits for
 * objects holds back the calls after it (held). */
void rt__actors_absorb_call(rt__dispatch *d, rt__task *t);
void rt__actors_release_held(rt__dispatch *d, rt__actor *a);
void rt__actors_forget(rt__actor *a);

#endif

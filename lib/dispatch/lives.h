/*
 * lives.h - between the dispatcher's two halves, private to dispatch/:
 * dispatch.c carries tasks to workers and their answers back; actors.c
 * keeps the lives of actors.  What each asks of the other.
 */
#ifndef RT_LIVES_H
#define RT_LIVES_H

#include "dispatch.h"

/* dispatch.c: the node that holds l's worker; t finished with status
 * (into done); an answer's bytes that nobody takes. */
rt__node *rt__dispatch_node_of(const rt__dispatch *d, const rt__lease *l);
void rt__dispatch_finish(rt__dispatch *d, rt__task *t, int status);
void rt__dispatch_drop(rt__answer *r);

/* actors.c: a new actor's constructor submitted; its answer; its
 * process lost; its death declared (calls fail from the next exchange),
 * and its burial (it runs no more); a call that fails with its epitaph;
 * the record freed. */
void rt__actors_absorb(rt__dispatch *d, rt__task *create);
void rt__actors_constructed(rt__dispatch *d, rt__task *create, rt__answer *r);
void rt__actors_lost(rt__dispatch *d, rt__lease *l, const rt__loss *loss);
void rt__actors_set_death(rt__dispatch *d, rt__actor *a, rt__death death);
void rt__actors_bury(rt__dispatch *d, rt__actor *a);
void rt__actors_fail_call(rt__dispatch *d, rt__task *t, rt__actor *a);
void rt__actors_forget(rt__actor *a);

#endif

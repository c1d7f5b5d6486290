/* args.h - between the public calls that take a list of arguments. */
#ifndef RT_ARGS_H
#define RT_ARGS_H

#include "node/callmsg.h"

#include <rtask.h>

/* The checks of rt_remote_args() and rt_actor_call_args(), named call
 * in messages: not in a task, fn, ref and the list given, at most
 * RT_ARGS_MAX entries, each a ref or bytes.  0 or an error. */
int rt__check_args(const char *call, const void *fn, const rt_arg *args, size_t nargs,
                   const rt_ref *ref);

/* In the application: a task (nested: a task submitted it, so it goes
 * first in line), an actor's call, an actor (its handle in ref; 1 when
 * it is a live one found by its name: actor.c). */
int rt__remote_task(const rt__submission *s, int nested, rt_ref *ref);
int rt__actor_call_form(const rt__submission *s, rt_ref *ref);
int rt__actor_create_form(const rt__submission *s, rt_ref *ref);

#endif

/*
 * door.h - who serve the calls that tasks make (api/proxy.c), as the
 * runtime knows them: rt_init() hands them over (calls.h), and the
 * runtime's state keeps them (runtime.h).  A header of its own so that
 * neither of those two includes the other.
 */
#ifndef RT_DOOR_H
#define RT_DOOR_H

/* The runtime thread calls serve with a connection of a worker's thread
 * that knocked at the door (node/client.h), rank 0, or with one relayed
 * from another rank (cluster/tunnel.h) and that rank, and rt_shutdown() calls close once
 * the runtime has stopped, every call that waited in it ended.  opened
 * and closing (api/statusd.h) frame the time the runtime runs, for who
 * answers from outside: called by rt_init() and rt_shutdown(), which
 * run one at a time. */
typedef struct rt__door_hooks {
    void (*serve)(int connection, int rank);
    void (*close)(void);
    void (*opened)(void);
    void (*closing)(void);
} rt__door_hooks;

#endif

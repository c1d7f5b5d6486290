/*
 * statusd.h - the socket that rtask-status(1) reads the state from: one
 * per application, named after its pid, in a folder that only its user
 * may enter; a thread of the application answers each request with the
 * report of the state API (state.c).
 */
#ifndef RT_STATUSD_H
#define RT_STATUSD_H

#include <stddef.h>
#include <stdio.h>

/* What rtask-status asks: a line "WHAT [json]\n", WHAT one of status,
 * summary, nodes, tasks, actors, objects, placement-groups. */
#define RT__STATUS_REQUEST_MAX 128

/* The report for what, as text or JSON, to f.  0 or an error. */
int rt__state_report(FILE *f, const char *what, int json);

/* The sockets' folder into dir (size bytes): $RTASK_STATUS_DIR, else
 * $XDG_RUNTIME_DIR/rtask, else /tmp/rtask-UID; made (make) with mode
 * 0700.  0, or -1 when it is off ($RTASK_STATUS_DIR "off"), cannot be
 * made, or is not the user's alone (errno set). */
int rt__statusd_dir(char *dir, size_t size, int make);

/* Once the runtime runs: serve (a warning, and no socket, when it
 * cannot be made).  Before it stops: stop, and remove the socket.  The
 * runtime calls them (runtime/door.h), one at a time. */
void rt__statusd_start(void);
void rt__statusd_stop(void);

#endif

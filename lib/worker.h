/*
 * worker.h - the loop that runs tasks inside a worker process.
 *
 * A worker reads TASK messages from its socket, runs each function, and
 * answers with RESULT messages in the same order.  Its stdout and stderr
 * are pipes read by the runtime thread, which prefixes every line with
 * "(name pid=N) "; the worker writes a marker into both pipes whenever the
 * name changes, so the prefix travels in order with the output itself.
 */
#ifndef RT_WORKER_H
#define RT_WORKER_H

/* 1 in the fork server and in workers, where the runtime's state is a
 * stale copy: the public calls that need it fail with RT_EINWORKER. */
extern int rt__in_worker;

/* The marker that starts "PID NAME\n" in a worker's output streams. */
#define RT__NAME_MARK "\0rtask:"
#define RT__NAME_MARK_LEN 7

/* High bits of a RESULT word that say the runtime failed, not the task;
 * the low 32 bits then hold an errno. */
#define RT__RESULT_SYSFAIL (1ULL << 32)

_Noreturn void rt__worker_main(int sock, int out, int err);

#endif

/*
 * sink.h - where task output ends: the application's stdout and stderr,
 * written by a thread of its own.
 *
 * Relays (output.h) hand complete lines here.  The sink thread alone
 * writes them, through the application's stdio streams (so they mix with
 * its own prints as any line would), so a stdout that nobody reads blocks
 * that thread and never the runtime's results.  Lines wait in a bounded
 * buffer; when it is full they are dropped and counted, and a notice on
 * stderr says how many once the output moves again.  The thread is
 * started at the first line and lives as long as the process.
 */
#ifndef RT_SINK_H
#define RT_SINK_H

#include <stddef.h>
#include <stdio.h>

/* Queue prefix + line (+ a newline when it lacks one) for to, which is
 * stdout or stderr. */
void rt__sink_put(FILE *to, const char *prefix, const char *line, size_t len);
/* Wait until all that was queued so far is written, up to timeout_ms, so
 * that a task's lines come before its result.  0, or -1 when the output
 * is stuck: from then on nobody waits for it until it moves again. */
int rt__sink_drain(int timeout_ms);
/* In a child forked without exec: the sink thread is the parent's. */
void rt__sink_forked(void);

#endif

/*
 * output.h - relay a worker's stdout or stderr to the application's, each
 * line prefixed "(name pid=N) " as Ray prints it (through the sink,
 * sink.h, which writes them).
 */
#ifndef RT_OUTPUT_H
#define RT_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

/* The marker that starts "PID NAME\n" in a worker's output streams: the
 * worker writes it where its name changes, the relay reads it. */
#define RT__NAME_MARK "\0rtask:"
#define RT__NAME_MARK_LEN 7

typedef struct rt__relay {
    int fd;       /* read end of the worker's pipe; -1 once closed */
    FILE *to;     /* the application's stdout or stderr */
    char *buf;    /* bytes of a line not yet complete */
    size_t len, cap;
    char prefix[416];
    /* Set by rt__relay_label(): the label is made (rt__task_name(), a
     * symbol lookup) only if a line comes before the next marker. */
    int label_pending;
    uint64_t label_fn;
    char label_given[256]; /* the name the task was given, or "" */
    long label_pid;
} rt__relay;

void rt__relay_init(rt__relay *r, int fd, FILE *to);
/* On a rank of a cluster that serves rank 0: say which node printed a
 * line, "(name pid=N, node=1 host=h) ".  Process-wide, as stdout is; set
 * before any worker starts. */
void rt__output_node(const char *label);
/* Label the lines that come before the next marker as task fn's, named
 * given (NULL: its symbol), in process pid: a worker told so (a NAME with
 * word 1) writes no marker for its next task (worker.c). */
void rt__relay_label(rt__relay *r, uint64_t fn, const char *given, long pid);
/* The task's name in output: given, else the symbol at fn ("task" for a
 * static function or an executable without -rdynamic). */
const char *rt__task_name(uint64_t fn, const char *given);
/* Read once and relay the complete lines.  Returns the bytes read, 0 at
 * end of file, -1 on error (errno EAGAIN when the pipe is empty). */
long rt__relay_read(rt__relay *r);
/* Read what is left, relay a last partial line, close the pipe. */
void rt__relay_close(rt__relay *r);

#endif

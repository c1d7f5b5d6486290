/*
 * output.h - relay a worker's stdout or stderr to the application's, each
 * line prefixed "(name pid=N) " as Ray prints it (through the sink,
 * sink.h, which writes them).
 */
#ifndef RT_OUTPUT_H
#define RT_OUTPUT_H

#include <stdio.h>

typedef struct rt__relay {
    int fd;       /* read end of the worker's pipe; -1 once closed */
    FILE *to;     /* the application's stdout or stderr */
    char *buf;    /* bytes of a line not yet complete */
    size_t len, cap;
    char prefix[416];
} rt__relay;

void rt__relay_init(rt__relay *r, int fd, FILE *to);
/* On a rank of a cluster that serves rank 0: say which node printed a
 * line, "(name pid=N, node=1 host=h) ".  Process-wide, as stdout is; set
 * before any worker starts. */
void rt__output_node(const char *label);
/* Read once and relay the complete lines.  Returns the bytes read, 0 at
 * end of file, -1 on error (errno EAGAIN when the pipe is empty). */
long rt__relay_read(rt__relay *r);
/* Read what is left, relay a last partial line, close the pipe. */
void rt__relay_close(rt__relay *r);

#endif

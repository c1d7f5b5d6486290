/* output.c - line relay from worker pipes, with name and pid prefixes. */
#include "output.h"

#include "sink.h"
#include "base/alloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_BYTES (64 * 1024) /* longer lines are cut into pieces */

static char node_label[128]; /* ", node=1 host=h", or "" */

void rt__output_node(const char *label)
{
    snprintf(node_label, sizeof node_label, "%s", label);
}

void rt__relay_init(rt__relay *r, int fd, FILE *to)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->to = to;
    snprintf(r->prefix, sizeof r->prefix, "(rtask worker) ");
}

const char *rt__task_name(uint64_t fn, const char *given)
{
    if (given && *given)
        return given;
    Dl_info info;
    if (dladdr((void *)(uintptr_t)fn, &info) && info.dli_sname &&
        info.dli_saddr == (void *)(uintptr_t)fn)
        return info.dli_sname;
    return "task";
}

static void set_prefix(rt__relay *r, int name_len, const char *name, long pid)
{
    snprintf(r->prefix, sizeof r->prefix, "(%.*s pid=%ld%s) ", name_len, name, pid,
             node_label);
}

void rt__relay_label(rt__relay *r, uint64_t fn, const char *given, long pid)
{
    r->label_pending = 1;
    r->label_fn = fn;
    r->label_pid = pid;
    snprintf(r->label_given, sizeof r->label_given, "%s", given ? given : "");
}

static void emit(rt__relay *r, const char *line, size_t len)
{
    if (r->label_pending) {
        const char *name = rt__task_name(r->label_fn, r->label_given);
        set_prefix(r, (int)strlen(name), name, r->label_pid);
        r->label_pending = 0;
    }
    rt__sink_put(r->to, r->prefix, line, len);
}

/* "PID NAME\n" after a marker sets the prefix of the lines that follow.
 * The bytes are the worker's (a task may write anything into its
 * output): the pid is read from a bounded copy, and must be a number. */
static void take_name(rt__relay *r, const char *s, size_t len)
{
    const char *space = memchr(s, ' ', len);
    char digits[16], *end;
    size_t n = space ? (size_t)(space - s) : 0;
    if (n == 0 || n >= sizeof digits)
        return;
    memcpy(digits, s, n);
    digits[n] = '\0';
    long pid = strtol(digits, &end, 10);
    if (*end || pid <= 0 || pid > INT_MAX)
        return;
    int name_len = (int)(len - (size_t)(space + 1 - s));
    if (name_len > 0 && s[len - 1] == '\n')
        name_len--;
    set_prefix(r, name_len, space + 1, pid);
    r->label_pending = 0;
}

static void relay_line(rt__relay *r, const char *line, size_t len)
{
    const char *mark = memmem(line, len, RT__NAME_MARK, RT__NAME_MARK_LEN);
    if (!mark) {
        emit(r, line, len);
        return;
    }
    if (mark > line) /* a partial line the previous task left unfinished */
        emit(r, line, (size_t)(mark - line));
    size_t skip = (size_t)(mark - line) + RT__NAME_MARK_LEN;
    take_name(r, line + skip, len - skip);
}

/* Relay every complete line in the buffer and keep the rest. */
static void relay_lines(rt__relay *r)
{
    size_t start = 0;
    for (;;) {
        char *nl = memchr(r->buf + start, '\n', r->len - start);
        size_t end = nl ? (size_t)(nl - r->buf) + 1 : start + LINE_MAX_BYTES;
        if (end > r->len)
            break;
        relay_line(r, r->buf + start, end - start);
        start = end;
    }
    memmove(r->buf, r->buf + start, r->len - start);
    r->len -= start;
}

long rt__relay_read(rt__relay *r)
{
    if (r->cap - r->len < 4096) {
        size_t cap = r->cap ? r->cap * 2 : 8192;
        char *p = rt__realloc(r->buf, cap);
        if (!p) {
            errno = ENOMEM;
            return -1;
        }
        r->buf = p;
        r->cap = cap;
    }
    long got = read(r->fd, r->buf + r->len, r->cap - r->len);
    if (got <= 0)
        return got;
    r->len += (size_t)got;
    relay_lines(r);
    return got;
}

void rt__relay_close(rt__relay *r)
{
    if (r->fd < 0)
        return;
    while (rt__relay_read(r) > 0)
        ;
    if (r->len)
        relay_line(r, r->buf, r->len);
    close(r->fd);
    rt__free(r->buf);
    r->fd = -1;
    r->buf = NULL;
    r->len = r->cap = 0;
}

/* error.c - error codes' names and the thread-local detailed message. */
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[256];

const char *rt__strerror(int code)
{
    switch (code) {
    case RT_OK: return "success";
    case RT_EINVAL: return "invalid argument";
    case RT_ENOTINIT: return "runtime not initialised";
    case RT_EALREADY: return "runtime already initialised";
    case RT_ENOMEM: return "out of memory";
    case RT_ETIMEDOUT: return "timed out";
    case RT_EBADREF: return "unknown or consumed handle";
    case RT_ESHUTDOWN: return "runtime shut down";
    case RT_EWORKERDIED: return "worker died";
    case RT_ETASK: return "task returned an error";
    case RT_EINFEASIBLE: return "request can never be satisfied";
    case RT_ESYS: return "system call failed";
    case RT_EINWORKER: return "not allowed inside a task";
    case RT_EACTORDIED: return "actor died";
    case RT_ECANCELLED: return "cancelled";
    case RT_EKILLED: return "killed at its time limit";
    case RT_EDEPENDENCY: return "an object it takes failed";
    case RT_EEXIST: return "an actor of that name exists";
    default: return "unknown error";
    }
}

const char *rt__last_error(void)
{
    return last_error;
}

int rt__error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

int rt__check_len(const char *call, const char *what, size_t len)
{
    if (len <= RT__LEN_MAX)
        return 0;
    return rt__error(RT_EINVAL, "%s: %s is %zu, past any buffer's length (at most %zu)",
                     call, what, len, (size_t)RT__LEN_MAX);
}

int rt__syserror(const char *what)
{
    int saved = errno;
    return rt__error(saved == ENOMEM ? RT_ENOMEM : RT_ESYS, "%s: %s", what,
                     strerror(saved));
}

void rt__warn(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "rtask: warning: %s\n", line);
}

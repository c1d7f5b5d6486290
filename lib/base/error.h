/* error.h - error codes, messages and the per-thread last error. */
#ifndef RT_ERROR_H
#define RT_ERROR_H

#include "rtask.h"

/* Record a formatted message as this thread's last error and return code,
 * so that failing paths read "return rt__error(RT_EINVAL, ...)". */
int rt__error(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Same, for a failed system call: appends strerror(errno). */
int rt__syserror(const char *what);

/* Tell the user on stderr about input that was ignored or cut short
 * ("rtask: warning: ..."), where failing would help nobody. */
void rt__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

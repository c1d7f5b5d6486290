/* error.h - error codes, messages and the per-thread last error. */
#ifndef RT_ERROR_H
#define RT_ERROR_H

#include "rtask.h"

#include <stdint.h>

/* Record a formatted message as this thread's last error and return code,
 * so that failing paths read "return rt__error(RT_EINVAL, ...)". */
int rt__error(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* What rt_strerror(3) and rt_last_error(3) return. */
const char *rt__strerror(int code);
const char *rt__last_error(void);

/* The longest length any call takes: sizes computed from a longer one
 * (a header added, pages rounded up, n + 1) could wrap. */
#define RT__LEN_MAX (SIZE_MAX / 4)

/* RT_EINVAL, naming call and what, when len is past RT__LEN_MAX: no
 * buffer is ever that long, and the arithmetic on it must not wrap. */
int rt__check_len(const char *call, const char *what, size_t len);

/* Same, for a failed system call: appends strerror(errno). */
int rt__syserror(const char *what);

/* Tell the user on stderr about input that was ignored or cut short
 * ("rtask: warning: ..."), where failing would help nobody. */
void rt__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

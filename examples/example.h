/* example.h - the two helpers every example shares.
 *
 * check() turns a failed call into a message and an exit, so that the
 * examples show the calls rather than error handling; a real program
 * would recover instead.  print_list() prints ids the way Ray prints a
 * Python list ("[0, 1]"), as the Ray documentation's output shows them. */
#ifndef EXAMPLE_H
#define EXAMPLE_H

#include <rtask.h>

#include <stdio.h>
#include <stdlib.h>

/* Exit with the error's details when rc is negative; return rc otherwise. */
static inline int check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "%s: %s: %s\n", what, rt_strerror(rc), rt_last_error());
        exit(1);
    }
    return rc;
}

static inline void print_list(const char *label, const char *const *ids, size_t n)
{
    printf("%s: [", label);
    for (size_t i = 0; i < n; i++)
        printf("%s%s", i ? ", " : "", ids[i]);
    printf("]\n");
}

#endif

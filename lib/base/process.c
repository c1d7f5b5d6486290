/* process.c - whether this process is the application or a fork of it. */
#include "process.h"

static int forked;

void rt__process_is_forked(void)
{
    forked = 1;
}

int rt__process_forked(void)
{
    return forked;
}

/*
 * visible.h - CUDA_VISIBLE_DEVICES, read as CUDA reads it.
 *
 * Set before rt_init(), the variable restricts and renames the GPUs the
 * runtime offers: with "1,3" tasks are given "1" or "3".  Entries are
 * device indices, "GPU-<uuid>" or "MIG-<uuid>" strings (kept as they
 * are); an empty value means no GPU; the first invalid entry ends the
 * list, as in CUDA, so "0,2,-1,1" means 0 and 2.
 */
#ifndef RT_VISIBLE_H
#define RT_VISIBLE_H

#include "devices/instance.h"

/* Parse value into at most max ids; returns how many.  *bad points to
 * the entry that ended the list early, or is NULL; *why then says why
 * ("is not a GPU id", "is repeated"). */
int rt__visible_parse(const char *value, char (*ids)[RT__ID_LEN], int max,
                      const char **bad, const char **why);

#endif

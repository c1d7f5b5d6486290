/*
 * sparse.h - a mostly-zero buffer packed as runs, and back.
 *
 * A rank's description of its node (every field for the most devices a
 * node may have, most of them empty) is 187 KiB; rank 0 gathers one from
 * every rank when the job starts.  Packed, a description is a few KiB:
 * the packing is a run of zero bytes (8 or more), then a run of bytes
 * as they are, each preceded by its length, until the buffer's end.
 */
#ifndef RT_SPARSE_H
#define RT_SPARSE_H

#include <stddef.h>

/* The bytes that packing len bytes can take at most. */
#define RT__SPARSE_BOUND(len) ((len) + 8)
/* Pack len bytes of data (under 4 GiB) into out (room for
 * rt__sparse_bound(len)): the packed length. */
size_t rt__sparse_pack(const void *data, size_t len, void *out);
/* Unpack packed bytes into out, which takes len bytes exactly: 0, or -1
 * when they are not a packing of len bytes (out is then undefined). */
int rt__sparse_unpack(const void *packed, size_t packed_len, void *out, size_t len);

#endif

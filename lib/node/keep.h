/*
 * keep.h - objects' bytes in files.  The checkpoint file: one kept result, named by its task's key
 * (runtime/checkpoint.c says what the key is and when results are kept),
 * in one codec for every rank that writes or reads one; and the 128-bit
 * hash that keys and sums are made of.
 *
 * A file is a header (a magic, the key, the length of the bytes and
 * their hash), then the bytes.  It is written whole under a temporary
 * name, then renamed: a file that is there is complete, unless the
 * machine crashed before its file system was flushed, which its hash
 * tells.
 */
#ifndef RT_KEEP_H
#define RT_KEEP_H

#include <stddef.h>
#include <stdint.h>

/* A hash of words and bytes (not for secrets: for keys and sums). */
typedef struct rt__hash {
    uint64_t a, b;
} rt__hash;

rt__hash rt__hash_start(uint64_t tag);
void rt__hash_word(rt__hash *h, uint64_t w);
void rt__hash_bytes(rt__hash *h, const void *data, size_t len);
/* An rt_put() object's bytes hashed: what its checkpoint key starts from
 * (runtime/checkpoint.c), on whichever rank the bytes are. */
rt__hash rt__put_hash(const void *data, size_t len);

/* Keep the len bytes of a buffer (rt__buf_alloc()'s, or an object's:
 * rt__buf_write()) under key in folder dir, flushed first when flush is
 * set (else the caller flushes the folder's file system in batches): 0,
 * or -1 with a warning. */
int rt__keep_write(const char *dir, const uint64_t key[2], const void *data, size_t len,
                   int flush);
/* The bytes kept under key, in a buffer an object keeps
 * (rt__task_object_fill()), and their length; NULL when none are, or
 * none that can be trusted (a warning says why). */
void *rt__keep_read(const char *dir, const uint64_t key[2], size_t *len);
/* Take back what was kept under key (it may name handles of its run). */
void rt__keep_remove(const char *dir, const uint64_t key[2]);

/* A spilled object's file (runtime/spill.c, cluster/store.c): its len
 * bytes alone, in a new file at path: 0, or -1 with errno (no file
 * left).  Read back: the bytes in a buffer an object keeps, when the file
 * holds len of them; NULL (errno) otherwise. */
int rt__keep_spill(const char *path, const void *data, size_t len);
void *rt__keep_unspill(const char *path, size_t len);

#endif

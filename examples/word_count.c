/* word_count.c - map-reduce over a directory: count words in every file.
 *
 *   word_count [DIR]        (default: /usr/include)
 *
 * Map: one task per file reads it and hands back its counts (lines,
 * words, bytes) as an object.  Reduce: tasks that take up to eight of
 * those objects as arguments add them up, level by level, into one
 * object; the partial counts never pass through this program, which only
 * reads the last one.  The refs are released as soon as they are passed
 * on: the tasks that take them hold them. */
#include "example.h"

#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <string.h>

#define FAN_IN 8
#define MAX_FILES 4096

typedef struct counts {
    uint64_t files, lines, words, bytes;
} counts;

int map_file(const void *path, size_t len, rt_result *result);
int reduce_counts(const rt_value *args, size_t nargs, rt_result *result);

int map_file(const void *path, size_t len, rt_result *result)
{
    (void)len;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    counts c = {.files = 1};
    int ch, in_word = 0;
    while ((ch = fgetc(f)) != EOF) {
        c.bytes++;
        c.lines += ch == '\n';
        c.words += !in_word && !isspace(ch);
        in_word = !isspace(ch);
    }
    fclose(f);
    return rt_result_set(result, &c, sizeof c);
}

int reduce_counts(const rt_value *args, size_t nargs, rt_result *result)
{
    counts sum = {0};
    for (size_t i = 0; i < nargs; i++) {
        const counts *c = args[i].data; /* the partial counts, in place */
        sum.files += c->files;
        sum.lines += c->lines;
        sum.words += c->words;
        sum.bytes += c->bytes;
    }
    return rt_result_set(result, &sum, sizeof sum);
}

/* One map task per regular file, its ref in refs; returns how many. */
static size_t map_dir(const char *dir, rt_ref *refs)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && n < MAX_FILES && (e = readdir(d));) {
        if (e->d_type != DT_REG)
            continue;
        char path[4096];
        int len = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        check(rt_remote(map_file, NULL, path, (size_t)len + 1, &refs[n++]), "rt_remote");
    }
    if (d)
        closedir(d);
    return n;
}

/* Reduce n objects FAN_IN at a time until one is left. */
static rt_ref reduce_all(rt_ref *refs, size_t n)
{
    while (n > 1) {
        size_t m = 0;
        for (size_t i = 0; i < n; i += FAN_IN) {
            size_t k = n - i < FAN_IN ? n - i : FAN_IN;
            rt_arg args[FAN_IN];
            for (size_t j = 0; j < k; j++)
                args[j] = RT_ARG_REF(refs[i + j]);
            rt_ref partial;
            check(rt_remote_args(reduce_counts, NULL, args, k, &partial), "rt_remote_args");
            for (size_t j = 0; j < k; j++)
                rt_release(refs[i + j]); /* the reduce task holds them */
            refs[m++] = partial;
        }
        n = m;
    }
    return refs[0];
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/usr/include";
    static rt_ref refs[MAX_FILES];
    check(rt_init(0), "rt_init");
    size_t n = map_dir(dir, refs);
    if (n == 0) {
        printf("%s: no files\n", dir);
        return rt_shutdown() < 0;
    }
    counts *total;
    check(rt_get(reduce_all(refs, n), (void **)&total, NULL, RT_FOREVER), "rt_get");
    printf("%llu files, %llu lines, %llu words, %llu bytes\n",
           (unsigned long long)total->files, (unsigned long long)total->lines,
           (unsigned long long)total->words, (unsigned long long)total->bytes);
    rt_free(total);
    return rt_shutdown() < 0;
}

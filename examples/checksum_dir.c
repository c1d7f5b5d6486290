/* checksum_dir.c - checksum every file of a directory in parallel.
 *
 *   checksum_dir [DIR]        (default: /usr/include)
 *
 * One task per file: the task reads the file and hands back its size and
 * FNV-1a checksum.  Results are gathered as they finish with rt_wait(),
 * then printed in name order with a total. */
#include <rtask.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct file_sum {
    uint64_t size, fnv;
} file_sum;

int checksum_file(const void *path, size_t len, rt_result *result);

int checksum_file(const void *path, size_t len, rt_result *result)
{
    (void)len;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    file_sum s = {0, 1469598103934665603u};
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++, s.size++)
            s.fnv = (s.fnv ^ buf[i]) * 1099511628211u;
    fclose(f);
    return rt_result_set(result, &s, sizeof s);
}

typedef struct job {
    char name[256];
    rt_ref ref;
    file_sum sum;
    int ok;
} job;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const job *)a)->name, ((const job *)b)->name);
}

/* Submit one task per regular file; returns how many. */
static size_t submit_all(const char *dir, job *jobs, size_t max)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && n < max && (e = readdir(d));) {
        if (e->d_type != DT_REG)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(jobs[n].name, sizeof jobs[n].name, "%s", e->d_name);
        if (rt_remote(checksum_file, NULL, path, strlen(path) + 1, &jobs[n].ref) == 0)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* Take results in the order tasks finish. */
static void gather(job *jobs, size_t n)
{
    rt_ref *pending = malloc(n * sizeof *pending);
    for (size_t i = 0; i < n; i++)
        pending[i] = jobs[i].ref;
    size_t left = n, ready;
    while (left > 0 && rt_wait(pending, left, 1, RT_FOREVER, &ready) == 0) {
        for (size_t i = 0; i < ready; i++) {
            job *j = jobs;
            while (j->ref.id != pending[i].id)
                j++;
            file_sum *s;
            j->ok = rt_get(j->ref, (void **)&s, NULL, 0) == 0;
            if (j->ok)
                j->sum = *s;
            rt_free(s);
        }
        memmove(pending, pending + ready, (left - ready) * sizeof *pending);
        left -= ready;
    }
    free(pending);
}

int main(int argc, char **argv)
{
    if (rt_init(0) < 0) {
        fprintf(stderr, "rt_init: %s\n", rt_last_error());
        return 1;
    }
    const char *dir = argc > 1 ? argv[1] : "/usr/include";
    enum { MAX_FILES = 4096 };
    job *jobs = calloc(MAX_FILES, sizeof *jobs);
    size_t n = submit_all(dir, jobs, MAX_FILES);
    gather(jobs, n);
    qsort(jobs, n, sizeof *jobs, by_name);
    uint64_t bytes = 0;
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!jobs[i].ok) {
            failed++;
            continue;
        }
        bytes += jobs[i].sum.size;
        if (i < 5)
            printf("%016llx %10llu  %s\n", (unsigned long long)jobs[i].sum.fnv,
                   (unsigned long long)jobs[i].sum.size, jobs[i].name);
    }
    printf("%zu files in %s checksummed, %llu bytes, %zu unreadable\n", n, dir,
           (unsigned long long)bytes, failed);
    free(jobs);
    return rt_shutdown() < 0;
}

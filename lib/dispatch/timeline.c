/* timeline.c - the record of ended tasks, written as trace-event JSON. */
#include "timeline.h"

#include "base/alloc.h"
#include "base/error.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK_SPANS 8192 /* about 700 KiB */

static rt__span *new_chunk(rt__timeline *tl)
{
    rt__span **v = rt__grow(tl->chunk, &tl->chunks_cap, tl->nchunks, sizeof *v, 16);
    if (!v)
        return NULL;
    tl->chunk = v;
    void *p = mmap(NULL, CHUNK_SPANS * sizeof(rt__span), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    return tl->chunk[tl->nchunks++] = p;
}

/* Copy n texts (1 or 2), one after the other, each ended by a 0, into
 * tl's text: their offset, 0 when all are empty, or -1 without memory. */
static int64_t keep_text(rt__timeline *tl, const char *const *texts, int n)
{
    size_t len[2], total = 0;
    int any = 0;
    for (int i = 0; i < n; i++) {
        len[i] = texts[i] ? strlen(texts[i]) : 0;
        total += len[i] + 1;
        any |= len[i] > 0;
    }
    if (!any)
        return 0;
    if (!tl->text_len)
        tl->text_len = 1; /* offset 0 means none */
    if (tl->text_len + total > UINT32_MAX)
        return -1;
    size_t cap = tl->text_cap ? tl->text_cap : 4096;
    while (cap < tl->text_len + total)
        cap *= 2;
    char *t = cap == tl->text_cap ? tl->text : rt__realloc(tl->text, cap);
    if (!t)
        return -1;
    tl->text = t;
    tl->text_cap = cap;
    size_t at = tl->text_len;
    for (int i = 0; i < n; i++) {
        memcpy(t + tl->text_len, texts[i] ? texts[i] : "", len[i] + 1);
        tl->text_len += len[i] + 1;
    }
    return (int64_t)at;
}

int rt__timeline_add(rt__timeline *tl, const rt__span *s, const char *name, const char *gpus,
                     const char *accel)
{
    size_t k = tl->n / CHUNK_SPANS, at = tl->n % CHUNK_SPANS;
    rt__span *chunk = k < tl->nchunks ? tl->chunk[k] : new_chunk(tl); /* one a span lost made */
    const char *devices[2] = {gpus, accel};
    int64_t name_at = name && *name ? keep_text(tl, &name, 1) : 0;
    int64_t devices_at = gpus || accel ? keep_text(tl, devices, 2) : 0;
    if (!chunk || name_at < 0 || devices_at < 0)
        return -1;
    chunk[at] = *s;
    chunk[at].name = (uint32_t)name_at;
    chunk[at].devices = (uint32_t)devices_at;
    tl->n++;
    return 0;
}

void rt__timeline_free(rt__timeline *tl)
{
    for (size_t i = 0; i < tl->nchunks; i++)
        munmap(tl->chunk[i], CHUNK_SPANS * sizeof(rt__span));
    rt__free(tl->chunk);
    rt__free(tl->text);
    *tl = (rt__timeline){0};
}

static const rt__span *span_at(const rt__timeline *tl, size_t i)
{
    return &tl->chunk[i / CHUNK_SPANS][i % CHUNK_SPANS];
}

/* A text of the span's, at offset at: "" for none. */
static const char *text_at(const rt__timeline *tl, uint32_t at)
{
    return at ? tl->text + at : "";
}

/* A JSON string's body: quotes, backslashes and controls escaped. */
static void json_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
}

static const char *name_of(const rt__timeline *tl, const rt__span *s)
{
    Dl_info info;
    if (s->name)
        return text_at(tl, s->name);
    if (dladdr(s->fn, &info) && info.dli_sname && info.dli_saddr == s->fn)
        return info.dli_sname;
    return "task";
}

static double us_since(uint64_t origin, uint64_t ns)
{
    return ns > origin ? (double)(ns - origin) / 1000 : 0;
}

/* A GPU's event: an instant ("ph":"i") across its node's lanes. */
static void write_mark(FILE *f, const rt__timeline *tl, const rt__span *s)
{
    fprintf(f, "{\"name\":\"");
    json_text(f, text_at(tl, s->name));
    fprintf(f, "\",\"cat\":\"gpu\",\"ph\":\"i\",\"s\":\"p\",\"ts\":%.3f,\"pid\":%d,"
               "\"tid\":0,\"args\":{\"bus_id\":\"",
            us_since(tl->origin_ns, s->started_ns), s->node);
    json_text(f, text_at(tl, s->devices));
    fprintf(f, "\"}}");
}

/* One complete event per line ("ph":"X"): the run, from its start in its
 * worker to its end, and when it was queued, in microseconds. */
static void write_span(FILE *f, const rt__timeline *tl, const rt__span *s)
{
    if (s->mark) {
        write_mark(f, tl, s);
        return;
    }
    fprintf(f, "{\"name\":\"");
    const char *gpus = text_at(tl, s->devices), *accel = s->devices ? gpus + strlen(gpus) + 1 : "";
    json_text(f, name_of(tl, s));
    fprintf(f, "\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,"
               "\"tid\":%llu,\"args\":{\"id\":%llu,\"gpus\":\"",
            s->call ? "actor call" : "task", us_since(tl->origin_ns, s->started_ns),
            us_since(s->started_ns, s->ended_ns), s->node, (unsigned long long)s->lane,
            (unsigned long long)s->id);
    json_text(f, gpus);
    fprintf(f, "\",\"gpu_share\":%g,\"accel\":\"", (double)s->gpu_share);
    json_text(f, accel);
    fprintf(f, "\",\"accel_share\":%g,\"queued_us\":%.3f,\"status\":\"", (double)s->accel_share,
            us_since(tl->origin_ns, s->queued_ns));
    json_text(f, rt_strerror(s->status));
    fprintf(f, "\",\"retries\":%d", s->retries);
    if (s->gpu_peak)
        fprintf(f, ",\"gpu_mem_peak\":%llu", (unsigned long long)s->gpu_peak);
    fprintf(f, "}}");
}

int rt__timeline_write(const rt__timeline *tl, const char *path)
{
    if (!path || !*path)
        return rt__error(RT_EINVAL, "rt_timeline: no path");
    FILE *f = fopen(path, "w");
    if (!f)
        return rt__error(RT_ESYS, "rt_timeline: %s: %s", path, strerror(errno));
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    int nodes = 0;
    for (size_t i = 0; i < tl->n; i++) {
        const rt__span *s = span_at(tl, i);
        write_span(f, tl, s);
        fprintf(f, ",\n");
        nodes = s->node >= nodes ? s->node + 1 : nodes;
    }
    for (int k = 0; k < nodes; k++)
        fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                   "\"args\":{\"name\":\"node %d\"}}%s\n", k, k, k + 1 < nodes ? "," : "");
    fprintf(f, "]}\n");
    int bad = ferror(f) | (fclose(f) != 0);
    return bad ? rt__error(RT_ESYS, "rt_timeline: writing %s failed", path) : 0;
}

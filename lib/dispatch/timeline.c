/* timeline.c - the record of ended tasks, written as trace-event JSON. */
#include "timeline.h"

#include "base/alloc.h"
#include "base/error.h"
#include "base/prefault.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* One entry as kept: 48 bytes where the dispatcher's description takes
 * 88, for most of what recording costs a task is its entry's share of
 * fresh pages, which the kernel zeroes (about 0.3 ns a byte on a 2-vCPU
 * VM).  Times before the end are microseconds back from it (the run's
 * own figure, from its worker); what only some tasks have (devices, a
 * GPU memory peak, retries, a wait or run of 71 minutes or more, a GPU's
 * event) is in an extra, which then holds every time. */
struct rt__entry {
    uint64_t id;
    const void *fn;
    uint64_t ended_ns;
    uint32_t waited_us;  /* from its queueing to its start */
    uint32_t ran_us;     /* from its start to its end */
    uint32_t lane;
    uint32_t name;       /* or, with ENTRY_ACTOR, the actor's texts */
    uint32_t extra;      /* 1 + its extra's index; 0: none */
    int16_t node;
    int8_t status;
    uint8_t flags;
};

struct rt__entry_extra {
    uint64_t queued_ns, started_ns, gpu_peak;
    float gpu_share, accel_share;
    uint32_t devices;
    int32_t retries;
};

enum { ENTRY_CALL = 1, ENTRY_MARK = 2, ENTRY_ACTOR = 4 };

#define CHUNK_ENTRIES 16384 /* 768 KiB */
#define CHUNK_BYTES (CHUNK_ENTRIES * sizeof(rt__entry))
#define AHEAD_STEP ((size_t)32 << 10) /* about 10 us of the kernel's zeroing */

static rt__entry *map_chunk(int populate)
{
    void *p = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* The next chunk: the one mapped ahead (the rest of its pages made
 * present now), else a new one with its pages present (a page fault per
 * few dozen tasks cost more than the rest of recording). */
static rt__entry *new_chunk(rt__timeline *tl)
{
    rt__entry **v = rt__grow(tl->chunk, &tl->chunks_cap, tl->nchunks, sizeof *v, 16);
    if (!v)
        return NULL;
    tl->chunk = v;
    rt__entry *c = tl->ahead;
    if (c && tl->ahead_present < CHUNK_BYTES)
        rt__prefault_range((char *)c + tl->ahead_present, CHUNK_BYTES - tl->ahead_present);
    tl->ahead = NULL;
    if (!c && !(c = map_chunk(1)))
        return NULL;
    return tl->chunk[tl->nchunks++] = c;
}

void rt__timeline_prepare(rt__timeline *tl)
{
    if (!tl->nchunks || (tl->ahead && tl->ahead_present >= CHUNK_BYTES))
        return;
    if (!tl->ahead) {
        if (!(tl->ahead = map_chunk(0)))
            return;
        tl->ahead_present = 0;
    }
    rt__prefault_range((char *)tl->ahead + tl->ahead_present, AHEAD_STEP);
    tl->ahead_present += AHEAD_STEP;
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

/* Microseconds from a to b when they fit an entry's field (UINT32_MAX
 * does not: it could not be told from a saturated one). */
static int fits_us(uint64_t a, uint64_t b, uint32_t *us)
{
    uint64_t d = b > a ? (b - a) / 1000 : 0;
    *us = (uint32_t)d;
    return d < UINT32_MAX;
}

/* s's extra, where it needs one (a mark, whose time is its start, has
 * one too): 1 + its index, 0 for none, -1 when out of memory. */
static int64_t keep_extra(rt__timeline *tl, const rt__span *s, uint32_t devices, int times_fit)
{
    if (times_fit && !devices && !s->gpu_peak && !s->retries && !s->mark)
        return 0;
    rt__entry_extra *v = rt__grow(tl->extra, &tl->extra_cap, tl->nextra, sizeof *v, 64);
    if (!v || tl->nextra >= UINT32_MAX)
        return -1;
    tl->extra = v;
    v[tl->nextra] = (rt__entry_extra){s->queued_ns, s->started_ns, s->gpu_peak, s->gpu_share,
                                       s->accel_share, devices, s->retries};
    return (int64_t)++tl->nextra;
}

uint32_t rt__timeline_actor(rt__timeline *tl, const char *name, uint64_t handle)
{
    char number[24];
    snprintf(number, sizeof number, "%llu", (unsigned long long)handle);
    const char *texts[2] = {name, number};
    int64_t at = keep_text(tl, texts, 2);
    return at > 0 ? (uint32_t)at : 0;
}

int rt__timeline_add(rt__timeline *tl, const rt__span *s, const char *name, const char *gpus,
                     const char *accel)
{
    size_t k = tl->n / CHUNK_ENTRIES, at = tl->n % CHUNK_ENTRIES;
    rt__entry *chunk = k < tl->nchunks ? tl->chunk[k] : new_chunk(tl); /* one a span lost made */
    const char *devices[2] = {gpus, accel};
    int64_t name_at = s->actor ? s->actor : name && *name ? keep_text(tl, &name, 1) : 0;
    int64_t devices_at = gpus || accel ? keep_text(tl, devices, 2) : 0;
    if (!chunk || name_at < 0 || devices_at < 0)
        return -1;
    uint32_t waited, ran;
    int times_fit = fits_us(s->queued_ns, s->started_ns, &waited) &
                    fits_us(s->started_ns, s->ended_ns, &ran);
    int64_t extra = keep_extra(tl, s, (uint32_t)devices_at, times_fit);
    if (extra < 0)
        return -1;
    chunk[at] = (rt__entry){s->id, s->fn, s->ended_ns, waited, ran, (uint32_t)s->lane,
                            (uint32_t)name_at, (uint32_t)extra, (int16_t)s->node,
                            (int8_t)s->status,
                            (uint8_t)((s->call ? ENTRY_CALL : 0) | (s->mark ? ENTRY_MARK : 0) |
                                      (s->actor ? ENTRY_ACTOR : 0))};
    tl->n++;
    return 0;
}

void rt__timeline_free(rt__timeline *tl)
{
    for (size_t i = 0; i < tl->nchunks; i++)
        munmap(tl->chunk[i], CHUNK_BYTES);
    if (tl->ahead)
        munmap(tl->ahead, CHUNK_BYTES);
    rt__free(tl->chunk);
    rt__free(tl->extra);
    rt__free(tl->text);
    *tl = (rt__timeline){0};
}

/* Entry i described again, as it was added. */
static rt__span span_at(const rt__timeline *tl, size_t i)
{
    const rt__entry *e = &tl->chunk[i / CHUNK_ENTRIES][i % CHUNK_ENTRIES];
    uint64_t started = e->ended_ns - (uint64_t)e->ran_us * 1000;
    rt__span s = {.id = e->id, .fn = e->fn, .lane = e->lane, .ended_ns = e->ended_ns,
                  .started_ns = started, .queued_ns = started - (uint64_t)e->waited_us * 1000,
                  .node = e->node, .status = e->status,
                  .call = (e->flags & ENTRY_CALL) != 0, .mark = (e->flags & ENTRY_MARK) != 0};
    *(e->flags & ENTRY_ACTOR ? &s.actor : &s.name) = e->name;
    if (e->extra) {
        const rt__entry_extra *x = &tl->extra[e->extra - 1];
        s.queued_ns = x->queued_ns;
        s.started_ns = x->started_ns;
        s.gpu_peak = x->gpu_peak;
        s.gpu_share = x->gpu_share;
        s.accel_share = x->accel_share;
        s.devices = x->devices;
        s.retries = x->retries;
    }
    return s;
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
    json_text(f, rt__strerror(s->status));
    fprintf(f, "\",\"retries\":%d", s->retries);
    if (s->actor) {
        const char *actor = text_at(tl, s->actor);
        fprintf(f, ",\"actor\":\"");
        json_text(f, actor);
        fprintf(f, "\",\"actor_id\":%s", actor + strlen(actor) + 1);
    }
    if (s->gpu_peak)
        fprintf(f, ",\"gpu_mem_peak\":%llu", (unsigned long long)s->gpu_peak);
    fprintf(f, "}}");
}

int rt__timeline_render(const rt__timeline *tl, char **text, size_t *len)
{
    *text = NULL;
    FILE *f = open_memstream(text, len); /* memory: no system call */
    if (!f)
        return rt__error(RT_ENOMEM, "rt_timeline: no memory for the trace");
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    int nodes = 0;
    for (size_t i = 0; i < tl->n; i++) {
        rt__span s = span_at(tl, i);
        write_span(f, tl, &s);
        fprintf(f, ",\n");
        nodes = s.node >= nodes ? s.node + 1 : nodes;
    }
    for (int k = 0; k < nodes; k++)
        fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                   "\"args\":{\"name\":\"node %d\"}}%s\n", k, k, k + 1 < nodes ? "," : "");
    fprintf(f, "]}\n");
    if (ferror(f) | (fclose(f) != 0)) {
        free(*text);
        *text = NULL;
        return rt__error(RT_ENOMEM, "rt_timeline: no memory for the trace");
    }
    return 0;
}

int rt__timeline_save(const char *text, size_t len, const char *path)
{
    if (!path || !*path)
        return rt__error(RT_EINVAL, "rt_timeline: no path");
    FILE *f = fopen(path, "w");
    if (!f)
        return rt__error(RT_ESYS, "rt_timeline: %s: %s", path, strerror(errno));
    int bad = fwrite(text, 1, len, f) != len;
    bad |= fclose(f) != 0;
    return bad ? rt__error(RT_ESYS, "rt_timeline: writing %s failed", path) : 0;
}

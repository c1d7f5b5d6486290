/* timeline.c - the record of ended tasks, written as trace-event JSON. */
#include "timeline.h"

#include "base/alloc.h"
#include "base/error.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int rt__timeline_add(rt__timeline *tl, const rt__span *s)
{
    rt__span *v = rt__grow(tl->v, &tl->cap, tl->n, sizeof *v, 1024);
    if (!v)
        return -1;
    tl->v = v;
    tl->v[tl->n++] = *s;
    return 0;
}

void rt__timeline_free(rt__timeline *tl)
{
    rt__free(tl->v);
    *tl = (rt__timeline){0};
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

static const char *name_of(const rt__span *s)
{
    Dl_info info;
    if (s->name[0])
        return s->name;
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
    json_text(f, s->name);
    fprintf(f, "\",\"cat\":\"gpu\",\"ph\":\"i\",\"s\":\"p\",\"ts\":%.3f,\"pid\":%d,"
               "\"tid\":0,\"args\":{\"bus_id\":\"",
            us_since(tl->origin_ns, s->started_ns), s->node);
    json_text(f, s->gpus);
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
    json_text(f, name_of(s));
    fprintf(f, "\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,"
               "\"tid\":%llu,\"args\":{\"id\":%llu,\"gpus\":\"",
            s->call ? "actor call" : "task", us_since(tl->origin_ns, s->started_ns),
            us_since(s->started_ns, s->ended_ns), s->node, (unsigned long long)s->lane,
            (unsigned long long)s->id);
    json_text(f, s->gpus);
    fprintf(f, "\",\"gpu_share\":%g,\"accel\":\"", s->gpu_share);
    json_text(f, s->accel);
    fprintf(f, "\",\"accel_share\":%g,\"queued_us\":%.3f,\"status\":\"", s->accel_share,
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
        write_span(f, tl, &tl->v[i]);
        fprintf(f, ",\n");
        nodes = tl->v[i].node >= nodes ? tl->v[i].node + 1 : nodes;
    }
    for (int k = 0; k < nodes; k++)
        fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                   "\"args\":{\"name\":\"node %d\"}}%s\n", k, k, k + 1 < nodes ? "," : "");
    fprintf(f, "]}\n");
    int bad = ferror(f) | (fclose(f) != 0);
    return bad ? rt__error(RT_ESYS, "rt_timeline: writing %s failed", path) : 0;
}

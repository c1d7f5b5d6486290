/*
 * rtask-timeline - draw a timeline written by rt_timeline(3) as an SVG
 * Gantt chart with a time axis: one lane per GPU (and per accelerator),
 * where each run is a bar as tall as its share of the device, so that one
 * sees how fractional tasks packed; then one row per worker process,
 * grouped by node.  Bars are coloured by function.
 *
 *   rtask-timeline [--view gpus|workers|both] [--from S] [--to S] trace.json > trace.svg
 *
 * It reads the file rtask writes (one event per line) and refuses any
 * other: a trace from elsewhere, a truncated file, a directory.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES 4096
#define WIDTH 1000.0
#define LABEL 170.0 /* room for the row labels, left of the bars */
#define ROW 22.0    /* a worker's row */
#define LANE 44.0   /* a device's lane: a whole device is this tall */
#define AXIS 46.0   /* where the first row starts, below the axis */
#define HEADER "{\"displayTimeUnit\":\"ms\",\"traceEvents\":["
#define FOOTER "]}"
#define MAX_ROWS 4096
#define MAX_NAMES 64
#define TEXT_CHAR 6.5 /* about the width of a character of 11 px, in px */
#define BAR_CHAR 6.0  /* and of 10 px */

typedef struct event {
    char name[64], gpus[64], accel[64], status[48];
    char actor[64];          /* an actor's run: the actor's name; "" else */
    double actor_id;         /* and its handle */
    double ts, dur, gpu_share, accel_share;
    int node;
    unsigned long long lane;
} event;

typedef struct row {
    int node;
    unsigned long long lane; /* a worker's pid */
    char device[72];         /* or a device: "GPU 1", "accelerator 0" */
    const event *actor;      /* a worker's: a run of the actor it held, or NULL */
} row;

typedef struct chart {
    event *ev;
    size_t n, cap;
    row rows[MAX_ROWS];
    int nrows;
    char names[MAX_NAMES][64]; /* functions, in order of first appearance */
    int nnames;
    double start;              /* where the picture starts (us after rt_init);
                                  events are kept from there, shifted to 0 */
    double end, scale, y;      /* the last end (us), px per us, next row's top */
} chart;

/* ---- reading ---------------------------------------------------------------- */

/* The string value of "key":"..." in line, unescaped enough for names. */
static int text_of(const char *line, const char *key, char *out, size_t size)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(line, pat);
    size_t n = 0;
    if (!p)
        return -1;
    for (p += strlen(pat); *p && *p != '"' && n + 1 < size; p++) {
        if (*p == '\\' && p[1])
            p++;
        out[n++] = *p;
    }
    out[n] = '\0';
    return 0;
}

static int number_of(const char *line, const char *key, double *out)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    return p && sscanf(p + strlen(pat), "%lf", out) == 1 && isfinite(*out) ? 0 : -1;
}

/* A run ("ph":"X"): every field rtask writes must be there. */
static int parse_run(const char *line, event *e)
{
    double pid, tid;
    memset(e, 0, sizeof *e);
    if (text_of(line, "name", e->name, sizeof e->name) < 0 ||
        number_of(line, "ts", &e->ts) < 0 || number_of(line, "dur", &e->dur) < 0 ||
        number_of(line, "pid", &pid) < 0 || number_of(line, "tid", &tid) < 0 ||
        text_of(line, "status", e->status, sizeof e->status) < 0 || e->ts < 0 ||
        e->dur < 0 || pid < 0 || tid < 0)
        return -1;
    text_of(line, "gpus", e->gpus, sizeof e->gpus);
    if (text_of(line, "actor", e->actor, sizeof e->actor) == 0 &&
        number_of(line, "actor_id", &e->actor_id) < 0)
        return -1;
    text_of(line, "accel", e->accel, sizeof e->accel);
    /* Files written before shares were recorded: a whole device. */
    if (number_of(line, "gpu_share", &e->gpu_share) < 0)
        e->gpu_share = 1;
    if (number_of(line, "accel_share", &e->accel_share) < 0)
        e->accel_share = 1;
    e->node = (int)pid;
    e->lane = (unsigned long long)tid;
    return 0;
}

static int add_event(chart *c, const event *e)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        event *v = realloc(c->ev, cap * sizeof *v);
        if (!v)
            return -1;
        c->ev = v;
        c->cap = cap;
    }
    c->ev[c->n++] = *e;
    return 0;
}

/* An event line of rtask's: a run or a node's name, with or without the
 * comma that separates it from the next. */
static int read_line(chart *c, char *line)
{
    size_t len = strlen(line);
    if (len && line[len - 1] == ',')
        line[--len] = '\0';
    if (strncmp(line, "{\"name\":\"", 9) != 0 || len < 2 || line[len - 1] != '}')
        return -1;
    if (strstr(line, "\"ph\":\"M\""))
        return 0;
    event e;
    if (!strstr(line, "\"ph\":\"X\"") || parse_run(line, &e) < 0)
        return -1;
    return add_event(c, &e);
}

/* 0, or -1 with why: rtask's header, its lines, its footer last. */
static int read_events(FILE *f, chart *c, const char **why)
{
    char line[LINE_MAX_BYTES];
    int lines = 0, ended = 0;
    *why = "not a timeline rtask wrote";
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n')
            return -1; /* a line too long, or a file cut short */
        line[len - 1] = '\0';
        if (ended)
            return -1; /* something after the footer */
        if (lines++ == 0) {
            if (strcmp(line, HEADER) != 0)
                return -1;
        } else if (strcmp(line, FOOTER) == 0) {
            ended = 1;
        } else if (read_line(c, line) < 0) {
            return -1;
        }
    }
    if (ferror(f)) {
        *why = strerror(errno);
        return -1;
    }
    if (!ended)
        *why = lines ? "not a timeline rtask wrote (it ends too soon)" : "an empty file";
    return ended ? 0 : -1;
}

/* ---- drawing ----------------------------------------------------------------- */

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1",
                                      "#76b7b2", "#edc948", "#ff9da7", "#9c755f"};

/* Characters that XML cannot take as they are. */
static void xml(const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", stdout); break;
        case '>': fputs("&gt;", stdout); break;
        case '&': fputs("&amp;", stdout); break;
        case '"': fputs("&quot;", stdout); break;
        default: putchar(*s);
        }
}

/* s as XML, in px at most, at about char_px a character: whole where it
 * fits, else cut with an ellipsis. */
static void xml_fitted(const char *s, double px, double char_px)
{
    size_t room = px > char_px ? (size_t)(px / char_px) : 1, len = strlen(s);
    if (len <= room) {
        xml(s);
        return;
    }
    char cut[128];
    snprintf(cut, sizeof cut, "%.*s", (int)(room > 1 ? room - 1 : 1), s);
    xml(cut);
    fputs("\u2026", stdout);
}

/* A length of time in microseconds, as a person writes it: "850 us",
 * "12.5 ms", "1.23 s". */
static void duration(double us, char *out, size_t size)
{
    if (us < 1000)
        snprintf(out, size, "%.0f us", us);
    else if (us < 1e6)
        snprintf(out, size, "%.*f ms", us < 1e4 ? 2 : us < 1e5 ? 1 : 0, us / 1e3);
    else
        snprintf(out, size, "%.*f s", us < 1e7 ? 2 : us < 1e8 ? 1 : 0, us / 1e6);
}

static int colour_of(chart *c, const char *name)
{
    for (int i = 0; i < c->nnames; i++)
        if (strcmp(c->names[i], name) == 0)
            return i;
    if (c->nnames == MAX_NAMES)
        return MAX_NAMES - 1;
    snprintf(c->names[c->nnames], sizeof c->names[0], "%s", name);
    return c->nnames++;
}

/* The row of a worker (device NULL) or of a device of a node. */
static int row_of(chart *c, int node, unsigned long long lane, const char *device)
{
    for (int i = 0; i < c->nrows; i++)
        if (c->rows[i].node == node && c->rows[i].lane == lane &&
            strcmp(c->rows[i].device, device ? device : "") == 0)
            return i;
    if (c->nrows == MAX_ROWS)
        return MAX_ROWS - 1;
    row *r = &c->rows[c->nrows];
    r->node = node;
    r->lane = lane;
    r->actor = NULL;
    snprintf(r->device, sizeof r->device, "%s", device ? device : "");
    return c->nrows++;
}

static int by_node_then_lane(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->node != y->node)
        return x->node - y->node;
    if (x->lane != y->lane)
        return (x->lane > y->lane) - (x->lane < y->lane);
    size_t lx = strlen(x->device), ly = strlen(y->device); /* GPU 10 after GPU 9 */
    return lx != ly ? (lx > ly) - (lx < ly) : strcmp(x->device, y->device);
}

/* A round step for the axis: 1, 2 or 5 times a power of ten, giving
 * about eight ticks over the whole span. */
static double tick_step(double span)
{
    double raw = span / 8, power = pow(10, floor(log10(raw)));
    double step = raw / power < 1.5 ? 1 : raw / power < 3.5 ? 2 : raw / power < 7.5 ? 5 : 10;
    return step * power;
}

/* Ticks at round times since rt_init, over the span shown. */
static void draw_axis(const chart *c, double bottom)
{
    double step = tick_step(c->end);
    double unit = step >= 1e6 ? 1e6 : step >= 1e3 ? 1e3 : 1;
    const char *name = unit == 1e6 ? "s" : unit == 1e3 ? "ms" : "us";
    for (double at = ceil(c->start / step) * step; at <= c->start + c->end; at += step) {
        double x = LABEL + (at - c->start) * c->scale;
        char label[32];
        snprintf(label, sizeof label, "%g %s", at / unit, name);
        printf("<line x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"#ddd\"/>"
               "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\" fill=\"#555\">%s</text>\n",
               x, AXIS - 8, x, bottom, x, AXIS - 12, at == 0 ? "0" : label);
    }
}

static void draw_heading(chart *c, const char *text)
{
    printf("<text x=\"10\" y=\"%g\" font-weight=\"bold\">%s</text>\n", c->y + 14, text);
    c->y += 20;
}

/* One bar: its tooltip names the run, its length, devices and status. */
static void draw_bar(chart *c, const event *e, double y, double height, double share)
{
    int failed = strcmp(e->status, "success") != 0;
    /* A run that failed at once (a worker lost) is a mark, not a sliver. */
    double least = failed ? 4 : 1, x = LABEL + e->ts * c->scale;
    double w = e->dur * c->scale < least ? least : e->dur * c->scale;
    char len[32];
    duration(e->dur, len, sizeof len);
    printf("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"%s><title>",
           x, y, w, height, palette[colour_of(c, e->name) % 8],
           failed ? " stroke=\"#e15759\" stroke-width=\"2\"" : "");
    xml(e->name);
    printf(": %s", len);
    if (e->gpus[0]) {
        printf(", GPU ");
        xml(e->gpus);
        printf(" (%g of each)", e->gpu_share);
    }
    printf(" (");
    xml(e->status);
    printf(")</title></rect>\n");
    if (w > 40 && height >= 12) {
        printf("<text x=\"%.1f\" y=\"%.1f\" fill=\"white\" font-size=\"10\">", x + 3,
               y + height / 2 + 4);
        if (share > 0 && share < 1)
            printf("%g ", share);
        xml_fitted(e->name, w - 6, BAR_CHAR);
        printf("</text>\n");
    }
}

/* Whether id is one of the comma-separated list's. */
static int listed(const char *list, const char *id)
{
    size_t n = strlen(id);
    for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        if (strncmp(p, id, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    }
    return 0;
}

/* Each device lane's runs, stacked: a run takes the lowest place free of
 * the runs it overlaps in time, so that the lane shows the device shared. */
typedef struct placed {
    double start, end, low, share;
} placed;

static double place(placed *p, int n, double start, double end, double share)
{
    double candidates[1 + MAX_ROWS];
    int nc = 0;
    candidates[nc++] = 0;
    for (int i = 0; i < n && nc < (int)(sizeof candidates / sizeof *candidates); i++)
        if (p[i].start < end && start < p[i].end)
            candidates[nc++] = p[i].low + p[i].share;
    double best = -1;
    for (int k = 0; k < nc; k++) {
        double low = candidates[k];
        int free = low + share <= 1 + 1e-9;
        for (int i = 0; free && i < n; i++)
            free = !(p[i].start < end && start < p[i].end && p[i].low < low + share - 1e-9 &&
                     low < p[i].low + p[i].share - 1e-9);
        if (free && (best < 0 || low < best))
            best = low;
    }
    return best < 0 ? 0 : best; /* times measured apart overlap a little */
}

static int by_start(const void *a, const void *b)
{
    const event *x = *(const event *const *)a, *y = *(const event *const *)b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The runs that held device id of family ("GPU" or "accelerator") on a
 * node, stacked in its lane. */
static void draw_device(chart *c, const row *r, const char *family, const char *id)
{
    const event **runs = malloc(c->n * sizeof *runs);
    placed *p = malloc(c->n * sizeof *p);
    int n = 0;
    for (size_t i = 0; runs && p && i < c->n; i++) {
        const event *e = &c->ev[i];
        const char *list = strcmp(family, "GPU") == 0 ? e->gpus : e->accel;
        if (e->node == r->node && listed(list, id))
            runs[n++] = e;
    }
    qsort(runs, (size_t)n, sizeof *runs, by_start);
    printf("<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"#f4f4f4\"/>\n", LABEL,
           c->y, WIDTH - LABEL - 30, LANE);
    printf("<text x=\"10\" y=\"%g\">node %d, ", c->y + LANE / 2 + 4, r->node);
    xml(r->device);
    printf("</text>\n");
    for (int i = 0; i < n; i++) {
        const event *e = runs[i];
        double share = strcmp(family, "GPU") == 0 ? e->gpu_share : e->accel_share;
        share = share > 0 && share < 1 ? share : 1;
        double low = place(p, i, e->ts, e->ts + e->dur, share);
        p[i] = (placed){e->ts, e->ts + e->dur, low, share};
        draw_bar(c, e, c->y + LANE * (1 - low - share) + 0.5, LANE * share - 1, share);
    }
    c->y += LANE + 4;
    free(runs);
    free(p);
}

/* Every device some run held: one lane each, by node and id. */
static int collect_devices(chart *c)
{
    c->nrows = 0;
    for (size_t i = 0; i < c->n; i++) {
        const char *lists[2] = {c->ev[i].gpus, c->ev[i].accel};
        const char *family[2] = {"GPU", "accelerator"};
        for (int k = 0; k < 2; k++) {
            char copy[64], *save, device[72];
            snprintf(copy, sizeof copy, "%s", lists[k]);
            for (char *id = strtok_r(copy, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
                snprintf(device, sizeof device, "%s %s", family[k], id);
                row_of(c, c->ev[i].node, 0, device);
            }
        }
    }
    qsort(c->rows, (size_t)c->nrows, sizeof *c->rows, by_node_then_lane);
    return c->nrows;
}

static void draw_devices(chart *c)
{
    if (collect_devices(c) == 0)
        return;
    draw_heading(c, "GPUs and accelerators (a bar's height is its share of the device)");
    for (int r = 0; r < c->nrows; r++) {
        const char *family = strncmp(c->rows[r].device, "GPU ", 4) == 0 ? "GPU" : "accelerator";
        draw_device(c, &c->rows[r], family, c->rows[r].device + strlen(family) + 1);
    }
}

/* Which of the actors named as a's it is, counted from 0 in the order
 * they were made (their handles'): "Trainer 0", "Trainer 1". */
static int actor_number(const chart *c, const event *a)
{
    int n = 0;
    for (int r = 0; r < c->nrows; r++) {
        const event *b = c->rows[r].actor;
        if (!b || b->actor_id >= a->actor_id || strcmp(b->actor, a->actor) != 0)
            continue;
        int counted = 0; /* an actor restarted has had several workers */
        for (int q = 0; q < r && !counted; q++)
            counted = c->rows[q].actor && c->rows[q].actor->actor_id == b->actor_id;
        n += !counted;
    }
    return n;
}

/* A worker's row is named by the actor it held, else by its pid. */
static void draw_worker_label(const chart *c, int r)
{
    const row *w = &c->rows[r];
    char label[128];
    if (w->actor)
        snprintf(label, sizeof label, "node %d, %s %d", w->node, w->actor->actor,
                 actor_number(c, w->actor));
    else
        snprintf(label, sizeof label, "node %d, worker %llu", w->node, w->lane);
    printf("<text x=\"10\" y=\"%g\">", c->y + ROW * r + 15);
    xml_fitted(label, LABEL - 16, TEXT_CHAR);
    printf("</text>\n");
}

static void draw_workers(chart *c)
{
    c->nrows = 0;
    for (size_t i = 0; i < c->n; i++)
        row_of(c, c->ev[i].node, c->ev[i].lane, NULL);
    qsort(c->rows, (size_t)c->nrows, sizeof *c->rows, by_node_then_lane);
    for (size_t i = 0; i < c->n; i++)
        if (c->ev[i].actor[0])
            c->rows[row_of(c, c->ev[i].node, c->ev[i].lane, NULL)].actor = &c->ev[i];
    draw_heading(c, "Worker processes");
    for (int r = 0; r < c->nrows; r++)
        draw_worker_label(c, r);
    for (size_t i = 0; i < c->n; i++) {
        const event *e = &c->ev[i];
        int r = row_of(c, e->node, e->lane, NULL);
        draw_bar(c, e, c->y + ROW * r + 2, ROW - 4, 0);
    }
    c->y += ROW * c->nrows + 4;
}

/* The legend's columns: as many as its longest name leaves room for,
 * six at most. */
static int legend_columns(const chart *c)
{
    size_t longest = 0;
    for (int i = 0; i < c->nnames; i++)
        longest = strlen(c->names[i]) > longest ? strlen(c->names[i]) : longest;
    int n = (int)((WIDTH - 20) / (24 + TEXT_CHAR * (double)longest));
    return n < 1 ? 1 : n > 6 ? 6 : n;
}

static void draw_legend(const chart *c)
{
    int columns = legend_columns(c);
    double width = (WIDTH - 20) / columns;
    for (int i = 0; i < c->nnames; i++) {
        double x = 10 + width * (i % columns), y = c->y + 10 + 18.0 * (i / columns);
        printf("<rect x=\"%g\" y=\"%g\" width=\"10\" height=\"10\" fill=\"%s\"/>"
               "<text x=\"%g\" y=\"%g\">", x, y, palette[i % 8], x + 14, y + 9);
        xml_fitted(c->names[i], width - 24, TEXT_CHAR);
        printf("</text>\n");
    }
}

static int count_workers(chart *c)
{
    c->nrows = 0;
    for (size_t i = 0; i < c->n; i++)
        row_of(c, c->ev[i].node, c->ev[i].lane, NULL);
    return c->nrows;
}

/* The layout is known before anything is drawn, so that the frame has
 * its height and the axis' grid lies under the bars. */
static void draw(chart *c, int devices, int workers)
{
    c->end = fmax(c->end, 1);
    for (size_t i = 0; i < c->n; i++) {
        c->end = fmax(c->end, c->ev[i].ts + c->ev[i].dur);
        colour_of(c, c->ev[i].name); /* the legend's size, for the height */
    }
    c->scale = (WIDTH - LABEL - 30) / c->end;
    int ndev = devices ? collect_devices(c) : 0, nwork = workers ? count_workers(c) : 0;
    double rows = (ndev ? 20 + ndev * (LANE + 4) : 0) + (workers ? 20 + ROW * nwork + 4 : 0);
    int columns = legend_columns(c);
    double height = AXIS + rows + 20 + 18.0 * ((c->nnames + columns - 1) / columns + 1);
    char span[32];
    duration(c->end, span, sizeof span);
    printf("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
           "font-family=\"sans-serif\" font-size=\"11\">\n"
           "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
           "<text x=\"10\" y=\"16\" font-size=\"13\">rtask timeline: %zu run%s over %s",
           WIDTH, height, c->n, c->n == 1 ? "" : "s", span);
    if (c->start > 0) {
        duration(c->start, span, sizeof span);
        printf(", from %s after rt_init()", span);
    }
    printf("</text>\n");
    draw_axis(c, AXIS + rows);
    c->y = AXIS;
    if (ndev)
        draw_devices(c);
    if (workers)
        draw_workers(c);
    draw_legend(c);
    printf("</svg>\n");
}

/* Keep the runs within [from, to] (us; to < 0: to the last end), from
 * the first run's start when from < 0, shifted to start at 0.  How many. */
static size_t keep_span(chart *c, double from, double to)
{
    double first = INFINITY;
    for (size_t i = 0; i < c->n; i++)
        first = fmin(first, c->ev[i].ts);
    c->start = from >= 0 ? from : c->n ? first : 0;
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        event e = c->ev[i];
        double stop = to >= 0 && e.ts + e.dur > to ? to : e.ts + e.dur;
        if (e.ts + e.dur < c->start || (to >= 0 && e.ts > to))
            continue;
        e.ts = fmax(e.ts, c->start);
        e.dur = fmax(stop - e.ts, 0);
        e.ts -= c->start;
        c->ev[kept++] = e;
    }
    c->n = kept;
    c->end = to >= 0 ? to - c->start : 0;
    return kept;
}

/* A time in seconds after rt_init(), as --from and --to take it: us, or
 * -1 when it is not one. */
static double seconds(const char *text)
{
    char *end;
    double s = strtod(text, &end);
    return *text && !*end && isfinite(s) && s >= 0 ? s * 1e6 : -1;
}

int main(int argc, char **argv)
{
    const char *view = "both", *path = NULL;
    double from = -1, to = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--view") == 0 && i + 1 < argc)
            view = argv[++i];
        else if ((strcmp(argv[i], "--from") == 0 || strcmp(argv[i], "--to") == 0) &&
                 i + 1 < argc && seconds(argv[i + 1]) >= 0) {
            double *at = argv[i][2] == 'f' ? &from : &to;
            *at = seconds(argv[++i]);
        }
        else if (strcmp(argv[i], "--help") == 0)
            path = "--help";
        else if (!path && argv[i][0] != '-')
            path = argv[i];
        else
            path = NULL, argc = 0;
    }
    int devices = strcmp(view, "gpus") == 0 || strcmp(view, "both") == 0;
    int workers = strcmp(view, "workers") == 0 || strcmp(view, "both") == 0;
    if (!path || strcmp(path, "--help") == 0 || (!devices && !workers) ||
        (to >= 0 && from >= 0 && to <= from)) {
        int help = path && strcmp(path, "--help") == 0;
        fprintf(help ? stdout : stderr,
                "usage: rtask-timeline [--view gpus|workers|both] [--from S] [--to S] "
                "trace.json > trace.svg\n");
        return help ? 0 : 2;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "rtask-timeline: %s: %s\n", path, strerror(errno));
        return 1;
    }
    static chart c;
    const char *why;
    int rc = read_events(f, &c, &why);
    fclose(f);
    if (rc < 0) {
        fprintf(stderr, "rtask-timeline: %s: %s\n", path, why);
        free(c.ev);
        return 1;
    }
    if (keep_span(&c, from, to) == 0 && (from >= 0 || to >= 0)) {
        fprintf(stderr, "rtask-timeline: %s: no run in that span: nothing to show\n", path);
        free(c.ev);
        return 1;
    }
    if (!workers && collect_devices(&c) == 0) {
        fprintf(stderr, "rtask-timeline: %s: no run held a GPU or an accelerator: nothing "
                "to show in --view gpus (--view workers shows every run)\n", path);
        free(c.ev);
        return 1;
    }
    draw(&c, devices, workers);
    free(c.ev);
    return 0;
}

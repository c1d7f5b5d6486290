/*
 * rtask-timeline - draw a timeline written by rt_timeline(3) as an SVG
 * Gantt chart: one row per worker process, grouped by node, each task a
 * bar coloured by its function, with the GPU ids it held written on it.
 *
 *   rtask-timeline trace.json > trace.svg
 *
 * It reads the file rtask writes (one event per line), not any trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES 4096
#define WIDTH 1000.0
#define LABEL 170.0 /* room for the row labels, left of the bars */
#define ROW 22.0

typedef struct event {
    char name[64], gpus[64], status[48];
    double ts, dur;
    int node;
    unsigned long long lane;
    int row;
} event;

typedef struct row {
    int node;
    unsigned long long lane;
} row;

typedef struct chart {
    event *ev;
    size_t n, cap;
    row rows[4096];
    int nrows;
    char names[64][64]; /* functions, in order of first appearance: colours */
    int nnames;
} chart;

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
    return p && sscanf(p + strlen(pat), "%lf", out) == 1 ? 0 : -1;
}

static int row_of(chart *c, int node, unsigned long long lane)
{
    for (int i = 0; i < c->nrows; i++)
        if (c->rows[i].node == node && c->rows[i].lane == lane)
            return i;
    if (c->nrows == (int)(sizeof c->rows / sizeof *c->rows))
        return c->nrows - 1;
    c->rows[c->nrows].node = node;
    c->rows[c->nrows].lane = lane;
    return c->nrows++;
}

static int colour_of(chart *c, const char *name)
{
    for (int i = 0; i < c->nnames; i++)
        if (strcmp(c->names[i], name) == 0)
            return i;
    if (c->nnames == 64)
        return 63;
    snprintf(c->names[c->nnames], sizeof c->names[0], "%s", name);
    return c->nnames++;
}

static int read_events(FILE *f, chart *c)
{
    char line[LINE_MAX_BYTES];
    while (fgets(line, sizeof line, f)) {
        if (!strstr(line, "\"ph\":\"X\""))
            continue;
        event e = {0};
        double pid, tid;
        if (text_of(line, "name", e.name, sizeof e.name) < 0 ||
            number_of(line, "ts", &e.ts) < 0 || number_of(line, "dur", &e.dur) < 0 ||
            number_of(line, "pid", &pid) < 0 || number_of(line, "tid", &tid) < 0)
            return -1;
        text_of(line, "gpus", e.gpus, sizeof e.gpus);
        text_of(line, "status", e.status, sizeof e.status);
        e.node = (int)pid;
        e.lane = (unsigned long long)tid;
        if (c->n == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 256;
            event *v = realloc(c->ev, c->cap * sizeof *v);
            if (!v)
                return -1;
            c->ev = v;
        }
        c->ev[c->n++] = e;
    }
    return 0;
}

static int by_node_then_lane(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->node != y->node)
        return x->node - y->node;
    return (x->lane > y->lane) - (x->lane < y->lane);
}

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

static void draw(chart *c)
{
    double end = 1;
    for (size_t i = 0; i < c->n; i++) {
        end = c->ev[i].ts + c->ev[i].dur > end ? c->ev[i].ts + c->ev[i].dur : end;
        row_of(c, c->ev[i].node, c->ev[i].lane);
    }
    qsort(c->rows, (size_t)c->nrows, sizeof *c->rows, by_node_then_lane);
    double scale = (WIDTH - LABEL - 10) / end;
    double height = 40 + ROW * c->nrows + 30;
    printf("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
           "font-family=\"sans-serif\" font-size=\"11\">\n", WIDTH, height);
    printf("<text x=\"10\" y=\"18\" font-size=\"13\">rtask timeline: %zu runs, %.3g ms"
           "</text>\n", c->n, end / 1000);
    for (int r = 0; r < c->nrows; r++)
        printf("<text x=\"10\" y=\"%g\">node %d, worker %llu</text>\n", 40 + ROW * r + 15,
               c->rows[r].node, c->rows[r].lane);
    for (size_t i = 0; i < c->n; i++) {
        const event *e = &c->ev[i];
        int r = row_of(c, e->node, e->lane);
        double x = LABEL + e->ts * scale, w = e->dur * scale < 1 ? 1 : e->dur * scale;
        int failed = e->status[0] && strcmp(e->status, "success") != 0;
        printf("<rect x=\"%.1f\" y=\"%g\" width=\"%.1f\" height=\"%g\" fill=\"%s\"%s>"
               "<title>", x, 40 + ROW * r + 2, w, ROW - 4,
               palette[colour_of(c, e->name) % 8],
               failed ? " stroke=\"#e15759\" stroke-width=\"2\"" : "");
        xml(e->name);
        printf(": %.3g ms%s", e->dur / 1000, e->gpus[0] ? ", GPU " : "");
        xml(e->gpus);
        printf(" (");
        xml(e->status);
        printf(")</title></rect>\n");
        if (e->gpus[0] && w > 40) {
            printf("<text x=\"%.1f\" y=\"%g\" fill=\"white\">GPU ", x + 3, 40 + ROW * r + 15);
            xml(e->gpus);
            printf("</text>\n");
        }
    }
    for (int i = 0; i < c->nnames; i++) {
        double x = 10 + 150.0 * i;
        printf("<rect x=\"%g\" y=\"%g\" width=\"10\" height=\"10\" fill=\"%s\"/>"
               "<text x=\"%g\" y=\"%g\">", x, height - 20, palette[i % 8], x + 14, height - 11);
        xml(c->names[i]);
        printf("</text>\n");
    }
    printf("</svg>\n");
}

int main(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[1], "--help") == 0) {
        fprintf(argc == 2 ? stdout : stderr, "usage: rtask-timeline trace.json > trace.svg\n");
        return argc == 2 ? 0 : 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static chart c;
    int rc = read_events(f, &c);
    fclose(f);
    if (rc < 0) {
        fprintf(stderr, "rtask-timeline: %s is not a timeline rtask wrote\n", argv[1]);
        return 1;
    }
    draw(&c);
    free(c.ev);
    return 0;
}

/*
 * svg.c - the chart of `idmint bench btree --chart FILE.svg` (bench.h): a
 * standalone SVG 1.1 document (https://www.w3.org/TR/SVG11/) that reads
 * without the table:
 *
 *   title     the database and its version, N, the batch and the clock
 *   top       rows/s against rows inserted, one line per format (with
 *             --scenario migrate one per era, era 2 starting where era 1
 *             ended), axes with ticks and labels, a legend
 *   bottom    bars of the final index size and leaf density per format
 *             (n/a where the database does not report a density)
 *
 * Text is written with the XML escapes, and control characters (not
 * allowed in XML 1.0) as '?'. Deliberately left out: scripting, CSS
 * beyond presentation attributes, fonts other than the viewer's sans-serif.
 */
#include "bench.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define W 1000
#define H 940

/* Plot areas. */
#define LX0 100
#define LX1 960
#define LY0 90
#define LY1 420
#define BY0 565
#define BY1 800
#define B1X0 100
#define B1X1 480
#define B2X0 580
#define B2X1 960

/* Okabe and Ito's colour-blind-safe palette (the yellow darkened). */
static const char *const palette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                      "#CC79A7", "#56B4E9", "#555555", "#B8A200"};
#define N_COLOURS (sizeof palette / sizeof palette[0])

static void put_text(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        switch (ch) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        default:
            fputc(ch < 0x20 || ch == 0x7f ? '?' : (char)ch, f);
        }
    }
}

/* A text element: anchor "start", "middle" or "end"; extra attributes
 * (may be ""). */
static void text_at(FILE *f, double x, double y, const char *anchor, int size, const char *extra,
                    const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\"%s%s>", x, y,
            anchor, size, extra[0] != '\0' ? " " : "", extra);
    put_text(f, s);
    fputs("</text>\n", f);
}

/* A tick step of 1, 2 or 5 times a power of ten giving about 5 ticks up
 * to max (> 0). */
static double nice_step(double max)
{
    double raw = max / 5.0;
    double mag = 1.0;
    while (mag * 10.0 <= raw) {
        mag *= 10.0;
    }
    while (mag > raw && mag > 1e-12) {
        mag /= 10.0;
    }
    double r = raw / mag;
    return mag * (r <= 1.0 ? 1.0 : r <= 2.0 ? 2.0 : r <= 5.0 ? 5.0 : 10.0);
}

/* The axis's top: max rounded up to a whole number of steps. */
static double nice_top(double max, double step)
{
    double top = step;
    while (top < max * 0.999999) {
        top += step;
    }
    return top;
}

/* A number for a tick label: 1.5M, 250k, 42, 0.25. */
static void fmt_si(double v, char *dst, size_t cap)
{
    double a = fabs(v);
    if (a >= 1e9) {
        snprintf(dst, cap, "%.3gG", v / 1e9);
    } else if (a >= 1e6) {
        snprintf(dst, cap, "%.3gM", v / 1e6);
    } else if (a >= 1e3) {
        snprintf(dst, cap, "%.3gk", v / 1e3);
    } else {
        snprintf(dst, cap, "%.3g", v);
    }
}

/* The binary unit of a byte axis up to max: 1, 1024, 1024^2, 1024^3. */
static double byte_unit(double max)
{
    double unit = 1.0;
    while (unit < 1024.0 * 1024.0 * 1024.0 && max >= unit * 1024.0) {
        unit *= 1024.0;
    }
    return unit;
}

static void fmt_bytes(double v, char *dst, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
    double unit = byte_unit(v);
    int k = unit >= 1024.0 * 1024.0 * 1024.0 ? 3 : unit >= 1024.0 * 1024.0 ? 2 : unit >= 1024.0;
    double x = v / unit;
    /* 3 significant digits, never an exponent (1000 KiB, not 1e+03). */
    snprintf(dst, cap, x >= 100.0 || k == 0 ? "%.0f %s" : x >= 10.0 ? "%.1f %s" : "%.2f %s", x, units[k]);
}

static void label_of(const bench_run *r, const bench_result *res, char *dst, size_t cap)
{
    if (r->migrate) {
        snprintf(dst, cap, "%s (era %d)", res->format, res->era);
    } else {
        snprintf(dst, cap, "%s", res->format);
    }
}

/* Horizontal grid lines and the y axis's labels. */
static void y_axis(FILE *f, double x0, double x1, double y0, double y1, double top, double step,
                   int bytes)
{
    for (double v = 0.0; v <= top * 1.000001; v += step) {
        double y = y1 - (v / top) * (y1 - y0);
        char t[32];
        if (bytes) {
            fmt_bytes(v, t, sizeof t);
        } else {
            fmt_si(v, t, sizeof t);
        }
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n",
                x0, y, x1, y);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n",
                x0 - 5, y, x0, y);
        text_at(f, x0 - 8, y + 4, "end", 12, "", t);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#000000\"/>\n",
            (int)x0, y0, (int)x0, y1);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n", x0,
            y1, x1, y1);
}

static void line_chart(FILE *f, const bench_run *r)
{
    double max_x = 0.0, max_y = 0.0;
    for (size_t i = 0; i < r->n_results; i++) {
        const bench_result *res = &r->results[i];
        double off = r->migrate ? (double)(res->era - 1) * (double)r->rows : 0.0;
        for (size_t j = 0; j < res->n_rate; j++) {
            double x = off + (double)res->rate[j].rows;
            double y = res->rate[j].rows_per_s;
            if (x > max_x) {
                max_x = x;
            }
            if (isfinite(y) && y > max_y) {
                max_y = y;
            }
        }
    }
    if (max_x <= 0.0) {
        max_x = 1.0;
    }
    if (max_y <= 0.0) {
        max_y = 1.0;
    }
    double ystep = nice_step(max_y);
    double ytop = nice_top(max_y, ystep);
    double xstep = nice_step(max_x);
    double xtop = nice_top(max_x, xstep);

    text_at(f, (LX0 + LX1) / 2.0, LY0 - 14, "middle", 15, "font-weight=\"bold\"",
            "Insert rate while the table fills");
    y_axis(f, LX0, LX1, LY0, LY1, ytop, ystep, 0);
    for (double v = 0.0; v <= xtop * 1.000001; v += xstep) {
        double x = LX0 + (v / xtop) * (LX1 - LX0);
        char t[32];
        fmt_si(v, t, sizeof t);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000000\"/>\n", x,
                LY1, x, LY1 + 5);
        text_at(f, x, LY1 + 20, "middle", 12, "", t);
    }
    text_at(f, (LX0 + LX1) / 2.0, LY1 + 42, "middle", 13, "", "rows inserted");
    char rot[96];
    snprintf(rot, sizeof rot, "transform=\"rotate(-90 %d %d)\"", 30, (LY0 + LY1) / 2);
    text_at(f, 30, (LY0 + LY1) / 2.0, "middle", 13, rot, "rows per second");

    for (size_t i = 0; i < r->n_results; i++) {
        const bench_result *res = &r->results[i];
        const char *colour = palette[i % N_COLOURS];
        double off = r->migrate ? (double)(res->era - 1) * (double)r->rows : 0.0;
        if (res->n_rate > 0) {
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                    colour);
            for (size_t j = 0; j < res->n_rate; j++) {
                double x = LX0 + ((off + (double)res->rate[j].rows) / xtop) * (LX1 - LX0);
                double v = isfinite(res->rate[j].rows_per_s) ? res->rate[j].rows_per_s : 0.0;
                double y = LY1 - (v / ytop) * (LY1 - LY0);
                fprintf(f, "%s%.1f,%.1f", j > 0 ? " " : "", x, y);
            }
            fputs("\"/>\n", f);
        }
        /* The legend: a row under the x axis's label. */
        double lx = LX0 + (double)(i % 5) * 172.0;
        double ly = LY1 + 68 + (double)(i / 5) * 20.0;
        char name[96];
        label_of(r, res, name, sizeof name);
        fprintf(f,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" fill=\"%s\"/>\n", lx,
                ly - 11, colour);
        text_at(f, lx + 20, ly, "start", 13, "", name);
    }
}

/* One bar chart: value(i) < 0 is shown as n/a. */
static void bar_chart(FILE *f, const bench_run *r, double x0, double x1, const char *title,
                      int density)
{
    double max = 0.0;
    for (size_t i = 0; i < r->n_results; i++) {
        const bench_result *res = &r->results[i];
        double v = density ? res->stats.leaf_density : (double)res->stats.index_bytes;
        if (isfinite(v) && v > max) {
            max = v;
        }
    }
    double step, top;
    if (density) {
        step = 0.2;
        top = 1.0;
    } else {
        if (max <= 0.0) {
            max = 1.0;
        }
        /* Steps of 1, 2 or 5 times a power of ten in KiB, MiB or GiB. */
        double unit = byte_unit(max);
        step = nice_step(max / unit) * unit;
        top = nice_top(max, step);
    }
    text_at(f, (x0 + x1) / 2.0, BY0 - 14, "middle", 15, "font-weight=\"bold\"", title);
    y_axis(f, x0, x1, BY0, BY1, top, step, !density);
    size_t n = r->n_results > 0 ? r->n_results : 1;
    double slot = (x1 - x0) / (double)n;
    double bw = slot * 0.6;
    for (size_t i = 0; i < r->n_results; i++) {
        const bench_result *res = &r->results[i];
        double v = density ? res->stats.leaf_density : (double)res->stats.index_bytes;
        double cx = x0 + slot * ((double)i + 0.5);
        char t[48];
        if (!(v >= 0.0) || !isfinite(v)) {
            text_at(f, cx, BY1 - 6, "middle", 12, "fill=\"#777777\"", "n/a");
        } else {
            double h = (v / top) * (BY1 - BY0);
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
                    cx - bw / 2.0, BY1 - h, bw, h, palette[i % N_COLOURS]);
            if (density) {
                snprintf(t, sizeof t, "%.0f%%", v * 100.0);
            } else {
                fmt_bytes(v, t, sizeof t);
            }
            text_at(f, cx, BY1 - h - 4, "middle", 11, "", t);
        }
        char name[96];
        label_of(r, res, name, sizeof name);
        char rot[96];
        snprintf(rot, sizeof rot, "transform=\"rotate(-35 %.1f %d)\"", cx, BY1 + 16);
        text_at(f, cx, BY1 + 16, "end", 12, rot, name);
    }
}

int bench_svg_write(FILE *f, const bench_run *r)
{
    char title[512];
    char sub[256];
    snprintf(title, sizeof title, "idmint bench btree%s: %s, N = %" PRId64 " rows",
             r->migrate ? " --scenario migrate" : "", r->db_version, r->rows);
    if (r->keys_per_ms > 0) {
        snprintf(sub, sizeof sub, "%s; batches of %" PRId64 "; %" PRIu64 " keys per millisecond",
                 r->url_shown, r->batch, r->keys_per_ms);
    } else {
        snprintf(sub, sizeof sub, "%s; batches of %" PRId64 "; the real clock", r->url_shown,
                 r->batch);
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
          "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
          "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n",
          f);
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n",
            W, H, W, H);
    fputs("<title>", f);
    put_text(f, title);
    fputs("</title>\n", f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H);
    text_at(f, W / 2.0, 28, "middle", 18, "font-weight=\"bold\"", title);
    text_at(f, W / 2.0, 50, "middle", 13, "fill=\"#444444\"", sub);
    line_chart(f, r);
    bar_chart(f, r, B1X0, B1X1, "Primary-key index size", 0);
    bar_chart(f, r, B2X0, B2X1, "Leaf density (fill of leaf pages)", 1);
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

/*
 * kura_heat_png.c - This file contains the PNG form of the heat report (kura_heat.h,
 * kura_heat_png), drawn with cairo (Debian libcairo2-dev; its "toy" text API is enough for
 * labels): a header with the verdicts, then per table and index a panel with its timeline
 * (RCU/s and WCU/s lines, throttled requests as red bars, provisioned lines dashed) and its
 * hot keys and hot items as bars of their share of the per-key limit, with the limit line at
 * 100% and, for PROVISIONED, the provisioned write throughput's line. The layout is computed
 * first (panel heights follow the number of keys), so the image is exactly as tall as needed.
 */
#include <cairo.h>
#include <stdio.h>
#include <string.h>

#include "server/heat_json.h"
#include "tools/kura_heat.h"

#define MARGIN 20.0
#define LINE 16.0
#define TIMELINE_H 170.0
#define ROW_H 20.0
#define KEY_COL 220.0
#define SCALE 1.25 /* the bars' axis ends at 125% of the key limit */

static void text_at(cairo_t *cr, double x, double y, double size, const char *s)
{
    cairo_set_font_size(cr, size);
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, s);
}

/* s (cleaned of control characters) cut to at most `max` bytes at a UTF-8 boundary. */
static void text_clean(cairo_t *cr, double x, double y, double size, const char *s, size_t len,
                       size_t max)
{
    kbuf t = KBUF_INIT;
    if (heatj_clean_text(s, len, &t)) {
        if (t.len > max) {
            size_t n = max - 3;
            while (n > 0 && (t.data[n] & 0xc0) == 0x80)
                n--;
            t.len = n;
            kbuf_append(&t, "...", 3);
        }
        if (kbuf_append(&t, "", 1)) text_at(cr, x, y, size, (const char *)t.data);
    }
    kbuf_free(&t);
}

static void color(cairo_t *cr, unsigned rgb)
{
    cairo_set_source_rgb(cr, (rgb >> 16) / 255.0, ((rgb >> 8) & 255) / 255.0, (rgb & 255) / 255.0);
}

static double bars_height(const jd_t *rows)
{
    size_t n = jd_array_size(rows);
    return n ? LINE + 8 + ROW_H * (double)n + 8 : 0;
}

static double panel_height(const jd_t *t)
{
    return 2 * LINE + 8 + TIMELINE_H + 12 + bars_height(jd_object_get(t, "hot_keys")) +
           bars_height(jd_object_get(t, "hot_items")) + MARGIN;
}

static size_t verdict_count(const jd_t *targets)
{
    size_t n = 0;
    for (size_t i = 0; i < jd_array_size(targets); i++)
        n += jd_array_size(jd_object_get(jd_array_get(targets, i), "verdicts"));
    return n;
}

static double header_height(const jd_t *root)
{
    return MARGIN + 2 * LINE + 8 + LINE * (double)verdict_count(jd_object_get(root, "targets")) + 8;
}

static void draw_header(cairo_t *cr, const jd_t *root)
{
    jd_t *lim = jd_object_get(root, "key_limits"), *targets = jd_object_get(root, "targets");
    char rl[32], wl[32], line[256];
    heatj_thousands(heatj_num(lim, "read"), rl, sizeof rl);
    heatj_thousands(heatj_num(lim, "write"), wl, sizeof wl);
    color(cr, 0x222222);
    text_at(cr, MARGIN, MARGIN + LINE, 18, "kura heat");
    snprintf(line, sizeof line,
             "window %.0f s, throttling %s; per partition-key value at most %s RCU and %s WCU a "
             "second",
             heatj_num(root, "window_seconds"),
             jd_is_true(jd_object_get(root, "throttling")) ? "on" : "off", rl, wl);
    text_at(cr, MARGIN + 110, MARGIN + LINE, 12, line);
    double y = MARGIN + 2 * LINE + 8;
    color(cr, 0xb71c1c);
    for (size_t i = 0; i < jd_array_size(targets); i++) {
        jd_t *v = jd_object_get(jd_array_get(targets, i), "verdicts");
        for (size_t j = 0; j < jd_array_size(v); j++, y += LINE) {
            jd_t *s = jd_array_get(v, j);
            if (jd_is_string(s))
                text_clean(cr, MARGIN, y, 12, jd_string_value(s), jd_string_length(s), 150);
        }
    }
}

/* The largest read or write value of the timeline (and the provisioned lines), at least 1. */
static double timeline_max(const jd_t *t, double *thr_max_out)
{
    jd_t *pts = jd_object_get(t, "timeline"), *prov = jd_object_get(t, "provisioned");
    double max = 1, tmax = 1;
    for (size_t i = 0; i < jd_array_size(pts); i++) {
        jd_t *p = jd_array_get(pts, i);
        double r = heatj_num(p, "read"), w = heatj_num(p, "write");
        double th = heatj_num(p, "throttled_reads") + heatj_num(p, "throttled_writes");
        max = r > max ? r : max;
        max = w > max ? w : max;
        tmax = th > tmax ? th : tmax;
    }
    if (jd_is_object(prov)) {
        double r = heatj_num(prov, "read"), w = heatj_num(prov, "write");
        max = r > max ? r : max;
        max = w > max ? w : max;
    }
    *thr_max_out = tmax;
    return max * 1.1;
}

static void draw_series(cairo_t *cr, const jd_t *pts, const char *member, unsigned rgb, double x0,
                        double y0, double pw, double h, double max)
{
    color(cr, rgb);
    cairo_set_line_width(cr, 1.5);
    for (size_t i = 0; i < jd_array_size(pts); i++) {
        double x = x0 + ((double)i + 0.5) * pw;
        double y = y0 + h * (1 - heatj_num(jd_array_get(pts, i), member) / max);
        if (i == 0)
            cairo_move_to(cr, x, y);
        else
            cairo_line_to(cr, x, y);
    }
    cairo_stroke(cr);
}

static void draw_timeline(cairo_t *cr, const jd_t *t, double x0, double y0, double w, double h)
{
    jd_t *pts = jd_object_get(t, "timeline"), *prov = jd_object_get(t, "provisioned");
    double tmax, max = timeline_max(t, &tmax);
    size_t n = jd_array_size(pts);
    double pw = w / (double)(n > 2 ? n : 2);
    char lab[64];
    color(cr, 0xffffff);
    cairo_rectangle(cr, x0, y0, w, h);
    cairo_fill_preserve(cr);
    color(cr, 0xcccccc);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    for (size_t i = 0; i < n; i++) {
        jd_t *p = jd_array_get(pts, i);
        double th = heatj_num(p, "throttled_reads") + heatj_num(p, "throttled_writes");
        if (th <= 0) continue;
        double bh = h * 0.35 * th / tmax;
        color(cr, 0xef9a9a);
        cairo_rectangle(cr, x0 + (double)i * pw, y0 + h - bh, pw > 2 ? pw - 1 : pw, bh);
        cairo_fill(cr);
    }
    if (jd_is_object(prov)) {
        double dash[] = {4, 3};
        cairo_set_dash(cr, dash, 2, 0);
        for (int k = 0; k < 2; k++) {
            double v = heatj_num(prov, k ? "write" : "read");
            color(cr, k ? 0xe65100 : 0x1565c0);
            cairo_move_to(cr, x0, y0 + h * (1 - v / max));
            cairo_line_to(cr, x0 + w, y0 + h * (1 - v / max));
            cairo_stroke(cr);
        }
        cairo_set_dash(cr, NULL, 0, 0);
    }
    draw_series(cr, pts, "read", 0x1565c0, x0, y0, pw, h, max);
    draw_series(cr, pts, "write", 0xe65100, x0, y0, pw, h, max);
    color(cr, 0x333333);
    heatj_thousands(max / 1.1, lab, sizeof lab);
    text_at(cr, x0 - 48, y0 + h * (1 - 1 / 1.1) + 4, 10, lab);
    text_at(cr, x0 - 48, y0 + h + 4, 10, "0");
    snprintf(lab, sizeof lab, "%zu s, oldest first", n);
    text_at(cr, x0, y0 + h + 12, 10, lab);
    color(cr, 0x1565c0);
    text_at(cr, x0 + 140, y0 + h + 12, 10, "- RCU/s");
    color(cr, 0xe65100);
    text_at(cr, x0 + 200, y0 + h + 12, 10, "- WCU/s");
    color(cr, 0xc62828);
    heatj_thousands(tmax, lab, sizeof lab);
    text_at(cr, x0 + 260, y0 + h + 12, 10, "# throttled requests (max ");
    cairo_show_text(cr, lab);
    cairo_show_text(cr, "/s)");
}

/* One row: key, bar of the larger share, its label. */
static void draw_bar_row(cairo_t *cr, const jd_t *r, double x0, double y, double bw)
{
    double rs = heatj_num(r, "read_share"), ws = heatj_num(r, "write_share");
    double share = ws >= rs ? ws : rs, shown = share > SCALE ? SCALE : share < 0 ? 0 : share;
    kbuf key = KBUF_INIT;
    char lab[96], thr[32];
    color(cr, 0x222222);
    if (heatj_key_text(jd_object_get(r, "key"), &key))
        text_clean(cr, x0, y + 14, 11, (const char *)key.data, key.len, 34);
    kbuf_free(&key);
    color(cr, share >= 0.8 ? 0xc62828 : 0x1565c0);
    cairo_rectangle(cr, x0 + KEY_COL, y + 3, bw * shown / SCALE + 1, ROW_H - 6);
    cairo_fill(cr);
    heatj_thousands(heatj_num(r, "throttled"), thr, sizeof thr);
    snprintf(lab, sizeof lab, "%.0f%% %c%s%s%s", share * 100, ws >= rs ? 'W' : 'R',
             heatj_num(r, "throttled") > 0 ? ", " : "", heatj_num(r, "throttled") > 0 ? thr : "",
             heatj_num(r, "throttled") > 0 ? " throttled" : "");
    color(cr, 0x333333);
    text_at(cr, x0 + KEY_COL + bw * shown / SCALE + 5, y + 14, 10, lab);
}

/* Bars of `rows` under `title`, with the key-limit line (and the provisioned one). */
static void draw_bars(cairo_t *cr, const jd_t *rows, const char *title, const jd_t *t,
                      const jd_t *lim, double x0, double y0, double w)
{
    size_t n = jd_array_size(rows);
    if (!n) return;
    double bw = w - KEY_COL - 120, top = y0 + LINE + 4, bottom = top + ROW_H * (double)n;
    char lab[128], rl[32], wl[32];
    color(cr, 0x222222);
    text_at(cr, x0, y0 + LINE - 2, 12, title);
    for (size_t i = 0; i < n; i++)
        draw_bar_row(cr, jd_array_get(rows, i), x0, top + ROW_H * (double)i, bw);
    double lx = x0 + KEY_COL + bw / SCALE;
    color(cr, 0x000000);
    cairo_set_line_width(cr, 1.5);
    cairo_move_to(cr, lx, top - 2);
    cairo_line_to(cr, lx, bottom + 2);
    cairo_stroke(cr);
    heatj_thousands(heatj_num(lim, "read"), rl, sizeof rl);
    heatj_thousands(heatj_num(lim, "write"), wl, sizeof wl);
    snprintf(lab, sizeof lab, "key limit %s WCU / %s RCU", wl, rl);
    text_at(cr, lx + 3, y0 + LINE - 2, 10, lab);
    jd_t *prov = jd_object_get(t, "provisioned");
    double p = heatj_num(lim, "write") > 0 ? heatj_num(prov, "write") / heatj_num(lim, "write") : 0;
    if (jd_is_object(prov) && p > 0 && p <= SCALE) {
        double px = x0 + KEY_COL + bw * p / SCALE, dash[] = {4, 3};
        color(cr, 0x6a1b9a);
        cairo_set_dash(cr, dash, 2, 0);
        cairo_move_to(cr, px, top - 2);
        cairo_line_to(cr, px, bottom + 2);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        text_at(cr, px + 3, bottom + 12, 10, "provisioned");
    }
}

static void draw_panel(cairo_t *cr, const jd_t *t, const jd_t *lim, double y)
{
    const char *index = heatj_str(t, "index", NULL), *kind = heatj_str(t, "kind", "table");
    const char *table = heatj_str(t, "table", "?");
    jd_t *rate = jd_object_get(t, "rate"), *thr = jd_object_get(t, "throttled");
    char title[400], line[256], reads[32], writes[32];
    heatj_thousands(heatj_num(thr, "reads"), reads, sizeof reads);
    heatj_thousands(heatj_num(thr, "writes"), writes, sizeof writes);
    snprintf(title, sizeof title, "%s%s%s (%s, %s)", table,
             index ? (strcmp(kind, "lsi") == 0 ? " / LSI " : " / GSI ") : "", index ? index : "",
             kind, heatj_str(t, "billing_mode", "?"));
    color(cr, 0x111111);
    text_clean(cr, MARGIN, y + LINE, 14, title, strlen(title), 120);
    snprintf(line, sizeof line,
             "rate %.1f RCU/s, %.1f WCU/s; throttled %s reads, %s writes in the window",
             heatj_num(rate, "read"), heatj_num(rate, "write"), reads, writes);
    color(cr, 0x444444);
    text_at(cr, MARGIN, y + 2 * LINE + 2, 11, line);
    double x0 = MARGIN + 50, w = KURA_HEAT_PNG_WIDTH - x0 - MARGIN;
    y += 2 * LINE + 8;
    draw_timeline(cr, t, x0, y, w, TIMELINE_H - 14);
    y += TIMELINE_H + 12;
    jd_t *keys = jd_object_get(t, "hot_keys");
    draw_bars(cr, keys, "hot partition keys", t, lim, MARGIN, y, KURA_HEAT_PNG_WIDTH - 2 * MARGIN);
    y += bars_height(keys);
    draw_bars(cr, jd_object_get(t, "hot_items"), "hot items", t, lim, MARGIN, y,
              KURA_HEAT_PNG_WIDTH - 2 * MARGIN);
}

/* Draws the report into an image surface and writes it to `path`. */
static kura_status draw(const jd_t *root, const char *path, int *w_out, int *h_out, char *err,
                        size_t err_cap)
{
    jd_t *targets = jd_object_get(root, "targets"), *lim = jd_object_get(root, "key_limits");
    double h = header_height(root);
    for (size_t i = 0; i < jd_array_size(targets); i++)
        h += panel_height(jd_array_get(targets, i));
    int height = (int)(h + 0.5);
    cairo_surface_t *sf =
        cairo_image_surface_create(CAIRO_FORMAT_RGB24, KURA_HEAT_PNG_WIDTH, height);
    cairo_t *cr = cairo_create(sf);
    color(cr, 0xfafafa);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    draw_header(cr, root);
    double y = header_height(root);
    for (size_t i = 0; i < jd_array_size(targets); i++) {
        draw_panel(cr, jd_array_get(targets, i), lim, y);
        y += panel_height(jd_array_get(targets, i));
    }
    cairo_status_t cs = cairo_status(cr);
    if (cs == CAIRO_STATUS_SUCCESS) cs = cairo_surface_write_to_png(sf, path);
    cairo_destroy(cr);
    cairo_surface_destroy(sf);
    if (cs != CAIRO_STATUS_SUCCESS) {
        snprintf(err, err_cap, "cannot write the PNG %s: %s", path, cairo_status_to_string(cs));
        return cs == CAIRO_STATUS_NO_MEMORY ? KURA_E_NOMEM : KURA_E_IO;
    }
    *w_out = KURA_HEAT_PNG_WIDTH;
    *h_out = height;
    return KURA_OK;
}

kura_status kura_heat_png(const char *json, size_t len, const char *path, int *width_out,
                          int *height_out, char *err, size_t err_cap)
{
    jd_doc *doc = jd_doc_new();
    if (!doc) return KURA_E_NOMEM;
    jd_t *root = heatj_parse(doc, json, len, err, err_cap);
    kura_status s = root ? draw(root, path, width_out, height_out, err, err_cap) : KURA_E_INVALID;
    jd_doc_free(doc);
    return s;
}

/*
 * heat_page.c - This file contains the server-side rendering of the heat page (heat_page.h):
 * the report of the request's time as HTML (the verdicts first, then per table and index its
 * rates and its key tables), inside the page with its style and live script. What a reader
 * without JavaScript sees is this; the script replaces the element #report with live charts.
 */
#include "server/heat_page.h"

#include <stdio.h>
#include <string.h>

#include "server/heat_json.h"

static bool put(kbuf *b, const char *s)
{
    return kbuf_append(b, s, strlen(s));
}

bool heat_html_escape(kbuf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *e = c == '&'    ? "&amp;"
                        : c == '<'  ? "&lt;"
                        : c == '>'  ? "&gt;"
                        : c == '"'  ? "&quot;"
                        : c == '\'' ? "&#39;"
                                    : NULL;
        char ctl[5] = {'\\', 'x', hex[c >> 4], hex[c & 15], 0};
        if (!e && (c < 0x20 || c == 0x7f)) e = ctl;
        if (!(e ? put(b, e) : kbuf_append(b, &s[i], 1))) return false;
    }
    return true;
}

static bool put_esc(kbuf *b, const char *s)
{
    return heat_html_escape(b, s, strlen(s));
}

/* A key (DynamoDB JSON) as escaped text. */
static bool put_key(kbuf *b, const jd_t *key)
{
    kbuf t = KBUF_INIT;
    bool ok = heatj_key_text(key, &t) && heat_html_escape(b, (const char *)t.data, t.len);
    kbuf_free(&t);
    return ok;
}

static bool put_fmt(kbuf *b, const char *fmt, double v)
{
    char num[64];
    snprintf(num, sizeof num, fmt, v);
    return put(b, num);
}

/* A share (0.96) as "96%" with a bar; an absent (null) share as "-". */
static bool put_share(kbuf *b, const jd_t *row, const char *name)
{
    jd_t *v = jd_object_get(row, name);
    if (!jd_is_number(v)) return put(b, "<td class=num>-</td>");
    double pct = jd_number_value(v) * 100.0;
    double w = pct < 0 ? 0 : pct > 100 ? 100 : pct;
    char cell[200];
    snprintf(cell, sizeof cell,
             "<td class=num><span class=\"bar%s\"><span style=\"width:%.1f%%\"></span></span>"
             " %.0f%%</td>",
             pct >= 80 ? " hot" : "", w, pct);
    return put(b, cell);
}

/* hot_keys or hot_items: key, units/s, shares of the limits, throttled. */
static bool put_key_table(kbuf *b, const jd_t *rows, const char *title, const char *cls)
{
    if (jd_array_size(rows) == 0) return true;
    bool ok = put(b, "<h3>") && put(b, title) && put(b, "</h3><table class=\"") && put(b, cls) &&
              put(b, "\"><tr><th>key</th><th>RCU/s</th><th>WCU/s</th><th>of read limit</th>"
                     "<th>of write limit</th><th>of provisioned</th><th>throttled</th></tr>");
    for (size_t i = 0; ok && i < jd_array_size(rows); i++) {
        jd_t *r = jd_array_get(rows, i);
        char thr[32];
        heatj_thousands(heatj_num(r, "throttled"), thr, sizeof thr);
        ok = put(b, "<tr><td class=key>") && put_key(b, jd_object_get(r, "key")) &&
             put(b, "</td><td class=num>") && put_fmt(b, "%.1f", heatj_num(r, "read")) &&
             put(b, "</td><td class=num>") && put_fmt(b, "%.1f", heatj_num(r, "write")) &&
             put(b, "</td>") && put_share(b, r, "read_share") && put_share(b, r, "write_share") &&
             put_share(b, r, "provisioned_share") && put(b, "<td class=num>") && put(b, thr) &&
             put(b, "</td></tr>");
    }
    return ok && put(b, "</table>");
}

/* throttled_keys or collections: key and one count. */
static bool put_count_table(kbuf *b, const jd_t *rows, const char *title, const char *member,
                            const char *unit)
{
    if (jd_array_size(rows) == 0) return true;
    bool ok = put(b, "<h3>") && put(b, title) && put(b, "</h3><table class=counts><tr><th>key"
                                                        "</th><th>") &&
              put(b, unit) && put(b, "</th></tr>");
    for (size_t i = 0; ok && i < jd_array_size(rows); i++) {
        jd_t *r = jd_array_get(rows, i);
        char n[32];
        heatj_thousands(heatj_num(r, member), n, sizeof n);
        ok = put(b, "<tr><td class=key>") && put_key(b, jd_object_get(r, "key")) &&
             put(b, "</td><td class=num>") && put(b, n) && put(b, "</td></tr>");
    }
    return ok && put(b, "</table>");
}

/* "Orders", "Orders / GSI StatusIndex". */
static bool put_target_name(kbuf *b, const jd_t *t)
{
    const char *index = heatj_str(t, "index", NULL);
    const char *kind = heatj_str(t, "kind", "table");
    bool ok = put_esc(b, heatj_str(t, "table", "?"));
    if (ok && index)
        ok = put(b, " / ") && put(b, strcmp(kind, "lsi") == 0 ? "LSI " : "GSI ") &&
             put_esc(b, index);
    return ok;
}

static bool put_rates(kbuf *b, const jd_t *t)
{
    jd_t *rate = jd_object_get(t, "rate"), *peak = jd_object_get(t, "peak");
    jd_t *thr = jd_object_get(t, "throttled"), *prov = jd_object_get(t, "provisioned");
    char reads[32], writes[32];
    heatj_thousands(heatj_num(thr, "reads"), reads, sizeof reads);
    heatj_thousands(heatj_num(thr, "writes"), writes, sizeof writes);
    bool ok = put(b, "<table class=rates><tr><th></th><th>RCU/s</th><th>WCU/s</th></tr>"
                     "<tr><th>rate</th><td class=num>") &&
              put_fmt(b, "%.1f", heatj_num(rate, "read")) && put(b, "</td><td class=num>") &&
              put_fmt(b, "%.1f", heatj_num(rate, "write")) &&
              put(b, "</td></tr><tr><th>peak second</th><td class=num>") &&
              put_fmt(b, "%.1f", heatj_num(peak, "read")) && put(b, "</td><td class=num>") &&
              put_fmt(b, "%.1f", heatj_num(peak, "write")) && put(b, "</td></tr>");
    if (ok && jd_is_object(prov))
        ok = put(b, "<tr><th>provisioned</th><td class=num>") &&
             put_fmt(b, "%.0f", heatj_num(prov, "read")) && put(b, "</td><td class=num>") &&
             put_fmt(b, "%.0f", heatj_num(prov, "write")) && put(b, "</td></tr>");
    return ok && put(b, "<tr><th>throttled requests</th><td class=num>") && put(b, reads) &&
           put(b, "</td><td class=num>") && put(b, writes) && put(b, "</td></tr></table>");
}

static bool put_target(kbuf *b, const jd_t *t)
{
    bool ok = put(b, "<section class=target><h2>") && put_target_name(b, t) &&
              put(b, " <small>") && put_esc(b, heatj_str(t, "kind", "table")) && put(b, ", ") &&
              put_esc(b, heatj_str(t, "billing_mode", "?")) && put(b, "</small></h2>") &&
              put_rates(b, t);
    jd_t *verdicts = jd_object_get(t, "verdicts");
    if (ok && jd_array_size(verdicts) == 0 && jd_array_size(jd_object_get(t, "hot_keys")) == 0)
        ok = put(b, "<p class=quiet>No traffic in the window.</p>");
    return ok &&
           put_key_table(b, jd_object_get(t, "hot_keys"), "Hot partition keys", "hotkeys") &&
           put_key_table(b, jd_object_get(t, "hot_items"), "Hot items (partition + sort key)",
                         "hotitems") &&
           put_count_table(b, jd_object_get(t, "throttled_keys"), "Throttled keys", "throttled",
                           "throttled requests") &&
           put_count_table(b, jd_object_get(t, "collections"), "Largest item collections",
                           "size_bytes", "bytes") &&
           put(b, "</section>");
}

/* Every target's verdicts, one list at the top. */
static bool put_verdicts(kbuf *b, const jd_t *targets)
{
    bool ok = put(b, "<ul id=verdicts>"), any = false;
    for (size_t i = 0; ok && i < jd_array_size(targets); i++) {
        jd_t *v = jd_object_get(jd_array_get(targets, i), "verdicts");
        for (size_t j = 0; ok && j < jd_array_size(v); j++) {
            jd_t *s = jd_array_get(v, j);
            if (!jd_is_string(s)) continue;
            ok = put(b, "<li class=verdict>") &&
                 heat_html_escape(b, jd_string_value(s), jd_string_length(s)) && put(b, "</li>");
            any = true;
        }
    }
    if (ok && !any) ok = put(b, "<li class=calm>No key near a limit and nothing throttled.</li>");
    return ok && put(b, "</ul>");
}

static bool put_header(kbuf *b, const jd_t *root)
{
    jd_t *lim = jd_object_get(root, "key_limits");
    char rl[32], wl[32], line[256];
    heatj_thousands(heatj_num(lim, "read"), rl, sizeof rl);
    heatj_thousands(heatj_num(lim, "write"), wl, sizeof wl);
    snprintf(line, sizeof line,
             "<p id=meta>Window %.0f s; throttling %s; per partition-key value at most %s RCU "
             "and %s WCU a second. <span id=status>Rendered by the server.</span></p>",
             heatj_num(root, "window_seconds"),
             jd_is_true(jd_object_get(root, "throttling")) ? "on" : "off", rl, wl);
    return put(b, line);
}

kura_status heat_page_render(const char *heat_json, size_t len, kbuf *html_out, char *err,
                             size_t err_cap)
{
    jd_doc *doc = jd_doc_new();
    if (!doc) return KURA_E_NOMEM;
    jd_t *root = heatj_parse(doc, heat_json, len, err, err_cap);
    if (!root) {
        jd_doc_free(doc);
        return KURA_E_INVALID;
    }
    jd_t *targets = jd_object_get(root, "targets");
    bool ok = put(html_out, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
                            "<title>kura heat</title>") &&
              put(html_out, heat_page_style) &&
              put(html_out, "</head><body><h1>kura heat</h1>") && put_header(html_out, root) &&
              put(html_out, "<div id=report>") && put_verdicts(html_out, targets);
    if (ok && jd_array_size(targets) == 0) ok = put(html_out, "<p class=quiet>No tables.</p>");
    for (size_t i = 0; ok && i < jd_array_size(targets); i++)
        ok = put_target(html_out, jd_array_get(targets, i));
    ok = ok && put(html_out, "</div>") && put(html_out, heat_page_script) &&
         put(html_out, "</body></html>\n");
    jd_doc_free(doc);
    return ok ? KURA_OK : KURA_E_NOMEM;
}

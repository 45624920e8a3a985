/*
 * kura_heat_text.c - This file contains the text form of the heat report (kura_heat.h,
 * kura_heat_text): what `kura heat` prints. Example:
 *
 *   kura heat: window 60 s, throttling on; per partition-key value at most 3,000 RCU and
 *   1,000 WCU a second
 *
 *   Orders / GSI StatusIndex (gsi, PAY_PER_REQUEST)
 *     rate 0.0 RCU/s 930.0 WCU/s; peak second 0.0 / 1000.0; throttled 0 reads, 1,204 writes
 *     ! GSI StatusIndex: key ACTIVE takes 96% of its partition's write limit; ...
 *     hot partition keys        RCU/s    WCU/s  throttled  share of the key limit
 *     ACTIVE                      0.0    960.0      1,204  ######...##  | W 96%
 *
 * Offline (`kura heat DIR`) a target shows only its name, its provisioned throughput and its
 * largest collections: the rates of a process that serves no traffic say nothing.
 *
 * The bar is the larger of the read and write shares (W or R says which), KURA_HEAT_BAR_WIDTH
 * '#' at the limit; past it, the bar stops at the '|' and ends in '>'.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "server/heat_json.h"
#include "tools/kura_heat.h"

static bool put(kbuf *b, const char *s)
{
    return kbuf_append(b, s, strlen(s));
}

/* Appends a printf'ed line part (at most 512 bytes). */
static bool putf(kbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool putf(kbuf *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    return put(b, line);
}

/* A key's text padded (or cut with "...") to `width` bytes. */
static bool put_key_col(kbuf *b, const jd_t *key, size_t width)
{
    kbuf t = KBUF_INIT;
    bool ok = heatj_key_text(key, &t);
    if (ok && t.len > width) {
        t.len = width - 3;
        ok = put(&t, "...");
    }
    while (ok && t.len < width)
        ok = kbuf_append(&t, " ", 1);
    ok = ok && kbuf_append(b, t.data, t.len);
    kbuf_free(&t);
    return ok;
}

static bool put_bar(kbuf *b, const jd_t *row)
{
    double r = heatj_num(row, "read_share"), w = heatj_num(row, "write_share");
    double share = w >= r ? w : r;
    int n = (int)(share * KURA_HEAT_BAR_WIDTH + 0.5);
    bool over = n > KURA_HEAT_BAR_WIDTH;
    if (n > KURA_HEAT_BAR_WIDTH) n = KURA_HEAT_BAR_WIDTH;
    if (n < 0) n = 0;
    char bar[KURA_HEAT_BAR_WIDTH + 2];
    memset(bar, '#', (size_t)n);
    memset(bar + n, ' ', (size_t)(KURA_HEAT_BAR_WIDTH - n));
    bar[KURA_HEAT_BAR_WIDTH] = '\0';
    bool ok = putf(b, "%s%s %c %.0f%%", bar, over ? ">" : "|", w >= r ? 'W' : 'R', share * 100);
    jd_t *p = jd_object_get(row, "provisioned_share");
    if (ok && jd_is_number(p)) ok = putf(b, ", %.0f%% of provisioned", jd_number_value(p) * 100);
    return ok;
}

static bool put_keys(kbuf *b, const jd_t *rows, const char *title)
{
    if (jd_array_size(rows) == 0) return true;
    bool ok = putf(b, "  %-28s %9s %9s %10s  share of the key limit\n", title, "RCU/s", "WCU/s",
                   "throttled");
    for (size_t i = 0; ok && i < jd_array_size(rows); i++) {
        jd_t *r = jd_array_get(rows, i);
        char thr[32];
        heatj_thousands(heatj_num(r, "throttled"), thr, sizeof thr);
        ok = put(b, "  ") && put_key_col(b, jd_object_get(r, "key"), 28) &&
             putf(b, " %9.1f %9.1f %10s  ", heatj_num(r, "read"), heatj_num(r, "write"), thr) &&
             put_bar(b, r) && put(b, "\n");
    }
    return ok;
}

/* throttled_keys and collections: "  title: key (n), key (n)". */
static bool put_counts(kbuf *b, const jd_t *rows, const char *title, const char *member)
{
    if (jd_array_size(rows) == 0) return true;
    bool ok = putf(b, "  %s: ", title);
    for (size_t i = 0; ok && i < jd_array_size(rows); i++) {
        jd_t *r = jd_array_get(rows, i);
        char n[32];
        heatj_thousands(heatj_num(r, member), n, sizeof n);
        ok = (i == 0 || put(b, ", ")) && heatj_key_text(jd_object_get(r, "key"), b) &&
             putf(b, " (%s)", n);
    }
    return ok && put(b, "\n");
}

/* Offline (a database directory): the target's name and what a process serving no traffic
 * knows, its provisioned throughput and its largest collections. */
static bool put_target_offline(kbuf *b, const jd_t *t, bool ok)
{
    jd_t *prov = jd_object_get(t, "provisioned");
    if (ok && jd_is_object(prov))
        ok = putf(b, "  provisioned %.0f RCU, %.0f WCU\n", heatj_num(prov, "read"),
                  heatj_num(prov, "write"));
    return ok && put_counts(b, jd_object_get(t, "collections"), "largest collections (bytes)",
                            "size_bytes");
}

static bool put_target(kbuf *b, const jd_t *t, bool offline)
{
    const char *index = heatj_str(t, "index", NULL), *kind = heatj_str(t, "kind", "table");
    const char *table = heatj_str(t, "table", "?");
    jd_t *rate = jd_object_get(t, "rate"), *peak = jd_object_get(t, "peak");
    jd_t *thr = jd_object_get(t, "throttled"), *prov = jd_object_get(t, "provisioned");
    char reads[32], writes[32];
    heatj_thousands(heatj_num(thr, "reads"), reads, sizeof reads);
    heatj_thousands(heatj_num(thr, "writes"), writes, sizeof writes);
    bool ok = put(b, "\n") && heatj_clean_text(table, strlen(table), b);
    if (ok && index)
        ok = put(b, strcmp(kind, "lsi") == 0 ? " / LSI " : " / GSI ") &&
             heatj_clean_text(index, strlen(index), b);
    ok = ok && putf(b, " (%s, %s)\n", kind, heatj_str(t, "billing_mode", "?"));
    if (offline) return put_target_offline(b, t, ok);
    ok = ok && putf(b, "  rate %.1f RCU/s %.1f WCU/s; peak second %.1f / %.1f; throttled %s reads, %s "
                 "writes",
              heatj_num(rate, "read"), heatj_num(rate, "write"), heatj_num(peak, "read"),
              heatj_num(peak, "write"), reads, writes);
    if (ok && jd_is_object(prov))
        ok = putf(b, "; provisioned %.0f RCU, %.0f WCU", heatj_num(prov, "read"),
                  heatj_num(prov, "write"));
    ok = ok && put(b, "\n");
    jd_t *v = jd_object_get(t, "verdicts");
    for (size_t i = 0; ok && i < jd_array_size(v); i++) {
        jd_t *s = jd_array_get(v, i);
        if (jd_is_string(s))
            ok = put(b, "  ! ") && heatj_clean_text(jd_string_value(s), jd_string_length(s), b) &&
                 put(b, "\n");
    }
    return ok && put_keys(b, jd_object_get(t, "hot_keys"), "hot partition keys") &&
           put_keys(b, jd_object_get(t, "hot_items"), "hot items") &&
           put_counts(b, jd_object_get(t, "throttled_keys"), "throttled keys", "throttled") &&
           put_counts(b, jd_object_get(t, "collections"), "largest collections (bytes)",
                      "size_bytes");
}

/* The header: the window, throttling, the key limits, and a line when nothing is hot. */
static bool put_head(kbuf *b, const jd_t *root, bool offline)
{
    jd_t *lim = jd_object_get(root, "key_limits"), *targets = jd_object_get(root, "targets");
    char rl[32], wl[32];
    heatj_thousands(heatj_num(lim, "read"), rl, sizeof rl);
    heatj_thousands(heatj_num(lim, "write"), wl, sizeof wl);
    bool ok = putf(b, "kura heat: window %.0f s, throttling %s; per partition-key value at most "
                      "%s RCU and %s WCU a second\n",
                   heatj_num(root, "window_seconds"),
                   jd_is_true(jd_object_get(root, "throttling")) ? "on" : "off", rl, wl);
    if (ok && offline)
        ok = put(b, "no live traffic: the rates come from a running kura-server (--server)\n");
    bool any = false;
    for (size_t i = 0; i < jd_array_size(targets); i++)
        any = any || jd_array_size(jd_object_get(jd_array_get(targets, i), "verdicts")) > 0;
    if (ok && !any && !offline && jd_array_size(targets) > 0)
        ok = put(b, "no key near a limit and nothing throttled\n");
    if (ok && jd_array_size(targets) == 0) ok = put(b, "no tables\n");
    return ok;
}

kura_status kura_heat_text(const char *json, size_t len, bool offline, kbuf *out, char *err,
                           size_t err_cap)
{
    jd_doc *doc = jd_doc_new();
    if (!doc) return KURA_E_NOMEM;
    jd_t *root = heatj_parse(doc, json, len, err, err_cap);
    if (!root) {
        jd_doc_free(doc);
        return KURA_E_INVALID;
    }
    jd_t *targets = jd_object_get(root, "targets");
    bool ok = put_head(out, root, offline);
    for (size_t i = 0; ok && i < jd_array_size(targets); i++)
        ok = put_target(out, jd_array_get(targets, i), offline);
    jd_doc_free(doc);
    return ok ? KURA_OK : KURA_E_NOMEM;
}

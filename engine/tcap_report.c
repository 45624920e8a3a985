/*
 * tcap_report.c - This file contains kura_heat_report: the read-out of the capacity
 * accounting as JSON (docs/server.md, "GET /kura/heat"), per table and index: rates against
 * the per-key limits and the provisioned throughput, a per-second timeline, the hottest
 * partition keys and items, the throttled keys, and verdicts in words.
 *
 * The tables are pinned and their definitions copied under db->tables_mu; everything else is
 * read from the accumulators without it, so a report never holds up a request for longer than
 * the copy. Keys are the accumulators' bytes (encodings without the hash prefix) decoded by
 * the target's key types; a key cut at TCAP_KEY_MAX bytes shows what decodes and "cut": true.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <yajl/yajl_gen.h>

#include "engine/collection.h"
#include "engine/db_int.h"
#include "engine/model/number.h"
#include "engine/table.h"
#include "engine/table_insights.h"
#include "engine/tcap_int.h"
#include "util/status.h"

enum { TOP_N = 10 };

/* A target as the report shows it, copied under tables_mu. */
typedef struct rep_target {
    uint32_t id; /* 0: the table */
    char name[TCAP_NAME_MAX];
    const char *kind; /* "table", "gsi", "lsi" */
    bool provisioned;
    int64_t rcu, wcu;
    uint32_t npk, nkey; /* the partition key's attributes, all key attributes */
    char attr[2 * IDX_MAX_KEY_ATTRS][TCAP_NAME_MAX];
    kura_type type[2 * IDX_MAX_KEY_ATTRS];
    bool insights, insights_throttled; /* Contributor Insights ENABLED, THROTTLED_KEYS mode */
} rep_target;

typedef struct rep_table {
    kura_table *t;
    char name[TCAP_NAME_MAX];
    uint32_t n;
    rep_target tg[TCAP_TARGETS];
} rep_table;

#define G_STR(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

static void copy_index(rep_table *r, const kura_table *t, const idx_def *d, int pos)
{
    if (r->n >= TCAP_TARGETS || d->status == IDX_DELETING || d->status == IDX_DELETED) return;
    rep_target *o = &r->tg[r->n++];
    o->insights = table_insights_enabled(t, pos, &o->insights_throttled);
    o->id = d->id;
    snprintf(o->name, sizeof o->name, "%s", d->name);
    o->kind = d->kind == IDX_GLOBAL ? "gsi" : "lsi";
    o->provisioned = t->billing == KURA_BILLING_PROVISIONED;
    o->rcu = d->kind == IDX_GLOBAL ? (int64_t)d->rcu : (int64_t)t->rcu;
    o->wcu = d->kind == IDX_GLOBAL ? (int64_t)d->wcu : (int64_t)t->wcu;
    o->npk = d->nhash;
    for (uint32_t i = 0; i < d->nhash; i++) {
        snprintf(o->attr[o->nkey], TCAP_NAME_MAX, "%s", d->hash[i].name);
        o->type[o->nkey++] = d->hash[i].type;
    }
    for (uint32_t i = 0; i < d->nrange; i++) {
        snprintf(o->attr[o->nkey], TCAP_NAME_MAX, "%s", d->range[i].name);
        o->type[o->nkey++] = d->range[i].type;
    }
}

static void copy_table(rep_table *r, kura_table *t)
{
    memset(r, 0, sizeof *r);
    r->t = t;
    snprintf(r->name, sizeof r->name, "%s", t->name);
    rep_target *o = &r->tg[r->n++];
    o->kind = "table";
    o->provisioned = t->billing == KURA_BILLING_PROVISIONED;
    o->rcu = (int64_t)t->rcu;
    o->wcu = (int64_t)t->wcu;
    o->npk = 1;
    snprintf(o->attr[o->nkey], TCAP_NAME_MAX, "%s", t->ks.pk_name);
    o->type[o->nkey++] = t->ks.pk_type;
    if (t->ks.sk_name) {
        snprintf(o->attr[o->nkey], TCAP_NAME_MAX, "%s", t->ks.sk_name);
        o->type[o->nkey++] = t->ks.sk_type;
    }
    o->insights = table_insights_enabled(t, -1, &o->insights_throttled);
    for (uint32_t i = 0; i < t->nlsi; i++)
        copy_index(r, t, &t->lsi[i], (int)i);
    for (uint32_t i = 0; i < t->ngsi; i++)
        copy_index(r, t, &t->gsi[i], (int)(t->nlsi + i));
}

/* ---- Keys ----------------------------------------------------------------------------------- */

/* One decoded key value as DynamoDB JSON ({"S": ...}, {"N": ...}, {"B": base64}). */
static void gen_value(yajl_gen g, const kura_value *v)
{
    yajl_gen_map_open(g);
    if (v->type == KURA_N) {
        char buf[NUM_FORMAT_MAX];
        num_format(&v->u.num, buf, sizeof buf);
        G_STR(g, "N");
        G_STR(g, buf);
    } else if (v->type == KURA_B) {
        size_t n = 4 * ((v->u.bytes.len + 2) / 3) + 1;
        unsigned char *b = malloc(n);
        G_STR(g, "B");
        if (b) {
            int len = EVP_EncodeBlock(b, v->u.bytes.p, (int)v->u.bytes.len);
            yajl_gen_string(g, b, (size_t)len);
        } else {
            G_STR(g, "");
        }
        free(b);
    } else {
        G_STR(g, "S");
        yajl_gen_string(g, v->u.bytes.p, v->u.bytes.len);
    }
    yajl_gen_map_close(g);
}

/* "key": the first `n` attributes of o decoded from p[0..len); *cut_out when they do not all
 * decode (a key longer than the accumulator keeps). Renders `words` (a short text of the
 * first value, for verdicts) when not NULL. */
static void gen_key(yajl_gen g, const rep_target *o, uint32_t n, const uint8_t *p, size_t len,
                    bool *cut_out, char *words, size_t cap)
{
    size_t off = 0;
    *cut_out = false;
    if (words) words[0] = '\0';
    G_STR(g, "key");
    yajl_gen_map_open(g);
    for (uint32_t i = 0; i < n; i++) {
        kura_value v = {0};
        size_t used;
        if (key_dec_value(p + off, len - off, o->type[i], &v, &used) != KURA_OK) {
            *cut_out = true;
            break;
        }
        off += used;
        G_STR(g, o->attr[i]);
        gen_value(g, &v);
        if (words && i == 0 && v.type == KURA_N)
            num_format(&v.u.num, words, cap);
        else if (words && i == 0 && v.type == KURA_S)
            snprintf(words, cap, "%.*s", (int)(v.u.bytes.len > 64 ? 64 : v.u.bytes.len),
                     (const char *)v.u.bytes.p);
        val_clear(&v);
    }
    yajl_gen_map_close(g);
}

static void gen_num(yajl_gen g, const char *k, double v)
{
    G_STR(g, k);
    yajl_gen_double(g, v);
}

static void gen_int(yajl_gen g, const char *k, long long v)
{
    G_STR(g, k);
    yajl_gen_integer(g, v);
}

/* ---- One target --------------------------------------------------------------------------- */

typedef struct rep_ctx {
    yajl_gen g;
    int64_t now;
    uint32_t win;
    uint64_t coll_limit;           /* the item collection size limit (kura_options; 10 GB) */
    char label[TCAP_NAME_MAX + 8]; /* "Table T", "GSI StatusIndex" */
    struct verdicts {
        char text[4][512];
        int n;
    } v;
} rep_ctx;

/* The keys of a top list by writes and by reads together, hottest (by share of the key
 * limits) first, at most TOP_N. */
typedef struct rep_keys {
    heat_top w, r;
    const heat_entry *e[2 * TOP_N];
    size_t n;
} rep_keys;

/* A key's rank: its busiest second against the key limits, then its window's units. */
static double share(const heat_entry *e, uint32_t win)
{
    double r = heat_rate(e->peak_rd, 1) / 3000.0, w = heat_rate(e->peak_wr, 1) / 1000.0;
    double avg = heat_rate(e->rd, win) / 3000.0 + heat_rate(e->wr, win) / 1000.0;
    return (r > w ? r : w) + avg * 1e-6;
}

/* The key's busiest second against the key limits (what throttles is a second's units). */
static double peak_share(const heat_entry *e, bool *write_out)
{
    double r = heat_rate(e->peak_rd, 1) / 3000.0, w = heat_rate(e->peak_wr, 1) / 1000.0;
    *write_out = w >= r;
    return r > w ? r : w;
}

static bool same_key(const heat_entry *a, const heat_entry *b)
{
    uint32_t la = a->key_len < TCAP_KEY_MAX ? a->key_len : TCAP_KEY_MAX;
    return a->key_len == b->key_len && !memcmp(a->key, b->key, la);
}

static void keys_collect(rep_keys *k, heat_acc *acc, int64_t now, uint32_t win, bool items)
{
    memset(k, 0, sizeof *k);
    kura_status (*top)(heat_acc *, int64_t, uint32_t, heat_kind, size_t, heat_top *) =
        items ? heat_acc_top_second : heat_acc_top;
    if (!acc || top(acc, now, win, HEAT_WRITE, TOP_N, &k->w) != KURA_OK ||
        top(acc, now, win, HEAT_READ, TOP_N, &k->r) != KURA_OK)
        return;
    const heat_top *lists[2] = {&k->w, &k->r};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++) {
            const heat_entry *e = &lists[l]->e[i];
            bool dup = e->key_len == 0;
            for (size_t j = 0; j < k->n && !dup; j++)
                dup = same_key(k->e[j], e);
            if (!dup) k->e[k->n++] = e;
        }
    for (size_t i = 1; i < k->n; i++) /* insertion sort by share: at most 20 */
        for (size_t j = i; j > 0 && share(k->e[j], win) > share(k->e[j - 1], win); j--) {
            const heat_entry *x = k->e[j];
            k->e[j] = k->e[j - 1];
            k->e[j - 1] = x;
        }
    if (k->n > TOP_N) k->n = TOP_N;
}

static void keys_free(rep_keys *k)
{
    heat_top_free(&k->w);
    heat_top_free(&k->r);
}

/* Requests refused on the key of `e` in the throttled list (counts, both kinds). */
static uint64_t throttled_of(const rep_keys *thr, const heat_entry *e)
{
    for (size_t i = 0; i < thr->n; i++)
        if (same_key(thr->e[i], e)) return thr->e[i]->rd + thr->e[i]->wr;
    return 0;
}

static void verdict_add(rep_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verdict_add(rep_ctx *x, const char *fmt, ...)
{
    if (x->v.n >= 4) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->v.text[x->v.n++], sizeof x->v.text[0], fmt, ap);
    va_end(ap);
}

/* "1,204" */
static const char *grouped(unsigned long long n, char *buf, size_t cap)
{
    char d[32];
    int len = snprintf(d, sizeof d, "%llu", n), o = 0;
    for (int i = 0; i < len && (size_t)o + 2 < cap; i++) {
        if (i && (len - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = d[i];
    }
    buf[o] = '\0';
    return buf;
}

static void gen_entries(rep_ctx *x, const char *member, const rep_keys *k, const rep_keys *thr,
                        const rep_target *o, uint32_t nattr, bool verdicts)
{
    yajl_gen g = x->g;
    G_STR(g, member);
    yajl_gen_array_open(g);
    for (size_t i = 0; i < k->n; i++) {
        const heat_entry *e = k->e[i];
        double rd = heat_rate(e->rd, x->win), wr = heat_rate(e->wr, x->win);
        uint64_t refused = throttled_of(thr, e);
        char words[96];
        bool cut;
        yajl_gen_map_open(g);
        gen_key(g, o, nattr, e->key, e->key_len < TCAP_KEY_MAX ? e->key_len : TCAP_KEY_MAX, &cut,
                words, sizeof words);
        if (cut) {
            G_STR(g, "cut");
            yajl_gen_bool(g, 1);
        }
        gen_num(g, "read", rd);
        gen_num(g, "write", wr);
        /* against the per-second limits: the key's busiest second (what a limit refuses) */
        gen_num(g, "read_share", heat_rate(e->peak_rd, 1) / 3000.0);
        gen_num(g, "write_share", heat_rate(e->peak_wr, 1) / 1000.0);
        G_STR(g, "provisioned_share");
        double pr = o->provisioned && o->rcu ? rd / (double)o->rcu : 0;
        double pw = o->provisioned && o->wcu ? wr / (double)o->wcu : 0;
        if (o->provisioned)
            yajl_gen_double(g, pr > pw ? pr : pw);
        else
            yajl_gen_null(g);
        gen_num(g, "error", heat_rate(e->err, x->win));
        gen_num(g, "peak_read", heat_rate(e->peak_rd, 1));
        gen_num(g, "peak_write", heat_rate(e->peak_wr, 1));
        gen_int(g, "throttled", (long long)refused);
        yajl_gen_map_close(g);
        bool wside;
        double sh = peak_share(e, &wside);
        if (verdicts && (sh >= 0.5 || refused)) {
            char n1[32];
            verdict_add(x,
                        "%s: key %s takes %.0f%% of its partition's %s limit in its busiest "
                        "second; %s %s throttled in the last %s",
                        x->label, words, sh * 100, wside ? "write" : "read",
                        grouped(refused, n1, sizeof n1), wside ? "writes" : "reads",
                        x->win == 60 ? "minute" : "window");
        }
    }
    yajl_gen_array_close(g);
}

/* The per-second timeline, the rates, the peak and the throttled counts of a target. */
static void gen_timeline(rep_ctx *x, tcap *c, tcap_target *tg, const rep_target *o)
{
    yajl_gen g = x->g;
    heat_acc *acc = tg ? atomic_load(&tg->keys) : NULL;
    uint64_t rd = 0, wr = 0, trd = 0, twr = 0, peak_r = 0, peak_w = 0;
    heat_window thr;
    if (tg) {
        kmutex_lock(&c->mu);
        thr = tg->throttled;
        kmutex_unlock(&c->mu);
    } else {
        heat_window_init(&thr);
    }
    G_STR(g, "timeline");
    yajl_gen_array_open(g);
    /* sums over the last s seconds, s = win .. 1: second now - s + 1 is the difference */
    uint64_t sum_r[HEAT_WINDOW_S + 1] = {0}, sum_w[HEAT_WINDOW_S + 1] = {0};
    uint64_t sum_tr[HEAT_WINDOW_S + 1] = {0}, sum_tw[HEAT_WINDOW_S + 1] = {0};
    for (uint32_t s = 1; s <= x->win; s++) {
        if (acc) heat_acc_total(acc, x->now, s, &sum_r[s], &sum_w[s]);
        heat_window_sum(&thr, x->now, s, &sum_tr[s], &sum_tw[s]);
    }
    int64_t now_s = x->now / 1000;
    for (uint32_t s = x->win; s >= 1; s--) {
        uint64_t r = sum_r[s] - sum_r[s - 1], w = sum_w[s] - sum_w[s - 1];
        uint64_t tr = sum_tr[s] - sum_tr[s - 1], tw = sum_tw[s] - sum_tw[s - 1];
        yajl_gen_map_open(g);
        gen_int(g, "t", (long long)(now_s - (int64_t)s + 1));
        gen_num(g, "read", (double)r / HEAT_UNIT_SCALE);
        gen_num(g, "write", (double)w / HEAT_UNIT_SCALE);
        gen_int(g, "throttled_reads", (long long)tr);
        gen_int(g, "throttled_writes", (long long)tw);
        yajl_gen_map_close(g);
        peak_r = r > peak_r ? r : peak_r;
        peak_w = w > peak_w ? w : peak_w;
    }
    yajl_gen_array_close(g);
    rd = sum_r[x->win];
    wr = sum_w[x->win];
    trd = sum_tr[x->win];
    twr = sum_tw[x->win];
    G_STR(g, "rate");
    yajl_gen_map_open(g);
    gen_num(g, "read", heat_rate(rd, x->win));
    gen_num(g, "write", heat_rate(wr, x->win));
    yajl_gen_map_close(g);
    G_STR(g, "peak");
    yajl_gen_map_open(g);
    gen_num(g, "read", (double)peak_r / HEAT_UNIT_SCALE);
    gen_num(g, "write", (double)peak_w / HEAT_UNIT_SCALE);
    yajl_gen_map_close(g);
    G_STR(g, "throttled");
    yajl_gen_map_open(g);
    gen_int(g, "reads", (long long)trd);
    gen_int(g, "writes", (long long)twr);
    yajl_gen_map_close(g);
    char n1[32];
    if (twr + trd && x->v.n == 0)
        verdict_add(x, "%s: %s requests throttled in the last %s", x->label,
                    grouped(twr + trd, n1, sizeof n1), x->win == 60 ? "minute" : "window");
    if (o->provisioned && o->wcu && heat_rate(wr, x->win) >= 0.8 * (double)o->wcu)
        verdict_add(x, "%s: writes at %.0f%% of the provisioned %lld WCU", x->label,
                    100.0 * heat_rate(wr, x->win) / (double)o->wcu, (long long)o->wcu);
    if (o->provisioned && o->rcu && heat_rate(rd, x->win) >= 0.8 * (double)o->rcu)
        verdict_add(x, "%s: reads at %.0f%% of the provisioned %lld RCU", x->label,
                    100.0 * heat_rate(rd, x->win) / (double)o->rcu, (long long)o->rcu);
}

/* "collections": a table's largest item collections whose sizes kura keeps (a table with an
 * LSI: engine/collection.h), against the item collection size limit. */
static void gen_collections(rep_ctx *x, const rep_table *r, const rep_target *o)
{
    yajl_gen g = x->g;
    G_STR(g, "collections");
    yajl_gen_array_open(g);
    coll_size *cs = o->id == 0 && r->t->colls ? malloc(TOP_N * sizeof *cs) : NULL;
    size_t n = cs ? coll_cache_largest(r->t->colls, cs, TOP_N) : 0;
    for (size_t i = 0; i < n; i++) {
        bool cut;
        char words[96];
        if (cs[i].klen <= 8) continue;
        yajl_gen_map_open(g);
        gen_key(g, o, o->npk, cs[i].key + 8, cs[i].klen - 8, &cut, words, sizeof words);
        gen_int(g, "size_bytes", (long long)cs[i].size);
        gen_num(g, "limit_share", (double)cs[i].size / (double)x->coll_limit);
        yajl_gen_map_close(g);
        if ((double)cs[i].size >= 0.8 * (double)x->coll_limit)
            verdict_add(x,
                        "%s: the item collection of key %s holds %.0f%% of the %llu-byte "
                        "item collection size limit",
                        x->label, words, 100.0 * (double)cs[i].size / (double)x->coll_limit,
                        (unsigned long long)x->coll_limit);
    }
    free(cs);
    yajl_gen_array_close(g);
}

static void gen_target(rep_ctx *x, const rep_table *r, const rep_target *o)
{
    yajl_gen g = x->g;
    tcap *c = r->t->cap;
    tcap_target *tg = c ? tcap_target_of(c, o->id, false) : NULL;
    snprintf(x->label, sizeof x->label, "%s %s",
             !strcmp(o->kind, "table") ? "Table"
             : !strcmp(o->kind, "gsi") ? "GSI"
                                       : "LSI",
             o->id ? o->name : r->name);
    memset(&x->v, 0, sizeof x->v);
    yajl_gen_map_open(g);
    G_STR(g, "table");
    G_STR(g, r->name);
    G_STR(g, "index");
    if (o->id)
        G_STR(g, o->name);
    else
        yajl_gen_null(g);
    G_STR(g, "kind");
    G_STR(g, o->kind);
    G_STR(g, "billing_mode");
    G_STR(g, o->provisioned ? "PROVISIONED" : "PAY_PER_REQUEST");
    G_STR(g, "contributor_insights"); /* DescribeContributorInsights' status and mode */
    if (o->insights) {
        yajl_gen_map_open(g);
        G_STR(g, "status");
        G_STR(g, "ENABLED");
        G_STR(g, "mode");
        G_STR(g, o->insights_throttled ? "THROTTLED_KEYS" : "ACCESSED_AND_THROTTLED_KEYS");
        yajl_gen_map_close(g);
    } else {
        yajl_gen_null(g);
    }
    G_STR(g, "provisioned");
    if (o->provisioned) {
        yajl_gen_map_open(g);
        gen_int(g, "read", o->rcu);
        gen_int(g, "write", o->wcu);
        yajl_gen_map_close(g);
    } else {
        yajl_gen_null(g);
    }
    rep_keys keys, items, thr;
    keys_collect(&keys, tg ? atomic_load(&tg->keys) : NULL, x->now, x->win, false);
    keys_collect(&items, tg ? atomic_load(&tg->keys) : NULL, x->now, x->win, true);
    keys_collect(&thr, tg ? atomic_load(&tg->thr) : NULL, x->now, x->win, false);
    gen_entries(x, "hot_keys", &keys, &thr, o, o->npk, true);
    gen_entries(x, "hot_items", o->nkey > o->npk ? &items : &(rep_keys){0}, &thr, o, o->nkey,
                false);
    G_STR(g, "throttled_keys");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < thr.n; i++) {
        bool cut;
        yajl_gen_map_open(g);
        gen_key(g, o, o->npk, thr.e[i]->key,
                thr.e[i]->key_len < TCAP_KEY_MAX ? thr.e[i]->key_len : TCAP_KEY_MAX, &cut, NULL, 0);
        gen_int(g, "throttled", (long long)(thr.e[i]->rd + thr.e[i]->wr));
        yajl_gen_map_close(g);
    }
    yajl_gen_array_close(g);
    keys_free(&keys);
    keys_free(&items);
    keys_free(&thr);
    gen_collections(x, r, o);
    gen_timeline(x, c, tg, o);
    G_STR(g, "verdicts");
    yajl_gen_array_open(g);
    for (int i = 0; i < x->v.n; i++)
        G_STR(g, x->v.text[i]);
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
}

/* ---- The report --------------------------------------------------------------------------- */

/* The tables named (all when NULL), pinned and copied, in *out (free with tables_done). */
static kura_status tables_take(kura_db *db, const char *name, rep_table **out, size_t *n_out)
{
    kmutex_lock(&db->tables_mu);
    size_t n = 0;
    rep_table *r = calloc(db->ntables ? db->ntables : 1, sizeof *r);
    for (size_t i = 0; r && i < db->ntables; i++) {
        kura_table *t = db->tables[i];
        if (name && strcmp(t->name, name)) continue;
        t->refs++;
        copy_table(&r[n++], t);
    }
    kmutex_unlock(&db->tables_mu);
    if (!r) return kura_err(KURA_E_NOMEM, "out of memory");
    *out = r;
    *n_out = n;
    return KURA_OK;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const rep_table *)a)->name, ((const rep_table *)b)->name);
}

kura_status kura_heat_report(kura_db *db, const char *table, uint32_t window_s, char **json_out)
{
    uint32_t win = window_s ? window_s : HEAT_WINDOW_S;
    if (win > HEAT_WINDOW_S) win = HEAT_WINDOW_S;
    rep_table *r = NULL;
    size_t n = 0;
    kura_status s = tables_take(db, table, &r, &n);
    if (s != KURA_OK) return s;
    if (table && n == 0) {
        free(r);
        return kura_err(KURA_E_RESOURCE_NOT_FOUND,
                        "Requested resource not found: Table: %s not found", table);
    }
    qsort(r, n, sizeof *r, cmp_name);
    yajl_gen g = yajl_gen_alloc(NULL);
    rep_ctx x = {.g = g,
                 .win = win,
                 .coll_limit = db->opts.item_collection_limit_bytes
                                   ? db->opts.item_collection_limit_bytes
                                   : 10737418240ull};
    x.now = tcap_clock_now(&db->opts);
    yajl_gen_map_open(g);
    gen_int(g, "generated_at_ms", (long long)x.now);
    gen_int(g, "window_seconds", win);
    G_STR(g, "throttling");
    yajl_gen_bool(g, db->opts.throttle);
    G_STR(g, "key_limits");
    yajl_gen_map_open(g);
    gen_int(g, "read", 3000);
    gen_int(g, "write", 1000);
    yajl_gen_map_close(g);
    G_STR(g, "targets");
    yajl_gen_array_open(g);
    for (size_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < r[i].n; j++)
            gen_target(&x, &r[i], &r[i].tg[j]);
    yajl_gen_array_close(g);
    yajl_gen_map_close(g);
    const unsigned char *buf;
    size_t len;
    yajl_gen_get_buf(g, &buf, &len);
    char *out = malloc(len + 1);
    if (out) {
        memcpy(out, buf, len);
        out[len] = '\0';
    }
    yajl_gen_free(g);
    for (size_t i = 0; i < n; i++)
        table_release(r[i].t);
    free(r);
    if (!out) return kura_err(KURA_E_NOMEM, "out of memory");
    *json_out = out;
    return KURA_OK;
}

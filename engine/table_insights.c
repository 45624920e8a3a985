/*
 * table_insights.c - This file contains Contributor Insights of tables and GSIs:
 * UpdateContributorInsights and DescribeContributorInsights (ListContributorInsights is
 * engine/table_insights_list.c), the query the capacity model asks on its hot path
 * (table_insights_enabled), and the setting's durable form (the Contributor Insights section of
 * definition format version 7, docs/format/catalog.md).
 *
 * kura has no CloudWatch, so there is nothing to start or stop: an update is made durable with
 * the definition (a synchronous write) before the call returns, answers DynamoDB's
 * transitional status (ENABLING / DISABLING, what DynamoDB's clients expect from the update)
 * and Describe shows the settled status (ENABLED / DISABLED) at once. The setting (idx_insights)
 * lives in the table for the table and in each GSI's idx_def, written under tables_mu; status
 * and mode are also stored atomically so that table_insights_enabled needs no lock. A GSI's
 * setting goes with the GSI: one being deleted is not written and is gone once dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/def_reader.h"
#include "engine/table_index.h"
#include "engine/table_insights.h"
#include "engine/table_int.h"
#include "util/coding.h"
#include "util/status.h"

/* The longest table name part of a rule name: DynamoDB's rule names are at most 128
 * characters (ContributorInsightsRule's pattern), "DynamoDBContributorInsights-PKC-" is 32 and
 * "-<13-digit ms>" 14. */
enum { RULE_TABLE_MAX = 128 - 32 - 14 };

const char *kura_contributor_insights_mode_name(kura_contributor_insights_mode m)
{
    switch (m) {
    case KURA_CI_MODE_ACCESSED_AND_THROTTLED_KEYS:
        return "ACCESSED_AND_THROTTLED_KEYS";
    case KURA_CI_MODE_THROTTLED_KEYS:
        return "THROTTLED_KEYS";
    default:
        return NULL;
    }
}

/* ---- Lookup ------------------------------------------------------------------------------ */

idx_def *insights_gsi(kura_table *t, const char *name)
{
    for (uint32_t i = 0; name && i < t->ngsi; i++) {
        idx_def *x = &t->gsi[i];
        if (x->status != IDX_DELETED && x->status != IDX_DELETING && !strcmp(x->name, name))
            return x;
    }
    return NULL;
}

bool table_insights_enabled(const kura_table *t, int index_pos, bool *throttled_only_out)
{
    const idx_insights *ci = &t->ci;
    if (index_pos >= 0) {
        uint32_t pos = (uint32_t)index_pos;
        uint32_t ngsi = __atomic_load_n(&t->ngsi, __ATOMIC_ACQUIRE);
        if (pos < t->nlsi || pos - t->nlsi >= ngsi)
            return false; /* an LSI has none */
        const idx_def *x = &t->gsi[pos - t->nlsi];
        if (x->status == IDX_DELETING || x->status == IDX_DELETED)
            return false;
        ci = &x->ci;
    }
    if (__atomic_load_n(&ci->status, __ATOMIC_RELAXED) != INSIGHTS_ENABLED)
        return false;
    if (throttled_only_out)
        *throttled_only_out =
            __atomic_load_n(&ci->mode, __ATOMIC_RELAXED) == KURA_CI_MODE_THROTTLED_KEYS;
    return true;
}

/* ---- Update and Describe -------------------------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000000) / 1000.0;
}

/* The checks a C caller gets that api/validate.c makes for the JSON API. */
static kura_status check_names(const char *table, const char *index)
{
    kura_status s = table_name_check(table, "tableName");
    if (s == KURA_OK && index)
        s = table_name_check(index, "indexName");
    return s;
}

/* The table pinned and the setting it names (the table's or a GSI's); tables_mu held on
 * success (the caller unlocks and releases). */
static kura_status acquire_locked(kura_db *db, const char *table, const char *index,
                                  kura_table **t_out, idx_def **x_out, idx_insights **ci_out)
{
    kura_table *t;
    kura_status s = table_acquire_named(db, table, &t);
    if (s != KURA_OK)
        return s;
    kmutex_lock(&db->tables_mu);
    idx_def *x = index ? insights_gsi(t, index) : NULL;
    if (index && !x) {
        kmutex_unlock(&db->tables_mu);
        table_release(t);
        return kura_err(KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found: Index: %s "
                        "not found", index);
    }
    *t_out = t;
    *x_out = x;
    *ci_out = x ? &x->ci : &t->ci;
    return KURA_OK;
}

/* A stamp for newly enabled rules: now, and past every stamp of the table's other rules so
 * that no two of the table's rule names are the same. */
static uint64_t new_stamp(const kura_table *t, double now)
{
    uint64_t ms = (uint64_t)(now * 1000.0), floor = t->ci.stamp_ms;
    for (uint32_t i = 0; i < t->ngsi; i++)
        floor = t->gsi[i].ci.stamp_ms > floor ? t->gsi[i].ci.stamp_ms : floor;
    return ms > floor ? ms : floor + 1;
}

static void set_ci(idx_insights *ci, const idx_insights *v)
{
    ci->stamp_ms = v->stamp_ms;
    ci->changed = v->changed;
    __atomic_store_n(&ci->mode, v->mode, __ATOMIC_RELAXED);
    __atomic_store_n(&ci->status, v->status, __ATOMIC_RELAXED);
}

static bool dup_names(kura_contributor_insights_description *d, const char *table,
                      const char *index)
{
    d->table_name = strdup(table);
    d->index_name = index ? strdup(index) : NULL;
    return d->table_name && (!index || d->index_name);
}

kura_status kura_update_contributor_insights(kura_db *db,
                                             const kura_update_contributor_insights_req *req,
                                             kura_contributor_insights_description *res_out)
{
    kura_status s = check_names(req->table_name, req->index_name);
    if (s != KURA_OK)
        return s;
    if (req->action != KURA_CI_ENABLE && req->action != KURA_CI_DISABLE)
        return kura_err(KURA_E_INVALID, "Invalid ContributorInsightsAction");
    if (req->mode != KURA_CI_MODE_UNSET && !kura_contributor_insights_mode_name(req->mode))
        return kura_err(KURA_E_INVALID, "Invalid ContributorInsightsMode");
    kura_table *t;
    idx_def *x;
    idx_insights *ci;
    if ((s = acquire_locked(db, req->table_name, req->index_name, &t, &x, &ci)) != KURA_OK)
        return s;
    bool enable = req->action == KURA_CI_ENABLE;
    double now = now_seconds();
    idx_insights old = *ci, neu = *ci;
    neu.changed = now;
    neu.status = enable ? INSIGHTS_ENABLED : INSIGHTS_DISABLED;
    if (enable) {
        neu.mode = req->mode ? (uint8_t)req->mode : KURA_CI_MODE_ACCESSED_AND_THROTTLED_KEYS;
        if (old.status != INSIGHTS_ENABLED) /* new rules; enabled ones keep their names */
            neu.stamp_ms = new_stamp(t, now);
    }
    set_ci(ci, &neu);
    if ((s = def_write(db, t, false)) != KURA_OK)
        set_ci(ci, &old);
    kmutex_unlock(&db->tables_mu);
    if (s == KURA_OK && res_out) {
        kura_contributor_insights_description d = {
            .status = enable ? "ENABLING" : "DISABLING",
            .mode = enable ? (kura_contributor_insights_mode)neu.mode : KURA_CI_MODE_UNSET,
        };
        if (!dup_names(&d, t->name, req->index_name)) {
            kura_contributor_insights_description_free(&d);
            s = kura_err(KURA_E_NOMEM, "UpdateContributorInsights: out of memory");
        } else {
            *res_out = d;
        }
    }
    table_release(t);
    return s;
}

/* DynamoDB's rule names of an enabled setting into d (false: out of memory). */
static bool rule_names(const char *table, bool has_sk, const idx_insights *ci,
                       kura_contributor_insights_description *d)
{
    static const char *const kinds[4] = {"PKC", "SKC", "PKT", "SKT"};
    if (!(d->rules = calloc(4, sizeof *d->rules)))
        return false;
    for (int k = 0; k < 4; k++) {
        bool throttled = k >= 2, sort = k % 2 == 1;
        if ((sort && !has_sk) || (!throttled && ci->mode == KURA_CI_MODE_THROTTLED_KEYS))
            continue;
        char buf[160];
        snprintf(buf, sizeof buf, "DynamoDBContributorInsights-%s-%.*s-%llu", kinds[k],
                 (int)RULE_TABLE_MAX, table, (unsigned long long)ci->stamp_ms);
        if (!(d->rules[d->rule_count] = strdup(buf)))
            return false;
        d->rule_count++;
    }
    return true;
}

kura_status kura_describe_contributor_insights(kura_db *db, const char *table_name,
                                               const char *index_name,
                                               kura_contributor_insights_description *desc_out)
{
    kura_status s = check_names(table_name, index_name);
    if (s != KURA_OK)
        return s;
    kura_table *t;
    idx_def *x;
    idx_insights *ci;
    if ((s = acquire_locked(db, table_name, index_name, &t, &x, &ci)) != KURA_OK)
        return s;
    bool on = ci->status == INSIGHTS_ENABLED;
    bool has_sk = x ? x->nrange > 0 : t->sk_name != NULL;
    kura_contributor_insights_description d = {
        .status = on ? "ENABLED" : "DISABLED",
        .mode = on ? (kura_contributor_insights_mode)ci->mode : KURA_CI_MODE_UNSET,
        .last_update = ci->status ? ci->changed : 0,
    };
    bool ok = dup_names(&d, t->name, index_name) && (!on || rule_names(t->name, has_sk, ci, &d));
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    if (!ok) {
        kura_contributor_insights_description_free(&d);
        return kura_err(KURA_E_NOMEM, "DescribeContributorInsights: out of memory");
    }
    *desc_out = d;
    return KURA_OK;
}

void kura_contributor_insights_description_free(kura_contributor_insights_description *d)
{
    if (!d)
        return;
    free(d->table_name);
    free(d->index_name);
    for (size_t i = 0; d->rules && i < d->rule_count; i++)
        free(d->rules[i]);
    free(d->rules);
    memset(d, 0, sizeof *d);
}

/* ---- The Contributor Insights section of definition version 7 ------------------------------- */

static bool gsi_has_insights(const idx_def *x)
{
    return x->status != IDX_DELETED && x->status != IDX_DELETING && x->ci.status;
}

bool def_insights_any(const kura_table *t)
{
    bool any = t->ci.status != 0;
    for (uint32_t i = 0; !any && i < t->ngsi; i++)
        any = gsi_has_insights(&t->gsi[i]);
    return any;
}

static bool put_entry(kbuf *b, uint32_t id, const idx_insights *ci)
{
    uint64_t changed;
    memcpy(&changed, &ci->changed, sizeof changed);
    return kbuf_put_varint(b, id) && kbuf_put_u8(b, ci->status) && kbuf_put_u8(b, ci->mode) &&
           kbuf_put_fixed64(b, ci->stamp_ms) && kbuf_put_fixed64(b, changed);
}

bool def_insights_encode(const kura_table *t, kbuf *b)
{
    uint32_t n = t->ci.status != 0;
    for (uint32_t i = 0; i < t->ngsi; i++)
        n += gsi_has_insights(&t->gsi[i]);
    bool ok = kbuf_put_varint(b, n);
    if (ok && t->ci.status)
        ok = put_entry(b, 0, &t->ci);
    for (uint32_t i = 0; ok && i < t->ngsi; i++)
        if (gsi_has_insights(&t->gsi[i]))
            ok = put_entry(b, t->gsi[i].id, &t->gsi[i].ci);
    return ok;
}

/* The setting of entry `id` (0: the table), NULL for no such GSI or one read already. */
static idx_insights *entry_of(kura_table *t, uint64_t id)
{
    if (id == 0)
        return t->ci.status ? NULL : &t->ci;
    for (uint32_t g = 0; g < t->ngsi; g++)
        if (t->gsi[g].id == id)
            return t->gsi[g].ci.status ? NULL : &t->gsi[g].ci;
    return NULL;
}

bool def_insights_decode(const uint8_t **p, const uint8_t *end, kura_table *t)
{
    def_reader r = {*p, end, false};
    uint64_t n = def_rd_varint(&r);
    r.bad = r.bad || n < 1 || n > 1 + (uint64_t)t->ngsi;
    for (uint64_t i = 0; i < n && !r.bad; i++) {
        idx_insights *ci = entry_of(t, def_rd_varint(&r));
        idx_insights v = {.status = def_rd_u8(&r), .mode = def_rd_u8(&r)};
        v.stamp_ms = def_rd_fixed64(&r);
        uint64_t changed = def_rd_fixed64(&r);
        memcpy(&v.changed, &changed, sizeof changed);
        if (r.bad || !ci || v.status < INSIGHTS_ENABLED || v.status > INSIGHTS_DISABLED ||
            !kura_contributor_insights_mode_name((kura_contributor_insights_mode)v.mode))
            r.bad = true;
        else
            *ci = v;
    }
    *p = r.p;
    return !r.bad;
}

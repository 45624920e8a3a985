/*
 * table_settings.c - This file contains the table settings that DynamoDB users set and read
 * back without kura acting on them: TableClass, OnDemandThroughput (table and GSIs),
 * WarmThroughput (table and GSIs) and SSESpecification, with DynamoDB's rules for
 * CreateTable and UpdateTable, their DescribeTable form, and their durable form (the settings
 * section of definition format version 6, docs/format/catalog.md).
 *
 * kura stores every table alike, does not throttle and does not encrypt with KMS: a setting
 * is kept so that a client that sets it reads it back (docs/data-model.md, "Table
 * settings"). The fields live in the table (engine/table.h) and the GSIs' idx_def, read and
 * written under tables_mu like UpdateTable's other settings.
 *
 * Messages: DynamoDB's "One or more parameter values were invalid: ..." form. DynamoDB Local
 * 1.25.1 accepts every one of these settings unchecked, so the wordings below that the
 * DynamoDB documentation does not give are kura's (docs/data-model.md lists them).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/arn.h"
#include "engine/def_reader.h"
#include "engine/table_int.h"
#include "util/coding.h"
#include "engine/tcap.h"
#include "util/status.h"

#define INVALID "One or more parameter values were invalid: "
/* DynamoDB's warm throughput of a new on-demand table or GSI (units per second) */
enum { WARM_READ_DEFAULT = 12000, WARM_WRITE_DEFAULT = 4000 };

/* ---- Checks ------------------------------------------------------------------------------ */

/* OnDemandThroughput: only with PAY_PER_REQUEST; each maximum >= 1 or -1. `what` is "" for
 * the table, " for index: <name>" for a GSI. */
static kura_status check_on_demand(const kura_on_demand_throughput *o, bool ppr, const char *what)
{
    if (!o->given)
        return KURA_OK;
    if (!ppr)
        return kura_err(KURA_E_INVALID, INVALID "OnDemandThroughput%s can only be specified "
                        "when BillingMode is PAY_PER_REQUEST", what);
    const int64_t v[2] = {o->max_read_request_units, o->max_write_request_units};
    static const char *const name[2] = {"MaxReadRequestUnits", "MaxWriteRequestUnits"};
    for (int i = 0; i < 2; i++)
        if (v[i] < -1)
            return kura_err(KURA_E_INVALID, INVALID "%s%s must be greater than 0 or -1 (no "
                            "maximum), not %" PRId64, name[i], what, v[i]);
    return KURA_OK;
}

/* WarmThroughput: each value given >= 1 and not below the current (`cur_*`, 0 for a new
 * table). */
static kura_status check_warm(const kura_warm_throughput *w, int64_t cur_read, int64_t cur_write,
                              const char *what)
{
    if (!w->given)
        return KURA_OK;
    if (!w->read_units_per_second && !w->write_units_per_second)
        return kura_err(KURA_E_INVALID, INVALID "WarmThroughput%s must specify "
                        "ReadUnitsPerSecond or WriteUnitsPerSecond", what);
    const int64_t v[2] = {w->read_units_per_second, w->write_units_per_second};
    const int64_t cur[2] = {cur_read, cur_write};
    static const char *const name[2] = {"ReadUnitsPerSecond", "WriteUnitsPerSecond"};
    for (int i = 0; i < 2; i++) {
        if (v[i] < 0)
            return kura_err(KURA_E_INVALID, INVALID "WarmThroughput %s%s must be greater than "
                            "0, not %" PRId64, name[i], what, v[i]);
        if (v[i] && v[i] < cur[i])
            return kura_err(KURA_E_INVALID, INVALID "Requested WarmThroughput %s%s (%" PRId64
                            ") is lower than the current value (%" PRId64 "): warm throughput "
                            "can only be increased", name[i], what, v[i], cur[i]);
    }
    return KURA_OK;
}

static kura_status check_sse(const kura_sse_specification *sse)
{
    if (!sse->given)
        return KURA_OK;
    if (sse->sse_type == KURA_SSE_AES256)
        return kura_err(KURA_E_INVALID, INVALID "Server-Side Encryption type AES256 is not "
                        "supported: the only supported SSEType is KMS");
    if ((sse->sse_type != KURA_SSE_UNSET || sse->kms_master_key_id) && !sse->enabled)
        return kura_err(KURA_E_INVALID, INVALID "SSEType and KMSMasterKeyId can only be "
                        "specified when SSESpecification Enabled is true");
    if (sse->kms_master_key_id && (!sse->kms_master_key_id[0] ||
                                   strlen(sse->kms_master_key_id) > 2048))
        return kura_err(KURA_E_INVALID, INVALID "Invalid KMSMasterKeyId");
    return KURA_OK;
}

/* The warm throughput DescribeTable shows: what was asked for, at least DynamoDB's default
 * and the provisioned capacity. */
static int64_t warm_of(int64_t asked, int64_t dflt, uint64_t provisioned)
{
    int64_t v = asked > dflt ? asked : dflt;
    return (int64_t)provisioned > v ? (int64_t)provisioned : v;
}

kura_status settings_check_create(const kura_create_table_req *r)
{
    bool ppr = r->billing_mode == KURA_BILLING_PAY_PER_REQUEST;
    kura_status s = check_on_demand(&r->on_demand, ppr, "");
    if (s == KURA_OK)
        s = check_warm(&r->warm, 0, 0, "");
    if (s == KURA_OK)
        s = check_sse(&r->sse);
    if (s == KURA_OK && r->resource_policy)
        s = policy_check(r->resource_policy);
    size_t ng = r->global_secondary_indexes ? r->global_secondary_indexes_count : 0;
    for (size_t i = 0; s == KURA_OK && i < ng; i++)
        s = settings_check_gsi(&r->global_secondary_indexes[i], ppr);
    return s;
}

kura_status settings_check_gsi(const kura_index_def *d, bool ppr)
{
    char what[300];
    snprintf(what, sizeof what, " for index: %s", d->index_name ? d->index_name : "");
    kura_status s = check_on_demand(&d->on_demand, ppr, what);
    return s == KURA_OK ? check_warm(&d->warm, 0, 0, what) : s;
}

kura_status settings_check_gsi_update(const idx_def *x, const kura_gsi_update *u, bool ppr)
{
    char what[300];
    snprintf(what, sizeof what, " for index: %s", x->name);
    kura_status s = check_on_demand(&u->on_demand, ppr, what);
    /* the current values as DescribeTable shows them */
    uint64_t rcu = ppr ? 0 : x->rcu, wcu = ppr ? 0 : x->wcu;
    return s == KURA_OK ? check_warm(&u->warm, warm_of(x->warm_read, WARM_READ_DEFAULT, rcu),
                                     warm_of(x->warm_write, WARM_WRITE_DEFAULT, wcu), what)
                        : s;
}

/* ---- Applying ------------------------------------------------------------------------------ */

static void apply_on_demand(int64_t *read, int64_t *write, const kura_on_demand_throughput *o)
{
    if (!o->given)
        return;
    if (o->max_read_request_units)
        *read = o->max_read_request_units;
    if (o->max_write_request_units)
        *write = o->max_write_request_units;
}

static void apply_warm(int64_t *read, int64_t *write, const kura_warm_throughput *w)
{
    if (!w->given)
        return;
    if (w->read_units_per_second)
        *read = w->read_units_per_second;
    if (w->write_units_per_second)
        *write = w->write_units_per_second;
}

/* t's KMS key from a specification (false: out of memory). The old key string is not freed:
 * the caller owns it (UpdateTable restores it if the definition cannot be written). */
static bool apply_sse(kura_table *t, const kura_sse_specification *sse)
{
    char *key = NULL;
    if (sse->enabled && sse->kms_master_key_id && !(key = strdup(sse->kms_master_key_id)))
        return false;
    t->kms_key = key;
    t->sse_kms = sse->enabled;
    return true;
}

void settings_gsi_apply(idx_def *x, const kura_on_demand_throughput *o,
                        const kura_warm_throughput *w)
{
    apply_on_demand(&x->od_read, &x->od_write, o);
    apply_warm(&x->warm_read, &x->warm_write, w);
}

bool settings_from_create(const kura_create_table_req *r, kura_table *t)
{
    t->table_class = r->table_class;
    apply_on_demand(&t->od_read, &t->od_write, &r->on_demand);
    apply_warm(&t->warm_read, &t->warm_write, &r->warm);
    if (r->sse.given && !apply_sse(t, &r->sse))
        return false;
    return !r->resource_policy || policy_set_new(t, r->resource_policy);
}

kura_status settings_check_update_locked(const kura_table *t, const kura_update_table_req *r)
{
    kura_billing_mode mode = r->billing_mode ? r->billing_mode : t->billing;
    kura_status s = check_on_demand(&r->on_demand, mode == KURA_BILLING_PAY_PER_REQUEST, "");
    if (s == KURA_OK) /* t->rcu, t->wcu are 0 with PAY_PER_REQUEST */
        s = check_warm(&r->warm, warm_of(t->warm_read, WARM_READ_DEFAULT, t->rcu),
                       warm_of(t->warm_write, WARM_WRITE_DEFAULT, t->wcu), "");
    if (s == KURA_OK)
        s = check_sse(&r->sse);
    if (s == KURA_OK && r->sse.given && !r->sse.enabled && !t->sse_kms)
        s = kura_err(KURA_E_INVALID, "Table is already encrypted by default");
    /* switching to PROVISIONED: every GSI needs its throughput in an Update action */
    for (uint32_t i = 0; s == KURA_OK && mode == KURA_BILLING_PROVISIONED &&
                         t->billing == KURA_BILLING_PAY_PER_REQUEST && i < t->ngsi; i++) {
        const idx_def *x = &t->gsi[i];
        bool given = false;
        for (size_t j = 0; x->status != IDX_DELETED && j < r->global_secondary_index_updates_count;
             j++) {
            const kura_gsi_update *u = &r->global_secondary_index_updates[j];
            given |= (u->action == KURA_GSI_UPDATE && u->has_provisioned_throughput &&
                      u->index_name && !strcmp(u->index_name, x->name)) ||
                     (u->action == KURA_GSI_DELETE && u->index_name &&
                      !strcmp(u->index_name, x->name));
        }
        if (x->status != IDX_DELETED && !given)
            s = kura_err(KURA_E_INVALID, INVALID "ProvisionedThroughput must be specified for "
                         "index: %s", x->name);
    }
    return s;
}

kura_status settings_update_locked(kura_table *t, const kura_update_table_req *r, double now)
{
    if (r->table_class != KURA_TABLE_CLASS_UNSET) {
        kura_table_class cur = t->table_class ? t->table_class : KURA_TABLE_CLASS_STANDARD;
        if (r->table_class != cur)
            t->table_class_changed = now;
        t->table_class = r->table_class;
    }
    if (t->billing == KURA_BILLING_PROVISIONED) { /* on-demand maxima go with the mode */
        t->od_read = t->od_write = 0;
        for (uint32_t i = 0; i < t->ngsi; i++)
            t->gsi[i].od_read = t->gsi[i].od_write = 0;
    }
    apply_on_demand(&t->od_read, &t->od_write, &r->on_demand);
    apply_warm(&t->warm_read, &t->warm_write, &r->warm);
    if (r->sse.given && !apply_sse(t, &r->sse))
        return kura_err(KURA_E_NOMEM, "UpdateTable: out of memory");
    return KURA_OK;
}

/* UpdateTable's table settings applied and written (tables_mu held); on failure t's settings
 * are as before. */
kura_status settings_update_write_locked(kura_db *db, kura_table *t,
                                         const kura_update_table_req *req,
                                         kura_billing_mode mode, double now)
{
    kura_table saved = *t;
    int64_t gsi_od[IDX_MAX_GSI][2];
    for (uint32_t i = 0; i < t->ngsi; i++) {
        gsi_od[i][0] = t->gsi[i].od_read;
        gsi_od[i][1] = t->gsi[i].od_write;
    }
    if (mode == KURA_BILLING_PAY_PER_REQUEST && t->billing != mode)
        t->last_ppr = now;
    if (mode == KURA_BILLING_PAY_PER_REQUEST)
        t->rcu = t->wcu = 0;
    /* a decrease of a provisioned table's throughput, counted against DynamoDB's daily limit
     * (with kura_options.throttle) */
    if (req->has_provisioned_throughput && saved.billing == KURA_BILLING_PROVISIONED &&
        mode == KURA_BILLING_PROVISIONED &&
        (req->read_capacity_units < saved.rcu || req->write_capacity_units < saved.wcu)) {
        kura_status d = tcap_decrease(t->cap, 0);
        if (d != KURA_OK) {
            t->rcu = saved.rcu;
            t->wcu = saved.wcu;
            return d;
        }
    }
    if (req->has_provisioned_throughput) {
        t->rcu = req->read_capacity_units;
        t->wcu = req->write_capacity_units;
    }
    t->billing = mode;
    if (req->has_deletion_protection)
        t->deletion_protection = req->deletion_protection_enabled;
    kura_status s = settings_update_locked(t, req, now);
    if (s == KURA_OK && (s = def_write(db, t, false)) == KURA_OK) {
        if (saved.kms_key != t->kms_key)
            free(saved.kms_key);
        return KURA_OK;
    }
    if (saved.kms_key != t->kms_key)
        free(t->kms_key);
    t->billing = saved.billing;
    t->rcu = saved.rcu;
    t->wcu = saved.wcu;
    t->last_ppr = saved.last_ppr;
    t->deletion_protection = saved.deletion_protection;
    t->table_class = saved.table_class;
    t->table_class_changed = saved.table_class_changed;
    t->od_read = saved.od_read;
    t->od_write = saved.od_write;
    t->warm_read = saved.warm_read;
    t->warm_write = saved.warm_write;
    t->sse_kms = saved.sse_kms;
    t->kms_key = saved.kms_key;
    for (uint32_t i = 0; i < t->ngsi; i++) {
        t->gsi[i].od_read = gsi_od[i][0];
        t->gsi[i].od_write = gsi_od[i][1];
    }
    return s;
}

/* ---- DescribeTable -------------------------------------------------------------------------- */

bool settings_describe(const kura_table *t, kura_table_description *d)
{
    d->table_class = t->table_class;
    d->table_class_last_update_date_time = t->table_class_changed;
    if (t->billing == KURA_BILLING_PAY_PER_REQUEST)
        d->on_demand = (kura_on_demand_throughput){true, t->od_read ? t->od_read : -1,
                                                   t->od_write ? t->od_write : -1};
    bool prov = t->billing == KURA_BILLING_PROVISIONED;
    d->warm = (kura_warm_throughput){true, warm_of(t->warm_read, WARM_READ_DEFAULT,
                                                   prov ? t->rcu : 0),
                                     warm_of(t->warm_write, WARM_WRITE_DEFAULT, prov ? t->wcu : 0)};
    if (!t->sse_kms)
        return true;
    if (t->kms_key && !(d->kms_master_key_id = strdup(t->kms_key)))
        return false;
    return (d->kms_master_key_arn = arn_kms(d->table_arn, t->kms_key)) != NULL;
}

void settings_describe_gsi(const kura_table *t, const idx_def *x, kura_index_description *o)
{
    bool prov = t->billing == KURA_BILLING_PROVISIONED;
    if (!prov)
        o->on_demand = (kura_on_demand_throughput){true, x->od_read ? x->od_read : -1,
                                                   x->od_write ? x->od_write : -1};
    o->warm = (kura_warm_throughput){true, warm_of(x->warm_read, WARM_READ_DEFAULT,
                                                   prov ? x->rcu : 0),
                                     warm_of(x->warm_write, WARM_WRITE_DEFAULT,
                                             prov ? x->wcu : 0)};
}

/* ---- The settings section of definition version 6 ------------------------------------------- */

static bool gsi_has_settings(const idx_def *x)
{
    return x->status != IDX_DELETED && (x->od_read || x->od_write || x->warm_read ||
                                        x->warm_write);
}

bool def_settings_any(const kura_table *t)
{
    bool any = t->table_class || t->od_read || t->od_write || t->warm_read || t->warm_write ||
               t->sse_kms || t->policy;
    for (uint32_t i = 0; !any && i < t->ngsi; i++)
        any = gsi_has_settings(&t->gsi[i]);
    return any;
}

/* OnDemandThroughput maxima are stored plus one: 0 is -1 (no maximum), 1 not set. */
static bool put_i64(kbuf *b, int64_t v)
{
    return kbuf_put_varint(b, (uint64_t)(v + 1));
}

bool def_settings_encode(const kura_table *t, kbuf *b)
{
    uint64_t changed;
    memcpy(&changed, &t->table_class_changed, sizeof changed);
    bool ok = kbuf_put_u8(b, (uint8_t)t->table_class) && kbuf_put_fixed64(b, changed) &&
              put_i64(b, t->od_read) && put_i64(b, t->od_write) &&
              kbuf_put_varint(b, (uint64_t)t->warm_read) &&
              kbuf_put_varint(b, (uint64_t)t->warm_write) &&
              kbuf_put_u8(b, !t->sse_kms ? 0 : t->kms_key ? 2 : 1);
    if (ok && t->sse_kms && t->kms_key)
        ok = kbuf_put_lenbytes(b, t->kms_key, strlen(t->kms_key));
    ok = ok && kbuf_put_u8(b, t->policy != NULL);
    if (ok && t->policy)
        ok = kbuf_put_varint(b, t->policy_rev) &&
             kbuf_put_lenbytes(b, t->policy, strlen(t->policy));
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->ngsi; i++)
        n += gsi_has_settings(&t->gsi[i]);
    ok = ok && kbuf_put_varint(b, n);
    for (uint32_t i = 0; ok && i < t->ngsi; i++) {
        const idx_def *x = &t->gsi[i];
        if (gsi_has_settings(x))
            ok = kbuf_put_varint(b, x->id) && put_i64(b, x->od_read) && put_i64(b, x->od_write) &&
                 kbuf_put_varint(b, (uint64_t)x->warm_read) &&
                 kbuf_put_varint(b, (uint64_t)x->warm_write);
    }
    return ok;
}

/* A bounds-checked reader of the section; `bad` latches the first failure. */
/* A maximum stored plus one (put_i64): -1 or 0 .. 2^62. */
static int64_t rd_i64(def_reader *r)
{
    uint64_t v = def_rd_varint(r);
    r->bad = r->bad || v > ((uint64_t)1 << 62);
    return (int64_t)v - 1;
}

static int64_t rd_warm(def_reader *r)
{
    uint64_t v = def_rd_varint(r);
    r->bad = r->bad || v > ((uint64_t)1 << 62);
    return (int64_t)v;
}


static void rd_gsis(def_reader *r, kura_table *t)
{
    uint64_t n = def_rd_varint(r);
    r->bad = r->bad || n > t->ngsi;
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        uint64_t id = def_rd_varint(r);
        idx_def *x = NULL;
        for (uint32_t g = 0; g < t->ngsi && !x; g++)
            x = t->gsi[g].id == id ? &t->gsi[g] : NULL;
        int64_t v[4] = {rd_i64(r), rd_i64(r), rd_warm(r), rd_warm(r)};
        if (!x || gsi_has_settings(x) || (!v[0] && !v[1] && !v[2] && !v[3])) {
            r->bad = true; /* no such GSI, twice the same, or an entry without settings */
            return;
        }
        x->od_read = v[0];
        x->od_write = v[1];
        x->warm_read = v[2];
        x->warm_write = v[3];
    }
}

bool def_settings_decode(const uint8_t **p, const uint8_t *end, kura_table *t, bool may_be_empty)
{
    def_reader r = {*p, end, false};
    uint8_t cls = def_rd_u8(&r);
    uint64_t changed = def_rd_fixed64(&r);
    if (r.bad || cls > KURA_TABLE_CLASS_STANDARD_INFREQUENT_ACCESS)
        return false;
    t->table_class = (kura_table_class)cls;
    memcpy(&t->table_class_changed, &changed, sizeof changed);
    t->od_read = rd_i64(&r);
    t->od_write = rd_i64(&r);
    t->warm_read = rd_warm(&r);
    t->warm_write = rd_warm(&r);
    uint8_t sse = def_rd_u8(&r);
    r.bad = r.bad || sse > 2;
    t->sse_kms = sse > 0;
    if (sse == 2)
        t->kms_key = def_rd_str(&r, 1, 2048, true);
    uint8_t pol = def_rd_u8(&r);
    r.bad = r.bad || pol > 1;
    if (pol == 1 && !r.bad) {
        t->policy_rev = def_rd_varint(&r);
        t->policy = def_rd_str(&r, 1, POLICY_MAX_BYTES, true);
    }
    rd_gsis(&r, t);
    *p = r.p;
    return !r.bad && (may_be_empty || def_settings_any(t));
}

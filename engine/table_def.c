/*
 * table_def.c - This file contains a table's definition as data: its secondary indexes
 * taken from a CreateTable request, the types of its key attributes bound from the attribute
 * definitions, and its encoding, the value of a "table/<name>" record of the system tree
 * (docs/format/catalog.md, "Tables").
 *
 * The decoder checks every length against the record and reports a malformed record as
 * corruption; the caller adds the table's context.
 *
 * Version 2 is version 1 followed by the secondary index definitions. A table that has never
 * had an index is still written as version 1, so that a kura from before indexes opens
 * databases whose tables have none; version 1 records load as tables without indexes.
 *
 * Version 3 is version 2 followed by the Time to Live section; a table that has never had
 * UpdateTimeToLive is written as version 1 or 2 as before.
 *
 * Version 4 is version 2 followed by a byte telling whether the Time to Live section follows,
 * that section, and the change streams (engine/stream_table.h); a table that has never had a
 * stream is written as version 1, 2 or 3 as before.
 *
 * Version 5 is version 4 whose stream count may be 0, followed by the tags (engine/
 * table_tags.c); only a table with at least one tag is written as version 5.
 *
 * Version 6 is version 5 whose tag count may be 0, followed by the settings section (engine/
 * table_settings.c: TableClass, OnDemandThroughput, WarmThroughput, SSESpecification, the
 * resource-based policy, the GSIs' settings); only a table with one of those set is written
 * as version 6.
 *
 * Version 7 is version 6 whose settings section may set nothing, followed by the Contributor
 * Insights section (engine/table_insights.c); only a table whose Contributor Insights (or a
 * GSI's) was ever enabled is written as version 7.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/stream_table.h"
#include "engine/def_reader.h"
#include "engine/table_insights.h"
#include "engine/table_int.h"
#include "util/coding.h"
#include "util/status.h"

enum { DEF_VERSION_1 = 1, DEF_VERSION_INDEXES = 2, DEF_VERSION_TTL = 3, DEF_VERSION_STREAMS = 4,
       DEF_VERSION_TAGS = 5, DEF_VERSION_SETTINGS = 6, DEF_VERSION_INSIGHTS = 7 };

/* The codes the record stores for index statuses and projection types: fixed here, so that
 * the enums may change without changing the format. */
static const uint8_t STATUS_CODE[] = {[IDX_ACTIVE] = 0, [IDX_CREATING] = 1, [IDX_DELETING] = 2};
static const uint8_t PROJ_CODE[] = {[KURA_PROJECTION_ALL] = 1, [KURA_PROJECTION_KEYS_ONLY] = 2,
                                    [KURA_PROJECTION_INCLUDE] = 3};

/* ---- From a request, and the key types ------------------------------------------------- */

/* Copies one index of the request into `x` (zeroed): ACTIVE at once, as DynamoDB has the
 * indexes of a new table. False when out of memory (`x` is then cleared by table_free). */
bool def_index_from_req(const kura_index_def *d, idx_kind kind, bool provisioned,
                        uint32_t id, idx_def *x)
{
    x->id = id;
    x->kind = kind;
    x->status = IDX_ACTIVE;
    x->projection = d->projection.projection_type;
    if (kind == IDX_GLOBAL && provisioned) {
        x->rcu = d->read_capacity_units;
        x->wcu = d->write_capacity_units;
    }
    if (kind == IDX_GLOBAL)
        settings_gsi_apply(x, &d->on_demand, &d->warm);
    if (!(x->name = strdup(d->index_name)))
        return false;
    for (size_t i = 0; i < d->key_schema_count; i++) {
        idx_key_attr *a = d->key_schema[i].range ? &x->range[x->nrange++] : &x->hash[x->nhash++];
        if (!(a->name = strdup(d->key_schema[i].attribute_name)))
            return false;
    }
    size_t n = d->projection.non_key_attributes_count;
    if (n && !(x->include = calloc(n, sizeof *x->include)))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!(x->include[i] = strdup(d->projection.non_key_attributes[i])))
            return false;
        x->ninclude = (uint32_t)i + 1;
    }
    return true;
}

bool def_indexes_from_req(const kura_create_table_req *r, kura_table *t)
{
    size_t nl = r->local_secondary_indexes ? r->local_secondary_indexes_count : 0;
    size_t ng = r->global_secondary_indexes ? r->global_secondary_indexes_count : 0;
    bool prov = t->billing == KURA_BILLING_PROVISIONED;
    t->next_index_id = 1;
    /* GSIs: room for all 20, so that UpdateTable can add one while readers use the array */
    if ((nl && !(t->lsi = calloc(nl, sizeof *t->lsi))) ||
        (ng && !(t->gsi = calloc(IDX_MAX_GSI, sizeof *t->gsi))))
        return false;
    for (size_t i = 0; i < nl; i++) {
        t->nlsi = (uint32_t)i + 1;
        if (!def_index_from_req(&r->local_secondary_indexes[i], IDX_LOCAL, prov,
                            t->next_index_id++, &t->lsi[i]))
            return false;
    }
    for (size_t i = 0; i < ng; i++) {
        t->ngsi = (uint32_t)i + 1;
        if (!def_index_from_req(&r->global_secondary_indexes[i], IDX_GLOBAL, prov,
                            t->next_index_id++, &t->gsi[i]))
            return false;
    }
    return true;
}

static bool attr_type(const kura_table *t, const char *name, kura_type *type_out)
{
    for (size_t i = 0; i < t->nattr_defs; i++) {
        if (!strcmp(t->attr_defs[i].attribute_name, name)) {
            *type_out = t->attr_defs[i].attribute_type;
            return true;
        }
    }
    return false;
}

static bool bind_index(const kura_table *t, idx_def *x)
{
    bool ok = true;
    for (uint32_t i = 0; i < x->nhash; i++)
        ok = ok && attr_type(t, x->hash[i].name, &x->hash[i].type);
    for (uint32_t i = 0; i < x->nrange; i++)
        ok = ok && attr_type(t, x->range[i].name, &x->range[i].type);
    return ok;
}

kura_status def_bind_schema(kura_table *t)
{
    t->ks.pk_name = t->pk_name;
    t->ks.sk_name = t->sk_name;
    attr_type(t, t->pk_name, &t->ks.pk_type);
    if (t->sk_name)
        attr_type(t, t->sk_name, &t->ks.sk_type);
    bool ok = true;
    for (uint32_t i = 0; i < t->nlsi; i++)
        ok = ok && bind_index(t, &t->lsi[i]);
    for (uint32_t i = 0; i < t->ngsi; i++)
        ok = ok && bind_index(t, &t->gsi[i]);
    return ok ? KURA_OK
              : kura_err(KURA_E_CORRUPTION, "sys: table %s: an index key attribute has no "
                                            "attribute definition", t->name);
}

/* ---- The record -------------------------------------------------------------------------- */

static bool put_double(kbuf *b, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return kbuf_put_fixed64(b, bits);
}

static bool put_str(kbuf *b, const char *s)
{
    return kbuf_put_lenbytes(b, s, strlen(s));
}

static bool put_index(kbuf *b, const idx_def *x)
{
    bool ok = kbuf_put_varint(b, x->id) && put_str(b, x->name) &&
              kbuf_put_u8(b, STATUS_CODE[x->status]) && kbuf_put_varint(b, x->nhash);
    for (uint32_t i = 0; ok && i < x->nhash; i++)
        ok = put_str(b, x->hash[i].name);
    ok = ok && kbuf_put_varint(b, x->nrange);
    for (uint32_t i = 0; ok && i < x->nrange; i++)
        ok = put_str(b, x->range[i].name);
    ok = ok && kbuf_put_u8(b, PROJ_CODE[x->projection]) && kbuf_put_varint(b, x->ninclude);
    for (uint32_t i = 0; ok && i < x->ninclude; i++)
        ok = put_str(b, x->include[i]);
    return ok && kbuf_put_varint(b, x->rcu) && kbuf_put_varint(b, x->wcu);
}

/* Version 4's stream section. */
static bool put_streams(kbuf *b, const kura_table *t)
{
    bool ok = kbuf_put_varint(b, t->nstreams);
    for (uint32_t i = 0; ok && i < t->nstreams; i++) {
        const table_stream *x = &t->streams[i];
        ok = kbuf_put_fixed64(b, x->label_ms) && kbuf_put_u8(b, (uint8_t)x->view) &&
             kbuf_put_fixed64(b, x->closed_ms);
        for (uint32_t p = 0; ok && p < t->partitions; p++) {
            ok = kbuf_put_varint(b, x->start[p].segment) &&
                 kbuf_put_varint(b, x->start[p].offset);
            if (ok && x->closed_ms)
                ok = kbuf_put_varint(b, x->end[p].segment) &&
                     kbuf_put_varint(b, x->end[p].offset);
        }
    }
    return ok;
}

kura_status def_encode(const kura_table *t, kbuf *b)
{
    bool insights = def_insights_any(t);
    bool settings = insights || def_settings_any(t);
    bool ttl = t->ttl_attr != NULL, streams = t->nstreams > 0, tags = settings || t->ntags > 0;
    bool indexes = tags || streams || ttl || t->nlsi || t->ngsi || t->next_index_id > 1;
    uint8_t version = insights  ? DEF_VERSION_INSIGHTS
                      : settings ? DEF_VERSION_SETTINGS
                      : tags    ? DEF_VERSION_TAGS
                      : streams ? DEF_VERSION_STREAMS
                      : ttl   ? DEF_VERSION_TTL
                      : indexes ? DEF_VERSION_INDEXES
                                : DEF_VERSION_1;
    bool ok = kbuf_put_u8(b, version) &&
              kbuf_put_varint(b, t->id) &&
              put_double(b, t->created) && kbuf_put_varint(b, t->partitions) &&
              kbuf_put_u8(b, (uint8_t)t->billing) && kbuf_put_varint(b, t->rcu) &&
              kbuf_put_varint(b, t->wcu) && put_double(b, t->last_ppr) &&
              kbuf_put_u8(b, t->deletion_protection) &&
              kbuf_put_lenbytes(b, t->table_id, strlen(t->table_id)) &&
              kbuf_put_lenbytes(b, t->name, strlen(t->name)) &&
              kbuf_put_varint(b, t->nattr_defs);
    for (size_t i = 0; ok && i < t->nattr_defs; i++) {
        const char *n = t->attr_defs[i].attribute_name;
        ok = kbuf_put_lenbytes(b, n, strlen(n)) &&
             kbuf_put_u8(b, (uint8_t)t->attr_defs[i].attribute_type);
    }
    ok = ok && kbuf_put_lenbytes(b, t->pk_name, strlen(t->pk_name)) &&
         kbuf_put_u8(b, t->sk_name != NULL);
    if (ok && t->sk_name)
        ok = kbuf_put_lenbytes(b, t->sk_name, strlen(t->sk_name));
    if (ok && indexes) {
        ok = kbuf_put_varint(b, t->next_index_id) && kbuf_put_varint(b, t->nlsi);
        for (uint32_t i = 0; ok && i < t->nlsi; i++)
            ok = put_index(b, &t->lsi[i]);
        uint32_t ngsi = 0; /* GSIs dropped while the table is open are not written */
        for (uint32_t i = 0; i < t->ngsi; i++)
            ngsi += t->gsi[i].status != IDX_DELETED;
        ok = ok && kbuf_put_varint(b, ngsi);
        for (uint32_t i = 0; ok && i < t->ngsi; i++)
            if (t->gsi[i].status != IDX_DELETED)
                ok = put_index(b, &t->gsi[i]);
    }
    if (ok && (streams || tags))
        ok = kbuf_put_u8(b, ttl);
    if (ok && ttl)
        ok = kbuf_put_u8(b, t->ttl_enabled) && put_str(b, t->ttl_attr) &&
             put_double(b, t->ttl_changed);
    if (ok && tags)
        ok = streams ? put_streams(b, t) : kbuf_put_varint(b, 0);
    else if (ok && streams)
        ok = put_streams(b, t);
    if (ok && tags) {
        ok = kbuf_put_varint(b, t->ntags);
        for (uint32_t i = 0; ok && i < t->ntags; i++)
            ok = put_str(b, t->tags[i].key) && put_str(b, t->tags[i].value);
    }
    if (ok && settings)
        ok = def_settings_encode(t, b);
    if (ok && insights)
        ok = def_insights_encode(t, b);
    return ok ? KURA_OK : kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
}

/* A bounds-checked reader over a definition record; `bad` latches the first failure. */
/* A name or other string of the record: up to 4096 bytes (NULL when bad). */
static char *rd_str(def_reader *r)
{
    return def_rd_str(r, 0, 4096, false);
}

static double rd_double(def_reader *r)
{
    uint64_t bits = def_rd_fixed64(r);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}


/* A stored code back to its enum value (its index in `codes`), or -1. A 0 in `codes` past
 * index 0 is a gap of the designated initializer, not a code. */
static int rd_code(def_reader *r, const uint8_t *codes, int n)
{
    uint8_t c = def_rd_u8(r);
    for (int i = 0; i < n && !r->bad; i++)
        if (codes[i] == c && (i == 0 || c != 0))
            return i;
    r->bad = true;
    return -1;
}

/* `n` (counted by *count_out, set before each, so a failure leaves what to free) key
 * attribute names into `attrs`. */
static void rd_key_attrs(def_reader *r, idx_key_attr *attrs, uint32_t *count_out, uint64_t n)
{
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        *count_out = (uint32_t)i + 1;
        attrs[i].name = rd_str(r);
    }
}

/* One index of kind `kind` into `x` (zeroed); `next_id` bounds its id. */
static void rd_index(def_reader *r, idx_kind kind, uint32_t next_id, idx_def *x)
{
    uint64_t id = def_rd_varint(r);
    x->kind = kind;
    x->id = (uint32_t)id;
    x->name = rd_str(r);
    int st = rd_code(r, STATUS_CODE, (int)(sizeof STATUS_CODE));
    x->status = st < 0 ? IDX_ACTIVE : (idx_status)st;
    uint64_t nh = def_rd_varint(r);
    bool lsi = kind == IDX_LOCAL;
    if (id < 1 || id >= next_id || nh < 1 || nh > (lsi ? 1 : IDX_MAX_KEY_ATTRS))
        r->bad = true;
    rd_key_attrs(r, x->hash, &x->nhash, nh);
    uint64_t nr = def_rd_varint(r);
    if (lsi ? nr != 1 : nr > IDX_MAX_KEY_ATTRS)
        r->bad = true;
    rd_key_attrs(r, x->range, &x->nrange, nr);
    int pt = rd_code(r, PROJ_CODE, (int)(sizeof PROJ_CODE));
    x->projection = pt <= 0 ? KURA_PROJECTION_UNSET : (kura_projection_type)pt;
    uint64_t ni = def_rd_varint(r);
    if (pt <= 0 || ni > IDX_MAX_NON_KEY || (ni > 0) != (pt == KURA_PROJECTION_INCLUDE))
        r->bad = true;
    if (!r->bad && ni && !(x->include = calloc(ni, sizeof *x->include)))
        r->bad = true;
    for (uint64_t i = 0; i < ni && !r->bad; i++) {
        x->ninclude = (uint32_t)i + 1;
        x->include[i] = rd_str(r);
    }
    x->rcu = def_rd_varint(r);
    x->wcu = def_rd_varint(r);
}


/* Version 4's stream section into t (the table frees what was read when this fails); in
 * version 5 (`may_be_empty`) its count may be 0. */
static void rd_streams(def_reader *r, kura_table *t, bool may_be_empty)
{
    uint64_t n = def_rd_varint(r);
    if (!r->bad && n == 0 && may_be_empty)
        return;
    if (r->bad || n < 1 || n > 4096 || t->partitions < 1 || t->partitions > 256 ||
        !(t->streams = calloc(n, sizeof *t->streams))) {
        r->bad = true;
        return;
    }
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        table_stream *x = &t->streams[i];
        t->nstreams = (uint32_t)i + 1;
        x->label_ms = def_rd_fixed64(r);
        uint8_t view = def_rd_u8(r);
        x->closed_ms = def_rd_fixed64(r);
        if (!kura_stream_view_type_name((kura_stream_view_type)view) ||
            (i > 0 && x->label_ms <= x[-1].label_ms) || (i + 1 < n && !x->closed_ms) ||
            !(x->start = calloc(t->partitions, sizeof *x->start)) ||
            (x->closed_ms && !(x->end = calloc(t->partitions, sizeof *x->end)))) {
            r->bad = true;
            return;
        }
        x->view = (kura_stream_view_type)view;
        for (uint32_t p = 0; p < t->partitions && !r->bad; p++) {
            x->start[p].segment = def_rd_varint(r);
            x->start[p].offset = def_rd_varint(r);
            if (x->end) {
                x->end[p].segment = def_rd_varint(r);
                x->end[p].offset = def_rd_varint(r);
            }
        }
    }
    t->stream_on = !t->streams[t->nstreams - 1].closed_ms;
}

static void rd_ttl(def_reader *r, kura_table *t)
{
    uint8_t on = def_rd_u8(r);
    t->ttl_enabled = on == 1;
    t->ttl_attr = rd_str(r);
    t->ttl_changed = rd_double(r);
    if (on > 1 || (t->ttl_attr && !t->ttl_attr[0]))
        r->bad = true;
}

/* Version 2's index section into t (the table frees what was read when this fails). */
static void rd_indexes(def_reader *r, kura_table *t)
{
    uint64_t next = def_rd_varint(r), nl = def_rd_varint(r);
    if (next < 1 || next > UINT32_MAX || nl > IDX_MAX_LSI ||
        (nl && !(t->lsi = calloc(nl, sizeof *t->lsi))))
        r->bad = true;
    t->next_index_id = (uint32_t)next;
    for (uint64_t i = 0; i < nl && !r->bad; i++) {
        t->nlsi = (uint32_t)i + 1;
        rd_index(r, IDX_LOCAL, t->next_index_id, &t->lsi[i]);
    }
    uint64_t ng = def_rd_varint(r);
    if (r->bad || ng > IDX_MAX_GSI || (ng && !(t->gsi = calloc(IDX_MAX_GSI, sizeof *t->gsi))))
        r->bad = true;
    for (uint64_t i = 0; i < ng && !r->bad; i++) {
        t->ngsi = (uint32_t)i + 1;
        rd_index(r, IDX_GLOBAL, t->next_index_id, &t->gsi[i]);
    }
    /* ids name the indexes' trees: two indexes with one id would share them */
    for (uint32_t i = 0; i < t->nlsi + t->ngsi && !r->bad; i++)
        for (uint32_t j = 0; j < i; j++)
            if ((i < t->nlsi ? t->lsi[i] : t->gsi[i - t->nlsi]).id ==
                (j < t->nlsi ? t->lsi[j] : t->gsi[j - t->nlsi]).id)
                r->bad = true;
}

/* Version 5's tag section into t: 1..50 tags (version 6, `may_be_empty`: 0..50), keys strictly
 * increasing (bytewise), each key 1..512 bytes and value 0..1024 bytes (128 and 256
 * characters of up to 4 bytes). */
static void rd_tags(def_reader *r, kura_table *t, bool may_be_empty)
{
    uint64_t n = def_rd_varint(r);
    if (!r->bad && n == 0 && may_be_empty)
        return;
    if (r->bad || n < 1 || n > 50 || !(t->tags = calloc(n, sizeof *t->tags))) {
        r->bad = true;
        return;
    }
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        t->ntags = (uint32_t)i + 1;
        char *k = rd_str(r), *v = rd_str(r);
        t->tags[i].key = k;
        t->tags[i].value = v;
        if (!k || !v || !k[0] || strlen(k) > 512 || strlen(v) > 1024 ||
            (i > 0 && strcmp(t->tags[i - 1].key, k) >= 0))
            r->bad = true;
    }
}

kura_status def_decode(const uint8_t *p, size_t len, kura_table *t)
{
    def_reader r = {p, p + len, false};
    uint8_t version = def_rd_u8(&r);
    if (version < DEF_VERSION_1 || version > DEF_VERSION_INSIGHTS)
        return kura_err(KURA_E_CORRUPTION, "sys: table definition of unknown version");
    t->id = def_rd_varint(&r);
    t->created = rd_double(&r);
    t->partitions = (uint32_t)def_rd_varint(&r);
    t->billing = (kura_billing_mode)def_rd_u8(&r);
    t->rcu = def_rd_varint(&r);
    t->wcu = def_rd_varint(&r);
    t->last_ppr = rd_double(&r);
    t->deletion_protection = def_rd_u8(&r) != 0;
    char *uuid = rd_str(&r);
    if (uuid)
        snprintf(t->table_id, sizeof t->table_id, "%s", uuid);
    free(uuid);
    t->name = rd_str(&r);
    uint64_t n = def_rd_varint(&r);
    if (!r.bad && n >= 1 && n <= TABLE_MAX_ATTR_DEFS &&
        (t->attr_defs = calloc(n, sizeof *t->attr_defs))) {
        for (uint64_t i = 0; i < n && !r.bad; i++) {
            t->attr_defs[i].attribute_name = rd_str(&r);
            t->attr_defs[i].attribute_type = (kura_type)def_rd_u8(&r);
            t->nattr_defs = i + 1;
        }
    } else {
        r.bad = true;
    }
    t->pk_name = rd_str(&r);
    if (def_rd_u8(&r))
        t->sk_name = rd_str(&r);
    t->next_index_id = 1;
    if (version >= DEF_VERSION_INDEXES)
        rd_indexes(&r, t);
    if (version == DEF_VERSION_TTL)
        rd_ttl(&r, t);
    if (version >= DEF_VERSION_STREAMS) {
        uint8_t ttl = def_rd_u8(&r);
        if (ttl > 1)
            r.bad = true;
        else if (ttl)
            rd_ttl(&r, t);
        rd_streams(&r, t, version >= DEF_VERSION_TAGS);
    }
    if (version >= DEF_VERSION_TAGS)
        rd_tags(&r, t, version >= DEF_VERSION_SETTINGS);
    if (version >= DEF_VERSION_SETTINGS && !r.bad &&
        !def_settings_decode(&r.p, r.end, t, version >= DEF_VERSION_INSIGHTS))
        r.bad = true;
    if (version >= DEF_VERSION_INSIGHTS && !r.bad && !def_insights_decode(&r.p, r.end, t))
        r.bad = true;
    if (r.bad || r.p != r.end || !t->pk_name)
        return kura_err(KURA_E_CORRUPTION, "sys: table definition of %zu bytes is malformed",
                        len);
    return KURA_OK;
}

/*
 * table.c - This file contains the tables of a database at run time: loading their
 * definitions at open, pinning them for an operation, the per-item stripe locks, reading and
 * writing items, and DescribeTable's description with its secondary indexes (its ItemCount
 * and TableSizeBytes: table_count.c).
 *
 * Definitions are created, changed and removed by table_ddl.c; their encoding is
 * docs/format/catalog.md ("Tables"). See engine/table.h for the lifetime rules.
 */
#include "engine/table.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/collection.h"
#include "engine/stream_table.h"
#include "engine/tcap.h"
#include "engine/table_int.h"
#include "util/hash.h"
#include "util/status.h"

kura_table *table_find_locked(kura_db *db, const char *name)
{
    for (size_t i = 0; i < db->ntables; i++)
        if (!strcmp(db->tables[i]->name, name))
            return db->tables[i];
    return NULL;
}

kura_status table_acquire(kura_db *db, const char *name, kura_table **t_out)
{
    kmutex_lock(&db->tables_mu);
    kura_table *t = name ? table_find_locked(db, name) : NULL;
    if (t)
        t->refs++;
    kmutex_unlock(&db->tables_mu);
    if (!t)
        return kura_err(KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found");
    *t_out = t;
    return KURA_OK;
}

kura_status table_acquire_named(kura_db *db, const char *name, kura_table **t_out)
{
    if (table_acquire(db, name, t_out) == KURA_OK)
        return KURA_OK;
    return kura_err(KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found: Table: %s not found",
                    name ? name : "(null)");
}

void table_release(kura_table *t)
{
    if (!t)
        return;
    kura_db *db = t->tree->db;
    kmutex_lock(&db->tables_mu);
    if (--t->refs == 0)
        kcond_broadcast(&db->tables_cv);
    kmutex_unlock(&db->tables_mu);
}

kmutex *table_item_lock(kura_table *t, const uint8_t *skey, size_t len)
{
    return &t->item_locks[kura_hash64(skey, len) % TABLE_LOCK_STRIPES];
}

void table_lock_items(kura_table *t)
{
    for (int i = 0; i < TABLE_LOCK_STRIPES; i++)
        kmutex_lock(&t->item_locks[i]);
}

void table_unlock_items(kura_table *t)
{
    for (int i = TABLE_LOCK_STRIPES; i-- > 0;)
        kmutex_unlock(&t->item_locks[i]);
}

kura_status table_read_encoded(kura_table *t, const kura_read_options *ro, const uint8_t *skey,
                               size_t len, kbuf *enc)
{
    kura_status s = tree_get_into(t->tree, ro, skey, len, enc);
    if (s == KURA_E_NOT_FOUND) {
        kbuf_clear(enc);
        return KURA_OK;
    }
    if (s == KURA_OK && (s = val_check_encoded(enc->data, enc->len)) == KURA_E_CORRUPTION)
        return kura_err(s, "table %s (tree tbl-%llu): stored item: %s", t->name,
                        (unsigned long long)t->id, kura_last_error());
    return s;
}

kura_status table_read(kura_table *t, const kura_read_options *ro, const uint8_t *skey,
                       size_t len, kura_value *item, bool *found_out)
{
    size_t stored;
    return table_read_stored(t, ro, skey, len, item, found_out, &stored);
}

kura_status table_read_stored(kura_table *t, const kura_read_options *ro, const uint8_t *skey,
                              size_t len, kura_value *item, bool *found_out, size_t *stored_out)
{
    void *val = NULL;
    size_t vlen = 0;
    kura_status s = kura_get(t->tree, ro, skey, len, &val, &vlen);
    *stored_out = s == KURA_OK ? vlen : 0;
    if (s == KURA_E_NOT_FOUND) {
        *found_out = false;
        return KURA_OK;
    }
    if (s != KURA_OK)
        return s;
    s = val_decode(val, vlen, item);
    free(val);
    if (s == KURA_E_CORRUPTION)
        return kura_err(s, "table %s (tree tbl-%llu): stored item: %s", t->name,
                        (unsigned long long)t->id, kura_last_error());
    if (s == KURA_OK)
        *found_out = true;
    return s;
}

/* One reusable encoding buffer per thread keeps item writes free of allocation (kura_put
 * copies the bytes); freed at thread exit, and dropped after an item larger than
 * ENC_BUF_KEEP so that one large item does not pin its size for the thread's life. */
enum { ENC_BUF_KEEP = 16 * 1024 };
static pthread_key_t enc_key;
static pthread_once_t enc_once = PTHREAD_ONCE_INIT;
static bool enc_key_ok;

static void enc_buf_free(void *p)
{
    kbuf_free(p);
    free(p);
}

static void enc_key_make(void)
{
    enc_key_ok = pthread_key_create(&enc_key, enc_buf_free) == 0;
}

/* The thread's buffer, empty; NULL when there is none (the caller uses a local one). */
static kbuf *enc_buf(void)
{
    pthread_once(&enc_once, enc_key_make);
    if (!enc_key_ok)
        return NULL;
    kbuf *b = pthread_getspecific(enc_key);
    if (!b && (b = calloc(1, sizeof *b)) != NULL && pthread_setspecific(enc_key, b) != 0) {
        free(b);
        b = NULL;
    }
    if (b)
        kbuf_clear(b);
    return b;
}

kura_status table_write_image(kura_table *t, const uint8_t *skey, size_t len,
                              const kura_value *item, const uint8_t *old_enc, size_t old_len)
{
    bool stream = atomic_load_explicit(&t->stream_on, memory_order_relaxed);
    kbuf local = KBUF_INIT, *enc = enc_buf();
    if (!enc)
        enc = &local;
    kura_status s = item ? val_encode(item, enc) : KURA_OK;
    if (s == KURA_OK)
        s = tree_write_imaged(t->tree, skey, len, item ? enc->data : NULL, enc->len, old_enc,
                              old_len, stream ? kwall_ms() : 0);
    if (enc == &local || enc->cap > ENC_BUF_KEEP)
        kbuf_free(enc);
    if (s == KURA_OK)
        atomic_fetch_add_explicit(&t->writes, 1, memory_order_relaxed);
    return s;
}

/* A write with the old item's image (table_needs_images), encoded here. */
static kura_status table_write_imaged(kura_table *t, const uint8_t *skey, size_t len,
                                      const kura_value *item, const kura_value *old)
{
    kbuf oenc = KBUF_INIT;
    kura_status s = old ? val_encode(old, &oenc) : KURA_OK;
    if (s == KURA_OK)
        s = table_write_image(t, skey, len, item, oenc.data, oenc.len);
    kbuf_free(&oenc);
    return s;
}

kura_status table_write(kura_table *t, const uint8_t *skey, size_t len, const kura_value *item,
                        const kura_value *old)
{
    if (table_needs_images(t))
        return table_write_imaged(t, skey, len, item, old); /* (counts the write) */
    kura_status s;
    if (!item) {
        s = kura_delete(t->tree, NULL, skey, len);
    } else {
        kbuf local = KBUF_INIT, *b = enc_buf();
        if (!b)
            b = &local;
        s = val_encode(item, b);
        if (s == KURA_OK)
            s = kura_put(t->tree, NULL, skey, len, b->data, b->len);
        if (b == &local || b->cap > ENC_BUF_KEEP)
            kbuf_free(b);
    }
    if (s == KURA_OK)
        atomic_fetch_add_explicit(&t->writes, 1, memory_order_relaxed);
    return s;
}

/* One index's description (DescribeTable's LocalSecondaryIndexes / GlobalSecondaryIndexes
 * entry) into `o` (zeroed). False when out of memory; `o` is then freed with the rest. */
typedef struct index_figs {
    uint64_t items[IDX_MAX_LSI + IDX_MAX_GSI], bytes[IDX_MAX_LSI + IDX_MAX_GSI];
} index_figs;

static bool describe_index(const kura_table *t, const char *table_arn, const idx_def *x,
                           const index_figs *f, uint32_t pos, kura_index_description *o)
{
    o->item_count = f->items[pos];
    o->index_size_bytes = f->bytes[pos];
    static const char *const status[] = {[IDX_ACTIVE] = "ACTIVE", [IDX_CREATING] = "CREATING",
                                         [IDX_DELETING] = "DELETING"};
    o->index_status = status[x->status];
    o->backfilling = x->status == IDX_CREATING;
    o->projection_type = x->projection;
    if (x->kind == IDX_GLOBAL && t->billing == KURA_BILLING_PROVISIONED) {
        o->read_capacity_units = x->rcu;
        o->write_capacity_units = x->wcu;
    }
    if (x->kind == IDX_GLOBAL)
        settings_describe_gsi(t, x, o);
    if (!(o->index_name = strdup(x->name)) ||
        asprintf(&o->index_arn, "%s/index/%s", table_arn, x->name) < 0) {
        o->index_arn = NULL;
        return false;
    }
    uint32_t nk = x->nhash + x->nrange;
    if (!(o->key_schema = calloc(nk, sizeof *o->key_schema)))
        return false;
    for (uint32_t i = 0; i < nk; i++) {
        const idx_key_attr *a = i < x->nhash ? &x->hash[i] : &x->range[i - x->nhash];
        o->key_schema[i].range = i >= x->nhash;
        o->key_schema_count = i + 1;
        if (!(o->key_schema[i].attribute_name = strdup(a->name)))
            return false;
    }
    if (x->ninclude && !(o->non_key_attributes = calloc(x->ninclude, sizeof(char *))))
        return false;
    for (uint32_t i = 0; i < x->ninclude; i++) {
        o->non_key_attributes_count = i + 1;
        if (!(o->non_key_attributes[i] = strdup(x->include[i])))
            return false;
    }
    return true;
}

/* The table's indexes into out (billing already set). Under tables_mu: UpdateTable changes
 * the billing mode, which decides the GSIs' capacity units. */
static bool describe_indexes(const kura_table *t, const index_figs *f,
                             kura_table_description *out)
{
    size_t xsize = sizeof(kura_index_description);
    if (t->nlsi && !(out->local_secondary_indexes = calloc(t->nlsi, xsize)))
        return false;
    for (uint32_t i = 0; i < t->nlsi; i++) {
        out->local_secondary_indexes_count = i + 1;
        if (!describe_index(t, out->table_arn, &t->lsi[i], f, i, &out->local_secondary_indexes[i]))
            return false;
    }
    if (t->ngsi && !(out->global_secondary_indexes = calloc(t->ngsi, xsize)))
        return false;
    for (uint32_t i = 0; i < t->ngsi; i++) {
        if (t->gsi[i].status == IDX_DELETED)
            continue; /* dropped by UpdateTable while the table is open */
        size_t k = out->global_secondary_indexes_count++;
        if (!describe_index(t, out->table_arn, &t->gsi[i], f, t->nlsi + i,
                            &out->global_secondary_indexes[k]))
            return false;
    }
    if (out->global_secondary_indexes_count == 0) {
        free(out->global_secondary_indexes);
        out->global_secondary_indexes = NULL;
    }
    return true;
}

kura_status table_describe(kura_db *db, kura_table *t, kura_table_description *d)
{
    kura_table_description out = {0};
    kura_status s = table_count(t, &out.item_count, &out.table_size_bytes);
    /* the indexes' figures of that count, read here: count_mu is taken before tables_mu */
    index_figs figs = {{0}, {0}};
    for (uint32_t i = 0; s == KURA_OK && i < IDX_MAX_LSI + IDX_MAX_GSI; i++)
        s = table_index_count(t, i, &figs.items[i], &figs.bytes[i]);
    if (s != KURA_OK)
        return s;
    char arn[512];
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    arn_table(&sc, t->name, arn, sizeof arn);
    out.table_name = strdup(t->name);
    out.table_arn = strdup(arn);
    out.table_id = strdup(t->table_id);
    out.table_status = "ACTIVE";
    kmutex_lock(&db->tables_mu); /* UpdateTable may add attribute definitions */
    out.creation_date_time = t->created;
    out.partitions = t->partitions;
    out.attribute_definitions = calloc(t->nattr_defs, sizeof *out.attribute_definitions);
    out.key_schema = calloc(2, sizeof *out.key_schema);
    bool ok = out.table_name && out.table_arn && out.table_id && out.attribute_definitions &&
              out.key_schema;
    for (size_t i = 0; ok && i < t->nattr_defs; i++) {
        out.attribute_definitions[i].attribute_type = t->attr_defs[i].attribute_type;
        ok = (out.attribute_definitions[i].attribute_name =
                  strdup(t->attr_defs[i].attribute_name)) != NULL;
        out.attribute_definitions_count = i + 1;
    }
    kmutex_unlock(&db->tables_mu);
    if (ok) {
        out.key_schema[0].attribute_name = strdup(t->pk_name);
        out.key_schema_count = 1;
        ok = out.key_schema[0].attribute_name != NULL;
    }
    if (ok && t->sk_name) {
        out.key_schema[1].attribute_name = strdup(t->sk_name);
        out.key_schema[1].range = true;
        out.key_schema_count = 2;
        ok = out.key_schema[1].attribute_name != NULL;
    }
    kmutex_lock(&db->tables_mu);
    out.billing_mode = t->billing;
    out.read_capacity_units = t->rcu;
    out.write_capacity_units = t->wcu;
    out.last_update_to_pay_per_request_date_time = t->last_ppr;
    out.deletion_protection_enabled = t->deletion_protection;
    ok = ok && describe_indexes(t, &figs, &out) && table_stream_describe(t, &out) &&
         settings_describe(t, &out);
    kmutex_unlock(&db->tables_mu);
    if (!ok) {
        kura_table_description_free(&out);
        return kura_err(KURA_E_NOMEM, "DescribeTable %s: out of memory", t->name);
    }
    *d = out;
    return KURA_OK;
}

static void index_descriptions_free(kura_index_description *xs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kura_index_description *x = &xs[i];
        free(x->index_name);
        free(x->index_arn);
        for (size_t j = 0; j < x->key_schema_count; j++)
            free((char *)x->key_schema[j].attribute_name);
        free(x->key_schema);
        kura_free_strings(x->non_key_attributes, x->non_key_attributes_count);
    }
    free(xs);
}

void kura_table_description_free(kura_table_description *d)
{
    if (!d)
        return;
    free(d->table_name);
    free(d->table_arn);
    free(d->table_id);
    for (size_t i = 0; i < d->attribute_definitions_count; i++)
        free((char *)d->attribute_definitions[i].attribute_name);
    free(d->attribute_definitions);
    for (size_t i = 0; i < d->key_schema_count; i++)
        free((char *)d->key_schema[i].attribute_name);
    free(d->key_schema);
    index_descriptions_free(d->local_secondary_indexes, d->local_secondary_indexes_count);
    index_descriptions_free(d->global_secondary_indexes, d->global_secondary_indexes_count);
    free(d->latest_stream_label);
    free(d->latest_stream_arn);
    free(d->kms_master_key_arn);
    free(d->kms_master_key_id);
    memset(d, 0, sizeof *d);
}

kura_status kura_describe_table(kura_db *db, const char *table_name,
                                kura_table_description *desc_out)
{
    kura_status s = table_name_check(table_name, "tableName");
    if (s != KURA_OK)
        return s;
    kura_table *t;
    if ((s = table_acquire_named(db, table_name, &t)) != KURA_OK)
        return s;
    s = table_describe(db, t, desc_out);
    table_release(t);
    return s;
}

void table_free(kura_table *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->nlsi; i++)
        idx_def_clear(&t->lsi[i]);
    free(t->lsi);
    for (uint32_t i = 0; i < t->ngsi; i++)
        idx_def_clear(&t->gsi[i]);
    free(t->gsi);
    for (int i = 0; i < TABLE_LOCK_STRIPES; i++)
        kmutex_destroy(&t->item_locks[i]);
    kmutex_destroy(&t->count_mu);
    coll_cache_free(t->colls);
    tcap_free(t->cap);
    for (size_t i = 0; i < t->nattr_defs; i++)
        free((char *)t->attr_defs[i].attribute_name);
    free(t->attr_defs);
    free(t->pk_name);
    free(t->sk_name);
    free(t->ttl_attr);
    free(t->kms_key);
    free(t->policy);
    tags_free(t->tags, t->ntags);
    table_streams_free(t);
    free(t->name);
    free(t);
}

kura_table *table_new(void)
{
    kura_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (!(t->colls = coll_cache_new(0)) || !(t->cap = tcap_new())) {
        coll_cache_free(t->colls);
        free(t);
        return NULL;
    }
    for (int i = 0; i < TABLE_LOCK_STRIPES; i++)
        kmutex_init(&t->item_locks[i]);
    kmutex_init(&t->count_mu);
    atomic_init(&t->writes, 0);
    atomic_init(&t->dropped, false);
    return t;
}

kura_status table_list_add_locked(kura_db *db, kura_table *t)
{
    if (db->ntables == db->tables_cap) {
        size_t cap = db->tables_cap ? db->tables_cap * 2 : 8;
        kura_table **nt = realloc(db->tables, cap * sizeof *nt);
        if (!nt)
            return kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
        db->tables = nt;
        db->tables_cap = cap;
    }
    db->tables[db->ntables++] = t;
    tcap_bind(t->cap, &db->opts);
    tcap_configure(t);
    return KURA_OK;
}

void table_list_remove_locked(kura_db *db, kura_table *t)
{
    for (size_t i = 0; i < db->ntables; i++) {
        if (db->tables[i] == t) {
            db->tables[i] = db->tables[--db->ntables];
            return;
        }
    }
}

void tables_free(kura_db *db)
{
    for (size_t i = 0; i < db->ntables; i++)
        table_free(db->tables[i]);
    free(db->tables);
    db->tables = NULL;
    db->ntables = db->tables_cap = 0;
}

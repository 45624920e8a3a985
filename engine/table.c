/*
 * table.c - the tables of a database at run time: loading their definitions at open, pinning
 * them for an operation, the per-item stripe locks, reading and writing items, and
 * DescribeTable's description (its ItemCount and TableSizeBytes: table_count.c).
 *
 * Definitions are created, changed and removed by table_ddl.c; their encoding is
 * docs/format/catalog.md ("Tables"). See engine/table.h for the lifetime rules.
 */
#include "engine/table.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    void *val = NULL;
    size_t vlen = 0;
    kura_status s = kura_get(t->tree, ro, skey, len, &val, &vlen);
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

kura_status table_write(kura_table *t, const uint8_t *skey, size_t len, const kura_value *item)
{
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

kura_status table_describe(kura_db *db, kura_table *t, kura_table_description *d)
{
    kura_table_description out = {0};
    kura_status s = table_count(t, &out.item_count, &out.table_size_bytes);
    if (s != KURA_OK)
        return s;
    char arn[512];
    snprintf(arn, sizeof arn, "arn:aws:dynamodb:ddblocal:000000000000:table/%s", t->name);
    out.table_name = strdup(t->name);
    out.table_arn = strdup(arn);
    out.table_id = strdup(t->table_id);
    out.table_status = "ACTIVE";
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
    kmutex_unlock(&db->tables_mu);
    if (!ok) {
        kura_table_description_free(&out);
        return kura_err(KURA_E_NOMEM, "DescribeTable %s: out of memory", t->name);
    }
    *d = out;
    return KURA_OK;
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
    memset(d, 0, sizeof *d);
}

kura_status kura_describe_table(kura_db *db, const char *table_name,
                                kura_table_description *desc_out)
{
    kura_status s = table_name_check(table_name, "tableName");
    if (s != KURA_OK)
        return s;
    kura_table *t;
    if (table_acquire(db, table_name, &t) != KURA_OK)
        return kura_err(KURA_E_RESOURCE_NOT_FOUND,
                        "Requested resource not found: Table: %s not found", table_name);
    s = table_describe(db, t, desc_out);
    table_release(t);
    return s;
}

void table_free(kura_table *t)
{
    if (!t)
        return;
    for (int i = 0; i < TABLE_LOCK_STRIPES; i++)
        kmutex_destroy(&t->item_locks[i]);
    kmutex_destroy(&t->count_mu);
    for (size_t i = 0; i < t->nattr_defs; i++)
        free((char *)t->attr_defs[i].attribute_name);
    free(t->attr_defs);
    free(t->pk_name);
    free(t->sk_name);
    free(t->name);
    free(t);
}

kura_table *table_new(void)
{
    kura_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
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

/*
 * table_ddl.c - table definitions: CreateTable, DeleteTable, UpdateTable, ListTables, and
 * loading the definitions at open.
 *
 * A definition is one record of the system tree "sys" (key "table/<name>", encoding in
 * docs/format/catalog.md, "Tables"), written with a synchronous write whatever the database's
 * durability, so a table that CreateTable acknowledged survives any crash. The table's data
 * tree "tbl-<id>" is created before its definition is written and dropped after it is deleted;
 * tables_load() drops the trees a crash orphaned in between. Ids are never reused, so a table
 * re-created under an old name never sees the old table's files.
 *
 * DDL is serialised by tables_mu, which it holds across the tree creation and the definition
 * write (milliseconds); item operations only take it to pin a table.
 *
 * Secondary indexes: CreateTable checks, stores and describes LocalSecondaryIndexes and
 * GlobalSecondaryIndexes; a table with indexes gets its index trees and the index layer's
 * runtime (engine/table_index.c) once its definition is durable, and its own tree keeps its
 * WAL for them (TREE_RETAIN_WALS). Index trees "idx-<table id>-<index id>" that no definition
 * names are orphans of a crash, dropped at open like tables' trees.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "engine/stream_table.h"
#include "engine/table_index.h"
#include "engine/table_int.h"
#include "engine/tcap.h"
#include "util/status.h"


static const char SYS_TREE[] = "sys";
static const char DEF_PREFIX[] = "table/";

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)(ts.tv_nsec / 1000000) / 1000.0;
}

static void make_uuid(char out[40])
{
    uint8_t r[16] = {0};
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        uint64_t t = know_ns();
        memcpy(r, &t, sizeof t);
    }
    r[6] = (uint8_t)((r[6] & 0x0f) | 0x40);
    r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);
    snprintf(out, 40, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
             r[13], r[14], r[15]);
}

kura_status def_write(kura_db *db, const kura_table *t, bool remove)
{
    kbuf key = KBUF_INIT, val = KBUF_INIT;
    kura_status s = kbuf_append(&key, DEF_PREFIX, strlen(DEF_PREFIX)) &&
                            kbuf_append(&key, t->name, strlen(t->name))
                        ? KURA_OK
                        : kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
    if (s == KURA_OK && !remove)
        s = def_encode(t, &val);
    kura_write_options wo;
    kura_write_options_init(&wo);
    wo.durability = KURA_SYNC;
    if (s == KURA_OK)
        s = remove ? kura_delete(db->sys, &wo, key.data, key.len)
                   : kura_put(db->sys, &wo, key.data, key.len, val.data, val.len);
    if (s == KURA_OK && !remove) /* the throttle follows every change of the settings */
        tcap_configure(t);
    kbuf_free(&key);
    kbuf_free(&val);
    return s;
}

/* ---- Loading -------------------------------------------------------------------------- */

static kura_tree *tree_by_name(kura_db *db, const char *name)
{
    kura_tree *found = NULL;
    kmutex_lock(&db->mu);
    for (size_t i = 0; i < db->ntrees && !found; i++)
        if (!strcmp(db->trees[i]->name, name))
            found = db->trees[i];
    kmutex_unlock(&db->mu);
    return found;
}

static kura_status load_one(kura_db *db, const void *v, size_t vlen)
{
    kura_table *t = table_new();
    if (!t)
        return kura_err(KURA_E_NOMEM, "loading tables: out of memory");
    kura_status s = def_decode(v, vlen, t);
    char tree_name[64];
    if (s == KURA_OK) {
        snprintf(tree_name, sizeof tree_name, "tbl-%" PRIu64, t->id);
        t->tree = tree_by_name(db, tree_name);
        if (!t->tree)
            s = kura_err(KURA_E_CORRUPTION, "table %s: its tree %s is missing", t->name,
                         tree_name);
    }
    if (s == KURA_OK)
        s = def_bind_schema(t);
    if (s == KURA_OK)
        s = table_index_open(db, t, false); /* the indexes catch up with the WAL first */
    if (s == KURA_OK && (s = table_index_upgrade(db, t)) != KURA_OK)
        table_index_close(t); /* indexes of an earlier kura: rebuilt before anyone reads */
    if (s == KURA_OK && (s = table_list_add_locked(db, t)) != KURA_OK)
        table_index_close(t);
    if (s == KURA_OK && t->id >= db->next_table_id)
        db->next_table_id = t->id + 1;
    if (s != KURA_OK)
        table_free(t);
    return s;
}

/* Whether the index tree idx-<id>-<index id> belongs to a table and index that exist. */
static bool index_tree_used(kura_db *db, uint64_t id, unsigned index_id)
{
    for (size_t j = 0; j < db->ntables; j++) {
        kura_table *t = db->tables[j];
        for (uint32_t i = 0; t->id == id && i < table_nindexes(t); i++)
            if (table_index_def(t, i)->id == index_id)
                return true;
    }
    return false;
}

/* Drops the trees named tbl-<id> and idx-<id>-<index id> that no definition names (see the
 * top of this file). */
static kura_status drop_orphans(kura_db *db)
{
    for (;;) {
        kura_tree *orphan = NULL;
        kmutex_lock(&db->mu);
        for (size_t i = 0; i < db->ntrees && !orphan; i++) {
            uint64_t id;
            unsigned index_id;
            if (sscanf(db->trees[i]->name, "idx-%" SCNu64 "-%u", &id, &index_id) == 2) {
                if (!index_tree_used(db, id, index_id))
                    orphan = db->trees[i];
                continue;
            }
            if (sscanf(db->trees[i]->name, "tbl-%" SCNu64, &id) != 1)
                continue;
            bool used = false;
            for (size_t j = 0; j < db->ntables && !used; j++)
                used = db->tables[j]->tree == db->trees[i];
            if (!used)
                orphan = db->trees[i];
            if (id >= db->next_table_id)
                db->next_table_id = id + 1;
        }
        kmutex_unlock(&db->mu);
        if (!orphan)
            return KURA_OK;
        kura_status s = kura_tree_drop(db, orphan);
        if (s != KURA_OK)
            return s;
    }
}

/* The system tree is created with the first table, so a database used only through the raw
 * key/value API has no trace of the item layer. */
static kura_status sys_open(kura_db *db)
{
    kura_tree_options to = {.partitions = 1, .hash_prefixed_keys = false};
    return db->sys ? KURA_OK : kura_tree_open(db, SYS_TREE, &to, &db->sys);
}

kura_status tables_load(kura_db *db)
{
    db->next_table_id = 1;
    db->sys = tree_by_name(db, SYS_TREE);
    if (!db->sys)
        return drop_orphans(db);
    kura_status s;
    kura_iter *it = NULL;
    if ((s = kura_iter_new(db->sys, NULL, &it)) != KURA_OK)
        return s;
    size_t plen = strlen(DEF_PREFIX);
    for (kura_iter_seek(it, DEF_PREFIX, plen); kura_iter_valid(it) && s == KURA_OK;
         kura_iter_next(it)) {
        size_t klen, vlen;
        const void *k = kura_iter_key(it, &klen);
        if (klen < plen || memcmp(k, DEF_PREFIX, plen) != 0)
            break;
        const void *v = kura_iter_value(it, &vlen);
        s = load_one(db, v, vlen);
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    kura_iter_free(it);
    return s == KURA_OK ? drop_orphans(db) : s;
}

/* ---- CreateTable ------------------------------------------------------------------------ */

static kura_status table_from_req(const kura_create_table_req *r, uint32_t partitions,
                                  kura_table **t_out)
{
    kura_table *t = table_new();
    bool ok = t && (t->name = strdup(r->table_name)) &&
              (t->pk_name = strdup(r->key_schema[0].attribute_name)) &&
              (r->key_schema_count < 2 ||
               (t->sk_name = strdup(r->key_schema[1].attribute_name))) &&
              (t->attr_defs = calloc(r->attribute_definitions_count, sizeof *t->attr_defs));
    for (size_t i = 0; ok && i < r->attribute_definitions_count; i++) {
        t->attr_defs[i].attribute_type = r->attribute_definitions[i].attribute_type;
        ok = (t->attr_defs[i].attribute_name =
                  strdup(r->attribute_definitions[i].attribute_name)) != NULL;
        t->nattr_defs = i + 1;
    }
    if (ok) {
        t->billing = r->billing_mode == KURA_BILLING_PAY_PER_REQUEST
                         ? KURA_BILLING_PAY_PER_REQUEST
                         : KURA_BILLING_PROVISIONED;
        ok = def_indexes_from_req(r, t) && (!r->tags || tags_set(t, r->tags, r->tags_count)) &&
             settings_from_create(r, t);
    }
    if (!ok) {
        table_free(t);
        return kura_err(KURA_E_NOMEM, "CreateTable: out of memory");
    }
    t->partitions = partitions;
    t->created = now_seconds();
    if (t->billing == KURA_BILLING_PROVISIONED) {
        t->rcu = r->read_capacity_units;
        t->wcu = r->write_capacity_units;
    } else {
        t->last_ppr = t->created;
    }
    t->deletion_protection = r->deletion_protection_enabled;
    make_uuid(t->table_id);
    kura_status s = def_bind_schema(t); /* cannot fail: the request was checked */
    if (s != KURA_OK) {
        table_free(t);
        return s;
    }
    *t_out = t;
    return KURA_OK;
}

kura_status kura_create_table(kura_db *db, const kura_create_table_req *req,
                              kura_table_description *desc_out)
{
    kura_status s = table_name_check(req->table_name, "tableName");
    if (s == KURA_OK)
        s = table_check_schema(req);
    if (s == KURA_OK)
        s = table_check_billing(req);
    if (s == KURA_OK)
        s = table_check_indexes(req);
    if (s == KURA_OK && req->stream_specification.given)
        s = stream_spec_check(&req->stream_specification);
    if (s == KURA_OK && req->tags && req->tags_count)
        s = tags_check(req->tags, req->tags_count);
    if (s == KURA_OK)
        s = settings_check_create(req);
    bool stream = req->stream_specification.given && req->stream_specification.stream_enabled;
    uint32_t parts = req->partitions ? req->partitions : db->opts.default_partitions;
    if (s == KURA_OK && (parts < 1 || parts > 256))
        s = kura_err(KURA_E_INVALID, "partitions must be 1..256, not %u", parts);
    if (s != KURA_OK)
        return s;
    kura_table *t = NULL;
    kmutex_lock(&db->tables_mu);
    if (table_find_locked(db, req->table_name)) {
        kmutex_unlock(&db->tables_mu);
        return kura_err(KURA_E_RESOURCE_IN_USE, "Table already exists: %s", req->table_name);
    }
    s = sys_open(db);
    if (s == KURA_OK)
        s = table_from_req(req, parts, &t);
    if (s == KURA_OK) {
        t->id = db->next_table_id++;
        char tree_name[64];
        snprintf(tree_name, sizeof tree_name, "tbl-%" PRIu64, t->id);
        kura_tree_options to = {.partitions = parts, .hash_prefixed_keys = true};
        uint32_t flags = (table_has_indexes(t) ? TREE_RETAIN_WALS : 0) | (stream ? TREE_STREAM : 0);
        s = tree_open_flags(db, tree_name, &to, flags, &t->tree);
    }
    if (s == KURA_OK && stream &&
        (s = table_stream_create(db, t, req->stream_specification.stream_view_type)) != KURA_OK) {
        kura_tree_drop(db, t->tree);
        t->tree = NULL;
    }
    if (s == KURA_OK && (s = def_write(db, t, false)) != KURA_OK) {
        kura_tree_drop(db, t->tree); /* a failure here leaves an orphan, dropped at open */
        t->tree = NULL;
    }
    /* the index trees; if they cannot be made, the table is not created after all */
    if (s == KURA_OK && (s = table_index_open(db, t, true)) != KURA_OK) {
        kura_status cause = s;
        char msg[512];
        snprintf(msg, sizeof msg, "%s", kura_last_error());
        def_write(db, t, true);
        table_index_drop(db, t);
        kura_tree_drop(db, t->tree); /* failures leave orphans, dropped at open */
        t->tree = NULL;
        s = kura_err(cause, "%s", msg);
    }
    /* adding to the list only fails for memory; the table then exists on disk and is loaded
     * at the next open */
    bool listed = s == KURA_OK && (s = table_list_add_locked(db, t)) == KURA_OK;
    if (listed)
        t->refs++;
    kmutex_unlock(&db->tables_mu);
    if (!listed) {
        table_free(t);
        return s;
    }
    s = table_describe(db, t, desc_out);
    table_release(t);
    return s;
}

/* ---- DeleteTable, UpdateTable, ListTables --------------------------------------------- */

kura_status kura_delete_table(kura_db *db, const char *table_name,
                              kura_table_description *desc_out)
{
    kura_status s = table_name_check(table_name, "tableName");
    if (s != KURA_OK)
        return s;
    kura_table *t;
    if ((s = table_acquire_named(db, table_name, &t)) != KURA_OK)
        return s;
    kura_table_description d;
    if ((s = table_describe(db, t, &d)) != KURA_OK) {
        table_release(t);
        return s;
    }
    d.table_status = "DELETING";
    kmutex_lock(&db->tables_mu);
    if (t->deletion_protection) {
        s = kura_err(KURA_E_INVALID, "Resource cannot be deleted as it is currently protected "
                                     "against deletion. Disable deletion protection first.");
    } else if (table_find_locked(db, table_name) != t) {
        s = kura_err(KURA_E_RESOURCE_NOT_FOUND,
                     "Requested resource not found: Table: %s not found", table_name);
    } else if ((s = def_write(db, t, true)) == KURA_OK) {
        table_list_remove_locked(db, t);
        atomic_store(&t->dropped, true); /* a background count gives up */
        t->refs--;
        while (t->refs > 0)
            kcond_wait(&db->tables_cv, &db->tables_mu);
    }
    kmutex_unlock(&db->tables_mu);
    if (s != KURA_OK) {
        table_release(t);
        kura_table_description_free(&d);
        return s;
    }
    /* the definition is gone: a failed drop leaves an orphan tree, dropped at the next open */
    table_index_drop(db, t);
    kura_tree_drop(db, t->tree);
    table_free(t);
    *desc_out = d;
    return KURA_OK;
}

kura_status kura_update_table(kura_db *db, const kura_update_table_req *req,
                              kura_table_description *desc_out)
{
    kura_status s = table_name_check(req->table_name, "tableName");
    if (s != KURA_OK)
        return s;
    bool others = req->has_deletion_protection || req->table_class != KURA_TABLE_CLASS_UNSET ||
                  req->on_demand.given || req->warm.given || req->sse.given;
    bool settings = req->has_provisioned_throughput || req->billing_mode != KURA_BILLING_UNSET ||
                    others;
    const kura_stream_specification *sp = &req->stream_specification;
    if (!settings && req->global_secondary_index_updates_count == 0 && !sp->given)
        return kura_err(KURA_E_INVALID,
                        "At least one of ProvisionedThroughput, BillingMode, "
                        "UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification "
                        "or ReplicaUpdates is required");
    if (req->billing_mode == KURA_BILLING_PROVISIONED && !req->has_provisioned_throughput)
        return kura_err(KURA_E_INVALID, "One or more parameter values were invalid: "
                        "ProvisionedThroughput must be specified when BillingMode is "
                        "PROVISIONED");
    if (req->has_provisioned_throughput && req->read_capacity_units > TABLE_CAPACITY_MAX)
        return kura_err(KURA_E_INVALID, "Given value %" PRIu64
                        " for ReadCapacityUnits is out of bounds", req->read_capacity_units);
    if (req->has_provisioned_throughput && req->write_capacity_units > TABLE_CAPACITY_MAX)
        return kura_err(KURA_E_INVALID, "Given value %" PRIu64
                        " for WriteCapacityUnits is out of bounds", req->write_capacity_units);
    kura_table *t;
    if ((s = table_acquire_named(db, req->table_name, &t)) != KURA_OK)
        return s;
    kmutex_lock(&db->tables_mu); /* the settings first: nothing is applied if they fail */
    s = settings_check_update_locked(t, req);
    kmutex_unlock(&db->tables_mu);
    if (s != KURA_OK) {
        table_release(t);
        return s;
    }
    if (sp->given && ((s = stream_spec_check(sp)) != KURA_OK ||
                      (s = table_stream_update(db, t, sp)) != KURA_OK)) {
        table_release(t);
        return s;
    }
    if (!settings && req->global_secondary_index_updates_count == 0) {
        s = table_describe(db, t, desc_out);
        table_release(t);
        return s;
    }
    if (req->global_secondary_index_updates_count) {
        s = table_gsi_update(db, t, req);
        if (s != KURA_OK || !settings) {
            if (s == KURA_OK)
                s = table_describe(db, t, desc_out);
            table_release(t);
            return s;
        }
    }
    kmutex_lock(&db->tables_mu);
    kura_billing_mode mode = req->billing_mode != KURA_BILLING_UNSET ? req->billing_mode
                                                                      : t->billing;
    if (mode == KURA_BILLING_PAY_PER_REQUEST && req->has_provisioned_throughput) {
        s = kura_err(KURA_E_INVALID, "One or more parameter values were invalid: Neither "
                     "ReadCapacityUnits nor WriteCapacityUnits can be specified when "
                     "BillingMode is PAY_PER_REQUEST");
    } else if (mode == KURA_BILLING_PROVISIONED && t->billing == KURA_BILLING_PROVISIONED &&
               req->has_provisioned_throughput && req->read_capacity_units == t->rcu &&
               req->write_capacity_units == t->wcu && !others) {
        s = kura_err(KURA_E_INVALID,
                     "The provisioned throughput for the table will not change. The requested "
                     "value equals the current value. Current ReadCapacityUnits provisioned "
                     "for the table: %" PRIu64 ". Requested ReadCapacityUnits: %" PRIu64 ". "
                     "Current WriteCapacityUnits provisioned for the table: %" PRIu64 ". "
                     "Requested WriteCapacityUnits: %" PRIu64 ". Refer to the Amazon DynamoDB "
                     "Developer Guide for current limits and how to request higher limits.",
                     t->rcu, req->read_capacity_units, t->wcu, req->write_capacity_units);
    } else if ((s = settings_check_update_locked(t, req)) == KURA_OK) {
        /* checked again: another UpdateTable may have run since the check above */
        s = settings_update_write_locked(db, t, req, mode, now_seconds());
    }
    kmutex_unlock(&db->tables_mu);
    if (s == KURA_OK)
        s = table_describe(db, t, desc_out);
    table_release(t);
    return s;
}

static int str_ptr_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

kura_status table_limit_check(uint32_t *limit, uint32_t max)
{
    if (*limit > max)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '%u' at 'limit' failed to satisfy "
                        "constraint: Member must have value less than or equal to %u",
                        *limit, max);
    if (*limit == 0)
        *limit = max;
    return KURA_OK;
}

kura_status kura_list_tables(kura_db *db, const char *exclusive_start_table_name,
                             uint32_t limit, char ***names_out, size_t *count_out,
                             char **last_evaluated_out)
{
    kura_status ls = table_limit_check(&limit, 100);
    if (ls != KURA_OK)
        return ls;
    kmutex_lock(&db->tables_mu);
    size_t n = db->ntables;
    char **all = calloc(n ? n : 1, sizeof *all);
    bool ok = all != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = (all[i] = strdup(db->tables[i]->name)) != NULL;
    kmutex_unlock(&db->tables_mu);
    if (!ok) {
        kura_free_strings(all, n);
        return kura_err(KURA_E_NOMEM, "ListTables: out of memory");
    }
    qsort(all, n, sizeof *all, str_ptr_cmp);
    size_t first = 0;
    while (exclusive_start_table_name && first < n &&
           strcmp(all[first], exclusive_start_table_name) <= 0)
        first++;
    size_t count = n - first < limit ? n - first : limit;
    char *last = NULL;
    if (first + count < n && count > 0 && !(last = strdup(all[first + count - 1]))) {
        kura_free_strings(all, n);
        return kura_err(KURA_E_NOMEM, "ListTables: out of memory");
    }
    for (size_t i = 0; i < first; i++)
        free(all[i]);
    for (size_t i = first + count; i < n; i++)
        free(all[i]);
    memmove(all, all + first, count * sizeof *all);
    *names_out = all;
    *count_out = count;
    *last_evaluated_out = last;
    return KURA_OK;
}

void kura_free_strings(char **strs, size_t n)
{
    if (!strs)
        return;
    for (size_t i = 0; i < n; i++)
        free(strs[i]);
    free(strs);
}

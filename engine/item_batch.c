/*
 * item_batch.c - This file contains BatchGetItem and BatchWriteItem.
 *
 * Both check the whole request before touching any item, in DynamoDB's order: the request's
 * shape and limits (1..100 keys / 1..25 writes in total, "Too many items requested for the
 * BatchGetItem call"), attribute values and item sizes, per-table expressions, duplicate keys
 * within a table ("Provided list of item keys contains duplicates"), then that every table
 * exists (ResourceNotFound), then every key against its table's schema.
 *
 * BatchGetItem reads every key at one snapshot (DynamoDB does not promise that; it costs
 * nothing here) and stops adding items when the next one would take the response past 16 MB
 * (the projected items' sizes); that key and every key after it, in request order, are
 * returned in unprocessed_keys. Each key read is charged on its own (capacity.c).
 *
 * BatchWriteItem applies each put or delete atomically under its item lock (not the batch as
 * a whole, as DynamoDB); the old item is read only to charge capacity (and, for a table with
 * indexes, always). With ReturnItemCollectionMetrics SIZE each request on a table with an LSI
 * returns the metrics of its item collection, in request order.
 */
#include "engine/item_int.h"
#include "engine/table_collection.h"
#include "engine/table_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tcap.h"
#include "util/status.h"

enum { BATCH_GET_MAX_KEYS = 100, BATCH_WRITE_MAX = 25 };
#define BATCH_GET_MAX_BYTES (16u << 20)

/* ---- Shared ------------------------------------------------------------------------------- */

/* Pins every table named in names[0..n) (duplicates share a pin); tables_out[i] is the table
 * of names[i]. On failure nothing stays pinned. */
static kura_status acquire_tables(kura_db *db, const char *const *names, size_t n,
                                  kura_table **tables_out)
{
    for (size_t i = 0; i < n; i++) {
        tables_out[i] = NULL;
        for (size_t j = 0; j < i && !tables_out[i]; j++)
            if (!strcmp(names[i], names[j]))
                tables_out[i] = tables_out[j];
        if (tables_out[i])
            continue;
        kura_status s = table_acquire(db, names[i], &tables_out[i]);
        if (s != KURA_OK) {
            for (size_t j = 0; j < i; j++) {
                bool first = true;
                for (size_t k = 0; k < j && first; k++)
                    first = tables_out[k] != tables_out[j];
                if (first)
                    table_release(tables_out[j]);
            }
            return s;
        }
    }
    return KURA_OK;
}

/* Releases what acquire_tables pinned. */
static void release_tables(kura_table **tables, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = tables[j] != tables[i];
        if (first)
            table_release(tables[i]);
    }
}

static kura_status nomem(void)
{
    return kura_err(KURA_E_NOMEM, "out of memory");
}

/* ---- BatchGetItem ------------------------------------------------------------------------- */

void kura_batch_get_res_free(kura_batch_get_res *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->table_count; i++) {
        kura_value_free(r->tables[i].items);
        kura_value_free(r->tables[i].unprocessed_keys);
        free(r->tables[i].consumed_capacity.table_name);
    }
    free(r->tables);
    memset(r, 0, sizeof *r);
}

/* The request checks that need no table: counts, key values, duplicates, expressions. */
static kura_status batch_get_check(const kura_batch_get_req *req, item_exprs *ex)
{
    if (req->table_count == 0)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '{}' at 'requestItems' failed to "
                        "satisfy constraint: Member must have length greater than or equal to 1");
    size_t total = 0;
    for (size_t i = 0; i < req->table_count; i++) {
        const kura_batch_get_table *bt = &req->tables[i];
        for (size_t j = 0; j < i; j++)
            if (bt->table_name && req->tables[j].table_name &&
                !strcmp(bt->table_name, req->tables[j].table_name))
                return kura_err(KURA_E_INVALID,
                                "Provided list of item keys contains duplicates");
        size_t n = bt->keys && bt->keys->type == KURA_L ? bt->keys->u.list.n : 0;
        if (n == 0)
            return kura_err(KURA_E_INVALID,
                            "1 validation error detected: Value '[]' at "
                            "'requestItems.%s.member.keys' failed to satisfy constraint: Member "
                            "must have length greater than or equal to 1",
                            bt->table_name ? bt->table_name : "null");
        kura_expression_attributes ea = {bt->expression_attribute_names, NULL};
        kura_status s = item_exprs_parse(&ea, NULL, NULL, bt->projection_expression, NULL,
                                         &ex[i]);
        for (size_t k = 0; k < n && s == KURA_OK; k++) {
            const kura_value *key = &bt->keys->u.list.v[k];
            s = item_check_map_param(key, "key");
            if (s == KURA_OK)
                s = val_validate(key);
            for (size_t l = 0; l < k && s == KURA_OK; l++)
                if (val_equal(key, &bt->keys->u.list.v[l]))
                    s = kura_err(KURA_E_INVALID,
                                 "Provided list of item keys contains duplicates");
            if (s == KURA_OK && ++total > BATCH_GET_MAX_KEYS)
                s = kura_err(KURA_E_INVALID,
                             "Too many items requested for the BatchGetItem call");
        }
        if (s != KURA_OK)
            return s;
    }
    return KURA_OK;
}

/* Appends a copy of `v` to the list *l, creating the list first if *l is NULL. */
static kura_status list_push_copy(kura_value **l, const kura_value *v)
{
    if (!*l && !(*l = kura_value_list()))
        return nomem();
    kura_value c = {0};
    if (val_copy(&c, v) != KURA_OK)
        return nomem();
    return val_list_push(*l, &c) == KURA_OK ? KURA_OK : nomem();
}

/* Throttled requests of a batch (kura_options.throttle): DynamoDB leaves them unprocessed,
 * and refuses the whole call with the throttle's error only when none was processed. */
typedef struct batch_throttle {
    size_t admitted, refused;
    kura_status first;   /* the first refusal's status */
    char msg[512];       /* and its message */
} batch_throttle;

/* Whether *s is a throttle refusal: counted (and *s reset) if so. */
static bool batch_throttled(batch_throttle *b, kura_status *s)
{
    if (*s != KURA_E_THROUGHPUT_EXCEEDED && *s != KURA_E_THROTTLED) {
        if (*s == KURA_OK)
            b->admitted++;
        return false;
    }
    if (!b->refused++) {
        b->first = *s;
        snprintf(b->msg, sizeof b->msg, "%s", kura_last_error());
    }
    *s = KURA_OK;
    return true;
}

/* The call's status once every request was tried: the throttle's when all were refused. */
static kura_status batch_throttle_end(const batch_throttle *b, kura_status s)
{
    if (s == KURA_OK && b->refused && !b->admitted)
        return kura_err(b->first, "%s", b->msg);
    return s;
}

/* Reads the keys of one table. *bytes is the response size so far; *full is set once the
 * response is full, after which every key goes to unprocessed_keys. */
static kura_status batch_get_table(kura_table *t, const kura_batch_get_table *bt,
                                   const item_exprs *ex, const kura_read_options *ro,
                                   uint64_t *bytes, bool *full, kura_batch_get_table_res *r,
                                   double *units, batch_throttle *bth)
{
    kbuf key = KBUF_INIT;
    kura_status s = item_check_projection_keys(t, ex->proj);
    if (s == KURA_OK && !(r->items = kura_value_list()))
        s = nomem();
    for (uint32_t k = 0; k < bt->keys->u.list.n && s == KURA_OK; k++) {
        const kura_value *kv = &bt->keys->u.list.v[k];
        if (*full) {
            s = list_push_copy(&r->unprocessed_keys, kv);
            continue;
        }
        kura_value item = {0}, proj = {0};
        bool found = false;
        kbuf_clear(&key);
        s = key_build(&t->ks, kv, KEY_FROM_KEY, &key);
        tcap_op op;
        if (s == KURA_OK) {
            tcap_op_init(&op, t, false);
            op.skey = key.data;
            op.klen = key.len;
            op.est_half = tcap_read_half(0, bt->consistent_read);
            s = tcap_admit(&op);
            if (batch_throttled(bth, &s)) { /* a throttled key is left unprocessed */
                s = list_push_copy(&r->unprocessed_keys, kv);
                continue;
            }
        }
        if (s == KURA_OK)
            s = table_read(t, ro, key.data, key.len, &item, &found);
        if (s == KURA_OK)
            tcap_done(&op, tcap_read_half(found ? val_item_size(&item) : 0, bt->consistent_read),
                      true);
        if (s == KURA_OK && found && ex->proj)
            s = expr_project(ex->proj, &item, &proj);
        const kura_value *out = ex->proj ? &proj : &item;
        if (s == KURA_OK && found && *bytes + val_item_size(out) > BATCH_GET_MAX_BYTES) {
            *full = true;
            s = list_push_copy(&r->unprocessed_keys, kv);
        } else if (s == KURA_OK) {
            *units += capacity_read_units(found ? val_item_size(&item) : 0, bt->consistent_read);
            if (found) {
                *bytes += val_item_size(out);
                s = val_list_push(r->items, ex->proj ? &proj : &item) == KURA_OK ? KURA_OK
                                                                                 : nomem();
            }
        }
        val_clear(&item);
        val_clear(&proj);
    }
    kbuf_free(&key);
    return s;
}

kura_status kura_batch_get_item(kura_db *db, const kura_batch_get_req *req,
                                kura_batch_get_res *res_out)
{
    size_t n = req->table_count;
    item_exprs *ex = calloc(n ? n : 1, sizeof *ex);
    kura_table **tables = calloc(n ? n : 1, sizeof *tables);
    const char **names = calloc(n ? n : 1, sizeof *names);
    kura_batch_get_res res = {0};
    if (!ex || !tables || !names) {
        free(ex);
        free(tables);
        free(names);
        return nomem();
    }
    kura_status s = batch_get_check(req, ex);
    for (size_t i = 0; i < n; i++)
        names[i] = req->tables[i].table_name ? req->tables[i].table_name : "";
    bool pinned = false;
    if (s == KURA_OK && (s = acquire_tables(db, names, n, tables)) == KURA_OK)
        pinned = true;
    if (s == KURA_OK && !(res.tables = calloc(n, sizeof *res.tables)))
        s = nomem();
    if (s == KURA_OK) {
        res.table_count = n;
        kura_read_options ro;
        kura_read_options_init(&ro);
        ro.snapshot = kura_snapshot_new(db);
        uint64_t bytes = 0;
        bool full = false;
        batch_throttle bth = {0};
        for (size_t i = 0; i < n && s == KURA_OK; i++) {
            double units = 0;
            s = batch_get_table(tables[i], &req->tables[i], &ex[i], &ro, &bytes, &full,
                                &res.tables[i], &units, &bth);
            if (s == KURA_OK)
                s = capacity_fill(&res.tables[i].consumed_capacity,
                                  req->return_consumed_capacity, tables[i]->name, units, true);
        }
        kura_snapshot_free(db, ro.snapshot);
        s = batch_throttle_end(&bth, s);
    }
    if (pinned)
        release_tables(tables, n);
    for (size_t i = 0; i < n; i++)
        item_exprs_free(&ex[i]);
    free(ex);
    free(tables);
    free(names);
    if (s != KURA_OK) {
        kura_batch_get_res_free(&res);
        return s;
    }
    *res_out = res;
    return KURA_OK;
}

/* ---- BatchWriteItem ----------------------------------------------------------------------- */

void kura_batch_write_res_free(kura_batch_write_res *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->consumed_capacity_count; i++)
        capacity_free(&r->consumed_capacity[i]);
    free(r->consumed_capacity);
    for (size_t i = 0; i < r->item_collection_metrics_count; i++)
        table_coll_metrics_free(&r->item_collection_metrics[i]);
    free(r->item_collection_metrics);
    free(r->unprocessed);
    memset(r, 0, sizeof *r);
}

static kura_status batch_write_check(const kura_batch_write_req *req)
{
    if (req->request_count == 0)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '{}' at 'requestItems' failed to "
                        "satisfy constraint: Member must have length greater than or equal to 1");
    if (req->request_count > BATCH_WRITE_MAX)
        return kura_err(KURA_E_INVALID, "Too many items requested for the BatchWriteItem call");
    kura_status rs = item_check_return_metrics(req->return_item_collection_metrics);
    if (rs != KURA_OK)
        return rs;
    for (size_t i = 0; i < req->request_count; i++) {
        const kura_write_request *w = &req->requests[i];
        kura_status s = item_check_map_param(w->item, w->is_delete ? "key" : "item");
        if (s == KURA_OK)
            s = w->is_delete ? val_validate(w->item) : val_validate_item(w->item);
        if (s != KURA_OK)
            return s;
    }
    return KURA_OK;
}

/* The storage key of request i into keys[i]. DynamoDB reports a PutRequest item's missing or
 * mistyped key attribute in a batch as a schema mismatch, as it does for a DeleteRequest. */
static kura_status batch_write_key(const kura_table *t, const kura_write_request *w, kbuf *key)
{
    kura_status s = key_build(&t->ks, w->item, w->is_delete ? KEY_FROM_KEY : KEY_FROM_ITEM, key);
    if (s == KURA_E_INVALID && !w->is_delete &&
        (strstr(kura_last_error(), "Missing the key") ||
         strstr(kura_last_error(), "Type mismatch for key")))
        s = kura_err(s, "The provided key element does not match the schema");
    return s;
}

/* Applies request i and adds its capacity to *units, and its indexes' to *ix (present); *icm
 * (NULL: not asked for) gets its item collection's metrics. */
static kura_status batch_write_one(kura_table *t, const kura_write_request *w, const kbuf *key,
                                   bool charge, kura_return_capacity mode, size_t new_bytes,
                                   double *units, kura_consumed_capacity *ix,
                                   kura_item_collection_metrics *icm, size_t *write_bytes_out)
{
    kura_value old = {0};
    bool found = false;
    kura_status s = item_write_locked(t, key->data, key->len, NULL, charge,
                                      w->is_delete ? NULL : w->item, &old, &found, icm);
    /* the larger of the two items, when the old one was read (engine/item.c single writes) */
    size_t old_bytes = s == KURA_OK && found && old.type == KURA_M &&
                               (charge || tcap_accounting(t->cap))
                           ? val_item_size(&old)
                           : 0;
    *write_bytes_out = old_bytes > new_bytes ? old_bytes : new_bytes;
    if (s == KURA_OK && charge) {
        *units += capacity_write_units(*write_bytes_out);
        s = table_index_charge(t, found ? &old : NULL, w->is_delete ? NULL : w->item, mode, ix);
    }
    val_clear(&old);
    return s;
}

/* The metrics of the requests on tables with an LSI, in request order (moved from icm). */
static kura_status batch_write_metrics(kura_item_collection_metrics *icm, size_t n,
                                       kura_batch_write_res *res)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += icm[i].present;
    if (k == 0)
        return KURA_OK;
    if (!(res->item_collection_metrics = calloc(k, sizeof *res->item_collection_metrics)))
        return nomem();
    for (size_t i = 0; i < n; i++)
        if (icm[i].present) {
            res->item_collection_metrics[res->item_collection_metrics_count++] = icm[i];
            memset(&icm[i], 0, sizeof icm[i]);
        }
    return KURA_OK;
}

kura_status item_capacity_per_table(kura_return_capacity mode, kura_table *const *tables,
                                    size_t n, const double *units,
                                    const kura_consumed_capacity *ix,
                                    kura_consumed_capacity **out, size_t *count_out)
{
    kura_consumed_capacity *res = calloc(n ? n : 1, sizeof *res);
    size_t count = 0;
    if (!res)
        return nomem();
    kura_status s = KURA_OK;
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        bool first = true;
        for (size_t j = 0; j < i && first; j++)
            first = tables[j] != tables[i];
        if (!first)
            continue;
        kura_consumed_capacity *cc = &res[count];
        s = capacity_fill(cc, mode, tables[i]->name, units[i], false);
        /* the indexes' units: listed with INDEXES, in the total either way */
        if (s == KURA_OK && mode != KURA_CAPACITY_INDEXES && ix[i].capacity_units > 0)
            s = capacity_add_index(cc, mode, "", false, ix[i].capacity_units, false);
        for (size_t k = 0; s == KURA_OK && mode == KURA_CAPACITY_INDEXES &&
                           k < ix[i].index_count; k++)
            s = capacity_add_index(cc, mode, ix[i].indexes[k].index_name, ix[i].indexes[k].global,
                                   ix[i].indexes[k].capacity_units, false);
        count++;
    }
    if (s != KURA_OK) {
        for (size_t i = 0; i <= count && i < n; i++)
            capacity_free(&res[i]);
        free(res);
        return s;
    }
    *out = res;
    *count_out = count;
    return KURA_OK;
}

kura_status kura_batch_write_item(kura_db *db, const kura_batch_write_req *req,
                                  kura_batch_write_res *res_out)
{
    kura_status s = batch_write_check(req);
    if (s != KURA_OK)
        return s;
    size_t n = req->request_count;
    kura_table *tables[BATCH_WRITE_MAX] = {0};
    const char *names[BATCH_WRITE_MAX] = {0};
    kbuf keys[BATCH_WRITE_MAX];
    double units[BATCH_WRITE_MAX] = {0}; /* by the index of the table's first request */
    kura_consumed_capacity ix[BATCH_WRITE_MAX]; /* the indexes' share, likewise */
    kura_item_collection_metrics icm[BATCH_WRITE_MAX] = {0}; /* by request */
    bool metrics = req->return_item_collection_metrics == KURA_METRICS_SIZE;
    for (size_t i = 0; i < BATCH_WRITE_MAX; i++)
        ix[i] = (kura_consumed_capacity){.present = true};
    kura_batch_write_res res = {0};
    for (size_t i = 0; i < n; i++) {
        names[i] = req->requests[i].table_name ? req->requests[i].table_name : "";
        keys[i] = (kbuf)KBUF_INIT;
    }
    if ((s = acquire_tables(db, names, n, tables)) != KURA_OK)
        return s;
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        s = batch_write_key(tables[i], &req->requests[i], &keys[i]);
        if (s == KURA_OK && !req->requests[i].is_delete)
            s = table_index_check_item(tables[i], req->requests[i].item);
        for (size_t j = 0; j < i && s == KURA_OK; j++)
            if (tables[j] == tables[i] && keys[j].len == keys[i].len &&
                !memcmp(keys[j].data, keys[i].data, keys[i].len))
                s = kura_err(KURA_E_INVALID, "Provided list of item keys contains duplicates");
    }
    bool charge = req->return_consumed_capacity != KURA_CAPACITY_NONE;
    batch_throttle bth = {0};
    if (s == KURA_OK && !(res.unprocessed = calloc(n ? n : 1, sizeof *res.unprocessed)))
        s = nomem();
    for (size_t i = 0; i < n && s == KURA_OK; i++) {
        size_t first = 0;
        while (tables[first] != tables[i])
            first++;
        const kura_write_request *w = &req->requests[i];
        tcap_op op;
        tcap_op_init(&op, tables[i], true);
        op.skey = keys[i].data;
        op.klen = keys[i].len;
        op.item = w->is_delete ? NULL : w->item;
        size_t new_bytes = !w->is_delete && (charge || tcap_accounting(tables[i]->cap))
                               ? val_item_size(w->item)
                               : 0;
        op.est_half = tcap_write_half(new_bytes, false);
        s = tcap_admit(&op);
        if (batch_throttled(&bth, &s)) {
            res.unprocessed[res.unprocessed_count++] = i;
            continue;
        }
        size_t bytes = 0;
        s = batch_write_one(tables[i], w, &keys[i], charge, req->return_consumed_capacity,
                            new_bytes, &units[first], &ix[first], metrics ? &icm[i] : NULL,
                            &bytes);
        tcap_done(&op, tcap_write_half(bytes, false), s == KURA_OK);
    }
    s = batch_throttle_end(&bth, s);
    if (s == KURA_OK && !res.unprocessed_count) {
        free(res.unprocessed);
        res.unprocessed = NULL;
    }
    if (s == KURA_OK && charge)
        s = item_capacity_per_table(req->return_consumed_capacity, tables, n, units, ix,
                                    &res.consumed_capacity, &res.consumed_capacity_count);
    if (s == KURA_OK && metrics)
        s = batch_write_metrics(icm, n, &res);
    for (size_t i = 0; i < BATCH_WRITE_MAX; i++) {
        capacity_free(&ix[i]);
        table_coll_metrics_free(&icm[i]);
    }
    release_tables(tables, n);
    for (size_t i = 0; i < n; i++)
        kbuf_free(&keys[i]);
    if (s != KURA_OK) {
        kura_batch_write_res_free(&res);
        return s;
    }
    *res_out = res;
    return KURA_OK;
}

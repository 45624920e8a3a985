/*
 * item.c - This file contains PutItem, GetItem and DeleteItem, and the request checks the item
 * operations share (engine/item_int.h).
 *
 * A write pins the table, builds the storage key, and holds the item's stripe lock from
 * reading the old item to writing the new one (engine/table.h), so a conditional write never
 * races with another write of the same item. The old item is read only when something needs
 * it: a condition, ReturnValues ALL_OLD, ReturnValuesOnConditionCheckFailure ALL_OLD, or
 * ReturnConsumedCapacity (a write is charged for the larger of the old and new item). The
 * plain PutItem / GetItem path creates no expression context and allocates only the storage
 * key, the encoded item (table_write) and, for GetItem, the result; kura_get_item_encoded
 * (engine/get_encoded.h, the JSON API's GetItem) reads the stored bytes into the caller's
 * buffer instead of decoding them. On a table with a local secondary index the locked step
 * also accounts the item's collection (engine/table_collection.h: the 10 GB limit and
 * ReturnItemCollectionMetrics) between the condition and the write.
 */
#include "engine/item_int.h"

#include <stdlib.h>
#include <string.h>

#include "engine/get_encoded.h"
#include "engine/table_collection.h"
#include "engine/table_index.h"
#include "engine/tcap.h"
#include "util/status.h"

/* ---- Shared request checks -------------------------------------------------------------- */

static const char *const return_value_names[] = {"NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW",
                                                 "UPDATED_NEW"};

static bool return_value_known(kura_return_values rv)
{
    return (unsigned)rv <= KURA_RETURN_UPDATED_NEW;
}

kura_status item_check_return_values(kura_return_values rv, bool update)
{
    if (!return_value_known(rv))
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '%d' at 'returnValues' failed to "
                        "satisfy constraint: Member must satisfy enum value set: [ALL_NEW, "
                        "UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]",
                        (int)rv);
    if (!update && rv != KURA_RETURN_NONE && rv != KURA_RETURN_ALL_OLD)
        return kura_err(KURA_E_INVALID, "ReturnValues can only be ALL_OLD or NONE");
    return KURA_OK;
}

kura_status item_check_return_on_failure(kura_return_values rv)
{
    if (rv == KURA_RETURN_NONE || rv == KURA_RETURN_ALL_OLD)
        return KURA_OK;
    if (return_value_known(rv))
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '%s' at "
                        "'returnValuesOnConditionCheckFailure' failed to satisfy constraint: "
                        "Member must satisfy enum value set: [ALL_OLD, NONE]",
                        return_value_names[rv]);
    return kura_err(KURA_E_INVALID,
                    "1 validation error detected: Value '%d' at "
                    "'returnValuesOnConditionCheckFailure' failed to satisfy constraint: "
                    "Member must satisfy enum value set: [ALL_OLD, NONE]",
                    (int)rv);
}

kura_status item_check_return_metrics(kura_return_metrics rm)
{
    if (rm == KURA_METRICS_NONE || rm == KURA_METRICS_SIZE)
        return KURA_OK;
    return kura_err(KURA_E_INVALID,
                    "1 validation error detected: Value '%d' at 'returnItemCollectionMetrics' "
                    "failed to satisfy constraint: Member must satisfy enum value set: [SIZE, "
                    "NONE]",
                    (int)rm);
}

kura_status item_check_map_param(const kura_value *m, const char *param)
{
    if (!m)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value null at '%s' failed to satisfy "
                        "constraint: Member must not be null",
                        param);
    if (m->type != KURA_M)
        return kura_err(KURA_E_INVALID, "One or more parameter values were invalid: %s must be "
                        "a map of attribute values, not %s", param,
                        m->type ? val_type_name((kura_type)m->type) : "an empty value");
    return KURA_OK;
}

kura_status item_exprs_parse(const kura_expression_attributes *ea, const char *update,
                             const char *cond, const char *proj, const char *value_exprs,
                             item_exprs *out)
{
    const kura_value *names = ea ? ea->names : NULL, *values = ea ? ea->values : NULL;
    item_exprs e = {0};
    if (names && !update && !cond && !proj)
        return kura_err(KURA_E_INVALID,
                        "ExpressionAttributeNames can only be specified when using expressions");
    if (values && value_exprs && !update && !cond)
        return kura_err(KURA_E_INVALID,
                        "ExpressionAttributeValues can only be specified when using "
                        "expressions: %s",
                        value_exprs);
    if (!names && !values && !update && !cond && !proj) {
        *out = e;
        return KURA_OK;
    }
    kura_status s = expr_ctx_new(names, values, &e.ctx);
    if (s == KURA_OK && update)
        s = expr_parse_update(e.ctx, update, &e.update);
    if (s == KURA_OK && cond)
        s = expr_parse_condition(e.ctx, EXPR_CONDITION, cond, &e.cond);
    if (s == KURA_OK && proj)
        s = expr_parse_projection(e.ctx, proj, &e.proj);
    if (s == KURA_OK)
        s = expr_check_unused(e.ctx);
    if (s != KURA_OK) {
        item_exprs_free(&e);
        return s;
    }
    *out = e;
    return KURA_OK;
}

void item_exprs_free(item_exprs *e)
{
    expr_ctx_free(e->ctx);
    memset(e, 0, sizeof *e);
}

static bool is_key_name(const kura_table *t, const char *name, size_t len)
{
    const char *pk = t->ks.pk_name, *sk = t->ks.sk_name;
    return (strlen(pk) == len && !memcmp(pk, name, len)) ||
           (sk && strlen(sk) == len && !memcmp(sk, name, len));
}

kura_status item_check_projection_keys(const kura_table *t, const expr_projection *p)
{
    for (uint32_t i = 0; p && i < p->n; i++) {
        const expr_path *path = &p->paths[i];
        if (path->n > 1 && is_key_name(t, path->elems[0].name, path->elems[0].name_len))
            return kura_err(KURA_E_INVALID,
                            "Key attributes must be scalars; list random access '[]' and map "
                            "lookup '.' are not allowed: Key: %.*s",
                            (int)path->elems[0].name_len, path->elems[0].name);
    }
    return KURA_OK;
}

kura_status item_write_locked(kura_table *t, const uint8_t *skey, size_t klen,
                              const expr_node *cond, bool read_old, const kura_value *item,
                              kura_value *old, bool *found_out,
                              kura_item_collection_metrics *icm)
{
    bool found = false;
    coll_ticket tk;
    uint64_t coll_bytes = 0;
    bool measured = false;
    kmutex *mu = table_item_lock(t, skey, klen);
    kmutex_lock(mu);
    /* Indexes and streams need the old item's image in the WAL; the old item itself only the
     * caller (ReturnValues, capacity), the condition and an LSI's item collection need. An
     * image alone is written as it is stored, never decoded. */
    bool images = table_needs_images(t);
    bool decode = read_old || cond || table_has_lsi(t);
    kbuf stored = KBUF_INIT, *raw = images && !decode ? &stored : NULL;
    kura_status s = KURA_OK;
    if (decode || images) {
        s = raw ? table_read_encoded(t, NULL, skey, klen, raw)
                : table_read(t, NULL, skey, klen, old, &found);
        if (raw)
            found = raw->len > 0;
    }
    if (s == KURA_OK && cond && !expr_eval_condition(cond, found ? old : NULL))
        s = kura_err(KURA_E_CONDITION_FAILED, "The conditional request failed");
    if (s == KURA_OK)
        s = table_coll_begin(t, skey, klen, found && decode ? old : NULL, item, icm != NULL,
                             &tk);
    if (s == KURA_OK) {
        measured = tk.measured;
        coll_bytes = tk.size_after;
        s = raw ? table_write_image(t, skey, klen, item, raw->data, raw->len)
                : table_write(t, skey, klen, item, found ? old : NULL);
        table_coll_end(t, &tk, s == KURA_OK);
    }
    kmutex_unlock(mu);
    kbuf_free(&stored);
    if (s == KURA_OK && icm && measured)
        s = table_coll_metrics(t, skey, klen, coll_bytes, icm);
    *found_out = found;
    return s;
}

kura_value *item_value_take(kura_value *v)
{
    kura_value *h = malloc(sizeof *h);
    if (!h) {
        val_clear(v);
        return NULL;
    }
    memset(h, 0, sizeof *h);
    val_move(h, v);
    return h;
}

/* ---- Results ---------------------------------------------------------------------------- */

void kura_write_result_free(kura_write_result *r)
{
    if (!r)
        return;
    kura_value_free(r->attributes);
    kura_value_free(r->item);
    capacity_free(&r->consumed_capacity);
    table_coll_metrics_free(&r->item_collection_metrics);
    memset(r, 0, sizeof *r);
}

void kura_get_item_res_free(kura_get_item_res *r)
{
    if (!r)
        return;
    kura_value_free(r->item);
    free(r->consumed_capacity.table_name);
    memset(r, 0, sizeof *r);
}

/* The end of a put or delete: on a failed condition the ALL_OLD item goes to res->item and the
 * result is published (the one exception to "out-params only on success"); on success
 * ReturnValues ALL_OLD, the capacity and the item collection metrics *icm. Consumes *old and
 * *icm. */
static kura_status finish_write(kura_status s, const kura_table *t, const kura_value *neu,
                                kura_return_values rv,
                                kura_return_values rv_on_failure, kura_return_capacity rc,
                                kura_value *old, bool found, size_t new_bytes,
                                kura_item_collection_metrics *icm, kura_write_result *res_out)
{
    kura_write_result res = {.item_collection_metrics = *icm};
    memset(icm, 0, sizeof *icm);
    if (s == KURA_E_CONDITION_FAILED) {
        table_coll_metrics_free(&res.item_collection_metrics); /* (never filled then) */
        if (found && rv_on_failure == KURA_RETURN_ALL_OLD && !(res.item = item_value_take(old)))
            return kura_err(KURA_E_NOMEM, "out of memory");
        *res_out = res;
        return kura_err(s, "The conditional request failed");
    }
    if (s == KURA_OK && rc != KURA_CAPACITY_NONE) {
        size_t old_bytes = found ? val_item_size(old) : 0;
        double units = capacity_write_units(old_bytes > new_bytes ? old_bytes : new_bytes);
        s = capacity_fill(&res.consumed_capacity, rc, t->name, units, false);
        if (s == KURA_OK) /* and what it cost the indexes (the old item was read for them) */
            s = table_index_charge(t, found ? old : NULL, neu, rc, &res.consumed_capacity);
    }
    if (s == KURA_OK && found && rv == KURA_RETURN_ALL_OLD &&
        !(res.attributes = item_value_take(old)))
        s = kura_err(KURA_E_NOMEM, "out of memory");
    val_clear(old);
    if (s != KURA_OK) {
        kura_write_result_free(&res);
        return s;
    }
    *res_out = res;
    return KURA_OK;
}

/* ---- PutItem and DeleteItem ------------------------------------------------------------ */

/* What PutItem and DeleteItem share: they differ only in the map they are given (the item, or
 * the key) and in what they write (the item, or nothing). */
typedef struct single_write {
    const char *table_name;
    const kura_value *m; /* PutItem: the item; DeleteItem: the key */
    bool is_put;
    const char *condition_expression;
    const kura_expression_attributes *expr;
    kura_return_values rv, rv_on_failure;
    kura_return_capacity rcc;
    kura_return_metrics rm;
} single_write;

static kura_status single_write_check(const single_write *w, const item_pre *pre,
                                      item_exprs *ex)
{
    kura_status s = item_check_map_param(w->m, w->is_put ? "item" : "key");
    if (s == KURA_OK)
        s = w->is_put ? val_validate_item(w->m) : val_validate(w->m);
    if (s == KURA_OK)
        s = item_check_return_values(w->rv, false);
    if (s == KURA_OK)
        s = item_check_return_on_failure(w->rv_on_failure);
    if (s == KURA_OK)
        s = item_check_return_metrics(w->rm);
    if (s == KURA_OK)
        s = item_pre_exprs(pre, w->expr, NULL, w->condition_expression, NULL,
                           "ConditionExpression is null", ex);
    return s;
}

static kura_status single_write_run(kura_db *db, const single_write *w, item_pre *pre,
                                    kura_write_result *res_out)
{
    item_exprs ex = {0};
    kura_status s = single_write_check(w, pre, &ex);
    if (s != KURA_OK)
        return s;
    kura_table *t = NULL;
    kbuf key = KBUF_INIT;
    kura_value old = {0};
    bool found = false;
    s = table_acquire(db, w->table_name, &t);
    if (s == KURA_OK && item_pre_stale(pre, t))
        s = KURA_E_NOT_FOUND;
    if (s == KURA_OK)
        s = key_build(&t->ks, w->m, w->is_put ? KEY_FROM_ITEM : KEY_FROM_KEY, &key);
    if (s == KURA_OK && w->is_put)
        s = table_index_check_item(t, w->m);
    const kura_value *item = w->is_put ? w->m : NULL;
    size_t new_bytes = 0;
    tcap_op op;
    if (s == KURA_OK) { /* the capacity it needs, before anything is read (engine/tcap.h) */
        tcap_op_init(&op, t, true);
        op.skey = key.data;
        op.klen = key.len;
        op.item = item;
        new_bytes = item && (tcap_accounting(t->cap) || w->rcc != KURA_CAPACITY_NONE)
                        ? val_item_size(item)
                        : 0;
        op.est_half = tcap_write_half(new_bytes, false);
        s = tcap_admit(&op);
    }
    if (s == KURA_OK) {
        bool read_old = ex.cond || w->rv == KURA_RETURN_ALL_OLD ||
                        w->rv_on_failure == KURA_RETURN_ALL_OLD || w->rcc != KURA_CAPACITY_NONE;
        kura_item_collection_metrics icm = {0};
        s = item_write_locked(t, key.data, key.len, ex.cond, read_old, item, &old, &found,
                              w->rm == KURA_METRICS_SIZE ? &icm : NULL);
        /* the larger of the two items, when the old one was read (a plain put on a table
         * without indexes or streams never reads it: its new item's size) */
        size_t old_bytes =
            found && old.type == KURA_M && tcap_accounting(t->cap) ? val_item_size(&old) : 0;
        tcap_done(&op, tcap_write_half(old_bytes > new_bytes ? old_bytes : new_bytes, false),
                  s == KURA_OK || s == KURA_E_CONDITION_FAILED);
        s = finish_write(s, t, item, w->rv, w->rv_on_failure, w->rcc, &old, found, new_bytes,
                         &icm, res_out);
    }
    val_clear(&old);
    kbuf_free(&key);
    table_release(t);
    item_pre_done(pre, &ex);
    return s;
}

kura_status item_put_pre(kura_db *db, const kura_put_item_req *req, item_pre *pre,
                         kura_write_result *res_out)
{
    single_write w = {req->table_name, req->item, true, req->condition_expression, &req->expr,
                      req->return_values, req->return_values_on_condition_check_failure,
                      req->return_consumed_capacity, req->return_item_collection_metrics};
    return single_write_run(db, &w, pre, res_out);
}

kura_status kura_put_item(kura_db *db, const kura_put_item_req *req, kura_write_result *res_out)
{
    return item_put_pre(db, req, NULL, res_out);
}

kura_status item_delete_pre(kura_db *db, const kura_delete_item_req *req, item_pre *pre,
                            kura_write_result *res_out)
{
    single_write w = {req->table_name, req->key, false, req->condition_expression, &req->expr,
                      req->return_values, req->return_values_on_condition_check_failure,
                      req->return_consumed_capacity, req->return_item_collection_metrics};
    return single_write_run(db, &w, pre, res_out);
}

kura_status kura_delete_item(kura_db *db, const kura_delete_item_req *req,
                             kura_write_result *res_out)
{
    return item_delete_pre(db, req, NULL, res_out);
}

/* ---- GetItem ---------------------------------------------------------------------------- */

static kura_status get_check(const kura_get_item_req *req, const item_pre *pre, item_exprs *ex)
{
    kura_status s = item_check_map_param(req->key, "key");
    if (s == KURA_OK)
        s = val_validate(req->key);
    if (s == KURA_OK)
        s = item_pre_exprs(pre, &req->expr, NULL, NULL, req->projection_expression, NULL, ex);
    return s;
}

/* Reads the item (into a new heap value, or NULL if absent) and, when `want_bytes`, its full
 * size (else its stored bytes, which stand for it in the capacity accounting). */
static kura_status get_read(kura_table *t, const kbuf *key, const item_exprs *ex,
                            bool want_bytes, kura_value **item_out, size_t *bytes_out)
{
    kura_value item = {0};
    bool found = false;
    size_t stored = 0;
    kura_status s = table_read_stored(t, NULL, key->data, key->len, &item, &found, &stored);
    if (s != KURA_OK || !found) {
        val_clear(&item);
        *item_out = NULL;
        *bytes_out = 0;
        return s;
    }
    *bytes_out = want_bytes ? val_item_size(&item) : stored;
    if (ex->proj) {
        kura_value proj = {0};
        s = expr_project(ex->proj, &item, &proj);
        val_clear(&item);
        if (s != KURA_OK)
            return s;
        val_move(&item, &proj);
    }
    if (!(*item_out = item_value_take(&item)))
        return kura_err(KURA_E_NOMEM, "out of memory");
    return KURA_OK;
}

/* kura_get_item(), or with `enc` kura_get_item_encoded(). */
static kura_status get_item(kura_db *db, const kura_get_item_req *req, item_pre *pre,
                            kura_get_item_res *res_out, kbuf *enc, bool *encoded_out)
{
    item_exprs ex = {0};
    kura_status s = get_check(req, pre, &ex);
    if (s != KURA_OK)
        return s;
    bool want_bytes = req->return_consumed_capacity != KURA_CAPACITY_NONE;
    bool encoded = enc && !ex.proj && !want_bytes;
    kura_table *t = NULL;
    kbuf key = KBUF_INIT;
    kura_get_item_res res = {0};
    size_t bytes = 0;
    tcap_op op;
    s = table_acquire(db, req->table_name, &t);
    if (s == KURA_OK && item_pre_stale(pre, t))
        s = KURA_E_NOT_FOUND;
    if (s == KURA_OK)
        s = key_build(&t->ks, req->key, KEY_FROM_KEY, &key);
    if (s == KURA_OK)
        s = item_check_projection_keys(t, ex.proj);
    if (s == KURA_OK) {
        tcap_op_init(&op, t, false);
        op.skey = key.data;
        op.klen = key.len;
        op.est_half = tcap_read_half(0, req->consistent_read);
        s = tcap_admit(&op);
    }
    if (s == KURA_OK && encoded)
        s = table_read_encoded(t, NULL, key.data, key.len, enc);
    else if (s == KURA_OK)
        s = get_read(t, &key, &ex, want_bytes, &res.item, &bytes);
    if (s == KURA_OK) /* the stored bytes stand for the item's size on the encoded path */
        tcap_done(&op, tcap_read_half(encoded ? enc->len : bytes, req->consistent_read), true);
    if (s == KURA_OK && want_bytes)
        s = capacity_fill(&res.consumed_capacity, req->return_consumed_capacity, t->name,
                          capacity_read_units(bytes, req->consistent_read), true);
    kbuf_free(&key);
    table_release(t);
    item_pre_done(pre, &ex);
    if (s != KURA_OK) {
        kura_get_item_res_free(&res);
        return s;
    }
    *res_out = res;
    if (encoded_out)
        *encoded_out = encoded;
    return KURA_OK;
}

kura_status kura_get_item(kura_db *db, const kura_get_item_req *req, kura_get_item_res *res_out)
{
    return get_item(db, req, NULL, res_out, NULL, NULL);
}

kura_status item_get_pre(kura_db *db, const kura_get_item_req *req, item_pre *pre,
                         kura_get_item_res *res_out)
{
    return get_item(db, req, pre, res_out, pre ? pre->enc : NULL, pre ? &pre->encoded : NULL);
}

kura_status kura_get_item_encoded(kura_db *db, const kura_get_item_req *req,
                                  kura_get_item_res *res_out, kbuf *enc, bool *encoded_out)
{
    return get_item(db, req, NULL, res_out, enc, encoded_out);
}

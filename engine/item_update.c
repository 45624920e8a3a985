/*
 * item_update.c - This file contains UpdateItem.
 *
 * UpdateItem always reads the old item: under the item's lock it evaluates the condition on
 * it, applies the UpdateExpression to a copy (or, when the item does not exist, to a new item
 * holding only the key: UpdateItem creates missing items), checks the result (400 KB: "Item
 * size to update has exceeded the maximum allowed size"; nesting and sets via val_validate)
 * and writes it. expr_apply_update may leave its target half-updated on error, so it works on
 * a value that is not written then: a copy of the old item when ReturnValues needs the old
 * one, else the old item itself (moved, no copy); either way a failed update writes
 * nothing. Without an UpdateExpression an existing item is left as it is and a missing one
 * is created with its key only. An UpdateExpression that only REMOVEs or DELETEs (from sets)
 * leaves a missing item missing, as DynamoDB: no write, no stream record, no index change, no
 * Attributes (ALL_NEW included); the write unit is still consumed.
 *
 * ReturnValues: ALL_OLD and ALL_NEW return the whole item before / after; UPDATED_OLD and
 * UPDATED_NEW only the paths the update named (expr_updated_attributes), before / after. An
 * empty result (no old item, nothing at those paths) is no Attributes at all, as DynamoDB.
 *
 * On a table with a local secondary index the new item's collection is checked and accounted
 * under the lock before the write (engine/table_collection.h); ReturnItemCollectionMetrics
 * SIZE reports it, also when nothing was written.
 */
#include "engine/item_int.h"
#include "engine/table_collection.h"
#include "engine/table_index.h"
#include "engine/tcap.h"

#include <stdlib.h>
#include <string.h>

#include "util/status.h"

static kura_status update_check(const kura_update_item_req *req, const item_pre *pre,
                                item_exprs *ex)
{
    kura_status s = item_check_map_param(req->key, "key");
    if (s == KURA_OK)
        s = val_validate(req->key);
    if (s == KURA_OK)
        s = item_check_return_values(req->return_values, true);
    if (s == KURA_OK)
        s = item_check_return_on_failure(req->return_values_on_condition_check_failure);
    if (s == KURA_OK)
        s = item_check_return_metrics(req->return_item_collection_metrics);
    if (s == KURA_OK)
        s = item_pre_exprs(pre, &req->expr, req->update_expression, req->condition_expression,
                           NULL, "UpdateExpression and ConditionExpression are null", ex);
    return s;
}

kura_status item_check_key_untouched(const kura_table *t, const expr_update *u)
{
    const char *names[2] = {t->ks.pk_name, t->ks.sk_name};
    for (int i = 0; i < 2 && u; i++)
        if (names[i] && expr_update_touches(u, names[i], strlen(names[i])))
            return kura_err(KURA_E_INVALID,
                            "One or more parameter values were invalid: Cannot update "
                            "attribute %s. This attribute is part of the key",
                            names[i]);
    return KURA_OK;
}

kura_status item_update_build(const item_exprs *ex, const kura_value *key, kura_value *old,
                                bool found, bool keep_old, kura_value *neu)
{
    kura_status s = KURA_OK;
    if (found && !keep_old)
        val_move(neu, old);
    else
        s = val_copy(neu, found ? old : key);
    if (s != KURA_OK)
        return kura_err(KURA_E_NOMEM, "out of memory");
    if (ex->update)
        s = expr_apply_update(ex->update, neu);
    if (s == KURA_OK && val_item_size(neu) > ITEM_MAX_BYTES)
        s = kura_err(KURA_E_INVALID, "Item size to update has exceeded the maximum allowed size");
    if (s == KURA_OK && ex->update)
        s = val_validate_item(neu);
    return s;
}

/* ReturnValues into *attrs_out (NULL when empty). */
static kura_status update_return(kura_return_values rv, const expr_update *u, kura_value *old,
                                 bool found, kura_value *neu, kura_value **attrs_out)
{
    kura_value out = {0};
    kura_status s = KURA_OK;
    *attrs_out = NULL;
    switch (rv) {
    case KURA_RETURN_ALL_OLD:
        if (found)
            val_move(&out, old);
        break;
    case KURA_RETURN_ALL_NEW:
        val_move(&out, neu);
        break;
    case KURA_RETURN_UPDATED_OLD:
        if (found && u)
            s = expr_updated_attributes(u, old, &out);
        break;
    case KURA_RETURN_UPDATED_NEW:
        if (u && neu->type) /* no type: a missing item the update left missing */
            s = expr_updated_attributes(u, neu, &out);
        break;
    default:
        break;
    }
    if (s != KURA_OK || !out.type || (out.type == KURA_M && out.u.map.n == 0)) {
        val_clear(&out);
        return s;
    }
    if (!(*attrs_out = item_value_take(&out)))
        return kura_err(KURA_E_NOMEM, "out of memory");
    return KURA_OK;
}

/* The locked part: read, condition, build, the item collection (engine/table_collection.h),
 * write. *old_bytes_out is the old item's size when capacity is returned (measured before the
 * update may consume the old item); *icm the collection's metrics when asked for (SIZE). */
static kura_status update_locked(kura_table *t, const kbuf *key, const kura_update_item_req *req,
                                 const item_exprs *ex, kura_value *old, bool *found,
                                 kura_value *neu, size_t *old_bytes_out,
                                 kura_item_collection_metrics *icm, tcap_op *op)
{
    bool keep_old = req->return_values == KURA_RETURN_ALL_OLD ||
                    req->return_values == KURA_RETURN_UPDATED_OLD ||
                    table_needs_images(t); /* the old image goes to the WAL */
    kmutex *mu = table_item_lock(t, key->data, key->len);
    kmutex_lock(mu);
    kura_status s = table_read(t, NULL, key->data, key->len, old, found);
    if (s == KURA_OK && ex->cond && !expr_eval_condition(ex->cond, *found ? old : NULL))
        s = kura_err(KURA_E_CONDITION_FAILED, "The conditional request failed");
    if (s == KURA_OK && *found && req->return_consumed_capacity != KURA_CAPACITY_NONE)
        *old_bytes_out = val_item_size(old);
    /* a missing item that only loses attributes stays missing: `neu` stays empty */
    bool absent = !*found && ex->update && !expr_update_creates(ex->update);
    if (s == KURA_OK) /* evaluated even then: a bad path fails as on an item with its key only */
        s = item_update_build(ex, req->key, old, *found, keep_old, neu);
    if (s == KURA_OK && absent)
        val_clear(neu);
    if (s == KURA_OK && !absent)
        s = table_index_check_item(t, neu);
    /* the capacity: known exactly here, from both items, before anything is written; a
     * refusal leaves the item as it was (engine/tcap.h) */
    bool acct = tcap_accounting(t->cap);
    size_t old_size = *found && acct ? val_item_size(old) : 0;
    size_t new_size = neu->type && acct ? val_item_size(neu) : 0;
    op->est_half = tcap_write_half(old_size > new_size ? old_size : new_size, false);
    op->item = absent ? NULL : neu;
    if (s == KURA_OK)
        s = tcap_admit(op);
    bool charged = s == KURA_OK || s == KURA_E_CONDITION_FAILED;
    /* an existing item without an UpdateExpression is unchanged: nothing to write (its
     * collection is still measured for SIZE: neu equals old, a delta of 0) */
    bool write = !absent && (ex->update || !*found);
    bool want = req->return_item_collection_metrics == KURA_METRICS_SIZE;
    coll_ticket tk;
    bool measured = false;
    uint64_t coll_bytes = 0;
    if (s == KURA_OK) /* keep_old holds for a table with an LSI: `old` is intact; an absent
                       * item is measured as a delete of nothing */
        s = table_coll_begin(t, key->data, key->len, *found ? old : NULL, absent ? NULL : neu,
                             want, &tk);
    if (s == KURA_OK) {
        measured = tk.measured;
        coll_bytes = tk.size_after;
        if (write)
            s = table_write(t, key->data, key->len, neu, *found ? old : NULL);
        table_coll_end(t, &tk, s == KURA_OK);
    }
    kmutex_unlock(mu);
    tcap_done(op, op->est_half, charged);
    if (s == KURA_OK && want && measured)
        s = table_coll_metrics(t, key->data, key->len, coll_bytes, icm);
    return s;
}

kura_status kura_update_item(kura_db *db, const kura_update_item_req *req,
                             kura_write_result *res_out)
{
    return item_update_pre(db, req, NULL, res_out);
}

kura_status item_update_pre(kura_db *db, const kura_update_item_req *req, item_pre *pre,
                            kura_write_result *res_out)
{
    item_exprs ex = {0};
    kura_status s = update_check(req, pre, &ex);
    if (s != KURA_OK)
        return s;
    kura_table *t = NULL;
    kbuf key = KBUF_INIT;
    kura_value old = {0}, neu = {0};
    bool found = false;
    size_t old_bytes = 0;
    kura_write_result res = {0};
    s = table_acquire(db, req->table_name, &t);
    if (s == KURA_OK && item_pre_stale(pre, t))
        s = KURA_E_NOT_FOUND;
    if (s == KURA_OK)
        s = key_build(&t->ks, req->key, KEY_FROM_KEY, &key);
    if (s == KURA_OK)
        s = item_check_key_untouched(t, ex.update);
    tcap_op op;
    if (s == KURA_OK) {
        tcap_op_init(&op, t, true);
        op.skey = key.data;
        op.klen = key.len;
        s = update_locked(t, &key, req, &ex, &old, &found, &neu, &old_bytes,
                          &res.item_collection_metrics, &op);
    }
    if (s == KURA_E_CONDITION_FAILED) {
        if (found && req->return_values_on_condition_check_failure == KURA_RETURN_ALL_OLD &&
            !(res.item = item_value_take(&old)))
            s = kura_err(KURA_E_NOMEM, "out of memory");
        else
            *res_out = res;
        goto out;
    }
    if (s == KURA_OK && req->return_consumed_capacity != KURA_CAPACITY_NONE) {
        size_t new_bytes = neu.type ? val_item_size(&neu) : 0;
        s = capacity_fill(&res.consumed_capacity, req->return_consumed_capacity, t->name,
                          capacity_write_units(old_bytes > new_bytes ? old_bytes : new_bytes),
                          false);
        if (s == KURA_OK && neu.type)
            s = table_index_charge(t, found ? &old : NULL, &neu,
                                   req->return_consumed_capacity, &res.consumed_capacity);
    }
    if (s == KURA_OK)
        s = update_return(req->return_values, ex.update, &old, found, &neu, &res.attributes);
    if (s == KURA_OK)
        *res_out = res;
    else
        kura_write_result_free(&res);
out:
    val_clear(&old);
    val_clear(&neu);
    kbuf_free(&key);
    table_release(t);
    item_pre_done(pre, &ex);
    return s;
}

/*
 * req_items.c - This file contains the single-item operations of the JSON API: PutItem,
 * GetItem, UpdateItem and DeleteItem.
 *
 * After the generic passes, each operation runs DynamoDB's remaining request checks in its
 * order (dynalite's validations/<Op>.js custom functions): legacy parameters (rewritten by
 * legacy.c), the item or key values, ReturnValues, the item size, then the expression
 * attribute maps; the expressions themselves, the key schema and the table are the C API's.
 */
#include <string.h>

#include "api/api_int.h"
#include "engine/get_encoded.h"

/* ReturnValues of PutItem and DeleteItem. */
static kura_status check_old_only(const jd_t *req, kura_return_values *rv_out)
{
    kura_return_values rv = api_return_values(req, "ReturnValues");
    if (rv != KURA_RETURN_NONE && rv != KURA_RETURN_ALL_OLD)
        return api_err(KURA_E_INVALID, "ReturnValues can only be ALL_OLD or NONE");
    *rv_out = rv;
    return KURA_OK;
}

/* The response of a write (Attributes, ConsumedCapacity, ItemCollectionMetrics, in DynamoDB's
 * order), or the error with its ConditionalCheckFailed item. */
static kura_status finish_write(api_call *c, kura_status s, kura_write_result *res,
                                kura_return_capacity rcc)
{
    if (s != KURA_OK) {
        s = api_engine(s);
        if (s == KURA_E_CONDITION_FAILED && res->item) {
            c->item = res->item;
            res->item = NULL;
        }
    } else {
        if (res->attributes) s = api_out_item(c, "Attributes", res->attributes);
        if (s == KURA_OK) s = api_out_capacity(c, &res->consumed_capacity, rcc);
        if (s == KURA_OK) s = api_out_metrics(c, &res->item_collection_metrics);
    }
    kura_write_result_free(res);
    return s;
}

/* ---- PutItem --------------------------------------------------------------------------- */

static kura_status run_put(api_call *c)
{
    kura_value *item = NULL;
    api_expr e = {NULL, NULL};
    kura_put_item_req req = {.table_name = NULL};
    kura_status s = api_legacy(c);
    if (s == KURA_OK) s = api_map_member(c->req, "Item", &item);
    if (s == KURA_OK) s = check_old_only(c->req, &req.return_values);
    if (s == KURA_OK) s = api_check_item_size(item);
    if (s == KURA_OK) s = api_expr_decode(c->req, true, &e);
    if (s == KURA_OK) s = api_table_member(c, c->req, &req.table_name);
    if (s == KURA_OK) {
        req.item = item;
        req.condition_expression = api_str(c->req, "ConditionExpression");
        req.expr = api_expr_attrs(&e);
        req.return_values_on_condition_check_failure =
            api_return_values(c->req, "ReturnValuesOnConditionCheckFailure");
        req.return_consumed_capacity = api_rcc(c->req);
        req.return_item_collection_metrics = api_ricm(c->req);
        kura_write_result res = {0};
        s = finish_write(c, kura_put_item(c->db, &req, &res), &res, req.return_consumed_capacity);
    }
    api_expr_free(&e);
    kura_value_free(item);
    return s;
}

const api_op api_op_put_item = {"PutItem", run_put};

/* ---- GetItem --------------------------------------------------------------------------- */

static kura_status run_get(api_call *c)
{
    kura_value *key = NULL;
    api_expr e = {NULL, NULL};
    kura_status s = api_legacy(c);
    const char *table = NULL;
    if (s == KURA_OK) s = api_map_member(c->req, "Key", &key);
    if (s == KURA_OK) s = api_expr_decode(c->req, false, &e);
    if (s == KURA_OK) s = api_table_member(c, c->req, &table);
    if (s == KURA_OK) {
        kura_get_item_req req = {
            .table_name = table,
            .key = key,
            .consistent_read = api_bool(c->req, "ConsistentRead", false),
            .projection_expression = api_str(c->req, "ProjectionExpression"),
            .expr = api_expr_attrs(&e),
            .return_consumed_capacity = api_rcc(c->req),
        };
        /* the item is printed from its stored bytes unless it is projected or measured */
        kura_get_item_res res = {0};
        kbuf enc = KBUF_INIT;
        bool encoded = false;
        s = api_engine(kura_get_item_encoded(c->db, &req, &res, &enc, &encoded));
        if (s == KURA_OK && encoded && enc.len) {
            s = jw_key(&c->out, "Item", 4);
            if (s == KURA_OK) s = jw_item_encoded(&c->out, enc.data, enc.len);
        }
        if (s == KURA_OK && res.item) s = api_out_item(c, "Item", res.item);
        if (s == KURA_OK)
            s = api_out_capacity(c, &res.consumed_capacity, req.return_consumed_capacity);
        kbuf_free(&enc);
        kura_get_item_res_free(&res);
    }
    api_expr_free(&e);
    kura_value_free(key);
    return s;
}

const api_op api_op_get_item = {"GetItem", run_get};

/* ---- UpdateItem ------------------------------------------------------------------------ */

static kura_status run_update(api_call *c)
{
    kura_value *key = NULL;
    api_expr e = {NULL, NULL};
    kura_status s = api_legacy(c);
    const char *table = NULL;
    if (s == KURA_OK) s = api_map_member(c->req, "Key", &key);
    if (s == KURA_OK) s = api_expr_decode(c->req, true, &e);
    if (s == KURA_OK) s = api_table_member(c, c->req, &table);
    if (s == KURA_OK) {
        kura_update_item_req req = {
            .table_name = table,
            .key = key,
            .update_expression = api_str(c->req, "UpdateExpression"),
            .condition_expression = api_str(c->req, "ConditionExpression"),
            .expr = api_expr_attrs(&e),
            .return_values = api_return_values(c->req, "ReturnValues"),
            .return_values_on_condition_check_failure =
                api_return_values(c->req, "ReturnValuesOnConditionCheckFailure"),
            .return_consumed_capacity = api_rcc(c->req),
            .return_item_collection_metrics = api_ricm(c->req),
        };
        kura_write_result res = {0};
        s = finish_write(c, kura_update_item(c->db, &req, &res), &res,
                         req.return_consumed_capacity);
    }
    api_expr_free(&e);
    kura_value_free(key);
    return s;
}

const api_op api_op_update_item = {"UpdateItem", run_update};

/* ---- DeleteItem ------------------------------------------------------------------------ */

static kura_status run_delete(api_call *c)
{
    kura_value *key = NULL;
    api_expr e = {NULL, NULL};
    kura_delete_item_req req = {.table_name = NULL};
    kura_status s = api_legacy(c);
    if (s == KURA_OK) s = api_map_member(c->req, "Key", &key);
    if (s == KURA_OK) s = check_old_only(c->req, &req.return_values);
    if (s == KURA_OK) s = api_expr_decode(c->req, true, &e);
    if (s == KURA_OK) s = api_table_member(c, c->req, &req.table_name);
    if (s == KURA_OK) {
        req.key = key;
        req.condition_expression = api_str(c->req, "ConditionExpression");
        req.expr = api_expr_attrs(&e);
        req.return_values_on_condition_check_failure =
            api_return_values(c->req, "ReturnValuesOnConditionCheckFailure");
        req.return_consumed_capacity = api_rcc(c->req);
        req.return_item_collection_metrics = api_ricm(c->req);
        kura_write_result res = {0};
        s = finish_write(c, kura_delete_item(c->db, &req, &res), &res,
                         req.return_consumed_capacity);
    }
    api_expr_free(&e);
    kura_value_free(key);
    return s;
}

const api_op api_op_delete_item = {"DeleteItem", run_delete};

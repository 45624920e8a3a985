/*
 * req_partiql.c - This file contains ExecuteStatement, DynamoDB's PartiQL over the JSON API:
 * its Parameters decoded into attribute values, the C API call
 * (kura_execute_statement, engine/partiql/) and the response {"Items":[...], "NextToken",
 * "ConsumedCapacity", "LastEvaluatedKey"} in the members' order of DynamoDB's model.
 * BatchExecuteStatement and ExecuteTransaction are in req_partiql_multi.c.
 */
#include <string.h>

#include "api/api_int.h"
#include "engine/model/value.h"
#include "engine/partiql_encoded.h"

kura_status api_params_decode(const jd_t *obj, kura_value **out)
{
    const jd_t *list = jd_object_get(obj, "Parameters");
    *out = NULL;
    if (!list) return KURA_OK;
    kura_value *l = kura_value_list();
    if (!l) return API_NOMEM();
    kura_status s = KURA_OK;
    for (size_t i = 0; s == KURA_OK && i < jd_array_size(list); i++) {
        kura_value *v = kura_value_null();
        if (!v) {
            s = API_NOMEM();
            break;
        }
        val_clear(v);
        s = jv_decode(jd_array_get(list, i), v);
        if (s != KURA_OK) {
            kura_value_free(v);
            break;
        }
        s = api_engine(kura_value_append(l, v));
    }
    if (s != KURA_OK) {
        kura_value_free(l);
        return s;
    }
    *out = l;
    return KURA_OK;
}

kura_status api_out_items(api_call *c, const kura_value *items)
{
    kura_status s = jw_key(&c->out, "Items", 5);
    if (s == KURA_OK) s = jw_raw(&c->out, "[");
    for (size_t i = 0; s == KURA_OK && items && i < kura_value_count(items); i++) {
        if (i) s = jw_raw(&c->out, ",");
        if (s == KURA_OK) s = jw_item(&c->out, kura_value_at(items, i, NULL, NULL));
    }
    return s == KURA_OK ? jw_raw(&c->out, "]") : s;
}

static kura_status run_execute(api_call *c)
{
    kura_value *params = NULL;
    kura_status s = api_params_decode(c->req, &params);
    if (s != KURA_OK) return s;
    const jd_t *limit = jd_object_get(c->req, "Limit");
    kura_execute_statement_req req = {
        .statement = api_str(c->req, "Statement"),
        .parameters = params,
        .consistent_read = api_bool(c->req, "ConsistentRead", false),
        .limit = !limit ? 0 : jd_integer_value(limit) > UINT32_MAX ? UINT32_MAX : (uint32_t)jd_integer_value(limit),
        .next_token = api_str(c->req, "NextToken"),
        .return_consumed_capacity = api_rcc(c->req),
        .return_values_on_condition_check_failure =
            api_return_values(c->req, "ReturnValuesOnConditionCheckFailure"),
    };
    /* the item of a SELECT by key is printed from its stored bytes (as GetItem's) */
    kura_execute_statement_res res = {0};
    kbuf enc = KBUF_INIT;
    bool encoded = false;
    s = api_engine(kura_execute_statement_encoded(c->db, &req, &res, &enc, &encoded));
    if (s == KURA_E_CONDITION_FAILED && res.item) {
        c->item = res.item;
        res.item = NULL;
    }
    if (s == KURA_OK && encoded) {
        s = jw_key(&c->out, "Items", 5);
        if (s == KURA_OK) s = jw_raw(&c->out, "[");
        if (s == KURA_OK && enc.len) s = jw_item_encoded(&c->out, enc.data, enc.len);
        if (s == KURA_OK) s = jw_raw(&c->out, "]");
    } else if (s == KURA_OK) {
        s = api_out_items(c, res.items);
    }
    kbuf_free(&enc);
    if (s == KURA_OK && res.next_token) {
        s = jw_key(&c->out, "NextToken", 9);
        if (s == KURA_OK) s = jw_string(&c->out, res.next_token, strlen(res.next_token));
    }
    if (s == KURA_OK) s = api_out_capacity(c, &res.consumed_capacity, req.return_consumed_capacity);
    if (s == KURA_OK && res.last_evaluated_key)
        s = api_out_item(c, "LastEvaluatedKey", res.last_evaluated_key);
    kura_execute_statement_res_free(&res);
    kura_value_free(params);
    return s;
}

const api_op api_op_execute_statement = {"ExecuteStatement", run_execute};

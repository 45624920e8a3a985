/*
 * req_transact.c - This file contains TransactWriteItems and TransactGetItems of the JSON API.
 *
 * Requests. After the generic passes (types, then the constraints of every member, paths such
 * as "transactItems.1.member.put.tableName"), the checks DynamoDB makes before it looks at a
 * table run in DynamoDB Local's order (DynamoDB Local 1.25.1, checked request by request):
 *   1. each action in turn: exactly one of ConditionCheck, Put, Delete, Update
 *      ("Invalid Request: TransactWriteRequest should contain Delete or Put or Update
 *      request" for none, "TransactItems can only contain one of Check, Put, Update or
 *      Delete" for several), then its Item or Key values, then a Put's item size;
 *   2. each action in turn: its ExpressionAttributeNames / ExpressionAttributeValues maps;
 *   3. everything else is kura_transact_write_items': the expressions, duplicate items
 *      ("Transaction request cannot include multiple operations on one item"), the tables.
 * TransactGetItems: each Get's Key, then each Get's ExpressionAttributeNames, then
 * kura_transact_get_items, which cancels the transaction (below) for a Key that does not
 * match its table's key schema, as DynamoDB does.
 *
 * Responses, in the member order of DynamoDB's model (also DynamoDB Local's):
 *   TransactWriteItems  {} plus "ConsumedCapacity" (a list, one entry per table) and
 *                       "ItemCollectionMetrics" ({"<table>": [...]}, as BatchWriteItem)
 *   TransactGetItems    {"ConsumedCapacity": [...], "Responses": [{"Item": {..}} or {}, ...]}
 * A transaction's ConsumedCapacity names the kind of its units, as DynamoDB's CLI examples and
 * DynamoDB Local print it: {"TableName":"T","CapacityUnits":2.0,"WriteCapacityUnits":2.0}
 * ("ReadCapacityUnits" for reads); with INDEXES, "Table" and each index carry the same split
 * for writes ({"WriteCapacityUnits":2.0,"CapacityUnits":2.0}) and only "CapacityUnits" for
 * TransactGetItems, as Local does. A TransactWriteItems answered from its ClientRequestToken
 * has no capacity from kura_transact_write_items, and then no "ConsumedCapacity".
 *
 * A cancelled transaction (KURA_E_TXN_CANCELED) hands its result to kura_execute (c->txn),
 * which writes the error body DynamoDB's model gives TransactionCanceledException:
 *   {"__type":"...#TransactionCanceledException","CancellationReasons":[{"Code":"None"},
 *    {"Item":{..},"Code":"ConditionalCheckFailed","Message":"The conditional request failed"}],
 *    "Message":"Transaction cancelled, please refer cancellation reasons for specific reasons
 *    [None, ConditionalCheckFailed]"}
 * The message is built here from the reasons (kura_last_error() keeps 512 bytes; 100 reasons
 * need more).
 */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

#define MSG_NO_ACTION                                                                              \
    "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request"
#define MSG_MULTI_ACTION "TransactItems can only contain one of Check, Put, Update or Delete"
#define MSG_CANCELLED                                                                              \
    "Transaction cancelled, please refer cancellation reasons for specific reasons"

/* ---- ConsumedCapacity --------------------------------------------------------------------- */

/* {["ReadCapacityUnits"|"WriteCapacityUnits":u,]"CapacityUnits":u} ("Table", an index) */
static kura_status put_units(kbuf *b, const char *split, double units)
{
    kura_status s = jw_raw(b, "{");
    if (s == KURA_OK && split) {
        s = jw_raw(b, split);
        if (s == KURA_OK) s = jw_raw(b, ":");
        if (s == KURA_OK) s = jw_real(b, units);
        if (s == KURA_OK) s = jw_raw(b, ",");
    }
    if (s == KURA_OK) s = jw_raw(b, "\"CapacityUnits\":");
    if (s == KURA_OK) s = jw_real(b, units);
    return s == KURA_OK ? jw_raw(b, "}") : s;
}

/* One table's entry, the table named `name`. `parts_split`: whether "Table" and the indexes
 * name their units' kind (TransactWriteItems) or give only CapacityUnits (TransactGetItems). */
static kura_status write_capacity(kbuf *b, const char *name, const kura_consumed_capacity *cc,
                                  kura_return_capacity mode, bool parts_split)
{
    const char *split = cc->write_capacity_units > 0  ? "\"WriteCapacityUnits\""
                        : cc->read_capacity_units > 0 ? "\"ReadCapacityUnits\""
                                                      : NULL;
    kura_status s = jw_raw(b, "{\"TableName\":");
    if (s == KURA_OK) s = jw_string(b, name, strlen(name));
    if (s == KURA_OK) s = jw_raw(b, ",\"CapacityUnits\":");
    if (s == KURA_OK) s = jw_real(b, cc->capacity_units);
    if (s == KURA_OK && cc->read_capacity_units > 0) {
        s = jw_raw(b, ",\"ReadCapacityUnits\":");
        if (s == KURA_OK) s = jw_real(b, cc->read_capacity_units);
    }
    if (s == KURA_OK && cc->write_capacity_units > 0) {
        s = jw_raw(b, ",\"WriteCapacityUnits\":");
        if (s == KURA_OK) s = jw_real(b, cc->write_capacity_units);
    }
    if (s != KURA_OK || mode != KURA_CAPACITY_INDEXES) return s == KURA_OK ? jw_raw(b, "}") : s;
    const char *part_split = parts_split ? split : NULL;
    s = jw_raw(b, ",\"Table\":");
    if (s == KURA_OK) s = put_units(b, part_split, cc->table_capacity_units);
    for (int global = 0; global < 2 && s == KURA_OK; global++) {
        bool first = true;
        for (size_t i = 0; s == KURA_OK && i < cc->index_count; i++) {
            const kura_index_capacity *ic = &cc->indexes[i];
            if (ic->global != (global == 1)) continue;
            s = jw_raw(b, !first   ? ","
                          : global ? ",\"GlobalSecondaryIndexes\":{"
                                   : ",\"LocalSecondaryIndexes\":{");
            first = false;
            if (s == KURA_OK) s = jw_string(b, ic->index_name, strlen(ic->index_name));
            if (s == KURA_OK) s = jw_raw(b, ":");
            if (s == KURA_OK) s = put_units(b, part_split, ic->capacity_units);
        }
        if (s == KURA_OK && !first) s = jw_raw(b, "}");
    }
    return s == KURA_OK ? jw_raw(b, "}") : s;
}

/* "ConsumedCapacity":[...] of the tables present, when asked for; nothing when no table is
 * (a TransactWriteItems answered from its ClientRequestToken consumed nothing). */
kura_status api_out_capacities(api_call *c, const kura_consumed_capacity *cc, size_t n,
                               kura_return_capacity mode, bool parts_split)
{
    if (mode == KURA_CAPACITY_NONE || n == 0) return KURA_OK;
    kura_status s = jw_key(&c->out, "ConsumedCapacity", 16);
    if (s == KURA_OK) s = jw_raw(&c->out, "[");
    for (size_t i = 0; s == KURA_OK && i < n; i++)
        if (cc[i].present && (s = jw_sep(&c->out)) == KURA_OK)
            s = write_capacity(&c->out,
                               cc[i].table_name ? api_table_shown(c, cc[i].table_name) : "", &cc[i],
                               mode, parts_split);
    return s == KURA_OK ? jw_raw(&c->out, "]") : s;
}

/* ---- TransactWriteItems --------------------------------------------------------------------- */

static const struct {
    const char *member;
    kura_transact_op op;
} actions[] = {
    {"ConditionCheck", KURA_TXN_CONDITION_CHECK},
    {"Put", KURA_TXN_PUT},
    {"Delete", KURA_TXN_DELETE},
    {"Update", KURA_TXN_UPDATE},
};

typedef struct write_state {
    kura_transact_write_item *items;
    const jd_t **bodies; /* each action's object (the Put, the Update, ...) */
    api_expr *exprs;
    size_t n;
} write_state;

static void write_state_free(write_state *w)
{
    for (size_t i = 0; w->items && i < w->n; i++) {
        kura_value_free((kura_value *)w->items[i].item);
        kura_value_free((kura_value *)w->items[i].key);
        if (w->exprs) api_expr_free(&w->exprs[i]);
    }
    free(w->items);
    free(w->bodies);
    free(w->exprs);
}

/* Step 1 for one action: which one it is, its Item (and size) or Key. */
static kura_status decode_action(const jd_t *member, kura_transact_write_item *it,
                                 const jd_t **body_out)
{
    if (jd_object_size(member) == 0) return api_err(KURA_E_INVALID, MSG_NO_ACTION);
    if (jd_object_size(member) > 1) return api_err(KURA_E_INVALID, MSG_MULTI_ACTION);
    const jd_t *body = NULL;
    for (size_t a = 0; !body && a < sizeof actions / sizeof actions[0]; a++)
        if ((body = jd_object_get(member, actions[a].member)) != NULL) it->op = actions[a].op;
    if (!body) return api_err(KURA_E_INVALID, MSG_NO_ACTION); /* pass 1 removed the others */
    kura_value *v = NULL;
    bool put = it->op == KURA_TXN_PUT;
    kura_status s = api_map_member(body, put ? "Item" : "Key", &v);
    if (s == KURA_OK && put && (s = api_check_item_size(v)) != KURA_OK) kura_value_free(v);
    if (s != KURA_OK) return s;
    if (put)
        it->item = v;
    else
        it->key = v;
    it->table_name = api_str(body, "TableName");
    it->update_expression = api_str(body, "UpdateExpression");
    it->condition_expression = api_str(body, "ConditionExpression");
    it->return_values_on_condition_check_failure =
        api_return_values(body, "ReturnValuesOnConditionCheckFailure");
    *body_out = body;
    return KURA_OK;
}

/* Steps 1 and 2 over every action, in DynamoDB Local's order, then the tables they name. */
static kura_status decode_actions(api_call *c, const jd_t *list, write_state *w)
{
    kura_status s = KURA_OK;
    for (size_t i = 0; s == KURA_OK && i < w->n; i++)
        s = decode_action(jd_array_get(list, i), &w->items[i], &w->bodies[i]);
    for (size_t i = 0; s == KURA_OK && i < w->n; i++)
        if ((s = api_expr_decode(w->bodies[i], true, &w->exprs[i])) == KURA_OK)
            w->items[i].expr = api_expr_attrs(&w->exprs[i]);
    for (size_t i = 0; s == KURA_OK && i < w->n; i++)
        s = api_table_name(c, w->items[i].table_name, &w->items[i].table_name);
    return s;
}

/* The error of a cancelled transaction: its message from the reasons' codes, the result handed
 * to kura_execute for the body. */
static kura_status cancelled(api_call *c, kura_transact_write_res *res)
{
    kbuf m = KBUF_INIT;
    bool ok = kbuf_append(&m, MSG_CANCELLED " [", strlen(MSG_CANCELLED) + 2);
    for (size_t i = 0; ok && i < res->cancellation_reason_count; i++) {
        const char *code = res->cancellation_reasons[i].code;
        if (!code) code = "None";
        ok = (i == 0 || kbuf_append(&m, ", ", 2)) && kbuf_append(&m, code, strlen(code));
    }
    ok = ok && kbuf_append(&m, "]", 2); /* with the NUL */
    kura_status s = ok ? api_err(KURA_E_TXN_CANCELED, "%s", (const char *)m.data) : API_NOMEM();
    kbuf_free(&m);
    c->txn = *res;
    memset(res, 0, sizeof *res);
    return s;
}

static kura_status run_transact_write(api_call *c)
{
    const jd_t *list = jd_object_get(c->req, "TransactItems");
    size_t n = jd_array_size(list);
    write_state w = {calloc(n, sizeof *w.items), calloc(n, sizeof *w.bodies),
                     calloc(n, sizeof *w.exprs), n};
    kura_status s = w.items && w.bodies && w.exprs ? KURA_OK : API_NOMEM();
    if (s == KURA_OK) s = decode_actions(c, list, &w);
    if (s == KURA_OK) {
        kura_transact_write_req req = {
            .items = w.items,
            .item_count = n,
            .client_request_token = api_str(c->req, "ClientRequestToken"),
            .return_consumed_capacity = api_rcc(c->req),
            .return_item_collection_metrics = api_ricm(c->req),
        };
        kura_transact_write_res res;
        memset(&res, 0, sizeof res);
        s = kura_transact_write_items(c->db, &req, &res);
        if (s == KURA_OK) {
            s = api_out_capacities(c, res.consumed_capacity, res.consumed_capacity_count,
                               req.return_consumed_capacity, true);
            if (s == KURA_OK)
                s = api_out_metrics_by_table(c, res.item_collection_metrics,
                                             res.item_collection_metrics_count);
        } else if (s == KURA_E_TXN_CANCELED) {
            s = cancelled(c, &res);
        } else {
            s = api_engine(s);
        }
        kura_transact_write_res_free(&res);
    }
    write_state_free(&w);
    return s;
}

const api_op api_op_transact_write_items = {"TransactWriteItems", run_transact_write};

/* ---- TransactGetItems ----------------------------------------------------------------------- */

static kura_status put_responses(api_call *c, const kura_transact_get_res *res)
{
    kura_status s = jw_key(&c->out, "Responses", 9);
    if (s == KURA_OK) s = jw_raw(&c->out, "[");
    for (size_t i = 0; s == KURA_OK && i < res->item_count; i++) {
        if (i) s = jw_raw(&c->out, ",");
        if (s == KURA_OK && res->items[i]) {
            s = jw_raw(&c->out, "{\"Item\":");
            if (s == KURA_OK) s = jw_item(&c->out, res->items[i]);
            if (s == KURA_OK) s = jw_raw(&c->out, "}");
        } else if (s == KURA_OK) {
            s = jw_raw(&c->out, "{}");
        }
    }
    return s == KURA_OK ? jw_raw(&c->out, "]") : s;
}

static kura_status run_transact_get(api_call *c)
{
    const jd_t *list = jd_object_get(c->req, "TransactItems");
    size_t n = jd_array_size(list);
    kura_transact_get_item *items = calloc(n, sizeof *items);
    api_expr *exprs = calloc(n, sizeof *exprs);
    kura_status s = items && exprs ? KURA_OK : API_NOMEM();
    for (size_t i = 0; s == KURA_OK && i < n; i++) {
        const jd_t *get = jd_object_get(jd_array_get(list, i), "Get");
        kura_value *key = NULL;
        if ((s = api_map_member(get, "Key", &key)) != KURA_OK) break;
        items[i].key = key;
        items[i].table_name = api_str(get, "TableName");
        items[i].projection_expression = api_str(get, "ProjectionExpression");
    }
    for (size_t i = 0; s == KURA_OK && i < n; i++) {
        const jd_t *get = jd_object_get(jd_array_get(list, i), "Get");
        if ((s = api_expr_decode(get, false, &exprs[i])) == KURA_OK)
            items[i].expr = api_expr_attrs(&exprs[i]);
    }
    for (size_t i = 0; s == KURA_OK && i < n; i++)
        s = api_table_name(c, items[i].table_name, &items[i].table_name);
    if (s == KURA_OK) {
        kura_transact_get_req req = {items, n, api_rcc(c->req)};
        kura_transact_get_res res;
        memset(&res, 0, sizeof res);
        s = kura_transact_get_items(c->db, &req, &res);
        if (s == KURA_E_TXN_CANCELED) { /* a Key not of its table's schema */
            kura_transact_write_res r = {.cancellation_reasons = res.cancellation_reasons,
                                         .cancellation_reason_count =
                                             res.cancellation_reason_count};
            res.cancellation_reasons = NULL;
            res.cancellation_reason_count = 0;
            s = cancelled(c, &r);
        } else {
            s = api_engine(s);
        }
        if (s == KURA_OK) {
            s = api_out_capacities(c, res.consumed_capacity, res.consumed_capacity_count,
                               req.return_consumed_capacity, false);
            if (s == KURA_OK) s = put_responses(c, &res);
            kura_transact_get_res_free(&res);
        }
    }
    for (size_t i = 0; items && i < n; i++) {
        kura_value_free((kura_value *)items[i].key);
        if (exprs) api_expr_free(&exprs[i]);
    }
    free(items);
    free(exprs);
    return s;
}

const api_op api_op_transact_get_items = {"TransactGetItems", run_transact_get};

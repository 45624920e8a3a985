/*
 * req_partiql_multi.c - This file contains the PartiQL operations on several statements:
 * BatchExecuteStatement (1..25 statements, all reads or all writes, each run on its own with
 * its own result or error in Responses) and ExecuteTransaction (1..100 statements, all
 * reads -> TransactGetItems or all writes -> TransactWriteItems, on the engine's transaction
 * path with its ClientRequestToken idempotency and CancellationReasons).
 *
 * Each statement is prepared (parsed, its table looked up, translated) by engine/partiql/.
 * A batch read must be a SELECT on the whole primary key (a GetItem); so must a read in a
 * transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "engine/partiql/partiql.h"

/* The messages DynamoDB Local 1.25.1 gives (its PartiQL front end is DynamoDB's). */
#define MSG_BATCH_MIXED "Read and write requests together in the same batch is not supported."
#define MSG_TXN_MIXED                                                                              \
    "ExecuteTransaction API does not support both read and write operations in the same request."
#define MSG_BATCH_READ "Only single item select is supported"
#define MSG_TXN_READ                                                                               \
    "Validation failed in TransactStatements[%zu]: Select statements within ExecuteTransaction "   \
    "must specify the primary key in the where clause."
#define MSG_TXN_RETURNING                                                                          \
    "Validation failed in TransactStatements[%zu]: RETURNING clause is not supported in "          \
    "ExecuteTransaction."

/* The statements of a request, prepared. */
typedef struct pq_batch {
    size_t n;
    pq_prepared *pp;
    kura_value **params;
    kura_status *status; /* of preparing each (batch: reported per entry) */
    char **msg;          /* its message */
} pq_batch;

static void batch_free(pq_batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        if (b->pp) pq_prepared_free(&b->pp[i]);
        if (b->params) kura_value_free(b->params[i]);
        if (b->msg) free(b->msg[i]);
    }
    free(b->pp);
    free(b->params);
    free(b->status);
    free(b->msg);
}

static bool is_read(const pq_prepared *p)
{
    return p->stmt && p->stmt->kind == PQ_SELECT;
}

/* Prepares every statement; `stop`: the first failure fails the request (a transaction).
 * Reads and writes together are refused with `mixed`. */
static kura_status batch_prepare(api_call *c, const jd_t *list, pq_batch *b, bool stop,
                                 const char *mixed)
{
    b->n = jd_array_size(list);
    b->pp = calloc(b->n, sizeof *b->pp);
    b->params = calloc(b->n, sizeof *b->params);
    b->status = calloc(b->n, sizeof *b->status);
    b->msg = calloc(b->n, sizeof *b->msg);
    if (!b->pp || !b->params || !b->status || !b->msg) return API_NOMEM();
    for (size_t i = 0; i < b->n; i++) {
        const jd_t *e = jd_array_get(list, i);
        kura_status s = api_params_decode(e, &b->params[i]);
        if (s != KURA_OK) return s;
        s = pq_prepare(c->db, api_str(e, "Statement"), b->params[i], &b->pp[i]);
        if (s == KURA_E_NOMEM || (s != KURA_OK && stop)) return api_engine(s);
        b->status[i] = s;
        if (s != KURA_OK && !(b->msg[i] = strdup(kura_last_error()))) return API_NOMEM();
    }
    bool reads = false, writes = false;
    for (size_t i = 0; i < b->n; i++) {
        if (!b->pp[i].stmt) continue;
        if (is_read(&b->pp[i])) reads = true;
        else writes = true;
    }
    if (reads && writes) return api_err(KURA_E_INVALID, "%s", mixed);
    return KURA_OK;
}

/* BatchStatementError's Code of a statement's failure; NULL: the request fails with it. */
static const char *error_code(kura_status s)
{
    switch (s) {
    case KURA_E_CONDITION_FAILED: return "ConditionalCheckFailed";
    case KURA_E_DUPLICATE_ITEM: return "DuplicateItem";
    case KURA_E_INVALID: return "ValidationError";
    case KURA_E_RESOURCE_NOT_FOUND: return "ResourceNotFound";
    case KURA_E_COLLECTION_SIZE: return "ItemCollectionSizeLimitExceeded";
    case KURA_E_TXN_CONFLICT: return "TransactionConflict";
    case KURA_E_THROUGHPUT_EXCEEDED: return "ProvisionedThroughputExceeded";
    case KURA_E_THROTTLED: return "ThrottlingError";
    default: return NULL;
    }
}

/* {"Error":{"Code":..,"Message":..[,"Item":..]}[,"TableName":..]}: the table for a failure
 * of the operation that ran, none for a statement refused before (as DynamoDB Local 1.25.1
 * answers). */
static kura_status put_error(kbuf *b, const char *code, const char *msg, const kura_value *item,
                             const char *table)
{
    kura_status s = jw_raw(b, "{\"Error\":{\"Code\":");
    if (s == KURA_OK) s = jw_string(b, code, strlen(code));
    if (s == KURA_OK) s = jw_raw(b, ",\"Message\":");
    if (s == KURA_OK) s = jw_message(b, msg);
    if (s == KURA_OK && item) {
        s = jw_raw(b, ",\"Item\":");
        if (s == KURA_OK) s = jw_item(b, item);
    }
    if (s == KURA_OK) s = jw_raw(b, "}");
    if (s == KURA_OK && table) {
        s = jw_raw(b, ",\"TableName\":");
        if (s == KURA_OK) s = jw_string(b, table, strlen(table));
    }
    return s == KURA_OK ? jw_raw(b, "}") : s;
}

/* Adds one result's capacity to the per-table totals (order of first appearance), as
 * BatchGetItem and BatchWriteItem give theirs: {"TableName", "CapacityUnits"}. */
static kura_status add_capacity(kura_consumed_capacity *tot, size_t *n,
                                const kura_consumed_capacity *cc)
{
    if (!cc->present || !cc->table_name) return KURA_OK;
    size_t i = 0;
    while (i < *n && strcmp(tot[i].table_name, cc->table_name) != 0) i++;
    if (i == *n) {
        memset(&tot[i], 0, sizeof tot[i]);
        tot[i].present = true;
        if (!(tot[i].table_name = strdup(cc->table_name))) return API_NOMEM();
        (*n)++;
    }
    tot[i].capacity_units += cc->capacity_units;
    tot[i].table_capacity_units += cc->table_capacity_units;
    return KURA_OK;
}

/* One entry of Responses. */
static kura_status batch_entry(api_call *c, const pq_batch *b, size_t i, const jd_t *e,
                               kura_consumed_capacity *tot, size_t *ntot)
{
    const pq_prepared *p = &b->pp[i];
    kbuf *out = &c->out;
    if (b->status[i] != KURA_OK) {
        const char *code = error_code(b->status[i]);
        return put_error(out, code ? code : "InternalServerError", b->msg[i], NULL, NULL);
    }
    if (is_read(p) && p->plan.kind != PQ_P_GET)
        return put_error(out, "ValidationError", MSG_BATCH_READ, NULL, NULL);
    kura_execute_statement_req req = {
        .consistent_read = api_bool(e, "ConsistentRead", false),
        .return_consumed_capacity = api_rcc(c->req),
        .return_values_on_condition_check_failure =
            api_return_values(e, "ReturnValuesOnConditionCheckFailure"),
    };
    kura_execute_statement_res res;
    kura_status s = pq_run(c->db, p, &req, &res);
    if (s != KURA_OK) {
        const char *code = error_code(s);
        if (!code) {
            kura_execute_statement_res_free(&res);
            return api_engine(s);
        }
        char *msg = strdup(kura_last_error());
        s = msg ? put_error(out, code, msg, res.item, p->plan.table) : API_NOMEM();
        free(msg);
    } else if (is_read(p)) {
        s = jw_raw(out, "{\"TableName\":");
        if (s == KURA_OK) s = jw_string(out, p->plan.table, strlen(p->plan.table));
        if (s == KURA_OK && kura_value_count(res.items)) {
            s = jw_raw(out, ",\"Item\":");
            if (s == KURA_OK) s = jw_item(out, kura_value_at(res.items, 0, NULL, NULL));
        }
        if (s == KURA_OK) s = jw_raw(out, "}");
    } else {
        s = jw_raw(out, "{\"TableName\":");
        if (s == KURA_OK) s = jw_string(out, p->plan.table, strlen(p->plan.table));
        if (s == KURA_OK) s = jw_raw(out, "}");
    }
    if (s == KURA_OK) s = add_capacity(tot, ntot, &res.consumed_capacity);
    kura_execute_statement_res_free(&res);
    return s;
}

static kura_status run_batch(api_call *c)
{
    const jd_t *list = jd_object_get(c->req, "Statements");
    pq_batch b = {0};
    kura_status s = batch_prepare(c, list, &b, false, MSG_BATCH_MIXED);
    kura_consumed_capacity tot[25];
    size_t ntot = 0;
    if (s == KURA_OK) s = jw_raw(&c->out, "\"Responses\":[");
    for (size_t i = 0; s == KURA_OK && i < b.n; i++) {
        if (i) s = jw_raw(&c->out, ",");
        if (s == KURA_OK) s = batch_entry(c, &b, i, jd_array_get(list, i), tot, &ntot);
    }
    if (s == KURA_OK) s = jw_raw(&c->out, "]");
    if (s == KURA_OK) s = api_out_capacities(c, tot, ntot, api_rcc(c->req), false);
    for (size_t i = 0; i < ntot; i++) free(tot[i].table_name);
    batch_free(&b);
    return s;
}

const api_op api_op_batch_execute_statement = {"BatchExecuteStatement", run_batch};

/* ---- ExecuteTransaction ------------------------------------------------------------------ */

static kura_status txn_reads(api_call *c, const pq_batch *b)
{
    kura_transact_get_item *items = calloc(b->n, sizeof *items);
    if (!items) return API_NOMEM();
    for (size_t i = 0; i < b->n; i++) {
        const pq_plan *p = &b->pp[i].plan;
        items[i] = (kura_transact_get_item){.table_name = p->table, .key = p->key,
                                            .projection_expression = p->projection,
                                            .expr = {p->names, p->values}};
    }
    kura_transact_get_req req = {items, b->n, api_rcc(c->req)};
    kura_transact_get_res res = {0};
    kura_status s = api_engine(kura_transact_get_items(c->db, &req, &res));
    if (s == KURA_OK) s = jw_raw(&c->out, "\"Responses\":[");
    for (size_t i = 0; s == KURA_OK && i < res.item_count; i++) {
        s = jw_raw(&c->out, i ? ",{" : "{");
        if (s == KURA_OK && res.items[i]) {
            s = jw_raw(&c->out, "\"Item\":");
            if (s == KURA_OK) s = jw_item(&c->out, res.items[i]);
        }
        if (s == KURA_OK) s = jw_raw(&c->out, "}");
    }
    if (s == KURA_OK) s = jw_raw(&c->out, "]");
    if (s == KURA_OK)
        s = api_out_capacities(c, res.consumed_capacity, res.consumed_capacity_count,
                               req.return_consumed_capacity, false);
    kura_transact_get_res_free(&res);
    free(items);
    return s;
}

/* A cancelled transaction: an INSERT whose condition failed is Code ValidationError with
 * Message PQ_MSG_DUPLICATE (a cancellation reason has no DuplicateItem code in DynamoDB's
 * documentation; DynamoDB Local 1.25.1 answers so), and the message lists the reasons again. */
static kura_status txn_cancelled(api_call *c, const pq_batch *b)
{
    kura_transact_write_res *r = &c->txn;
    kbuf m = KBUF_INIT;
    const char *head = "Transaction cancelled, please refer cancellation reasons for specific "
                       "reasons [";
    bool ok = kbuf_append(&m, head, strlen(head));
    for (size_t i = 0; i < r->cancellation_reason_count && i < b->n; i++) {
        kura_cancellation_reason *cr = &r->cancellation_reasons[i];
        if (b->pp[i].plan.kind == PQ_P_PUT && cr->code &&
            strcmp(cr->code, "ConditionalCheckFailed") == 0) {
            char *msg = strdup(PQ_MSG_DUPLICATE);
            if (msg) {
                free(cr->message);
                cr->message = msg;
                cr->code = "ValidationError";
            }
        }
        const char *code = cr->code ? cr->code : "None";
        ok = ok && (!i || kbuf_append(&m, ", ", 2)) && kbuf_append(&m, code, strlen(code));
    }
    ok = ok && kbuf_append(&m, "]", 2);
    kura_status s = ok ? api_err(KURA_E_TXN_CANCELED, "%s", (char *)m.data) : API_NOMEM();
    kbuf_free(&m);
    return s;
}

static kura_status txn_writes(api_call *c, const pq_batch *b, const jd_t *list)
{
    kura_transact_write_item *items = calloc(b->n, sizeof *items);
    if (!items) return API_NOMEM();
    static const kura_transact_op ops[] = {[PQ_P_PUT] = KURA_TXN_PUT,
                                           [PQ_P_UPDATE] = KURA_TXN_UPDATE,
                                           [PQ_P_DELETE] = KURA_TXN_DELETE};
    for (size_t i = 0; i < b->n; i++) {
        const pq_plan *p = &b->pp[i].plan;
        items[i] = (kura_transact_write_item){
            .op = ops[p->kind], .table_name = p->table, .item = p->item, .key = p->key,
            .update_expression = p->update, .condition_expression = p->condition,
            .expr = {p->names, p->values},
            .return_values_on_condition_check_failure = api_return_values(
                jd_array_get(list, i), "ReturnValuesOnConditionCheckFailure")};
    }
    kura_transact_write_req req = {.items = items, .item_count = b->n,
                                   .client_request_token = api_str(c->req, "ClientRequestToken"),
                                   .return_consumed_capacity = api_rcc(c->req)};
    kura_transact_write_res res = {0};
    kura_status s = api_engine(kura_transact_write_items(c->db, &req, &res));
    if (s == KURA_E_TXN_CANCELED) {
        c->txn = res; /* kura_execute prints and frees the reasons */
        s = txn_cancelled(c, b);
    } else {
        /* "Responses": [] as DynamoDB Local 1.25.1 answers a write transaction */
        if (s == KURA_OK) s = jw_raw(&c->out, "\"Responses\":[]");
        if (s == KURA_OK)
            s = api_out_capacities(c, res.consumed_capacity, res.consumed_capacity_count,
                                   req.return_consumed_capacity, true);
        kura_transact_write_res_free(&res);
    }
    free(items);
    return s;
}

static kura_status run_txn(api_call *c)
{
    const jd_t *list = jd_object_get(c->req, "TransactStatements");
    pq_batch b = {0};
    kura_status s = batch_prepare(c, list, &b, true, MSG_TXN_MIXED);
    for (size_t i = 0; s == KURA_OK && i < b.n; i++) {
        const pq_prepared *p = &b.pp[i];
        if (is_read(p) && p->plan.kind != PQ_P_GET) s = api_err(KURA_E_INVALID, MSG_TXN_READ, i);
        else if (p->stmt->returning != KURA_RETURN_NONE)
            s = api_err(KURA_E_INVALID, MSG_TXN_RETURNING, i);
    }
    if (s == KURA_OK) s = is_read(&b.pp[0]) ? txn_reads(c, &b) : txn_writes(c, &b, list);
    batch_free(&b);
    return s;
}

const api_op api_op_execute_transaction = {"ExecuteTransaction", run_txn};

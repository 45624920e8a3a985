/*
 * exec.c - This file contains kura_execute_statement(): a prepared PartiQL statement
 * (prepare.c) run through the item operation its plan names, and the result in DynamoDB's
 * ExecuteStatement shape: the items read (or the item RETURNING asked for), the NextToken of
 * a paged Query or Scan, the consumed capacity. An INSERT whose attribute_not_exists
 * condition fails is DuplicateItemException rather than ConditionalCheckFailedException, as
 * DynamoDB answers it.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/item_int.h"
#include "engine/model/value.h"
#include "engine/partiql_encoded.h"
#include "engine/partiql/partiql.h"
#include "util/status.h"

#define NOMEM() kura_err(KURA_E_NOMEM, "out of memory")

static kura_expression_attributes attrs(const pq_plan *p)
{
    return (kura_expression_attributes){p->names, p->values};
}

/* Items: [item] or []. Takes item (a map in a node of its own, as item_value_take makes): that
 * node becomes the list, so a result costs one allocation more than GetItem's, not three. */
static kura_status one_item(kura_execute_statement_res *res, kura_value *item)
{
    if (!item) return (res->items = kura_value_list()) ? KURA_OK : NOMEM();
    kura_value m = {0};
    val_move(&m, item);
    val_init_container(item, KURA_L);
    kura_status s = val_list_push(item, &m); /* m is cleared on failure */
    if (s != KURA_OK) {
        kura_value_free(item);
        return s;
    }
    res->items = item;
    return KURA_OK;
}

static kura_status run_get(kura_db *db, const pq_plan *p, item_pre *pre,
                           const kura_execute_statement_req *req, kura_execute_statement_res *res)
{
    kura_get_item_req g = {
        .table_name = p->table,
        .key = p->key,
        .consistent_read = req->consistent_read,
        .projection_expression = p->projection,
        .expr = attrs(p),
        .return_consumed_capacity = req->return_consumed_capacity,
    };
    kura_get_item_res gr = {0};
    kura_status s = item_get_pre(db, &g, pre, &gr);
    if (s != KURA_OK) return s;
    res->consumed_capacity = gr.consumed_capacity;
    memset(&gr.consumed_capacity, 0, sizeof gr.consumed_capacity);
    s = pre && pre->encoded ? KURA_OK : one_item(res, gr.item); /* encoded: Items are *enc */
    gr.item = NULL;
    kura_get_item_res_free(&gr);
    return s;
}

static kura_status run_page(kura_db *db, const pq_plan *p, const kura_execute_statement_req *req,
                            kura_execute_statement_res *res)
{
    kura_value *start = NULL;
    kura_status s = req->next_token ? pq_token_decode(req->next_token, &start) : KURA_OK;
    if (s != KURA_OK) return s;
    kura_page page = {0};
    if (p->kind == PQ_P_QUERY) {
        kura_query_req q = {
            .table_name = p->table, .index_name = p->index,
            .key_condition_expression = p->key_condition, .filter_expression = p->condition,
            .projection_expression = p->projection, .expr = attrs(p), .limit = req->limit,
            .scan_index_backward = p->backward, .exclusive_start_key = start,
            .consistent_read = req->consistent_read,
            .return_consumed_capacity = req->return_consumed_capacity,
        };
        s = kura_query(db, &q, &page);
    } else {
        kura_scan_req q = {
            .table_name = p->table, .index_name = p->index, .filter_expression = p->condition,
            .projection_expression = p->projection, .expr = attrs(p), .limit = req->limit,
            .exclusive_start_key = start, .consistent_read = req->consistent_read,
            .return_consumed_capacity = req->return_consumed_capacity,
        };
        s = kura_scan(db, &q, &page);
    }
    kura_value_free(start);
    if (s != KURA_OK) return s;
    res->items = page.items ? page.items : kura_value_list();
    page.items = NULL;
    res->consumed_capacity = page.consumed_capacity;
    memset(&page.consumed_capacity, 0, sizeof page.consumed_capacity);
    if (!res->items) s = NOMEM();
    if (s == KURA_OK && page.last_evaluated_key) {
        s = pq_token_encode(page.last_evaluated_key, &res->next_token);
        res->last_evaluated_key = page.last_evaluated_key;
        page.last_evaluated_key = NULL;
    }
    kura_page_free(&page);
    return s;
}

static kura_status run_write(kura_db *db, const pq_plan *p, item_pre *pre,
                             const kura_execute_statement_req *req,
                             kura_execute_statement_res *res)
{
    kura_write_result wr = {0};
    kura_status s;
    kura_return_values rvoccf = req->return_values_on_condition_check_failure;
    if (p->kind == PQ_P_PUT) {
        kura_put_item_req w = {.table_name = p->table, .item = p->item,
                               .condition_expression = p->condition, .expr = attrs(p),
                               .return_consumed_capacity = req->return_consumed_capacity};
        s = item_put_pre(db, &w, pre, &wr);
        if (s == KURA_E_CONDITION_FAILED) s = kura_err(KURA_E_DUPLICATE_ITEM, PQ_MSG_DUPLICATE);
    } else if (p->kind == PQ_P_UPDATE) {
        kura_update_item_req w = {.table_name = p->table, .key = p->key,
                                  .update_expression = p->update,
                                  .condition_expression = p->condition, .expr = attrs(p),
                                  .return_values = p->return_values,
                                  .return_values_on_condition_check_failure = rvoccf,
                                  .return_consumed_capacity = req->return_consumed_capacity};
        s = item_update_pre(db, &w, pre, &wr);
    } else {
        kura_delete_item_req w = {.table_name = p->table, .key = p->key,
                                  .condition_expression = p->condition, .expr = attrs(p),
                                  .return_values = p->return_values,
                                  .return_values_on_condition_check_failure = rvoccf,
                                  .return_consumed_capacity = req->return_consumed_capacity};
        s = item_delete_pre(db, &w, pre, &wr);
    }
    if (s == KURA_E_CONDITION_FAILED) {
        res->item = wr.item;
        wr.item = NULL;
    } else if (s == KURA_OK) {
        res->consumed_capacity = wr.consumed_capacity;
        memset(&wr.consumed_capacity, 0, sizeof wr.consumed_capacity);
        s = one_item(res, wr.attributes);
        wr.attributes = NULL;
    }
    kura_write_result_free(&wr);
    return s;
}

kura_status pq_run_plan(kura_db *db, const pq_plan *p, item_pre *pre,
                        const kura_execute_statement_req *req, kura_execute_statement_res *res)
{
    memset(res, 0, sizeof *res);
    switch (p->kind) {
    case PQ_P_GET:
        return run_get(db, p, pre, req, res);
    case PQ_P_QUERY:
    case PQ_P_SCAN:
        return run_page(db, p, req, res);
    default:
        return run_write(db, p, pre, req, res);
    }
}

kura_status pq_run(kura_db *db, const pq_prepared *pp, const kura_execute_statement_req *req,
                   kura_execute_statement_res *res)
{
    return pq_run_plan(db, &pp->plan, NULL, req, res);
}

static kura_status execute(kura_db *db, const kura_execute_statement_req *req,
                           kura_execute_statement_res *res_out, kbuf *enc, bool *encoded_out)
{
    memset(res_out, 0, sizeof *res_out);
    if (encoded_out) *encoded_out = false;
    if (!req->statement) return kura_err(KURA_E_INVALID, "Statement must not be null");
    kura_execute_statement_res res = {0};
    kura_status s = pq_cached_run(db, req, enc, encoded_out, &res);
    if (s == KURA_OK) {
        *res_out = res;
        return KURA_OK;
    }
    if (s == KURA_E_CONDITION_FAILED) {
        res_out->item = res.item;
        res.item = NULL;
    }
    kura_execute_statement_res_free(&res);
    return s;
}

kura_status kura_execute_statement(kura_db *db, const kura_execute_statement_req *req,
                                   kura_execute_statement_res *res_out)
{
    return execute(db, req, res_out, NULL, NULL);
}

kura_status kura_execute_statement_encoded(kura_db *db, const kura_execute_statement_req *req,
                                           kura_execute_statement_res *res_out, kbuf *enc,
                                           bool *encoded_out)
{
    return execute(db, req, res_out, enc, encoded_out);
}

void kura_execute_statement_res_free(kura_execute_statement_res *r)
{
    kura_value_free(r->items);
    free(r->next_token);
    kura_value_free(r->last_evaluated_key);
    kura_value_free(r->item);
    free(r->consumed_capacity.table_name);
    for (size_t i = 0; i < r->consumed_capacity.index_count; i++)
        free(r->consumed_capacity.indexes[i].index_name);
    free(r->consumed_capacity.indexes);
    memset(r, 0, sizeof *r);
}

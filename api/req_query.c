/*
 * req_query.c - This file contains Query and Scan of the JSON API: the checks
 * of ExclusiveStartKey and of parallel scans (Segment / TotalSegments), and the page response
 * (Items, Count, ScannedCount, LastEvaluatedKey, ConsumedCapacity).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

/* DynamoDB prefixes ExclusiveStartKey value errors with "The provided starting key is
 * invalid: " except for these (dynalite, validations/query.js). */
static bool start_key_unprefixed(const char *msg)
{
    static const char *const kinds[] = {"contains duplicates", "number set", "numeric value",
                                        "significant digits", "number with magnitude"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strstr(msg, kinds[i])) return true;
    return false;
}

static kura_status decode_start_key(const jd_t *req, kura_value **out)
{
    kura_status s = api_map_member(req, "ExclusiveStartKey", out);
    if (s != KURA_E_INVALID || start_key_unprefixed(api_err_msg())) return s;
    char *msg = strdup(api_err_msg());
    s = msg ? api_err(KURA_E_INVALID, "The provided starting key is invalid: %s", msg)
            : API_NOMEM();
    free(msg);
    return s;
}

static uint32_t decode_limit(const jd_t *req)
{
    jd_int_t n = jd_integer_value(jd_object_get(req, "Limit"));
    return n > (jd_int_t)UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* "ConsumedCapacity" of a page (api_write_capacity: with INDEXES the index's units follow
 * "Table"). */
static kura_status put_capacity(api_call *c, const kura_consumed_capacity *cc,
                                kura_return_capacity rcc)
{
    return api_out_capacity(c, cc, rcc);
}

static kura_status put_page(api_call *c, kura_page *p, kura_return_capacity rcc)
{
    kura_status s = KURA_OK;
    if (p->items) {
        s = jw_key(&c->out, "Items", 5);
        if (s == KURA_OK) s = jw_raw(&c->out, "[");
        for (size_t i = 0; s == KURA_OK && i < kura_value_count(p->items); i++) {
            if (i) s = jw_raw(&c->out, ",");
            if (s == KURA_OK) s = jw_item(&c->out, kura_value_at(p->items, i, NULL, NULL));
        }
        if (s == KURA_OK) s = jw_raw(&c->out, "]");
    }
    if (s == KURA_OK) s = api_out_int(c, "Count", (int64_t)p->count);
    if (s == KURA_OK) s = api_out_int(c, "ScannedCount", (int64_t)p->scanned_count);
    if (s == KURA_OK && p->last_evaluated_key)
        s = api_out_item(c, "LastEvaluatedKey", p->last_evaluated_key);
    if (s == KURA_OK) s = put_capacity(c, &p->consumed_capacity, rcc);
    kura_page_free(p);
    return s;
}

/* ---- Query ----------------------------------------------------------------------------- */

static kura_status run_query(api_call *c)
{
    kura_value *start = NULL;
    api_expr e = {NULL, NULL};
    kura_status s = api_legacy(c);
    if (s == KURA_OK) s = decode_start_key(c->req, &start);
    if (s == KURA_OK && !jd_object_get(c->req, "KeyConditionExpression"))
        s = api_err(KURA_E_INVALID, "Either the KeyConditions or KeyConditionExpression "
                                    "parameter must be specified in the request.");
    const char *table = NULL;
    if (s == KURA_OK) s = api_expr_decode(c->req, true, &e);
    if (s == KURA_OK) s = api_table_member(c, c->req, &table);
    if (s == KURA_OK) {
        kura_query_req req = {
            .table_name = table,
            .index_name = api_str(c->req, "IndexName"),
            .key_condition_expression = api_str(c->req, "KeyConditionExpression"),
            .filter_expression = api_str(c->req, "FilterExpression"),
            .projection_expression = api_str(c->req, "ProjectionExpression"),
            .expr = api_expr_attrs(&e),
            .select = api_select(c->req),
            .limit = decode_limit(c->req),
            .scan_index_backward = !api_bool(c->req, "ScanIndexForward", true),
            .exclusive_start_key = start,
            .consistent_read = api_bool(c->req, "ConsistentRead", false),
            .return_consumed_capacity = api_rcc(c->req),
        };
        kura_page page = {0};
        s = api_engine(kura_query(c->db, &req, &page));
        if (s == KURA_OK) s = put_page(c, &page, req.return_consumed_capacity);
    }
    api_expr_free(&e);
    kura_value_free(start);
    return s;
}

const api_op api_op_query = {"Query", run_query};

/* ---- Scan ------------------------------------------------------------------------------ */

static kura_status check_segments(const jd_t *req)
{
    const jd_t *seg = jd_object_get(req, "Segment");
    const jd_t *total = jd_object_get(req, "TotalSegments");
    if (seg && !total)
        return api_err(KURA_E_INVALID, "The TotalSegments parameter is required but was not "
                                       "present in the request when Segment parameter is "
                                       "present");
    if (total && !seg)
        return api_err(KURA_E_INVALID, "The Segment parameter is required but was not present "
                                       "in the request when parameter TotalSegments is present");
    if (seg && jd_integer_value(seg) >= jd_integer_value(total))
        return api_err(KURA_E_INVALID,
                       "The Segment parameter is zero-based and must be less than parameter "
                       "TotalSegments: Segment: %lld is not less than TotalSegments: %lld",
                       (long long)jd_integer_value(seg), (long long)jd_integer_value(total));
    return KURA_OK;
}

static kura_status run_scan(api_call *c)
{
    kura_value *start = NULL;
    api_expr e = {NULL, NULL};
    kura_status s = api_legacy(c);
    if (s == KURA_OK) s = decode_start_key(c->req, &start);
    if (s == KURA_OK) s = check_segments(c->req);
    const char *table = NULL;
    if (s == KURA_OK) s = api_expr_decode(c->req, true, &e);
    if (s == KURA_OK) s = api_table_member(c, c->req, &table);
    if (s == KURA_OK) {
        const jd_t *seg = jd_object_get(c->req, "Segment");
        kura_scan_req req = {
            .table_name = table,
            .index_name = api_str(c->req, "IndexName"),
            .filter_expression = api_str(c->req, "FilterExpression"),
            .projection_expression = api_str(c->req, "ProjectionExpression"),
            .expr = api_expr_attrs(&e),
            .select = api_select(c->req),
            .limit = decode_limit(c->req),
            .exclusive_start_key = start,
            .consistent_read = api_bool(c->req, "ConsistentRead", false),
            .has_segment = seg != NULL,
            .segment = (uint32_t)jd_integer_value(seg),
            .total_segments =
                (uint32_t)jd_integer_value(jd_object_get(c->req, "TotalSegments")),
            .return_consumed_capacity = api_rcc(c->req),
        };
        kura_page page = {0};
        s = api_engine(kura_scan(c->db, &req, &page));
        if (s == KURA_OK) s = put_page(c, &page, req.return_consumed_capacity);
    }
    api_expr_free(&e);
    kura_value_free(start);
    return s;
}

const api_op api_op_scan = {"Scan", run_scan};

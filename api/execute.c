/*
 * execute.c - This file contains kura_execute(), the DynamoDB_20120810 JSON protocol: the
 * operation table, the order of the generic checks, and the error bodies. The table also
 * holds DynamoDB Streams' operations (DynamoDBStreams_20120810: ListStreams, DescribeStream,
 * GetShardIterator, GetRecords; req_streams.c), which speak the same protocol with the same
 * error bodies; kura-server keeps each set under its own X-Amz-Target prefix (server/http.c).
 * kura_execute_ctx() also takes where the request came from (kura_request_context: the
 * address DescribeEndpoints answers, req_account.c; the region and account every ARN and
 * awsRegion is composed in, engine/arn.h); kura_execute() is it with the defaults.
 * docs/data-model.md lists every operation of DynamoDB's model and which of them are here.
 *
 * A request goes through, in DynamoDB's order (dynalite's index.js; step 4 from the model):
 *   1. the body must be a JSON object                      SerializationException
 *   2. the operation must be one kura has                  UnknownOperationException
 *   3. every member must have its Java type (schema_types.c) SerializationException
 *   4. DynamoDB's modelled constraints, then the table-name  ValidationException
 *      check (validate.c, tables generated from the model)
 *   5. the operation (req_*.c): structural checks, the C API call, the response
 * Errors from the C API keep their type (kura.h maps status codes to DynamoDB's error types);
 * storage failures (I/O, corruption, no space, read-only, out of memory) are
 * InternalServerError. The error body is
 *   {"__type":"com.amazonaws.dynamodb.v20120810#<Type>","message":"..."}
 * plus "Item" for a ConditionalCheckFailedException with ReturnValuesOnConditionCheckFailure.
 * A body that is not JSON (or none) is answered as DynamoDB's front end answers it, Coral's
 * error with no message: {"__type":"com.amazon.coral.service#SerializationException"} (as
 * dynalite, whose tests ran against DynamoDB; the parser's reason is kura_last_error()'s).
 * The members are named as in DynamoDB's model of each error: TransactionCanceledException,
 * IdempotentParameterMismatchException and TransactionInProgressException spell theirs
 * "Message" (SDKs take either spelling as the error's message; botocore also copies the
 * modelled members into the response, e.response["Message"]), and
 * TransactionCanceledException lists its reasons first, as DynamoDB Local 1.25.1 writes it:
 *   {"__type":"...#TransactionCanceledException","CancellationReasons":[{"Code":"None"},
 *    {"Item":{..},"Code":"ConditionalCheckFailed","Message":"..."}],"Message":"..."}
 */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "util/status.h"

#define TYPE_PREFIX "com.amazonaws.dynamodb.v20120810#"

static const api_op *const ops[] = {
    &api_op_create_table,
    &api_op_describe_table,
    &api_op_list_tables,
    &api_op_delete_table,
    &api_op_update_table,
    &api_op_put_item,
    &api_op_get_item,
    &api_op_update_item,
    &api_op_delete_item,
    &api_op_query,
    &api_op_scan,
    &api_op_batch_get_item,
    &api_op_batch_write_item,
    &api_op_transact_write_items,
    &api_op_transact_get_items,
    &api_op_update_time_to_live,
    &api_op_describe_time_to_live,
    &api_op_tag_resource,
    &api_op_untag_resource,
    &api_op_list_tags_of_resource,
    &api_op_list_streams,
    &api_op_describe_stream,
    &api_op_get_shard_iterator,
    &api_op_get_records,
    &api_op_describe_endpoints,
    &api_op_describe_limits,
    &api_op_put_resource_policy,
    &api_op_get_resource_policy,
    &api_op_delete_resource_policy,
    &api_op_execute_statement,
    &api_op_batch_execute_statement,
    &api_op_execute_transaction,
    &api_op_update_contributor_insights,
    &api_op_describe_contributor_insights,
    &api_op_list_contributor_insights,
};

/* The error type of the last kura_execute() on this thread; NULL after a success. */
static _Thread_local const char *exec_error_type;

const char *kura_execute_error_type(void)
{
    return exec_error_type;
}

static const char *error_type(kura_status s)
{
    switch (s) {
    case KURA_E_INVALID:
    case KURA_E_NOT_SUPPORTED:
        return "ValidationException";
    case KURA_E_RESOURCE_NOT_FOUND:
        return "ResourceNotFoundException";
    case KURA_E_RESOURCE_IN_USE:
        return "ResourceInUseException";
    case KURA_E_CONDITION_FAILED:
        return "ConditionalCheckFailedException";
    case KURA_E_LIMIT_EXCEEDED:
        return "LimitExceededException";
    case KURA_E_TXN_CANCELED:
        return "TransactionCanceledException";
    case KURA_E_TXN_CONFLICT:
        return "TransactionConflictException";
    case KURA_E_IDEMPOTENT_MISMATCH:
        return "IdempotentParameterMismatchException";
    case KURA_E_TXN_IN_PROGRESS:
        return "TransactionInProgressException";
    case KURA_E_COLLECTION_SIZE:
        return "ItemCollectionSizeLimitExceededException";
    case KURA_E_EXPIRED_ITERATOR:
        return "ExpiredIteratorException";
    case KURA_E_TRIMMED_DATA:
        return "TrimmedDataAccessException";
    case KURA_E_POLICY_NOT_FOUND:
        return "PolicyNotFoundException";
    case KURA_E_DUPLICATE_ITEM:
        return "DuplicateItemException";
    case KURA_E_THROUGHPUT_EXCEEDED:
        return "ProvisionedThroughputExceededException";
    case KURA_E_THROTTLED:
        return "ThrottlingException";
    default:
        return "InternalServerError";
    }
}

static const api_op *find_op(const char *name)
{
    for (size_t i = 0; name && i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i]->name, name) == 0) return ops[i];
    return NULL;
}

/* Steps 1-5 above; on failure *type_out names the error type when it is not the status's. */
static kura_status run(api_call *c, const char *operation, const char *json, size_t len,
                       const char **type_out)
{
    char jerr[160];
    *type_out = "SerializationException";
    c->not_json = !json;
    if (!json) return api_err(KURA_E_INVALID, "no request body");
    if (!(c->doc = jd_doc_new())) return API_NOMEM();
    c->not_json = !(c->req = jd_parse(c->doc, json, len, 0, jerr, sizeof jerr));
    if (c->not_json) return api_err(KURA_E_INVALID, "%s", jerr);
    if (!jd_is_object(c->req))
        return api_err(KURA_E_INVALID, "Unrecognized collection type class "
                                       "com.amazonaws.dynamodb.v20120810.Request");
    const api_op *op = find_op(operation);
    if (!op) {
        *type_out = "UnknownOperationException";
        return api_err(KURA_E_NOT_SUPPORTED, "An unknown operation was requested.");
    }
    c->op = op->name;
    kura_status s = api_check_types(c->req, op->name);
    if (s != KURA_OK) return s;
    *type_out = NULL;
    if ((s = api_check_model(op->name, c->req)) != KURA_OK) return s;
    /* room for a typical item response at once, rather than growing from 64 bytes */
    if (!kbuf_reserve(&c->out, 1024)) return API_NOMEM();
    if ((s = jw_raw(&c->out, "{")) != KURA_OK) return s;
    return op->run(c);
}

/* Whether DynamoDB's model names the error's message "Message" rather than "message". */
static bool capital_message(const char *type)
{
    return strcmp(type, "TransactionCanceledException") == 0 ||
           strcmp(type, "IdempotentParameterMismatchException") == 0 ||
           strcmp(type, "TransactionInProgressException") == 0;
}

/* "CancellationReasons":[{["Item":{..},]"Code":"..."[,"Message":"..."]},...], */
static kura_status put_reasons(kbuf *b, const kura_transact_write_res *r, bool items)
{
    kura_status s = jw_raw(b, "\"CancellationReasons\":[");
    for (size_t i = 0; s == KURA_OK && i < r->cancellation_reason_count; i++) {
        const kura_cancellation_reason *cr = &r->cancellation_reasons[i];
        const char *code = cr->code ? cr->code : "None";
        s = jw_raw(b, i ? ",{" : "{");
        if (s == KURA_OK && items && cr->item) {
            s = jw_raw(b, "\"Item\":");
            if (s == KURA_OK) s = jw_item(b, cr->item);
            if (s == KURA_OK) s = jw_raw(b, ",");
        }
        if (s == KURA_OK) s = jw_raw(b, "\"Code\":");
        if (s == KURA_OK) s = jw_string(b, code, strlen(code));
        if (s == KURA_OK && cr->message) {
            s = jw_raw(b, ",\"Message\":");
            if (s == KURA_OK) s = jw_message(b, cr->message);
        }
        if (s == KURA_OK) s = jw_raw(b, "}");
    }
    return s == KURA_OK ? jw_raw(b, "],") : s;
}

/* The error body, in place of whatever the operation wrote. `items`: with the items of the
 * ConditionalCheckFailed error or reasons (left out when they cannot be printed). */
static kura_status error_body(api_call *c, const char *type, const char *msg, bool items)
{
    kbuf_clear(&c->out);
    if (c->not_json) /* the parser's reason stays in kura_last_error() only */
        return jw_raw(&c->out, "{\"__type\":\"com.amazon.coral.service#SerializationException\"");
    kura_status s = jw_raw(&c->out, "{\"__type\":\"" TYPE_PREFIX);
    if (s == KURA_OK) s = jw_raw(&c->out, type);
    if (s == KURA_OK) s = jw_raw(&c->out, "\",");
    if (s == KURA_OK && c->txn.cancellation_reasons) s = put_reasons(&c->out, &c->txn, items);
    if (s == KURA_OK) s = jw_raw(&c->out, capital_message(type) ? "\"Message\":" : "\"message\":");
    if (s == KURA_OK) s = jw_message(&c->out, msg);
    if (s == KURA_OK && items && c->item) {
        s = jw_raw(&c->out, ",\"Item\":");
        if (s == KURA_OK) s = jw_item(&c->out, c->item);
    }
    return s;
}

kura_status kura_execute(kura_db *db, const char *operation, const char *json, size_t len,
                         char **out, size_t *out_len)
{
    return kura_execute_ctx(db, NULL, operation, json, len, out, out_len);
}

kura_status kura_execute_ctx(kura_db *db, const kura_request_context *ctx, const char *operation,
                             const char *json, size_t len, char **out, size_t *out_len)
{
    static const kura_request_context defaults = {.endpoint = NULL};
    api_call c = {.db = db, .out = KBUF_INIT, .ctx = ctx ? ctx : &defaults};
    c.scope = arn_scope_of(db, c.ctx->region, c.ctx->account);
    const char *type = NULL;
    exec_error_type = NULL;
    kura_status s = run(&c, operation, json, len, &type);
    jd_doc_free(c.doc);
    bool written = true;
    if (s != KURA_OK) {
        exec_error_type = type ? type : error_type(s);
        /* the message is copied: a failure to print an Item replaces api_err_msg(), and an
         * Item that cannot be printed is left out rather than losing the error */
        char *msg = strdup(api_err_msg());
        written = msg && error_body(&c, exec_error_type, msg, true) == KURA_OK;
        if (msg && !written) written = error_body(&c, exec_error_type, msg, false) == KURA_OK;
        free(msg);
    }
    kura_value_free(c.item);
    if (c.txn.cancellation_reasons || c.txn.consumed_capacity || c.txn.item_collection_metrics)
        kura_transact_write_res_free(&c.txn);
    if (!written || !kbuf_append(&c.out, "}", 2)) { /* the closing brace and the NUL */
        kbuf_free(&c.out);
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    *out = (char *)c.out.data;
    *out_len = c.out.len - 1;
    return s;
}

/*
 * api_int.h - internals of the JSON API (api/): the per-call context, the operation table,
 * the long error message, and helpers shared by the operations' request files (req_*.c).
 *
 * How a request runs (execute.c): parse the body (jdoc.h) -> pass 1, types
 * (SerializationException) -> pass 2, constraints (ValidationException) -> the operation's
 * run(): legacy_rewrite(), the remaining structural checks in DynamoDB's order, decoding into
 * the kura.h request struct, the C API call, and writing the response's members into c->out
 * (json_write.c: JSON text written directly, exactly as json_dumps would print it).
 *
 * Error messages: DynamoDB's messages can be longer than kura_last_error()'s buffer (a
 * validation message with 10 violations, a set rendered in full), so api/ keeps its own
 * per-thread copy: every failure inside api/ goes through api_err(), and every failing C API
 * call through api_engine(), which adopts kura_last_error(). kura_execute reads api_err_msg().
 */
#ifndef KURA_API_INT_H
#define KURA_API_INT_H

#include "api/jdoc.h"
#include <stdbool.h>

#include "api/schema.h"
#include "engine/arn.h"
#include "engine/model/value.h"
#include "kura.h"
#include "util/buf.h"

/* Records the message (also into kura_last_error(), truncated) and returns `s`. */
kura_status api_err(kura_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For the result of a C API call: KURA_OK, or `s` with kura_last_error() adopted. */
kura_status api_engine(kura_status s);
/* The message of this thread's last api_err()/api_engine() failure. */
const char *api_err_msg(void);
#define API_NOMEM() api_err(KURA_E_NOMEM, "out of memory")

typedef struct api_call {
    kura_db *db;
    const char *op;
    jd_doc *doc;      /* the request's JSON document (owned by kura_execute) */
    jd_t *req;        /* the request body after passes 1 and 2, in doc */
    kbuf out;         /* the response object so far: "{" on entry, then the members written
                       * by the api_out_* helpers; kura_execute closes it (owned by it) */
    kura_value *item; /* ConditionalCheckFailedException's "Item", handed over by the
                       * operation (owned by kura_execute) */
    kura_transact_write_res txn; /* TransactionCanceledException: the result whose
                                  * cancellation_reasons the error body lists, handed over by
                                  * TransactWriteItems (owned by kura_execute) */
    const kura_request_context *ctx; /* where the request came from (borrowed; never NULL:
                                      * kura_execute_ctx puts an all-defaults one in) */
    arn_scope scope; /* the region and account of every ARN the request names or is answered
                      * with: ctx's, else the database's (engine/arn.h) */
    bool not_json; /* the body is not JSON: answered as DynamoDB's front end does, with
                    * {"__type":"com.amazon.coral.service#SerializationException"} alone */
    jd_t *tables_given; /* {table name: the ARN the request named it by}, in doc; NULL until
                         * a table is named by ARN (table_arn.c) */
} api_call;

/* ---- Tables named by ARN (table_arn.c) ---------------------------------------------------- */

/* The table a (schema-checked) TableName or RequestItems key names: `given` itself when it is
 * a name; the table part of a table ARN in c->scope (a string in c->doc, remembered for
 * api_table_shown); ResourceNotFoundException "Requested resource not found" for an ARN of
 * another region or account. Called where the operation's table is looked up. */
kura_status api_table_name(api_call *c, const char *given, const char **name_out);
/* api_table_name of obj's "TableName" member. */
kura_status api_table_member(api_call *c, const jd_t *obj, const char **name_out);
/* How the response names table `name`: the ARN the request named it by, else `name`. */
const char *api_table_shown(const api_call *c, const char *name);

typedef struct api_op {
    const char *name; /* the operation, as DynamoDB's model names it (passes 1 and 2 walk its
                       * input shape: api/schema.h) */
    kura_status (*run)(api_call *c);
} api_op;

extern const api_op api_op_create_table, api_op_describe_table, api_op_delete_table,
    api_op_list_tables, api_op_update_table; /* req_tables.c */
extern const api_op api_op_put_item, api_op_get_item, api_op_update_item,
    api_op_delete_item;                                                     /* req_items.c */
extern const api_op api_op_query, api_op_scan;                              /* req_query.c */
extern const api_op api_op_batch_get_item, api_op_batch_write_item;         /* req_batch.c */
extern const api_op api_op_transact_write_items, api_op_transact_get_items; /* req_transact.c */
extern const api_op api_op_update_time_to_live, api_op_describe_time_to_live; /* req_ttl.c */
extern const api_op api_op_tag_resource, api_op_untag_resource,
    api_op_list_tags_of_resource; /* req_tags.c */
/* The (schema-checked) list of tags as one malloc'ed array in *out (the caller frees it; the
 * strings stay in the request), its length in *n_out. */
kura_status api_tags_decode(const jd_t *list, kura_tag **out, size_t *n_out);
extern const api_op api_op_update_contributor_insights, api_op_describe_contributor_insights,
    api_op_list_contributor_insights; /* req_insights.c */
extern const api_op api_op_put_resource_policy, api_op_get_resource_policy,
    api_op_delete_resource_policy; /* req_policy.c */
/* ---- Table settings (req_settings.c) --------------------------------------------------------- */

/* CreateTable's / UpdateTable's / a GSI's OnDemandThroughput, WarmThroughput, SSESpecification
 * and TableClass members of the (checked) request or index object `obj`; `given` false when
 * absent. */
kura_on_demand_throughput api_decode_on_demand(const jd_t *obj);
kura_warm_throughput api_decode_warm(const jd_t *obj);
kura_sse_specification api_decode_sse(const jd_t *obj);
kura_table_class api_decode_table_class(const jd_t *obj);
/* o["OnDemandThroughput"], o["WarmThroughput"] (with `status`; none when NULL) when given. */
bool api_settings_json(jd_doc *doc, jd_t *o, const kura_on_demand_throughput *od,
                       const kura_warm_throughput *w, const char *status);
/* o["SSEDescription"] (a KMS key) and o["TableClassSummary"] (a class was given). */
bool api_sse_class_json(jd_doc *doc, jd_t *o, const char *table_arn,
                        const kura_table_description *d);

extern const api_op api_op_list_streams, api_op_describe_stream, api_op_get_shard_iterator,
    api_op_get_records; /* req_streams.c */
extern const api_op api_op_describe_endpoints, api_op_describe_limits; /* req_account.c */
extern const api_op api_op_execute_statement; /* req_partiql.c */
extern const api_op api_op_batch_execute_statement, api_op_execute_transaction; /* req_partiql_multi.c */
/* PartiQL (req_partiql.c): a request's Parameters member (NULL when absent) as a new L in
 * *out (NULL when absent). */
kura_status api_params_decode(const jd_t *obj, kura_value **out);
/* "Items":[...] of an L of items. */
kura_status api_out_items(api_call *c, const kura_value *items);

/* ---- Change streams (stream_spec.c, req_streams.c) ------------------------------------------ */

/* The engine's refusal of an enabling specification without a view type (kura.h). */
#define API_MSG_NO_VIEW                                                                            \
    "Invalid StreamViewType: Stream ViewType must not be null or empty when enabling streams."
/* A request's StreamSpecification: what the engine gets, and the refusal the engine cannot see
 * from the struct, answered in place of API_MSG_NO_VIEW (stream_spec.c). */
typedef struct api_stream_spec {
    kura_stream_specification spec; /* `given` false when absent */
    bool enabled_missing;           /* "Stream StreamEnabled was null" */
    const char *invalid_view;       /* "Invalid StreamViewType: <this>" (in the request) */
} api_stream_spec;
void api_stream_spec_decode(const jd_t *req, api_stream_spec *out);
/* The status of the CreateTable or UpdateTable call made with sp->spec, with the message of a
 * refusal in place of the engine's API_MSG_NO_VIEW. */
kura_status api_stream_spec_result(const api_stream_spec *sp, kura_status s);
/* "KEYS_ONLY", ... ("" for a value out of range). Static. */
const char *api_stream_view_name(kura_stream_view_type v);
/* A ListStreams entry {"StreamArn","TableName","StreamLabel"} / a GetRecords record {"eventID",
 * ..., "dynamodb": {...}[, "userIdentity"]} appended to b as JSON. */
kura_status api_write_stream_summary(kbuf *b, const kura_stream_summary *st);
/* `region`: the record's awsRegion (the request's, arn_scope.region). */
kura_status api_write_stream_record(kbuf *b, const kura_stream_record *r, const char *region);

/* ---- Attribute values (json_value.c) ---------------------------------------------------- */

/* Decodes an attribute value that passed api_check_types into dst (empty), checking what
 * DynamoDB checks of each value, in its order and with its messages (empty or several
 * datatypes, numbers, NULL false, empty sets, duplicate set members). */
kura_status jv_decode(const jd_t *v, kura_value *dst);
/* Decodes a Map<AttributeValue> (an item or key) into a new M value (*out on success). */
kura_status jv_decode_map(const jd_t *obj, kura_value **out);

/* ---- Writing JSON (json_write.c) ----------------------------------------------------------- */

/* Each appends to b the text json_dumps(JSON_COMPACT | JSON_REAL_PRECISION(15)) prints for
 * the same JSON. Failures go through api_err: KURA_E_NOMEM, or KURA_E_INVALID for a string
 * that is not UTF-8 (which jansson cannot print either), a non-finite real or an empty value;
 * b then holds a partial text. */
kura_status jw_string(kbuf *b, const char *s, size_t n);
/* A NUL-terminated message as a JSON string, bytes that are not UTF-8 written as U+FFFD. */
kura_status jw_message(kbuf *b, const char *s);
kura_status jw_int(kbuf *b, int64_t v);
kura_status jw_real(kbuf *b, double d);
/* Any JSON value of a document, as json_dumps would print it (members in order, reals as
 * jw_real). */
kura_status jw_json(kbuf *b, const jd_t *v);
/* DynamoDB JSON of a value ({"S":"x"}) / of a map as an item ({"a":{...}}, attributes in
 * the map's order, which is name order). */
kura_status jw_value(kbuf *b, const kura_value *v);
kura_status jw_item(kbuf *b, const kura_value *m);
/* The same text written from an item's stored encoding (docs/format/item.md), which must
 * have passed val_check_encoded(): no kura_value is built. */
kura_status jw_item_encoded(kbuf *b, const uint8_t *p, size_t len);
/* Text appended as it is (a literal such as "true" or "{"). */
kura_status jw_raw(kbuf *b, const char *text);
/* ',' unless b is empty or ends with '{' or '[' (the start of an object or array). */
kura_status jw_sep(kbuf *b);
/* jw_sep, then "key": */
kura_status jw_key(kbuf *b, const char *key, size_t len);

/* ---- Request helpers (req_common.c) ------------------------------------------------------- */

/* Members of the (checked) request: NULL / the default when absent. */
const char *api_str(const jd_t *obj, const char *name);
bool api_bool(const jd_t *obj, const char *name, bool dflt);
/* Key schemas, projections and Time to Live name attributes with C strings (the table
 * definition holds them so): an AttributeName or NonKeyAttributes element holding NUL, which
 * DynamoDB would take, is refused here (KURA_E_INVALID) rather than cut short. */
kura_status api_check_schema_names(const jd_t *req);
kura_return_capacity api_rcc(const jd_t *req);
kura_select api_select(const jd_t *req);
/* ReturnItemCollectionMetrics: "SIZE" -> KURA_METRICS_SIZE, absent -> NONE. */
kura_return_metrics api_ricm(const jd_t *req);
/* ReturnValues-like members: "ALL_OLD" -> KURA_RETURN_ALL_OLD, absent -> NONE. */
kura_return_values api_return_values(const jd_t *req, const char *name);
/* Calls legacy_rewrite() for this call's operation (api/legacy.c). */
kura_status api_legacy(api_call *c);

/* ExpressionAttributeNames / ExpressionAttributeValues decoded into maps (NULL if absent). */
typedef struct api_expr {
    kura_value *names;
    kura_value *values;
} api_expr;
/* Checks the maps' keys and decodes them (values only with `with_values`), with DynamoDB's
 * messages ("ExpressionAttributeValues contains invalid value: ... for key :v"). */
kura_status api_expr_decode(const jd_t *obj, bool with_values, api_expr *out);
void api_expr_free(api_expr *e);
kura_expression_attributes api_expr_attrs(const api_expr *e);

/* Decodes the Map<AttributeValue> member `name` (NULL when absent) into *out. */
kura_status api_map_member(const jd_t *obj, const char *name, kura_value **out);

/* Members of the response (c->out), in the order DynamoDB prints them. api_out_json: v is
 * a node of the request's document (KURA_E_NOMEM if it is NULL: making it ran out). */
kura_status api_out_json(api_call *c, const char *key, jd_t *v);
kura_status api_out_item(api_call *c, const char *key, const kura_value *m);
kura_status api_out_int(api_call *c, const char *key, int64_t v);
/* The ConsumedCapacity object of one table: {"TableName", "CapacityUnits"[, "Table"]}, the
 * table named as c's request named it (api_table_shown). */
kura_status api_write_capacity(const api_call *c, kbuf *b, const kura_consumed_capacity *cc,
                               kura_return_capacity mode);
/* "ConsumedCapacity": that object, when cc is present and asked for. */
kura_status api_out_capacity(api_call *c, const kura_consumed_capacity *cc,
                             kura_return_capacity mode);
/* "ConsumedCapacity":[...] of a multi-table operation (req_transact.c): one object per
 * present entry, nothing when n is 0 or capacity was not asked for. `parts_split`: "Table"
 * and the indexes name their units' kind (ReadCapacityUnits/WriteCapacityUnits). */
kura_status api_out_capacities(api_call *c, const kura_consumed_capacity *cc, size_t n,
                               kura_return_capacity mode, bool parts_split);
/* One ItemCollectionMetrics object: {"ItemCollectionKey":{..},"SizeEstimateRangeGB":[lo,hi]}. */
kura_status api_write_metrics(kbuf *b, const kura_item_collection_metrics *m);
/* "ItemCollectionMetrics": that object, when m is present (SIZE on a table with an LSI). */
kura_status api_out_metrics(api_call *c, const kura_item_collection_metrics *m);
/* "ItemCollectionMetrics": {"<table>": [one object per entry], ...} of a multi-item write
 * (BatchWriteItem, TransactWriteItems), the tables in order of their first entry (named as
 * the request named them, api_table_shown); nothing when n is 0. */
kura_status api_out_metrics_by_table(api_call *c, const kura_item_collection_metrics *m, size_t n);
/* The whole-item size check DynamoDB makes while validating a request. */
kura_status api_check_item_size(const kura_value *item);

#endif

/*
 * item_int.h - what the item operations share (engine/item.c, item_update.c, item_batch.c;
 * engine/ only): the request checks DynamoDB makes before it looks at a table, the parsed
 * expressions of one request, the locked read-check-write step of a single-item write, and
 * moving values into results.
 *
 * Order of checks (as dynalite, which copies DynamoDB): the request itself first (expression
 * parameters, attribute values, ReturnValues, item size, every expression parsed, then unused
 * names and values), then the table (ResourceNotFound), then the key against the table's
 * schema, then the item under its lock (the condition).
 */
#ifndef KURA_ENGINE_ITEM_INT_H
#define KURA_ENGINE_ITEM_INT_H

#include "engine/expr/expr.h"
#include "engine/table.h"

/* DynamoDB's item size limit (names + values), 400 KB. */
#define ITEM_MAX_BYTES (400u * 1024u)

/* The parsed expressions of one request. Every pointer is NULL when the expression was not
 * given; ctx is NULL when the request has neither expressions nor attribute maps, so a plain
 * PutItem or GetItem allocates nothing here. The trees live in ctx. */
typedef struct item_exprs {
    expr_ctx *ctx;
    expr_node *cond;       /* ConditionExpression */
    expr_update *update;   /* UpdateExpression */
    expr_projection *proj; /* ProjectionExpression */
} item_exprs;

/*
 * Checks a request's expression parameters and parses its expressions into *out, in
 * DynamoDB's order: names without any expression ("ExpressionAttributeNames can only be
 * specified when using expressions"); values without a value-taking expression
 * ("ExpressionAttributeValues can only be specified when using expressions: <value_exprs>",
 * value_exprs e.g. "ConditionExpression is null"; NULL for GetItem, whose values are
 * reported as unused instead); the maps (expr_ctx_new); UpdateExpression, ConditionExpression,
 * ProjectionExpression; unused names and values. KURA_E_INVALID with DynamoDB's message,
 * KURA_E_NOMEM. On failure *out is left empty (nothing to free).
 */
kura_status item_exprs_parse(const kura_expression_attributes *ea, const char *update,
                             const char *cond, const char *proj, const char *value_exprs,
                             item_exprs *out);
void item_exprs_free(item_exprs *e);

/*
 * A request whose expressions were parsed ahead: PartiQL's plan cache (engine/partiql/cache.c)
 * keeps the parsed expressions of a statement's plan and runs the plan again with other
 * parameters put into the same values map, so that a statement run again costs no parse.
 * `ex` (borrowed, NULL: parse the request's text as usual) must have been parsed by
 * item_exprs_parse from the request's own text and maps, with values of the same types as
 * now (parse-time checks look at types). `hash`/`range` are the key names the plan was made
 * for: when the table's differ, the operation does nothing and sets `stale` (the plan must
 * be made again; the status is then KURA_E_NOT_FOUND without a message). `enc` (GetItem only,
 * may be NULL) asks for kura_get_item_encoded()'s result (engine/get_encoded.h): `encoded`
 * says whether the item was left in *enc.
 */
typedef struct item_pre {
    const item_exprs *ex;
    const char *hash, *range; /* range NULL: no sort key */
    kbuf *enc;
    bool stale;               /* out */
    bool encoded;             /* out */
} item_pre;

/* kura_get_item, kura_update_item, kura_put_item and kura_delete_item with a pre (NULL: the
 * public functions' behaviour exactly). engine/item.c, item_update.c. */
kura_status item_get_pre(kura_db *db, const kura_get_item_req *req, item_pre *pre,
                         kura_get_item_res *res_out);
kura_status item_update_pre(kura_db *db, const kura_update_item_req *req, item_pre *pre,
                            kura_write_result *res_out);
kura_status item_put_pre(kura_db *db, const kura_put_item_req *req, item_pre *pre,
                         kura_write_result *res_out);
kura_status item_delete_pre(kura_db *db, const kura_delete_item_req *req, item_pre *pre,
                            kura_write_result *res_out);
/* The expressions of a request: pre's (borrowed) when it has them, else item_exprs_parse's
 * with these arguments. item_pre_done frees what item_pre_exprs parsed, nothing of pre's. */
kura_status item_pre_exprs(const item_pre *pre, const kura_expression_attributes *ea,
                           const char *update, const char *cond, const char *proj,
                           const char *value_exprs, item_exprs *out);
void item_pre_done(const item_pre *pre, item_exprs *ex);
/* Whether t's key names are not pre's (then pre->stale is set); false without a pre. */
bool item_pre_stale(item_pre *pre, const kura_table *t);

/* ReturnValues: PutItem and DeleteItem allow NONE and ALL_OLD ("ReturnValues can only be
 * ALL_OLD or NONE"), UpdateItem every value. ReturnValuesOnConditionCheckFailure: NONE or
 * ALL_OLD. KURA_E_INVALID with DynamoDB's messages. */
kura_status item_check_return_values(kura_return_values rv, bool update);
kura_status item_check_return_on_failure(kura_return_values rv);

/* A request's item or key parameter (`param`: "item", "key"): present and a map.
 * KURA_E_INVALID "1 validation error detected: Value null at 'item' ...". */
kura_status item_check_map_param(const kura_value *m, const char *param);

/* ProjectionExpression paths into a key attribute ("pk.a", "pk[0]") are rejected: "Key
 * attributes must be scalars; list random access '[]' and map lookup '.' are not allowed:
 * Key: pk". */
kura_status item_check_projection_keys(const kura_table *t, const expr_projection *p);

/* ReturnItemCollectionMetrics: NONE or SIZE; KURA_E_INVALID with DynamoDB's enum message. */
kura_status item_check_return_metrics(kura_return_metrics rm);

/*
 * The locked step of a put or delete: under the item's lock, reads the old item into *old
 * (empty on entry; stays empty if absent, *found_out tells) when `read_old`, evaluates `cond`
 * (NULL: none) on it, checks and accounts the item's collection (engine/table_collection.h:
 * KURA_E_COLLECTION_SIZE when the write would take it past the limit), and writes `item`
 * (NULL: deletes). A false condition is KURA_E_CONDITION_FAILED ("The conditional request
 * failed") with *old still filled, nothing written. `cond` requires `read_old`. `icm`: NULL,
 * or (ReturnItemCollectionMetrics SIZE) an empty metrics struct filled on success when the
 * table has an LSI.
 */
kura_status item_write_locked(kura_table *t, const uint8_t *skey, size_t klen,
                              const expr_node *cond, bool read_old, const kura_value *item,
                              kura_value *old, bool *found_out,
                              kura_item_collection_metrics *icm);

/* ConsumedCapacity per table for a request of n actions on tables[0..n) (BatchWriteItem,
 * TransactWriteItems): one entry per table in order of first appearance, with units[i] and
 * the indexes' share ix[i] of the table whose first action is i (write units). *out is a
 * calloc'ed array of *count_out entries (freed with capacity_free each, then free).
 * KURA_E_NOMEM. */
kura_status item_capacity_per_table(kura_return_capacity mode, kura_table *const *tables,
                                    size_t n, const double *units,
                                    const kura_consumed_capacity *ix,
                                    kura_consumed_capacity **out, size_t *count_out);

/* UpdateItem's new item: the old one (or a copy of the key) with the update applied and
 * checked (400 KB: "Item size to update has exceeded the maximum allowed size"; nesting and
 * sets). The old item is copied only when `keep_old` (the caller still needs it); otherwise
 * it is moved into *neu and *old is left empty. */
kura_status item_update_build(const item_exprs *ex, const kura_value *key, kura_value *old,
                              bool found, bool keep_old, kura_value *neu);

/* UpdateItem's "Cannot update attribute <pk>. This attribute is part of the key". */
kura_status item_check_key_untouched(const kura_table *t, const expr_update *u);

/* Moves *v (a non-empty value) into a new heap value the caller frees with kura_value_free;
 * *v is empty afterwards. NULL (and *v cleared) when out of memory. */
kura_value *item_value_take(kura_value *v);

#endif

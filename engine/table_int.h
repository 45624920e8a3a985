/*
 * table_int.h - what table.c and table_ddl.c share: the table list and the table struct's
 * construction (engine/ only).
 */
#ifndef KURA_ENGINE_TABLE_INT_H
#define KURA_ENGINE_TABLE_INT_H

#include "engine/arn.h"
#include "engine/table.h"

/* The table called `name`, or NULL. tables_mu held. */
kura_table *table_find_locked(kura_db *db, const char *name);
/* A zeroed table with its locks initialised, or NULL; table_free frees it (and NULL). */
kura_table *table_new(void);
void table_free(kura_table *t);
kura_status table_list_add_locked(kura_db *db, kura_table *t);
void table_list_remove_locked(kura_db *db, kura_table *t);

/* table_def.c: the request's indexes into t->lsi / t->gsi (t->billing set), ACTIVE, ids from
 * 1 in request order (LSIs first); false when out of memory (table_free frees what was
 * copied). */
bool def_indexes_from_req(const kura_create_table_req *r, kura_table *t);
/* One index of a request into `x` (zeroed), ACTIVE, without key types. False: out of memory
 * (`x` then holds what was copied: idx_def_clear). */
bool def_index_from_req(const kura_index_def *d, idx_kind kind, bool provisioned, uint32_t id,
                        idx_def *x);
/* Sets the types of the table's key and of its indexes' key attributes from the attribute
 * definitions. KURA_E_CORRUPTION when an index key attribute has none (only a damaged
 * definition record has that). */
kura_status def_bind_schema(kura_table *t);
/* The definition record of `t` appended to `b`, and its decoding into a
 * table_new() table (name, id, settings, attribute definitions, key names, index definitions
 * without their key types: def_bind_schema sets those). */
kura_status def_encode(const kura_table *t, kbuf *b);
/* Writes the definition record of `t` to the system tree (synchronously), or deletes it. */
kura_status def_write(kura_db *db, const kura_table *t, bool remove);
kura_status def_decode(const uint8_t *p, size_t len, kura_table *t);

/* A list operation's Limit (ListTables, ListStreams, DescribeStream: 1..100; GetRecords:
 * 1..1000): above `max` it is DynamoDB's "1 validation error detected" (KURA_E_INVALID); 0
 * (not given) becomes `max`. */
kura_status table_limit_check(uint32_t *limit, uint32_t max);
/* DynamoDB's checks of a table name parameter (`param` is its name in messages, e.g.
 * "tableName"): not null, 3..255 bytes of [a-zA-Z0-9_.-]. KURA_E_INVALID. */
kura_status table_name_check(const char *name, const char *param);
/* table_check.c: CreateTable's key schema / attribute definitions and billing checks. */
kura_status table_check_schema(const kura_create_table_req *r);
/* The model's 1..255 (in UTF-16 units) on the attribute names of AttributeDefinitions `d` and
 * KeySchema `k`, every offending member in one message as DynamoDB lists them ("2 validation
 * errors detected: Value '...' at 'attributeDefinitions.1.member.attributeName' failed to
 * satisfy constraint: Member must have length less than or equal to 255; Value '...' at
 * 'keySchema.1.member.attributeName' ..."). CreateTable's and UpdateTable's. */
kura_status table_check_name_lengths(const kura_attribute_definition *d, size_t nd,
                                     const kura_key_schema_element *k, size_t nk);
kura_status table_check_billing(const kura_create_table_req *r);
/* table_check_index.c: CreateTable's LocalSecondaryIndexes and GlobalSecondaryIndexes, after
 * table_check_schema and table_check_billing passed. A list is "given" when its pointer is
 * not NULL (an empty list is an error, as in DynamoDB). KURA_E_INVALID. */
kura_status table_check_indexes(const kura_create_table_req *r);
/* "[a, b]" of the names of `n` key schema elements / attribute definitions, for DynamoDB's
 * messages (cut short at `cap`). */
void table_list_keys(char *out, size_t cap, const kura_key_schema_element *k, size_t n);
void table_list_defs(char *out, size_t cap, const kura_attribute_definition *d, size_t n);

/* table_tags.c: DynamoDB's checks of `n` tags (CreateTable's Tags or TagResource's), with the
 * model's messages naming "tags.<i>.member.key"; KURA_E_INVALID. */
kura_status tags_check(const kura_tag *tags, size_t n);
/* t's tags set to `n` tags (checked; a later one of a key replaces an earlier), or false when out
 * of memory (t unchanged). */
bool tags_set(kura_table *t, const kura_tag *tags, size_t n);
/* Frees `n` owned tags and the array (NULL is a no-op). */
void tags_free(kura_tag *tags, uint32_t n);

/* table_settings.c: whether the table has a setting of format version 6 (TableClass,
 * OnDemandThroughput, WarmThroughput, a KMS key, a resource-based policy, a GSI's settings);
 * that section appended to `b` (false: out of memory); and read from *p (advanced) into t,
 * false when malformed (t then holds what to free) or, unless `may_be_empty` (version 7),
 * when it sets nothing. */
bool def_settings_any(const kura_table *t);
bool def_settings_encode(const kura_table *t, kbuf *b);
bool def_settings_decode(const uint8_t **p, const uint8_t *end, kura_table *t, bool may_be_empty);
/* CreateTable's settings checked (after table_check_indexes) / copied into t (false: out of
 * memory); UpdateTable's checked and applied to t under tables_mu (the caller writes the
 * definition, and restores the saved settings if that fails). */
kura_status settings_check_create(const kura_create_table_req *r);
bool settings_from_create(const kura_create_table_req *r, kura_table *t);
kura_status settings_update_locked(kura_table *t, const kura_update_table_req *r,
                                   double now);
/* UpdateTable's table settings (billing mode `mode`, throughput, deletion protection and the
 * above) applied and the definition written, tables_mu held; on failure t is as before. */
kura_status settings_update_write_locked(kura_db *db, kura_table *t,
                                         const kura_update_table_req *req,
                                         kura_billing_mode mode, double now);
/* Before settings_update_locked, and before GSI updates are applied: the whole request's
 * settings against t (tables_mu held), with the rules of a billing mode switch. */
kura_status settings_check_update_locked(const kura_table *t, const kura_update_table_req *r);
/* A GSI's settings: of CreateTable or an UpdateTable Create (`ppr`: the table's billing mode
 * is PAY_PER_REQUEST), of an Update action on `x`; applied to `x`. */
kura_status settings_check_gsi(const kura_index_def *d, bool ppr);
kura_status settings_check_gsi_update(const idx_def *x, const kura_gsi_update *u, bool ppr);
void settings_gsi_apply(idx_def *x, const kura_on_demand_throughput *o,
                        const kura_warm_throughput *w);
/* The table's settings into a description (tables_mu held, d->table_arn set); false: out of
 * memory. A GSI's into its description. */
bool settings_describe(const kura_table *t, kura_table_description *d);
void settings_describe_gsi(const kura_table *t, const idx_def *x, kura_index_description *o);
/* The largest resource-based policy (20 KB, whitespace counted). */
enum { POLICY_MAX_BYTES = 20480 };
/* table_policy.c: a policy of CreateTable checked / set on a new table (false: no memory). */
kura_status policy_check(const char *policy);
bool policy_set_new(kura_table *t, const char *policy);
/* table_tags.c: the table named by a table ARN, pinned (table_release); KURA_E_INVALID for an
 * ARN that is not a table's, KURA_E_RESOURCE_NOT_FOUND. */
kura_status arn_table_acquire(kura_db *db, const arn_scope *sc, const char *arn,
                              kura_table **t_out);

/* table_gsi.c: UpdateTable's GlobalSecondaryIndexUpdates on the pinned table `t`. */
kura_status table_gsi_update(kura_db *db, kura_table *t, const kura_update_table_req *req);

/* The largest ReadCapacityUnits / WriteCapacityUnits DynamoDB accepts. */
extern const uint64_t TABLE_CAPACITY_MAX;
/* The most attribute definitions a valid table has: with indexes every definition must be a
 * key attribute of the table or of an index (2 + one per LSI + 8 per GSI). */
enum { TABLE_MAX_ATTR_DEFS = 2 + IDX_MAX_LSI + IDX_MAX_GSI * 2 * IDX_MAX_KEY_ATTRS };

#endif

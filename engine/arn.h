/*
 * arn.h - This file contains how kura names its resources with ARNs (engine/arn.c): the scope
 * an ARN is composed in (a region and an account), composing table and stream ARNs, and
 * taking a client's ARN apart; and the C API's calls that read an ARN, with the scope given.
 *
 * Nothing stores an ARN: a table keeps its name, a stream its label, and an ARN is composed
 * from (region, account, table name, suffix) where it is answered. kura.h's functions compose
 * in the database's scope (kura_options.region and account_id); the JSON API (api/) in the
 * request's (kura_request_context: the region of its SigV4 credential scope). A client's ARN
 * of another region or account names nothing here, as in DynamoDB, where each region of each
 * account is its own set of tables: such an ARN is answered as a missing resource.
 */
#ifndef KURA_ENGINE_ARN_H
#define KURA_ENGINE_ARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"

/* The longest region and account kura takes ("us-east-1", "000000000000"). */
#define ARN_REGION_MAX 32
#define ARN_ACCOUNT_LEN 12

/* The region and account ARNs are composed in. Borrowed strings. */
typedef struct arn_scope {
    const char *region;
    const char *account;
} arn_scope;

/* A region name: 1..ARN_REGION_MAX of [a-z0-9-]. An account: ARN_ACCOUNT_LEN digits. */
bool arn_region_valid(const char *region);
bool arn_account_valid(const char *account);

/* The scope of a request to `db`: `region` and `account` when valid, the database's default
 * for each that is NULL, empty or malformed. The strings are borrowed from the arguments and
 * from the database. */
arn_scope arn_scope_of(const kura_db *db, const char *region, const char *account);

/* "arn:aws:dynamodb:<region>:<account>:table/<table>" into out (cut at cap - 1 bytes). */
void arn_table(const arn_scope *sc, const char *table, char *out, size_t cap);
/* The table's ARN + "/stream/" + the stream's label (stream_label) into out. */
void arn_stream(const arn_scope *sc, const char *table, uint64_t label_ms, char *out,
                size_t cap);

/* The parts of "arn:aws:dynamodb:<region>:<digits>:table/<name>[/<rest>]" (DynamoDB's shape;
 * pointers into the ARN, `rest` NULL when there is no '/' after the name). */
typedef struct arn_parts {
    const char *region, *account, *table, *rest;
    size_t region_len, account_len, table_len;
} arn_parts;
/* Splits a table ARN (or one of its sub-resources); false if `arn` has not that shape. */
bool arn_split(const char *arn, arn_parts *out);
/* Whether the ARN's region and account are the scope's. */
bool arn_in_scope(const arn_parts *p, const arn_scope *sc);

/* ---- The C API's calls that read or answer ARNs, in a given scope ---------------------------
 * Each is its kura.h namesake composing and checking ARNs in `sc` instead of the database's
 * scope (kura.h's are these with arn_scope_of(db, NULL, NULL)). */

kura_status arn_tag_resource(kura_db *db, const arn_scope *sc, const char *resource_arn,
                             const kura_tag *tags, size_t count);
kura_status arn_untag_resource(kura_db *db, const arn_scope *sc, const char *resource_arn,
                               const char *const *keys, size_t count);
kura_status arn_list_tags_of_resource(kura_db *db, const arn_scope *sc, const char *resource_arn,
                                      const char *next_token, size_t limit, kura_tag_list *out);
kura_status arn_list_streams(kura_db *db, const arn_scope *sc, const char *table_name,
                             const char *exclusive_start_stream_arn, uint32_t limit,
                             kura_stream_summary **streams_out, size_t *count_out,
                             char **last_evaluated_out);
kura_status arn_describe_stream(kura_db *db, const arn_scope *sc, const char *stream_arn,
                                uint32_t limit, const char *exclusive_start_shard_id,
                                kura_stream_description *desc_out);
kura_status arn_get_shard_iterator(kura_db *db, const arn_scope *sc, const char *stream_arn,
                                   const char *shard_id, kura_shard_iterator_type type,
                                   const char *sequence_number, char **iterator_out);
kura_status arn_get_records(kura_db *db, const arn_scope *sc, const char *shard_iterator,
                            uint32_t limit, kura_stream_record **records_out, size_t *count_out,
                            char **next_iterator_out);
kura_status arn_put_resource_policy(kura_db *db, const arn_scope *sc, const char *resource_arn,
                                    const char *policy, const char *expected_revision_id,
                                    char **revision_id_out);
kura_status arn_get_resource_policy(kura_db *db, const arn_scope *sc, const char *resource_arn,
                                    char **policy_out, char **revision_id_out);
kura_status arn_delete_resource_policy(kura_db *db, const arn_scope *sc, const char *resource_arn,
                                       const char *expected_revision_id, char **revision_id_out);

/* A KMS key's ARN as SSEDescription shows it: `key` itself when it is an ARN, else
 * "arn:aws:kms:<region>:<account>:key/<key>" (or ":<alias>" for "alias/..."; NULL key: the
 * AWS managed key alias/aws/dynamodb) in the region and account of `table_arn`. Malloc'ed;
 * NULL when out of memory or table_arn is not a table ARN. */
char *arn_kms(const char *table_arn, const char *key);

#endif

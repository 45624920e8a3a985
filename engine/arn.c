/*
 * arn.c - This file contains kura's ARNs (arn.h): the scope a request's ARNs are composed in,
 * composing table and stream ARNs, taking a client's table ARN apart, and kura.h's calls
 * that name ARNs (each the arn.h one in the database's scope).
 */
#include "engine/arn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/db_int.h"
#include "engine/stream.h"

#define ARN_HEAD "arn:aws:dynamodb:"

bool arn_region_valid(const char *region)
{
    size_t n = region ? strlen(region) : 0;
    if (n < 1 || n > ARN_REGION_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = region[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return false;
    }
    return true;
}

bool arn_account_valid(const char *account)
{
    if (!account || strlen(account) != ARN_ACCOUNT_LEN)
        return false;
    for (size_t i = 0; i < ARN_ACCOUNT_LEN; i++)
        if (account[i] < '0' || account[i] > '9')
            return false;
    return true;
}

arn_scope arn_scope_of(const kura_db *db, const char *region, const char *account)
{
    arn_scope sc = {db->arn_region, db->arn_account};
    if (arn_region_valid(region))
        sc.region = region;
    if (arn_account_valid(account))
        sc.account = account;
    return sc;
}

void arn_table(const arn_scope *sc, const char *table, char *out, size_t cap)
{
    snprintf(out, cap, ARN_HEAD "%s:%s:table/%s", sc->region, sc->account, table);
}

void arn_stream(const arn_scope *sc, const char *table, uint64_t label_ms, char *out,
                size_t cap)
{
    char label[STREAM_LABEL_LEN + 1];
    stream_label(label_ms, label);
    snprintf(out, cap, ARN_HEAD "%s:%s:table/%s/stream/%s", sc->region, sc->account, table,
             label);
}

bool arn_split(const char *arn, arn_parts *out)
{
    /* dynalite's (DynamoDB's) shape: arn:aws:dynamodb:<region>:<digits>:table/<name> */
    if (!arn || strncmp(arn, ARN_HEAD, sizeof ARN_HEAD - 1) != 0)
        return false;
    const char *region = arn + sizeof ARN_HEAD - 1, *colon = strchr(region, ':');
    if (!colon || colon == region)
        return false;
    const char *acct = colon + 1, *q = acct;
    while (*q >= '0' && *q <= '9')
        q++;
    if (q == acct || strncmp(q, ":table/", 7) != 0)
        return false;
    const char *name = q + 7, *slash = strchr(name, '/');
    *out = (arn_parts){.region = region, .region_len = (size_t)(colon - region),
                       .account = acct, .account_len = (size_t)(q - acct), .table = name,
                       .table_len = slash ? (size_t)(slash - name) : strlen(name),
                       .rest = slash};
    return true;
}

bool arn_in_scope(const arn_parts *p, const arn_scope *sc)
{
    return p->region_len == strlen(sc->region) &&
           memcmp(p->region, sc->region, p->region_len) == 0 &&
           p->account_len == strlen(sc->account) &&
           memcmp(p->account, sc->account, p->account_len) == 0;
}

/* ---- The C API's calls in the database's scope ------------------------------------------- */

kura_status kura_tag_resource(kura_db *db, const char *resource_arn, const kura_tag *tags,
                              size_t count)
{
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    return arn_tag_resource(db, &sc, resource_arn, tags, count);
}

kura_status kura_untag_resource(kura_db *db, const char *resource_arn, const char *const *keys,
                                size_t count)
{
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    return arn_untag_resource(db, &sc, resource_arn, keys, count);
}

kura_status kura_list_tags_of_resource(kura_db *db, const char *resource_arn,
                                       const char *next_token, size_t limit,
                                       kura_tag_list *out)
{
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    return arn_list_tags_of_resource(db, &sc, resource_arn, next_token, limit, out);
}

kura_status kura_list_streams(kura_db *db, const char *table_name,
                              const char *exclusive_start_stream_arn, uint32_t limit,
                              kura_stream_summary **streams_out, size_t *count_out,
                              char **last_evaluated_out)
{
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    return arn_list_streams(db, &sc, table_name, exclusive_start_stream_arn, limit, streams_out,
                            count_out, last_evaluated_out);
}

kura_status kura_describe_stream(kura_db *db, const char *stream_arn, uint32_t limit,
                                 const char *exclusive_start_shard_id,
                                 kura_stream_description *desc_out)
{
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    return arn_describe_stream(db, &sc, stream_arn, limit, exclusive_start_shard_id, desc_out);
}

kura_status kura_get_shard_iterator(kura_db *db, const char *stream_arn, const char *shard_id,
                                    kura_shard_iterator_type type, const char *sequence_number,
                                    char **iterator_out)
{
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    return arn_get_shard_iterator(db, &sc, stream_arn, shard_id, type, sequence_number,
                                  iterator_out);
}

kura_status kura_get_records(kura_db *db, const char *shard_iterator, uint32_t limit,
                             kura_stream_record **records_out, size_t *count_out,
                             char **next_iterator_out)
{
    arn_scope sc = arn_scope_of(db, NULL, NULL);
    return arn_get_records(db, &sc, shard_iterator, limit, records_out, count_out,
                           next_iterator_out);
}

char *arn_kms(const char *table_arn, const char *key)
{
    if (key && !strncmp(key, "arn:", 4))
        return strdup(key);
    arn_parts p;
    if (!arn_split(table_arn, &p))
        return NULL;
    const char *k = key ? key : "alias/aws/dynamodb";
    bool alias = !strncmp(k, "alias/", 6);
    char *out = NULL;
    if (asprintf(&out, "arn:aws:kms:%.*s:%.*s:%s%s", (int)p.region_len, p.region,
                 (int)p.account_len, p.account, alias ? "" : "key/", k) < 0)
        return NULL;
    return out;
}

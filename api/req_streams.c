/*
 * req_streams.c - This file contains the DynamoDB Streams operations of the JSON API
 * (DynamoDBStreams_20120810: ListStreams, DescribeStream, GetShardIterator, GetRecords) and
 * the JSON of a stream record and of a ListStreams entry, which `kura streams` prints too
 * (tools/kura_streams.c). StreamSpecification, which CreateTable and UpdateTable take, is in
 * stream_spec.c.
 *
 * A request is checked in three steps:
 *   1. the constraints of DynamoDB Streams' model (validate.c): required members, lengths,
 *      Limit's minimum, ShardIteratorType's values, with the model's messages ("1 validation
 *      error detected: Value 'x' at 'streamArn' failed to satisfy constraint: Member must have
 *      length greater than or equal to 37"), as for every other operation;
 *   2. what the reference leaves to the service, with DynamoDB Local 1.25.1's messages: the
 *      Limit maxima (each operation words its own), a SequenceNumber given with TRIM_HORIZON
 *      or LATEST;
 *   3. the engine (kura.h, "Change streams"): whether the stream, the shard, the sequence
 *      number and the iterator exist and are valid, with its messages and error types
 *      (ResourceNotFoundException, ExpiredIteratorException, TrimmedDataAccessException).
 * DynamoDB Local skips step 1 for some members (it answers a 5-character StreamArn with
 * ResourceNotFoundException, a missing one with "Invalid StreamArn"); the reference wins.
 *
 * Every ARN answered is composed in the request's region and account (api_call.scope,
 * engine/arn.h), and a StreamArn of another region or account is a stream that does not
 * exist ("Requested resource not found: Stream: <arn> not found"), as in DynamoDB, where each
 * region is its own set of streams; a record's awsRegion is that region. A Time to Live delete's
 * userIdentity is {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}, the member
 * names of the API reference's Identity, which every SDK parses; the lower-case
 * {"type", "principalId"} of the Developer Guide's examples is what Lambda passes to a function
 * (boto3 reads that as an empty userIdentity).
 */
#include <string.h>

#include "api/api_int.h"

/* ---- Writing ------------------------------------------------------------------------------ */

/* ,"key":"value" (or "key":"value" at the start of an object) */
static kura_status put_str(kbuf *b, const char *key, const char *value)
{
    kura_status s = jw_key(b, key, strlen(key));
    return s == KURA_OK ? jw_string(b, value, strlen(value)) : s;
}

kura_status api_write_stream_summary(kbuf *b, const kura_stream_summary *st)
{
    kura_status s = jw_raw(b, "{");
    if (s == KURA_OK) s = put_str(b, "StreamArn", st->stream_arn);
    if (s == KURA_OK) s = put_str(b, "TableName", st->table_name);
    if (s == KURA_OK) s = put_str(b, "StreamLabel", st->stream_label);
    return s == KURA_OK ? jw_raw(b, "}") : s;
}

/* "key": the image as an item, when there is one. */
static kura_status put_image(kbuf *b, const char *key, const kura_value *m)
{
    if (!m) return KURA_OK;
    kura_status s = jw_key(b, key, strlen(key));
    return s == KURA_OK ? jw_item(b, m) : s;
}

kura_status api_write_stream_record(kbuf *b, const kura_stream_record *r, const char *region)
{
    kura_status s = jw_raw(b, "{");
    if (s == KURA_OK) s = put_str(b, "eventID", r->event_id);
    if (s == KURA_OK) s = put_str(b, "eventName", r->event_name);
    if (s == KURA_OK)
        s = jw_raw(b, ",\"eventVersion\":\"1.1\",\"eventSource\":\"aws:dynamodb\"");
    if (s == KURA_OK) s = put_str(b, "awsRegion", region);
    if (s == KURA_OK) s = jw_raw(b, ",\"dynamodb\":{\"ApproximateCreationDateTime\":");
    if (s == KURA_OK) s = jw_real(b, r->approximate_creation_date_time);
    if (s == KURA_OK) s = put_image(b, "Keys", r->keys);
    if (s == KURA_OK) s = put_image(b, "NewImage", r->new_image);
    if (s == KURA_OK) s = put_image(b, "OldImage", r->old_image);
    if (s == KURA_OK) s = put_str(b, "SequenceNumber", r->sequence_number);
    if (s == KURA_OK) s = jw_key(b, "SizeBytes", 9);
    if (s == KURA_OK) s = jw_int(b, (int64_t)r->size_bytes);
    if (s == KURA_OK) s = put_str(b, "StreamViewType", api_stream_view_name(r->stream_view_type));
    if (s == KURA_OK) s = jw_raw(b, "}");
    if (s == KURA_OK && r->service)
        s = jw_raw(b, ",\"userIdentity\":{\"PrincipalId\":\"dynamodb.amazonaws.com\","
                      "\"Type\":\"Service\"}");
    return s == KURA_OK ? jw_raw(b, "}") : s;
}

/* The Limit member (0 when absent: the engine's default), or the error of one past `max`. */
static kura_status limit_of(const jd_t *req, uint32_t max, const char *msg, uint32_t *out)
{
    jd_int_t v = jd_integer_value(jd_object_get(req, "Limit"));
    if (v > (jd_int_t)max) return api_err(KURA_E_INVALID, "%s%u", msg, max);
    *out = (uint32_t)v;
    return KURA_OK;
}

#define MSG_INVALID "One or more parameter values were invalid: "

/* ---- ListStreams -------------------------------------------------------------------------- */

static kura_status run_list(api_call *c)
{
    uint32_t limit = 0;
    kura_status s = limit_of(c->req, 100,
                             MSG_INVALID "Limit cannot be greater than the maximum allowed size: ",
                             &limit);
    if (s != KURA_OK) return s;
    kura_stream_summary *st = NULL;
    size_t n = 0;
    char *last = NULL;
    s = arn_list_streams(c->db, &c->scope, api_str(c->req, "TableName"),
                         api_str(c->req, "ExclusiveStartStreamArn"), limit, &st, &n, &last);
    if (s != KURA_OK) return api_engine(s);
    s = jw_key(&c->out, "Streams", 7);
    if (s == KURA_OK) s = jw_raw(&c->out, "[");
    for (size_t i = 0; s == KURA_OK && i < n; i++) {
        if (i) s = jw_raw(&c->out, ",");
        if (s == KURA_OK) s = api_write_stream_summary(&c->out, &st[i]);
    }
    if (s == KURA_OK) s = jw_raw(&c->out, "]");
    if (s == KURA_OK && last) s = put_str(&c->out, "LastEvaluatedStreamArn", last);
    kura_stream_summaries_free(st, n);
    kura_free(last);
    return s;
}

/* ---- DescribeStream ----------------------------------------------------------------------- */

static kura_status put_shard(kbuf *b, const kura_shard_description *sh)
{
    kura_status s = jw_raw(b, "{");
    if (s == KURA_OK) s = put_str(b, "ShardId", sh->shard_id);
    if (s == KURA_OK && sh->parent_shard_id) s = put_str(b, "ParentShardId", sh->parent_shard_id);
    if (s == KURA_OK) s = jw_raw(b, ",\"SequenceNumberRange\":{");
    if (s == KURA_OK) s = put_str(b, "StartingSequenceNumber", sh->starting_sequence_number);
    if (s == KURA_OK && sh->ending_sequence_number)
        s = put_str(b, "EndingSequenceNumber", sh->ending_sequence_number);
    return s == KURA_OK ? jw_raw(b, "}}") : s;
}

/* The StreamDescription object. `shards`: the shards to list (none for a ShardFilter). */
static kura_status put_stream_desc(kbuf *b, const kura_stream_description *d, bool shards)
{
    kura_status s = jw_raw(b, "{");
    if (s == KURA_OK) s = put_str(b, "StreamArn", d->stream_arn);
    if (s == KURA_OK) s = put_str(b, "StreamLabel", d->stream_label);
    if (s == KURA_OK) s = put_str(b, "StreamStatus", d->stream_status);
    if (s == KURA_OK) s = put_str(b, "StreamViewType", api_stream_view_name(d->stream_view_type));
    if (s == KURA_OK) s = jw_key(b, "CreationRequestDateTime", 23);
    if (s == KURA_OK) s = jw_real(b, d->creation_request_date_time);
    if (s == KURA_OK) s = put_str(b, "TableName", d->table_name);
    if (s == KURA_OK) s = jw_raw(b, ",\"KeySchema\":[");
    for (size_t i = 0; s == KURA_OK && i < d->key_schema_count; i++) {
        s = jw_raw(b, i ? ",{" : "{");
        if (s == KURA_OK) s = put_str(b, "AttributeName", d->key_schema[i].attribute_name);
        if (s == KURA_OK) s = put_str(b, "KeyType", d->key_schema[i].range ? "RANGE" : "HASH");
        if (s == KURA_OK) s = jw_raw(b, "}");
    }
    if (s == KURA_OK) s = jw_raw(b, "],\"Shards\":[");
    for (size_t i = 0; s == KURA_OK && shards && i < d->shards_count; i++) {
        if (i) s = jw_raw(b, ",");
        if (s == KURA_OK) s = put_shard(b, &d->shards[i]);
    }
    if (s == KURA_OK) s = jw_raw(b, "]");
    if (s == KURA_OK && shards && d->last_evaluated_shard_id)
        s = put_str(b, "LastEvaluatedShardId", d->last_evaluated_shard_id);
    return s == KURA_OK ? jw_raw(b, "}") : s;
}

/* A ShardFilter (Type CHILD_SHARDS: the shards split from ShardId) lists no shards: kura's
 * shards are never split (kura.h). The stream must exist all the same. */
static kura_status run_describe(api_call *c)
{
    uint32_t limit = 0;
    kura_status s =
        limit_of(c->req, 100, MSG_INVALID "Limit cannot be greater than the maximum: ", &limit);
    if (s != KURA_OK) return s;
    kura_stream_description d;
    s = arn_describe_stream(c->db, &c->scope, api_str(c->req, "StreamArn"), limit,
                            api_str(c->req, "ExclusiveStartShardId"), &d);
    if (s != KURA_OK) return api_engine(s);
    bool filtered = jd_object_get(c->req, "ShardFilter") != NULL;
    s = jw_key(&c->out, "StreamDescription", 17);
    if (s == KURA_OK) s = put_stream_desc(&c->out, &d, !filtered);
    kura_stream_description_free(&d);
    return s;
}

/* ---- GetShardIterator --------------------------------------------------------------------- */

static kura_status run_iterator(api_call *c)
{
    static const struct {
        const char *name;
        kura_shard_iterator_type type;
    } types[] = {{"TRIM_HORIZON", KURA_ITER_TRIM_HORIZON},
                 {"LATEST", KURA_ITER_LATEST},
                 {"AT_SEQUENCE_NUMBER", KURA_ITER_AT_SEQUENCE_NUMBER},
                 {"AFTER_SEQUENCE_NUMBER", KURA_ITER_AFTER_SEQUENCE_NUMBER}};
    const char *name = api_str(c->req, "ShardIteratorType");
    const char *seq = api_str(c->req, "SequenceNumber");
    kura_shard_iterator_type type = 0;
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strcmp(name, types[i].name) == 0) type = types[i].type;
    if (!type) return api_err(KURA_E_INVALID, "Invalid ShardIteratorType.");
    if (seq && (type == KURA_ITER_TRIM_HORIZON || type == KURA_ITER_LATEST))
        return api_err(KURA_E_INVALID,
                       MSG_INVALID "SequenceNumber should not be passed for this iterator type");
    char *it = NULL;
    kura_status s = arn_get_shard_iterator(c->db, &c->scope, api_str(c->req, "StreamArn"),
                                           api_str(c->req, "ShardId"), type, seq, &it);
    if (s != KURA_OK) return api_engine(s);
    s = put_str(&c->out, "ShardIterator", it);
    kura_free(it);
    return s;
}

/* ---- GetRecords --------------------------------------------------------------------------- */

/* DynamoDB Local looks at the iterator before the Limit maximum; here the Limit comes first,
 * so an invalid iterator with a Limit over 1000 is answered with the Limit's error. */
static kura_status run_records(api_call *c)
{
    uint32_t limit = 0;
    kura_status s =
        limit_of(c->req, 1000, MSG_INVALID "Limit should be less than or equal to ", &limit);
    if (s != KURA_OK) return s;
    kura_stream_record *r = NULL;
    size_t n = 0;
    char *next = NULL;
    s = arn_get_records(c->db, &c->scope, api_str(c->req, "ShardIterator"), limit, &r, &n,
                        &next);
    if (s != KURA_OK) return api_engine(s);
    s = jw_key(&c->out, "Records", 7);
    if (s == KURA_OK) s = jw_raw(&c->out, "[");
    for (size_t i = 0; s == KURA_OK && i < n; i++) {
        if (i) s = jw_raw(&c->out, ",");
        if (s == KURA_OK) s = api_write_stream_record(&c->out, &r[i], c->scope.region);
    }
    if (s == KURA_OK) s = jw_raw(&c->out, "]");
    if (s == KURA_OK && next) s = put_str(&c->out, "NextShardIterator", next);
    kura_stream_records_free(r, n);
    kura_free(next);
    return s;
}

const api_op api_op_list_streams = {"ListStreams", run_list};
const api_op api_op_describe_stream = {"DescribeStream", run_describe};
const api_op api_op_get_shard_iterator = {"GetShardIterator", run_iterator};
const api_op api_op_get_records = {"GetRecords", run_records};

/*
 * req_tables.c - This file contains the table operations of the JSON API: CreateTable,
 * DescribeTable, DeleteTable, ListTables and UpdateTable (decoding their requests into
 * the kura.h structs, and the TableDescription object of the responses).
 *
 * CreateTable's LocalSecondaryIndexes and GlobalSecondaryIndexes are decoded into the C API's
 * index definitions, which the engine checks with DynamoDB's messages (and, until index
 * maintenance is in the build, refuses after every check: engine/table_ddl.c); descriptions
 * list them as DynamoDB does. UpdateTable's GlobalSecondaryIndexUpdates are checked for
 * structure and then refused with a ValidationException saying so: kura cannot add or remove
 * indexes yet, and silently ignoring them would break the caller later.
 *
 * kura's own CreateTable parameter KuraPartitions (1..256) sets the table's hash partitions.
 * StreamSpecification (both operations) is decoded by stream_spec.c; descriptions show it while
 * a stream is enabled, and LatestStreamLabel / LatestStreamArn once the table had one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

#define F_LSI "LocalSecondaryIndexes"
#define F_GSI "GlobalSecondaryIndexes"

/* ---- TableDescription ------------------------------------------------------------------- */

/* {"AttributeName": name, key: value} */
static jd_t *name_pair(jd_doc *doc, const char *name, const char *key, const char *value)
{
    jd_t *o = jd_object(doc);
    if (!o || jd_object_set(o, "AttributeName", jd_string(doc, name)) != 0 ||
        jd_object_set(o, key, jd_string(doc, value)) != 0)
        return NULL;
    return o;
}

static const char *projection_str(kura_projection_type t)
{
    return t == KURA_PROJECTION_ALL ? "ALL" : t == KURA_PROJECTION_KEYS_ONLY ? "KEYS_ONLY"
                                                                             : "INCLUDE";
}

static jd_t *keys_json(jd_doc *doc, const kura_key_schema_element *ks, size_t n)
{
    jd_t *keys = jd_array(doc);
    for (size_t i = 0; keys && i < n; i++)
        if (jd_array_append(keys, name_pair(doc, ks[i].attribute_name, "KeyType",
                                            ks[i].range ? "RANGE" : "HASH")) != 0)
            return NULL;
    return keys;
}

/* One entry of LocalSecondaryIndexes / GlobalSecondaryIndexes, members in DynamoDB's order
 * (DynamoDB Local 1.25.1 and the API reference; DynamoDB Local leaves NumberOfDecreasesToday
 * out of a GSI's ProvisionedThroughput, DynamoDB and kura's table-level one have it). */
static jd_t *index_json(jd_doc *doc, const char *table_arn, const kura_index_description *x,
                        bool global)
{
    char arn[1024];
    snprintf(arn, sizeof arn, "%s/index/%s", table_arn, x->index_name);
    jd_t *o = jd_object(doc), *proj = jd_object(doc), *nka = NULL;
    bool ok = o && proj &&
              jd_object_set(proj, "ProjectionType",
                            jd_string(doc, projection_str(x->projection_type))) == 0;
    if (ok && x->non_key_attributes_count) {
        ok = (nka = jd_array(doc)) && jd_object_set(proj, "NonKeyAttributes", nka) == 0;
        for (size_t i = 0; ok && i < x->non_key_attributes_count; i++)
            ok = jd_array_append(nka, jd_string(doc, x->non_key_attributes[i])) == 0;
    }
    ok = ok && jd_object_set(o, "IndexName", jd_string(doc, x->index_name)) == 0 &&
         jd_object_set(o, "KeySchema", keys_json(doc, x->key_schema, x->key_schema_count)) == 0 &&
         jd_object_set(o, "Projection", proj) == 0;
    if (ok && global) {
        jd_t *pt = jd_object(doc);
        ok = pt && jd_object_set(o, "IndexStatus", jd_string(doc, x->index_status)) == 0 &&
             (!x->backfilling || jd_object_set(o, "Backfilling", jd_true(doc)) == 0) &&
             jd_object_set(pt, "NumberOfDecreasesToday", jd_integer(doc, 0)) == 0 &&
             jd_object_set(pt, "ReadCapacityUnits",
                           jd_integer(doc, (jd_int_t)x->read_capacity_units)) == 0 &&
             jd_object_set(pt, "WriteCapacityUnits",
                           jd_integer(doc, (jd_int_t)x->write_capacity_units)) == 0 &&
             jd_object_set(o, "ProvisionedThroughput", pt) == 0;
    }
    ok = ok &&
         jd_object_set(o, "IndexSizeBytes", jd_integer(doc, (jd_int_t)x->index_size_bytes)) == 0 &&
         jd_object_set(o, "ItemCount", jd_integer(doc, (jd_int_t)x->item_count)) == 0 &&
         jd_object_set(o, "IndexArn", jd_string(doc, arn)) == 0;
    ok = ok && api_settings_json(doc, o, &x->on_demand, &x->warm, global ? "ACTIVE" : NULL);
    return ok ? o : NULL;
}

/* o[key] = the list of index descriptions, when there are any. */
static bool indexes_json(jd_doc *doc, jd_t *o, const char *key, const char *table_arn,
                         const kura_index_description *xs, size_t n, bool global)
{
    jd_t *arr = n ? jd_array(doc) : NULL;
    for (size_t i = 0; arr && i < n; i++)
        if (jd_array_append(arr, index_json(doc, table_arn, &xs[i], global)) != 0)
            return false;
    return n == 0 || (arr && jd_object_set(o, key, arr) == 0);
}

/* StreamSpecification while a stream is enabled, and the table's latest stream (enabled or
 * not), in DynamoDB's place: after the indexes. */
static bool stream_json(jd_doc *doc, jd_t *o, const char *table_arn,
                        const kura_table_description *d)
{
    char arn[1024];
    snprintf(arn, sizeof arn, "%s/stream/%s", table_arn,
             d->latest_stream_label ? d->latest_stream_label : "");
    if (d->stream_enabled) {
        jd_t *spec = jd_object(doc);
        if (!spec || jd_object_set(spec, "StreamEnabled", jd_true(doc)) != 0 ||
            jd_object_set(spec, "StreamViewType",
                          jd_string(doc, api_stream_view_name(d->stream_view_type))) != 0 ||
            jd_object_set(o, "StreamSpecification", spec) != 0)
            return false;
    }
    return !d->latest_stream_arn ||
           (jd_object_set(o, "LatestStreamLabel", jd_string(doc, d->latest_stream_label)) == 0 &&
            jd_object_set(o, "LatestStreamArn", jd_string(doc, arn)) == 0);
}

/* The description as DynamoDB answers it, its ARNs (TableArn, IndexArn, LatestStreamArn)
 * composed in the request's scope from the names the engine gives (engine/arn.h). */
static jd_t *desc_json(jd_doc *doc, const arn_scope *sc, const kura_table_description *d)
{
    char table_arn[512];
    arn_table(sc, d->table_name, table_arn, sizeof table_arn);
    jd_t *o = jd_object(doc), *defs = jd_array(doc);
    jd_t *keys = keys_json(doc, d->key_schema, d->key_schema_count), *pt = jd_object(doc);
    bool ok = o && defs && keys && pt;
    for (size_t i = 0; ok && i < d->attribute_definitions_count; i++) {
        const kura_attribute_definition *a = &d->attribute_definitions[i];
        ok = jd_array_append(defs, name_pair(doc, a->attribute_name, "AttributeType",
                                             val_type_name(a->attribute_type))) == 0;
    }
    ok = ok && jd_object_set(pt, "NumberOfDecreasesToday", jd_integer(doc, 0)) == 0 &&
         jd_object_set(pt, "ReadCapacityUnits",
                       jd_integer(doc, (jd_int_t)d->read_capacity_units)) == 0 &&
         jd_object_set(pt, "WriteCapacityUnits",
                       jd_integer(doc, (jd_int_t)d->write_capacity_units)) == 0;
    ok = ok && jd_object_set(o, "AttributeDefinitions", defs) == 0 &&
         jd_object_set(o, "TableName", jd_string(doc, d->table_name)) == 0 &&
         jd_object_set(o, "KeySchema", keys) == 0 &&
         jd_object_set(o, "TableStatus", jd_string(doc, d->table_status)) == 0 &&
         jd_object_set(o, "CreationDateTime", jd_real(doc, d->creation_date_time)) == 0 &&
         jd_object_set(o, "ProvisionedThroughput", pt) == 0 &&
         jd_object_set(o, "TableSizeBytes", jd_integer(doc, (jd_int_t)d->table_size_bytes)) ==
             0 &&
         jd_object_set(o, "ItemCount", jd_integer(doc, (jd_int_t)d->item_count)) == 0 &&
         jd_object_set(o, "TableArn", jd_string(doc, table_arn)) == 0 &&
         jd_object_set(o, "TableId", jd_string(doc, d->table_id)) == 0;
    /* BillingModeSummary: PAY_PER_REQUEST, or a table that was PAY_PER_REQUEST once */
    bool ppr = d->billing_mode == KURA_BILLING_PAY_PER_REQUEST;
    if (ok && (ppr || d->last_update_to_pay_per_request_date_time > 0)) {
        jd_t *b = jd_object(doc);
        ok = b && jd_object_set(b, "BillingMode",
                                jd_string(doc, ppr ? "PAY_PER_REQUEST" : "PROVISIONED")) == 0;
        if (ok && d->last_update_to_pay_per_request_date_time > 0)
            ok = jd_object_set(b, "LastUpdateToPayPerRequestDateTime",
                               jd_real(doc, d->last_update_to_pay_per_request_date_time)) == 0;
        ok = ok && jd_object_set(o, "BillingModeSummary", b) == 0;
    }
    ok = ok &&
         indexes_json(doc, o, "LocalSecondaryIndexes", table_arn, d->local_secondary_indexes,
                      d->local_secondary_indexes_count, false) &&
         indexes_json(doc, o, "GlobalSecondaryIndexes", table_arn, d->global_secondary_indexes,
                      d->global_secondary_indexes_count, true);
    ok = ok && stream_json(doc, o, table_arn, d) && api_sse_class_json(doc, o, table_arn, d) &&
         jd_object_set(o, "DeletionProtectionEnabled",
                       jd_boolean(doc, d->deletion_protection_enabled)) == 0 &&
         api_settings_json(doc, o, &d->on_demand, &d->warm, "ACTIVE");
    return ok ? o : NULL;
}

/* resp[key] = the description, which is freed either way. */
static kura_status put_desc(api_call *c, const char *key, kura_status s, kura_table_description *d)
{
    if (s != KURA_OK) return api_engine(s);
    s = api_out_json(c, key, desc_json(c->doc, &c->scope, d));
    kura_table_description_free(d);
    return s;
}

static void decode_throughput(const jd_t *req, bool *has, uint64_t *rcu, uint64_t *wcu)
{
    const jd_t *pt = jd_object_get(req, "ProvisionedThroughput");
    *has = pt != NULL;
    *rcu = (uint64_t)jd_integer_value(jd_object_get(pt, "ReadCapacityUnits"));
    *wcu = (uint64_t)jd_integer_value(jd_object_get(pt, "WriteCapacityUnits"));
}

static kura_billing_mode decode_billing(const jd_t *req)
{
    const char *b = api_str(req, "BillingMode");
    if (!b) return KURA_BILLING_UNSET;
    return strcmp(b, "PAY_PER_REQUEST") == 0 ? KURA_BILLING_PAY_PER_REQUEST
                                             : KURA_BILLING_PROVISIONED;
}

/* ---- CreateTable ----------------------------------------------------------------------- */

static kura_projection_type decode_projection_type(const char *t)
{
    if (!t) return KURA_PROJECTION_UNSET;
    return strcmp(t, "ALL") == 0         ? KURA_PROJECTION_ALL
           : strcmp(t, "KEYS_ONLY") == 0 ? KURA_PROJECTION_KEYS_ONLY
                                         : KURA_PROJECTION_INCLUDE;
}

/* The (schema-checked) index list `list` as kura_index_defs in *out: NULL when the member is
 * absent, else one malloc'ed block (at least one byte, also for an empty list, which the
 * engine refuses) holding the definitions, their key schemas and NonKeyAttributes pointers;
 * the strings stay in the request. The caller frees *out. */
static kura_status decode_indexes(const jd_t *list, kura_index_def **out)
{
    size_t n = jd_array_size(list), nkeys = 0, nnka = 0;
    *out = NULL;
    if (!list) return KURA_OK;
    for (size_t i = 0; i < n; i++) {
        const jd_t *x = jd_array_get(list, i);
        nkeys += jd_array_size(jd_object_get(x, "KeySchema"));
        nnka += jd_array_size(jd_object_get(jd_object_get(x, "Projection"), "NonKeyAttributes"));
    }
    kura_index_def *defs = calloc(1, n * sizeof *defs + nkeys * sizeof(kura_key_schema_element) +
                                         nnka * sizeof(const char *) + 1);
    if (!defs) return API_NOMEM();
    kura_key_schema_element *ks = (kura_key_schema_element *)(defs + n);
    const char **names = (const char **)(ks + nkeys);
    for (size_t i = 0; i < n; i++) {
        const jd_t *x = jd_array_get(list, i), *keys = jd_object_get(x, "KeySchema");
        const jd_t *proj = jd_object_get(x, "Projection");
        const jd_t *nka = jd_object_get(proj, "NonKeyAttributes");
        kura_index_def *d = &defs[i];
        d->index_name = api_str(x, "IndexName");
        d->key_schema = ks;
        d->key_schema_count = jd_array_size(keys);
        for (size_t j = 0; j < d->key_schema_count; j++, ks++) {
            ks->attribute_name = api_str(jd_array_get(keys, j), "AttributeName");
            ks->range = strcmp(api_str(jd_array_get(keys, j), "KeyType"), "RANGE") == 0;
        }
        d->projection.projection_type = decode_projection_type(api_str(proj, "ProjectionType"));
        d->projection.non_key_attributes = nka ? names : NULL;
        d->projection.non_key_attributes_count = jd_array_size(nka);
        for (size_t j = 0; j < jd_array_size(nka); j++)
            *names++ = jd_string_value(jd_array_get(nka, j));
        decode_throughput(x, &d->has_provisioned_throughput, &d->read_capacity_units,
                          &d->write_capacity_units);
        d->on_demand = api_decode_on_demand(x);
        d->warm = api_decode_warm(x);
    }
    *out = defs;
    return KURA_OK;
}

static kura_status run_create(api_call *c)
{
    const jd_t *defs = jd_object_get(c->req, "AttributeDefinitions");
    const jd_t *keys = jd_object_get(c->req, "KeySchema");
    kura_index_def *lsis = NULL, *gsis = NULL;
    api_stream_spec spec;
    api_stream_spec_decode(c->req, &spec);
    kura_tag *tags = NULL;
    size_t ntags = 0;
    const jd_t *tag_list = jd_object_get(c->req, "Tags");
    kura_status s = api_check_schema_names(c->req);
    if (s == KURA_OK) s = decode_indexes(jd_object_get(c->req, F_LSI), &lsis);
    if (s == KURA_OK) s = decode_indexes(jd_object_get(c->req, F_GSI), &gsis);
    if (s == KURA_OK && tag_list) s = api_tags_decode(tag_list, &tags, &ntags);
    const char *table = NULL;
    if (s == KURA_OK) s = api_table_member(c, c->req, &table);
    if (s != KURA_OK) {
        free(tags);
        free(lsis);
        free(gsis);
        return s;
    }
    size_t ndefs = jd_array_size(defs), nkeys = jd_array_size(keys);
    kura_attribute_definition *ad = calloc(ndefs + 1, sizeof *ad);
    kura_key_schema_element *ks = calloc(nkeys + 1, sizeof *ks);
    if (!ad || !ks) {
        free(ad);
        free(ks);
        free(lsis);
        free(gsis);
        free(tags);
        return API_NOMEM();
    }
    for (size_t i = 0; i < ndefs; i++) {
        const jd_t *d = jd_array_get(defs, i);
        const char *t = api_str(d, "AttributeType");
        ad[i].attribute_name = api_str(d, "AttributeName");
        ad[i].attribute_type = strcmp(t, "S") == 0 ? KURA_S : strcmp(t, "N") == 0 ? KURA_N : KURA_B;
    }
    for (size_t i = 0; i < nkeys; i++) {
        const jd_t *k = jd_array_get(keys, i);
        ks[i].attribute_name = api_str(k, "AttributeName");
        ks[i].range = strcmp(api_str(k, "KeyType"), "RANGE") == 0;
    }
    kura_create_table_req req = {
        .table_name = table,
        .attribute_definitions = ad,
        .attribute_definitions_count = ndefs,
        .key_schema = ks,
        .key_schema_count = nkeys,
        .billing_mode = decode_billing(c->req),
        .deletion_protection_enabled = api_bool(c->req, "DeletionProtectionEnabled", false),
        .partitions = (uint32_t)jd_integer_value(jd_object_get(c->req, "KuraPartitions")),
        .local_secondary_indexes = lsis,
        .local_secondary_indexes_count = jd_array_size(jd_object_get(c->req, F_LSI)),
        .global_secondary_indexes = gsis,
        .global_secondary_indexes_count = jd_array_size(jd_object_get(c->req, F_GSI)),
        .stream_specification = spec.spec,
        .tags = tags,
        .tags_count = ntags,
        .table_class = api_decode_table_class(c->req),
        .on_demand = api_decode_on_demand(c->req),
        .warm = api_decode_warm(c->req),
        .sse = api_decode_sse(c->req),
        .resource_policy = api_str(c->req, "ResourcePolicy"),
    };
    decode_throughput(c->req, &req.has_provisioned_throughput, &req.read_capacity_units,
                      &req.write_capacity_units);
    kura_table_description d;
    s = put_desc(c, "TableDescription", kura_create_table(c->db, &req, &d), &d);
    s = api_stream_spec_result(&spec, s);
    free(tags);
    free(ad);
    free(ks);
    free(lsis);
    free(gsis);
    return s;
}

const api_op api_op_create_table = {"CreateTable", run_create};

/* ---- DescribeTable, DeleteTable --------------------------------------------------------- */

static kura_status run_describe(api_call *c)
{
    kura_table_description d;
    const char *table = NULL;
    kura_status s = api_table_member(c, c->req, &table);
    if (s != KURA_OK) return s;
    return put_desc(c, "Table", kura_describe_table(c->db, table, &d), &d);
}

/* DeleteTable's description has no schema, creation time or indexes: the members of the
 * API reference's example (TableName, TableStatus, ProvisionedThroughput, TableSizeBytes,
 * ItemCount) and what current responses add (TableArn, TableId, BillingModeSummary, the
 * stream, DeletionProtectionEnabled); of the table settings, the encryption and the class
 * (SSEDescription, TableClassSummary) but not the throughput limits of a table going away. */
static kura_status run_delete(api_call *c)
{
    static const char *const absent[] = {"AttributeDefinitions", "KeySchema",
                                         "CreationDateTime", "LocalSecondaryIndexes",
                                         "GlobalSecondaryIndexes", "OnDemandThroughput",
                                         "WarmThroughput"};
    kura_table_description d;
    const char *table = NULL;
    kura_status s = api_table_member(c, c->req, &table);
    if (s != KURA_OK) return s;
    s = kura_delete_table(c->db, table, &d);
    if (s != KURA_OK) return api_engine(s);
    jd_t *o = desc_json(c->doc, &c->scope, &d);
    kura_table_description_free(&d);
    for (size_t i = 0; o && i < sizeof absent / sizeof *absent; i++)
        jd_object_del(o, absent[i]);
    return api_out_json(c, "TableDescription", o);
}

const api_op api_op_describe_table = {"DescribeTable", run_describe};
const api_op api_op_delete_table = {"DeleteTable", run_delete};

/* ---- ListTables ------------------------------------------------------------------------- */

static kura_status run_list(api_call *c)
{
    char **names = NULL, *last = NULL;
    size_t n = 0;
    uint32_t limit = (uint32_t)jd_integer_value(jd_object_get(c->req, "Limit"));
    kura_status s = kura_list_tables(c->db, api_str(c->req, "ExclusiveStartTableName"), limit,
                                     &names, &n, &last);
    if (s != KURA_OK) return api_engine(s);
    jd_t *arr = jd_array(c->doc);
    for (size_t i = 0; arr && i < n; i++)
        if (jd_array_append(arr, jd_string(c->doc, names[i])) != 0) arr = NULL;
    s = api_out_json(c, "TableNames", arr);
    if (s == KURA_OK && last) s = api_out_json(c, "LastEvaluatedTableName", jd_string(c->doc, last));
    kura_free_strings(names, n);
    kura_free(last);
    return s;
}

const api_op api_op_list_tables = {"ListTables", run_list};

/* ---- UpdateTable ------------------------------------------------------------------------ */

/* DynamoDB's checks of GlobalSecondaryIndexUpdates that need no table. */
static kura_status check_gsi_updates(const jd_t *ups)
{
    for (size_t i = 0; i < jd_array_size(ups); i++) {
        const jd_t *u = jd_array_get(ups, i);
        const jd_t *a = jd_object_get(u, "Update");
        a = a ? a : jd_object_get(u, "Create");
        a = a ? a : jd_object_get(u, "Delete");
        if (!a)
            return api_err(KURA_E_INVALID,
                           "One or more parameter values were invalid: One of "
                           "GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
                           "GlobalSecondaryIndexUpdate.Delete must not be null");
        const char *name = api_str(a, "IndexName");
        for (size_t j = 0; j < i; j++) {
            const jd_t *p = jd_array_get(ups, j), *pa = jd_object_get(p, "Update");
            pa = pa ? pa : jd_object_get(p, "Create");
            pa = pa ? pa : jd_object_get(p, "Delete");
            if (name && api_str(pa, "IndexName") && strcmp(name, api_str(pa, "IndexName")) == 0)
                return api_err(KURA_E_INVALID,
                               "One or more parameter values were invalid: Only one global "
                               "secondary index update per index is allowed simultaneously. "
                               "Index: %s",
                               name);
        }
    }
    return KURA_OK;
}

/* The (schema-checked) GlobalSecondaryIndexUpdates as kura_gsi_updates in one malloc'ed block
 * (the caller frees *out; strings stay in the request). */
static kura_status decode_gsi_updates(const jd_t *ups, kura_gsi_update **out)
{
    size_t n = jd_array_size(ups);
    kura_gsi_update *v = calloc(n ? n : 1, sizeof *v);
    if (!v) return API_NOMEM();
    for (size_t i = 0; i < n; i++) {
        const jd_t *u = jd_array_get(ups, i), *a;
        if ((a = jd_object_get(u, "Create"))) {
            v[i].action = KURA_GSI_CREATE;
        } else if ((a = jd_object_get(u, "Delete"))) {
            v[i].action = KURA_GSI_DELETE;
        } else {
            a = jd_object_get(u, "Update");
            v[i].action = KURA_GSI_UPDATE;
            decode_throughput(a, &v[i].has_provisioned_throughput, &v[i].read_capacity_units,
                              &v[i].write_capacity_units);
            v[i].on_demand = api_decode_on_demand(a);
            v[i].warm = api_decode_warm(a);
        }
        v[i].index_name = api_str(a, "IndexName");
    }
    *out = v;
    return KURA_OK;
}

static kura_status run_update(api_call *c)
{
    const jd_t *ups = jd_object_get(c->req, "GlobalSecondaryIndexUpdates");
    if (!jd_object_get(c->req, "ProvisionedThroughput") &&
        !jd_object_get(c->req, "BillingMode") &&
        !jd_object_get(c->req, "DeletionProtectionEnabled") &&
        !jd_object_get(c->req, "StreamSpecification") && !jd_object_get(c->req, "TableClass") &&
        !jd_object_get(c->req, "SSESpecification") &&
        !jd_object_get(c->req, "OnDemandThroughput") &&
        !jd_object_get(c->req, "WarmThroughput") && jd_array_size(ups) == 0)
        return api_err(KURA_E_INVALID,
                       "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
                       "GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is "
                       "required");
    kura_status cs = api_check_schema_names(c->req);
    if (cs != KURA_OK) return cs;
    api_stream_spec spec;
    api_stream_spec_decode(c->req, &spec);
    kura_status s = check_gsi_updates(ups);
    if (s != KURA_OK) return s;
    kura_gsi_update *updates = NULL;
    kura_index_def *creates = NULL; /* the Create actions, decoded as CreateTable's GSIs */
    jd_t *create_list = NULL;
    size_t nups = jd_array_size(ups);
    if (nups) {
        s = decode_gsi_updates(ups, &updates);
        create_list = s == KURA_OK ? jd_array(c->doc) : NULL;
        if (s == KURA_OK && !create_list) s = API_NOMEM();
        for (size_t i = 0; s == KURA_OK && i < nups; i++) {
            const jd_t *a = jd_object_get(jd_array_get(ups, i), "Create");
            if (a && jd_array_append(create_list, jd_deep_copy(c->doc, a)) != 0) s = API_NOMEM();
        }
        if (s == KURA_OK) s = decode_indexes(create_list, &creates);
        for (size_t i = 0, k = 0; s == KURA_OK && i < nups; i++)
            if (updates[i].action == KURA_GSI_CREATE) updates[i].create = creates[k++];
    }
    const jd_t *defs = jd_object_get(c->req, "AttributeDefinitions");
    size_t ndefs = jd_array_size(defs);
    kura_attribute_definition *ad = s == KURA_OK ? calloc(ndefs + 1, sizeof *ad) : NULL;
    if (s == KURA_OK && !ad) s = API_NOMEM();
    for (size_t i = 0; s == KURA_OK && i < ndefs; i++) {
        const jd_t *d = jd_array_get(defs, i);
        const char *t = api_str(d, "AttributeType");
        ad[i].attribute_name = api_str(d, "AttributeName");
        ad[i].attribute_type = strcmp(t, "S") == 0 ? KURA_S : strcmp(t, "N") == 0 ? KURA_N : KURA_B;
    }
    const char *table = NULL;
    if (s == KURA_OK) s = api_table_member(c, c->req, &table);
    if (s == KURA_OK) {
        kura_update_table_req req = {
            .table_name = table,
            .billing_mode = decode_billing(c->req),
            .has_deletion_protection = jd_object_get(c->req, "DeletionProtectionEnabled") != NULL,
            .deletion_protection_enabled = api_bool(c->req, "DeletionProtectionEnabled", false),
            .attribute_definitions = ad,
            .attribute_definitions_count = ndefs,
            .global_secondary_index_updates = updates,
            .global_secondary_index_updates_count = nups,
            .stream_specification = spec.spec,
            .table_class = api_decode_table_class(c->req),
            .on_demand = api_decode_on_demand(c->req),
            .warm = api_decode_warm(c->req),
            .sse = api_decode_sse(c->req),
        };
        decode_throughput(c->req, &req.has_provisioned_throughput, &req.read_capacity_units,
                          &req.write_capacity_units);
        kura_table_description d;
        s = put_desc(c, "TableDescription", kura_update_table(c->db, &req, &d), &d);
        s = api_stream_spec_result(&spec, s);
    }
    free(ad);
    free(updates);
    free(creates);
    return s;
}

const api_op api_op_update_table = {"UpdateTable", run_update};

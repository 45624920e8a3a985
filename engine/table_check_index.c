/*
 * table_check_index.c - This file contains DynamoDB's checks of CreateTable's
 * LocalSecondaryIndexes and GlobalSecondaryIndexes: names, key schemas against the table's
 * key and attribute definitions, projections, GSI throughput, the per-table limits. Pure: no
 * state.
 *
 * Order: the LSI list (empty list; table without a sort key; per LSI: key attributes defined,
 * the pair's names, HASH first, RANGE second, two elements, the table's partition key,
 * projection, unique name; then the count), the GSI list the same way (key rules for
 * multi-attribute keys instead of the LSI ones, then throughput), the NonKeyAttributes total,
 * and last the attribute definitions no key uses (table_check_schema leaves its "Number of
 * attributes in KeySchema does not exactly match ..." to this when indexes are given).
 *
 * Messages. Where DynamoDB and DynamoDB Local 1.25.1 disagree, kura answers as DynamoDB
 * does, as dynalite's validations/createTable.js records it (the rest of table_check.c does
 * the same), in the order of dynalite's custom(). DynamoDB Local words nearly all of these its own
 * way ("Local Secondary indices must have the same hash key as the main table", "Two global
 * secondary indices have the same name", ...), checks the LSI count before anything else and
 * does not refuse a GSI ProvisionedThroughput with PAY_PER_REQUEST. Cases dynalite does not
 * have:
 *  - verified against DynamoDB Local 1.25.1 and answered with its message: INCLUDE without
 *    NonKeyAttributes, a NonKeyAttributes name of 0 or more than 255 bytes, the same name
 *    twice in one index's NonKeyAttributes, a GSI without ProvisionedThroughput on a
 *    PROVISIONED table. DynamoDB Local accepts NonKeyAttributes that name key attributes, and
 *    so does kura;
 *  - moto's record of DynamoDB (not DynamoDB Local, which answers "The number of attributes in
 *    key schema must match ..."): an attribute definition no key of the table or of an index
 *    uses, "Some AttributeDefinitions are not used" (list order unverified);
 *  - UNVERIFIED, written in the style of the others: more than 100 NonKeyAttributes summed
 *    over all indexes (DynamoDB Local enforces 100, counting a name once per index as the AWS
 *    documentation says, but its message still says 20), a GSI's capacity units above
 *    TABLE_CAPACITY_MAX (the table's message), and the multi-attribute GSI keys of November
 *    2025 (1..4 HASH then 0..4 RANGE, no attribute twice), which DynamoDB Local 1.25.1 refuses
 *    outright ("Too many hash keys specified", "Key Schema too big"): a HASH element after a
 *    RANGE one, more than 4 of either, an attribute twice (but for the first two elements,
 *    which keep dynalite's "Both the Hash Key and the Range Key element ..."). A GSI whose
 *    second element is a HASH is a two-attribute partition key, no longer dynalite's "The
 *    second KeySchemaElement is not a RANGE key type".
 *
 * The structural checks the JSON API makes from its schema (index name pattern and length,
 * key schema length, null members, capacity units >= 1) are repeated here for C API callers
 * with the same messages; through kura_execute they never fire.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "engine/table_int.h"
#include "util/status.h"

enum {
    ATTR_NAME_MAX = 255,
    /* Lists longer than this are refused for their length before their entries are checked,
     * which keeps the quadratic checks (duplicate names) cheap whatever a request holds.
     * DynamoDB checks the entries first; only absurd requests see the difference. */
    LIST_CHECK_MAX = 64,
};

#define INVALID "One or more parameter values were invalid: "

static bool nka_given(const kura_projection *p)
{
    return p->non_key_attributes != NULL || p->non_key_attributes_count > 0;
}

/* ---- The JSON schema's constraints, for C API callers ------------------------------------- */

static kura_status constraint_null(const char *list, size_t pos, const char *member)
{
    return kura_err(KURA_E_INVALID,
                    "1 validation error detected: Value null at '%s.%zu.member.%s' failed to "
                    "satisfy constraint: Member must not be null",
                    list, pos, member);
}

static kura_status check_params(const kura_index_def *x, const char *list, size_t pos,
                                size_t max_keys, bool gsi)
{
    char param[96];
    snprintf(param, sizeof param, "%s.%zu.member.indexName", list, pos);
    kura_status s = table_name_check(x->index_name, param);
    if (s != KURA_OK)
        return s;
    size_t n = x->key_schema_count;
    if (!x->key_schema)
        return constraint_null(list, pos, "keySchema");
    if (n < 1 || n > max_keys)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '%s' at '%s.%zu.member.keySchema' "
                        "failed to satisfy constraint: Member must have length %s than or equal "
                        "to %zu",
                        n ? "[...]" : "[]", list, pos, n ? "less" : "greater", n ? max_keys : 1);
    for (size_t i = 0; i < n; i++)
        if (!x->key_schema[i].attribute_name)
            return kura_err(KURA_E_INVALID,
                            "1 validation error detected: Value null at "
                            "'%s.%zu.member.keySchema.%zu.member.attributeName' failed to "
                            "satisfy constraint: Member must not be null",
                            list, pos, i + 1);
    const kura_projection *p = &x->projection;
    if (nka_given(p) && (!p->non_key_attributes || p->non_key_attributes_count == 0))
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '[]' at "
                        "'%s.%zu.member.projection.nonKeyAttributes' failed to satisfy "
                        "constraint: Member must have length greater than or equal to 1",
                        list, pos);
    for (size_t i = 0; i < p->non_key_attributes_count; i++)
        if (!p->non_key_attributes[i])
            return kura_err(KURA_E_INVALID, "%s", "Names of key attributes and attributes "
                            "projected into an index must be between 1 and 255 characters, "
                            "inclusive");
    if (gsi && x->has_provisioned_throughput &&
        (!x->write_capacity_units || !x->read_capacity_units))
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '0' at "
                        "'%s.%zu.member.provisionedThroughput.%s' failed to satisfy "
                        "constraint: Member must have value greater than or equal to 1",
                        list, pos,
                        !x->write_capacity_units ? "writeCapacityUnits" : "readCapacityUnits");
    return KURA_OK;
}

/* ---- One index ------------------------------------------------------------------------------ */

static bool defined(const kura_create_table_req *r, const char *name)
{
    for (size_t j = 0; j < r->attribute_definitions_count; j++)
        if (!strcmp(name, r->attribute_definitions[j].attribute_name))
            return true;
    return false;
}

static kura_status check_defined(const kura_create_table_req *r, const kura_index_def *x)
{
    for (size_t i = 0; i < x->key_schema_count; i++) {
        if (defined(r, x->key_schema[i].attribute_name))
            continue;
        char kl[600], dl[1024];
        table_list_keys(kl, sizeof kl, x->key_schema, x->key_schema_count);
        table_list_defs(dl, sizeof dl, r->attribute_definitions, r->attribute_definitions_count);
        return kura_err(KURA_E_INVALID,
                        INVALID "Some index key attributes are not defined in "
                                "AttributeDefinitions. Keys: %s, AttributeDefinitions: %s",
                        kl, dl);
    }
    return KURA_OK;
}

static const char *projection_name(kura_projection_type t)
{
    return t == KURA_PROJECTION_ALL ? "ALL" : t == KURA_PROJECTION_KEYS_ONLY ? "KEYS_ONLY"
                                                                             : "INCLUDE";
}

static kura_status check_projection(const kura_projection *p)
{
    kura_projection_type t = p->projection_type;
    if (t != KURA_PROJECTION_ALL && t != KURA_PROJECTION_KEYS_ONLY &&
        t != KURA_PROJECTION_INCLUDE)
        return kura_err(KURA_E_INVALID, INVALID "Unknown ProjectionType: null");
    if (nka_given(p) && t != KURA_PROJECTION_INCLUDE)
        return kura_err(KURA_E_INVALID,
                        INVALID "ProjectionType is %s, but NonKeyAttributes is specified",
                        projection_name(t));
    size_t n = p->non_key_attributes_count;
    if (t == KURA_PROJECTION_INCLUDE && n == 0)
        return kura_err(KURA_E_INVALID, "If Projection type INCLUDE is specified, some non-key "
                        "attributes to include in the projection must be specified as well");
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(p->non_key_attributes[i]);
        if (len < 1 || len > ATTR_NAME_MAX)
            return kura_err(KURA_E_INVALID, "Names of key attributes and attributes projected "
                            "into an index must be between 1 and 255 characters, inclusive");
        /* a longer list fails the per-table limit later, so its duplicates need no search */
        for (size_t j = 0; j < i && n <= IDX_MAX_NON_KEY; j++)
            if (!strcmp(p->non_key_attributes[i], p->non_key_attributes[j]))
                return kura_err(KURA_E_INVALID, "Cannot have two attributes with the same name");
    }
    return KURA_OK;
}

static kura_status check_lsi(const kura_create_table_req *r, const kura_index_def *x)
{
    const kura_key_schema_element *k = x->key_schema;
    size_t n = x->key_schema_count;
    kura_status s = check_defined(r, x);
    if (s != KURA_OK)
        return s;
    if (n > 1 && !strcmp(k[0].attribute_name, k[1].attribute_name))
        return kura_err(KURA_E_INVALID, "Both the Hash Key and the Range Key element in the "
                                        "KeySchema have the same name");
    if (k[0].range)
        return kura_err(KURA_E_INVALID,
                        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
    if (n > 1 && !k[1].range)
        return kura_err(KURA_E_INVALID,
                        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
    if (n != 2)
        return kura_err(KURA_E_INVALID,
                        INVALID "Index KeySchema does not have a range key for index: %s",
                        x->index_name);
    const char *table_hash = r->key_schema[0].attribute_name;
    if (strcmp(k[0].attribute_name, table_hash) != 0)
        return kura_err(KURA_E_INVALID,
                        INVALID "Index KeySchema does not have the same leading hash key as "
                                "table KeySchema for index: %s. index hash key: %s, table hash "
                                "key: %s",
                        x->index_name, k[0].attribute_name, table_hash);
    return check_projection(&x->projection);
}

/* A GSI's key: 1..4 HASH elements, then 0..4 RANGE elements, no attribute twice. */
static kura_status check_gsi_keys(const kura_index_def *x)
{
    const kura_key_schema_element *k = x->key_schema;
    size_t n = x->key_schema_count, nhash = 0, nrange = 0;
    if (n > 1 && !strcmp(k[0].attribute_name, k[1].attribute_name))
        return kura_err(KURA_E_INVALID, "Both the Hash Key and the Range Key element in the "
                                        "KeySchema have the same name");
    for (size_t i = 1; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(k[i].attribute_name, k[j].attribute_name))
                return kura_err(KURA_E_INVALID,
                                INVALID "Duplicate key attribute %s in KeySchema of index: %s",
                                k[i].attribute_name, x->index_name);
    if (k[0].range)
        return kura_err(KURA_E_INVALID,
                        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
    for (size_t i = 0; i < n; i++) {
        if (k[i].range)
            nrange++;
        else if (nrange)
            return kura_err(KURA_E_INVALID, "Invalid KeySchema: A HASH KeySchemaElement "
                                            "cannot follow a RANGE KeySchemaElement");
        else
            nhash++;
    }
    if (nhash > IDX_MAX_KEY_ATTRS || nrange > IDX_MAX_KEY_ATTRS)
        return kura_err(KURA_E_INVALID,
                        INVALID "Index KeySchema has more than %d %s key attributes for "
                                "index: %s",
                        IDX_MAX_KEY_ATTRS, nhash > IDX_MAX_KEY_ATTRS ? "HASH" : "RANGE",
                        x->index_name);
    return KURA_OK;
}

static kura_status check_gsi(const kura_create_table_req *r, const kura_index_def *x)
{
    kura_status s = check_defined(r, x);
    if (s == KURA_OK)
        s = check_gsi_keys(x);
    if (s == KURA_OK)
        s = check_projection(&x->projection);
    if (s != KURA_OK)
        return s;
    if (r->billing_mode == KURA_BILLING_PAY_PER_REQUEST) {
        if (x->has_provisioned_throughput)
            return kura_err(KURA_E_INVALID,
                            INVALID "ProvisionedThroughput should not be specified for index: "
                                    "%s when BillingMode is PAY_PER_REQUEST",
                            x->index_name);
        return KURA_OK;
    }
    if (!x->has_provisioned_throughput)
        return kura_err(KURA_E_INVALID,
                        "No provisioned throughput specified for the global secondary index");
    if (x->read_capacity_units > TABLE_CAPACITY_MAX)
        return kura_err(KURA_E_INVALID, "Given value %" PRIu64
                        " for ReadCapacityUnits is out of bounds", x->read_capacity_units);
    if (x->write_capacity_units > TABLE_CAPACITY_MAX)
        return kura_err(KURA_E_INVALID, "Given value %" PRIu64
                        " for WriteCapacityUnits is out of bounds", x->write_capacity_units);
    return KURA_OK;
}

/* ---- The table's indexes together ---------------------------------------------------------- */

/* "Duplicate index name" against the names before position `upto` of the LSIs then GSIs. */
static kura_status check_unique_name(const kura_create_table_req *r, const char *name,
                                     size_t upto)
{
    size_t nl = r->local_secondary_indexes ? r->local_secondary_indexes_count : 0;
    for (size_t i = 0; i < upto; i++) {
        const kura_index_def *o = i < nl ? &r->local_secondary_indexes[i]
                                         : &r->global_secondary_indexes[i - nl];
        if (!strcmp(o->index_name, name))
            return kura_err(KURA_E_INVALID, INVALID "Duplicate index name: %s", name);
    }
    return KURA_OK;
}

/* Appends `name` to the `n` names in `used` unless it is there, up to `cap`. */
static void add_used(const char **used, size_t *n, size_t cap, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(used[i], name))
            return;
    if (*n < cap)
        used[(*n)++] = name;
}

/* Every attribute definition must be a key attribute of the table or of an index. */
static kura_status check_unused_defs(const kura_create_table_req *r)
{
    const char *used[TABLE_MAX_ATTR_DEFS];
    size_t n = 0;
    for (size_t i = 0; i < r->key_schema_count; i++)
        add_used(used, &n, TABLE_MAX_ATTR_DEFS, r->key_schema[i].attribute_name);
    for (int list = 0; list < 2; list++) {
        const kura_index_def *xs = list ? r->global_secondary_indexes : r->local_secondary_indexes;
        size_t nx = list ? r->global_secondary_indexes_count : r->local_secondary_indexes_count;
        for (size_t i = 0; i < nx && xs; i++)
            for (size_t j = 0; j < xs[i].key_schema_count; j++)
                add_used(used, &n, TABLE_MAX_ATTR_DEFS, xs[i].key_schema[j].attribute_name);
    }
    size_t nd = r->attribute_definitions_count;
    bool all_used = nd <= TABLE_MAX_ATTR_DEFS;
    for (size_t i = 0; i < nd && all_used; i++) {
        bool found = false;
        for (size_t j = 0; j < n && !found; j++)
            found = !strcmp(r->attribute_definitions[i].attribute_name, used[j]);
        all_used = found;
    }
    if (all_used)
        return KURA_OK;
    char dl[1024], ul[1024];
    table_list_defs(dl, sizeof dl, r->attribute_definitions, nd);
    size_t off = (size_t)snprintf(ul, sizeof ul, "[");
    for (size_t i = 0; i < n && off < sizeof ul; i++)
        off += (size_t)snprintf(ul + off, sizeof ul - off, "%s%s", i ? ", " : "", used[i]);
    if (off < sizeof ul)
        snprintf(ul + off, sizeof ul - off, "]");
    return kura_err(KURA_E_INVALID,
                    INVALID "Some AttributeDefinitions are not used. AttributeDefinitions: %s, "
                            "keys used: %s",
                    dl, ul);
}

static kura_status check_lsis(const kura_create_table_req *r)
{
    size_t n = r->local_secondary_indexes_count;
    if (!r->local_secondary_indexes)
        return KURA_OK;
    if (n == 0)
        return kura_err(KURA_E_INVALID, INVALID "List of LocalSecondaryIndexes is empty");
    if (r->key_schema_count != 2)
        return kura_err(KURA_E_INVALID, INVALID "Table KeySchema does not have a range key, "
                                        "which is required when specifying a "
                                        "LocalSecondaryIndex");
    for (size_t i = 0; i < n && n <= LIST_CHECK_MAX; i++) {
        const kura_index_def *x = &r->local_secondary_indexes[i];
        kura_status s = check_lsi(r, x);
        if (s == KURA_OK)
            s = check_unique_name(r, x->index_name, i);
        if (s != KURA_OK)
            return s;
    }
    if (n > IDX_MAX_LSI)
        return kura_err(KURA_E_INVALID,
                        INVALID "Number of LocalSecondaryIndexes exceeds per-table limit of %d",
                        IDX_MAX_LSI);
    return KURA_OK;
}

static kura_status check_gsis(const kura_create_table_req *r)
{
    size_t n = r->global_secondary_indexes_count;
    size_t nl = r->local_secondary_indexes ? r->local_secondary_indexes_count : 0;
    if (!r->global_secondary_indexes)
        return KURA_OK;
    if (n == 0)
        return kura_err(KURA_E_INVALID, INVALID "List of GlobalSecondaryIndexes is empty");
    for (size_t i = 0; i < n && n <= LIST_CHECK_MAX; i++) {
        const kura_index_def *x = &r->global_secondary_indexes[i];
        kura_status s = check_gsi(r, x);
        if (s == KURA_OK)
            s = check_unique_name(r, x->index_name, nl + i);
        if (s != KURA_OK)
            return s;
    }
    if (n > IDX_MAX_GSI)
        return kura_err(KURA_E_INVALID,
                        INVALID "GlobalSecondaryIndex count exceeds the per-table limit of %d",
                        IDX_MAX_GSI);
    return KURA_OK;
}

kura_status table_check_indexes(const kura_create_table_req *r)
{
    const kura_index_def *ls = r->local_secondary_indexes, *gs = r->global_secondary_indexes;
    size_t nl = ls ? r->local_secondary_indexes_count : 0;
    size_t ng = gs ? r->global_secondary_indexes_count : 0;
    if (!ls && !gs)
        return KURA_OK;
    kura_status s = KURA_OK;
    size_t nka = 0;
    for (size_t i = 0; i < nl && s == KURA_OK; i++)
        s = check_params(&ls[i], "localSecondaryIndexes", i + 1, 2, false);
    for (size_t i = 0; i < ng && s == KURA_OK; i++)
        s = check_params(&gs[i], "globalSecondaryIndexes", i + 1, 2 * IDX_MAX_KEY_ATTRS, true);
    /* more definitions than any valid table has: some are unused, and the per-index searches
     * through them would be long */
    if (s == KURA_OK && r->attribute_definitions_count > TABLE_MAX_ATTR_DEFS)
        s = check_unused_defs(r);
    if (s == KURA_OK)
        s = check_lsis(r);
    if (s == KURA_OK)
        s = check_gsis(r);
    if (s != KURA_OK)
        return s;
    for (size_t i = 0; i < nl + ng; i++)
        nka += (i < nl ? &ls[i] : &gs[i - nl])->projection.non_key_attributes_count;
    if (nka > IDX_MAX_NON_KEY)
        return kura_err(KURA_E_INVALID,
                        INVALID "Number of NonKeyAttributes summed across all indexes (%zu) "
                                "exceeds the per-table limit of %d",
                        nka, IDX_MAX_NON_KEY);
    return check_unused_defs(r);
}

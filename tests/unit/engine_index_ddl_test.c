/*
 * engine_index_ddl_test.c - secondary index definitions through the C API: CreateTable with
 * LocalSecondaryIndexes and GlobalSecondaryIndexes, DescribeTable before and after a reopen
 * (identical), UpdateTable's billing change as GSIs report it, DeleteTable's description,
 * the catalog record's versions (docs/format/catalog.md "Tables"), every validation message
 * (those of engine/table_check_index.c, which says where each comes from).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/table_int.h"
#include "testutil.h"
#include "util/buf.h"

#define INVALID "One or more parameter values were invalid: "

/* A CreateTable request with room to change it: by default table (pk HASH, sk RANGE),
 * definitions pk S, sk S, x S, g N, PAY_PER_REQUEST, LSI "lsi1" (pk, x) ALL, GSI "gsi1"
 * (g HASH, x RANGE) KEYS_ONLY. */
typedef struct req_buf {
    kura_create_table_req r;
    kura_attribute_definition ad[16];
    kura_key_schema_element tk[2];
    kura_index_def lsi[8], gsi[24];
    kura_key_schema_element keys[32][10];
    const char *nka[2][64];
    char names[32][8];
} req_buf;

static void set_keys(req_buf *b, kura_index_def *x, const char *spec)
{
    /* spec: "name:H name:R ..." */
    size_t slot = 0, n = 0;
    for (size_t i = 0; i < 8; i++)
        slot = x == &b->lsi[i] ? i : slot;
    for (size_t i = 0; i < 24; i++)
        slot = x == &b->gsi[i] ? 8 + i : slot;
    kura_key_schema_element *k = b->keys[slot];
    char copy[128];
    snprintf(copy, sizeof copy, "%s", spec);
    static char store[32][10][16];
    for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " "), n++) {
        char *colon = strchr(tok, ':');
        *colon = 0;
        snprintf(store[slot][n], sizeof store[slot][n], "%s", tok);
        k[n].attribute_name = store[slot][n];
        k[n].range = colon[1] == 'R';
    }
    x->key_schema = k;
    x->key_schema_count = n;
}

static void reset(req_buf *b)
{
    memset(b, 0, sizeof *b);
    static const char *const dn[] = {"pk", "sk", "x", "g"};
    for (int i = 0; i < 4; i++)
        b->ad[i] = (kura_attribute_definition){dn[i], i == 3 ? KURA_N : KURA_S};
    b->tk[0] = (kura_key_schema_element){"pk", false};
    b->tk[1] = (kura_key_schema_element){"sk", true};
    b->r = (kura_create_table_req){.table_name = "ddl_t",
                                   .attribute_definitions = b->ad,
                                   .attribute_definitions_count = 4,
                                   .key_schema = b->tk,
                                   .key_schema_count = 2,
                                   .billing_mode = KURA_BILLING_PAY_PER_REQUEST,
                                   .local_secondary_indexes = b->lsi,
                                   .local_secondary_indexes_count = 1,
                                   .global_secondary_indexes = b->gsi,
                                   .global_secondary_indexes_count = 1};
    for (int i = 0; i < 32; i++) {
        kura_index_def *x = i < 8 ? &b->lsi[i] : &b->gsi[i - 8];
        snprintf(b->names[i], sizeof b->names[i], i < 8 ? "lsi%d" : "gsi%d", i < 8 ? i + 1 : i - 7);
        x->index_name = b->names[i];
        x->projection.projection_type = KURA_PROJECTION_ALL;
        set_keys(b, x, i < 8 ? "pk:H x:R" : "g:H x:R");
    }
    b->gsi[0].projection.projection_type = KURA_PROJECTION_KEYS_ONLY;
}

/* Replaces the attribute definitions by `n` names (all S unless `types`). */
static void defs(req_buf *b, const char *const *names, const kura_type *types, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b->ad[i] = (kura_attribute_definition){names[i], types ? types[i] : KURA_S};
    b->r.attribute_definitions_count = n;
}

static kura_db *open_db(const char *dir)
{
    kura_db *db = NULL;
    assert_kura_ok(kura_open(dir, NULL, &db));
    return db;
}

/* CreateTable must fail with KURA_E_INVALID and exactly `msg`. */
static void expect_invalid(kura_db *db, req_buf *b, const char *msg, int line)
{
    kura_table_description d;
    kura_status s = kura_create_table(db, &b->r, &d);
    if (s != KURA_E_INVALID || strcmp(kura_last_error(), msg) != 0)
        fail_msg("line %d: got %s \"%s\"\n  want KURA_E_INVALID \"%s\"", line,
                 kura_status_str(s), s == KURA_OK ? "" : kura_last_error(), msg);
}
#define INVALID_IS(msg) expect_invalid(db, &b, msg, __LINE__)

/* CreateTable must succeed; the table is deleted again. */
static void expect_ok(kura_db *db, req_buf *b, int line)
{
    kura_table_description d;
    kura_status s = kura_create_table(db, &b->r, &d);
    if (s != KURA_OK)
        fail_msg("line %d: got %s \"%s\"", line, kura_status_str(s), kura_last_error());
    kura_table_description_free(&d);
    assert_kura_ok(kura_delete_table(db, b->r.table_name, &d));
    kura_table_description_free(&d);
}
#define VALID() expect_ok(db, &b, __LINE__)

/* ---- Describe, reopen, describe ------------------------------------------------------------ */

static void assert_index_equal(const kura_index_description *a, const kura_index_description *b)
{
    assert_string_equal(a->index_name, b->index_name);
    assert_string_equal(a->index_arn, b->index_arn);
    assert_int_equal(a->key_schema_count, b->key_schema_count);
    for (size_t i = 0; i < a->key_schema_count; i++) {
        assert_string_equal(a->key_schema[i].attribute_name, b->key_schema[i].attribute_name);
        assert_int_equal(a->key_schema[i].range, b->key_schema[i].range);
    }
    assert_int_equal(a->projection_type, b->projection_type);
    assert_int_equal(a->non_key_attributes_count, b->non_key_attributes_count);
    for (size_t i = 0; i < a->non_key_attributes_count; i++)
        assert_string_equal(a->non_key_attributes[i], b->non_key_attributes[i]);
    assert_string_equal(a->index_status, b->index_status);
    assert_int_equal(a->backfilling, b->backfilling);
    assert_int_equal(a->item_count, b->item_count);
    assert_int_equal(a->index_size_bytes, b->index_size_bytes);
    assert_int_equal(a->read_capacity_units, b->read_capacity_units);
    assert_int_equal(a->write_capacity_units, b->write_capacity_units);
}

static void assert_desc_equal(const kura_table_description *a, const kura_table_description *b)
{
    assert_string_equal(a->table_name, b->table_name);
    assert_string_equal(a->table_id, b->table_id);
    assert_true(a->creation_date_time == b->creation_date_time);
    assert_int_equal(a->attribute_definitions_count, b->attribute_definitions_count);
    for (size_t i = 0; i < a->attribute_definitions_count; i++) {
        assert_string_equal(a->attribute_definitions[i].attribute_name,
                            b->attribute_definitions[i].attribute_name);
        assert_int_equal(a->attribute_definitions[i].attribute_type,
                         b->attribute_definitions[i].attribute_type);
    }
    assert_int_equal(a->billing_mode, b->billing_mode);
    assert_int_equal(a->local_secondary_indexes_count, b->local_secondary_indexes_count);
    for (size_t i = 0; i < a->local_secondary_indexes_count; i++)
        assert_index_equal(&a->local_secondary_indexes[i], &b->local_secondary_indexes[i]);
    assert_int_equal(a->global_secondary_indexes_count, b->global_secondary_indexes_count);
    for (size_t i = 0; i < a->global_secondary_indexes_count; i++)
        assert_index_equal(&a->global_secondary_indexes[i], &b->global_secondary_indexes[i]);
}

/* The table of test_describe_reopen: PROVISIONED, 2 LSIs, 3 GSIs (one with a 2+2 key). */
static void rich_table(req_buf *b)
{
    reset(b);
    static const char *const names[] = {"pk", "sk", "x", "g", "h2", "r2"};
    static const kura_type types[] = {KURA_S, KURA_S, KURA_S, KURA_N, KURA_B, KURA_N};
    defs(b, names, types, 6);
    b->r.table_name = "Orders";
    b->r.billing_mode = KURA_BILLING_PROVISIONED;
    b->r.has_provisioned_throughput = true;
    b->r.read_capacity_units = 5;
    b->r.write_capacity_units = 6;
    b->r.local_secondary_indexes_count = 2;
    set_keys(b, &b->lsi[1], "pk:H sk:R"); /* the table's own sort key is allowed */
    static const char *const inc[] = {"a", "b"};
    b->lsi[1].projection = (kura_projection){KURA_PROJECTION_INCLUDE, inc, 2};
    b->r.global_secondary_indexes_count = 3;
    set_keys(b, &b->gsi[1], "g:H h2:H x:R r2:R");
    static const char *const inc2[] = {"pk", "c"}; /* a key attribute: accepted */
    b->gsi[1].projection = (kura_projection){KURA_PROJECTION_INCLUDE, inc2, 2};
    set_keys(b, &b->gsi[2], "x:H");
    for (int i = 0; i < 3; i++) {
        b->gsi[i].has_provisioned_throughput = true;
        b->gsi[i].read_capacity_units = 10 + (uint64_t)i;
        b->gsi[i].write_capacity_units = 20 + (uint64_t)i;
    }
}

static void check_rich(const kura_table_description *d)
{
    assert_int_equal(d->local_secondary_indexes_count, 2);
    assert_int_equal(d->global_secondary_indexes_count, 3);
    const kura_index_description *l = d->local_secondary_indexes, *g = d->global_secondary_indexes;
    assert_string_equal(l[0].index_name, "lsi1");
    assert_string_equal(l[0].index_arn,
                        "arn:aws:dynamodb:us-east-1:000000000000:table/Orders/index/lsi1");
    assert_int_equal(l[0].key_schema_count, 2);
    assert_string_equal(l[0].key_schema[0].attribute_name, "pk");
    assert_false(l[0].key_schema[0].range);
    assert_string_equal(l[0].key_schema[1].attribute_name, "x");
    assert_true(l[0].key_schema[1].range);
    assert_int_equal(l[0].projection_type, KURA_PROJECTION_ALL);
    assert_int_equal(l[0].non_key_attributes_count, 0);
    assert_null(l[0].non_key_attributes);
    assert_int_equal(l[1].projection_type, KURA_PROJECTION_INCLUDE);
    assert_int_equal(l[1].non_key_attributes_count, 2);
    assert_string_equal(l[1].non_key_attributes[1], "b");
    assert_string_equal(g[0].index_name, "gsi1");
    assert_string_equal(g[0].index_status, "ACTIVE");
    assert_false(g[0].backfilling);
    assert_int_equal(g[0].projection_type, KURA_PROJECTION_KEYS_ONLY);
    assert_int_equal(g[0].read_capacity_units, 10);
    assert_int_equal(g[0].write_capacity_units, 20);
    assert_int_equal(g[0].item_count, 0);
    assert_int_equal(g[0].index_size_bytes, 0);
    assert_int_equal(g[1].key_schema_count, 4);
    static const char *const k1[] = {"g", "h2", "x", "r2"};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(g[1].key_schema[i].attribute_name, k1[i]);
        assert_int_equal(g[1].key_schema[i].range, i >= 2);
    }
    assert_string_equal(g[1].non_key_attributes[0], "pk");
    assert_int_equal(g[2].key_schema_count, 1);
    assert_int_equal(g[2].read_capacity_units, 12);
}

static void test_describe_reopen(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("index_ddl");
    kura_db *db = open_db(dir);
    req_buf b;
    rich_table(&b);
    kura_table_description created, described, reopened, updated;
    assert_kura_ok(kura_create_table(db, &b.r, &created));
    check_rich(&created);
    assert_kura_ok(kura_describe_table(db, "Orders", &described));
    assert_desc_equal(&created, &described);
    assert_kura_ok(kura_close(db));
    db = open_db(dir);
    assert_kura_ok(kura_describe_table(db, "Orders", &reopened));
    check_rich(&reopened);
    assert_desc_equal(&created, &reopened);

    /* PAY_PER_REQUEST: the GSIs report 0 units, also after a reopen */
    kura_update_table_req u = {.table_name = "Orders",
                               .billing_mode = KURA_BILLING_PAY_PER_REQUEST};
    assert_kura_ok(kura_update_table(db, &u, &updated));
    assert_int_equal(updated.global_secondary_indexes[0].read_capacity_units, 0);
    assert_int_equal(updated.global_secondary_indexes[2].write_capacity_units, 0);
    assert_int_equal(updated.local_secondary_indexes_count, 2);
    kura_table_description_free(&updated);
    assert_kura_ok(kura_close(db));
    db = open_db(dir);
    assert_kura_ok(kura_describe_table(db, "Orders", &updated));
    assert_int_equal(updated.billing_mode, KURA_BILLING_PAY_PER_REQUEST);
    assert_int_equal(updated.global_secondary_indexes[1].read_capacity_units, 0);
    assert_int_equal(updated.global_secondary_indexes_count, 3);
    kura_table_description_free(&updated);

    /* DeleteTable describes the indexes of the table it removed */
    kura_table_description deleted;
    assert_kura_ok(kura_delete_table(db, "Orders", &deleted));
    assert_string_equal(deleted.table_status, "DELETING");
    assert_int_equal(deleted.local_secondary_indexes_count, 2);
    assert_int_equal(deleted.global_secondary_indexes_count, 3);
    kura_table_description_free(&deleted);
    kura_table_description_free(&created);
    kura_table_description_free(&described);
    kura_table_description_free(&reopened);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* ---- The definition record ------------------------------------------------------------------ */

static void test_record_versions(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("index_ddl");
    kura_db *db = open_db(dir);
    req_buf b;
    rich_table(&b);
    kura_table_description d;
    assert_kura_ok(kura_create_table(db, &b.r, &d));
    kura_table_description_free(&d);
    reset(&b);
    static const char *const two[] = {"pk", "sk"};
    defs(&b, two, NULL, 2);
    b.r.table_name = "Plain";
    b.r.local_secondary_indexes = b.r.global_secondary_indexes = NULL;
    assert_kura_ok(kura_create_table(db, &b.r, &d));
    assert_null(d.local_secondary_indexes);
    assert_null(d.global_secondary_indexes);
    kura_table_description_free(&d);

    kmutex_lock(&db->tables_mu);
    kura_table *rich = table_find_locked(db, "Orders"), *plain = table_find_locked(db, "Plain");
    assert_non_null(rich);
    assert_non_null(plain);
    assert_int_equal(rich->next_index_id, 6);
    assert_int_equal(rich->lsi[1].id, 2);
    assert_int_equal(rich->gsi[0].id, 3);
    assert_int_equal(rich->gsi[1].hash[1].type, KURA_B);
    assert_int_equal(rich->gsi[1].range[1].type, KURA_N);
    kbuf rb = KBUF_INIT, pb = KBUF_INIT;
    assert_kura_ok(def_encode(rich, &rb));
    assert_kura_ok(def_encode(plain, &pb));
    kmutex_unlock(&db->tables_mu);
    /* a table without indexes keeps version 1 (readable by a kura from before indexes) */
    assert_int_equal(rb.data[0], 2);
    assert_int_equal(pb.data[0], 1);
    kura_table *t = table_new();
    assert_kura_ok(def_decode(pb.data, pb.len, t));
    assert_int_equal(t->nlsi + t->ngsi, 0);
    assert_int_equal(t->next_index_id, 1);
    table_free(t);
    t = table_new();
    assert_kura_ok(def_decode(rb.data, rb.len, t));
    assert_int_equal(t->nlsi, 2);
    assert_int_equal(t->ngsi, 3);
    assert_string_equal(t->gsi[1].range[1].name, "r2");
    assert_int_equal(t->gsi[1].ninclude, 2);
    assert_int_equal(t->gsi[2].rcu, 12);
    table_free(t);
    /* every cut of a version 2 record is malformed, and so is a bad projection code */
    for (size_t cut = 0; cut < rb.len; cut++) {
        t = table_new();
        assert_kura_status(def_decode(rb.data, cut, t), KURA_E_CORRUPTION);
        table_free(t);
    }
    kbuf_free(&rb);
    kbuf_free(&pb);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* ---- Checks that come late, and the table's existence ------------------------------------- */

static void test_late_checks_and_existence(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("index_ddl");
    kura_db *db = open_db(dir);
    req_buf b;
    rich_table(&b);
    kura_table_description d;
    b.gsi[2].has_provisioned_throughput = false;
    INVALID_IS("No provisioned throughput specified for the global secondary index");
    reset(&b);
    b.r.global_secondary_indexes = NULL;
    INVALID_IS(INVALID "Some AttributeDefinitions are not used. AttributeDefinitions: [pk, sk, "
                       "x, g], keys used: [pk, sk, x]");
    /* and after the table's existence */
    reset(&b);
    static const char *const two[] = {"pk", "sk"};
    defs(&b, two, NULL, 2);
    b.r.local_secondary_indexes = b.r.global_secondary_indexes = NULL;
    assert_kura_ok(kura_create_table(db, &b.r, &d));
    kura_table_description_free(&d);
    reset(&b);
    assert_kura_status(kura_create_table(db, &b.r, &d), KURA_E_RESOURCE_IN_USE);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* ---- Validation ---------------------------------------------------------------------------- */

static void test_validation_lsi(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("index_ddl");
    kura_db *db = open_db(dir);
    req_buf b;
    reset(&b);
    VALID();

    reset(&b);
    b.r.local_secondary_indexes_count = 0;
    INVALID_IS(INVALID "List of LocalSecondaryIndexes is empty");
    reset(&b);
    b.r.global_secondary_indexes_count = 0;
    INVALID_IS(INVALID "List of GlobalSecondaryIndexes is empty");

    reset(&b);
    static const char *const nosk[] = {"pk", "x", "g"};
    defs(&b, nosk, NULL, 3);
    b.r.key_schema_count = 1;
    INVALID_IS(INVALID "Table KeySchema does not have a range key, which is required when "
                       "specifying a LocalSecondaryIndex");
    reset(&b);
    set_keys(&b, &b.lsi[0], "pk:H y:R");
    INVALID_IS(INVALID "Some index key attributes are not defined in AttributeDefinitions. "
                       "Keys: [pk, y], AttributeDefinitions: [pk, sk, x, g]");
    reset(&b);
    set_keys(&b, &b.lsi[0], "pk:H pk:R");
    INVALID_IS("Both the Hash Key and the Range Key element in the KeySchema have the same name");
    reset(&b);
    set_keys(&b, &b.lsi[0], "x:R pk:H");
    INVALID_IS("Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
    reset(&b);
    set_keys(&b, &b.lsi[0], "pk:H x:H");
    INVALID_IS("Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
    reset(&b);
    set_keys(&b, &b.lsi[0], "pk:H");
    INVALID_IS(INVALID "Index KeySchema does not have a range key for index: lsi1");
    reset(&b);
    set_keys(&b, &b.lsi[0], "x:H sk:R");
    INVALID_IS(INVALID "Index KeySchema does not have the same leading hash key as table "
                       "KeySchema for index: lsi1. index hash key: x, table hash key: pk");
    reset(&b);
    set_keys(&b, &b.lsi[0], "pk:H x:R sk:R");
    INVALID_IS("1 validation error detected: Value '[...]' at "
               "'localSecondaryIndexes.1.member.keySchema' failed to satisfy constraint: Member "
               "must have length less than or equal to 2");

    /* names */
    reset(&b);
    b.lsi[0].index_name = "ab";
    INVALID_IS("1 validation error detected: Value 'ab' at 'localSecondaryIndexes.1.member."
               "indexName' failed to satisfy constraint: Member must have length greater than "
               "or equal to 3");
    reset(&b);
    b.gsi[0].index_name = "a b";
    INVALID_IS("1 validation error detected: Value 'a b' at 'globalSecondaryIndexes.1.member."
               "indexName' failed to satisfy constraint: Member must satisfy regular expression "
               "pattern: [a-zA-Z0-9_.-]+");
    reset(&b);
    b.gsi[0].index_name = NULL;
    INVALID_IS("1 validation error detected: Value null at 'globalSecondaryIndexes.1.member."
               "indexName' failed to satisfy constraint: Member must not be null");
    reset(&b);
    char long_name[257];
    memset(long_name, 'n', 256);
    long_name[256] = 0;
    b.lsi[0].index_name = long_name;
    INVALID_IS("1 validation error detected: Value '" /* 256 x n */
               "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
               "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
               "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
               "nnnnnnnnnnnnnnnn' at 'localSecondaryIndexes.1.member.indexName' failed to "
               "satisfy constraint: Member must have length less than or equal to 255");
    reset(&b);
    long_name[255] = 0;
    b.lsi[0].index_name = long_name;
    VALID();
    reset(&b);
    b.r.local_secondary_indexes_count = 2;
    b.lsi[1].index_name = "lsi1";
    INVALID_IS(INVALID "Duplicate index name: lsi1");
    reset(&b);
    b.gsi[0].index_name = "lsi1";
    INVALID_IS(INVALID "Duplicate index name: lsi1");
    reset(&b);
    b.r.global_secondary_indexes_count = 2;
    b.gsi[1].index_name = "gsi1";
    INVALID_IS(INVALID "Duplicate index name: gsi1");

    /* counts: checked after the entries, as DynamoDB does */
    reset(&b);
    b.r.local_secondary_indexes_count = 5;
    VALID();
    b.r.local_secondary_indexes_count = 6;
    INVALID_IS(INVALID "Number of LocalSecondaryIndexes exceeds per-table limit of 5");
    set_keys(&b, &b.lsi[5], "x:H sk:R");
    INVALID_IS(INVALID "Index KeySchema does not have the same leading hash key as table "
                       "KeySchema for index: lsi6. index hash key: x, table hash key: pk");
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

static void test_validation_gsi(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("index_ddl");
    kura_db *db = open_db(dir);
    req_buf b;
    static const char *const many[] = {"pk", "sk", "x", "g", "h2", "h3", "h4", "h5",
                                       "r2", "r3", "r4", "r5"};
    reset(&b);
    set_keys(&b, &b.gsi[0], "y:H");
    INVALID_IS(INVALID "Some index key attributes are not defined in AttributeDefinitions. "
                       "Keys: [y], AttributeDefinitions: [pk, sk, x, g]");
    reset(&b);
    set_keys(&b, &b.gsi[0], "g:H g:R");
    INVALID_IS("Both the Hash Key and the Range Key element in the KeySchema have the same name");
    reset(&b);
    set_keys(&b, &b.gsi[0], "x:R");
    INVALID_IS("Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
    reset(&b);
    set_keys(&b, &b.gsi[0], "g:R x:H");
    INVALID_IS("Invalid KeySchema: The first KeySchemaElement is not a HASH key type");

    /* multi-attribute keys: 1..4 HASH then 0..4 RANGE */
    reset(&b);
    defs(&b, many, NULL, 12);
    b.r.local_secondary_indexes = NULL;
    set_keys(&b, &b.gsi[0], "g:H h2:H h3:H h4:H x:R r2:R r3:R r4:R");
    b.r.global_secondary_indexes_count = 2;
    set_keys(&b, &b.gsi[1], "h5:H r5:R sk:R");
    VALID();
    set_keys(&b, &b.gsi[1], "h5:H g:H r5:R"); /* a second HASH element: a 2-attribute key */
    set_keys(&b, &b.gsi[0], "h2:H h3:H h4:H x:R r2:R r3:R r4:R");
    VALID();
    set_keys(&b, &b.gsi[0], "g:H h2:H h3:H h4:H h5:H x:R r2:R r3:R r4:R r5:R");
    INVALID_IS("1 validation error detected: Value '[...]' at "
               "'globalSecondaryIndexes.1.member.keySchema' failed to satisfy constraint: "
               "Member must have length less than or equal to 8");
    set_keys(&b, &b.gsi[0], "g:H h2:H h3:H h4:H h5:H x:R r2:R r3:R");
    INVALID_IS(INVALID "Index KeySchema has more than 4 HASH key attributes for index: gsi1");
    set_keys(&b, &b.gsi[0], "g:H x:R r2:R r3:R r4:R r5:R");
    INVALID_IS(INVALID "Index KeySchema has more than 4 RANGE key attributes for index: gsi1");
    set_keys(&b, &b.gsi[0], "g:H x:R h2:H");
    INVALID_IS("Invalid KeySchema: A HASH KeySchemaElement cannot follow a RANGE "
               "KeySchemaElement");
    set_keys(&b, &b.gsi[0], "g:H h2:H g:R");
    INVALID_IS(INVALID "Duplicate key attribute g in KeySchema of index: gsi1");

    /* projections */
    reset(&b);
    b.gsi[0].projection.projection_type = KURA_PROJECTION_UNSET;
    INVALID_IS(INVALID "Unknown ProjectionType: null");
    static const char *const one[] = {"a"};
    reset(&b);
    b.gsi[0].projection.non_key_attributes = one;
    b.gsi[0].projection.non_key_attributes_count = 1;
    INVALID_IS(INVALID "ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified");
    reset(&b);
    b.lsi[0].projection.non_key_attributes = one;
    b.lsi[0].projection.non_key_attributes_count = 1;
    INVALID_IS(INVALID "ProjectionType is ALL, but NonKeyAttributes is specified");
    reset(&b);
    b.gsi[0].projection.projection_type = KURA_PROJECTION_INCLUDE;
    INVALID_IS("If Projection type INCLUDE is specified, some non-key attributes to include in "
               "the projection must be specified as well");
    b.gsi[0].projection.non_key_attributes = one;
    b.gsi[0].projection.non_key_attributes_count = 0;
    INVALID_IS("1 validation error detected: Value '[]' at "
               "'globalSecondaryIndexes.1.member.projection.nonKeyAttributes' failed to satisfy "
               "constraint: Member must have length greater than or equal to 1");
    static const char *const dup[] = {"a", "b", "a"}, *const empty[] = {""};
    b.gsi[0].projection.non_key_attributes = dup;
    b.gsi[0].projection.non_key_attributes_count = 3;
    INVALID_IS("Cannot have two attributes with the same name");
    b.gsi[0].projection.non_key_attributes = empty;
    b.gsi[0].projection.non_key_attributes_count = 1;
    INVALID_IS("Names of key attributes and attributes projected into an index must be between "
               "1 and 255 characters, inclusive");
    /* a key attribute may be named (DynamoDB Local accepts it), the same name in two
     * indexes too */
    static const char *const keys[] = {"pk", "g", "x", "sk"};
    b.gsi[0].projection.non_key_attributes = keys;
    b.gsi[0].projection.non_key_attributes_count = 4;
    b.lsi[0].projection = b.gsi[0].projection;
    VALID();
    /* at most 100 NonKeyAttributes, summed over the indexes */
    static char nka_names[101][8];
    static const char *nka[101];
    for (int i = 0; i < 101; i++) {
        snprintf(nka_names[i], sizeof nka_names[i], "a%d", i);
        nka[i] = nka_names[i];
    }
    reset(&b);
    b.gsi[0].projection = (kura_projection){KURA_PROJECTION_INCLUDE, nka, 100};
    VALID();
    b.gsi[0].projection.non_key_attributes_count = 101;
    INVALID_IS(INVALID "Number of NonKeyAttributes summed across all indexes (101) exceeds the "
                       "per-table limit of 100");
    b.gsi[0].projection.non_key_attributes_count = 60;
    b.lsi[0].projection = (kura_projection){KURA_PROJECTION_INCLUDE, nka, 41};
    INVALID_IS(INVALID "Number of NonKeyAttributes summed across all indexes (101) exceeds the "
                       "per-table limit of 100");

    /* throughput */
    reset(&b);
    b.gsi[0].has_provisioned_throughput = true;
    b.gsi[0].read_capacity_units = b.gsi[0].write_capacity_units = 1;
    INVALID_IS(INVALID "ProvisionedThroughput should not be specified for index: gsi1 when "
                       "BillingMode is PAY_PER_REQUEST");
    reset(&b);
    b.r.billing_mode = KURA_BILLING_PROVISIONED;
    b.r.has_provisioned_throughput = true;
    b.r.read_capacity_units = b.r.write_capacity_units = 1;
    INVALID_IS("No provisioned throughput specified for the global secondary index");
    b.gsi[0].has_provisioned_throughput = true;
    b.gsi[0].read_capacity_units = 1;
    INVALID_IS("1 validation error detected: Value '0' at 'globalSecondaryIndexes.1.member."
               "provisionedThroughput.writeCapacityUnits' failed to satisfy constraint: Member "
               "must have value greater than or equal to 1");
    b.gsi[0].write_capacity_units = 1000000000001ull;
    INVALID_IS("Given value 1000000000001 for WriteCapacityUnits is out of bounds");
    b.gsi[0].write_capacity_units = 1000000000000ull;
    VALID();

    /* unused definitions (with indexes; without, the table's own message) */
    reset(&b);
    static const char *const extra[] = {"pk", "sk", "x", "g", "z"};
    defs(&b, extra, NULL, 5);
    INVALID_IS(INVALID "Some AttributeDefinitions are not used. AttributeDefinitions: [pk, sk, "
                       "x, g, z], keys used: [pk, sk, x, g]");
    b.r.local_secondary_indexes = b.r.global_secondary_indexes = NULL;
    INVALID_IS(INVALID "Number of attributes in KeySchema does not exactly match number of "
                       "attributes defined in AttributeDefinitions");

    /* counts */
    reset(&b);
    b.r.local_secondary_indexes = NULL;
    static const char *const gx[] = {"pk", "sk", "g", "x"};
    defs(&b, gx, NULL, 4);
    b.r.global_secondary_indexes_count = 20;
    VALID();
    b.r.global_secondary_indexes_count = 21;
    INVALID_IS(INVALID "GlobalSecondaryIndex count exceeds the per-table limit of 20");
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_describe_reopen),
        cmocka_unit_test(test_record_versions),
        cmocka_unit_test(test_late_checks_and_existence),
        cmocka_unit_test(test_validation_lsi),
        cmocka_unit_test(test_validation_gsi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * engine_settings_test.c - tests of the table settings and resource-based policies in the
 * engine (engine/table_settings.c, engine/table_policy.c) through the C API: what CreateTable
 * and UpdateTable set is what DescribeTable shows, also after a reopen (definition version
 * 6); a table without settings keeps its older version (1, 5 with tags), and goes back to it
 * when its last setting is removed; version 6 records round-trip through def_encode /
 * def_decode and every cut of one is corruption; billing mode switches with their GSI rules;
 * policies' revision ids, ExpectedRevisionId and durability.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/table_int.h"
#include "testutil.h"

static kura_db *db;
static char *dir;

#define ARN "arn:aws:dynamodb:us-east-1:000000000000:table/"

static int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("engine_settings");
    return kura_open(dir, NULL, &db) == KURA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

static void reopen(void)
{
    assert_kura_ok(kura_close(db));
    assert_kura_ok(kura_open(dir, NULL, &db));
}

static const kura_attribute_definition defs[] = {{"pk", KURA_S}, {"g", KURA_S}};
static const kura_key_schema_element keys[] = {{"pk", false}};
static const kura_key_schema_element gkeys[] = {{"g", false}};

/* A PAY_PER_REQUEST table `name` with one GSI "gidx", and the request's extras from `r`. */
static kura_status create(const char *name, kura_create_table_req r, kura_index_def *gsi)
{
    r.table_name = name;
    r.attribute_definitions = defs;
    r.attribute_definitions_count = gsi ? 2 : 1;
    r.key_schema = keys;
    r.key_schema_count = 1;
    if (!r.billing_mode)
        r.billing_mode = KURA_BILLING_PAY_PER_REQUEST;
    if (gsi) {
        gsi->index_name = "gidx";
        gsi->key_schema = gkeys;
        gsi->key_schema_count = 1;
        gsi->projection.projection_type = KURA_PROJECTION_ALL;
        r.global_secondary_indexes = gsi;
        r.global_secondary_indexes_count = 1;
    }
    kura_table_description d;
    kura_status s = kura_create_table(db, &r, &d);
    if (s == KURA_OK)
        kura_table_description_free(&d);
    return s;
}

static kura_table_description describe(const char *name)
{
    kura_table_description d;
    assert_kura_ok(kura_describe_table(db, name, &d));
    return d;
}

/* The version byte of the table's definition record, and the record decoded again. */
static uint8_t def_version(const char *name, kura_table **decoded_out)
{
    kura_table *t;
    assert_kura_ok(table_acquire(db, name, &t));
    kbuf b = KBUF_INIT;
    kmutex_lock(&db->tables_mu);
    assert_kura_ok(def_encode(t, &b));
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    uint8_t v = b.data[0];
    if (decoded_out) {
        *decoded_out = table_new();
        assert_kura_ok(def_decode(b.data, b.len, *decoded_out));
    }
    kbuf_free(&b);
    return v;
}

static void expect_settings(const char *name)
{
    kura_table_description d = describe(name);
    assert_int_equal(d.table_class, KURA_TABLE_CLASS_STANDARD_INFREQUENT_ACCESS);
    assert_true(d.on_demand.given);
    assert_int_equal(d.on_demand.max_read_request_units, 100);
    assert_int_equal(d.on_demand.max_write_request_units, -1);
    assert_true(d.warm.given);
    assert_int_equal(d.warm.read_units_per_second, 20000);
    assert_int_equal(d.warm.write_units_per_second, 4000);
    assert_string_equal(d.kms_master_key_arn, "arn:aws:kms:us-east-1:000000000000:key/k-1");
    assert_true(d.deletion_protection_enabled);
    assert_int_equal(d.global_secondary_indexes_count, 1);
    const kura_index_description *x = &d.global_secondary_indexes[0];
    assert_int_equal(x->on_demand.max_read_request_units, -1);
    assert_int_equal(x->on_demand.max_write_request_units, 9);
    assert_int_equal(x->warm.read_units_per_second, 12000);
    assert_int_equal(x->warm.write_units_per_second, 6000);
    kura_table_description_free(&d);
}

static void test_settings_durable(void **state)
{
    (void)state;
    kura_index_def gsi = {.on_demand = {true, 0, 9}, .warm = {true, 0, 6000}};
    kura_create_table_req r = {
        .deletion_protection_enabled = true,
        .table_class = KURA_TABLE_CLASS_STANDARD_INFREQUENT_ACCESS,
        .on_demand = {true, 100, 0},
        .warm = {true, 20000, 0},
        .sse = {.given = true, .has_enabled = true, .enabled = true, .sse_type = KURA_SSE_KMS,
                .kms_master_key_id = "k-1"},
        .resource_policy = "{\"Version\":\"2012-10-17\"}",
    };
    assert_kura_ok(create("settings", r, &gsi));
    expect_settings("settings");
    kura_table *d;
    assert_int_equal(def_version("settings", &d), 6);
    assert_int_equal(d->table_class, KURA_TABLE_CLASS_STANDARD_INFREQUENT_ACCESS);
    assert_string_equal(d->policy, "{\"Version\":\"2012-10-17\"}");
    assert_string_equal(d->kms_key, "k-1");
    table_free(d);
    reopen();
    expect_settings("settings");
    char *policy, *rev;
    assert_kura_ok(kura_get_resource_policy(db, ARN "settings", &policy, &rev));
    assert_string_equal(policy, "{\"Version\":\"2012-10-17\"}");
    kura_free(policy);
    kura_free(rev);
    /* deletion protection refuses DeleteTable, with DynamoDB's message */
    kura_table_description dd;
    assert_kura_status(kura_delete_table(db, "settings", &dd), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "Resource cannot be deleted as it is currently "
                        "protected against deletion. Disable deletion protection first.");
}

/* Every cut of a version 6 record is malformed, and so is a bad table class byte. */
static void test_v6_record_malformed(void **state)
{
    (void)state;
    kura_create_table_req r = {.table_class = KURA_TABLE_CLASS_STANDARD,
                               .resource_policy = "{}"};
    assert_kura_ok(create("cuts", r, NULL));
    kura_table *t;
    assert_kura_ok(table_acquire(db, "cuts", &t));
    kbuf b = KBUF_INIT, sec = KBUF_INIT;
    kmutex_lock(&db->tables_mu);
    assert_kura_ok(def_encode(t, &b));
    assert_true(def_settings_encode(t, &sec));
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    assert_int_equal(b.data[0], 6);
    for (size_t cut = 0; cut < b.len; cut++) {
        kura_table *d = table_new();
        assert_kura_status(def_decode(b.data, cut, d), KURA_E_CORRUPTION);
        table_free(d);
    }
    /* the settings section ends the record; its first byte is the class */
    size_t at = b.len - sec.len;
    assert_int_equal(b.data[at], KURA_TABLE_CLASS_STANDARD);
    kbuf_free(&sec);
    b.data[at] = 9;
    kura_table *d = table_new();
    assert_kura_status(def_decode(b.data, b.len, d), KURA_E_CORRUPTION);
    table_free(d);
    kbuf_free(&b);
}

/* Tables without settings keep the versions older kuras read; removing the last setting
 * writes the older version again. */
static void test_older_versions(void **state)
{
    (void)state;
    kura_create_table_req r = {0};
    assert_kura_ok(create("plain", r, NULL));
    assert_int_equal(def_version("plain", NULL), 1);
    kura_tag tag = {"k", "v"};
    kura_create_table_req rt = {.tags = &tag, .tags_count = 1};
    assert_kura_ok(create("tagged", rt, NULL));
    assert_int_equal(def_version("tagged", NULL), 5);
    char *rev = NULL;
    assert_kura_ok(kura_put_resource_policy(db, ARN "tagged", "{\"a\":[1,2]}", NULL, &rev));
    assert_int_equal(def_version("tagged", NULL), 6);
    char *rev2 = NULL;
    assert_kura_ok(kura_delete_resource_policy(db, ARN "tagged", rev, &rev2));
    assert_string_equal(rev, rev2);
    kura_free(rev);
    kura_free(rev2);
    assert_int_equal(def_version("tagged", NULL), 5);
    reopen();
    kura_tag_list l;
    assert_kura_ok(kura_list_tags_of_resource(db, ARN "tagged", NULL, 0, &l));
    assert_int_equal(l.count, 1);
    kura_tag_list_free(&l);
    kura_table_description d = describe("plain");
    assert_int_equal(d.table_class, KURA_TABLE_CLASS_UNSET); /* no TableClassSummary */
    assert_null(d.kms_master_key_arn);
    assert_int_equal(d.on_demand.max_read_request_units, -1);
    assert_int_equal(d.warm.read_units_per_second, 12000);
    assert_int_equal(d.warm.write_units_per_second, 4000);
    assert_false(d.deletion_protection_enabled);
    kura_table_description_free(&d);
}

static kura_status update(kura_update_table_req r)
{
    kura_table_description d;
    kura_status s = kura_update_table(db, &r, &d);
    if (s == KURA_OK)
        kura_table_description_free(&d);
    return s;
}

static void test_billing_switch(void **state)
{
    (void)state;
    kura_index_def gsi = {.on_demand = {true, 5, 5}};
    kura_create_table_req r = {.on_demand = {true, 50, 60}};
    assert_kura_ok(create("billing", r, &gsi));
    /* to PROVISIONED: the table's throughput and every GSI's */
    kura_update_table_req u = {.table_name = "billing", .billing_mode = KURA_BILLING_PROVISIONED};
    assert_kura_status(update(u), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "One or more parameter values were invalid: "
                        "ProvisionedThroughput must be specified when BillingMode is "
                        "PROVISIONED");
    u.has_provisioned_throughput = true;
    u.read_capacity_units = u.write_capacity_units = 5;
    assert_kura_status(update(u), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "One or more parameter values were invalid: "
                        "ProvisionedThroughput must be specified for index: gidx");
    kura_gsi_update gu = {.action = KURA_GSI_UPDATE, .index_name = "gidx",
                          .has_provisioned_throughput = true, .read_capacity_units = 3,
                          .write_capacity_units = 4};
    u.global_secondary_index_updates = &gu;
    u.global_secondary_index_updates_count = 1;
    assert_kura_ok(update(u));
    kura_table_description d = describe("billing");
    assert_int_equal(d.billing_mode, KURA_BILLING_PROVISIONED);
    assert_int_equal(d.read_capacity_units, 5);
    assert_false(d.on_demand.given); /* on-demand maxima go with the mode */
    assert_true(d.last_update_to_pay_per_request_date_time > 0);
    assert_int_equal(d.global_secondary_indexes[0].read_capacity_units, 3);
    assert_int_equal(d.global_secondary_indexes[0].write_capacity_units, 4);
    assert_false(d.global_secondary_indexes[0].on_demand.given);
    kura_table_description_free(&d);
    /* OnDemandThroughput needs PAY_PER_REQUEST */
    kura_update_table_req o = {.table_name = "billing", .on_demand = {true, 10, 10}};
    assert_kura_status(update(o), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "One or more parameter values were invalid: "
                        "OnDemandThroughput can only be specified when BillingMode is "
                        "PAY_PER_REQUEST");
    /* back to PAY_PER_REQUEST, with maxima; throughput is refused there */
    kura_update_table_req p = {.table_name = "billing",
                               .billing_mode = KURA_BILLING_PAY_PER_REQUEST,
                               .has_provisioned_throughput = true, .read_capacity_units = 1,
                               .write_capacity_units = 1};
    assert_kura_status(update(p), KURA_E_INVALID);
    p.has_provisioned_throughput = false;
    p.on_demand = (kura_on_demand_throughput){true, 7, 0};
    assert_kura_ok(update(p));
    reopen();
    d = describe("billing");
    assert_int_equal(d.billing_mode, KURA_BILLING_PAY_PER_REQUEST);
    assert_int_equal(d.read_capacity_units, 0);
    assert_int_equal(d.on_demand.max_read_request_units, 7);
    assert_int_equal(d.on_demand.max_write_request_units, -1);
    assert_int_equal(d.global_secondary_indexes[0].read_capacity_units, 0);
    kura_table_description_free(&d);
}

static void test_update_settings(void **state)
{
    (void)state;
    kura_create_table_req r = {0};
    assert_kura_ok(create("upd", r, NULL));
    kura_update_table_req u = {.table_name = "upd",
                               .table_class = KURA_TABLE_CLASS_STANDARD_INFREQUENT_ACCESS,
                               .warm = {true, 13000, 0},
                               .sse = {.given = true, .has_enabled = true, .enabled = true}};
    assert_kura_ok(update(u));
    kura_table_description d = describe("upd");
    assert_int_equal(d.table_class, KURA_TABLE_CLASS_STANDARD_INFREQUENT_ACCESS);
    assert_true(d.table_class_last_update_date_time > 0);
    assert_int_equal(d.warm.read_units_per_second, 13000);
    assert_string_equal(d.kms_master_key_arn,
                        "arn:aws:kms:us-east-1:000000000000:alias/aws/dynamodb");
    kura_table_description_free(&d);
    /* warm throughput only grows; nothing of a refused request is applied */
    kura_update_table_req w = {.table_name = "upd", .warm = {true, 12500, 0},
                               .table_class = KURA_TABLE_CLASS_STANDARD};
    assert_kura_status(update(w), KURA_E_INVALID);
    d = describe("upd");
    assert_int_equal(d.table_class, KURA_TABLE_CLASS_STANDARD_INFREQUENT_ACCESS);
    kura_table_description_free(&d);
    /* back to the AWS owned key; again is DynamoDB's "already encrypted by default" */
    kura_update_table_req s = {.table_name = "upd",
                               .sse = {.given = true, .has_enabled = true, .enabled = false}};
    assert_kura_ok(update(s));
    assert_kura_status(update(s), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "Table is already encrypted by default");
    reopen();
    d = describe("upd");
    assert_null(d.kms_master_key_arn);
    assert_int_equal(d.warm.read_units_per_second, 13000);
    kura_table_description_free(&d);
}

static void test_policy_revisions(void **state)
{
    (void)state;
    kura_create_table_req r = {0};
    assert_kura_ok(create("pol", r, NULL));
    char *policy = NULL, *rev = NULL, *rev2 = NULL, *rev3 = NULL;
    assert_kura_status(kura_get_resource_policy(db, ARN "pol", &policy, &rev),
                       KURA_E_POLICY_NOT_FOUND);
    assert_string_equal(kura_last_error(), "Resource-based policy not found for the provided "
                        "ResourceArn: " ARN "pol");
    assert_kura_status(kura_put_resource_policy(db, ARN "pol", "{}", "1", &rev),
                       KURA_E_POLICY_NOT_FOUND);
    assert_kura_ok(kura_put_resource_policy(db, ARN "pol", "{}", "NO_POLICY", &rev));
    /* the same text again: the same revision */
    assert_kura_ok(kura_put_resource_policy(db, ARN "pol", "{}", NULL, &rev2));
    assert_string_equal(rev, rev2);
    assert_kura_status(kura_put_resource_policy(db, ARN "pol", "{\"b\":1}", "NO_POLICY", &rev3),
                       KURA_E_POLICY_NOT_FOUND);
    assert_kura_ok(kura_put_resource_policy(db, ARN "pol", "{\"b\":1}", rev, &rev3));
    assert_true(strtoull(rev3, NULL, 10) > strtoull(rev, NULL, 10));
    /* not JSON, not an object, too long */
    char *bad = NULL;
    assert_kura_status(kura_put_resource_policy(db, ARN "pol", "{\"b\":", NULL, &bad),
                       KURA_E_INVALID);
    assert_kura_status(kura_put_resource_policy(db, ARN "pol", "[1]", NULL, &bad),
                       KURA_E_INVALID);
    char *big = malloc(POLICY_MAX_BYTES + 2);
    memset(big, ' ', POLICY_MAX_BYTES + 1);
    big[0] = '{';
    big[POLICY_MAX_BYTES - 1] = '}';
    big[POLICY_MAX_BYTES] = 0; /* exactly 20 KB, whitespace counted: accepted */
    char *rev4 = NULL;
    assert_kura_ok(kura_put_resource_policy(db, ARN "pol", big, NULL, &rev4));
    big[POLICY_MAX_BYTES] = ' ';
    big[POLICY_MAX_BYTES + 1] = 0;
    assert_kura_status(kura_put_resource_policy(db, ARN "pol", big, NULL, &bad),
                       KURA_E_INVALID);
    reopen();
    kura_free(rev2);
    assert_kura_ok(kura_get_resource_policy(db, ARN "pol", &policy, &rev2));
    assert_int_equal(strlen(policy), POLICY_MAX_BYTES);
    assert_string_equal(rev2, rev4);
    kura_free(policy);
    /* delete: a wrong expected id is refused; without a policy it is not an error */
    char *del = NULL;
    assert_kura_status(kura_delete_resource_policy(db, ARN "pol", rev, &del),
                       KURA_E_POLICY_NOT_FOUND);
    assert_kura_ok(kura_delete_resource_policy(db, ARN "pol", NULL, &del));
    assert_string_equal(del, rev4);
    kura_free(del);
    assert_kura_ok(kura_delete_resource_policy(db, ARN "pol", NULL, &del));
    assert_null(del);
    assert_kura_status(kura_delete_resource_policy(db, ARN "pol", "NO_POLICY", &del),
                       KURA_E_POLICY_NOT_FOUND);
    assert_kura_status(kura_get_resource_policy(db, ARN "pol", &policy, &rev),
                       KURA_E_POLICY_NOT_FOUND);
    assert_kura_status(kura_get_resource_policy(db, ARN "nope", &policy, &rev),
                       KURA_E_RESOURCE_NOT_FOUND);
    free(big);
    kura_free(rev);
    kura_free(rev2);
    kura_free(rev3);
    kura_free(rev4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_settings_durable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v6_record_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_older_versions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_billing_switch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_revisions, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * engine_ttl_test.c - Time to Live (engine/ttl.c, engine/ttl_sweep.c) through the C API:
 * UpdateTimeToLive's and DescribeTimeToLive's statuses and errors on an injected clock; the
 * sweeper deleting expired items from a table and its LSI and GSI, leaving items whose
 * attribute is missing, not a Number, in the future or more than five years old; a TTL
 * extended between the sweep's walk and its delete surviving (the conditional delete); disable
 * stopping deletion; the setting surviving a reopen; the background thread; the sweeper's
 * deletes marked as the service's in the WAL (what the change stream reads). Tables are made through kura_execute for brevity.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/db_int.h"
#include "engine/lsm/batch.h"
#include "engine/lsm/lsm.h"
#include "engine/stream.h"
#include "engine/table_int.h"
#include "engine/ttl.h"
#include "testutil.h"

static kura_db *db;
static char *dir;
static int64_t clock_now = 2000000000; /* the injected clock, seconds */
static uint32_t sweep_ms = 3600000;    /* the background thread stays out of the way */

static int64_t test_clock(void *arg)
{
    (void)arg;
    return __atomic_load_n(&clock_now, __ATOMIC_RELAXED);
}

static void advance(int64_t s)
{
    __atomic_add_fetch(&clock_now, s, __ATOMIC_RELAXED);
}

static kura_status open_db(void)
{
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    o.ttl_clock = test_clock;
    o.ttl_sweep_interval_ms = sweep_ms;
    return kura_open(dir, &o, &db);
}

static int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("engine_ttl");
    sweep_ms = 3600000;
    return open_db() == KURA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ttl_test_before_chunk = NULL;
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

/* Runs a JSON operation (printf-style body); fails the test unless it succeeds. The response
 * is returned malloc'ed (kura_free) when out is not NULL. */
static void exec(char **out, const char *op, const char *fmt, ...)
{
    char body[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    char *res = NULL;
    size_t len;
    kura_status s = kura_execute(db, op, body, strlen(body), &res, &len);
    if (s != KURA_OK)
        fail_msg("%s %s: %s", op, body, res ? res : kura_status_str(s));
    if (out)
        *out = res;
    else
        kura_free(res);
}

/* A table "ttl_t" (pk S, sk S) of `partitions` partitions with an LSI on "l" (S) and a GSI on
 * "g" (S), KEYS_ONLY. */
static void create_table_p(int partitions)
{
    exec(NULL, "CreateTable",
         "{\"TableName\":\"ttl_t\",\"KuraPartitions\":%d,\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
         "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],\"AttributeDefinitions\":["
         "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\","
         "\"AttributeType\":\"S\"},{\"AttributeName\":\"l\",\"AttributeType\":\"S\"},"
         "{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],\"BillingMode\":\"PAY_PER_REQUEST\","
         "\"LocalSecondaryIndexes\":[{\"IndexName\":\"lsi\",\"KeySchema\":[{\"AttributeName\":"
         "\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"l\",\"KeyType\":\"RANGE\"}],"
         "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}],\"GlobalSecondaryIndexes\":["
         "{\"IndexName\":\"gsi\",\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],"
         "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]}",
         partitions);
}

static void create_table(void)
{
    create_table_p(4);
}

/* Puts item (pk "p<i % 7>", sk "s<i>") with l and g set and `exp` as the raw JSON of its TTL
 * attribute value (NULL: none). */
static void put(int i, const char *exp)
{
    char e[128] = "";
    if (exp)
        snprintf(e, sizeof e, ",\"exp\":%s", exp);
    exec(NULL, "PutItem",
         "{\"TableName\":\"ttl_t\",\"Item\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%d\"},"
         "\"l\":{\"S\":\"l%d\"},\"g\":{\"S\":\"g\"}%s}}",
         i % 7, i, i, e);
}

static void put_n(int i, int64_t exp)
{
    char e[64];
    snprintf(e, sizeof e, "{\"N\":\"%lld\"}", (long long)exp);
    put(i, e);
}

static bool exists(int i)
{
    char *out;
    exec(&out, "GetItem",
         "{\"TableName\":\"ttl_t\",\"ConsistentRead\":true,\"Key\":{\"pk\":{\"S\":\"p%d\"},"
         "\"sk\":{\"S\":\"s%d\"}}}",
         i % 7, i);
    bool found = strstr(out, "\"Item\"") != NULL;
    kura_free(out);
    return found;
}

/* The Count of a Scan of the table or of index `index` (NULL: the table). */
static long count(const char *index)
{
    char *out, ix[64] = "";
    if (index) {
        assert_kura_ok(kura_index_wait(db, "ttl_t", index, 10000));
        snprintf(ix, sizeof ix, ",\"IndexName\":\"%s\"", index);
    }
    exec(&out, "Scan", "{\"TableName\":\"ttl_t\",\"Select\":\"COUNT\"%s}", ix);
    const char *c = strstr(out, "\"Count\":");
    assert_non_null(c);
    long n = strtol(c + 8, NULL, 10);
    kura_free(out);
    return n;
}

static kura_status update(bool enabled, const char *attr)
{
    kura_update_time_to_live_req r = {"ttl_t", enabled, attr};
    return kura_update_time_to_live(db, &r);
}

/* Asserts DescribeTimeToLive's status and attribute (NULL: absent). */
static void expect_ttl(const char *status, const char *attr)
{
    kura_time_to_live_description d;
    assert_kura_ok(kura_describe_time_to_live(db, "ttl_t", &d));
    assert_string_equal(d.time_to_live_status, status);
    if (attr)
        assert_string_equal(d.attribute_name ? d.attribute_name : "(none)", attr);
    else
        assert_null(d.attribute_name);
    kura_time_to_live_description_free(&d);
}

static void expect_error(kura_status got, kura_status want, const char *msg)
{
    if (got != want || strcmp(kura_last_error(), msg) != 0)
        fail_msg("returned %s \"%s\", expected %s \"%s\"", kura_status_str(got),
                 kura_last_error(), kura_status_str(want), msg);
}

static uint64_t sweep(void)
{
    uint64_t n = 0;
    assert_kura_ok(kura_ttl_sweep(db, &n));
    return n;
}

/* ---- UpdateTimeToLive / DescribeTimeToLive ----------------------------------------------- */

static void test_statuses_and_errors(void **state)
{
    (void)state;
    create_table();
    kura_update_time_to_live_req r = {"nope_table", true, "exp"};
    expect_error(kura_update_time_to_live(db, &r), KURA_E_RESOURCE_NOT_FOUND,
                 "Requested resource not found: Table: nope_table not found");
    kura_time_to_live_description d;
    expect_error(kura_describe_time_to_live(db, "nope_table", &d), KURA_E_RESOURCE_NOT_FOUND,
                 "Requested resource not found: Table: nope_table not found");
    expect_error(update(true, NULL), KURA_E_INVALID,
                 "1 validation error detected: Value null at "
                 "'timeToLiveSpecification.attributeName' failed to satisfy constraint: "
                 "Member must not be null");
    expect_error(update(true, ""), KURA_E_INVALID,
                 "1 validation error detected: Value '' at "
                 "'timeToLiveSpecification.attributeName' failed to satisfy constraint: "
                 "Member must have length greater than or equal to 1");
    expect_ttl("DISABLED", NULL);
    expect_error(update(false, "exp"), KURA_E_INVALID, "TimeToLive is already disabled");

    assert_kura_ok(update(true, "exp"));
    expect_ttl("ENABLED", "exp"); /* at once, as DynamoDB */
    advance(2);
    expect_ttl("ENABLED", "exp");
    expect_error(update(true, "exp"), KURA_E_INVALID, "TimeToLive is already enabled");
    expect_error(update(true, "other"), KURA_E_INVALID,
                 "TimeToLive is active on a different AttributeName: current AttributeName "
                 "is exp");
    expect_error(update(false, "other"), KURA_E_INVALID,
                 "TimeToLive is active on a different AttributeName: current AttributeName "
                 "is exp");
    expect_error(update(false, "exp"), KURA_E_INVALID,
                 "Time to live has been modified multiple times within a fixed interval");
    advance(3600);
    assert_kura_ok(update(false, "exp"));
    expect_ttl("DISABLING", "exp");
    advance(2);
    expect_ttl("DISABLED", NULL);
    expect_error(update(false, "exp"), KURA_E_INVALID, "TimeToLive is already disabled");
}

/* ---- The sweeper ------------------------------------------------------------------------- */

static void test_sweep_table_and_indexes(void **state)
{
    (void)state;
    create_table();
    int64_t now = clock_now;
    put_n(0, now - 10);                     /* expired */
    put_n(1, now - 1);                      /* expired */
    put(2, "{\"N\":\"1999999990.5\"}");     /* expired, a fraction */
    put_n(3, now);                          /* expires at now: not yet */
    put_n(4, now + 100);                    /* future */
    put(5, NULL);                           /* missing */
    put(6, "{\"S\":\"1999999990\"}");       /* not a Number (a string of an expired time) */
    put_n(7, now - TTL_MAX_AGE_S - 1);      /* more than five years old */
    put_n(8, now - TTL_MAX_AGE_S);          /* exactly five years: deleted */
    put(9, "{\"NS\":[\"1\"]}");             /* a set of numbers */
    assert_int_equal(sweep(), 0); /* not enabled */
    assert_kura_ok(update(true, "exp"));
    assert_true(exists(0)); /* expired but not swept: still read, as DynamoDB does */
    assert_int_equal(sweep(), 4);
    for (int i = 0; i < 10; i++) {
        bool want = !(i == 0 || i == 1 || i == 2 || i == 8);
        if (exists(i) != want)
            fail_msg("item %d: exists %d, expected %d", i, !want, want);
    }
    assert_int_equal(count(NULL), 6);
    assert_int_equal(count("lsi"), 6);
    assert_int_equal(count("gsi"), 6);
    assert_int_equal(sweep(), 0);
    advance(1); /* item 3 expires now */
    assert_int_equal(sweep(), 1);
    assert_false(exists(3));
    assert_int_equal(count("lsi"), 5);
    assert_int_equal(count("gsi"), 5);
}

static void test_sweep_many(void **state)
{
    (void)state;
    create_table();
    assert_kura_ok(update(true, "exp"));
    for (int i = 0; i < 1000; i++)
        put_n(i, i % 4 ? clock_now - 5 : clock_now + 5);
    assert_int_equal(sweep(), 750);
    assert_int_equal(count(NULL), 250);
    assert_int_equal(count("gsi"), 250);
    assert_int_equal(count("lsi"), 250);
}

/* Extends item 1's TTL once, between the walk that found it expired and the delete. */
static void extend_item_1(kura_table *t, void *arg)
{
    (void)t;
    int *done = arg;
    if ((*done)++)
        return;
    exec(NULL, "UpdateItem",
         "{\"TableName\":\"ttl_t\",\"Key\":{\"pk\":{\"S\":\"p1\"},\"sk\":{\"S\":\"s1\"}},"
         "\"UpdateExpression\":\"SET exp = :e\",\"ExpressionAttributeValues\":{\":e\":{\"N\":"
         "\"%lld\"}}}",
         (long long)clock_now + 3600);
}

static void test_concurrent_extension_kept(void **state)
{
    (void)state;
    create_table_p(1); /* one partition, one chunk: the hook runs after item 1 was walked */
    assert_kura_ok(update(true, "exp"));
    for (int i = 0; i < 5; i++)
        put_n(i, clock_now - 10);
    int done = 0;
    ttl_test_before_chunk_arg = &done;
    ttl_test_before_chunk = extend_item_1;
    assert_int_equal(sweep(), 4);
    ttl_test_before_chunk = NULL;
    assert_int_equal(done, 1);
    assert_true(exists(1));
    assert_int_equal(count("gsi"), 1);
    assert_int_equal(count("lsi"), 1);
}

static void test_disable_stops_deletion(void **state)
{
    (void)state;
    create_table();
    assert_kura_ok(update(true, "exp"));
    put_n(0, clock_now - 10);
    advance(3600);
    assert_kura_ok(update(false, "exp"));
    put_n(1, clock_now - 10);
    assert_int_equal(sweep(), 0);
    assert_true(exists(0));
    assert_true(exists(1));
    advance(3600);
    assert_kura_ok(update(true, "other")); /* another attribute: exp means nothing now */
    assert_int_equal(sweep(), 0);
    assert_int_equal(count(NULL), 2);
}

static void test_reopen_keeps_setting(void **state)
{
    (void)state;
    create_table();
    assert_kura_ok(update(true, "exp"));
    put_n(0, clock_now - 10);
    advance(2);
    assert_kura_ok(kura_close(db));
    assert_kura_ok(open_db());
    expect_ttl("ENABLED", "exp");
    expect_error(update(false, "exp"), KURA_E_INVALID,
                 "Time to live has been modified multiple times within a fixed interval");
    assert_int_equal(sweep(), 1);
    advance(3600);
    assert_kura_ok(update(false, "exp"));
    advance(2);
    assert_kura_ok(kura_close(db));
    assert_kura_ok(open_db());
    expect_ttl("DISABLED", NULL);
    put_n(1, clock_now - 10);
    assert_int_equal(sweep(), 0);
    assert_true(exists(1));
}

static void test_background_sweeper(void **state)
{
    (void)state;
    assert_kura_ok(kura_close(db));
    sweep_ms = 5;
    assert_kura_ok(open_db());
    create_table();
    put_n(0, clock_now + 100);
    put_n(1, clock_now + 100);
    assert_kura_ok(update(true, "exp"));
    advance(101); /* both expire; the thread deletes them within a few intervals */
    for (int i = 0; i < 10000 && (exists(0) || exists(1)); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    assert_false(exists(0));
    assert_false(exists(1));
}

/* ---- The definition record (docs/format/catalog.md, version 3) ----------------------------- */

static void test_definition_record(void **state)
{
    (void)state;
    exec(NULL, "CreateTable",
         "{\"TableName\":\"plain\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
         "\"HASH\"}],\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":"
         "\"S\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}");
    kura_table *t;
    assert_kura_ok(table_acquire(db, "plain", &t));
    kbuf b = KBUF_INIT;
    kmutex_lock(&db->tables_mu);
    assert_kura_ok(def_encode(t, &b));
    kmutex_unlock(&db->tables_mu);
    assert_int_equal(b.data[0], 1); /* never had TTL: still version 1 */
    kbuf_clear(&b);
    kura_update_time_to_live_req r = {"plain", true, "expires_at"};
    assert_kura_ok(kura_update_time_to_live(db, &r));
    kmutex_lock(&db->tables_mu);
    assert_kura_ok(def_encode(t, &b));
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    assert_int_equal(b.data[0], 3);
    kura_table *d = table_new();
    assert_kura_ok(def_decode(b.data, b.len, d));
    assert_true(d->ttl_enabled);
    assert_string_equal(d->ttl_attr, "expires_at");
    assert_true(d->ttl_changed == (double)clock_now);
    assert_int_equal(d->nlsi + d->ngsi, 0);
    table_free(d);
    for (size_t cut = 0; cut < b.len; cut++) { /* every cut is malformed */
        d = table_new();
        assert_kura_status(def_decode(b.data, cut, d), KURA_E_CORRUPTION);
        table_free(d);
    }
    b.data[b.len - 8 - 1 - 10 - 1] = 2; /* the enabled byte: 0 or 1 only */
    d = table_new();
    assert_kura_status(def_decode(b.data, b.len, d), KURA_E_CORRUPTION);
    table_free(d);
    kbuf_free(&b);
}

/* ---- The service marker ------------------------------------------------------------------ */

typedef struct service_seen {
    size_t removes, service, inserts;
} service_seen;

static kura_status note_change(void *arg, const stream_change *c)
{
    service_seen *v = arg;
    if (c->event == STREAM_REMOVE) {
        v->removes++;
        v->service += c->service && c->time_ms > 0;
    } else {
        v->inserts += c->event == STREAM_INSERT && !c->service;
    }
    return KURA_OK;
}

static kura_status note_record(void *arg, const uint8_t *rec, size_t len, lsm_wal_pos at)
{
    (void)at;
    return stream_changes(rec, len, "ttl test", note_change, arg);
}

/* The sweeper's deletes, read back from the table's WAL as the change stream reads them,
 * are the service's (a meta entry flagged LSM_META_SERVICE, with the time); users' writes are
 * not. */
static void test_service_marker(void **state)
{
    (void)state;
    create_table_p(1);
    int64_t now = clock_now;
    for (int i = 0; i < 5; i++)
        put_n(i, i < 3 ? now - 10 : now + 100);
    assert_kura_ok(update(true, "exp"));
    assert_int_equal(sweep(), 3);
    kura_table *t;
    assert_kura_ok(table_acquire(db, "ttl_t", &t));
    lsm_tree *part = t->tree->parts[0];
    assert_kura_ok(lsm_sync_wal(part)); /* (relaxed) the change log shows what is durable */
    lsm_wal_pos head, next;
    assert_kura_ok(lsm_wal_head(part, &head));
    service_seen v = {0};
    assert_kura_ok(lsm_wal_read(part, head, 1000, note_record, &v, &next));
    table_release(t);
    assert_int_equal(v.inserts, 5);
    assert_int_equal(v.removes, 3);
    assert_int_equal(v.service, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_statuses_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_table_and_indexes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_extension_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disable_stops_deletion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen_keeps_setting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_background_sweeper, setup, teardown),
        cmocka_unit_test_setup_teardown(test_definition_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_service_marker, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

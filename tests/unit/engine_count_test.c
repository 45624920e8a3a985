/*
 * engine_count_test.c - DescribeTable's ItemCount and TableSizeBytes (engine/table_count.c):
 * a small table is counted exactly in the request; a table over the size limit (lowered here
 * to 10 items), or one that has grown past it, answers with its last figures and is recounted
 * in the background, no sooner than 1 s after the previous recount; after a reopen the first
 * count is exact, in the request; DeleteTable and kura_close during a background count
 * neither wait for the whole pass nor leave it reading freed state (the ASan build checks).
 *
 * The 1 s gap is checked without depending on how fast the test thread runs: the test finds
 * the describe that queued each recount (the table's `recounting` and write counter, read
 * under its count_mu), and the gap's lower bound is the time before the describe that queued
 * the previous recount, which cannot have ended earlier.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kura.h"
#include "engine/db_int.h"
#include "engine/table.h"
#include "testutil.h"
#include "util/thread.h"

static const kura_attribute_definition DEFS[] = {{"pk", KURA_S}};
static const kura_key_schema_element KS[] = {{"pk", false}};

static kura_db *open_db(const char *dir, uint64_t sync_items)
{
    kura_db *db = NULL;
    kura_options o;
    kura_options_init(&o);
    o.create_if_missing = true;
    o.durability = KURA_RELAXED; /* 40,000 puts: no fdatasync each */
    assert_kura_ok(kura_open(dir, &o, &db));
    db->count_sync_items = sync_items;
    return db;
}

static void create(kura_db *db, const char *name)
{
    kura_create_table_req r = {.table_name = name,
                               .attribute_definitions = DEFS,
                               .attribute_definitions_count = 1,
                               .key_schema = KS,
                               .key_schema_count = 1,
                               .billing_mode = KURA_BILLING_PAY_PER_REQUEST};
    kura_table_description d;
    assert_kura_ok(kura_create_table(db, &r, &d));
    kura_table_description_free(&d);
}

/* Puts items pk = "k<first>" .. "k<first + n - 1>", each with a 100-byte attribute. */
static void put_range(kura_db *db, const char *table, int first, int n)
{
    char pad[101];
    memset(pad, 'x', 100);
    pad[100] = 0;
    for (int i = first; i < first + n; i++) {
        char pk[32];
        snprintf(pk, sizeof pk, "k%d", i);
        kura_value *item = kura_value_map();
        assert_kura_ok(kura_value_map_put(item, "pk", 2, kura_value_s(pk, strlen(pk))));
        assert_kura_ok(kura_value_map_put(item, "pad", 3, kura_value_s(pad, 100)));
        kura_put_item_req req = {.table_name = table, .item = item};
        kura_write_result res;
        assert_kura_ok(kura_put_item(db, &req, &res));
        kura_write_result_free(&res);
        kura_value_free(item);
    }
}

static uint64_t item_count(kura_db *db, const char *table, uint64_t *bytes_out)
{
    kura_table_description d;
    assert_kura_ok(kura_describe_table(db, table, &d));
    uint64_t n = d.item_count;
    if (bytes_out) *bytes_out = d.table_size_bytes;
    kura_table_description_free(&d);
    return n;
}

enum { WAIT_DEADLINE_S = 60 }; /* only a hang reaches it */

static void sleep_10ms(void)
{
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
}

/* Describes the table every 10 ms until its ItemCount is `want`; fails after 60 s. */
static void wait_for_count(kura_db *db, const char *table, uint64_t want)
{
    uint64_t deadline = know_ns() + WAIT_DEADLINE_S * 1000000000ull, n = 0;
    while ((n = item_count(db, table, NULL)) != want && know_ns() < deadline)
        sleep_10ms();
    if (n != want)
        fail_msg("ItemCount %llu after %d s, want %llu", (unsigned long long)n, WAIT_DEADLINE_S,
                 (unsigned long long)want);
}

/* Whether t's figures are being recounted or are already current: once a describe of a
 * changed table has queued its recount, one of the two holds (this test writes nothing
 * meanwhile). */
static bool recount_begun(kura_table *t)
{
    kmutex_lock(&t->count_mu);
    bool begun = t->recounting || t->counted_writes == atomic_load(&t->writes);
    kmutex_unlock(&t->count_mu);
    return begun;
}

/* After a write to a table over the size limit: describes it every 10 ms, each describe
 * answering the last figures (`old` items), until one queues the background recount. The
 * know_ns() times before and after that describe go to *before_out and *after_out. Fails
 * after 60 s. */
static void describe_until_recount(kura_db *db, const char *table, uint64_t old,
                                   uint64_t *before_out, uint64_t *after_out)
{
    kura_table *t = NULL;
    assert_kura_ok(table_acquire(db, table, &t));
    assert_false(recount_begun(t));
    uint64_t deadline = know_ns() + WAIT_DEADLINE_S * 1000000000ull;
    for (;;) {
        uint64_t before = know_ns();
        uint64_t n = item_count(db, table, NULL);
        uint64_t after = know_ns();
        if (n != old)
            fail_msg("ItemCount %llu before the recount, want the last figures, %llu",
                     (unsigned long long)n, (unsigned long long)old);
        if (recount_begun(t)) {
            *before_out = before;
            *after_out = after;
            break;
        }
        if (after > deadline)
            fail_msg("no describe queued a recount in %d s", WAIT_DEADLINE_S);
        sleep_10ms();
    }
    table_release(t);
}

static void test_small_table_counted_in_the_request(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("count");
    kura_db *db = open_db(dir, 10000);
    create(db, "Tab");
    assert_int_equal(item_count(db, "Tab", NULL), 0);
    put_range(db, "Tab", 0, 30);
    uint64_t bytes;
    assert_int_equal(item_count(db, "Tab", &bytes), 30);
    /* per item: "pk" (2) + "k<i>" (2-3) + "pad" (3) + 100 */
    assert_int_equal(bytes, 10 * (2 + 2 + 3 + 100) + 20 * (2 + 3 + 3 + 100));
    put_range(db, "Tab", 25, 10); /* 5 overwrites, 5 new */
    assert_int_equal(item_count(db, "Tab", NULL), 35);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

static void test_large_table_recounted_in_the_background(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("count");
    kura_db *db = open_db(dir, 10);
    create(db, "Tab");
    put_range(db, "Tab", 0, 50);
    /* 0 items at its last count, but the pass in the request stops past 10 items: the last
     * figures, and a recount behind them */
    assert_int_equal(item_count(db, "Tab", NULL), 0);
    wait_for_count(db, "Tab", 50);
    put_range(db, "Tab", 50, 5);
    /* over the limit: the last figures at once, the recount behind them */
    uint64_t before55, after55, before56, after56;
    describe_until_recount(db, "Tab", 50, &before55, &after55);
    wait_for_count(db, "Tab", 55);
    put_range(db, "Tab", 55, 1);
    describe_until_recount(db, "Tab", 55, &before56, &after56);
    wait_for_count(db, "Tab", 56);
    /* The recount to 55 began after before55, so it ended after it; the describe that queued
     * the next one looked at the clock before after56: at least 1 s between them. */
    if (after56 - before55 < 1000000000ull)
        fail_msg("the recount to 56 items was queued at most %.3f s after the recount to 55 "
                 "began (want >= 1 s)", (after56 - before55) / 1e9);
    assert_kura_ok(kura_close(db));

    /* after a reopen the first describe counts in the request again */
    db = open_db(dir, 10);
    assert_int_equal(item_count(db, "Tab", NULL), 56);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

static void test_delete_and_close_during_a_count(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("count");
    kura_db *db = open_db(dir, 10);
    create(db, "TabA");
    create(db, "TabB");
    put_range(db, "TabA", 0, 20000);
    put_range(db, "TabB", 0, 20000);
    assert_kura_ok(kura_close(db));
    db = open_db(dir, 10); /* the first count after an open goes to the end in the request */
    assert_int_equal(item_count(db, "TabA", NULL), 20000);
    assert_int_equal(item_count(db, "TabB", NULL), 20000);
    put_range(db, "TabA", 20000, 1);
    put_range(db, "TabB", 20000, 1);
    assert_int_equal(item_count(db, "TabA", NULL), 20000); /* starts TabA's recount */
    kura_table_description d;
    assert_kura_ok(kura_delete_table(db, "TabA", &d));
    kura_table_description_free(&d);
    assert_int_equal(item_count(db, "TabB", NULL), 20000); /* starts TabB's recount */
    assert_kura_ok(kura_close(db));                        /* stops it */
    db = open_db(dir, 10);
    assert_int_equal(item_count(db, "TabB", NULL), 20001);
    assert_int_equal(kura_describe_table(db, "TabA", &d), KURA_E_RESOURCE_NOT_FOUND);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_table_counted_in_the_request),
        cmocka_unit_test(test_large_table_recounted_in_the_background),
        cmocka_unit_test(test_delete_and_close_during_a_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

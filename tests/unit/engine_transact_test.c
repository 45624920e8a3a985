/*
 * engine_transact_test.c - TransactWriteItems and TransactGetItems through the C API
 * (engine/item_txn.c): every action kind, every cancellation reason kura produces, the
 * request's own errors, indexes maintained by transactions, and a bank: concurrent transfers
 * over every partition of two tables by 8 writers, whose total every TransactGetItems snapshot
 * and every reopen must show.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/db_int.h"
#include "engine/txn.h"

static kura_value *J(const char *json)
{
    kura_value *v = NULL;
    kura_status s = kura_value_from_json(json, strlen(json), true, &v);
    if (s != KURA_OK)
        fail_msg("bad JSON %s: %s", json, kura_last_error());
    return v;
}

static void exec_ok(kura_db *db, const char *op, const char *json)
{
    char *out = NULL;
    size_t n = 0;
    kura_status s = kura_execute(db, op, json, strlen(json), &out, &n);
    if (s != KURA_OK)
        fail_msg("%s: %s", op, out ? out : kura_last_error());
    kura_free(out);
}

static uint32_t window_ms; /* kura_options.idempotency_window_ms of the next open */

static kura_db *open_db(const char *dir, uint64_t coll_limit)
{
    kura_options o;
    kura_options_init(&o);
    o.idempotency_window_ms = window_ms;
    o.durability = KURA_RELAXED;
    o.memtable_budget_bytes = 1 << 20;
    o.item_collection_limit_bytes = coll_limit;
    kura_db *db = NULL;
    assert_kura_ok(kura_open(dir, &o, &db));
    return db;
}

static void create_tables(kura_db *db)
{
    exec_ok(db, "CreateTable",
            "{\"TableName\":\"TxA\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
            "\"AttributeType\":\"S\"},{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
            "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
            "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"byg\",\"KeySchema\":[{\"AttributeName\":"
            "\"g\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
            "\"BillingMode\":\"PAY_PER_REQUEST\"}");
    exec_ok(db, "CreateTable",
            "{\"TableName\":\"TxB\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
            "\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
            "{\"AttributeName\":\"l\",\"AttributeType\":\"S\"}],"
            "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":"
            "\"sk\",\"KeyType\":\"RANGE\"}],\"LocalSecondaryIndexes\":[{\"IndexName\":\"byl\","
            "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":"
            "\"l\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
            "\"BillingMode\":\"PAY_PER_REQUEST\"}");
}

/* The item of `table` under key JSON `key`, as DynamoDB JSON (caller frees), or NULL. */
static char *get_json(kura_db *db, const char *table, const char *key)
{
    kura_value *k = J(key);
    kura_get_item_req req = {.table_name = table, .key = k, .consistent_read = true};
    kura_get_item_res res = {0};
    assert_kura_ok(kura_get_item(db, &req, &res));
    char *out = NULL;
    if (res.item) {
        size_t n = 0;
        assert_kura_ok(kura_value_to_json(res.item, true, &out, &n));
    }
    kura_get_item_res_free(&res);
    kura_value_free(k);
    return out;
}

static void assert_item(kura_db *db, const char *table, const char *key, const char *want)
{
    char *got = get_json(db, table, key);
    if (!want && got)
        fail_msg("%s %s: expected no item, got %s", table, key, got);
    if (want && (!got || strcmp(got, want)))
        fail_msg("%s %s: expected %s, got %s", table, key, want, got ? got : "(none)");
    kura_free(got);
}

static void test_actions_and_reasons(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("transact");
    kura_db *db = open_db(dir, 4096);
    create_tables(db);
    exec_ok(db, "PutItem", "{\"TableName\":\"TxA\",\"Item\":{\"pk\":{\"S\":\"a1\"},\"n\":{\"N\":\"1\"}}}");
    exec_ok(db, "PutItem", "{\"TableName\":\"TxA\",\"Item\":{\"pk\":{\"S\":\"a2\"},\"n\":{\"N\":\"2\"}}}");

    /* every kind of action, two tables: all applied */
    kura_value *it1 = J("{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"1\"},\"l\":{\"S\":\"x\"}}");
    kura_value *k_a1 = J("{\"pk\":{\"S\":\"a1\"}}"), *k_a2 = J("{\"pk\":{\"S\":\"a2\"}}");
    kura_value *k_a3 = J("{\"pk\":{\"S\":\"a3\"}}");
    kura_value *vals = J("{\":one\":{\"N\":\"1\"},\":g\":{\"S\":\"G\"}}");
    kura_value *two = J("{\":two\":{\"N\":\"2\"}}"), *one = J("{\":one\":{\"N\":\"1\"}}");
    kura_transact_write_item items[4] = {
        {.op = KURA_TXN_PUT, .table_name = "TxB", .item = it1},
        {.op = KURA_TXN_UPDATE, .table_name = "TxA", .key = k_a1,
         .update_expression = "SET n = n + :one, g = :g", .expr = {.values = vals}},
        {.op = KURA_TXN_DELETE, .table_name = "TxA", .key = k_a3},
        {.op = KURA_TXN_CONDITION_CHECK, .table_name = "TxA", .key = k_a2,
         .condition_expression = "n = :two", .expr = {.values = two}},
    };
    kura_transact_write_req req = {.items = items, .item_count = 4,
                                   .return_consumed_capacity = KURA_CAPACITY_TOTAL};
    kura_transact_write_res res;
    assert_kura_ok(kura_transact_write_items(db, &req, &res));
    assert_int_equal(res.consumed_capacity_count, 2); /* B, then A */
    assert_string_equal(res.consumed_capacity[0].table_name, "TxB");
    assert_true(res.consumed_capacity[1].capacity_units >= 6.0); /* 3 actions on A, 2x each */
    kura_transact_write_res_free(&res);
    assert_item(db, "TxA", "{\"pk\":{\"S\":\"a1\"}}",
                "{\"g\":{\"S\":\"G\"},\"n\":{\"N\":\"2\"},\"pk\":{\"S\":\"a1\"}}");
    assert_item(db, "TxB", "{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"1\"}}",
                "{\"l\":{\"S\":\"x\"},\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"1\"}}");
    /* the GSI has the update (eventually), the LSI the put (at once) */
    assert_kura_ok(kura_index_wait(db, "TxA", "byg", 10000));
    {
        kura_value *qv = J("{\":g\":{\"S\":\"G\"}}");
        kura_query_req q = {.table_name = "TxA", .index_name = "byg",
                            .key_condition_expression = "g = :g", .expr = {.values = qv}};
        kura_page page = {0};
        assert_kura_ok(kura_query(db, &q, &page));
        assert_int_equal(page.count, 1);
        kura_page_free(&page);
        kura_value_free(qv);
        qv = J("{\":p\":{\"S\":\"p\"},\":l\":{\"S\":\"x\"}}");
        kura_query_req q2 = {.table_name = "TxB", .index_name = "byl", .consistent_read = true,
                             .key_condition_expression = "pk = :p AND l = :l",
                             .expr = {.values = qv}};
        assert_kura_ok(kura_query(db, &q2, &page));
        assert_int_equal(page.count, 1);
        kura_page_free(&page);
        kura_value_free(qv);
    }

    /* a failed condition cancels everything: reasons in order, ALL_OLD item */
    kura_transact_write_item bad[2] = {
        {.op = KURA_TXN_DELETE, .table_name = "TxB",
         .key = J("{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"1\"}}")},
        {.op = KURA_TXN_CONDITION_CHECK, .table_name = "TxA", .key = k_a2,
         .condition_expression = "n = :one", .expr = {.values = one},
         .return_values_on_condition_check_failure = KURA_RETURN_ALL_OLD},
    };
    kura_transact_write_req breq = {.items = bad, .item_count = 2};
    assert_kura_status(kura_transact_write_items(db, &breq, &res), KURA_E_TXN_CANCELED);
    assert_string_equal(kura_last_error(), "Transaction cancelled, please refer cancellation "
                                           "reasons for specific reasons [None, "
                                           "ConditionalCheckFailed]");
    assert_int_equal(res.cancellation_reason_count, 2);
    assert_string_equal(res.cancellation_reasons[0].code, "None");
    assert_null(res.cancellation_reasons[0].message);
    assert_string_equal(res.cancellation_reasons[1].code, "ConditionalCheckFailed");
    /* a ConditionCheck's message ends with a full stop, as DynamoDB writes it */
    assert_string_equal(res.cancellation_reasons[1].message, "The conditional request failed.");
    assert_non_null(res.cancellation_reasons[1].item);
    kura_transact_write_res_free(&res);
    assert_item(db, "TxB", "{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"1\"}}",
                "{\"l\":{\"S\":\"x\"},\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"1\"}}");

    /* an update that makes its item too large: ValidationError */
    char big[600];
    snprintf(big, sizeof big, "{\":big\":{\"S\":\"%0500d\"}}", 7);
    kura_value *bigv = J(big);
    kura_transact_write_item toobig[1] = {
        {.op = KURA_TXN_UPDATE, .table_name = "TxA", .key = k_a2,
         .update_expression = "SET s1 = :big, s2 = :big, s3 = :big", .expr = {.values = bigv}}};
    /* 1.5 KB is no problem; the limit needs 400 KB: grow with list_append in a loop instead */
    kura_transact_write_req vreq = {.items = toobig, .item_count = 1};
    assert_kura_ok(kura_transact_write_items(db, &vreq, &res));
    kura_transact_write_res_free(&res);
    kura_value_free(bigv);
    char *huge = malloc(300 * 1024);
    memset(huge, 'x', 300 * 1024 - 1);
    huge[300 * 1024 - 1] = 0;
    char *hj = malloc(300 * 1024 + 64);
    snprintf(hj, 300 * 1024 + 64, "{\":h\":{\"S\":\"%s\"}}", huge);
    kura_value *hv = J(hj);
    kura_transact_write_item grow[2] = {
        {.op = KURA_TXN_UPDATE, .table_name = "TxA", .key = k_a2,
         .update_expression = "SET h1 = :h, h2 = :h", .expr = {.values = hv}},
        {.op = KURA_TXN_CONDITION_CHECK, .table_name = "TxA", .key = k_a1,
         .condition_expression = "attribute_exists(pk)"},
    };
    kura_transact_write_req greq = {.items = grow, .item_count = 2};
    assert_kura_status(kura_transact_write_items(db, &greq, &res), KURA_E_TXN_CANCELED);
    assert_string_equal(res.cancellation_reasons[0].code, "ValidationError");
    assert_string_equal(res.cancellation_reasons[0].message,
                        "Item size to update has exceeded the maximum allowed size");
    assert_string_equal(res.cancellation_reasons[1].code, "None");
    kura_transact_write_res_free(&res);
    kura_value_free(hv);
    free(hj);
    free(huge);

    /* table B has an LSI and the database a 4 KB collection limit */
    char bj[2700];
    char fill[2501];
    memset(fill, 'y', 2500);
    fill[2500] = 0;
    snprintf(bj, sizeof bj, "{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"2\"},\"v\":{\"S\":\"%s\"}}", fill);
    kura_value *bi = J(bj);
    kura_transact_write_item coll[1] = {{.op = KURA_TXN_PUT, .table_name = "TxB", .item = bi}};
    kura_transact_write_req creq = {.items = coll, .item_count = 1,
                                    .return_item_collection_metrics = KURA_METRICS_SIZE};
    assert_kura_ok(kura_transact_write_items(db, &creq, &res)); /* ~2.5 KB of the 4 KB */
    assert_int_equal(res.item_collection_metrics_count, 1);
    kura_transact_write_res_free(&res);
    kura_value_free(bi);
    snprintf(bj, sizeof bj, "{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"3\"},\"v\":{\"S\":\"%s\"}}", fill);
    bi = J(bj);
    coll[0].item = bi;
    assert_kura_status(kura_transact_write_items(db, &creq, &res), KURA_E_TXN_CANCELED);
    assert_string_equal(res.cancellation_reasons[0].code, "ItemCollectionSizeLimitExceeded");
    kura_transact_write_res_free(&res);
    assert_item(db, "TxB", "{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"3\"}}", NULL);
    kura_value_free(bi);

    /* the request's own errors */
    kura_transact_write_item dup[2] = {
        {.op = KURA_TXN_DELETE, .table_name = "TxA", .key = k_a1},
        {.op = KURA_TXN_CONDITION_CHECK, .table_name = "TxA", .key = k_a1,
         .condition_expression = "attribute_exists(pk)"},
    };
    kura_transact_write_req dreq = {.items = dup, .item_count = 2};
    assert_kura_status(kura_transact_write_items(db, &dreq, &res), KURA_E_INVALID);
    assert_string_equal(kura_last_error(),
                        "Transaction request cannot include multiple operations on one item");
    dup[1].table_name = "nope";
    assert_kura_status(kura_transact_write_items(db, &dreq, &res), KURA_E_RESOURCE_NOT_FOUND);
    kura_transact_write_req empty = {.items = dup, .item_count = 0};
    assert_kura_status(kura_transact_write_items(db, &empty, &res), KURA_E_INVALID);
    kura_transact_write_req many = {.items = dup, .item_count = 101};
    assert_kura_status(kura_transact_write_items(db, &many, &res), KURA_E_INVALID);
    assert_item(db, "TxA", "{\"pk\":{\"S\":\"a1\"}}",
                "{\"g\":{\"S\":\"G\"},\"n\":{\"N\":\"2\"},\"pk\":{\"S\":\"a1\"}}");
    /* more than 4 MB of items in all: 11 puts of ~390 KB */
    {
        size_t big_len = 390 * 1024;
        char *body = malloc(big_len + 1), *js = malloc(big_len + 128);
        memset(body, 'z', big_len);
        body[big_len] = 0;
        kura_transact_write_item puts[11];
        kura_value *pv[11];
        for (int i = 0; i < 11; i++) {
            snprintf(js, big_len + 128, "{\"pk\":{\"S\":\"big%d\"},\"v\":{\"S\":\"%s\"}}", i,
                     body);
            pv[i] = J(js);
            puts[i] = (kura_transact_write_item){.op = KURA_TXN_PUT, .table_name = "TxA",
                                                 .item = pv[i]};
        }
        kura_transact_write_req preq = {.items = puts, .item_count = 11};
        assert_kura_status(kura_transact_write_items(db, &preq, &res), KURA_E_INVALID);
        assert_string_equal(kura_last_error(), "Transaction size has exceeded the maximum "
                                               "allowed size of 4 MB");
        preq.item_count = 10; /* 3.9 MB: fine */
        assert_kura_ok(kura_transact_write_items(db, &preq, &res));
        kura_transact_write_res_free(&res);
        for (int i = 0; i < 11; i++)
            kura_value_free(pv[i]);
        free(body);
        free(js);
    }

    /* TransactGetItems: projection, a missing item, capacity */
    kura_transact_get_item gets[3] = {
        {.table_name = "TxA", .key = k_a1, .projection_expression = "n"},
        {.table_name = "TxA", .key = k_a3},
        {.table_name = "TxB", .key = J("{\"pk\":{\"S\":\"p\"},\"sk\":{\"S\":\"1\"}}")},
    };
    kura_transact_get_req greq2 = {.items = gets, .item_count = 3,
                                   .return_consumed_capacity = KURA_CAPACITY_TOTAL};
    kura_transact_get_res gres;
    assert_kura_ok(kura_transact_get_items(db, &greq2, &gres));
    assert_int_equal(gres.item_count, 3);
    char *j = NULL;
    size_t jn = 0;
    assert_kura_ok(kura_value_to_json(gres.items[0], true, &j, &jn));
    assert_string_equal(j, "{\"n\":{\"N\":\"2\"}}");
    kura_free(j);
    assert_null(gres.items[1]);
    assert_non_null(gres.items[2]);
    assert_int_equal(gres.consumed_capacity_count, 2);
    assert_true(gres.consumed_capacity[0].capacity_units == 4.0); /* 2 reads, 2x each */
    kura_transact_get_res_free(&gres);

    /* TransactGetItems: a Key not of its table's schema cancels, with a reason per Get */
    kura_value *k_nosk = J("{\"pk\":{\"S\":\"p\"}}");
    kura_transact_get_item mism[2] = {{.table_name = "TxA", .key = k_a1},
                                      {.table_name = "TxB", .key = k_nosk}};
    kura_transact_get_req mreq = {.items = mism, .item_count = 2};
    assert_kura_status(kura_transact_get_items(db, &mreq, &gres), KURA_E_TXN_CANCELED);
    assert_string_equal(kura_last_error(), "Transaction cancelled, please refer cancellation "
                                           "reasons for specific reasons [None, ValidationError]");
    assert_int_equal(gres.cancellation_reason_count, 2);
    assert_string_equal(gres.cancellation_reasons[0].code, "None");
    assert_null(gres.cancellation_reasons[0].message);
    assert_string_equal(gres.cancellation_reasons[1].code, "ValidationError");
    assert_string_equal(gres.cancellation_reasons[1].message,
                        "The provided key element does not match the schema");
    assert_null(gres.items);
    kura_transact_get_res_free(&gres);
    kura_value_free(k_nosk);

    kura_value_free((kura_value *)gets[2].key);
    kura_value_free((kura_value *)bad[0].key);
    kura_value_free(it1);
    kura_value_free(k_a1);
    kura_value_free(k_a2);
    kura_value_free(k_a3);
    kura_value_free(vals);
    kura_value_free(one);
    kura_value_free(two);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* ---- the bank --------------------------------------------------------------------------------- */

enum { NACC = 40, START = 1000, TRANSFERS = 400, WRITERS = 8 };

typedef struct bank {
    kura_db *db;
    atomic_bool stop;
    atomic_long bad, reads, canceled;
    uint64_t seed;
} bank;

static void acct(int i, char *table, char *key)
{
    snprintf(table, 4, "%s", i % 2 ? "TxB" : "TxA");
    if (i % 2)
        snprintf(key, 96, "{\"pk\":{\"S\":\"acct%d\"},\"sk\":{\"S\":\"s\"}}", i);
    else
        snprintf(key, 96, "{\"pk\":{\"S\":\"acct%d\"}}", i);
}

static void *transfer_main(void *arg)
{
    bank *b = arg;
    uint64_t rng = b->seed;
    kura_value *vals = J("{\":a\":{\"N\":\"7\"}}");
    for (int k = 0; k < TRANSFERS; k++) {
        int from = (int)(test_rand(&rng) % NACC), to = (int)(test_rand(&rng) % NACC);
        if (from == to)
            continue;
        char tf[4], tt[4], kf[96], kt[96];
        acct(from, tf, kf);
        acct(to, tt, kt);
        kura_value *vf = J(kf), *vt = J(kt);
        kura_transact_write_item it[2] = {
            {.op = KURA_TXN_UPDATE, .table_name = tf, .key = vf,
             .update_expression = "SET bal = bal - :a", .condition_expression = "bal >= :a",
             .expr = {.values = vals}},
            {.op = KURA_TXN_UPDATE, .table_name = tt, .key = vt,
             .update_expression = "SET bal = bal + :a", .expr = {.values = vals}},
        };
        kura_transact_write_req req = {.items = it, .item_count = 2};
        kura_transact_write_res res;
        kura_status s = kura_transact_write_items(b->db, &req, &res);
        if (s == KURA_E_TXN_CANCELED)
            atomic_fetch_add(&b->canceled, 1);
        else if (s != KURA_OK)
            fail_msg("transfer: %s (%s)", kura_status_str(s), kura_last_error());
        kura_transact_write_res_free(&res);
        kura_value_free(vf);
        kura_value_free(vt);
    }
    kura_value_free(vals);
    return NULL;
}

/* The total by TransactGetItems of every account (one snapshot). */
static long snapshot_total(kura_db *db)
{
    kura_transact_get_item g[NACC];
    kura_value *keys[NACC];
    char tables[NACC][4];
    for (int i = 0; i < NACC; i++) {
        char k[96];
        acct(i, tables[i], k);
        keys[i] = J(k);
        g[i] = (kura_transact_get_item){.table_name = tables[i], .key = keys[i]};
    }
    kura_transact_get_req req = {.items = g, .item_count = NACC};
    kura_transact_get_res res;
    assert_kura_ok(kura_transact_get_items(db, &req, &res));
    long sum = 0;
    for (int i = 0; i < NACC; i++) {
        assert_non_null(res.items[i]);
        const kura_value *bal = kura_value_get(res.items[i], "bal", 3);
        assert_non_null(bal);
        char num[180];
        assert_true(kura_value_num(bal, num, sizeof num) > 0);
        sum += strtol(num, NULL, 10);
        kura_value_free(keys[i]);
    }
    kura_transact_get_res_free(&res);
    return sum;
}

static void *reader_main(void *arg)
{
    bank *b = arg;
    while (!atomic_load(&b->stop)) {
        if (snapshot_total(b->db) != (long)NACC * START)
            atomic_fetch_add(&b->bad, 1);
        atomic_fetch_add(&b->reads, 1);
    }
    return NULL;
}

static void test_bank(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("transact_bank");
    bank b = {.db = open_db(dir, 0), .seed = test_seed()};
    create_tables(b.db);
    for (int i = 0; i < NACC; i++) {
        char t[4], k[96], put[256];
        acct(i, t, k);
        snprintf(put, sizeof put, "{\"TableName\":\"%s\",\"Item\":%.*s,\"bal\":{\"N\":\"%d\"}}}", t,
                 (int)strlen(k) - 1, k, START);
        exec_ok(b.db, "PutItem", put);
    }
    assert_int_equal(snapshot_total(b.db), (long)NACC * START);
    pthread_t w[WRITERS], r;
    assert_int_equal(pthread_create(&r, NULL, reader_main, &b), 0);
    for (int i = 0; i < WRITERS; i++)
        assert_int_equal(pthread_create(&w[i], NULL, transfer_main, &b), 0);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(w[i], NULL);
    atomic_store(&b.stop, true);
    pthread_join(r, NULL);
    assert_int_equal(atomic_load(&b.bad), 0);
    assert_true(atomic_load(&b.reads) > 0);
    assert_int_equal(snapshot_total(b.db), (long)NACC * START);
    assert_kura_ok(kura_close(b.db));
    b.db = open_db(dir, 0);
    assert_int_equal(snapshot_total(b.db), (long)NACC * START);
    assert_kura_ok(kura_close(b.db));
    test_rmrf(dir);
}


/* ---- ClientRequestToken ------------------------------------------------------------------------ */

static kura_status put_with_token(kura_db *db, const char *token, const char *n)
{
    char js[128];
    snprintf(js, sizeof js, "{\"pk\":{\"S\":\"tok\"},\"n\":{\"N\":\"%s\"}}", n);
    kura_value *item = J(js);
    kura_transact_write_item it[1] = {{.op = KURA_TXN_PUT, .table_name = "TxA", .item = item}};
    kura_transact_write_req req = {.items = it, .item_count = 1, .client_request_token = token};
    kura_transact_write_res res;
    kura_status s = kura_transact_write_items(db, &req, &res);
    kura_transact_write_res_free(&res);
    kura_value_free(item);
    return s;
}

static void test_client_request_token(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("transact_token");
    window_ms = 0; /* 10 minutes: no step below comes near it */
    kura_db *db = open_db(dir, 0);
    create_tables(db);
    const char *k = "{\"pk\":{\"S\":\"tok\"}}";
    assert_kura_ok(put_with_token(db, "T1", "1"));
    assert_item(db, "TxA", k, "{\"n\":{\"N\":\"1\"},\"pk\":{\"S\":\"tok\"}}");
    exec_ok(db, "PutItem", "{\"TableName\":\"TxA\",\"Item\":{\"pk\":{\"S\":\"tok\"},"
                           "\"n\":{\"N\":\"5\"}}}");
    /* the same request again: success, nothing written */
    assert_kura_ok(put_with_token(db, "T1", "1"));
    assert_item(db, "TxA", k, "{\"n\":{\"N\":\"5\"},\"pk\":{\"S\":\"tok\"}}");
    /* another request with that token */
    assert_kura_status(put_with_token(db, "T1", "2"), KURA_E_IDEMPOTENT_MISMATCH);
    /* tokens are durable */
    assert_kura_ok(kura_close(db));
    db = open_db(dir, 0);
    assert_kura_ok(put_with_token(db, "T1", "1"));
    assert_item(db, "TxA", k, "{\"n\":{\"N\":\"5\"},\"pk\":{\"S\":\"tok\"}}");
    assert_kura_status(put_with_token(db, "T1", "2"), KURA_E_IDEMPOTENT_MISMATCH);
    /* a token being used by a running transaction */
    assert_kura_ok(txn_token_begin(db, "T9"));
    assert_kura_status(put_with_token(db, "T9", "9"), KURA_E_TXN_IN_PROGRESS);
    txn_token_end(db, "T9");
    assert_kura_ok(put_with_token(db, "T9", "9"));
    /* a cancelled transaction records no token: its retry runs */
    kura_value *key = J(k), *v = J("{\":x\":{\"N\":\"100\"}}");
    kura_transact_write_item chk[1] = {{.op = KURA_TXN_UPDATE, .table_name = "TxA", .key = key,
                                        .update_expression = "SET n = :x",
                                        .condition_expression = "n = :x",
                                        .expr = {.values = v}}};
    kura_transact_write_req creq = {.items = chk, .item_count = 1, .client_request_token = "T2"};
    kura_transact_write_res res;
    assert_kura_status(kura_transact_write_items(db, &creq, &res), KURA_E_TXN_CANCELED);
    kura_transact_write_res_free(&res);
    chk[0].condition_expression = NULL;
    assert_kura_ok(kura_transact_write_items(db, &creq, &res));
    kura_transact_write_res_free(&res);
    assert_item(db, "TxA", k, "{\"n\":{\"N\":\"100\"},\"pk\":{\"S\":\"tok\"}}");
    /* past the window the token is free again (reopened with a window of 1 ms) */
    assert_kura_ok(kura_close(db));
    window_ms = 1;
    db = open_db(dir, 0);
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
    assert_kura_ok(put_with_token(db, "T1", "2"));
    assert_item(db, "TxA", k, "{\"n\":{\"N\":\"2\"},\"pk\":{\"S\":\"tok\"}}");
    kura_value_free(key);
    kura_value_free(v);
    assert_kura_ok(kura_close(db));
    window_ms = 0;
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_actions_and_reasons),
        cmocka_unit_test(test_bank),
        cmocka_unit_test(test_client_request_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * crash_txn_index_test.c - the regression test of issue 22: concurrent multi-partition
 * transactions on tables with secondary indexes, then a crash while idle, then a reopen whose
 * recovery replays the base WALs into the indexes.
 *
 * Transaction pieces reach a WAL before their sequence range is allocated, so a WAL holds a
 * piece with higher sequences before a record with lower ones. The index layer's replay used
 * to advance an "applied up to" mark with each record and skip every change at or below it:
 * such a record was skipped, its old index entry never deleted and its new one never written
 * (a GSI with ~130 entries for 50 items after one kill -9, found over HTTP).
 *
 * Each round forks a child that opens the database, runs NWRITERS threads of 2-item
 * TransactWriteItems (Updates moving `bal` between two random accounts of table Acc, whose
 * GSI ByOwner is keyed on owner + bal, and between two item collections of table Col, with an
 * LSI on bal and a KEYS_ONLY GSI), waits until the GSIs have applied everything and exits
 * without closing (a kill -9 while idle: nothing checkpoints the indexes). The parent reopens
 * and checks every index as a multiset against its table (index_check.h) and the bank
 * invariant; the next round writes on from there, so damage would accumulate. Deterministic
 * per seed except for the threads' interleaving, which only decides how many records are out
 * of sequence order in the WAL; the check holds at any interleaving.
 */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crash/index_check.h"
#include "crash/scratch.h"
#include "util/thread.h"

enum { NWRITERS = 3, NACC = 50, START = 1000, ROUNDS = 4, TXNS_PER_WRITER = 150 };

static kura_options options(void)
{
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_SYNC;
    o.memtable_budget_bytes = 1 << 20;
    return o;
}

static kura_status exec(kura_db *db, const char *op, const char *json)
{
    char *out = NULL;
    size_t n = 0;
    kura_status s = kura_execute(db, op, json, strlen(json), &out, &n);
    kura_free(out);
    return s;
}

static const char CREATE_ACC[] =
    "{\"TableName\":\"Acc\",\"AttributeDefinitions\":["
    "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"owner\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"bal\",\"AttributeType\":\"N\"}],"
    "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
    "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"ByOwner\",\"KeySchema\":["
    "{\"AttributeName\":\"owner\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"bal\",\"KeyType\":\"RANGE\"}],"
    "\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
    "\"BillingMode\":\"PAY_PER_REQUEST\"}";

static const char CREATE_COL[] =
    "{\"TableName\":\"Col\",\"AttributeDefinitions\":["
    "{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"bal\",\"AttributeType\":\"N\"}],"
    "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
    "\"LocalSecondaryIndexes\":[{\"IndexName\":\"ByBal\",\"KeySchema\":["
    "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"bal\",\"KeyType\":\"RANGE\"}],"
    "\"Projection\":{\"ProjectionType\":\"ALL\"}}],"
    "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"BalKeys\",\"KeySchema\":["
    "{\"AttributeName\":\"bal\",\"KeyType\":\"HASH\"}],"
    "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}],"
    "\"BillingMode\":\"PAY_PER_REQUEST\"}";

static void setup(const char *dir)
{
    kura_options o = options();
    kura_db *db;
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(exec(db, "CreateTable", CREATE_ACC));
    assert_kura_ok(exec(db, "CreateTable", CREATE_COL));
    for (int i = 0; i < NACC; i++) {
        char put[256];
        snprintf(put, sizeof put, "{\"TableName\":\"Acc\",\"Item\":{\"pk\":{\"S\":\"a%d\"},"
                                  "\"owner\":{\"S\":\"o%d\"},\"bal\":{\"N\":\"%d\"}}}",
                 i, i % 7, START);
        assert_kura_ok(exec(db, "PutItem", put));
        snprintf(put, sizeof put, "{\"TableName\":\"Col\",\"Item\":{\"pk\":{\"S\":\"c%d\"},"
                                  "\"sk\":{\"S\":\"s%d\"},\"bal\":{\"N\":\"%d\"}}}",
                 i % 10, i, START);
        assert_kura_ok(exec(db, "PutItem", put));
    }
    assert_kura_ok(kura_close(db));
}

typedef struct writer {
    kura_db *db;
    uint64_t rng;
} writer;

/* One transfer of `amount` between two items of Acc or of Col. */
static kura_status transfer(kura_db *db, bool col, int from, int to, int amount)
{
    char kf[96], kt[96], req[1024];
    if (col) {
        snprintf(kf, sizeof kf, "{\"pk\":{\"S\":\"c%d\"},\"sk\":{\"S\":\"s%d\"}}", from % 10, from);
        snprintf(kt, sizeof kt, "{\"pk\":{\"S\":\"c%d\"},\"sk\":{\"S\":\"s%d\"}}", to % 10, to);
    } else {
        snprintf(kf, sizeof kf, "{\"pk\":{\"S\":\"a%d\"}}", from);
        snprintf(kt, sizeof kt, "{\"pk\":{\"S\":\"a%d\"}}", to);
    }
    const char *t = col ? "Col" : "Acc";
    snprintf(req, sizeof req,
             "{\"TransactItems\":["
             "{\"Update\":{\"TableName\":\"%s\",\"Key\":%s,\"UpdateExpression\":\"SET bal = bal - :a\","
             "\"ConditionExpression\":\"bal >= :a\",\"ExpressionAttributeValues\":{\":a\":{\"N\":\"%d\"}}}},"
             "{\"Update\":{\"TableName\":\"%s\",\"Key\":%s,\"UpdateExpression\":\"SET bal = bal + :a\","
             "\"ExpressionAttributeValues\":{\":a\":{\"N\":\"%d\"}}}}]}",
             t, kf, amount, t, kt, amount);
    kura_status s = exec(db, "TransactWriteItems", req);
    return s == KURA_E_TXN_CANCELED ? KURA_OK : s; /* a condition failed: fine */
}

static void *writer_main(void *arg)
{
    writer *w = arg;
    for (int i = 0; i < TXNS_PER_WRITER; i++) {
        int from = (int)(test_rand(&w->rng) % NACC), to = (int)(test_rand(&w->rng) % NACC);
        if (from == to)
            to = (to + 1) % NACC;
        int amount = 1 + (int)(test_rand(&w->rng) % 50);
        if (transfer(w->db, i % 2, from, to, amount) != KURA_OK) {
            fprintf(stderr, "child: TransactWriteItems: %s\n", kura_last_error());
            _exit(2);
        }
    }
    return NULL;
}

/* The child: writes, lets the GSIs catch up, exits without closing. */
static void child_main(const char *dir, uint64_t seed)
{
    kura_options o = options();
    kura_db *db;
    if (kura_open(dir, &o, &db) != KURA_OK) {
        fprintf(stderr, "child: kura_open: %s\n", kura_last_error());
        _exit(2);
    }
    writer w[NWRITERS];
    kthread th[NWRITERS];
    for (uint32_t i = 0; i < NWRITERS; i++) {
        w[i] = (writer){db, seed * 1000003 + i + 1};
        if (!kthread_start(&th[i], writer_main, &w[i]))
            _exit(2);
    }
    for (uint32_t i = 0; i < NWRITERS; i++)
        kthread_join(th[i]);
    if (kura_index_wait(db, "Acc", "ByOwner", 30000) != KURA_OK ||
        kura_index_wait(db, "Col", "BalKeys", 30000) != KURA_OK) {
        fprintf(stderr, "child: kura_index_wait: %s\n", kura_last_error());
        _exit(2);
    }
    _exit(0); /* no kura_close: no checkpoint of the indexes, as after a kill -9 */
}

static long sum_bal(kura_db *db, const char *table)
{
    char req[128];
    snprintf(req, sizeof req, "{\"TableName\":\"%s\",\"ConsistentRead\":true}", table);
    char *out = NULL;
    size_t n = 0;
    assert_kura_ok(kura_execute(db, "Scan", req, strlen(req), &out, &n));
    long sum = 0;
    for (const char *p = out; (p = strstr(p, "\"bal\":{\"N\":\"")) != NULL;) {
        p += strlen("\"bal\":{\"N\":\"");
        sum += strtol(p, NULL, 10);
    }
    kura_free(out);
    return sum;
}

static void test_txn_crash_indexes(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-txn-index");
    setup(dir);
    uint64_t seed = test_seed();
    for (int round = 0; round < ROUNDS; round++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            child_main(dir, seed + (uint64_t)round);
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fail_msg("round %d: the child failed (status %d)", round, st);
        kura_options o = options();
        kura_db *db;
        assert_kura_ok(kura_open(dir, &o, &db));
        assert_int_equal(sum_bal(db, "Acc"), (long)NACC * START);
        assert_int_equal(sum_bal(db, "Col"), (long)NACC * START);
        kura_status s = index_check_table(db, "Acc", 30000);
        if (s == KURA_OK)
            s = index_check_table(db, "Col", 30000);
        if (s != KURA_OK)
            fail_msg("round %d (KURA_TEST_SEED=%llu): after the reopen: %s", round,
                     (unsigned long long)seed, kura_last_error());
        assert_kura_ok(kura_close(db));
    }
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_txn_crash_indexes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

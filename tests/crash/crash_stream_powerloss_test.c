/*
 * crash_stream_powerloss_test.c - the change stream across simulated power loss
 * (util/io_fault.h over crash/nosync_env.h), in sync and relaxed durability, checked by a
 * consumer that read the stream while the database ran and resumes after the reopen
 * (crash/streamcheck.h).
 *
 * A template database holds the table "Tstream" (crash/streamwork.h: 2 partitions, so 2
 * shards, NEW_AND_OLD_IMAGES). Each case copies it and runs, on a fresh fault env, one writer
 * issuing OPS operations (PutItem, UpdateItem, DeleteItem, BatchWriteItem,
 * TransactWriteItems) with 256 KiB memtables and an L0 trigger of 2, an explicit flush and
 * compaction of the table after op MID, and the consumer reading every shard in pages of 3
 * after every READ_EVERY ops (so it stops inside batches and transaction pieces). A clean run
 * counts the workload's mutating I/O operations M; each case crashes before one of them
 * (FREEZE: the workload fails from there on), cuts the power (DROP or TEAR, alternating),
 * every fourth time also crashes the reopen and cuts the power again, then reopens on a
 * healthy env, issues AFTER_OPS more operations (so new records exist when the consumer
 * resumes: a position it was given must not come back holding another record) and runs
 * sc_check:
 *  - KURA_SYNC: every acknowledged write is in the stream exactly once, in order, with its
 *    images; every record the consumer read before the loss is still there at its position;
 *    the consumer resumes after its last one without an error;
 *  - KURA_RELAXED (nothing synced by time within the test; a kura_sync every SYNC_EVERY ops,
 *    after which what was acknowledged before must survive): other acknowledged writes may
 *    be lost, but what survives is, per shard, a prefix of the writes, with no duplicate;
 *    no record the consumer read vanishes (the stream shows a WAL only up to what is
 *    durable) and resuming never fails.
 * Either way the stream the consumer ends with leads to the table's items.
 *
 * The relaxed sweep runs with and without TransactWriteItems: with them it found an engine
 * bug (a relaxed transaction's commit record was not durable before the later writes of its
 * partitions; docs/testing-crash.md, "Found and fixed"), which
 * test_relaxed_synced_transaction shows in its smallest form (a transaction, a kura_sync, a
 * power loss).
 *
 * Canary: relaxed writes checked as if acknowledged meant durable must fail some DROP cuts.
 * Reproduce with the printed KURA_TEST_SEED; KURA_TEST_CUT=n runs cut point n only.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash/nosync_env.h"
#include "crash/scratch.h"
#include "crash/streamcheck.h"
#include "engine/table.h"
#include "engine/table_int.h"
#include "util/io_fault.h"

enum {
    NPARTS = 2,
    NKEYS = 12,
    PAD_MAX = 1500,
    OPS = 160,
    MID = 80,
    READ_EVERY = 5,
    READ_PAGE = 3,
    AFTER_OPS = 12,
    SYNC_EVERY = 40,
    MIN_CUTS = 120,
    CANARY_CUTS = 10
};

static uint64_t g_seed;
static char *g_tmpl; /* the template database */
static sc *g_proto;  /* a consumer of its stream */

static kura_options pl_options(io_fault *f, kura_durability d)
{
    kura_options o;
    kura_options_init(&o);
    o.io = f ? io_fault_env(f) : nosync_env();
    o.durability = d;
    o.relaxed_sync_ms = 60000; /* nothing synced by time within the test */
    o.default_partitions = NPARTS;
    o.memtable_budget_bytes = 1 << 20; /* 256 KiB memtables */
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 256 << 10;
    o.sstable_target_bytes = 64 << 10;
    o.block_cache_bytes = 1 << 20;
    o.background_threads = 2;
    return o;
}

static sc_config config(bool durable_acks, bool no_txn)
{
    sc_config c = {.work = {.seed = g_seed,
                            .nwriters = 1,
                            .keys_per_writer = NKEYS,
                            .pad_max = PAD_MAX,
                            .no_txn = no_txn},
                   .durable_acks = durable_acks};
    return c;
}

static int setup(void **state)
{
    (void)state;
    g_seed = test_seed();
    g_tmpl = test_mkdtemp("crash-stream-pl-tmpl");
    kura_options o = pl_options(NULL, KURA_SYNC);
    kura_db *db;
    char arn[512], why[512];
    if (kura_open(g_tmpl, &o, &db) != KURA_OK || sw_create_table(db, NPARTS, arn, sizeof arn))
        return -1;
    sc_config c = config(true, false);
    g_proto = sc_new(&c, db, arn, why, sizeof why);
    if (!g_proto) fprintf(stderr, "%s\n", why);
    return kura_close(db) == KURA_OK && g_proto ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sc_free(g_proto);
    test_rmrf(g_tmpl);
    return 0;
}

/* ---- the workload --------------------------------------------------------------------------- */

typedef struct plan {
    kura_durability durability;
    bool durable_acks;   /* check acknowledged writes as durable */
    uint32_t sync_every; /* kura_sync every n ops (0: never); what it returned OK for is
                          * durable */
    bool no_txn;         /* no TransactWriteItems */
} plan;

/* The table's flush and compaction (a failure is the crash's). */
static kura_status flush_and_compact(kura_db *db)
{
    kura_table *t;
    kura_status s = table_acquire(db, SW_TABLE, &t);
    if (s != KURA_OK) return s;
    s = kura_tree_flush(t->tree);
    if (s == KURA_OK) s = kura_tree_compact(t->tree);
    table_release(t);
    return s;
}

static void exec_ok(kura_db *db, const char *op, const char *json)
{
    char *out = NULL;
    size_t n = 0;
    kura_status s = kura_execute(db, op, json, strlen(json), &out, &n);
    if (s != KURA_OK) fail_msg("%s: %s", op, out ? out : kura_last_error());
    kura_free(out);
}

static bool env_crashed(io_fault *f)
{
    return f && io_fault_crashed(f);
}

/* Opens the database on f, runs the workload with the consumer reading, closes. Errors are
 * expected once the crash has happened; anything else fails the test. Returns the next
 * operation number. */
static uint64_t workload(const char *dir, io_fault *f, sc *c, const plan *p)
{
    kura_options o = pl_options(f, p->durability);
    sw_config w = config(p->durable_acks, p->no_txn).work;
    kura_db *db = NULL;
    char why[600];
    if (kura_open(dir, &o, &db) != KURA_OK) {
        if (!env_crashed(f)) fail_msg("open: %s", kura_last_error());
        return 1;
    }
    uint64_t j = 1;
    for (; j <= OPS; j++) {
        sc_issued(c, 0, j, SC_MAYBE);
        if (sw_exec(&w, db, 0, j, why, sizeof why) != KURA_OK) {
            if (!env_crashed(f)) fail_msg("%s", why);
            j++;
            break;
        }
        sc_issued(c, 0, j, SC_ACKED);
        kura_status s = KURA_OK;
        if (j % READ_EVERY == 0) s = sc_read(c, db, READ_PAGE, why, sizeof why);
        if (s == KURA_OK && j == MID && (s = flush_and_compact(db)) != KURA_OK)
            snprintf(why, sizeof why, "flush and compaction: %s", kura_last_error());
        if (s == KURA_OK && p->sync_every && j % p->sync_every == 0) {
            if ((s = kura_sync(db)) == KURA_OK)
                sc_durable(c);
            else
                snprintf(why, sizeof why, "kura_sync: %s", kura_last_error());
        }
        if (s != KURA_OK) {
            if (!env_crashed(f)) fail_msg("op %llu: %s", (unsigned long long)j, why);
            j++;
            break;
        }
    }
    kura_close(db);
    return j;
}

/* Reopens on a healthy env, issues AFTER_OPS more operations from op j, and checks the
 * stream; false with why. */
static bool reopen_check(const char *dir, sc *c, const plan *p, uint64_t j, char *why, size_t cap)
{
    io_fault *f = io_fault_new(nosync_env());
    kura_options o = pl_options(f, KURA_SYNC);
    sw_config w = config(p->durable_acks, p->no_txn).work;
    kura_db *db;
    if (kura_open(dir, &o, &db) != KURA_OK) {
        snprintf(why, cap, "reopen: %s", kura_last_error());
        io_fault_free(f);
        return false;
    }
    bool ok = true;
    for (uint64_t end = j + AFTER_OPS; ok && j < end; j++) { /* in sync mode: durable */
        sc_issued(c, 0, j, SC_MAYBE);
        ok = sw_exec(&w, db, 0, j, why, cap) == KURA_OK;
        if (ok) sc_issued(c, 0, j, SC_DURABLE);
    }
    ok = ok && sc_check(c, db, why, cap);
    kura_status s = kura_close(db);
    io_fault_free(f);
    if (ok && s != KURA_OK) {
        snprintf(why, cap, "close: %s", kura_last_error());
        ok = false;
    }
    return ok;
}

/* Reopens on an env armed to crash at mutating op m, closes, cuts the power. */
static void crashed_reopen(const char *dir, uint64_t m, io_loss_mode mode, uint64_t seed)
{
    io_fault *f = io_fault_new(nosync_env());
    io_fault_crash_at_op(f, m, IO_CRASH_FREEZE);
    kura_options o = pl_options(f, KURA_SYNC);
    kura_db *db = NULL;
    if (kura_open(dir, &o, &db) == KURA_OK) kura_close(db);
    io_fault_power_loss(f, mode, seed);
    io_fault_free(f);
}

/* ---- one cut -------------------------------------------------------------------------------- */

typedef struct cut_result {
    bool crashed; /* the crash happened during the workload */
    bool ok;
    char why[1200];
    sc_stats st;
} cut_result;

static const char *mode_str(io_loss_mode m)
{
    return m == IO_LOSS_DROP ? "DROP" : "TEAR";
}

/* The workload on a copy of the template, crashed before mutating op n (0: never), the power
 * cut (mode), the reopen crashed at op reopen_m (0: not), then reopen_check. */
static void cut(const plan *p, uint64_t n, io_loss_mode mode, uint64_t reopen_m, cut_result *r)
{
    char *dir = test_mkdtemp("crash-stream-pl");
    scratch_copy_dir(g_tmpl, dir);
    sc_config cfg = config(p->durable_acks, p->no_txn);
    sc *c = sc_fresh(g_proto, &cfg);
    io_fault *f = io_fault_new(nosync_env());
    if (n) io_fault_crash_at_op(f, n, IO_CRASH_FREEZE);
    uint64_t next = workload(dir, f, c, p);
    r->crashed = io_fault_crashed(f);
    sc_crashed(c);
    uint64_t loss_seed = g_seed ^ (n * 0x9e3779b97f4a7c15ull) ^ reopen_m;
    io_fault_power_loss(f, mode, loss_seed);
    io_fault_free(f);
    if (reopen_m)
        crashed_reopen(dir, reopen_m, mode == IO_LOSS_DROP ? IO_LOSS_TEAR : IO_LOSS_DROP,
                       ~loss_seed);
    char why[1000];
    r->ok = reopen_check(dir, c, p, next, why, sizeof why);
    r->st = *sc_get_stats(c);
    snprintf(r->why, sizeof r->why,
             "%s (%s, cut before op %llu, %s, reopen crash at op %llu; "
             "seed %llu)",
             r->ok ? "ok" : why, p->durability == KURA_SYNC ? "sync" : "relaxed",
             (unsigned long long)n, mode_str(mode), (unsigned long long)reopen_m,
             (unsigned long long)g_seed);
    sc_free(c);
    test_rmrf(dir);
}

/* The mutating operations of a run without a crash (checked too). */
static uint64_t clean_ops(const plan *p)
{
    char *dir = test_mkdtemp("crash-stream-pl-clean");
    scratch_copy_dir(g_tmpl, dir);
    sc_config cfg = config(p->durable_acks, p->no_txn);
    sc *c = sc_fresh(g_proto, &cfg);
    io_fault *f = io_fault_new(nosync_env());
    uint64_t next = workload(dir, f, c, p);
    uint64_t m = io_fault_mutating_ops(f);
    io_fault_free(f);
    char why[1000];
    if (!reopen_check(dir, c, p, next, why, sizeof why)) fail_msg("a run without a crash: %s", why);
    sc_free(c);
    test_rmrf(dir);
    return m;
}

/* Cuts spread over 1..M (all of them at scale >= M / MIN_CUTS), DROP and TEAR alternating,
 * every fourth reopen crashed too. */
static void sweep(const plan *p, const char *name)
{
    uint64_t m = clean_ops(p), cuts = scratch_scaled(MIN_CUTS), rng = g_seed ^ 0x5eed;
    const char *only = getenv("KURA_TEST_CUT");
    uint64_t crashed = 0, vanished = 0, resumes_failed = 0, lost = 0, records = 0, txns = 0;
    for (uint64_t i = 0; i < cuts; i++) {
        uint64_t n = 1 + i * m / cuts;
        io_loss_mode mode = (io_loss_mode)(i % 2);
        uint64_t reopen_m = i % 4 == 3 ? 1 + test_rand(&rng) % 40 : 0;
        if (only && strtoull(only, NULL, 0) != n) continue;
        cut_result r;
        cut(p, n, mode, reopen_m, &r);
        if (!r.ok) fail_msg("%s: %s", name, r.why);
        crashed += r.crashed;
        vanished += r.st.vanished;
        resumes_failed += r.st.resume_failures;
        lost += r.st.acked_lost;
        records += r.st.records;
        txns += r.st.txns_seen;
    }
    fprintf(stderr,
            "%s: %llu cuts of %llu mutating ops, %llu crashed the workload; %llu "
            "records, %llu transactions in the streams; %llu acknowledged ops lost, "
            "%llu records the consumer had read vanished (%llu resumes failed)\n",
            name, (unsigned long long)cuts, (unsigned long long)m, (unsigned long long)crashed,
            (unsigned long long)records, (unsigned long long)txns, (unsigned long long)lost,
            (unsigned long long)vanished, (unsigned long long)resumes_failed);
    if (vanished || resumes_failed) /* shown only once durable: nothing read can go */
        fail_msg("%s: %llu records the consumer had read vanished, %llu resumes failed", name,
                 (unsigned long long)vanished, (unsigned long long)resumes_failed);
    if (!only && crashed < cuts * 9 / 10)
        fail_msg("%s: only %llu of %llu cuts crashed the workload", name,
                 (unsigned long long)crashed, (unsigned long long)cuts);
}

/* ---- the tests --------------------------------------------------------------------------------
 */

static void test_sync_powerloss(void **state)
{
    (void)state;
    plan p = {.durability = KURA_SYNC, .durable_acks = true};
    sweep(&p, "stream powerloss sync");
}

/* Relaxed writes without transactions: a prefix of each shard survives (all of what a
 * kura_sync covered), and all of what the consumer read. */
static void test_relaxed_powerloss(void **state)
{
    (void)state;
    plan p = {.durability = KURA_RELAXED, .sync_every = SYNC_EVERY, .no_txn = true};
    sweep(&p, "stream powerloss relaxed");
}

/* The same with transactions (it found the relaxed commit record bug: docs/testing-crash.md,
 * "Found and fixed"). */
static void test_relaxed_powerloss_transactions(void **state)
{
    (void)state;
    plan p = {.durability = KURA_RELAXED, .sync_every = SYNC_EVERY};
    sweep(&p, "stream powerloss relaxed, transactions");
}

/* The items of test_relaxed_synced_transaction: two in each partition. */
static const uint32_t k_txn_keys[4] = {0, 1, 4, 7};

/* A TransactWriteItems putting the four items, then an UpdateItem of the first; the
 * transaction's records are in both shards. */
static void txn_then_update(kura_db *db)
{
    char body[2048], key[SW_KEY_CAP];
    size_t n = (size_t)snprintf(body, sizeof body, "{\"TransactItems\":[");
    for (int k = 0; k < 4; k++) {
        sw_key(0, k_txn_keys[k], key);
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s{\"Put\":{\"TableName\":\"" SW_TABLE "\",\"Item\":{\"pk\":"
                              "{\"S\":\"%s\"},\"v\":{\"S\":\"txn\"}}}}",
                              k ? "," : "", key);
    }
    snprintf(body + n, sizeof body - n, "]}");
    exec_ok(db, "TransactWriteItems", body);
    sw_key(0, k_txn_keys[0], key);
    snprintf(body, sizeof body,
             "{\"TableName\":\"" SW_TABLE "\",\"Key\":{\"pk\":{\"S\":\"%s\"}},"
             "\"UpdateExpression\":\"SET w = :w\",\"ExpressionAttributeValues\":"
             "{\":w\":{\"S\":\"after\"}}}",
             key);
    exec_ok(db, "UpdateItem", body);
    for (uint32_t sh = 0; sh < NPARTS; sh++) { /* both partitions have a piece */
        char *it, *next;
        kura_stream_record *v;
        size_t nv;
        assert_kura_ok(kura_get_shard_iterator(db, sc_arn(g_proto), sc_shard_id(g_proto, sh),
                                               KURA_ITER_TRIM_HORIZON, NULL, &it));
        assert_kura_ok(kura_get_records(db, it, 0, &v, &nv, &next));
        assert_true(nv > 0);
        kura_stream_records_free(v, nv);
        kura_free(it);
        kura_free(next);
    }
}

/* The bug in its simplest form: a relaxed TransactWriteItems over both partitions, an
 * UpdateItem of one of its items, a kura_sync that returns OK, a power loss. Everything
 * acknowledged before the kura_sync must survive; the stream must show the transaction's
 * four INSERTs before the update's MODIFY. */
static void test_relaxed_synced_transaction(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-stream-pl-txn");
    scratch_copy_dir(g_tmpl, dir);
    io_fault *f = io_fault_new(nosync_env());
    kura_options o = pl_options(f, KURA_RELAXED);
    kura_db *db;
    assert_kura_ok(kura_open(dir, &o, &db));
    txn_then_update(db);
    assert_kura_ok(kura_sync(db));
    io_fault_crash_at_op(f, 1, IO_CRASH_FREEZE); /* the power goes now */
    kura_close(db);
    io_fault_power_loss(f, IO_LOSS_DROP, g_seed);
    io_fault_free(f);
    f = io_fault_new(nosync_env());
    o = pl_options(f, KURA_SYNC);
    assert_kura_ok(kura_open(dir, &o, &db));
    int present = 0;
    for (int k = 0; k < 4; k++) {
        kura_value *item = NULL;
        assert_kura_ok(sw_get_item(db, 0, k_txn_keys[k], &item));
        present += item != NULL;
        kura_value_free(item);
    }
    sc_config cfg = config(true, false);
    sc *c = sc_fresh(g_proto, &cfg);
    char why[600];
    assert_kura_ok(sc_read(c, db, 0, why, sizeof why));
    const sc_stats *st = sc_get_stats(c);
    if (present != 4 || st->events[1] != 4 || st->events[2] != 1)
        fail_msg("after kura_sync and a power loss, %d of the transaction's 4 items are "
                 "there, and the stream holds %llu INSERT and %llu MODIFY records (4 INSERT "
                 "and 1 MODIFY expected)",
                 present, (unsigned long long)st->events[1], (unsigned long long)st->events[2]);
    sc_free(c);
    assert_kura_ok(kura_close(db));
    io_fault_free(f);
    test_rmrf(dir);
}

/* The checker is not blind: relaxed writes checked as durable must fail some DROP cut. */
static void test_canary_relaxed_as_durable(void **state)
{
    (void)state;
    plan p = {.durability = KURA_RELAXED, .durable_acks = true, .no_txn = true};
    uint64_t m = clean_ops(&p), rng = g_seed ^ 0xca, caught = 0;
    char first[1200] = "";
    for (int i = 0; i < CANARY_CUTS; i++) {
        cut_result r;
        cut(&p, m / 4 + test_rand(&rng) % (m - m / 4), IO_LOSS_DROP, 0, &r);
        if (!r.ok && !caught++) snprintf(first, sizeof first, "%s", r.why);
    }
    if (!caught)
        fail_msg("relaxed writes checked as durable survived %d DROP power losses", CANARY_CUTS);
    fprintf(stderr, "stream powerloss canary: %llu of %d caught, e.g. %s\n",
            (unsigned long long)caught, CANARY_CUTS, first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_powerloss),
        cmocka_unit_test(test_relaxed_powerloss),
        cmocka_unit_test(test_relaxed_powerloss_transactions),
        cmocka_unit_test(test_relaxed_synced_transaction),
        cmocka_unit_test(test_canary_relaxed_as_durable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

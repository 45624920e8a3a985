/*
 * engine_txn_test.c - atomic writes across partitions and trees (kura_write_atomic,
 * engine/txn_log.c): money moves between accounts spread over every partition of two trees;
 * every snapshot, every reopen and every crash (at the named points and before every mutating
 * operation of a transaction, then a power loss) must show the initial total, and a crashed
 * transaction all or nothing.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/db_int.h"
#include "engine/txn.h"
#include "util/coding.h"
#include "util/io_fault.h"

enum { NACC = 64, START = 1000, TRANSFERS = 1500 };

typedef struct bank {
    kura_db *db;
    kura_tree *t[2];
} bank;

/* Account i lives in tree i % 2 under key "acct<i>". */
static void acct_key(int i, char *k)
{
    snprintf(k, 16, "acct%04d", i);
}

static kura_status bank_open(const char *dir, io_env *env, bank *b)
{
    kura_options o;
    kura_options_init(&o);
    o.io = env;
    o.memtable_budget_bytes = 1 << 20; /* flushes happen during the run */
    kura_status s = kura_open(dir, &o, &b->db);
    if (s == KURA_OK)
        s = kura_tree_open(b->db, "a", NULL, &b->t[0]);
    if (s == KURA_OK)
        s = kura_tree_open(b->db, "b", NULL, &b->t[1]);
    return s;
}

static long get_bal(bank *b, const kura_snapshot *snap, int i)
{
    char k[16];
    acct_key(i, k);
    kura_read_options ro;
    kura_read_options_init(&ro);
    ro.snapshot = snap;
    void *v = NULL;
    size_t n = 0;
    kura_status s = kura_get(b->t[i % 2], &ro, k, strlen(k), &v, &n);
    if (s != KURA_OK)
        fail_msg("account %d: %s (%s)", i, kura_status_str(s), kura_last_error());
    char buf[32] = {0};
    memcpy(buf, v, n < 31 ? n : 31);
    kura_free(v);
    return strtol(buf, NULL, 10);
}

static long total(bank *b, const kura_snapshot *snap)
{
    long sum = 0;
    for (int i = 0; i < NACC; i++)
        sum += get_bal(b, snap, i);
    return sum;
}

/* Sets accounts ids[0..n) to vals atomically. */
static kura_status set_accounts(bank *b, const int *ids, const long *vals, int n)
{
    kura_batch *bt[2] = {kura_batch_new(), kura_batch_new()};
    for (int j = 0; j < n; j++) {
        char k[16], v[32];
        acct_key(ids[j], k);
        snprintf(v, sizeof v, "%ld", vals[j]);
        assert_kura_ok(kura_batch_put(bt[ids[j] % 2], k, strlen(k), v, strlen(v)));
    }
    kura_tree *trees[2] = {b->t[0], b->t[1]};
    const kura_batch *batches[2] = {bt[0], bt[1]};
    kura_status s = kura_write_atomic(b->db, NULL, 2, trees, batches);
    kura_batch_free(bt[0]);
    kura_batch_free(bt[1]);
    return s;
}

static void init_accounts(bank *b)
{
    int ids[NACC];
    long vals[NACC];
    for (int i = 0; i < NACC; i++)
        ids[i] = i, vals[i] = START;
    assert_kura_ok(set_accounts(b, ids, vals, NACC));
}

/* ---- concurrent transfers, snapshot readers ------------------------------------------------- */

typedef struct run {
    bank *b;
    pthread_mutex_t mu; /* the writers' read-modify-write (no item locks at this level) */
    atomic_bool stop;
    atomic_long bad, reads;
    uint64_t seed;
} run;

static void *writer(void *arg)
{
    run *r = arg;
    uint64_t rng = r->seed;
    for (int k = 0; k < TRANSFERS; k++) {
        int from = (int)(test_rand(&rng) % NACC), to = (int)(test_rand(&rng) % NACC);
        if (from == to)
            continue;
        long amount = (long)(test_rand(&rng) % 50);
        pthread_mutex_lock(&r->mu);
        int ids[2] = {from, to};
        long vals[2] = {get_bal(r->b, NULL, from) - amount, get_bal(r->b, NULL, to) + amount};
        kura_status s = set_accounts(r->b, ids, vals, 2);
        pthread_mutex_unlock(&r->mu);
        if (s != KURA_OK)
            fail_msg("transfer: %s (%s)", kura_status_str(s), kura_last_error());
    }
    return NULL;
}

static void *reader(void *arg)
{
    run *r = arg;
    while (!atomic_load(&r->stop)) {
        const kura_snapshot *snap = kura_snapshot_new(r->b->db);
        assert_non_null(snap);
        if (total(r->b, snap) != (long)NACC * START)
            atomic_fetch_add(&r->bad, 1);
        kura_snapshot_free(r->b->db, snap);
        atomic_fetch_add(&r->reads, 1);
    }
    return NULL;
}

static void test_transfers_keep_the_total(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("txn_bank");
    bank b;
    assert_kura_ok(bank_open(dir, NULL, &b));
    init_accounts(&b);
    run r = {.b = &b, .seed = test_seed()};
    pthread_mutex_init(&r.mu, NULL);
    atomic_init(&r.stop, false);
    atomic_init(&r.bad, 0);
    atomic_init(&r.reads, 0);
    pthread_t w[2], rd;
    assert_int_equal(pthread_create(&rd, NULL, reader, &r), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&w[i], NULL, writer, &r), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(w[i], NULL);
    atomic_store(&r.stop, true);
    pthread_join(rd, NULL);
    assert_int_equal(atomic_load(&r.bad), 0);
    assert_true(atomic_load(&r.reads) > 0);
    assert_int_equal(total(&b, NULL), (long)NACC * START);
    assert_kura_ok(kura_close(b.db));
    assert_kura_ok(bank_open(dir, NULL, &b)); /* recovery replays the committed pieces */
    assert_int_equal(total(&b, NULL), (long)NACC * START);
    assert_kura_ok(kura_close(b.db));
    pthread_mutex_destroy(&r.mu);
    test_rmrf(dir);
}

/* ---- crashes ---------------------------------------------------------------------------------- */

/* The transaction the crash tests cut: four accounts in both trees, every partition likely. */
static const int CUT_IDS[4] = {1, 2, 13, 30};
static const long CUT_VALS[4] = {900, 1100, 1300, 700};

/* After the crash and power loss: all four accounts new, or all four old. */
static bool check_all_or_nothing(bank *b, const char *what)
{
    int changed = 0;
    for (int j = 0; j < 4; j++)
        changed += get_bal(b, NULL, CUT_IDS[j]) == CUT_VALS[j];
    if (changed != 0 && changed != 4)
        fail_msg("%s: %d of 4 writes of the transaction survived", what, changed);
    assert_int_equal(total(b, NULL), (long)NACC * START);
    return changed == 4;
}

/* One crash at `point` (k-th passage) or, with point NULL, before mutating op k; then a power
 * loss of `mode`. Returns whether the transaction survived; *crashed_out whether the crash
 * fired. */
static bool crash_once(const char *point, uint64_t k, io_loss_mode mode, uint64_t seed,
                       bool *crashed_out, uint64_t *ops_out)
{
    char *dir = test_mkdtemp("txn_crash");
    io_fault *f = io_fault_new(io_env_posix());
    bank b;
    assert_kura_ok(bank_open(dir, io_fault_env(f), &b));
    init_accounts(&b);
    io_fault_reset_counts(f);
    if (point)
        io_fault_crash_at(f, point, k, IO_CRASH_FREEZE);
    else if (k)
        io_fault_crash_at_op(f, k, IO_CRASH_FREEZE);
    kura_status s = set_accounts(&b, CUT_IDS, CUT_VALS, 4);
    *crashed_out = io_fault_crashed(f);
    if (ops_out)
        *ops_out = io_fault_mutating_ops(f);
    if (!*crashed_out)
        assert_kura_ok(s);
    kura_close(b.db); /* errors expected after a crash */
    io_fault_power_loss(f, mode, seed);
    assert_kura_ok(bank_open(dir, io_fault_env(f), &b));
    char what[96];
    snprintf(what, sizeof what, "crash at %s #%llu, loss %d seed %llu", point ? point : "op",
             (unsigned long long)k, (int)mode, (unsigned long long)seed);
    bool survived = check_all_or_nothing(&b, what);
    if (!*crashed_out && !survived)
        fail_msg("%s: an acknowledged transaction was lost", what);
    assert_kura_ok(kura_close(b.db));
    /* a second recovery decides the same way (the decision is durable) */
    assert_kura_ok(bank_open(dir, io_fault_env(f), &b));
    assert_int_equal(check_all_or_nothing(&b, what), survived);
    assert_kura_ok(kura_close(b.db));
    io_fault_free(f);
    test_rmrf(dir);
    return survived;
}

/* Relaxed: the commit record is written without a sync. A flush that puts one piece into a
 * table (and lets its WAL record go) must make the commit record durable first, or a power
 * loss keeps that piece and drops the others (their commit record gone). */
static void test_relaxed_flush_keeps_the_commit(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("txn_relaxed");
    io_fault *f = io_fault_new(io_env_posix());
    bank b;
    kura_options o;
    kura_options_init(&o);
    o.io = io_fault_env(f);
    o.durability = KURA_RELAXED;
    o.relaxed_sync_ms = 3600000; /* no periodic sync during the test */
    assert_kura_ok(kura_open(dir, &o, &b.db));
    assert_kura_ok(kura_tree_open(b.db, "a", NULL, &b.t[0]));
    assert_kura_ok(kura_tree_open(b.db, "b", NULL, &b.t[1]));
    init_accounts(&b);
    assert_kura_ok(kura_tree_flush(b.t[0]));
    assert_kura_ok(kura_tree_flush(b.t[1]));
    assert_kura_ok(set_accounts(&b, CUT_IDS, CUT_VALS, 4));
    assert_kura_ok(kura_tree_flush(b.t[0])); /* tree a's pieces into a table */
    io_fault_crash_at_op(f, 1, IO_CRASH_FREEZE);
    kura_close(b.db); /* frozen at its first write: nothing more reaches the disk */
    io_fault_power_loss(f, IO_LOSS_DROP, 1);
    assert_kura_ok(bank_open(dir, io_fault_env(f), &b));
    /* the flush made the commit record durable, and the pieces were synced before it */
    assert_true(check_all_or_nothing(&b, "relaxed, tree a flushed, power loss"));
    assert_kura_ok(kura_close(b.db));
    io_fault_free(f);
    test_rmrf(dir);
}

/* A database of the first format: pieces that carry their own sequences, commit records
 * without a value. Such a transaction, left in the WALs by a crash, is replayed as it was
 * written. The commit is done here by hand, as the first format's txn_commit did it. */
static void test_first_format_replayed(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("txn_v1");
    io_fault *f = io_fault_new(io_env_posix());
    bank b;
    assert_kura_ok(bank_open(dir, io_fault_env(f), &b));
    init_accounts(&b);
    const int ids[2] = {1, 2}; /* one in each tree */
    const long vals[2] = {1200, 800};
    lsm_tree *parts[2];
    lsm_batch m[2];
    lsm_txn_hold h[2];
    uint64_t first = lsm_seq_alloc(&b.db->sh, 4), ends[2];
    for (int j = 0; j < 2; j++) {
        char k[16], v[32];
        acct_key(ids[j], k);
        snprintf(v, sizeof v, "%ld", vals[j]);
        kura_tree *t = b.t[ids[j] % 2];
        parts[j] = t->parts[kura_tree_partition_of(t, k, strlen(k))];
        lsm_batch_init(&m[j]);
        assert_kura_ok(lsm_batch_txn_marker(&m[j], first));
        assert_kura_ok(lsm_batch_put(&m[j], k, strlen(k), v, strlen(v)));
        lsm_rep_set_seq(m[j].rep.data, first + 2 * (uint64_t)j); /* absolute */
        assert_kura_ok(lsm_txn_lead(parts[j], &h[j]));
        assert_kura_ok(lsm_txn_append(parts[j], m[j].rep.data, m[j].rep.len, &ends[j]));
        lsm_txn_release(parts[j], &h[j], KURA_OK);
        assert_kura_ok(lsm_txn_sync(parts[j], ends[j]));
    }
    uint8_t key[9] = {'c'};
    enc_fixed64_be(key + 1, first);
    lsm_batch rec;
    lsm_batch_init(&rec);
    assert_kura_ok(lsm_batch_put(&rec, key, sizeof key, "", 0)); /* no value */
    assert_kura_ok(lsm_write_nowait(b.db->txn->parts[0], &rec, true));
    lsm_batch_free(&rec);
    for (int j = 0; j < 2; j++) {
        lsm_hook_slot none = {0};
        lsm_txn_end(parts[j], &none); /* not applied: the crash comes first */
        lsm_batch_free(&m[j]);
    }
    lsm_seq_complete(&b.db->sh, first, first + 3);
    io_fault_crash_at_op(f, 1, IO_CRASH_FREEZE);
    kura_close(b.db);
    io_fault_power_loss(f, IO_LOSS_DROP, 1);
    assert_kura_ok(bank_open(dir, io_fault_env(f), &b));
    assert_int_equal(get_bal(&b, NULL, 1), 1200);
    assert_int_equal(get_bal(&b, NULL, 2), 800);
    assert_int_equal(total(&b, NULL), (long)NACC * START);
    assert_kura_ok(kura_close(b.db));
    io_fault_free(f);
    test_rmrf(dir);
}

static void test_named_crash_points(void **state)
{
    (void)state;
    bool crashed;
    /* a piece is in a WAL, no commit record: presumed abort */
    assert_false(crash_once("txn.after_prepare", 1, IO_LOSS_DROP, 1, &crashed, NULL));
    assert_true(crashed);
    assert_false(crash_once("txn.after_prepare", 2, IO_LOSS_DROP, 1, &crashed, NULL));
    assert_true(crashed);
    /* the pieces are durable, no range and no commit record yet: presumed abort */
    assert_false(crash_once("txn.before_range", 1, IO_LOSS_DROP, 1, &crashed, NULL));
    assert_true(crashed);
    /* the commit record is durable, nothing applied: recovery applies every piece */
    assert_true(crash_once("txn.after_commit", 1, IO_LOSS_DROP, 1, &crashed, NULL));
    assert_true(crashed);
}

static void test_every_cut_point(void **state)
{
    (void)state;
    bool crashed;
    uint64_t ops = 0;
    assert_true(crash_once(NULL, 0, IO_LOSS_DROP, 1, &crashed, &ops)); /* count, no crash */
    assert_false(crashed);
    assert_true(ops > 3);
    uint64_t seed = test_seed();
    /* every cut falls before the commit record's sync completes (the last mutating
     * operation), so no transaction survives, and none may survive in part */
    for (uint64_t k = 1; k <= ops; k++) {
        assert_false(crash_once(NULL, k, IO_LOSS_DROP, seed + k, &crashed, NULL));
        assert_true(crashed);
        assert_false(crash_once(NULL, k, IO_LOSS_TEAR, seed + k, &crashed, NULL));
    }
}


/* ---- collection of commit records ------------------------------------------------------------- */

static size_t commit_records(kura_db *db)
{
    kura_iter *it = NULL;
    assert_kura_ok(kura_iter_new(db->txn, NULL, &it));
    size_t n = 0;
    for (kura_iter_seek_first(it); kura_iter_valid(it); kura_iter_next(it)) {
        size_t kl = 0;
        const char *k = kura_iter_key(it, &kl);
        n += kl == 9 && k[0] == 'c';
    }
    assert_kura_ok(kura_iter_status(it));
    kura_iter_free(it);
    return n;
}

static void collect(kura_db *db)
{
    kmutex_lock(&db->mu);
    uint64_t g = txn_log_watermark(db);
    kmutex_unlock(&db->mu);
    assert_kura_ok(txn_log_collect(db, g));
}

static void test_commit_records_collected(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("txn_collect");
    bank b;
    assert_kura_ok(bank_open(dir, NULL, &b));
    init_accounts(&b);
    for (int k = 0; k < 50; k++) {
        int ids[2] = {k % NACC, (k * 7 + 3) % NACC};
        if (ids[0] == ids[1] || ids[0] % 2 == ids[1] % 2)
            ids[1] = (ids[0] + 1) % NACC; /* one account in each tree */
        long vals[2] = {get_bal(&b, NULL, ids[0]) - 1, get_bal(&b, NULL, ids[1]) + 1};
        assert_kura_ok(set_accounts(&b, ids, vals, 2));
    }
    size_t before = commit_records(b.db);
    assert_true(before >= 50);
    /* the pieces are in live WAL segments: every record stays */
    collect(b.db);
    assert_int_equal(commit_records(b.db), before);
    /* flushed, the segments go, and with them the need for the records */
    assert_kura_ok(kura_tree_flush(b.t[0]));
    assert_kura_ok(kura_tree_flush(b.t[1]));
    collect(b.db);
    assert_int_equal(commit_records(b.db), 0);
    assert_int_equal(total(&b, NULL), (long)NACC * START);
    assert_kura_ok(kura_close(b.db));
    assert_kura_ok(bank_open(dir, NULL, &b));
    assert_int_equal(total(&b, NULL), (long)NACC * START);
    assert_kura_ok(kura_close(b.db));
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transfers_keep_the_total),
        cmocka_unit_test(test_named_crash_points),
        cmocka_unit_test(test_relaxed_flush_keeps_the_commit),
        cmocka_unit_test(test_first_format_replayed),
        cmocka_unit_test(test_every_cut_point),
        cmocka_unit_test(test_commit_records_collected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

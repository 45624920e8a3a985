/*
 * fault_inject_test.c - EIO, ENOSPC and short writes at every I/O operation of a workload
 * that creates a database, writes, reads, flushes, compacts and closes, and at every I/O
 * operation of a reopen (recovery); and the rule that a failed WAL fsync is final.
 *
 * Sweep: for n = 1, 2, ... a fresh database runs the workload (crash/oracle.h, one writer,
 * 2 partitions) on util/io_fault with a rule failing its n-th I/O operation (any kind, any
 * file; once, or from then on for the "disk full" variant). The workload stops at the first
 * call that fails, which must leave the partition read-only (a probe write to it returns
 * KURA_E_READONLY and kura_get_stats counts it), or, for a failed read, return the injected
 * error instead of data. Then the database is closed, reopened on a healthy env and checked
 * against the model: nothing acknowledged is lost, nothing is wrong, and the reopened
 * database accepts writes again. The sweep ends at the first n the workload completes
 * without reaching the rule; every earlier n must have injected its failure (the canary:
 * a sweep whose rule never fires would check nothing).
 *
 * A failed fsync of a WAL: the partition refuses writes with KURA_E_READONLY from then on,
 * reads still work, and the engine never calls sync on a WAL again (counted through a
 * kind-filtered rule), through more writes, kura_sync, kura_tree_flush and kura_close; in
 * sync mode and in relaxed mode (where the background syncer's fsync fails).
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crash/nosync_env.h"
#include "crash/oracle.h"
#include "crash/scratch.h"
#include "util/io_fault.h"
#include "util/thread.h"

enum { NPARTS = 2, NKEYS = 120, OPS_A = 40, OPS_B = 40, OPS_C = 30 };

static uint64_t g_seed;

static kura_options fi_options(io_fault *f, kura_durability d)
{
    kura_options o;
    kura_options_init(&o);
    o.io = io_fault_env(f);
    o.durability = d;
    o.default_partitions = NPARTS;
    o.memtable_budget_bytes = 1 << 20;
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 128 << 10;
    o.sstable_target_bytes = 32 << 10;
    o.block_cache_bytes = 256 << 10;
    o.background_threads = 2;
    return o;
}

static oracle *fi_oracle(void)
{
    oracle_config c;
    oracle_config_init(&c, g_seed);
    c.keys_per_thread = NKEYS;
    c.min_value = 100;
    c.max_value = 3000;
    oracle *o = oracle_new(&c);
    assert_non_null(o);
    return o;
}

static const char *err_str(int e)
{
    return e == EIO ? "EIO" : e == ENOSPC ? "ENOSPC" : "short write";
}

/* ---- the workload ----------------------------------------------------------------------- */

typedef struct wl_result {
    const char *failed_call; /* NULL if every call succeeded */
    kura_status status;
    char msg[600];
} wl_result;

static bool failed(wl_result *r, const char *call, kura_status s)
{
    if (s == KURA_OK)
        return false;
    r->failed_call = call;
    r->status = s;
    snprintf(r->msg, sizeof r->msg, "%s", kura_last_error());
    return true;
}

/* After a failed write: the partition of the failed op must be read-only. */
static void expect_readonly_after_write(kura_db *db, kura_tree *tree, oracle *o, wl_result *r)
{
    oracle_op op;
    oracle_gen(o, 0, oracle_attempted(o, 0), &op);
    char key[ORACLE_KEY_LEN];
    oracle_key(0, op.e[0].key, key);
    kura_status s = kura_put(tree, NULL, key, sizeof key, "probe", 5);
    if (s != KURA_E_READONLY)
        fail_msg("after %s failed (%s: %s), a write to the same partition returned %s, not "
                 "read-only", r->failed_call, kura_status_str(r->status), r->msg,
                 kura_status_str(s));
    kura_stats st;
    kura_get_stats(db, &st);
    assert_true(st.readonly_partitions >= 1);
}

/* A read phase: the model must hold, unless a read failed by injection. */
static bool read_phase(oracle *o, kura_tree *tree, wl_result *r)
{
    char why[600];
    if (oracle_check(o, tree, false, why, sizeof why))
        return true;
    if (!strstr(why, "injected"))
        fail_msg("reads during the workload: %s", why);
    r->failed_call = "read";
    r->status = KURA_E_IO;
    snprintf(r->msg, sizeof r->msg, "%s", why);
    return false;
}

static bool write_ops(kura_db *db, kura_tree *tree, oracle *o, int n, wl_result *r)
{
    for (int i = 0; i < n; i++)
        if (failed(r, "write", oracle_run(o, tree, 0, NULL))) {
            expect_readonly_after_write(db, tree, o, r);
            return false;
        }
    return true;
}

static bool maintenance(kura_db *db, const char *call, kura_status s, wl_result *r)
{
    if (!failed(r, call, s))
        return true;
    kura_stats st;
    kura_get_stats(db, &st);
    if (st.readonly_partitions == 0)
        fail_msg("%s failed (%s: %s) but no partition is read-only", call,
                 kura_status_str(s), r->msg);
    return false;
}

/* Create, write, flush, read, write, compact, read, write, close; stops at the first failed
 * call. */
static void workload(const char *dir, io_fault *f, oracle *o, wl_result *r)
{
    kura_options opts = fi_options(f, KURA_SYNC);
    kura_db *db = NULL;
    kura_tree *tree = NULL;
    memset(r, 0, sizeof *r);
    if (failed(r, "kura_open", kura_open(dir, &opts, &db)))
        return;
    if (!failed(r, "kura_tree_open", kura_tree_open(db, "t", NULL, &tree))) {
        assert_kura_ok(oracle_route(o, tree));
        (void)(write_ops(db, tree, o, OPS_A, r) &&
               maintenance(db, "kura_tree_flush", kura_tree_flush(tree), r) &&
               read_phase(o, tree, r) && write_ops(db, tree, o, OPS_B, r) &&
               maintenance(db, "kura_tree_compact", kura_tree_compact(tree), r) &&
               read_phase(o, tree, r) && write_ops(db, tree, o, OPS_C, r));
    }
    kura_status s = kura_close(db);
    if (!r->failed_call)
        failed(r, "kura_close", s);
}

/* Reopens on a healthy env: the model must hold, and the database must take writes. */
static void healthy_reopen_check(const char *dir, oracle *o, const char *ctx)
{
    io_fault *f = io_fault_new(nosync_env());
    kura_options opts = fi_options(f, KURA_SYNC);
    kura_db *db;
    kura_tree *tree;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK)
        fail_msg("%s: healthy reopen failed: %s: %s", ctx, kura_status_str(s),
                 kura_last_error());
    assert_kura_ok(kura_tree_open(db, "t", NULL, &tree));
    assert_kura_ok(oracle_route(o, tree));
    char why[600];
    if (!oracle_check(o, tree, true, why, sizeof why))
        fail_msg("%s: %s", ctx, why);
    for (int i = 0; i < 4; i++) /* writable again, on every partition it touches */
        if ((s = oracle_run(o, tree, 0, NULL)) != KURA_OK)
            fail_msg("%s: write after the healthy reopen: %s: %s", ctx, kura_status_str(s),
                     kura_last_error());
    if (!oracle_check(o, tree, true, why, sizeof why))
        fail_msg("%s: after writing again: %s", ctx, why);
    assert_kura_ok(kura_close(db));
    io_fault_free(f);
}

/* ---- sweeps ------------------------------------------------------------------------------ */

typedef struct sweep_stats {
    uint64_t runs, failed_calls, absorbed; /* absorbed: injected, yet every call succeeded */
} sweep_stats;

/* Runs the workload with rule r at n = 1, 2, ... (step `step`) until it does not fire. */
static void sweep(int error, bool persistent, uint64_t step, sweep_stats *st)
{
    for (uint64_t n = 1;; n += step) {
        char *dir = test_mkdtemp("fault-inject");
        io_fault *f = io_fault_new(nosync_env());
        oracle *o = fi_oracle();
        io_fault_rule rule = {.at = n, .error = error, .persistent = persistent};
        io_fault_set_rule(f, &rule);
        wl_result r;
        workload(dir, f, o, &r);
        uint64_t injected = io_fault_injected(f);
        io_fault_free(f);
        if (injected == 0) { /* the workload ended before its n-th operation */
            if (r.failed_call)
                fail_msg("no fault injected, yet %s failed: %s: %s", r.failed_call,
                         kura_status_str(r.status), r.msg);
            oracle_free(o);
            test_rmrf(dir);
            break;
        }
        if (!persistent && injected != 1)
            fail_msg("a one-shot rule injected %llu failures", (unsigned long long)injected);
        char ctx[900];
        snprintf(ctx, sizeof ctx, "%s%s at operation %llu (seed %llu; failed call: %s: %s)",
                 err_str(error), persistent ? " from then on" : "", (unsigned long long)n,
                 (unsigned long long)g_seed, r.failed_call ? r.failed_call : "none",
                 r.failed_call ? r.msg : "-");
        healthy_reopen_check(dir, o, ctx);
        st->runs++;
        st->failed_calls += r.failed_call != NULL;
        st->absorbed += r.failed_call == NULL;
        oracle_free(o);
        test_rmrf(dir);
    }
}

static void run_sweep(int error, bool persistent)
{
    sweep_stats st = {0};
    uint64_t step = (uint64_t)(1.0 / scratch_scale() + 0.5);
    sweep(error, persistent, step ? step : 1, &st);
    fprintf(stderr, "fault: %s%s: %llu operations failed in turn; %llu made a call fail, %llu "
                    "were absorbed (e.g. a failed unlink of an obsolete file)\n",
            err_str(error), persistent ? " (persistent)" : "", (unsigned long long)st.runs,
            (unsigned long long)st.failed_calls, (unsigned long long)st.absorbed);
    assert_true(st.runs >= 100 / step); /* the canary: the rule fired, again and again */
    assert_true(st.failed_calls > st.runs / 4);
}

static void test_eio_every_operation(void **state)
{
    (void)state;
    run_sweep(EIO, false);
}

static void test_enospc_every_operation(void **state)
{
    (void)state;
    run_sweep(ENOSPC, false);
}

static void test_short_write_every_operation(void **state)
{
    (void)state;
    run_sweep(IO_FAULT_SHORT_WRITE, false);
}

static void test_disk_full_from_every_operation(void **state)
{
    (void)state;
    run_sweep(ENOSPC, true);
}

/* The I/O operations of reopening (and closing) a copy of tmpl in work: a rule that never
 * fires counts them. */
static uint64_t count_reopen_ops(const char *tmpl, const char *work)
{
    scratch_copy_dir(tmpl, work);
    io_fault *f = io_fault_new(nosync_env());
    io_fault_rule never = {.at = UINT64_MAX};
    io_fault_set_rule(f, &never);
    kura_options opts = fi_options(f, KURA_SYNC);
    kura_db *db;
    kura_tree *tree;
    assert_kura_ok(kura_open(work, &opts, &db));
    assert_kura_ok(kura_tree_open(db, "t", NULL, &tree));
    assert_kura_ok(kura_close(db));
    uint64_t n = io_fault_matching_ops(f);
    io_fault_free(f);
    return n;
}

/* Recovery: a database with tables and unflushed WAL data, reopened with a failure at each
 * I/O operation of the reopen (and of the close after it). */
static void test_faults_during_recovery(void **state)
{
    (void)state;
    char *tmpl = test_mkdtemp("fault-recovery-tmpl");
    io_fault *f = io_fault_new(nosync_env());
    oracle *o = fi_oracle();
    wl_result r;
    workload(tmpl, f, o, &r); /* tables, a compaction, and WAL data since */
    io_fault_free(f);
    if (r.failed_call)
        fail_msg("template: %s failed: %s", r.failed_call, r.msg);
    char *work = test_mkdtemp("fault-recovery");
    uint64_t nops = count_reopen_ops(tmpl, work), runs = 0, failed_opens = 0;
    uint64_t step = (uint64_t)(1.0 / scratch_scale() + 0.5);
    static const int errors[] = {EIO, ENOSPC, IO_FAULT_SHORT_WRITE};
    for (int e = 0; e < 3; e++)
        for (uint64_t n = 1; n <= nops; n += step ? step : 1) {
            test_rmrf(work);
            work = test_mkdtemp("fault-recovery");
            scratch_copy_dir(tmpl, work);
            f = io_fault_new(nosync_env());
            io_fault_rule rule = {.at = n, .error = errors[e]};
            io_fault_set_rule(f, &rule);
            kura_options opts = fi_options(f, KURA_SYNC);
            kura_db *db;
            kura_tree *tree;
            kura_status s = kura_open(work, &opts, &db);
            if (s == KURA_OK) {
                kura_tree_open(db, "t", NULL, &tree);
                kura_close(db);
            }
            failed_opens += s != KURA_OK;
            io_fault_free(f);
            char ctx[160];
            snprintf(ctx, sizeof ctx, "reopen with %s at operation %llu of %llu (seed %llu)",
                     err_str(errors[e]), (unsigned long long)n, (unsigned long long)nops,
                     (unsigned long long)g_seed);
            oracle *c = oracle_clone(o);
            assert_non_null(c);
            healthy_reopen_check(work, c, ctx);
            oracle_free(c);
            runs++;
        }
    fprintf(stderr, "fault: recovery: %llu failed reopens of %llu runs (%llu operations)\n",
            (unsigned long long)failed_opens, (unsigned long long)runs,
            (unsigned long long)nops);
    assert_true(failed_opens > 0);
    test_rmrf(work);
    test_rmrf(tmpl);
    oracle_free(o);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* After the nth WAL fsync fails: read-only, reads work, and no WAL is synced ever again. */
static void failed_wal_sync(kura_durability d, uint64_t nth)
{
    char *dir = test_mkdtemp("fault-fsync");
    io_fault *f = io_fault_new(nosync_env());
    kura_options opts = fi_options(f, d);
    opts.relaxed_sync_ms = 10;
    kura_db *db;
    kura_tree *tree;
    kura_tree_options topts = {.partitions = 1};
    assert_kura_ok(kura_open(dir, &opts, &db));
    assert_kura_ok(kura_tree_open(db, "t", &topts, &tree));
    oracle *o = fi_oracle();
    assert_kura_ok(oracle_route(o, tree));
    io_fault_rule rule = {.at = nth, .op_mask = 1u << IO_OP_SYNC,
                          .kind_mask = 1u << IO_KIND_WAL, .error = EIO};
    io_fault_set_rule(f, &rule);
    /* One write at a time until the nth WAL sync has failed. Every op is a write, which leaves
     * the WAL unsynced: in sync mode the write itself syncs, in relaxed mode the syncer does
     * on one of its turns, which is waited for (however late the syncer runs), so each write
     * brings the failing sync one nearer. Only a hang reaches the deadline. */
    kura_status s = KURA_OK;
    uint64_t deadline = know_ns() + 60 * 1000000000ull;
    while (s == KURA_OK && !io_fault_injected(f)) {
        uint64_t wal_syncs = io_fault_matching_ops(f);
        s = oracle_run(o, tree, 0, NULL);
        while (d == KURA_RELAXED && io_fault_matching_ops(f) == wal_syncs &&
               know_ns() < deadline)
            sleep_ms(1);
        if (know_ns() >= deadline)
            fail_msg("%s: %llu WAL syncs in 60 s, the failure was set for sync %llu",
                     d == KURA_SYNC ? "sync" : "relaxed",
                     (unsigned long long)io_fault_matching_ops(f), (unsigned long long)nth);
    }
    assert_int_equal(io_fault_injected(f), 1);
    if (d == KURA_SYNC && s != KURA_E_IO)
        fail_msg("the write whose fsync failed returned %s (%s)", kura_status_str(s),
                 kura_last_error());
    /* from now on count every WAL sync (a rule that never fires) and every sync at all */
    io_fault_rule count = {.at = UINT64_MAX, .op_mask = 1u << IO_OP_SYNC,
                           .kind_mask = 1u << IO_KIND_WAL};
    io_fault_set_rule(f, &count);
    uint64_t syncs = io_fault_op_count(f, IO_OP_SYNC);
    for (int i = 0; i < 3; i++) {
        char key[ORACLE_KEY_LEN];
        oracle_key(0, (uint32_t)i, key);
        assert_kura_status(kura_put(tree, NULL, key, sizeof key, "x", 1), KURA_E_READONLY);
        assert_kura_status(kura_delete(tree, NULL, key, sizeof key), KURA_E_READONLY);
    }
    assert_true(kura_sync(db) != KURA_OK);
    assert_true(kura_tree_flush(tree) != KURA_OK);
    sleep_ms(5 * opts.relaxed_sync_ms); /* the relaxed syncer's turns */
    char why[600];
    if (!oracle_check(o, tree, false, why, sizeof why)) /* reads keep working */
        fail_msg("reads after the failed fsync: %s", why);
    kura_stats st;
    kura_get_stats(db, &st);
    assert_int_equal(st.readonly_partitions, 1);
    assert_true(kura_close(db) != KURA_OK);
    if (io_fault_matching_ops(f) != 0 || io_fault_op_count(f, IO_OP_SYNC) != syncs)
        fail_msg("%s: after the failed fsync the engine synced a WAL %llu more times (%llu "
                 "syncs in all)", d == KURA_SYNC ? "sync" : "relaxed",
                 (unsigned long long)io_fault_matching_ops(f),
                 (unsigned long long)(io_fault_op_count(f, IO_OP_SYNC) - syncs));
    io_fault_free(f);
    healthy_reopen_check(dir, o, "after a failed WAL fsync");
    oracle_free(o);
    test_rmrf(dir);
}

static void test_failed_wal_fsync_is_final(void **state)
{
    (void)state;
    for (uint64_t nth = 1; nth <= 4; nth++) {
        failed_wal_sync(KURA_SYNC, nth);
        failed_wal_sync(KURA_RELAXED, nth);
    }
}

/* The canary of the rules themselves: a short write of the 3rd WAL append really fails that
 * write, really leaves half a record on disk, and that half record is never replayed. */
/* The end of a WAL segment's data: one past its last non-zero byte (segments are
 * preallocated with zeros in sync mode, so the file size says nothing). */
static int64_t data_end(const char *path)
{
    size_t n = 0;
    uint8_t *p = scratch_read(path, &n);
    while (n > 0 && p[n - 1] == 0)
        n--;
    free(p);
    return (int64_t)n;
}

static void test_canary_rule_fires(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("fault-canary");
    io_fault *f = io_fault_new(nosync_env());
    kura_options opts = fi_options(f, KURA_SYNC);
    kura_db *db;
    kura_tree *tree;
    kura_tree_options topts = {.partitions = 1};
    assert_kura_ok(kura_open(dir, &opts, &db));
    assert_kura_ok(kura_tree_open(db, "t", &topts, &tree));
    oracle *o = fi_oracle();
    assert_kura_ok(oracle_route(o, tree));
    char *pdir = scratch_join(dir, "t/p0000"), *wal[4];
    size_t nwal = scratch_find(pdir, ".log", wal, 4);
    assert_int_equal(nwal, 1);
    /* append #1 is the segment's preallocation (sync mode), then one append per write */
    io_fault_rule rule = {.at = 4, .op_mask = 1u << IO_OP_APPEND,
                          .kind_mask = 1u << IO_KIND_WAL, .error = IO_FAULT_SHORT_WRITE};
    io_fault_set_rule(f, &rule);
    assert_kura_ok(oracle_run(o, tree, 0, NULL));
    assert_kura_ok(oracle_run(o, tree, 0, NULL));
    int64_t before = data_end(wal[0]);
    assert_kura_status(oracle_run(o, tree, 0, NULL), KURA_E_IO);
    assert_int_equal(io_fault_injected(f), 1);
    int64_t after = data_end(wal[0]);
    fprintf(stderr, "fault canary: the short write left %lld of a record's bytes in %s\n",
            (long long)(after - before), wal[0]);
    assert_true(after > before); /* half a record reached the file */
    kura_close(db);
    io_fault_free(f);
    healthy_reopen_check(dir, o, "after a short WAL write");
    scratch_free_paths(wal, nwal);
    free(pdir);
    oracle_free(o);
    test_rmrf(dir);
}

static int setup(void **state)
{
    (void)state;
    g_seed = test_seed();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canary_rule_fires),
        cmocka_unit_test(test_failed_wal_fsync_is_final),
        cmocka_unit_test(test_eio_every_operation),
        cmocka_unit_test(test_enospc_every_operation),
        cmocka_unit_test(test_short_write_every_operation),
        cmocka_unit_test(test_disk_full_from_every_operation),
        cmocka_unit_test(test_faults_during_recovery),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

/*
 * crash_powerloss_test.c - simulated power loss at every cut point of a workload, at every
 * named crash point, and during recovery itself (util/io_fault.h).
 *
 * The workload (crash/oracle.h: puts, deletes and batches of one writer, or of three writer
 * threads) runs on io_fault over a no-sync POSIX env (crash/nosync_env.h) in a 2-partition
 * database with 256 KiB memtables and an L0 trigger of 2, with an explicit kura_tree_flush
 * and kura_tree_compact in the middle, so it opens and creates the database, commits WAL
 * groups, flushes in the background and on demand, compacts, rotates manifests and closes.
 * One clean run counts its mutating I/O operations (M, about a thousand). Then for each cut
 * point n = 1..M, twice (the loss mode alternates, so each n gets both), then random n:
 *
 *   1. a fresh directory and fault env; io_fault_crash_at_op(n, FREEZE): the n-th mutating
 *      operation and everything after it fail, as if the machine stopped there;
 *   2. the workload runs until an operation fails; the model records what was acknowledged;
 *   3. kura_close, then io_fault_power_loss, alternating DROP (unsynced bytes vanish) and
 *      TEAR (a random part of them survives, the cut sector may be garbage), seeded;
 *   4. every fourth cut: the reopen itself is crashed at a random operation, followed by a
 *      second power loss (the other mode);
 *   5. reopen on a fresh env and oracle_check: every acknowledged write is there, each
 *      writer's state is a prefix of its commit order, no value is wrong.
 *
 * Named crash points are armed the same way (several hits of each, during the workload and
 * during the reopen), and a recovery sweep crashes the reopen of a few crashed states at each
 * of its operations. The canary runs the workload with KURA_RELAXED durability (nothing is
 * synced per write) while still counting every return as acknowledged: after a DROP power
 * loss the checker must report lost acknowledged writes.
 *
 * Reproduce a failure with the printed KURA_TEST_SEED; KURA_TEST_CUT=n runs the sweep's cut
 * point n only.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash/nosync_env.h"
#include "crash/oracle.h"
#include "crash/scratch.h"
#include "util/io_fault.h"
#include "util/thread.h"

enum { NPARTS = 2, NKEYS = 300, OPS_A = 150, OPS_B = 150, OPS_C = 100, MT_WRITERS = 3,
       MT_OPS = 120, MIN_CUTS = 2000, MIN_MT_CUTS = 150, CLEAN_RUNS = 3, CUT_TRIES = 5 };

static uint64_t g_seed;

static const char *const k_points[] = {
    "wal.after_append",        "wal.after_sync",          "flush.after_table",
    "flush.after_manifest",    "compaction.after_tables", "compaction.after_manifest",
    "manifest.after_new",      "manifest.after_current",  "recovery.after_replay",
};
enum { NPOINTS = sizeof k_points / sizeof k_points[0] };

static kura_options pl_options(io_fault *f, kura_durability d)
{
    kura_options o;
    kura_options_init(&o);
    o.io = io_fault_env(f);
    o.durability = d;
    o.relaxed_sync_ms = 60000; /* the canary: never synced by time within the test */
    o.default_partitions = NPARTS;
    o.memtable_budget_bytes = 1 << 20; /* 256 KiB memtables */
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 256 << 10;
    o.sstable_target_bytes = 64 << 10;
    o.block_cache_bytes = 1 << 20;
    o.background_threads = 2;
    return o;
}

static oracle *pl_oracle(bool mt)
{
    oracle_config c;
    oracle_config_init(&c, g_seed);
    c.nthreads = mt ? MT_WRITERS : 1;
    c.keys_per_thread = NKEYS;
    c.min_value = 200;
    c.max_value = 6000;
    oracle *o = oracle_new(&c);
    assert_non_null(o);
    return o;
}

/* ---- the workload ----------------------------------------------------------------------- */

typedef struct mt_writer {
    oracle *o;
    kura_tree *tree;
    uint32_t t;
} mt_writer;

static void *mt_write_loop(void *arg)
{
    mt_writer *w = arg;
    for (int i = 0; i < MT_OPS; i++)
        if (oracle_run(w->o, w->tree, w->t, NULL) != KURA_OK)
            break; /* crashed: this writer stops at its first failure */
    return NULL;
}

/* Writer 0 runs n more ops unless s is already an error. */
static kura_status run_ops(oracle *o, kura_tree *tree, int n, kura_status s)
{
    for (int i = 0; i < n && s == KURA_OK; i++)
        s = oracle_run(o, tree, 0, NULL);
    return s;
}

static kura_status body(oracle *o, kura_tree *tree, bool mt)
{
    if (!mt) {
        kura_status s = run_ops(o, tree, OPS_A, KURA_OK);
        s = s == KURA_OK ? kura_tree_flush(tree) : s;
        s = run_ops(o, tree, OPS_B, s);
        s = s == KURA_OK ? kura_tree_compact(tree) : s;
        return run_ops(o, tree, OPS_C, s);
    }
    mt_writer w[MT_WRITERS];
    kthread th[MT_WRITERS];
    for (uint32_t t = 0; t < MT_WRITERS; t++) {
        w[t] = (mt_writer){o, tree, t};
        assert_true(kthread_start(&th[t], mt_write_loop, &w[t]));
    }
    kura_status s = kura_tree_flush(tree); /* while the writers write */
    s = s == KURA_OK ? kura_tree_compact(tree) : s;
    for (uint32_t t = 0; t < MT_WRITERS; t++)
        kthread_join(th[t]);
    return s;
}

/* Opens (creating) the database on f, runs the workload, closes. Errors are expected once a
 * crash is armed; the model records what was acknowledged. Returns the first error. */
static kura_status workload(const char *dir, io_fault *f, oracle *o, kura_durability d, bool mt)
{
    kura_options opts = pl_options(f, d);
    kura_db *db = NULL;
    kura_tree *tree = NULL;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK)
        return s;
    s = kura_tree_open(db, "t", NULL, &tree);
    if (s == KURA_OK) {
        assert_kura_ok(oracle_route(o, tree));
        s = body(o, tree, mt);
    }
    kura_status c = kura_close(db);
    return s != KURA_OK ? s : c;
}

/* Opens the database on a fresh healthy env and checks it against the model. *ops_out (if
 * not NULL) gets the mutating operations of the reopen and close. */
static bool reopen_check(const char *dir, oracle *o, uint64_t *ops_out, char *why, size_t cap)
{
    io_fault *f = io_fault_new(nosync_env());
    kura_options opts = pl_options(f, KURA_SYNC);
    kura_db *db;
    kura_tree *tree;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK) {
        snprintf(why, cap, "reopen failed: %s: %s", kura_status_str(s), kura_last_error());
        io_fault_free(f);
        return false;
    }
    assert_kura_ok(kura_tree_open(db, "t", NULL, &tree));
    assert_kura_ok(oracle_route(o, tree));
    bool ok = oracle_check(o, tree, false, why, cap);
    assert_kura_ok(kura_close(db));
    if (ops_out)
        *ops_out = io_fault_mutating_ops(f);
    io_fault_free(f);
    return ok;
}

/* Reopens on a fresh env armed to crash (at operation m, or at the nth passage of `point`),
 * closes, and cuts the power. Returns whether the crash triggered. */
static bool crashed_reopen(const char *dir, uint64_t m, const char *point, uint64_t nth,
                           io_loss_mode mode, uint64_t loss_seed)
{
    io_fault *f = io_fault_new(nosync_env());
    if (point)
        io_fault_crash_at(f, point, nth, IO_CRASH_FREEZE);
    else
        io_fault_crash_at_op(f, m, IO_CRASH_FREEZE);
    kura_options opts = pl_options(f, KURA_SYNC);
    kura_db *db = NULL;
    kura_tree *tree;
    if (kura_open(dir, &opts, &db) == KURA_OK) {
        kura_tree_open(db, "t", NULL, &tree);
        kura_close(db);
    }
    bool crashed = io_fault_crashed(f);
    io_fault_power_loss(f, mode, loss_seed);
    io_fault_free(f);
    return crashed;
}

/* ---- one cut ---------------------------------------------------------------------------- */

typedef struct cut_spec {
    uint64_t n;           /* crash before mutating op n (0: use point) */
    const char *point;    /* or at the nth passage of this crash point */
    uint64_t nth;
    io_loss_mode mode;
    bool mt;
    kura_durability durability;
    uint64_t reopen_m;    /* >0: crash the reopen at its op reopen_m */
    const char *reopen_point; /* or at this point's reopen_nth passage */
    uint64_t reopen_nth;
} cut_spec;

typedef struct cut_result {
    bool crashed;        /* the armed crash triggered during the workload */
    bool reopen_crashed; /* the crash armed for the reopen triggered */
    bool ok;      /* the check passed */
    char why[600];
} cut_result;

static const char *mode_str(io_loss_mode m)
{
    return m == IO_LOSS_DROP ? "DROP" : "TEAR";
}

static void cut(const cut_spec *c, cut_result *r)
{
    char *dir = test_mkdtemp("crash-powerloss");
    io_fault *f = io_fault_new(nosync_env());
    oracle *o = pl_oracle(c->mt);
    uint64_t loss_seed = g_seed ^ (c->n * 0x9e3779b97f4a7c15ull) ^ c->nth ^ c->reopen_m;
    if (c->point)
        io_fault_crash_at(f, c->point, c->nth, IO_CRASH_FREEZE);
    else
        io_fault_crash_at_op(f, c->n, IO_CRASH_FREEZE);
    workload(dir, f, o, c->durability, c->mt);
    r->crashed = io_fault_crashed(f);
    r->reopen_crashed = false;
    io_fault_power_loss(f, c->mode, loss_seed);
    io_fault_free(f);
    io_loss_mode other = c->mode == IO_LOSS_DROP ? IO_LOSS_TEAR : IO_LOSS_DROP;
    if (c->reopen_m || c->reopen_point)
        r->reopen_crashed = crashed_reopen(dir, c->reopen_m, c->reopen_point, c->reopen_nth,
                                           other, ~loss_seed);
    char why[480];
    r->ok = reopen_check(dir, o, NULL, why, sizeof why);
    snprintf(r->why, sizeof r->why, "%s (cut: op %llu, point %s#%llu, %s, reopen crash: op "
             "%llu, point %s#%llu; seed %llu)", r->ok ? "ok" : why,
             (unsigned long long)c->n, c->point ? c->point : "-", (unsigned long long)c->nth,
             mode_str(c->mode), (unsigned long long)c->reopen_m,
             c->reopen_point ? c->reopen_point : "-", (unsigned long long)c->reopen_nth,
             (unsigned long long)g_seed);
    oracle_free(o);
    test_rmrf(dir);
}

static void cut_must_pass(const cut_spec *c, cut_result *r)
{
    cut(c, r);
    if (!r->ok)
        fail_msg("%s", r->why);
}

/* A clean run: the number of mutating operations, the passages of every crash point, and
 * the mutating operations of reopening the result. */
static uint64_t clean_run(bool mt, kura_durability d, uint64_t hits_out[NPOINTS],
                          uint64_t *reopen_ops_out)
{
    char *dir = test_mkdtemp("crash-powerloss-clean");
    io_fault *f = io_fault_new(nosync_env());
    oracle *o = pl_oracle(mt);
    assert_kura_ok(workload(dir, f, o, d, mt));
    uint64_t n = io_fault_mutating_ops(f);
    for (int i = 0; hits_out && i < NPOINTS; i++)
        hits_out[i] = io_fault_point_hits(f, k_points[i]);
    io_fault_free(f);
    char why[512];
    if (!reopen_check(dir, o, reopen_ops_out, why, sizeof why))
        fail_msg("clean run: %s", why);
    oracle_free(o);
    test_rmrf(dir);
    return n;
}

static int setup(void **state)
{
    (void)state;
    g_seed = test_seed();
    return 0;
}

/* ---- the tests -------------------------------------------------------------------------- */

/* Of the single-writer clean runs: the fewest mutating operations any of them made (where
 * background work lands may change the count; so far it never has), and of the first one the
 * crash point passages and the mutating operations of reopening its result. */
static uint64_t g_ops, g_hits[NPOINTS], g_reopen_ops;

static void need_clean_run(void)
{
    if (!g_ops) {
        g_ops = clean_run(false, KURA_SYNC, g_hits, &g_reopen_ops);
        for (int i = 1; i < CLEAN_RUNS; i++) {
            uint64_t n = clean_run(false, KURA_SYNC, NULL, NULL);
            if (n != g_ops)
                fprintf(stderr, "powerloss: clean runs made %llu and %llu mutating operations\n",
                        (unsigned long long)g_ops, (unsigned long long)n);
            g_ops = n < g_ops ? n : g_ops;
        }
        fprintf(stderr, "powerloss: the workload has %llu mutating operations; crash point "
                        "passages:", (unsigned long long)g_ops);
        for (int i = 0; i < NPOINTS; i++)
            fprintf(stderr, " %s=%llu", k_points[i], (unsigned long long)g_hits[i]);
        fprintf(stderr, "; a reopen has %llu\n", (unsigned long long)g_reopen_ops);
    }
}

/* Cut points n = 1, 2, ..., M (evenly spread when scaled down), then again with the other
 * loss mode, then random ones (up to M + 10: some past the end, which must not crash).
 *
 * Every cut point within the clean runs' M must crash the workload: a sweep that cuts nothing
 * checks nothing. A run that ended before its cut point (a background job that landed
 * elsewhere and made fewer operations) is checked like any other and then repeated, up to
 * CUT_TRIES runs, until one reaches it. */
static void test_sweep_cut_points(void **state)
{
    (void)state;
    need_clean_run();
    for (int i = 0; i < NPOINTS; i++)
        if (!g_hits[i])
            fail_msg("the workload never passes crash point %s", k_points[i]);
    uint64_t cuts = scratch_scaled(MIN_CUTS), rng = g_seed ^ 0x5eed, crashed = 0, reopens = 0,
             repeats = 0;
    const char *only = getenv("KURA_TEST_CUT");
    for (uint64_t i = 0; i < cuts; i++) {
        cut_spec c = {.durability = KURA_SYNC};
        c.n = cuts <= g_ops ? 1 + i * g_ops / cuts
                            : (i < 2 * g_ops ? i % g_ops + 1 : 1 + test_rand(&rng) % (g_ops + 10));
        c.mode = (c.n + i / g_ops) % 2 ? IO_LOSS_TEAR : IO_LOSS_DROP;
        c.reopen_m = i % 4 == 3 ? 1 + test_rand(&rng) % (g_reopen_ops + 1) : 0;
        if (only && strtoull(only, NULL, 0) != c.n)
            continue;
        cut_result r;
        cut_must_pass(&c, &r);
        for (int t = 1; t < CUT_TRIES && !r.crashed && c.n <= g_ops; t++, repeats++)
            cut_must_pass(&c, &r);
        if (!r.crashed && c.n <= g_ops)
            fail_msg("cut point %llu: none of %d runs reached it, though every clean run made "
                     "%llu or more mutating operations (seed %llu)", (unsigned long long)c.n,
                     CUT_TRIES, (unsigned long long)g_ops, (unsigned long long)g_seed);
        crashed += r.crashed;
        reopens += r.reopen_crashed;
    }
    fprintf(stderr, "powerloss: %llu cut points, %llu crashed the workload (%llu runs "
                    "repeated), %llu also crashed the reopen\n", (unsigned long long)cuts,
            (unsigned long long)crashed, (unsigned long long)repeats,
            (unsigned long long)reopens);
}

/* Every named crash point, several passages each, both loss modes; then the points of
 * recovery while reopening a crashed database. */
static void test_named_crash_points(void **state)
{
    (void)state;
    need_clean_run();
    for (int p = 0; p < NPOINTS; p++) {
        uint64_t h = g_hits[p], nths[5] = {1, 2, 3, h / 2, h}, crashed = 0;
        for (int k = 0; k < 5; k++) {
            if (!nths[k] || nths[k] > h || (k > 0 && nths[k] <= nths[k - 1]))
                continue;
            for (int mode = 0; mode < 2; mode++) {
                cut_spec c = {.point = k_points[p], .nth = nths[k], .mode = (io_loss_mode)mode,
                              .durability = KURA_SYNC};
                cut_result r;
                cut_must_pass(&c, &r);
                crashed += r.crashed;
            }
        }
        if (!crashed)
            fail_msg("no run crashed at %s", k_points[p]);
    }
    static const char *const recovery_points[] = {"manifest.after_new", "manifest.after_current",
                                                  "recovery.after_replay"};
    for (int p = 0; p < 3; p++)
        for (uint64_t nth = 1; nth <= NPARTS; nth++) {
            cut_spec c = {.n = g_ops / 2 + nth, .mode = (io_loss_mode)(nth % 2),
                          .durability = KURA_SYNC, .reopen_point = recovery_points[p],
                          .reopen_nth = nth};
            cut_result r;
            cut_must_pass(&c, &r);
            if (!r.reopen_crashed)
                fail_msg("the reopen did not pass %s %llu times", recovery_points[p],
                         (unsigned long long)nth);
        }
}

/* A few crashed states, each reopened with a crash at every operation of its recovery. */
static void test_recovery_sweep(void **state)
{
    (void)state;
    need_clean_run();
    uint64_t runs = 0, stride = (uint64_t)(1.0 / scratch_scale() + 0.5);
    stride = stride ? stride : 1;
    for (int s = 1; s <= 3; s++) {
        char *tmpl = test_mkdtemp("crash-powerloss-tmpl");
        io_fault *f = io_fault_new(nosync_env());
        oracle *o = pl_oracle(false);
        io_fault_crash_at_op(f, g_ops * (uint64_t)s / 4, IO_CRASH_FREEZE);
        workload(tmpl, f, o, KURA_SYNC, false);
        assert_true(io_fault_crashed(f));
        io_fault_power_loss(f, (io_loss_mode)(s % 2), g_seed + (uint64_t)s);
        io_fault_free(f);
        char *work = test_mkdtemp("crash-powerloss-work"), why[512];
        uint64_t reopen_ops = 0;
        scratch_copy_dir(tmpl, work);
        if (!reopen_check(work, o, &reopen_ops, why, sizeof why))
            fail_msg("state %d: %s", s, why);
        for (uint64_t m = 1; m <= reopen_ops + 1; m += stride) {
            test_rmrf(work);
            work = test_mkdtemp("crash-powerloss-work");
            scratch_copy_dir(tmpl, work);
            crashed_reopen(work, m, NULL, 0, (io_loss_mode)(m % 2), g_seed ^ m);
            if (!reopen_check(work, o, NULL, why, sizeof why))
                fail_msg("state %d, reopen crashed at op %llu of %llu (seed %llu): %s", s,
                         (unsigned long long)m, (unsigned long long)reopen_ops,
                         (unsigned long long)g_seed, why);
            runs++;
        }
        test_rmrf(work);
        test_rmrf(tmpl);
        oracle_free(o);
    }
    fprintf(stderr, "powerloss: %llu crashed recoveries (3 states)\n", (unsigned long long)runs);
}

/* Three writer threads and a concurrent flush and compaction, cut at random operations. */
static void test_multithreaded_cuts(void **state)
{
    (void)state;
    uint64_t m = clean_run(true, KURA_SYNC, NULL, NULL), rng = g_seed ^ 0x3333, crashed = 0;
    uint64_t cuts = scratch_scaled(MIN_MT_CUTS);
    for (uint64_t i = 0; i < cuts; i++) {
        cut_spec c = {.n = 1 + test_rand(&rng) % m, .mode = (io_loss_mode)(i % 2), .mt = true,
                      .durability = KURA_SYNC};
        c.reopen_m = i % 4 == 3 ? 1 + test_rand(&rng) % 40 : 0;
        cut_result r;
        cut_must_pass(&c, &r);
        crashed += r.crashed;
    }
    fprintf(stderr, "powerloss: %llu multi-writer cut points (of %llu operations), %llu "
                    "crashed\n", (unsigned long long)cuts, (unsigned long long)m,
            (unsigned long long)crashed);
}

/* The canary: relaxed durability counted as acknowledged must be caught after DROP. */
static void test_canary_relaxed_durability(void **state)
{
    (void)state;
    uint64_t m = clean_run(false, KURA_RELAXED, NULL, NULL), rng = g_seed ^ 0xca, caught = 0;
    const char *first = NULL;
    char firstbuf[600];
    for (int i = 0; i < 10; i++) {
        cut_spec c = {.n = m / 4 + test_rand(&rng) % (m - m / 4), .mode = IO_LOSS_DROP,
                      .durability = KURA_RELAXED};
        cut_result r;
        cut(&c, &r);
        if (!r.ok && !caught++) {
            snprintf(firstbuf, sizeof firstbuf, "%s", r.why);
            first = firstbuf;
        }
    }
    if (!caught)
        fail_msg("relaxed writes counted as acknowledged survived 10 DROP power losses");
    fprintf(stderr, "powerloss canary: %llu of 10 relaxed runs caught, e.g. %s\n",
            (unsigned long long)caught, first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_cut_points),
        cmocka_unit_test(test_named_crash_points),
        cmocka_unit_test(test_recovery_sweep),
        cmocka_unit_test(test_multithreaded_cuts),
        cmocka_unit_test(test_canary_relaxed_durability),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

/*
 * crash_index_rebuild_test.c - crashes while kura_rebuild_index rebuilds an index, and while
 * kura_open rebuilds the indexes an earlier kura made (engine/table_rebuild.c,
 * index/shadow.c): simulated power loss at every I/O operation of the rebuilds, and kill -9
 * loops under concurrent writers.
 *
 * The table is crash/ixwork.h's "Tix" (the LSI ByLsk, the GSIs ByG and Multi). What must hold
 * after every crash, once the database is reopened:
 *   - every acknowledged write is there, nothing else (the model, crash/ixwork.h);
 *   - every index recomputed from the items equals its tree (crash/index_check.h): the
 *     definition names either the old trees or the complete new ones, never half-built ones;
 *   - the index trees in the catalog are exactly those the definitions name, each with its
 *     directory (ixw_check_trees): a rebuild cut short leaves no tree behind;
 *   - the indexes carry the flag of this kura (nothing is rebuilt at that open).
 *
 * Power loss, rebuilds: one writer on util/io_fault (no-sync env): CreateTable, 150 writes, a
 * flush of the table and a checkpoint of its indexes (the WAL so far is deleted: a recovery
 * must rely on the rebuilt index's durable checkpoint), kura_rebuild_index of ByG, 40 writes,
 * of ByLsk, 40 writes, close. A clean run finds the
 * mutating operations of each rebuild; every one of them is a cut point (DROP and TEAR
 * alternating; every fourth cut also crashes the reopen), plus cut points spread over the
 * whole workload.
 *
 * Power loss, upgrade: a database whose index trees lack the flag bit 4 (the catalog rewritten
 * as an earlier kura left it) and whose indexes are damaged (crash/ixdamage.h); its reopen
 * rebuilds all three. Every mutating operation of that reopen is a cut point; after each, a
 * clean reopen must finish the job: the damage is gone and every index tree has the flag.
 *
 * Kill -9: the database starts with ~3400 items. Each round forks a child that opens it,
 * starts 4 writers (PutItem, UpdateItem, DeleteItem, BatchWriteItem) and rebuilds the three
 * indexes in turn until it is killed, 0-100 ms after the writers started; the parent reopens,
 * checks and commits. The kills must have cut at least a few rebuilds of a GSI and of the LSI.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crash/ixdamage.h"
#include "crash/ixk9.h"
#include "crash/ixwork.h"
#include "crash/k9pipe.h"
#include "crash/nosync_env.h"
#include "crash/scratch.h"
#include "engine/table.h"
#include "engine/table_index.h"
#include "util/crc32c.h"
#include "util/io_fault.h"
#include "util/thread.h"

enum { NWRITERS = 4, NKEYS = 999, K9_PAD = 1500, MIN_KILLS = 30, PL_KEYS = 60, PL_PAD = 2000,
       PL_OPS = 150, PL_DURING = 40, MIN_SPREAD = 40, WAIT_MS = 60000 };

static uint64_t g_seed;
static uint64_t g_leftovers; /* directories of dropped trees at the last check */

static ixw *new_model(uint32_t nwriters, uint32_t nkeys, uint32_t pad)
{
    ixw_config c = {.seed = g_seed, .nwriters = nwriters, .keys_per_writer = nkeys,
                    .pad_max = pad, .durable_acks = true};
    ixw *w = ixw_new(&c);
    assert_non_null(w);
    return w;
}

/* Items (committing with `commit`), indexes, trees, flags. */
static bool check_db(kura_db *db, const char *dir, ixw *w, bool commit, char *why, size_t cap)
{
    kura_stats st;
    kura_get_stats(db, &st);
    if (st.indexes_rebuilt_at_open) {
        snprintf(why, cap, "%llu indexes rebuilt at open: a tree without this kura's flag",
                 (unsigned long long)st.indexes_rebuilt_at_open);
        return false;
    }
    return ixw_check(w, db, commit, why, cap) && ixw_check_indexes(db, WAIT_MS, why, cap) &&
           ixw_check_trees(db, dir, &g_leftovers, why, cap);
}

/* ---- power loss during kura_rebuild_index -------------------------------------------------- */

static kura_options pl_options(io_fault *f)
{
    kura_options o;
    kura_options_init(&o);
    o.io = io_fault_env(f);
    o.durability = KURA_SYNC;
    o.default_partitions = 2;
    o.memtable_budget_bytes = 1 << 20;
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 128 << 10;
    o.sstable_target_bytes = 32 << 10;
    o.block_cache_bytes = 1 << 20;
    o.background_threads = 2;
    return o;
}

static kura_status run_ops(ixw *w, kura_db *db, int n, char *why, size_t cap)
{
    kura_status s = KURA_OK;
    for (int i = 0; i < n && s == KURA_OK; i++)
        s = ixw_run(w, db, 0, why, cap);
    return s;
}

/* Flushes the table's tree and checkpoints its indexes: the base WAL written so far is
 * deleted, so a recovery can only rely on durable checkpoints. */
static kura_status flush_and_checkpoint(kura_db *db)
{
    kura_table *t;
    kura_status s = table_acquire(db, IXW_TABLE, &t);
    if (s != KURA_OK)
        return s;
    s = kura_tree_flush(t->tree);
    table_release(t);
    return s == KURA_OK ? table_index_checkpoint(db, IXW_TABLE) : s;
}

/* [first, last] mutating operations of the rebuild of ByG and of ByLsk. */
typedef struct pl_windows {
    uint64_t w[2][2];
} pl_windows;

static void pl_workload(const char *dir, io_fault *f, ixw *w, pl_windows *win_out)
{
    kura_options opts = pl_options(f);
    kura_db *db = NULL;
    char why[1024];
    pl_windows win = {{{0}}};
    if (kura_open(dir, &opts, &db) != KURA_OK)
        return;
    kura_status s = ixw_create_table(db, why, sizeof why);
    s = s == KURA_OK ? run_ops(w, db, PL_OPS, why, sizeof why) : s;
    s = s == KURA_OK ? flush_and_checkpoint(db) : s; /* the WAL so far is released */
    const char *rebuilt[2] = {"ByG", "ByLsk"};
    for (int k = 0; k < 2 && s == KURA_OK; k++) {
        win.w[k][0] = io_fault_mutating_ops(f) + 1;
        s = kura_rebuild_index(db, IXW_TABLE, rebuilt[k]);
        win.w[k][1] = io_fault_mutating_ops(f);
        s = s == KURA_OK ? run_ops(w, db, PL_DURING, why, sizeof why) : s;
    }
    kura_close(db);
    if (win_out)
        *win_out = win;
}

static bool pl_reopen_check(const char *dir, ixw *w, uint64_t *ops_out, char *why, size_t cap)
{
    io_fault *f = io_fault_new(nosync_env());
    kura_options opts = pl_options(f);
    kura_db *db;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK) {
        snprintf(why, cap, "reopen failed: %s: %s", kura_status_str(s), kura_last_error());
        io_fault_free(f);
        return false;
    }
    bool ok = check_db(db, dir, w, false, why, cap);
    assert_kura_ok(kura_close(db));
    if (ops_out)
        *ops_out = io_fault_mutating_ops(f);
    io_fault_free(f);
    return ok;
}

/* Opens dir on an env that crashes at mutating operation m, then loses power. */
static void pl_crashed_open(const char *dir, uint64_t m, io_loss_mode mode, uint64_t seed)
{
    io_fault *f = io_fault_new(nosync_env());
    io_fault_crash_at_op(f, m, IO_CRASH_FREEZE);
    kura_options opts = pl_options(f);
    kura_db *db = NULL;
    if (kura_open(dir, &opts, &db) == KURA_OK)
        kura_close(db);
    io_fault_power_loss(f, mode, seed);
    io_fault_free(f);
}

static bool pl_cut(uint64_t n, io_loss_mode mode, uint64_t reopen_m, bool *crashed_out,
                   char *why, size_t cap)
{
    char *dir = test_mkdtemp("crash-index-rebuild-pl");
    io_fault *f = io_fault_new(nosync_env());
    ixw *w = new_model(1, PL_KEYS, PL_PAD);
    uint64_t seed = g_seed ^ (n * 0x9e3779b97f4a7c15ull) ^ reopen_m;
    io_fault_crash_at_op(f, n, IO_CRASH_FREEZE);
    pl_workload(dir, f, w, NULL);
    *crashed_out = io_fault_crashed(f);
    io_fault_power_loss(f, mode, seed);
    io_fault_free(f);
    if (reopen_m)
        pl_crashed_open(dir, reopen_m, mode == IO_LOSS_DROP ? IO_LOSS_TEAR : IO_LOSS_DROP, ~seed);
    char buf[1200];
    bool ok = pl_reopen_check(dir, w, NULL, buf, sizeof buf);
    snprintf(why, cap, "%s (cut before op %llu, %s, reopen crash at op %llu; seed %llu)",
             ok ? "ok" : buf, (unsigned long long)n, mode == IO_LOSS_DROP ? "DROP" : "TEAR",
             (unsigned long long)reopen_m, (unsigned long long)g_seed);
    ixw_free(w);
    test_rmrf(dir);
    return ok;
}

static void test_powerloss_during_rebuild(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-index-rebuild-clean");
    io_fault *f = io_fault_new(nosync_env());
    ixw *w = new_model(1, PL_KEYS, PL_PAD);
    pl_windows win;
    pl_workload(dir, f, w, &win);
    uint64_t m = io_fault_mutating_ops(f), reopen_ops = 0;
    io_fault_free(f);
    char why[1600];
    if (!pl_reopen_check(dir, w, &reopen_ops, why, sizeof why))
        fail_msg("clean run: %s", why);
    assert_true(ixw_next(w, 0) == PL_OPS + 2 * PL_DURING + 1); /* every op ran */
    ixw_free(w);
    test_rmrf(dir);
    assert_true(win.w[0][1] > win.w[0][0] && win.w[1][1] > win.w[1][0]);
    uint64_t stride = (uint64_t)(1.0 / scratch_scale() + 0.5);
    uint64_t nspread = scratch_scaled(MIN_SPREAD), rng = g_seed ^ 0x4eb, cuts = 0, crashed = 0;
    uint64_t with_leftovers = 0;
    const char *only = getenv("KURA_TEST_CUT"); /* replay one cut point */
    stride = stride ? stride : 1;
    for (int k = 0; k <= 2; k++) {
        uint64_t first = k < 2 ? win.w[k][0] : 0, last = k < 2 ? win.w[k][1] : nspread - 1;
        for (uint64_t i = first; i <= last; i += k < 2 ? stride : 1) {
            uint64_t n = k < 2 ? i : 1 + i * m / nspread;
            uint64_t reopen_m = cuts % 4 == 3 ? 1 + test_rand(&rng) % (reopen_ops + 1) : 0;
            if (only && strtoull(only, NULL, 0) != n) {
                cuts++;
                continue;
            }
            bool hit;
            if (!pl_cut(n, cuts % 2 ? IO_LOSS_TEAR : IO_LOSS_DROP, reopen_m, &hit, why,
                        sizeof why))
                fail_msg("cut %llu: %s", (unsigned long long)cuts + 1, why);
            crashed += hit;
            with_leftovers += g_leftovers > 0;
            cuts++;
        }
    }
    fprintf(stderr, "crash_index_rebuild powerloss: %llu cuts (ByG ops %llu-%llu, ByLsk ops "
                    "%llu-%llu, of %llu), %llu crashed the workload; %llu cuts left the "
                    "directory of a dropped index tree on disk\n",
            (unsigned long long)cuts, (unsigned long long)win.w[0][0],
            (unsigned long long)win.w[0][1], (unsigned long long)win.w[1][0],
            (unsigned long long)win.w[1][1], (unsigned long long)m,
            (unsigned long long)crashed, (unsigned long long)with_leftovers);
    if (!only)
        assert_true(crashed >= cuts * 9 / 10);
}

/* ---- power loss during the rebuild at open of an earlier kura's indexes --------------------- */

/* The template: the table with PL_OPS writes, each index damaged, closed, its catalog as an
 * earlier kura left it. */
static void up_template(const char *dir, ixw *w)
{
    io_fault *f = io_fault_new(nosync_env());
    kura_options opts = pl_options(f);
    kura_db *db;
    char why[1024];
    assert_kura_ok(kura_open(dir, &opts, &db));
    if (ixw_create_table(db, why, sizeof why) != KURA_OK ||
        run_ops(w, db, PL_OPS, why, sizeof why) != KURA_OK)
        fail_msg("template: %s", why);
    for (int i = 0; i < 3; i++)
        for (int k = IXD_EXTRA; k <= IXD_MISSING; k++)
            assert_kura_ok(ixd_damage(db, IXW_TABLE, IXW_INDEXES[i], (ixd_kind)k, 1,
                                      g_seed + (uint64_t)(i * 3 + k)));
    if (ixw_check_indexes(db, WAIT_MS, why, sizeof why))
        fail_msg("template: the damage does not show");
    assert_kura_ok(kura_close(db));
    io_fault_free(f);
    ixd_catalog_rewrite(dir, ixd_as_old_kura);
}

/* A clean open of dir: it rebuilds what is left, and then every index is whole and flagged.
 * *rebuilt_out: how many the open rebuilt; *ops_out: its mutating operations. */
static bool up_reopen_check(const char *dir, ixw *w, uint64_t *rebuilt_out, uint64_t *ops_out,
                            char *why, size_t cap)
{
    io_fault *f = io_fault_new(nosync_env());
    kura_options opts = pl_options(f);
    kura_db *db;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK) {
        snprintf(why, cap, "reopen failed: %s: %s", kura_status_str(s), kura_last_error());
        io_fault_free(f);
        return false;
    }
    uint64_t open_ops = io_fault_mutating_ops(f);
    kura_stats st;
    kura_get_stats(db, &st);
    bool ok = ixw_check(w, db, false, why, cap) && ixw_check_indexes(db, WAIT_MS, why, cap) &&
              ixw_check_trees(db, dir, &g_leftovers, why, cap);
    assert_kura_ok(kura_close(db));
    io_fault_free(f);
    size_t n, unflagged;
    ixd_catalog_index_trees(dir, &n, &unflagged);
    if (ok && (n != 3 || unflagged)) {
        snprintf(why, cap, "%zu index trees, %zu without the flag", n, unflagged);
        ok = false;
    }
    *rebuilt_out = st.indexes_rebuilt_at_open;
    if (ops_out)
        *ops_out = open_ops;
    return ok;
}

static void test_powerloss_during_upgrade(void **state)
{
    (void)state;
    char *tmpl = test_mkdtemp("crash-index-rebuild-old");
    ixw *w = new_model(1, PL_KEYS, PL_PAD);
    up_template(tmpl, w);
    char *dir = test_mkdtemp("crash-index-rebuild-up"), why[1600];
    char *copy = scratch_join(dir, "db");
    scratch_copy_dir(tmpl, copy);
    uint64_t rebuilt, m;
    if (!up_reopen_check(copy, w, &rebuilt, &m, why, sizeof why))
        fail_msg("clean upgrade: %s", why);
    assert_int_equal(rebuilt, 3);
    test_rmrf(dir);
    free(copy);
    uint64_t stride = (uint64_t)(1.0 / scratch_scale() + 0.5), cuts = 0, finished = 0;
    stride = stride ? stride : 1;
    for (uint64_t n = 1; n <= m; n += stride, cuts++) {
        dir = test_mkdtemp("crash-index-rebuild-up");
        copy = scratch_join(dir, "db");
        scratch_copy_dir(tmpl, copy);
        io_loss_mode mode = cuts % 2 ? IO_LOSS_TEAR : IO_LOSS_DROP;
        pl_crashed_open(copy, n, mode, g_seed ^ n);
        if (!up_reopen_check(copy, w, &rebuilt, NULL, why, sizeof why))
            fail_msg("cut before op %llu of the upgrading open (%s, seed %llu): %s",
                     (unsigned long long)n, mode == IO_LOSS_DROP ? "DROP" : "TEAR",
                     (unsigned long long)g_seed, why);
        finished += rebuilt;
        test_rmrf(dir);
        free(copy);
    }
    fprintf(stderr, "crash_index_rebuild upgrade: %llu cuts of the open's %llu mutating "
                    "operations; the reopens after them rebuilt %llu indexes\n",
            (unsigned long long)cuts, (unsigned long long)m, (unsigned long long)finished);
    assert_true(finished > 0);
    ixw_free(w);
    test_rmrf(tmpl);
}

/* ---- kill -9 ---------------------------------------------------------------------------- */

/* K9_EVENT: v[0] 1 before a rebuild, 2 after it; v[1] the index (IXW_INDEXES). */

static void child_main(const char *dir, const ixw *w, int fd, uint32_t first)
{
    kura_options opts = ixk9_options();
    kura_db *db = NULL;
    if (kura_open(dir, &opts, &db) != KURA_OK)
        k9_fail(fd, "kura_open", kura_last_error());
    ixk9_start_writers(w, db, fd, NWRITERS, false);
    k9_msg m = {.type = K9_STARTED};
    k9_send(fd, &m);
    for (uint32_t i = first;; i++) {
        m = (k9_msg){.type = K9_EVENT, .v = {1, i % 3}};
        k9_send(fd, &m);
        if (kura_rebuild_index(db, IXW_TABLE, IXW_INDEXES[i % 3]) != KURA_OK)
            k9_fail(fd, "kura_rebuild_index", kura_last_error());
        m.v[0] = 2;
        k9_send(fd, &m);
    }
}

typedef struct round_state {
    ixw *w;
    bool started;
    uint64_t phase, index, rebuilds, acks;
    char error[sizeof(((k9_msg *)0)->text) + 1];
} round_state;

static void handle(void *arg, const k9_msg *m)
{
    round_state *r = arg;
    switch (m->type) {
    case K9_STARTED:
        r->started = true;
        break;
    case K9_ACK:
        if (m->opno != ixw_next(r->w, m->thread))
            fail_msg("writer %u acknowledged op %llu out of order", m->thread,
                     (unsigned long long)m->opno);
        ixw_attempt(r->w, m->thread);
        ixw_ack(r->w, m->thread);
        r->acks++;
        break;
    case K9_EVENT:
        r->phase = m->v[0];
        r->index = m->v[1];
        r->rebuilds += m->v[0] == 2;
        break;
    case K9_ERROR:
        memcpy(r->error, m->text, sizeof m->text);
        break;
    default:
        fail_msg("unknown message type %u", m->type);
    }
}

static void run_round(const char *dir, round_state *r, uint32_t first, uint64_t *rng)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child_main(dir, r->w, p[1], first);
        _exit(0);
    }
    close(p[1]);
    uint64_t delay_ns = (test_rand(rng) % 101) * 1000000u;
    bool alive = k9_pump(p[0], handle, r, &r->started, 0, delay_ns);
    k9_finish(p[0], pid, alive, handle, r, r->error);
    for (uint32_t t = 0; t < NWRITERS; t++)
        ixw_attempt(r->w, t); /* the op after the last ack may have run */
}

static bool k9_reopen_check(const char *dir, ixw *w, char *why, size_t cap)
{
    kura_options opts = ixk9_options();
    kura_db *db;
    assert_kura_ok(kura_open(dir, &opts, &db));
    bool ok = check_db(db, dir, w, true, why, cap);
    kura_stats st;
    kura_get_stats(db, &st);
    assert_int_equal(st.readonly_partitions, 0);
    assert_kura_ok(kura_close(db));
    return ok;
}

static void test_kill9_during_rebuild(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-index-rebuild-kill9");
    ixw *w = new_model(NWRITERS, NKEYS, K9_PAD);
    kura_options opts = ixk9_options();
    opts.durability = KURA_RELAXED;
    kura_db *db;
    char why[1600];
    assert_kura_ok(kura_open(dir, &opts, &db));
    if (ixw_create_table(db, why, sizeof why) != KURA_OK)
        fail_msg("CreateTable: %s", why);
    for (uint32_t t = 0; t < NWRITERS; t++)
        for (int i = 0; i < 2000; i++)
            if (ixw_run(w, db, t, why, sizeof why) != KURA_OK)
                fail_msg("populate: %s", why);
    assert_kura_ok(kura_close(db)); /* a clean close makes it durable */
    if (!k9_reopen_check(dir, w, why, sizeof why))
        fail_msg("after populating: %s", why);
    uint64_t rng = g_seed ^ 0x4eb9, kills = scratch_scaled(MIN_KILLS), cut[3] = {0, 0, 0};
    uint64_t rebuilds = 0, acks = 0, i = 0;
    for (; i < 4 * kills && (i < kills || !cut[0] || !cut[1] || !cut[2]); i++) {
        round_state r = {.w = w};
        run_round(dir, &r, (uint32_t)i, &rng);
        if (!k9_reopen_check(dir, w, why, sizeof why))
            fail_msg("kill %llu (seed %llu; %s a rebuild of %s): %s", (unsigned long long)i + 1,
                     (unsigned long long)g_seed, r.phase == 1 ? "during" : "not during",
                     IXW_INDEXES[r.index], why);
        cut[r.index] += r.phase == 1;
        rebuilds += r.rebuilds;
        acks += r.acks;
    }
    fprintf(stderr, "crash_index_rebuild kill9: %llu kills, %llu rebuilds finished, kills during "
                    "a rebuild of %s %llu, %s %llu, %s %llu; %llu acks\n",
            (unsigned long long)i, (unsigned long long)rebuilds, IXW_INDEXES[0],
            (unsigned long long)cut[0], IXW_INDEXES[1], (unsigned long long)cut[1],
            IXW_INDEXES[2], (unsigned long long)cut[2], (unsigned long long)acks);
    if (!cut[0] || !cut[1] || !cut[2])
        fail_msg("no kill landed during a rebuild of every index (seed %llu)",
                 (unsigned long long)g_seed);
    ixw_free(w);
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
        cmocka_unit_test(test_powerloss_during_rebuild),
        cmocka_unit_test(test_powerloss_during_upgrade),
        cmocka_unit_test(test_kill9_during_rebuild),
    };
    const char *only = getenv("KURA_TEST_ONLY"); /* one test by name */
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, setup, NULL);
}

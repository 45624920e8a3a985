/*
 * crash_index_test.c - secondary indexes across crashes: kill -9 loops of a child writing
 * with four threads, and simulated power loss at every cut point of a writing workload, in
 * sync and relaxed durability. After each crash the database is reopened, every item is
 * checked against the model of acknowledged writes (crash/ixwork.h), and every index (an
 * LSI, a GSI, a GSI with a multi-attribute key) is recomputed from the items and compared
 * with its tree (crash/index_check.h): no missing, extra or stale entry; and the rest of the
 * integrity check (kura_check: every file, the item collections) finds nothing either.
 *
 * Kill -9. The table "Tix" (crash/ixwork.h) lives in a database with 4 partitions of 128 KiB
 * memtables (the minimum budget), so base flushes, index checkpoints (an index's memtables
 * switched and flushed with the base sequences they hold), WAL segment retention and
 * compactions run all the time. Each round forks a child that opens the database (which
 * replays the retained WAL into the indexes), starts 4 writer threads issuing PutItem,
 * UpdateItem, DeleteItem and BatchWriteItem through kura_execute, and writes (writer, op)
 * into a pipe after each call returns OK (crash/k9pipe.h); in every other round a fifth thread
 * also checkpoints the indexes every ~20 ms (table_index_checkpoint), the other rounds only
 * have the checkpoints full index memtables make. The parent kills the child with SIGKILL
 * 5-150 ms after it started writing (one round in ten 0-40 ms after the fork, often inside
 * the index replay), reads the rest of the pipe, reopens the database in-process and checks:
 * every acknowledged write is there, an unacknowledged one is there or not (BatchWriteItem's
 * items each on their own), nothing else is; then index_check_table, which first waits for
 * the GSIs. The check commits what it found and the next child continues. Kill points are
 * timing; the verdict must not be: the loop requires only that the kills cut acknowledged
 * writes, flushes and index checkpoints, and runs on (up to 4 x) until they have.
 *
 * Power loss. The same table in 2 partitions on util/io_fault over the no-sync env; one
 * writer issues 240 operations, with a flush of the table and an index checkpoint after op
 * 100, another checkpoint after op 180 (and a kura_sync every 40 ops in relaxed mode). A
 * clean run counts the mutating I/O operations M and those of the two checkpoints and of the
 * close (which checkpoints too); the sweep cuts before every one of the latter and before
 * 100 more spread over 1..M (FREEZE), cuts the power (DROP or TEAR, alternating), every fourth
 * time crashes the reopen too and cuts the power again, and reopens and checks. In relaxed
 * mode acknowledged writes since the last kura_sync may be lost, but no index may keep an
 * entry of a lost write: an index checkpoint must sync the base WALs before its memtables
 * become durable (index/apply.c rt_maybe_checkpoint).
 *
 * Canaries: a child that acknowledges before it writes (the item check must report a lost
 * acknowledged write within a few kills); relaxed writes counted as durable (some DROP power
 * loss must lose one); a delete that bypasses the item layer, so its index entries stay (the
 * index check must report an extra entry).
 */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crash/ixk9.h"
#include "crash/ixwork.h"
#include "crash/k9pipe.h"
#include "crash/nosync_env.h"
#include "crash/scratch.h"
#include "engine/table.h"
#include "engine/table_index.h"
#include "util/io_fault.h"
#include "util/thread.h"

enum { NWRITERS = 4, NKEYS = 40, K9_PAD = 2000, MIN_KILLS = 100, CANARY_ROUNDS = 20,
       PL_OPS = 240, PL_PAD = 2500, PL_SYNC_EVERY = 40, PL_CKPT_A = 100, PL_CKPT_B = 180,
       MIN_SPREAD = 100, WAIT_MS = 60000 };

static uint64_t g_seed;

/* ---- kill -9 ---------------------------------------------------------------------------- */

/* K9_STATS: v[0] flushes, v[1] compactions, v[2] index checkpoints, v[3] GSI lag */

typedef enum { CHILD_NORMAL, CHILD_ACK_FIRST } child_mode;

static ixw *new_model(uint32_t nwriters, bool durable_acks, uint32_t pad_max)
{
    ixw_config c = {.seed = g_seed, .nwriters = nwriters, .keys_per_writer = NKEYS,
                    .pad_max = pad_max, .durable_acks = durable_acks};
    ixw *w = ixw_new(&c);
    assert_non_null(w);
    return w;
}

/* checkpointer: one index checkpoint every ~20 ms besides the ones full memtables make */
static void child_main(const char *dir, const ixw *w, int fd, child_mode mode, bool checkpointer)
{
    kura_options opts = ixk9_options();
    kura_db *db = NULL;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK)
        k9_fail(fd, "kura_open", kura_last_error());
    k9_msg m = {.type = K9_STARTED};
    k9_send(fd, &m);
    ixk9_start_writers(w, db, fd, NWRITERS, mode == CHILD_ACK_FIRST);
    for (int round = 1;; round++) { /* report background work until killed */
        if (checkpointer && round % 4 == 0 && (s = table_index_checkpoint(db, IXW_TABLE)) != KURA_OK)
            k9_fail(fd, "checkpoint", kura_last_error());
        kura_stats st;
        kura_get_stats(db, &st);
        m = (k9_msg){.type = K9_STATS, .v = {st.flushes, st.compactions}};
        for (int i = 0; i < 3; i++) {
            kura_index_stats is;
            if (kura_index_stats_get(db, IXW_TABLE, IXW_INDEXES[i], &is) == KURA_OK) {
                m.v[2] += is.checkpoints;
                m.v[3] += is.lag_writes;
            }
        }
        k9_send(fd, &m);
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

typedef struct round_state {
    ixw *w;
    bool checkpointer; /* the child checkpoints the indexes every ~20 ms */
    bool started, early;
    uint64_t delay_ms;
    char error[sizeof(((k9_msg *)0)->text) + 1];
    uint64_t acks, flushes, compactions, checkpoints, max_lag;
} round_state;

typedef struct totals {
    uint64_t kills, early_kills, acks, flushes, compactions, checkpoints, max_lag;
} totals;

static void handle(void *arg, const k9_msg *m)
{
    round_state *r = arg;
    switch (m->type) {
    case K9_STARTED:
        r->started = true;
        break;
    case K9_ACK:
        if (m->opno != ixw_next(r->w, m->thread))
            fail_msg("writer %u acknowledged op %llu out of order (next %llu)", m->thread,
                     (unsigned long long)m->opno,
                     (unsigned long long)ixw_next(r->w, m->thread));
        ixw_attempt(r->w, m->thread);
        ixw_ack(r->w, m->thread);
        r->acks++;
        break;
    case K9_STATS:
        r->flushes = m->v[0];
        r->compactions = m->v[1];
        r->checkpoints = m->v[2];
        r->max_lag = m->v[3] > r->max_lag ? m->v[3] : r->max_lag;
        break;
    case K9_ERROR:
        memcpy(r->error, m->text, sizeof m->text);
        break;
    default:
        fail_msg("unknown message type %u", m->type);
    }
}

static void run_round(const char *dir, round_state *r, child_mode mode, uint64_t *rng,
                      totals *tot)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child_main(dir, r->w, p[1], mode, r->checkpointer);
        _exit(0);
    }
    close(p[1]);
    r->early = mode == CHILD_NORMAL && test_rand(rng) % 10 == 0;
    uint64_t delay_ns = (r->early ? test_rand(rng) % 41 : 5 + test_rand(rng) % 146) * 1000000u;
    r->delay_ms = delay_ns / 1000000u;
    bool alive = k9_pump(p[0], handle, r, &r->started, r->early ? know_ns() + delay_ns : 0,
                         delay_ns);
    k9_finish(p[0], pid, alive, handle, r, r->error);
    /* each writer's op after its last acknowledged one may have run */
    for (uint32_t t = 0; t < NWRITERS; t++)
        ixw_attempt(r->w, t);
    tot->kills++;
    tot->early_kills += !r->started;
    tot->acks += r->acks;
    tot->flushes += r->flushes;
    tot->compactions += r->compactions;
    tot->checkpoints += r->checkpoints;
    tot->max_lag = r->max_lag > tot->max_lag ? r->max_lag : tot->max_lag;
}

/* Reopens (creating the database and table the first time), checks items and indexes, and
 * commits what it found. */
static bool k9_reopen_check(const char *dir, ixw *w, char *why, size_t cap)
{
    kura_options opts = ixk9_options();
    kura_db *db;
    assert_kura_ok(kura_open(dir, &opts, &db));
    char buf[512];
    if (ixw_create_table(db, buf, sizeof buf) != KURA_OK)
        fail_msg("CreateTable: %s", buf);
    bool ok = ixw_check(w, db, true, why, cap) && ixw_check_indexes(db, WAIT_MS, why, cap);
    kura_stats st;
    kura_get_stats(db, &st);
    assert_int_equal(st.readonly_partitions, 0);
    assert_kura_ok(kura_close(db));
    return ok;
}

static bool k9_covered(const totals *tot, uint64_t kills)
{
    return tot->acks > 0 && (kills < MIN_KILLS || (tot->flushes > 0 && tot->checkpoints > 0));
}

static void test_kill9_loop(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-index-kill9");
    uint64_t rng = g_seed ^ 0x6b39, kills = scratch_scaled(MIN_KILLS);
    ixw *w = new_model(NWRITERS, true, K9_PAD);
    totals tot = {0};
    char why[1200];
    assert_true(k9_reopen_check(dir, w, why, sizeof why));
    for (uint64_t i = 0; i < 4 * kills && (i < kills || !k9_covered(&tot, kills)); i++) {
        round_state r = {.w = w, .checkpointer = i % 2};
        run_round(dir, &r, CHILD_NORMAL, &rng, &tot);
        if (!k9_reopen_check(dir, w, why, sizeof why))
            fail_msg("kill %llu (seed %llu; killed %s, planned %llu ms after %s): %s",
                     (unsigned long long)i + 1, (unsigned long long)g_seed,
                     r.started ? "while writing" : "before writing started",
                     (unsigned long long)r.delay_ms, r.early ? "the fork" : "the first write",
                     why);
    }
    fprintf(stderr,
            "crash_index kill9: %llu kills (%llu before writing started), %llu acks; the "
            "children ran %llu flushes, %llu compactions, %llu index checkpoints, GSI lag up "
            "to %llu writes\n",
            (unsigned long long)tot.kills, (unsigned long long)tot.early_kills,
            (unsigned long long)tot.acks, (unsigned long long)tot.flushes,
            (unsigned long long)tot.compactions, (unsigned long long)tot.checkpoints,
            (unsigned long long)tot.max_lag);
    if (!k9_covered(&tot, kills))
        fail_msg("%llu kills (seed %llu) cut %llu acknowledged writes, %llu flushes, %llu "
                 "index checkpoints: at least one of each was needed",
                 (unsigned long long)tot.kills, (unsigned long long)g_seed,
                 (unsigned long long)tot.acks, (unsigned long long)tot.flushes,
                 (unsigned long long)tot.checkpoints);
    ixw_free(w);
    test_rmrf(dir);
}

/* The canary: acknowledging before the write must be caught. */
static void test_kill9_canary_ack_first(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-index-kill9-canary");
    uint64_t rng = g_seed ^ 0xca;
    ixw *w = new_model(NWRITERS, true, K9_PAD);
    totals tot = {0};
    char why[1200];
    int caught_at = 0;
    assert_true(k9_reopen_check(dir, w, why, sizeof why));
    for (int i = 1; i <= CANARY_ROUNDS && !caught_at; i++) {
        round_state r = {.w = w};
        run_round(dir, &r, CHILD_ACK_FIRST, &rng, &tot);
        if (!k9_reopen_check(dir, w, why, sizeof why))
            caught_at = i;
    }
    if (!caught_at)
        fail_msg("the checker missed acknowledgements sent before the write in %d kills "
                 "(seed %llu)", CANARY_ROUNDS, (unsigned long long)g_seed);
    fprintf(stderr, "crash_index kill9 canary: caught at kill %d: %s\n", caught_at, why);
    ixw_free(w);
    test_rmrf(dir);
}

/* ---- power loss ------------------------------------------------------------------------- */

static kura_options pl_options(io_fault *f, kura_durability d)
{
    kura_options o;
    kura_options_init(&o);
    o.io = io_fault_env(f);
    o.durability = d;
    o.relaxed_sync_ms = 60000; /* relaxed: synced only by the workload's kura_sync */
    o.default_partitions = 2;
    o.memtable_budget_bytes = 1 << 20; /* the minimum: 256 KiB memtables */
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 128 << 10;
    o.sstable_target_bytes = 32 << 10;
    o.block_cache_bytes = 1 << 20;
    o.background_threads = 2;
    return o;
}

/* Flushes the table's own tree (its WAL segment rolls; the old one stays for the indexes). */
static kura_status flush_table(kura_db *db)
{
    kura_table *t;
    kura_status s = table_acquire(db, IXW_TABLE, &t);
    if (s != KURA_OK)
        return s;
    s = kura_tree_flush(t->tree);
    table_release(t);
    return s;
}

/* The mutating operations of the clean run's index checkpoints (and the flush before the
 * first, and the close), [first, last]: the sweep cuts each of them. */
enum { PL_NWINDOWS = 3 };
typedef struct pl_windows {
    uint64_t w[PL_NWINDOWS][2];
} pl_windows;

/* Opens (creating) the database on f, creates the table, runs the writer with a flush of the
 * table and an index checkpoint at op PL_CKPT_A, another checkpoint at PL_CKPT_B, closes;
 * stops at the first failure. The model records what was acknowledged (and synced). */
static void pl_workload(const char *dir, io_fault *f, ixw *w, kura_durability d,
                        pl_windows *win_out)
{
    kura_options opts = pl_options(f, d);
    kura_db *db = NULL;
    char why[512];
    pl_windows win = {{{0}}};
    if (kura_open(dir, &opts, &db) != KURA_OK)
        return;
    kura_status s = ixw_create_table(db, why, sizeof why);
    for (int i = 0; i < PL_OPS && s == KURA_OK; i++) {
        s = ixw_run(w, db, 0, why, sizeof why);
        if (s == KURA_OK && (i == PL_CKPT_A || i == PL_CKPT_B)) {
            int k = i == PL_CKPT_B;
            win.w[k][0] = io_fault_mutating_ops(f) + 1;
            s = i == PL_CKPT_A ? flush_table(db) : KURA_OK;
            s = s == KURA_OK ? table_index_checkpoint(db, IXW_TABLE) : s;
            win.w[k][1] = io_fault_mutating_ops(f);
        }
        if (s == KURA_OK && d == KURA_RELAXED && i % PL_SYNC_EVERY == PL_SYNC_EVERY - 1 &&
            (s = kura_sync(db)) == KURA_OK)
            ixw_durable(w);
    }
    win.w[2][0] = io_fault_mutating_ops(f) + 1;
    if (kura_close(db) == KURA_OK && s == KURA_OK)
        ixw_durable(w); /* a clean close syncs */
    win.w[2][1] = io_fault_mutating_ops(f);
    if (win_out)
        *win_out = win;
}

/* Reopens on a fresh healthy env and checks items and indexes. */
static bool pl_reopen_check(const char *dir, ixw *w, kura_durability d, uint64_t *ops_out,
                            char *why, size_t cap)
{
    io_fault *f = io_fault_new(nosync_env());
    kura_options opts = pl_options(f, d);
    kura_db *db;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK) {
        snprintf(why, cap, "reopen failed: %s: %s", kura_status_str(s), kura_last_error());
        io_fault_free(f);
        return false;
    }
    bool ok = ixw_check(w, db, false, why, cap) && ixw_check_indexes(db, WAIT_MS, why, cap);
    assert_kura_ok(kura_close(db));
    if (ops_out)
        *ops_out = io_fault_mutating_ops(f);
    io_fault_free(f);
    return ok;
}

/* Reopens on an env that crashes before its mutating op m, closes, cuts the power. */
static void pl_crashed_reopen(const char *dir, kura_durability d, uint64_t m, io_loss_mode mode,
                              uint64_t seed)
{
    io_fault *f = io_fault_new(nosync_env());
    io_fault_crash_at_op(f, m, IO_CRASH_FREEZE);
    kura_options opts = pl_options(f, d);
    kura_db *db = NULL;
    if (kura_open(dir, &opts, &db) == KURA_OK)
        kura_close(db);
    io_fault_power_loss(f, mode, seed);
    io_fault_free(f);
}

typedef struct pl_cut {
    kura_durability d;
    bool durable_acks; /* the canary: relaxed acks counted as durable */
    uint64_t n;        /* crash before mutating op n */
    io_loss_mode mode;
    uint64_t reopen_m; /* > 0: crash the reopen at its op reopen_m too */
} pl_cut;

/* One cut; returns whether the check passed (why: the case and what failed). */
static bool pl_run_cut(const pl_cut *c, bool *crashed_out, char *why, size_t cap)
{
    char *dir = test_mkdtemp("crash-index-pl");
    io_fault *f = io_fault_new(nosync_env());
    ixw *w = new_model(1, c->durable_acks, PL_PAD);
    uint64_t seed = g_seed ^ (c->n * 0x9e3779b97f4a7c15ull) ^ c->reopen_m;
    io_fault_crash_at_op(f, c->n, IO_CRASH_FREEZE);
    pl_workload(dir, f, w, c->d, NULL);
    *crashed_out = io_fault_crashed(f);
    io_fault_power_loss(f, c->mode, seed);
    io_fault_free(f);
    if (c->reopen_m)
        pl_crashed_reopen(dir, c->d, c->reopen_m,
                          c->mode == IO_LOSS_DROP ? IO_LOSS_TEAR : IO_LOSS_DROP, ~seed);
    char buf[1200];
    bool ok = pl_reopen_check(dir, w, c->d, NULL, buf, sizeof buf);
    snprintf(why, cap, "%s (%s, cut before op %llu, %s, reopen crash at op %llu; seed %llu)",
             ok ? "ok" : buf, c->d == KURA_SYNC ? "sync" : "relaxed", (unsigned long long)c->n,
             c->mode == IO_LOSS_DROP ? "DROP" : "TEAR", (unsigned long long)c->reopen_m,
             (unsigned long long)g_seed);
    ixw_free(w);
    test_rmrf(dir);
    return ok;
}

/* A clean run: its mutating operations, those of its checkpoints, and those of reopening its
 * result. */
static uint64_t pl_clean_run(kura_durability d, uint64_t *reopen_ops_out, pl_windows *win_out)
{
    char *dir = test_mkdtemp("crash-index-pl-clean");
    io_fault *f = io_fault_new(nosync_env());
    ixw *w = new_model(1, d == KURA_SYNC, PL_PAD);
    pl_workload(dir, f, w, d, win_out);
    uint64_t n = io_fault_mutating_ops(f);
    io_fault_free(f);
    char why[1200];
    if (!pl_reopen_check(dir, w, d, reopen_ops_out, why, sizeof why))
        fail_msg("clean run: %s", why);
    assert_true(ixw_next(w, 0) == PL_OPS + 1); /* every op ran */
    ixw_free(w);
    test_rmrf(dir);
    return n;
}

/* Every operation of the checkpoint windows (every 1/scale-th when scaled down), then
 * `spread` cut points spread evenly over the whole workload. */
static void pl_sweep(kura_durability d, uint64_t spread)
{
    pl_windows win;
    uint64_t reopen_ops = 0, m = pl_clean_run(d, &reopen_ops, &win);
    uint64_t stride = (uint64_t)(1.0 / scratch_scale() + 0.5), nspread = scratch_scaled(spread);
    uint64_t rng = g_seed ^ 0x5eed ^ d, crashed = 0, cuts = 0, in_windows = 0;
    stride = stride ? stride : 1;
    for (int k = 0; k <= PL_NWINDOWS; k++) {
        uint64_t first = k < PL_NWINDOWS ? win.w[k][0] : 0;
        uint64_t last = k < PL_NWINDOWS ? win.w[k][1] : nspread - 1;
        for (uint64_t i = first; i <= last; i += k < PL_NWINDOWS ? stride : 1) {
            pl_cut c = {.d = d, .durable_acks = d == KURA_SYNC};
            c.n = k < PL_NWINDOWS ? i : 1 + i * m / nspread;
            c.mode = cuts % 2 ? IO_LOSS_TEAR : IO_LOSS_DROP;
            c.reopen_m = cuts % 4 == 3 ? 1 + test_rand(&rng) % (reopen_ops + 1) : 0;
            bool hit;
            char why[1600];
            if (!pl_run_cut(&c, &hit, why, sizeof why))
                fail_msg("cut %llu: %s", (unsigned long long)cuts + 1, why);
            crashed += hit;
            in_windows += k < PL_NWINDOWS;
            cuts++;
        }
    }
    fprintf(stderr, "crash_index powerloss (%s): %llu cuts (%llu in the checkpoints: ops "
                    "%llu-%llu, %llu-%llu, close %llu-%llu) over %llu mutating operations, "
                    "%llu crashed the workload; a reopen has %llu\n",
            d == KURA_SYNC ? "sync" : "relaxed", (unsigned long long)cuts,
            (unsigned long long)in_windows, (unsigned long long)win.w[0][0],
            (unsigned long long)win.w[0][1], (unsigned long long)win.w[1][0],
            (unsigned long long)win.w[1][1], (unsigned long long)win.w[2][0],
            (unsigned long long)win.w[2][1], (unsigned long long)m,
            (unsigned long long)crashed, (unsigned long long)reopen_ops);
    assert_true(in_windows > 0);
    assert_true(crashed >= cuts * 9 / 10);
}

static void test_powerloss_sync(void **state)
{
    (void)state;
    pl_sweep(KURA_SYNC, MIN_SPREAD);
}

static void test_powerloss_relaxed(void **state)
{
    (void)state;
    pl_sweep(KURA_RELAXED, MIN_SPREAD);
}

/* The canary: relaxed writes counted as durable must be caught after some DROP. */
static void test_powerloss_canary_relaxed_acks(void **state)
{
    (void)state;
    uint64_t m = pl_clean_run(KURA_RELAXED, NULL, NULL), rng = g_seed ^ 0xca, caught = 0;
    char first[1600] = "";
    for (int i = 0; i < 10; i++) {
        pl_cut c = {.d = KURA_RELAXED, .durable_acks = true, .mode = IO_LOSS_DROP,
                    .n = m / 4 + test_rand(&rng) % (m - m / 4)};
        bool hit;
        char why[1600];
        if (!pl_run_cut(&c, &hit, why, sizeof why) && !caught++)
            snprintf(first, sizeof first, "%s", why);
    }
    if (!caught)
        fail_msg("relaxed writes counted as durable survived 10 DROP power losses (seed %llu)",
                 (unsigned long long)g_seed);
    fprintf(stderr, "crash_index powerloss canary: %llu of 10 caught, e.g. %s\n",
            (unsigned long long)caught, first);
}

/* The canary of the index check: a delete that bypasses the item layer (no image of the old
 * item in the batch) leaves the item's index entries behind. */
static void test_index_check_canary(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-index-canary");
    kura_options opts = ixk9_options();
    kura_db *db;
    assert_kura_ok(kura_open(dir, &opts, &db));
    char why[1200];
    if (ixw_create_table(db, why, sizeof why) != KURA_OK)
        fail_msg("CreateTable: %s", why);
    ixw *w = new_model(1, true, K9_PAD);
    for (int i = 0; i < 200; i++)
        if (ixw_run(w, db, 0, why, sizeof why) != KURA_OK)
            fail_msg("%s", why);
    if (!ixw_check(w, db, false, why, sizeof why) || !ixw_check_indexes(db, WAIT_MS, why,
                                                                        sizeof why))
        fail_msg("before the planted bug: %s", why);
    /* delete, under the item layer, the first item that has an entry in ByG */
    kura_table *t;
    assert_kura_ok(table_acquire(db, IXW_TABLE, &t));
    kura_iter *it;
    assert_kura_ok(kura_iter_new(t->tree, NULL, &it));
    bool deleted = false;
    for (kura_iter_seek_first(it); kura_iter_valid(it) && !deleted; kura_iter_next(it)) {
        size_t klen, vlen;
        const void *k = kura_iter_key(it, &klen);
        const char *v = kura_iter_value(it, &vlen);
        if (memmem(v, vlen, "gpk", 3) && memmem(v, vlen, "gsk", 3)) {
            char *key = malloc(klen);
            memcpy(key, k, klen);
            assert_kura_ok(kura_delete(t->tree, NULL, key, klen));
            free(key);
            deleted = true;
        }
    }
    kura_iter_free(it);
    table_release(t);
    assert_true(deleted);
    if (ixw_check_indexes(db, WAIT_MS, why, sizeof why))
        fail_msg("the index check missed the entries of an item deleted without its image");
    if (!strstr(why, "extra entry"))
        fail_msg("expected an extra entry: %s", why);
    fprintf(stderr, "crash_index index-check canary: %s\n", why);
    assert_kura_ok(kura_close(db));
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
        cmocka_unit_test(test_index_check_canary),
        cmocka_unit_test(test_kill9_loop),
        cmocka_unit_test(test_kill9_canary_ack_first),
        cmocka_unit_test(test_powerloss_sync),
        cmocka_unit_test(test_powerloss_relaxed),
        cmocka_unit_test(test_powerloss_canary_relaxed_acks),
    };
    const char *only = getenv("KURA_TEST_ONLY"); /* one test by name, e.g. test_kill9_loop */
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, setup, NULL);
}

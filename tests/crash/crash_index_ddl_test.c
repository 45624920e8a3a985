/*
 * crash_index_ddl_test.c - crashes while UpdateTable adds a GSI (its backfill) or deletes one
 * (engine/table_gsi.c, engine/table_index.c), under concurrent writes: kill -9 loops and
 * simulated power loss at every I/O operation of the two.
 *
 * The table is crash/ixwork.h's "Tix" (an LSI, the GSIs ByG and Multi); the index added and
 * deleted is ByX (HASH x, RANGE lsk, ALL). What must hold after every crash, once the reopened
 * database has settled (DescribeTable shows ByX ACTIVE or no ByX: a CREATING one is built
 * again from scratch at open, a DELETING one is dropped):
 *   - every acknowledged write is there, nothing else (the model, crash/ixwork.h);
 *   - every index, ByX included when it is there, recomputed from the items equals its tree
 *     (crash/index_check.h), and no index reports an error;
 *   - the index trees on disk (<db>/idx-<table>-<index>) are exactly those of the table's
 *     indexes: a deleted index leaves no tree, a created one has its own.
 *
 * Kill -9: the database starts with ~3400 items. Each round forks a child that opens it and
 * issues UpdateTable Create ByX (odd rounds, if ByX is absent) or Delete ByX (even rounds, if
 * ByX is ACTIVE), then starts 4 writers (PutItem, UpdateItem, DeleteItem, BatchWriteItem that
 * change x and lsk too), and is killed 0-100 ms after the UpdateTable returned, so most kills
 * land during the backfill or the drop; the parent reopens, waits for ByX to settle, checks,
 * and commits. The kills must have cut at least one backfill and one drop (the loop runs on,
 * up to 4 x the minimum, until they have).
 *
 * Power loss: one writer on util/io_fault (no-sync env): CreateTable, 150 writes, UpdateTable
 * Create ByX, 40 writes during the backfill, wait for ACTIVE, 40 writes, Delete ByX, 40 writes,
 * wait until it is gone, close. One clean run finds the mutating operations from each
 * UpdateTable to its end; every one of them is a cut point (DROP and TEAR alternating; every
 * fourth cut also crashes the reopen), plus cut points spread over the whole workload.
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

enum { NWRITERS = 4, NKEYS = 999, K9_PAD = 1500, MIN_KILLS = 40, PL_KEYS = 60, PL_PAD = 2000,
       PL_OPS = 150, PL_DURING = 40, MIN_SPREAD = 40, SETTLE_MS = 60000, WAIT_MS = 60000 };

static uint64_t g_seed;

#define BYX "ByX"

static const char CREATE_BYX[] =
    "{\"TableName\":\"" IXW_TABLE "\",\"AttributeDefinitions\":[{\"AttributeName\":\"x\","
    "\"AttributeType\":\"N\"},{\"AttributeName\":\"lsk\",\"AttributeType\":\"N\"}],"
    "\"GlobalSecondaryIndexUpdates\":[{\"Create\":{\"IndexName\":\"" BYX "\",\"KeySchema\":["
    "{\"AttributeName\":\"x\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"lsk\",\"KeyType\":"
    "\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}}]}";

static const char DELETE_BYX[] =
    "{\"TableName\":\"" IXW_TABLE "\",\"GlobalSecondaryIndexUpdates\":[{\"Delete\":{"
    "\"IndexName\":\"" BYX "\"}}]}";

/* ---- ByX, and the index trees on disk ---------------------------------------------------- */

typedef enum { BYX_ABSENT, BYX_CREATING, BYX_ACTIVE, BYX_DELETING } byx_state;
static const char *const k_state[] = {"absent", "CREATING", "ACTIVE", "DELETING"};

/* ByX's state as DescribeTable shows it (no table: absent). */
static byx_state byx_status(kura_db *db)
{
    kura_table_description d;
    memset(&d, 0, sizeof d);
    if (kura_describe_table(db, IXW_TABLE, &d) != KURA_OK)
        return BYX_ABSENT;
    byx_state st = BYX_ABSENT;
    for (size_t i = 0; i < d.global_secondary_indexes_count; i++) {
        const kura_index_description *x = &d.global_secondary_indexes[i];
        if (strcmp(x->index_name, BYX))
            continue;
        st = !strcmp(x->index_status, "ACTIVE")     ? BYX_ACTIVE
             : !strcmp(x->index_status, "CREATING") ? BYX_CREATING
                                                    : BYX_DELETING;
    }
    kura_table_description_free(&d);
    return st;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits until ByX is ACTIVE or absent (a backfill or a drop in the background). */
static bool settle(kura_db *db, byx_state *st_out, char *why, size_t cap)
{
    byx_state st = byx_status(db);
    for (uint64_t end = know_ns() + SETTLE_MS * 1000000ull;
         (st == BYX_CREATING || st == BYX_DELETING) && know_ns() < end; st = byx_status(db))
        sleep_ms(1);
    *st_out = st;
    if (st == BYX_CREATING || st == BYX_DELETING) {
        snprintf(why, cap, "index %s still %s after %d ms", BYX, k_state[st], SETTLE_MS);
        return false;
    }
    return true;
}

/* Settles, then checks items (committing with `commit`), indexes and trees. */
/* Directories of dropped index trees on disk at the last check (see trees_match). */
static uint64_t g_leftovers;

static bool check_db(kura_db *db, const char *dir, ixw *w, bool commit, byx_state *st_out,
                     char *why, size_t cap)
{
    byx_state st = BYX_ABSENT;
    bool ok = settle(db, &st, why, cap) && ixw_check(w, db, commit, why, cap) &&
              ixw_check_indexes(db, WAIT_MS, why, cap) &&
              ixw_check_trees(db, dir, &g_leftovers, why, cap);
    if (ok && st == BYX_ACTIVE) { /* index_check_table checked it: it is in the table */
        kura_index_stats is;
        ok = kura_index_stats_get(db, IXW_TABLE, BYX, &is) == KURA_OK;
        if (!ok)
            snprintf(why, cap, "index %s is ACTIVE but has no statistics", BYX);
    }
    if (st_out)
        *st_out = st;
    return ok;
}

static kura_status exec(kura_db *db, const char *op, const char *body, char *why, size_t cap)
{
    char *out = NULL;
    size_t len = 0;
    kura_status s = kura_execute(db, op, body, strlen(body), &out, &len);
    if (s != KURA_OK)
        snprintf(why, cap, "%s: %s: %s", op, kura_status_str(s), out ? out : "");
    kura_free(out);
    return s;
}

static ixw *new_model(uint32_t nwriters, uint32_t nkeys, uint32_t pad)
{
    ixw_config c = {.seed = g_seed, .nwriters = nwriters, .keys_per_writer = nkeys,
                    .pad_max = pad, .durable_acks = true};
    ixw *w = ixw_new(&c);
    assert_non_null(w);
    return w;
}

/* ---- kill -9 ---------------------------------------------------------------------------- */

/* K9_EVENT: v[0] the UpdateTable issued (0 none, 1 Create, 2 Delete), v[1] ByX's state at
 * open. K9_STATS: v[0] ByX's state. */

static void child_main(const char *dir, const ixw *w, int fd, bool create)
{
    kura_options opts = ixk9_options();
    kura_db *db = NULL;
    if (kura_open(dir, &opts, &db) != KURA_OK)
        k9_fail(fd, "kura_open", kura_last_error());
    byx_state st = byx_status(db);
    k9_msg m = {.type = K9_EVENT, .v = {0, st}};
    char why[512];
    if (create && st == BYX_ABSENT) {
        if (exec(db, "UpdateTable", CREATE_BYX, why, sizeof why) != KURA_OK)
            k9_fail(fd, "UpdateTable Create", why);
        m.v[0] = 1;
    } else if (!create && st == BYX_ACTIVE) {
        if (exec(db, "UpdateTable", DELETE_BYX, why, sizeof why) != KURA_OK)
            k9_fail(fd, "UpdateTable Delete", why);
        m.v[0] = 2;
    }
    k9_send(fd, &m);
    m = (k9_msg){.type = K9_STARTED};
    k9_send(fd, &m);
    ixk9_start_writers(w, db, fd, NWRITERS, false);
    for (;;) {
        m = (k9_msg){.type = K9_STATS, .v = {byx_status(db)}};
        k9_send(fd, &m);
        sleep_ms(2);
    }
}

typedef struct round_state {
    ixw *w;
    bool started;
    uint64_t ddl, state_at_open, state_at_kill, acks;
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
        r->ddl = m->v[0];
        r->state_at_open = m->v[1];
        break;
    case K9_STATS:
        r->state_at_kill = m->v[0];
        break;
    case K9_ERROR:
        memcpy(r->error, m->text, sizeof m->text);
        break;
    default:
        fail_msg("unknown message type %u", m->type);
    }
}

static void run_round(const char *dir, round_state *r, bool create, uint64_t *rng)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child_main(dir, r->w, p[1], create);
        _exit(0);
    }
    close(p[1]);
    uint64_t delay_ns = (test_rand(rng) % 101) * 1000000u;
    bool alive = k9_pump(p[0], handle, r, &r->started, 0, delay_ns);
    k9_finish(p[0], pid, alive, handle, r, r->error);
    for (uint32_t t = 0; t < NWRITERS; t++)
        ixw_attempt(r->w, t); /* the op after the last ack may have run */
}

static bool k9_reopen_check(const char *dir, ixw *w, byx_state *st_out, char *why, size_t cap)
{
    kura_options opts = ixk9_options();
    kura_db *db;
    assert_kura_ok(kura_open(dir, &opts, &db));
    bool ok = check_db(db, dir, w, true, st_out, why, cap);
    kura_stats st;
    kura_get_stats(db, &st);
    assert_int_equal(st.readonly_partitions, 0);
    assert_kura_ok(kura_close(db));
    return ok;
}

/* The starting database: the table with ~3400 items, written in relaxed mode. */
static void populate(const char *dir, ixw *w)
{
    kura_options opts = ixk9_options();
    opts.durability = KURA_RELAXED;
    kura_db *db;
    char why[1024];
    assert_kura_ok(kura_open(dir, &opts, &db));
    if (ixw_create_table(db, why, sizeof why) != KURA_OK)
        fail_msg("CreateTable: %s", why);
    for (uint32_t t = 0; t < NWRITERS; t++)
        for (int i = 0; i < 2000; i++)
            if (ixw_run(w, db, t, why, sizeof why) != KURA_OK)
                fail_msg("populate: %s", why);
    assert_kura_ok(kura_close(db)); /* a clean close makes it durable */
}

static void test_kill9_during_index_ddl(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-index-ddl-kill9");
    ixw *w = new_model(NWRITERS, NKEYS, K9_PAD);
    populate(dir, w);
    char why[1600];
    byx_state st;
    if (!k9_reopen_check(dir, w, &st, why, sizeof why))
        fail_msg("after populating: %s", why);
    uint64_t rng = g_seed ^ 0xdd1, kills = scratch_scaled(MIN_KILLS), in_backfill = 0,
             in_drop = 0, creates = 0, deletes = 0, acks = 0;
    for (uint64_t i = 0; i < 4 * kills && (i < kills || !in_backfill || !in_drop); i++) {
        round_state r = {.w = w};
        run_round(dir, &r, i % 2 == 0, &rng);
        byx_state after;
        if (!k9_reopen_check(dir, w, &after, why, sizeof why))
            fail_msg("kill %llu (seed %llu; %s, %s at the kill, %s after the reopen): %s",
                     (unsigned long long)i + 1, (unsigned long long)g_seed,
                     r.ddl == 1 ? "Create issued" : r.ddl == 2 ? "Delete issued" : "no DDL",
                     k_state[r.state_at_kill], k_state[after], why);
        creates += r.ddl == 1;
        deletes += r.ddl == 2;
        in_backfill += r.state_at_kill == BYX_CREATING;
        in_drop += r.state_at_kill == BYX_DELETING;
        acks += r.acks;
    }
    fprintf(stderr, "crash_index_ddl kill9: %llu UpdateTable Create and %llu Delete; %llu kills "
                    "during a backfill, %llu during a drop; %llu acks; %llu directories of "
                    "dropped index trees left on disk\n",
            (unsigned long long)creates, (unsigned long long)deletes,
            (unsigned long long)in_backfill, (unsigned long long)in_drop,
            (unsigned long long)acks, (unsigned long long)g_leftovers);
    if (!in_backfill || !in_drop)
        fail_msg("no kill landed during a %s (seed %llu)", in_backfill ? "drop" : "backfill",
                 (unsigned long long)g_seed);
    ixw_free(w);
    test_rmrf(dir);
}

/* No crash: ByX created and dropped while 4 writers change items; after each settles, every
 * index matches the items. (The backfill inserts entries at its snapshot's sequence, older
 * than the writes the runtime applies meanwhile, while the index's memtables are flushed
 * and compacted.) */
typedef struct live_writer {
    ixw *w;
    kura_db *db;
    uint32_t t;
    bool *stop;
    char why[512];
    kura_status s;
} live_writer;

static void *live_write_loop(void *arg)
{
    live_writer *lw = arg;
    while (!__atomic_load_n(lw->stop, __ATOMIC_ACQUIRE) && lw->s == KURA_OK)
        lw->s = ixw_run(lw->w, lw->db, lw->t, lw->why, sizeof lw->why);
    return NULL;
}

static void test_backfill_under_writes(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-index-ddl-live");
    ixw *w = new_model(NWRITERS, NKEYS, K9_PAD);
    populate(dir, w);
    kura_options opts = ixk9_options();
    kura_db *db;
    assert_kura_ok(kura_open(dir, &opts, &db));
    char why[1600];
    for (int round = 0; round < 4; round++) {
        bool stop = false;
        live_writer lw[NWRITERS];
        kthread th[NWRITERS];
        for (uint32_t t = 0; t < NWRITERS; t++) {
            lw[t] = (live_writer){.w = w, .db = db, .t = t, .stop = &stop};
            assert_true(kthread_start(&th[t], live_write_loop, &lw[t]));
        }
        const char *req = round % 2 ? DELETE_BYX : CREATE_BYX;
        if (exec(db, "UpdateTable", req, why, sizeof why) != KURA_OK)
            fail_msg("round %d: %s", round, why);
        byx_state st;
        bool settled = settle(db, &st, why, sizeof why);
        __atomic_store_n(&stop, true, __ATOMIC_RELEASE);
        for (uint32_t t = 0; t < NWRITERS; t++) {
            kthread_join(th[t]);
            if (lw[t].s != KURA_OK)
                fail_msg("round %d: writer %u: %s", round, t, lw[t].why);
        }
        if (!settled || !check_db(db, dir, w, true, NULL, why, sizeof why))
            fail_msg("round %d (%s, seed %llu): %s", round, round % 2 ? "Delete" : "Create",
                     (unsigned long long)g_seed, why);
    }
    assert_kura_ok(kura_close(db));
    ixw_free(w);
    test_rmrf(dir);
}

/* ---- power loss ------------------------------------------------------------------------- */

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

/* [first, last] mutating operations of the Create (to ACTIVE) and the Delete (to gone). */
typedef struct pl_windows {
    uint64_t w[2][2];
} pl_windows;

static kura_status run_ops(ixw *w, kura_db *db, int n, char *why, size_t cap)
{
    kura_status s = KURA_OK;
    for (int i = 0; i < n && s == KURA_OK; i++)
        s = ixw_run(w, db, 0, why, cap);
    return s;
}

/* Waits until ByX is `want`; KURA_E_IO if the env crashed meanwhile (a stuck backfill). */
static kura_status wait_for(kura_db *db, io_fault *f, byx_state want)
{
    for (uint64_t end = know_ns() + SETTLE_MS * 1000000ull; know_ns() < end; sleep_ms(1)) {
        if (byx_status(db) == want)
            return KURA_OK;
        if (io_fault_crashed(f))
            return KURA_E_IO;
    }
    fail_msg("index %s never became %s on a healthy env", BYX, k_state[want]);
    return KURA_E_BUSY;
}

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
    win.w[0][0] = io_fault_mutating_ops(f) + 1;
    s = s == KURA_OK ? exec(db, "UpdateTable", CREATE_BYX, why, sizeof why) : s;
    s = s == KURA_OK ? run_ops(w, db, PL_DURING, why, sizeof why) : s;
    s = s == KURA_OK ? wait_for(db, f, BYX_ACTIVE) : s;
    win.w[0][1] = io_fault_mutating_ops(f);
    s = s == KURA_OK ? run_ops(w, db, PL_DURING, why, sizeof why) : s;
    win.w[1][0] = io_fault_mutating_ops(f) + 1;
    s = s == KURA_OK ? exec(db, "UpdateTable", DELETE_BYX, why, sizeof why) : s;
    s = s == KURA_OK ? run_ops(w, db, PL_DURING, why, sizeof why) : s;
    s = s == KURA_OK ? wait_for(db, f, BYX_ABSENT) : s;
    win.w[1][1] = io_fault_mutating_ops(f);
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
    bool ok = check_db(db, dir, w, false, NULL, why, cap);
    assert_kura_ok(kura_close(db));
    if (ops_out)
        *ops_out = io_fault_mutating_ops(f);
    io_fault_free(f);
    return ok;
}

static void pl_crashed_reopen(const char *dir, uint64_t m, io_loss_mode mode, uint64_t seed)
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
    char *dir = test_mkdtemp("crash-index-ddl-pl");
    io_fault *f = io_fault_new(nosync_env());
    ixw *w = new_model(1, PL_KEYS, PL_PAD);
    uint64_t seed = g_seed ^ (n * 0x9e3779b97f4a7c15ull) ^ reopen_m;
    io_fault_crash_at_op(f, n, IO_CRASH_FREEZE);
    pl_workload(dir, f, w, NULL);
    *crashed_out = io_fault_crashed(f);
    io_fault_power_loss(f, mode, seed);
    io_fault_free(f);
    if (reopen_m)
        pl_crashed_reopen(dir, reopen_m, mode == IO_LOSS_DROP ? IO_LOSS_TEAR : IO_LOSS_DROP,
                          ~seed);
    char buf[1200];
    bool ok = pl_reopen_check(dir, w, NULL, buf, sizeof buf);
    snprintf(why, cap, "%s (cut before op %llu, %s, reopen crash at op %llu; seed %llu)",
             ok ? "ok" : buf, (unsigned long long)n, mode == IO_LOSS_DROP ? "DROP" : "TEAR",
             (unsigned long long)reopen_m, (unsigned long long)g_seed);
    ixw_free(w);
    test_rmrf(dir);
    return ok;
}

static void test_powerloss_during_index_ddl(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-index-ddl-clean");
    io_fault *f = io_fault_new(nosync_env());
    ixw *w = new_model(1, PL_KEYS, PL_PAD);
    pl_windows win;
    pl_workload(dir, f, w, &win);
    uint64_t m = io_fault_mutating_ops(f), reopen_ops = 0;
    io_fault_free(f);
    char why[1600];
    if (!pl_reopen_check(dir, w, &reopen_ops, why, sizeof why))
        fail_msg("clean run: %s", why);
    assert_true(ixw_next(w, 0) == PL_OPS + 3 * PL_DURING + 1); /* every op ran */
    ixw_free(w);
    test_rmrf(dir);
    uint64_t stride = (uint64_t)(1.0 / scratch_scale() + 0.5);
    uint64_t nspread = scratch_scaled(MIN_SPREAD), rng = g_seed ^ 0x9dd1, cuts = 0, crashed = 0;
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
    fprintf(stderr, "crash_index_ddl powerloss: %llu cuts (Create ops %llu-%llu, Delete ops "
                    "%llu-%llu, of %llu), %llu crashed the workload; a reopen has %llu; %llu "
                    "cuts left the directory of a dropped index tree on disk\n",
            (unsigned long long)cuts, (unsigned long long)win.w[0][0],
            (unsigned long long)win.w[0][1], (unsigned long long)win.w[1][0],
            (unsigned long long)win.w[1][1], (unsigned long long)m,
            (unsigned long long)crashed, (unsigned long long)reopen_ops,
            (unsigned long long)with_leftovers);
    assert_true(win.w[0][1] >= win.w[0][0] && win.w[1][1] >= win.w[1][0]);
    if (!only)
        assert_true(crashed >= cuts * 9 / 10);
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
        cmocka_unit_test(test_backfill_under_writes),
        cmocka_unit_test(test_kill9_during_index_ddl),
        cmocka_unit_test(test_powerloss_during_index_ddl),
    };
    const char *only = getenv("KURA_TEST_ONLY"); /* one test by name */
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, setup, NULL);
}

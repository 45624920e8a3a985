/*
 * fault_index_test.c - EIO and ENOSPC at every I/O operation of a table's secondary indexes:
 * their trees' creation, the GSI applier's and the LSI hook's checkpoints (index memtables
 * flushed, the checkpoint recorded in the manifest), their compactions, index reads, and
 * their recovery at open.
 *
 * Sweep: for n = 1, 2, ... a fresh database (KURA_SYNC, 2 partitions) runs the workload on a
 * path-filtered fault env (crash/pathfault.h) that fails the n-th operation on a file or
 * directory of an index tree (<db>/idx-<table>-<index>/...), once, or from then on (a full
 * disk): CreateTable of crash/ixwork.h's table (an LSI, a GSI, a GSI with a multi-attribute
 * key), 150 writes through kura_execute with a flush of the table and index checkpoints
 * (table_index_checkpoint) after writes 50 and 100, waits for the GSIs, a Query of each index,
 * close. The workload stops at the first write that fails. Then:
 *   - the failure must be visible: a failed call (CreateTable, a write, a checkpoint, a wait,
 *     a Query, the close), an index whose kura_index_stats report an error, or a read-only
 *     partition; only failures of operations that lose nothing (unlink, list, close, size of
 *     obsolete files) may pass unseen;
 *   - after a reopen on a healthy env, every acknowledged write is there (the model), every
 *     index recomputed from the items equals its tree (crash/index_check.h) with no error,
 *     and the database takes writes and keeps its indexes right.
 * The sweep ends when 4 n in a row inject nothing (the count of index operations varies a
 * little with the applier's timing); it must have run at least 100 cases.
 *
 * Recovery: a database whose GSIs are behind (applier stopped, then closed) is reopened with
 * the n-th index operation of the reopen failing, for every n; then the healthy reopen and the
 * same checks.
 */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crash/ixwork.h"
#include "crash/nosync_env.h"
#include "crash/pathfault.h"
#include "crash/scratch.h"
#include "engine/table.h"
#include "engine/table_index.h"
#include "util/thread.h"

enum { NKEYS = 60, OPS = 150, CKPT_A = 50, CKPT_B = 100, WAIT_MS = 60000 };

static uint64_t g_seed;

static kura_options fi_options(io_env *env)
{
    kura_options o;
    kura_options_init(&o);
    o.io = env;
    o.durability = KURA_SYNC;
    o.default_partitions = 2;
    o.memtable_budget_bytes = 1 << 20;
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 128 << 10;
    o.sstable_target_bytes = 32 << 10;
    o.block_cache_bytes = 256 << 10;
    o.background_threads = 2;
    return o;
}

static ixw *fi_model(void)
{
    ixw_config c = {.seed = g_seed, .nwriters = 1, .keys_per_writer = NKEYS, .pad_max = 2000,
                    .durable_acks = true};
    ixw *w = ixw_new(&c);
    assert_non_null(w);
    return w;
}

static const char *err_str(int e)
{
    return e == EIO ? "EIO" : "ENOSPC";
}

/* ---- the workload ----------------------------------------------------------------------- */

typedef struct wl_result {
    const char *failed_call; /* the first call that failed, NULL if none */
    char msg[700];
    bool index_error;   /* an index reported an error in its statistics */
    uint64_t readonly;  /* read-only partitions at the end */
} wl_result;

static bool failed(wl_result *r, const char *call, kura_status s, const char *why)
{
    if (s == KURA_OK)
        return false;
    if (!r->failed_call) {
        r->failed_call = call;
        snprintf(r->msg, sizeof r->msg, "%s: %s", kura_status_str(s),
                 why ? why : kura_last_error());
    }
    return true;
}

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

static kura_status exec(kura_db *db, const char *op, const char *body, char *why, size_t cap)
{
    char *out = NULL;
    size_t len = 0;
    kura_status s = kura_execute(db, op, body, strlen(body), &out, &len);
    if (s != KURA_OK)
        snprintf(why, cap, "%s: %s", op, out ? out : "");
    kura_free(out);
    return s;
}

/* A Query of every index (reads of the index trees). */
static bool read_indexes(kura_db *db, wl_result *r)
{
    static const char *const queries[] = {
        "{\"TableName\":\"" IXW_TABLE "\",\"IndexName\":\"ByLsk\",\"KeyConditionExpression\":"
        "\"pk = :p\",\"ExpressionAttributeValues\":{\":p\":{\"S\":\"w0.p1\"}}}",
        "{\"TableName\":\"" IXW_TABLE "\",\"IndexName\":\"ByG\",\"KeyConditionExpression\":"
        "\"gpk = :g\",\"ExpressionAttributeValues\":{\":g\":{\"S\":\"g3\"}}}",
        "{\"TableName\":\"" IXW_TABLE "\",\"IndexName\":\"Multi\",\"KeyConditionExpression\":"
        "\"a = :a AND b = :b\",\"ExpressionAttributeValues\":{\":a\":{\"S\":\"a1\"},\":b\":"
        "{\"N\":\"1\"}}}",
    };
    char why[600];
    for (int i = 0; i < 3; i++)
        if (failed(r, "Query", exec(db, "Query", queries[i], why, sizeof why), why))
            return false;
    return true;
}

/* Create, write with checkpoints, wait, read, close; stops at the first failed write. */
static void workload(const char *dir, io_env *env, ixw *w, wl_result *r)
{
    kura_options opts = fi_options(env);
    kura_db *db = NULL;
    char why[600];
    memset(r, 0, sizeof *r);
    if (failed(r, "kura_open", kura_open(dir, &opts, &db), NULL))
        return;
    bool ok = !failed(r, "CreateTable", ixw_create_table(db, why, sizeof why), why);
    for (int i = 0; ok && i < OPS; i++) {
        ok = !failed(r, "write", ixw_run(w, db, 0, why, sizeof why), why);
        if (ok && i == CKPT_A)
            ok = !failed(r, "flush", flush_table(db), NULL);
        if (ok && (i == CKPT_A || i == CKPT_B))
            ok = !failed(r, "checkpoint", table_index_checkpoint(db, IXW_TABLE), NULL);
    }
    for (int i = 0; ok && i < 2; i++)
        ok = !failed(r, "kura_index_wait",
                     kura_index_wait(db, IXW_TABLE, IXW_GSIS[i], WAIT_MS), NULL);
    if (ok)
        read_indexes(db, r);
    for (int i = 0; i < 3; i++) {
        kura_index_stats st;
        if (kura_index_stats_get(db, IXW_TABLE, IXW_INDEXES[i], &st) == KURA_OK &&
            st.error != KURA_OK)
            r->index_error = true;
    }
    kura_stats st;
    kura_get_stats(db, &st);
    r->readonly = st.readonly_partitions;
    failed(r, "kura_close", kura_close(db), NULL);
}

/* Reopens on a healthy env: the model holds, the indexes match the items, and writes work. */
static void healthy_reopen_check(const char *dir, ixw *w, const char *ctx)
{
    kura_options opts = fi_options(nosync_env());
    kura_db *db;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK)
        fail_msg("%s: healthy reopen failed: %s: %s", ctx, kura_status_str(s),
                 kura_last_error());
    char why[1600];
    if (ixw_create_table(db, why, sizeof why) != KURA_OK) /* if CreateTable failed */
        fail_msg("%s: CreateTable after the reopen: %s", ctx, why);
    if (!ixw_check(w, db, true, why, sizeof why) ||
        !ixw_check_indexes(db, WAIT_MS, why, sizeof why))
        fail_msg("%s: %s", ctx, why);
    for (int i = 0; i < 20; i++)
        if (ixw_run(w, db, 0, why, sizeof why) != KURA_OK)
            fail_msg("%s: write after the healthy reopen: %s", ctx, why);
    if (!ixw_check(w, db, true, why, sizeof why) ||
        !ixw_check_indexes(db, WAIT_MS, why, sizeof why))
        fail_msg("%s: after writing again: %s", ctx, why);
    assert_kura_ok(kura_close(db));
}

/* Operations whose failure loses nothing and that the engine may ignore: removing obsolete
 * files (listing the directory, their size, the unlink), closing a file. */
static bool may_pass_unseen(io_op op)
{
    return op == IO_OP_UNLINK || op == IO_OP_LIST || op == IO_OP_CLOSE || op == IO_OP_SIZE;
}

/* ---- sweeps ------------------------------------------------------------------------------ */

typedef struct sweep_stats {
    uint64_t runs, seen, unseen;
    char unseen_ops[256];
} sweep_stats;

/* The number of index operations varies a little from run to run (the GSI applier's
 * checkpoints interleave with the writer), so the sweep ends after MISSES runs in a row that
 * injected nothing. */
enum { MISSES = 4 };

static void sweep(int error, bool persistent, uint64_t step, sweep_stats *st)
{
    for (uint64_t n = 1, misses = 0; misses < MISSES; n += step) {
        char *dir = test_mkdtemp("fault-index");
        pathfault *pf = pathfault_new(nosync_env(), "/idx-");
        assert_non_null(pf);
        pathfault_set(pf, n, 0, error, persistent);
        ixw *w = fi_model();
        wl_result r;
        workload(dir, pathfault_env(pf), w, &r);
        uint64_t injected = pathfault_injected(pf);
        io_op op = pathfault_first_op(pf);
        char first[600];
        snprintf(first, sizeof first, "%s", pathfault_first(pf));
        pathfault_free(pf);
        if (injected == 0) { /* the workload ended before its n-th index operation */
            if (r.failed_call)
                fail_msg("no fault injected, yet %s failed: %s", r.failed_call, r.msg);
            if (r.index_error || r.readonly)
                fail_msg("no fault injected, yet an index error or a read-only partition");
            ixw_free(w);
            test_rmrf(dir);
            misses++;
            continue;
        }
        misses = 0;
        char ctx[1600];
        snprintf(ctx, sizeof ctx, "%s%s at index operation %llu (%s; seed %llu; failed call: "
                                  "%s: %s; index error: %d; read-only partitions: %llu)",
                 err_str(error), persistent ? " from then on" : "", (unsigned long long)n,
                 first, (unsigned long long)g_seed, r.failed_call ? r.failed_call : "none",
                 r.failed_call ? r.msg : "-", r.index_error, (unsigned long long)r.readonly);
        bool seen = r.failed_call || r.index_error || r.readonly;
        if (!seen && !may_pass_unseen(op))
            fail_msg("a failure nobody reported: %s", ctx);
        char opname[16];
        snprintf(opname, sizeof opname, "%.*s", (int)strcspn(first, " "), first);
        if (!seen && !strstr(st->unseen_ops, opname) &&
            strlen(st->unseen_ops) + strlen(opname) + 2 < sizeof st->unseen_ops)
            strcat(strcat(st->unseen_ops, " "), opname);
        healthy_reopen_check(dir, w, ctx);
        st->runs++;
        st->seen += seen;
        st->unseen += !seen;
        ixw_free(w);
        test_rmrf(dir);
    }
}

static void run_sweep(int error, bool persistent)
{
    sweep_stats st = {0};
    uint64_t step = (uint64_t)(1.0 / scratch_scale() + 0.5);
    step = step ? step : 1;
    sweep(error, persistent, step, &st);
    fprintf(stderr, "fault_index: %s%s: %llu index operations failed in turn; %llu were "
                    "reported, %llu passed unseen (%s)\n",
            err_str(error), persistent ? " (persistent)" : "", (unsigned long long)st.runs,
            (unsigned long long)st.seen, (unsigned long long)st.unseen,
            st.unseen ? st.unseen_ops + 1 : "-");
    assert_true(st.runs >= 100 / step); /* the canary: the rule fired, again and again */
    assert_true(st.seen > st.runs / 2);
}

static void test_eio_every_index_operation(void **state)
{
    (void)state;
    run_sweep(EIO, false);
}

static void test_enospc_every_index_operation(void **state)
{
    (void)state;
    run_sweep(ENOSPC, false);
}

static void test_disk_full_from_every_index_operation(void **state)
{
    (void)state;
    run_sweep(ENOSPC, true);
}

/* ---- recovery ---------------------------------------------------------------------------- */

/* A database whose GSIs are behind: written with the applier stopped, then closed. */
static void make_template(const char *dir, ixw *w)
{
    kura_options opts = fi_options(nosync_env());
    kura_db *db;
    char why[600];
    assert_kura_ok(kura_open(dir, &opts, &db));
    if (ixw_create_table(db, why, sizeof why) != KURA_OK)
        fail_msg("CreateTable: %s", why);
    for (int i = 0; i < OPS / 2; i++)
        if (ixw_run(w, db, 0, why, sizeof why) != KURA_OK)
            fail_msg("%s", why);
    assert_kura_ok(table_index_checkpoint(db, IXW_TABLE));
    assert_kura_ok(table_index_pause(db, IXW_TABLE, true));
    for (int i = 0; i < OPS / 2; i++)
        if (ixw_run(w, db, 0, why, sizeof why) != KURA_OK)
            fail_msg("%s", why);
    assert_kura_ok(kura_close(db));
}

static void test_faults_during_index_recovery(void **state)
{
    (void)state;
    char *tmpl = test_mkdtemp("fault-index-tmpl"), *work = NULL;
    ixw *w = fi_model();
    make_template(tmpl, w);
    uint64_t step = (uint64_t)(1.0 / scratch_scale() + 0.5), runs = 0, failed_opens = 0;
    step = step ? step : 1;
    static const int errors[] = {EIO, ENOSPC};
    for (int e = 0; e < 2; e++)
        for (uint64_t n = 1, misses = 0; misses < MISSES; n += step) {
            test_rmrf(work);
            work = test_mkdtemp("fault-index-recovery");
            scratch_copy_dir(tmpl, work);
            pathfault *pf = pathfault_new(nosync_env(), "/idx-");
            pathfault_set(pf, n, 0, errors[e], false);
            kura_options opts = fi_options(pathfault_env(pf));
            kura_db *db;
            kura_status s = kura_open(work, &opts, &db);
            if (s == KURA_OK)
                kura_close(db);
            uint64_t injected = pathfault_injected(pf);
            char ctx[800];
            snprintf(ctx, sizeof ctx, "reopen with %s at index operation %llu (%s; seed %llu; "
                                      "open: %s)",
                     err_str(errors[e]), (unsigned long long)n, pathfault_first(pf),
                     (unsigned long long)g_seed, kura_status_str(s));
            pathfault_free(pf);
            if (!injected) {
                misses++;
                continue;
            }
            misses = 0;
            failed_opens += s != KURA_OK;
            ixw *c = fi_model(); /* the template's model, replayed */
            for (uint64_t j = 1; j < ixw_next(w, 0); j++) {
                ixw_attempt(c, 0);
                ixw_ack(c, 0);
            }
            healthy_reopen_check(work, c, ctx);
            ixw_free(c);
            runs++;
        }
    fprintf(stderr, "fault_index: index recovery: %llu failed reopens of %llu runs\n",
            (unsigned long long)failed_opens, (unsigned long long)runs);
    assert_true(runs >= 20 / step);
    assert_true(failed_opens > 0);
    test_rmrf(work);
    test_rmrf(tmpl);
    ixw_free(w);
}

/* ---- the backfill of a GSI added by UpdateTable ------------------------------------------ */

static const char CREATE_BYX[] =
    "{\"TableName\":\"" IXW_TABLE "\",\"AttributeDefinitions\":[{\"AttributeName\":\"x\","
    "\"AttributeType\":\"N\"}],\"GlobalSecondaryIndexUpdates\":[{\"Create\":{\"IndexName\":"
    "\"ByX\",\"KeySchema\":[{\"AttributeName\":\"x\",\"KeyType\":\"HASH\"}],"
    "\"Projection\":{\"ProjectionType\":\"ALL\"}}}]}";

/* ByX's state: 0 absent, 1 CREATING, 2 ACTIVE; and the recorded backfill failure. */
static int byx_state(kura_db *db, kura_status *job_error_out)
{
    kura_table *t;
    if (table_acquire(db, IXW_TABLE, &t) != KURA_OK)
        return 0;
    int i = table_index_find(t, "ByX"), st = 0;
    if (i >= 0)
        st = table_index_def(t, (uint32_t)i)->status == IDX_ACTIVE ? 2 : 1;
    *job_error_out = t->ix_job_error;
    table_release(t);
    return st;
}

/* The name of the tree the next index of the table will get. */
static void next_tree_name(kura_db *db, char *out, size_t cap)
{
    kura_table *t;
    assert_kura_ok(table_acquire(db, IXW_TABLE, &t));
    snprintf(out, cap, "/idx-%llu-%u/", (unsigned long long)t->id, t->next_index_id);
    table_release(t);
}

/* A template with the table and its items; ByX's tree path (substring) into sub. */
static void backfill_template(const char *dir, ixw *w, char *sub, size_t cap)
{
    kura_options opts = fi_options(nosync_env());
    kura_db *db;
    char why[600];
    assert_kura_ok(kura_open(dir, &opts, &db));
    if (ixw_create_table(db, why, sizeof why) != KURA_OK)
        fail_msg("CreateTable: %s", why);
    for (int i = 0; i < OPS; i++)
        if (ixw_run(w, db, 0, why, sizeof why) != KURA_OK)
            fail_msg("%s", why);
    next_tree_name(db, sub, cap);
    assert_kura_ok(kura_close(db));
}

/* UpdateTable Create ByX and writes meanwhile, with the n-th operation on ByX's tree failing;
 * then the failure must be recorded (a failed call, the backfill's error, an index error or a
 * read-only partition), and a healthy reopen must build ByX and keep every index right. */
static void test_faults_during_backfill(void **state)
{
    (void)state;
    char *tmpl = test_mkdtemp("fault-index-bf-tmpl"), *work = NULL, sub[80];
    ixw *w = fi_model();
    backfill_template(tmpl, w, sub, sizeof sub);
    uint64_t step = (uint64_t)(1.0 / scratch_scale() + 0.5), runs = 0, seen = 0, unseen = 0;
    step = step ? step : 1;
    static const int errors[] = {EIO, ENOSPC};
    for (int e = 0; e < 2; e++)
        for (uint64_t n = 1, misses = 0; misses < MISSES; n += step) {
            test_rmrf(work);
            work = test_mkdtemp("fault-index-bf");
            scratch_copy_dir(tmpl, work);
            ixw *c = fi_model(); /* the template's model */
            for (uint64_t j = 1; j < ixw_next(w, 0); j++) {
                ixw_attempt(c, 0);
                ixw_ack(c, 0);
            }
            pathfault *pf = pathfault_new(nosync_env(), sub);
            kura_options opts = fi_options(pathfault_env(pf));
            kura_db *db;
            assert_kura_ok(kura_open(work, &opts, &db));
            pathfault_set(pf, n, 0, errors[e], false);
            wl_result r;
            memset(&r, 0, sizeof r);
            char why[600];
            bool ok = !failed(&r, "UpdateTable", exec(db, "UpdateTable", CREATE_BYX, why,
                                                       sizeof why), why);
            for (int i = 0; ok && i < 20; i++)
                ok = !failed(&r, "write", ixw_run(c, db, 0, why, sizeof why), why);
            kura_status job = KURA_OK;
            int st = 1;
            for (uint64_t end = know_ns() + WAIT_MS * 1000000ull;
                 ok && (st = byx_state(db, &job)) == 1 && job == KURA_OK && know_ns() < end;) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
            }
            if (ok && st == 1 && job == KURA_OK)
                fail_msg("the backfill neither finished nor failed in %d ms", WAIT_MS);
            for (int i = 0; i < 3; i++) {
                kura_index_stats is;
                if (kura_index_stats_get(db, IXW_TABLE, IXW_INDEXES[i], &is) == KURA_OK &&
                    is.error != KURA_OK)
                    r.index_error = true;
            }
            kura_stats ks;
            kura_get_stats(db, &ks);
            r.readonly = ks.readonly_partitions;
            failed(&r, "kura_close", kura_close(db), NULL);
            uint64_t injected = pathfault_injected(pf);
            io_op op = pathfault_first_op(pf);
            char ctx[1600];
            snprintf(ctx, sizeof ctx, "backfill with %s at operation %llu of ByX's tree (%s; "
                                      "seed %llu; failed call: %s: %s; backfill error: %s)",
                     err_str(errors[e]), (unsigned long long)n, pathfault_first(pf),
                     (unsigned long long)g_seed, r.failed_call ? r.failed_call : "none",
                     r.failed_call ? r.msg : "-", kura_status_str(job));
            pathfault_free(pf);
            if (!injected) {
                ixw_free(c);
                misses++;
                continue;
            }
            misses = 0;
            bool vis = r.failed_call || job != KURA_OK || r.index_error || r.readonly;
            if (!vis && !may_pass_unseen(op))
                fail_msg("a failure nobody reported: %s", ctx);
            seen += vis;
            unseen += !vis;
            healthy_reopen_check(work, c, ctx); /* builds ByX again, then checks it too */
            ixw_free(c);
            runs++;
        }
    fprintf(stderr, "fault_index: backfill: %llu operations of the new index's tree failed in "
                    "turn; %llu were reported, %llu passed unseen\n",
            (unsigned long long)runs, (unsigned long long)seen, (unsigned long long)unseen);
    assert_true(runs >= 20 / step);
    assert_true(seen > runs / 2);
    test_rmrf(work);
    test_rmrf(tmpl);
    ixw_free(w);
}

/* ---- a stopped applier ------------------------------------------------------------------- */

/* Every I/O operation of the GSI ByG's tree fails from some point on: its checkpoint fails,
 * the tree turns read-only, the applier stops with the error. That must show in its
 * statistics and in kura_index_wait (which cannot promise that the index has the writes),
 * while the table goes on taking writes; a healthy reopen catches the index up. */
static void test_applier_error_is_reported(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("fault-index-applier");
    ixw *w = fi_model();
    char why[1600], sub[80];
    {
        kura_options opts = fi_options(nosync_env());
        kura_db *db;
        assert_kura_ok(kura_open(dir, &opts, &db));
        if (ixw_create_table(db, why, sizeof why) != KURA_OK)
            fail_msg("CreateTable: %s", why);
        kura_table *t;
        assert_kura_ok(table_acquire(db, IXW_TABLE, &t));
        int i = table_index_find(t, "ByG");
        assert_true(i >= 0);
        char name[64];
        table_index_tree_name(t, table_index_def(t, (uint32_t)i), name, sizeof name);
        snprintf(sub, sizeof sub, "/%s/", name);
        table_release(t);
        assert_kura_ok(kura_close(db));
    }
    pathfault *pf = pathfault_new(nosync_env(), sub);
    kura_options opts = fi_options(pathfault_env(pf));
    kura_db *db;
    assert_kura_ok(kura_open(dir, &opts, &db));
    pathfault_set(pf, 1, 0, EIO, true);
    for (int i = 0; i < OPS / 2; i++)
        if (ixw_run(w, db, 0, why, sizeof why) != KURA_OK)
            fail_msg("write %d: %s", i, why);
    kura_status s = table_index_checkpoint(db, IXW_TABLE);
    if (s == KURA_OK)
        fail_msg("a checkpoint of ByG with every operation on %s failing returned OK", sub);
    for (int i = 0; i < OPS / 2; i++) /* the table takes writes; the applier fails on them */
        if (ixw_run(w, db, 0, why, sizeof why) != KURA_OK)
            fail_msg("write %d after the failed checkpoint: %s", i, why);
    kura_status ws = kura_index_wait(db, IXW_TABLE, "ByG", WAIT_MS);
    kura_index_stats st;
    assert_kura_ok(kura_index_stats_get(db, IXW_TABLE, "ByG", &st));
    fprintf(stderr, "fault_index: ByG's files failing (%llu injected): checkpoint %s, applier "
                    "error %s, kura_index_wait %s\n",
            (unsigned long long)pathfault_injected(pf), kura_status_str(s),
            kura_status_str(st.error), kura_status_str(ws));
    if (st.error == KURA_OK)
        fail_msg("ByG's applier failed on a read-only tree, but its statistics show no error");
    if (ws == KURA_OK)
        fail_msg("kura_index_wait on ByG returned OK after its applier stopped with %s: the "
                 "writes since are not in the index", kura_status_str(st.error));
    kura_close(db);
    pathfault_free(pf);
    healthy_reopen_check(dir, w, "after ByG's applier failed");
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
        cmocka_unit_test(test_eio_every_index_operation),
        cmocka_unit_test(test_enospc_every_index_operation),
        cmocka_unit_test(test_disk_full_from_every_index_operation),
        cmocka_unit_test(test_faults_during_index_recovery),
        cmocka_unit_test(test_faults_during_backfill),
        cmocka_unit_test(test_applier_error_is_reported),
    };
    const char *only = getenv("KURA_TEST_ONLY"); /* one test by name */
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, setup, NULL);
}

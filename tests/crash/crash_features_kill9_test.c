/*
 * crash_features_kill9_test.c - every feature at once under kill -9: single-item writes,
 * BatchWriteItem, TransactWriteItems across partitions and tables from several threads, Time
 * to Live deletes and an online GSI backfill, on tables with LSIs, GSIs (sparse, INCLUDE,
 * KEYS_ONLY, ALL, a key of four HASH and four RANGE attributes) and change streams
 * (crash/fxwork.h). Issue 22 came from such a mix: each feature had passed its own crash
 * tests, and together a kill -9 corrupted the GSIs (a WAL is not in sequence order; the index
 * replay at open assumed it was).
 *
 * Each round forks a child that opens the database (KURA_SYNC with real fsyncs, 2 partitions
 * per table and index of 256 KiB memtables, L0 trigger 2) and runs at once: NIW item writers
 * (PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems of their own FxItems
 * items over several partitions), NBW bank writers (TransactWriteItems of Put, Update, Delete
 * and ConditionCheck actions over FxA, FxB and FxL), a thread sweeping expired items
 * (kura_ttl_sweep, the TTL clock fixed at FX_NOW, so one version in eight is expired when
 * written), a thread flushing a base table every ~10 ms and, in every other pair of rounds,
 * checkpointing a table's indexes in between (so flushes, index checkpoints, WAL retention
 * and compactions run all the time), and, in one round in four, an UpdateTable that creates
 * the GSI GNew (its backfill runs while the writers write) or, one in four, deletes it.
 * Every call that returns OK is reported through a pipe (crash/k9pipe.h). The parent
 * kills the child with SIGKILL at a seeded time: 5-150 ms after the writers started, 0-12 ms
 * after an UpdateTable (inside the backfill), or, one round in eight, 0-(open time) ms after
 * the fork (inside the recovery of the open). One round in six then forks a second child
 * that only opens the database and kills it too, at a seeded time within the open: recovery
 * cut short and run again. Then the parent reopens the database in-process and checks
 * everything:
 *  1. items: every acknowledged write is there, a write in flight at the kill is there or
 *     not, nothing else is; each item is whole, as its tag makes it; an item may be gone
 *     only where the version allowed is a delete or expired (crash/fxmodel.c);
 *  2. transactions are all or nothing: the in-flight TransactWriteItems of an item writer
 *     is all there or not at all; the bank's money is constant over its accounts and escrow
 *     items, the accounts' change counts equal the ledgers', each ledger is at its last
 *     acknowledged transaction or the one after (crash/fxbank.c);
 *  3. every GSI and LSI of every table equals, as a multiset, what its table implies
 *     (crash/index_check.h, after waiting for the GSIs and for GNew to settle), and no index
 *     reports an error;
 *  4. the streams of FxItems and FxB, read by a consumer that resumes after its last record
 *     of each shard, replay exactly to the tables: each record follows from the item's
 *     records before it, Time to Live's REMOVEs only remove expired items, and the items
 *     replayed are the tables' items; every fourth check the shards are read again from
 *     TRIM_HORIZON and must be exactly what the consumer took (crash/fxstream.h);
 *  5. no partition is read-only.
 * The parent's reopen runs on the no-sync env (a SIGKILL loses nothing the OS has). The
 * check commits what it found and the next child continues from there. Kill points
 * follow the machine's timing, the verdict must not: the loop requires that the kills cut
 * acknowledged transactions, index checkpoints, a backfill, TTL deletes (a kill during a
 * sweep that deleted), a recovery (an early kill) and a second recovery, and runs on (up to
 * 4 x) until they have.
 *
 * Watchdog. A child that deadlocks must fail the test, not hang it or pass: at the kill time
 * of an ordinary round (not a DDL or early one, whose kill times must stay where they are)
 * every writer and the sweeper must have made progress in the second half of the round; the
 * parent waits up to WATCHDOG_S for one that has not, then fails naming it. The parent's own
 * reopen and check run under alarm(): a hang there ends the test with a message.
 *
 * Canaries: a child that acknowledges before it writes (the checks must report a lost
 * acknowledged write or transaction within CANARY_ROUNDS kills); an index damaged under the
 * item layer (the index check must report the extra entry); a consumer that drops a record
 * (the stream check must report it).
 *
 * Reproduce with the printed KURA_TEST_SEED; KURA_TEST_ONLY=name runs one test.
 */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crash/fxstream.h"
#include "crash/fxwork.h"
#include "crash/k9pipe.h"
#include "crash/nosync_env.h"
#include "crash/scratch.h"
#include "engine/table.h"
#include "engine/table_index.h"
#include "engine/db_int.h"
#include "util/thread.h"

enum {
    NIW = 3,          /* item writers */
    NBW = 3,          /* bank writers */
    NKEYS = 40,       /* items per item writer */
    PAD = 400,        /* pad bytes of an item, at most */
    BULK = 3000,      /* static items: backfills and collection fills take a while */
    MIN_KILLS = 60,   /* at scale 1 */
    CANARY_ROUNDS = 12,
    WAIT_MS = 60000,  /* GSIs to catch up, GNew to settle */
    WATCHDOG_S = 30,  /* a writer without progress this long: hung */
    SWEEPER = 200,    /* the sweeper's thread number in messages */
    BANK0 = 100,      /* bank writer w's thread number: BANK0 + w */
};

/* K9_EVENT v[0]: */
enum { EV_OPENED = 1, EV_DDL, EV_SWEPT };

static uint64_t g_seed;

/* The children write with real fsyncs (a transaction's piece waits for its sync between its
 * append and its sequence range: that window puts WALs out of sequence order). The parent's
 * reopen and check run on the no-sync env: a SIGKILL loses nothing the OS has, so its syncs
 * would only cost time (~1 s per open of the 40 trees here on the test machine). */
static kura_options options(bool parent)
{
    kura_options o;
    kura_options_init(&o);
    o.io = parent ? nosync_env() : NULL;
    o.durability = KURA_SYNC;
    o.default_partitions = 2;
    o.memtable_budget_bytes = 1 << 20; /* the minimum: 256 KiB memtables */
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 512 << 10;
    o.sstable_target_bytes = 128 << 10;
    o.block_cache_bytes = 1 << 20;
    o.background_threads = 2;
    o.ttl_clock = fx_ttl_clock;
    o.ttl_sweep_interval_ms = 3600 * 1000; /* sweeps are the test's kura_ttl_sweep calls */
    o.ttl_sweep_duty_percent = 100;
    return o;
}

static fx_config item_config(void)
{
    fx_config c = {.seed = g_seed, .nwriters = NIW, .keys_per_writer = NKEYS, .pad_max = PAD,
                   .bulk = BULK, .durable_acks = true};
    return c;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- the child ------------------------------------------------------------------------------ */

typedef struct plan {
    bool early;        /* killed within the open */
    int ddl;           /* 0 none, 1 create GNew, 2 delete it */
    bool checkpointer; /* the maintainer checkpoints the indexes too */
    bool ack_first;    /* the canary: acknowledge before writing */
    bool open_only;    /* the second child of a round: open, then nothing */
} plan;

typedef struct child {
    kura_db *db;
    int fd;
    const fxm *m;
    fx_config cfg;
    plan p;
    uint32_t id;
    uint64_t deleted;  /* TTL deletes (sweeper) */
    uint64_t last_ack; /* the canary's bank writer: the last seq it acknowledged */
    int sweeping;      /* atomic */
} child;

static void *item_writer(void *arg)
{
    child *c = arg;
    char why[512];
    for (uint64_t j = fxm_next(c->m, c->id);; j++) {
        k9_msg m = {.type = K9_ACK, .thread = c->id, .opno = j};
        if (c->p.ack_first)
            k9_send(c->fd, &m);
        if (fx_item_exec(&c->cfg, c->db, c->id, j, why, sizeof why) != KURA_OK)
            k9_fail(c->fd, "item write", why);
        if (!c->p.ack_first)
            k9_send(c->fd, &m);
    }
    return NULL;
}

static void ack_before(void *arg, uint64_t next_seq)
{
    child *c = arg;
    if (next_seq != c->last_ack) /* once per seq: a cancelled transaction is tried again */
        k9_send(c->fd, &(k9_msg){.type = K9_ACK, .thread = BANK0 + c->id, .opno = next_seq});
    c->last_ack = next_seq;
}

static void *bank_writer(void *arg)
{
    child *c = arg;
    char why[512];
    fxb_writer x;
    if (fx_bank_load(c->db, c->id, &x, why, sizeof why) != KURA_OK)
        k9_fail(c->fd, "bank load", why);
    for (;;) {
        if (fx_bank_exec(g_seed, c->db, &x, c->p.ack_first ? ack_before : NULL, c, why,
                         sizeof why) != KURA_OK)
            k9_fail(c->fd, "bank transaction", why);
        if (!c->p.ack_first)
            k9_send(c->fd, &(k9_msg){.type = K9_ACK, .thread = BANK0 + c->id, .opno = x.seq});
    }
    return NULL;
}

static void *sweeper(void *arg)
{
    child *c = arg;
    for (;;) {
        uint64_t d = 0;
        __atomic_store_n(&c->sweeping, 1, __ATOMIC_RELEASE);
        if (kura_ttl_sweep(c->db, &d) != KURA_OK)
            k9_fail(c->fd, "kura_ttl_sweep", kura_last_error());
        __atomic_add_fetch(&c->deleted, d, __ATOMIC_RELAXED);
        __atomic_store_n(&c->sweeping, 0, __ATOMIC_RELEASE);
        k9_send(c->fd, &(k9_msg){.type = K9_EVENT, .thread = SWEEPER, .v = {EV_SWEPT, d}});
        sleep_ms(2);
    }
    return NULL;
}

/* Every ~5 ms, in turn: with p.checkpointer, a checkpoint of a table's indexes (first: a
 * checkpoint takes a while, and the kill may come early); a flush of a base table (the WAL
 * segments it rolls stay for the indexes until they checkpoint). */
static void *maintainer(void *arg)
{
    child *c = arg;
    for (int i = 0;; i++) {
        sleep_ms(5);
        kura_status s = KURA_OK;
        if (c->p.checkpointer && i % 2 == 0) {
            s = table_index_checkpoint(c->db, FX_TABLES[(i / 2) % 3]); /* FxL has none */
        } else {
            kura_table *t;
            if ((s = table_acquire(c->db, FX_TABLES[(i / 2) % 4], &t)) == KURA_OK) {
                s = kura_tree_flush(t->tree);
                table_release(t);
            }
        }
        if (s != KURA_OK)
            k9_fail(c->fd, "flush or checkpoint", kura_last_error());
    }
    return NULL;
}

static void child_main(const char *dir, const fxm *m, int fd, const plan *p)
{
    uint64_t t0 = know_ns();
    kura_options o = options(false);
    kura_db *db = NULL;
    if (kura_open(dir, &o, &db) != KURA_OK)
        k9_fail(fd, "kura_open", kura_last_error());
    k9_send(fd, &(k9_msg){.type = K9_EVENT, .v = {EV_OPENED, (know_ns() - t0) / 1000000}});
    if (p->open_only)
        for (;;)
            pause();
    char why[512];
    fx_gnew_state st = fx_gnew(db);
    if ((p->ddl == 1 && st == FX_GNEW_ABSENT) || (p->ddl == 2 && st == FX_GNEW_ACTIVE)) {
        if (fx_gnew_ddl(db, p->ddl == 1, why, sizeof why) != KURA_OK)
            k9_fail(fd, "UpdateTable", why);
        k9_send(fd, &(k9_msg){.type = K9_EVENT, .v = {EV_DDL, (uint64_t)p->ddl}});
    }
    k9_send(fd, &(k9_msg){.type = K9_STARTED});
    enum { NTH = NIW + NBW + 2 };
    static child c[NTH];
    kthread th[NTH];
    for (uint32_t i = 0; i < NTH; i++) {
        c[i] = (child){.db = db, .fd = fd, .m = m, .cfg = item_config(), .p = *p,
                       .id = i < NIW ? i : i - NIW};
        void *(*fn)(void *) = i < NIW ? item_writer : i < NIW + NBW ? bank_writer
                              : i == NIW + NBW ? sweeper : maintainer;
        if (!kthread_start(&th[i], fn, &c[i]))
            k9_fail(fd, "thread", "cannot start");
    }
    for (;;) { /* report background work until killed */
        kura_stats s;
        kura_get_stats(db, &s);
        uint64_t flags = (uint64_t)fx_gnew(db) |
                         (uint64_t)__atomic_load_n(&c[NIW + NBW].sweeping, __ATOMIC_ACQUIRE) << 4;
        k9_send(fd, &(k9_msg){.type = K9_STATS,
                              .v = {s.flushes, fx_checkpoints(db),
                                    __atomic_load_n(&c[NIW + NBW].deleted, __ATOMIC_RELAXED),
                                    flags}});
        sleep_ms(3);
    }
}

/* ---- the parent ----------------------------------------------------------------------------- */

enum { NPROG = NIW + NBW + 1 };

typedef struct round_state {
    fxm *m;
    uint64_t *bank_acked;
    bool started, opened;
    uint64_t started_ns, open_ms, ddl, at_kill, acks, bank_acks, txn_acks, flushes,
        checkpoints;
    bool sweeping;
    uint64_t progress_ns[NPROG]; /* item writers, bank writers, the sweeper */
    char error[sizeof(((k9_msg *)0)->text) + 1];
} round_state;

static void handle(void *arg, const k9_msg *m)
{
    round_state *r = arg;
    uint64_t now = know_ns();
    switch (m->type) {
    case K9_STARTED:
        r->started = true;
        r->started_ns = now;
        break;
    case K9_ACK:
        if (m->thread < NIW) {
            if (m->opno != fxm_next(r->m, m->thread))
                fail_msg("item writer %u acknowledged op %llu out of order", m->thread,
                         (unsigned long long)m->opno);
            fx_config c = item_config();
            r->txn_acks += fx_item_is_txn(&c, m->thread, m->opno);
            fxm_attempt(r->m, m->thread);
            fxm_ack(r->m, m->thread);
            r->progress_ns[m->thread] = now;
        } else if (m->thread >= BANK0 && m->thread < BANK0 + NBW) {
            uint32_t w = m->thread - BANK0;
            if (m->opno != r->bank_acked[w] + 1)
                fail_msg("bank writer %u acknowledged seq %llu after %llu", w,
                         (unsigned long long)m->opno, (unsigned long long)r->bank_acked[w]);
            r->bank_acked[w] = m->opno;
            r->bank_acks++;
            r->progress_ns[NIW + w] = now;
        }
        r->acks++;
        break;
    case K9_EVENT:
        if (m->v[0] == EV_OPENED) {
            r->opened = true;
            r->open_ms = m->v[1];
        } else if (m->v[0] == EV_DDL) {
            r->ddl = m->v[1];
        } else if (m->v[0] == EV_SWEPT) {
            r->progress_ns[NIW + NBW] = now;
        }
        break;
    case K9_STATS:
        r->flushes = m->v[0];
        r->checkpoints = m->v[1];
        r->at_kill = m->v[3] & 3;
        r->sweeping = (m->v[3] >> 4) & 1;
        break;
    case K9_ERROR:
        memcpy(r->error, m->text, sizeof m->text);
        break;
    default:
        fail_msg("unknown message type %u", m->type);
    }
}

static const char *const k_prog_name[NPROG] = {"item writer 0", "item writer 1", "item writer 2",
                                               "bank writer 0", "bank writer 1", "bank writer 2",
                                               "the TTL sweeper"};

/* The watchdog at the kill time: every writer and the sweeper made progress after `since`;
 * waits up to WATCHDOG_S for one that did not. False if the pipe ended. */
static bool watchdog(int fd, round_state *r, uint64_t since, uint64_t kill_no)
{
    uint64_t end = know_ns() + (uint64_t)WATCHDOG_S * 1000000000ull;
    for (;;) {
        int lagging = -1;
        for (int i = 0; i < NPROG && lagging < 0; i++)
            if (r->progress_ns[i] < since)
                lagging = i;
        if (lagging < 0)
            return true;
        if (know_ns() >= end)
            fail_msg("kill %llu (seed %llu): %s made no progress for %d s: the child hangs (a "
                     "deadlock?)",
                     (unsigned long long)kill_no, (unsigned long long)g_seed,
                     k_prog_name[lagging], WATCHDOG_S);
        if (!k9_pump(fd, handle, r, &r->started, know_ns() + 50 * 1000000ull, 0))
            return false;
    }
}

typedef struct totals {
    uint64_t kills, early_in_open, second_kills, second_in_open, acks, bank_acks, txn_acks,
        bank_rounds, flushes, checkpoints, ttl_deleted, in_sweep, ddl_creates, ddl_deletes,
        in_backfill, in_drop;
    uint64_t est_open_ms;
    uint64_t child_ns, check_ns; /* where the time goes */
} totals;

/* Forks a child with plan p and kills it; the round's figures into r. */
static void run_child(const char *dir, round_state *r, const plan *p, uint64_t *rng,
                      totals *tot, uint64_t kill_no)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_main(dir, r->m, fds[1], p);
        _exit(0);
    }
    close(fds[1]);
    uint64_t delay_ms;
    bool alive;
    if (p->early || p->open_only) { /* within the open, counted from the fork */
        delay_ms = test_rand(rng) % (tot->est_open_ms + (p->early ? 10 : 1));
        alive = k9_pump(fds[0], handle, r, &r->started, know_ns() + delay_ms * 1000000ull, 0);
    } else {
        delay_ms = p->ddl ? test_rand(rng) % 13 : 5 + test_rand(rng) % 146;
        alive = k9_pump(fds[0], handle, r, &r->started, 0, delay_ms * 1000000ull);
        if (alive && !p->ddl) /* a DDL round's kill must land inside the backfill */
            alive = watchdog(fds[0], r, r->started_ns + delay_ms * 1000000ull / 2, kill_no);
    }
    k9_finish(fds[0], pid, alive, handle, r, r->error);
    if (r->opened && r->open_ms + 5 > tot->est_open_ms)
        tot->est_open_ms = r->open_ms + 5;
}

/* Aborts the process if the parent's reopen and check hang. */
static char g_alarm_msg[256];
static void on_alarm(int sig)
{
    (void)sig;
    ssize_t n = write(2, g_alarm_msg, strlen(g_alarm_msg));
    (void)n;
    _exit(1);
}

static void arm_watchdog(const char *what, uint64_t kill_no)
{
    snprintf(g_alarm_msg, sizeof g_alarm_msg,
             "crash_features_kill9: %s after kill %llu hung for %d s (a deadlock?); "
             "KURA_TEST_SEED=%llu\n",
             what, (unsigned long long)kill_no, 4 * WATCHDOG_S, (unsigned long long)g_seed);
    signal(SIGALRM, on_alarm);
    alarm(4 * WATCHDOG_S);
}

typedef struct world {
    char *dir;
    fxm *m;
    uint64_t bank_acked[NBW];
    fxs *streams[2]; /* FxItems, FxB */
    uint64_t checks;
} world;

/* Reopens, checks everything (see the top), commits what it found. */
static bool reopen_check(world *w, uint64_t kill_no, char *why, size_t cap)
{
    arm_watchdog("the reopen and check", kill_no);
    kura_options o = options(true);
    kura_db *db;
    kura_status s = kura_open(w->dir, &o, &db);
    if (s != KURA_OK) {
        snprintf(why, cap, "reopen: %s: %s", kura_status_str(s), kura_last_error());
        alarm(0);
        return false;
    }
    uint64_t hi[NBW];
    for (int i = 0; i < NBW; i++)
        hi[i] = w->bank_acked[i] + 1;
    fxb_state bs;
    bool reread = w->checks++ % 4 == 0;
    bool ok = fx_gnew_settle(db, WAIT_MS, NULL, why, cap) && fxm_check(w->m, db, true, why, cap) &&
              fx_bank_check(db, NBW, w->bank_acked, hi, &bs, why, cap) &&
              fx_check_indexes(db, WAIT_MS, why, cap) &&
              fxs_check(w->streams[0], db, reread, why, cap) &&
              fxs_check(w->streams[1], db, reread, why, cap);
    if (ok)
        memcpy(w->bank_acked, bs.seq, sizeof w->bank_acked);
    kura_stats st;
    kura_get_stats(db, &st);
    if (ok && st.readonly_partitions) {
        snprintf(why, cap, "%llu partitions read-only", (unsigned long long)st.readonly_partitions);
        ok = false;
    }
    s = kura_close(db);
    alarm(0);
    if (ok && s != KURA_OK) {
        snprintf(why, cap, "close: %s", kura_last_error());
        ok = false;
    }
    return ok;
}

static void world_init(world *w, const char *tag)
{
    memset(w, 0, sizeof *w);
    w->dir = test_mkdtemp(tag);
    fx_config c = item_config();
    w->m = fxm_new(&c);
    assert_non_null(w->m);
    kura_options o = options(true);
    o.durability = KURA_RELAXED; /* the setup; the clean close makes it durable */
    kura_db *db;
    char why[1024];
    assert_kura_ok(kura_open(w->dir, &o, &db));
    if (fx_setup(db, g_seed, BULK, NBW, PAD, why, sizeof why) != KURA_OK)
        fail_msg("setup: %s", why);
    w->streams[0] = fxs_new(db, FX_ITEMS, "exp", FX_NOW, why, sizeof why);
    w->streams[1] = w->streams[0] ? fxs_new(db, FX_B, NULL, FX_NOW, why, sizeof why) : NULL;
    if (!w->streams[1])
        fail_msg("%s", why);
    assert_kura_ok(kura_close(db));
    if (!reopen_check(w, 0, why, sizeof why))
        fail_msg("after the setup: %s", why);
}

static void world_free(world *w)
{
    fxm_free(w->m);
    fxs_free(w->streams[0]);
    fxs_free(w->streams[1]);
    test_rmrf(w->dir);
}

/* One round: a child killed per its plan, maybe a second one killed within its open. */
static void run_round(world *w, uint64_t i, bool canary, uint64_t *rng, totals *tot,
                      round_state *r)
{
    plan p = {.early = !canary && i % 8 == 5, .checkpointer = i / 2 % 2 == 0, .ack_first = canary};
    p.ddl = p.early || canary ? 0 : i % 4 == 1 ? 1 : i % 4 == 3 ? 2 : 0;
    *r = (round_state){.m = w->m, .bank_acked = w->bank_acked};
    run_child(w->dir, r, &p, rng, tot, i + 1);
    for (uint32_t t = 0; t < NIW; t++)
        fxm_attempt(w->m, t); /* the op after the last acknowledged one may have run */
    tot->kills++;
    tot->early_in_open += p.early && !r->started;
    tot->acks += r->acks;
    tot->bank_acks += r->bank_acks;
    tot->bank_rounds += r->bank_acks > 0;
    tot->txn_acks += r->txn_acks;
    tot->flushes += r->flushes;
    tot->checkpoints += r->checkpoints;
    tot->ddl_creates += r->ddl == 1;
    tot->ddl_deletes += r->ddl == 2;
    tot->in_backfill += r->at_kill == FX_GNEW_CREATING;
    tot->in_drop += r->at_kill == FX_GNEW_DELETING;
    if (!canary && i % 6 == 3) { /* recovery cut short, then run again */
        plan q = {.open_only = true};
        round_state r2 = {.m = w->m, .bank_acked = w->bank_acked};
        run_child(w->dir, &r2, &q, rng, tot, i + 1);
        tot->second_kills++;
        tot->second_in_open += !r2.opened;
    }
}

static bool covered(const totals *t)
{
    return t->acks && t->bank_rounds && t->txn_acks && t->checkpoints && t->in_backfill &&
           t->ttl_deleted && t->in_sweep && t->early_in_open && t->second_in_open;
}

static void print_totals(const char *name, const totals *t)
{
    fprintf(stderr,
            "%s: %llu kills (%llu inside the open's recovery; %llu second kills, %llu inside "
            "the open); %llu acks (%llu bank transactions in %llu rounds, %llu item "
            "transactions); the children ran %llu flushes, %llu index checkpoints, %llu TTL "
            "deletes (%llu kills during a sweep that deleted), %llu GSI creations (%llu kills "
            "during the backfill), %llu deletions (%llu kills during the drop); %.1f s in the "
            "children, %.1f s in the reopens and checks\n",
            name, (unsigned long long)t->kills, (unsigned long long)t->early_in_open,
            (unsigned long long)t->second_kills, (unsigned long long)t->second_in_open,
            (unsigned long long)t->acks, (unsigned long long)t->bank_acks,
            (unsigned long long)t->bank_rounds, (unsigned long long)t->txn_acks,
            (unsigned long long)t->flushes, (unsigned long long)t->checkpoints,
            (unsigned long long)t->ttl_deleted, (unsigned long long)t->in_sweep,
            (unsigned long long)t->ddl_creates, (unsigned long long)t->in_backfill,
            (unsigned long long)t->ddl_deletes, (unsigned long long)t->in_drop,
            (double)t->child_ns / 1e9, (double)t->check_ns / 1e9);
}

static void test_features_kill9_loop(void **state)
{
    (void)state;
    world w;
    world_init(&w, "crash-features-kill9");
    uint64_t rng = g_seed ^ 0xfea7, kills = scratch_scaled(MIN_KILLS);
    totals tot = {.est_open_ms = 30};
    char why[2048];
    for (uint64_t i = 0; i < 4 * kills && (i < kills || !covered(&tot)); i++) {
        round_state r;
        uint64_t t0 = know_ns();
        run_round(&w, i, false, &rng, &tot, &r);
        uint64_t t1 = know_ns(), ttl0 = fxs_get_stats(w.streams[0])->ttl_removes;
        bool ok = reopen_check(&w, i + 1, why, sizeof why);
        tot.child_ns += t1 - t0;
        tot.check_ns += know_ns() - t1;
        /* the child's TTL deletes: the stream's Time to Live REMOVEs read since (a sweep
         * reports its count only when it ends, and most are killed before) */
        uint64_t ttl = fxs_get_stats(w.streams[0])->ttl_removes - ttl0;
        tot.ttl_deleted += ttl;
        tot.in_sweep += r.sweeping && ttl > 0;
        if (!ok)
            fail_msg("kill %llu (KURA_TEST_SEED=%llu; %s, GNew %s at the kill): %s",
                     (unsigned long long)i + 1, (unsigned long long)g_seed,
                     !r.started ? "killed before writing started" : r.ddl == 1 ? "Create issued"
                                                              : r.ddl == 2 ? "Delete issued"
                                                                           : "no DDL",
                     FX_GNEW_STATES[r.at_kill], why);
    }
    const fxm_stats *ms = fxm_get_stats(w.m);
    const fxs_stats *s0 = fxs_get_stats(w.streams[0]), *s1 = fxs_get_stats(w.streams[1]);
    print_totals("crash_features kill9", &tot);
    fprintf(stderr, "crash_features kill9: items gone by TTL %llu; in-flight transactions found "
                    "applied %llu, not applied %llu; stream records %llu (FxItems: %llu, of which "
                    "%llu TTL REMOVEs; FxB: %llu)\n",
            (unsigned long long)ms->doomed_gone, (unsigned long long)ms->txn_applied,
            (unsigned long long)ms->txn_absent, (unsigned long long)(s0->records + s1->records),
            (unsigned long long)s0->records, (unsigned long long)s0->ttl_removes,
            (unsigned long long)s1->records);
    if (!covered(&tot))
        fail_msg("%llu kills (KURA_TEST_SEED=%llu) did not cut everything they must (see the "
                 "figures above)",
                 (unsigned long long)tot.kills, (unsigned long long)g_seed);
    world_free(&w);
}

/* The canary: acknowledgements sent before the writes must be caught within CANARY_ROUNDS. */
static void test_canary_ack_first(void **state)
{
    (void)state;
    world w;
    world_init(&w, "crash-features-canary");
    uint64_t rng = g_seed ^ 0xca;
    totals tot = {.est_open_ms = 30};
    char why[2048];
    int caught = 0;
    for (int i = 1; i <= CANARY_ROUNDS && !caught; i++) {
        round_state r;
        run_round(&w, (uint64_t)i, true, &rng, &tot, &r);
        if (!reopen_check(&w, (uint64_t)i, why, sizeof why))
            caught = i;
    }
    if (!caught)
        fail_msg("acknowledgements before the writes went unnoticed in %d kills (seed %llu)",
                 CANARY_ROUNDS, (unsigned long long)g_seed);
    fprintf(stderr, "crash_features kill9 canary: caught at kill %d: %s\n", caught, why);
    world_free(&w);
}

/* The canaries of the index and stream checks, on a database written without a crash: an
 * FxB account deleted under the item layer leaves its index entries (an extra entry); a
 * consumer that drops records must be told. */
static void test_canary_checkers(void **state)
{
    (void)state;
    world w;
    world_init(&w, "crash-features-checkers");
    kura_options o = options(true);
    kura_db *db;
    char why[2048];
    assert_kura_ok(kura_open(w.dir, &o, &db));
    fxb_writer x;
    assert_kura_ok(fx_bank_load(db, 0, &x, why, sizeof why));
    for (int i = 0; i < 200; i++) {
        if (fxm_run(w.m, db, (uint32_t)i % NIW, why, sizeof why) != KURA_OK ||
            (i % 4 == 0 && fx_bank_exec(g_seed, db, &x, NULL, NULL, why, sizeof why) != KURA_OK))
            fail_msg("%s", why);
    }
    assert_kura_ok(kura_ttl_sweep(db, NULL));
    fxs *drop = fxs_fresh(w.streams[0]);
    fxs_drop_every(drop, 37);
    if (fxs_check(drop, db, true, why, sizeof why))
        fail_msg("the stream check missed %llu dropped records",
                 (unsigned long long)fxs_get_stats(drop)->dropped);
    fprintf(stderr, "crash_features stream canary: %s\n", why);
    fxs_free(drop);
    if (!fxs_check(w.streams[0], db, true, why, sizeof why) ||
        !fxs_check(w.streams[1], db, true, why, sizeof why) ||
        !fx_check_indexes(db, WAIT_MS, why, sizeof why))
        fail_msg("before the planted bug: %s", why);
    kura_table *t;
    assert_kura_ok(table_acquire(db, FX_B, &t));
    kura_iter *it;
    assert_kura_ok(kura_iter_new(t->tree, NULL, &it));
    kura_iter_seek_first(it);
    assert_true(kura_iter_valid(it));
    size_t klen;
    const void *k = kura_iter_key(it, &klen);
    char *key = malloc(klen);
    memcpy(key, k, klen);
    kura_iter_free(it);
    assert_kura_ok(kura_delete(t->tree, NULL, key, klen)); /* no image: its entries stay */
    free(key);
    table_release(t);
    if (fx_check_indexes(db, WAIT_MS, why, sizeof why))
        fail_msg("the index check missed the entries of an item deleted under the item layer");
    if (!strstr(why, "extra entry"))
        fail_msg("expected an extra entry: %s", why);
    fprintf(stderr, "crash_features index canary: %s\n", why);
    assert_kura_ok(kura_close(db));
    world_free(&w);
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
        cmocka_unit_test(test_canary_checkers),
        cmocka_unit_test(test_features_kill9_loop),
        cmocka_unit_test(test_canary_ack_first),
    };
    const char *only = getenv("KURA_TEST_ONLY");
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, setup, NULL);
}

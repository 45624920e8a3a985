/*
 * crash_stream_kill9_test.c - the change stream across kill -9: a consumer that resumes from
 * its last sequence numbers after each crash sees every acknowledged write exactly once, in
 * each item's order, with the right images, and the items the stream leads to are the
 * table's (crash/streamcheck.h).
 *
 * The table "Tstream" (crash/streamwork.h: 4 partitions, so 4 shards, NEW_AND_OLD_IMAGES)
 * lives in a database of KURA_SYNC durability with 128 KiB memtables and an L0 trigger of 2,
 * so flushes, compactions and WAL segment switches run all the time. Each round forks a child
 * that opens the database, starts NWRITERS writer threads issuing PutItem, UpdateItem,
 * DeleteItem, BatchWriteItem and TransactWriteItems (2-3 items across partitions) through
 * kura_execute, and reports each acknowledged operation through a pipe (crash/k9pipe.h)
 * before going on. The parent kills the child with SIGKILL at a seeded moment (10-100 ms
 * after it started writing; one round in six 0-30 ms after the fork, often inside recovery),
 * reopens the database and runs sc_check: the consumer resumes each shard
 * AFTER_SEQUENCE_NUMBER its last record (TRIM_HORIZON before its first); the shard re-read
 * from TRIM_HORIZON must be exactly what it took plus what it resumed with; every
 * acknowledged write must be matched once, an unacknowledged one (in flight at the kill) at
 * most once, a transaction all or nothing; Scan and GetItem must show what the stream leads
 * to; and the integrity check (kura_check: every file, the stream's shard positions) must
 * find nothing. The consumer's positions and records live in the parent across the rounds.
 *
 * test_stream_kill9_live_reader also makes the consumer read while each child runs: a reader
 * thread in the child resumes every shard from the consumer's positions (inherited by the
 * fork), reads small GetRecords pages at the stream's frontier and sends every record
 * through the pipe, where the parent takes it into the consumer (whose positions then move
 * on as a real client's would). It found an engine bug, as did test_stream_tail_reader, the
 * same without any crash: a reader at the frontier passed over a committed transaction
 * (docs/testing-crash.md, "Found and fixed").
 *
 * Kill points are timing; the verdict must not be: the loop requires only that the stream
 * saw transactions, batches and deletes and, at scale 1, the children flushed and compacted,
 * and runs on (up to 4 x the rounds) until they have.
 *
 * Canaries (the checker is not blind): a child that acknowledges an operation before issuing
 * it (a lost acknowledged write must be reported), and a child whose live reader drops one
 * record now and then before sending it (the consumer's positions then step over it: the
 * re-read must show a record it never took).
 */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crash/index_check.h"
#include "crash/k9pipe.h"
#include "crash/scratch.h"
#include "crash/streamcheck.h"
#include "util/thread.h"

enum {
    NWRITERS = 4,
    NKEYS = 24,
    PAD_MAX = 3000,
    NPARTS = 4,
    MIN_ROUNDS = 12,
    CANARY_ROUNDS = 12,
    READER_PAGE = 7,
    SKIP_EVERY = 40,
    TAIL_OPS = 300
};

typedef enum { CANARY_NONE, CANARY_EARLY_ACK, CANARY_READER_SKIPS } canary;

static kura_options options(void)
{
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_SYNC;
    o.default_partitions = NPARTS;
    o.memtable_budget_bytes = 1 << 20; /* 128 KiB memtables */
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 256 << 10;
    o.sstable_target_bytes = 64 << 10;
    return o;
}

static sc_config config(uint64_t seed)
{
    sc_config c = {
        .work = {.seed = seed, .nwriters = NWRITERS, .keys_per_writer = NKEYS, .pad_max = PAD_MAX},
        .durable_acks = true};
    return c;
}

/* A database with the table; its consumer at TRIM_HORIZON. */
static sc *setup(const char *dir, uint64_t seed)
{
    kura_options o = options();
    kura_db *db;
    char arn[512], why[512];
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(sw_create_table(db, NPARTS, arn, sizeof arn));
    sc_config cfg = config(seed);
    sc *c = sc_new(&cfg, db, arn, why, sizeof why);
    if (!c) fail_msg("%s", why);
    assert_int_equal(sc_shards(c), NPARTS);
    assert_kura_ok(kura_close(db));
    return c;
}

/* ---- the child ----------------------------------------------------------------------------- */

typedef struct child {
    kura_db *db;
    int fd;
    sw_config work;
    const sc *c;
    const uint64_t *start; /* each writer's first operation */
    canary canary;
    bool live; /* the consumer reads while the child runs */
} child;

typedef struct writer {
    child *ch;
    uint32_t t;
} writer;

static void *writer_main(void *arg)
{
    writer *w = arg;
    child *ch = w->ch;
    char why[600];
    for (uint64_t j = ch->start[w->t];; j++) {
        k9_msg ack = {.type = K9_ACK, .thread = w->t, .opno = j};
        if (ch->canary == CANARY_EARLY_ACK) /* acknowledged before it happened */
            k9_send(ch->fd, &ack);
        if (sw_exec(&ch->work, ch->db, w->t, j, why, sizeof why) != KURA_OK)
            k9_fail(ch->fd, "write", why);
        if (ch->canary != CANARY_EARLY_ACK) k9_send(ch->fd, &ack);
    }
    return NULL;
}

/* A record as an EVENT message: thread = shard, v = event and digests, text = sequence
 * number, key and the images' tags. */
static void send_record(int fd, const sc_rec *r)
{
    k9_msg m = {
        .type = K9_EVENT, .thread = r->shard, .v = {r->event, r->new_digest, r->old_digest, 0}};
    snprintf(m.text, sizeof m.text, "%s %s %s %s", r->seq, r->key, r->new_v[0] ? r->new_v : "-",
             r->old_v[0] ? r->old_v : "-");
    k9_send(fd, &m);
}

static bool record_of(const k9_msg *m, sc_rec *r)
{
    memset(r, 0, sizeof *r);
    r->shard = m->thread;
    r->event = (uint32_t)m->v[0];
    r->new_digest = m->v[1];
    r->old_digest = m->v[2];
    if (sscanf(m->text, "%25s %15s %23s %23s", r->seq, r->key, r->new_v, r->old_v) != 4)
        return false;
    if (!strcmp(r->new_v, "-")) r->new_v[0] = 0;
    if (!strcmp(r->old_v, "-")) r->old_v[0] = 0;
    return true;
}

/* The consumer while the database runs (with ch->live): every shard from the consumer's
 * positions, in small pages, each record sent to the parent; the engine's counters now and
 * then. */
static void *reader_main(void *arg)
{
    child *ch = arg;
    uint32_t n = ch->live ? sc_shards(ch->c) : 0;
    char *it[SC_MAX_SHARDS];
    for (uint32_t s = 0; s < n; s++)
        if (sc_iterator(ch->c, ch->db, s, &it[s]) != KURA_OK)
            k9_fail(ch->fd, "GetShardIterator", kura_last_error());
    uint64_t sent = 0;
    for (;;) {
        size_t got = 0;
        for (uint32_t s = 0; s < n; s++) {
            kura_stream_record *v;
            size_t nv;
            char *next;
            if (kura_get_records(ch->db, it[s], READER_PAGE, &v, &nv, &next) != KURA_OK)
                k9_fail(ch->fd, "GetRecords", kura_last_error());
            kura_free(it[s]);
            it[s] = next;
            for (size_t i = 0; i < nv; i++) {
                sc_rec r;
                sc_rec_of(&v[i], s, &r);
                if (ch->canary != CANARY_READER_SKIPS || ++sent % SKIP_EVERY != 0)
                    send_record(ch->fd, &r);
            }
            kura_stream_records_free(v, nv);
            got += nv;
        }
        kura_stats st;
        kura_get_stats(ch->db, &st);
        k9_send(ch->fd, &(k9_msg){.type = K9_STATS, .v = {st.flushes, st.compactions}});
        if (!got)
            nanosleep(&(struct timespec){0, 1000000}, NULL); /* caught up: poll again in 1 ms */
    }
    return NULL;
}

static void child_main(const char *dir, int fd, uint64_t seed, const sc *c, const uint64_t *start,
                       canary cn, bool live)
{
    kura_options o = options();
    child ch = {
        .fd = fd, .work = config(seed).work, .c = c, .start = start, .canary = cn, .live = live};
    if (kura_open(dir, &o, &ch.db) != KURA_OK) k9_fail(fd, "kura_open", kura_last_error());
    k9_send(fd, &(k9_msg){.type = K9_STARTED});
    writer w[NWRITERS];
    kthread th[NWRITERS + 1];
    for (uint32_t t = 0; t < NWRITERS; t++) {
        w[t] = (writer){&ch, t};
        if (!kthread_start(&th[t], writer_main, &w[t]))
            k9_fail(fd, "thread", "cannot start a writer");
    }
    if (!kthread_start(&th[NWRITERS], reader_main, &ch))
        k9_fail(fd, "thread", "cannot start the reader");
    for (;;)
        pause(); /* until the SIGKILL */
}

/* ---- the parent ---------------------------------------------------------------------------- */

typedef struct round_state {
    sc *c;
    bool started;
    uint64_t acked[NWRITERS]; /* the last operation acknowledged (start - 1: none) */
    uint64_t flushes, compactions, records;
    char error[200];
    char violation[600]; /* a record the consumer refused */
} round_state;

static void handle(void *arg, const k9_msg *m)
{
    round_state *r = arg;
    sc_rec rec;
    if (m->type == K9_STARTED) {
        r->started = true;
    } else if (m->type == K9_ACK && m->thread < NWRITERS) {
        if (m->opno > r->acked[m->thread]) r->acked[m->thread] = m->opno;
    } else if (m->type == K9_STATS) {
        r->flushes = m->v[0] > r->flushes ? m->v[0] : r->flushes;
        r->compactions = m->v[1] > r->compactions ? m->v[1] : r->compactions;
    } else if (m->type == K9_EVENT && !r->violation[0]) {
        if (!record_of(m, &rec))
            snprintf(r->violation, sizeof r->violation, "a malformed message: %s", m->text);
        else if (sc_take(r->c, &rec, r->violation, sizeof r->violation))
            r->records++;
    } else if (m->type == K9_ERROR) {
        memcpy(r->error, m->text, sizeof r->error);
    }
}

typedef struct totals {
    uint64_t acks, flushes, compactions, live_records;
} totals;

/* One child, killed; what it acknowledged reported to the consumer, start[] moved past
 * every operation it may have issued. Returns the violation a live record caused, if any. */
static void run_round(const char *dir, uint64_t seed, sc *c, canary cn, bool live, uint64_t *rng,
                      uint64_t *start, totals *tot, char *violation, size_t cap)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child_main(dir, p[1], seed, c, start, cn, live);
        _exit(0);
    }
    close(p[1]);
    round_state r = {.c = c};
    for (uint32_t t = 0; t < NWRITERS; t++)
        r.acked[t] = start[t] - 1;
    bool early = test_rand(rng) % 6 == 0;
    uint64_t delay_ns = (early ? test_rand(rng) % 31 : 10 + test_rand(rng) % 91) * 1000000u;
    bool alive = early ? k9_pump(p[0], handle, &r, &r.started, know_ns() + delay_ns, 0)
                       : k9_pump(p[0], handle, &r, &r.started, 0, delay_ns);
    k9_finish(p[0], pid, alive, handle, &r, r.error);
    for (uint32_t t = 0; t < NWRITERS; t++) {
        for (uint64_t j = start[t]; j <= r.acked[t]; j++)
            sc_issued(c, t, j, SC_ACKED);
        sc_issued(c, t, r.acked[t] + 1, SC_MAYBE); /* in flight at the kill, or not yet issued */
        tot->acks += r.acked[t] + 1 - start[t];
        start[t] = r.acked[t] + 2;
    }
    sc_crashed(c);
    tot->flushes += r.flushes;
    tot->compactions += r.compactions;
    tot->live_records += r.records;
    snprintf(violation, cap, "%s", r.violation);
}

/* Reopens the database and checks the stream; false with why. */
static bool check(const char *dir, sc *c, char *why, size_t cap)
{
    kura_options o = options();
    kura_db *db;
    assert_kura_ok(kura_open(dir, &o, &db));
    bool ok = sc_check(c, db, why, cap);
    kura_status s = ok ? index_check_all(db) : KURA_OK; /* files, stream positions */
    if (s != KURA_OK) {
        snprintf(why, cap, "%s: %s", kura_status_str(s), kura_last_error());
        ok = false;
    }
    kura_stats st;
    kura_get_stats(db, &st);
    assert_int_equal(st.readonly_partitions, 0);
    assert_kura_ok(kura_close(db));
    return ok;
}

/* What the rounds must have cut: transactions, batches and deletes in the stream, and at
 * scale 1 (rounds >= MIN_ROUNDS) flushes and compactions in the children. */
static bool enough(const totals *tot, const sc_stats *st, uint64_t rounds)
{
    return st->txns_seen && st->batches_seen && st->events[3] &&
           (rounds < MIN_ROUNDS || (tot->flushes && tot->compactions));
}

/* Runs rounds until `rounds` are done and the stream has seen enough (or, for a canary,
 * until the first violation); returns whether a violation was found, with why. */
static bool run(const char *dir, sc *c, canary cn, bool live, uint64_t rounds, uint64_t max_rounds,
                uint64_t seed, char *why, size_t cap)
{
    uint64_t rng = seed, start[NWRITERS];
    for (uint32_t t = 0; t < NWRITERS; t++)
        start[t] = 1;
    totals tot = {0};
    const sc_stats *st = sc_get_stats(c);
    for (uint64_t i = 0; i < max_rounds; i++) {
        if (i >= rounds && (cn != CANARY_NONE || enough(&tot, st, rounds))) break;
        char violation[600];
        run_round(dir, seed, c, cn, live, &rng, start, &tot, violation, sizeof violation);
        if (violation[0]) {
            snprintf(why, cap, "round %llu, a record from the live reader: %s",
                     (unsigned long long)i + 1, violation);
            return true;
        }
        char w[900];
        if (!check(dir, c, w, sizeof w)) {
            snprintf(why, cap, "after kill %llu (seed %llu): %s", (unsigned long long)i + 1,
                     (unsigned long long)seed, w);
            return true;
        }
    }
    fprintf(stderr,
            "stream kill9: %llu acked ops, %llu records (%llu from the live reader; "
            "%llu INSERT, %llu MODIFY, %llu REMOVE), %llu transactions and %llu batches "
            "in the stream, unacked ops %llu there / %llu not; children flushed %llu "
            "and compacted %llu times\n",
            (unsigned long long)tot.acks, (unsigned long long)st->records,
            (unsigned long long)tot.live_records, (unsigned long long)st->events[1],
            (unsigned long long)st->events[2], (unsigned long long)st->events[3],
            (unsigned long long)st->txns_seen, (unsigned long long)st->batches_seen,
            (unsigned long long)st->maybe_present, (unsigned long long)st->maybe_absent,
            (unsigned long long)tot.flushes, (unsigned long long)tot.compactions);
    if (cn == CANARY_NONE && !enough(&tot, st, rounds))
        fail_msg("%llu rounds did not commit a transaction and a batch and delete%s (seed "
                 "%llu)",
                 (unsigned long long)max_rounds,
                 rounds < MIN_ROUNDS ? "" : ", and the children did not flush and compact",
                 (unsigned long long)seed);
    return false;
}

/* The kill -9 loop; with `live`, the consumer also reads while each child runs. */
static void kill9_loop(bool live, const char *tag)
{
    char *dir = test_mkdtemp(tag);
    uint64_t seed = test_seed();
    sc *c = setup(dir, seed);
    uint64_t rounds = scratch_scaled(MIN_ROUNDS);
    char why[1000];
    if (run(dir, c, CANARY_NONE, live, rounds, 4 * rounds, seed, why, sizeof why))
        fail_msg("%s", why);
    sc_free(c);
    test_rmrf(dir);
}

static void test_stream_kill9_loop(void **state)
{
    (void)state;
    kill9_loop(false, "crash-stream-kill9");
}

/* Found an engine bug (fixed: a reader at the stream's frontier passed over a committed
 * transaction's piece whose commit record was not visible yet; docs/testing-crash.md). */
static void test_stream_kill9_live_reader(void **state)
{
    (void)state;
    kill9_loop(true, "crash-stream-kill9-live");
}

/* The same bug without a crash: writers and a tailing consumer in one process, then the
 * consumer's records against the stream read again. */
typedef struct tail_writer {
    kura_db *db;
    sw_config work;
    uint32_t t;
    uint64_t acked;
    char why[600];
} tail_writer;

static void *tail_writer_main(void *arg)
{
    tail_writer *w = arg;
    for (uint64_t j = 1; j <= TAIL_OPS; j++) {
        if (sw_exec(&w->work, w->db, w->t, j, w->why, sizeof w->why) != KURA_OK) break;
        __atomic_store_n(&w->acked, j, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void test_stream_tail_reader(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-stream-tail");
    uint64_t seed = test_seed();
    sc *c = setup(dir, seed);
    kura_options o = options(); /* (sync: a leader's fsync keeps a range open meanwhile) */
    kura_db *db;
    assert_kura_ok(kura_open(dir, &o, &db));
    tail_writer w[NWRITERS];
    kthread th[NWRITERS];
    for (uint32_t t = 0; t < NWRITERS; t++) {
        w[t] = (tail_writer){.db = db, .work = config(seed).work, .t = t};
        assert_true(kthread_start(&th[t], tail_writer_main, &w[t]));
    }
    char why[1000];
    bool done = false;
    while (!done) { /* tails the stream until the writers are done, then once more */
        done = true;
        for (uint32_t t = 0; t < NWRITERS; t++)
            done &= __atomic_load_n(&w[t].acked, __ATOMIC_ACQUIRE) == TAIL_OPS || w[t].why[0];
        if (sc_read(c, db, READER_PAGE, why, sizeof why) != KURA_OK) fail_msg("%s", why);
    }
    for (uint32_t t = 0; t < NWRITERS; t++) {
        kthread_join(th[t]);
        if (w[t].why[0]) fail_msg("%s", w[t].why);
        for (uint64_t j = 1; j <= TAIL_OPS; j++)
            sc_issued(c, t, j, SC_ACKED);
    }
    if (!sc_check(c, db, why, sizeof why))
        fail_msg("without a crash (seed %llu): %s", (unsigned long long)seed, why);
    assert_kura_ok(kura_close(db));
    sc_free(c);
    test_rmrf(dir);
}

static void canary_run(canary cn, const char *tag)
{
    char *dir = test_mkdtemp(tag);
    uint64_t seed = test_seed() + cn;
    sc *c = setup(dir, seed);
    char why[1000];
    bool live = cn == CANARY_READER_SKIPS;
    if (!run(dir, c, cn, live, CANARY_ROUNDS, CANARY_ROUNDS, seed, why, sizeof why))
        fail_msg("%s: no violation found in %d rounds", tag, CANARY_ROUNDS);
    fprintf(stderr, "%s caught: %s\n", tag, why);
    sc_free(c);
    test_rmrf(dir);
}

static void test_stream_kill9_canary_early_ack(void **state)
{
    (void)state;
    canary_run(CANARY_EARLY_ACK, "crash-stream-kill9-early-ack");
}

static void test_stream_kill9_canary_reader_skips(void **state)
{
    (void)state;
    canary_run(CANARY_READER_SKIPS, "crash-stream-kill9-reader-skips");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_kill9_loop),
        cmocka_unit_test(test_stream_kill9_live_reader),
        cmocka_unit_test(test_stream_tail_reader),
        cmocka_unit_test(test_stream_kill9_canary_early_ack),
        cmocka_unit_test(test_stream_kill9_canary_reader_skips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

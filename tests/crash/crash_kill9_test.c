/*
 * crash_kill9_test.c - the kill -9 loop: a child process writes with several threads, the
 * parent kills it with SIGKILL at a random moment, reopens the database and checks that
 * every acknowledged write survived and that each writer's surviving writes are a prefix of
 * its commit order; then the next child goes on writing to the same database.
 *
 * Each round forks a child that opens the database (KURA_SYNC, small memtables, so flushes
 * and compactions run in the background), starts NWRITERS writer threads and a stats thread,
 * and tells the parent through a pipe when it starts writing. Writer t issues the workload's
 * ops (crash/oracle.h) from the model's committed op + 1 on, and after each call returns
 * KURA_OK writes an ACK message (writer, op number, hash of the bytes submitted) to the pipe.
 * The parent kills the child 5..60 ms after it started writing (one round in ten: 0..40 ms
 * after the fork, often inside recovery), reads the remaining messages, records them in the
 * model, reopens the database in-process and runs oracle_check, which also commits the
 * surviving prefix so the next child continues from there. A SIGKILL loses nothing the OS
 * has, so this checks recovery logic (WAL replay, torn group commits, flushes and
 * compactions cut anywhere, manifest switches), not fsync placement: that is
 * crash_powerloss_test's job.
 *
 * Canary: a child mode that sends the ACK *before* calling the engine. A kill between the
 * two leaves an "acknowledged" op that never happened, and the checker must say so within a
 * few kills (docs/testing-crash.md).
 *
 * Chance. The delays come from the seed (KURA_TEST_SEED), but where a kill lands depends on
 * the machine's timing, so the verdict must not: oracle_check passes for every kill point of
 * a correct engine. What the kills reach is timing, though: at least one acknowledged write,
 * and at scale 1 flushes and compactions in the children. Those are required after the
 * minimum number of kills, and where a slow machine has not got there yet, the loop goes on
 * (up to 4 x the minimum) instead of failing. A failure names the kill, its planned delay
 * and the seed.
 */
#include "testutil.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crash/oracle.h"
#include "crash/scratch.h"
#include "util/thread.h"

enum { NWRITERS = 4, NKEYS = 400, MIN_KILLS = 100, CANARY_ROUNDS = 20 };

typedef enum { MSG_STARTED = 1, MSG_ACK, MSG_STATS, MSG_ERROR } msg_type;

/* One pipe message; 128 bytes < PIPE_BUF, so each write(2) of one is atomic. */
typedef struct msg {
    uint32_t type;
    uint32_t thread;
    uint64_t opno;
    uint64_t hash;
    uint64_t flushes, compactions;
    char text[88];
} msg;

typedef enum { CHILD_NORMAL, CHILD_ACK_FIRST } child_mode;

typedef struct child_writer {
    const oracle *o;
    kura_tree *tree;
    int fd;
    uint32_t t;
    child_mode mode;
} child_writer;

typedef struct totals {
    uint64_t kills, early_kills, acks, flushes, compactions, max_sstables;
} totals;

static kura_options kill9_options(void)
{
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_SYNC;
    o.default_partitions = 4;
    o.memtable_budget_bytes = 1 << 20; /* 128 KiB memtables per partition */
    o.l0_compaction_trigger = 2;
    o.level1_bytes = 512 << 10;
    o.sstable_target_bytes = 128 << 10;
    o.block_cache_bytes = 1 << 20;
    o.background_threads = 2;
    return o;
}

static oracle *kill9_oracle(uint64_t seed)
{
    oracle_config c;
    oracle_config_init(&c, seed);
    c.nthreads = NWRITERS;
    c.keys_per_thread = NKEYS;
    c.min_value = 64;
    c.max_value = 4096;
    c.batch_pct = 15;
    c.max_batch = 8;
    oracle *o = oracle_new(&c);
    assert_non_null(o);
    return o;
}

/* ---- the child ------------------------------------------------------------------------- */

static void send_msg(int fd, const msg *m)
{
    if (write(fd, m, sizeof *m) != (ssize_t)sizeof *m)
        _exit(4); /* the parent is gone */
}

static void child_fail(int fd, int code, const char *what, kura_status s)
{
    msg m = {.type = MSG_ERROR};
    snprintf(m.text, sizeof m.text, "%s: %s: %s", what, kura_status_str(s), kura_last_error());
    send_msg(fd, &m);
    _exit(code);
}

static void *child_write_loop(void *arg)
{
    child_writer *w = arg;
    for (uint64_t j = oracle_committed(w->o, w->t) + 1;; j++) {
        msg m = {.type = MSG_ACK, .thread = w->t, .opno = j};
        if (w->mode == CHILD_ACK_FIRST) {
            m.hash = oracle_op_hash(w->o, w->t, j);
            send_msg(w->fd, &m); /* the bug the canary plants: acknowledged too early */
        }
        kura_status s = oracle_exec(w->o, w->tree, w->t, j, NULL, &m.hash);
        if (s != KURA_OK)
            child_fail(w->fd, 3, "write", s);
        if (w->mode == CHILD_NORMAL)
            send_msg(w->fd, &m);
    }
    return NULL;
}

static void child_main(const char *dir, const oracle *o, int fd, child_mode mode)
{
    kura_options opts = kill9_options();
    kura_db *db = NULL;
    kura_tree *tree = NULL;
    kura_status s = kura_open(dir, &opts, &db);
    if (s != KURA_OK)
        child_fail(fd, 2, "kura_open", s);
    if ((s = kura_tree_open(db, "t", NULL, &tree)) != KURA_OK)
        child_fail(fd, 2, "kura_tree_open", s);
    msg m = {.type = MSG_STARTED};
    send_msg(fd, &m);
    child_writer w[NWRITERS];
    kthread th[NWRITERS];
    for (uint32_t t = 0; t < NWRITERS; t++) {
        w[t] = (child_writer){o, tree, fd, t, mode};
        if (!kthread_start(&th[t], child_write_loop, &w[t]))
            child_fail(fd, 2, "thread start", KURA_E_NOMEM);
    }
    for (;;) { /* report background work until killed */
        kura_stats st;
        kura_get_stats(db, &st);
        m = (msg){.type = MSG_STATS, .flushes = st.flushes, .compactions = st.compactions,
                  .opno = st.sstable_files};
        send_msg(fd, &m);
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* ---- the parent ------------------------------------------------------------------------ */

typedef struct round_state {
    oracle *o;
    bool early;        /* the kill was timed from the fork, not from the first write */
    uint64_t delay_ms; /* the planned kill point, from the seed */
    bool started;
    char error[sizeof(((msg *)0)->text) + 1];
    uint64_t acks, flushes, compactions, sstables;
} round_state;

static void handle(round_state *r, const msg *m)
{
    switch (m->type) {
    case MSG_STARTED:
        r->started = true;
        break;
    case MSG_ACK:
        if (!oracle_ack(r->o, m->thread, m->opno))
            fail_msg("writer %u acknowledged op %llu out of order (acked %llu)", m->thread,
                     (unsigned long long)m->opno,
                     (unsigned long long)oracle_acked(r->o, m->thread));
        if (m->hash != oracle_op_hash(r->o, m->thread, m->opno))
            fail_msg("writer %u op %llu: the child submitted other bytes than the model's",
                     m->thread, (unsigned long long)m->opno);
        r->acks++;
        break;
    case MSG_STATS:
        r->flushes = m->flushes;
        r->compactions = m->compactions;
        r->sstables = m->opno;
        break;
    case MSG_ERROR:
        memcpy(r->error, m->text, sizeof m->text);
        break;
    default:
        fail_msg("unknown message type %u", m->type);
    }
}

/* Reads one message; false at end of file (a partial message, from a killed writer, is
 * impossible with atomic pipe writes, and treated as the end). */
static bool read_msg(int fd, msg *m)
{
    size_t got = 0;
    while (got < sizeof *m) {
        ssize_t n = read(fd, (char *)m + got, sizeof *m - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        got += (size_t)n;
    }
    return true;
}

/* Reads messages until `deadline_ns` (0: until the child starts writing, then `delay_ns`
 * more) or the end of the pipe. Returns false at end of pipe. */
static bool pump(int fd, round_state *r, uint64_t deadline_ns, uint64_t delay_ns)
{
    for (;;) {
        uint64_t now = know_ns();
        if (deadline_ns && now >= deadline_ns)
            return true;
        int timeout = deadline_ns ? (int)((deadline_ns - now) / 1000000 + 1) : 60000;
        struct pollfd pfd = {fd, POLLIN, 0};
        int n = poll(&pfd, 1, timeout);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 && !deadline_ns)
            fail_msg("the child did not start writing within 60 s");
        if (n <= 0)
            continue;
        msg m;
        if (!read_msg(fd, &m))
            return false;
        bool was_started = r->started;
        handle(r, &m);
        if (!was_started && r->started && !deadline_ns)
            deadline_ns = know_ns() + delay_ns;
    }
}

/* Runs one child and kills it. */
static void run_round(const char *dir, round_state *r, child_mode mode, uint64_t *rng, totals *tot)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child_main(dir, r->o, p[1], mode);
        _exit(0);
    }
    close(p[1]);
    bool early = mode == CHILD_NORMAL && test_rand(rng) % 10 == 0;
    uint64_t delay_ns = (early ? test_rand(rng) % 41 : 5 + test_rand(rng) % 56) * 1000000u;
    r->early = early;
    r->delay_ms = delay_ns / 1000000u;
    bool alive = pump(p[0], r, early ? know_ns() + delay_ns : 0, delay_ns);
    if (alive)
        kill(pid, SIGKILL);
    msg m;
    while (read_msg(p[0], &m))
        handle(r, &m);
    close(p[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        fail_msg("the child ended by itself (status 0x%x) before the kill: %s", status,
                 r->error[0] ? r->error : "no message");
    tot->kills++;
    tot->early_kills += !r->started;
    tot->acks += r->acks;
    tot->flushes += r->flushes;
    tot->compactions += r->compactions;
    if (r->sstables > tot->max_sstables)
        tot->max_sstables = r->sstables;
}

/* Reopens the database and checks it against the model; commits on success. */
static bool reopen_and_check(const char *dir, oracle *o, char *why, size_t cap)
{
    kura_options opts = kill9_options();
    kura_db *db;
    kura_tree *tree;
    assert_kura_ok(kura_open(dir, &opts, &db));
    assert_kura_ok(kura_tree_open(db, "t", NULL, &tree));
    assert_kura_ok(oracle_route(o, tree));
    for (uint32_t t = 0; t < NWRITERS; t++) /* the op after the last ack may have run */
        oracle_set_attempted(o, t, oracle_acked(o, t) + 1);
    bool ok = oracle_check(o, tree, true, why, cap);
    kura_stats st;
    kura_get_stats(db, &st);
    assert_int_equal(st.readonly_partitions, 0);
    assert_kura_ok(kura_close(db));
    return ok;
}

/* Whether the kills so far reached what the loop must cut (see the top of the file). */
static bool kill9_covered(const totals *tot, uint64_t kills)
{
    return tot->acks > 0 && (kills < MIN_KILLS || (tot->flushes > 0 && tot->compactions > 0));
}

static void test_kill9_loop(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-kill9");
    uint64_t seed = test_seed(), rng = seed;
    oracle *o = kill9_oracle(seed);
    uint64_t kills = scratch_scaled(MIN_KILLS);
    totals tot = {0};
    char why[512];
    assert_true(reopen_and_check(dir, o, why, sizeof why)); /* creates the database */
    for (uint64_t i = 0; i < 4 * kills && (i < kills || !kill9_covered(&tot, kills)); i++) {
        round_state r = {.o = o};
        run_round(dir, &r, CHILD_NORMAL, &rng, &tot);
        if (!reopen_and_check(dir, o, why, sizeof why))
            fail_msg("kill %llu (seed %llu; killed %s, planned %llu ms after %s): %s",
                     (unsigned long long)i + 1, (unsigned long long)seed,
                     r.started ? "while writing" : "before writing started",
                     (unsigned long long)r.delay_ms,
                     r.early ? "the fork" : "the first write", why);
    }
    uint64_t ops = 0;
    for (uint32_t t = 0; t < NWRITERS; t++)
        ops += oracle_committed(o, t);
    fprintf(stderr,
            "kill9: %llu kills (%llu before writing started), %llu acks, %llu ops survive; "
            "the children ran %llu flushes and %llu compactions, up to %llu tables\n",
            (unsigned long long)tot.kills, (unsigned long long)tot.early_kills,
            (unsigned long long)tot.acks, (unsigned long long)ops,
            (unsigned long long)tot.flushes, (unsigned long long)tot.compactions,
            (unsigned long long)tot.max_sstables);
    if (!kill9_covered(&tot, kills))
        fail_msg("%llu kills (seed %llu) cut %llu acknowledged writes, %llu flushes and %llu "
                 "compactions: at least one acknowledged write%s was needed",
                 (unsigned long long)tot.kills, (unsigned long long)seed,
                 (unsigned long long)tot.acks, (unsigned long long)tot.flushes,
                 (unsigned long long)tot.compactions,
                 kills >= MIN_KILLS ? ", flush and compaction" : "");
    oracle_free(o);
    test_rmrf(dir);
}

/* The canary: acknowledging before the write must be caught. */
static void test_canary_ack_before_write(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-kill9-canary");
    uint64_t seed = test_seed(), rng = seed ^ 0xca;
    oracle *o = kill9_oracle(seed);
    totals tot = {0};
    char why[512];
    int caught_at = 0;
    assert_true(reopen_and_check(dir, o, why, sizeof why));
    for (int i = 1; i <= CANARY_ROUNDS && !caught_at; i++) {
        round_state r = {.o = o};
        run_round(dir, &r, CHILD_ACK_FIRST, &rng, &tot);
        if (!reopen_and_check(dir, o, why, sizeof why))
            caught_at = i;
    }
    if (!caught_at)
        fail_msg("the checker missed acknowledgements sent before the write in %d kills "
                 "(seed %llu)", CANARY_ROUNDS, (unsigned long long)seed);
    fprintf(stderr, "kill9 canary: caught at kill %d: %s\n", caught_at, why);
    oracle_free(o);
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9_loop),
        cmocka_unit_test(test_canary_ack_before_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

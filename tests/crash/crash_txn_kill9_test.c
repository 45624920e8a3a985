/*
 * crash_txn_kill9_test.c - the kill -9 loop under transactional writers: a child process runs
 * NWRITERS threads that move money between accounts spread over every partition of two
 * tables with TransactWriteItems (KURA_SYNC, small memtables, so flushes and compactions run
 * meanwhile); each transfer also advances its writer's ledger item (a third action on a third
 * table), and each account counts the transfers that touched it. The parent kills the child
 * with SIGKILL 5..60 ms after it started writing, reopens the database and checks:
 *  - the total over all accounts is the initial one (no transfer is half there);
 *  - every writer's ledger is at least its last acknowledged transfer and at most one more
 *    (the one in flight at the kill, which, found committed, counts as acknowledged from then
 *    on);
 *  - the accounts' transfer counts add up to twice the ledgers' (a ledger step committed
 *    without its transfer, or a transfer without its ledger step, breaks it);
 *  - the integrity check (kura_check: every file, WAL tails) finds nothing.
 * The next child continues from the state found. Canary: a child that acknowledges before it
 * commits must be caught (a ledger behind an acknowledgement) within a few kills.
 */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crash/index_check.h"
#include "crash/k9pipe.h"
#include "crash/scratch.h"
#include "util/thread.h"

enum { NWRITERS = 4, NACC = 32, START = 1000, MIN_KILLS = 30, CANARY_ROUNDS = 20 };

static kura_options options(void)
{
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_SYNC;
    o.memtable_budget_bytes = 1 << 20;
    o.l0_compaction_trigger = 2;
    return o;
}

static kura_value *J(const char *json)
{
    kura_value *v = NULL;
    return kura_value_from_json(json, strlen(json), true, &v) == KURA_OK ? v : NULL;
}

static kura_status exec(kura_db *db, const char *op, const char *json)
{
    char *out = NULL;
    size_t n = 0;
    kura_status s = kura_execute(db, op, json, strlen(json), &out, &n);
    kura_free(out);
    return s;
}

/* Account i: table KillA (even) or KillB (odd), key acct<i>; ledger w: table KillL. */
static const char *acct_table(int i)
{
    return i % 2 ? "KillB" : "KillA";
}

static void acct_key(int i, char *k, size_t cap)
{
    snprintf(k, cap, "{\"pk\":{\"S\":\"acct%d\"}}", i);
}

/* A number attribute of an item (0 if absent). */
static long num_attr(const kura_value *item, const char *name)
{
    const kura_value *v = item ? kura_value_get(item, name, strlen(name)) : NULL;
    char buf[180];
    return v && kura_value_num(v, buf, sizeof buf) ? strtol(buf, NULL, 10) : 0;
}

static kura_value *get(kura_db *db, const char *table, const char *key)
{
    kura_value *k = J(key);
    kura_get_item_req req = {.table_name = table, .key = k, .consistent_read = true};
    kura_get_item_res res = {0};
    kura_status s = kura_get_item(db, &req, &res);
    kura_value_free(k);
    if (s != KURA_OK)
        fail_msg("GetItem %s %s: %s", table, key, kura_last_error());
    return res.item;
}

static void setup(const char *dir)
{
    kura_options o = options();
    kura_db *db;
    assert_kura_ok(kura_open(dir, &o, &db));
    const char *tables[3] = {"KillA", "KillB", "KillL"};
    for (int t = 0; t < 3; t++) {
        char ct[512];
        snprintf(ct, sizeof ct,
                 "{\"TableName\":\"%s\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\","
                 "\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":"
                 "\"HASH\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}",
                 tables[t]);
        assert_kura_ok(exec(db, "CreateTable", ct));
    }
    for (int i = 0; i < NACC; i++) {
        char put[256];
        snprintf(put, sizeof put, "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"acct%d\"},"
                                  "\"bal\":{\"N\":\"%d\"},\"ops\":{\"N\":\"0\"}}}",
                 acct_table(i), i, START);
        assert_kura_ok(exec(db, "PutItem", put));
    }
    for (int w = 0; w < NWRITERS; w++) {
        char put[256];
        snprintf(put, sizeof put, "{\"TableName\":\"KillL\",\"Item\":{\"pk\":{\"S\":\"w%d\"},"
                                  "\"seq\":{\"N\":\"0\"}}}",
                 w);
        assert_kura_ok(exec(db, "PutItem", put));
    }
    assert_kura_ok(kura_close(db));
}

/* ---- the child --------------------------------------------------------------------------------- */

typedef struct writer {
    kura_db *db;
    int fd;
    uint32_t w;
    bool canary;
} writer;

static void *writer_main(void *arg)
{
    writer *wr = arg;
    char lkey[64];
    snprintf(lkey, sizeof lkey, "{\"pk\":{\"S\":\"w%u\"}}", wr->w);
    kura_value *ledger = get(wr->db, "KillL", lkey);
    uint64_t seq = (uint64_t)num_attr(ledger, "seq");
    kura_value_free(ledger);
    uint64_t rng = seq * 7919 + wr->w + 1;
    for (;;) {
        int from = (int)(test_rand(&rng) % NACC), to = (int)(test_rand(&rng) % NACC);
        if (from == to)
            to = (to + 1) % NACC;
        long amount = 1 + (long)(test_rand(&rng) % 20);
        char kf[64], kt[64], lv[160], av[64];
        acct_key(from, kf, sizeof kf);
        acct_key(to, kt, sizeof kt);
        snprintf(lv, sizeof lv, "{\":s\":{\"N\":\"%llu\"},\":n\":{\"N\":\"%llu\"}}",
                 (unsigned long long)seq, (unsigned long long)seq + 1);
        snprintf(av, sizeof av, "{\":a\":{\"N\":\"%ld\"},\":one\":{\"N\":\"1\"}}", amount);
        kura_value *vf = J(kf), *vt = J(kt), *vl = J(lkey), *lvals = J(lv), *avals = J(av);
        kura_transact_write_item it[3] = {
            {.op = KURA_TXN_UPDATE, .table_name = "KillL", .key = vl,
             .update_expression = "SET seq = :n", .condition_expression = "seq = :s",
             .expr = {.values = lvals}},
            {.op = KURA_TXN_UPDATE, .table_name = acct_table(from), .key = vf,
             .update_expression = "SET bal = bal - :a, ops = ops + :one",
             .expr = {.values = avals}},
            {.op = KURA_TXN_UPDATE, .table_name = acct_table(to), .key = vt,
             .update_expression = "SET bal = bal + :a, ops = ops + :one",
             .expr = {.values = avals}},
        };
        if (wr->canary) /* acknowledged before it happened: the checker must notice */
            k9_send(wr->fd, &(k9_msg){.type = K9_ACK, .thread = wr->w, .opno = seq + 1});
        kura_transact_write_req req = {.items = it, .item_count = 3};
        kura_transact_write_res res;
        kura_status s = kura_transact_write_items(wr->db, &req, &res);
        kura_transact_write_res_free(&res);
        kura_value_free(vf);
        kura_value_free(vt);
        kura_value_free(vl);
        kura_value_free(lvals);
        kura_value_free(avals);
        if (s != KURA_OK)
            k9_fail(wr->fd, "TransactWriteItems", kura_last_error());
        seq++;
        if (!wr->canary)
            k9_send(wr->fd, &(k9_msg){.type = K9_ACK, .thread = wr->w, .opno = seq});
    }
    return NULL;
}

static void child_main(const char *dir, int fd, bool canary)
{
    kura_options o = options();
    kura_db *db;
    if (kura_open(dir, &o, &db) != KURA_OK)
        k9_fail(fd, "kura_open", kura_last_error());
    writer w[NWRITERS];
    kthread th[NWRITERS];
    k9_send(fd, &(k9_msg){.type = K9_STARTED});
    for (uint32_t i = 0; i < NWRITERS; i++) {
        w[i] = (writer){db, fd, i, canary};
        if (!kthread_start(&th[i], writer_main, &w[i]))
            k9_fail(fd, "thread", "cannot start a writer");
    }
    for (;;)
        pause(); /* until the SIGKILL */
}

/* ---- the parent -------------------------------------------------------------------------------- */

typedef struct round_state {
    bool started;
    uint64_t acked[NWRITERS];
    uint64_t acks;
    char error[200];
} round_state;

static void handle(void *arg, const k9_msg *m)
{
    round_state *r = arg;
    if (m->type == K9_STARTED)
        r->started = true;
    else if (m->type == K9_ACK && m->thread < NWRITERS) {
        if (m->opno > r->acked[m->thread])
            r->acked[m->thread] = m->opno;
        r->acks++;
    } else if (m->type == K9_ERROR)
        memcpy(r->error, m->text, sizeof r->error);
}

/* Reopens the database and checks it; false with *why on a violation. A ledger found one past
 * its last acknowledgement (the transfer in flight at the kill committed) becomes the
 * writer's acknowledged state: the next child continues from it. */
static bool check(const char *dir, uint64_t *acked, char *why, size_t cap)
{
    kura_options o = options();
    kura_db *db;
    assert_kura_ok(kura_open(dir, &o, &db));
    long total = 0, ops = 0, seqs = 0;
    for (int i = 0; i < NACC; i++) {
        char k[64];
        acct_key(i, k, sizeof k);
        kura_value *it = get(db, acct_table(i), k);
        total += num_attr(it, "bal");
        ops += num_attr(it, "ops");
        kura_value_free(it);
    }
    bool ok = true;
    for (uint32_t w = 0; w < NWRITERS && ok; w++) {
        char lkey[64];
        snprintf(lkey, sizeof lkey, "{\"pk\":{\"S\":\"w%u\"}}", w);
        kura_value *l = get(db, "KillL", lkey);
        uint64_t seq = (uint64_t)num_attr(l, "seq");
        seqs += (long)seq;
        kura_value_free(l);
        if (seq < acked[w] || seq > acked[w] + 1) {
            snprintf(why, cap, "writer %u: ledger at %llu, last acknowledged %llu", w,
                     (unsigned long long)seq, (unsigned long long)acked[w]);
            ok = false;
        }
        acked[w] = seq > acked[w] ? seq : acked[w];
    }
    if (ok && total != (long)NACC * START) {
        snprintf(why, cap, "the accounts hold %ld, not %d: a transfer is half there", total,
                 NACC * START);
        ok = false;
    }
    if (ok && ops != 2 * seqs) {
        snprintf(why, cap, "the accounts count %ld transfers, the ledgers %ld", ops / 2, seqs);
        ok = false;
    }
    kura_status s = ok ? index_check_all(db) : KURA_OK;
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

/* One child, killed; its acknowledgements added to acked[]. */
static void run_round(const char *dir, bool canary, uint64_t *rng, uint64_t *acked,
                      uint64_t *acks)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child_main(dir, p[1], canary);
        _exit(0);
    }
    close(p[1]);
    round_state r = {0};
    memcpy(r.acked, acked, sizeof r.acked);
    uint64_t delay_ns = (5 + test_rand(rng) % 56) * 1000000u;
    bool alive = k9_pump(p[0], handle, &r, &r.started, 0, delay_ns);
    k9_finish(p[0], pid, alive, handle, &r, r.error);
    memcpy(acked, r.acked, sizeof r.acked);
    *acks += r.acks;
}

static void test_txn_kill9_loop(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-txn-kill9");
    uint64_t rng = test_seed(), acked[NWRITERS] = {0}, acks = 0;
    setup(dir);
    uint64_t kills = scratch_scaled(MIN_KILLS);
    char why[256];
    for (uint64_t i = 0; i < 4 * kills && (i < kills || acks == 0); i++) {
        run_round(dir, false, &rng, acked, &acks);
        if (!check(dir, acked, why, sizeof why))
            fail_msg("after kill %llu: %s", (unsigned long long)i + 1, why);
    }
    assert_true(acks > 0);
    test_rmrf(dir);
}

/* The checker is not blind: a child that acknowledges a transfer before committing it is
 * caught (its ledger behind an acknowledgement) within CANARY_ROUNDS kills. */
static void test_txn_kill9_canary(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("crash-txn-kill9-canary");
    uint64_t rng = test_seed() + 1, acked[NWRITERS] = {0}, acks = 0;
    setup(dir);
    char why[256];
    bool caught = false;
    for (int i = 0; i < CANARY_ROUNDS && !caught; i++) {
        run_round(dir, true, &rng, acked, &acks);
        caught = !check(dir, acked, why, sizeof why);
    }
    assert_true(caught);
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_txn_kill9_loop),
        cmocka_unit_test(test_txn_kill9_canary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * wal_commit_queue_test.c - group commit with wal/commit_queue.c over a real wal_writer:
 * 8 threads x 1000 synced records written exactly once and in per-thread order, every writer
 * gets its status, syncs are shared (groups < records); arrivals during a leader's work form
 * the next group; per-waiter statuses; a failed sync reaches the whole group and then every
 * later writer as KURA_E_READONLY; a records/s print.
 *
 * The slow sync comes from a small env (the POSIX table with sync replaced by a counter and
 * a sleep): util/io_fault.h injects failures but has no notion of a slow device. No verdict
 * depends on how the threads are scheduled: where a test needs a group of several writers,
 * the env's first sync holds its leader until the others have queued behind it
 * (wal_cq_pending), so the next group is formed by construction, not by the sleep.
 */
#include "testutil.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/coding.h"
#include "util/io.h"
#include "util/status.h"
#include "util/thread.h"
#include "wal/commit_queue.h"
#include "wal/reader.h"
#include "wal/writer.h"

/* ---- a slow, countable sync ----------------------------------------------------------- */

typedef struct slow_env {
    io_env base; /* first: files opened through it point back here */
    io_ops ops;
    atomic_int syncs;
    int fail_sync_at;       /* 1-based; 0 never */
    unsigned sync_delay_us; /* 0: the real fdatasync */
    /* when set, the first sync waits until hold_pending waiters are queued on hold_q (its own
     * leader included): the writers that arrive meanwhile must form the next group */
    wal_cq *hold_q;
    size_t hold_pending;
} slow_env;

enum { HOLD_DEADLINE_S = 60 }; /* only a hang reaches it */

/* Waits (polling every 100 us) until q holds n waiters; false after 60 s. Any thread. */
static bool cq_await_pending(wal_cq *q, size_t n)
{
    uint64_t deadline = know_ns() + HOLD_DEADLINE_S * 1000000000ull;
    while (wal_cq_pending(q) != n && know_ns() < deadline) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return wal_cq_pending(q) == n;
}

/* As cq_await_pending, failing the test at the deadline. The test's thread only. */
static void cq_wait_pending(wal_cq *q, size_t n)
{
    if (!cq_await_pending(q, n))
        fail_msg("%zu waiters queued after %d s, want %zu", wal_cq_pending(q), HOLD_DEADLINE_S,
                 n);
}

static kura_status slow_sync(io_file *f)
{
    slow_env *e = (slow_env *)f->env;
    int n = atomic_fetch_add(&e->syncs, 1) + 1;
    /* a writer's thread: a hang is reported through the status, which the test checks */
    if (n == 1 && e->hold_q && !cq_await_pending(e->hold_q, e->hold_pending))
        return kura_err(KURA_E_IO, "the held first sync: %zu waiters queued after %d s, want "
                        "%zu", wal_cq_pending(e->hold_q), HOLD_DEADLINE_S, e->hold_pending);
    if (n == e->fail_sync_at)
        return kura_err(KURA_E_IO, "fdatasync: injected failure");
    if (!e->sync_delay_us)
        return io_env_posix()->ops->sync(f);
    struct timespec ts = {0, (long)e->sync_delay_us * 1000};
    nanosleep(&ts, NULL);
    return KURA_OK;
}

static void slow_env_init(slow_env *e, unsigned delay_us)
{
    memset(e, 0, sizeof *e);
    e->ops = *io_env_posix()->ops;
    e->ops.sync = slow_sync;
    e->base.ops = &e->ops;
    e->sync_delay_us = delay_us;
}

/* ---- the engine's leader loop, in miniature ------------------------------------------ */

typedef struct cq_req {
    uint8_t rec[64]; /* thread (fixed32) | index (fixed32) | filler */
    size_t len;
    kura_status want; /* for per-waiter statuses */
} cq_req;

typedef struct cq_shared {
    wal_cq *q;
    wal_writer *w;
    atomic_size_t groups;
    atomic_size_t max_group;
    bool per_waiter; /* leader sets each member's status from req->want */
} cq_shared;

static size_t cq_req_bytes(void *payload)
{
    return ((cq_req *)payload)->len;
}

enum { CQ_MAX_GROUP = 32 };

static kura_status cq_write(cq_shared *sh, cq_req *req, bool sync)
{
    wal_cq_waiter me = {.payload = req, .sync = sync};
    if (!wal_cq_join(sh->q, &me))
        return me.status;
    wal_cq_waiter *group[CQ_MAX_GROUP];
    size_t n = wal_cq_group(sh->q, &me, group, CQ_MAX_GROUP, 1 << 20, cq_req_bytes);
    const void *recs[CQ_MAX_GROUP];
    size_t lens[CQ_MAX_GROUP];
    for (size_t i = 0; i < n; i++) {
        cq_req *r = group[i]->payload;
        recs[i] = r->rec;
        lens[i] = r->len;
    }
    kura_status s = wal_writer_addv(sh->w, recs, lens, n);
    if (s == KURA_OK && wal_cq_group_sync(group, n))
        s = wal_writer_sync(sh->w);
    atomic_fetch_add(&sh->groups, 1);
    size_t prev = atomic_load(&sh->max_group);
    while (n > prev && !atomic_compare_exchange_weak(&sh->max_group, &prev, n))
        ;
    if (sh->per_waiter) {
        for (size_t i = 0; i < n; i++)
            group[i]->status = s != KURA_OK ? s : ((cq_req *)group[i]->payload)->want;
        kura_status mine = me.status;
        wal_cq_finish_each(sh->q, group, n);
        return mine;
    }
    wal_cq_finish(sh->q, group, n, s);
    return s;
}

typedef struct cq_thread {
    cq_shared *sh;
    uint32_t id;
    uint32_t nrecs;
    kura_status *statuses; /* one per record, checked by the main thread */
} cq_thread;

static void cq_make_req(cq_req *r, uint32_t thread, uint32_t i)
{
    r->len = 8 + (thread * 7 + i) % 50;
    memset(r->rec, (int)(thread * 31 + i), r->len);
    enc_fixed32(r->rec, thread);
    enc_fixed32(r->rec + 4, i);
    r->want = i % 3 == 0 ? KURA_E_INVALID : KURA_OK;
}

static void *cq_thread_main(void *arg)
{
    cq_thread *t = arg;
    for (uint32_t i = 0; i < t->nrecs; i++) {
        cq_req req;
        cq_make_req(&req, t->id, i);
        t->statuses[i] = cq_write(t->sh, &req, true);
    }
    return NULL;
}

typedef struct cq_fixture {
    char *dir;
    char path[512];
    slow_env env;
    cq_shared sh;
} cq_fixture;

static int cq_setup(void **state)
{
    cq_fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("wal_cq");
    snprintf(f->path, sizeof f->path, "%s/000009.log", f->dir);
    slow_env_init(&f->env, 200);
    f->sh.q = wal_cq_new();
    assert_non_null(f->sh.q);
    assert_kura_ok(wal_writer_open(&f->env.base, f->path, IO_KIND_WAL, &f->sh.w));
    *state = f;
    return 0;
}

static int cq_teardown(void **state)
{
    cq_fixture *f = *state;
    assert_int_equal(wal_cq_pending(f->sh.q), 0);
    wal_cq_free(f->sh.q);
    wal_writer_close(f->sh.w);
    test_rmrf(f->dir);
    free(f);
    return 0;
}

/* Runs nthreads x nrecs synced writes; returns the elapsed seconds. statuses[t][i]. */
static double cq_run(cq_fixture *f, uint32_t nthreads, uint32_t nrecs, kura_status **statuses)
{
    cq_thread th[16];
    kthread tid[16];
    assert_true(nthreads <= 16);
    uint64_t t0 = know_ns();
    for (uint32_t t = 0; t < nthreads; t++) {
        th[t] = (cq_thread){&f->sh, t, nrecs, statuses[t]};
        assert_true(kthread_start(&tid[t], cq_thread_main, &th[t]));
    }
    for (uint32_t t = 0; t < nthreads; t++)
        kthread_join(tid[t]);
    return (know_ns() - t0) / 1e9;
}

static kura_status **cq_statuses(uint32_t nthreads, uint32_t nrecs)
{
    kura_status **s = calloc(nthreads, sizeof *s);
    for (uint32_t t = 0; t < nthreads; t++) {
        s[t] = malloc(nrecs * sizeof **s);
        for (uint32_t i = 0; i < nrecs; i++)
            s[t][i] = (kura_status)-1; /* "no status delivered" */
    }
    return s;
}

static void cq_statuses_free(kura_status **s, uint32_t nthreads)
{
    for (uint32_t t = 0; t < nthreads; t++)
        free(s[t]);
    free(s);
}

/* Reads the log back: each (thread, index) record at most once, in per-thread order, with
 * its exact content. Returns the number of records; seen[t] counts thread t's records. */
static size_t cq_verify_log(cq_fixture *f, uint32_t nthreads, uint32_t *seen)
{
    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(io_env_posix(), f->path, IO_KIND_WAL, &r));
    memset(seen, 0, nthreads * sizeof *seen);
    const uint8_t *p;
    size_t len, total = 0;
    kura_status s;
    while ((s = wal_reader_next(r, &p, &len)) == KURA_OK) {
        assert_true(len >= 8);
        uint32_t t = dec_fixed32(p), i = dec_fixed32(p + 4);
        assert_true(t < nthreads);
        if (i != seen[t])
            fail_msg("thread %u: record %u found where %u was expected (lost or duplicated)",
                     t, i, seen[t]);
        cq_req want;
        cq_make_req(&want, t, i);
        assert_int_equal(len, want.len);
        assert_memory_equal(p, want.rec, len);
        seen[t]++;
        total++;
    }
    assert_kura_status(s, KURA_E_NOT_FOUND);
    assert_int_equal(wal_reader_torn_at(r), -1);
    wal_reader_close(r);
    return total;
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_eight_writers(void **state)
{
    cq_fixture *f = *state;
    enum { T = 8, N = 1000 };
    f->env.hold_q = f->sh.q;
    f->env.hold_pending = T; /* the syncing leader and one waiter per other writer */
    kura_status **st = cq_statuses(T, N);
    double secs = cq_run(f, T, N, st);
    for (uint32_t t = 0; t < T; t++)
        for (uint32_t i = 0; i < N; i++)
            if (st[t][i] != KURA_OK)
                fail_msg("thread %u record %u: status %d", t, i, (int)st[t][i]);
    uint32_t seen[T];
    assert_int_equal(cq_verify_log(f, T, seen), T * N);
    for (uint32_t t = 0; t < T; t++)
        assert_int_equal(seen[t], N);
    size_t groups = atomic_load(&f->sh.groups), max_group = atomic_load(&f->sh.max_group);
    int syncs = atomic_load(&f->env.syncs);
    fprintf(stderr,
            "group commit, %d threads x %d synced records, 200 us sync: %zu groups (largest %zu), "
            "%d syncs, %.1f records per sync, %.0f records/s\n",
            T, N, groups, max_group, syncs, (double)(T * N) / syncs, T * N / secs);
    /* the first sync was held until every writer had queued its first record, so the first
     * two groups (the held one and the one behind it, which takes every waiter queued) hold
     * all T of them: one has at least T / 2 */
    if (max_group < T / 2 || groups > T * N - (T - 2))
        fail_msg("largest group %zu, want >= %d; %zu groups, want <= %d", max_group, T / 2,
                 groups, T * N - (T - 2));
    assert_int_equal((size_t)syncs, groups); /* one sync per group, each covers new bytes */
    assert_int_equal(wal_writer_synced(f->sh.w), wal_writer_size(f->sh.w));
    cq_statuses_free(st, T);
}

typedef struct handoff {
    wal_cq *q;
    int id;
    size_t bytes;  /* what the payload weighs for max_bytes */
    size_t max_n;  /* the group size limit this writer uses if it leads; 0: 8 */
    bool leader;
    size_t group_n;
    kura_status status;
} handoff;

static size_t handoff_bytes(void *payload)
{
    return ((handoff *)payload)->bytes;
}

/* A writer that, if it leads, takes a group, "syncs" it (status KURA_E_NOSPC if a member asked
 * for sync, else KURA_E_BUSY: distinct markers) and finishes it. */
static void *handoff_main(void *arg)
{
    handoff *h = arg;
    wal_cq_waiter me = {.payload = h, .sync = h->id == 2};
    h->leader = wal_cq_join(h->q, &me);
    if (!h->leader) {
        h->status = me.status;
        return NULL;
    }
    wal_cq_waiter *group[8];
    h->group_n = wal_cq_group(h->q, &me, group, h->max_n ? h->max_n : 8, SIZE_MAX, NULL);
    h->status = wal_cq_group_sync(group, h->group_n) ? KURA_E_NOSPC : KURA_E_BUSY;
    wal_cq_finish(h->q, group, h->group_n, h->status);
    return NULL;
}

/* Starts writers h[0..n) one after the other, each queued before the next starts. */
static void handoff_start(wal_cq *q, handoff *h, kthread *t, size_t n)
{
    size_t base = wal_cq_pending(q);
    for (size_t i = 0; i < n; i++) {
        h[i].q = q;
        assert_true(kthread_start(&t[i], handoff_main, &h[i]));
        cq_wait_pending(q, base + i + 1);
    }
}

/* Writers that arrive while a leader works are not in its group: they form the next one,
 * led by the first of them, and get that leader's status. */
static void test_arrivals_form_next_group(void **state)
{
    (void)state;
    wal_cq *q = wal_cq_new();
    wal_cq_waiter lead = {.payload = NULL, .sync = false};
    assert_true(wal_cq_join(q, &lead));
    wal_cq_waiter *group[8];
    assert_int_equal(wal_cq_group(q, &lead, group, 8, 1 << 20, NULL), 1);
    /* the leader is "syncing"; two writers arrive */
    handoff h[3] = {{.id = 1}, {.id = 2}, {.id = 3}};
    kthread t[3];
    handoff_start(q, h, t, 2);
    wal_cq_finish(q, group, 1, KURA_OK);
    assert_kura_ok(lead.status);
    kthread_join(t[0]);
    kthread_join(t[1]);
    assert_true(h[0].leader);
    assert_false(h[1].leader);
    assert_int_equal(h[0].group_n, 2);
    assert_int_equal(h[0].status, KURA_E_NOSPC); /* member 2 asked for sync */
    assert_int_equal(h[1].status, KURA_E_NOSPC);
    /* a writer arriving at an idle queue leads at once, alone */
    h[2].q = q;
    assert_true(kthread_start(&t[2], handoff_main, &h[2]));
    kthread_join(t[2]);
    assert_true(h[2].leader);
    assert_int_equal(h[2].group_n, 1);
    assert_int_equal(h[2].status, KURA_E_BUSY);
    assert_int_equal(wal_cq_pending(q), 0);
    wal_cq_free(q);
}

/* max_bytes and max_n bound a group (the leader always belongs to its own). */
static void test_group_limits(void **state)
{
    (void)state;
    wal_cq *q = wal_cq_new();
    handoff lead_h = {.bytes = 500};
    wal_cq_waiter lead = {.payload = &lead_h};
    assert_true(wal_cq_join(q, &lead));
    wal_cq_waiter *group[8];
    assert_int_equal(wal_cq_group(q, &lead, group, 8, 100, handoff_bytes), 1);
    wal_cq_finish(q, group, 1, KURA_OK);

    lead_h.bytes = 50;
    assert_true(wal_cq_join(q, &lead));
    handoff h[4] = {{.id = 1, .bytes = 100}, {.id = 2, .bytes = 200},
                    {.id = 3, .bytes = 300, .max_n = 1}, {.id = 4, .bytes = 10}};
    kthread t[4];
    handoff_start(q, h, t, 4);
    /* 50 + 100 + 200 = 350 fits, + 300 does not */
    assert_int_equal(wal_cq_group(q, &lead, group, 8, 350, handoff_bytes), 3);
    assert_ptr_equal(group[0], &lead);
    assert_ptr_equal(group[1]->payload, &h[0]);
    assert_ptr_equal(group[2]->payload, &h[1]);
    wal_cq_finish(q, group, 3, KURA_E_EXISTS);
    for (int i = 0; i < 4; i++)
        kthread_join(t[i]);
    assert_int_equal(h[0].status, KURA_E_EXISTS);
    assert_int_equal(h[1].status, KURA_E_EXISTS);
    assert_false(h[0].leader || h[1].leader);
    /* h[2] led a group of max_n = 1, then h[3] led its own */
    assert_true(h[2].leader && h[3].leader);
    assert_int_equal(h[2].group_n, 1);
    assert_int_equal(h[3].group_n, 1);
    assert_int_equal(wal_cq_pending(q), 0);
    wal_cq_free(q);
}

/* The leader sets each member's own status (finish_each). */
static void test_per_waiter_status(void **state)
{
    cq_fixture *f = *state;
    enum { T = 4, N = 300 };
    f->sh.per_waiter = true;
    kura_status **st = cq_statuses(T, N);
    cq_run(f, T, N, st);
    for (uint32_t t = 0; t < T; t++)
        for (uint32_t i = 0; i < N; i++)
            assert_int_equal(st[t][i], i % 3 == 0 ? KURA_E_INVALID : KURA_OK);
    uint32_t seen[T];
    assert_int_equal(cq_verify_log(f, T, seen), T * N);
    cq_statuses_free(st, T);
}

/* The 5th sync fails: its whole group gets KURA_E_IO, everyone after gets KURA_E_READONLY,
 * nobody hangs, no sync is issued again, and every acknowledged record is in the file. */
static void test_failed_sync_reaches_everyone(void **state)
{
    cq_fixture *f = *state;
    enum { T = 8, N = 200 };
    f->env.fail_sync_at = 5;
    kura_status **st = cq_statuses(T, N);
    cq_run(f, T, N, st);
    size_t ok = 0, io = 0, ro = 0;
    uint32_t acked[T] = {0};
    for (uint32_t t = 0; t < T; t++) {
        for (uint32_t i = 0; i < N; i++) {
            kura_status s = st[t][i];
            if (s == KURA_OK) {
                assert_int_equal(i, acked[t]); /* a thread's OKs come before its failures */
                acked[t]++;
                ok++;
            } else if (s == KURA_E_IO) {
                io++;
            } else if (s == KURA_E_READONLY) {
                ro++;
            } else {
                fail_msg("thread %u record %u: unexpected status %d", t, i, (int)s);
            }
        }
    }
    fprintf(stderr, "failed sync: %zu ok, %zu failed with the sync, %zu read-only\n", ok, io, ro);
    assert_int_equal(ok + io + ro, T * N);
    assert_true(io >= 1);
    assert_true(ro > 0);
    assert_int_equal(atomic_load(&f->env.syncs), 5);
    assert_true(wal_writer_failed(f->sh.w));
    uint32_t seen[T];
    cq_verify_log(f, T, seen);
    for (uint32_t t = 0; t < T; t++)
        assert_true(seen[t] >= acked[t]);
    cq_statuses_free(st, T);
}

/* Not a timed assertion: durable records/s with the real fdatasync, 8 writers. */
static void test_bench_real_sync(void **state)
{
    cq_fixture *f = *state;
    f->env.sync_delay_us = 0;
    enum { T = 8, N = 100 };
    kura_status **st = cq_statuses(T, N);
    double secs = cq_run(f, T, N, st);
    for (uint32_t t = 0; t < T; t++)
        for (uint32_t i = 0; i < N; i++)
            assert_kura_ok(st[t][i]);
    fprintf(stderr, "group commit, %d threads x %d records, real fdatasync: %.0f records/s, "
            "%d syncs\n", T, N, T * N / secs, atomic_load(&f->env.syncs));
    cq_statuses_free(st, T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_eight_writers, cq_setup, cq_teardown),
        cmocka_unit_test(test_arrivals_form_next_group),
        cmocka_unit_test(test_group_limits),
        cmocka_unit_test_setup_teardown(test_per_waiter_status, cq_setup, cq_teardown),
        cmocka_unit_test_setup_teardown(test_failed_sync_reaches_everyone, cq_setup, cq_teardown),
        cmocka_unit_test_setup_teardown(test_bench_real_sync, cq_setup, cq_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

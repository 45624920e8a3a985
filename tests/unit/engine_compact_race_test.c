/*
 * engine_compact_race_test.c - regression test: a full compaction (kura_tree_compact) must
 * wait for a compaction job that is running in the background even when a background error
 * is set while it waits.
 *
 * The bug (found by crash_powerloss_test under ASan): lsm_compact_all stopped waiting once a
 * background error was set, cleared the partition's `compacting` flag under the running job,
 * and kura_close then freed the partition while the job still used it. Here an io_env
 * wrapper holds the background job at its crash point "compaction.after_tables" (in the part
 * of the job that runs without the partition lock), a thread calls kura_tree_compact, the
 * test sets a background error, and kura_tree_compact must still be waiting; then the job is
 * released and everything closes cleanly (ASan checks the memory).
 *
 * kura_tree_compact first flushes (lsm_flush), and a flush that meets the error fails, and
 * with it the call, before it waits for anything: the error must come after that flush. The
 * test makes that order through the partition's commit queue, which the flush leads: the
 * test leads the queue until the flush has queued behind it, hands it over and queues again;
 * when it leads again the flush has finished its group, which it does holding the partition
 * lock it decides its status under, and the test takes that lock to set the error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engine/db_int.h"
#include "engine/lsm/batch.h"
#include "engine/lsm/lsm_int.h"
#include "kura.h"
#include "testutil.h"
#include "util/io.h"
#include "util/status.h"
#include "util/thread.h"

/* The POSIX env, except that crash point "compaction.after_tables" blocks while armed. */
typedef struct hold_env {
    io_env env;
    io_ops ops;
    kmutex mu;
    kcond cv;
    bool armed, held, released;
} hold_env;

static kura_status hold_crash_point(io_env *env, const char *name)
{
    hold_env *h = (hold_env *)env;
    kmutex_lock(&h->mu);
    if (h->armed && strcmp(name, "compaction.after_tables") == 0) {
        h->armed = false;
        h->held = true;
        kcond_broadcast(&h->cv);
        while (!h->released)
            kcond_wait(&h->cv, &h->mu);
    }
    kmutex_unlock(&h->mu);
    return KURA_OK;
}

typedef struct compact_call {
    kura_tree *tree;
    kura_status s;
    volatile bool done;
} compact_call;

static void *compact_main(void *arg)
{
    compact_call *c = arg;
    c->s = kura_tree_compact(c->tree);
    __atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Joins q with an empty batch (what lsm_flush queues) and, leading, finishes a group of just
 * itself. Returns once it has led. */
static void cq_lead_once(wal_cq *q)
{
    lsm_batch empty;
    lsm_batch_init(&empty);
    wal_cq_waiter w = {.payload = &empty};
    assert_true(wal_cq_join(q, &w)); /* groups here take one waiter: nobody finishes ours */
    wal_cq_waiter *group[1];
    assert_int_equal(wal_cq_group(q, &w, group, 1, SIZE_MAX, NULL), 1);
    wal_cq_finish(q, group, 1, KURA_OK);
    lsm_batch_free(&empty);
}

static void test_compact_all_waits_for_running_job(void **state)
{
    (void)state;
    hold_env h;
    memset(&h, 0, sizeof h);
    h.ops = *io_env_posix()->ops;
    h.ops.crash_point = hold_crash_point;
    h.env.ops = &h.ops;
    kmutex_init(&h.mu);
    kcond_init(&h.cv);

    char *dir = test_mkdtemp("compact-race");
    kura_options o;
    kura_options_init(&o);
    o.io = &h.env;
    o.default_partitions = 1;
    o.l0_compaction_trigger = 2;
    kura_db *db;
    kura_tree *tree;
    assert_kura_ok(kura_open(dir, &o, &db));
    assert_kura_ok(kura_tree_open(db, "t", NULL, &tree));
    /* two L0 tables with overlapping keys: a real compaction, not a trivial move */
    assert_kura_ok(kura_put(tree, NULL, "a", 1, "1", 1));
    assert_kura_ok(kura_put(tree, NULL, "c", 1, "1", 1));
    assert_kura_ok(kura_tree_flush(tree));
    kmutex_lock(&h.mu);
    h.armed = true;
    kmutex_unlock(&h.mu);
    assert_kura_ok(kura_put(tree, NULL, "b", 1, "2", 1));
    assert_kura_ok(kura_tree_flush(tree)); /* the second L0 table starts a compaction job */
    kmutex_lock(&h.mu);
    while (!h.held)
        kcond_wait(&h.cv, &h.mu);
    kmutex_unlock(&h.mu);

    /* lead the commit queue, so that the compaction's flush queues behind */
    lsm_tree *part = tree->parts[0];
    lsm_batch empty;
    lsm_batch_init(&empty);
    wal_cq_waiter w = {.payload = &empty};
    assert_true(wal_cq_join(part->cq, &w)); /* an idle queue: led at once */
    compact_call c = {.tree = tree};
    kthread th;
    assert_true(kthread_start(&th, compact_main, &c));
    uint64_t deadline = know_ns() + 60 * 1000000000ull; /* only a hang reaches it */
    while (wal_cq_pending(part->cq) < 2 && know_ns() < deadline)
        sleep_ms(1);
    if (wal_cq_pending(part->cq) != 2)
        fail_msg("the compaction's flush did not queue in 60 s (%zu queued)",
                 wal_cq_pending(part->cq));
    wal_cq_waiter *group[1];
    assert_int_equal(wal_cq_group(part->cq, &w, group, 1, SIZE_MAX, NULL), 1);
    wal_cq_finish(part->cq, group, 1, KURA_OK); /* the flush leads */
    lsm_batch_free(&empty);
    cq_lead_once(part->cq); /* after the flush's group */
    kmutex_lock(&part->mu); /* the flush has decided its status and let go */
    lsm_set_error(part, kura_err(KURA_E_IO, "injected background error"));
    kmutex_unlock(&part->mu);
    /* the job still runs, so the full compaction must still be waiting for it (a compaction
     * that stopped waiting would be done well within this; it decides no verdict of a correct
     * engine) */
    sleep_ms(200);
    assert_false(__atomic_load_n(&c.done, __ATOMIC_ACQUIRE));

    kmutex_lock(&h.mu);
    h.released = true;
    kcond_broadcast(&h.cv);
    kmutex_unlock(&h.mu);
    kthread_join(th);
    /* the background error, met after the wait (a flush that had met it: KURA_E_READONLY) */
    assert_kura_status(c.s, KURA_E_IO);
    assert_int_not_equal(kura_close(db), KURA_OK);
    kcond_destroy(&h.cv);
    kmutex_destroy(&h.mu);
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact_all_waits_for_running_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

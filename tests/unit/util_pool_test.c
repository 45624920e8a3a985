/*
 * util_pool_test.c - the thread pool (util/pool.h): jobs run in submission order on one
 * thread, every job runs exactly once on several, kpool_stop() runs what is queued before it
 * returns and refuses what comes after, and the pool can be freed without being stopped.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "util/pool.h"
#include "util/thread.h"

enum { NJOBS = 2000 };

typedef struct record {
    kmutex mu;
    int order[NJOBS];
    int n;
    int runs[NJOBS];
} record;

typedef struct job {
    record *rec;
    int id;
} job;

static void note(void *arg)
{
    job *j = arg;
    kmutex_lock(&j->rec->mu);
    j->rec->order[j->rec->n++] = j->id;
    j->rec->runs[j->id]++;
    kmutex_unlock(&j->rec->mu);
}

static record *record_new(void)
{
    record *r = calloc(1, sizeof *r);
    kmutex_init(&r->mu);
    return r;
}

static void test_one_thread_keeps_order(void **state)
{
    (void)state;
    record *rec = record_new();
    job *jobs = calloc(NJOBS, sizeof *jobs);
    kpool *p = kpool_new(1);
    assert_non_null(p);
    for (int i = 0; i < NJOBS; i++) {
        jobs[i] = (job){rec, i};
        assert_true(kpool_submit(p, note, &jobs[i]));
    }
    kpool_stop(p); /* runs everything queued before it returns */
    assert_int_equal(rec->n, NJOBS);
    for (int i = 0; i < NJOBS; i++)
        assert_int_equal(rec->order[i], i);
    assert_false(kpool_submit(p, note, &jobs[0])); /* refused once stopping */
    kpool_stop(p);                                  /* idempotent */
    kpool_free(p);
    assert_int_equal(rec->n, NJOBS);
    free(jobs);
    kmutex_destroy(&rec->mu);
    free(rec);
}

static void test_many_threads_run_each_job_once(void **state)
{
    (void)state;
    record *rec = record_new();
    job *jobs = calloc(NJOBS, sizeof *jobs);
    kpool *p = kpool_new(8);
    assert_non_null(p);
    for (int i = 0; i < NJOBS; i++) {
        jobs[i] = (job){rec, i};
        assert_true(kpool_submit(p, note, &jobs[i]));
    }
    kpool_free(p); /* stops first: the queue is drained */
    assert_int_equal(rec->n, NJOBS);
    for (int i = 0; i < NJOBS; i++)
        assert_int_equal(rec->runs[i], 1);
    kpool_free(NULL);
    free(jobs);
    kmutex_destroy(&rec->mu);
    free(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread_keeps_order),
        cmocka_unit_test(test_many_threads_run_each_job_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

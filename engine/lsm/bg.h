/*
 * bg.h - the background thread pool that runs flushes and compactions for every partition of
 * a database (DESIGN.md section 3, "Threads and memory").
 *
 * Jobs run in submission order on `nthreads` threads. A job must not block on another job.
 * bg_pool_free() runs the jobs still queued, then joins the threads; callers that own state a
 * job touches make sure their jobs finished before freeing that state (lsm_close waits).
 */
#ifndef KURA_LSM_BG_H
#define KURA_LSM_BG_H

#include <stdbool.h>

typedef struct bg_pool bg_pool;

bg_pool *bg_pool_new(unsigned nthreads); /* NULL on failure */
void bg_pool_free(bg_pool *p);           /* NULL ok */
/* Queues fn(arg); returns false on allocation failure (the job did not get queued). */
bool bg_pool_submit(bg_pool *p, void (*fn)(void *arg), void *arg);

#endif

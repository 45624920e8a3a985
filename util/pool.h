/*
 * pool.h - a fixed-size thread pool with a FIFO job queue: the engine's flushes and
 * compactions (DESIGN.md section 3, "Threads and memory") and kura-server's --sync writers.
 *
 * Jobs run in submission order on `nthreads` threads. A job must not block on another job.
 * kpool_stop() lets the threads run the jobs still queued, then joins them; from its start on,
 * kpool_submit() refuses new jobs (the caller runs the work itself or gives up). Callers that
 * own state a job touches make sure their jobs finished before freeing that state (lsm_close
 * waits).
 */
#ifndef KURA_UTIL_POOL_H
#define KURA_UTIL_POOL_H

#include <stdbool.h>

typedef struct kpool kpool;

kpool *kpool_new(unsigned nthreads); /* 0 means 1; NULL on failure */
/* Queues fn(arg). false (not queued) when out of memory or once kpool_stop() has begun. */
bool kpool_submit(kpool *p, void (*fn)(void *arg), void *arg);
/* Runs what is queued, joins the threads. Idempotent; the pool stays valid until freed. */
void kpool_stop(kpool *p);
void kpool_free(kpool *p); /* kpool_stop, then frees; NULL ok */

#endif

/*
 * bucket.h - a token bucket in DynamoDB's capacity units (engine/throttle/bucket.c): the
 * throughput of a provisioned table or index, with DynamoDB's burst capacity, and the per-key
 * limit (engine/throttle/key.h). docs/architecture.md, "Throttling model (issue 24)".
 *
 * Units: milli-units (THR_MU per unit), exact integers: an eventually consistent read of 4 KB
 * is 500, a transactional write of 1 KB is 2000. A rate is milli-units per second; rates up
 * to THR_RATE_MAX_MU (1,000,000 units a second) are exact without overflow.
 *
 * Time: every function takes the caller's clock, now_ms (milliseconds, any epoch, the same
 * for every call on one bucket); nothing here reads a clock. A clock that goes back is read as
 * no time passing (the bucket keeps its later time).
 *
 * Burst: DynamoDB "retains up to five minutes (300 seconds) of unused read and write
 * capacity" (developer guide, "Burst capacity"); a bucket's capacity is rate x burst_s
 * (THR_BURST_S for tables and indexes). A new bucket holds one second of its rate: DynamoDB
 * documents no burst for a table that has not yet left capacity unused.
 *
 * Ownership and threads: a bucket is a plain struct the caller owns (no allocation). It is
 * not synchronised: whoever shares one between writer threads holds one lock (the table's
 * throttle lock, wired in later) around every call, including the check and the consume of a
 * request (engine/throttle/decide.h), so that a request is admitted or refused whole.
 */
#ifndef KURA_ENGINE_THROTTLE_BUCKET_H
#define KURA_ENGINE_THROTTLE_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

#define THR_MU 1000ll                          /* milli-units per capacity unit */
#define THR_BURST_S 300ll                      /* seconds of unused capacity retained */
#define THR_RATE_MAX_MU (1000000ll * THR_MU)   /* the largest exact rate */

typedef struct thr_bucket {
    int64_t rate_mu;   /* refill, milli-units per second (0..THR_RATE_MAX_MU) */
    int64_t burst_s;   /* capacity in seconds of rate */
    int64_t tokens_mu; /* the balance; negative after thr_bucket_consume_after */
    int64_t frac;      /* refill not yet a whole milli-unit, in milli-units/1000 (0..999) */
    int64_t last_ms;   /* the time the balance was brought to */
} thr_bucket;

/* A bucket of `rate_mu` a second holding `burst_s` seconds of it at most, with one second of
 * rate (at most its capacity) at `now_ms`. */
void thr_bucket_init(thr_bucket *b, int64_t rate_mu, int64_t burst_s, int64_t now_ms);

/* rate x burst_s: the most the balance holds. */
int64_t thr_bucket_capacity(const thr_bucket *b);

/* Brings the balance to `now_ms`: adds the rate for the elapsed time, capped at the capacity
 * (unused capacity beyond burst_s seconds is lost). Exact: remainders of a milli-unit carry. */
void thr_bucket_refill(thr_bucket *b, int64_t now_ms);

/* The balance at `now_ms` (refills first). */
int64_t thr_bucket_balance(thr_bucket *b, int64_t now_ms);

/* Whether `n_mu` fits at `now_ms` (refills, consumes nothing). */
bool thr_bucket_fits(thr_bucket *b, int64_t n_mu, int64_t now_ms);

/* All or nothing: when `n_mu` fits in the balance at `now_ms`, takes it and returns true;
 * otherwise takes nothing and returns false. */
bool thr_bucket_try_consume(thr_bucket *b, int64_t n_mu, int64_t now_ms);

/* Takes `n_mu` known only after the request ran (a Query's bytes read): always taken, the
 * balance may go negative, and later requests are refused until the refill covers them. */
void thr_bucket_consume_after(thr_bucket *b, int64_t n_mu, int64_t now_ms);

/* UpdateTable: refills at the old rate up to `now_ms`, then takes `rate_mu`; the burst rule
 * holds at the new rate (a balance above the new capacity is cut to it). Decrease limits are
 * the caller's (engine/throttle/decrease.h). */
void thr_bucket_set_rate(thr_bucket *b, int64_t rate_mu, int64_t now_ms);

#endif

/*
 * This file contains the token bucket of DynamoDB's capacity units (bucket.h): refill by the
 * caller's clock, exact in milli-units, burst capped at burst_s seconds of the rate.
 */
#include "engine/throttle/bucket.h"

#include <assert.h>

/* Elapsed time beyond this refills nothing more (the balance is full long before, unless it
 * is more than 11 days of rate in debt); it bounds rate x elapsed within int64. */
#define THR_ELAPSED_MAX_MS 1000000000ll

int64_t thr_bucket_capacity(const thr_bucket *b)
{
    return b->rate_mu * b->burst_s;
}

void thr_bucket_init(thr_bucket *b, int64_t rate_mu, int64_t burst_s, int64_t now_ms)
{
    assert(rate_mu >= 0 && rate_mu <= THR_RATE_MAX_MU && burst_s >= 1);
    b->rate_mu = rate_mu;
    b->burst_s = burst_s;
    b->tokens_mu = rate_mu; /* one second: burst_s >= 1 so it fits */
    b->frac = 0;
    b->last_ms = now_ms;
}

void thr_bucket_refill(thr_bucket *b, int64_t now_ms)
{
    if (now_ms <= b->last_ms)
        return;
    int64_t elapsed = now_ms - b->last_ms;
    b->last_ms = now_ms;
    int64_t cap = thr_bucket_capacity(b);
    if (b->tokens_mu >= cap) {
        b->frac = 0; /* full: nothing accrues, not even a fraction */
        return;
    }
    if (elapsed > THR_ELAPSED_MAX_MS)
        elapsed = THR_ELAPSED_MAX_MS;
    /* rate_mu per 1000 ms: whole milli-units are added, the rest carries in frac */
    int64_t total = b->rate_mu * elapsed + b->frac;
    b->tokens_mu += total / 1000;
    b->frac = total % 1000;
    if (b->tokens_mu >= cap) {
        b->tokens_mu = cap;
        b->frac = 0;
    }
}

int64_t thr_bucket_balance(thr_bucket *b, int64_t now_ms)
{
    thr_bucket_refill(b, now_ms);
    return b->tokens_mu;
}

bool thr_bucket_fits(thr_bucket *b, int64_t n_mu, int64_t now_ms)
{
    assert(n_mu >= 0);
    thr_bucket_refill(b, now_ms);
    return n_mu <= b->tokens_mu;
}

bool thr_bucket_try_consume(thr_bucket *b, int64_t n_mu, int64_t now_ms)
{
    if (!thr_bucket_fits(b, n_mu, now_ms))
        return false;
    b->tokens_mu -= n_mu;
    return true;
}

void thr_bucket_consume_after(thr_bucket *b, int64_t n_mu, int64_t now_ms)
{
    assert(n_mu >= 0);
    thr_bucket_refill(b, now_ms);
    b->tokens_mu -= n_mu;
}

void thr_bucket_set_rate(thr_bucket *b, int64_t rate_mu, int64_t now_ms)
{
    assert(rate_mu >= 0 && rate_mu <= THR_RATE_MAX_MU);
    thr_bucket_refill(b, now_ms);
    b->rate_mu = rate_mu;
    int64_t cap = thr_bucket_capacity(b);
    if (b->tokens_mu >= cap) {
        b->tokens_mu = cap;
        b->frac = 0;
    }
}

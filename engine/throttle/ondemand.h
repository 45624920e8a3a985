/*
 * ondemand.h - the throughput an on-demand table or GSI serves at once
 * (engine/throttle/ondemand.c), for reads or for writes. docs/architecture.md, "Throttling
 * model (issue 24)".
 *
 * DynamoDB (developer guide, "On-demand capacity mode"): a new on-demand table serves up to
 * 4,000 WCU and 12,000 RCU a second (its warm throughput, THR_OD_WARM_*); "on-demand capacity
 * mode instantly accommodates up to double the previous peak traffic on a table ... If your
 * application sustains traffic of 100,000 reads per second, that peak becomes your new
 * previous peak ... throttling can occur if you exceed double your previous peak within 30
 * minutes." And OnDemandThroughput's MaxReadRequestUnits / MaxWriteRequestUnits (-1: no
 * maximum) cap it.
 *
 * The model: per second (now_ms / 1000, fixed windows), the units admitted are at most
 *     min(max(warm, 2 x peak), max)          (max ignored when -1)
 * where peak, the previous peak, is the highest per-second total admitted in a second that
 * ended 30 minutes ago or more: a new level takes 30 minutes to become the previous peak, so
 * traffic may double at once and not double again within 30 minutes. The peak never falls
 * (DynamoDB documents no decay of on-demand capacity). Seconds are kept as per-minute
 * maxima for the 31 most recent minutes (fixed memory).
 *
 * Units: milli-units (bucket.h). Time: the caller's now_ms, never going back for one state
 * (an earlier time is read as the current second). Ownership and threads: a plain struct the
 * caller owns; the caller's table throttle lock is held around every call.
 */
#ifndef KURA_ENGINE_THROTTLE_ONDEMAND_H
#define KURA_ENGINE_THROTTLE_ONDEMAND_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/throttle/bucket.h"

#define THR_OD_WARM_RCU_MU (12000 * THR_MU)
#define THR_OD_WARM_WCU_MU (4000 * THR_MU)
#define THR_OD_SETTLE_S 1800ll /* 30 minutes for a level to become the previous peak */
#define THR_OD_MINUTES 31

typedef enum thr_od_limit {
    THR_OD_FITS = 0,
    THR_OD_OVER_MAX,  /* past OnDemandThroughput's maximum */
    THR_OD_OVER_PEAK, /* past max(warm, 2 x previous peak) */
} thr_od_limit;

typedef struct thr_ondemand {
    int64_t warm_mu, max_mu; /* max_mu -1: no maximum */
    int64_t peak_mu;         /* the previous peak (settled) */
    int64_t sec;             /* the current second */
    int64_t sec_mu;          /* admitted in it */
    int64_t minute[THR_OD_MINUTES]; /* minute index of each slot; -1: empty */
    int64_t minute_mu[THR_OD_MINUTES]; /* its highest per-second total */
} thr_ondemand;

/* Warm throughput `warm_mu` (THR_OD_WARM_RCU_MU or _WCU_MU for a new table, or a table's
 * WarmThroughput), maximum `max_mu` (-1: none), nothing admitted yet, at `now_ms`. */
void thr_od_init(thr_ondemand *od, int64_t warm_mu, int64_t max_mu, int64_t now_ms);

/* UpdateTable's OnDemandThroughput (-1: none). */
void thr_od_set_max(thr_ondemand *od, int64_t max_mu);

/* The units a second served at `now_ms` without throttling: min(max(warm, 2 x peak), max). */
int64_t thr_od_limit_at(thr_ondemand *od, int64_t now_ms);

/* Whether `n_mu` more fits in the second of `now_ms`, and if not which limit refuses it
 * (the maximum first). Consumes nothing. */
thr_od_limit thr_od_check(thr_ondemand *od, int64_t n_mu, int64_t now_ms);

/* Counts `n_mu` admitted in the second of `now_ms` (after thr_od_check said it fits, or
 * after the fact for a cost known late: it may pass the limit then). */
void thr_od_add(thr_ondemand *od, int64_t n_mu, int64_t now_ms);

#endif

/*
 * This file contains the on-demand rule (ondemand.h): per-second totals, their per-minute
 * maxima for 31 minutes, and the previous peak they become after 30 minutes.
 */
#include "engine/throttle/ondemand.h"

#include <assert.h>

static int64_t thr_od_floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

void thr_od_init(thr_ondemand *od, int64_t warm_mu, int64_t max_mu, int64_t now_ms)
{
    assert(warm_mu >= 0 && max_mu >= -1);
    od->warm_mu = warm_mu;
    od->max_mu = max_mu;
    od->peak_mu = 0;
    od->sec = thr_od_floor_div(now_ms, 1000);
    od->sec_mu = 0;
    for (int i = 0; i < THR_OD_MINUTES; i++) {
        od->minute[i] = -1;
        od->minute_mu[i] = 0;
    }
}

void thr_od_set_max(thr_ondemand *od, int64_t max_mu)
{
    assert(max_mu >= -1);
    od->max_mu = max_mu;
}

/* Folds the slot into the peak when its minute ended THR_OD_SETTLE_S ago by second `sec`. */
static void thr_od_settle(thr_ondemand *od, int i, int64_t sec)
{
    if (od->minute[i] < 0 || (od->minute[i] + 1) * 60 + THR_OD_SETTLE_S > sec)
        return;
    if (od->minute_mu[i] > od->peak_mu)
        od->peak_mu = od->minute_mu[i];
    od->minute[i] = -1;
    od->minute_mu[i] = 0;
}

/* Moves to the second of `now_ms`: the finished second's total goes to its minute's slot
 * (whose older minute, 31 minutes back, has settled by then), and settled minutes to peak. */
static void thr_od_advance(thr_ondemand *od, int64_t now_ms)
{
    int64_t sec = thr_od_floor_div(now_ms, 1000);
    if (sec <= od->sec)
        return;
    int64_t min = thr_od_floor_div(od->sec, 60);
    int i = (int)(((min % THR_OD_MINUTES) + THR_OD_MINUTES) % THR_OD_MINUTES);
    if (od->minute[i] != min) {
        thr_od_settle(od, i, sec);
        assert(od->minute[i] < 0);
        od->minute[i] = min;
    }
    if (od->sec_mu > od->minute_mu[i])
        od->minute_mu[i] = od->sec_mu;
    for (int j = 0; j < THR_OD_MINUTES; j++)
        thr_od_settle(od, j, sec);
    od->sec = sec;
    od->sec_mu = 0;
}

static int64_t thr_od_scaled(const thr_ondemand *od)
{
    int64_t twice = 2 * od->peak_mu;
    return twice > od->warm_mu ? twice : od->warm_mu;
}

int64_t thr_od_limit_at(thr_ondemand *od, int64_t now_ms)
{
    thr_od_advance(od, now_ms);
    int64_t lim = thr_od_scaled(od);
    return od->max_mu >= 0 && od->max_mu < lim ? od->max_mu : lim;
}

thr_od_limit thr_od_check(thr_ondemand *od, int64_t n_mu, int64_t now_ms)
{
    assert(n_mu >= 0);
    thr_od_advance(od, now_ms);
    int64_t want = od->sec_mu + n_mu;
    if (od->max_mu >= 0 && want > od->max_mu)
        return THR_OD_OVER_MAX;
    if (want > thr_od_scaled(od))
        return THR_OD_OVER_PEAK;
    return THR_OD_FITS;
}

void thr_od_add(thr_ondemand *od, int64_t n_mu, int64_t now_ms)
{
    assert(n_mu >= 0);
    thr_od_advance(od, now_ms);
    od->sec_mu += n_mu;
}

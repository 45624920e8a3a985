/*
 * This file contains the decision for one request (decide.h): every limit is checked before
 * any is taken, throughput before keys, the table before its indexes, reads before writes.
 */
#include "engine/throttle/decide.h"

/* The throughput check of one side of a target: THR_ADMITTED when `n_mu` fits. */
static thr_refusal thr_side_check(thr_bucket *b, thr_ondemand *od, int64_t n_mu,
                                  int64_t now_ms)
{
    if (n_mu == 0)
        return THR_ADMITTED;
    if (b)
        return thr_bucket_fits(b, n_mu, now_ms) ? THR_ADMITTED : THR_REFUSED_PROVISIONED;
    if (od) {
        switch (thr_od_check(od, n_mu, now_ms)) {
        case THR_OD_FITS:
            return THR_ADMITTED;
        case THR_OD_OVER_MAX:
            return THR_REFUSED_OD_MAX;
        case THR_OD_OVER_PEAK:
            return THR_REFUSED_OD_PEAK;
        }
    }
    return THR_ADMITTED;
}

static bool thr_refuse(const thr_target *t, thr_refusal r, bool write, thr_verdict *out)
{
    if (r == THR_ADMITTED)
        return false;
    out->refusal = r;
    out->index_name = t->index_name;
    out->write = write;
    out->ondemand = write ? t->prov_write == NULL : t->prov_read == NULL;
    return true;
}

static bool thr_check_all(const thr_target *ts, size_t n, int64_t now_ms, thr_verdict *out)
{
    for (size_t i = 0; i < n; i++) {
        const thr_target *t = &ts[i];
        if (thr_refuse(t, thr_side_check(t->prov_read, t->od_read, t->read_mu, now_ms), false,
                       out) ||
            thr_refuse(t, thr_side_check(t->prov_write, t->od_write, t->write_mu, now_ms), true,
                       out))
            return true;
    }
    for (size_t i = 0; i < n; i++) {
        const thr_target *t = &ts[i];
        if (!t->key)
            continue;
        if (t->read_mu && !thr_bucket_fits(&t->key->read, t->read_mu, now_ms))
            return thr_refuse(t, THR_REFUSED_KEY, false, out);
        if (t->write_mu && !thr_bucket_fits(&t->key->write, t->write_mu, now_ms))
            return thr_refuse(t, THR_REFUSED_KEY, true, out);
    }
    return false;
}

/* Takes one side's units: from the bucket (which may go negative after the fact) or into
 * the on-demand second. */
static void thr_side_take(thr_bucket *b, thr_ondemand *od, int64_t n_mu, int64_t now_ms)
{
    if (n_mu == 0)
        return;
    if (b)
        thr_bucket_consume_after(b, n_mu, now_ms);
    else if (od)
        thr_od_add(od, n_mu, now_ms);
}

void thr_charge_after(const thr_target *ts, size_t n, int64_t now_ms)
{
    for (size_t i = 0; i < n; i++) {
        const thr_target *t = &ts[i];
        thr_side_take(t->prov_read, t->od_read, t->read_mu, now_ms);
        thr_side_take(t->prov_write, t->od_write, t->write_mu, now_ms);
        if (t->key && t->read_mu)
            thr_bucket_consume_after(&t->key->read, t->read_mu, now_ms);
        if (t->key && t->write_mu)
            thr_bucket_consume_after(&t->key->write, t->write_mu, now_ms);
    }
}

void thr_decide(const thr_target *ts, size_t n, int64_t now_ms, thr_verdict *out)
{
    thr_verdict v = {THR_ADMITTED, NULL, false, false};
    if (!thr_check_all(ts, n, now_ms, &v))
        thr_charge_after(ts, n, now_ms); /* everything fits: taking cannot go negative */
    *out = v;
}

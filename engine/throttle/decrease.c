/*
 * This file contains DynamoDB's daily limit on decreases of provisioned throughput
 * (decrease.h): four at any time in a UTC day, then one more whenever an hour has passed
 * without one.
 */
#include "engine/throttle/decrease.h"

#include <assert.h>

static int64_t thr_day_of(int64_t now_ms)
{
    /* floor division: days before the epoch stay whole days */
    return now_ms >= 0 ? now_ms / THR_DAY_MS : -((-now_ms + THR_DAY_MS - 1) / THR_DAY_MS);
}

void thr_decrease_init(thr_decrease *d)
{
    d->day = -1;
    d->count = 0;
    d->last_ms = 0;
}

int32_t thr_decrease_count(const thr_decrease *d, int64_t now_ms)
{
    return d->day == thr_day_of(now_ms) ? d->count : 0;
}

bool thr_decrease_allowed(const thr_decrease *d, int64_t now_ms, int64_t *next_ms_out)
{
    int64_t day = thr_day_of(now_ms);
    if (thr_decrease_count(d, now_ms) < THR_DECREASE_FREE)
        return true;
    int64_t next = d->last_ms + THR_DECREASE_GAP_MS;
    if (now_ms >= next)
        return true;
    if (next_ms_out) {
        int64_t tomorrow = (day + 1) * THR_DAY_MS;
        *next_ms_out = next < tomorrow ? next : tomorrow;
    }
    return false;
}

void thr_decrease_record(thr_decrease *d, int64_t now_ms)
{
    int64_t day = thr_day_of(now_ms);
    if (d->day != day) {
        d->day = day;
        d->count = 0;
    }
    d->count++;
    d->last_ms = now_ms;
}

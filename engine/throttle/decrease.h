/*
 * decrease.h - DynamoDB's limit on decreases of provisioned throughput
 * (engine/throttle/decrease.c). docs/architecture.md, "Throttling model (issue 24)".
 *
 * DynamoDB (developer guide, "Service quotas", "Decreasing provisioned throughput"): "You can
 * decrease the ReadCapacityUnits or WriteCapacityUnits settings for a table up to four times
 * any time per day. A day is defined according to Universal Time Coordinated (UTC).
 * Additionally, if there was no decrease in the past hour, an additional decrease is allowed.
 * This effectively brings the maximum number of decreases in a day to 27 times (4 decreases in
 * the first hour, and 1 decrease for each of the subsequent 1-hour windows in a day)." The
 * same holds for each global secondary index on its own: one counter per table and per GSI.
 *
 * A refused decrease is LimitExceededException; DynamoDB's message reads "Subscriber limit
 * exceeded: Provisioned throughput decreases are limited within a given UTC day. After the
 * first 4 decreases, each subsequent decrease in the same UTC day can be performed at most
 * once every 3600 seconds. Number of decreases today: N. Last decrease at <date>. Next
 * decrease can be made at <date>" (the caller formats it; the dates' format is unsettled).
 *
 * Time: now_ms is milliseconds since the Unix epoch (UTC days are cut at multiples of
 * 86,400,000 ms), given by the caller. Ownership and threads: a plain struct the caller owns,
 * read and changed under the caller's lock on the table's settings.
 */
#ifndef KURA_ENGINE_THROTTLE_DECREASE_H
#define KURA_ENGINE_THROTTLE_DECREASE_H

#include <stdbool.h>
#include <stdint.h>

#define THR_DECREASE_FREE 4              /* decreases allowed any time in a UTC day */
#define THR_DECREASE_GAP_MS 3600000ll    /* then one more after an hour without one */
#define THR_DAY_MS 86400000ll

typedef struct thr_decrease {
    int64_t day;     /* the UTC day (now_ms / THR_DAY_MS) `count` belongs to; -1: none yet */
    int32_t count;   /* decreases made in `day` */
    int64_t last_ms; /* the time of the last decrease (valid when count > 0) */
} thr_decrease;

/* No decrease made yet. */
void thr_decrease_init(thr_decrease *d);

/* Whether a decrease is allowed at `now_ms`; when it is not, *next_ms_out (optional) gets
 * the first time one is (the next hour after the last decrease, or the next UTC day). */
bool thr_decrease_allowed(const thr_decrease *d, int64_t now_ms, int64_t *next_ms_out);

/* Decreases made in the UTC day of `now_ms` (for the message). */
int32_t thr_decrease_count(const thr_decrease *d, int64_t now_ms);

/* Records a decrease made at `now_ms`; the caller checked thr_decrease_allowed first.
 * Increases are not limited and are not recorded. */
void thr_decrease_record(thr_decrease *d, int64_t now_ms);

#endif

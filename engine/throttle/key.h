/*
 * key.h - the limit on one partition-key value (engine/throttle/key.c): DynamoDB serves a
 * single partition at most 3,000 RCU and 1,000 WCU a second, in a table and in each GSI
 * alike, on-demand and provisioned alike. docs/architecture.md, "Throttling model (issue 24)".
 *
 * Why per key: one partition-key value always lives in one partition (its item collection is
 * never split across partitions by key), so its ceiling is the partition's, whatever the
 * table's total; write sharding (a suffix on the key) spreads a hot value over partitions.
 *
 * Burst: none. DynamoDB documents burst capacity (300 s of unused capacity) for a table's and
 * an index's provisioned throughput, not beyond the partition maximum ("adaptive capacity ...
 * provided that traffic does not exceed ... the partition maximum capacity"); so a key's
 * bucket holds one second of its limit (burst_s 1) and an idle key saves nothing beyond it.
 * Reads and writes have their own buckets: 3,000 RCU and 1,000 WCU at once are allowed (the
 * documented figures are each a per-second maximum; how DynamoDB combines them within one
 * partition is not documented).
 *
 * Adaptive capacity's rule for a hot key ("a hot partition may use the table's unused
 * capacity, up to the per-partition maximum"): kura does not split a table's provisioned
 * throughput between partitions, so a key is refused only by its own 3,000/1,000 or by the
 * table's (or index's) whole bucket: thr_decide (decide.h) checks both.
 *
 * Ownership and threads: as bucket.h; where keys live (the sketch of hot keys) is the
 * caller's.
 */
#ifndef KURA_ENGINE_THROTTLE_KEY_H
#define KURA_ENGINE_THROTTLE_KEY_H

#include "engine/throttle/bucket.h"

#define THR_KEY_RCU_MU (3000 * THR_MU) /* per partition-key value, a second */
#define THR_KEY_WCU_MU (1000 * THR_MU)

typedef struct thr_key {
    thr_bucket read, write;
} thr_key;

/* A key first seen at `now_ms`: each bucket full with one second of its limit. */
void thr_key_init(thr_key *k, int64_t now_ms);

#endif

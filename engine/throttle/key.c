/*
 * This file contains the per-key limit's buckets (key.h): 3,000 RCU and 1,000 WCU a second
 * for one partition-key value, with no burst beyond one second.
 */
#include "engine/throttle/key.h"

void thr_key_init(thr_key *k, int64_t now_ms)
{
    thr_bucket_init(&k->read, THR_KEY_RCU_MU, 1, now_ms);
    thr_bucket_init(&k->write, THR_KEY_WCU_MU, 1, now_ms);
}

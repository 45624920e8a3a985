/*
 * heat.h - capacity accounting (issue 24, part 1): read and write units per second of every
 * key a caller records, in bounded memory whatever the number of distinct keys.
 * docs/architecture.md, "Capacity accounting (issue 24)".
 *
 * A heat_acc is one accounting domain (the caller keeps one per table and one per index; the
 * wiring into the item paths comes later). It keeps:
 *   - the exact totals of the units recorded, per second, over the last HEAT_WINDOW_S seconds
 *     (engine/heat_window.h);
 *   - a space-saving top-k sketch of the keys (engine/heat_sketch.h), each counter with its
 *     own per-second window, from which heat_acc_top reports the hottest keys.
 *
 * Units: half units (HEAT_UNIT_SCALE = 2 per DynamoDB read or write unit), exact integers;
 * the caller converts its ConsumedCapacity (0.5 for an eventually consistent 4 KB read, 2 for
 * a transactional write) by doubling. Time: every call takes now_ms from the caller (no clock
 * read here); see heat_window.h for what falls in a window.
 *
 * Thread safety: any number of threads may call heat_acc_record and heat_acc_top/total at
 * once. The accumulator is split into `stripes` independent stripes, each a mutex, a totals
 * window and a sketch of k / stripes counters; a key belongs to the stripe its hash selects
 * (high bits), so a key's counts are never split. Why stripes and not per-thread sketches
 * merged on read: the record path is one hash and one uncontended lock on most calls (two
 * writers meet on a stripe with probability 1/stripes), it keeps no per-thread state to
 * register or to free when threads end, and the totals stay exact under any interleaving;
 * merging per-thread space-saving sketches would add each thread's error to the bound.
 * The cost: the sketch's guarantee holds per stripe (below), and with a uniform hash the
 * stripes' weights are close to N / stripes, so the bound stays close to N / k.
 * Measured (tests/unit/heat_acc_test.c, tight loop, 2 shared cores): 27 ns a record on a
 * key already counted, ~110 ns on a new key evicting another, one thread; two threads on
 * one accumulator 90-145 ns and 290-360 ns, the stripes' cache lines moving between cores
 * (64 stripes: 90-110 and 170-200 ns). Per-thread sketches would avoid that movement at the
 * price of the bound above.
 *
 * Error bounds, per stripe s with N_s half units recorded and k_s = ceil(k / stripes)
 * counters: every key whose true units exceed N_s / k_s holds a counter; a reported key's
 * units over a window are exact for the units recorded since it took its counter and low by
 * at most its `err` (units before admission). Its count since admission is never high.
 *
 * Memory: all of it allocated by heat_acc_open, nothing after: heat_acc_bytes() bytes, O(k):
 * stripes * (one window + heat_sketch_bytes(k_s, key_max)) plus the struct. With k = 1024,
 * key_max = 2048 and 8 stripes: 3,645,976 bytes (3.5 MiB), whatever the number of distinct
 * keys (tests/unit/heat_sketch_test.c, 10 M keys).
 * heat_acc_record never allocates; heat_acc_top allocates its result.
 */
#ifndef KURA_ENGINE_HEAT_H
#define KURA_ENGINE_HEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/heat_window.h"
#include "kura.h"

/* DynamoDB's partition-key values are at most 2048 bytes. */
#define HEAT_KEY_MAX_DEFAULT 2048

typedef struct heat_config {
    uint32_t k;       /* counters in all (0: 1024) */
    uint32_t stripes; /* a power of two (0: 8); more than k is clamped to k's power of two */
    uint32_t key_max; /* key bytes stored per counter (0: HEAT_KEY_MAX_DEFAULT) */
    uint32_t filter_buckets; /* an admission filter of this many buckets in all
                              * (heat_sketch_set_filter; a power of two, 0: none) */
    bool pair;          /* a second sketch per stripe (heat_acc_record_pair) */
} heat_config;

typedef struct heat_acc heat_acc;

/* A new accumulator by cfg (NULL: the defaults) in *acc_out, owned by the caller, freed by
 * heat_acc_close. KURA_E_INVALID for stripes not a power of two, KURA_E_NOMEM. */
kura_status heat_acc_open(const heat_config *cfg, heat_acc **acc_out);
void heat_acc_close(heat_acc *acc);

/* The bytes the accumulator holds (constant from heat_acc_open on). */
size_t heat_acc_bytes(const heat_acc *acc);

/* Records rd and wr half units on key[0..len) at now_ms. Thread-safe; never allocates. */
void heat_acc_record(heat_acc *acc, const void *key, size_t len, int64_t now_ms, uint64_t rd,
                     uint64_t wr);

/* With heat_config.pair: records on key[0..first_len) as heat_acc_record does and, when
 * len > first_len, on the whole key[0..len) in the stripe's second sketch, under the one
 * mutex of the first key's stripe (a partition key and its item: the items of a partition key
 * share its stripe, so the second sketch's bound holds per stripe too). The totals count the
 * units once. Without pair it is heat_acc_record of the first key. */
void heat_acc_record_pair(heat_acc *acc, const void *key, size_t first_len, size_t len,
                          int64_t now_ms, uint64_t rd, uint64_t wr);

/* The exact half units recorded in the last `secs` seconds at now_ms (heat_window_sum). */
void heat_acc_total(heat_acc *acc, int64_t now_ms, uint32_t secs, uint64_t *rd_out,
                    uint64_t *wr_out);

typedef enum heat_kind { HEAT_READ, HEAT_WRITE } heat_kind;

/* One key of a top list. */
typedef struct heat_entry {
    uint8_t *key;       /* the stored bytes: min(key_len, key_max), owned by the heat_top */
    uint32_t key_len;   /* the whole key's length; > stored when truncated */
    uint64_t units;     /* half units of the kind asked, over the window */
    uint64_t rd, wr;    /* both kinds' half units over the window */
    uint64_t err;       /* the true units of the window are in [units, units + err] */
    uint64_t peak_rd, peak_wr; /* the busiest second's half units of each kind (since the
                                * key took its counter) */
} heat_entry;

typedef struct heat_top {
    size_t n;
    heat_entry *e; /* by units, descending; ties by key bytes */
    uint32_t secs; /* the window, for rates: units / HEAT_UNIT_SCALE / secs per second */
} heat_top;

/* The n hottest keys by `kind` over the last `secs` seconds at now_ms (keys with no units of
 * that kind left out), in *top_out; free with heat_top_free. KURA_E_NOMEM. */
kura_status heat_acc_top(heat_acc *acc, int64_t now_ms, uint32_t secs, heat_kind kind,
                         size_t n, heat_top *top_out);
void heat_top_free(heat_top *top);
/* heat_acc_top of the second keys (heat_config.pair; none without it). */
kura_status heat_acc_top_second(heat_acc *acc, int64_t now_ms, uint32_t secs, heat_kind kind,
                                size_t n, heat_top *top_out);

/* Units per second of an entry (DynamoDB units). */
static inline double heat_rate(uint64_t half_units, uint32_t secs)
{
    return (double)half_units / HEAT_UNIT_SCALE / (secs ? secs : 1);
}

#endif

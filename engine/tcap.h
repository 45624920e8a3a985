/*
 * tcap.h - a table's capacity at run time (engine/tcap.c, engine/tcap_admit.c,
 * engine/tcap_report.c): the accounting of read and write units per partition-key value,
 * always on, and DynamoDB's throttling, on with kura_options.throttle. docs/architecture.md,
 * "Capacity accounting and throttling on the item paths".
 *
 * A table has one tcap; a target is the table itself or one of its indexes (by index id, never
 * reused). Per target:
 *   - keys:  a heat accumulator (engine/heat.h) of the partition-key values (the table's, or
 *            the index's HASH attributes), their encodings without the hash prefix;
 *     and, in the same accumulator's second sketches (heat_config.pair: one record, one
 *     stripe mutex for both), partition + sort keys (tables and indexes with a sort key);
 *   - throttled requests per key (allocated at the first refusal) and per second;
 *   - with throttling on: the table's or GSI's throughput (provisioned buckets with burst, or
 *     the on-demand rule) and a bounded table of the hot keys' own 3,000 / 1,000 buckets.
 * The accumulators are allocated at a target's first record, so a table nobody uses costs a
 * few hundred bytes; each is heat_acc_bytes() (TCAP_HEAT_K counters), whatever the number of
 * distinct keys.
 *
 * Where it sits: the item paths (engine/item*.c, query.c, scan.c) ask tcap_admit before they
 * read or write anything and call tcap_done with what the request cost; a refusal leaves
 * nothing done. A GSI's units are recorded by the index applier (index/apply.c) as it writes
 * the entries, from the same change the base write logged (asynchronously, as CloudWatch
 * sees them); its throttle is decided at the base write from the new item's index key.
 *
 * Threads: tcap_record and the accumulators are thread-safe without the tcap's lock; the
 * throttle state is under the tcap's mutex (one per table).
 */
#ifndef KURA_ENGINE_TCAP_H
#define KURA_ENGINE_TCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/heat.h"
#include "engine/model/value.h"
#include "engine/throttle/decide.h"
#include "index/index.h"
#include "kura.h"

struct kura_table;
struct kura_db;

#define TCAP_HEAT_K 64      /* counters per accumulator (4 stripes) */
#define TCAP_KEY_MAX 256    /* key bytes kept per counter (longer keys shown cut) */
#define TCAP_KEY_SLOTS 1024 /* throttled keys' buckets kept per target */
#define TCAP_FILTER_BUCKETS                                                                        \
    4096 /* each sketch's admission filter (heat_sketch_set_filter): 32 KB */

typedef struct tcap tcap;

/* A new, empty capacity state (throttling off); NULL when out of memory. */
tcap *tcap_new(void);
void tcap_free(tcap *c);

/* Throttling on or off and the clock (kura_options.throttle, .capacity_clock), at open. */
void tcap_bind(tcap *c, const kura_options *o);
bool tcap_throttling(const tcap *c);
/* Whether the accounting is on (kura_options.capacity_accounting_off turns it off). */
bool tcap_accounting(const tcap *c);
/* Milliseconds by the bound clock (CLOCK_REALTIME without one); tcap_clock_now by the clock
 * of options `o` (the same clock, for a caller without a table). */
int64_t tcap_now(const tcap *c);
int64_t tcap_clock_now(const kura_options *o);

/* The table's settings the throttle follows (billing mode, throughput, OnDemandThroughput,
 * its GSIs), copied from `t`; db->tables_mu held. Called at open and after every change. */
void tcap_configure(const struct kura_table *t);

/* The bytes the capacity state holds (its targets' accumulators and key buckets): fixed once
 * a target has seen traffic, whatever the number of keys. */
size_t tcap_bytes(tcap *c);

/* ---- Accounting ------------------------------------------------------------------------- */

/* The length of the partition-key part of key bytes `p` (an encoded key without its hash
 * prefix): the encodings of `n` values of `types`. 0 when they do not parse. */
size_t tcap_prefix_len(const uint8_t *p, size_t len, const kura_type *types, uint32_t n);

/* Records rd/wr half units (HEAT_UNIT_SCALE per unit) on target `index_id` (0: the table):
 * on the partition key enc[0..pk_len) and on the item enc[0..len) (len == pk_len: no sort
 * key part). `sorted`: the target has a sort key (its accumulator keeps items too).
 * Thread-safe; allocates the target's accumulators at its first record. */
void tcap_record(tcap *c, uint32_t index_id, bool sorted, const uint8_t *enc, size_t pk_len,
                 size_t len, uint64_t rd, uint64_t wr, int64_t now_ms);

/* The index applier's hook (index/runtime.h idx_rt_args.charge): `units` write units of an
 * entry of index d (its entry key) recorded on d's target; arg is the table's tcap. */
void tcap_index_charge(void *arg, const idx_def *d, const uint8_t *key, size_t klen, double units);

/* Half units of a read of `bytes` (DynamoDB's 4 KB units, halved when eventually consistent)
 * and of a write of `bytes` (1 KB units; `txn`: doubled). */
uint64_t tcap_read_half(uint64_t bytes, bool consistent);
uint64_t tcap_write_half(uint64_t bytes, bool txn);

/* ---- Admission (throttling) --------------------------------------------------------------- */

/* One request's admission: what it needs and where. Fill with tcap_op_init, then the key and
 * the estimate; tcap_admit decides; tcap_done records what it cost. */
typedef struct tcap_op {
    struct kura_table *t;
    const uint8_t *skey; /* the storage key (hash prefix included); NULL: no single key */
    size_t klen;
    bool write;
    bool txn;               /* a transaction's piece (units doubled by the caller) */
    uint64_t est_half;      /* the units admitted before the request runs, half units */
    const kura_value *item; /* a write's new item: its GSI keys are charged too (NULL none) */
    int64_t now_ms;
    bool admitted;          /* tcap_admit charged the throttle (tcap_done charges the rest) */
    struct tcap_target *tg; /* set by tcap_admit: the table's target and the key's buckets */
    thr_key *key;
} tcap_op;

void tcap_op_init(tcap_op *op, struct kura_table *t, bool write);

/* With throttling off: KURA_OK at once (op->now_ms set). On: every limit the request meets is
 * checked and charged, or none: KURA_E_THROUGHPUT_EXCEEDED (ProvisionedThroughputExceeded-
 * Exception) or KURA_E_THROTTLED (ThrottlingException) with DynamoDB's message. */
kura_status tcap_admit(tcap_op *op);

/* After the request ran (whether it succeeded or not: a failed condition is charged too):
 * records `half` units on the table target's key, and charges the throttle what passed the
 * estimate. `ok` false: the request failed before it read anything (nothing recorded). */
void tcap_done(tcap_op *op, uint64_t half, bool ok);

/* Several requests admitted or refused together (a transaction): ops[0..n) of one table or
 * several; on refusal *which_out is the first op refused. */
kura_status tcap_admit_all(tcap_op *ops, size_t n, size_t *which_out);

/* With throttling on, DynamoDB's limit on decreases of provisioned throughput (4 a UTC day,
 * then one an hour) for the table (index_id 0) or a GSI: KURA_OK and the decrease counted,
 * or KURA_E_LIMIT_EXCEEDED with DynamoDB's message. Throttling off: KURA_OK. Kept in memory:
 * a reopened database counts from zero. */
kura_status tcap_decrease(tcap *c, uint32_t index_id);

/* The exception name DynamoDB sends for a status of tcap_admit (NULL: not a throttle). */
const char *tcap_error_type(kura_status s);

#endif

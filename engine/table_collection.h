/*
 * table_collection.h - a table's item collections as ReturnItemCollectionMetrics and the
 * 10 GB limit see them (engine/ only; engine/table_collection.c, on the cache of
 * engine/collection.h).
 *
 * Only tables with a local secondary index account their collections, as in DynamoDB; for any
 * other table every function here is a no-op. The size of a collection is the sum, over its
 * items, of the item's DynamoDB size (val_item_size) and the projected size of its entry in
 * each LSI (idx_projected_size; nothing for an LSI the item has no entry in): the figures
 * DescribeTable's TableSizeBytes and IndexSizeBytes are made of. GSIs do not count.
 *
 * A write calls table_coll_begin under its item lock after it has read the old item and
 * checked its condition, then writes, then calls table_coll_end (still under the lock).
 */
#ifndef KURA_ENGINE_TABLE_COLLECTION_H
#define KURA_ENGINE_TABLE_COLLECTION_H

#include "engine/collection.h"
#include "engine/table.h"

/* Whether t's writes account their item collections (t has an LSI). */
static inline bool table_has_lsi(const kura_table *t)
{
    return t->nlsi > 0;
}

/* DynamoDB's 10 GB, in bytes (GB = 2^30, as SizeEstimateRangeGB counts them). */
#define TABLE_COLL_DEFAULT_LIMIT (10ull << 30)

/* What `item` (NULL: none) adds to its collection. KURA_E_NOMEM. */
kura_status table_coll_item_size(const kura_table *t, const kura_value *item, uint64_t *size_out);

/*
 * Registers the write of the item stored under `skey` from `old` to `neu` (either NULL: absent
 * before / deleted) with its collection. `want`: the caller returns the size (SIZE); it is then
 * in tk->size_after (tk->measured). A write that grows the item is checked against the limit
 * (kura_options.item_collection_limit_bytes): KURA_E_COLLECTION_SIZE "Collection size
 * exceeded", nothing registered, nothing to write. Measuring a collection not cached scans it
 * (its storage errors are returned). On success the caller must call table_coll_end.
 */
kura_status table_coll_begin(kura_table *t, const uint8_t *skey, size_t klen,
                             const kura_value *old, const kura_value *neu, bool want,
                             coll_ticket *tk);
/* A write of several items registers every item after its first with table_coll_try_begin,
 * which returns KURA_E_BUSY (nothing registered) instead of waiting; the write then cancels
 * what it registered (table_coll_cancel), calls table_coll_settle for that item (it waits
 * and measures, registering nothing) and starts its registrations again: a write never waits
 * for a collection while it holds another's registration (engine/collection.h). */
kura_status table_coll_try_begin(kura_table *t, const uint8_t *skey, size_t klen,
                                 const kura_value *old, const kura_value *neu, bool want,
                                 coll_ticket *tk);
kura_status table_coll_settle(kura_table *t, const uint8_t *skey, size_t klen,
                              const kura_value *old, const kura_value *neu, bool want);
/* Ends a registration whose write was not attempted. Zeroes *tk. */
void table_coll_cancel(kura_table *t, coll_ticket *tk);
/* After the write (`written`: it succeeded). Zeroes *tk. */
void table_coll_end(kura_table *t, coll_ticket *tk, bool written);

/* ItemCollectionMetrics of the collection of `skey` at `size_bytes` into *m (zeroed).
 * KURA_E_NOMEM, KURA_E_CORRUPTION (a storage key that does not parse). */
kura_status table_coll_metrics(const kura_table *t, const uint8_t *skey, size_t klen,
                               uint64_t size_bytes, kura_item_collection_metrics *m);
/* Frees what *m owns and zeroes it. */
void table_coll_metrics_free(kura_item_collection_metrics *m);

/* The integrity check (engine/table_verify_items.c). The length of the collection prefix
 * hash64(enc(pk)) || enc(pk) of a storage key (KURA_E_CORRUPTION if it does not parse); the
 * table's collection size limit; and every collection size the cache holds compared with a
 * recount made while the collection's writes wait (coll_verify): fn(arg, prefix, len, cached,
 * counted) for each that differs, *compared_out the number compared. No-op without an LSI.
 * The recounts' storage errors are returned. */
kura_status table_coll_prefix_len(const kura_table *t, const uint8_t *skey, size_t klen,
                                  size_t *len_out);
uint64_t table_coll_limit(const kura_table *t);
typedef void (*table_coll_verify_fn)(void *arg, const uint8_t *prefix, size_t len,
                                     uint64_t cached, uint64_t counted);
kura_status table_coll_verify(kura_table *t, table_coll_verify_fn fn, void *arg,
                              uint64_t *compared_out);

/* Tests (tests/unit/engine_collection_test.c): the size of the collection of partition key
 * value `pk` in table `table_name` counted now by a scan, and its cached size (*cached_out
 * false when it is not cached). */
kura_status table_coll_recount(kura_db *db, const char *table_name, const kura_value *pk,
                               uint64_t *size_out);
kura_status table_coll_cached(kura_db *db, const char *table_name, const kura_value *pk,
                              bool *cached_out, uint64_t *size_out);

#endif

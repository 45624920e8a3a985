/*
 * table_index.h - a table's secondary indexes in the engine (engine/ only): their trees and
 * the index layer's runtime (engine/table_index.c), and what the item operations ask of them.
 * Index i of a table is its i-th LSI for i < nlsi, else GSI i - nlsi.
 */
#ifndef KURA_ENGINE_TABLE_INDEX_H
#define KURA_ENGINE_TABLE_INDEX_H

#include "engine/table.h"

uint32_t table_nindexes(const kura_table *t);
const idx_def *table_index_def(const kura_table *t, uint32_t i);
/* The position of the index called `name`, or -1. */
int table_index_find(const kura_table *t, const char *name);
/* "idx-<table id>-<index id>": the trees of index d, or of index id `id` */
void table_index_tree_name(const kura_table *t, const idx_def *d, char *buf, size_t cap);
void table_index_tree_name_id(const kura_table *t, uint32_t id, char *buf, size_t cap);

/* Every index's check of an item about to be written (index/index.h idx_check_item):
 * KURA_E_INVALID with DynamoDB's message. NULL item: nothing to check. */
kura_status table_index_check_item(const kura_table *t, const kura_value *item);

/* Adds to *cc (filled by capacity_fill) the write units each index spent on the change from
 * `old` to `neu` (NULL: none), by DynamoDB's rules (index/index.h idx_changes). */
kura_status table_index_charge(const kura_table *t, const kura_value *old, const kura_value *neu,
                               kura_return_capacity mode, kura_consumed_capacity *cc);

/* Opens (creating with `create`) the index trees and the runtime, which first brings the
 * indexes up to the end of the table's WALs. No-op without indexes. */
kura_status table_index_open(kura_db *db, kura_table *t, bool create);
/* UpdateTable Create: the caller appended the new GSI (status CREATING) to t->gsi and made
 * its definition durable; this opens its tree, adds it to the runtime and starts its
 * backfill in the background (ACTIVE once done). */
kura_status table_index_add_gsi(kura_db *db, kura_table *t);
/* UpdateTable Delete: the caller set the GSI at `pos` DELETING durably; this stops its
 * maintenance and drops its tree in the background once no read uses it. */
kura_status table_index_drop_gsi(kura_db *db, kura_table *t, uint32_t pos);
/* A backfill's sink: inserts one entry (key, value; valid during the call) at the snapshot's
 * sequence. */
typedef kura_status (*table_backfill_put_fn)(void *arg, const uint8_t *key, size_t klen,
                                             const uint8_t *val, size_t vlen);
/* Whether the backfill should stop (asked every 1024 items). */
typedef bool (*table_backfill_stop_fn)(void *arg);
/* Waits until s0 is visible, then hands `put` the entry of index d of every item of the table
 * at a snapshot taken then (engine/table_backfill.c). KURA_E_CLOSED when `stop` said so;
 * KURA_E_CORRUPTION for a stored item that does not decode; put's errors. */
kura_status table_backfill(kura_table *t, const idx_def *d, uint64_t s0, table_backfill_put_fn put,
                           table_backfill_stop_fn stop, void *arg);

/* Closes the runtime (a checkpoint of every index first). The trees stay open. */
kura_status table_index_close(kura_table *t);
/* Closes the runtime and drops the index trees (DeleteTable). */
kura_status table_index_drop(kura_db *db, kura_table *t);
/* Blocks until index i has applied every write committed before the call (GSIs; an LSI is
 * always current). KURA_E_BUSY after timeout_ms. */
kura_status table_index_wait(kura_table *t, int i, uint64_t timeout_ms);

/* Closes every table's index runtime (kura_close, before the trees close). */
void tables_close_indexes(kura_db *db);

/* ---- Rebuilds (engine/table_rebuild.c) ---------------------------------------------------- */

/* Rebuilds index `pos` (ACTIVE) of the open table `t` from its items under new trees of index
 * id `id` (unused: the caller took it from next_index_id), online: the index keeps being
 * maintained and read from its old trees until the new ones are built and durable; then one
 * definition write names the new trees and the old ones are dropped. An LSI's swap holds
 * every item lock of the table. The caller makes sure no other rebuild of the index runs.
 * Errors: KURA_E_CLOSED (the table was deleted, the database is closing), storage errors;
 * the old index is then untouched and the new trees are gone (or orphans, dropped at open). */
kura_status table_index_rebuild(kura_db *db, kura_table *t, uint32_t pos, uint32_t id);
/* At open, before the table is listed: rebuilds (table_index_rebuild) every ACTIVE index
 * whose trees lack TREE_SEQ_REPLAY, made by a kura whose recovery replayed by WAL order, and
 * counts them in db->ix_rebuilt_at_open. */
kura_status table_index_upgrade(kura_db *db, kura_table *t);
/* kura_close: stops the rebuilds running (they return KURA_E_CLOSED) and waits for them. */
void table_rebuilds_stop(kura_db *db);

/* Test hooks. Stops (true) or resumes (false) the table's GSI applier (idx_rt_pause): writes
 * go on and queue up, and the base WAL is kept for the GSIs. KURA_E_RESOURCE_NOT_FOUND if
 * there is no such table; a table without GSIs ignores it. */
kura_status table_index_pause(kura_db *db, const char *table_name, bool paused);
/* Test hook: records a checkpoint of every index of the table now, waits until it is durable
 * and lets the table's partitions drop the WAL segments no index needs (idx_rt_checkpoint).
 * Errors: KURA_E_RESOURCE_NOT_FOUND, the index trees' storage errors. */
kura_status table_index_checkpoint(kura_db *db, const char *table_name);

#endif

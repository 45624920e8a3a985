/*
 * index_check.h - recomputes a table's secondary indexes from its items and compares them
 * with the index trees (tests/crash/index_check.c, over the engine's check).
 */
#ifndef KURA_TESTS_INDEX_CHECK_H
#define KURA_TESTS_INDEX_CHECK_H

#include "kura.h"

/* Takes a snapshot, waits (up to wait_ms per index) until the GSIs have applied every write
 * committed up to it, then compares every ACTIVE index of the table with its items at the
 * snapshot (engine/check.c check_indexes): KURA_OK, or KURA_E_CORRUPTION naming the
 * first missing, extra or stale entry with the counts of each; a failed wait's status. Writers
 * may run meanwhile. */
kura_status index_check_table(kura_db *db, const char *table_name, uint64_t wait_ms);

/* The whole integrity check (kura_check: files, every table's indexes, collections, streams):
 * KURA_OK, or KURA_E_CORRUPTION naming the first problem and their count. */
kura_status index_check_all(kura_db *db);

#endif

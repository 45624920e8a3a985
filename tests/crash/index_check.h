/*
 * index_check.h - recomputes a table's secondary indexes from its items and compares them
 * with the index trees (tests/crash/index_check.c).
 */
#ifndef KURA_TESTS_INDEX_CHECK_H
#define KURA_TESTS_INDEX_CHECK_H

#include "kura.h"

/* Waits (up to wait_ms per index) until the GSIs have applied every write committed before
 * the call, then checks every index of the table: KURA_OK, or KURA_E_CORRUPTION naming the
 * first missing, extra or stale entry. Reads the latest state: call it with no writer
 * running. */
kura_status index_check_table(kura_db *db, const char *table_name, uint64_t wait_ms);

#endif

/*
 * check_int.h - what the files of the integrity check share (engine/ only): the check's
 * context and its reporting (engine/check_report.c), and the parts it is made of:
 *   check.c               kura_check: the trees' files (lsm_check_files), then each table
 *   table_verify.c        a secondary index against its table, at one snapshot
 *   table_verify_items.c  a table's items at the snapshot and its item collections
 *   stream_verify.c       the positions of a table's change streams
 */
#ifndef KURA_ENGINE_CHECK_INT_H
#define KURA_ENGINE_CHECK_INT_H

#include "engine/table.h"

/* Examples of each kind of index problem reported as lines, per index. */
enum { CHECK_EXAMPLES = 10 };

/* How long the check waits for a GSI to apply what was committed before its snapshot. */
#define CHECK_INDEX_WAIT_MS 60000u

typedef struct check_ctx {
    kura_db *db;
    kura_check_fn fn; /* NULL: count only */
    void *arg;
    kura_check_summary *sum;
} check_ctx;

/* One problem (counted) or note, as a line. */
void check_problem(check_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void check_note(check_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line counted elsewhere (its problem already in c->sum->problems). */
void check_line(check_ctx *c, kura_check_severity sev, const char *line);

/* The DynamoDB JSON of a map of key attributes (S, N, B) into out, cut to cap bytes:
 * {"pk":{"S":"a"},"sk":{"N":"1"}}. */
void check_key_json(const kura_value *key, char *out, size_t cap);
/* The key of the item stored under storage key skey of t, as DynamoDB JSON ("<key that does
 * not parse>" when it does not). */
void check_skey_json(const kura_table *t, const uint8_t *skey, size_t len, char *out,
                     size_t cap);

/* ---- check.c ------------------------------------------------------------------------------ */

/* The index part of kura_check alone, for the crash, fault and unit tests
 * (tests/crash/index_check.c): one snapshot, a wait of at most wait_ms per index (a wait that
 * fails returns its status: KURA_E_BUSY, the applier's error), then every ACTIVE index
 * compared with the table; findings through fn and in *summary_out as kura_check's.
 * KURA_E_RESOURCE_NOT_FOUND, KURA_E_NOMEM. */
kura_status check_indexes(kura_db *db, const char *table_name, uint64_t wait_ms,
                          kura_check_fn fn, void *arg, kura_check_summary *summary_out);

/* ---- table_verify.c ----------------------------------------------------------------------- */

typedef struct table_verify_counts {
    uint64_t expected, found, missing, extra, stale;
} table_verify_counts;
/* A problem line of an index comparison. */
typedef void (*table_verify_fn)(void *arg, const char *line);
/*
 * Compares index i of t (ACTIVE, its trees `tree` pinned in t->ix_readers by the caller) with t at
 * `snap`: the entries idx_entry_key / idx_entry_value of every item of the table (items an
 * index leaves out, idx_indexable, included) against the index's tree read at `snap`. The
 * caller has waited until the index applied everything committed up to the snapshot. Every
 * missing, extra and stale entry is counted in *out; the first `examples` of each kind are
 * reported through fn as "table T index I: missing entry of item {key}" ("extra entry",
 * "stale entry"). Returns KURA_OK when the comparison ran; a storage error of the table or
 * the index tree, KURA_E_NOMEM.
 */
kura_status table_verify_index(kura_table *t, uint32_t i, kura_tree *tree,
                               const kura_snapshot *snap,
                               uint32_t examples, table_verify_fn fn, void *arg,
                               table_verify_counts *out);

/* ---- table_verify_items.c ----------------------------------------------------------------- */

/* Reads t at `snap`: every item decodes and lies under the storage key its key attributes
 * make; with an LSI, no item collection is over the limit. Counts the items. Storage errors
 * are returned (and reported by the caller). */
kura_status table_verify_items(check_ctx *c, kura_table *t, const kura_snapshot *snap);
/* t with an LSI: every collection size the cache holds against a recount (coll_verify). */
kura_status table_verify_collections(check_ctx *c, kura_table *t);

/* ---- stream_verify.c ---------------------------------------------------------------------- */

/* Every stream of t: its shards' positions (kura_check's contract). */
kura_status stream_verify(check_ctx *c, kura_table *t);

#endif

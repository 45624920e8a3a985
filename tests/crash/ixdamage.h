/*
 * ixdamage.h - damaging a secondary index the way the recovery bug did (old versions of items
 * beside the current ones, entries lost), straight into its trees through the engine
 * internals, for the tests of kura_rebuild_index and of the rebuild at open
 * (tests/crash/ixdamage.c).
 *
 * Each damage is one entry change inserted into the index partition its key routes to, at a
 * fresh sequence number published at once (lsm_seq_alloc / lsm_seq_complete), so every reader
 * and the index checker (crash/index_check.h) see it, and a checkpoint or a clean close makes
 * it durable like any index entry. Call it with no writer and no rebuild running on the table.
 */
#ifndef KURA_TESTS_IXDAMAGE_H
#define KURA_TESTS_IXDAMAGE_H

#include <stdint.h>

#include "kura.h"

typedef enum ixd_kind {
    IXD_EXTRA,   /* an entry of an older version of an item under other index key values: the
                  * checker reports an "extra entry" */
    IXD_STALE,   /* an item's entry with another item's value: a "stale entry" */
    IXD_MISSING, /* an item's entry deleted: a "missing entry" */
} ixd_kind;

/* The word index_check_table's message uses for the kind ("extra", "stale", "missing"). */
const char *ixd_kind_word(ixd_kind kind);

/* Makes `n` damages of `kind` to index `index` of `table`, on items chosen by `seed` among
 * those the index holds (at least 3 are needed). Errors: KURA_E_RESOURCE_NOT_FOUND, KURA_E_INVALID
 * (too few items), the engine's. */
kura_status ixd_damage(kura_db *db, const char *table, const char *index, ixd_kind kind,
                       uint32_t n, uint64_t seed);

/* ---- The catalog as an earlier kura left it ------------------------------------------------ */

/* Rewrites DIR/KURA (docs/format/catalog.md) with every tree line's flags passed through
 * fix(name, flags), and its checksum, as a kura that wrote those flags would have written it
 * (plain file I/O: the database must be closed). Fails the test on an I/O error. */
void ixd_catalog_rewrite(const char *dir, unsigned (*fix)(const char *name, unsigned flags));
/* fix for ixd_catalog_rewrite: index trees (idx-*) without flag bit 4, as a kura from before
 * recovery replayed by sequence wrote them. */
unsigned ixd_as_old_kura(const char *name, unsigned flags);
/* The index trees (idx-*) of DIR/KURA: how many, and how many lack flag bit 4. */
void ixd_catalog_index_trees(const char *dir, size_t *n_out, size_t *unflagged_out);

#endif

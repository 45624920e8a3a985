/*
 * table_insights.h - Contributor Insights of tables and GSIs inside the engine (engine/ only):
 * the query the capacity model asks on its hot path, the lookup the list shares, and the
 * setting's section of the definition record (format version 7, docs/format/catalog.md).
 * engine/table_insights.c, engine/table_insights_list.c.
 */
#ifndef KURA_ENGINE_TABLE_INSIGHTS_H
#define KURA_ENGINE_TABLE_INSIGHTS_H

#include <stdbool.h>

#include "engine/table.h"

/* idx_insights.status values (0: never enabled) */
enum { INSIGHTS_ENABLED = 1, INSIGHTS_DISABLED = 2 };

/*
 * Whether Contributor Insights is ENABLED for the table (`index_pos` -1) or for its index at
 * `index_pos` (engine/table_index.h positions: LSIs first, then GSIs; an LSI, a GSI being
 * deleted or a position past the end answers false). *throttled_only_out (may be NULL) is set
 * when enabled: true in THROTTLED_KEYS mode (only throttled keys are to be reported). Cheap:
 * no lock, no allocation (relaxed atomic reads), for the accounting's hot path; the caller
 * has the table pinned.
 */
bool table_insights_enabled(const kura_table *t, int index_pos, bool *throttled_only_out);

/* The GSI of t called `name` that is not being deleted, or NULL. tables_mu held. */
idx_def *insights_gsi(kura_table *t, const char *name);

/* Whether the table or one of its GSIs (not being deleted) has a setting (ever enabled); the
 * section appended to `b` (false: out of memory); and read from *p (advanced) into t, whose
 * GSIs are read already: false when malformed. */
bool def_insights_any(const kura_table *t);
bool def_insights_encode(const kura_table *t, kbuf *b);
bool def_insights_decode(const uint8_t **p, const uint8_t *end, kura_table *t);

#endif

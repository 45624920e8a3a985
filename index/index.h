/*
 * index.h - secondary indexes: definitions, key derivation, projections and the turn of one
 * base-item write into index deletes and puts (the pure part of the index layer: no I/O).
 *
 * An index (LSI or GSI) is an LSM tree of its own whose entries are derived from base items
 * (docs/format/index.md):
 *
 *   entry key   = hash64(enc(h1) .. enc(hN)) big-endian || enc(h1) .. enc(hN)
 *                 || enc(r1) .. enc(rM) || enc(table_pk) [|| enc(table_sk)]
 *   entry value = the projection of the item (val_encode of a map): the table's key
 *                 attributes and the index's key attributes always; KEYS_ONLY nothing more,
 *                 INCLUDE the named non-key attributes the item has, ALL every attribute.
 *
 * where h1..hN are the index's HASH attributes and r1..rM its RANGE attributes, in the order
 * of its key schema, each encoded with key_enc_value (engine/model/key.c) as its own type.
 * An LSI is the special case N = 1 (the table's partition key) and M = 1, so an LSI entry's
 * hash equals its item's (hash64(enc(pk)), key_hash()) and lands in the same partition
 * number of a tree with as many partitions. The base key at the end makes entries unique,
 * since index keys need not be; with it the entry key alone names the item, so a delete needs
 * only the old item's entry key.
 *
 * Sparse indexes: an item that lacks any of the index's key attributes has no entry. A key
 * attribute of the wrong type or an empty S/B is not "absent": the write is refused
 * (idx_check_item) before anything is written, as DynamoDB does.
 *
 * Thread safety: definitions are immutable once built and may be read by any thread; the
 * functions keep no state.
 */
#ifndef KURA_INDEX_INDEX_H
#define KURA_INDEX_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/expr/expr.h"
#include "engine/model/value.h"
#include "kura.h"
#include "util/buf.h"

enum {
    IDX_MAX_KEY_ATTRS = 4,   /* per side: HASH and RANGE, DynamoDB's multi-attribute keys */
    IDX_MAX_LSI = 5,
    IDX_MAX_GSI = 20,
    IDX_MAX_NON_KEY = 100,   /* NonKeyAttributes across all of a table's indexes */
};

typedef enum idx_kind { IDX_LOCAL, IDX_GLOBAL } idx_kind;

/* Lifecycle of a GSI (LSIs are always ACTIVE). */
typedef enum idx_status {
    IDX_ACTIVE,
    IDX_CREATING, /* being backfilled (UpdateTable Create) */
    IDX_DELETING, /* UpdateTable Delete: its trees are being dropped */
    IDX_DELETED,  /* dropped; the definition stays in memory until the table closes (never
                   * stored) */
} idx_status;

typedef struct idx_key_attr {
    char *name;     /* owned, NUL-terminated */
    kura_type type; /* KURA_S, KURA_N or KURA_B, from the table's AttributeDefinitions */
} idx_key_attr;

/* Contributor Insights of a table or GSI (engine/table_insights.c; docs/format/catalog.md,
 * version 7): status 0 never enabled, 1 ENABLED, 2 DISABLED; mode 1 ACCESSED_AND_THROTTLED_KEYS,
 * 2 THROTTLED_KEYS (the last one asked for); stamp_ms: when it was last enabled (wall-clock ms,
 * names its rules); changed: the last UpdateContributorInsights (seconds since the epoch).
 * Written under tables_mu; status and mode are stored with __atomic_store_n so that
 * table_insights_enabled reads them without the lock. */
typedef struct idx_insights {
    uint8_t status, mode;
    uint64_t stamp_ms;
    double changed;
} idx_insights;

typedef struct idx_def {
    char *name;        /* owned */
    uint32_t id;       /* unique within the table, never reused: tree "idx-<table id>-<id>" */
    idx_kind kind;
    idx_key_attr hash[IDX_MAX_KEY_ATTRS];
    uint32_t nhash;    /* LSI: 1 (the table's partition key) */
    idx_key_attr range[IDX_MAX_KEY_ATTRS];
    uint32_t nrange;   /* LSI: 1 */
    kura_projection_type projection;
    char **include;    /* INCLUDE: the NonKeyAttributes, owned, in the order given */
    uint32_t ninclude;
    idx_status status;
    uint64_t rcu, wcu; /* GSI with PROVISIONED billing */
    /* GSI settings (engine/table_settings.c): OnDemandThroughput's maxima (0 not set, -1 no
     * maximum) and the WarmThroughput asked for (0 not set) */
    int64_t od_read, od_write;
    int64_t warm_read, warm_write;
    idx_insights ci; /* a GSI's Contributor Insights (unused for LSIs) */
} idx_def;

/* The table's key as the index layer needs it: names and types of its partition and sort key
 * (a key_schema, engine/model/value.h). */

/* Frees what a definition owns (not the struct itself); NULL ok. */
void idx_def_clear(idx_def *d);
/* A deep copy of `src` into `dst` (zeroed). KURA_E_NOMEM. */
kura_status idx_def_copy(idx_def *dst, const idx_def *src);

/* Whether `name` is one of the index's key attributes (HASH or RANGE). */
bool idx_is_key_attr(const idx_def *d, const char *name, size_t len);
/* Whether the index stores the top-level attribute `name` of an item: every attribute with
 * ALL; the table's and the index's key attributes and, with INCLUDE, the listed ones. */
bool idx_projects(const idx_def *d, const key_schema *table, const char *name, size_t len);

/* Checks `item` (a map, already valid as an item) against the index's key attributes: an
 * attribute that is present must have the index key's type and, for S and B, not be empty.
 * KURA_E_INVALID with DynamoDB's messages:
 *   "One or more parameter values were invalid: Type mismatch for Index Key <attr>
 *    Expected: <S|N|B> Actual: <type> IndexName: <index>"
 *   "One or more parameter values are not valid. A value specified for a secondary index
 *    key is not supported. The AttributeValue for a key attribute cannot contain an empty
 *    string value. IndexName: <index>, IndexKey: <attr>"  (binary: "... empty binary value")
 * The second is exactly DynamoDB Local 1.25.1's. The first is the service's (as dynalite
 * copies it); DynamoDB Local 1.25.1 stops after "Type mismatch for Index Key" and says
 * "Invalid attribute value type" for an M, L, set, BOOL or NULL value. The attributes are
 * checked in key-schema order (HASH, then RANGE), each for its type, then for emptiness.
 * DynamoDB checks a table's LSIs before its GSIs (DynamoDB Local 1.25.1), so a caller with
 * several indexes calls this for the LSIs first, each kind in definition order.
 * Absent attributes are fine (the item is not indexed). */
kura_status idx_check_item(const idx_def *d, const kura_value *item);
/* idx_check_item without the key sizes (2,048 bytes of HASH values, 1,024 of RANGE values),
 * which a kura before them did not hold index keys to. */
kura_status idx_check_item_types(const idx_def *d, const kura_value *item);

/* The item as the index sees it: `item`, or NULL when it has no entry because one of the
 * index's key attributes has another type or is empty (an item written before the index
 * existed: DynamoDB leaves it out of the index). */
const kura_value *idx_indexable(const idx_def *d, const kura_value *item);
/* The old image of a change as the appliers delete it: `item`, or NULL when its key
 * attributes have other types or are empty. Unlike idx_indexable, an item whose index key is
 * larger than DynamoDB's key sizes still has its entry deleted: a kura before the sizes were
 * held wrote such entries, and an update or delete of the item must not leave them behind
 * (for an item that never had one, the delete is a tombstone of nothing). */
const kura_value *idx_indexed_before(const idx_def *d, const kura_value *item);

/* Appends the entry key of `item` to `out` and sets *present_out; when the item lacks one of
 * the index's key attributes *present_out is false and nothing is appended. The item must
 * have passed idx_check_item and hold the table's key attributes (`table`). KURA_E_NOMEM. */
kura_status idx_entry_key(const idx_def *d, const key_schema *table, const kura_value *item,
                          kbuf *out, bool *present_out);

/* Appends the encoded projection of `item` (the entry value, val_encode of a map) to `out`.
 * KURA_E_NOMEM. */
kura_status idx_entry_value(const idx_def *d, const key_schema *table, const kura_value *item,
                            kbuf *out);

/* Whether `item` has every key attribute of the index (it then has an entry: sparse indexes). */
bool idx_has_entry(const idx_def *d, const kura_value *item);
/* The projected size: DynamoDB's item size (val_item_size) of idx_project()'s map
 * (DescribeTable's IndexSizeBytes, write units). KURA_E_NOMEM. */
kura_status idx_projected_size(const idx_def *d, const key_schema *table, const kura_value *item,
                               size_t *size_out);

/* The projection of `item` as a new map in `dst` (empty): the value idx_entry_value encodes. */
kura_status idx_project(const idx_def *d, const key_schema *table, const kura_value *item,
                        kura_value *dst);

/* Decodes an entry key back into maps (both empty on entry) of the index's key attributes
 * and of the table's key attributes; checks the hash prefix. KURA_E_CORRUPTION if it does not
 * parse. (LastEvaluatedKey of an index Query/Scan is both maps together.) */
kura_status idx_entry_parse(const idx_def *d, const key_schema *table, const uint8_t *key,
                            size_t len, kura_value *index_key_out, kura_value *table_key_out);

/* ---- One base write turned into index changes -------------------------------------------- */

typedef enum idx_change_kind { IDX_CHANGE_DELETE, IDX_CHANGE_PUT } idx_change_kind;

/* Called for each change, deletes first. key/value are valid only during the call; value is
 * NULL for a delete. */
typedef kura_status (*idx_change_fn)(void *arg, idx_change_kind kind, const uint8_t *key,
                                     size_t klen, const uint8_t *value, size_t vlen);

/* The changes that take the index from `old` (NULL: the item did not exist) to `new_item`
 * (NULL: deleted), both valid items of the table with the same base key:
 *   - old had an entry and new has none, or another entry key: delete the old entry;
 *   - new has an entry: put it, unless old had the same entry key with the same projected
 *     value (a write that touches no projected attribute costs the index nothing).
 * *units_out (may be NULL) counts the index write units as DynamoDB bills them: each put
 * ceil(projected size / 1 KB) (at least 1), each delete 1; an update that moves the item in
 * the index costs a delete and a put. The projected size is DynamoDB's item size
 * (val_item_size) of the projection. */
kura_status idx_changes(const idx_def *d, const key_schema *table, const kura_value *old,
                        const kura_value *new_item, idx_change_fn fn, void *arg,
                        double *units_out);

/* ---- Key conditions on an index ----------------------------------------------------------- */

/* A Query's key condition on an index, as the terms of expr_key_terms (engine/expr/expr.h),
 * checked against the index's key schema and turned into one key range [lo, hi) over entry
 * keys. DynamoDB's rules for multi-attribute keys: equality on every HASH attribute; then
 * RANGE attributes left to right without skipping, equality on all but the last one given,
 * which may have one of = < <= > >= BETWEEN begins_with. Errors are KURA_E_INVALID with
 * DynamoDB's messages (e.g. "Query condition missed key schema element: <attr>", "Query key
 * condition not supported"). `lo_out` receives the inclusive lower bound and `hi_out` the
 * exclusive upper bound, both appended and both always set (an open end is bounded by the
 * hash prefix and HASH values: every entry of those HASH values lies in [lo, hi)). */
kura_status idx_key_range(const idx_def *d, const key_schema *table, const expr_key_term *terms,
                          uint32_t nterms, kbuf *lo_out, kbuf *hi_out);

#endif

/*
 * table.h - DynamoDB tables on kura trees (engine/ only).
 *
 * A table is a tree named "tbl-<id>" (hash_prefixed_keys, P partitions) whose keys are storage
 * keys hash64(enc(pk)) || enc(pk) || enc(sk) (engine/model/value.h key_build) and whose values
 * are encoded items (val_encode). Table definitions live in the system tree "sys" under
 * "table/<name>" (docs/format/catalog.md, "Tables"); a tree no definition names is an
 * orphan of a crash between creating the tree and writing the definition (or between
 * deleting a definition and dropping the tree) and is dropped at open.
 *
 * Lifetime: the database keeps every table in a list guarded by tables_mu. Operations pin a
 * table with table_acquire() and unpin it with table_release(); DeleteTable unlinks the table
 * (new acquires fail with ResourceNotFound) and waits until no one pins it before dropping
 * the tree. Definitions are immutable except the settings UpdateTable changes (billing,
 * throughput, deletion protection, engine/table_settings.c's), which are read and written
 * under tables_mu.
 *
 * Secondary index definitions (index/index.h idx_def) are part of the definition record; an
 * LSI or GSI declared at CreateTable is ACTIVE from the start. Each index has an id unique
 * within its table and never reused (next_index_id), which names its tree.
 *
 * Item writes are serialised per item: every write (also an unconditional PutItem, so that a
 * concurrent conditional write cannot lose it) holds the item's stripe lock from reading the
 * old item to writing the new one.
 */
#ifndef KURA_ENGINE_TABLE_H
#define KURA_ENGINE_TABLE_H

#include <stdatomic.h>

#include "engine/db_int.h"
#include "engine/model/value.h"
#include "index/index.h"
#include "util/thread.h"

enum { TABLE_LOCK_STRIPES = 256 };

typedef struct kura_table {
    char *name;
    uint64_t id;                 /* tree "tbl-<id>" */
    kura_tree *tree;
    key_schema ks;               /* names point at pk_name / sk_name below */
    char *pk_name, *sk_name;     /* sk_name NULL without a sort key */
    kura_attribute_definition *attr_defs; /* names owned */
    size_t nattr_defs;
    char table_id[40];           /* UUID text */
    double created;              /* seconds since the epoch */
    uint32_t partitions;
    /* settings changed by UpdateTable: read and written under db->tables_mu */
    kura_billing_mode billing;
    uint64_t rcu, wcu;
    double last_ppr;             /* LastUpdateToPayPerRequestDateTime, 0 = never */
    bool deletion_protection;
    /* Time to Live (engine/ttl.c): the attribute named by the last UpdateTimeToLive (NULL if
     * never), whether it is enabled, and when it last changed (seconds since the epoch, by
     * kura_options.ttl_clock); read and written under db->tables_mu. */
    char *ttl_attr;
    bool ttl_enabled;
    double ttl_changed;
    /* Tags (engine/table_tags.c): sorted by key (bytewise), keys and values owned; read and
     * written under db->tables_mu. */
    kura_tag *tags;
    uint32_t ntags;
    /* Settings (engine/table_settings.c; format version 6), under db->tables_mu: TableClass
     * (UNSET: never given) and when UpdateTable last changed it (0: never); OnDemandThroughput
     * maxima (0 not set, -1 no maximum); the WarmThroughput asked for (0 not set); the KMS key
     * of SSESpecification (sse_kms false: the AWS owned key; kms_key NULL: the AWS managed
     * key); the resource-based policy (engine/table_policy.c: NULL none) and its revision id. */
    kura_table_class table_class;
    double table_class_changed;
    int64_t od_read, od_write;
    int64_t warm_read, warm_write;
    bool sse_kms;
    char *kms_key;
    char *policy;
    uint64_t policy_rev;
    /* Contributor Insights of the table itself (engine/table_insights.c; a GSI's is in its
     * idx_def; format version 7), written under db->tables_mu. */
    idx_insights ci;
    /* Secondary indexes, in the order of the request (docs/format/catalog.md, "Tables"). Set
     * at CreateTable; a GSI's rcu/wcu are what was provisioned (DescribeTable shows 0 while
     * the table is PAY_PER_REQUEST). Key attribute types come from attr_defs. */
    idx_def *lsi;
    uint32_t nlsi;
    idx_def *gsi;
    uint32_t ngsi;
    uint32_t next_index_id;      /* the id of the next index: ids start at 1, never reused */
    /* The indexes at run time (engine/table_index.c): their trees "idx-<id>-<index id>", in
     * the order LSIs then GSIs, and the index layer's runtime over them (index/runtime.h).
     * Set while the table is open; NULL without indexes. */
    kura_tree **ix_trees;            /* IDX_MAX_LSI + IDX_MAX_GSI entries, nlsi + ngsi used */
    struct idx_rt_index *ix_parts;
    struct idx_runtime *ix_rt;
    /* Index reads in flight per index, counted in slot ix_gen[i] & 1 of the trees they read
     * (a dropped index's tree goes once they are done). A rebuild's swap (engine/
     * table_rebuild.c) moves ix_gen[i] on under tables_mu and waits for the other slot: the
     * reads of the old trees. */
    atomic_uint ix_readers[IDX_MAX_LSI + IDX_MAX_GSI][2];
    uint32_t ix_gen[IDX_MAX_LSI + IDX_MAX_GSI];
    /* kura_rebuild_index on the table (one at a time): which index; under tables_mu */
    bool ix_rebuilding;
    uint32_t ix_rebuild_pos;
    /* the background job of UpdateTable's GlobalSecondaryIndexUpdates (one at a time):
     * a backfill or a drop (engine/table_index.c) */
    kthread ix_job;
    bool ix_job_started;
    atomic_bool ix_job_stop;
    kura_status ix_job_error; /* a failed backfill: the index stays CREATING */

    /* Change streams (engine/stream_table.c): the enabled stream, if any, and the disabled ones
     * still readable, oldest first; under db->tables_mu. stream_on: writes carry the old
     * image and the meta entry; it changes only while every item lock is held, so a write
     * sees one value from reading the old item to writing the new one. */
    struct table_stream *streams;
    uint32_t nstreams;
    atomic_bool stream_on;

    /* Capacity accounting and throttling (engine/tcap.h); made with the table. */
    struct tcap *cap;

    int refs;                    /* pins, under db->tables_mu */
    kmutex item_locks[TABLE_LOCK_STRIPES];
    /* the sizes of its item collections, used when it has an LSI (engine/collection.h,
     * engine/table_collection.h) */
    struct coll_cache *colls;

    /* DescribeTable's ItemCount/TableSizeBytes (engine/table_count.c): the last count and
     * the write counter it saw; the rest under count_mu. `dropped`: DeleteTable unlinked the
     * table, a background count gives up. */
    atomic_uint_fast64_t writes;
    kmutex count_mu;
    uint64_t counted_writes, item_count, size_bytes;
    /* per index (engine/table_index.h positions): the entries and IndexSizeBytes of the
     * items counted, as the index holds them once it has caught up */
    uint64_t ix_count[IDX_MAX_LSI + IDX_MAX_GSI], ix_size[IDX_MAX_LSI + IDX_MAX_GSI];
    bool counted;
    bool count_failed;         /* the last background count failed: count in the request */
    bool recounting;           /* a background count is queued or running */
    uint64_t recount_after_ns; /* no background count starts before this (know_ns) */
    atomic_bool dropped;
} kura_table;

/* Pins the table called `name`. KURA_E_RESOURCE_NOT_FOUND ("Requested resource not found")
 * if there is none. */
kura_status table_acquire(kura_db *db, const char *name, kura_table **t_out);
/* As table_acquire, with the message of the control-plane operations (DescribeTable,
 * UpdateTable, UpdateTimeToLive, ...): "Requested resource not found: Table: <name> not
 * found". */
kura_status table_acquire_named(kura_db *db, const char *name, kura_table **t_out);
void table_release(kura_table *t);

/* The stripe lock of an item, by its storage key. */
kmutex *table_item_lock(kura_table *t, const uint8_t *skey, size_t len);
/* Takes every stripe lock of the table in address order (the order transactions take theirs),
 * so no write of the table is in flight until table_unlock_items: enabling or disabling a
 * stream, an LSI's swap to rebuilt trees. Not with tables_mu held (it is taken after). */
void table_lock_items(kura_table *t);
void table_unlock_items(kura_table *t);

/* Reads the item stored under `skey` into *item (must be empty; left empty if absent) and
 * sets *found_out. Corruption of the stored bytes is KURA_E_CORRUPTION naming the table. */
kura_status table_read(kura_table *t, const kura_read_options *ro, const uint8_t *skey,
                       size_t len, kura_value *item, bool *found_out);
/* As table_read(), and *stored_out the item's stored bytes (0 when absent): the size the
 * capacity accounting charges a read by when the exact item size was not asked for. */
kura_status table_read_stored(kura_table *t, const kura_read_options *ro, const uint8_t *skey,
                              size_t len, kura_value *item, bool *found_out, size_t *stored_out);
/* As table_read(), but leaves the item in its stored encoding (docs/format/item.md) in *enc
 * (replacing its contents; empty if absent: an encoding is never empty), checked by
 * val_check_encoded(). */
kura_status table_read_encoded(kura_table *t, const kura_read_options *ro, const uint8_t *skey,
                               size_t len, kbuf *enc);
/* Writes `item` (encoded) under `skey`, or deletes it when item is NULL. Counts the write
 * for ItemCount. A table that needs images (table_needs_images: indexes, a stream) writes
 * the old item's image with it: `old` is the item being replaced, NULL if none (its callers
 * must have read it under the item's lock); a table with a stream also writes the meta entry
 * with the time. */
kura_status table_write(kura_table *t, const uint8_t *skey, size_t len, const kura_value *item,
                        const kura_value *old);
/* As table_write, for a table that needs images, with the old item as it is stored (its
 * encoding, as table_read_encoded gives it; empty: none): a writer that does not need the old
 * item itself writes its image without decoding it. */
kura_status table_write_image(kura_table *t, const uint8_t *skey, size_t len,
                              const kura_value *item, const uint8_t *old_enc, size_t old_len);
/* Whether the table has secondary indexes. */
static inline bool table_has_indexes(const kura_table *t)
{
    return t->nlsi + t->ngsi > 0;
}
/* Whether the table's writes carry the old item's image: it has indexes (maintained from
 * it) or a stream (recorded from it). Read under the item's lock, and once per write. */
static inline bool table_needs_images(kura_table *t)
{
    return table_has_indexes(t) ||
           atomic_load_explicit(&t->stream_on, memory_order_relaxed);
}

/* Fills desc_out from the table's definition and counts (engine/table.c). */
kura_status table_describe(kura_db *db, kura_table *t, kura_table_description *desc_out);

/* DescribeTable's ItemCount and TableSizeBytes (engine/table_count.c). */
kura_status table_count(kura_table *t, uint64_t *items_out, uint64_t *bytes_out);
/* The figures of index i (table_index.h positions) from the last count (table_count first). */
kura_status table_index_count(kura_table *t, uint32_t i, uint64_t *items_out,
                              uint64_t *bytes_out);
/* Stops the background counts and waits for them (kura_close, before the trees close). */
void table_counts_stop(kura_db *db);

/* Opens the table catalog at kura_open (after the trees are loaded) / frees it at close. */
kura_status tables_load(kura_db *db);
void tables_free(kura_db *db);

/* Capacity units (engine/capacity.c), DynamoDB's rules: a read of `nbytes` costs
 * ceil(nbytes / 4096) units (at least 1 for a read of one item, even if absent), half of it
 * when eventually consistent; a write costs ceil(nbytes / 1024) (at least 1). Query and Scan
 * charge the total size of the items read, rounded up once to 4 KB. */
double capacity_read_units(uint64_t nbytes, bool consistent);
double capacity_write_units(uint64_t nbytes);
/* Fills *cc (present, table name copy, units) for `mode`; KURA_CAPACITY_NONE leaves it
 * zeroed. is_read decides whether units go to read_ or write_capacity_units. */
kura_status capacity_fill(kura_consumed_capacity *cc, kura_return_capacity mode,
                          const char *table_name, double units, bool is_read);
/*
 * Adds `units` spent on the index `name` to *cc, filled by capacity_fill(): to the total (and
 * to read_ or write_capacity_units) and, with INDEXES, to the index's entry of cc->indexes
 * (appended on first use, so a write can list every index it changed). No-op when *cc is not
 * present. KURA_E_NOMEM.
 */
kura_status capacity_add_index(kura_consumed_capacity *cc, kura_return_capacity mode,
                               const char *name, bool global, double units, bool is_read);
/* Frees what *cc owns (the table name, the index list) and zeroes it. */
void capacity_free(kura_consumed_capacity *cc);



#endif

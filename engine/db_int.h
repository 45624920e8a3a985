/*
 * db_int.h - the database and tree structs behind kura.h's handles (engine/ only).
 *
 * A database directory holds LOCK, the catalog KURA (docs/format/catalog.md) and one directory
 * per tree, which holds one directory per partition (p0000, p0001, ...), each an LSM tree
 * (engine/lsm/lsm.h). Keys route to partitions by hash (kura_tree_partition_of).
 */
#ifndef KURA_ENGINE_DB_INT_H
#define KURA_ENGINE_DB_INT_H

#include <stdatomic.h>

#include "kura.h"
#include "engine/arn.h"
#include "engine/lsm/lsm.h"
#include "util/pool.h"
#include "util/thread.h"

/* Tree flags beyond hash_prefixed (docs/format/catalog.md): the item layer's trees only. */
enum {
    TREE_NO_WAL = 2,      /* a secondary index: written by the index layer, no WAL (lsm.h) */
    TREE_RETAIN_WALS = 4, /* a table with indexes: WAL segments kept until they index it */
    TREE_STREAM = 8,      /* a table that has had a stream: WAL segments kept for the
                           * stream's retention (engine/stream_table.h) */
    TREE_SEQ_REPLAY = 16, /* an index tree (with TREE_NO_WAL) whose state was made by a kura
                           * whose recovery replays the base WALs by sequence: one without it
                           * is rebuilt at open (engine/table_rebuild.c) */
};
/* Every flag above. */
#define TREE_FLAGS_KNOWN (TREE_NO_WAL | TREE_RETAIN_WALS | TREE_STREAM | TREE_SEQ_REPLAY)

struct kura_tree {
    kura_db *db;
    char *name;
    char *dir;
    uint32_t nparts;
    bool hash_prefixed;
    uint32_t flags; /* TREE_NO_WAL, TREE_RETAIN_WALS, TREE_STREAM, TREE_SEQ_REPLAY */
    lsm_tree **parts;
};

struct kura_db {
    kura_options opts;
    /* kura_options.region and account_id, copied (opts' pointers point here): the scope of
     * the C API's ARNs and of requests that name none (engine/arn.h) */
    char arn_region[ARN_REGION_MAX + 1];
    char arn_account[ARN_ACCOUNT_LEN + 1];
    char *dir;
    io_env *io;
    io_file *lock;
    lsm_shared sh;

    kmutex mu; /* the tree list and the catalog file */
    kura_tree **trees;
    size_t ntrees, trees_cap;

    /* DynamoDB tables (engine/table.h): the list, the system tree holding their definitions,
     * the next table id. tables_cv is signalled when a table's pins drop. */
    kmutex tables_mu;
    kcond tables_cv;
    struct kura_table **tables;
    size_t ntables, tables_cap;
    kura_tree *sys;
    uint64_t next_table_id;

    /* DescribeTable's background counts (engine/table_count.c): their thread (a pool of one,
     * made on first use), how many are queued or running (under tables_mu; tables_cv is
     * signalled when one ends), the stop kura_close gives them (polled by the counts), and
     * the size up to which a table is counted in the request instead. */
    kpool *count_pool;
    unsigned counts_running;
    atomic_bool counts_stop;
    uint64_t count_sync_items, count_sync_bytes;

    /* the transaction log (engine/txn.h): a tree of commit records outside the catalog; the
     * client request tokens of transactions running now (txn_mu) */
    kura_tree *txn;
    kpool *txn_sync_pool; /* a transaction's WALs are synced in parallel on these threads */
    kmutex txn_mu;
    struct txn_running *txn_running;
    uint64_t *txn_ids; /* the ids of the transactions committing now (txn_mu) */
    size_t ntxn_ids, txn_ids_cap;

    /* Index rebuilds (engine/table_rebuild.c): the kura_rebuild_index calls running (under
     * tables_mu; tables_cv is signalled when one ends), the stop kura_close gives them, and
     * the indexes kura_open rebuilt because an earlier kura had made them (kura_stats). */
    unsigned ix_rebuilds;
    atomic_bool ix_rebuild_stop;
    atomic_uint_fast64_t ix_rebuilt_at_open;

    /* the Time to Live sweeper (engine/ttl_sweep.c): its thread, woken by syncer_cv at close;
     * ttl_sweep_mu serialises sweeps (the thread's and kura_ttl_sweep's) */
    kthread ttl_thread;
    bool ttl_started;
    atomic_bool ttl_stop;
    kmutex ttl_sweep_mu;

    kthread syncer;
    bool syncer_started;
    bool stopping;
    kcond syncer_cv;
};

struct kura_snapshot {
    uint64_t seq;
};

/* Writes the catalog (every tree with its partition count and flags) atomically. mu held. */
kura_status catalog_write(kura_db *db);
/* Reads the catalog and opens every tree in it. */
kura_status catalog_load(kura_db *db);
/* Opens the partitions of a tree known to the catalog (or being created). */
kura_status tree_open_parts(kura_db *db, kura_tree *t, bool create);
/* kura_get() into a caller's buffer (replacing its contents), so that a caller with a buffer
 * to reuse reads without an allocation. */
kura_status tree_get_into(kura_tree *t, const kura_read_options *ro, const void *key, size_t klen,
                          kbuf *val);
void tree_close(kura_tree *t);
/* Deletes every file and directory below `dir` (best effort; `dir` itself stays). */
void tree_remove_dir_files(io_env *io, const char *dir);
/* Runs fn on every partition of the trees; returns the first failure with its own message. */
kura_status trees_each_partition(kura_tree *const *trees, size_t ntrees,
                                 kura_status (*fn)(lsm_tree *));
bool tree_name_valid(const char *name);
/* Adds tree flags (TREE_RETAIN_WALS: a table that gets its first index) and rewrites the
 * catalog. */
kura_status tree_add_flags(kura_db *db, kura_tree *t, uint32_t flags);
/* The open tree called `name`: KURA_E_NOT_FOUND (no message) if there is none. */
kura_status tree_find(kura_db *db, const char *name, kura_tree **tree_out);
/* kura_tree_open with tree flags (TREE_NO_WAL, TREE_RETAIN_WALS, TREE_STREAM,
 * TREE_SEQ_REPLAY). */
kura_status tree_open_flags(kura_db *db, const char *name, const kura_tree_options *topts,
                            uint32_t flags, kura_tree **tree_out);
/* Writes [meta, put `val` (or delete when val is NULL), image `old`] under one key as one
 * batch (engine/lsm/batch.h): the item layer's write to a table that needs images. The meta
 * entry (the time, for a change stream) only when meta_ms is not 0. */
kura_status tree_write_imaged(kura_tree *t, const void *key, size_t klen, const void *val,
                              size_t vlen, const void *old, size_t oldlen, uint64_t meta_ms);
/* Writes a batch whose keys all route to partition `part` with the database's durability
 * (the TTL sweeper's deletes). */
kura_status tree_write_part(kura_tree *t, uint32_t part, lsm_batch *b);
/* An iterator like kura_iter_new's over partitions part_lo..part_hi (inclusive) only: Query
 * reads one partition, a Scan segment the partitions its hash range overlaps. */
kura_status tree_iter_new(kura_tree *t, const kura_read_options *ro, uint32_t part_lo,
                          uint32_t part_hi, kura_iter **it_out);

#endif

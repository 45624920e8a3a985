/*
 * kura.h - the one public header of kura.
 *
 * This file contains the status codes, the database options and the raw key/value API of
 * kura's storage core: a database directory holding named trees, each split into P hash
 * partitions with their own write-ahead log, memtable and SSTables (docs/architecture.md).
 * The DynamoDB data model (tables, items, expressions) is built on this API.
 *
 * Conventions, for every function below:
 *  - Functions that can fail return a kura_status. KURA_OK is 0. On failure a message that
 *    says what went wrong (for corruption: the file and the byte offset) is available from
 *    kura_last_error() on the calling thread until the next failing call on that thread.
 *  - Out-parameters end in _out and are written only on success.
 *  - Input pointers are borrowed for the duration of the call; kura copies what it keeps.
 *  - Handles are opaque. Whoever creates a handle destroys it (x_open/x_close, x_new/x_free);
 *    passing NULL to a close or free function is a no-op.
 *  - Thread safety: a kura_db and its kura_tree handles may be used from any number of threads
 *    at once. A kura_batch and a kura_iter belong to one thread at a time.
 */
#ifndef KURA_H
#define KURA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status codes ---------------------------------------------------------------------- */

/* X(name, value, message). One table generates the enum and kura_status_str(). */
#define KURA_STATUS_MAP(X)                                                                     \
    X(KURA_OK, 0, "ok")                                                                        \
    X(KURA_E_INVALID, 1, "invalid argument")                                                   \
    X(KURA_E_NOT_FOUND, 2, "not found")                                                        \
    X(KURA_E_IO, 3, "I/O error")                                                               \
    X(KURA_E_CORRUPTION, 4, "corruption")                                                      \
    X(KURA_E_NOSPC, 5, "no space left on device")                                              \
    X(KURA_E_READONLY, 6, "partition is read-only after a failed sync")                        \
    X(KURA_E_NOMEM, 7, "out of memory")                                                        \
    X(KURA_E_BUSY, 8, "database is locked by another process")                                 \
    X(KURA_E_EXISTS, 9, "already exists")                                                      \
    X(KURA_E_NOT_SUPPORTED, 10, "not supported")                                               \
    X(KURA_E_CLOSED, 11, "database is closing")

typedef enum kura_status {
#define KURA_STATUS_ENUM_(name, value, msg) name = value,
    KURA_STATUS_MAP(KURA_STATUS_ENUM_)
#undef KURA_STATUS_ENUM_
} kura_status;

/* A static string naming the status ("corruption"). Never NULL. */
const char *kura_status_str(kura_status s);

/* The message of the last failure on this thread ("" if none). Valid until the next kura call
 * on this thread fails. */
const char *kura_last_error(void);

/* ---- Options --------------------------------------------------------------------------- */

typedef enum kura_durability {
    KURA_SYNC = 0,    /* a write returns once its WAL record is fdatasync'ed (default) */
    KURA_RELAXED = 1, /* WAL written at once (a process crash loses nothing), fdatasync'ed every
                       * relaxed_sync_ms (a machine crash may lose that much) */
} kura_durability;

typedef enum kura_compression {
    KURA_COMPRESS_NONE = 0,
    KURA_COMPRESS_LZ4 = 1,
    KURA_COMPRESS_ZLIB = 2,
} kura_compression;

struct io_env; /* util/io.h: the file-system table; NULL means POSIX */

typedef struct kura_options {
    bool create_if_missing;           /* default true */
    kura_durability durability;       /* default KURA_SYNC */
    uint32_t relaxed_sync_ms;         /* KURA_RELAXED: sync period, default 100 */
    /* KURA_RELAXED only: collect WAL records in a buffer of this many bytes and write them
     * when it fills or at the periodic sync, saving a write(2) per write group. Then even a
     * crash of the process (not only of the machine) may lose the last relaxed_sync_ms of
     * acknowledged writes. Default 0: every write group reaches the OS before it returns. */
    size_t wal_buffer_bytes;
    uint32_t default_partitions;      /* partitions of a new tree, default 4, 1..256 */
    size_t memtable_budget_bytes;     /* all memtables of the database, default 64 MiB */
    size_t block_cache_bytes;         /* shared block cache, default 32 MiB */
    size_t block_size;                /* SSTable data block target, default 4096 */
    uint32_t bloom_bits_per_key;      /* default 10; 0 disables the filters */
    kura_compression compression;     /* default KURA_COMPRESS_LZ4 */
    kura_compression bottom_compression; /* bottom level; default same as compression */
    uint32_t background_threads;      /* flush/compaction threads, default: one per core */
    uint32_t l0_compaction_trigger;   /* L0 files that start a compaction, default 4 */
    uint32_t l0_slowdown_trigger;     /* L0 files that start delaying writes, default 12 */
    uint32_t l0_stop_trigger;         /* L0 files that stop writes until compacted, default 20 */
    uint64_t level1_bytes;            /* target size of L1 per partition, default 16 MiB; x10 per level */
    uint64_t sstable_target_bytes;    /* output file size of compactions, default 4 MiB */
    struct io_env *io;                /* borrowed, must outlive the database; NULL = POSIX */
} kura_options;

/* Fills *opts with the defaults above. */
void kura_options_init(kura_options *opts);

/* ---- Database -------------------------------------------------------------------------- */

typedef struct kura_db kura_db;
typedef struct kura_tree kura_tree;
typedef struct kura_snapshot kura_snapshot;

/*
 * Opens (and with create_if_missing creates) the database in directory `dir`, replaying every
 * partition's WAL. `opts` may be NULL for the defaults; it is copied. Errors: KURA_E_BUSY if
 * another process holds the database, KURA_E_CORRUPTION (message names file and offset),
 * KURA_E_IO, KURA_E_NOSPC, KURA_E_INVALID (not a kura directory / bad options).
 */
kura_status kura_open(const char *dir, const kura_options *opts, kura_db **db_out);

/*
 * Waits for running background work, syncs the WALs, frees the database and every handle
 * obtained from it (trees). Snapshots and iterators must be freed before. Returns the first
 * background error seen, if any; the database is closed either way.
 */
kura_status kura_close(kura_db *db);

typedef struct kura_tree_options {
    uint32_t partitions; /* 0 = kura_options.default_partitions; fixed at creation */
    /* true: the first 8 bytes of every key are a big-endian 64-bit hash that routes the key
     * (the item layer's `hash64(pk) || enc(pk) || enc(sk)`); keys shorter than 8 bytes are
     * KURA_E_INVALID. false: kura hashes the whole key to route it. Fixed at creation. */
    bool hash_prefixed_keys;
} kura_tree_options;

/*
 * Opens the named tree, creating it with `topts` (NULL = defaults) if it does not exist.
 * Names are 1..255 bytes of [A-Za-z0-9_.-]. The handle is owned by the database and stays
 * valid until kura_close() or kura_tree_drop(). Opening an existing tree ignores `topts`.
 */
kura_status kura_tree_open(kura_db *db, const char *name, const kura_tree_options *topts,
                           kura_tree **tree_out);

/* Removes the tree and its files. The handle becomes invalid. */
kura_status kura_tree_drop(kura_db *db, kura_tree *tree);

/* Fills names_out with up to `cap` tree names (pointers owned by the database, valid until
 * the tree is dropped or the database closed) and returns the number of trees. */
size_t kura_tree_list(kura_db *db, const char **names_out, size_t cap);

/* ---- Raw key/value operations ------------------------------------------------------------ */

typedef struct kura_read_options {
    const kura_snapshot *snapshot; /* NULL: read the latest visible state */
    bool fill_cache;               /* default true (kura_read_options_init) */
} kura_read_options;

typedef struct kura_write_options {
    /* -1: the database's durability; else a kura_durability for this write only */
    int durability;
} kura_write_options;

void kura_read_options_init(kura_read_options *ro);
void kura_write_options_init(kura_write_options *wo);

/* Key and value sizes: keys 1..65535 bytes, values up to 64 MiB. `ro`/`wo` may be NULL. */
kura_status kura_put(kura_tree *t, const kura_write_options *wo, const void *key, size_t klen,
                     const void *val, size_t vlen);
kura_status kura_delete(kura_tree *t, const kura_write_options *wo, const void *key,
                        size_t klen);

/* On success *val_out is a malloc'ed copy (caller frees with kura_free) of *vlen_out bytes.
 * A missing key is KURA_E_NOT_FOUND (with no message). */
kura_status kura_get(kura_tree *t, const kura_read_options *ro, const void *key, size_t klen,
                     void **val_out, size_t *vlen_out);

void kura_free(void *p);

/* A write batch: puts and deletes applied atomically, under one sequence number range, to one
 * partition. Every key of a batch must route to the same partition (KURA_E_INVALID if not). */
typedef struct kura_batch kura_batch;
kura_batch *kura_batch_new(void);
void kura_batch_free(kura_batch *b);
void kura_batch_clear(kura_batch *b);
kura_status kura_batch_put(kura_batch *b, const void *key, size_t klen, const void *val,
                           size_t vlen);
kura_status kura_batch_delete(kura_batch *b, const void *key, size_t klen);
size_t kura_batch_count(const kura_batch *b);
kura_status kura_write(kura_tree *t, const kura_write_options *wo, const kura_batch *b);

/* The partition a key routes to, in 0..partitions-1. */
uint32_t kura_tree_partition_of(const kura_tree *t, const void *key, size_t klen);
uint32_t kura_tree_partitions(const kura_tree *t);

/* ---- Snapshots and iterators ----------------------------------------------------------- */

/* A snapshot pins the database-wide sequence number visible now; reads through it see exactly
 * the writes acknowledged before it was taken. Free before kura_close(). */
const kura_snapshot *kura_snapshot_new(kura_db *db);
void kura_snapshot_free(kura_db *db, const kura_snapshot *s);
uint64_t kura_snapshot_seq(const kura_snapshot *s);

/*
 * A range iterator over one tree in key order (memcmp), merging all partitions. It reads a
 * snapshot (ro->snapshot, or one taken at creation). Keys and values returned point into
 * iterator memory, valid until the next move or kura_iter_free(). Free before kura_close().
 */
typedef struct kura_iter kura_iter;
kura_status kura_iter_new(kura_tree *t, const kura_read_options *ro, kura_iter **it_out);
void kura_iter_free(kura_iter *it);
void kura_iter_seek_first(kura_iter *it);
void kura_iter_seek_last(kura_iter *it);
void kura_iter_seek(kura_iter *it, const void *key, size_t klen); /* first key >= key */
bool kura_iter_valid(const kura_iter *it);
void kura_iter_next(kura_iter *it);
void kura_iter_prev(kura_iter *it);
const void *kura_iter_key(const kura_iter *it, size_t *klen_out);
const void *kura_iter_value(const kura_iter *it, size_t *vlen_out);
/* KURA_OK, or the error that made the iterator invalid (e.g. corruption). */
kura_status kura_iter_status(const kura_iter *it);

/* ---- Maintenance ------------------------------------------------------------------------ */

/* Flushes every memtable of the tree to L0 SSTables and waits. */
kura_status kura_tree_flush(kura_tree *t);
/* Compacts every partition of the tree down to one sorted run and waits. */
kura_status kura_tree_compact(kura_tree *t);
/* Syncs every WAL of the database (useful with KURA_RELAXED). */
kura_status kura_sync(kura_db *db);

/* A few numbers for tests and kura-bench. */
typedef struct kura_stats {
    uint64_t last_sequence;     /* highest visible sequence number */
    uint64_t memtable_bytes;    /* all memtables, active and immutable */
    uint64_t sstable_files;     /* live SSTables */
    uint64_t sstable_bytes;     /* their total size */
    uint64_t wal_bytes;         /* live WAL segments */
    uint64_t flushes;           /* since open */
    uint64_t compactions;       /* since open */
    uint64_t write_slowdowns;   /* writes delayed by L0 pressure */
    uint64_t block_cache_bytes; /* in use */
    uint64_t readonly_partitions;
} kura_stats;
void kura_get_stats(kura_db *db, kura_stats *stats_out);

#ifdef __cplusplus
}
#endif
#endif /* KURA_H */

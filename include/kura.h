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
    X(KURA_E_CLOSED, 11, "database is closing")                                              \
    /* DynamoDB's error types (the item API; KURA_E_INVALID is ValidationException) */          \
    X(KURA_E_RESOURCE_NOT_FOUND, 12, "requested resource not found")                           \
    X(KURA_E_RESOURCE_IN_USE, 13, "resource in use")                                           \
    X(KURA_E_CONDITION_FAILED, 14, "the conditional request failed")                           \
    X(KURA_E_TXN_CANCELED, 15, "transaction cancelled")                                        \
    X(KURA_E_TXN_CONFLICT, 16, "transaction conflict")                                         \
    X(KURA_E_IDEMPOTENT_MISMATCH, 17, "idempotent parameter mismatch")                         \
    X(KURA_E_COLLECTION_SIZE, 18, "item collection size limit exceeded")                       \
    X(KURA_E_LIMIT_EXCEEDED, 19, "limit exceeded")                                             \
    X(KURA_E_TXN_IN_PROGRESS, 20, "transaction in progress")                                   \
    /* DynamoDB Streams' error types */                                                         \
    X(KURA_E_EXPIRED_ITERATOR, 21, "shard iterator expired")                                   \
    X(KURA_E_TRIMMED_DATA, 22, "stream records trimmed")                                      \
    /* PolicyNotFoundException (resource-based policies) */                                    \
    X(KURA_E_POLICY_NOT_FOUND, 23, "resource-based policy not found")                          \
    /* PartiQL: an INSERT of an item that exists (DuplicateItemException) */                    \
    X(KURA_E_DUPLICATE_ITEM, 24, "duplicate item")                                             \
    /* throttling (kura_options.throttle): ProvisionedThroughputExceededException and        \
     * ThrottlingException */                                                                 \
    X(KURA_E_THROUGHPUT_EXCEEDED, 25, "provisioned throughput exceeded")                       \
    X(KURA_E_THROTTLED, 26, "throttled")

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
    uint64_t level1_bytes;            /* L1 per partition, default 16 MiB; x10 per level */
    uint64_t sstable_target_bytes;    /* output file size of compactions, default 4 MiB */
    struct io_env *io;                /* borrowed, must outlive the database; NULL = POSIX */
    /* Tables with a local secondary index: the largest an item collection (the items of one
     * partition key value with their LSI entries) may grow to; a write that would take it
     * past this fails with KURA_E_COLLECTION_SIZE. 0 (the default) = DynamoDB's 10 GB
     * (10 * 2^30 bytes). A few KB lets a test reach it. */
    uint64_t item_collection_limit_bytes;
    /* TransactWriteItems' ClientRequestToken: for this long after a transaction committed,
     * the same token with the same request returns success without writing again, and with
     * another request fails with KURA_E_IDEMPOTENT_MISMATCH. 0 (the default) = DynamoDB's 10
     * minutes. Tokens are durable (the transaction log). */
    uint32_t idempotency_window_ms;
    /* Time to Live (docs/architecture.md, "Time to Live"). The sweeper deletes the expired
     * items of every table with TTL enabled every ttl_sweep_interval_ms (0 = the default,
     * 10 000: an item goes within about a minute of its expiry, as DynamoDB promises within
     * days). ttl_change_interval_ms: a second UpdateTimeToLive of a table sooner than this
     * after the last one fails as DynamoDB's does (0 = DynamoDB's one hour). ttl_transition_ms:
     * how long DescribeTimeToLive shows DISABLING after TTL is disabled (0 = 1000 ms; enabling
     * shows ENABLED at once, as DynamoDB; the sweeper deletes from the moment TTL is enabled
     * and stops the moment it is disabled). */
    uint32_t ttl_sweep_interval_ms;
    /* The share of its time a sweep works (1..100 percent; 0 = the default, 50): after each
     * chunk of deletes it sleeps for the rest, leaving the CPU to foreground work. 100 sweeps
     * flat out. */
    uint32_t ttl_sweep_duty_percent;
    uint32_t ttl_change_interval_ms;
    uint32_t ttl_transition_ms;
    /* The clock TTL compares expiry times with, in seconds since the epoch; NULL (the
     * default) is the real time. Tests inject one; it is called from the sweeper thread and
     * from kura_update_time_to_live / kura_describe_time_to_live, so it must be thread-safe. */
    int64_t (*ttl_clock)(void *arg);
    void *ttl_clock_arg;
    /* Change streams (docs/architecture.md, "Change stream"). A stream's records are kept for
     * stream_retention_ms after they were written (0 = DynamoDB's 24 hours), however often
     * the memtables flush; a disabled stream stays readable as long. A shard iterator expires
     * stream_iterator_ttl_ms after GetShardIterator or GetRecords made it (0 = DynamoDB's 15
     * minutes). Tests set a few ms to reach trimming and expiry. */
    uint64_t stream_retention_ms;
    uint32_t stream_iterator_ttl_ms;
    /* The region and account in every ARN (TableArn, IndexArn, StreamArn, ...) and stream
     * record's awsRegion the C API answers, and the JSON API's for a request whose
     * kura_request_context names none (an unsigned request). region: 1..32 of [a-z0-9-],
     * default KURA_DEFAULT_REGION; account_id: 12 digits, default KURA_DEFAULT_ACCOUNT_ID
     * (DynamoDB Local's). NULL or "": the default; anything else is KURA_E_INVALID at
     * kura_open. Copied. Neither is stored with the data: ARNs are composed when answered,
     * so a database reopened with another region answers in that one. */
    const char *region;
    const char *account_id;
    /* DynamoDB's capacity limits (docs/architecture.md, "Capacity accounting and throttling
     * on the item paths"): false (the default) accepts any load, as before; true throttles a
     * PROVISIONED table or GSI past its throughput after its burst (300 s of unused
     * capacity), an on-demand one past its OnDemandThroughput maximum or twice its previous
     * peak, and any partition-key value past 3,000 read / 1,000 write units a second, with
     * DynamoDB's errors (KURA_E_THROUGHPUT_EXCEEDED, KURA_E_THROTTLED; in transactions a
     * ThrottlingError reason; in batches the unprocessed items), and limits throughput
     * decreases as DynamoDB does. The accounting behind it (kura_heat_report) is always on. */
    bool throttle;
    /* The clock of the capacity accounting and throttling, in milliseconds (any epoch, never
     * going back); NULL: the real time. Tests drive it; it must be thread-safe. */
    int64_t (*capacity_clock)(void *arg);
    void *capacity_clock_arg;
    /* Turns the capacity accounting off (no heat report data, no throttling): only for
     * measuring what the accounting costs (kura-bench's kura-capi-noacct). Default false. */
    bool capacity_accounting_off;
} kura_options;

#define KURA_DEFAULT_REGION "us-east-1"
#define KURA_DEFAULT_ACCOUNT_ID "000000000000"

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
/* Applies n batches atomically: batches[i] to trees[i], their keys routed to any partitions
 * (several batches may name one tree). Readers see all of them or none, also after a crash
 * at any point (docs/architecture.md, "Transactions"). Writes spanning several partitions
 * are made durable before they commit, whatever the durability; wo's durability decides the
 * commit record's. Trees must belong to db. */
kura_status kura_write_atomic(kura_db *db, const kura_write_options *wo, size_t n,
                              kura_tree *const trees[], const kura_batch *const batches[]);

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
/* Gives memory back, for a process going idle: flushes every memtable that holds data to L0
 * SSTables and waits, frees the index and filters of every SSTable no read, iterator or
 * compaction is using at that moment (read again when next needed; kura_stats'
 * table_index_bytes says what stayed), drops every block of the block cache that no read has
 * pinned, and returns the freed heap to the OS (malloc_trim). Reads and writes may run
 * meanwhile; later reads refill what they need. Returns the first flush failure (the
 * partition turns read-only as for any failed flush); the rest is released either way. */
kura_status kura_release_memory(kura_db *db);

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
    uint64_t table_index_bytes; /* SSTable indexes and filters in memory (live tables) */
    uint64_t table_unloads;     /* since open: indexes and filters freed by kura_release_memory */
    /* Secondary indexes kura_open rebuilt from their tables because a kura from before
     * recovery replayed by sequence had last written them (kura_rebuild_index; docs/format/
     * catalog.md, flag bit 4): such an index may hold stale or lack entries after a crash. */
    uint64_t indexes_rebuilt_at_open;
} kura_stats;
void kura_get_stats(kura_db *db, kura_stats *stats_out);


/* =========================================================================================
 * The DynamoDB data model: values, tables and item operations.
 *
 * These functions implement DynamoDB's operations (API version 2012-08-10) with its semantics,
 * limits and error types. A DynamoDB error is a status code plus the message DynamoDB sends:
 *   KURA_E_INVALID              ValidationException
 *   KURA_E_RESOURCE_NOT_FOUND   ResourceNotFoundException
 *   KURA_E_RESOURCE_IN_USE      ResourceInUseException
 *   KURA_E_CONDITION_FAILED     ConditionalCheckFailedException
 *   KURA_E_LIMIT_EXCEEDED       LimitExceededException
 *   KURA_E_COLLECTION_SIZE      ItemCollectionSizeLimitExceededException
 *   KURA_E_EXPIRED_ITERATOR     ExpiredIteratorException (DynamoDB Streams)
 *   KURA_E_TRIMMED_DATA         TrimmedDataAccessException (DynamoDB Streams)
 *   KURA_E_DUPLICATE_ITEM       DuplicateItemException (PartiQL INSERT)
 *   KURA_E_THROUGHPUT_EXCEEDED  ProvisionedThroughputExceededException (kura_options.throttle)
 *   KURA_E_THROTTLED            ThrottlingException (kura_options.throttle)
 * and the storage errors above (KURA_E_IO, KURA_E_CORRUPTION, KURA_E_NOSPC, KURA_E_READONLY,
 * KURA_E_NOMEM) are InternalServerError. The request structs mirror DynamoDB's parameters
 * (same names in snake case); zero-initialise a request, then set what you need.
 * The JSON API (kura_execute) accepts exactly the JSON an AWS SDK sends and calls these.
 * ========================================================================================= */

/* ---- Attribute values -------------------------------------------------------------------- */

typedef enum kura_type {
    KURA_S = 1, /* string (UTF-8) */
    KURA_N,     /* number: exact decimal, 38 significant digits, 1e-130 .. 9.99..9e+125 */
    KURA_B,     /* binary */
    KURA_BOOL,
    KURA_NULL,
    KURA_M,     /* map: attribute name -> value; an item is a map */
    KURA_L,     /* list of values of any types */
    KURA_SS,    /* string set */
    KURA_NS,    /* number set */
    KURA_BS,    /* binary set */
} kura_type;

/* A value tree. A kura_value obtained from a constructor, kura_value_clone() or an operation's
 * result is owned by the caller and freed with kura_value_free(), which frees its children.
 * Values inside a map, list or set are owned by their container: pointers returned by the
 * accessors stay valid until the container is modified or freed. */
typedef struct kura_value kura_value;

/* Constructors. They copy their input and return NULL when out of memory. kura_value_n()
 * returns NULL with kura_last_error() set (DynamoDB's message) if `num` is not a number
 * within DynamoDB's range and precision. */
kura_value *kura_value_s(const char *s, size_t len);
kura_value *kura_value_b(const void *p, size_t len);
kura_value *kura_value_n(const char *num, size_t len);
kura_value *kura_value_bool(bool b);
kura_value *kura_value_null(void);
kura_value *kura_value_map(void);
kura_value *kura_value_list(void);
kura_value *kura_value_set(kura_type set_type); /* KURA_SS, KURA_NS or KURA_BS */
kura_value *kura_value_clone(const kura_value *v);
void kura_value_free(kura_value *v);

/* Adds `v` to a map under `name` (replacing an existing attribute of that name). Takes
 * ownership of `v` in every case (it is freed on failure). KURA_E_INVALID if `m` is not a
 * map, KURA_E_NOMEM. */
kura_status kura_value_map_put(kura_value *m, const char *name, size_t name_len, kura_value *v);
/* Appends `v` to a list, or to a set (then `v` must be the set's element type: S for SS...).
 * Takes ownership of `v` in every case. Uniqueness of set members is checked when the value
 * is used in an operation (DynamoDB's ValidationException), not here. */
kura_status kura_value_append(kura_value *list_or_set, kura_value *v);

kura_type kura_value_type(const kura_value *v);
/* S and B: the bytes (S is also NUL-terminated) and their length. NULL for other types. */
const char *kura_value_bytes(const kura_value *v, size_t *len_out);
/* N: writes the canonical decimal string ("12.5"), NUL-terminated, into buf (cap >= 172) and
 * returns its length; 0 if `v` is not a number. */
size_t kura_value_num(const kura_value *v, char *buf, size_t cap);
bool kura_value_boolean(const kura_value *v); /* BOOL: its value; false otherwise */
/* M, L, SS, NS, BS: number of attributes / elements (0 for other types). */
size_t kura_value_count(const kura_value *v);
/* L and sets: the i-th element; M: the i-th attribute in name order, its name through
 * name_out/name_len_out (may be NULL). NULL if out of range. */
const kura_value *kura_value_at(const kura_value *v, size_t i, const char **name_out,
                                size_t *name_len_out);
/* M: the attribute called `name`, or NULL. */
const kura_value *kura_value_get(const kura_value *m, const char *name, size_t name_len);

/* DynamoDB JSON. kura_value_from_json parses one attribute value ({"S": "x"}) or, with
 * `item` true, an item ({"a": {"S": "x"}, ...}) into a new value (free with
 * kura_value_free). Errors: KURA_E_INVALID with DynamoDB's message. kura_value_to_json
 * writes the same shapes; *json_out is malloc'ed and NUL-terminated (free with kura_free). */
kura_status kura_value_from_json(const char *json, size_t len, bool item, kura_value **v_out);
kura_status kura_value_to_json(const kura_value *v, bool item, char **json_out,
                               size_t *len_out);

/* ---- Common request parameters ----------------------------------------------------------- */

typedef enum kura_return_values {
    KURA_RETURN_NONE = 0,
    KURA_RETURN_ALL_OLD,
    KURA_RETURN_UPDATED_OLD,
    KURA_RETURN_ALL_NEW,
    KURA_RETURN_UPDATED_NEW,
} kura_return_values;

typedef enum kura_return_capacity {
    KURA_CAPACITY_NONE = 0,
    KURA_CAPACITY_TOTAL,
    KURA_CAPACITY_INDEXES,
} kura_return_capacity;

/* ReturnItemCollectionMetrics. */
typedef enum kura_return_metrics {
    KURA_METRICS_NONE = 0,
    KURA_METRICS_SIZE,
} kura_return_metrics;

typedef enum kura_select {
    KURA_SELECT_DEFAULT = 0, /* not given: ALL_ATTRIBUTES, or SPECIFIC_ATTRIBUTES with a
                              * projection expression */
    KURA_SELECT_ALL_ATTRIBUTES,
    KURA_SELECT_ALL_PROJECTED_ATTRIBUTES,
    KURA_SELECT_SPECIFIC_ATTRIBUTES,
    KURA_SELECT_COUNT,
} kura_select;

/* One secondary index's share of a request's capacity (ReturnConsumedCapacity INDEXES). */
typedef struct kura_index_capacity {
    char *index_name;      /* owned by the result */
    bool global;           /* a GSI ("GlobalSecondaryIndexes"), else an LSI */
    double capacity_units;
} kura_index_capacity;

/* Capacity consumed by one request on one table (ReturnConsumedCapacity), in DynamoDB's
 * units: reads in 4 KB units (eventually consistent: half), writes in 1 KB units. With
 * INDEXES, capacity_units = table_capacity_units + the units of every index listed. A Query or
 * Scan with IndexName lists its one index (the index entries read; table_capacity_units is
 * what reading whole items from the table for an LSI cost); a write may list every index it
 * changed. Everything is freed with the result that holds it (kura_page_free, ...). */
typedef struct kura_consumed_capacity {
    bool present;          /* false when ReturnConsumedCapacity was NONE */
    char *table_name;      /* owned by the result */
    double capacity_units; /* total */
    double read_capacity_units;
    double write_capacity_units;
    double table_capacity_units; /* the table's share (INDEXES) */
    kura_index_capacity *indexes; /* INDEXES: owned by the result; NULL when none */
    size_t index_count;
} kura_consumed_capacity;

/* ItemCollectionMetrics of one write (ReturnItemCollectionMetrics SIZE on a table with at
 * least one local secondary index): the item collection the write touched, the items that
 * share its partition key value, and DynamoDB's estimate of its size after the write. The
 * size is the DynamoDB item sizes of the collection's items plus the projected sizes of their
 * entries in every LSI (the sizes DescribeTable's TableSizeBytes and IndexSizeBytes add up),
 * kept per collection in memory and updated by every write (docs/data-model.md, "Item
 * collections"). Everything is freed with the result that holds it. */
typedef struct kura_item_collection_metrics {
    bool present;       /* false: not asked for, or the table has no LSI */
    char *table_name;   /* owned by the result */
    kura_value *item_collection_key; /* M: {partition key name: value}, owned by the result */
    double size_estimate_range_gb[2]; /* [floor(GB), floor(GB) + 1], GB = 2^30 bytes */
    uint64_t size_bytes; /* kura: the estimate in bytes that range comes from */
} kura_item_collection_metrics;

/* Expression parameters shared by the item operations. `names` is a map "#n" -> S (the
 * attribute name), `values` a map ":v" -> value; both may be NULL. Borrowed for the call. */
typedef struct kura_expression_attributes {
    const kura_value *names;
    const kura_value *values;
} kura_expression_attributes;

/* ---- Tables ------------------------------------------------------------------------------- */

typedef struct kura_attribute_definition {
    const char *attribute_name;
    kura_type attribute_type; /* KURA_S, KURA_N or KURA_B */
} kura_attribute_definition;

typedef struct kura_key_schema_element {
    const char *attribute_name;
    bool range; /* false: HASH, true: RANGE */
} kura_key_schema_element;

typedef enum kura_billing_mode {
    KURA_BILLING_UNSET = 0, /* not given: PROVISIONED, as DynamoDB */
    KURA_BILLING_PROVISIONED,
    KURA_BILLING_PAY_PER_REQUEST,
} kura_billing_mode;

/* ---- Table settings (docs/data-model.md, "Table settings") -------------------------------- */

/* TableClass: kept and shown; kura stores every table alike. */
typedef enum kura_table_class {
    KURA_TABLE_CLASS_UNSET = 0, /* never given: DescribeTable has no TableClassSummary */
    KURA_TABLE_CLASS_STANDARD,
    KURA_TABLE_CLASS_STANDARD_INFREQUENT_ACCESS,
} kura_table_class;

/* OnDemandThroughput of a PAY_PER_REQUEST table or GSI. Each maximum is >= 1, -1 for no
 * maximum, or 0 for not given (a request: unchanged; a description: not set, shown as -1).
 * kura keeps and shows them; it does not throttle. */
typedef struct kura_on_demand_throughput {
    bool given;
    int64_t max_read_request_units, max_write_request_units;
} kura_on_demand_throughput;

/* WarmThroughput asked for (a request: 0 = not given; values >= 1, never below the current
 * ones), or the table's or GSI's warm throughput (a description: at least DynamoDB's on-demand
 * default, 12000 reads and 4000 writes per second; status always ACTIVE). */
typedef struct kura_warm_throughput {
    bool given;
    int64_t read_units_per_second, write_units_per_second;
} kura_warm_throughput;

typedef enum kura_sse_type {
    KURA_SSE_UNSET = 0,
    KURA_SSE_AES256,
    KURA_SSE_KMS,
} kura_sse_type;

/* SSESpecification: `enabled` true means a KMS key (kms_master_key_id, or the AWS managed
 * key alias/aws/dynamodb when NULL), false the AWS owned key, DynamoDB's default. kura does
 * not encrypt (docs/data-model.md): the setting is kept and shown. Borrowed for the call. */
typedef struct kura_sse_specification {
    bool given;
    bool has_enabled; /* Enabled given */
    bool enabled;
    kura_sse_type sse_type;
    const char *kms_master_key_id;
} kura_sse_specification;

/* ---- Secondary indexes (index/, docs/architecture.md "Secondary indexes") ---------------- */

typedef enum kura_projection_type {
    KURA_PROJECTION_UNSET = 0, /* not given: a ValidationException, as in DynamoDB */
    KURA_PROJECTION_ALL,
    KURA_PROJECTION_KEYS_ONLY,
    KURA_PROJECTION_INCLUDE,
} kura_projection_type;

typedef struct kura_projection {
    kura_projection_type projection_type;
    const char *const *non_key_attributes; /* INCLUDE only; borrowed */
    size_t non_key_attributes_count;
} kura_projection;

/* One LocalSecondaryIndex or GlobalSecondaryIndex of CreateTable (or UpdateTable's
 * GlobalSecondaryIndexUpdates Create). An LSI's key schema is the table's HASH attribute and
 * one RANGE attribute; a GSI's is 1..4 HASH attributes then 0..4 RANGE attributes (DynamoDB's
 * multi-attribute keys), in the order written. Borrowed for the call. */
typedef struct kura_index_def {
    const char *index_name;
    const kura_key_schema_element *key_schema;
    size_t key_schema_count;
    kura_projection projection;
    bool has_provisioned_throughput; /* GSI only */
    uint64_t read_capacity_units, write_capacity_units;
    kura_on_demand_throughput on_demand; /* GSI only; PAY_PER_REQUEST tables only */
    kura_warm_throughput warm;           /* GSI only */
} kura_index_def;

/* What DescribeTable says of one index; owned by the table description. */
typedef struct kura_index_description {
    char *index_name;
    char *index_arn; /* <table arn>/index/<name> */
    kura_key_schema_element *key_schema; /* names owned */
    size_t key_schema_count;
    kura_projection_type projection_type;
    char **non_key_attributes; /* owned */
    size_t non_key_attributes_count;
    const char *index_status; /* static: "CREATING", "ACTIVE", "DELETING" (GSIs) */
    bool backfilling;         /* GSI being created: the backfill is running */
    uint64_t item_count, index_size_bytes;
    uint64_t read_capacity_units, write_capacity_units; /* GSI, 0 with PAY_PER_REQUEST */
    kura_on_demand_throughput on_demand; /* GSI of a PAY_PER_REQUEST table: `given` true */
    kura_warm_throughput warm;           /* GSI: `given` true */
} kura_index_description;

/* Blocks until the index `index_name` of `table_name` has applied every write committed
 * before the call (read-your-writes on a GSI; an LSI is always current and returns at once).
 * Errors: KURA_E_RESOURCE_NOT_FOUND (no such table or index), KURA_E_BUSY after
 * `timeout_ms`. */
kura_status kura_index_wait(kura_db *db, const char *table_name, const char *index_name,
                            uint64_t timeout_ms);

/* How far an index is behind its table (DescribeTable does not show this; kura-server's
 * extension and `kura index-stats` do). */
typedef struct kura_index_stats {
    uint64_t lag_writes;  /* base writes committed, not yet in the index (GSIs) */
    uint64_t lag_ms;      /* the age of the oldest of them, 0 when none */
    uint64_t applied;     /* base writes applied since the database was opened */
    uint64_t checkpoints; /* durable checkpoints since then */
    uint64_t queue_bytes; /* the table's GSI backlog */
    kura_status error;    /* KURA_OK, or what stopped the applier (reopen to recover) */
    bool rebuilding;      /* kura_rebuild_index is rebuilding it */
} kura_index_stats;
kura_status kura_index_stats_get(kura_db *db, const char *table_name, const char *index_name,
                                 kura_index_stats *stats_out);

/*
 * Rebuilds the secondary index `index_name` (LSI or GSI) of `table_name` from the table's
 * items: afterwards it holds exactly the entries of the items (an index damaged by a crash
 * recovered by an older kura, docs/architecture.md "Rebuilding an index", is repaired). Online:
 * reads and writes of the table go on, and the index stays ACTIVE and readable from its
 * current contents until the rebuilt copy, made under new trees, replaces it in one durable
 * step; the old trees are then dropped. Writes to the table cost more meanwhile (each index
 * change is made twice); an LSI's writers wait for the replacement itself (every item lock of
 * the table is held for one definition write and the end of the LSI reads in flight).
 *
 * Blocks the calling thread until the rebuilt index has replaced the old one (one scan of the
 * table, the index's writes and a flush). A crash or a failure before that leaves the old
 * index untouched (the new trees are dropped, at the latest by the next open); call it again.
 * Thread safety: any thread; one rebuild per table at a time. kura_close stops a rebuild
 * running (it returns KURA_E_CLOSED) and waits for it. Strings are borrowed for the call.
 *
 * Errors: KURA_E_RESOURCE_NOT_FOUND (no such table, or no such index of it),
 * KURA_E_RESOURCE_IN_USE (the index is being created or deleted by UpdateTable, or an index
 * of the table is being rebuilt), KURA_E_CLOSED (the table was deleted meanwhile, or the
 * database is closing), storage errors (KURA_E_IO, KURA_E_NOSPC, KURA_E_READONLY,
 * KURA_E_CORRUPTION naming the file, KURA_E_NOMEM).
 */
kura_status kura_rebuild_index(kura_db *db, const char *table_name, const char *index_name);

/* ---- Integrity check (engine/check.c; `kura check`, kura-server's POST /kura/check) --------- */

typedef enum kura_check_severity {
    KURA_CHECK_PROBLEM = 0, /* damage or an inconsistency */
    KURA_CHECK_NOTE = 1,    /* something not checked, or accepted, and why */
} kura_check_severity;

/* Called once per finding with one line of text (no newline; valid during the call only),
 * on the thread that called kura_check, never concurrently with itself. It may hold the
 * check up (printing to a slow pipe) but must not call kura functions on that database:
 * while kura's own trees (not a table's) are checked, trees cannot be created or dropped. */
typedef void (*kura_check_fn)(void *arg, kura_check_severity severity, const char *line);

/* What a check read and found. problems counts every problem found, including the missing,
 * extra and stale index entries beyond the examples reported as lines. */
typedef struct kura_check_summary {
    uint64_t problems, notes;
    uint64_t trees, partitions;    /* trees (tables, indexes, kura's own) and their partitions */
    uint64_t manifests;            /* MANIFESTs read */
    uint64_t sstables, sstable_blocks, sstable_entries;
    uint64_t wal_segments, wal_records;
    uint64_t tables, items;        /* tables checked, items read at their snapshots */
    uint64_t indexes, indexes_skipped; /* compared with their tables; not compared */
    uint64_t index_entries;        /* entries read from the index trees */
    uint64_t missing_entries, extra_entries, stale_entries;
    uint64_t collections;          /* cached item collection sizes compared with a recount */
    uint64_t streams, shards;      /* change streams and their shards checked */
} kura_check_summary;

/*
 * Checks the database (table_name NULL) or one table, like SQLite's PRAGMA integrity_check,
 * while it stays in use (readers and writers may run meanwhile):
 *  - files: every partition of every tree (of the table and its indexes when table_name is
 *    given; else also kura's own trees): CURRENT and the MANIFEST (every live SSTable present
 *    with its recorded size), every block of every SSTable read from the file with its
 *    checksum and keys in strictly increasing order, every record of every WAL segment with
 *    its checksum (the current segment up to what is durable; a torn tail only where recovery
 *    accepts one). Damage is reported with the file and the byte offset;
 *  - every ACTIVE secondary index against its table, as multisets: at one snapshot S, after
 *    every GSI has applied everything committed up to S (waiting at most 60 s per index), the
 *    entries idx_entry_key / idx_entry_value of every item of the table at S are compared
 *    with the index's tree read at S. Missing, extra and stale (right key, other projected
 *    attributes; compared by a 64-bit hash of the value) entries are counted per index, the
 *    first 10 of each kind reported with the item's key as DynamoDB JSON. A CREATING
 *    (backfilling) index is skipped with a note, a DELETING one is skipped;
 *  - tables with an LSI: every item collection over the size limit, and every collection
 *    size the in-memory cache holds against a recount of the collection;
 *  - change streams: every shard's start and end positions ordered, within the WAL, and at a
 *    record boundary of a segment that still exists (or trimmed by the retention: a note).
 * Every finding goes to fn (NULL: only counted) as one line. Returns KURA_OK when the check
 * ran, whatever it found (the counts in *summary_out, which may be NULL); an error only when
 * it could not run: KURA_E_RESOURCE_NOT_FOUND (no such table), KURA_E_NOMEM. It reads the
 * whole database (one pass per index over its table) and keeps, per index being compared,
 * the expected entries' keys in memory. Thread-safe; a check holds a snapshot per table.
 */
kura_status kura_check(kura_db *db, const char *table_name, kura_check_fn fn, void *arg,
                       kura_check_summary *summary_out);

/* A table's change stream (DynamoDB Streams): what each record carries besides the item's key
 * attributes. */
typedef enum kura_stream_view_type {
    KURA_STREAM_VIEW_UNSET = 0,
    KURA_STREAM_KEYS_ONLY,
    KURA_STREAM_NEW_IMAGE,
    KURA_STREAM_OLD_IMAGE,
    KURA_STREAM_NEW_AND_OLD_IMAGES,
} kura_stream_view_type;
/* "KEYS_ONLY", ...; NULL for UNSET or a value out of range. */
const char *kura_stream_view_type_name(kura_stream_view_type v);

/* StreamSpecification of CreateTable and UpdateTable. Enabling needs a view type
 * ("Invalid StreamViewType: Stream ViewType must not be null or empty when enabling
 * streams."); disabling takes none. */
typedef struct kura_stream_specification {
    bool given;
    bool stream_enabled;
    kura_stream_view_type stream_view_type;
} kura_stream_specification;

typedef struct kura_create_table_req {
    const char *table_name;
    const kura_attribute_definition *attribute_definitions;
    size_t attribute_definitions_count;
    const kura_key_schema_element *key_schema;
    size_t key_schema_count;
    kura_billing_mode billing_mode;
    bool has_provisioned_throughput; /* ProvisionedThroughput given */
    uint64_t read_capacity_units, write_capacity_units;
    bool deletion_protection_enabled;
    uint32_t partitions; /* kura: hash partitions of the table, 0 = kura_options default */
    const kura_index_def *local_secondary_indexes; /* 0..5 */
    size_t local_secondary_indexes_count;
    const kura_index_def *global_secondary_indexes; /* 0..20 */
    size_t global_secondary_indexes_count;
    kura_stream_specification stream_specification; /* `given` false: no stream */
    const struct kura_tag *tags; /* CreateTable's Tags (may be NULL), checked as TagResource's */
    size_t tags_count;
    kura_table_class table_class;
    kura_on_demand_throughput on_demand; /* PAY_PER_REQUEST only */
    kura_warm_throughput warm;
    kura_sse_specification sse;
    const char *resource_policy; /* NULL: none; else as kura_put_resource_policy's */
} kura_create_table_req;

/* One of UpdateTable's GlobalSecondaryIndexUpdates. */
typedef enum kura_gsi_action {
    KURA_GSI_CREATE = 1, /* `create`: the new index, backfilled in the background */
    KURA_GSI_UPDATE,     /* `index_name` gets the provisioned throughput */
    KURA_GSI_DELETE,     /* `index_name` is dropped */
} kura_gsi_action;

typedef struct kura_gsi_update {
    kura_gsi_action action;
    kura_index_def create;
    const char *index_name;
    /* UPDATE: ProvisionedThroughput (has_provisioned_throughput), OnDemandThroughput and
     * WarmThroughput, at least one of them */
    bool has_provisioned_throughput;
    uint64_t read_capacity_units, write_capacity_units;
    kura_on_demand_throughput on_demand;
    kura_warm_throughput warm;
} kura_gsi_update;

typedef struct kura_update_table_req {
    const char *table_name;
    kura_billing_mode billing_mode; /* UNSET: unchanged */
    bool has_provisioned_throughput;
    uint64_t read_capacity_units, write_capacity_units;
    bool has_deletion_protection; /* DeletionProtectionEnabled given */
    bool deletion_protection_enabled;
    /* the key attributes of a GSI being created (the table's own are kept) */
    const kura_attribute_definition *attribute_definitions;
    size_t attribute_definitions_count;
    /* At most one Create or Delete per request, and none while an index is being created or
     * deleted (LimitExceededException, as DynamoDB). A created GSI is CREATING (Backfilling)
     * until its backfill from a snapshot is done, then ACTIVE; the table stays readable and
     * writable throughout. A deleted one is DELETING until its trees are dropped. */
    const kura_gsi_update *global_secondary_index_updates;
    size_t global_secondary_index_updates_count;
    /* Enables a stream (a new one, with a new ARN and label: "Table already has an enabled
     * stream" if one is on) or disables it ("Table has no stream to disable"); a disabled
     * stream's records stay readable for kura_options.stream_retention_ms, its shards
     * closed. A table keeps at most 1000 streams within the retention
     * (KURA_E_LIMIT_EXCEEDED). */
    kura_stream_specification stream_specification;
    /* Table settings: UNSET / `given` false leaves each unchanged. Switching to PROVISIONED
     * needs ProvisionedThroughput for the table and an Update with it for every GSI; switching
     * to PAY_PER_REQUEST forbids both. */
    kura_table_class table_class;
    kura_on_demand_throughput on_demand;
    kura_warm_throughput warm;
    kura_sse_specification sse;
} kura_update_table_req;

/* What DescribeTable returns. Every pointer is owned by the description and freed by
 * kura_table_description_free() (which frees the contents, not the struct). */
typedef struct kura_table_description {
    char *table_name;
    char *table_arn; /* arn:aws:dynamodb:<region>:<account_id>:table/<name> (kura_options) */
    char *table_id;  /* a UUID fixed at creation */
    const char *table_status; /* static: "ACTIVE" or "DELETING" */
    double creation_date_time; /* seconds since the epoch */
    kura_attribute_definition *attribute_definitions;
    size_t attribute_definitions_count;
    kura_key_schema_element *key_schema; /* HASH first */
    size_t key_schema_count;
    kura_billing_mode billing_mode;
    uint64_t read_capacity_units, write_capacity_units; /* 0 with PAY_PER_REQUEST */
    double last_update_to_pay_per_request_date_time;   /* 0 if never */
    bool deletion_protection_enabled;
    uint64_t item_count;       /* exact, counted when the table changed since the last count */
    uint64_t table_size_bytes; /* sum of the items' DynamoDB sizes */
    uint32_t partitions;
    kura_index_description *local_secondary_indexes; /* NULL when none */
    size_t local_secondary_indexes_count;
    kura_index_description *global_secondary_indexes; /* NULL when none */
    size_t global_secondary_indexes_count;
    /* StreamSpecification (shown while a stream is enabled: stream_enabled true), and the
     * last stream the table had, enabled or not (NULL if it never had one). */
    bool stream_enabled;
    kura_stream_view_type stream_view_type;
    char *latest_stream_label; /* "2026-11-27T01:58:00.123" */
    char *latest_stream_arn;   /* table_arn + "/stream/" + label */
    /* Settings: TableClassSummary when a class was ever given (last update 0: never changed
     * by UpdateTable), OnDemandThroughput of a PAY_PER_REQUEST table (`given` true), the
     * warm throughput (`given` true), SSEDescription when a KMS key is used (its ARN). */
    kura_table_class table_class;
    double table_class_last_update_date_time;
    kura_on_demand_throughput on_demand;
    kura_warm_throughput warm;
    char *kms_master_key_arn; /* NULL: the AWS owned key, no SSEDescription */
    char *kms_master_key_id;  /* the key as CreateTable/UpdateTable named it; NULL: the AWS
                               * managed key (or the AWS owned key: no kms_master_key_arn) */
} kura_table_description;

void kura_table_description_free(kura_table_description *d);

/* CreateTable. Tables are ACTIVE at once. Errors: KURA_E_INVALID (schema, names, billing),
 * KURA_E_RESOURCE_IN_USE (exists: "Table already exists: <name>"), storage errors. */
kura_status kura_create_table(kura_db *db, const kura_create_table_req *req,
                              kura_table_description *desc_out);
/* DescribeTable. KURA_E_RESOURCE_NOT_FOUND if there is no such table. */
kura_status kura_describe_table(kura_db *db, const char *table_name,
                                kura_table_description *desc_out);
/* DeleteTable: the description (status DELETING) of the table just removed with its data.
 * KURA_E_RESOURCE_NOT_FOUND; KURA_E_INVALID if deletion protection is enabled. */
kura_status kura_delete_table(kura_db *db, const char *table_name,
                              kura_table_description *desc_out);
/* UpdateTable: the table's settings (billing, throughput, deletion protection) and its GSIs
 * (GlobalSecondaryIndexUpdates). Errors: KURA_E_INVALID, KURA_E_RESOURCE_NOT_FOUND (no
 * such table or index), KURA_E_RESOURCE_IN_USE (that index is being created or deleted),
 * KURA_E_LIMIT_EXCEEDED (another index operation runs, or 20 GSIs). */
kura_status kura_update_table(kura_db *db, const kura_update_table_req *req,
                              kura_table_description *desc_out);
/* ListTables: names in ascending order after `exclusive_start_table_name` (NULL: from the
 * first), at most `limit` (1..100; 0 = 100). *names_out is a malloc'ed array of malloc'ed
 * strings and *last_evaluated_out the last name when more remain (else NULL); free all with
 * kura_free_strings(names, n) and kura_free(). */
kura_status kura_list_tables(kura_db *db, const char *exclusive_start_table_name,
                             uint32_t limit, char ***names_out, size_t *count_out,
                             char **last_evaluated_out);
void kura_free_strings(char **strs, size_t n);

/* ---- Time to Live -------------------------------------------------------------------------- */

/* UpdateTimeToLive's TimeToLiveSpecification. Borrowed for the call. */
typedef struct kura_update_time_to_live_req {
    const char *table_name;
    bool enabled;
    const char *attribute_name; /* 1..255 bytes; when disabling, the enabled attribute's name */
} kura_update_time_to_live_req;

/* DescribeTimeToLive's TimeToLiveDescription. `attribute_name` is owned (NULL when DISABLED):
 * kura_time_to_live_description_free() frees it. */
typedef struct kura_time_to_live_description {
    const char *time_to_live_status; /* static: "ENABLING", "ENABLED", "DISABLING", "DISABLED" */
    char *attribute_name;
} kura_time_to_live_description;
void kura_time_to_live_description_free(kura_time_to_live_description *d);

/*
 * UpdateTimeToLive. Enabling makes the sweeper delete the table's items whose attribute
 * `attribute_name` is a Number of seconds since the epoch earlier than now (the
 * kura_options.ttl_clock), and at most five years earlier; items without it, or with another
 * type, stay. Disabling stops the deletions at once. The setting is durable (the table's
 * definition). Expired items stay readable until the sweeper deletes them. Errors:
 * KURA_E_INVALID (a missing or malformed name, "TimeToLive is already enabled",
 * "TimeToLive is already disabled", "TimeToLive is active on a different AttributeName:
 * current AttributeName is <name>", "Time to live has been modified multiple times within a
 * fixed interval" within kura_options.ttl_change_interval_ms of the last change),
 * KURA_E_RESOURCE_NOT_FOUND, storage errors.
 */
kura_status kura_update_time_to_live(kura_db *db, const kura_update_time_to_live_req *req);
/* DescribeTimeToLive. KURA_E_INVALID (the name), KURA_E_RESOURCE_NOT_FOUND. */
kura_status kura_describe_time_to_live(kura_db *db, const char *table_name,
                                       kura_time_to_live_description *desc_out);
/* Runs one sweep of every table with TTL enabled now, in the calling thread, as the
 * background sweeper does every ttl_sweep_interval_ms; *deleted_out (may be NULL) is the
 * number of items it deleted. Storage errors. */
kura_status kura_ttl_sweep(kura_db *db, uint64_t *deleted_out);

/* ---- Contributor Insights -------------------------------------------------------------------
 *
 * DynamoDB's UpdateContributorInsights, DescribeContributorInsights and ListContributorInsights
 * for a table or one of its GSIs (LSIs have none, as in DynamoDB). kura has no CloudWatch: the
 * setting is kept durably with the table's definition and tells kura's hot-key read-out (GET
 * /kura/heat, `kura heat`) what to report (docs/data-model.md, "Contributor Insights").
 * Nothing is asynchronous: an update answers DynamoDB's transitional status (ENABLING,
 * DISABLING), and Describe and List show the settled one (ENABLED, DISABLED) at once.
 */

typedef enum kura_contributor_insights_action {
    KURA_CI_ENABLE = 1,
    KURA_CI_DISABLE = 2,
} kura_contributor_insights_action;

typedef enum kura_contributor_insights_mode {
    KURA_CI_MODE_UNSET = 0, /* in a request: ACCESSED_AND_THROTTLED_KEYS; in a result: none */
    KURA_CI_MODE_ACCESSED_AND_THROTTLED_KEYS = 1,
    KURA_CI_MODE_THROTTLED_KEYS = 2,
} kura_contributor_insights_mode;

/* DynamoDB's name of a mode ("ACCESSED_AND_THROTTLED_KEYS", "THROTTLED_KEYS"; NULL for UNSET). */
const char *kura_contributor_insights_mode_name(kura_contributor_insights_mode m);

/* UpdateContributorInsights' request. Borrowed for the call. */
typedef struct kura_update_contributor_insights_req {
    const char *table_name;
    const char *index_name; /* a GSI of the table; NULL: the table */
    kura_contributor_insights_action action;
    kura_contributor_insights_mode mode; /* ENABLE only; UNSET: ACCESSED_AND_THROTTLED_KEYS */
} kura_update_contributor_insights_req;

/* UpdateContributorInsights' answer and DescribeContributorInsights' description. Strings
 * and the rule list are owned (kura_contributor_insights_description_free frees them);
 * `status` is static: "ENABLING" or "DISABLING" from an update, "ENABLED" or "DISABLED" from a
 * describe. `rules` (describe, while ENABLED): DynamoDB's CloudWatch rule names,
 * "DynamoDBContributorInsights-<PKC|SKC|PKT|SKT>-<table>-<ms when enabled>" (SK rules only
 * with a sort key, only the *T rules in THROTTLED_KEYS mode). `last_update`: seconds since
 * the epoch of the last update, 0 when never. `mode`: UNSET while DISABLED. */
typedef struct kura_contributor_insights_description {
    char *table_name;
    char *index_name; /* NULL: the table */
    const char *status;
    kura_contributor_insights_mode mode;
    char **rules;
    size_t rule_count;
    double last_update;
} kura_contributor_insights_description;
void kura_contributor_insights_description_free(kura_contributor_insights_description *d);

/*
 * UpdateContributorInsights: enables (with `mode`; enabling again changes the mode) or
 * disables Contributor Insights of the table or of its GSI `index_name`, durably, before it
 * returns. *res_out (may be NULL) gets TableName, IndexName, ContributorInsightsStatus
 * (ENABLING / DISABLING) and ContributorInsightsMode (the mode enabled, UNSET on DISABLE).
 * Errors: KURA_E_INVALID (a malformed name, action or mode), KURA_E_RESOURCE_NOT_FOUND
 * ("Requested resource not found: Table: <name> not found"; "Requested resource not found:
 * Index: <name> not found" for a name that is no GSI of the table), storage errors.
 */
kura_status kura_update_contributor_insights(kura_db *db,
                                             const kura_update_contributor_insights_req *req,
                                             kura_contributor_insights_description *res_out);
/* DescribeContributorInsights of the table (`index_name` NULL) or its GSI. A table or GSI that
 * never had it enabled is DISABLED without a last update. Errors as for the update. */
kura_status kura_describe_contributor_insights(kura_db *db, const char *table_name,
                                               const char *index_name,
                                               kura_contributor_insights_description *desc_out);

/* One entry of ListContributorInsights; strings owned by the list. */
typedef struct kura_contributor_insights_summary {
    char *table_name;
    char *index_name; /* NULL: the table */
    const char *status; /* static: "ENABLED" or "DISABLED" */
    kura_contributor_insights_mode mode; /* UNSET while DISABLED */
} kura_contributor_insights_summary;

typedef struct kura_contributor_insights_list {
    kura_contributor_insights_summary *summaries;
    size_t count;
    char *next_token; /* NULL: no more */
} kura_contributor_insights_list;
void kura_contributor_insights_list_free(kura_contributor_insights_list *l);

/*
 * ListContributorInsights. With `table_name`: the table and each of its GSIs, whatever their
 * status (KURA_E_RESOURCE_NOT_FOUND when there is no such table). Without: every table and GSI
 * whose Contributor Insights is ENABLED. In order of table name, the table before its GSIs,
 * the GSIs by name; at most `max_results` (1..100; 0: 100) after `next_token` (NULL: from the
 * first; a token of an earlier answer, else KURA_E_INVALID "Invalid NextToken").
 */
kura_status kura_list_contributor_insights(kura_db *db, const char *table_name,
                                           const char *next_token, uint32_t max_results,
                                           kura_contributor_insights_list *list_out);

/* ---- Tags ------------------------------------------------------------------------------------
 *
 * A table's tags (TagResource, UntagResource, ListTagsOfResource) are key/value pairs kept with
 * its definition (docs/format/catalog.md, version 5): every change is durable before the call
 * returns, and they go with the table at DeleteTable. A resource is named by its table's ARN,
 * as DescribeTable's TableArn: arn:aws:dynamodb:<region>:<account_id>:table/<TableName>, in
 * kura_options' region and account (the JSON API: the request's, kura_request_context).
 * DynamoDB's rules: at most 50 tags; a key is 1..128 and a value 0..256 characters (UTF-16
 * units) of [\p{L}\p{Z}\p{N}_.:/=+\-@] (Unicode general categories, libunistring's);
 * a key may not begin with "aws:". Common errors of the three calls: KURA_E_INVALID
 * ("Invalid TableArn: Invalid ResourceArn provided as input <arn>" for an ARN that is not a
 * table ARN, the rules above), KURA_E_RESOURCE_NOT_FOUND ("Requested resource not found:
 * ResourceArn: <arn> not found", also for another region's or account's ARN), storage errors. */

/* A tag. In requests, borrowed for the call; in a kura_tag_list, owned by the list. */
typedef struct kura_tag {
    const char *key;
    const char *value;
} kura_tag;

/* Adds the `count` tags (at least one); a key the table has already gets the new value. The
 * tags are checked all together before any is applied, and the table's tag count after the
 * call must stay at most 50. */
kura_status kura_tag_resource(kura_db *db, const char *resource_arn, const kura_tag *tags,
                              size_t count);
/* Removes the tags with the `count` keys (at least one); keys the table lacks are ignored. */
kura_status kura_untag_resource(kura_db *db, const char *resource_arn, const char *const *keys,
                                size_t count);

/* ListTagsOfResource's page: `tags` in key order (bytewise), `next_token` the token of the next
 * page or NULL when this is the last. All owned: kura_tag_list_free() frees them. */
typedef struct kura_tag_list {
    kura_tag *tags;
    size_t count;
    char *next_token;
} kura_tag_list;
/* Lists the tags after `next_token` (NULL: from the first), at most `limit` (0: all). A
 * token is the last key of the previous page; one that is not a valid key is KURA_E_INVALID
 * ("Invalid NextToken"). *out is set only on success. */
kura_status kura_list_tags_of_resource(kura_db *db, const char *resource_arn,
                                       const char *next_token, size_t limit,
                                       kura_tag_list *out);
void kura_tag_list_free(kura_tag_list *l);

/*
 * Resource-based policies (PutResourcePolicy, GetResourcePolicy, DeleteResourcePolicy) of a
 * table, named by its ARN as tags are. A policy is JSON text of at most 20 KB (20480 bytes,
 * whitespace counted), kept with the table's definition (durable before the call returns) and
 * gone with the table. kura stores and returns policies; it does not enforce them (it has no
 * IAM: docs/data-model.md). Each put of a different text makes a new revision id, a decimal
 * string that grows (milliseconds since the epoch, at least one more than the last); putting
 * the same text again returns the current id and changes nothing.
 *
 * expected_revision_id (NULL: unconditional): the request applies only when the table's
 * policy has that revision id ("NO_POLICY": only when it has none), else
 * KURA_E_POLICY_NOT_FOUND. Errors: KURA_E_INVALID (ARN, policy not JSON or too long),
 * KURA_E_RESOURCE_NOT_FOUND (no such table), KURA_E_POLICY_NOT_FOUND. Returned strings are
 * malloc'ed (kura_free).
 */
kura_status kura_put_resource_policy(kura_db *db, const char *resource_arn, const char *policy,
                                     const char *expected_revision_id, char **revision_id_out);
/* The policy and its revision id; KURA_E_POLICY_NOT_FOUND when the table has none. */
kura_status kura_get_resource_policy(kura_db *db, const char *resource_arn, char **policy_out,
                                     char **revision_id_out);
/* Removes the policy; *revision_id_out is the removed policy's revision id, or NULL when the
 * table had none (not an error unless expected_revision_id was given). */
kura_status kura_delete_resource_policy(kura_db *db, const char *resource_arn,
                                        const char *expected_revision_id,
                                        char **revision_id_out);

/* ---- Change streams (DynamoDB Streams, API version 2012-08-10) ------------------------------
 *
 * A table with a stream enabled records every change of an item, in the order of its writes:
 * INSERT (the item did not exist), MODIFY (it differed), REMOVE (it existed); a write that
 * changes nothing (a put of an equal item, a delete of nothing) makes no record. A
 * transaction's writes all carry its time; Time to Live deletes carry the service identity.
 * A stream has one shard per partition of its table, open while the stream is enabled and
 * closed (an ending sequence number) once disabled; shards have no parents (kura does not
 * split them). Records are read from the table's WAL (docs/architecture.md, "Change
 * stream") and kept for kura_options.stream_retention_ms; a table's streams go with the
 * table at DeleteTable. A stream's ARN is its table's ARN + "/stream/" + its label, in
 * kura_options' region and account; a stream ARN of another region or account names no
 * stream here (KURA_E_RESOURCE_NOT_FOUND, as a missing one). */

/* ListStreams' entry. Every pointer is owned. */
typedef struct kura_stream_summary {
    char *stream_arn;
    char *table_name;
    char *stream_label;
} kura_stream_summary;

/*
 * ListStreams: the streams of `table_name` (NULL: of every table), enabled or readable still,
 * ordered by ARN, after `exclusive_start_stream_arn` (NULL: from the first), at most `limit`
 * (1..100; 0 = 100). *last_evaluated_out: the last ARN returned when more remain (else NULL).
 * Free with kura_stream_summaries_free and kura_free. Errors: KURA_E_INVALID (limit, a bad
 * table name), KURA_E_RESOURCE_NOT_FOUND (no such table: "Requested resource not found:
 * Table: <name> not found").
 */
kura_status kura_list_streams(kura_db *db, const char *table_name,
                              const char *exclusive_start_stream_arn, uint32_t limit,
                              kura_stream_summary **streams_out, size_t *count_out,
                              char **last_evaluated_out);
void kura_stream_summaries_free(kura_stream_summary *s, size_t n);

typedef struct kura_shard_description {
    char *shard_id;                 /* "shardId-<20 digits>-<8 hex digits>" */
    char *parent_shard_id;          /* NULL: kura's shards have none */
    char *starting_sequence_number; /* the first record still kept */
    char *ending_sequence_number;   /* NULL while the shard is open */
} kura_shard_description;

typedef struct kura_stream_description {
    char *stream_arn;
    char *stream_label;
    const char *stream_status; /* static: "ENABLED" or "DISABLED" */
    kura_stream_view_type stream_view_type;
    double creation_request_date_time; /* seconds since the epoch */
    char *table_name;
    kura_key_schema_element *key_schema; /* the table's, HASH first */
    size_t key_schema_count;
    kura_shard_description *shards;
    size_t shards_count;
    char *last_evaluated_shard_id; /* more shards remain after this one; NULL if none */
} kura_stream_description;
void kura_stream_description_free(kura_stream_description *d);

/*
 * DescribeStream: the stream and its shards in order, after `exclusive_start_shard_id` (NULL:
 * from the first), at most `limit` (1..100; 0 = 100). Errors: KURA_E_RESOURCE_NOT_FOUND
 * ("Requested resource not found: Stream: <arn> not found"; also a stream older than the
 * retention, or of a deleted table), KURA_E_INVALID (limit, an ARN that is not a stream's).
 */
kura_status kura_describe_stream(kura_db *db, const char *stream_arn, uint32_t limit,
                                 const char *exclusive_start_shard_id,
                                 kura_stream_description *desc_out);

typedef enum kura_shard_iterator_type {
    KURA_ITER_TRIM_HORIZON = 1,     /* the oldest record kept */
    KURA_ITER_LATEST,               /* just after the newest: only later records */
    KURA_ITER_AT_SEQUENCE_NUMBER,   /* at `sequence_number` */
    KURA_ITER_AFTER_SEQUENCE_NUMBER /* just after it */
} kura_shard_iterator_type;

/*
 * GetShardIterator: an iterator (a malloc'ed string, free with kura_free) of the shard
 * `shard_id` of the stream, valid for kura_options.stream_iterator_ttl_ms. sequence_number is
 * needed by the AT_/AFTER_ types only. Errors: KURA_E_RESOURCE_NOT_FOUND (no such stream:
 * "Requested resource not found: Stream: <arn> not found"; "Shard does not exist"),
 * KURA_E_INVALID ("Invalid ShardIteratorType.", a missing or malformed sequence number:
 * "One or more parameter values were invalid: Invalid SequenceNumber"; a sequence number
 * past the shard's end), KURA_E_TRIMMED_DATA (a sequence number older than the oldest record
 * kept).
 */
kura_status kura_get_shard_iterator(kura_db *db, const char *stream_arn, const char *shard_id,
                                    kura_shard_iterator_type type, const char *sequence_number,
                                    char **iterator_out);

/* One stream record (GetRecords' Records entry). Images are maps (items) owned by the record,
 * NULL when the view type or the event has none. */
typedef struct kura_stream_record {
    char event_id[41];          /* unique within the stream */
    const char *event_name;     /* static: "INSERT", "MODIFY", "REMOVE" */
    double approximate_creation_date_time; /* seconds since the epoch, rounded down */
    kura_value *keys;           /* the item's key attributes */
    kura_value *new_image;
    kura_value *old_image;
    char sequence_number[26];   /* 25 digits, growing in the shard's order */
    uint64_t size_bytes;        /* DynamoDB's sizes of keys and the images carried */
    kura_stream_view_type stream_view_type;
    bool service;               /* made by Time to Live: userIdentity {"Type": "Service",
                                 * "PrincipalId": "dynamodb.amazonaws.com"} */
} kura_stream_record;

/*
 * GetRecords: up to `limit` records (1..1000; 0 = 1000) and at most about 1 MB of them from
 * the iterator on, and the iterator to go on with (*next_iterator_out, kura_free; NULL once a
 * closed shard is read to its end). An open shard with nothing new gives no records and an
 * iterator at the same place. Free the records with kura_stream_records_free. Errors:
 * KURA_E_INVALID ("Invalid ShardIterator", limit), KURA_E_EXPIRED_ITERATOR (older than
 * stream_iterator_ttl_ms), KURA_E_TRIMMED_DATA (its records are past the retention),
 * KURA_E_RESOURCE_NOT_FOUND (the stream is gone), storage errors (KURA_E_CORRUPTION names the
 * WAL file and offset).
 */
kura_status kura_get_records(kura_db *db, const char *shard_iterator, uint32_t limit,
                             kura_stream_record **records_out, size_t *count_out,
                             char **next_iterator_out);
void kura_stream_records_free(kura_stream_record *r, size_t n);

/* ---- Single-item operations --------------------------------------------------------------- */

/* The result of PutItem, UpdateItem and DeleteItem. kura_write_result_free() frees the
 * contents. On KURA_E_CONDITION_FAILED, `item` holds the current item when
 * return_values_on_condition_check_failure was ALL_OLD and an item exists (the one exception
 * to "outputs are written only on success").
 *
 * Item collections (tables with at least one local secondary index): with
 * return_item_collection_metrics SIZE, item_collection_metrics describes the collection of
 * the item's partition key value after the write (also for a delete, and for an UpdateItem
 * that changed nothing); on a table without an LSI it stays absent, as in DynamoDB. A write
 * that grows an item and would take its collection past kura_options.item_collection_limit_bytes
 * (10 GB by default) fails with KURA_E_COLLECTION_SIZE ("Collection size exceeded") and writes
 * nothing; deletes and writes that do not grow the item never fail so. A value of
 * return_item_collection_metrics other than NONE and SIZE is KURA_E_INVALID. */
typedef struct kura_write_result {
    kura_value *attributes; /* ReturnValues, or NULL */
    kura_value *item;       /* ReturnValuesOnConditionCheckFailure item, or NULL */
    kura_consumed_capacity consumed_capacity;
    kura_item_collection_metrics item_collection_metrics; /* ReturnItemCollectionMetrics */
} kura_write_result;
void kura_write_result_free(kura_write_result *r);

typedef struct kura_put_item_req {
    const char *table_name;
    const kura_value *item; /* M */
    const char *condition_expression; /* NULL: none */
    kura_expression_attributes expr;
    kura_return_values return_values; /* NONE or ALL_OLD */
    kura_return_values return_values_on_condition_check_failure; /* NONE or ALL_OLD */
    kura_return_capacity return_consumed_capacity;
    kura_return_metrics return_item_collection_metrics; /* NONE or SIZE */
} kura_put_item_req;
kura_status kura_put_item(kura_db *db, const kura_put_item_req *req, kura_write_result *res_out);

typedef struct kura_update_item_req {
    const char *table_name;
    const kura_value *key; /* M with exactly the key attributes */
    const char *update_expression; /* NULL: none (the item is created with its key only) */
    const char *condition_expression;
    kura_expression_attributes expr;
    kura_return_values return_values;
    kura_return_values return_values_on_condition_check_failure;
    kura_return_capacity return_consumed_capacity;
    kura_return_metrics return_item_collection_metrics; /* NONE or SIZE */
} kura_update_item_req;
kura_status kura_update_item(kura_db *db, const kura_update_item_req *req,
                             kura_write_result *res_out);

typedef struct kura_delete_item_req {
    const char *table_name;
    const kura_value *key;
    const char *condition_expression;
    kura_expression_attributes expr;
    kura_return_values return_values; /* NONE or ALL_OLD */
    kura_return_values return_values_on_condition_check_failure;
    kura_return_capacity return_consumed_capacity;
    kura_return_metrics return_item_collection_metrics; /* NONE or SIZE */
} kura_delete_item_req;
kura_status kura_delete_item(kura_db *db, const kura_delete_item_req *req,
                             kura_write_result *res_out);

typedef struct kura_get_item_req {
    const char *table_name;
    const kura_value *key;
    bool consistent_read;
    const char *projection_expression; /* NULL: all attributes */
    kura_expression_attributes expr;    /* names only (values are a ValidationException) */
    kura_return_capacity return_consumed_capacity;
} kura_get_item_req;

typedef struct kura_get_item_res {
    kura_value *item; /* NULL if there is no such item */
    kura_consumed_capacity consumed_capacity;
} kura_get_item_res;
kura_status kura_get_item(kura_db *db, const kura_get_item_req *req, kura_get_item_res *res_out);
void kura_get_item_res_free(kura_get_item_res *r);

/* ---- Query and Scan ----------------------------------------------------------------------- */

typedef struct kura_query_req {
    const char *table_name;
    const char *index_name; /* NULL: the table */
    const char *key_condition_expression;
    const char *filter_expression;
    const char *projection_expression;
    kura_expression_attributes expr;
    kura_select select;
    uint32_t limit;             /* 0: none (1 MB pages) */
    bool scan_index_backward;   /* ScanIndexForward = false */
    const kura_value *exclusive_start_key; /* NULL: from the start */
    bool consistent_read;
    kura_return_capacity return_consumed_capacity;
} kura_query_req;

typedef struct kura_scan_req {
    const char *table_name;
    const char *index_name;
    const char *filter_expression;
    const char *projection_expression;
    kura_expression_attributes expr;
    kura_select select;
    uint32_t limit;
    const kura_value *exclusive_start_key;
    bool consistent_read;
    bool has_segment; /* parallel scan: Segment / TotalSegments given */
    uint32_t segment, total_segments;
    kura_return_capacity return_consumed_capacity;
} kura_scan_req;

/* A page of Query or Scan results; kura_page_free() frees the contents. */
typedef struct kura_page {
    kura_value *items; /* L of M; NULL with Select COUNT */
    uint64_t count;    /* items returned (after the filter) */
    uint64_t scanned_count; /* items read (before the filter) */
    kura_value *last_evaluated_key; /* NULL when the range is exhausted */
    kura_consumed_capacity consumed_capacity;
} kura_page;
kura_status kura_query(kura_db *db, const kura_query_req *req, kura_page *page_out);
kura_status kura_scan(kura_db *db, const kura_scan_req *req, kura_page *page_out);
void kura_page_free(kura_page *p);

/* ---- Batches ------------------------------------------------------------------------------ */

typedef struct kura_batch_get_table {
    const char *table_name;
    const kura_value *keys; /* L of key maps, 1..100 keys in the whole request */
    bool consistent_read;
    const char *projection_expression;
    const kura_value *expression_attribute_names;
} kura_batch_get_table;

typedef struct kura_batch_get_req {
    const kura_batch_get_table *tables;
    size_t table_count;
    kura_return_capacity return_consumed_capacity;
} kura_batch_get_req;

/* Per request table, in request order. `items` holds the items found (L of M, order
 * unspecified); `unprocessed_keys` the keys not read because the response reached 16 MB
 * (L of M, or NULL). kura_batch_get_res_free() frees the contents. */
typedef struct kura_batch_get_table_res {
    kura_value *items;
    kura_value *unprocessed_keys;
    kura_consumed_capacity consumed_capacity;
} kura_batch_get_table_res;

typedef struct kura_batch_get_res {
    kura_batch_get_table_res *tables; /* table_count entries */
    size_t table_count;
} kura_batch_get_res;
kura_status kura_batch_get_item(kura_db *db, const kura_batch_get_req *req,
                                kura_batch_get_res *res_out);
void kura_batch_get_res_free(kura_batch_get_res *r);

typedef struct kura_write_request {
    const char *table_name;
    bool is_delete;          /* DeleteRequest (key) or PutRequest (item) */
    const kura_value *item;  /* PutRequest: the item; DeleteRequest: the key */
} kura_write_request;

typedef struct kura_batch_write_req {
    const kura_write_request *requests; /* 1..25 */
    size_t request_count;
    kura_return_capacity return_consumed_capacity;
    kura_return_metrics return_item_collection_metrics; /* NONE or SIZE */
} kura_batch_write_req;

/* Every request is applied (kura does not throttle, so UnprocessedItems is always empty);
 * each put or delete is atomic on its own, the batch as a whole is not: a request that fails
 * (KURA_E_COLLECTION_SIZE, as kura_write_result describes, or a storage error) ends the
 * batch with that error, the requests before it applied. Capacity per table, in order of
 * first appearance. With return_item_collection_metrics SIZE, item_collection_metrics has
 * one entry per request on a table with a local secondary index, in request order, each
 * naming its table (none for requests on tables without an LSI). */
typedef struct kura_batch_write_res {
    kura_consumed_capacity *consumed_capacity;
    size_t consumed_capacity_count;
    kura_item_collection_metrics *item_collection_metrics; /* owned; NULL when none */
    size_t item_collection_metrics_count;
    /* With kura_options.throttle: the requests a throttle refused (UnprocessedItems), as
     * indexes into the request's `requests`, ascending; owned; NULL when none. When every
     * request was refused the call fails with the throttle's error instead. */
    size_t *unprocessed;
    size_t unprocessed_count;
} kura_batch_write_res;
kura_status kura_batch_write_item(kura_db *db, const kura_batch_write_req *req,
                                  kura_batch_write_res *res_out);
void kura_batch_write_res_free(kura_batch_write_res *r);

/* ---- Transactions ------------------------------------------------------------------------- */

/* One action of TransactWriteItems: exactly DynamoDB's Put, Update, Delete, ConditionCheck. */
typedef enum kura_transact_op {
    KURA_TXN_CONDITION_CHECK = 0,
    KURA_TXN_PUT,
    KURA_TXN_UPDATE,
    KURA_TXN_DELETE,
} kura_transact_op;

typedef struct kura_transact_write_item {
    kura_transact_op op;
    const char *table_name;
    const kura_value *item;           /* PUT: the item (M) */
    const kura_value *key;            /* UPDATE, DELETE, CONDITION_CHECK: the key (M) */
    const char *update_expression;    /* UPDATE (required) */
    const char *condition_expression; /* NULL: none; required for CONDITION_CHECK */
    kura_expression_attributes expr;
    kura_return_values return_values_on_condition_check_failure; /* NONE or ALL_OLD */
} kura_transact_write_item;

typedef struct kura_transact_write_req {
    const kura_transact_write_item *items; /* 1..100 actions, at most one per item */
    size_t item_count;
    const char *client_request_token;      /* NULL: none; 1..36 characters */
    kura_return_capacity return_consumed_capacity;
    kura_return_metrics return_item_collection_metrics;
} kura_transact_write_req;

/* Why a transaction was cancelled, one per action in request order. `code` is a static
 * string: "None", "ConditionalCheckFailed", "TransactionConflict", "ValidationError",
 * "ItemCollectionSizeLimitExceeded". `message` (owned, NULL for None) as DynamoDB words it;
 * `item` (owned) the current item for ConditionalCheckFailed when the action asked for
 * ALL_OLD and the item exists. */
typedef struct kura_cancellation_reason {
    const char *code;
    char *message;
    kura_value *item;
} kura_cancellation_reason;

/* kura_transact_write_res_free() frees the contents. On success: capacity per table (in order
 * of first appearance; transactional writes cost twice a write's units, as DynamoDB bills
 * them) and, with return_item_collection_metrics SIZE, one entry per written item of a table
 * with a local secondary index. On KURA_E_TXN_CANCELED ("Transaction cancelled, please refer
 * cancellation reasons for specific reasons [ConditionalCheckFailed, None]"):
 * cancellation_reasons, one per action; nothing was written. */
typedef struct kura_transact_write_res {
    kura_consumed_capacity *consumed_capacity;
    size_t consumed_capacity_count;
    kura_item_collection_metrics *item_collection_metrics;
    size_t item_collection_metrics_count;
    kura_cancellation_reason *cancellation_reasons;
    size_t cancellation_reason_count;
} kura_transact_write_res;

/*
 * TransactWriteItems: every condition is checked and every write made as one atomic step
 * across items, partitions and tables, also across a crash (docs/architecture.md,
 * "Transactions"). The items are locked in one global order for the step, so concurrent
 * transactions and single-item writes are serialized and never deadlock. Errors:
 * KURA_E_INVALID (the request), KURA_E_RESOURCE_NOT_FOUND, KURA_E_TXN_CANCELED (reasons in
 * res_out), KURA_E_IDEMPOTENT_MISMATCH (a token reused with another request within
 * kura_options.idempotency_window_ms), KURA_E_TXN_IN_PROGRESS (a transaction with the same
 * token is running), storage errors. A request whose token committed within the window is
 * answered with success and nothing written (no capacity, no metrics: nothing was consumed).
 */
kura_status kura_transact_write_items(kura_db *db, const kura_transact_write_req *req,
                                      kura_transact_write_res *res_out);
void kura_transact_write_res_free(kura_transact_write_res *r);

typedef struct kura_transact_get_item {
    const char *table_name;
    const kura_value *key;
    const char *projection_expression; /* NULL: all attributes */
    kura_expression_attributes expr;   /* names only */
} kura_transact_get_item;

typedef struct kura_transact_get_req {
    const kura_transact_get_item *items; /* 1..100 */
    size_t item_count;
    kura_return_capacity return_consumed_capacity;
} kura_transact_get_req;

/* items[i] is the item of request i (projected), NULL if there is none. Transactional reads
 * cost twice a strongly consistent read's units. On KURA_E_TXN_CANCELED: only
 * cancellation_reasons, one per Get ("None", or "ValidationError" with its message). */
typedef struct kura_transact_get_res {
    kura_value **items;
    size_t item_count;
    kura_consumed_capacity *consumed_capacity;
    size_t consumed_capacity_count;
    kura_cancellation_reason *cancellation_reasons;
    size_t cancellation_reason_count;
} kura_transact_get_res;

/* TransactGetItems: every item read at one snapshot. Errors: KURA_E_INVALID,
 * KURA_E_RESOURCE_NOT_FOUND, storage errors, and KURA_E_TXN_CANCELED ("Transaction cancelled,
 * please refer cancellation reasons for specific reasons [None, ValidationError]") when a
 * Key does not match its table's key schema (wrong or missing attributes, wrong types), as
 * DynamoDB cancels such a transaction; the other errors of a Get (its key's values, its
 * projection) fail the request, unless a mismatch before it in the list cancelled already. */
kura_status kura_transact_get_items(kura_db *db, const kura_transact_get_req *req,
                                    kura_transact_get_res *res_out);
void kura_transact_get_res_free(kura_transact_get_res *r);

/* ---- PartiQL ------------------------------------------------------------------------------ */

/*
 * ExecuteStatement: one statement of DynamoDB's PartiQL dialect (docs/partiql.md), translated
 * into GetItem, Query, Scan, PutItem, UpdateItem or DeleteItem and run as those run.
 * `parameters` (L, or NULL) are the values of the statement's '?' in order; everything in the
 * request is borrowed for the call. `limit` (0: none) and `next_token` (NULL: from the start;
 * a token a previous result returned) page a SELECT that becomes a Query or a Scan.
 * Each thread keeps the plans of the last statements it ran by their text, so the same
 * statement with other parameters is neither parsed nor translated again (memory freed when
 * the thread exits; docs/partiql.md, "Cost").
 */
typedef struct kura_execute_statement_req {
    const char *statement;
    const kura_value *parameters;
    bool consistent_read;
    uint32_t limit;
    const char *next_token;
    kura_return_capacity return_consumed_capacity;
    kura_return_values return_values_on_condition_check_failure; /* NONE or ALL_OLD */
} kura_execute_statement_req;

/* kura_execute_statement_res_free() frees the contents. `items`: L of M, the items a SELECT
 * read, or the item RETURNING asked for (empty for other writes). `next_token` (malloc'ed,
 * NULL when the read is complete) continues a paged SELECT; last_evaluated_key is the key it
 * encodes. On KURA_E_CONDITION_FAILED, `item` holds the current item when
 * return_values_on_condition_check_failure was ALL_OLD and the item exists. */
typedef struct kura_execute_statement_res {
    kura_value *items;
    char *next_token;
    kura_value *last_evaluated_key;
    kura_consumed_capacity consumed_capacity;
    kura_value *item;
} kura_execute_statement_res;

/* Errors: KURA_E_INVALID ("Statement wasn't well formed, can't be processed: ...", "Where
 * clause does not contain a mandatory equality on all key attributes", and every message of
 * the operation the statement becomes), KURA_E_RESOURCE_NOT_FOUND ("Requested resource not
 * found"), KURA_E_DUPLICATE_ITEM (INSERT of an existing key: "Duplicate primary key exists in
 * table"), KURA_E_CONDITION_FAILED (UPDATE or DELETE of a missing item, or its WHERE false),
 * storage errors. */
kura_status kura_execute_statement(kura_db *db, const kura_execute_statement_req *req,
                                   kura_execute_statement_res *res_out);
void kura_execute_statement_res_free(kura_execute_statement_res *r);

/* ---- The DynamoDB JSON API --------------------------------------------------------------- */

/*
 * Runs one DynamoDB_20120810 operation ("PutItem", "Query", ...) on the request body `json`
 * (exactly what an AWS SDK sends) and returns the response body DynamoDB would send in
 * *out (malloc'ed, NUL-terminated, free with kura_free) of *out_len bytes. Returns KURA_OK
 * when the response is a success, otherwise the status of the error, with *out holding
 * DynamoDB's error body {"__type":"com.amazonaws.dynamodb.v20120810#<Type>","message":...}
 * ("Message" for TransactionCanceledException, IdempotentParameterMismatchException and
 * TransactionInProgressException, as DynamoDB's model spells it; a cancellation also carries
 * "CancellationReasons", one per action).
 * *out is always set unless KURA_E_NOMEM. The error type of the body is also available as a
 * static string from kura_execute_error_type() ("ValidationException", ...; NULL on
 * success); an InternalServerError body means an engine failure (HTTP 500).
 */
kura_status kura_execute(kura_db *db, const char *operation, const char *json, size_t len,
                         char **out, size_t *out_len);
const char *kura_execute_error_type(void);

/* The default of kura_request_context.endpoint: DynamoDB Local's and kura-server's default
 * address, what DescribeEndpoints answers when the caller names none. */
#define KURA_DEFAULT_ENDPOINT "localhost:8000"

/*
 * What kura_execute_ctx() knows of where a request came from, beyond its body. Every member
 * may be NULL (its default); the strings are borrowed for the call.
 */
typedef struct kura_request_context {
    /* The address the request was sent to, "host[:port]" (kura-server passes the request's
     * Host header, else its listening address): DescribeEndpoints' "Address". NULL or "":
     * KURA_DEFAULT_ENDPOINT. */
    const char *endpoint;
    /* The region of the request's SigV4 credential scope ("eu-west-1"; kura-server takes it
     * from the Authorization header or a presigned URL's X-Amz-Credential): every ARN and
     * awsRegion of the answer is in it, and an ARN the request names must be in it. NULL, ""
     * or not a region name (1..32 of [a-z0-9-]): kura_options.region. */
    const char *region;
    /* The account of those ARNs (12 digits). kura cannot derive an account from an access
     * key (DynamoDB asks IAM), so kura-server passes NULL: kura_options.account_id. */
    const char *account;
} kura_request_context;

/* kura_execute() with a context (NULL: every default); kura_execute() is this with NULL. */
kura_status kura_execute_ctx(kura_db *db, const kura_request_context *ctx, const char *operation,
                             const char *json, size_t len, char **out, size_t *out_len);

#ifdef __cplusplus
}
#endif

/* ---- Capacity accounting (docs/server.md, "GET /kura/heat") ------------------------------ */

/* The heat report as JSON in *json_out (free()): per table and index, the units per second
 * read and written over the last `window_s` seconds (0: 60; at most 60), a per-second
 * timeline, the hottest partition keys and items against DynamoDB's per-key limits (3,000
 * RCU / 1,000 WCU a second) and the provisioned throughput, the throttled requests and keys,
 * and verdicts in words. `table` NULL: every table; else that one (KURA_E_RESOURCE_NOT_FOUND
 * if it does not exist). The accounting is in memory: a reopened database starts empty. */
kura_status kura_heat_report(kura_db *db, const char *table, uint32_t window_s, char **json_out);

#endif /* KURA_H */

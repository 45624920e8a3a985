/*
 * engine.h - the small vtable every storage engine adapter of kura-bench implements.
 *
 * One file per engine (engine_kura.c, engine_rocksdb.c, engine_leveldb.c, engine_lmdb.c,
 * engine_sqlite.c) defines a `const bench_engine bench_engine_NAME`, compiled in only when
 * CMake found the engine (KURA_BENCH_HAVE_NAME). The workloads see engines only through this
 * table, so every engine runs exactly the same loops.
 *
 * Model: a bench_db is an open database directory. A bench_sess is one thread's handle to
 * it (SQLite: a connection; LMDB: a reusable read transaction; the others: the database
 * itself). A bench_it is an iterator opened from a session. A session and its iterators are
 * used by one thread at a time; different sessions may be used concurrently.
 *
 * Durability is a property of the open database, chosen by bench_engine_opts.sync_writes:
 * false = the engine's WAL is on but writes are not synced one by one (fill workloads);
 * true = every put is durable before it returns (fillsync). The settings string says what
 * each engine does in each mode.
 *
 * Errors: every fallible function returns a kura_status and records a message with
 * kura_err() (util/status.h); out-parameters are set only on success.
 */
#ifndef KURA_BENCH_ENGINE_H
#define KURA_BENCH_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"

typedef struct bench_db bench_db;
typedef struct bench_sess bench_sess;
struct bench_workload;
struct bench_config;
struct bench_run;
typedef struct bench_it bench_it;

/* The write-buffer budget of the `recover` workload's writer: it writes ~64 MiB of values
 * (BENCH_RECOVER_VALUE_BYTES), which must all still be in the WAL when it is killed. */
#define BENCH_RECOVER_MEMTABLE_BYTES (256ull << 20)
#define BENCH_RECOVER_VALUE_BYTES (64ull << 20)

typedef struct bench_engine_opts {
    uint64_t memtable_bytes; /* budget of all memtables / write buffers together */
    uint64_t cache_bytes;    /* block cache / page cache budget */
    uint32_t partitions;     /* kura: default_partitions; ignored by the peers */
    uint32_t threads;        /* sessions that will be used at the same time */
    bool sync_writes;        /* every put durable before it returns */
    /* recover: everything written must stay in the WAL rather than being folded into the
     * main files (SQLite: no WAL auto-checkpoint below memtable_bytes). */
    bool hold_writes_in_wal;
} bench_engine_opts;

typedef struct bench_engine {
    const char *name;
    bool has_wal; /* takes part in the `recover` workload */

    /* Describes, in one line, the settings open() uses for `o` (and for fillsync/recover),
     * into buf (always NUL-terminated). */
    void (*settings)(const bench_engine_opts *o, char *buf, size_t cap);

    /* Opens (creating if needed) the database in the existing directory `dir`. */
    kura_status (*open)(const char *dir, const bench_engine_opts *o, bench_db **db_out);
    /* Closes and frees db; every session must be closed before. db is gone even on error. */
    kura_status (*close)(bench_db *db);

    kura_status (*sess_open)(bench_db *db, bench_sess **sess_out);
    void (*sess_close)(bench_sess *s); /* NULL is a no-op; iterators must be closed before */

    kura_status (*put)(bench_sess *s, const void *key, size_t klen, const void *val,
                       size_t vlen);
    /* Copies the value into `val` (val->len = its length) and sets *found_out. A missing key
     * is KURA_OK with *found_out = false. */
    kura_status (*get)(bench_sess *s, const void *key, size_t klen, kbuf *val,
                       bool *found_out);

    /* Iterators read a consistent view in memcmp key order. key/value pointers stay valid
     * until the next seek/next or iter_close. A failing seek/next returns the error. */
    kura_status (*iter_open)(bench_sess *s, bench_it **it_out);
    void (*iter_close)(bench_it *it); /* NULL is a no-op */
    /* Positions at the first key >= key; key == NULL: at the first key. */
    kura_status (*iter_seek)(bench_it *it, const void *key, size_t klen);
    kura_status (*iter_next)(bench_it *it);
    bool (*iter_valid)(const bench_it *it);
    const void *(*iter_key)(const bench_it *it, size_t *klen_out);
    const void *(*iter_value)(const bench_it *it, size_t *vlen_out);

    /* Compacts the whole database and waits; NULL if the engine has no such operation. */
    kura_status (*compact)(bench_db *db);

    /* Item-level pseudo-engines (bench/items.h) have only this, and run only the item
     * workloads; NULL for the key/value engines. */
    const struct bench_item_api *items;
    /* kura-capi only: runs a secondary-index workload (bench/index/index.h) with the contract
     * of bench_workload_run; NULL for every other engine. */
    kura_status (*index_run)(const struct bench_workload *wl, const struct bench_config *cfg,
                             uint32_t repeat, const char *dir, struct bench_run *run_out);
    /* kura-capi only: runs a transaction workload (bench/txn/txn.h), likewise. */
    kura_status (*txn_run)(const struct bench_workload *wl, const struct bench_config *cfg,
                           uint32_t repeat, const char *dir, struct bench_run *run_out);
} bench_engine;

/* Every engine name kura-bench knows, compiled in or not, in report order. */
extern const char *const bench_engine_names[];
extern const size_t bench_engine_nnames;

/* The engine called `name` if it is compiled into this binary, else NULL. */
const bench_engine *bench_engine_find(const char *name);

#endif

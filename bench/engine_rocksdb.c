/*
 * engine_rocksdb.c - the RocksDB adapter of kura-bench, over RocksDB's C API (rocksdb/c.h).
 *
 * Settings, chosen to match kura's (see rocks_settings): LZ4 on every level, a full-key
 * bloom filter of 10 bits per key, an LRU block cache of --cache-mb, and the --memtable-mb
 * budget split into two write buffers (write_buffer_size = budget / 2,
 * max_write_buffer_number = 2: one active, one being flushed), so memtables never hold more
 * than the budget, as kura's database-wide memtable budget. Two background jobs, for the
 * machine's two cores. Everything else is RocksDB's default (block size 4 KiB, leveled
 * compaction). Writes go to the WAL without a sync (WriteOptions.sync = false), or with one
 * per write for fillsync.
 *
 * Handles: a rocks_db is the bench_db; sessions and iterators are thin wrappers, since a
 * rocksdb_t may be used from any number of threads.
 */
#include "bench/engine.h"

#include <stdio.h>
#include <stdlib.h>

#include <rocksdb/c.h>

#include "util/status.h"

#ifndef KURA_BENCH_ROCKSDB_VERSION /* set by CMake from pkg-config */
#define KURA_BENCH_ROCKSDB_VERSION "(version unknown)"
#endif

typedef struct rocks_db {
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_cache_t *cache;
    rocksdb_writeoptions_t *wopts;
    rocksdb_readoptions_t *ropts;
} rocks_db;

typedef struct rocks_it {
    rocksdb_iterator_t *it;
} rocks_it;

/* Turns a RocksDB error string into a status with a message, and frees it. */
static kura_status rocks_error(const char *what, char *err)
{
    kura_status s = kura_err(KURA_E_IO, "rocksdb %s: %s", what, err);
    rocksdb_free(err);
    return s;
}

static void rocks_settings(const bench_engine_opts *o, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "RocksDB %s C API; compression LZ4; full bloom filter 10 bits/key; LRU block "
             "cache %llu MiB; write_buffer_size %llu MiB x max_write_buffer_number 2 (the "
             "--memtable-mb budget split in two); max_background_jobs 2; fills: WAL on, "
             "WriteOptions.sync=false; fillsync: sync=true; recover: the writer uses "
             "write_buffer_size %llu MiB",
             KURA_BENCH_ROCKSDB_VERSION, (unsigned long long)(o->cache_bytes >> 20),
             (unsigned long long)(o->memtable_bytes / 2 >> 20),
             (unsigned long long)(BENCH_RECOVER_MEMTABLE_BYTES / 2 >> 20));
}

static rocksdb_options_t *rocks_options(const bench_engine_opts *o, rocksdb_cache_t *cache)
{
    rocksdb_options_t *opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(opts, 1);
    rocksdb_options_set_compression(opts, rocksdb_lz4_compression);
    rocksdb_options_set_write_buffer_size(opts, (size_t)(o->memtable_bytes / 2));
    rocksdb_options_set_max_write_buffer_number(opts, 2);
    rocksdb_options_set_max_background_jobs(opts, 2);

    rocksdb_block_based_table_options_t *bbto = rocksdb_block_based_options_create();
    /* set_filter_policy takes ownership of the policy; the cache is shared, not taken. */
    rocksdb_block_based_options_set_filter_policy(bbto,
                                                  rocksdb_filterpolicy_create_bloom_full(10));
    rocksdb_block_based_options_set_block_cache(bbto, cache);
    rocksdb_options_set_block_based_table_factory(opts, bbto); /* copies bbto */
    rocksdb_block_based_options_destroy(bbto);
    return opts;
}

static kura_status rocks_open(const char *dir, const bench_engine_opts *o, bench_db **db_out)
{
    rocks_db *d = calloc(1, sizeof *d);
    if (d == NULL)
        return kura_err(KURA_E_NOMEM, "rocksdb adapter");
    d->cache = rocksdb_cache_create_lru((size_t)o->cache_bytes);
    d->opts = rocks_options(o, d->cache);
    char *err = NULL;
    d->db = rocksdb_open(d->opts, dir, &err);
    if (err != NULL) {
        kura_status s = rocks_error("open", err);
        rocksdb_options_destroy(d->opts);
        rocksdb_cache_destroy(d->cache);
        free(d);
        return s;
    }
    d->wopts = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(d->wopts, o->sync_writes);
    d->ropts = rocksdb_readoptions_create();
    *db_out = (bench_db *)d;
    return KURA_OK;
}

static kura_status rocks_close(bench_db *db)
{
    rocks_db *d = (rocks_db *)db;
    rocksdb_close(d->db);
    rocksdb_writeoptions_destroy(d->wopts);
    rocksdb_readoptions_destroy(d->ropts);
    rocksdb_options_destroy(d->opts);
    rocksdb_cache_destroy(d->cache);
    free(d);
    return KURA_OK;
}

/* A rocksdb_t is thread-safe: a session is the database itself. */
static kura_status rocks_sess_open(bench_db *db, bench_sess **sess_out)
{
    *sess_out = (bench_sess *)db;
    return KURA_OK;
}

static void rocks_sess_close(bench_sess *s)
{
    (void)s;
}

static kura_status rocks_put(bench_sess *s, const void *key, size_t klen, const void *val,
                             size_t vlen)
{
    rocks_db *d = (rocks_db *)s;
    char *err = NULL;
    rocksdb_put(d->db, d->wopts, key, klen, val, vlen, &err);
    return err != NULL ? rocks_error("put", err) : KURA_OK;
}

static kura_status rocks_get(bench_sess *s, const void *key, size_t klen, kbuf *val,
                             bool *found_out)
{
    rocks_db *d = (rocks_db *)s;
    char *err = NULL;
    rocksdb_pinnableslice_t *p = rocksdb_get_pinned(d->db, d->ropts, key, klen, &err);
    if (err != NULL)
        return rocks_error("get", err);
    if (p == NULL) {
        *found_out = false;
        return KURA_OK;
    }
    size_t vlen;
    const char *v = rocksdb_pinnableslice_value(p, &vlen);
    val->len = 0;
    bool ok = kbuf_append(val, v, vlen);
    rocksdb_pinnableslice_destroy(p);
    if (!ok)
        return kura_err(KURA_E_NOMEM, "rocksdb get: value of %zu bytes", vlen);
    *found_out = true;
    return KURA_OK;
}

static kura_status rocks_iter_open(bench_sess *s, bench_it **it_out)
{
    rocks_db *d = (rocks_db *)s;
    rocks_it *it = malloc(sizeof *it);
    if (it == NULL)
        return kura_err(KURA_E_NOMEM, "rocksdb iterator");
    it->it = rocksdb_create_iterator(d->db, d->ropts);
    *it_out = (bench_it *)it;
    return KURA_OK;
}

static void rocks_iter_close(bench_it *bit)
{
    rocks_it *it = (rocks_it *)bit;
    if (it == NULL)
        return;
    rocksdb_iter_destroy(it->it);
    free(it);
}

/* An invalid iterator is either at the end or failed: tell which. */
static kura_status rocks_iter_check(rocks_it *it, const char *what)
{
    if (rocksdb_iter_valid(it->it))
        return KURA_OK;
    char *err = NULL;
    rocksdb_iter_get_error(it->it, &err);
    return err != NULL ? rocks_error(what, err) : KURA_OK;
}

static kura_status rocks_iter_seek(bench_it *bit, const void *key, size_t klen)
{
    rocks_it *it = (rocks_it *)bit;
    if (key == NULL)
        rocksdb_iter_seek_to_first(it->it);
    else
        rocksdb_iter_seek(it->it, key, klen);
    return rocks_iter_check(it, "iterator seek");
}

static kura_status rocks_iter_next(bench_it *bit)
{
    rocks_it *it = (rocks_it *)bit;
    rocksdb_iter_next(it->it);
    return rocks_iter_check(it, "iterator next");
}

static bool rocks_iter_valid(const bench_it *bit)
{
    return rocksdb_iter_valid(((const rocks_it *)bit)->it) != 0;
}

static const void *rocks_iter_key(const bench_it *bit, size_t *klen_out)
{
    return rocksdb_iter_key(((const rocks_it *)bit)->it, klen_out);
}

static const void *rocks_iter_value(const bench_it *bit, size_t *vlen_out)
{
    return rocksdb_iter_value(((const rocks_it *)bit)->it, vlen_out);
}

static kura_status rocks_compact(bench_db *db)
{
    /* The C API's CompactRange uses default options: every level down to the last. */
    rocksdb_compact_range(((rocks_db *)db)->db, NULL, 0, NULL, 0);
    return KURA_OK;
}

const bench_engine bench_engine_rocksdb = {
    .name = "rocksdb",
    .has_wal = true,
    .settings = rocks_settings,
    .open = rocks_open,
    .close = rocks_close,
    .sess_open = rocks_sess_open,
    .sess_close = rocks_sess_close,
    .put = rocks_put,
    .get = rocks_get,
    .iter_open = rocks_iter_open,
    .iter_close = rocks_iter_close,
    .iter_seek = rocks_iter_seek,
    .iter_next = rocks_iter_next,
    .iter_valid = rocks_iter_valid,
    .iter_key = rocks_iter_key,
    .iter_value = rocks_iter_value,
    .compact = rocks_compact,
};

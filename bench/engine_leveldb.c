/*
 * engine_leveldb.c - the LevelDB adapter of kura-bench, over LevelDB's C API (leveldb/c.h).
 *
 * Settings, chosen to match kura's: a bloom filter of 10 bits per key, an LRU block cache
 * of --cache-mb, write_buffer_size = --memtable-mb / 2 (LevelDB keeps one active and at most
 * one immutable memtable, so together they stay within the budget), and the default
 * compression (Snappy in Debian's build). Writes go to the log without a sync, or with one
 * per write for fillsync.
 *
 * Handles: an ldb_db is the bench_db; a leveldb_t may be used from any number of threads,
 * so a session is the database itself.
 */
#include "bench/engine.h"

#include <stdio.h>
#include <stdlib.h>

#include <leveldb/c.h>

#include "util/status.h"

typedef struct ldb_db {
    leveldb_t *db;
    leveldb_options_t *opts;
    leveldb_cache_t *cache;
    leveldb_filterpolicy_t *filter;
    leveldb_writeoptions_t *wopts;
    leveldb_readoptions_t *ropts;
} ldb_db;

typedef struct ldb_it {
    leveldb_iterator_t *it;
} ldb_it;

static kura_status ldb_error(const char *what, char *err)
{
    kura_status s = kura_err(KURA_E_IO, "leveldb %s: %s", what, err);
    leveldb_free(err);
    return s;
}

static void ldb_settings(const bench_engine_opts *o, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "LevelDB %d.%d C API; default compression (Snappy); bloom filter 10 bits/key; "
             "LRU block cache %llu MiB; write_buffer_size %llu MiB (the --memtable-mb budget "
             "over one active and one immutable memtable); fills: log on, "
             "WriteOptions.sync=false; fillsync: sync=true; recover: the writer uses "
             "write_buffer_size %llu MiB",
             leveldb_major_version(), leveldb_minor_version(),
             (unsigned long long)(o->cache_bytes >> 20),
             (unsigned long long)(o->memtable_bytes / 2 >> 20),
             (unsigned long long)(BENCH_RECOVER_MEMTABLE_BYTES / 2 >> 20));
}

static void ldb_free_parts(ldb_db *d)
{
    leveldb_options_destroy(d->opts);
    leveldb_cache_destroy(d->cache);
    leveldb_filterpolicy_destroy(d->filter);
    free(d);
}

static kura_status ldb_open(const char *dir, const bench_engine_opts *o, bench_db **db_out)
{
    ldb_db *d = calloc(1, sizeof *d);
    if (d == NULL)
        return kura_err(KURA_E_NOMEM, "leveldb adapter");
    d->opts = leveldb_options_create();
    d->cache = leveldb_cache_create_lru((size_t)o->cache_bytes);
    d->filter = leveldb_filterpolicy_create_bloom(10);
    leveldb_options_set_create_if_missing(d->opts, 1);
    leveldb_options_set_cache(d->opts, d->cache);
    leveldb_options_set_filter_policy(d->opts, d->filter);
    leveldb_options_set_write_buffer_size(d->opts, (size_t)(o->memtable_bytes / 2));
    char *err = NULL;
    d->db = leveldb_open(d->opts, dir, &err);
    if (err != NULL) {
        kura_status s = ldb_error("open", err);
        ldb_free_parts(d);
        return s;
    }
    d->wopts = leveldb_writeoptions_create();
    leveldb_writeoptions_set_sync(d->wopts, o->sync_writes);
    d->ropts = leveldb_readoptions_create();
    *db_out = (bench_db *)d;
    return KURA_OK;
}

static kura_status ldb_close(bench_db *db)
{
    ldb_db *d = (ldb_db *)db;
    leveldb_close(d->db);
    leveldb_writeoptions_destroy(d->wopts);
    leveldb_readoptions_destroy(d->ropts);
    ldb_free_parts(d); /* the cache and filter must outlive the database */
    return KURA_OK;
}

static kura_status ldb_sess_open(bench_db *db, bench_sess **sess_out)
{
    *sess_out = (bench_sess *)db;
    return KURA_OK;
}

static void ldb_sess_close(bench_sess *s)
{
    (void)s;
}

static kura_status ldb_put(bench_sess *s, const void *key, size_t klen, const void *val,
                           size_t vlen)
{
    ldb_db *d = (ldb_db *)s;
    char *err = NULL;
    leveldb_put(d->db, d->wopts, key, klen, val, vlen, &err);
    return err != NULL ? ldb_error("put", err) : KURA_OK;
}

static kura_status ldb_get(bench_sess *s, const void *key, size_t klen, kbuf *val,
                           bool *found_out)
{
    ldb_db *d = (ldb_db *)s;
    char *err = NULL;
    size_t vlen = 0;
    char *v = leveldb_get(d->db, d->ropts, key, klen, &vlen, &err);
    if (err != NULL)
        return ldb_error("get", err);
    if (v == NULL) {
        *found_out = false;
        return KURA_OK;
    }
    val->len = 0;
    bool ok = kbuf_append(val, v, vlen);
    leveldb_free(v);
    if (!ok)
        return kura_err(KURA_E_NOMEM, "leveldb get: value of %zu bytes", vlen);
    *found_out = true;
    return KURA_OK;
}

static kura_status ldb_iter_open(bench_sess *s, bench_it **it_out)
{
    ldb_db *d = (ldb_db *)s;
    ldb_it *it = malloc(sizeof *it);
    if (it == NULL)
        return kura_err(KURA_E_NOMEM, "leveldb iterator");
    it->it = leveldb_create_iterator(d->db, d->ropts);
    *it_out = (bench_it *)it;
    return KURA_OK;
}

static void ldb_iter_close(bench_it *bit)
{
    ldb_it *it = (ldb_it *)bit;
    if (it == NULL)
        return;
    leveldb_iter_destroy(it->it);
    free(it);
}

static kura_status ldb_iter_check(ldb_it *it, const char *what)
{
    if (leveldb_iter_valid(it->it))
        return KURA_OK;
    char *err = NULL;
    leveldb_iter_get_error(it->it, &err);
    return err != NULL ? ldb_error(what, err) : KURA_OK;
}

static kura_status ldb_iter_seek(bench_it *bit, const void *key, size_t klen)
{
    ldb_it *it = (ldb_it *)bit;
    if (key == NULL)
        leveldb_iter_seek_to_first(it->it);
    else
        leveldb_iter_seek(it->it, key, klen);
    return ldb_iter_check(it, "iterator seek");
}

static kura_status ldb_iter_next(bench_it *bit)
{
    ldb_it *it = (ldb_it *)bit;
    leveldb_iter_next(it->it);
    return ldb_iter_check(it, "iterator next");
}

static bool ldb_iter_valid(const bench_it *bit)
{
    return leveldb_iter_valid(((const ldb_it *)bit)->it) != 0;
}

static const void *ldb_iter_key(const bench_it *bit, size_t *klen_out)
{
    return leveldb_iter_key(((const ldb_it *)bit)->it, klen_out);
}

static const void *ldb_iter_value(const bench_it *bit, size_t *vlen_out)
{
    return leveldb_iter_value(((const ldb_it *)bit)->it, vlen_out);
}

static kura_status ldb_compact(bench_db *db)
{
    leveldb_compact_range(((ldb_db *)db)->db, NULL, 0, NULL, 0);
    return KURA_OK;
}

const bench_engine bench_engine_leveldb = {
    .name = "leveldb",
    .has_wal = true,
    .settings = ldb_settings,
    .open = ldb_open,
    .close = ldb_close,
    .sess_open = ldb_sess_open,
    .sess_close = ldb_sess_close,
    .put = ldb_put,
    .get = ldb_get,
    .iter_open = ldb_iter_open,
    .iter_close = ldb_iter_close,
    .iter_seek = ldb_iter_seek,
    .iter_next = ldb_iter_next,
    .iter_valid = ldb_iter_valid,
    .iter_key = ldb_iter_key,
    .iter_value = ldb_iter_value,
    .compact = ldb_compact,
};

/*
 * engine_kura.c - the kura adapter of kura-bench, over the public API (include/kura.h).
 *
 * The database is the directory itself, with one tree named "bench" (kura hashes the whole
 * key to route it: hash_prefixed_keys = false). Settings: memtable_budget_bytes =
 * --memtable-mb, block_cache_bytes = --cache-mb, default_partitions = --partitions, and
 * kura's defaults for the rest (LZ4, bloom 10 bits/key, 4 KiB blocks). The fills use
 * durability KURA_RELAXED (every write group written to the WAL at once, synced
 * every relaxed_sync_ms), fillsync KURA_SYNC (acknowledged = fdatasync'ed, with group commit).
 *
 * Handles: a kura_db and its trees are thread-safe, so a session is the adapter's database.
 */
#include "bench/engine.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/status.h"

#define KURA_BENCH_TREE "bench"

typedef struct ku_db {
    kura_db *db;
    kura_tree *tree;
    kura_write_options wo;
    kura_read_options ro;
} ku_db;

/* kura already recorded the message of a failure; prefix what the adapter was doing. */
static kura_status ku_error(kura_status s, const char *what)
{
    char msg[512]; /* kura_last_error() is the buffer kura_err() writes: copy it first */
    snprintf(msg, sizeof msg, "%s", kura_last_error());
    return kura_err(s, "kura %s: %s: %s", what, kura_status_str(s), msg);
}

static void ku_options(const bench_engine_opts *o, kura_options *ko)
{
    kura_options_init(ko);
    ko->create_if_missing = true;
    ko->durability = o->sync_writes ? KURA_SYNC : KURA_RELAXED;
    ko->memtable_budget_bytes = (size_t)o->memtable_bytes;
    ko->block_cache_bytes = (size_t)o->cache_bytes;
    ko->default_partitions = o->partitions;
}

static void ku_settings(const bench_engine_opts *o, char *buf, size_t cap)
{
    kura_options ko;
    ku_options(o, &ko);
    snprintf(buf, cap,
             "kura; one tree, %u partitions; memtable_budget_bytes %llu MiB; "
             "block_cache_bytes %llu MiB; compression %s; bloom %u bits/key; block_size %zu; "
             "background_threads %u (0 = one per core); fills: KURA_RELAXED (WAL written "
             "at once, synced every %u ms); fillsync: KURA_SYNC (group commit, "
             "WAL preallocated in 1 MiB chunks); recover: "
             "the writer uses memtable_budget_bytes %llu MiB",
             ko.default_partitions, (unsigned long long)(ko.memtable_budget_bytes >> 20),
             (unsigned long long)(ko.block_cache_bytes >> 20),
             ko.compression == KURA_COMPRESS_LZ4    ? "LZ4"
             : ko.compression == KURA_COMPRESS_ZLIB ? "zlib"
                                                    : "none",
             ko.bloom_bits_per_key, ko.block_size, ko.background_threads, ko.relaxed_sync_ms,
             (unsigned long long)(BENCH_RECOVER_MEMTABLE_BYTES >> 20));
}

static kura_status ku_open(const char *dir, const bench_engine_opts *o, bench_db **db_out)
{
    ku_db *d = calloc(1, sizeof *d);
    if (d == NULL)
        return kura_err(KURA_E_NOMEM, "kura adapter");
    kura_options ko;
    ku_options(o, &ko);
    kura_status s = kura_open(dir, &ko, &d->db);
    if (s != KURA_OK) {
        free(d);
        return ku_error(s, "open");
    }
    if ((s = kura_tree_open(d->db, KURA_BENCH_TREE, NULL, &d->tree)) != KURA_OK) {
        s = ku_error(s, "tree_open");
        kura_close(d->db);
        free(d);
        return s;
    }
    kura_write_options_init(&d->wo);
    d->wo.durability = o->sync_writes ? KURA_SYNC : KURA_RELAXED;
    kura_read_options_init(&d->ro);
    *db_out = (bench_db *)d;
    return KURA_OK;
}

static kura_status ku_close(bench_db *db)
{
    ku_db *d = (ku_db *)db;
    kura_status s = kura_close(d->db);
    free(d);
    return s == KURA_OK ? KURA_OK : ku_error(s, "close");
}

static kura_status ku_sess_open(bench_db *db, bench_sess **sess_out)
{
    *sess_out = (bench_sess *)db;
    return KURA_OK;
}

static void ku_sess_close(bench_sess *s)
{
    (void)s;
}

static kura_status ku_put(bench_sess *s, const void *key, size_t klen, const void *val,
                          size_t vlen)
{
    ku_db *d = (ku_db *)s;
    kura_status st = kura_put(d->tree, &d->wo, key, klen, val, vlen);
    return st == KURA_OK ? KURA_OK : ku_error(st, "put");
}

static kura_status ku_get(bench_sess *s, const void *key, size_t klen, kbuf *val,
                          bool *found_out)
{
    ku_db *d = (ku_db *)s;
    void *v = NULL;
    size_t vlen = 0;
    kura_status st = kura_get(d->tree, &d->ro, key, klen, &v, &vlen);
    if (st == KURA_E_NOT_FOUND) {
        *found_out = false;
        return KURA_OK;
    }
    if (st != KURA_OK)
        return ku_error(st, "get");
    val->len = 0;
    bool ok = kbuf_append(val, v, vlen);
    kura_free(v);
    if (!ok)
        return kura_err(KURA_E_NOMEM, "kura get: value of %zu bytes", vlen);
    *found_out = true;
    return KURA_OK;
}

static kura_status ku_iter_open(bench_sess *s, bench_it **it_out)
{
    ku_db *d = (ku_db *)s;
    kura_iter *it = NULL;
    kura_status st = kura_iter_new(d->tree, &d->ro, &it);
    if (st != KURA_OK)
        return ku_error(st, "iter_new");
    *it_out = (bench_it *)it;
    return KURA_OK;
}

static void ku_iter_close(bench_it *it)
{
    kura_iter_free((kura_iter *)it); /* NULL is a no-op */
}

/* An invalid iterator is either at the end or failed: tell which. */
static kura_status ku_iter_check(const kura_iter *it, const char *what)
{
    if (kura_iter_valid(it))
        return KURA_OK;
    kura_status st = kura_iter_status(it);
    return st == KURA_OK ? KURA_OK : ku_error(st, what);
}

static kura_status ku_iter_seek(bench_it *bit, const void *key, size_t klen)
{
    kura_iter *it = (kura_iter *)bit;
    if (key == NULL)
        kura_iter_seek_first(it);
    else
        kura_iter_seek(it, key, klen);
    return ku_iter_check(it, "iter_seek");
}

static kura_status ku_iter_next(bench_it *bit)
{
    kura_iter *it = (kura_iter *)bit;
    kura_iter_next(it);
    return ku_iter_check(it, "iter_next");
}

static bool ku_iter_valid(const bench_it *it)
{
    return kura_iter_valid((const kura_iter *)it);
}

static const void *ku_iter_key(const bench_it *it, size_t *klen_out)
{
    return kura_iter_key((const kura_iter *)it, klen_out);
}

static const void *ku_iter_value(const bench_it *it, size_t *vlen_out)
{
    return kura_iter_value((const kura_iter *)it, vlen_out);
}

static kura_status ku_compact(bench_db *db)
{
    kura_status st = kura_tree_compact(((ku_db *)db)->tree);
    return st == KURA_OK ? KURA_OK : ku_error(st, "tree_compact");
}

const bench_engine bench_engine_kura = {
    .name = "kura",
    .has_wal = true,
    .settings = ku_settings,
    .open = ku_open,
    .close = ku_close,
    .sess_open = ku_sess_open,
    .sess_close = ku_sess_close,
    .put = ku_put,
    .get = ku_get,
    .iter_open = ku_iter_open,
    .iter_close = ku_iter_close,
    .iter_seek = ku_iter_seek,
    .iter_next = ku_iter_next,
    .iter_valid = ku_iter_valid,
    .iter_key = ku_iter_key,
    .iter_value = ku_iter_value,
    .compact = ku_compact,
};

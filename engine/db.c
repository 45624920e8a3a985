/*
 * db.c - kura_open / kura_close, options, snapshots, sync, stats, and the relaxed-durability
 * syncer thread.
 */
#include "engine/db_int.h"
#include "engine/txn.h"
#include "engine/table.h"
#include "engine/table_index.h"
#include "engine/ttl.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/arn.h"
#include "util/status.h"

void kura_options_init(kura_options *o)
{
    memset(o, 0, sizeof *o);
    o->create_if_missing = true;
    o->durability = KURA_SYNC;
    o->relaxed_sync_ms = 100;
    o->default_partitions = 4;
    o->memtable_budget_bytes = 64u << 20;
    o->block_cache_bytes = 32u << 20;
    o->block_size = 4096;
    o->bloom_bits_per_key = 10;
    o->compression = KURA_COMPRESS_LZ4;
    o->bottom_compression = KURA_COMPRESS_LZ4;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    o->background_threads = n > 0 ? (uint32_t)n : 2;
    o->l0_compaction_trigger = 4;
    o->l0_slowdown_trigger = 12;
    o->l0_stop_trigger = 20;
    o->level1_bytes = 16ull << 20;
    o->sstable_target_bytes = 4ull << 20;
    o->region = KURA_DEFAULT_REGION;
    o->account_id = KURA_DEFAULT_ACCOUNT_ID;
}

void kura_read_options_init(kura_read_options *ro)
{
    ro->snapshot = NULL;
    ro->fill_cache = true;
}

void kura_write_options_init(kura_write_options *wo)
{
    wo->durability = -1;
}

void kura_free(void *p)
{
    free(p);
}

static kura_status check_options(const kura_options *o)
{
    if (o->default_partitions < 1 || o->default_partitions > 256)
        return kura_err(KURA_E_INVALID, "default_partitions must be 1..256, not %u",
                        o->default_partitions);
    if (o->durability != KURA_SYNC && o->durability != KURA_RELAXED)
        return kura_err(KURA_E_INVALID, "unknown durability %d", (int)o->durability);
    if (o->compression > KURA_COMPRESS_ZLIB || o->bottom_compression > KURA_COMPRESS_ZLIB)
        return kura_err(KURA_E_INVALID, "unknown compression");
    if (o->block_size < 256 || o->block_size > (1u << 20))
        return kura_err(KURA_E_INVALID, "block_size must be 256 B .. 1 MiB");
    if (o->memtable_budget_bytes < (1u << 20))
        return kura_err(KURA_E_INVALID, "memtable_budget_bytes must be at least 1 MiB");
    if (!o->l0_compaction_trigger || o->l0_slowdown_trigger < o->l0_compaction_trigger ||
        o->l0_stop_trigger < o->l0_slowdown_trigger)
        return kura_err(KURA_E_INVALID,
                        "need 0 < l0_compaction_trigger <= l0_slowdown_trigger <= l0_stop_trigger");
    if (o->wal_buffer_bytes > (64u << 20))
        return kura_err(KURA_E_INVALID, "wal_buffer_bytes must be at most 64 MiB");
    if (o->relaxed_sync_ms == 0)
        return kura_err(KURA_E_INVALID, "relaxed_sync_ms must be positive");
    if (o->region && *o->region && !arn_region_valid(o->region))
        return kura_err(KURA_E_INVALID, "region must be 1..%d of [a-z0-9-], not \"%s\"",
                        ARN_REGION_MAX, o->region);
    if (o->account_id && *o->account_id && !arn_account_valid(o->account_id))
        return kura_err(KURA_E_INVALID, "account_id must be %d digits, not \"%s\"",
                        ARN_ACCOUNT_LEN, o->account_id);
    return KURA_OK;
}

/* How often the WAL segments of tables with streams are checked for their age: a tenth of the
 * retention, at most every 10 s. */
static uint64_t trim_interval_ns(const kura_db *db)
{
    uint64_t ms = db->opts.stream_retention_ms ? db->opts.stream_retention_ms / 10 : 10000;
    return (ms > 10000 ? 10000 : ms ? ms : 1) * 1000000ull;
}

/* Deletes the WAL segments of stream tables past the retention (a flush does it too; this is
 * for tables no one writes). db->mu held. */
static void trim_stream_wals(kura_db *db)
{
    for (size_t i = 0; i < db->ntrees; i++) {
        kura_tree *t = db->trees[i];
        for (uint32_t p = 0; (t->flags & TREE_STREAM) && p < t->nparts; p++)
            lsm_trim_wals(t->parts[p]);
    }
}

/* Syncs every WAL every relaxed_sync_ms, so relaxed writes are durable within that bound;
 * collects the transaction log and trims the streams' WALs now and then. */
static void *syncer_main(void *arg)
{
    kura_db *db = arg;
    uint64_t next_collect = know_ns() + TXN_COLLECT_MS * 1000000ull;
    uint64_t next_trim = know_ns() + trim_interval_ns(db);
    kmutex_lock(&db->mu);
    while (!db->stopping) {
        kcond_timedwait(&db->syncer_cv, &db->mu, (uint64_t)db->opts.relaxed_sync_ms * 1000000u);
        if (db->stopping)
            break;
        if (know_ns() >= next_collect) { /* the transaction log's old records */
            uint64_t g = txn_log_watermark(db);
            kmutex_unlock(&db->mu);
            txn_log_collect(db, g); /* a failure leaves records, which is safe: next time */
            kmutex_lock(&db->mu);
            next_collect = know_ns() + TXN_COLLECT_MS * 1000000ull;
            if (db->stopping)
                break;
        }
        for (size_t i = 0; i < db->ntrees; i++) {
            kura_tree *t = db->trees[i];
            for (uint32_t p = 0; p < t->nparts; p++)
                lsm_sync_wal(t->parts[p]); /* a failure turns the partition read-only */
        }
        if (know_ns() >= next_trim) {
            trim_stream_wals(db);
            next_trim = know_ns() + trim_interval_ns(db);
        }
        if (db->txn)
            lsm_sync_wal(db->txn->parts[0]);
    }
    kmutex_unlock(&db->mu);
    return NULL;
}

static void db_free(kura_db *db)
{
    ttl_sweeper_join(db); /* an open that failed after starting it */
    tables_close_indexes(db); /* an open that failed after loading tables */
    tables_free(db);
    kcond_destroy(&db->tables_cv);
    kmutex_destroy(&db->tables_mu);
    for (size_t i = 0; i < db->ntrees; i++)
        tree_close(db->trees[i]);
    free(db->trees);
    txn_log_close(db);
    kpool_free(db->sh.pool);
    block_cache_free(db->sh.cache);
    lsm_shared_destroy(&db->sh);
    io_close(db->lock);
    kcond_destroy(&db->syncer_cv);
    kmutex_destroy(&db->mu);
    kmutex_destroy(&db->txn_mu);
    kmutex_destroy(&db->ttl_sweep_mu);
    free(db->txn_ids);
    free(db->dir);
    free(db);
}

/* Creates the database directory and makes its name durable (fsync of the parent). */
static kura_status make_db_dir(io_env *io, const char *dir)
{
    kura_status s = io_mkdir(io, dir);
    if (s != KURA_OK)
        return s;
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", dir);
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/')
        parent[--n] = 0;
    char *slash = strrchr(parent, '/');
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (slash == parent)
        parent[1] = 0;
    else
        *slash = 0;
    return io_sync_dir(io, parent);
}

kura_status kura_open(const char *dir, const kura_options *opts, kura_db **db_out)
{
    kura_options o;
    if (opts)
        o = *opts;
    else
        kura_options_init(&o);
    kura_status s = check_options(&o);
    if (s != KURA_OK)
        return s;
    kura_db *db = calloc(1, sizeof *db);
    if (!db || !(db->dir = strdup(dir))) {
        free(db);
        return kura_err(KURA_E_NOMEM, "open %s: out of memory", dir);
    }
    db->opts = o;
    snprintf(db->arn_region, sizeof db->arn_region, "%s",
             o.region && *o.region ? o.region : KURA_DEFAULT_REGION);
    snprintf(db->arn_account, sizeof db->arn_account, "%s",
             o.account_id && *o.account_id ? o.account_id : KURA_DEFAULT_ACCOUNT_ID);
    db->opts.region = db->arn_region;
    db->opts.account_id = db->arn_account;
    db->io = io_env_or_default(o.io);
    kmutex_init(&db->mu);
    kmutex_init(&db->txn_mu);
    kmutex_init(&db->ttl_sweep_mu);
    atomic_init(&db->ttl_stop, false);
    kcond_init(&db->syncer_cv);
    kmutex_init(&db->tables_mu);
    kcond_init(&db->tables_cv);
    atomic_init(&db->counts_stop, false);
    atomic_init(&db->ix_rebuild_stop, false);
    atomic_init(&db->ix_rebuilt_at_open, 0);
    db->count_sync_items = 10000;
    db->count_sync_bytes = 16u << 20;
    lsm_shared_init(&db->sh);
    db->sh.io = db->io;
    char path[4096];
    snprintf(path, sizeof path, "%s/KURA", dir);
    uint64_t size;
    s = io_path_size(db->io, path, &size);
    if (s == KURA_E_NOT_FOUND && !o.create_if_missing)
        s = kura_err(KURA_E_INVALID, "%s is not a kura database (no KURA file)", dir);
    else if (s == KURA_E_NOT_FOUND)
        s = make_db_dir(db->io, dir);
    if (s != KURA_OK)
        goto fail;
    snprintf(path, sizeof path, "%s/LOCK", dir);
    if ((s = io_lock(db->io, path, &db->lock)) != KURA_OK)
        goto fail;
    db->sh.cache = block_cache_new(o.block_cache_bytes);
    db->sh.pool = kpool_new(o.background_threads);
    if (!db->sh.cache || !db->sh.pool) {
        s = kura_err(KURA_E_NOMEM, "open %s: out of memory", dir);
        goto fail;
    }
    /* the transaction log first: the trees' recovery asks it about transaction pieces */
    if ((s = txn_log_open(db)) != KURA_OK || (s = catalog_load(db)) != KURA_OK ||
        (s = tables_load(db)) != KURA_OK || (s = ttl_sweeper_start(db)) != KURA_OK)
        goto fail;
    if (!kthread_start(&db->syncer, syncer_main, db)) {
        s = kura_err(KURA_E_NOMEM, "open %s: cannot start the WAL sync thread", dir);
        goto fail;
    }
    db->syncer_started = true;
    *db_out = db;
    return KURA_OK;
fail:
    db_free(db);
    return s;
}

kura_status kura_close(kura_db *db)
{
    if (!db)
        return KURA_OK;
    kmutex_lock(&db->mu);
    db->stopping = true;
    kcond_broadcast(&db->syncer_cv);
    kmutex_unlock(&db->mu);
    if (db->syncer_started)
        kthread_join(db->syncer);
    ttl_sweeper_join(db); /* before the tables it sweeps close */
    table_counts_stop(db); /* before the trees they read close */
    table_rebuilds_stop(db); /* before the index runtimes close */
    tables_close_indexes(db); /* their last checkpoint, before the trees close */
    kura_status first = KURA_OK;
    for (size_t i = 0; i < db->ntrees; i++) {
        kura_tree *t = db->trees[i];
        for (uint32_t p = 0; p < t->nparts; p++) {
            kura_status s = lsm_close(t->parts[p]);
            t->parts[p] = NULL;
            if (first == KURA_OK)
                first = s;
        }
    }
    kura_status s = txn_log_close(db);
    if (first == KURA_OK)
        first = s;
    db_free(db);
    return first;
}

const kura_snapshot *kura_snapshot_new(kura_db *db)
{
    kura_snapshot *s = malloc(sizeof *s);
    if (!s)
        return NULL;
    if (lsm_snapshot_acquire(&db->sh, &s->seq) != KURA_OK) {
        free(s);
        return NULL;
    }
    return s;
}

void kura_snapshot_free(kura_db *db, const kura_snapshot *s)
{
    if (!s)
        return;
    lsm_snapshot_release(&db->sh, s->seq);
    free((void *)s);
}

uint64_t kura_snapshot_seq(const kura_snapshot *s)
{
    return s->seq;
}

/* trees_each_partition over the database's trees, under db->mu (none is dropped meanwhile). */
static kura_status each_partition(kura_db *db, kura_status (*fn)(lsm_tree *))
{
    kmutex_lock(&db->mu);
    kura_status s = trees_each_partition(db->trees, db->ntrees, fn);
    kmutex_unlock(&db->mu);
    return s;
}

static kura_status sync_partition(lsm_tree *t)
{
    kura_status s = lsm_sync_wal(t);
    return s == KURA_OK ? lsm_error(t) : s;
}

kura_status kura_sync(kura_db *db)
{
    return each_partition(db, sync_partition);
}

static kura_status release_partition(lsm_tree *t)
{
    kura_status s = lsm_flush(t); /* nothing to do for an empty memtable */
    lsm_unload_tables(t);
    return s;
}

kura_status kura_release_memory(kura_db *db)
{
    /* a flush waits for its table to be written: DDL waits for the flushes (db->mu) */
    kura_status s = each_partition(db, release_partition);
    block_cache_prune(db->sh.cache);
#ifdef __GLIBC__
    malloc_trim(0); /* the freed memtable arenas and blocks back to the OS */
#endif
    return s;
}

void kura_get_stats(kura_db *db, kura_stats *st)
{
    memset(st, 0, sizeof *st);
    st->last_sequence = lsm_visible(&db->sh);
    st->flushes = __atomic_load_n(&db->sh.flushes, __ATOMIC_RELAXED);
    st->compactions = __atomic_load_n(&db->sh.compactions, __ATOMIC_RELAXED);
    st->write_slowdowns = __atomic_load_n(&db->sh.write_slowdowns, __ATOMIC_RELAXED);
    st->table_unloads = __atomic_load_n(&db->sh.table_unloads, __ATOMIC_RELAXED);
    st->indexes_rebuilt_at_open = atomic_load(&db->ix_rebuilt_at_open);
    st->block_cache_bytes = block_cache_usage(db->sh.cache);
    kmutex_lock(&db->mu);
    for (size_t i = 0; i < db->ntrees; i++)
        for (uint32_t p = 0; p < db->trees[i]->nparts; p++)
            lsm_add_stats(db->trees[i]->parts[p], st);
    kmutex_unlock(&db->mu);
}

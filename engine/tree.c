/*
 * tree.c - named trees: creating, opening and dropping them, routing keys to partitions, and
 * the raw key/value operations of kura.h.
 */
#include "engine/db_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/status.h"

enum { MAX_KEY = 65535, MAX_VALUE = 64 << 20 };

static lsm_options lsm_options_for(const kura_db *db, uint32_t nparts, uint32_t flags)
{
    const kura_options *o = &db->opts;
    lsm_options lo = {0};
    lo.durability = o->durability;
    lo.wal_buffer_bytes = o->wal_buffer_bytes;
    /* half a partition's share: the active and the flushing memtable together stay in it */
    size_t share = o->memtable_budget_bytes / (2u * nparts);
    lo.write_buffer_bytes = share < (64u << 10) ? (64u << 10) : share;
    lo.block_size = o->block_size;
    lo.bloom_bits_per_key = o->bloom_bits_per_key;
    lo.compression = o->compression;
    lo.bottom_compression = o->bottom_compression;
    lo.l0_compaction_trigger = o->l0_compaction_trigger;
    lo.l0_slowdown_trigger = o->l0_slowdown_trigger;
    lo.l0_stop_trigger = o->l0_stop_trigger;
    lo.level1_bytes = o->level1_bytes;
    lo.sstable_target_bytes = o->sstable_target_bytes;
    lo.no_wal = flags & TREE_NO_WAL;
    lo.retain_wals = flags & TREE_RETAIN_WALS;
    if (flags & TREE_STREAM) /* from the open on: the segments it finds are kept too */
        lo.wal_retain_ms = o->stream_retention_ms ? o->stream_retention_ms : 24u * 3600u * 1000u;
    return lo;
}

kura_status tree_open_parts(kura_db *db, kura_tree *t, bool create)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", db->dir, t->name);
    if (!(t->dir = strdup(path)) || !(t->parts = calloc(t->nparts, sizeof *t->parts)))
        return kura_err(KURA_E_NOMEM, "tree %s: out of memory", t->name);
    kura_status s = create ? io_mkdir(db->io, t->dir) : KURA_OK;
    lsm_options lo = lsm_options_for(db, t->nparts, t->flags);
    uint64_t max_seq = 0;
    for (uint32_t p = 0; p < t->nparts && s == KURA_OK; p++) {
        snprintf(path, sizeof path, "%s/p%04u", t->dir, p);
        if (create)
            s = io_mkdir(db->io, path);
        uint64_t seq = 0;
        if (s == KURA_OK)
            s = lsm_open(&db->sh, &lo, path, create, &t->parts[p], &seq);
        if (seq > max_seq)
            max_seq = seq;
    }
    if (s == KURA_OK && create)
        s = io_sync_dir(db->io, t->dir);
    if (s == KURA_OK && max_seq > lsm_visible(&db->sh))
        lsm_seq_reset(&db->sh, max_seq);
    return s;
}

void tree_close(kura_tree *t)
{
    if (!t)
        return;
    for (uint32_t p = 0; t->parts && p < t->nparts; p++)
        lsm_close(t->parts[p]);
    free(t->parts);
    free(t->dir);
    free(t->name);
    free(t);
}

static kura_tree *find_tree(kura_db *db, const char *name)
{
    for (size_t i = 0; i < db->ntrees; i++)
        if (!strcmp(db->trees[i]->name, name))
            return db->trees[i];
    return NULL;
}

kura_status tree_add_flags(kura_db *db, kura_tree *t, uint32_t flags)
{
    kmutex_lock(&db->mu);
    kura_status s = KURA_OK;
    if ((t->flags & flags) != flags) {
        uint32_t old = t->flags;
        t->flags |= flags;
        if ((s = catalog_write(db)) != KURA_OK)
            t->flags = old;
    }
    kmutex_unlock(&db->mu);
    return s;
}

kura_status tree_find(kura_db *db, const char *name, kura_tree **tree_out)
{
    kmutex_lock(&db->mu);
    kura_tree *t = find_tree(db, name);
    kmutex_unlock(&db->mu);
    if (!t)
        return KURA_E_NOT_FOUND;
    *tree_out = t;
    return KURA_OK;
}

kura_status kura_tree_open(kura_db *db, const char *name, const kura_tree_options *topts,
                           kura_tree **tree_out)
{
    return tree_open_flags(db, name, topts, 0, tree_out);
}

/* Removes the files of tree `name`, which no catalog entry names: a run that crashed after
 * making them and before the tree's catalog entry (or the end of its drop) was durable leaves
 * them. A new tree must start empty, never from them: vs_open would recover their CURRENT,
 * and an index built again from scratch after a crash takes its tree's name again
 * (crash_index_ddl_test found an entry of a deleted item that way). The removal is synced
 * before the new tree's files are made. */
static kura_status clear_leftovers(kura_db *db, const char *name)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", db->dir, name);
    char **names = NULL;
    size_t n = 0;
    if (io_list_dir(db->io, dir, &names, &n) != KURA_OK)
        return KURA_OK; /* no directory: nothing left */
    io_free_names(names, n);
    tree_remove_dir_files(db->io, dir);
    kura_status s = io_rmdir(db->io, dir);
    if (s == KURA_OK)
        s = io_sync_dir(db->io, db->dir);
    if (s != KURA_OK)
        return kura_err(s, "tree %s: the files an earlier run left cannot be removed: %s", name,
                        kura_last_error());
    return KURA_OK;
}

kura_status tree_open_flags(kura_db *db, const char *name, const kura_tree_options *topts,
                            uint32_t flags, kura_tree **tree_out)
{
    if (!tree_name_valid(name))
        return kura_err(KURA_E_INVALID,
                        "tree name \"%.64s\" must be 1-255 characters of [A-Za-z0-9_.-]", name);
    kmutex_lock(&db->mu);
    kura_tree *t = find_tree(db, name);
    kura_status s = KURA_OK;
    if (t)
        goto out;
    uint32_t parts = topts && topts->partitions ? topts->partitions : db->opts.default_partitions;
    if (parts < 1 || parts > 256) {
        s = kura_err(KURA_E_INVALID, "partitions must be 1..256, not %u", parts);
        goto out;
    }
    if (db->ntrees == db->trees_cap) {
        size_t cap = db->trees_cap ? db->trees_cap * 2 : 8;
        kura_tree **nt = realloc(db->trees, cap * sizeof *nt);
        if (!nt) {
            s = kura_err(KURA_E_NOMEM, "tree %s: out of memory", name);
            goto out;
        }
        db->trees = nt;
        db->trees_cap = cap;
    }
    if (!(t = calloc(1, sizeof *t)) || !(t->name = strdup(name))) {
        free(t);
        t = NULL;
        s = kura_err(KURA_E_NOMEM, "tree %s: out of memory", name);
        goto out;
    }
    t->db = db;
    t->nparts = parts;
    t->hash_prefixed = topts && topts->hash_prefixed_keys;
    t->flags = flags;
    s = clear_leftovers(db, name);
    if (s == KURA_OK)
        s = tree_open_parts(db, t, true);
    if (s == KURA_OK) {
        db->trees[db->ntrees++] = t;
        s = catalog_write(db); /* the tree exists once the catalog says so */
        if (s != KURA_OK)
            db->ntrees--;
    }
    if (s != KURA_OK) {
        tree_close(t);
        t = NULL;
    }
out:
    kmutex_unlock(&db->mu);
    if (s == KURA_OK)
        *tree_out = t;
    return s;
}

void tree_remove_dir_files(io_env *io, const char *dir)
{
    char **names = NULL, path[4096];
    size_t n = 0;
    if (io_list_dir(io, dir, &names, &n) != KURA_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (io_unlink(io, path) != KURA_OK)
            tree_remove_dir_files(io, path), io_rmdir(io, path);
    }
    io_free_names(names, n);
}

kura_status kura_tree_drop(kura_db *db, kura_tree *t)
{
    kmutex_lock(&db->mu);
    size_t i = 0;
    while (i < db->ntrees && db->trees[i] != t)
        i++;
    if (i == db->ntrees) {
        kmutex_unlock(&db->mu);
        return kura_err(KURA_E_INVALID, "drop: not an open tree of this database");
    }
    db->trees[i] = db->trees[--db->ntrees];
    kura_status s = catalog_write(db); /* once this is durable the tree is gone */
    if (s != KURA_OK) {
        db->trees[db->ntrees++] = t;
        kmutex_unlock(&db->mu);
        return s;
    }
    kmutex_unlock(&db->mu);
    io_env *io = db->io;
    char *dir = strdup(t->dir);
    tree_close(t);
    if (dir) {
        tree_remove_dir_files(io, dir); /* leftovers: no catalog entry names them, and a tree
                                         * made later under this name removes them first */
        io_rmdir(io, dir);
        free(dir);
    }
    return KURA_OK;
}

size_t kura_tree_list(kura_db *db, const char **names_out, size_t cap)
{
    kmutex_lock(&db->mu);
    size_t n = db->ntrees;
    for (size_t i = 0; i < n && i < cap; i++)
        names_out[i] = db->trees[i]->name;
    kmutex_unlock(&db->mu);
    return n;
}

uint32_t kura_tree_partitions(const kura_tree *t)
{
    return t->nparts;
}

uint32_t kura_tree_partition_of(const kura_tree *t, const void *key, size_t klen)
{
    if (t->nparts == 1)
        return 0;
    uint64_t h = t->hash_prefixed && klen >= 8 ? dec_fixed64_be(key) : kura_hash64(key, klen);
    return kura_hash_bucket(h, t->nparts);
}

static kura_status check_key(const kura_tree *t, size_t klen)
{
    if (klen == 0 || klen > MAX_KEY)
        return kura_err(KURA_E_INVALID, "key of %zu bytes: keys are 1..%d bytes", klen, MAX_KEY);
    if (t->hash_prefixed && klen < 8)
        return kura_err(KURA_E_INVALID, "key of %zu bytes: this tree's keys start with an "
                                        "8-byte hash", klen);
    return KURA_OK;
}

static bool want_sync(const kura_tree *t, const kura_write_options *wo)
{
    int d = wo && wo->durability >= 0 ? wo->durability : (int)t->db->opts.durability;
    return d == KURA_SYNC;
}

/* One reusable batch per thread keeps single puts free of allocation; freed at thread exit. */
static pthread_key_t batch_key;
static pthread_once_t batch_once = PTHREAD_ONCE_INIT;

static void free_thread_batch(void *p)
{
    lsm_batch_free(p);
    free(p);
}

static void make_batch_key(void)
{
    pthread_key_create(&batch_key, free_thread_batch);
}

static lsm_batch *thread_batch(void)
{
    pthread_once(&batch_once, make_batch_key);
    lsm_batch *b = pthread_getspecific(batch_key);
    if (!b) {
        if (!(b = malloc(sizeof *b)))
            return NULL;
        lsm_batch_init(b);
        if (pthread_setspecific(batch_key, b) != 0) {
            free_thread_batch(b);
            return NULL;
        }
    } else {
        lsm_batch_clear(b);
    }
    return b;
}

kura_status kura_put(kura_tree *t, const kura_write_options *wo, const void *key, size_t klen,
                     const void *val, size_t vlen)
{
    kura_status s = check_key(t, klen);
    if (s != KURA_OK)
        return s;
    if (vlen > MAX_VALUE)
        return kura_err(KURA_E_INVALID, "value of %zu bytes: at most %d", vlen, MAX_VALUE);
    lsm_batch *b = thread_batch();
    if (!b)
        return kura_err(KURA_E_NOMEM, "put: out of memory");
    if ((s = lsm_batch_put(b, key, klen, val, vlen)) != KURA_OK)
        return s;
    return lsm_write(t->parts[kura_tree_partition_of(t, key, klen)], b, want_sync(t, wo));
}

kura_status tree_write_imaged(kura_tree *t, const void *key, size_t klen, const void *val,
                              size_t vlen, const void *old, size_t oldlen, uint64_t meta_ms)
{
    kura_status s = check_key(t, klen);
    if (s != KURA_OK)
        return s;
    lsm_batch *b = thread_batch();
    if (!b)
        return kura_err(KURA_E_NOMEM, "write: out of memory");
    if (meta_ms && (s = lsm_batch_meta(b, meta_ms, 0)) != KURA_OK)
        return s;
    s = val ? lsm_batch_put(b, key, klen, val, vlen) : lsm_batch_delete(b, key, klen);
    if (s == KURA_OK)
        s = lsm_batch_image(b, key, klen, old, oldlen);
    if (s != KURA_OK)
        return s;
    return lsm_write(t->parts[kura_tree_partition_of(t, key, klen)], b, want_sync(t, NULL));
}

kura_status tree_write_part(kura_tree *t, uint32_t part, lsm_batch *b)
{
    return lsm_write(t->parts[part], b, want_sync(t, NULL));
}

kura_status kura_delete(kura_tree *t, const kura_write_options *wo, const void *key, size_t klen)
{
    kura_status s = check_key(t, klen);
    if (s != KURA_OK)
        return s;
    lsm_batch *b = thread_batch();
    if (!b)
        return kura_err(KURA_E_NOMEM, "delete: out of memory");
    if ((s = lsm_batch_delete(b, key, klen)) != KURA_OK)
        return s;
    return lsm_write(t->parts[kura_tree_partition_of(t, key, klen)], b, want_sync(t, wo));
}

kura_status tree_get_into(kura_tree *t, const kura_read_options *ro, const void *key, size_t klen,
                          kbuf *val)
{
    kura_status s = check_key(t, klen);
    if (s != KURA_OK)
        return s;
    uint64_t snap = ro && ro->snapshot ? ro->snapshot->seq : 0;
    bool fill = ro ? ro->fill_cache : true;
    return lsm_get(t->parts[kura_tree_partition_of(t, key, klen)], key, klen, snap, fill, val);
}

kura_status kura_get(kura_tree *t, const kura_read_options *ro, const void *key, size_t klen,
                     void **val_out, size_t *vlen_out)
{
    kbuf v = KBUF_INIT;
    kura_status s = tree_get_into(t, ro, key, klen, &v);
    if (s != KURA_OK) {
        kbuf_free(&v);
        return s;
    }
    if (!v.data && !(v.data = malloc(1)))
        return kura_err(KURA_E_NOMEM, "get: out of memory");
    *val_out = v.data;
    *vlen_out = v.len;
    return KURA_OK;
}

kura_status trees_each_partition(kura_tree *const *trees, size_t ntrees,
                                 kura_status (*fn)(lsm_tree *))
{
    kura_status first = KURA_OK;
    char msg[512] = "";
    for (size_t i = 0; i < ntrees; i++) {
        for (uint32_t p = 0; p < trees[i]->nparts; p++) {
            kura_status s = fn(trees[i]->parts[p]);
            if (s != KURA_OK && first == KURA_OK) {
                first = s;
                snprintf(msg, sizeof msg, "%s", kura_last_error());
            }
        }
    }
    return first == KURA_OK ? KURA_OK : kura_err(first, "%s", msg);
}

kura_status kura_tree_flush(kura_tree *t)
{
    return trees_each_partition(&t, 1, lsm_flush);
}

kura_status kura_tree_compact(kura_tree *t)
{
    return trees_each_partition(&t, 1, lsm_compact_all);
}

/*
 * lsm_bg.c - background work of a partition: flushing the immutable memtable into a table,
 * automatic and manual compactions, and deleting files nobody needs any more.
 *
 * At most one flush job and one compaction job per partition are queued or running at a time;
 * they may run concurrently on the shared pool. A flush may place its table below level 0
 * (when nothing there overlaps it) only while no compaction runs, and a compaction does not
 * start while such a flush runs, so the two never write the same level's key range.
 */
#include "engine/lsm/lsm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lsm/compaction.h"
#include "util/ikey.h"
#include "util/status.h"

static void flush_job(void *arg);
static void compact_job(void *arg);

uint64_t lsm_alloc_file(void *arg)
{
    lsm_tree *t = arg;
    kmutex_lock(&t->mu);
    uint64_t n = vs_new_file_number(&t->vs);
    kmutex_unlock(&t->mu);
    return n;
}

kura_status lsm_log_and_apply(lsm_tree *t, version_edit *e)
{
    kura_status s = vs_log_and_apply(&t->vs, e);
    __atomic_store_n(&t->l0_files, (uint32_t)t->vs.current->nfiles[0], __ATOMIC_RELEASE);
    return s;
}

void lsm_maybe_schedule(lsm_tree *t)
{
    if (t->bg_error != KURA_OK || t->closing)
        return;
    if (t->imm && !t->flush_scheduled) {
        t->flush_scheduled = true;
        if (!kpool_submit(t->sh->pool, flush_job, t))
            t->flush_scheduled = false;
    }
    if (!t->compact_scheduled && !t->compacting && !t->pushdown_flush &&
        t->vs.current->compaction_score >= 1) {
        t->compact_scheduled = true;
        if (!kpool_submit(t->sh->pool, compact_job, t))
            t->compact_scheduled = false;
    }
}

static void sst_options_for(lsm_tree *t, int level, const version *v, sst_options *o)
{
    sst_options_init(o);
    o->block_size = t->opts.block_size;
    o->bloom_bits_per_key = t->opts.bloom_bits_per_key;
    o->prefix_len = t->opts.prefix_len;
    bool bottom = true;
    for (int l = level + 1; l < LSM_LEVELS; l++)
        if (v->nfiles[l])
            bottom = false;
    o->compression = bottom && level > 0 ? t->opts.bottom_compression : t->opts.compression;
}

/* The level a flushed table covering [lo, hi] goes to. Level 0, unless the range overlaps no
 * file at any level (a sequential load): then straight to the base level (where level 0 would
 * compact it anyway), so that appends in key order are never rewritten. */
static int pick_flush_level(lsm_tree *t, const version *v, const uint8_t *lo, size_t lolen,
                            const uint8_t *hi, size_t hilen)
{
    if (t->compacting || t->compact_scheduled)
        return 0;
    file_meta **f = NULL;
    size_t n = 0, cap = 0;
    for (int level = 0; level < LSM_LEVELS && n == 0; level++)
        if (version_overlapping(v, level, lo, lolen, hi, hilen, &f, &n, &cap) != KURA_OK)
            n = 1;
    free(f);
    if (n > 0)
        return 0;
    return v->base_level;
}

/* The user-key range of a memtable: its first and last entries. */
static bool mem_range(memtable *m, kbuf *lo, kbuf *hi)
{
    kv_iter *it = mt_iter(m);
    bool ok = it != NULL;
    size_t n;
    const uint8_t *k;
    if (ok) {
        kv_iter_seek_first(it);
        if (kv_iter_valid(it)) {
            k = kv_iter_key(it, &n);
            ok = kbuf_append(lo, k, n - IKEY_TRAILER);
            kv_iter_seek_last(it);
            k = kv_iter_key(it, &n);
            ok = ok && kbuf_append(hi, k, n - IKEY_TRAILER);
        }
    }
    kv_iter_free(it);
    return ok;
}

static void flush_job(void *arg)
{
    lsm_tree *t = arg;
    kbuf lo = KBUF_INIT, hi = KBUF_INIT;
    version_edit edit;
    edit_init(&edit);
    kmutex_lock(&t->mu);
    memtable *imm = t->imm;
    uint64_t log_end = t->imm_log_end;
    version *base = t->vs.current;
    version_ref(base);
    int level = 0;
    if (mem_range(imm, &lo, &hi) && lo.len)
        level = pick_flush_level(t, base, lo.data, lo.len, hi.data, hi.len);
    t->pushdown_flush = level > 0;
    kmutex_unlock(&t->mu);

    build_ctx c = {.io = t->sh->io, .dir = t->dir, .new_file = lsm_alloc_file,
                   .new_file_arg = t, .oldest_snapshot = lsm_oldest_snapshot(t->sh),
                   .out_level = level, .edit = &edit};
    sst_options_for(t, level, base, &c.sopts);
    kv_iter *it = mt_iter(imm);
    kura_status s = it ? build_tables(&c, it) : kura_err(KURA_E_NOMEM, "flush: out of memory");
    kv_iter_free(it);
    if (s == KURA_OK && c.nmade)
        s = io_sync_dir(t->sh->io, t->dir); /* the table's name must be durable first */
    if (s == KURA_OK)
        s = io_crash_point(t->sh->io, "flush.after_table");
    if (s == KURA_OK && t->sh->txn_sync) /* the commit records of the pieces it holds */
        s = t->sh->txn_sync(t->sh->txn_arg, t);

    kmutex_lock(&t->mu);
    bool logged = s == KURA_OK; /* the edit may reach the manifest from here on */
    if (s == KURA_OK) {
        edit.has_log_number = true;
        edit.log_number = log_end;
        /* the tables' own highest sequence: entries of the memtable may not be visible
         * yet, and recovery must never hand out a sequence a table already holds */
        edit.has_last_seq = true;
        edit.last_seq = t->vs.last_seq;
        for (size_t i = 0; i < edit.nadded; i++)
            if (edit.added[i].max_seq > edit.last_seq)
                edit.last_seq = edit.added[i].max_seq;
        /* the owner's checkpoint of what this memtable held (lsm_switch_memtable) */
        if (t->has_imm_meta)
            s = edit_set_user_meta(&edit, t->imm_meta.data, t->imm_meta.len);
        if (s == KURA_OK)
            s = lsm_log_and_apply(t, &edit);
    }
    if (s == KURA_OK)
        s = io_crash_point(t->sh->io, "flush.after_manifest");
    if (s == KURA_OK) {
        t->imm = NULL;
        t->has_imm_meta = false;
        mt_unref(imm);
        __atomic_add_fetch(&t->sh->flushes, 1, __ATOMIC_RELAXED);
        lsm_delete_obsolete(t, false);
    } else {
        /* Once the edit was handed to the manifest (even if its sync failed) it may be
         * durable and name the table: keep it; the next open deletes it if unreferenced. */
        if (!logged)
            build_ctx_unlink_outputs(&c); /* after a crash this fails too: cleaned at open */
        lsm_set_error(t, s);
    }
    t->pushdown_flush = false;
    t->flush_scheduled = false;
    version_unref(base);
    lsm_maybe_schedule(t);
    kcond_broadcast(&t->bg_cv);
    kmutex_unlock(&t->mu);
    build_ctx_free(&c);
    edit_free(&edit);
    kbuf_free(&lo);
    kbuf_free(&hi);
}

kura_status lsm_run_compaction(lsm_tree *t, compaction *c)
{
    version_edit edit;
    edit_init(&edit);
    kura_status s = compaction_delete_inputs(c, &edit);
    if (s == KURA_OK && c->trivial_move) {
        file_meta *f = c->inputs[0][0];
        s = edit_add_file(&edit, c->out_level, f->number, f->file_size, f->entries, f->min_seq,
                          f->max_seq, f->smallest.data, f->smallest.len, f->largest.data,
                          f->largest.len);
        if (s == KURA_OK)
            s = lsm_log_and_apply(t, &edit);
        edit_free(&edit);
        return s;
    }
    version *base = t->vs.current;
    version_ref(base);
    kmutex_unlock(&t->mu);
    build_ctx bc = {.io = t->sh->io, .dir = t->dir, .new_file = lsm_alloc_file,
                    .new_file_arg = t, .target_bytes = t->opts.sstable_target_bytes,
                    .oldest_snapshot = lsm_oldest_snapshot(t->sh),
                    /* no base: every tombstone is kept (lsm_keep_tombstones) */
                    .base = __atomic_load_n(&t->keep_tombstones, __ATOMIC_ACQUIRE) ? NULL : base,
                    .out_level = c->out_level, .edit = &edit};
    sst_options_for(t, c->out_level, base, &bc.sopts);
    kv_iter *it = s == KURA_OK ? compaction_iter(c) : NULL;
    if (s == KURA_OK)
        s = it ? build_tables(&bc, it) : kura_err(KURA_E_NOMEM, "compaction: out of memory");
    kv_iter_free(it);
    if (s == KURA_OK && bc.nmade)
        s = io_sync_dir(t->sh->io, t->dir); /* the tables' names must be durable first */
    if (s == KURA_OK)
        s = io_crash_point(t->sh->io, "compaction.after_tables");
    kmutex_lock(&t->mu);
    bool logged = s == KURA_OK; /* as in flush_job: a logged edit may name the outputs */
    if (s == KURA_OK)
        s = lsm_log_and_apply(t, &edit);
    if (s == KURA_OK)
        s = io_crash_point(t->sh->io, "compaction.after_manifest");
    if (s == KURA_OK) {
        __atomic_add_fetch(&t->sh->compactions, 1, __ATOMIC_RELAXED);
        lsm_delete_obsolete(t, false);
    } else if (!logged) {
        build_ctx_unlink_outputs(&bc);
    }
    version_unref(base);
    build_ctx_free(&bc);
    edit_free(&edit);
    return s;
}

static void compact_job(void *arg)
{
    lsm_tree *t = arg;
    kmutex_lock(&t->mu);
    t->compact_scheduled = false;
    if (t->bg_error == KURA_OK && !t->closing && !t->compacting && !t->pushdown_flush) {
        compaction *c = compaction_pick(t->vs.current, t->compact_pointer);
        if (c) {
            t->compacting = true;
            kura_status s = lsm_run_compaction(t, c);
            t->compacting = false;
            if (s != KURA_OK)
                lsm_set_error(t, s);
            compaction_free(c);
        }
    }
    lsm_maybe_schedule(t);
    kcond_broadcast(&t->bg_cv);
    kmutex_unlock(&t->mu);
}

static size_t batch_bytes(void *payload)
{
    return ((lsm_batch *)payload)->rep.len;
}

kura_status lsm_flush(lsm_tree *t)
{
    if (t->opts.no_wal)
        return lsm_flush_no_wal(t);
    /* Become the write leader, so no one inserts while the memtable is switched. */
    lsm_batch empty;
    lsm_batch_init(&empty);
    wal_cq_waiter w = {.payload = &empty, .sync = false};
    kura_status s = KURA_OK;
    /* Another leader may take our empty batch into its group (writing a harmless empty
     * record); then queue again until we lead. */
    while (!wal_cq_join(t->cq, &w)) {
        if (w.status != KURA_OK) {
            lsm_batch_free(&empty);
            return w.status;
        }
        w = (wal_cq_waiter){.payload = &empty, .sync = false};
    }
    kmutex_lock(&t->mu);
    while ((t->imm || t->txn_inflight > 0) && t->bg_error == KURA_OK)
        kcond_wait(&t->bg_cv, &t->mu); /* (pieces in flight: lsm_txn.c) */
    if (t->bg_error == KURA_OK && mt_entries(t->mem) > 0) {
        s = lsm_new_wal(t);
        memtable *m = s == KURA_OK ? mt_new_sized(t->opts.write_buffer_bytes) : NULL;
        if (s == KURA_OK && !m)
            s = kura_err(KURA_E_NOMEM, "%s: out of memory", t->dir);
        if (s == KURA_OK) {
            t->imm = t->mem;
            t->imm_log_end = t->wal_number;
            t->mem = m;
            lsm_maybe_schedule(t);
        } else {
            lsm_set_error(t, s);
        }
    }
    wal_cq_waiter *group[1];
    size_t n = wal_cq_group(t->cq, &w, group, 1, SIZE_MAX, batch_bytes);
    wal_cq_finish(t->cq, group, n, s);
    while (t->imm && t->bg_error == KURA_OK)
        kcond_wait(&t->bg_cv, &t->mu);
    if (s == KURA_OK && t->bg_error != KURA_OK)
        s = kura_err(KURA_E_READONLY, "%s is read-only after an error: %s", t->dir, t->bg_msg);
    kmutex_unlock(&t->mu);
    lsm_batch_free(&empty);
    return s;
}

kura_status lsm_compact_all(lsm_tree *t)
{
    kura_status s = lsm_flush(t);
    if (s != KURA_OK)
        return s;
    kmutex_lock(&t->mu);
    /* A running compaction is waited for even after a background error: `compacting` is
     * this function's to set and clear only once that job has cleared it, or lsm_close()
     * could free the tree under the job (a use-after-free the power-loss test found). */
    while (t->compacting || (t->pushdown_flush && t->bg_error == KURA_OK))
        kcond_wait(&t->bg_cv, &t->mu);
    if (t->bg_error != KURA_OK) {
        s = kura_err(t->bg_error, "%s", t->bg_msg);
        kmutex_unlock(&t->mu);
        return s;
    }
    t->compacting = true;
    for (int level = 0; level < LSM_LEVELS - 1 && s == KURA_OK; level++) {
        version *v = t->vs.current;
        bool deeper = false;
        for (int l = level + 1; l < LSM_LEVELS; l++)
            deeper |= v->nfiles[l] > 0;
        if (!v->nfiles[level] || (!deeper && level > 0))
            continue;
        compaction *c = compaction_whole_level(v, level);
        if (!c) {
            s = kura_err(KURA_E_NOMEM, "compaction: out of memory");
            break;
        }
        c->trivial_move = false; /* a full compaction rewrites, dropping tombstones */
        s = lsm_run_compaction(t, c);
        compaction_free(c);
        if (s != KURA_OK)
            lsm_set_error(t, s);
    }
    t->compacting = false;
    lsm_maybe_schedule(t);
    kcond_broadcast(&t->bg_cv);
    kmutex_unlock(&t->mu);
    return s;
}

static bool parse_number(const char *name, const char *suffix, uint64_t *n_out)
{
    char *end;
    if (name[0] < '0' || name[0] > '9')
        return false;
    unsigned long long n = strtoull(name, &end, 10);
    if (strcmp(end, suffix) != 0)
        return false;
    *n_out = n;
    return true;
}

static bool live_table(const version *v, uint64_t number)
{
    for (int l = 0; l < LSM_LEVELS; l++)
        for (size_t i = 0; i < v->nfiles[l]; i++)
            if (v->files[l][i]->number == number)
                return true;
    return false;
}

void lsm_delete_obsolete(lsm_tree *t, bool tables_too)
{
    char **names = NULL, path[4096];
    size_t n = 0;
    if (io_list_dir(t->sh->io, t->dir, &names, &n) != KURA_OK)
        return; /* retried at the next flush */
    for (size_t i = 0; i < n; i++) {
        uint64_t num;
        bool del = false, wal = parse_number(names[i], ".log", &num);
        if (wal)
            del = num < t->vs.log_number && num != t->wal_number &&
                  lsm_wal_seg_unneeded(t, num);
        else if (tables_too && parse_number(names[i], ".sst", &num))
            del = !live_table(t->vs.current, num); /* only at open: no flush in flight */
        else if (tables_too && !strncmp(names[i], "MANIFEST-", 9))
            del = strtoull(names[i] + 9, NULL, 10) != t->vs.manifest_number;
        if (!del)
            continue;
        snprintf(path, sizeof path, "%s/%s", t->dir, names[i]);
        uint64_t size = 0;
        if (wal && io_path_size(t->sh->io, path, &size) == KURA_OK && t->wal_bytes_live >= size)
            t->wal_bytes_live -= size;
        io_unlink(t->sh->io, path);
    }
    io_free_names(names, n);
}

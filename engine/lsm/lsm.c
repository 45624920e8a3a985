/*
 * lsm.c - opening and closing a partition's LSM tree, point reads, iterator pinning, stats.
 * The write path is in lsm_write.c, flushes and compactions in lsm_bg.c, recovery of WAL
 * segments in lsm_recover.c.
 */
#include "engine/lsm/lsm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ikey.h"
#include "util/status.h"

void lsm_set_error(lsm_tree *t, kura_status s)
{
    if (t->bg_error != KURA_OK || s == KURA_OK)
        return;
    __atomic_store_n(&t->bg_error, s, __ATOMIC_RELEASE);
    snprintf(t->bg_msg, sizeof t->bg_msg, "%s", kura_last_error());
    kcond_broadcast(&t->bg_cv);
}

kura_status lsm_error(lsm_tree *t)
{
    kmutex_lock(&t->mu);
    kura_status s = t->bg_error;
    if (s != KURA_OK)
        s = kura_err(KURA_E_READONLY, "%s is read-only after an error: %s", t->dir, t->bg_msg);
    kmutex_unlock(&t->mu);
    return s;
}

static void free_tree(lsm_tree *t)
{
    mt_unref(t->mem);
    if (t->imm)
        mt_unref(t->imm);
    vs_close(&t->vs);
    for (int l = 0; l < LSM_LEVELS; l++)
        kbuf_free(&t->compact_pointer[l]);
    wal_writer_close(t->wal);
    wal_cq_free(t->cq);
    kcond_destroy(&t->bg_cv);
    kmutex_destroy(&t->mu);
    kmutex_destroy(&t->wal_mu);
    kmutex_destroy(&t->wal_sync_mu);
    kmutex_destroy(&t->apply_mu);
    kcond_destroy(&t->hook_cv);
    kmutex_destroy(&t->hook_mu);
    kbuf_free(&t->imm_meta);
    free(t->wal_segs);
    free(t->dir);
    free(t);
}

kura_status lsm_open(lsm_shared *sh, const lsm_options *opts, const char *dir, bool create,
                     lsm_tree **t_out, uint64_t *max_seq_out)
{
    lsm_tree *t = calloc(1, sizeof *t);
    if (!t || !(t->dir = strdup(dir)) || !(t->mem = mt_new_sized(opts->write_buffer_bytes)) ||
        !(t->cq = wal_cq_new())) {
        if (t) {
            if (t->mem)
                mt_unref(t->mem);
            free(t->dir);
            free(t);
        }
        return kura_err(KURA_E_NOMEM, "%s: out of memory", dir);
    }
    t->sh = sh;
    t->opts = *opts;
    kmutex_init(&t->mu);
    kmutex_init(&t->wal_mu);
    kmutex_init(&t->wal_sync_mu);
    kmutex_init(&t->apply_mu);
    kmutex_init(&t->hook_mu);
    kcond_init(&t->hook_cv);
    kcond_init(&t->bg_cv);
    t->wal_retain_seq = opts->retain_wals ? 0 : UINT64_MAX; /* kept until the owner says */
    t->wal_retain_ms = opts->wal_retain_ms;
    t->wal_min_txn = UINT64_MAX;
    uint64_t max_seq = 0;
    kura_status s = vs_open(&t->vs, sh->io, sh->cache, &t->opts, t->dir, create);
    if (s == KURA_OK) {
        max_seq = t->vs.last_seq;
        for (int l = 0; l < LSM_LEVELS; l++) /* robust against an old last_seq */
            for (size_t i = 0; i < t->vs.current->nfiles[l]; i++)
                if (t->vs.current->files[l][i]->max_seq > max_seq)
                    max_seq = t->vs.current->files[l][i]->max_seq;
        if (!opts->no_wal)
            s = lsm_replay_wals(t, &max_seq);
    }
    if (s == KURA_OK)
        s = io_crash_point(sh->io, "recovery.after_replay");
    if (s == KURA_OK && !opts->no_wal)
        s = lsm_new_wal(t);
    if (s != KURA_OK) {
        free_tree(t);
        return s;
    }
    t->imm_log_end = t->wal_number; /* replayed segments stay until mem is flushed */
    t->l0_files = (uint32_t)t->vs.current->nfiles[0];
    if (t->wal_retain_ms)
        lsm_note_old_wals(t); /* their age counts from now */
    kmutex_lock(&t->mu);
    lsm_delete_obsolete(t, true);
    lsm_maybe_schedule(t);
    kmutex_unlock(&t->mu);
    *t_out = t;
    *max_seq_out = max_seq;
    return KURA_OK;
}

kura_status lsm_close(lsm_tree *t)
{
    if (!t)
        return KURA_OK;
    kmutex_lock(&t->mu);
    t->closing = true;
    while (t->flush_scheduled || t->compact_scheduled || t->compacting)
        kcond_wait(&t->bg_cv, &t->mu);
    kura_status s = t->bg_error;
    kmutex_unlock(&t->mu);
    if (s == KURA_OK && t->wal && !wal_writer_failed(t->wal))
        s = wal_writer_sync(t->wal);
    free_tree(t);
    return s;
}

typedef struct lsm_pin {
    memtable *mem, *imm;
    version *v;
} lsm_pin;

static void pin(lsm_tree *t, lsm_pin *p)
{
    kmutex_lock(&t->mu);
    p->mem = t->mem;
    mt_ref(p->mem);
    p->imm = t->imm;
    if (p->imm)
        mt_ref(p->imm);
    p->v = t->vs.current;
    version_ref(p->v);
    kmutex_unlock(&t->mu);
}

static void unpin(lsm_pin *p)
{
    mt_unref(p->mem);
    if (p->imm)
        mt_unref(p->imm);
    version_unref(p->v);
}

kura_status lsm_get(lsm_tree *t, const uint8_t *key, size_t klen, uint64_t snapshot,
                    bool fill_cache, kbuf *val_out)
{
    lsm_pin p;
    pin(t, &p);
    /* read the sequence after pinning: a compaction installed before our pin used an oldest
     * snapshot <= the visible sequence we read now (see shared.h) */
    if (!snapshot)
        snapshot = lsm_visible(t->sh);
    unsigned type;
    kura_status s;
    if (mt_get(p.mem, key, klen, snapshot, val_out, &type) ||
        (p.imm && mt_get(p.imm, key, klen, snapshot, val_out, &type))) {
        s = type == IKEY_TYPE_VALUE   ? KURA_OK
            : type == MT_TYPE_NOMEM ? KURA_E_NOMEM /* message set by mt_get */
                                    : KURA_E_NOT_FOUND;
    } else {
        uint8_t stackbuf[256];
        uint8_t *ik = klen + IKEY_TRAILER <= sizeof stackbuf ? stackbuf : malloc(klen + 8);
        if (!ik) {
            unpin(&p);
            return kura_err(KURA_E_NOMEM, "get: out of memory");
        }
        ikey_encode(ik, key, klen, snapshot, IKEY_TYPE_SEEK);
        bool found;
        s = version_get(p.v, ik, klen + IKEY_TRAILER, fill_cache, val_out, &found);
        if (ik != stackbuf)
            free(ik);
    }
    unpin(&p);
    return s;
}

kura_status lsm_pin_iters(lsm_tree *t, bool fill_cache, kv_iter ***its, size_t *n, size_t *cap,
                          void **pin_out)
{
    lsm_pin *p = malloc(sizeof *p);
    if (!p)
        return kura_err(KURA_E_NOMEM, "iterator: out of memory");
    pin(t, p);
    kv_iter *it = mt_iter(p->mem);
    kura_status s = KURA_OK;
    if (!it || !ptr_push((void ***)its, n, cap, it)) {
        kv_iter_free(it);
        s = kura_err(KURA_E_NOMEM, "iterator: out of memory");
    }
    if (s == KURA_OK && p->imm) {
        it = mt_iter(p->imm);
        if (!it || !ptr_push((void ***)its, n, cap, it)) {
            kv_iter_free(it);
            s = kura_err(KURA_E_NOMEM, "iterator: out of memory");
        }
    }
    if (s == KURA_OK)
        s = version_add_iters(p->v, fill_cache, its, n, cap);
    *pin_out = p; /* even on failure: the caller frees what was added, then unpins */
    return s;
}

void lsm_unpin(void *pin_arg)
{
    lsm_pin *p = pin_arg;
    if (!p)
        return;
    unpin(p);
    free(p);
}

/*
 * Every use of an SSTable's reader goes through a pinned version (lsm_get, iterators) or the
 * base version a flush or compaction pins, and pins are only taken under mu. So with mu held,
 * a current version referenced by the tree alone is used by no one, nor is any of its files
 * referenced by this version alone (a file also in an older version some iterator still pins
 * has more references), and no one can start using them until mu is released. The acquire
 * loads pair with the release in version_unref/file_meta_unref: what the last user did
 * happens before the unload.
 */
void lsm_unload_tables(lsm_tree *t)
{
    kmutex_lock(&t->mu);
    version *v = t->vs.current;
    if (__atomic_load_n(&v->refs, __ATOMIC_ACQUIRE) == 1)
        for (int l = 0; l < LSM_LEVELS; l++)
            for (size_t i = 0; i < v->nfiles[l]; i++)
                if (__atomic_load_n(&v->files[l][i]->refs, __ATOMIC_ACQUIRE) == 1 &&
                    sst_reader_unload(v->files[l][i]->reader))
                    __atomic_add_fetch(&t->sh->table_unloads, 1, __ATOMIC_RELAXED);
    kmutex_unlock(&t->mu);
}

void lsm_add_stats(lsm_tree *t, kura_stats *st)
{
    kmutex_lock(&t->mu);
    st->memtable_bytes += mt_usage(t->mem) + (t->imm ? mt_usage(t->imm) : 0);
    for (int l = 0; l < LSM_LEVELS; l++) {
        const version *v = t->vs.current;
        st->sstable_files += v->nfiles[l];
        st->sstable_bytes += version_level_bytes(v, l);
        for (size_t i = 0; i < v->nfiles[l]; i++)
            st->table_index_bytes += sst_reader_memory(v->files[l][i]->reader);
    }
    st->wal_bytes += t->wal_bytes_live + (t->wal ? wal_writer_size(t->wal) : 0);
    if (t->bg_error != KURA_OK)
        st->readonly_partitions++;
    kmutex_unlock(&t->mu);
}

kura_status lsm_sync_wal(lsm_tree *t)
{
    kmutex_lock(&t->wal_sync_mu);
    kmutex_lock(&t->wal_mu);
    wal_writer *w = t->wal;
    kmutex_unlock(&t->wal_mu);
    kura_status s = KURA_OK;
    if (w && !wal_writer_failed(w) && wal_writer_synced(w) < wal_writer_size(w))
        s = wal_writer_sync(w);
    kmutex_unlock(&t->wal_sync_mu);
    if (s != KURA_OK) {
        kmutex_lock(&t->mu);
        lsm_set_error(t, s);
        kmutex_unlock(&t->mu);
    }
    return s;
}

/*
 * shadow.c - This file contains the rebuild of an index under new trees (runtime.h,
 * "Rebuilding an index"): attaching the new trees as the index's shadow, its backfill puts and
 * its first checkpoint, and the swap that makes them the index's, or the abort.
 *
 * Why a shadow and not a rebuild in place: the index stays in use while it is rebuilt (its
 * readers read the old trees, its checkpoints and its share of WAL retention go on), and a
 * crash at any point finds either the old trees, named by the table's definition, or the new
 * ones complete (the caller names them in the definition only after idx_rt_shadow_built).
 *
 * The shadow is applied what the index is applied, in the same rt_apply_batch under the same
 * lock held shared (apply.c), from the batches allocated after its s0 on: the same argument as
 * idx_rt_add's (the attach holds the lock exclusively while it reads s0, so a batch allocated
 * later is applied after the attach). The swap exchanges the trees and the applied vectors of
 * the index and its shadow under the lock held exclusively, so no batch is applied to one and
 * not the other; the struct of the detached shadow (now holding the old trees) stays allocated
 * (removed) so a thread that loaded its pointer reads nothing freed, and every place that
 * reads its partitions does so under the lock, where `removed` is checked first.
 */
#include "index/runtime_int.h"

#include <stdlib.h>

#include "util/status.h"

kura_status idx_rt_shadow_begin(idx_runtime *rt, uint32_t pos, lsm_tree **parts, uint32_t nparts,
                                uint64_t *s0_out)
{
    uint64_t *applied = calloc(rt->nbase, sizeof *applied);
    rt_index *fresh = calloc(1, sizeof *fresh);
    if (!applied || !fresh) {
        free(applied);
        free(fresh);
        return kura_err(KURA_E_NOMEM, "index runtime: out of memory");
    }
    pthread_rwlock_wrlock(&rt->lock);
    kura_status s = KURA_OK;
    rt_index *x = pos < rt->nix ? &rt->ix[pos] : NULL;
    if (!x || x->building || x->removed)
        s = kura_err(KURA_E_INVALID, "table %s: index %u cannot be rebuilt now", rt->table_name,
                     pos);
    else if (rt_shadow_of(x))
        s = kura_err(KURA_E_RESOURCE_IN_USE, "table %s: index %s is being rebuilt",
                     rt->table_name, x->def->name);
    if (s != KURA_OK) {
        pthread_rwlock_unlock(&rt->lock);
        free(applied);
        free(fresh);
        return s;
    }
    rt_index *sh = x->shadow ? x->shadow : fresh;
    if (sh != fresh)
        free(fresh);
    free(sh->applied); /* the trees of an earlier rebuild's detached side */
    sh->def = x->def;
    sh->parts = parts;
    sh->nparts = nparts;
    sh->applied = applied;
    __atomic_store_n(&sh->since_switch, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sh->full, false, __ATOMIC_RELAXED);
    sh->building = true;
    sh->removed = false;
    for (uint32_t p = 0; p < nparts; p++) /* the backfill's puts come in at s0 */
        lsm_keep_tombstones(parts[p], true);
    sh->s0 = __atomic_load_n(&rt->sh->last_alloc, __ATOMIC_SEQ_CST);
    __atomic_store_n(&x->shadow, sh, __ATOMIC_RELEASE);
    *s0_out = sh->s0;
    pthread_rwlock_unlock(&rt->lock);
    return KURA_OK;
}

/* The attached shadow of index pos (the caller attached it), or NULL. */
static rt_index *shadow_at(idx_runtime *rt, uint32_t pos)
{
    pthread_rwlock_rdlock(&rt->lock);
    rt_index *sh = pos < rt->nix ? rt_shadow_of(&rt->ix[pos]) : NULL;
    pthread_rwlock_unlock(&rt->lock);
    return sh;
}

kura_status idx_rt_shadow_put(idx_runtime *rt, uint32_t pos, uint64_t s0, const uint8_t *key,
                              size_t klen, const uint8_t *value, size_t vlen)
{
    rt_index *sh = shadow_at(rt, pos);
    if (!sh)
        return kura_err(KURA_E_INVALID, "table %s: index %u has no rebuild", rt->table_name, pos);
    return rt_put_at(rt, sh, s0, key, klen, value, vlen);
}

kura_status idx_rt_shadow_built(idx_runtime *rt, uint32_t pos, uint64_t s0)
{
    rt_index *sh = shadow_at(rt, pos);
    if (!sh)
        return kura_err(KURA_E_INVALID, "table %s: index %u has no rebuild", rt->table_name, pos);
    return rt_built(rt, sh, s0);
}

#define SWAP(type, a, b)                                                                           \
    do {                                                                                           \
        type tmp_ = (a);                                                                           \
        (a) = (b);                                                                                 \
        (b) = tmp_;                                                                                \
    } while (0)

void idx_rt_shadow_swap(idx_runtime *rt, uint32_t pos)
{
    pthread_rwlock_wrlock(&rt->lock);
    rt_index *x = &rt->ix[pos], *sh = rt_shadow_of(x);
    if (sh) {
        SWAP(lsm_tree **, x->parts, sh->parts);
        SWAP(uint32_t, x->nparts, sh->nparts);
        SWAP(uint64_t *, x->applied, sh->applied);
        uint64_t since = __atomic_load_n(&sh->since_switch, __ATOMIC_RELAXED);
        bool full = __atomic_load_n(&sh->full, __ATOMIC_RELAXED);
        __atomic_store_n(&x->since_switch, since, __ATOMIC_RELAXED);
        __atomic_store_n(&x->full, full, __ATOMIC_RELAXED);
        __atomic_add_fetch(&x->checkpoints, __atomic_load_n(&sh->checkpoints, __ATOMIC_RELAXED),
                           __ATOMIC_RELAXED);
        __atomic_store_n(&sh->since_switch, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&sh->full, false, __ATOMIC_RELAXED);
        __atomic_store_n(&sh->checkpoints, 0, __ATOMIC_RELAXED);
        sh->removed = true; /* the old trees: written no more */
    }
    pthread_rwlock_unlock(&rt->lock);
    rt_release_wals(rt);
}

void idx_rt_shadow_abort(idx_runtime *rt, uint32_t pos)
{
    pthread_rwlock_wrlock(&rt->lock);
    rt_index *sh = pos < rt->nix ? rt_shadow_of(&rt->ix[pos]) : NULL;
    if (sh) {
        sh->removed = true;
        sh->building = false;
        __atomic_store_n(&sh->since_switch, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&sh->full, false, __ATOMIC_RELAXED);
        __atomic_store_n(&sh->checkpoints, 0, __ATOMIC_RELAXED);
    }
    pthread_rwlock_unlock(&rt->lock);
    rt_release_wals(rt);
}

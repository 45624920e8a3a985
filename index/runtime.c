/*
 * runtime.c - opening and closing the indexes of a table: recovery from the base WALs, the
 * commit hooks, checkpoints at close, waits and statistics (runtime.h).
 *
 * Recovery. Every partition of an index records, with each flush, the vector of base
 * sequences whose entries it holds durably; an index's durable checkpoint is the smallest of
 * its partitions' vectors. At open each base partition's WAL is replayed from the smallest
 * checkpoint of any index, and each batch is applied to the indexes whose checkpoint it is
 * past. Applying is idempotent (an entry put or deleted again at the same sequence leaves the
 * same state), so replaying from a checkpoint older than necessary is harmless; the base
 * partitions keep their WAL segments until every index has a durable checkpoint past them
 * (rt_release_wals), so the replay never starts after a hole.
 */
#include "index/runtime_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/coding.h"
#include "util/hash.h"
#include "util/status.h"

static kura_status rt_hook(void *arg, lsm_tree *t, const uint8_t *rep, size_t len)
{
    rt_base *bc = arg;
    idx_runtime *rt = bc->rt;
    kura_status s = KURA_OK;
    if (rt->has_lsi) {
        s = rt_apply_batch(rt, bc->b, rep, len, IDX_LOCAL);
        if (s == KURA_OK)
            s = rt_checkpoint_kind(rt, IDX_LOCAL);
    }
    if (s == KURA_OK && __atomic_load_n(&rt->has_gsi, __ATOMIC_SEQ_CST))
        s = rt_enqueue(rt, bc->b, rep, len);
    return s;
}

static void rt_free(idx_runtime *rt)
{
    if (!rt)
        return;
    for (uint32_t i = 0; rt->ix && i < RT_MAX_INDEXES; i++) {
        free(rt->ix[i].applied);
        free(rt->ix[i].replay_from);
        if (rt->ix[i].shadow)
            free(rt->ix[i].shadow->applied);
        free(rt->ix[i].shadow);
    }
    free(rt->ix);
    free(rt->bctx);
    free(rt->table_name);
    free(rt->pk_name);
    free(rt->sk_name);
    pthread_rwlock_destroy(&rt->lock);
    kcond_destroy(&rt->qcv);
    kmutex_destroy(&rt->qmu);
    free(rt);
}

static kura_status rt_new(const idx_rt_args *a, idx_runtime **out)
{
    idx_runtime *rt = calloc(1, sizeof *rt);
    if (!rt)
        return kura_err(KURA_E_NOMEM, "index runtime: out of memory");
    pthread_rwlockattr_t at;
    pthread_rwlockattr_init(&at);
    pthread_rwlockattr_setkind_np(&at, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&rt->lock, &at);
    pthread_rwlockattr_destroy(&at);
    kmutex_init(&rt->qmu);
    kcond_init(&rt->qcv);
    rt->sh = a->sh;
    rt->sync = a->sync;
    rt->base = a->base;
    rt->nbase = a->nbase;
    rt->nix = a->nindexes;
    rt->qmax = a->queue_bytes ? a->queue_bytes : (32u << 20);
    rt->switch_bytes = a->switch_bytes ? a->switch_bytes : (64u << 20);
    rt->table_name = strdup(a->table_name);
    rt->charge = a->charge;
    rt->charge_arg = a->charge_arg;
    rt->pk_name = strdup(a->ks.pk_name);
    rt->sk_name = a->ks.sk_name ? strdup(a->ks.sk_name) : NULL;
    rt->ks = a->ks;
    rt->ks.pk_name = rt->pk_name;
    rt->ks.sk_name = rt->sk_name;
    rt->bctx = calloc(a->nbase, sizeof *rt->bctx);
    rt->ix = calloc(RT_MAX_INDEXES, sizeof *rt->ix);
    bool ok = rt->table_name && rt->pk_name && (!a->ks.sk_name || rt->sk_name) && rt->bctx &&
              rt->ix && a->nindexes <= RT_MAX_INDEXES;
    for (uint32_t i = 0; ok && i < a->nindexes; i++) {
        rt_index *x = &rt->ix[i];
        x->def = a->indexes[i].def;
        x->parts = a->indexes[i].parts;
        x->nparts = a->indexes[i].nparts;
        x->building = a->indexes[i].building;
        for (uint32_t p = 0; x->building && p < x->nparts; p++)
            lsm_keep_tombstones(x->parts[p], true);
        ok = (x->applied = calloc(a->nbase, sizeof *x->applied)) != NULL;
        rt->has_lsi |= x->def->kind == IDX_LOCAL;
        rt->has_gsi |= x->def->kind == IDX_GLOBAL;
    }
    for (uint32_t b = 0; ok && b < a->nbase; b++)
        rt->bctx[b] = (rt_base){rt, b};
    if (!ok) {
        rt_free(rt);
        return kura_err(KURA_E_NOMEM, "index runtime: out of memory");
    }
    *out = rt;
    return KURA_OK;
}

typedef struct replay_arg {
    idx_runtime *rt;
    uint32_t b;
} replay_arg;

static kura_status replay_rec(void *arg, const uint8_t *rep, size_t len)
{
    replay_arg *r = arg;
    return rt_apply_batch(r->rt, r->b, rep, len, RT_REPLAY);
}

/* Brings every index up to the end of the base WALs. */
static kura_status rt_recover(idx_runtime *rt)
{
    uint64_t *d = malloc(rt->nbase * sizeof *d), *from = malloc(rt->nbase * sizeof *from);
    kura_status s = d && from ? KURA_OK : kura_err(KURA_E_NOMEM, "index recovery: out of memory");
    for (uint32_t b = 0; s == KURA_OK && b < rt->nbase; b++)
        from[b] = UINT64_MAX;
    for (uint32_t i = 0; i < rt->nix && s == KURA_OK; i++) {
        rt_index *x = &rt->ix[i];
        if (x->building) { /* built again from a snapshot: the replay passes it by */
            for (uint32_t b = 0; b < rt->nbase; b++)
                x->applied[b] = UINT64_MAX;
            continue;
        }
        if (s == KURA_OK && !(x->replay_from = malloc(rt->nbase * sizeof *x->replay_from)))
            s = kura_err(KURA_E_NOMEM, "index recovery: out of memory");
        if (s == KURA_OK)
            s = rt_durable(rt, x, d);
        for (uint32_t b = 0; s == KURA_OK && b < rt->nbase; b++) {
            x->applied[b] = x->replay_from[b] = d[b];
            if (d[b] < from[b])
                from[b] = d[b];
        }
    }
    for (uint32_t b = 0; b < rt->nbase && s == KURA_OK && rt->nix; b++) {
        if (from[b] == UINT64_MAX)
            continue; /* only building indexes */
        replay_arg r = {rt, b};
        s = lsm_wal_replay(rt->base[b], from[b], replay_rec, &r);
        if (s != KURA_OK)
            s = kura_err(s, "table %s: rebuilding its indexes from the WAL: %s", rt->table_name,
                         kura_last_error());
    }
    for (uint32_t i = 0; i < rt->nix; i++) {
        free(rt->ix[i].replay_from); /* from here on batches come in sequence order */
        rt->ix[i].replay_from = NULL;
        if (rt->ix[i].building)
            for (uint32_t b = 0; b < rt->nbase; b++)
                rt->ix[i].applied[b] = 0; /* idx_rt_built sets it */
    }
    free(d);
    free(from);
    return s;
}

kura_status idx_rt_open(const idx_rt_args *a, idx_runtime **rt_out)
{
    idx_runtime *rt = NULL;
    kura_status s = rt_new(a, &rt);
    if (s != KURA_OK)
        return s;
    s = rt_recover(rt);
    if (s == KURA_OK)
        rt_release_wals(rt);
    if (s == KURA_OK && rt->has_gsi)
        s = rt_applier_start(rt);
    if (s != KURA_OK) {
        rt_free(rt);
        return s;
    }
    for (uint32_t b = 0; b < rt->nbase; b++)
        lsm_set_commit_hook(rt->base[b], rt_hook, &rt->bctx[b]);
    for (uint32_t i = 0; i < rt->nix; i++)
        if (rt->ix[i].building)
            rt->ix[i].s0 = __atomic_load_n(&rt->sh->last_alloc, __ATOMIC_SEQ_CST);
    *rt_out = rt;
    return KURA_OK;
}

uint64_t idx_rt_s0(idx_runtime *rt, uint32_t pos)
{
    return rt->ix[pos].s0;
}

uint64_t idx_rt_seq_now(idx_runtime *rt)
{
    return __atomic_load_n(&rt->sh->last_alloc, __ATOMIC_ACQUIRE);
}

kura_status idx_rt_add(idx_runtime *rt, const idx_rt_index *ix, uint32_t *pos_out,
                       uint64_t *s0_out)
{
    if (ix->def->kind != IDX_GLOBAL)
        return kura_err(KURA_E_INVALID, "only a GSI can be added to a table");
    uint64_t *applied = calloc(rt->nbase, sizeof *applied);
    if (!applied)
        return kura_err(KURA_E_NOMEM, "index runtime: out of memory");
    pthread_rwlock_wrlock(&rt->lock);
    if (rt->nix == RT_MAX_INDEXES) {
        pthread_rwlock_unlock(&rt->lock);
        free(applied);
        return kura_err(KURA_E_LIMIT_EXCEEDED, "table %s has %d indexes", rt->table_name,
                        RT_MAX_INDEXES);
    }
    uint32_t pos = rt->nix;
    rt->ix[pos] = (rt_index){.def = ix->def, .parts = ix->parts, .nparts = ix->nparts,
                             .applied = applied, .building = true};
    for (uint32_t p = 0; p < ix->nparts; p++) /* the backfill's puts come in at s0 */
        lsm_keep_tombstones(ix->parts[p], true);
    /* Every batch allocated after s0 reaches the new index: its hook runs after its
     * sequences are allocated, so it sees has_gsi (the store comes before the load of s0,
     * both sequentially consistent, as are the hook's load and the allocation), and no
     * applier runs while the lock is held. */
    bool start = !__atomic_load_n(&rt->has_gsi, __ATOMIC_SEQ_CST);
    __atomic_store_n(&rt->has_gsi, true, __ATOMIC_SEQ_CST);
    uint64_t s0 = __atomic_load_n(&rt->sh->last_alloc, __ATOMIC_SEQ_CST);
    rt->ix[pos].s0 = s0;
    __atomic_store_n(&rt->nix, pos + 1, __ATOMIC_RELEASE);
    pthread_rwlock_unlock(&rt->lock);
    kura_status s = KURA_OK;
    kmutex_lock(&rt->qmu);
    if (start && !rt->thread_started)
        s = rt_applier_start(rt);
    kmutex_unlock(&rt->qmu);
    if (s != KURA_OK)
        return s;
    *pos_out = pos;
    *s0_out = s0;
    return KURA_OK;
}

kura_status rt_put_at(idx_runtime *rt, rt_index *x, uint64_t s0, const uint8_t *key, size_t klen,
                      const uint8_t *value, size_t vlen)
{
    lsm_batch b;
    lsm_batch_init(&b);
    kura_status s = lsm_batch_put(&b, key, klen, value, vlen);
    if (s == KURA_OK) {
        lsm_rep_set_seq(b.rep.data, s0);
        uint32_t part = x->nparts == 1 ? 0 : kura_hash_bucket(dec_fixed64_be(key), x->nparts);
        s = lsm_apply(x->parts[part], b.rep.data, b.rep.len);
        if (s == KURA_OK && lsm_mem_full(x->parts[part]))
            __atomic_store_n(&x->full, true, __ATOMIC_RELAXED);
    }
    lsm_batch_free(&b);
    if (s == KURA_OK)
        s = rt_maybe_checkpoint(rt, x, false); /* memory: its memtables are flushed as usual */
    return s;
}

kura_status idx_rt_backfill_put(idx_runtime *rt, uint32_t pos, uint64_t s0, const uint8_t *key,
                                size_t klen, const uint8_t *value, size_t vlen)
{
    return rt_put_at(rt, &rt->ix[pos], s0, key, klen, value, vlen);
}

kura_status rt_built(idx_runtime *rt, rt_index *x, uint64_t s0)
{
    pthread_rwlock_wrlock(&rt->lock);
    /* the snapshot holds every batch up to s0; later ones were applied in order */
    for (uint32_t b = 0; b < rt->nbase; b++)
        if (__atomic_load_n(&x->applied[b], __ATOMIC_ACQUIRE) < s0)
            __atomic_store_n(&x->applied[b], s0, __ATOMIC_RELEASE);
    /* Counted for WAL retention before the checkpoint below is durable: until then its
     * durable checkpoint is an older one (none: 0), which keeps every segment it needs. Set
     * after the checkpoint, another index's checkpoint could release segments in between
     * that a recovery of this one from its first checkpoint still needs. */
    x->building = false;
    pthread_rwlock_unlock(&rt->lock);
    kura_status s = rt_maybe_checkpoint(rt, x, true);
    for (uint32_t p = 0; p < x->nparts && s == KURA_OK; p++)
        s = lsm_wait_flushed(x->parts[p]);
    if (s != KURA_OK) {
        pthread_rwlock_wrlock(&rt->lock);
        x->building = true; /* built again from scratch: it must not hold the WAL */
        pthread_rwlock_unlock(&rt->lock);
        return s;
    }
    for (uint32_t p = 0; p < x->nparts; p++)
        lsm_keep_tombstones(x->parts[p], false);
    rt_release_wals(rt);
    return KURA_OK;
}

kura_status idx_rt_built(idx_runtime *rt, uint32_t pos, uint64_t s0)
{
    return rt_built(rt, &rt->ix[pos], s0);
}

void idx_rt_remove(idx_runtime *rt, uint32_t pos)
{
    pthread_rwlock_wrlock(&rt->lock);
    if (pos < rt->nix)
        rt->ix[pos].removed = true;
    pthread_rwlock_unlock(&rt->lock);
    rt_release_wals(rt);
}

kura_status idx_rt_checkpoint(idx_runtime *rt)
{
    kura_status s = KURA_OK;
    for (uint32_t i = 0; i < rt->nix && s == KURA_OK; i++) {
        if (rt->ix[i].removed)
            continue; /* its trees may be gone */
        s = rt_maybe_checkpoint(rt, &rt->ix[i], true);
        for (uint32_t p = 0; p < rt->ix[i].nparts && s == KURA_OK; p++)
            s = lsm_wait_flushed(rt->ix[i].parts[p]);
    }
    if (s == KURA_OK)
        rt_release_wals(rt);
    return s;
}

kura_status idx_rt_close(idx_runtime *rt)
{
    if (!rt)
        return KURA_OK;
    for (uint32_t b = 0; b < rt->nbase; b++)
        lsm_set_commit_hook(rt->base[b], NULL, NULL);
    rt_applier_stop(rt);
    kura_status s = rt->error == KURA_OK ? idx_rt_checkpoint(rt) : KURA_OK;
    rt_free(rt);
    return s;
}

void idx_rt_drop(idx_runtime *rt)
{
    if (!rt)
        return;
    for (uint32_t b = 0; b < rt->nbase; b++)
        lsm_set_commit_hook(rt->base[b], NULL, NULL);
    idx_rt_pause(rt, true);
    rt_applier_stop(rt);
    rt_free(rt);
}

kura_status idx_rt_wait(idx_runtime *rt, uint32_t i, uint64_t timeout_ms)
{
    if (i >= rt->nix || rt->ix[i].def->kind == IDX_LOCAL)
        return KURA_OK;
    uint64_t deadline = know_ns() + timeout_ms * 1000000u;
    kmutex_lock(&rt->qmu);
    uint64_t target = rt->enqueued;
    kura_status s = KURA_OK;
    while (rt->done < target && s == KURA_OK) {
        uint64_t now = know_ns();
        if (now >= deadline)
            s = kura_err(KURA_E_BUSY, "index %s of table %s: still %llu writes behind after "
                                      "%llu ms",
                         rt->ix[i].def->name, rt->table_name,
                         (unsigned long long)(target - rt->done), (unsigned long long)timeout_ms);
        else
            kcond_timedwait(&rt->qcv, &rt->qmu, deadline - now);
    }
    /* a stopped applier counts what it dropped as done: the index does not have it */
    if (s == KURA_OK && rt->error != KURA_OK)
        s = kura_err(rt->error, "index %s of table %s: its applier stopped after an error (the "
                                "index catches up when the database is reopened): %s",
                     rt->ix[i].def->name, rt->table_name, rt->error_msg);
    kmutex_unlock(&rt->qmu);
    return s;
}

void idx_rt_stats_get(idx_runtime *rt, uint32_t i, idx_rt_stats *st)
{
    memset(st, 0, sizeof *st);
    if (i >= rt->nix)
        return;
    st->checkpoints = __atomic_load_n(&rt->ix[i].checkpoints, __ATOMIC_RELAXED);
    if (rt->ix[i].def->kind == IDX_LOCAL)
        return; /* applied with the base write: never behind */
    kmutex_lock(&rt->qmu);
    st->lag_writes = rt->enqueued - rt->done;
    uint64_t oldest = rt->cur_t_ns ? rt->cur_t_ns : rt->head ? rt->head->t_ns : 0;
    uint64_t now = know_ns();
    st->lag_ms = oldest && now > oldest ? (now - oldest) / 1000000u : 0;
    st->applied = rt->applied_count;
    st->queue_bytes = rt->qbytes;
    st->error = rt->error;
    kmutex_unlock(&rt->qmu);
}

void idx_rt_pause(idx_runtime *rt, bool paused)
{
    kmutex_lock(&rt->qmu);
    rt->paused = paused;
    kcond_broadcast(&rt->qcv);
    kmutex_unlock(&rt->qmu);
}

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

#include "util/status.h"

static kura_status rt_hook(void *arg, lsm_tree *t, const uint8_t *rep, size_t len)
{
    rt_base *bc = arg;
    idx_runtime *rt = bc->rt;
    kura_status s = KURA_OK;
    if (rt->has_lsi) {
        s = rt_apply_batch(rt, bc->b, rep, len, IDX_LOCAL);
        for (uint32_t i = 0; i < rt->nix && s == KURA_OK; i++)
            if (rt->ix[i].def->kind == IDX_LOCAL)
                s = rt_maybe_checkpoint(rt, &rt->ix[i], false);
    }
    if (s == KURA_OK && rt->has_gsi)
        s = rt_enqueue(rt, bc->b, rep, len);
    return s;
}

static void rt_free(idx_runtime *rt)
{
    if (!rt)
        return;
    for (uint32_t i = 0; rt->ix && i < rt->nix; i++)
        free(rt->ix[i].applied);
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
    rt->pk_name = strdup(a->ks.pk_name);
    rt->sk_name = a->ks.sk_name ? strdup(a->ks.sk_name) : NULL;
    rt->ks = a->ks;
    rt->ks.pk_name = rt->pk_name;
    rt->ks.sk_name = rt->sk_name;
    rt->bctx = calloc(a->nbase, sizeof *rt->bctx);
    rt->ix = calloc(a->nindexes ? a->nindexes : 1, sizeof *rt->ix);
    bool ok = rt->table_name && rt->pk_name && (!a->ks.sk_name || rt->sk_name) && rt->bctx &&
              rt->ix;
    for (uint32_t i = 0; ok && i < a->nindexes; i++) {
        rt_index *x = &rt->ix[i];
        x->def = a->indexes[i].def;
        x->parts = a->indexes[i].parts;
        x->nparts = a->indexes[i].nparts;
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
    return rt_apply_batch(r->rt, r->b, rep, len, -1);
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
        s = rt_durable(rt, x, d);
        for (uint32_t b = 0; s == KURA_OK && b < rt->nbase; b++) {
            x->applied[b] = d[b];
            if (d[b] < from[b])
                from[b] = d[b];
        }
    }
    for (uint32_t b = 0; b < rt->nbase && s == KURA_OK && rt->nix; b++) {
        replay_arg r = {rt, b};
        s = lsm_wal_replay(rt->base[b], from[b], replay_rec, &r);
        if (s != KURA_OK)
            s = kura_err(s, "table %s: rebuilding its indexes from the WAL: %s", rt->table_name,
                         kura_last_error());
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
    for (uint32_t b = 0; b < rt->nbase && rt->nix; b++)
        lsm_set_commit_hook(rt->base[b], rt_hook, &rt->bctx[b]);
    *rt_out = rt;
    return KURA_OK;
}

kura_status idx_rt_checkpoint(idx_runtime *rt)
{
    kura_status s = KURA_OK;
    for (uint32_t i = 0; i < rt->nix && s == KURA_OK; i++) {
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

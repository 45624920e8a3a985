/*
 * engine_lmdb.c - the LMDB adapter of kura-bench (lmdb.h).
 *
 * LMDB is a copy-on-write B+tree in one memory-mapped file, with no WAL: a commit writes
 * the dirty pages and the meta page. Settings: a map of 8 GiB (the file grows only as pages
 * are used, so this is free), MDB_NOSYNC for the fill workloads (commits are written but
 * not synced: LMDB's "no fsync per write", which unlike a WAL engine may lose the last
 * transactions but never corrupts the tree), LMDB's default flags for fillsync (every commit
 * synced). MDB_NOTLS always: read transactions belong to bench sessions rather than to
 * threads, so a session can be handed from the thread that opened it to the one that uses
 * it. LMDB has no block cache (it reads through the OS page cache) and no compaction.
 *
 * Every put is one write transaction (LMDB serialises writers on its writer lock). A
 * session keeps one read transaction that each get renews and resets, the cheap way LMDB
 * offers to read the latest state repeatedly.
 */
#include "bench/engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <lmdb.h>

#include "util/status.h"

#define LMDB_MAP_BYTES (8ull << 30)

typedef struct lm_db {
    MDB_env *env;
    MDB_dbi dbi;
} lm_db;

typedef struct lm_sess {
    lm_db *db;
    MDB_txn *rtxn; /* reset between gets; NULL until the first get */
} lm_sess;

typedef struct lm_it {
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_val key, val;
    bool valid;
} lm_it;

static kura_status lm_error(const char *what, int rc)
{
    return kura_err(rc == ENOMEM ? KURA_E_NOMEM : rc == ENOSPC ? KURA_E_NOSPC : KURA_E_IO,
                    "lmdb %s: %s", what, mdb_strerror(rc));
}

static void lm_settings(const bench_engine_opts *o, char *buf, size_t cap)
{
    (void)o;
    snprintf(buf, cap,
             "%s; map size %llu GiB (sparse); MDB_NOTLS; one write transaction per put; "
             "fills: MDB_NOSYNC (commits written, not synced; no WAL); fillsync: default "
             "flags (every commit synced); no block cache (OS page cache); no compaction, "
             "no WAL (compact and recover do not apply)",
             MDB_VERSION_STRING, LMDB_MAP_BYTES >> 30);
}

/* Opens the environment and its main database; returns the LMDB error code. */
static int lm_open_env(lm_db *d, const char *dir, const bench_engine_opts *o,
                       const char **what_out)
{
    unsigned flags = MDB_NOTLS | (o->sync_writes ? 0 : MDB_NOSYNC);
    int rc;
    if ((rc = mdb_env_set_mapsize(d->env, LMDB_MAP_BYTES)) != 0) {
        *what_out = "set_mapsize";
        return rc;
    }
    if ((rc = mdb_env_set_maxreaders(d->env, 2 * o->threads + 16)) != 0) {
        *what_out = "set_maxreaders";
        return rc;
    }
    if ((rc = mdb_env_open(d->env, dir, flags, 0644)) != 0) {
        *what_out = "env_open";
        return rc;
    }
    MDB_txn *txn;
    if ((rc = mdb_txn_begin(d->env, NULL, 0, &txn)) != 0) {
        *what_out = "txn_begin";
        return rc;
    }
    if ((rc = mdb_dbi_open(txn, NULL, 0, &d->dbi)) != 0) {
        mdb_txn_abort(txn);
        *what_out = "dbi_open";
        return rc;
    }
    if ((rc = mdb_txn_commit(txn)) != 0) /* frees txn either way */
        *what_out = "txn_commit";
    return rc;
}

static kura_status lm_open(const char *dir, const bench_engine_opts *o, bench_db **db_out)
{
    lm_db *d = calloc(1, sizeof *d);
    if (d == NULL)
        return kura_err(KURA_E_NOMEM, "lmdb adapter");
    int rc = mdb_env_create(&d->env);
    if (rc != 0) {
        free(d);
        return lm_error("env_create", rc);
    }
    const char *what = NULL;
    if ((rc = lm_open_env(d, dir, o, &what)) != 0) {
        mdb_env_close(d->env);
        free(d);
        return lm_error(what, rc);
    }
    *db_out = (bench_db *)d;
    return KURA_OK;
}

static kura_status lm_close(bench_db *db)
{
    lm_db *d = (lm_db *)db;
    mdb_env_close(d->env);
    free(d);
    return KURA_OK;
}

static kura_status lm_sess_open(bench_db *db, bench_sess **sess_out)
{
    lm_sess *s = calloc(1, sizeof *s);
    if (s == NULL)
        return kura_err(KURA_E_NOMEM, "lmdb session");
    s->db = (lm_db *)db;
    *sess_out = (bench_sess *)s;
    return KURA_OK;
}

static void lm_sess_close(bench_sess *bs)
{
    lm_sess *s = (lm_sess *)bs;
    if (s == NULL)
        return;
    if (s->rtxn != NULL)
        mdb_txn_abort(s->rtxn);
    free(s);
}

static kura_status lm_put(bench_sess *bs, const void *key, size_t klen, const void *val,
                          size_t vlen)
{
    lm_sess *s = (lm_sess *)bs;
    MDB_txn *txn;
    int rc = mdb_txn_begin(s->db->env, NULL, 0, &txn);
    if (rc != 0)
        return lm_error("put txn_begin", rc);
    MDB_val k = {klen, (void *)key}, v = {vlen, (void *)val};
    if ((rc = mdb_put(txn, s->db->dbi, &k, &v, 0)) != 0) {
        mdb_txn_abort(txn);
        return lm_error("put", rc);
    }
    if ((rc = mdb_txn_commit(txn)) != 0) /* frees txn either way */
        return lm_error("put commit", rc);
    return KURA_OK;
}

static kura_status lm_get(bench_sess *bs, const void *key, size_t klen, kbuf *val,
                          bool *found_out)
{
    lm_sess *s = (lm_sess *)bs;
    int rc = s->rtxn == NULL ? mdb_txn_begin(s->db->env, NULL, MDB_RDONLY, &s->rtxn)
                             : mdb_txn_renew(s->rtxn);
    if (rc != 0)
        return lm_error("get txn", rc);
    MDB_val k = {klen, (void *)key}, v;
    rc = mdb_get(s->rtxn, s->db->dbi, &k, &v);
    kura_status st = KURA_OK;
    if (rc == 0) {
        val->len = 0; /* copy while the read transaction still pins the page */
        if (!kbuf_append(val, v.mv_data, v.mv_size))
            st = kura_err(KURA_E_NOMEM, "lmdb get: value of %zu bytes", v.mv_size);
    } else if (rc != MDB_NOTFOUND) {
        st = lm_error("get", rc);
    }
    mdb_txn_reset(s->rtxn);
    if (st == KURA_OK)
        *found_out = rc == 0;
    return st;
}

static kura_status lm_iter_open(bench_sess *bs, bench_it **it_out)
{
    lm_sess *s = (lm_sess *)bs;
    lm_it *it = calloc(1, sizeof *it);
    if (it == NULL)
        return kura_err(KURA_E_NOMEM, "lmdb iterator");
    int rc = mdb_txn_begin(s->db->env, NULL, MDB_RDONLY, &it->txn);
    if (rc != 0) {
        free(it);
        return lm_error("iterator txn_begin", rc);
    }
    if ((rc = mdb_cursor_open(it->txn, s->db->dbi, &it->cur)) != 0) {
        mdb_txn_abort(it->txn);
        free(it);
        return lm_error("cursor_open", rc);
    }
    *it_out = (bench_it *)it;
    return KURA_OK;
}

static void lm_iter_close(bench_it *bit)
{
    lm_it *it = (lm_it *)bit;
    if (it == NULL)
        return;
    mdb_cursor_close(it->cur);
    mdb_txn_abort(it->txn);
    free(it);
}

static kura_status lm_iter_move(lm_it *it, MDB_cursor_op op, const char *what)
{
    int rc = mdb_cursor_get(it->cur, &it->key, &it->val, op);
    it->valid = rc == 0;
    if (rc != 0 && rc != MDB_NOTFOUND)
        return lm_error(what, rc);
    return KURA_OK;
}

static kura_status lm_iter_seek(bench_it *bit, const void *key, size_t klen)
{
    lm_it *it = (lm_it *)bit;
    if (key == NULL)
        return lm_iter_move(it, MDB_FIRST, "cursor first");
    it->key.mv_data = (void *)key;
    it->key.mv_size = klen;
    return lm_iter_move(it, MDB_SET_RANGE, "cursor set_range");
}

static kura_status lm_iter_next(bench_it *bit)
{
    return lm_iter_move((lm_it *)bit, MDB_NEXT, "cursor next");
}

static bool lm_iter_valid(const bench_it *bit)
{
    return ((const lm_it *)bit)->valid;
}

static const void *lm_iter_key(const bench_it *bit, size_t *klen_out)
{
    const lm_it *it = (const lm_it *)bit;
    *klen_out = it->key.mv_size;
    return it->key.mv_data;
}

static const void *lm_iter_value(const bench_it *bit, size_t *vlen_out)
{
    const lm_it *it = (const lm_it *)bit;
    *vlen_out = it->val.mv_size;
    return it->val.mv_data;
}

const bench_engine bench_engine_lmdb = {
    .name = "lmdb",
    .has_wal = false,
    .settings = lm_settings,
    .open = lm_open,
    .close = lm_close,
    .sess_open = lm_sess_open,
    .sess_close = lm_sess_close,
    .put = lm_put,
    .get = lm_get,
    .iter_open = lm_iter_open,
    .iter_close = lm_iter_close,
    .iter_seek = lm_iter_seek,
    .iter_next = lm_iter_next,
    .iter_valid = lm_iter_valid,
    .iter_key = lm_iter_key,
    .iter_value = lm_iter_value,
    .compact = NULL, /* a B+tree that reuses free pages: nothing to compact */
};

/*
 * txn_log.c - the transaction log and the atomic commit of pieces in several partitions
 * (txn.h; docs/architecture.md, "Transactions").
 *
 * Creation is atomic: the log is built as DIR/#txn.new, closed, renamed to DIR/#txn and the
 * rename made durable; a #txn.new found at open is the rest of an interrupted creation (no
 * transaction can have committed before the log existed) and is removed.
 */
#include "engine/txn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/coding.h"
#include "util/ikey.h"
#include "util/status.h"

#define TXN_TREE "#txn"
#define TXN_TREE_NEW "#txn.new"

enum { COMMIT_KEY = 9, TXN_SYNC_THREADS = 4, TXN_LEAD_ATTEMPTS = 8 };

static void commit_key(uint8_t key[COMMIT_KEY], uint64_t id)
{
    key[0] = 'c';
    enc_fixed64_be(key + 1, id);
}

static kura_status committed(void *arg, uint64_t id, bool *committed_out, uint64_t *base_out)
{
    kura_db *db = arg;
    uint8_t key[COMMIT_KEY];
    commit_key(key, id);
    kbuf v = KBUF_INIT;
    /* at the newest sequence, not the visible one: a commit record is written after its
     * transaction's range, so it becomes visible after it; once written it is final (and
     * durable: write_commit), and a stream reader must not take the transaction for aborted
     * in between */
    kura_status s = lsm_get(db->txn->parts[0], key, sizeof key, IKEY_MAX_SEQ, false, &v);
    *committed_out = s == KURA_OK;
    *base_out = 0;
    if (s == KURA_OK && v.len == 8)
        *base_out = dec_fixed64(v.data);
    else if (s == KURA_OK && v.len != 0) /* (empty: the first format) */
        s = kura_err(KURA_E_CORRUPTION, "%s: the commit record of transaction %llu has %zu "
                                         "bytes, not 8",
                     db->txn->dir, (unsigned long long)id, v.len);
    kbuf_free(&v);
    return s == KURA_E_NOT_FOUND ? KURA_OK : s;
}

static kura_status sync_log(void *arg, lsm_tree *t)
{
    kura_db *db = arg;
    lsm_tree *log = db->txn->parts[0];
    return t == log ? KURA_OK : lsm_sync_wal(log);
}

static kura_tree *new_tree(kura_db *db, const char *name)
{
    kura_tree *t = calloc(1, sizeof *t);
    if (!t || !(t->name = strdup(name))) {
        free(t);
        kura_err(KURA_E_NOMEM, "transaction log: out of memory");
        return NULL;
    }
    t->db = db;
    t->nparts = 1;
    return t;
}

/* Whether DIR/name exists. */
static kura_status exists(kura_db *db, const char *name, bool *out)
{
    char **names = NULL;
    size_t n = 0;
    kura_status s = io_list_dir(db->io, db->dir, &names, &n);
    *out = false;
    for (size_t i = 0; s == KURA_OK && i < n; i++)
        *out = *out || !strcmp(names[i], name);
    io_free_names(names, n);
    return s;
}

static kura_status create_log(kura_db *db)
{
    char path[4096], to[4096];
    snprintf(path, sizeof path, "%s/%s", db->dir, TXN_TREE_NEW);
    snprintf(to, sizeof to, "%s/%s", db->dir, TXN_TREE);
    bool stale = false;
    kura_status s = exists(db, TXN_TREE_NEW, &stale);
    if (s == KURA_OK && stale) { /* an interrupted creation */
        tree_remove_dir_files(db->io, path);
        s = io_rmdir(db->io, path);
    }
    kura_tree *t = s == KURA_OK ? new_tree(db, TXN_TREE_NEW) : NULL;
    if (s == KURA_OK && !t)
        s = KURA_E_NOMEM;
    if (s == KURA_OK)
        s = tree_open_parts(db, t, true);
    for (uint32_t p = 0; t && t->parts && p < t->nparts; p++) {
        kura_status c = lsm_close(t->parts[p]);
        t->parts[p] = NULL;
        if (s == KURA_OK)
            s = c;
    }
    tree_close(t);
    if (s == KURA_OK)
        s = io_rename(db->io, path, to);
    if (s == KURA_OK)
        s = io_sync_dir(db->io, db->dir);
    return s;
}

kura_status txn_log_open(kura_db *db)
{
    bool have = false;
    kura_status s = exists(db, TXN_TREE, &have);
    if (s == KURA_OK && !have)
        s = create_log(db);
    kura_tree *t = s == KURA_OK ? new_tree(db, TXN_TREE) : NULL;
    if (s == KURA_OK && !t)
        s = KURA_E_NOMEM;
    if (s == KURA_OK)
        s = tree_open_parts(db, t, false);
    if (s != KURA_OK) {
        tree_close(t);
        return s;
    }
    if (!(db->txn_sync_pool = kpool_new(TXN_SYNC_THREADS))) {
        tree_close(t);
        return kura_err(KURA_E_NOMEM, "transaction log: cannot start its sync threads");
    }
    db->txn = t;
    db->sh.txn_arg = db;
    db->sh.txn_committed = committed;
    db->sh.txn_sync = sync_log;
    return KURA_OK;
}

kura_status txn_log_close(kura_db *db)
{
    db->sh.txn_sync = NULL; /* (every other tree is closed) */
    kpool_free(db->txn_sync_pool);
    db->txn_sync_pool = NULL;
    kura_tree *t = db->txn;
    if (!t)
        return KURA_OK;
    kura_status s = KURA_OK;
    for (uint32_t p = 0; t->parts && p < t->nparts; p++) {
        kura_status c = lsm_close(t->parts[p]);
        t->parts[p] = NULL;
        if (s == KURA_OK)
            s = c;
    }
    tree_close(t);
    db->txn = NULL;
    return s;
}

/* ---- Commit --------------------------------------------------------------------------------- */

static int cmp_piece(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const txn_piece *)a)->part;
    uintptr_t y = (uintptr_t)((const txn_piece *)b)->part;
    return x < y ? -1 : x > y;
}

/* *out = marker + the entries of `in`. */
static kura_status marked(const lsm_batch *in, lsm_batch *out)
{
    lsm_batch_init(out);
    kura_status s = lsm_batch_txn_marker(out, 0);
    if (s != KURA_OK)
        return s;
    if (!kbuf_append(&out->rep, in->rep.data + BATCH_HEADER, in->rep.len - BATCH_HEADER))
        return kura_err(KURA_E_NOMEM, "transaction: out of memory");
    enc_fixed32(out->rep.data + 8, 1 + lsm_batch_count(in));
    return KURA_OK;
}

/* The record of a token, appended to b. */
static kura_status put_token(lsm_batch *b, const txn_token *tok)
{
    size_t tl = strlen(tok->token);
    uint8_t *key = malloc(1 + tl), val[16];
    if (!key)
        return kura_err(KURA_E_NOMEM, "transaction: out of memory");
    key[0] = 't';
    memcpy(key + 1, tok->token, tl);
    enc_fixed64(val, tok->hash);
    enc_fixed64(val + 8, tok->ms);
    kura_status s = lsm_batch_put(b, key, 1 + tl, val, sizeof val);
    free(key);
    return s;
}

kura_status txn_token_get(kura_db *db, const char *token, bool *found_out, uint64_t *hash_out,
                          uint64_t *ms_out)
{
    size_t tl = strlen(token);
    uint8_t *key = malloc(1 + tl);
    if (!key)
        return kura_err(KURA_E_NOMEM, "transaction: out of memory");
    key[0] = 't';
    memcpy(key + 1, token, tl);
    kbuf v = KBUF_INIT;
    kura_status s = lsm_get(db->txn->parts[0], key, 1 + tl, 0, true, &v);
    free(key);
    *found_out = s == KURA_OK;
    if (s == KURA_OK && v.len != 16)
        s = kura_err(KURA_E_CORRUPTION, "%s: the record of client request token \"%s\" has %zu "
                                         "bytes, not 16",
                     db->txn->dir, token, v.len);
    if (s == KURA_OK) {
        *hash_out = dec_fixed64(v.data);
        *ms_out = dec_fixed64(v.data + 8);
    }
    kbuf_free(&v);
    return s == KURA_E_NOT_FOUND ? KURA_OK : s;
}

typedef struct txn_running {
    struct txn_running *next;
    char token[];
} txn_running;

kura_status txn_token_begin(kura_db *db, const char *token)
{
    size_t tl = strlen(token);
    txn_running *r = malloc(sizeof *r + tl + 1);
    if (!r)
        return kura_err(KURA_E_NOMEM, "transaction: out of memory");
    memcpy(r->token, token, tl + 1);
    kmutex_lock(&db->txn_mu);
    for (txn_running *q = db->txn_running; q; q = q->next)
        if (!strcmp(q->token, token)) {
            kmutex_unlock(&db->txn_mu);
            free(r);
            return kura_err(KURA_E_TXN_IN_PROGRESS, "The transaction with the given request "
                                                    "token is already in progress.");
        }
    r->next = db->txn_running;
    db->txn_running = r;
    kmutex_unlock(&db->txn_mu);
    return KURA_OK;
}

void txn_token_end(kura_db *db, const char *token)
{
    kmutex_lock(&db->txn_mu);
    for (txn_running **p = &db->txn_running; *p; p = &(*p)->next)
        if (!strcmp((*p)->token, token)) {
            txn_running *r = *p;
            *p = r->next;
            free(r);
            break;
        }
    kmutex_unlock(&db->txn_mu);
}

/* ---- The pieces' syncs, in parallel --------------------------------------------------------------- */

typedef struct sync_wait {
    kmutex mu;
    kcond cv;
    size_t left;
} sync_wait;

typedef struct sync_job {
    lsm_tree *part;
    uint64_t end;
    sync_wait *w;
    kura_status s;
    char msg[256];
} sync_job;

static void sync_one(sync_job *j)
{
    j->s = lsm_txn_sync(j->part, j->end);
    if (j->s != KURA_OK) /* the message is the syncing thread's */
        snprintf(j->msg, sizeof j->msg, "%s", kura_last_error());
}

static void sync_job_main(void *arg)
{
    sync_job *j = arg;
    sync_one(j);
    kmutex_lock(&j->w->mu);
    if (--j->w->left == 0)
        kcond_signal(&j->w->cv);
    kmutex_unlock(&j->w->mu);
}

/* Makes the pieces durable, each WAL up to its piece's end: all but the first on the sync
 * threads, the first here, so n syncs take about the time of one; a sync that a partition's
 * own writers (or another transaction) already ran is shared. Each failure makes its partition
 * read-only. */
static kura_status sync_all(kura_db *db, txn_piece *pieces, const uint64_t *ends, size_t n)
{
    sync_job *jobs = calloc(n, sizeof *jobs);
    if (!jobs)
        return kura_err(KURA_E_NOMEM, "transaction: out of memory");
    sync_wait w = {.left = 0};
    kmutex_init(&w.mu);
    kcond_init(&w.cv);
    for (size_t i = 0; i < n; i++)
        jobs[i] = (sync_job){.part = pieces[i].part, .end = ends[i], .w = &w};
    for (size_t i = 1; i < n; i++) {
        kmutex_lock(&w.mu);
        w.left++;
        kmutex_unlock(&w.mu);
        if (!kpool_submit(db->txn_sync_pool, sync_job_main, &jobs[i]))
            sync_job_main(&jobs[i]); /* (out of memory: here) */
    }
    sync_one(&jobs[0]);
    kmutex_lock(&w.mu);
    while (w.left > 0)
        kcond_wait(&w.cv, &w.mu);
    kmutex_unlock(&w.mu);
    kura_status s = KURA_OK;
    for (size_t i = 0; i < n && s == KURA_OK; i++)
        if (jobs[i].s != KURA_OK)
            s = kura_err(jobs[i].s, "%s", jobs[i].msg);
    kcond_destroy(&w.cv);
    kmutex_destroy(&w.mu);
    free(jobs);
    return s;
}

static void release_held(txn_piece *pieces, lsm_txn_hold *h, bool *held, size_t n,
                         kura_status s)
{
    for (size_t i = 0; i < n; i++)
        if (held[i]) {
            lsm_txn_release(pieces[i].part, &h[i], s);
            held[i] = false;
        }
}

/* Leads every piece's partition, never waiting for one while it leads another: it waits for
 * one partition (first the first), then takes the others only if they are free at once; on a
 * busy one it lets go of all and waits for that one next. No cycle of waits can form, and a
 * transaction does not keep partitions from others while it waits (a convoy of transactions
 * each holding what the next needs). After TXN_LEAD_ATTEMPTS tries it waits for each in the
 * pieces' order (sorted: the global order), so it is never starved. On failure nothing is
 * held. */
static kura_status lead_all(txn_piece *pieces, size_t n, lsm_txn_hold *h)
{
    bool *held = calloc(n, sizeof *held);
    if (!held)
        return kura_err(KURA_E_NOMEM, "transaction: out of memory");
    size_t first = 0;
    kura_status s;
    for (int attempt = 0;; attempt++) {
        if (attempt == TXN_LEAD_ATTEMPTS) {
            /* the partitions keep being busy (single writers queue all the time): wait for
             * each in the global order of the pieces instead, which cannot deadlock either
             * and cannot starve the transaction */
            size_t i = 0;
            for (; i < n && (s = lsm_txn_lead(pieces[i].part, &h[i])) == KURA_OK; i++)
                held[i] = true;
            if (s != KURA_OK)
                release_held(pieces, h, held, n, s);
            break;
        }
        if ((s = lsm_txn_lead(pieces[first].part, &h[first])) != KURA_OK)
            break;
        held[first] = true;
        size_t busy = n;
        for (size_t i = 0; i < n && busy == n && s == KURA_OK; i++) {
            if (i == first)
                continue;
            s = lsm_txn_try_lead(pieces[i].part, &h[i]);
            if (s == KURA_OK)
                held[i] = true;
            else if (s == KURA_E_BUSY)
                busy = i, s = KURA_OK;
        }
        if (s != KURA_OK) {
            release_held(pieces, h, held, n, s);
            break;
        }
        if (busy == n)
            break; /* all led */
        release_held(pieces, h, held, n, KURA_OK);
        first = busy; /* wait for that one first, holding nothing */
    }
    free(held);
    return s;
}

/* The commit record of transaction `id`, its range starting at `base` (and the token, which
 * commits with it), written to the transaction log and durable, also in relaxed durability:
 * the writes that follow a transaction in its partitions' WALs may build on it, and any sync
 * of those WALs (the syncer, kura_sync, a later transaction's pieces, a sync write) would
 * make them outlive a commit record a power loss took (docs/architecture.md, "Relaxed
 * durability"). */
static kura_status write_commit(kura_db *db, uint64_t id, uint64_t base, const txn_token *tok)
{
    uint8_t key[COMMIT_KEY], val[8];
    commit_key(key, id);
    enc_fixed64(val, base);
    lsm_batch rec;
    lsm_batch_init(&rec);
    kura_status s = lsm_batch_put(&rec, key, sizeof key, val, sizeof val);
    if (s == KURA_OK && tok)
        s = put_token(&rec, tok);
    if (s == KURA_OK)
        s = lsm_write_nowait(db->txn->parts[0], &rec, true);
    lsm_batch_free(&rec);
    return s;
}

/* A new transaction id: a sequence number, published at once (nothing is written at it),
 * and registered as running until id_end, so that collection keeps its commit record. */
static kura_status id_begin(kura_db *db, uint64_t *id_out)
{
    kmutex_lock(&db->txn_mu);
    if (db->ntxn_ids == db->txn_ids_cap) {
        size_t cap = db->txn_ids_cap ? 2 * db->txn_ids_cap : 16;
        uint64_t *v = realloc(db->txn_ids, cap * sizeof *v);
        if (!v) {
            kmutex_unlock(&db->txn_mu);
            return kura_err(KURA_E_NOMEM, "transaction: out of memory");
        }
        db->txn_ids = v;
        db->txn_ids_cap = cap;
    }
    uint64_t id = lsm_seq_alloc(&db->sh, 1);
    db->txn_ids[db->ntxn_ids++] = id;
    kmutex_unlock(&db->txn_mu);
    lsm_seq_complete(&db->sh, id, id);
    *id_out = id;
    return KURA_OK;
}

static void id_end(kura_db *db, uint64_t id)
{
    kmutex_lock(&db->txn_mu);
    for (size_t i = 0; i < db->ntxn_ids; i++)
        if (db->txn_ids[i] == id) {
            db->txn_ids[i] = db->txn_ids[--db->ntxn_ids];
            break;
        }
    kmutex_unlock(&db->txn_mu);
}

bool txn_is_committing(kura_db *db, uint64_t id)
{
    kmutex_lock(&db->txn_mu);
    bool running = false;
    for (size_t i = 0; i < db->ntxn_ids && !running; i++)
        running = db->txn_ids[i] == id;
    kmutex_unlock(&db->txn_mu);
    return running;
}

kura_status txn_commit(kura_db *db, txn_piece *pieces, size_t n, bool sync,
                       const txn_token *tok)
{
    if (n == 0 && !tok)
        return KURA_OK;
    if (n == 0) { /* nothing written: the token alone */
        lsm_batch b;
        lsm_batch_init(&b);
        kura_status s = put_token(&b, tok);
        if (s == KURA_OK)
            s = lsm_write(db->txn->parts[0], &b, sync);
        lsm_batch_free(&b);
        return s;
    }
    if (n == 1 && !tok) /* one partition: its WAL record alone is atomic */
        return lsm_write(pieces[0].part, &pieces[0].batch, sync);
    qsort(pieces, n, sizeof *pieces, cmp_piece); /* the global order of leads */
    for (size_t i = 1; i < n; i++)
        if (pieces[i].part == pieces[i - 1].part)
            return kura_err(KURA_E_INVALID, "transaction: two pieces for one partition");
    lsm_batch *m = calloc(n, sizeof *m);
    lsm_txn_hold *h = calloc(n, sizeof *h);
    uint64_t *ends = calloc(n, sizeof *ends), *offs = calloc(n, sizeof *offs);
    lsm_tree **parts = calloc(n, sizeof *parts);
    lsm_hook_slot *slots = calloc(n, sizeof *slots);
    if (!m || !h || !ends || !offs || !parts || !slots) {
        free(m);
        free(h);
        free(ends);
        free(offs);
        free(parts);
        free(slots);
        return kura_err(KURA_E_NOMEM, "transaction: out of memory");
    }
    kura_status s = KURA_OK;
    size_t built = 0, appended = 0;
    uint64_t id = 0, total = 0;
    for (; built < n && s == KURA_OK; built++)
        s = marked(&pieces[built].batch, &m[built]);
    if (s == KURA_OK)
        s = id_begin(db, &id);
    if (s != KURA_OK)
        goto out;
    /* the pieces' sequences are relative to the range they get at the commit */
    for (size_t i = 0; i < n; i++) {
        parts[i] = pieces[i].part;
        enc_fixed64(m[i].rep.data + BATCH_HEADER + 2, id); /* the marker's key */
        lsm_rep_set_seq(m[i].rep.data, total);
        offs[i] = total;
        total += lsm_batch_count(&m[i]);
    }
    if ((s = lead_all(pieces, n, h)) != KURA_OK)
        goto out;
    /* Appended under the leads, which are then let go: the partitions' other writes go on
     * while the pieces are synced. */
    for (; appended < n && s == KURA_OK; appended++)
        s = lsm_txn_append(parts[appended], m[appended].rep.data, m[appended].rep.len,
                           &ends[appended]);
    if (s != KURA_OK)
        appended--; /* (the failed one is not in flight) */
    for (size_t i = n; i-- > 0;)
        lsm_txn_release(parts[i], &h[i], s);
    /* the pieces are durable before the commit record can be */
    if (s == KURA_OK)
        s = sync_all(db, pieces, ends, n);
    if (s != KURA_OK) {
        for (size_t i = 0; i < appended; i++)
            lsm_txn_end(parts[i], &slots[i]);
        goto out;
    }
    /* The range, only now: readers wait for the transaction (visibility is in sequence
     * order) only while its commit record is written and its pieces applied. A write the
     * partitions take meanwhile gets a lower sequence than the pieces before it in their
     * WALs (tests write one at this crash point to make that order certain). */
    if ((s = io_crash_point(db->io, "txn.before_range")) != KURA_OK) {
        for (size_t i = 0; i < appended; i++)
            lsm_txn_end(parts[i], &slots[i]);
        goto out;
    }
    uint64_t first = lsm_txn_alloc(&db->sh, parts, offs, slots, n, total);
    for (size_t i = 0; i < n; i++)
        lsm_rep_set_seq(m[i].rep.data, first + offs[i]);
    s = write_commit(db, id, first, tok);
    if (s == KURA_OK)
        s = io_crash_point(db->io, "txn.after_commit");
    if (s == KURA_OK) {
        /* committed: every piece is applied; a failure here leaves its partition read-only
         * and the piece to the next open's replay, and the others are applied all the same */
        for (size_t i = 0; i < n; i++) {
            kura_status a = lsm_txn_apply(parts[i], m[i].rep.data, m[i].rep.len, &slots[i]);
            if (a != KURA_OK && s == KURA_OK)
                s = a;
        }
    } else {
        for (size_t i = 0; i < n; i++)
            lsm_txn_end(parts[i], &slots[i]);
    }
    lsm_seq_complete(&db->sh, first, first + total - 1);
    if (s == KURA_OK)
        lsm_seq_wait(&db->sh, first + total - 1);
out:
    if (id)
        id_end(db, id);
    for (size_t i = 0; i < built; i++)
        lsm_batch_free(&m[i]);
    free(m);
    free(h);
    free(ends);
    free(offs);
    free(parts);
    free(slots);
    return s;
}

/* ---- Collection --------------------------------------------------------------------------------- */

uint64_t txn_log_watermark(kura_db *db)
{
    /* first the in-flight bound: the transactions running now, and any later one, whose id
     * is allocated after this reads `visible` */
    kmutex_lock(&db->txn_mu);
    uint64_t g = lsm_visible(&db->sh) + 1;
    for (size_t i = 0; i < db->ntxn_ids; i++)
        if (db->txn_ids[i] < g)
            g = db->txn_ids[i];
    kmutex_unlock(&db->txn_mu);
    for (size_t i = 0; i < db->ntrees; i++) {
        kura_tree *t = db->trees[i];
        for (uint32_t p = 0; p < t->nparts; p++) {
            uint64_t m = t->parts[p] ? lsm_min_txn(t->parts[p]) : 0;
            if (m < g)
                g = m;
        }
    }
    return g;
}

kura_status txn_log_collect(kura_db *db, uint64_t watermark)
{
    if (!db->txn)
        return KURA_OK;
    uint64_t now = kwall_ms();
    uint64_t window = db->opts.idempotency_window_ms ? db->opts.idempotency_window_ms : 600000u;
    kura_iter *it = NULL;
    kura_status s = kura_iter_new(db->txn, NULL, &it);
    if (s != KURA_OK)
        return s;
    kura_batch *b = kura_batch_new();
    if (!b) {
        kura_iter_free(it);
        return kura_err(KURA_E_NOMEM, "transaction log: out of memory");
    }
    kura_write_options wo = {.durability = KURA_RELAXED}; /* a lost delete is harmless */
    for (kura_iter_seek_first(it); kura_iter_valid(it) && s == KURA_OK; kura_iter_next(it)) {
        size_t kl = 0, vl = 0;
        const uint8_t *k = kura_iter_key(it, &kl);
        const uint8_t *v = kura_iter_value(it, &vl);
        bool drop = false;
        if (kl == COMMIT_KEY && k[0] == 'c') {
            drop = dec_fixed64_be(k + 1) < watermark;
        } else if (kl > 1 && k[0] == 't' && vl == 16) {
            drop = now >= dec_fixed64(v + 8) + window;
        }
        if (drop)
            s = kura_batch_delete(b, k, kl);
        if (s == KURA_OK && kura_batch_count(b) >= 1000) {
            s = kura_write(db->txn, &wo, b);
            kura_batch_clear(b);
        }
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    if (s == KURA_OK && kura_batch_count(b) > 0)
        s = kura_write(db->txn, &wo, b);
    kura_batch_free(b);
    kura_iter_free(it);
    return s;
}

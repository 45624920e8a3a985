/*
 * ttl_sweep.c - This file contains the Time to Live sweeper: a thread of the database that,
 * every kura_options.ttl_sweep_interval_ms, deletes the expired items of every table with TTL
 * enabled (engine/ttl.h for what expired means), and kura_ttl_sweep, one sweep on demand.
 *
 * A sweep walks each partition of a table with an iterator (no lock is held across the walk)
 * and collects up to SWEEP_CHUNK candidates: keys whose item has expired at the sweep's time.
 * Each chunk is then deleted as one write batch to its partition, through the item layer's
 * write rules:
 *
 *  - the stripe locks of the chunk's items are taken in address order (the global order
 *    transactions use, so no cycle of waits can form) and held for the one write;
 *  - under them every item is read again, and deleted only if its attribute still holds the
 *    value that made it a candidate: the delete is conditional, so an UpdateItem or PutItem
 *    that extended the item's TTL after the walk saw it is never lost;
 *  - a table with indexes gets the delete with the old image, as every write does, so its LSIs
 *    (in the commit hook) and GSIs (through the queue) drop the item's entries; a table with an
 *    LSI accounts its item collections (engine/table_collection.h);
 *  - the batch starts with a meta entry flagged LSM_META_SERVICE (docs/format/wal.md), so that
 *    the change stream can tell the service's deletes from users' deletes.
 *
 * One batch per chunk (a group commit, one fsync in sync mode) instead of one write per item
 * is what makes the sweep fast; the chunk bounds how long foreground writers of those items
 * wait. A sweep is paced so that it leaves the CPU to foreground work: after each chunk it
 * sleeps so that it works kura_options.ttl_sweep_duty_percent of its time (default half:
 * measured here, ~55,000 deletes/s beside a PutItem thread at ~0.8x of its rate without a
 * sweep, against ~230,000/s at 0.45x flat out; docs/BENCHMARKS.md, "Time to Live").
 *
 * The work needs no state of its own: a sweep interrupted by a crash or a close is
 * simply done again by the next one. Sweeps are serialised (ttl_sweep_mu); a failed sweep
 * (a read-only partition) is retried at the next interval.
 */
#include "engine/ttl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/table_collection.h"
#include "engine/table_int.h"
#include "util/status.h"

/* The wall clock in ms, for the meta entry of a batch of deletes (the time its stream records
 * show). */
enum {
    SWEEP_CHUNK = 64,
    SWEEP_WALK_CHECK = 4096, /* items walked between two looks at the stop conditions */
    SWEEP_DEFAULT_INTERVAL_MS = 10000,
    SWEEP_DEFAULT_DUTY = 50,
};

/* The candidates of one chunk: keys back to back in `keys`, with their expiry values. */
typedef struct sweep_chunk {
    kbuf keys;
    size_t off[SWEEP_CHUNK + 1];
    kura_num when[SWEEP_CHUNK];
    size_t n;
} sweep_chunk;

/* The pacing of a sweep: after each chunk it sleeps so that it works duty % of its time. */
typedef struct sweep_pace {
    uint32_t duty;     /* 1..100 */
    uint64_t since_ns; /* the end of the last pause */
} sweep_pace;

static void pace(sweep_pace *p)
{
    uint64_t now = know_ns();
    if (p->duty < 100 && now > p->since_ns) {
        uint64_t rest = (now - p->since_ns) * (100 - p->duty) / p->duty;
        struct timespec ts = {(time_t)(rest / 1000000000u), (long)(rest % 1000000000u)};
        nanosleep(&ts, NULL);
    }
    p->since_ns = know_ns();
}

typedef struct sweep_table {
    kura_table *t;
    char *attr;
} sweep_table;

void (*ttl_test_before_chunk)(kura_table *t, void *arg);
void *ttl_test_before_chunk_arg;

static int ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return x < y ? -1 : x > y;
}

/* Whether TTL is still enabled on `t` with attribute `attr` (a disable stops the sweep at the
 * next chunk). */
static bool still_enabled(kura_db *db, kura_table *t, const char *attr)
{
    kmutex_lock(&db->tables_mu);
    bool on = t->ttl_enabled && t->ttl_attr && !strcmp(t->ttl_attr, attr) &&
              !atomic_load(&t->dropped);
    kmutex_unlock(&db->tables_mu);
    return on;
}

/* The locked part of one chunk: re-read, check, delete in one batch. Only the first item
 * collection registration may wait: when a later one would (KURA_E_BUSY), the chunk cancels
 * what it registered, settles that collection holding nothing and starts again
 * (engine/table_collection.h). */
static kura_status delete_chunk_locked(kura_table *t, uint32_t part, const char *attr,
                                       const ttl_window *w, sweep_chunk *c, uint64_t *deleted)
{
    size_t alen = strlen(attr);
    coll_ticket tk[SWEEP_CHUNK];
    bool ticket[SWEEP_CHUNK];
    kura_value old = {0};
    kbuf enc = KBUF_INIT;
    lsm_batch b;
    lsm_batch_init(&b);
    uint64_t n;
    kura_status s;
again:
    memset(ticket, 0, sizeof ticket);
    n = 0;
    lsm_batch_clear(&b);
    s = lsm_batch_meta(&b, kwall_ms(), LSM_META_SERVICE);
    bool holding = false;
    for (size_t i = 0; i < c->n && s == KURA_OK; i++) {
        const uint8_t *key = c->keys.data + c->off[i];
        size_t klen = c->off[i + 1] - c->off[i];
        kura_num now_when;
        if ((s = table_read_encoded(t, NULL, key, klen, &enc)) != KURA_OK || !enc.len)
            continue; /* gone meanwhile */
        bool expired = false;
        if ((s = ttl_expired_encoded(enc.data, enc.len, attr, alen, w, &expired, &now_when)) !=
            KURA_OK)
            break;
        if (!expired || num_cmp(&now_when, &c->when[i]) != 0)
            continue; /* its TTL changed since the walk: the condition fails */
        /* only a table with an LSI needs the old item itself (its collection's size) */
        val_clear(&old);
        if (table_has_lsi(t) && (s = val_decode(enc.data, enc.len, &old)) != KURA_OK)
            break;
        const kura_value *o = table_has_lsi(t) ? &old : NULL;
        s = (holding ? table_coll_try_begin : table_coll_begin)(t, key, klen, o, NULL, false,
                                                                &tk[i]);
        if (s == KURA_E_BUSY) {
            for (size_t j = 0; j < i; j++)
                if (ticket[j])
                    table_coll_cancel(t, &tk[j]);
            if ((s = table_coll_settle(t, key, klen, o, NULL, false)) == KURA_OK)
                goto again;
            break;
        }
        if (s != KURA_OK)
            break;
        ticket[i] = holding = true;
        s = lsm_batch_delete(&b, key, klen);
        if (s == KURA_OK && table_needs_images(t))
            s = lsm_batch_image(&b, key, klen, enc.data, enc.len);
        n++;
    }
    if (s == KURA_OK && n)
        s = tree_write_part(t->tree, part, &b);
    for (size_t i = 0; i < c->n; i++)
        if (ticket[i])
            table_coll_end(t, &tk[i], s == KURA_OK);
    if (s == KURA_OK) {
        atomic_fetch_add_explicit(&t->writes, n, memory_order_relaxed);
        *deleted += n;
    }
    val_clear(&old);
    kbuf_free(&enc);
    lsm_batch_free(&b);
    return s;
}

static kura_status delete_chunk(kura_table *t, uint32_t part, const char *attr,
                                const ttl_window *w, sweep_chunk *c, uint64_t *deleted)
{
    if (ttl_test_before_chunk)
        ttl_test_before_chunk(t, ttl_test_before_chunk_arg);
    kmutex *locks[SWEEP_CHUNK];
    size_t nl = 0;
    for (size_t i = 0; i < c->n; i++)
        locks[nl++] = table_item_lock(t, c->keys.data + c->off[i], c->off[i + 1] - c->off[i]);
    qsort(locks, nl, sizeof *locks, ptr_cmp);
    size_t u = 0;
    for (size_t i = 0; i < nl; i++)
        if (!u || locks[u - 1] != locks[i])
            locks[u++] = locks[i];
    for (size_t i = 0; i < u; i++)
        kmutex_lock(locks[i]);
    kura_status s = delete_chunk_locked(t, part, attr, w, c, deleted);
    for (size_t i = u; i > 0; i--)
        kmutex_unlock(locks[i - 1]);
    c->n = 0;
    kbuf_clear(&c->keys);
    return s;
}

/* Walks partition `part` of `t` and deletes its expired items, chunk by chunk. */
static kura_status sweep_part(kura_db *db, kura_table *t, uint32_t part, const char *attr,
                              const ttl_window *w, sweep_chunk *c, sweep_pace *pc,
                              uint64_t *deleted)
{
    kura_iter *it;
    kura_read_options ro;
    kura_read_options_init(&ro);
    ro.fill_cache = false; /* a walk of the whole table would evict what readers use */
    kura_status s = tree_iter_new(t->tree, &ro, part, part, &it);
    if (s != KURA_OK)
        return s;
    size_t alen = strlen(attr);
    uint64_t walked = 0;
    for (kura_iter_seek_first(it); s == KURA_OK && kura_iter_valid(it); kura_iter_next(it)) {
        /* a close, a disable or a DeleteTable stops a long walk without expired items too */
        if (++walked % SWEEP_WALK_CHECK == 0 &&
            (atomic_load(&db->ttl_stop) || !still_enabled(db, t, attr)))
            break;
        size_t klen, vlen;
        const uint8_t *key = kura_iter_key(it, &klen);
        const uint8_t *val = kura_iter_value(it, &vlen);
        /* items without the attribute's name anywhere are passed over unread; the others
         * decode only the attribute */
        bool expired = false;
        if (!memmem(val, vlen, attr, alen))
            continue;
        if ((s = ttl_expired_encoded(val, vlen, attr, alen, w, &expired, &c->when[c->n])) !=
            KURA_OK)
            break;
        if (!expired)
            continue;
        if (!kbuf_append(&c->keys, key, klen)) {
            s = kura_err(KURA_E_NOMEM, "ttl sweep: out of memory");
            break;
        }
        c->off[++c->n] = c->keys.len;
        if (c->n == SWEEP_CHUNK) {
            if (atomic_load(&db->ttl_stop) || !still_enabled(db, t, attr))
                break;
            s = delete_chunk(t, part, attr, w, c, deleted);
            pace(pc);
        }
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    if (s == KURA_OK && c->n && still_enabled(db, t, attr))
        s = delete_chunk(t, part, attr, w, c, deleted);
    c->n = 0;
    kbuf_clear(&c->keys);
    kura_iter_free(it);
    return s;
}

/* Pins every table with TTL enabled, with a copy of its attribute's name. */
static kura_status pin_tables(kura_db *db, sweep_table **out, size_t *n_out)
{
    kura_status s = KURA_OK;
    kmutex_lock(&db->tables_mu);
    sweep_table *v = calloc(db->ntables ? db->ntables : 1, sizeof *v);
    size_t n = 0;
    bool oom = !v;
    for (size_t i = 0; !oom && i < db->ntables; i++) {
        kura_table *t = db->tables[i];
        if (!t->ttl_enabled)
            continue;
        if (!(v[n].attr = strdup(t->ttl_attr))) {
            oom = true;
            break;
        }
        v[n++].t = t;
        t->refs++;
    }
    kmutex_unlock(&db->tables_mu);
    if (oom)
        s = kura_err(KURA_E_NOMEM, "ttl sweep: out of memory");
    *out = v;
    *n_out = n;
    return s;
}

kura_status kura_ttl_sweep(kura_db *db, uint64_t *deleted_out)
{
    sweep_table *tabs;
    size_t ntabs;
    uint64_t deleted = 0;
    kmutex_lock(&db->ttl_sweep_mu);
    kura_status s = pin_tables(db, &tabs, &ntabs);
    ttl_window w;
    ttl_window_at(ttl_now(db), &w);
    sweep_chunk *c = s == KURA_OK ? calloc(1, sizeof *c) : NULL;
    if (s == KURA_OK && !c)
        s = kura_err(KURA_E_NOMEM, "ttl sweep: out of memory");
    uint32_t duty = db->opts.ttl_sweep_duty_percent;
    sweep_pace pc = {duty ? (duty < 100 ? duty : 100) : SWEEP_DEFAULT_DUTY, know_ns()};
    for (size_t i = 0; i < ntabs; i++) {
        kura_table *t = tabs[i].t;
        for (uint32_t p = 0; s == KURA_OK && p < t->partitions; p++) {
            if (atomic_load(&db->ttl_stop) || !still_enabled(db, t, tabs[i].attr))
                break;
            s = sweep_part(db, t, p, tabs[i].attr, &w, c, &pc, &deleted);
        }
        free(tabs[i].attr);
        table_release(t);
    }
    if (c)
        kbuf_free(&c->keys);
    free(c);
    free(tabs);
    kmutex_unlock(&db->ttl_sweep_mu);
    if (s == KURA_OK && deleted_out)
        *deleted_out = deleted;
    return s;
}

/* ---- The thread ---------------------------------------------------------------------------- */

static void *sweeper_main(void *arg)
{
    kura_db *db = arg;
    uint64_t iv_ns = (uint64_t)(db->opts.ttl_sweep_interval_ms ? db->opts.ttl_sweep_interval_ms
                                                               : SWEEP_DEFAULT_INTERVAL_MS) *
                     1000000u;
    kmutex_lock(&db->mu);
    for (;;) {
        /* syncer_cv is broadcast at close: wait out the interval unless stopping */
        uint64_t due = know_ns() + iv_ns, now;
        while (!db->stopping && !atomic_load(&db->ttl_stop) && (now = know_ns()) < due)
            kcond_timedwait(&db->syncer_cv, &db->mu, due - now);
        if (db->stopping || atomic_load(&db->ttl_stop))
            break;
        kmutex_unlock(&db->mu);
        kura_ttl_sweep(db, NULL); /* a failure is retried at the next interval */
        kmutex_lock(&db->mu);
    }
    kmutex_unlock(&db->mu);
    return NULL;
}

kura_status ttl_sweeper_start(kura_db *db)
{
    if (!kthread_start(&db->ttl_thread, sweeper_main, db))
        return kura_err(KURA_E_NOMEM, "open %s: cannot start the TTL sweeper thread", db->dir);
    db->ttl_started = true;
    return KURA_OK;
}

void ttl_sweeper_join(kura_db *db)
{
    kmutex_lock(&db->mu);
    atomic_store(&db->ttl_stop, true);
    kcond_broadcast(&db->syncer_cv);
    kmutex_unlock(&db->mu);
    if (db->ttl_started)
        kthread_join(db->ttl_thread);
    db->ttl_started = false;
}

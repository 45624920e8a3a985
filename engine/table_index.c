/*
 * table_index.c - a table's secondary indexes in the engine: their trees, the index layer's
 * runtime over them (index/runtime.h), and what the item operations ask of them.
 *
 * Each index is a tree "idx-<table id>-<index id>" with the table's partition count, hash-
 * prefixed keys (entry keys, docs/format/index.md) and no WAL (TREE_NO_WAL); the table's own
 * tree keeps its WAL segments for them (TREE_RETAIN_WALS). An LSI's entries hash like their
 * items, so LSI partition p holds the entries of base partition p's items. The runtime is
 * opened when the table is (CreateTable, kura_open) and closed before its trees are.
 */
#include "engine/table_index.h"
#include "engine/table_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index/runtime.h"
#include "engine/tcap.h"
#include "util/status.h"

uint32_t table_nindexes(const kura_table *t)
{
    /* ngsi grows while the table is open (UpdateTable), after the new entry is complete */
    return t->nlsi + __atomic_load_n(&t->ngsi, __ATOMIC_ACQUIRE);
}

const idx_def *table_index_def(const kura_table *t, uint32_t i)
{
    return i < t->nlsi ? &t->lsi[i] : &t->gsi[i - t->nlsi];
}

int table_index_find(const kura_table *t, const char *name)
{
    for (uint32_t i = 0; name && i < table_nindexes(t); i++)
        if (table_index_def(t, i)->status != IDX_DELETED && !strcmp(table_index_def(t, i)->name, name))
            return (int)i;
    return -1;
}

void table_index_tree_name_id(const kura_table *t, uint32_t id, char *buf, size_t cap)
{
    snprintf(buf, cap, "idx-%llu-%u", (unsigned long long)t->id, id);
}

void table_index_tree_name(const kura_table *t, const idx_def *d, char *buf, size_t cap)
{
    table_index_tree_name_id(t, d->id, buf, cap);
}

kura_status table_index_check_item(const kura_table *t, const kura_value *item)
{
    for (uint32_t i = 0; item && i < table_nindexes(t); i++) {
        const idx_def *d = table_index_def(t, i);
        if (d->status == IDX_DELETING || d->status == IDX_DELETED)
            continue;
        kura_status s = idx_check_item(d, item);
        if (s != KURA_OK)
            return s;
    }
    return KURA_OK;
}

static void table_index_free(kura_table *t)
{
    free(t->ix_trees);
    free(t->ix_parts);
    t->ix_trees = NULL;
    t->ix_parts = NULL;
}

static kura_status alloc_arrays(kura_table *t)
{
    if (t->ix_trees)
        return KURA_OK;
    enum { MAX = IDX_MAX_LSI + IDX_MAX_GSI }; /* room for GSIs added while open */
    t->ix_trees = calloc(MAX, sizeof *t->ix_trees);
    t->ix_parts = calloc(MAX, sizeof *t->ix_parts);
    if (!t->ix_trees || !t->ix_parts) {
        table_index_free(t);
        return kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
    }
    return KURA_OK;
}

/* Opens (creating) the tree of index d into slot i. */
static kura_status open_tree(kura_db *db, kura_table *t, uint32_t i, const idx_def *d,
                             bool building)
{
    char name[64];
    table_index_tree_name(t, d, name, sizeof name);
    kura_tree_options to = {.partitions = t->partitions, .hash_prefixed_keys = true};
    /* a tree made now is made by this kura (an existing one keeps its flags: without
     * TREE_SEQ_REPLAY it is rebuilt at open, table_index_upgrade) */
    kura_status s =
        tree_open_flags(db, name, &to, TREE_NO_WAL | TREE_SEQ_REPLAY, &t->ix_trees[i]);
    if (s == KURA_OK && !(t->ix_trees[i]->flags & TREE_NO_WAL))
        s = kura_err(KURA_E_CORRUPTION, "tree %s of index %s of table %s has a WAL", name,
                     d->name, t->name);
    if (s == KURA_OK)
        t->ix_parts[i] = (idx_rt_index){d, t->ix_trees[i]->parts, t->ix_trees[i]->nparts,
                                        building};
    return s;
}

/* Drops the tree of index d if it exists. */
static kura_status drop_tree(kura_db *db, const kura_table *t, const idx_def *d)
{
    char name[64];
    table_index_tree_name(t, d, name, sizeof name);
    kura_tree *tr = NULL;
    if (tree_find(db, name, &tr) != KURA_OK)
        return KURA_OK;
    return kura_tree_drop(db, tr);
}

/* Removes the attribute definitions no key uses any more (after a GSI is dropped), as
 * DynamoDB's DescribeTable shows them. tables_mu held. */
static void prune_attr_defs(kura_table *t)
{
    size_t k = 0;
    for (size_t j = 0; j < t->nattr_defs; j++) {
        const char *n = t->attr_defs[j].attribute_name;
        bool used = !strcmp(n, t->pk_name) || (t->sk_name && !strcmp(n, t->sk_name));
        for (uint32_t i = 0; i < table_nindexes(t) && !used; i++) {
            const idx_def *d = table_index_def(t, i);
            if (d->status != IDX_DELETED)
                used = idx_is_key_attr(d, n, strlen(n));
        }
        if (used)
            t->attr_defs[k++] = t->attr_defs[j];
        else
            free((char *)n);
    }
    t->nattr_defs = k;
}

/* At open: GSIs whose drop a crash interrupted are finished now (before anything reads the
 * array: they leave it). */
static kura_status finish_drops(kura_db *db, kura_table *t)
{
    bool changed = false;
    kura_status s = KURA_OK;
    for (uint32_t i = 0; i < t->ngsi && s == KURA_OK;) {
        if (t->gsi[i].status != IDX_DELETING) {
            i++;
            continue;
        }
        s = drop_tree(db, t, &t->gsi[i]);
        if (s != KURA_OK)
            break;
        idx_def_clear(&t->gsi[i]);
        memmove(&t->gsi[i], &t->gsi[i + 1], (t->ngsi - i - 1) * sizeof *t->gsi);
        memset(&t->gsi[--t->ngsi], 0, sizeof *t->gsi);
        changed = true;
    }
    if (s == KURA_OK && changed) {
        kmutex_lock(&db->tables_mu);
        prune_attr_defs(t);
        s = def_write(db, t, false);
        kmutex_unlock(&db->tables_mu);
    }
    return s;
}

static kura_status start_job(kura_table *t, void *(*fn)(void *));
static void *backfill_main(void *arg);

kura_status table_index_open(kura_db *db, kura_table *t, bool create)
{
    (void)create;
    kura_status s = finish_drops(db, t);
    uint32_t n = table_nindexes(t);
    if (s != KURA_OK || n == 0)
        return s;
    if ((s = alloc_arrays(t)) != KURA_OK)
        return s;
    int building = -1;
    for (uint32_t i = 0; i < n && s == KURA_OK; i++) {
        const idx_def *d = table_index_def(t, i);
        if (d->status == IDX_CREATING) { /* a backfill a restart stopped: from scratch */
            building = (int)i;
            s = drop_tree(db, t, d);
        }
        if (s == KURA_OK)
            s = open_tree(db, t, i, d, d->status == IDX_CREATING);
    }
    if (s == KURA_OK && !(t->tree->flags & TREE_RETAIN_WALS))
        s = kura_err(KURA_E_CORRUPTION, "tree tbl-%llu of table %s (with indexes) does not keep "
                                        "its WAL for them",
                     (unsigned long long)t->id, t->name);
    idx_rt_args a = {.table_name = t->name, .ks = t->ks, .sh = &db->sh,
                     .sync = db->opts.durability == KURA_SYNC, .base = t->tree->parts,
                     .nbase = t->tree->nparts, .indexes = t->ix_parts, .nindexes = n,
                     .charge = tcap_index_charge, .charge_arg = t->cap};
    if (s == KURA_OK)
        s = idx_rt_open(&a, &t->ix_rt);
    if (s == KURA_OK && building >= 0)
        s = start_job(t, backfill_main);
    if (s != KURA_OK) {
        idx_rt_close(t->ix_rt);
        t->ix_rt = NULL;
        table_index_free(t);
    }
    return s;
}

/* ---- The background job: a backfill or a drop --------------------------------------------- */

/* The index a backfill job fills, and its snapshot's sequence. */
typedef struct ix_job_pos {
    kura_table *t;
    uint32_t pos;
    uint64_t s0;
} ix_job_pos;

static kura_db *job_db(const kura_table *t)
{
    return t->tree->db;
}

static void join_job(kura_table *t)
{
    if (!t->ix_job_started)
        return;
    kthread_join(t->ix_job);
    t->ix_job_started = false;
}

static kura_status start_job(kura_table *t, void *(*fn)(void *))
{
    join_job(t); /* the previous one has finished: DDL allows one at a time */
    atomic_store(&t->ix_job_stop, false);
    t->ix_job_error = KURA_OK;
    if (!kthread_start(&t->ix_job, fn, t))
        return kura_err(KURA_E_NOMEM, "table %s: cannot start an index job thread", t->name);
    t->ix_job_started = true;
    return KURA_OK;
}

/* The position of the one GSI with status `st`, or -1. */
static int find_status(const kura_table *t, idx_status st)
{
    for (uint32_t i = 0; i < t->ngsi; i++)
        if (t->gsi[i].status == st)
            return (int)(t->nlsi + i);
    return -1;
}

static kura_status backfill_put(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
                                size_t vlen)
{
    const ix_job_pos *jp = arg;
    return idx_rt_backfill_put(jp->t->ix_rt, jp->pos, jp->s0, key, klen, val, vlen);
}

static bool backfill_stop(void *arg)
{
    const ix_job_pos *jp = arg;
    return atomic_load(&jp->t->ix_job_stop);
}

static void *backfill_main(void *arg)
{
    kura_table *t = arg;
    kura_db *db = job_db(t);
    int pos = find_status(t, IDX_CREATING);
    if (pos < 0)
        return NULL;
    /* every batch allocated after s0 reaches the index through the runtime */
    uint64_t s0 = idx_rt_s0(t->ix_rt, (uint32_t)pos);
    ix_job_pos jp = {t, (uint32_t)pos, s0};
    kura_status s = table_backfill(t, table_index_def(t, (uint32_t)pos), s0, backfill_put,
                                   backfill_stop, &jp);
    if (s == KURA_OK)
        s = idx_rt_built(t->ix_rt, (uint32_t)pos, s0);
    if (s == KURA_OK) {
        kmutex_lock(&db->tables_mu);
        idx_def *d = &t->gsi[(uint32_t)pos - t->nlsi];
        if (atomic_load(&t->dropped)) { /* DeleteTable removed the definition: keep it so */
            s = kura_err(KURA_E_CLOSED, "table %s was deleted", t->name);
        } else {
            d->status = IDX_ACTIVE;
            if ((s = def_write(db, t, false)) != KURA_OK)
                d->status = IDX_CREATING; /* a reopen builds it again */
        }
        kmutex_unlock(&db->tables_mu);
    }
    if (s != KURA_OK && s != KURA_E_CLOSED) {
        fprintf(stderr, "kura: table %s: building index %s failed: %s\n", t->name,
                table_index_def(t, (uint32_t)pos)->name, kura_last_error());
        t->ix_job_error = s;
    }
    return NULL;
}

static void *drop_main(void *arg)
{
    kura_table *t = arg;
    kura_db *db = job_db(t);
    int pos = find_status(t, IDX_DELETING);
    if (pos < 0)
        return NULL;
    /* the last reads of the index end before its tree goes */
    while (atomic_load(&t->ix_readers[pos][0]) + atomic_load(&t->ix_readers[pos][1]) > 0 &&
           !atomic_load(&t->ix_job_stop)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&t->ix_job_stop))
        return NULL; /* DELETING is durable: the next open finishes it */
    idx_def *d = &t->gsi[(uint32_t)pos - t->nlsi];
    kura_status s = drop_tree(db, t, d);
    if (s == KURA_OK) {
        t->ix_trees[pos] = NULL;
        kmutex_lock(&db->tables_mu);
        d->status = IDX_DELETED;
        prune_attr_defs(t);
        /* if it fails, DELETING stays and the next open ends it; a deleted table keeps none */
        if (!atomic_load(&t->dropped))
            s = def_write(db, t, false);
        kmutex_unlock(&db->tables_mu);
    }
    if (s != KURA_OK) {
        fprintf(stderr, "kura: table %s: dropping index %s failed: %s\n", t->name, d->name,
                kura_last_error());
        t->ix_job_error = s;
    }
    return NULL;
}

kura_status table_index_add_gsi(kura_db *db, kura_table *t)
{
    uint32_t pos = table_nindexes(t) - 1; /* the caller appended the CREATING definition */
    const idx_def *d = table_index_def(t, pos);
    kura_status s = alloc_arrays(t);
    if (s == KURA_OK)
        s = tree_add_flags(db, t->tree, TREE_RETAIN_WALS);
    if (s == KURA_OK)
        s = drop_tree(db, t, d); /* an orphan of an earlier attempt with this id: none */
    if (s == KURA_OK)
        s = open_tree(db, t, pos, d, true);
    if (s != KURA_OK)
        return s;
    if (!t->ix_rt) { /* the table's first index */
        idx_rt_args a = {.table_name = t->name, .ks = t->ks, .sh = &db->sh,
                         .sync = db->opts.durability == KURA_SYNC, .base = t->tree->parts,
                         .nbase = t->tree->nparts, .indexes = t->ix_parts, .nindexes = pos + 1,
                         .charge = tcap_index_charge, .charge_arg = t->cap};
        s = idx_rt_open(&a, &t->ix_rt);
    } else {
        uint32_t got;
        uint64_t s0;
        s = idx_rt_add(t->ix_rt, &t->ix_parts[pos], &got, &s0);
        if (s == KURA_OK && got != pos)
            s = kura_err(KURA_E_CORRUPTION, "table %s: index %s at %u in the runtime, %u in the "
                                            "table",
                         t->name, d->name, got, pos);
    }
    if (s == KURA_OK)
        s = start_job(t, backfill_main);
    return s;
}

kura_status table_index_drop_gsi(kura_db *db, kura_table *t, uint32_t pos)
{
    (void)db;
    if (t->ix_rt)
        idx_rt_remove(t->ix_rt, pos);
    return start_job(t, drop_main);
}

kura_status table_index_close(kura_table *t)
{
    atomic_store(&t->ix_job_stop, true);
    join_job(t);
    kura_status s = idx_rt_close(t->ix_rt);
    t->ix_rt = NULL;
    table_index_free(t);
    return s;
}

kura_status table_index_drop(kura_db *db, kura_table *t)
{
    kura_status s = table_index_close(t);
    for (uint32_t i = 0; i < table_nindexes(t); i++) {
        kura_status s2 = drop_tree(db, t, table_index_def(t, i));
        if (s == KURA_OK)
            s = s2;
    }
    return s;
}

kura_status table_index_wait(kura_table *t, int i, uint64_t timeout_ms)
{
    if (!t->ix_rt || i < 0)
        return KURA_OK;
    return idx_rt_wait(t->ix_rt, (uint32_t)i, timeout_ms);
}

void tables_close_indexes(kura_db *db)
{
    /* Not under tables_mu: a finishing backfill takes it to make its index ACTIVE, and the
     * close waits for that job. The database is closing: no DDL changes the list. */
    kmutex_lock(&db->tables_mu);
    size_t n = db->ntables;
    kura_table **ts = malloc((n ? n : 1) * sizeof *ts);
    if (ts && n) /* db->tables is NULL before the first table */
        memcpy(ts, db->tables, n * sizeof *ts);
    kmutex_unlock(&db->tables_mu);
    for (size_t i = 0; ts && i < n; i++)
        if (ts[i]->ix_rt || ts[i]->ix_job_started)
            table_index_close(ts[i]);
    free(ts);
}

/* Pins the table and finds the index; on success the caller releases the table. */
static kura_status find_index(kura_db *db, const char *table_name, const char *index_name,
                              kura_table **t_out, int *i_out)
{
    kura_table *t;
    kura_status s = table_acquire_named(db, table_name, &t);
    if (s != KURA_OK)
        return s;
    int i = table_index_find(t, index_name);
    if (i < 0) {
        table_release(t);
        return kura_err(KURA_E_RESOURCE_NOT_FOUND,
                        "Requested resource not found: Index: %s not found in table %s",
                        index_name ? index_name : "(null)", table_name);
    }
    *t_out = t;
    *i_out = i;
    return KURA_OK;
}

kura_status kura_index_wait(kura_db *db, const char *table_name, const char *index_name,
                            uint64_t timeout_ms)
{
    kura_table *t;
    int i;
    kura_status s = find_index(db, table_name, index_name, &t, &i);
    if (s != KURA_OK)
        return s;
    s = table_index_wait(t, i, timeout_ms);
    table_release(t);
    return s;
}

kura_status kura_index_stats_get(kura_db *db, const char *table_name, const char *index_name,
                                 kura_index_stats *stats_out)
{
    kura_table *t;
    int i;
    kura_status s = find_index(db, table_name, index_name, &t, &i);
    if (s != KURA_OK)
        return s;
    idx_rt_stats st = {0};
    if (t->ix_rt)
        idx_rt_stats_get(t->ix_rt, (uint32_t)i, &st);
    kmutex_lock(&db->tables_mu);
    bool rebuilding = t->ix_rebuilding && t->ix_rebuild_pos == (uint32_t)i;
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    *stats_out = (kura_index_stats){st.lag_writes,  st.lag_ms, st.applied, st.checkpoints,
                                    st.queue_bytes, st.error,  rebuilding};
    return KURA_OK;
}

/* ---- Test hooks (tests/unit/engine_index_wal_test.c, tests/crash/) ------------------------ */

kura_status table_index_pause(kura_db *db, const char *table_name, bool paused)
{
    kura_table *t;
    kura_status s = table_acquire(db, table_name, &t);
    if (s != KURA_OK)
        return s;
    if (t->ix_rt)
        idx_rt_pause(t->ix_rt, paused);
    table_release(t);
    return KURA_OK;
}

kura_status table_index_checkpoint(kura_db *db, const char *table_name)
{
    kura_table *t;
    kura_status s = table_acquire(db, table_name, &t);
    if (s != KURA_OK)
        return s;
    if (t->ix_rt)
        s = idx_rt_checkpoint(t->ix_rt);
    table_release(t);
    return s;
}

static kura_status charge_none(void *arg, idx_change_kind kind, const uint8_t *key, size_t klen,
                               const uint8_t *value, size_t vlen)
{
    return KURA_OK;
}

kura_status table_index_charge(const kura_table *t, const kura_value *old, const kura_value *neu,
                               kura_return_capacity mode, kura_consumed_capacity *cc)
{
    kura_status s = KURA_OK;
    for (uint32_t i = 0; cc->present && i < table_nindexes(t) && s == KURA_OK; i++) {
        const idx_def *d = table_index_def(t, i);
        double units = 0;
        if (d->status == IDX_DELETING || d->status == IDX_DELETED)
            continue;
        s = idx_changes(d, &t->ks, idx_indexable(d, old), idx_indexable(d, neu), charge_none,
                        NULL, &units);
        if (s == KURA_OK && units > 0)
            s = capacity_add_index(cc, mode, d->name, d->kind == IDX_GLOBAL, units, false);
    }
    return s;
}

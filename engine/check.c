/*
 * check.c - This file contains kura_check (kura.h), the integrity check `kura check` runs: the
 * files of every tree (engine/lsm/lsm_check.c), then per table its items at a snapshot, every
 * secondary index against the table at that snapshot (table_verify.c), its item collections
 * (table_verify_items.c) and its change streams (stream_verify.c). docs/architecture.md,
 * "Integrity check", says why the index comparison is exact on a live database.
 *
 * Order per table: the files of the table's and its indexes' trees; a snapshot S; a wait until
 * every ACTIVE GSI has applied what was committed up to S (an LSI applies with its write); the
 * items at S; each ACTIVE index at S; then, live, the collection cache and the streams. The
 * table stays pinned (DeleteTable waits for the check, which gives up on a table it finds
 * deleted), and every index read is counted in ix_readers as a Query's is, so a dropped GSI's
 * tree stays until the check is done with it. Trees that belong to no table (the table
 * definitions, the transaction log, trees of the raw API) are checked under db->mu, which
 * kura_tree_drop takes.
 *
 * A storage error while reading (a table whose iterator stops on a damaged block) is itself a
 * problem, reported, and the check goes on with the next step; only running out of memory
 * stops it.
 */
#include "engine/check_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/table_index.h"
#include "util/status.h"

/* ---- Files --------------------------------------------------------------------------------- */

static void files_line(void *arg, bool problem, const char *line)
{
    check_line(arg, problem ? KURA_CHECK_PROBLEM : KURA_CHECK_NOTE, line);
}

static kura_status check_tree_files(check_ctx *c, kura_tree *tr)
{
    kura_status s = KURA_OK;
    lsm_check_stats st = {0};
    c->sum->trees++;
    for (uint32_t p = 0; p < tr->nparts && s == KURA_OK; p++) {
        c->sum->partitions++;
        s = lsm_check_files(tr->parts[p], files_line, c, &st);
    }
    kura_check_summary *sum = c->sum;
    sum->manifests += st.manifests;
    sum->sstables += st.sstables;
    sum->sstable_blocks += st.blocks;
    sum->sstable_entries += st.entries;
    sum->wal_segments += st.wal_segments;
    sum->wal_records += st.wal_records;
    sum->problems += st.problems;
    return s;
}

static bool is_table_tree(const kura_tree *tr)
{
    return strncmp(tr->name, "tbl-", 4) == 0 || strncmp(tr->name, "idx-", 4) == 0;
}

/* The trees of no table, and the transaction log (outside the catalog). */
static kura_status check_own_trees(check_ctx *c)
{
    kura_db *db = c->db;
    kura_status s = KURA_OK;
    kmutex_lock(&db->mu);
    for (size_t i = 0; i < db->ntrees && s == KURA_OK; i++)
        if (!is_table_tree(db->trees[i]))
            s = check_tree_files(c, db->trees[i]);
    kmutex_unlock(&db->mu);
    if (s == KURA_OK && db->txn)
        s = check_tree_files(c, db->txn);
    return s;
}

/* ---- Indexes ------------------------------------------------------------------------------- */

/* A read of an index's trees counted in t->ix_readers (as page_index_find counts one): the
 * trees stay while it lasts, also if a rebuild swaps others in meanwhile. */
typedef struct check_pin {
    kura_tree *tree; /* NULL: not pinned */
    unsigned slot;
} check_pin;

/* tables_mu held: pins index i's current trees. */
static void pin_locked(kura_table *t, uint32_t i, check_pin *p)
{
    p->slot = t->ix_gen[i] & 1;
    p->tree = t->ix_trees[i];
    atomic_fetch_add(&t->ix_readers[i][p->slot], 1);
}

/* Pins the tree of index i for reading; false when it is not to be compared: CREATING (a
 * note), DELETING (counted as skipped) or dropped (ignored). tables_mu guards the status. */
static bool index_pin(check_ctx *c, kura_table *t, uint32_t i, check_pin *p)
{
    kmutex_lock(&c->db->tables_mu);
    const idx_def *d = table_index_def(t, i); /* definitions never move while open */
    idx_status st = d->status;
    bool ok = st == IDX_ACTIVE && t->ix_trees && t->ix_trees[i];
    if (ok)
        pin_locked(t, i, p);
    kmutex_unlock(&c->db->tables_mu);
    if (st == IDX_CREATING)
        check_note(c, "table %s index %s: CREATING (backfilling): not compared", t->name,
                   d->name);
    if (!ok && st != IDX_DELETED)
        c->sum->indexes_skipped++;
    return ok;
}

static void index_unpin(kura_table *t, uint32_t i, check_pin *p)
{
    if (p->tree)
        atomic_fetch_sub(&t->ix_readers[i][p->slot], 1);
    p->tree = NULL;
}

static void index_line(void *arg, const char *line)
{
    check_line(arg, KURA_CHECK_PROBLEM, line);
}

/* Index i (pinned) against the table at snap. */
static kura_status check_index(check_ctx *c, kura_table *t, uint32_t i, kura_tree *tree,
                               const kura_snapshot *snap)
{
    const idx_def *d = table_index_def(t, i);
    table_verify_counts n;
    kura_status s = table_verify_index(t, i, tree, snap, CHECK_EXAMPLES, index_line, c, &n);
    if (s != KURA_OK)
        return s;
    kura_check_summary *sum = c->sum;
    uint64_t bad = n.missing + n.extra + n.stale;
    sum->indexes++;
    sum->index_entries += n.found;
    sum->missing_entries += n.missing;
    sum->extra_entries += n.extra;
    sum->stale_entries += n.stale;
    sum->problems += bad;
    if (bad > 0) { /* a line for what the examples above add up to; counted there */
        char line[1024];
        snprintf(line, sizeof line, "table %s index %s: %llu entries expected, %llu in the "
                                    "index: %llu missing, %llu extra, %llu stale%s",
                 t->name, d->name, (unsigned long long)n.expected, (unsigned long long)n.found,
                 (unsigned long long)n.missing, (unsigned long long)n.extra,
                 (unsigned long long)n.stale,
                 n.missing > CHECK_EXAMPLES || n.extra > CHECK_EXAMPLES ||
                         n.stale > CHECK_EXAMPLES
                     ? " (the first 10 of each listed)"
                     : "");
        check_line(c, KURA_CHECK_PROBLEM, line);
    }
    return KURA_OK;
}

/* A step's failure: out of memory stops the check; a deleted table ends its check; anything
 * else (a storage error) is a problem, and the check goes on. */
static kura_status step_failed(check_ctx *c, kura_table *t, const char *what, kura_status s,
                               bool *stop_table)
{
    if (s == KURA_OK)
        return KURA_OK;
    if (s == KURA_E_NOMEM)
        return s;
    if (atomic_load(&t->dropped)) {
        check_note(c, "table %s: deleted during the check", t->name);
        *stop_table = true;
        return KURA_OK;
    }
    check_problem(c, "table %s: %s: %s", t->name, what, kura_last_error());
    return KURA_OK;
}

/* Waits for every ACTIVE index to apply what was committed up to the snapshot just taken (at
 * most wait_ms each) and pins the ones to compare (pins[i].tree). A wait that fails is a
 * problem and its index is not compared; `strict`: its status is returned instead, nothing
 * pinned. */
static kura_status indexes_ready(check_ctx *c, kura_table *t, uint32_t n, uint64_t wait_ms,
                                 bool strict, check_pin *pins)
{
    for (uint32_t i = 0; i < n; i++) {
        bool ready = index_pin(c, t, i, &pins[i]);
        kura_status s = ready ? table_index_wait(t, (int)i, wait_ms) : KURA_OK;
        if (s == KURA_OK)
            continue;
        index_unpin(t, i, &pins[i]);
        if (strict) {
            for (uint32_t j = 0; j < i; j++)
                index_unpin(t, j, &pins[j]);
            return s;
        }
        check_problem(c, "table %s index %s: not compared: %s%s", t->name,
                      table_index_def(t, i)->name,
                      s == KURA_E_BUSY ? "it did not apply the writes before the check's "
                                         "snapshot in time: "
                                       : "",
                      kura_last_error());
        c->sum->indexes_skipped++;
    }
    return KURA_OK;
}

/* Compares every index pinned in pins[] at snap, unpinning each. */
static kura_status indexes_compare(check_ctx *c, kura_table *t, uint32_t n,
                                   const kura_snapshot *snap, check_pin *pins, bool *stop)
{
    kura_status s = KURA_OK;
    for (uint32_t i = 0; i < n; i++) {
        if (s == KURA_OK && pins[i].tree && !*stop) {
            char what[300];
            snprintf(what, sizeof what, "comparing index %s", table_index_def(t, i)->name);
            s = step_failed(c, t, what, check_index(c, t, i, pins[i].tree, snap), stop);
        }
        index_unpin(t, i, &pins[i]);
    }
    return s;
}

/* Items and indexes at one snapshot. */
static kura_status check_snapshot(check_ctx *c, kura_table *t, bool *stop)
{
    check_pin pins[IDX_MAX_LSI + IDX_MAX_GSI] = {{0}};
    uint32_t n = table_nindexes(t);
    const kura_snapshot *snap = kura_snapshot_new(c->db);
    if (!snap)
        return kura_err(KURA_E_NOMEM, "out of memory");
    kura_status s = indexes_ready(c, t, n, CHECK_INDEX_WAIT_MS, false, pins);
    if (s == KURA_OK)
        s = step_failed(c, t, "reading the items", table_verify_items(c, t, snap), stop);
    kura_status s2 = indexes_compare(c, t, n, snap, pins, stop);
    kura_snapshot_free(c->db, snap);
    return s == KURA_OK ? s2 : s;
}

kura_status check_indexes(kura_db *db, const char *table_name, uint64_t wait_ms,
                          kura_check_fn fn, void *arg, kura_check_summary *summary_out)
{
    kura_check_summary sum;
    memset(&sum, 0, sizeof sum);
    check_ctx c = {db, fn, arg, &sum};
    kura_table *t;
    kura_status s = table_acquire_named(db, table_name, &t);
    if (s != KURA_OK)
        return s;
    check_pin pins[IDX_MAX_LSI + IDX_MAX_GSI] = {{0}};
    bool stop = false;
    uint32_t n = table_nindexes(t);
    const kura_snapshot *snap = kura_snapshot_new(db);
    if (!snap)
        s = kura_err(KURA_E_NOMEM, "out of memory");
    if (s == KURA_OK && (s = indexes_ready(&c, t, n, wait_ms, true, pins)) == KURA_OK)
        s = indexes_compare(&c, t, n, snap, pins, &stop);
    if (snap)
        kura_snapshot_free(db, snap);
    table_release(t);
    if (s == KURA_OK && summary_out)
        *summary_out = sum;
    return s;
}

/* The files of the table's trees and of its indexes' (pinned as for a read). */
static kura_status check_table_files(check_ctx *c, kura_table *t)
{
    kura_status s = check_tree_files(c, t->tree);
    for (uint32_t i = 0; i < table_nindexes(t) && s == KURA_OK; i++) {
        kmutex_lock(&c->db->tables_mu);
        idx_status st = table_index_def(t, i)->status;
        bool ok = (st == IDX_ACTIVE || st == IDX_CREATING) && t->ix_trees && t->ix_trees[i];
        check_pin pin = {0};
        if (ok)
            pin_locked(t, i, &pin);
        kmutex_unlock(&c->db->tables_mu);
        if (!ok)
            continue;
        s = check_tree_files(c, pin.tree);
        index_unpin(t, i, &pin);
    }
    return s;
}

static kura_status check_table(check_ctx *c, kura_table *t)
{
    bool stop = false;
    c->sum->tables++;
    kura_status s = check_table_files(c, t);
    if (s == KURA_OK)
        s = check_snapshot(c, t, &stop);
    if (s == KURA_OK && !stop)
        s = step_failed(c, t, "recounting its item collections", table_verify_collections(c, t),
                        &stop);
    if (s == KURA_OK && !stop)
        s = step_failed(c, t, "checking its streams", stream_verify(c, t), &stop);
    return s;
}

/* ---- The database -------------------------------------------------------------------------- */

/* The names of the tables now (a copy). */
static kura_status table_names(kura_db *db, char ***names_out, size_t *n_out)
{
    kmutex_lock(&db->tables_mu);
    size_t n = db->ntables;
    char **names = calloc(n ? n : 1, sizeof *names);
    bool ok = names != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = (names[i] = strdup(db->tables[i]->name)) != NULL;
    kmutex_unlock(&db->tables_mu);
    if (!ok) {
        for (size_t i = 0; names && i < n; i++)
            free(names[i]);
        free(names);
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    *names_out = names;
    *n_out = n;
    return KURA_OK;
}

static kura_status check_all(check_ctx *c)
{
    char **names = NULL;
    size_t n = 0;
    kura_status s = check_own_trees(c);
    if (s == KURA_OK)
        s = table_names(c->db, &names, &n);
    for (size_t i = 0; i < n; i++) {
        kura_table *t;
        if (s == KURA_OK && table_acquire(c->db, names[i], &t) == KURA_OK) {
            s = check_table(c, t); /* a table deleted since it was listed is left out */
            table_release(t);
        }
        free(names[i]);
    }
    free(names);
    return s;
}

kura_status kura_check(kura_db *db, const char *table_name, kura_check_fn fn, void *arg,
                       kura_check_summary *summary_out)
{
    kura_check_summary sum;
    memset(&sum, 0, sizeof sum);
    check_ctx c = {db, fn, arg, &sum};
    kura_status s;
    uint64_t rebuilt = atomic_load(&db->ix_rebuilt_at_open);
    if (rebuilt > 0) /* repaired before anything could read them: said, not counted */
        check_note(&c, "%llu secondary index%s last written by an earlier kura (whose recovery "
                       "could leave stale and missing entries) %s rebuilt when the database "
                       "was opened (docs/architecture.md, \"Indexes of an earlier kura, at "
                       "open\")",
                   (unsigned long long)rebuilt, rebuilt == 1 ? "" : "es",
                   rebuilt == 1 ? "was" : "were");
    if (table_name) {
        kura_table *t;
        if ((s = table_acquire_named(db, table_name, &t)) != KURA_OK)
            return s;
        s = check_table(&c, t);
        table_release(t);
    } else {
        s = check_all(&c);
    }
    if (s == KURA_OK && summary_out)
        *summary_out = sum;
    return s;
}

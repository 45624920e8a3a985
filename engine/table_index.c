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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/runtime.h"
#include "util/status.h"

uint32_t table_nindexes(const kura_table *t)
{
    return t->nlsi + t->ngsi;
}

const idx_def *table_index_def(const kura_table *t, uint32_t i)
{
    return i < t->nlsi ? &t->lsi[i] : &t->gsi[i - t->nlsi];
}

int table_index_find(const kura_table *t, const char *name)
{
    for (uint32_t i = 0; name && i < table_nindexes(t); i++)
        if (!strcmp(table_index_def(t, i)->name, name))
            return (int)i;
    return -1;
}

void table_index_tree_name(const kura_table *t, const idx_def *d, char *buf, size_t cap)
{
    snprintf(buf, cap, "idx-%llu-%u", (unsigned long long)t->id, d->id);
}

kura_status table_index_check_item(const kura_table *t, const kura_value *item)
{
    for (uint32_t i = 0; item && i < table_nindexes(t); i++) {
        kura_status s = idx_check_item(table_index_def(t, i), item);
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

kura_status table_index_open(kura_db *db, kura_table *t, bool create)
{
    uint32_t n = table_nindexes(t);
    if (n == 0)
        return KURA_OK;
    t->ix_trees = calloc(n, sizeof *t->ix_trees);
    t->ix_parts = calloc(n, sizeof *t->ix_parts);
    if (!t->ix_trees || !t->ix_parts) {
        table_index_free(t);
        return kura_err(KURA_E_NOMEM, "table %s: out of memory", t->name);
    }
    kura_status s = KURA_OK;
    kura_tree_options to = {.partitions = t->partitions, .hash_prefixed_keys = true};
    for (uint32_t i = 0; i < n && s == KURA_OK; i++) {
        const idx_def *d = table_index_def(t, i);
        char name[64];
        table_index_tree_name(t, d, name, sizeof name);
        s = tree_open_flags(db, name, &to, TREE_NO_WAL, &t->ix_trees[i]);
        if (s == KURA_OK && !(t->ix_trees[i]->flags & TREE_NO_WAL))
            s = kura_err(KURA_E_CORRUPTION, "tree %s of index %s of table %s has a WAL", name,
                         d->name, t->name);
        if (s == KURA_OK)
            t->ix_parts[i] = (idx_rt_index){d, t->ix_trees[i]->parts, t->ix_trees[i]->nparts};
    }
    if (s == KURA_OK && !(t->tree->flags & TREE_RETAIN_WALS))
        s = kura_err(KURA_E_CORRUPTION, "tree tbl-%llu of table %s (with indexes) does not keep "
                                        "its WAL for them",
                     (unsigned long long)t->id, t->name);
    idx_rt_args a = {.table_name = t->name, .ks = t->ks, .sh = &db->sh,
                     .sync = db->opts.durability == KURA_SYNC, .base = t->tree->parts,
                     .nbase = t->tree->nparts, .indexes = t->ix_parts, .nindexes = n};
    if (s == KURA_OK)
        s = idx_rt_open(&a, &t->ix_rt);
    if (s != KURA_OK)
        table_index_free(t);
    (void)create;
    return s;
}

kura_status table_index_close(kura_table *t)
{
    kura_status s = idx_rt_close(t->ix_rt);
    t->ix_rt = NULL;
    table_index_free(t);
    return s;
}

kura_status table_index_drop(kura_db *db, kura_table *t)
{
    kura_status s = table_index_close(t);
    for (uint32_t i = 0; i < table_nindexes(t); i++) {
        char name[64];
        table_index_tree_name(t, table_index_def(t, i), name, sizeof name);
        kura_tree *tr = NULL;
        /* opening an existing tree only finds it */
        kura_status s2 = tree_find(db, name, &tr);
        if (s2 == KURA_OK && tr)
            s2 = kura_tree_drop(db, tr);
        if (s == KURA_OK && s2 != KURA_OK && s2 != KURA_E_NOT_FOUND)
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
    kmutex_lock(&db->tables_mu);
    for (size_t i = 0; i < db->ntables; i++)
        if (db->tables[i]->ix_rt)
            table_index_close(db->tables[i]);
    kmutex_unlock(&db->tables_mu);
}

/* Pins the table and finds the index; on success the caller releases the table. */
static kura_status find_index(kura_db *db, const char *table_name, const char *index_name,
                              kura_table **t_out, int *i_out)
{
    kura_table *t;
    if (table_acquire(db, table_name, &t) != KURA_OK)
        return kura_err(KURA_E_RESOURCE_NOT_FOUND,
                        "Requested resource not found: Table: %s not found",
                        table_name ? table_name : "(null)");
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
    table_release(t);
    *stats_out = (kura_index_stats){st.lag_writes, st.lag_ms, st.applied, st.checkpoints,
                                    st.queue_bytes, st.error};
    return KURA_OK;
}

/*
 * table_rebuild.c - This file contains the rebuild of a secondary index from its table's items
 * (kura_rebuild_index), online with writers running, and at open the rebuild of every index an
 * earlier kura made (table_index_upgrade); docs/architecture.md, "Rebuilding an index".
 *
 * The design: a shadow copy under a new index id. New trees idx-<table id>-<new id> (flag
 * TREE_SEQ_REPLAY: made by this kura) are attached to the index in the runtime
 * (idx_rt_shadow_begin), which from its sequence s0 on applies every change to them as it does
 * to the index, and are backfilled from a snapshot at s0 (table_backfill), as a GSI that
 * UpdateTable adds is. Meanwhile the index stays ACTIVE: reads, checkpoints and WAL retention
 * use its old trees. Once the shadow's first checkpoint is durable (idx_rt_shadow_built), one
 * definition write names the new id (the swap's commit point); the runtime, the table's tree
 * array and the readers' generation switch to the new trees under tables_mu, the reads of the
 * old trees in flight end, and the old trees are dropped as UpdateTable's Delete drops an
 * index's.
 *
 * An LSI is strongly consistent: a reader that took its old trees before the swap must not
 * miss a write made after it. So an LSI's swap happens under every item lock of the table (no
 * write of it in flight), and the locks are let go only once those reads have ended: writers
 * of the table wait for one definition write and the LSI's reads in flight (milliseconds).
 * A GSI's readers may see an older state anyway (eventual consistency): no locks.
 *
 * Crash safety, with the order of the durable steps: (1) the new trees are created (catalog
 * write) while the definition names the old id: a crash leaves an orphan tree, which the next
 * open drops (tables_load's drop_orphans), and the old index; (2) the definition names the
 * new id only after the new trees hold a durable checkpoint covering the snapshot, and from
 * that checkpoint on the base WALs are kept for them: a crash recovers the new index like any
 * other, and the old trees are orphans; (3) the old trees are dropped. A rebuild that a crash
 * cut short is not resumed: kura_rebuild_index is called again; a rebuild at open (an index
 * of an earlier kura) is made again at the next open, its old trees still lacking the flag.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/table_index.h"
#include "engine/table_int.h"
#include "index/runtime.h"
#include "util/status.h"

typedef struct rebuild {
    kura_db *db;
    kura_table *t;
    uint32_t pos;
    uint32_t id;     /* the new trees' index id */
    kura_tree *tree; /* the new trees until they are the index's */
    uint64_t s0;     /* the backfill's snapshot */
} rebuild;

static bool rb_stop(void *arg)
{
    const rebuild *r = arg;
    return atomic_load(&r->t->dropped) || atomic_load(&r->db->ix_rebuild_stop);
}

static kura_status rb_put(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
                          size_t vlen)
{
    const rebuild *r = arg;
    return idx_rt_shadow_put(r->t->ix_rt, r->pos, r->s0, key, klen, val, vlen);
}

/* Makes the new trees (an orphan of an earlier attempt with this id is dropped first). */
static kura_status rb_make_trees(rebuild *r)
{
    char name[64];
    table_index_tree_name_id(r->t, r->id, name, sizeof name);
    kura_tree *orphan = NULL;
    kura_status s = KURA_OK;
    if (tree_find(r->db, name, &orphan) == KURA_OK)
        s = kura_tree_drop(r->db, orphan);
    kura_tree_options to = {.partitions = r->t->partitions, .hash_prefixed_keys = true};
    if (s == KURA_OK)
        s = tree_open_flags(r->db, name, &to, TREE_NO_WAL | TREE_SEQ_REPLAY, &r->tree);
    return s;
}

/* Waits until the reads counted in slot `slot` of index pos have ended. */
static void rb_drain(kura_table *t, uint32_t pos, unsigned slot)
{
    while (atomic_load(&t->ix_readers[pos][slot]) > 0) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

/* Names the new trees in the definition (durably) and makes them the index's; *old_out: the
 * old trees, read by nobody when this returns KURA_OK. */
static kura_status rb_swap(rebuild *r, kura_tree **old_out)
{
    kura_table *t = r->t;
    kura_db *db = r->db;
    idx_def *d = r->pos < t->nlsi ? &t->lsi[r->pos] : &t->gsi[r->pos - t->nlsi];
    bool lsi = d->kind == IDX_LOCAL;
    if (lsi)
        table_lock_items(t);
    kmutex_lock(&db->tables_mu);
    kura_status s = KURA_OK;
    if (rb_stop(r))
        s = kura_err(KURA_E_CLOSED, "rebuild of index %s of table %s: %s", d->name, t->name,
                     atomic_load(&t->dropped) ? "the table was deleted" : "the database closes");
    uint32_t old_id = d->id;
    if (s == KURA_OK) {
        d->id = r->id; /* next_index_id is past it already */
        if ((s = def_write(db, t, false)) != KURA_OK)
            d->id = old_id;
    }
    unsigned slot = t->ix_gen[r->pos] & 1;
    if (s == KURA_OK) {
        *old_out = t->ix_trees[r->pos];
        t->ix_trees[r->pos] = r->tree;
        t->ix_parts[r->pos].parts = r->tree->parts;
        t->ix_parts[r->pos].nparts = r->tree->nparts;
        idx_rt_shadow_swap(t->ix_rt, r->pos);
        t->ix_gen[r->pos]++; /* new reads count in the other slot */
        r->tree = NULL;
    }
    kmutex_unlock(&db->tables_mu);
    if (s == KURA_OK)
        rb_drain(t, r->pos, slot);
    if (lsi)
        table_unlock_items(t);
    return s;
}

kura_status table_index_rebuild(kura_db *db, kura_table *t, uint32_t pos, uint32_t id)
{
    rebuild r = {.db = db, .t = t, .pos = pos, .id = id};
    const idx_def *d = table_index_def(t, pos);
    kura_status s = t->ix_rt ? rb_make_trees(&r)
                             : kura_err(KURA_E_CORRUPTION, "table %s: index %s is not open",
                                        t->name, d->name);
    bool attached = false;
    if (s == KURA_OK)
        attached = (s = idx_rt_shadow_begin(t->ix_rt, pos, r.tree->parts, r.tree->nparts,
                                            &r.s0)) == KURA_OK;
    if (s == KURA_OK)
        s = table_backfill(t, d, r.s0, rb_put, rb_stop, &r);
    if (s == KURA_OK)
        s = idx_rt_shadow_built(t->ix_rt, pos, r.s0);
    kura_tree *old = NULL;
    if (s == KURA_OK)
        s = rb_swap(&r, &old);
    if (s != KURA_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", kura_last_error());
        if (attached)
            idx_rt_shadow_abort(t->ix_rt, pos);
        if (r.tree) /* if this fails, an orphan: dropped at the next open */
            kura_tree_drop(db, r.tree);
        return kura_err(s, "%s", msg);
    }
    /* the index is rebuilt; old trees that cannot be dropped now are orphans the next open
     * drops */
    if (kura_tree_drop(db, old) != KURA_OK)
        fprintf(stderr, "kura: table %s: dropping the old trees of rebuilt index %s: %s\n",
                t->name, d->name, kura_last_error());
    return KURA_OK;
}

kura_status table_index_upgrade(kura_db *db, kura_table *t)
{
    kura_status s = KURA_OK;
    for (uint32_t i = 0; i < table_nindexes(t) && s == KURA_OK; i++) {
        const idx_def *d = table_index_def(t, i);
        if (d->status != IDX_ACTIVE || !t->ix_trees || !t->ix_trees[i] ||
            (t->ix_trees[i]->flags & TREE_SEQ_REPLAY))
            continue;
        kmutex_lock(&db->tables_mu); /* a backfill job of the table may write the definition */
        uint32_t id = t->next_index_id++;
        kmutex_unlock(&db->tables_mu);
        s = table_index_rebuild(db, t, i, id);
        if (s != KURA_OK)
            s = kura_err(s, "table %s: rebuilding index %s, which an earlier kura made: %s",
                         t->name, d->name, kura_last_error());
        else
            atomic_fetch_add(&db->ix_rebuilt_at_open, 1);
    }
    return s;
}

/* ---- kura_rebuild_index ------------------------------------------------------------------ */

/* Marks the rebuild of `index_name` of the pinned table: *pos_out, and the new trees' id. */
static kura_status rb_claim(kura_db *db, kura_table *t, const char *index_name,
                           uint32_t *pos_out, uint32_t *id_out)
{
    kmutex_lock(&db->tables_mu);
    int i = table_index_find(t, index_name);
    const idx_def *d = i >= 0 ? table_index_def(t, (uint32_t)i) : NULL;
    kura_status s = KURA_OK;
    if (atomic_load(&db->ix_rebuild_stop))
        s = kura_err(KURA_E_CLOSED, "the database is closing");
    else if (!d)
        s = kura_err(KURA_E_RESOURCE_NOT_FOUND,
                     "Requested resource not found: Index: %s not found in table %s",
                     index_name ? index_name : "(null)", t->name);
    else if (d->status == IDX_CREATING || d->status == IDX_DELETING)
        s = kura_err(KURA_E_RESOURCE_IN_USE,
                     "Attempt to change a resource which is still in use: Index is being %s.",
                     d->status == IDX_CREATING ? "created" : "deleted");
    else if (t->ix_rebuilding)
        s = kura_err(KURA_E_RESOURCE_IN_USE,
                     "Attempt to change a resource which is still in use: Index %s of table %s "
                     "is being rebuilt.",
                     table_index_def(t, t->ix_rebuild_pos)->name, t->name);
    if (s == KURA_OK) {
        t->ix_rebuilding = true;
        t->ix_rebuild_pos = (uint32_t)i;
        *pos_out = (uint32_t)i;
        *id_out = t->next_index_id++;
        db->ix_rebuilds++;
    }
    kmutex_unlock(&db->tables_mu);
    return s;
}

/* Ends the claim and unpins the table; the last use of `db` (kura_close may free it next). */
static void rb_unclaim(kura_db *db, kura_table *t)
{
    kmutex_lock(&db->tables_mu);
    t->ix_rebuilding = false;
    t->refs--; /* table_release, under the same lock */
    db->ix_rebuilds--;
    kcond_broadcast(&db->tables_cv);
    kmutex_unlock(&db->tables_mu);
}

kura_status kura_rebuild_index(kura_db *db, const char *table_name, const char *index_name)
{
    kura_table *t;
    kura_status s = table_acquire_named(db, table_name, &t);
    if (s != KURA_OK)
        return s;
    uint32_t pos, id;
    if ((s = rb_claim(db, t, index_name, &pos, &id)) != KURA_OK) {
        table_release(t);
        return s;
    }
    s = table_index_rebuild(db, t, pos, id);
    rb_unclaim(db, t); /* sets no error: the message of a failure stays */
    return s;
}

void table_rebuilds_stop(kura_db *db)
{
    atomic_store(&db->ix_rebuild_stop, true);
    kmutex_lock(&db->tables_mu);
    while (db->ix_rebuilds > 0)
        kcond_wait(&db->tables_cv, &db->tables_mu);
    kmutex_unlock(&db->tables_mu);
}

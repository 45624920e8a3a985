/*
 * ixdamage.c - This file contains the index damager of the rebuild tests (ixdamage.h): the
 * items an index holds, read from a scan of the table, and entry changes planted straight into
 * the index's partitions at fresh sequence numbers; and the catalog rewritten as an earlier
 * kura left it.
 */
#include "ixdamage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "engine/lsm/batch.h"
#include "engine/table_index.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/hash.h"
#include "util/status.h"

enum { IXD_MAX_ITEMS = 4096 };

const char *ixd_kind_word(ixd_kind kind)
{
    return kind == IXD_EXTRA ? "extra" : kind == IXD_STALE ? "stale" : "missing";
}

/* Inserts (key, val) into the index tree, or deletes key when val is NULL, at a new sequence
 * that is visible when this returns. */
static kura_status plant(kura_db *db, kura_tree *ix, const kbuf *key, const kbuf *val)
{
    lsm_batch b;
    lsm_batch_init(&b);
    kura_status s = val ? lsm_batch_put(&b, key->data, key->len, val->data, val->len)
                        : lsm_batch_delete(&b, key->data, key->len);
    if (s == KURA_OK) {
        uint64_t seq = lsm_seq_alloc(&db->sh, 1);
        lsm_rep_set_seq(b.rep.data, seq);
        uint32_t part = ix->nparts == 1 ? 0 : kura_hash_bucket(dec_fixed64_be(key->data), ix->nparts);
        s = lsm_apply(ix->parts[part], b.rep.data, b.rep.len);
        lsm_seq_complete(&db->sh, seq, seq);
    }
    lsm_batch_free(&b);
    return s;
}

/* The items of the table that index d holds (at most IXD_MAX_ITEMS), decoded. */
static kura_status held_items(kura_table *t, const idx_def *d, kura_value **out, size_t *n_out)
{
    kura_value *v = calloc(IXD_MAX_ITEMS, sizeof *v);
    size_t n = 0;
    kura_iter *it = NULL;
    kura_status s = v ? kura_iter_new(t->tree, NULL, &it) : KURA_E_NOMEM;
    if (s == KURA_OK)
        kura_iter_seek_first(it);
    for (; s == KURA_OK && kura_iter_valid(it) && n < IXD_MAX_ITEMS; kura_iter_next(it)) {
        size_t vlen;
        const uint8_t *val = kura_iter_value(it, &vlen);
        if ((s = val_decode(val, vlen, &v[n])) != KURA_OK)
            break;
        if (idx_indexable(d, &v[n]) && idx_has_entry(d, &v[n]))
            n++;
        else
            val_clear(&v[n]);
    }
    if (s == KURA_OK)
        s = kura_iter_status(it);
    kura_iter_free(it);
    *out = v;
    *n_out = n;
    return s;
}

static bool is_table_key(const kura_table *t, const char *name)
{
    return !strcmp(name, t->pk_name) || (t->sk_name && !strcmp(name, t->sk_name));
}

/* An older version of `a`: its index key attributes that are not table key attributes taken
 * from `donor`. False when that changes nothing. */
static bool older_version(const kura_table *t, const idx_def *d, const kura_value *a,
                          const kura_value *donor, kura_value *out)
{
    bool changed = false;
    if (val_copy(out, a) != KURA_OK)
        return false;
    for (uint32_t i = 0; i < d->nhash + d->nrange; i++) {
        const idx_key_attr *ka = i < d->nhash ? &d->hash[i] : &d->range[i - d->nhash];
        size_t len = strlen(ka->name);
        const kura_value *dv = val_map_get(donor, ka->name, len);
        if (is_table_key(t, ka->name) || val_equal(dv, val_map_get(a, ka->name, len)))
            continue;
        kura_value c = {0};
        if (val_copy(&c, dv) != KURA_OK || val_map_put(out, ka->name, len, &c) != KURA_OK)
            return false;
        changed = true;
    }
    return changed;
}

static kura_status entry_of(const kura_table *t, const idx_def *d, const kura_value *item,
                            kbuf *k, kbuf *v)
{
    bool present = false;
    k->len = v->len = 0;
    kura_status s = idx_entry_key(d, &t->ks, item, k, &present);
    if (s == KURA_OK && present)
        s = idx_entry_value(d, &t->ks, item, v);
    return s == KURA_OK && !present ? KURA_E_INVALID : s;
}

/* One damage of `kind` on item a, helped by item b. */
static kura_status damage_one(kura_db *db, kura_table *t, uint32_t pos, ixd_kind kind,
                              const kura_value *a, const kura_value *b)
{
    const idx_def *d = table_index_def(t, pos);
    kbuf k = KBUF_INIT, v = KBUF_INIT, k2 = KBUF_INIT, v2 = KBUF_INIT;
    kura_value old = {0};
    kura_status s = entry_of(t, d, a, &k, &v);
    if (s == KURA_OK && kind == IXD_EXTRA) {
        s = older_version(t, d, a, b, &old) ? entry_of(t, d, &old, &k2, &v2) : KURA_E_INVALID;
        if (s == KURA_OK)
            s = plant(db, t->ix_trees[pos], &k2, &v2);
    } else if (s == KURA_OK && kind == IXD_STALE) {
        if ((s = entry_of(t, d, b, &k2, &v2)) == KURA_OK)
            s = v2.len == v.len && !memcmp(v2.data, v.data, v.len)
                    ? KURA_E_INVALID
                    : plant(db, t->ix_trees[pos], &k, &v2);
    } else if (s == KURA_OK) {
        s = plant(db, t->ix_trees[pos], &k, NULL);
    }
    val_clear(&old);
    kbuf_free(&k);
    kbuf_free(&v);
    kbuf_free(&k2);
    kbuf_free(&v2);
    return s;
}

kura_status ixd_damage(kura_db *db, const char *table, const char *index, ixd_kind kind,
                       uint32_t n, uint64_t seed)
{
    kura_table *t;
    kura_status s = table_acquire(db, table, &t);
    if (s != KURA_OK)
        return s;
    int pos = table_index_find(t, index);
    kura_value *items = NULL;
    size_t nitems = 0;
    if (pos < 0)
        s = kura_err(KURA_E_RESOURCE_NOT_FOUND, "no index %s", index);
    else
        s = held_items(t, table_index_def(t, (uint32_t)pos), &items, &nitems);
    if (s == KURA_OK && nitems < 3)
        s = kura_err(KURA_E_INVALID, "index %s holds %zu items", index, nitems);
    /* distinct victims (a damage to an item another one already damaged might undo it) */
    uint32_t done = 0;
    uint64_t rng = seed;
    for (size_t start = test_rand(&rng) % (nitems ? nitems : 1), i = 0;
         s == KURA_OK && done < n && i < nitems; i++) {
        size_t ia = (start + i) % nitems, ib = (ia + 1 + test_rand(&rng) % (nitems - 1)) % nitems;
        kura_status d = damage_one(db, t, (uint32_t)pos, kind, &items[ia], &items[ib]);
        if (d == KURA_OK)
            done++;
        else if (d != KURA_E_INVALID) /* INVALID: this pair cannot show the damage */
            s = d;
    }
    if (s == KURA_OK && done < n)
        s = kura_err(KURA_E_INVALID, "index %s: only %u of %u damages made", index, done, n);
    for (size_t i = 0; i < nitems; i++)
        val_clear(&items[i]);
    free(items);
    table_release(t);
    return s;
}

/* ---- The catalog ------------------------------------------------------------------------- */

void ixd_catalog_rewrite(const char *dir, unsigned (*fix)(const char *name, unsigned flags))
{
    char path[4096], line[512], name[256];
    snprintf(path, sizeof path, "%s/KURA", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("open %s", path);
    static char out[1 << 16];
    size_t n = 0;
    unsigned parts, flags;
    while (fgets(line, sizeof line, f) && strncmp(line, "crc32c ", 7) != 0) {
        if (sscanf(line, "tree %255s %u %u", name, &parts, &flags) == 3)
            n += (size_t)snprintf(out + n, sizeof out - n, "tree %s %u %u\n", name, parts,
                                  fix(name, flags));
        else
            n += (size_t)snprintf(out + n, sizeof out - n, "%s", line);
    }
    fclose(f);
    n += (size_t)snprintf(out + n, sizeof out - n, "crc32c %08x\n", crc32c(out, n));
    if (!(f = fopen(path, "w")) || fwrite(out, 1, n, f) != n || fclose(f) != 0)
        fail_msg("write %s", path);
}

unsigned ixd_as_old_kura(const char *name, unsigned flags)
{
    return !strncmp(name, "idx-", 4) ? flags & ~16u : flags;
}

void ixd_catalog_index_trees(const char *dir, size_t *n_out, size_t *unflagged_out)
{
    char path[4096], line[512], name[256];
    snprintf(path, sizeof path, "%s/KURA", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("open %s", path);
    size_t n = 0, unflagged = 0;
    unsigned parts, flags;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "tree %255s %u %u", name, &parts, &flags) == 3 &&
            !strncmp(name, "idx-", 4)) {
            n++;
            unflagged += !(flags & 16);
        }
    fclose(f);
    *n_out = n;
    *unflagged_out = unflagged;
}

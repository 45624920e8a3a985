/*
 * ixwork_check.c - the checker of the item workload (ixwork.h): every item of the model read
 * back with a consistent GetItem and compared, in canonical JSON, with its base and its
 * pending versions; a Scan counts the table's items, so no item outside the model exists;
 * the table's indexes recomputed from the items (index_check.h); and its index trees in the
 * catalog and on disk against its index definitions.
 */
#include "crash/ixwork_int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash/index_check.h"
#include "engine/table.h"
#include "engine/table_index.h"

/* Canonical JSON (attributes in name order, canonical numbers) of a value; malloc'ed. */
static char *canon_value(const kura_value *v)
{
    char *json = NULL;
    size_t len = 0;
    if (kura_value_to_json(v, true, &json, &len) != KURA_OK)
        abort();
    return json;
}

/* The canonical JSON of a model version, NULL if absent. Free with kura_free. */
static char *canon_model(uint32_t t, uint32_t k, const ixw_item *it)
{
    if (!it->exists)
        return NULL;
    size_t cap = IXW_MAX_PAD + 1024;
    char *buf = malloc(cap);
    if (!buf)
        abort();
    size_t n = ixw_item_json(t, k, it, buf, cap);
    kura_value *v = NULL;
    if (n >= cap || kura_value_from_json(buf, n, true, &v) != KURA_OK)
        abort(); /* the model writes valid items */
    free(buf);
    char *json = canon_value(v);
    kura_value_free(v);
    return json;
}

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Which version of cell (t, k) `got` is: -1 the base, i >= 0 vers[i], -2 none. */
static long find_version(const ixw_cell *c, uint32_t t, uint32_t k, const char *got)
{
    char *m = canon_model(t, k, &c->base);
    bool match = same(m, got);
    kura_free(m);
    if (match)
        return -1;
    for (size_t i = c->nvers; i-- > 0;) {
        m = canon_model(t, k, &c->vers[i].item);
        match = same(m, got);
        kura_free(m);
        if (match)
            return (long)i;
    }
    return -2;
}

static void describe_miss(const ixw *w, uint32_t t, uint32_t k, const char *got, char *why,
                          size_t cap)
{
    const ixw_cell *c = ixw_cell_of(w, t, k);
    char *base = canon_model(t, k, &c->base);
    char *last = c->nvers ? canon_model(t, k, &c->vers[c->nvers - 1].item) : NULL;
    snprintf(why, cap, "writer %u item k%03u: found %.300s; expected %s%.300s or one of %zu "
                       "later versions (last: op %llu, %.300s); writer acked op %llu, "
                       "attempted %llu",
             t, k, got ? got : "no item", c->base.exists ? "" : "no item", base ? base : "",
             c->nvers, c->nvers ? (unsigned long long)c->vers[c->nvers - 1].opno : 0ull,
             last ? last : "no item", (unsigned long long)w->acked[t],
             (unsigned long long)(w->next[t] - 1));
    kura_free(base);
    kura_free(last);
}

/* The number of items in the table (a consistent Scan with Select COUNT), or -1 with why. */
static int64_t count_items(kura_db *db, char *why, size_t cap)
{
    int64_t n = 0;
    kura_value *start = NULL;
    for (;;) {
        kura_scan_req req = {.table_name = IXW_TABLE, .select = KURA_SELECT_COUNT,
                             .consistent_read = true, .exclusive_start_key = start};
        kura_page page;
        memset(&page, 0, sizeof page);
        kura_status s = kura_scan(db, &req, &page);
        kura_value_free(start);
        start = NULL;
        if (s != KURA_OK) {
            snprintf(why, cap, "Scan: %s: %s", kura_status_str(s), kura_last_error());
            return -1;
        }
        n += (int64_t)page.count;
        if (page.last_evaluated_key)
            start = kura_value_clone(page.last_evaluated_key);
        kura_page_free(&page);
        if (!start)
            return n;
    }
}

bool ixw_check(ixw *w, kura_db *db, bool commit, char *why, size_t cap)
{
    size_t ncells = (size_t)w->cfg.nwriters * w->cfg.keys_per_writer;
    long *found = calloc(ncells, sizeof *found);
    if (!found)
        abort();
    bool ok = true, no_table = false;
    int64_t present = 0;
    for (uint32_t t = 0; ok && t < w->cfg.nwriters; t++)
        for (uint32_t k = 0; ok && k < w->cfg.keys_per_writer; k++) {
            kura_get_item_res res;
            memset(&res, 0, sizeof res);
            kura_status s = KURA_OK;
            if (!no_table) {
                kura_value *key = ixw_key_value(t, k);
                kura_get_item_req req = {.table_name = IXW_TABLE, .key = key,
                                         .consistent_read = true};
                s = kura_get_item(db, &req, &res);
                kura_value_free(key);
            }
            if (s == KURA_E_RESOURCE_NOT_FOUND) { /* the crash came before CreateTable */
                no_table = true;
                s = KURA_OK;
            }
            if (s != KURA_OK) {
                snprintf(why, cap, "GetItem of writer %u item k%03u: %s: %s", t, k,
                         kura_status_str(s), kura_last_error());
                ok = false;
                break;
            }
            char *got = res.item ? canon_value(res.item) : NULL;
            present += res.item != NULL;
            long v = find_version(ixw_cell_of(w, t, k), t, k, got);
            if (v == -2) {
                describe_miss(w, t, k, got, why, cap);
                ok = false;
            }
            found[(size_t)t * w->cfg.keys_per_writer + k] = v;
            kura_free(got);
            kura_get_item_res_free(&res);
        }
    if (ok && !no_table) {
        int64_t n = count_items(db, why, cap);
        if (n < 0) {
            ok = false;
        } else if (n != present) {
            snprintf(why, cap, "the table holds %lld items, the model's keys %lld",
                     (long long)n, (long long)present);
            ok = false;
        }
    }
    if (ok && commit) {
        for (size_t i = 0; i < ncells; i++) {
            ixw_cell *c = &w->cells[i];
            if (found[i] >= 0)
                c->base = c->vers[found[i]].item;
            c->nvers = 0;
        }
        for (uint32_t t = 0; t < w->cfg.nwriters; t++)
            w->acked[t] = w->next[t] - 1;
    }
    free(found);
    return ok;
}

bool ixw_check_indexes(kura_db *db, uint64_t wait_ms, char *why, size_t cap)
{
    kura_status s = index_check_table(db, IXW_TABLE, wait_ms);
    if (s == KURA_E_RESOURCE_NOT_FOUND)
        return true; /* no table yet */
    if (s != KURA_OK) {
        snprintf(why, cap, "index check: %s: %s", kura_status_str(s), kura_last_error());
        return false;
    }
    for (int i = 0; i < 3; i++) {
        kura_index_stats st;
        s = kura_index_stats_get(db, IXW_TABLE, IXW_INDEXES[i], &st);
        if (s != KURA_OK || st.error != KURA_OK) {
            snprintf(why, cap, "index %s: %s, applier error %s", IXW_INDEXES[i],
                     kura_status_str(s), kura_status_str(st.error));
            return false;
        }
    }
    /* and everything else `kura check` looks at: files, collections (no false positive
     * after a kill -9, a power loss or an injected fault either) */
    if ((s = index_check_all(db)) != KURA_OK) {
        snprintf(why, cap, "%s: %s", kura_status_str(s), kura_last_error());
        return false;
    }
    return true;
}

bool ixw_check_trees(kura_db *db, const char *dir, uint64_t *leftovers_out, char *why,
                     size_t cap)
{
    kura_table *t;
    if (table_acquire(db, IXW_TABLE, &t) != KURA_OK)
        return true; /* no table (the crash came before CreateTable) */
    char want[32][64], prefix[64];
    uint32_t nwant = 0;
    snprintf(prefix, sizeof prefix, "idx-%llu-", (unsigned long long)t->id);
    for (uint32_t i = 0; i < table_nindexes(t) && nwant < 32; i++) {
        const idx_def *d = table_index_def(t, i);
        if (d->status != IDX_DELETED)
            table_index_tree_name(t, d, want[nwant++], sizeof want[0]);
    }
    table_release(t);
    const char *names[256];
    size_t ntrees = kura_tree_list(db, names, 256);
    uint32_t in_catalog = 0;
    for (size_t i = 0; i < ntrees && i < 256; i++) {
        if (strncmp(names[i], prefix, strlen(prefix)))
            continue;
        bool known = false;
        for (uint32_t j = 0; j < nwant && !known; j++)
            known = !strcmp(want[j], names[i]);
        if (!known) {
            snprintf(why, cap, "the catalog has tree %s, which belongs to no index of the table",
                     names[i]);
            return false;
        }
        in_catalog++;
    }
    if (in_catalog != nwant) {
        snprintf(why, cap, "the catalog has %u index trees, the table %u indexes", in_catalog,
                 nwant);
        return false;
    }
    DIR *dd = opendir(dir);
    if (!dd) {
        snprintf(why, cap, "opendir %s failed", dir);
        return false;
    }
    uint32_t found = 0;
    uint64_t left = 0;
    struct dirent *e;
    while ((e = readdir(dd)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        bool known = false;
        for (uint32_t i = 0; i < nwant && !known; i++)
            known = !strcmp(want[i], e->d_name);
        found += known;
        left += !known;
    }
    closedir(dd);
    *leftovers_out = left;
    if (found != nwant) {
        snprintf(why, cap, "%u of the table's %u index trees have a directory", found, nwant);
        return false;
    }
    return true;
}

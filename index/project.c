/*
 * project.c - This file contains the projection of an item into an index: which of its
 * attributes an entry stores (the table's and the index's key attributes always; KEYS_ONLY
 * nothing more, INCLUDE the named attributes the item has, ALL every attribute), as a map
 * (idx_project), as the entry value (idx_entry_value), as a size (the index's write units)
 * and as a comparison of two items (whether a write changes the entry value).
 *
 * For KEYS_ONLY and INCLUDE the projected attributes are found by looking each projected
 * name up in the item (a binary search each) rather than by asking of every attribute of
 * the item whether it is projected: an item may have thousands of attributes, a projection
 * at most 2 + 8 + 100 names. The attributes found are pointers into the item's sorted
 * attribute array, so sorting them by address puts them in name order and brings a name
 * listed twice (an LSI's partition key is also the table's) next to itself.
 *
 * The entry value is written directly in the item encoding of a map (docs/format/item.md:
 * tag, count, then per attribute in name order its name and encoded value), so that no copy
 * of the projected values is made; idx_entry_value(item) equals val_encode(idx_project(item))
 * (tests/unit/idx_entry_test.c checks it).
 */
#include "index/index_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The projected attributes of an item, in name order (KEYS_ONLY and INCLUDE). */
typedef struct idx_proj {
    const kura_attr **a;
    uint32_t n;
    const kura_attr *small[2 + 2 * IDX_MAX_KEY_ATTRS + 16]; /* a, unless the list is longer */
} idx_proj;

static void idx_proj_free(idx_proj *p)
{
    if (p->a != p->small) free(p->a);
}

static void idx_proj_add(idx_proj *p, const kura_value *item, const char *name)
{
    const kura_value *v = name ? val_map_get(item, name, strlen(name)) : NULL;
    if (v != NULL) p->a[p->n++] = (const kura_attr *)((const char *)v - offsetof(kura_attr, value));
}

static int idx_proj_cmp(const void *x, const void *y)
{
    const kura_attr *a = *(const kura_attr *const *)x, *b = *(const kura_attr *const *)y;
    return (a > b) - (a < b);
}

/* Collects the projected attributes of `item` (not for ALL). */
static kura_status idx_proj_collect(const idx_def *d, const key_schema *table,
                                    const kura_value *item, idx_proj *p)
{
    uint32_t cap = 2 + d->nhash + d->nrange;
    if (d->projection == KURA_PROJECTION_INCLUDE) cap += d->ninclude;
    p->n = 0;
    p->a = p->small;
    if (cap > sizeof p->small / sizeof p->small[0] && !(p->a = malloc(cap * sizeof *p->a)))
        return kura_err(KURA_E_NOMEM, "out of memory");
    idx_proj_add(p, item, table->pk_name);
    idx_proj_add(p, item, table->sk_name);
    for (uint32_t i = 0; i < d->nhash; i++)
        idx_proj_add(p, item, d->hash[i].name);
    for (uint32_t i = 0; i < d->nrange; i++)
        idx_proj_add(p, item, d->range[i].name);
    for (uint32_t i = 0; d->projection == KURA_PROJECTION_INCLUDE && i < d->ninclude; i++)
        idx_proj_add(p, item, d->include[i]);
    qsort(p->a, p->n, sizeof *p->a, idx_proj_cmp);
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->n; i++)
        if (k == 0 || p->a[k - 1] != p->a[i]) p->a[k++] = p->a[i];
    p->n = k;
    return KURA_OK;
}

kura_status idx_project(const idx_def *d, const key_schema *table, const kura_value *item,
                        kura_value *dst)
{
    if (d->projection == KURA_PROJECTION_ALL) return val_copy(dst, item);
    idx_proj p;
    kura_value m;
    kura_status st = idx_proj_collect(d, table, item, &p);
    if (st != KURA_OK) return st;
    val_init_container(&m, KURA_M);
    for (uint32_t i = 0; st == KURA_OK && i < p.n; i++) {
        kura_value v = {0};
        st = val_copy(&v, &p.a[i]->value);
        if (st == KURA_OK) st = val_map_put(&m, p.a[i]->name, p.a[i]->name_len, &v);
    }
    idx_proj_free(&p);
    if (st != KURA_OK) {
        val_clear(&m);
        return st;
    }
    val_move(dst, &m);
    return KURA_OK;
}

kura_status idx_entry_value(const idx_def *d, const key_schema *table, const kura_value *item,
                            kbuf *out)
{
    if (d->projection == KURA_PROJECTION_ALL) return val_encode(item, out);
    idx_proj p;
    kura_status st = idx_proj_collect(d, table, item, &p);
    if (st != KURA_OK) return st;
    size_t start = out->len;
    bool ok = kbuf_put_u8(out, KURA_M) && kbuf_put_varint(out, p.n);
    for (uint32_t i = 0; ok && st == KURA_OK && i < p.n; i++) {
        ok = kbuf_put_lenbytes(out, p.a[i]->name, p.a[i]->name_len);
        if (ok) st = val_encode(&p.a[i]->value, out);
    }
    idx_proj_free(&p);
    if (st == KURA_OK && !ok) st = kura_err(KURA_E_NOMEM, "out of memory");
    if (st != KURA_OK) out->len = start;
    return st;
}

kura_status idx_projected_size(const idx_def *d, const key_schema *table, const kura_value *item,
                               size_t *size_out)
{
    if (d->projection == KURA_PROJECTION_ALL) {
        *size_out = val_item_size(item);
        return KURA_OK;
    }
    idx_proj p;
    size_t size = 0;
    kura_status st = idx_proj_collect(d, table, item, &p);
    if (st != KURA_OK) return st;
    for (uint32_t i = 0; i < p.n; i++)
        size += p.a[i]->name_len + val_size(&p.a[i]->value);
    idx_proj_free(&p);
    *size_out = size;
    return KURA_OK;
}

/* Whether `name` has equal values (or is absent) in both items. */
static bool idx_attr_equal(const kura_value *a, const kura_value *b, const char *name)
{
    if (name == NULL) return true;
    size_t len = strlen(name);
    const kura_value *va = val_map_get(a, name, len), *vb = val_map_get(b, name, len);
    return va == vb || (va != NULL && vb != NULL && val_equal(va, vb));
}

bool idx_projection_equal(const idx_def *d, const key_schema *table, const kura_value *a,
                          const kura_value *b)
{
    if (d->projection == KURA_PROJECTION_ALL) return val_equal(a, b);
    bool eq = idx_attr_equal(a, b, table->pk_name) && idx_attr_equal(a, b, table->sk_name);
    for (uint32_t i = 0; eq && i < d->nhash; i++)
        eq = idx_attr_equal(a, b, d->hash[i].name);
    for (uint32_t i = 0; eq && i < d->nrange; i++)
        eq = idx_attr_equal(a, b, d->range[i].name);
    for (uint32_t i = 0; eq && d->projection == KURA_PROJECTION_INCLUDE && i < d->ninclude; i++)
        eq = idx_attr_equal(a, b, d->include[i]);
    return eq;
}

/*
 * def.c - This file contains the lifecycle of an index definition (idx_def_clear,
 * idx_def_copy) and the two questions asked of it about attribute names: is this one of the
 * index's key attributes, and does the index store this attribute (its projection).
 *
 * Names are compared as bytes with their lengths, as item attribute names are (they may
 * hold any bytes; a definition's names are NUL-terminated copies of the schema's).
 */
#include "index/index_int.h"

#include <stdlib.h>
#include <string.h>

static bool idx_name_eq(const char *a, const char *name, size_t len)
{
    return a != NULL && strlen(a) == len && memcmp(a, name, len) == 0;
}

void idx_def_clear(idx_def *d)
{
    if (d == NULL) return;
    free(d->name);
    for (uint32_t i = 0; i < IDX_MAX_KEY_ATTRS; i++) {
        free(d->hash[i].name);
        free(d->range[i].name);
    }
    for (uint32_t i = 0; i < d->ninclude; i++)
        free(d->include[i]);
    free(d->include);
    memset(d, 0, sizeof *d);
}

/* *dst = a copy of src (NULL stays NULL); false when out of memory. */
static bool idx_dup(char **dst, const char *src)
{
    if (src == NULL) return true;
    *dst = strdup(src);
    return *dst != NULL;
}

kura_status idx_def_copy(idx_def *dst, const idx_def *src)
{
    idx_def d = *src;
    bool ok = true;
    /* Drop the borrowed pointers first, so that a failure half-way frees only copies. */
    d.name = NULL;
    d.include = NULL;
    d.ninclude = 0;
    for (uint32_t i = 0; i < IDX_MAX_KEY_ATTRS; i++)
        d.hash[i].name = d.range[i].name = NULL;

    ok = idx_dup(&d.name, src->name);
    for (uint32_t i = 0; ok && i < src->nhash; i++)
        ok = idx_dup(&d.hash[i].name, src->hash[i].name);
    for (uint32_t i = 0; ok && i < src->nrange; i++)
        ok = idx_dup(&d.range[i].name, src->range[i].name);
    if (ok && src->ninclude > 0) {
        d.include = calloc(src->ninclude, sizeof *d.include);
        ok = d.include != NULL;
        for (uint32_t i = 0; ok && i < src->ninclude; i++, d.ninclude++)
            ok = idx_dup(&d.include[i], src->include[i]);
    }
    if (!ok) {
        idx_def_clear(&d);
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    *dst = d;
    return KURA_OK;
}

bool idx_is_key_attr(const idx_def *d, const char *name, size_t len)
{
    for (uint32_t i = 0; i < d->nhash; i++)
        if (idx_name_eq(d->hash[i].name, name, len)) return true;
    for (uint32_t i = 0; i < d->nrange; i++)
        if (idx_name_eq(d->range[i].name, name, len)) return true;
    return false;
}

bool idx_projects(const idx_def *d, const key_schema *table, const char *name, size_t len)
{
    if (d->projection == KURA_PROJECTION_ALL) return true;
    if (idx_name_eq(table->pk_name, name, len) || idx_name_eq(table->sk_name, name, len) ||
        idx_is_key_attr(d, name, len))
        return true;
    if (d->projection != KURA_PROJECTION_INCLUDE) return false;
    for (uint32_t i = 0; i < d->ninclude; i++)
        if (idx_name_eq(d->include[i], name, len)) return true;
    return false;
}

bool idx_has_entry(const idx_def *d, const kura_value *item)
{
    for (uint32_t i = 0; i < d->nhash + d->nrange; i++) {
        const idx_key_attr *a = i < d->nhash ? &d->hash[i] : &d->range[i - d->nhash];
        if (!val_map_get(item, a->name, strlen(a->name)))
            return false;
    }
    return true;
}

const kura_value *idx_indexable(const idx_def *d, const kura_value *item)
{
    if (!item || idx_check_item(d, item) == KURA_OK)
        return item;
    return NULL;
}

const kura_value *idx_indexed_before(const idx_def *d, const kura_value *item)
{
    if (!item || idx_check_item_types(d, item) == KURA_OK)
        return item;
    return NULL;
}

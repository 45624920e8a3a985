/*
 * page.c - This file contains what Query and Scan share: parsing their expressions, the
 * Select and key-path checks, and the page loop (engine/page.h) that reads one page of items
 * from a range of storage keys.
 *
 * The loop positions one iterator (over the partitions of the range, at the iterator's
 * snapshot) at the first key of the range, or at the last one when reading backwards, and
 * then per item: decodes the stored item once into a stack value, adds its DynamoDB size to
 * the bytes read, evaluates the filter on it, and moves it (or its projection) into the result
 * list without copying. It stops at the end of the range, after `limit` items read, or once
 * 1 MB was read; in the last two cases the key of the item it stopped on, still under the
 * iterator, becomes LastEvaluatedKey. dynalite's db/index.js queryTable and DynamoDB Local
 * 1.25.1 agree on these rules: a page that reads exactly `limit` items returns a
 * LastEvaluatedKey even if nothing follows.
 *
 * On a secondary index (IndexName) the loop walks the index's tree the same way: an entry's
 * value is the projected item, its key gives LastEvaluatedKey (idx_entry_parse: the index's
 * and the table's key attributes) and, when the request needs what the index does not store,
 * the table key to read the whole item with (page.h, page_index). This file also holds the
 * checks of a read on an index that Query and Scan share: the index, ConsistentRead, the
 * start key, and what Select, the projection and the filter may name, with DynamoDB Local
 * 1.25.1's messages.
 */
#include "engine/page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tcap.h"
#include "util/status.h"

/* ---- Expressions ------------------------------------------------------------------------- */

kura_status page_exprs_parse(const kura_expression_attributes *ea, bool is_query,
                             const char *key_cond, const char *filter, const char *proj,
                             page_exprs *out)
{
    page_exprs e = {0};
    kura_status s = KURA_OK;
    bool any = key_cond || filter || proj;
    if (ea->names && !any)
        return kura_err(KURA_E_INVALID,
                        "ExpressionAttributeNames can only be specified when using expressions");
    if (ea->values && !key_cond && !filter)
        return kura_err(KURA_E_INVALID,
                        "ExpressionAttributeValues can only be specified when using "
                        "expressions: %s",
                        is_query ? "FilterExpression and KeyConditionExpression are null"
                                 : "FilterExpression is null");
    if (is_query && !key_cond)
        return kura_err(KURA_E_INVALID, "Either the KeyConditions or KeyConditionExpression "
                                        "parameter must be specified in the request.");
    if (!any && !ea->names && !ea->values) {
        *out = e;
        return KURA_OK;
    }
    s = expr_ctx_new(ea->names, ea->values, &e.ctx);
    if (s == KURA_OK && key_cond)
        s = expr_parse_condition(e.ctx, EXPR_KEY_CONDITION, key_cond, &e.key_cond);
    if (s == KURA_OK && filter) s = expr_parse_condition(e.ctx, EXPR_FILTER, filter, &e.filter);
    if (s == KURA_OK && proj) s = expr_parse_projection(e.ctx, proj, &e.proj);
    if (s == KURA_OK) s = expr_check_unused(e.ctx);
    if (s != KURA_OK) {
        page_exprs_free(&e);
        return s;
    }
    *out = e;
    return KURA_OK;
}

void page_exprs_free(page_exprs *e)
{
    expr_ctx_free(e->ctx);
    memset(e, 0, sizeof *e);
}

/* ---- Checks ------------------------------------------------------------------------------ */

/* The messages are DynamoDB Local 1.25.1's (dynalite has none for Select). */
kura_status page_check_select(kura_select select, bool has_proj, bool indexed, bool *count_only_out)
{
    switch (select) {
    case KURA_SELECT_DEFAULT:
        break;
    case KURA_SELECT_ALL_ATTRIBUTES:
        if (has_proj)
            return kura_err(KURA_E_INVALID, "Cannot specify the ProjectionExpression when "
                                            "choosing to get ALL_ATTRIBUTES");
        break;
    case KURA_SELECT_ALL_PROJECTED_ATTRIBUTES:
        if (has_proj)
            return kura_err(KURA_E_INVALID, "Cannot specify the ProjectionExpression when "
                                            "choosing to get ALL_PROJECTED_ATTRIBUTES");
        if (!indexed)
            return kura_err(KURA_E_INVALID, "ALL_PROJECTED_ATTRIBUTES can be used only when "
                                            "Querying using an IndexName");
        break;
    case KURA_SELECT_SPECIFIC_ATTRIBUTES:
        if (!has_proj)
            return kura_err(KURA_E_INVALID, "Must specify the AttributesToGet or "
                                            "ProjectionExpression when choosing to get "
                                            "SPECIFIC_ATTRIBUTES");
        break;
    case KURA_SELECT_COUNT:
        if (has_proj)
            return kura_err(KURA_E_INVALID, "Cannot specify the ProjectionExpression when "
                                            "choosing to get only the Count");
        break;
    default:
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '%d' at 'select' failed to satisfy "
                        "constraint: Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, "
                        "COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]",
                        (int)select);
    }
    *count_only_out = select == KURA_SELECT_COUNT;
    return KURA_OK;
}

static bool page_name_is(const expr_path_elem *e, const char *name, size_t name_len)
{
    return !e->is_index && e->name_len == name_len && memcmp(e->name, name, name_len) == 0;
}

/* Whether `n` holds a path of more than one element starting at `name`. */
static bool page_expr_nests(const expr_node *n, const char *name, size_t name_len)
{
    if (n->op == EXPR_OP_PATH)
        return n->path.n > 1 && page_name_is(&n->path.elems[0], name, name_len);
    for (uint32_t i = 0; i < n->nkids; i++)
        if (page_expr_nests(n->kids[i], name, name_len)) return true;
    return false;
}

bool page_expr_uses(const expr_node *n, const char *name, size_t name_len)
{
    if (n->op == EXPR_OP_PATH) return page_name_is(&n->path.elems[0], name, name_len);
    for (uint32_t i = 0; i < n->nkids; i++)
        if (page_expr_uses(n->kids[i], name, name_len)) return true;
    return false;
}

static bool page_proj_nests(const expr_projection *p, const char *name, size_t name_len)
{
    for (uint32_t i = 0; i < p->n; i++)
        if (p->paths[i].n > 1 && page_name_is(&p->paths[i].elems[0], name, name_len)) return true;
    return false;
}

/* Whether the projection (pass 0) or the filter (pass 1) has a nested path into `name`. */
static bool page_nests(int pass, const expr_projection *proj, const expr_node *filter,
                       const char *name)
{
    size_t len = strlen(name);
    return pass == 0 ? proj && page_proj_nests(proj, name, len)
                     : filter && page_expr_nests(filter, name, len);
}

#define PAGE_MSG_SCALAR                                                                            \
    "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "          \
    "allowed: "

/* page_check_key_paths with tables_mu held. */
static kura_status page_key_paths_locked(const kura_table *t, const expr_projection *proj,
                                         const expr_node *filter)
{
    const char *keys[2] = {t->pk_name, t->sk_name};
    uint32_t nix = table_nindexes(t);
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < 2 && keys[k]; k++)
            if (page_nests(pass, proj, filter, keys[k]))
                return kura_err(KURA_E_INVALID, PAGE_MSG_SCALAR "Key: %s", keys[k]);
        /* GSIs (every key attribute), then LSIs (their RANGE attribute), as dynalite */
        for (uint32_t j = 0; j < nix; j++) {
            const idx_def *d = table_index_def(t, (j + t->nlsi) % nix);
            if (d->status == IDX_DELETING || d->status == IDX_DELETED) continue;
            for (uint32_t a = d->kind == IDX_LOCAL ? d->nhash : 0; a < d->nhash + d->nrange; a++) {
                const char *name = a < d->nhash ? d->hash[a].name : d->range[a - d->nhash].name;
                if (page_nests(pass, proj, filter, name))
                    return kura_err(KURA_E_INVALID, PAGE_MSG_SCALAR "IndexKey: %s", name);
            }
        }
    }
    return KURA_OK;
}

kura_status page_check_key_paths(const kura_table *t, const expr_projection *proj,
                                 const expr_node *filter)
{
    if (!proj && !filter) return KURA_OK;
    kura_db *db = t->tree->db;
    kmutex_lock(&db->tables_mu); /* UpdateTable adds and drops GSIs under it */
    kura_status s = page_key_paths_locked(t, proj, filter);
    kmutex_unlock(&db->tables_mu);
    return s;
}

kura_status scan_check_segment_params(bool has_segment, uint32_t segment, bool has_total_segments,
                                      uint32_t total_segments)
{
    if (has_total_segments && (total_segments < 1 || total_segments > 1000000))
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '%u' at 'totalSegments' failed to "
                        "satisfy constraint: Member must have value %s",
                        total_segments,
                        total_segments < 1 ? "greater than or equal to 1"
                                           : "less than or equal to 1000000");
    if (has_segment && segment > 999999)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value '%u' at 'segment' failed to "
                        "satisfy constraint: Member must have value less than or equal to "
                        "999999",
                        segment);
    if (has_segment && segment != 0 && !has_total_segments)
        return kura_err(KURA_E_INVALID, "The TotalSegments parameter is required but was not "
                                        "present in the request when Segment parameter is "
                                        "present");
    if (has_total_segments && !has_segment)
        return kura_err(KURA_E_INVALID, "The Segment parameter is required but was not present "
                                        "in the request when parameter TotalSegments is "
                                        "present");
    if (has_total_segments && segment >= total_segments)
        return kura_err(KURA_E_INVALID,
                        "The Segment parameter is zero-based and must be less than parameter "
                        "TotalSegments: Segment: %u is not less than TotalSegments: %u",
                        segment, total_segments);
    return KURA_OK;
}

/* ---- Secondary indexes: finding one, ExclusiveStartKey ------------------------------------- */

/* Under tables_mu, which UpdateTable holds to change an index's status and a rebuild to swap
 * its trees: a read counted in ix_readers before the index became DELETING, or before its
 * trees were swapped, keeps the trees it read until page_index_release. */
kura_status page_index_find(kura_table *t, const char *name, page_index *out)
{
    kura_db *db = t->tree->db;
    kura_status s = KURA_OK;
    kmutex_lock(&db->tables_mu);
    int pos = table_index_find(t, name);
    const idx_def *d = pos >= 0 ? table_index_def(t, (uint32_t)pos) : NULL;
    if (!d || d->status == IDX_DELETING || d->status == IDX_DELETED)
        s = kura_err(KURA_E_INVALID, "The table does not have the specified index: %s", name);
    else if (d->status == IDX_CREATING)
        s = kura_err(KURA_E_INVALID, "Cannot read from backfilling global secondary index: %s",
                     name);
    else if (!t->ix_trees || !t->ix_trees[pos])
        s = kura_err(KURA_E_NOT_SUPPORTED, "table %s: index %s has no open tree", t->name, name);
    if (s == KURA_OK) {
        unsigned slot = t->ix_gen[pos] & 1;
        atomic_fetch_add(&t->ix_readers[pos][slot], 1);
        *out = (page_index){.pos = pos, .slot = slot, .def = d, .tree = t->ix_trees[pos],
                            .global = d->kind == IDX_GLOBAL};
    }
    kmutex_unlock(&db->tables_mu);
    return s;
}

void page_index_release(kura_table *t, page_index *ix)
{
    if (ix->def) atomic_fetch_sub(&t->ix_readers[ix->pos][ix->slot], 1);
    ix->def = NULL;
    ix->tree = NULL;
}

kura_status page_index_check_consistent(const page_index *ix, bool consistent, bool is_query)
{
    if (!ix->global || !consistent) return KURA_OK;
    return kura_err(KURA_E_INVALID, "Consistent read cannot be true when %s a GSI",
                    is_query ? "querying" : "scanning");
}

/* The key attributes of a start key on index d: the table's, then the index's own. */
typedef struct page_start_attrs {
    const char *name[2 + 2 * IDX_MAX_KEY_ATTRS];
    kura_type type[2 + 2 * IDX_MAX_KEY_ATTRS];
    uint32_t n, ntable;
} page_start_attrs;

static void page_start_add(page_start_attrs *a, const char *name, kura_type type)
{
    for (uint32_t i = 0; i < a->n; i++)
        if (!strcmp(a->name[i], name)) return;
    a->name[a->n] = name;
    a->type[a->n++] = type;
}

static void page_start_attrs_of(const kura_table *t, const idx_def *d, page_start_attrs *a)
{
    a->n = 0;
    page_start_add(a, t->ks.pk_name, t->ks.pk_type);
    if (t->ks.sk_name) page_start_add(a, t->ks.sk_name, t->ks.sk_type);
    a->ntable = a->n;
    for (uint32_t i = 0; i < d->nhash; i++)
        page_start_add(a, d->hash[i].name, d->hash[i].type);
    for (uint32_t i = 0; i < d->nrange; i++)
        page_start_add(a, d->range[i].name, d->range[i].type);
}

kura_status page_index_start_key(const kura_table *t, const idx_def *d, const kura_value *esk,
                                 kbuf *entry_key_out)
{
    page_start_attrs a;
    page_start_attrs_of(t, d, &a);
    if (esk->type != KURA_M || esk->u.map.n != a.n)
        return kura_err(KURA_E_INVALID,
                        "Exclusive Start Key must have same size as table's key schema");
    for (uint32_t i = 0; i < a.n; i++) {
        const kura_value *v = val_map_get(esk, a.name[i], strlen(a.name[i]));
        if (!v) return kura_err(KURA_E_INVALID, "The provided starting key is invalid");
        if (v->type != a.type[i])
            return kura_err(KURA_E_INVALID, "The provided key element does not match the schema");
    }
    for (uint32_t i = 0; i < a.n; i++) {
        const kura_value *v = val_map_get(esk, a.name[i], strlen(a.name[i]));
        if (v->type == KURA_N || v->u.bytes.len > 0) continue;
        const char *kind = v->type == KURA_S ? "string" : "binary";
        if (i < a.ntable)
            return kura_err(KURA_E_INVALID,
                            "The provided starting key is invalid: One or more parameter values "
                            "are not valid. The AttributeValue for a key attribute cannot "
                            "contain an empty %s value. Key: %s",
                            kind, a.name[i]);
        return kura_err(KURA_E_INVALID,
                        "The provided starting key is invalid: One or more parameter values are "
                        "not valid. A value specified for a secondary index key is not "
                        "supported. The AttributeValue for a key attribute cannot contain an "
                        "empty %s value. IndexName: %s, IndexKey: %s",
                        kind, d->name, a.name[i]);
    }
    bool present = false;
    kura_status s = idx_entry_key(d, &t->ks, esk, entry_key_out, &present);
    if (s == KURA_OK && !present) /* cannot happen: every key attribute was found above */
        s = kura_err(KURA_E_INVALID, "The provided starting key is invalid");
    return s;
}

/* ---- Secondary indexes: what a request may name --------------------------------------------- */

/* An attribute name for a message: `seq` is the order it was added in, `bucket` where a hash
 * set puts it (page_names_hash_order). */
struct page_name {
    const char *p;
    uint32_t len, bucket, seq;
};

/* A list of distinct attribute names, in the order they are printed. */
typedef struct page_names {
    struct page_name *v;
    uint32_t n, cap;
} page_names;

static kura_status page_names_add(page_names *l, const char *p, uint32_t len)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i].len == len && memcmp(l->v[i].p, p, len) == 0) return KURA_OK;
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 8;
        struct page_name *v = realloc(l->v, cap * sizeof *v);
        if (!v) return kura_err(KURA_E_NOMEM, "out of memory");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = (struct page_name){p, len, 0, l->n};
    l->n++;
    return KURA_OK;
}

/* The top-level attributes the filter reads that the index does not store. */
static kura_status page_filter_missing(const kura_table *t, const idx_def *d, const expr_node *n,
                                       page_names *out)
{
    if (n->op == EXPR_OP_PATH) {
        const expr_path_elem *e = &n->path.elems[0];
        return idx_projects(d, &t->ks, e->name, e->name_len)
                   ? KURA_OK
                   : page_names_add(out, e->name, e->name_len);
    }
    kura_status s = KURA_OK;
    for (uint32_t i = 0; i < n->nkids && s == KURA_OK; i++)
        s = page_filter_missing(t, d, n->kids[i], out);
    return s;
}

/* Java's String.hashCode() of the UTF-16 form of a UTF-8 name (a byte that is not part of a
 * valid sequence counts as itself). */
static uint32_t page_java_hash(const char *p, uint32_t len)
{
    const uint8_t *s = (const uint8_t *)p;
    uint32_t h = 0;
    for (uint32_t i = 0; i < len;) {
        uint32_t cp = s[i], n = 1, left = len - i;
        if (cp >= 0xF0 && left >= 4) {
            cp = (cp & 0x07u) << 18 | (s[i + 1] & 0x3Fu) << 12 | (s[i + 2] & 0x3Fu) << 6 |
                 (s[i + 3] & 0x3Fu);
            n = 4;
        } else if (cp >= 0xE0 && left >= 3) {
            cp = (cp & 0x0Fu) << 12 | (s[i + 1] & 0x3Fu) << 6 | (s[i + 2] & 0x3Fu);
            n = 3;
        } else if (cp >= 0xC0 && left >= 2) {
            cp = (cp & 0x1Fu) << 6 | (s[i + 1] & 0x3Fu);
            n = 2;
        }
        if (cp >= 0x10000) { /* a surrogate pair */
            h = 31 * h + (0xD800 + ((cp - 0x10000) >> 10));
            h = 31 * h + (0xDC00 + ((cp - 0x10000) & 0x3FF));
        } else {
            h = 31 * h + cp;
        }
        i += n;
    }
    return h;
}

static int page_name_bytes_cmp(const void *x, const void *y)
{
    const struct page_name *a = x, *b = y;
    int c = memcmp(a->p, b->p, a->len < b->len ? a->len : b->len);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

static int page_name_bucket_cmp(const void *x, const void *y)
{
    const struct page_name *a = x, *b = y;
    if (a->bucket != b->bucket) return a->bucket < b->bucket ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/*
 * DynamoDB Local 1.25.1 lists a projection's missing attributes as a java.util.HashSet
 * iterates them: by bucket (String.hashCode() spread as HashMap does, h ^ h >>> 16, modulo a
 * table of 16 buckets doubled while more than 3/4 full) and within a bucket last name written
 * first ("q, a" and "a, q" give [a, q] and [q, a], "a.c, q, a.b" gives [a, q]). Verified for
 * up to 12 names; with more, Local's order within a bucket differs in places.
 */
static void page_names_hash_order(page_names *l)
{
    uint32_t nbuckets = 16;
    while (l->n > nbuckets / 4 * 3)
        nbuckets *= 2;
    for (uint32_t i = 0; i < l->n; i++) {
        uint32_t h = page_java_hash(l->v[i].p, l->v[i].len);
        l->v[i].bucket = (h ^ h >> 16) & (nbuckets - 1);
    }
    qsort(l->v, l->n, sizeof *l->v, page_name_bucket_cmp);
}

/* "a, b, c" into out (NUL-terminated). */
static kura_status page_names_join(const page_names *l, kbuf *out)
{
    bool ok = true;
    for (uint32_t i = 0; ok && i < l->n; i++)
        ok = (i == 0 || kbuf_append(out, ", ", 2)) && kbuf_append(out, l->v[i].p, l->v[i].len);
    ok = ok && kbuf_put_u8(out, 0);
    return ok ? KURA_OK : kura_err(KURA_E_NOMEM, "out of memory");
}

kura_status page_index_check_filter(const kura_table *t, page_index *ix, const expr_node *filter,
                                    bool is_query)
{
    const idx_def *d = ix->def;
    if (!filter) return KURA_OK;
    for (uint32_t a = 0; is_query && a < d->nhash + d->nrange; a++) {
        const char *name = a < d->nhash ? d->hash[a].name : d->range[a - d->nhash].name;
        if (page_expr_uses(filter, name, strlen(name)))
            return kura_err(KURA_E_INVALID,
                            "Filter Expression can only contain non-primary key attributes: "
                            "Primary key attribute: %s",
                            name);
    }
    page_names miss = {0};
    kbuf text = KBUF_INIT;
    kura_status s = page_filter_missing(t, d, filter, &miss);
    if (s == KURA_OK && miss.n && !is_query) {
        ix->fetch_filter = true;
    } else if (s == KURA_OK && miss.n) {
        qsort(miss.v, miss.n, sizeof *miss.v, page_name_bytes_cmp);
        if ((s = page_names_join(&miss, &text)) == KURA_OK)
            s = kura_err(KURA_E_INVALID,
                         "One or more parameter values were invalid: Secondary index %s does "
                         "not project one or more filter attributes: [%s]",
                         d->name, (const char *)text.data);
    }
    kbuf_free(&text);
    free(miss.v);
    return s;
}

kura_status page_index_check_select(const kura_table *t, page_index *ix, kura_select select,
                                    const expr_projection *proj)
{
    const idx_def *d = ix->def;
    page_names miss = {0};
    kbuf text = KBUF_INIT;
    kura_status s = KURA_OK;
    for (uint32_t i = proj ? proj->n : 0; i-- > 0 && s == KURA_OK;) { /* last name first */
        const expr_path_elem *e = &proj->paths[i].elems[0];
        if (!idx_projects(d, &t->ks, e->name, e->name_len))
            s = page_names_add(&miss, e->name, e->name_len);
    }
    if (s == KURA_OK && miss.n && !ix->global) {
        ix->fetch = true;
    } else if (s == KURA_OK && miss.n) {
        page_names_hash_order(&miss);
        if ((s = page_names_join(&miss, &text)) == KURA_OK)
            s = kura_err(KURA_E_INVALID,
                         "One or more parameter values were invalid: Global secondary index %s "
                         "does not project [%s]",
                         d->name, (const char *)text.data);
    }
    kbuf_free(&text);
    free(miss.v);
    if (s != KURA_OK || select != KURA_SELECT_ALL_ATTRIBUTES ||
        d->projection == KURA_PROJECTION_ALL)
        return s;
    if (!ix->global) {
        ix->fetch = true;
        return KURA_OK;
    }
    return kura_err(KURA_E_INVALID,
                    "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is "
                    "not supported for global secondary index %s because its projection type "
                    "is not ALL",
                    d->name);
}

/* ---- The page loop ------------------------------------------------------------------------ */

void page_range_free(page_range *r)
{
    kbuf_free(&r->lo);
    kbuf_free(&r->hi);
    r->has_hi = false;
}

int page_key_cmp(const void *a, size_t alen, const kbuf *b)
{
    size_t n = alen < b->len ? alen : b->len;
    int c = n ? memcmp(a, b->data, n) : 0;
    if (c != 0) return c;
    return alen < b->len ? -1 : alen > b->len;
}

/* Positions `it` on the first key of the range (or the last one, backwards); it may end up
 * outside the range, which the loop checks. */
static void page_position(kura_iter *it, const page_range *r, bool backward)
{
    if (!backward) {
        kura_iter_seek(it, r->lo.data ? r->lo.data : (const uint8_t *)"", r->lo.len);
        return;
    }
    if (!r->has_hi) {
        kura_iter_seek_last(it);
        return;
    }
    kura_iter_seek(it, r->hi.data, r->hi.len); /* first key >= hi: one past the range */
    if (kura_iter_valid(it))
        kura_iter_prev(it);
    else if (kura_iter_status(it) == KURA_OK)
        kura_iter_seek_last(it);
}

static bool page_in_range(const void *key, size_t klen, const page_range *r, bool backward)
{
    if (backward) return page_key_cmp(key, klen, &r->lo) >= 0;
    return !r->has_hi || page_key_cmp(key, klen, &r->hi) < 0;
}

/* The running state of one page. */
typedef struct page_state {
    kura_value *items; /* L, NULL with count_only */
    uint64_t count, scanned;
    uint64_t bytes;      /* DynamoDB size of the items or index entries read (capacity) */
    uint64_t page_bytes; /* bytes, and the items read from the table for an index (1 MB) */
    double fetch_units;  /* the table reads of an index page */
    kura_value *lek;
} page_state;

/* Takes one item read: counts it, filters `test` (the item or the table's item), then keeps
 * `out` (or its projection). Both are consumed; they may be the same value. */
static kura_status page_take(const page_req *pr, page_state *ps, kura_value *test, kura_value *out)
{
    ps->scanned++;
    kura_status s = KURA_OK;
    if (!pr->filter || expr_eval_condition(pr->filter, test)) {
        ps->count++;
        if (pr->count_only) {
            /* nothing to keep */
        } else if (pr->proj) {
            kura_value p = {0};
            s = expr_project(pr->proj, out, &p);
            if (s == KURA_OK) s = val_list_push(ps->items, &p);
        } else {
            s = val_list_push(ps->items, out);
        }
    }
    val_clear(test);
    val_clear(out);
    return s;
}

/* The name of the tree read, for messages: "table T (tree tbl-1)" or "index I of table T
 * (tree idx-1-2)". */
static void page_tree_label(const page_req *pr, char *buf, size_t cap)
{
    if (!pr->ix) {
        snprintf(buf, cap, "table %s (tree tbl-%llu)", pr->t->name, (unsigned long long)pr->t->id);
        return;
    }
    char tree[64];
    table_index_tree_name(pr->t, pr->ix->def, tree, sizeof tree);
    snprintf(buf, cap, "index %s of table %s (tree %s)", pr->ix->def->name, pr->t->name, tree);
}

static kura_status page_corrupt(const page_req *pr, const char *what)
{
    char label[512];
    page_tree_label(pr, label, sizeof label);
    char cause[512];
    snprintf(cause, sizeof cause, "%s", kura_last_error());
    return kura_err(KURA_E_CORRUPTION, "%s: %s: %s", label, what, cause);
}

/* The table's item of the index entry `key` into *item (empty), *found_out false if it is
 * gone. */
static kura_status page_fetch(const page_req *pr, const void *key, size_t klen, kura_value *item,
                              bool *found_out)
{
    kura_value ikey = {0}, tkey = {0};
    kbuf skey = KBUF_INIT;
    kura_status s = idx_entry_parse(pr->ix->def, &pr->t->ks, key, klen, &ikey, &tkey);
    if (s == KURA_E_CORRUPTION) s = page_corrupt(pr, "entry key");
    if (s == KURA_OK) s = key_build(&pr->t->ks, &tkey, KEY_FROM_KEY, &skey);
    if (s == KURA_OK) {
        kura_read_options ro;
        kura_read_options_init(&ro);
        s = table_read(pr->t, &ro, skey.data, skey.len, item, found_out);
    }
    kbuf_free(&skey);
    val_clear(&ikey);
    val_clear(&tkey);
    return s;
}

/* Takes one index entry (its decoded value, consumed) read under `key`. */
static kura_status page_take_entry(const page_req *pr, page_state *ps, const void *key, size_t klen,
                                   kura_value *entry)
{
    uint64_t size = val_item_size(entry);
    ps->bytes += size;
    ps->page_bytes += size;
    if (!pr->ix->fetch && !pr->ix->fetch_filter) return page_take(pr, ps, entry, entry);
    kura_value item = {0};
    bool found = false;
    kura_status s = page_fetch(pr, key, klen, &item, &found);
    if (s != KURA_OK || !found) { /* an entry whose item is gone is skipped */
        val_clear(entry);
        return s;
    }
    size = val_item_size(&item);
    ps->page_bytes += size;
    ps->fetch_units += capacity_read_units(size, pr->consistent);
    if (pr->ix->fetch) {
        val_clear(entry);
        return page_take(pr, ps, &item, &item);
    }
    return page_take(pr, ps, &item, entry);
}

/* The LastEvaluatedKey: the key attributes of the key under the iterator (for an index, the
 * index's and the table's key attributes together). */
static kura_status page_set_lek(const page_req *pr, page_state *ps, const void *key, size_t klen)
{
    kura_value *lek = calloc(1, sizeof *lek); /* freed with kura_value_free */
    if (!lek) return kura_err(KURA_E_NOMEM, "out of memory");
    kura_status s;
    if (!pr->ix) {
        s = key_parse(&pr->t->ks, key, klen, lek);
    } else {
        kura_value tkey = {0};
        s = idx_entry_parse(pr->ix->def, &pr->t->ks, key, klen, lek, &tkey);
        for (uint32_t i = 0; s == KURA_OK && i < tkey.u.map.n; i++) {
            kura_attr *a = &tkey.u.map.a[i];
            kura_value v = {0};
            if ((s = val_copy(&v, &a->value)) == KURA_OK)
                s = val_map_put(lek, a->name, a->name_len, &v);
        }
        val_clear(&tkey);
    }
    if (s != KURA_OK) {
        kura_value_free(lek);
        return s == KURA_E_CORRUPTION ? page_corrupt(pr, "stored key") : s;
    }
    ps->lek = lek;
    return KURA_OK;
}

static kura_status page_loop(const page_req *pr, kura_iter *it, page_state *ps)
{
    kura_status s = KURA_OK;
    page_position(it, pr->range, pr->backward);
    while (s == KURA_OK && kura_iter_valid(it)) {
        size_t klen, vlen;
        const void *key = kura_iter_key(it, &klen);
        if (!page_in_range(key, klen, pr->range, pr->backward)) break;
        const void *val = kura_iter_value(it, &vlen);
        kura_value item = {0};
        s = val_decode(val, vlen, &item);
        if (s == KURA_E_CORRUPTION)
            return page_corrupt(pr, pr->ix ? "stored entry" : "stored item");
        if (s == KURA_OK && pr->ix) {
            s = page_take_entry(pr, ps, key, klen, &item);
        } else if (s == KURA_OK) {
            uint64_t size = val_item_size(&item);
            ps->bytes += size;
            ps->page_bytes += size;
            s = page_take(pr, ps, &item, &item);
        }
        if (s != KURA_OK) return s;
        if ((pr->limit && ps->scanned >= pr->limit) || ps->page_bytes >= PAGE_MAX_BYTES)
            return page_set_lek(pr, ps, key, klen);
        if (pr->backward)
            kura_iter_prev(it);
        else
            kura_iter_next(it);
    }
    return s == KURA_OK ? kura_iter_status(it) : s;
}

/* The page's ConsumedCapacity: the table's items, or an index's entries plus the items read
 * from the table for them. */
static kura_status page_capacity(const page_req *pr, const page_state *ps,
                                 kura_consumed_capacity *cc)
{
    double units = capacity_read_units(ps->bytes, pr->consistent);
    if (!pr->ix) return capacity_fill(cc, pr->return_capacity, pr->t->name, units, true);
    kura_status s = capacity_fill(cc, pr->return_capacity, pr->t->name, ps->fetch_units, true);
    if (s == KURA_OK)
        s = capacity_add_index(cc, pr->return_capacity, pr->ix->def->name, pr->ix->global, units,
                               true);
    return s;
}

/* The partition key a page reads (a Query's), as tcap's key bytes: *enc_out and its length;
 * false for a Scan. */
static bool page_key(const page_req *pr, const uint8_t **enc_out, size_t *len_out)
{
    const kbuf *lo = &pr->range->lo;
    if (!pr->query || lo->len <= 8) return false;
    const uint8_t *p = lo->data + 8;
    size_t len = lo->len - 8;
    if (pr->ix) {
        kura_type types[IDX_MAX_KEY_ATTRS];
        for (uint32_t i = 0; i < pr->ix->def->nhash; i++) types[i] = pr->ix->def->hash[i].type;
        len = tcap_prefix_len(p, len, types, pr->ix->def->nhash);
    } else {
        len = tcap_prefix_len(p, len, &pr->t->ks.pk_type, 1);
    }
    *enc_out = p;
    *len_out = len;
    return len > 0;
}

/* Admits the page's first read unit (a Query on the table's key, or any read of the table)
 * and records what the page read when done (ok). An index's reads are recorded on the index
 * and not throttled. */
static kura_status page_capacity_gate(const page_req *pr, tcap_op *op, const page_state *ps,
                                      bool done, bool ok)
{
    const uint8_t *enc = NULL;
    size_t len = 0;
    bool keyed = page_key(pr, &enc, &len);
    if (!done) {
        tcap_op_init(op, pr->t, false);
        op->est_half = tcap_read_half(0, pr->consistent);
        if (keyed && !pr->ix) { /* hash64 || enc(pk): the prefix of the items' storage keys */
            op->skey = enc - 8;
            op->klen = len + 8;
        }
        if (!pr->ix) return tcap_admit(op);
        op->now_ms = tcap_now(pr->t->cap);
        return KURA_OK;
    }
    uint64_t half = tcap_read_half(ps->bytes, pr->consistent);
    if (!pr->ix) {
        tcap_done(op, half, ok);
        return KURA_OK;
    }
    if (ok)
        tcap_record(pr->t->cap, pr->ix->def->id, pr->ix->def->nrange > 0,
                    keyed ? enc : (const uint8_t *)"", len, len,
                    half, 0, op->now_ms);
    return KURA_OK;
}

kura_status page_run(const page_req *pr, kura_page *page_out)
{
    page_state ps = {0};
    kura_iter *it = NULL;
    kura_read_options ro;
    kura_read_options_init(&ro);
    kura_tree *tree = pr->ix ? pr->ix->tree : pr->t->tree;
    tcap_op op;
    kura_status s = page_capacity_gate(pr, &op, &ps, false, false);
    if (s != KURA_OK) return s;
    s = tree_iter_new(tree, &ro, pr->part_lo, pr->part_hi, &it);
    if (s != KURA_OK) return s;
    if (!pr->count_only && !(ps.items = kura_value_list()))
        s = kura_err(KURA_E_NOMEM, "out of memory");
    if (s == KURA_OK) s = page_loop(pr, it, &ps);
    kura_iter_free(it);
    page_capacity_gate(pr, &op, &ps, true, s == KURA_OK);

    kura_page page = {0};
    if (s == KURA_OK) s = page_capacity(pr, &ps, &page.consumed_capacity);
    if (s != KURA_OK) {
        capacity_free(&page.consumed_capacity);
        kura_value_free(ps.items);
        kura_value_free(ps.lek);
        return s;
    }
    page.items = ps.items;
    page.count = ps.count;
    page.scanned_count = ps.scanned;
    page.last_evaluated_key = ps.lek;
    *page_out = page;
    return KURA_OK;
}

void kura_page_free(kura_page *p)
{
    if (!p) return;
    kura_value_free(p->items);
    kura_value_free(p->last_evaluated_key);
    capacity_free(&p->consumed_capacity);
    memset(p, 0, sizeof *p);
}

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
 */
#include "engine/page.h"

#include <stdlib.h>
#include <string.h>

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
kura_status page_check_select(kura_select select, bool has_proj, bool *count_only_out)
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
        return kura_err(KURA_E_INVALID, "ALL_PROJECTED_ATTRIBUTES can be used only when "
                                        "Querying using an IndexName");
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

kura_status page_check_key_paths(const kura_table *t, const expr_projection *proj,
                                 const expr_node *filter)
{
    const char *keys[2] = {t->pk_name, t->sk_name};
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < 2 && keys[k]; k++) {
            size_t len = strlen(keys[k]);
            bool nested = pass == 0 ? proj && page_proj_nests(proj, keys[k], len)
                                    : filter && page_expr_nests(filter, keys[k], len);
            if (nested)
                return kura_err(KURA_E_INVALID,
                                "Key attributes must be scalars; list random access '[]' and "
                                "map lookup '.' are not allowed: Key: %s",
                                keys[k]);
        }
    }
    return KURA_OK;
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
    uint64_t count, scanned, bytes;
    kura_value *lek;
} page_state;

/* Takes one decoded item (consumed). */
static kura_status page_take(const page_req *pr, page_state *ps, kura_value *item)
{
    ps->scanned++;
    ps->bytes += val_item_size(item);
    kura_status s = KURA_OK;
    if (!pr->filter || expr_eval_condition(pr->filter, item)) {
        ps->count++;
        if (pr->count_only) {
            /* nothing to keep */
        } else if (pr->proj) {
            kura_value p = {0};
            s = expr_project(pr->proj, item, &p);
            if (s == KURA_OK) s = val_list_push(ps->items, &p);
        } else {
            s = val_list_push(ps->items, item);
        }
    }
    val_clear(item);
    return s;
}

/* The LastEvaluatedKey: the key attributes of the storage key under the iterator. */
static kura_status page_set_lek(const page_req *pr, page_state *ps, const void *key, size_t klen)
{
    kura_value *lek = calloc(1, sizeof *lek); /* freed with kura_value_free */
    if (!lek) return kura_err(KURA_E_NOMEM, "out of memory");
    kura_status s = key_parse(&pr->t->ks, key, klen, lek);
    if (s != KURA_OK) {
        free(lek);
        if (s == KURA_E_CORRUPTION)
            s = kura_err(s, "table %s (tree tbl-%llu): stored key: %s", pr->t->name,
                         (unsigned long long)pr->t->id, kura_last_error());
        return s;
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
            return kura_err(s, "table %s (tree tbl-%llu): stored item: %s", pr->t->name,
                            (unsigned long long)pr->t->id, kura_last_error());
        if (s == KURA_OK) s = page_take(pr, ps, &item);
        if (s != KURA_OK) return s;
        if ((pr->limit && ps->scanned >= pr->limit) || ps->bytes >= PAGE_MAX_BYTES)
            return page_set_lek(pr, ps, key, klen);
        if (pr->backward)
            kura_iter_prev(it);
        else
            kura_iter_next(it);
    }
    return s == KURA_OK ? kura_iter_status(it) : s;
}

kura_status page_run(const page_req *pr, kura_page *page_out)
{
    page_state ps = {0};
    kura_iter *it = NULL;
    kura_read_options ro;
    kura_read_options_init(&ro);
    kura_status s = tree_iter_new(pr->t->tree, &ro, pr->part_lo, pr->part_hi, &it);
    if (s != KURA_OK) return s;
    if (!pr->count_only && !(ps.items = kura_value_list()))
        s = kura_err(KURA_E_NOMEM, "out of memory");
    if (s == KURA_OK) s = page_loop(pr, it, &ps);
    kura_iter_free(it);

    kura_page page = {0};
    if (s == KURA_OK)
        s = capacity_fill(&page.consumed_capacity, pr->return_capacity, pr->t->name,
                          capacity_read_units(ps.bytes, pr->consistent), true);
    if (s != KURA_OK) {
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
    free(p->consumed_capacity.table_name);
    memset(p, 0, sizeof *p);
}

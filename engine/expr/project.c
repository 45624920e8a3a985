/*
 * project.c - This file contains ProjectionExpression evaluation: the copy of an item that
 * holds only the projected document paths, nested as in the item (also used for UpdateItem's
 * UPDATED_OLD / UPDATED_NEW by update.c).
 *
 * The paths are handled level by level rather than one at a time: at depth d the paths that
 * share a step d (the same attribute name, or the same list index) form a group that
 * descends into that member together, so "a.b, a.c" builds one map a with b and c, and
 * "l[3], l[1]" builds one list. Within a list the groups are visited in increasing index
 * order and only the elements that exist are emitted, which gives DynamoDB's result: picked
 * elements in index order, compacted ("a[1], a[3]" of a 5-element list is a 2-element list,
 * "a[7]" of a 3-element list is nothing). A map or list that ends up holding nothing (all
 * its paths missing) is left out, as are missing paths; a path that ends at a member copies
 * the whole member, including an empty map or list.
 */
#include "engine/expr/expr.h"

#include <stdlib.h>
#include <string.h>

static const expr_path_elem *proj_step(const expr_projection *p, uint32_t path, uint32_t depth)
{
    return &p->paths[path].elems[depth];
}

/* Order of two steps: names (by length, then bytes) before indexes (ascending). */
static int proj_step_cmp(const expr_path_elem *a, const expr_path_elem *b)
{
    if (a->is_index != b->is_index) return a->is_index ? 1 : -1;
    if (a->is_index) return a->index < b->index ? -1 : a->index > b->index;
    if (a->name_len != b->name_len) return a->name_len < b->name_len ? -1 : 1;
    return memcmp(a->name, b->name, a->name_len);
}

/* Sorts the path numbers ix[0..n) by their step at `depth` (insertion sort: the groups are
 * small, and it needs no context pointer). */
static void proj_sort(const expr_projection *p, uint32_t *ix, uint32_t n, uint32_t depth)
{
    for (uint32_t i = 1; i < n; i++) {
        uint32_t x = ix[i], j = i;
        while (j > 0 && proj_step_cmp(proj_step(p, ix[j - 1], depth), proj_step(p, x, depth)) > 0) {
            ix[j] = ix[j - 1];
            j--;
        }
        ix[j] = x;
    }
}

static kura_status proj_level(const expr_projection *p, uint32_t *ix, uint32_t n, uint32_t depth,
                              const kura_value *v, kura_value *out, bool *produced_out);

/* Builds out (a map or list like v) from the groups of paths ix[0..n), all longer than
 * depth, sorted by their step at depth. */
static kura_status proj_children(const expr_projection *p, uint32_t *ix, uint32_t n, uint32_t depth,
                                 const kura_value *v, kura_value *out)
{
    uint32_t end;
    for (uint32_t start = 0; start < n; start = end) {
        const expr_path_elem *step = proj_step(p, ix[start], depth);
        for (end = start + 1; end < n && proj_step_cmp(proj_step(p, ix[end], depth), step) == 0;)
            end++;
        const kura_value *child = NULL;
        if (v->type == KURA_M && !step->is_index)
            child = val_map_get(v, step->name, step->name_len);
        else if (v->type == KURA_L && step->is_index && step->index < v->u.list.n)
            child = &v->u.list.v[step->index];
        if (child == NULL) continue;
        kura_value sub;
        bool produced;
        kura_status s = proj_level(p, ix + start, end - start, depth + 1, child, &sub, &produced);
        if (s != KURA_OK) return s;
        if (!produced) continue;
        if (v->type == KURA_M)
            s = val_map_put(out, step->name, step->name_len, &sub);
        else
            s = val_list_push(out, &sub);
        if (s != KURA_OK) return s;
    }
    return KURA_OK;
}

/* Projects v (the member reached by `depth` steps) on the paths ix[0..n) into out (set, and
 * *produced_out true, only if something of v is projected). */
static kura_status proj_level(const expr_projection *p, uint32_t *ix, uint32_t n, uint32_t depth,
                              const kura_value *v, kura_value *out, bool *produced_out)
{
    for (uint32_t i = 0; i < n; i++) {
        if (p->paths[ix[i]].n == depth) {
            /* The whole member; a longer path inside it (an overlap the parser rejects)
             * adds nothing. */
            kura_status s = val_copy(out, v);
            if (s != KURA_OK) return s;
            *produced_out = true;
            return KURA_OK;
        }
    }
    if (v->type != KURA_M && v->type != KURA_L) {
        *produced_out = false;
        return KURA_OK;
    }
    kura_value built;
    val_init_container(&built, (kura_type)v->type);
    proj_sort(p, ix, n, depth);
    kura_status s = proj_children(p, ix, n, depth, v, &built);
    if (s != KURA_OK) {
        val_clear(&built);
        return s;
    }
    bool produced = (v->type == KURA_M ? built.u.map.n : built.u.list.n) > 0;
    if (produced)
        val_move(out, &built);
    else
        val_clear(&built);
    *produced_out = produced;
    return KURA_OK;
}

kura_status expr_project(const expr_projection *p, const kura_value *item, kura_value *dst)
{
    kura_value result;
    bool produced = false;
    if (item != NULL && p->n > 0) {
        uint32_t *ix = malloc(p->n * sizeof *ix);
        if (ix == NULL) return kura_err(KURA_E_NOMEM, "projection: out of memory");
        for (uint32_t i = 0; i < p->n; i++)
            ix[i] = i;
        kura_status s = proj_level(p, ix, p->n, 0, item, &result, &produced);
        free(ix);
        if (s != KURA_OK) return s;
    }
    if (produced)
        val_move(dst, &result);
    else
        val_init_container(dst, KURA_M);
    return KURA_OK;
}

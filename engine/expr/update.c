/*
 * update.c - This file contains the application of a parsed UpdateExpression to an item
 * (SET, REMOVE, ADD, DELETE), and the helpers UpdateItem needs around it: whether an update
 * writes a key attribute, and the UPDATED_OLD / UPDATED_NEW return values.
 *
 * DynamoDB's semantics, checked against DynamoDB Local 1.25 and dynalite:
 *  - every SET operand is evaluated against the item as it was before the update (so
 *    "SET a = b, b = :v" copies the old b), before any action is applied; an operand error
 *    therefore wins over an invalid path in any action;
 *  - if_not_exists(path, v) evaluates v even when path exists (a missing path in v is an
 *    error either way);
 *  - an action's parent must exist and be a map (name step) or a list (index step), else
 *    "The document path provided in the update expression is invalid for update"; a missing
 *    final attribute is created by SET and ADD and ignored by REMOVE and DELETE;
 *  - list indexes always mean positions in the list as it was before the update: a REMOVE
 *    of an element leaves an empty (type 0) slot that expr_path_get() treats as missing and
 *    the slots are squeezed out at the end, so "REMOVE a[1], a[3]" removes the original
 *    elements 1 and 3; SET or ADD at an index past the end appends, and several such appends
 *    to one list are made in index order ("SET a[9] = :x, a[7] = :y" appends y, then x).
 * Result sizes and key attributes are checked by the caller.
 */
#include "engine/expr/expr.h"

#include <stdlib.h>
#include <string.h>

#define UPD_MSG_MISSING                                                                            \
    "The provided expression refers to an attribute that does not exist in the item"
#define UPD_MSG_TYPE "An operand in the update expression has an incorrect data type"
#define UPD_MSG_PATH "The document path provided in the update expression is invalid for update"

/* The state of one expr_apply_update call. vals[i] holds action i's new value: the SET
 * operand, or the value an ADD appends past the end of a list. appended[i] marks actions
 * whose value is appended at the end (in index order), removed whether some list slot was
 * emptied by REMOVE or DELETE. */
typedef struct upd_state {
    const expr_update *u;
    kura_value *item;
    kura_value *vals;
    bool *appended;
    bool removed;
} upd_state;

/* A SET operand's value: borrowed (v points into the item or the values map) or owned
 * (v == &own, e.g. the result of a + b). */
typedef struct upd_operand {
    const kura_value *v;
    kura_value own;
} upd_operand;

/* ---- Evaluating SET operands -------------------------------------------------------------- */

static void upd_operand_release(upd_operand *op)
{
    val_clear(&op->own);
    op->v = NULL;
}

static kura_status upd_eval(const expr_node *n, const kura_value *item, upd_operand *out);

/* Evaluates the two operands of a + b or list_append(a, b), each of which must have `type`.
 * The left operand is type-checked before the right one is evaluated, as DynamoDB does. */
static kura_status upd_eval_pair(const expr_node *n, const kura_value *item, kura_type type,
                                 upd_operand *a, upd_operand *b)
{
    kura_status st = upd_eval(n->kids[0], item, a);
    if (st != KURA_OK) return st;
    if (a->v->type != type) {
        upd_operand_release(a);
        return kura_err(KURA_E_INVALID, UPD_MSG_TYPE);
    }
    st = upd_eval(n->kids[1], item, b);
    if (st == KURA_OK && b->v->type != type) {
        upd_operand_release(b);
        st = kura_err(KURA_E_INVALID, UPD_MSG_TYPE);
    }
    if (st != KURA_OK) upd_operand_release(a);
    return st;
}

static kura_status upd_eval_arith(const expr_node *n, const kura_value *item, upd_operand *out)
{
    upd_operand a, b;
    kura_num sum;
    kura_status st = upd_eval_pair(n, item, KURA_N, &a, &b);
    if (st != KURA_OK) return st;
    if (n->op == EXPR_OP_PLUS)
        st = num_add(&a.v->u.num, &b.v->u.num, &sum);
    else
        st = num_sub(&a.v->u.num, &b.v->u.num, &sum);
    upd_operand_release(&a);
    upd_operand_release(&b);
    if (st != KURA_OK) return st;
    val_set_num(&out->own, &sum);
    out->v = &out->own;
    return KURA_OK;
}

/* Appends deep copies of list src's elements to list dst. */
static kura_status upd_append_copies(kura_value *dst, const kura_value *src)
{
    for (uint32_t i = 0; i < src->u.list.n; i++) {
        kura_value copy;
        kura_status st = val_copy(&copy, &src->u.list.v[i]);
        if (st == KURA_OK) st = val_list_push(dst, &copy);
        if (st != KURA_OK) return st;
    }
    return KURA_OK;
}

static kura_status upd_eval_list_append(const expr_node *n, const kura_value *item,
                                        upd_operand *out)
{
    upd_operand a, b;
    kura_status st = upd_eval_pair(n, item, KURA_L, &a, &b);
    if (st != KURA_OK) return st;
    val_init_container(&out->own, KURA_L);
    st = upd_append_copies(&out->own, a.v);
    if (st == KURA_OK) st = upd_append_copies(&out->own, b.v);
    upd_operand_release(&a);
    upd_operand_release(&b);
    if (st != KURA_OK) {
        val_clear(&out->own);
        return st;
    }
    out->v = &out->own;
    return KURA_OK;
}

static kura_status upd_eval(const expr_node *n, const kura_value *item, upd_operand *out)
{
    memset(out, 0, sizeof *out);
    switch (n->op) {
    case EXPR_OP_PATH:
        out->v = expr_path_get(item, &n->path);
        if (out->v == NULL) return kura_err(KURA_E_INVALID, UPD_MSG_MISSING);
        return KURA_OK;
    case EXPR_OP_VALUE:
        out->v = n->value;
        return KURA_OK;
    case EXPR_OP_PLUS:
    case EXPR_OP_MINUS:
        return upd_eval_arith(n, item, out);
    case EXPR_OP_LIST_APPEND:
        return upd_eval_list_append(n, item, out);
    case EXPR_OP_IF_NOT_EXISTS: {
        kura_status st = upd_eval(n->kids[1], item, out);
        if (st != KURA_OK) return st;
        const kura_value *existing = expr_path_get(item, &n->kids[0]->path);
        if (existing != NULL) {
            upd_operand_release(out);
            out->v = existing;
        }
        return KURA_OK;
    }
    default:
        /* Conditions and size() are not SET operands; the parser never builds this. */
        return kura_err(KURA_E_INVALID, UPD_MSG_TYPE);
    }
}

/* Phase 1: every SET operand into st->vals, against the unchanged item. */
static kura_status upd_eval_sets(upd_state *st)
{
    for (uint32_t i = 0; i < st->u->n; i++) {
        const expr_action *a = &st->u->actions[i];
        if (a->kind != EXPR_SET) continue;
        upd_operand op;
        kura_status s = upd_eval(a->operand, st->item, &op);
        if (s != KURA_OK) return s;
        if (op.v == &op.own)
            val_move(&st->vals[i], &op.own);
        else
            s = val_copy(&st->vals[i], op.v);
        if (s != KURA_OK) return s;
    }
    return KURA_OK;
}

/* ---- Applying actions --------------------------------------------------------------------- */

/* The container the last step of `path` names a member of, checked to be a map for a name
 * step and a list for an index step. */
static kura_status upd_parent(kura_value *item, const expr_path *path, kura_value **parent_out)
{
    const expr_path prefix = {path->elems, path->n - 1};
    const expr_path_elem *last = &path->elems[path->n - 1];
    /* expr_path_get is const for its readers; the item is ours to modify here. */
    kura_value *parent = (kura_value *)expr_path_get(item, &prefix);
    if (parent == NULL || parent->type != (last->is_index ? KURA_L : KURA_M))
        return kura_err(KURA_E_INVALID, UPD_MSG_PATH);
    *parent_out = parent;
    return KURA_OK;
}

/* The member the last step names, or NULL (also for an index past the end). */
static kura_value *upd_child(kura_value *parent, const expr_path_elem *last)
{
    if (!last->is_index) return val_map_get(parent, last->name, last->name_len);
    if (last->index >= parent->u.list.n || parent->u.list.v[last->index].type == 0) return NULL;
    return &parent->u.list.v[last->index];
}

/* Stores *v (moved) as the member `last` of parent; an index past the end is appended when
 * the update is finished. */
static kura_status upd_store(upd_state *st, uint32_t i, kura_value *parent,
                             const expr_path_elem *last, kura_value *v)
{
    if (!last->is_index) return val_map_put(parent, last->name, last->name_len, v);
    if (last->index < parent->u.list.n) {
        kura_value *slot = &parent->u.list.v[last->index];
        val_clear(slot);
        val_move(slot, v);
        return KURA_OK;
    }
    if (v != &st->vals[i]) val_move(&st->vals[i], v);
    st->appended[i] = true;
    return KURA_OK;
}

/* Removes the member `last` of parent: from a map at once, from a list by emptying its slot. */
static void upd_remove(upd_state *st, kura_value *parent, const expr_path_elem *last)
{
    if (!last->is_index) {
        val_map_remove(parent, last->name, last->name_len);
        return;
    }
    if (last->index < parent->u.list.n) {
        val_clear(&parent->u.list.v[last->index]);
        st->removed = true;
    }
}

static bool upd_is_set_type(uint8_t t)
{
    return t == KURA_SS || t == KURA_NS || t == KURA_BS;
}

/* ADD: numbers are added (a missing attribute counts as 0), sets are united (a missing
 * attribute is created). */
static kura_status upd_add(upd_state *st, uint32_t i, kura_value *parent,
                           const expr_path_elem *last, const kura_value *v)
{
    kura_value *existing = upd_child(parent, last);
    if (v->type != KURA_N && !upd_is_set_type(v->type))
        return kura_err(KURA_E_INVALID, UPD_MSG_TYPE);
    if (existing == NULL) {
        kura_value copy;
        kura_status s = val_copy(&copy, v);
        if (s != KURA_OK) return s;
        return upd_store(st, i, parent, last, &copy);
    }
    if (existing->type != v->type) return kura_err(KURA_E_INVALID, UPD_MSG_TYPE);
    if (v->type == KURA_N) return num_add(&existing->u.num, &v->u.num, &existing->u.num);
    for (uint32_t k = 0; k < v->u.list.n; k++) {
        if (val_set_contains(existing, &v->u.list.v[k])) continue;
        kura_value copy;
        kura_status s = val_copy(&copy, &v->u.list.v[k]);
        if (s == KURA_OK) s = val_list_push(existing, &copy);
        if (s != KURA_OK) return s;
    }
    return KURA_OK;
}

/* DELETE: set difference; a set left empty is removed. A missing attribute is no error. */
static kura_status upd_delete(upd_state *st, kura_value *parent, const expr_path_elem *last,
                              const kura_value *v)
{
    kura_value *existing = upd_child(parent, last);
    if (!upd_is_set_type(v->type)) return kura_err(KURA_E_INVALID, UPD_MSG_TYPE);
    if (existing == NULL) return KURA_OK;
    if (existing->type != v->type) return kura_err(KURA_E_INVALID, UPD_MSG_TYPE);
    for (uint32_t k = existing->u.list.n; k-- > 0;)
        if (val_set_contains(v, &existing->u.list.v[k])) val_list_remove(existing, k);
    if (existing->u.list.n == 0) upd_remove(st, parent, last);
    return KURA_OK;
}

static kura_status upd_apply_action(upd_state *st, uint32_t i)
{
    const expr_action *a = &st->u->actions[i];
    const expr_path_elem *last = &a->path.elems[a->path.n - 1];
    kura_value *parent;
    kura_status s = upd_parent(st->item, &a->path, &parent);
    if (s != KURA_OK) return s;
    switch (a->kind) {
    case EXPR_SET:
        return upd_store(st, i, parent, last, &st->vals[i]);
    case EXPR_REMOVE:
        upd_remove(st, parent, last);
        return KURA_OK;
    case EXPR_ADD:
        return upd_add(st, i, parent, last, a->operand->value);
    case EXPR_DELETE:
        return upd_delete(st, parent, last, a->operand->value);
    }
    return kura_err(KURA_E_INVALID, UPD_MSG_PATH);
}

static uint32_t upd_last_index(const upd_state *st, uint32_t i)
{
    const expr_path *p = &st->u->actions[i].path;
    return p->elems[p->n - 1].index;
}

/* Appends the values of SETs and ADDs past the end of their lists, in index order (the
 * order DynamoDB uses; appends to different lists are independent). */
static kura_status upd_apply_appends(upd_state *st)
{
    for (;;) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < st->u->n; i++) {
            if (!st->appended[i]) continue;
            if (best == UINT32_MAX || upd_last_index(st, i) < upd_last_index(st, best)) best = i;
        }
        if (best == UINT32_MAX) return KURA_OK;
        st->appended[best] = false;
        kura_value *list;
        kura_status s = upd_parent(st->item, &st->u->actions[best].path, &list);
        if (s == KURA_OK) s = val_list_push(list, &st->vals[best]);
        if (s != KURA_OK) return s;
    }
}

/* Squeezes the slots emptied by REMOVE/DELETE out of every list of `v`. */
static void upd_compact(kura_value *v)
{
    if (v->type == KURA_M) {
        for (uint32_t i = 0; i < v->u.map.n; i++)
            upd_compact(&v->u.map.a[i].value);
    } else if (v->type == KURA_L) {
        uint32_t kept = 0;
        for (uint32_t i = 0; i < v->u.list.n; i++) {
            if (v->u.list.v[i].type == 0) continue;
            upd_compact(&v->u.list.v[i]);
            if (kept != i) val_move(&v->u.list.v[kept], &v->u.list.v[i]);
            kept++;
        }
        v->u.list.n = kept;
    }
}

kura_status expr_apply_update(const expr_update *u, kura_value *item)
{
    upd_state st = {u, item, NULL, NULL, false};
    kura_status s = KURA_OK;
    if (u->n == 0) return KURA_OK;
    st.vals = calloc(u->n, sizeof *st.vals);
    st.appended = calloc(u->n, sizeof *st.appended);
    if (st.vals == NULL || st.appended == NULL) {
        s = kura_err(KURA_E_NOMEM, "update: out of memory");
        goto out;
    }
    s = upd_eval_sets(&st);
    for (uint32_t i = 0; i < u->n && s == KURA_OK; i++)
        s = upd_apply_action(&st, i);
    if (s == KURA_OK) s = upd_apply_appends(&st);
    if (s == KURA_OK && st.removed) upd_compact(item);
out:
    if (st.vals != NULL)
        for (uint32_t i = 0; i < u->n; i++)
            val_clear(&st.vals[i]);
    free(st.vals);
    free(st.appended);
    return s;
}

/* ---- Helpers for UpdateItem --------------------------------------------------------------- */

bool expr_update_touches(const expr_update *u, const char *name, size_t name_len)
{
    for (uint32_t i = 0; i < u->n; i++) {
        const expr_path_elem *top = &u->actions[i].path.elems[0];
        if (top->name_len == name_len && memcmp(top->name, name, name_len) == 0) return true;
    }
    return false;
}

bool expr_update_creates(const expr_update *u)
{
    for (uint32_t i = 0; i < u->n; i++)
        if (u->actions[i].kind == EXPR_SET || u->actions[i].kind == EXPR_ADD) return true;
    return false;
}

kura_status expr_updated_attributes(const expr_update *u, const kura_value *item, kura_value *dst)
{
    /* The return value is the projection of the item on the paths the actions named. */
    expr_projection p = {NULL, u->n};
    if (u->n > 0) {
        p.paths = malloc(u->n * sizeof *p.paths);
        if (p.paths == NULL) return kura_err(KURA_E_NOMEM, "update: out of memory");
        for (uint32_t i = 0; i < u->n; i++)
            p.paths[i] = u->actions[i].path;
    }
    kura_status s = expr_project(&p, item, dst);
    free(p.paths);
    return s;
}

/*
 * translate.c - This file contains the translation of a parsed PartiQL statement into one
 * item request of kura.h, as DynamoDB runs its PartiQL:
 *   SELECT with equality on the whole primary key (table only) -> GetItem
 *   SELECT with equality on the partition key                  -> Query: the first
 *       condition on the sort key that KeyConditionExpression can take (= < <= > >=
 *       BETWEEN begins_with) joins the key condition, every other predicate is the filter;
 *       ORDER BY the sort key DESC reads backward. A Query's filter may not read a key
 *       attribute, so when another predicate does (sk IN (..), pk <> ..) it is a Scan.
 *   any other SELECT                                           -> Scan, WHERE as the filter
 *   INSERT -> PutItem if attribute_not_exists(partition key)
 *   UPDATE -> UpdateItem if attribute_exists(partition key) AND the other predicates
 *   DELETE -> DeleteItem if the other predicates (a missing item: nothing to do, success)
 * Only top-level AND terms are looked at for keys. A write without an equality on every key
 * attribute is refused (PQ_MSG_NO_KEY). Expression text comes from render.c.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/partiql/partiql.h"
#include "util/status.h"

#define NOMEM() kura_err(KURA_E_NOMEM, "out of memory")

/* The top-level AND terms of a WHERE. */
typedef struct pq_terms {
    const pq_node **t; /* inline_t, or malloc'ed beyond 16 terms */
    uint32_t n, cap;
    bool *used;        /* taken by the key; inline_used likewise */
    const pq_node *inline_t[16];
    bool inline_used[16];
} pq_terms;

static kura_status collect(pq_terms *ts, const pq_node *n)
{
    if (n->kind == PQ_AND) {
        kura_status s = collect(ts, n->kids[0]);
        return s == KURA_OK ? collect(ts, n->kids[1]) : s;
    }
    if (!ts->t) {
        ts->t = ts->inline_t;
        ts->cap = 16;
    }
    if (ts->n == ts->cap) {
        uint32_t cap = ts->cap * 2;
        const pq_node **nt = malloc(cap * sizeof *nt);
        if (!nt) return NOMEM();
        memcpy(nt, ts->t, ts->n * sizeof *nt);
        if (ts->t != ts->inline_t) free(ts->t);
        ts->t = nt;
        ts->cap = cap;
    }
    ts->t[ts->n++] = n;
    return KURA_OK;
}

static bool is_attr(const pq_node *n, const char *name)
{
    return n->kind == PQ_PATH && n->nsteps == 1 && !n->steps[0].is_index &&
           strlen(name) == n->steps[0].name_len &&
           memcmp(n->steps[0].name, name, n->steps[0].name_len) == 0;
}

/* The value node of `name = v` or `v = name`, or NULL. */
static const pq_node *key_eq(const pq_node *n, const char *name)
{
    if (n->kind != PQ_EQ) return NULL;
    if (is_attr(n->kids[0], name) && n->kids[1]->kind == PQ_VALUE) return n->kids[1];
    if (is_attr(n->kids[1], name) && n->kids[0]->kind == PQ_VALUE) return n->kids[0];
    return NULL;
}

/* Whether KeyConditionExpression can take n as the sort key's condition. */
static bool sort_cond(const pq_node *n, const char *sk)
{
    switch (n->kind) {
    case PQ_EQ: case PQ_LT: case PQ_LE: case PQ_GT: case PQ_GE:
        return is_attr(n->kids[0], sk) && n->kids[1]->kind == PQ_VALUE;
    case PQ_BETWEEN:
        return is_attr(n->kids[0], sk) && n->kids[1]->kind == PQ_VALUE &&
               n->kids[2]->kind == PQ_VALUE;
    case PQ_CALL:
        return strcmp(n->name, "begins_with") == 0 && is_attr(n->kids[0], sk) &&
               n->kids[1]->kind == PQ_VALUE;
    default:
        return false;
    }
}

static int find_eq(const pq_terms *ts, const char *name)
{
    for (uint32_t i = 0; name && i < ts->n; i++)
        if (!ts->used[i] && key_eq(ts->t[i], name)) return (int)i;
    return -1;
}

/* The terms not taken by the key, joined by AND, appended to r's text (nothing if none). */
static kura_status render_rest(pq_render *r, const pq_terms *ts, bool *any_out)
{
    kura_status s = KURA_OK;
    bool any = false;
    for (uint32_t i = 0; s == KURA_OK && i < ts->n; i++) {
        if (ts->used[i]) continue;
        if (any) s = pq_render_text(r, " AND ");
        if (s == KURA_OK) s = pq_render_cond(r, ts->t[i]);
        any = true;
    }
    *any_out = any;
    return s;
}

/* One key attribute's value into the key, and its binding when it is a parameter. */
static kura_status key_put(kura_value *key, const char *name, const pq_node *v, bool range,
                           pq_render *r)
{
    if (v->param >= 0) {
        pq_binding b = {.param = (uint32_t)v->param,
                        .kind = range ? PQ_BIND_KEY_RANGE : PQ_BIND_KEY_HASH};
        kura_status s = pq_bind(&r->bindings, &r->nbindings, &r->bindings_cap, &b);
        if (s != KURA_OK) return s;
    }
    return kura_value_map_put(key, name, strlen(name), kura_value_clone(v->value));
}

/* {hash: v[, range: v]} from the terms at hi and ri (-1: none). */
static kura_status make_key(const pq_terms *ts, const pq_keys *k, int hi, int ri, pq_render *r,
                            kura_value **out)
{
    kura_value *key = kura_value_map();
    if (!key) return NOMEM();
    kura_status s = key_put(key, k->hash, key_eq(ts->t[hi], k->hash), false, r);
    if (s == KURA_OK && ri >= 0) s = key_put(key, k->range, key_eq(ts->t[ri], k->range), true, r);
    if (s != KURA_OK) {
        kura_value_free(key);
        return s;
    }
    *out = key;
    return KURA_OK;
}

static kura_status take(pq_render *r, char **out)
{
    return (*out = pq_render_take(r)) ? KURA_OK : NOMEM();
}

static kura_status projection(pq_render *r, const pq_stmt *st, pq_plan *plan)
{
    kura_status s = KURA_OK;
    if (!st->nproj) return KURA_OK;
    for (uint32_t i = 0; s == KURA_OK && i < st->nproj; i++) {
        if (i) s = pq_render_text(r, ", ");
        if (s == KURA_OK) s = pq_render_path(r, st->proj[i]);
    }
    return s == KURA_OK ? take(r, &plan->projection) : s;
}

static kura_status order_by(const pq_stmt *st, const pq_keys *k, pq_plan *plan)
{
    const pq_node *o = st->order_by;
    if (!o) return KURA_OK;
    if (!st->where)
        return kura_err(KURA_E_INVALID,
                        "Must have WHERE clause in the statement when using ORDER BY clause.");
    bool on_range = k->range && is_attr(o, k->range);
    if (!on_range && !is_attr(o, k->hash))
        return kura_err(KURA_E_INVALID,
                        "Variable reference %.*s in ORDER BY clause must be part of the "
                        "primary key", (int)o->steps[0].name_len, o->steps[0].name);
    if (plan->kind != PQ_P_QUERY && plan->kind != PQ_P_GET)
        return kura_err(KURA_E_INVALID, PQ_MSG_ORDER_SCAN);
    plan->backward = on_range && st->order_desc;
    return KURA_OK;
}

/* Whether n reads a key attribute (a FilterExpression of a Query may not). */
static bool refers_key(const pq_node *n, const pq_keys *k)
{
    if (n->kind == PQ_PATH) {
        const pq_step *st = &n->steps[0];
        return (strlen(k->hash) == st->name_len && !memcmp(k->hash, st->name, st->name_len)) ||
               (k->range && strlen(k->range) == st->name_len &&
                !memcmp(k->range, st->name, st->name_len));
    }
    for (uint32_t i = 0; i < n->nkids; i++)
        if (refers_key(n->kids[i], k)) return true;
    return false;
}

/* The Query of terms hi (partition key) and si (a sort-key condition, -1: none), the other
 * terms as the filter; false when one of those reads a key attribute (then a Scan). */
static bool query_fits(const pq_terms *ts, const pq_keys *k, int hi, int si)
{
    for (uint32_t i = 0; i < ts->n; i++)
        if ((int)i != hi && (int)i != si && refers_key(ts->t[i], k)) return false;
    return true;
}

static kura_status plan_query(pq_terms *ts, int hi, int si, pq_render *r, pq_plan *plan)
{
    bool any;
    plan->kind = PQ_P_QUERY;
    ts->used[hi] = true;
    kura_status s = pq_render_cond(r, ts->t[hi]);
    if (s == KURA_OK && si >= 0) {
        ts->used[si] = true;
        s = pq_render_text(r, " AND ");
        if (s == KURA_OK) s = pq_render_cond(r, ts->t[si]);
    }
    if (s == KURA_OK) s = take(r, &plan->key_condition);
    if (s == KURA_OK) s = render_rest(r, ts, &any);
    if (s == KURA_OK && any) s = take(r, &plan->condition);
    return s;
}

static kura_status plan_select(const pq_stmt *st, const pq_keys *k, pq_terms *ts,
                               pq_render *r, pq_plan *plan)
{
    int hi = find_eq(ts, k->hash);
    int ri = hi >= 0 ? find_eq(ts, k->range) : -1;
    int si = -1;
    for (uint32_t i = 0; hi >= 0 && k->range && i < ts->n && si < 0; i++)
        if ((int)i != hi && sort_cond(ts->t[i], k->range)) si = (int)i;
    kura_status s = KURA_OK;
    if (hi >= 0 && !st->index && (!k->range || ri >= 0) && ts->n == (k->range ? 2u : 1u)) {
        plan->kind = PQ_P_GET;
        s = make_key(ts, k, hi, ri, r, &plan->key);
    } else if (hi >= 0 && query_fits(ts, k, hi, si)) {
        s = plan_query(ts, hi, si, r, plan);
    } else {
        plan->kind = PQ_P_SCAN;
        if (st->where && (s = pq_render_cond(r, st->where)) == KURA_OK)
            s = take(r, &plan->condition);
    }
    if (s == KURA_OK) s = order_by(st, k, plan);
    if (s == KURA_OK) s = projection(r, st, plan);
    return s;
}

/* UPDATE and DELETE: the key, and as the condition "attribute_exists(hash) [AND rest]"
 * (UPDATE: `exists`) or the rest alone (DELETE of a missing item succeeds, as DeleteItem
 * does; DynamoDB Local answers so). */
static kura_status plan_keyed_write(const pq_keys *k, pq_terms *ts, pq_render *r, bool exists,
                                    pq_plan *plan)
{
    int hi = find_eq(ts, k->hash);
    if (hi >= 0) ts->used[hi] = true;
    int ri = k->range ? find_eq(ts, k->range) : -1;
    if (hi < 0 || (k->range && ri < 0)) return kura_err(KURA_E_INVALID, PQ_MSG_NO_KEY);
    if (ri >= 0) ts->used[ri] = true;
    kura_status s = make_key(ts, k, hi, ri, r, &plan->key);
    if (s == KURA_OK && exists) s = pq_render_text(r, "attribute_exists(");
    if (s == KURA_OK && exists)
        s = pq_render_path(r, ts->t[hi]->kids[ts->t[hi]->kids[0]->kind == PQ_PATH ? 0 : 1]);
    if (s == KURA_OK && exists) s = pq_render_text(r, ")");
    bool any = false;
    for (uint32_t i = 0; i < ts->n && !any; i++) any = !ts->used[i];
    if (s == KURA_OK && any && exists) s = pq_render_text(r, " AND ");
    if (s == KURA_OK && any) s = render_rest(r, ts, &any);
    return s == KURA_OK && (exists || any) ? take(r, &plan->condition) : s;
}

/* One clause of the update expression: the assignments of one kind, or nothing. */
enum { U_SET, U_REMOVE, U_ADD, U_DELETE };

static int assign_kind(const pq_assign *a)
{
    if (a->remove) return U_REMOVE;
    if (a->value->kind == PQ_CALL && strcmp(a->value->name, "set_add") == 0) return U_ADD;
    if (a->value->kind == PQ_CALL && strcmp(a->value->name, "set_delete") == 0) return U_DELETE;
    return U_SET;
}

static bool same_path(const pq_node *a, const pq_node *b)
{
    if (a->kind != PQ_PATH || b->kind != PQ_PATH || a->nsteps != b->nsteps) return false;
    for (uint32_t i = 0; i < a->nsteps; i++) {
        const pq_step *x = &a->steps[i], *y = &b->steps[i];
        if (x->is_index != y->is_index) return false;
        if (x->is_index ? x->index != y->index
                        : x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len))
            return false;
    }
    return true;
}

static kura_status render_assign(pq_render *r, const pq_assign *a, int kind)
{
    kura_status s = pq_render_path(r, a->path);
    if (s != KURA_OK || kind == U_REMOVE) return s;
    if (kind == U_SET) {
        s = pq_render_text(r, " = ");
        return s == KURA_OK ? pq_render_operand(r, a->value) : s;
    }
    if (!same_path(a->path, a->value->kids[0]))
        return kura_err(KURA_E_INVALID, "%s must be applied to the attribute it sets",
                        a->value->name);
    if (a->value->kids[1]->kind != PQ_VALUE) /* ADD and DELETE take a value, not a path */
        return kura_err(KURA_E_INVALID, "%s takes a set value as its second argument",
                        a->value->name);
    s = pq_render_text(r, " ");
    return s == KURA_OK ? pq_render_operand(r, a->value->kids[1]) : s;
}

static kura_status plan_update_expr(const pq_stmt *st, pq_render *r, pq_plan *plan)
{
    static const char *const kw[] = {"SET ", "REMOVE ", "ADD ", "DELETE "};
    kura_status s = KURA_OK;
    for (int kind = U_SET; s == KURA_OK && kind <= U_DELETE; kind++) {
        bool first = true;
        for (uint32_t i = 0; s == KURA_OK && i < st->nassigns; i++) {
            if (assign_kind(&st->assigns[i]) != kind) continue;
            s = pq_render_text(r, first ? (r->text.len ? " " : "") : ", ");
            if (s == KURA_OK && first) s = pq_render_text(r, kw[kind]);
            if (s == KURA_OK) s = render_assign(r, &st->assigns[i], kind);
            first = false;
        }
    }
    return s == KURA_OK ? take(r, &plan->update) : s;
}

static kura_status plan_insert(const pq_stmt *st, const pq_keys *k, pq_render *r, pq_plan *plan)
{
    plan->kind = PQ_P_PUT;
    const char *names[2] = {k->hash, k->range};
    for (int i = 0; i < 2; i++)
        if (names[i] && !kura_value_get(st->item, names[i], strlen(names[i])))
            return kura_err(KURA_E_INVALID, "Key attribute should be present in the item: Key %s",
                            names[i]);
    if (!(plan->item = kura_value_clone(st->item))) return NOMEM();
    for (uint32_t i = 0; i < st->nitem_params; i++) {
        const pq_item_param *ip = &st->item_params[i];
        pq_binding b = {.param = ip->param, .kind = PQ_BIND_ITEM};
        if (!(b.attr = malloc(ip->len + 1))) return NOMEM();
        memcpy(b.attr, ip->name, ip->len);
        b.attr[ip->len] = '\0';
        kura_status s = pq_bind(&r->bindings, &r->nbindings, &r->bindings_cap, &b);
        if (s != KURA_OK) {
            free(b.attr);
            return s;
        }
    }
    pq_step step = {.name = k->hash, .name_len = strlen(k->hash)};
    pq_node path = {.kind = PQ_PATH, .steps = &step, .nsteps = 1};
    kura_status s = pq_render_text(r, "attribute_not_exists(");
    if (s == KURA_OK) s = pq_render_path(r, &path);
    if (s == KURA_OK) s = pq_render_text(r, ")");
    return s == KURA_OK ? take(r, &plan->condition) : s;
}

kura_status pq_translate(const pq_stmt *st, const pq_keys *k, pq_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->table = st->table;
    plan->index = st->index;
    plan->return_values = st->returning;
    pq_terms ts;
    ts.t = NULL;
    ts.n = ts.cap = 0;
    pq_render r = {.text = KBUF_INIT};
    kura_status s = st->where ? collect(&ts, st->where) : KURA_OK;
    ts.used = ts.n <= 16 ? ts.inline_used : calloc(ts.n, sizeof *ts.used);
    if (s == KURA_OK && !ts.used) s = NOMEM();
    if (ts.used == ts.inline_used) memset(ts.inline_used, 0, sizeof ts.inline_used);
    if (s == KURA_OK) {
        switch (st->kind) {
        case PQ_SELECT:
            s = plan_select(st, k, &ts, &r, plan);
            break;
        case PQ_INSERT:
            s = plan_insert(st, k, &r, plan);
            break;
        case PQ_UPDATE:
            plan->kind = PQ_P_UPDATE;
            s = plan_keyed_write(k, &ts, &r, true, plan);
            if (s == KURA_OK) s = plan_update_expr(st, &r, plan);
            break;
        case PQ_DELETE:
            plan->kind = PQ_P_DELETE;
            s = plan_keyed_write(k, &ts, &r, false, plan);
            break;
        }
    }
    plan->names = r.names;
    plan->values = r.values;
    plan->bindings = r.bindings;
    plan->nbindings = r.nbindings;
    r.names = r.values = NULL;
    r.bindings = NULL;
    pq_render_free(&r);
    if (ts.t != ts.inline_t) free(ts.t);
    if (ts.used != ts.inline_used) free(ts.used);
    return s;
}

void pq_plan_free(pq_plan *p)
{
    kura_value_free(p->key);
    kura_value_free(p->item);
    kura_value_free(p->names);
    kura_value_free(p->values);
    free(p->key_condition);
    free(p->condition);
    free(p->update);
    free(p->projection);
    for (uint32_t i = 0; i < p->nbindings; i++) free(p->bindings[i].attr);
    free(p->bindings);
    memset(p, 0, sizeof *p);
}

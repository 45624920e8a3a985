/*
 * render.c - This file contains the writer of expression text in DynamoDB's expression
 * language (engine/expr) from PartiQL AST nodes. Every attribute name becomes a #n<i>
 * placeholder (one per distinct name) and every value a :v<i> placeholder, so no name can collide with a reserved
 * word of the expression language and every value keeps its exact type; the engine then
 * parses and evaluates the text as it would a request's. The mapping:
 *   a IS MISSING                     attribute_not_exists(a)   (IS NOT: attribute_exists;
 *                                    a = MISSING is refused, as DynamoDB does)
 *   a IS NULL                        attribute_type(a, 'NULL') (IS NOT: NOT of it)
 *   exists(a) / missing(a)           attribute_exists(a) / attribute_not_exists(a)
 *   a != b                           a <> b
 * and everything else as it is written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/partiql/partiql.h"
#include "util/status.h"

#define NOMEM() kura_err(KURA_E_NOMEM, "out of memory")

kura_status pq_render_text(pq_render *r, const char *text)
{
    return kbuf_append(&r->text, text, strlen(text)) ? KURA_OK : NOMEM();
}

/* Puts v into *map under "<prefix><i>" and writes the placeholder. Takes v. */
static kura_status placeholder(pq_render *r, kura_value **map, uint32_t *count, char prefix,
                               kura_value *v)
{
    char ph[16];
    int n = snprintf(ph, sizeof ph, "%c%c%u", prefix, prefix == '#' ? 'n' : 'v', *count);
    if (!v || (!*map && !(*map = kura_value_map()))) {
        kura_value_free(v);
        return NOMEM();
    }
    kura_status s = kura_value_map_put(*map, ph, (size_t)n, v);
    if (s != KURA_OK) return s;
    (*count)++;
    return kbuf_append(&r->text, ph, (size_t)n) ? KURA_OK : NOMEM();
}

/* The placeholder already given to attribute name `name`, written to the text; false if none
 * (each name gets one #n placeholder however often it appears: fewer names for the engine
 * to resolve). */
static bool reuse_name(pq_render *r, const char *name, size_t len, kura_status *s_out)
{
    for (size_t i = 0; r->names && i < kura_value_count(r->names); i++) {
        const char *ph;
        size_t phlen, vlen;
        const char *v = kura_value_bytes(kura_value_at(r->names, i, &ph, &phlen), &vlen);
        if (vlen == len && memcmp(v, name, len) == 0) {
            *s_out = kbuf_append(&r->text, ph, phlen) ? KURA_OK : NOMEM();
            return true;
        }
    }
    return false;
}

kura_status pq_render_path(pq_render *r, const pq_node *path)
{
    kura_status s = KURA_OK;
    for (uint32_t i = 0; s == KURA_OK && i < path->nsteps; i++) {
        const pq_step *st = &path->steps[i];
        if (st->is_index) {
            char idx[24];
            snprintf(idx, sizeof idx, "[%u]", st->index);
            s = pq_render_text(r, idx);
            continue;
        }
        if (i) s = pq_render_text(r, ".");
        if (s == KURA_OK && !reuse_name(r, st->name, st->name_len, &s))
            s = placeholder(r, &r->names, &r->nnames, '#', kura_value_s(st->name, st->name_len));
    }
    return s;
}

kura_status pq_bind(pq_binding **b, uint32_t *n, uint32_t *cap, const pq_binding *add)
{
    if (*n == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 4;
        pq_binding *nb = realloc(*b, ncap * sizeof *nb);
        if (!nb) return NOMEM();
        *b = nb;
        *cap = ncap;
    }
    (*b)[(*n)++] = *add;
    return KURA_OK;
}

kura_status pq_render_value(pq_render *r, const kura_value *v, int32_t param)
{
    if (param >= 0) {
        pq_binding b = {.param = (uint32_t)param};
        snprintf(b.placeholder, sizeof b.placeholder, ":v%u", r->nvalues);
        kura_status s = pq_bind(&r->bindings, &r->nbindings, &r->bindings_cap, &b);
        if (s != KURA_OK) return s;
    }
    return placeholder(r, &r->values, &r->nvalues, ':', kura_value_clone(v));
}

/* name(args...), each argument an operand */
static kura_status render_call(pq_render *r, const char *name, const pq_node *n)
{
    kura_status s = pq_render_text(r, name);
    if (s == KURA_OK) s = pq_render_text(r, "(");
    for (uint32_t i = 0; s == KURA_OK && i < n->nkids; i++) {
        if (i) s = pq_render_text(r, ", ");
        if (s == KURA_OK) s = pq_render_operand(r, n->kids[i]);
    }
    return s == KURA_OK ? pq_render_text(r, ")") : s;
}

kura_status pq_render_operand(pq_render *r, const pq_node *n)
{
    switch (n->kind) {
    case PQ_PATH:
        return pq_render_path(r, n);
    case PQ_VALUE:
        return pq_render_value(r, n->value, n->param);
    case PQ_PLUS:
    case PQ_MINUS: {
        kura_status s = pq_render_operand(r, n->kids[0]);
        if (s == KURA_OK) s = pq_render_text(r, n->kind == PQ_PLUS ? " + " : " - ");
        return s == KURA_OK ? pq_render_operand(r, n->kids[1]) : s;
    }
    case PQ_CALL:
        if (strcmp(n->name, "size") == 0 || strcmp(n->name, "list_append") == 0)
            return render_call(r, n->name, n);
        return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Unexpected function %s in a value",
                        n->name);
    case PQ_MISSING:
        return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "MISSING is not a value");
    default:
        return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Unexpected predicate in a value");
    }
}


static kura_status render_binary(pq_render *r, const pq_node *n, const char *op)
{
    kura_status s = pq_render_text(r, "(");
    bool cond = n->kind == PQ_AND || n->kind == PQ_OR;
    if (s == KURA_OK) s = cond ? pq_render_cond(r, n->kids[0]) : pq_render_operand(r, n->kids[0]);
    if (s == KURA_OK) s = pq_render_text(r, op);
    if (s == KURA_OK) s = cond ? pq_render_cond(r, n->kids[1]) : pq_render_operand(r, n->kids[1]);
    return s == KURA_OK ? pq_render_text(r, ")") : s;
}

static kura_status render_is(pq_render *r, const pq_node *n)
{
    if (n->kids[0]->kind != PQ_PATH)
        return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "IS needs a path");
    bool missing = n->kind == PQ_IS_MISSING;
    const char *fn = missing ? (n->negated ? "attribute_exists(" : "attribute_not_exists(")
                             : (n->negated ? "(NOT attribute_type(" : "attribute_type(");
    kura_status s = pq_render_text(r, fn);
    if (s == KURA_OK) s = pq_render_path(r, n->kids[0]);
    if (s == KURA_OK && !missing) {
        kura_value *t = kura_value_s("NULL", 4);
        s = pq_render_text(r, ", ");
        if (s == KURA_OK) s = placeholder(r, &r->values, &r->nvalues, ':', t);
        else kura_value_free(t);
        if (s == KURA_OK && n->negated) s = pq_render_text(r, ")");
    }
    return s == KURA_OK ? pq_render_text(r, ")") : s;
}

static kura_status render_list(pq_render *r, const pq_node *n, uint32_t from, const char *sep)
{
    kura_status s = KURA_OK;
    for (uint32_t i = from; s == KURA_OK && i < n->nkids; i++) {
        if (i > from) s = pq_render_text(r, sep);
        if (s == KURA_OK) s = pq_render_operand(r, n->kids[i]);
    }
    return s;
}

static kura_status render_pred_call(pq_render *r, const pq_node *n)
{
    if (strcmp(n->name, "exists") == 0 || strcmp(n->name, "missing") == 0)
        return render_call(r, n->name[0] == 'e' ? "attribute_exists" : "attribute_not_exists", n);
    if (strcmp(n->name, "begins_with") == 0 || strcmp(n->name, "contains") == 0 ||
        strcmp(n->name, "attribute_type") == 0)
        return render_call(r, n->name, n);
    return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Function %s is not a condition", n->name);
}

kura_status pq_render_cond(pq_render *r, const pq_node *n)
{
    static const char *const cmp[] = {" = ", " <> ", " < ", " <= ", " > ", " >= "};
    kura_status s;
    switch (n->kind) {
    case PQ_AND:
        return render_binary(r, n, " AND ");
    case PQ_OR:
        return render_binary(r, n, " OR ");
    case PQ_NOT:
        s = pq_render_text(r, "(NOT ");
        if (s == KURA_OK) s = pq_render_cond(r, n->kids[0]);
        return s == KURA_OK ? pq_render_text(r, ")") : s;
    case PQ_EQ: case PQ_NE: case PQ_LT: case PQ_LE: case PQ_GT: case PQ_GE:
        if (n->kids[0]->kind == PQ_MISSING || n->kids[1]->kind == PQ_MISSING)
            return kura_err(KURA_E_INVALID, "MISSING must be compared using IS operator");
        return render_binary(r, n, cmp[n->kind - PQ_EQ]);
    case PQ_BETWEEN:
        s = pq_render_text(r, "(");
        if (s == KURA_OK) s = pq_render_operand(r, n->kids[0]);
        if (s == KURA_OK) s = pq_render_text(r, " BETWEEN ");
        if (s == KURA_OK) s = render_list(r, n, 1, " AND ");
        return s == KURA_OK ? pq_render_text(r, ")") : s;
    case PQ_IN:
        s = pq_render_text(r, "(");
        if (s == KURA_OK) s = pq_render_operand(r, n->kids[0]);
        if (s == KURA_OK) s = pq_render_text(r, " IN (");
        if (s == KURA_OK) s = render_list(r, n, 1, ", ");
        return s == KURA_OK ? pq_render_text(r, "))") : s;
    case PQ_IS_NULL:
    case PQ_IS_MISSING:
        return render_is(r, n);
    case PQ_CALL:
        return render_pred_call(r, n);
    default:
        return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Unexpected value in a condition");
    }
}

char *pq_render_take(pq_render *r)
{
    char *s = malloc(r->text.len + 1);
    if (s) {
        if (r->text.len) memcpy(s, r->text.data, r->text.len);
        s[r->text.len] = '\0';
        r->text.len = 0;
    }
    return s;
}

void pq_render_free(pq_render *r)
{
    kbuf_free(&r->text);
    kura_value_free(r->names);
    kura_value_free(r->values);
    for (uint32_t i = 0; r->bindings && i < r->nbindings; i++) free(r->bindings[i].attr);
    free(r->bindings);
    r->names = r->values = NULL;
    r->bindings = NULL;
}

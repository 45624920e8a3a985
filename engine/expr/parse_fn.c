/*
 * parse_fn.c - the parse-time checks of function calls and of BETWEEN.
 *
 * This file contains the operand checks DynamoDB makes before it looks at any item: the
 * number of operands of each function, the operands that must be document paths
 * (attribute_exists(:v) is an error), operands whose type can never be right (size(:number),
 * begins_with(a, :number), list_append(:string, b), attribute_type(a, :v) with :v not a type
 * name), and BETWEEN bounds that are of different types or out of order. The types known at
 * parse time are those of :values, and N for size().
 */
#include <stdio.h>
#include <string.h>

#include "engine/expr/expr_int.h"

static const char *fn_name(const expr_parser *p, const expr_pnode *n, int *len_out)
{
    const expr_tok *t = &p->toks[n->tok];
    *len_out = (int)t->len;
    return p->src + t->off;
}

static kura_status fn_type_error(expr_parser *p, const expr_pnode *n, const char *type)
{
    int len;
    const char *name = fn_name(p, n, &len);
    return expr_fail(p,
                     "Incorrect operand type for operator or function; operator or function: "
                     "%.*s, operand type: %s",
                     len, name, type);
}

static bool fn_is_path(const expr_node *n)
{
    return n->op == EXPR_OP_PATH;
}

static const char *const fn_attr_types[] = {"S", "N", "B", "NULL", "SS", "BOOL",
                                            "L", "BS", "NS", "M"};

/* attribute_type's second operand: an S value naming a type. */
static kura_status fn_check_attr_type(expr_parser *p, const expr_pnode *n)
{
    const expr_pnode *v = expr_pn(n->n.kids[1]);
    kura_type t = expr_node_type(v);
    if (t == 0)
        return fn_type_error(p, n, "{NS,SS,L,BS,N,M,B,BOOL,NULL,S}");
    if (t != KURA_S)
        return fn_type_error(p, n, val_type_name(t));
    const kura_value *s = v->n.value;
    for (size_t i = 0; i < sizeof fn_attr_types / sizeof fn_attr_types[0]; i++)
        if (s->u.bytes.len == strlen(fn_attr_types[i]) &&
            memcmp(s->u.bytes.p, fn_attr_types[i], s->u.bytes.len) == 0)
            return KURA_OK;
    return expr_fail(p,
                     "Invalid attribute type name found; type: %.*s, valid types: "
                     "{B,NULL,SS,BOOL,L,BS,N,NS,S,M}",
                     (int)s->u.bytes.len, (const char *)s->u.bytes.p);
}

/* The operand types a function accepts, given those known at parse time. */
static kura_status fn_check_types(expr_parser *p, const expr_pnode *n)
{
    const expr_node *e = &n->n;
    switch ((expr_fn)n->fn) {
    case EXPR_FN_BEGINS_WITH:
        for (uint32_t i = 0; i < e->nkids; i++) {
            kura_type t = expr_node_type(expr_pn(e->kids[i]));
            if (t && t != KURA_S && t != KURA_B)
                return fn_type_error(p, n, val_type_name(t));
        }
        return KURA_OK;
    case EXPR_FN_SIZE: {
        kura_type t = expr_node_type(expr_pn(e->kids[0]));
        if (t == KURA_N || t == KURA_BOOL || t == KURA_NULL)
            return fn_type_error(p, n, val_type_name(t));
        return KURA_OK;
    }
    case EXPR_FN_ATTR_TYPE:
        return fn_check_attr_type(p, n);
    case EXPR_FN_LIST_APPEND:
        for (uint32_t i = 0; i < e->nkids; i++) {
            const expr_node *k = e->kids[i];
            if (k->op == EXPR_OP_VALUE && k->value->type != KURA_L)
                return fn_type_error(p, n, val_type_name((kura_type)k->value->type));
        }
        return KURA_OK;
    default:
        return KURA_OK;
    }
}

kura_status expr_check_function(expr_parser *p, const expr_pnode *n)
{
    static const uint32_t nargs[] = {
        [EXPR_FN_ATTR_EXISTS] = 1, [EXPR_FN_ATTR_NOT_EXISTS] = 1, [EXPR_FN_ATTR_TYPE] = 2,
        [EXPR_FN_BEGINS_WITH] = 2, [EXPR_FN_CONTAINS] = 2,        [EXPR_FN_SIZE] = 1,
        [EXPR_FN_IF_NOT_EXISTS] = 2, [EXPR_FN_LIST_APPEND] = 2,
    };
    const expr_node *e = &n->n;
    int len;
    const char *name = fn_name(p, n, &len);

    if (e->nkids != nargs[n->fn])
        return expr_fail(p,
                         "Incorrect number of operands for operator or function; operator or "
                         "function: %.*s, number of operands: %u",
                         len, name, e->nkids);
    bool needs_path = n->fn == EXPR_FN_ATTR_EXISTS || n->fn == EXPR_FN_ATTR_NOT_EXISTS ||
                      n->fn == EXPR_FN_ATTR_TYPE || n->fn == EXPR_FN_IF_NOT_EXISTS;
    if (needs_path && !fn_is_path(e->kids[0]))
        return expr_fail(p,
                         "Operator or function requires a document path; operator or function: "
                         "%.*s",
                         len, name);
    if (e->nkids == 2 && n->fn != EXPR_FN_IF_NOT_EXISTS && n->fn != EXPR_FN_LIST_APPEND &&
        fn_is_path(e->kids[0]) && fn_is_path(e->kids[1])) {
        /* The distinct-operands rule of the comparisons applies to two-operand functions. */
        const expr_path *a = &e->kids[0]->path;
        bool same = expr_path_equal(a, &e->kids[1]->path);
        if (same) {
            char path[512];
            expr_path_str(a, path, sizeof path);
            return expr_fail(p,
                             "The first operand must be distinct from the remaining operands "
                             "for this operator or function; operator: %.*s, first operand: %s",
                             len, name, path);
        }
    }
    return fn_check_types(p, n);
}

/* "{N:12}" / "{S:abc}" / "{B:<base64>}" as DynamoDB prints a BETWEEN bound. */
static void fn_value_str(const kura_value *v, char *buf, size_t cap)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (v->type == KURA_N) {
        char num[NUM_FORMAT_MAX];
        num_format(&v->u.num, num, sizeof num);
        snprintf(buf, cap, "{N:%s}", num);
        return;
    }
    if (v->type == KURA_S) {
        snprintf(buf, cap, "{S:%.*s}", (int)v->u.bytes.len, (const char *)v->u.bytes.p);
        return;
    }
    size_t off = (size_t)snprintf(buf, cap, "{B:");
    const uint8_t *s = v->u.bytes.p;
    for (uint32_t i = 0; i < v->u.bytes.len && off + 5 < cap; i += 3) {
        uint32_t rem = v->u.bytes.len - i;
        uint32_t x = (uint32_t)s[i] << 16 | (rem > 1 ? (uint32_t)s[i + 1] << 8 : 0) |
                     (rem > 2 ? s[i + 2] : 0);
        buf[off++] = b64[x >> 18 & 63];
        buf[off++] = b64[x >> 12 & 63];
        buf[off++] = rem > 1 ? b64[x >> 6 & 63] : '=';
        buf[off++] = rem > 2 ? b64[x & 63] : '=';
    }
    snprintf(buf + off, cap - off, "}");
}

kura_status expr_check_between(expr_parser *p, const expr_node *n)
{
    for (uint32_t i = 1; i < 3; i++) {
        if (fn_is_path(n->kids[0]) && fn_is_path(n->kids[i]) &&
            expr_path_equal(&n->kids[0]->path, &n->kids[i]->path)) {
            char pa[512];
            expr_path_str(&n->kids[0]->path, pa, sizeof pa);
            return expr_fail(p,
                                 "The first operand must be distinct from the remaining operands "
                                 "for this operator or function; operator: BETWEEN, first "
                                 "operand: %s",
                                 pa);
        }
    }
    for (uint32_t i = 0; i < 3; i++) {
        kura_type t = expr_node_type(expr_pn(n->kids[i]));
        if (t && t != KURA_S && t != KURA_N && t != KURA_B)
            return expr_fail(p,
                             "Incorrect operand type for operator or function; operator or "
                             "function: BETWEEN, operand type: %s",
                             val_type_name(t));
    }
    const expr_node *lo = n->kids[1], *hi = n->kids[2];
    if (lo->op != EXPR_OP_VALUE || hi->op != EXPR_OP_VALUE)
        return KURA_OK;
    bool same = lo->value->type == hi->value->type;
    if (same && val_cmp_scalar(lo->value, hi->value) <= 0)
        return KURA_OK;
    char a[1200], b[1200];
    fn_value_str(lo->value, a, sizeof a);
    fn_value_str(hi->value, b, sizeof b);
    return expr_fail(p,
                     "The BETWEEN operator requires %s; lower bound operand: AttributeValue: %s, "
                     "upper bound operand: AttributeValue: %s",
                     same ? "upper bound to be greater than or equal to lower bound"
                          : "same data type for lower and upper bounds",
                     a, b);
}

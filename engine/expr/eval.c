/*
 * eval.c - This file contains the evaluation of condition trees (ConditionExpression,
 * FilterExpression) against an item, and the document path lookup every evaluator shares.
 *
 * An operand (a path, a value or size(path)) evaluates to a value or to "missing": a path
 * that does not resolve in the item, size() of a missing attribute or of an attribute that
 * has no size (N, BOOL, NULL). The semantics follow DynamoDB's "Comparison operator and
 * function reference" (checked against DynamoDB Local 1.25 and dynalite):
 *  - a = b is true when both are present, of the same type and equal (val_equal: numbers
 *    numerically, sets as sets); a <> b is its negation, so an attribute that is missing is
 *    "not equal" to any value - `status <> :done` holds for an item without `status`;
 *  - <, <=, >, >= and BETWEEN order only S, N and B operands of one type (S and B by unsigned
 *    bytes); anything else, including a missing operand, is false;
 *  - IN is true when the operand is present and equal to one of the candidates;
 *  - begins_with: S prefix of S, or B prefix of B; contains: S substring of S, B
 *    subsequence of B, a set holding the member, or a list holding an equal element;
 *  - attribute_type(path, :t) compares the type name with the S value of :t;
 *  - size() of an S is its length in characters as Java and JavaScript count them (UTF-16
 *    code units: "h\u00e9llo\u20ac" is 6, an emoji 2), which is what DynamoDB Local and
 *    dynalite return (the documentation says "the length of the string"); of a B its
 *    bytes; of a set, list or map its number of members.
 * Nothing here allocates: size() results are numbers held inline in a stack kura_value.
 */
#include "engine/expr/expr.h"

#include <stdio.h>
#include <string.h>

/* An evaluated operand: `v` is NULL when missing; `tmp` holds a size() result. */
typedef struct eval_operand {
    const kura_value *v;
    kura_value tmp;
} eval_operand;

const kura_value *expr_path_get(const kura_value *item, const expr_path *path)
{
    const kura_value *v = item;
    for (uint32_t i = 0; i < path->n && v != NULL; i++) {
        const expr_path_elem *e = &path->elems[i];
        if (e->is_index) {
            if (v->type != KURA_L || e->index >= v->u.list.n) return NULL;
            v = &v->u.list.v[e->index];
        } else {
            if (v->type != KURA_M) return NULL;
            v = val_map_get(v, e->name, e->name_len);
        }
    }
    /* An empty (type 0) element is a list element an update is removing: it is gone. */
    if (v != NULL && v->type == 0) return NULL;
    return v;
}

/* The length of a (valid UTF-8) string in UTF-16 code units: one per character, two for a
 * character outside the Basic Multilingual Plane (a 4-byte UTF-8 sequence). */
static uint32_t eval_utf16_len(const uint8_t *p, uint32_t len)
{
    uint32_t units = 0;
    for (uint32_t i = 0; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) units++; /* a lead byte starts a character */
        if (p[i] >= 0xF0) units++;          /* ... that needs a surrogate pair */
    }
    return units;
}

/* The size DynamoDB's size() reports, or false for types without one. */
static bool eval_size_of(const kura_value *v, uint32_t *size_out)
{
    switch (v->type) {
    case KURA_S:
        *size_out = eval_utf16_len(v->u.bytes.p, v->u.bytes.len);
        return true;
    case KURA_B:
        *size_out = v->u.bytes.len;
        return true;
    case KURA_L:
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        *size_out = v->u.list.n;
        return true;
    case KURA_M:
        *size_out = v->u.map.n;
        return true;
    default:
        return false;
    }
}

static void eval_operand_get(const expr_node *n, const kura_value *item, eval_operand *out)
{
    out->v = NULL;
    memset(&out->tmp, 0, sizeof out->tmp);
    switch (n->op) {
    case EXPR_OP_PATH:
        out->v = expr_path_get(item, &n->path);
        break;
    case EXPR_OP_VALUE:
        out->v = n->value;
        break;
    case EXPR_OP_SIZE: {
        eval_operand arg;
        uint32_t size;
        eval_operand_get(n->kids[0], item, &arg);
        if (arg.v == NULL || !eval_size_of(arg.v, &size)) break;
        char digits[16];
        int len = snprintf(digits, sizeof digits, "%u", (unsigned)size);
        kura_num num;
        if (num_parse(digits, (size_t)len, &num) != KURA_OK) break; /* cannot happen */
        val_set_num(&out->tmp, &num);
        out->v = &out->tmp;
        break;
    }
    default:
        /* Update-only operands (+, -, if_not_exists, list_append) never reach a condition:
         * the parser rejects them. Treat them as missing. */
        break;
    }
}

static bool eval_is_ordered_type(uint8_t t)
{
    return t == KURA_S || t == KURA_N || t == KURA_B;
}

/* The three-way comparison of two present operands of one ordered type, or false. */
static bool eval_order(const kura_value *a, const kura_value *b, int *cmp_out)
{
    if (a == NULL || b == NULL || a->type != b->type || !eval_is_ordered_type(a->type))
        return false;
    *cmp_out = val_cmp_scalar(a, b);
    return true;
}

static bool eval_equal(const kura_value *a, const kura_value *b)
{
    return a != NULL && b != NULL && val_equal(a, b);
}

static bool eval_compare(expr_op op, const kura_value *a, const kura_value *b)
{
    int cmp;
    switch (op) {
    case EXPR_OP_EQ:
        return eval_equal(a, b);
    case EXPR_OP_NE:
        return !eval_equal(a, b);
    default:
        break;
    }
    if (!eval_order(a, b, &cmp)) return false;
    switch (op) {
    case EXPR_OP_LT:
        return cmp < 0;
    case EXPR_OP_LE:
        return cmp <= 0;
    case EXPR_OP_GT:
        return cmp > 0;
    case EXPR_OP_GE:
        return cmp >= 0;
    default:
        return false;
    }
}

static bool eval_bytes_find(const kura_value *hay, const kura_value *needle)
{
    if (needle->u.bytes.len == 0) return true;
    return memmem(hay->u.bytes.p, hay->u.bytes.len, needle->u.bytes.p, needle->u.bytes.len) != NULL;
}

static bool eval_begins_with(const kura_value *a, const kura_value *prefix)
{
    if (a == NULL || prefix == NULL || a->type != prefix->type) return false;
    if (a->type != KURA_S && a->type != KURA_B) return false;
    return prefix->u.bytes.len <= a->u.bytes.len &&
           memcmp(a->u.bytes.p, prefix->u.bytes.p, prefix->u.bytes.len) == 0;
}

static bool eval_contains(const kura_value *a, const kura_value *x)
{
    if (a == NULL || x == NULL) return false;
    switch (a->type) {
    case KURA_S:
    case KURA_B:
        return x->type == a->type && eval_bytes_find(a, x);
    case KURA_SS:
        return x->type == KURA_S && val_set_contains(a, x);
    case KURA_NS:
        return x->type == KURA_N && val_set_contains(a, x);
    case KURA_BS:
        return x->type == KURA_B && val_set_contains(a, x);
    case KURA_L:
        for (uint32_t i = 0; i < a->u.list.n; i++)
            if (val_equal(&a->u.list.v[i], x)) return true;
        return false;
    default:
        return false;
    }
}

static bool eval_attr_type(const kura_value *a, const kura_value *type_name)
{
    if (a == NULL || type_name == NULL || type_name->type != KURA_S) return false;
    const char *name = val_type_name((kura_type)a->type);
    return strlen(name) == type_name->u.bytes.len &&
           memcmp(name, type_name->u.bytes.p, type_name->u.bytes.len) == 0;
}

static bool eval_between(const expr_node *cond, const kura_value *item)
{
    eval_operand x, lo, hi;
    int cmp_lo, cmp_hi;
    eval_operand_get(cond->kids[0], item, &x);
    eval_operand_get(cond->kids[1], item, &lo);
    eval_operand_get(cond->kids[2], item, &hi);
    return eval_order(x.v, lo.v, &cmp_lo) && eval_order(x.v, hi.v, &cmp_hi) && cmp_lo >= 0 &&
           cmp_hi <= 0;
}

static bool eval_in(const expr_node *cond, const kura_value *item)
{
    eval_operand x;
    eval_operand_get(cond->kids[0], item, &x);
    if (x.v == NULL) return false;
    for (uint32_t i = 1; i < cond->nkids; i++) {
        eval_operand cand;
        eval_operand_get(cond->kids[i], item, &cand);
        if (eval_equal(x.v, cand.v)) return true;
    }
    return false;
}

/* The operators with two operands: comparisons and the two-argument functions. */
static bool eval_binary(const expr_node *cond, const kura_value *item)
{
    eval_operand a, b;
    eval_operand_get(cond->kids[0], item, &a);
    eval_operand_get(cond->kids[1], item, &b);
    switch (cond->op) {
    case EXPR_OP_ATTR_TYPE:
        return eval_attr_type(a.v, b.v);
    case EXPR_OP_BEGINS_WITH:
        return eval_begins_with(a.v, b.v);
    case EXPR_OP_CONTAINS:
        return eval_contains(a.v, b.v);
    default:
        return eval_compare(cond->op, a.v, b.v);
    }
}

bool expr_eval_condition(const expr_node *cond, const kura_value *item)
{
    switch (cond->op) {
    case EXPR_OP_AND:
        return expr_eval_condition(cond->kids[0], item) && expr_eval_condition(cond->kids[1], item);
    case EXPR_OP_OR:
        return expr_eval_condition(cond->kids[0], item) || expr_eval_condition(cond->kids[1], item);
    case EXPR_OP_NOT:
        return !expr_eval_condition(cond->kids[0], item);
    case EXPR_OP_ATTR_EXISTS:
        return expr_path_get(item, &cond->kids[0]->path) != NULL;
    case EXPR_OP_ATTR_NOT_EXISTS:
        return expr_path_get(item, &cond->kids[0]->path) == NULL;
    case EXPR_OP_BETWEEN:
        return eval_between(cond, item);
    case EXPR_OP_IN:
        return eval_in(cond, item);
    case EXPR_OP_EQ:
    case EXPR_OP_NE:
    case EXPR_OP_LT:
    case EXPR_OP_LE:
    case EXPR_OP_GT:
    case EXPR_OP_GE:
    case EXPR_OP_ATTR_TYPE:
    case EXPR_OP_BEGINS_WITH:
    case EXPR_OP_CONTAINS:
        return eval_binary(cond, item);
    default:
        /* An operand where a condition is expected: the parser never builds this. */
        return false;
    }
}

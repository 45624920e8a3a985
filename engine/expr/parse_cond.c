/*
 * parse_cond.c - the checks of a parsed condition (KeyCondition, Condition, Filter).
 *
 * This file contains expr_check_condition(): after the parse (parse.c) it runs, in order,
 *   1. redundant parentheses                 "The expression has redundant parentheses;"
 *   2. function names                        "Invalid function name; function: f",
 *                                            "The function is not allowed in a condition
 *                                             expression; function: if_not_exists"
 *   3. functions used as operands, size() used as a condition
 *                                            "The function is not allowed to be used this way
 *                                             in an expression; function: contains"
 *   4. reserved words used bare
 *   5. more than 300 operators
 *   6. left to right: paths (depth, indexes, #names), :values, the number of a function's
 *      operands, operands that must differ ("a = a"), operand types (size(:number),
 *      begins_with(a, :number), a < :set, BETWEEN bounds of different types or in the wrong
 *      order, attribute_type's type name), IN with more than 100 candidates.
 */
#include <stdio.h>
#include <string.h>

#include "engine/expr/expr_int.h"

static const char *cond_fn_name(const expr_parser *p, const expr_pnode *n, int *len_out)
{
    const expr_tok *t = &p->toks[n->tok];
    *len_out = (int)t->len;
    return p->src + t->off;
}

static bool cond_visit_fn_names(expr_parser *p, const expr_pnode *n, const expr_pnode *parent,
                                kura_status *st)
{
    int len;
    const char *name = cond_fn_name(p, n, &len);
    if (n->fn == EXPR_FN_UNKNOWN)
        *st = expr_fail(p, "Invalid function name; function: %.*s", len, name);
    else if (n->fn == EXPR_FN_IF_NOT_EXISTS || n->fn == EXPR_FN_LIST_APPEND)
        *st = expr_fail(p, "The function is not allowed in a condition expression; function: %.*s",
                        len, name);
    else
        return true;
    return false;
}

static bool cond_is_logical(const expr_pnode *n)
{
    return !n || n->n.op == EXPR_OP_AND || n->n.op == EXPR_OP_OR || n->n.op == EXPR_OP_NOT;
}

static bool cond_visit_misused(expr_parser *p, const expr_pnode *n, const expr_pnode *parent,
                               kura_status *st)
{
    if (n->fn == EXPR_FN_NONE)
        return true;
    /* size() only as an operand; the other functions only as conditions. */
    if (n->fn == EXPR_FN_SIZE ? !cond_is_logical(parent) : cond_is_logical(parent))
        return true;
    int len;
    const char *name = cond_fn_name(p, n, &len);
    *st = expr_fail(p,
                    "The function is not allowed to be used this way in an expression; "
                    "function: %.*s",
                    len, name);
    return false;
}

static uint32_t cond_count_operators(const expr_pnode *n)
{
    uint32_t c = n->n.op == EXPR_OP_PATH || n->n.op == EXPR_OP_VALUE ? 0 : 1;
    for (uint32_t i = 0; i < n->n.nkids; i++)
        c += cond_count_operators(expr_pn(n->n.kids[i]));
    return c;
}

/* "The first operand must be distinct ..." if kids[0] is a path repeated among the others. */
static kura_status cond_check_distinct(expr_parser *p, const expr_node *n, const char *op,
                                       int op_len)
{
    for (uint32_t i = 1; i < n->nkids; i++) {
        if (n->kids[0]->op == EXPR_OP_PATH && n->kids[i]->op == EXPR_OP_PATH &&
            expr_path_equal(&n->kids[0]->path, &n->kids[i]->path)) {
            char path[512];
            expr_path_str(&n->kids[0]->path, path, sizeof path);
            return expr_fail(p,
                             "The first operand must be distinct from the remaining operands "
                             "for this operator or function; operator: %.*s, first operand: %s",
                             op_len, op, path);
        }
    }
    return KURA_OK;
}

static kura_status cond_type_error(expr_parser *p, const char *op, int op_len, const char *type)
{
    return expr_fail(p,
                     "Incorrect operand type for operator or function; operator or function: "
                     "%.*s, operand type: %s",
                     op_len, op, type);
}

/* Operands of < <= > >= BETWEEN must be S, N or B when their type is known. */
static kura_status cond_check_ordered(expr_parser *p, const expr_node *n, const char *op)
{
    for (uint32_t i = 0; i < n->nkids; i++) {
        kura_type t = expr_node_type(expr_pn(n->kids[i]));
        if (t && t != KURA_S && t != KURA_N && t != KURA_B)
            return cond_type_error(p, op, (int)strlen(op), val_type_name(t));
    }
    return KURA_OK;
}

static bool cond_visit_operands(expr_parser *p, const expr_pnode *cn, const expr_pnode *parent,
                                kura_status *st)
{
    static const char *const cmp_names[] = {
        [EXPR_OP_EQ] = "=", [EXPR_OP_NE] = "<>", [EXPR_OP_LT] = "<",
        [EXPR_OP_LE] = "<=", [EXPR_OP_GT] = ">", [EXPR_OP_GE] = ">=",
    };
    expr_pnode *n = (expr_pnode *)cn; /* the parser owns its nodes; resolution fills them */
    const expr_node *e = &n->n;

    if (e->op == EXPR_OP_PATH)
        *st = expr_check_path(p, &n->n.path);
    else if (e->op == EXPR_OP_VALUE)
        *st = expr_check_value(p, n);
    else if (n->fn != EXPR_FN_NONE)
        *st = expr_check_function(p, n);
    else if (e->op >= EXPR_OP_EQ && e->op <= EXPR_OP_GE) {
        const char *op = cmp_names[e->op];
        *st = cond_check_distinct(p, e, op, (int)strlen(op));
        if (*st == KURA_OK && e->op != EXPR_OP_EQ && e->op != EXPR_OP_NE)
            *st = cond_check_ordered(p, e, op);
    } else if (e->op == EXPR_OP_BETWEEN) {
        *st = expr_check_between(p, e);
    } else if (e->op == EXPR_OP_IN) {
        if (e->nkids - 1 > EXPR_MAX_IN)
            *st = expr_fail(p,
                            "The IN operator is provided with too many operands; number of "
                            "operands: %u",
                            e->nkids - 1);
        else
            *st = cond_check_distinct(p, e, "IN", 2);
    } else {
        *st = KURA_OK;
    }
    return *st == KURA_OK;
}

kura_status expr_check_condition(expr_parser *p, expr_pnode *root)
{
    kura_status st = KURA_OK;
    if (!expr_walk(p, root, NULL, expr_visit_parens, &st) ||
        !expr_walk(p, root, NULL, cond_visit_fn_names, &st) ||
        !expr_walk(p, root, NULL, cond_visit_misused, &st) ||
        !expr_walk(p, root, NULL, expr_visit_reserved, &st))
        return st;
    /* DynamoDB stops counting at the first operator past the limit: "operator count: 301". */
    if (cond_count_operators(root) > EXPR_MAX_OPERATORS)
        return expr_fail(p, "The expression contains too many operators; operator count: %u",
                         EXPR_MAX_OPERATORS + 1);
    if (!expr_walk(p, root, NULL, cond_visit_operands, &st))
        return st;
    return KURA_OK;
}

/*
 * keycond.c - This file contains the flattening of a parsed KeyConditionExpression into key
 * terms ("pk = :v", "sk BETWEEN :a AND :b", "begins_with(sk, :p)") that Query matches
 * against its key schema.
 *
 * The tree is walked in the order written, checking each node as DynamoDB does (the
 * messages are DynamoDB's, as dynalite's validations/index.js reproduces them), so that the
 * first offending node decides the error:
 *  1. OR, NOT, IN, <> and the functions other than begins_with are invalid operators;
 *     size() is a "nested operation";
 *  2. BETWEEN and begins_with must have the key attribute as their first operand;
 *  3. a term names exactly one top-level attribute, and names each attribute once.
 * A comparison written value-first (":v < sk") is turned around (sk > :v).
 */
#include "engine/expr/expr.h"

#include <string.h>

#define KEYCOND_BAD_OP "Invalid operator used in KeyConditionExpression: %s"
#define KEYCOND_BAD_COND "Invalid condition in KeyConditionExpression: %s"

/* The walk's output: terms written so far (at most cap). */
typedef struct keycond_walk {
    expr_key_term *terms;
    uint32_t cap, n;
} keycond_walk;

static const char *keycond_op_name(expr_op op)
{
    switch (op) {
    case EXPR_OP_OR:
        return "OR";
    case EXPR_OP_NOT:
        return "NOT";
    case EXPR_OP_IN:
        return "IN";
    case EXPR_OP_NE:
        return "<>";
    case EXPR_OP_ATTR_EXISTS:
        return "attribute_exists";
    case EXPR_OP_ATTR_NOT_EXISTS:
        return "attribute_not_exists";
    case EXPR_OP_ATTR_TYPE:
        return "attribute_type";
    case EXPR_OP_CONTAINS:
        return "contains";
    default:
        return NULL;
    }
}

/* The operator of `v op path` written as `path op' v`. */
static expr_op keycond_flip(expr_op op)
{
    switch (op) {
    case EXPR_OP_LT:
        return EXPR_OP_GT;
    case EXPR_OP_LE:
        return EXPR_OP_GE;
    case EXPR_OP_GT:
        return EXPR_OP_LT;
    case EXPR_OP_GE:
        return EXPR_OP_LE;
    default:
        return op;
    }
}

static bool keycond_is_operand(const expr_node *n)
{
    return n->op == EXPR_OP_PATH || n->op == EXPR_OP_VALUE;
}

/* Checks what a node is before looking at its operands (steps 1 and 2 above). */
static kura_status keycond_check_op(const expr_node *n)
{
    const char *bad = keycond_op_name(n->op);
    if (bad != NULL) return kura_err(KURA_E_INVALID, KEYCOND_BAD_OP, bad);
    if (n->op == EXPR_OP_SIZE)
        return kura_err(KURA_E_INVALID, "KeyConditionExpressions cannot contain nested operations");
    if (n->op == EXPR_OP_BETWEEN && n->kids[0]->op != EXPR_OP_PATH)
        return kura_err(KURA_E_INVALID, KEYCOND_BAD_COND,
                        "BETWEEN operator must have the key attribute as its first operand");
    if (n->op == EXPR_OP_BEGINS_WITH && n->kids[0]->op != EXPR_OP_PATH)
        return kura_err(KURA_E_INVALID, KEYCOND_BAD_COND,
                        "begins_with operator must have the key attribute as its first operand");
    return KURA_OK;
}

/* Records the term `n`, whose single path operand is kids[path_ix]. */
static kura_status keycond_add_term(keycond_walk *w, const expr_node *n, uint32_t path_ix)
{
    const expr_path_elem *name = &n->kids[path_ix]->path.elems[0];
    for (uint32_t i = 0; i < w->n; i++) {
        if (w->terms[i].name_len == name->name_len &&
            memcmp(w->terms[i].name, name->name, name->name_len) == 0)
            return kura_err(KURA_E_INVALID,
                            "KeyConditionExpressions must only contain one condition per key");
    }
    if (w->n == w->cap) return kura_err(KURA_E_INVALID, "Conditions can be of length 1 or 2 only");
    expr_key_term *t = &w->terms[w->n++];
    t->name = name->name;
    t->name_len = name->name_len;
    t->op = path_ix == 0 ? n->op : keycond_flip(n->op);
    t->v1 = n->kids[path_ix == 0 ? 1 : 0]->value;
    t->v2 = n->op == EXPR_OP_BETWEEN ? n->kids[2]->value : NULL;
    return KURA_OK;
}

static kura_status keycond_visit(keycond_walk *w, const expr_node *n)
{
    kura_status st = keycond_check_op(n);
    if (st != KURA_OK) return st;
    bool have_path = false;
    uint32_t path_ix = 0;
    for (uint32_t i = 0; i < n->nkids; i++) {
        const expr_node *kid = n->kids[i];
        if (kid->op == EXPR_OP_PATH) {
            if (have_path)
                return kura_err(KURA_E_INVALID, KEYCOND_BAD_COND,
                                "Multiple attribute names used in one condition");
            if (kid->path.n > 1)
                return kura_err(KURA_E_INVALID,
                                "KeyConditionExpressions cannot have conditions on nested "
                                "attributes");
            have_path = true;
            path_ix = i;
        } else if (!keycond_is_operand(kid)) {
            st = keycond_visit(w, kid);
            if (st != KURA_OK) return st;
        }
    }
    if (n->op == EXPR_OP_AND) return KURA_OK;
    if (!have_path) return kura_err(KURA_E_INVALID, KEYCOND_BAD_COND, "No key attribute specified");
    return keycond_add_term(w, n, path_ix);
}

kura_status expr_key_terms(const expr_node *root, expr_key_term *terms_out, uint32_t cap,
                           uint32_t *n_out)
{
    keycond_walk w = {terms_out, cap, 0};
    kura_status st = keycond_visit(&w, root);
    if (st != KURA_OK) return st;
    *n_out = w.n;
    return KURA_OK;
}

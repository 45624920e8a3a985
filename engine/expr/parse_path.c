/*
 * parse_path.c - document paths and function calls, shared by every expression type.
 *
 * This file contains the rules
 *   path  := (name | #name) ('.' (name | #name) | '[' number ']')*
 *   call  := name '(' arg (',' arg)* ')'
 * A path is built as an EXPR_OP_PATH node whose steps point into the parser's copy of the
 * expression: "#name" steps keep their "#" (expr_check_path() resolves them later) and a
 * list index beyond 2^31-1 keeps its digits for the error message. A call is built for any
 * name; unknown names are reported by the checks, after the parse, as DynamoDB does.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/expr/expr_int.h"

/* Matches one name of a path: an identifier that is not a keyword, or a #name. */
static bool expr_path_name(expr_parser *p)
{
    const expr_tok *t = &p->toks[p->pos];
    if (t->kind == EXPR_TOK_NAME || (t->kind == EXPR_TOK_IDENT && !expr_is_keyword(p, p->pos))) {
        p->pos++;
        return true;
    }
    expr_note_fail(p);
    return false;
}

/* Fills elem from the tokens of one path step (a name token, or the number of "[n]"). */
static void expr_path_elem_set(const expr_parser *p, const expr_tok *t, expr_path_elem *e)
{
    memset(e, 0, sizeof *e);
    if (t->kind != EXPR_TOK_NUMBER) {
        e->name = p->src + t->off;
        e->name_len = t->len;
        return;
    }
    uint64_t v = 0;
    for (uint32_t i = 0; i < t->len && v <= EXPR_MAX_INDEX; i++)
        v = v * 10 + (uint64_t)(p->src[t->off + i] - '0');
    e->is_index = true;
    e->index = (uint32_t)v;
    if (v > EXPR_MAX_INDEX) {
        /* Out of range: kept with its text for the message of expr_check_path(). */
        e->index = UINT32_MAX;
        e->name = p->src + t->off;
        e->name_len = t->len;
    }
}

expr_pnode *expr_parse_path_node(expr_parser *p)
{
    uint32_t start = p->pos, n = 1;

    if (!expr_path_name(p))
        return NULL;
    for (;;) {
        uint32_t save = p->pos;
        if (expr_accept(p, EXPR_TOK_DOT) && expr_path_name(p)) {
            n++;
            continue;
        }
        p->pos = save;
        if (expr_accept(p, EXPR_TOK_LBRACKET) && expr_accept(p, EXPR_TOK_NUMBER) &&
            expr_accept(p, EXPR_TOK_RBRACKET)) {
            n++;
            continue;
        }
        p->pos = save;
        break;
    }
    expr_pnode *node = expr_node_new(p, EXPR_OP_PATH, 0, start);
    expr_path_elem *elems = arena_alloc(p->ctx->arena, n * sizeof *elems);
    if (!node || !elems) {
        p->nomem = true;
        return NULL;
    }
    /* Second pass over the matched tokens: names and numbers are the steps. */
    uint32_t k = 0;
    for (uint32_t i = start; i < p->pos; i++) {
        expr_tok_kind kind = p->toks[i].kind;
        if (kind == EXPR_TOK_IDENT || kind == EXPR_TOK_NAME || kind == EXPR_TOK_NUMBER)
            expr_path_elem_set(p, &p->toks[i], &elems[k++]);
    }
    node->n.path.elems = elems;
    node->n.path.n = n;
    return node;
}

static const struct {
    const char *name;
    expr_fn fn;
    expr_op op;
} expr_fns[] = {
    {"attribute_exists", EXPR_FN_ATTR_EXISTS, EXPR_OP_ATTR_EXISTS},
    {"attribute_not_exists", EXPR_FN_ATTR_NOT_EXISTS, EXPR_OP_ATTR_NOT_EXISTS},
    {"attribute_type", EXPR_FN_ATTR_TYPE, EXPR_OP_ATTR_TYPE},
    {"begins_with", EXPR_FN_BEGINS_WITH, EXPR_OP_BEGINS_WITH},
    {"contains", EXPR_FN_CONTAINS, EXPR_OP_CONTAINS},
    {"size", EXPR_FN_SIZE, EXPR_OP_SIZE},
    {"if_not_exists", EXPR_FN_IF_NOT_EXISTS, EXPR_OP_IF_NOT_EXISTS},
    {"list_append", EXPR_FN_LIST_APPEND, EXPR_OP_LIST_APPEND},
};

static bool expr_nodes_push(expr_parser *p, expr_nodes *l, expr_pnode *x)
{
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 8;
        expr_node **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            p->nomem = true;
            return false;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = &x->n;
    return true;
}

bool expr_parse_list(expr_parser *p, int rule, expr_nodes *l)
{
    if (!expr_accept(p, EXPR_TOK_LPAREN))
        return false;
    for (;;) {
        expr_pnode *a = expr_rule(p, rule);
        if (!a || !expr_nodes_push(p, l, a))
            return false;
        if (!expr_accept(p, EXPR_TOK_COMMA))
            break;
    }
    return expr_accept(p, EXPR_TOK_RPAREN);
}

expr_pnode *expr_node_from_list(expr_parser *p, expr_op op, uint32_t tok,
                                       expr_pnode *first, const expr_nodes *l)
{
    uint32_t off = first ? 1 : 0;
    expr_pnode *n = expr_node_new(p, op, l->n + off, tok);
    if (!n)
        return NULL;
    if (first)
        n->n.kids[0] = &first->n;
    if (l->n)
        memcpy(n->n.kids + off, l->v, l->n * sizeof *l->v);
    return n;
}

expr_pnode *expr_parse_call(expr_parser *p, int arg_rule)
{
    uint32_t start = p->pos;
    const expr_tok *t = &p->toks[start];

    if (t->kind != EXPR_TOK_IDENT || expr_is_keyword(p, start)) {
        expr_note_fail(p);
        return NULL;
    }
    p->pos++;
    expr_nodes args = {0};
    expr_pnode *n = NULL;
    if (expr_parse_list(p, arg_rule, &args)) {
        expr_fn fn = EXPR_FN_UNKNOWN;
        expr_op op = EXPR_OP_CONTAINS; /* unknown functions never leave the parser */
        for (size_t i = 0; i < sizeof expr_fns / sizeof expr_fns[0]; i++) {
            if (strlen(expr_fns[i].name) == t->len &&
                memcmp(expr_fns[i].name, p->src + t->off, t->len) == 0) {
                fn = expr_fns[i].fn;
                op = expr_fns[i].op;
            }
        }
        if ((n = expr_node_from_list(p, op, start, NULL, &args)) != NULL)
            n->fn = (uint8_t)fn;
    }
    free(args.v);
    if (!n)
        p->pos = start;
    return n;
}

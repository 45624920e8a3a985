/*
 * parse_update.c - UpdateExpression: its grammar and its checks.
 *
 * This file contains expr_parse_update(). The grammar, as DynamoDB accepts it:
 *
 *   update   := clause+                 clauses in any order, each kind at most once
 *   clause   := SET path '=' setval (',' path '=' setval)*
 *             | REMOVE path (',' path)*
 *             | ADD path :value (',' path :value)*
 *             | DELETE path :value (',' path :value)*
 *   setval   := term (('+' | '-') term)? | '(' setval ')'
 *   term     := '(' term ')' | call | :value | path       (call arguments are terms)
 *
 * so "a = b + c + d" and "a = b + (c - d)" are syntax errors, as in DynamoDB. After the parse
 * the checks run in DynamoDB's order: redundant parentheses, reserved words, function names
 * (only if_not_exists and list_append are allowed), repeated clauses, the target paths
 * (depth, indexes, #names), overlapping or conflicting target paths, then the operands (their
 * names and values, then their types: + and - take numbers, list_append lists, ADD a number
 * or a set, DELETE a set), action by action from the last, as DynamoDB reports them.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/expr/expr_int.h"

/* term := '(' term ')' | call | :value | path */
expr_pnode *expr_rule_term(expr_parser *p)
{
    uint32_t start = p->pos;
    if (expr_accept(p, EXPR_TOK_LPAREN)) {
        expr_pnode *inner = expr_rule(p, EXPR_R_TERM);
        if (inner && expr_accept(p, EXPR_TOK_RPAREN))
            return expr_node_paren(p, inner);
        p->pos = start;
    }
    expr_pnode *n = expr_parse_call(p, EXPR_R_TERM);
    if (n)
        return n;
    if (expr_accept(p, EXPR_TOK_VALUE))
        return expr_node_new(p, EXPR_OP_VALUE, 0, start);
    return expr_parse_path_node(p);
}

/* setval := term (('+' | '-') term)? | '(' setval ')' */
expr_pnode *expr_rule_setval(expr_parser *p)
{
    uint32_t start = p->pos;
    expr_pnode *l = expr_rule(p, EXPR_R_TERM);
    if (l) {
        uint32_t at = p->pos;
        bool plus = expr_accept(p, EXPR_TOK_PLUS);
        if (plus || expr_accept(p, EXPR_TOK_MINUS)) {
            expr_pnode *r = expr_rule(p, EXPR_R_TERM);
            if (r) {
                expr_pnode *n = expr_node_new(p, plus ? EXPR_OP_PLUS : EXPR_OP_MINUS, 2, at);
                if (n) {
                    n->n.kids[0] = &l->n;
                    n->n.kids[1] = &r->n;
                }
                return n;
            }
        }
        p->pos = at;
        return l;
    }
    if (expr_accept(p, EXPR_TOK_LPAREN)) {
        expr_pnode *inner = expr_rule(p, EXPR_R_SETVAL);
        if (inner && expr_accept(p, EXPR_TOK_RPAREN))
            return expr_node_paren(p, inner);
    }
    p->pos = start;
    return NULL;
}

static const char *const upd_clause_names[] = {"SET", "REMOVE", "ADD", "DELETE"};

/* The actions being parsed, and per action the token of its clause keyword. */
typedef struct upd_state {
    expr_action *v;
    uint32_t *clause_tok;
    uint32_t n, cap;
} upd_state;

static bool upd_push(expr_parser *p, upd_state *u, const expr_action *a, uint32_t clause_tok)
{
    if (u->n == u->cap) {
        uint32_t cap = u->cap ? 2 * u->cap : 8;
        expr_action *v = realloc(u->v, cap * sizeof *v);
        if (v)
            u->v = v;
        uint32_t *t = v ? realloc(u->clause_tok, cap * sizeof *t) : NULL;
        if (!t) {
            p->nomem = true;
            return false;
        }
        u->clause_tok = t;
        u->cap = cap;
    }
    u->v[u->n] = *a;
    u->clause_tok[u->n++] = clause_tok;
    return true;
}

/* One action of a clause of kind `kind`. */
static bool upd_parse_action(expr_parser *p, expr_action_kind kind, expr_action *a)
{
    expr_pnode *path = expr_parse_path_node(p);
    if (!path)
        return false;
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->path = path->n.path;
    if (kind == EXPR_REMOVE)
        return true;
    if (kind == EXPR_SET) {
        if (!expr_accept(p, EXPR_TOK_EQ))
            return false;
        expr_pnode *v = expr_rule(p, EXPR_R_SETVAL);
        a->operand = v ? &v->n : NULL;
        return v != NULL;
    }
    uint32_t tok = p->pos;
    if (!expr_accept(p, EXPR_TOK_VALUE))
        return false;
    expr_pnode *v = expr_node_new(p, EXPR_OP_VALUE, 0, tok);
    a->operand = v ? &v->n : NULL;
    return v != NULL;
}

/* clause+ up to EOF. */
static bool upd_parse(expr_parser *p, upd_state *u)
{
    do {
        uint32_t kw = p->pos;
        int kind = -1;
        for (int k = 0; k < 4 && kind < 0; k++)
            if (expr_accept_kw(p, upd_clause_names[k]))
                kind = k;
        if (kind < 0)
            return false;
        do {
            expr_action a;
            if (!upd_parse_action(p, (expr_action_kind)kind, &a) || !upd_push(p, u, &a, kw))
                return false;
        } while (expr_accept(p, EXPR_TOK_COMMA));
    } while (p->toks[p->pos].kind != EXPR_TOK_EOF);
    return true;
}

static bool upd_visit_fn_names(expr_parser *p, const expr_pnode *n, const expr_pnode *parent,
                               kura_status *st)
{
    if (n->fn == EXPR_FN_NONE || n->fn == EXPR_FN_IF_NOT_EXISTS || n->fn == EXPR_FN_LIST_APPEND)
        return true;
    const expr_tok *t = &p->toks[n->tok];
    if (n->fn == EXPR_FN_UNKNOWN)
        *st = expr_fail(p, "Invalid function name; function: %.*s", (int)t->len, p->src + t->off);
    else
        *st = expr_fail(p, "The function is not allowed in an update expression; function: %.*s",
                        (int)t->len, p->src + t->off);
    return false;
}

static bool upd_visit_operands(expr_parser *p, const expr_pnode *cn, const expr_pnode *parent,
                               kura_status *st)
{
    expr_pnode *n = (expr_pnode *)cn; /* the parser's own node; resolution fills it */
    if (n->n.op == EXPR_OP_PATH)
        *st = expr_check_path(p, &n->n.path);
    else if (n->n.op == EXPR_OP_VALUE)
        *st = expr_check_value(p, n);
    else
        *st = KURA_OK;
    return *st == KURA_OK;
}

static bool upd_visit_types(expr_parser *p, const expr_pnode *n, const expr_pnode *parent,
                            kura_status *st)
{
    *st = KURA_OK;
    if (n->fn != EXPR_FN_NONE) {
        *st = expr_check_function(p, n);
    } else if (n->n.op == EXPR_OP_PLUS || n->n.op == EXPR_OP_MINUS) {
        for (uint32_t i = 0; i < 2 && *st == KURA_OK; i++) {
            const expr_node *k = n->n.kids[i];
            if (k->op == EXPR_OP_VALUE && k->value->type != KURA_N)
                *st = expr_fail(p,
                                "Incorrect operand type for operator or function; operator or "
                                "function: %s, operand type: %s",
                                n->n.op == EXPR_OP_PLUS ? "+" : "-",
                                val_type_name((kura_type)k->value->type));
        }
    }
    return *st == KURA_OK;
}

/* ADD takes a number or a set, DELETE a set. */
static kura_status upd_check_add_delete(expr_parser *p, const expr_action *a)
{
    static const char *const long_names[] = {
        [KURA_S] = "STRING", [KURA_N] = "NUMBER", [KURA_B] = "BINARY", [KURA_BOOL] = "BOOLEAN",
        [KURA_NULL] = "NULL", [KURA_M] = "MAP",   [KURA_L] = "LIST",
    };
    kura_type t = (kura_type)a->operand->value->type;
    bool is_set = t == KURA_SS || t == KURA_NS || t == KURA_BS;
    if (is_set || (a->kind == EXPR_ADD && t == KURA_N))
        return KURA_OK;
    const char *op = a->kind == EXPR_ADD ? "ADD" : "DELETE";
    return expr_fail(p,
                     "Incorrect operand type for operator or function; operator: %s, operand "
                     "type: %s, typeSet: ALLOWED_FOR_%s_OPERAND",
                     op, long_names[t], op);
}

/* Walks the operand tree of every SET action with `fn`, in action order. */
static kura_status upd_walk_sets(expr_parser *p, const upd_state *u, expr_visit_fn fn)
{
    kura_status st = KURA_OK;
    for (uint32_t i = 0; i < u->n; i++)
        if (u->v[i].kind == EXPR_SET && !expr_walk(p, expr_pn(u->v[i].operand), NULL, fn, &st))
            return st;
    return KURA_OK;
}

/* Reserved words of the target paths and operands, action by action. */
static kura_status upd_check_reserved(expr_parser *p, const upd_state *u)
{
    kura_status st = KURA_OK;
    for (uint32_t i = 0; i < u->n; i++) {
        if ((st = expr_check_path_reserved(p, &u->v[i].path)) != KURA_OK)
            return st;
        if (u->v[i].kind == EXPR_SET &&
            !expr_walk(p, expr_pn(u->v[i].operand), NULL, expr_visit_reserved, &st))
            return st;
    }
    return KURA_OK;
}

/* "The "SET" section can only be used once in an update expression;" */
static kura_status upd_check_clauses(expr_parser *p, const upd_state *u)
{
    bool seen[4] = {false};
    for (uint32_t i = 0; i < u->n; i++) {
        if (i > 0 && u->clause_tok[i] == u->clause_tok[i - 1])
            continue;
        if (seen[u->v[i].kind])
            return expr_fail(p, "The \"%s\" section can only be used once in an update expression;",
                             upd_clause_names[u->v[i].kind]);
        seen[u->v[i].kind] = true;
    }
    return KURA_OK;
}

static kura_status upd_check_paths(expr_parser *p, upd_state *u)
{
    kura_status st;
    for (uint32_t i = 0; i < u->n; i++)
        if ((st = expr_check_path(p, &u->v[i].path)) != KURA_OK)
            return st;
    expr_path **paths = malloc((u->n ? u->n : 1) * sizeof *paths);
    if (!paths)
        return kura_err(KURA_E_NOMEM, "out of memory parsing an expression");
    for (uint32_t i = 0; i < u->n; i++)
        paths[i] = &u->v[i].path;
    st = expr_check_overlaps(p, paths, u->n);
    free(paths);
    return st;
}

static kura_status upd_check(expr_parser *p, upd_state *u)
{
    kura_status st;
    if ((st = upd_walk_sets(p, u, expr_visit_parens)) != KURA_OK ||
        (st = upd_check_reserved(p, u)) != KURA_OK ||
        (st = upd_walk_sets(p, u, upd_visit_fn_names)) != KURA_OK ||
        (st = upd_check_clauses(p, u)) != KURA_OK || (st = upd_check_paths(p, u)) != KURA_OK)
        return st;
    /* DynamoDB checks the operands action by action from the last one: an undefined name,
     * value or wrong operand type of a later action is reported before one of an earlier. */
    for (uint32_t i = u->n; i-- > 0;) {
        const expr_action *a = &u->v[i];
        st = KURA_OK;
        if (a->kind == EXPR_REMOVE)
            continue;
        if (!expr_walk(p, expr_pn(a->operand), NULL, upd_visit_operands, &st))
            return st;
        if (a->kind == EXPR_SET && !expr_walk(p, expr_pn(a->operand), NULL, upd_visit_types, &st))
            return st;
        if (a->kind != EXPR_SET && (st = upd_check_add_delete(p, a)) != KURA_OK)
            return st;
    }
    return KURA_OK;
}

kura_status expr_parse_update(expr_ctx *ctx, const char *s, expr_update **update_out)
{
    expr_parser p;
    upd_state u = {0};
    kura_status st = expr_parser_init(&p, ctx, EXPR_UPDATE, s);
    if (st != KURA_OK)
        return st;
    if (!upd_parse(&p, &u) || p.nomem)
        st = expr_syntax_error(&p);
    else
        st = upd_check(&p, &u);
    expr_update *up = NULL;
    if (st == KURA_OK) {
        up = arena_alloc(ctx->arena, sizeof *up);
        expr_action *acts = arena_alloc(ctx->arena, u.n * sizeof *acts);
        if (!up || !acts) {
            st = kura_err(KURA_E_NOMEM, "out of memory parsing an expression");
        } else {
            memcpy(acts, u.v, u.n * sizeof *acts);
            up->actions = acts;
            up->n = u.n;
        }
    }
    free(u.v);
    free(u.clause_tok);
    expr_parser_done(&p);
    if (st == KURA_OK)
        *update_out = up;
    return st;
}

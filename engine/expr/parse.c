/*
 * parse.c - the parser's machinery and the grammar of condition expressions.
 *
 * This file contains the parts every expression type shares (the parser state, memoised
 * rules, token matching, syntax errors, document paths, function calls) and the grammar of
 * KeyConditionExpression, ConditionExpression and FilterExpression (expr_int.h describes how
 * a parse works; paths and function calls are in parse_path.c). The grammar, as DynamoDB accepts it:
 *
 *   or       := and (OR or)?
 *   and      := not (AND and)?
 *   not      := NOT not | cond | '(' or ')'
 *   cond     := operand cmp operand | operand BETWEEN operand AND operand
 *             | operand IN '(' operand (',' operand)* ')' | call
 *   operand  := '(' operand ')' | call | :value | path
 *   call     := name '(' operand (',' operand)* ')'
 *   path     := (name | #name) ('.' (name | #name) | '[' number ']')*
 *
 * so AND binds tighter than OR and NOT tighter than both; AND and OR group to the right,
 * which evaluates the same. Alternatives are tried in the order written (a PEG), which is
 * what makes "(a) = :v" a comparison and "(a = :v)" a parenthesised condition. Keywords are
 * case-insensitive and cannot be attribute names; a syntax error reports the furthest token
 * any rule failed to match, with the text from the token before it to the token after it
 * ("Syntax error; token: \"=\", near: \"= = b\""), as DynamoDB does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/expr/expr_int.h"

/* Bounds the recursion of memoised rules. 4 KB of text nests at most ~2048 parentheses deep,
 * about 4 rules per level, so this is never reached by an expression of legal size; it is a
 * guard on the stack (~1 MB at this depth in an ASan build), not a DynamoDB limit. */
#define EXPR_MAX_RULE_DEPTH 10000

static const char *const expr_type_names[] = {
    [EXPR_KEY_CONDITION] = "KeyConditionExpression",
    [EXPR_CONDITION] = "ConditionExpression",
    [EXPR_FILTER] = "FilterExpression",
    [EXPR_UPDATE] = "UpdateExpression",
    [EXPR_PROJECTION] = "ProjectionExpression",
};

kura_status expr_fail(const expr_parser *p, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return kura_err(KURA_E_INVALID, "Invalid %s: %s", expr_type_names[p->type], msg);
}

kura_status expr_parser_init(expr_parser *p, expr_ctx *ctx, expr_type type, const char *s)
{
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->type = type;
    p->len = strlen(s);
    if (p->len == 0)
        return expr_fail(p, "The expression can not be empty;");
    if (p->len > EXPR_MAX_BYTES) {
        if (type == EXPR_UPDATE)
            return expr_fail(p, "Expression size has exceeded the maximum allowed size;");
        return expr_fail(p,
                         "Expression size has exceeded the maximum allowed size; expression "
                         "size: %zu",
                         p->len);
    }
    char *copy = arena_alloc(ctx->arena, p->len + 1);
    if (!copy)
        return kura_err(KURA_E_NOMEM, "out of memory parsing an expression");
    memcpy(copy, s, p->len + 1);
    p->src = copy;
    if (!(p->toks = expr_lex(ctx->arena, copy, p->len, &p->ntok)))
        return kura_err(KURA_E_NOMEM, "out of memory parsing an expression");
    return KURA_OK;
}

void expr_parser_done(expr_parser *p)
{
    for (int i = 0; i < EXPR_NRULES; i++)
        free(p->memo[i]);
}

kura_status expr_syntax_error(const expr_parser *p)
{
    if (p->nomem)
        return kura_err(KURA_E_NOMEM, "out of memory parsing an expression");
    uint32_t i = p->maxfail;
    const expr_tok *t = &p->toks[i];
    size_t start = i > 0 ? p->toks[i - 1].off : 0;
    size_t end = p->len;
    if (t->kind != EXPR_TOK_EOF && p->toks[i + 1].kind != EXPR_TOK_EOF)
        end = p->toks[i + 1].off + p->toks[i + 1].len;
    if (t->kind == EXPR_TOK_EOF)
        return expr_fail(p, "Syntax error; token: \"<EOF>\", near: \"%.*s\"", (int)(end - start),
                         p->src + start);
    return expr_fail(p, "Syntax error; token: \"%.*s\", near: \"%.*s\"", (int)t->len,
                     p->src + t->off, (int)(end - start), p->src + start);
}

void expr_note_fail(expr_parser *p)
{
    if (p->pos > p->maxfail)
        p->maxfail = p->pos;
}

bool expr_accept(expr_parser *p, expr_tok_kind kind)
{
    if (p->toks[p->pos].kind == kind) {
        p->pos++;
        return true;
    }
    expr_note_fail(p);
    return false;
}

bool expr_is_kw(const expr_parser *p, uint32_t tok, const char *kw)
{
    const expr_tok *t = &p->toks[tok];
    return t->kind == EXPR_TOK_IDENT && t->len == strlen(kw) &&
           strncasecmp(p->src + t->off, kw, t->len) == 0;
}

bool expr_accept_kw(expr_parser *p, const char *kw)
{
    if (expr_is_kw(p, p->pos, kw)) {
        p->pos++;
        return true;
    }
    expr_note_fail(p);
    return false;
}

bool expr_is_keyword(const expr_parser *p, uint32_t tok)
{
    static const char *const cond_kw[] = {"AND", "OR", "NOT", "BETWEEN", "IN"};
    static const char *const update_kw[] = {"SET", "REMOVE", "ADD", "DELETE"};
    if (p->type == EXPR_PROJECTION)
        return false;
    bool upd = p->type == EXPR_UPDATE;
    const char *const *kw = upd ? update_kw : cond_kw;
    size_t n = upd ? 4 : 5;
    for (size_t i = 0; i < n; i++)
        if (expr_is_kw(p, tok, kw[i]))
            return true;
    return false;
}

expr_pnode *expr_node_new(expr_parser *p, expr_op op, uint32_t nkids, uint32_t tok)
{
    expr_pnode *n = arena_alloc(p->ctx->arena, sizeof *n);
    expr_node **kids = nkids ? arena_alloc(p->ctx->arena, nkids * sizeof *kids) : NULL;
    if (!n || (nkids && !kids)) {
        p->nomem = true;
        return NULL;
    }
    memset(n, 0, sizeof *n);
    n->n.op = op;
    n->n.nkids = nkids;
    n->n.kids = kids;
    n->tok = tok;
    return n;
}

expr_pnode *expr_node_paren(expr_parser *p, const expr_pnode *n)
{
    expr_pnode *c = arena_alloc(p->ctx->arena, sizeof *c);
    if (!c) {
        p->nomem = true;
        return NULL;
    }
    *c = *n;
    if (c->parens < UINT8_MAX)
        c->parens++;
    return c;
}

static expr_pnode *(*const expr_rule_fns[EXPR_NRULES])(expr_parser *) = {
    [EXPR_R_OR] = expr_rule_or,           [EXPR_R_AND] = expr_rule_and,
    [EXPR_R_NOT] = expr_rule_not,
    [EXPR_R_COND] = expr_rule_cond,       [EXPR_R_OPERAND] = expr_rule_operand,
    [EXPR_R_SETVAL] = expr_rule_setval,   [EXPR_R_TERM] = expr_rule_term,
};

expr_pnode *expr_rule(expr_parser *p, int rule)
{
    uint32_t at = p->pos;

    if (!p->memo[rule] && !(p->memo[rule] = calloc(p->ntok, sizeof(expr_memo)))) {
        p->nomem = true;
        return NULL;
    }
    expr_memo *m = &p->memo[rule][at];
    if (m->done) {
        if (m->node)
            p->pos = m->end;
        return m->node;
    }
    expr_pnode *n = NULL;
    if (p->depth < EXPR_MAX_RULE_DEPTH && !p->nomem) {
        p->depth++;
        n = expr_rule_fns[rule](p);
        p->depth--;
    } else {
        expr_note_fail(p);
    }
    if (!n)
        p->pos = at;
    m = &p->memo[rule][at];
    m->done = true;
    m->node = n;
    m->end = p->pos;
    return n;
}

/* ---- the condition grammar ---------------------------------------------------------------- */

/* A binary node op(l, r). */
static expr_pnode *expr_node2(expr_parser *p, expr_op op, uint32_t tok, expr_pnode *l,
                              expr_pnode *r)
{
    expr_pnode *n = expr_node_new(p, op, 2, tok);
    if (n) {
        n->n.kids[0] = &l->n;
        n->n.kids[1] = &r->n;
    }
    return n;
}

/* x KW rule: the right-recursive shape of `or` and `and`. */
static expr_pnode *expr_rule_binary(expr_parser *p, int left_rule, const char *kw,
                                    int right_rule, expr_op op)
{
    expr_pnode *l = expr_rule(p, left_rule);
    if (!l)
        return NULL;
    uint32_t save = p->pos;
    if (expr_accept_kw(p, kw)) {
        expr_pnode *r = expr_rule(p, right_rule);
        if (r)
            return expr_node2(p, op, save, l, r);
    }
    p->pos = save;
    return l;
}

expr_pnode *expr_rule_and(expr_parser *p)
{
    return expr_rule_binary(p, EXPR_R_NOT, "AND", EXPR_R_AND, EXPR_OP_AND);
}

expr_pnode *expr_rule_or(expr_parser *p)
{
    return expr_rule_binary(p, EXPR_R_AND, "OR", EXPR_R_OR, EXPR_OP_OR);
}

/* not := NOT not | cond | '(' or ')' */
expr_pnode *expr_rule_not(expr_parser *p)
{
    uint32_t start = p->pos;
    if (expr_accept_kw(p, "NOT")) {
        expr_pnode *k = expr_rule(p, EXPR_R_NOT);
        if (k) {
            expr_pnode *n = expr_node_new(p, EXPR_OP_NOT, 1, start);
            if (n)
                n->n.kids[0] = &k->n;
            return n;
        }
        p->pos = start;
    }
    expr_pnode *c = expr_rule(p, EXPR_R_COND);
    if (c)
        return c;
    if (expr_accept(p, EXPR_TOK_LPAREN)) {
        expr_pnode *inner = expr_rule(p, EXPR_R_OR);
        if (inner && expr_accept(p, EXPR_TOK_RPAREN))
            return expr_node_paren(p, inner);
    }
    p->pos = start;
    return NULL;
}

static const struct {
    expr_tok_kind tok;
    expr_op op;
} expr_cmps[] = {
    {EXPR_TOK_EQ, EXPR_OP_EQ}, {EXPR_TOK_NE, EXPR_OP_NE}, {EXPR_TOK_LT, EXPR_OP_LT},
    {EXPR_TOK_LE, EXPR_OP_LE}, {EXPR_TOK_GT, EXPR_OP_GT}, {EXPR_TOK_GE, EXPR_OP_GE},
};

/* The part of cond after its first operand `l`. */
static expr_pnode *expr_cond_rest(expr_parser *p, expr_pnode *l)
{
    uint32_t at = p->pos;
    for (size_t i = 0; i < sizeof expr_cmps / sizeof expr_cmps[0]; i++) {
        if (expr_accept(p, expr_cmps[i].tok)) {
            expr_pnode *r = expr_rule(p, EXPR_R_OPERAND);
            return r ? expr_node2(p, expr_cmps[i].op, at, l, r) : NULL;
        }
    }
    if (expr_accept_kw(p, "BETWEEN")) {
        expr_pnode *lo = expr_rule(p, EXPR_R_OPERAND), *hi;
        if (!lo || !expr_accept_kw(p, "AND") || !(hi = expr_rule(p, EXPR_R_OPERAND)))
            return NULL;
        expr_pnode *n = expr_node_new(p, EXPR_OP_BETWEEN, 3, at);
        if (n) {
            n->n.kids[0] = &l->n;
            n->n.kids[1] = &lo->n;
            n->n.kids[2] = &hi->n;
        }
        return n;
    }
    if (expr_accept_kw(p, "IN")) {
        expr_nodes cands = {0};
        expr_pnode *n = NULL;
        if (expr_parse_list(p, EXPR_R_OPERAND, &cands))
            n = expr_node_from_list(p, EXPR_OP_IN, at, l, &cands);
        free(cands.v);
        return n;
    }
    return NULL;
}

/* cond := operand (cmp operand | BETWEEN operand AND operand | IN (...)) | call */
expr_pnode *expr_rule_cond(expr_parser *p)
{
    uint32_t start = p->pos;
    expr_pnode *l = expr_rule(p, EXPR_R_OPERAND);
    if (l) {
        expr_pnode *n = expr_cond_rest(p, l);
        if (n)
            return n;
        p->pos = start;
    }
    return expr_parse_call(p, EXPR_R_OPERAND);
}

/* operand := '(' operand ')' | call | :value | path */
expr_pnode *expr_rule_operand(expr_parser *p)
{
    uint32_t start = p->pos;
    if (expr_accept(p, EXPR_TOK_LPAREN)) {
        expr_pnode *inner = expr_rule(p, EXPR_R_OPERAND);
        if (inner && expr_accept(p, EXPR_TOK_RPAREN))
            return expr_node_paren(p, inner);
        p->pos = start;
    }
    expr_pnode *n = expr_parse_call(p, EXPR_R_OPERAND);
    if (n)
        return n;
    if (expr_accept(p, EXPR_TOK_VALUE))
        return expr_node_new(p, EXPR_OP_VALUE, 0, start);
    return expr_parse_path_node(p);
}

/* Parses the whole token list with `rule`; NULL (the syntax error is at p->maxfail) unless it
 * matches up to EOF. */
expr_pnode *expr_parse_all(expr_parser *p, int rule)
{
    expr_pnode *root = expr_rule(p, rule);
    if (root && p->toks[p->pos].kind != EXPR_TOK_EOF) {
        if (p->pos > p->maxfail)
            p->maxfail = p->pos;
        root = NULL;
    }
    return p->nomem ? NULL : root;
}

kura_status expr_parse_condition(expr_ctx *ctx, expr_type type, const char *s,
                                 expr_node **root_out)
{
    expr_parser p;
    kura_status st = expr_parser_init(&p, ctx, type, s);
    if (st != KURA_OK)
        return st;
    expr_pnode *root = expr_parse_all(&p, EXPR_R_OR);
    if (!root)
        st = expr_syntax_error(&p);
    else
        st = expr_check_condition(&p, root);
    expr_parser_done(&p);
    if (st == KURA_OK)
        *root_out = &root->n;
    return st;
}

/*
 * parse.c - the parser's machinery and the grammar of condition expressions.
 *
 * This file contains the parts every expression type shares (the parser state, memoised
 * rules, token matching, syntax errors, document paths, function calls) and the grammar of
 * KeyConditionExpression, ConditionExpression and FilterExpression (expr_int.h describes how
 * a parse works; paths and function calls are in parse_path.c). The grammar, as DynamoDB accepts it:
 *
 *   or       := and (OR or)?                  (one loop, see expr_rule_or)
 *   and      := not (AND and)?
 *   not      := NOT not | cond | '(' or ')'   (NOT not: a loop)
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

/* The deepest nesting of parentheses the parser takes on. Only parentheses nest its calls
 * (chains of AND, OR and NOT are loops), four calls per level, so this bounds its stack: the
 * deepest input it parses needs 96-128 KiB in a Release build and 160-192 KiB with ASan
 * (gcc -O0), measured with expr_stack_test, which runs it on a 256 KiB stack. DynamoDB itself parses to the 4 KB size
 * limit (~2,000 levels), but no expression it accepts nests deeper than ~302 levels: every
 * level past the second must hold an operator (or it has redundant parentheses) and an
 * expression may hold 300 operators. Deeper input gets the error DynamoDB would most likely
 * give (expr_too_deep). */
#define EXPR_MAX_NESTING 400

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

/* Index of the ')' that closes the '(' at token i, or ntok if none does. */
static uint32_t expr_match_paren(const expr_parser *p, uint32_t i)
{
    uint32_t depth = 0;
    for (uint32_t j = i; j < p->ntok; j++) {
        if (p->toks[j].kind == EXPR_TOK_LPAREN)
            depth++;
        else if (p->toks[j].kind == EXPR_TOK_RPAREN && --depth == 0)
            return j;
    }
    return p->ntok;
}

/* The error for input nested deeper than EXPR_MAX_NESTING, which is never parsed. Such input
 * has redundant parentheses or more than 300 operators (or a syntax error), and DynamoDB
 * reports those in that order; both are found here from the tokens alone: "((x))" where the
 * outer pair is not a function call's, and the operator tokens (comparators, AND, OR, NOT,
 * BETWEEN, IN, + and -, calls). DynamoDB stops counting operators at 301 and says so. What is
 * neither is reported as a syntax error at the first '(' past the limit. */
static kura_status expr_too_deep(expr_parser *p, uint32_t deepest)
{
    for (uint32_t i = 0; i + 1 < p->ntok; i++) {
        const expr_tok *t = p->toks;
        if (t[i].kind != EXPR_TOK_LPAREN || t[i + 1].kind != EXPR_TOK_LPAREN ||
            (i > 0 && t[i - 1].kind == EXPR_TOK_IDENT && !expr_is_keyword(p, i - 1)))
            continue;
        uint32_t inner = expr_match_paren(p, i + 1);
        if (inner < p->ntok && t[inner + 1].kind == EXPR_TOK_RPAREN)
            return expr_fail(p, "The expression has redundant parentheses;");
    }
    uint32_t ops = 0;
    for (uint32_t i = 0; i < p->ntok; i++) {
        const expr_tok *t = &p->toks[i];
        if ((t->kind >= EXPR_TOK_EQ && t->kind <= EXPR_TOK_MINUS) ||
            (t->kind == EXPR_TOK_IDENT && p->toks[i + 1].kind == EXPR_TOK_LPAREN &&
             !expr_is_keyword(p, i)) ||
            expr_is_kw(p, i, "AND") || expr_is_kw(p, i, "OR") || expr_is_kw(p, i, "NOT") ||
            expr_is_kw(p, i, "BETWEEN") || expr_is_kw(p, i, "IN"))
            ops++;
    }
    if (p->type != EXPR_UPDATE && ops > EXPR_MAX_OPERATORS)
        return expr_fail(p, "The expression contains too many operators; operator count: %u",
                         EXPR_MAX_OPERATORS + 1);
    p->maxfail = deepest;
    return expr_syntax_error(p);
}

/* Refuses input nested deeper than EXPR_MAX_NESTING before any rule runs. */
static kura_status expr_check_nesting(expr_parser *p)
{
    uint32_t depth = 0;
    for (uint32_t i = 0; i < p->ntok; i++) {
        if (p->toks[i].kind == EXPR_TOK_LPAREN && ++depth > EXPR_MAX_NESTING)
            return expr_too_deep(p, i);
        if (p->toks[i].kind == EXPR_TOK_RPAREN && depth > 0)
            depth--;
    }
    return KURA_OK;
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
    if (type != EXPR_PROJECTION) /* projections have no parentheses: '(' is a syntax error */
        return expr_check_nesting(p);
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
    [EXPR_R_OR] = expr_rule_or,
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
    if (!p->nomem)
        n = expr_rule_fns[rule](p);
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

/* or := and (OR or)?  and := not (AND and)?
 * Both rules in one loop over `not (AND|OR not)*` instead of the grammar's right recursion, so
 * that a long chain costs no stack and a level of parentheses costs four calls (this rule,
 * `not`, and expr_rule for each): only parentheses nest the parser's calls (see
 * EXPR_MAX_NESTING). The tree is the recursion's: AND binds tighter, both group to the right.
 * A keyword whose right operand does not parse is left unconsumed, as the recursion leaves it. */
expr_pnode *expr_rule_or(expr_parser *p)
{
    expr_pnode *first = expr_rule(p, EXPR_R_NOT);
    if (!first)
        return NULL;
    expr_nodes units = {0};   /* the operands after the first, in order */
    uint32_t *kw_toks = NULL; /* the keyword before each; EXPR_KW_OR marks OR */
    enum { EXPR_KW_OR = 1u << 31 };
    for (;;) {
        uint32_t save = p->pos;
        bool is_or = false;
        if (!expr_accept_kw(p, "AND") && !(is_or = expr_accept_kw(p, "OR")))
            break;
        expr_pnode *r = expr_rule(p, EXPR_R_NOT);
        if (!r) {
            p->pos = save;
            break;
        }
        if (units.n == units.cap) {
            uint32_t cap = units.cap ? 2 * units.cap : 8;
            expr_node **v = realloc(units.v, cap * sizeof *v);
            if (v)
                units.v = v;
            uint32_t *t = v ? realloc(kw_toks, cap * sizeof *t) : NULL;
            if (!t) {
                p->nomem = true;
                break;
            }
            kw_toks = t;
            units.cap = cap;
        }
        kw_toks[units.n] = save | (is_or ? EXPR_KW_OR : 0);
        units.v[units.n++] = &r->n;
    }
    /* Fold from the right: `acc` is the AND chain being built, `rest` the OR of the chains to
     * its right, joined to it by the OR at `rest_tok`. */
    expr_pnode *acc = units.n ? expr_pn(units.v[units.n - 1]) : first, *rest = NULL;
    uint32_t rest_tok = 0;
    for (uint32_t i = units.n; i-- > 0 && acc && !p->nomem;) {
        expr_pnode *left = i ? expr_pn(units.v[i - 1]) : first;
        uint32_t tok = kw_toks[i] & ~(uint32_t)EXPR_KW_OR;
        if (!(kw_toks[i] & EXPR_KW_OR)) {
            acc = expr_node2(p, EXPR_OP_AND, tok, left, acc);
            continue;
        }
        rest = rest ? expr_node2(p, EXPR_OP_OR, rest_tok, acc, rest) : acc;
        rest_tok = tok;
        acc = left;
    }
    if (rest && acc && !p->nomem)
        acc = expr_node2(p, EXPR_OP_OR, rest_tok, acc, rest);
    free(units.v);
    free(kw_toks);
    return p->nomem ? NULL : acc;
}

/* not := NOT* (cond | '(' or ')'). The grammar's `NOT not` is a loop here, for the reason
 * given at expr_rule_or; no alternative can start with the keyword NOT, so a chain whose
 * end does not parse fails as a whole, as the recursion would. */
expr_pnode *expr_rule_not(expr_parser *p)
{
    uint32_t start = p->pos;
    uint32_t nnot = 0;
    while (expr_accept_kw(p, "NOT"))
        nnot++;
    expr_pnode *n = expr_rule(p, EXPR_R_COND);
    if (!n) {
        uint32_t at = p->pos;
        if (expr_accept(p, EXPR_TOK_LPAREN)) {
            expr_pnode *inner = expr_rule(p, EXPR_R_OR);
            if (inner && expr_accept(p, EXPR_TOK_RPAREN))
                n = expr_node_paren(p, inner);
        }
        if (!n)
            p->pos = at;
    }
    for (uint32_t i = nnot; i-- > 0 && n;) {
        expr_pnode *k = expr_node_new(p, EXPR_OP_NOT, 1, start + i);
        if (k)
            k->n.kids[0] = &n->n;
        n = k;
    }
    if (!n)
        p->pos = start;
    return n;
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

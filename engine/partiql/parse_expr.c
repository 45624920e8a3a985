/*
 * parse_expr.c - This file contains the parser of PartiQL conditions and operands: OR, AND,
 * NOT, parentheses, the comparisons = <> != < <= > >=, BETWEEN, [NOT] IN (list) or [list],
 * IS [NOT] NULL|MISSING, the functions begins_with, contains, attribute_type, exists,
 * missing and size, update operands (a + 1, list_append, set_add, set_delete) and paths
 * a.b[0]."c d". Precedence, loosest first: OR, AND, NOT, predicates, + and -.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "engine/partiql/parse_int.h"
#include "util/status.h"

#define NOMEM() kura_err(KURA_E_NOMEM, "out of memory")
#define PQ_MAX_STEPS 32
#define PQ_MAX_IN 100
/* parentheses and NOTs: far beyond any real statement, well within the stack */
#define PQ_MAX_DEPTH 256

static pq_node *new_node(pq_parser *p, pq_kind kind, uint32_t nkids)
{
    pq_node *n = pq_alloc(p->arena, sizeof *n);
    if (!n) return NULL;
    n->kind = kind;
    n->nkids = nkids;
    n->param = -1;
    if (nkids && !(n->kids = pq_alloc(p->arena, nkids * sizeof *n->kids))) return NULL;
    return n;
}

static kura_status binary(pq_parser *p, pq_kind kind, pq_node *l, pq_node *r, pq_node **out)
{
    pq_node *n = new_node(p, kind, 2);
    if (!n) return NOMEM();
    n->kids[0] = l;
    n->kids[1] = r;
    *out = n;
    return KURA_OK;
}

kura_status pq_parse_path(pq_parser *p, pq_node **out)
{
    pq_step steps[PQ_MAX_STEPS];
    uint32_t n = 0;
    kura_status s = pq_ident(p, &steps[0].name, &steps[0].name_len);
    if (s != KURA_OK) return s;
    steps[n++].is_index = false;
    while (pq_tok_is(&p->cur, ".") || pq_tok_is(&p->cur, "[")) {
        if (n == PQ_MAX_STEPS) return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Path too deep");
        pq_step *st = &steps[n];
        memset(st, 0, sizeof *st);
        if (pq_tok_is(&p->cur, ".")) {
            pq_advance(p);
            if ((s = pq_ident(p, &st->name, &st->name_len)) != KURA_OK) return s;
        } else {
            pq_advance(p);
            if (p->cur.kind == PQ_T_STRING) { /* a['key'] */
                if (!(st->name = pq_unquote(p->arena, &p->cur, &st->name_len))) return NOMEM();
            } else {
                uint64_t v = 0;
                bool digits = p->cur.kind == PQ_T_NUMBER;
                for (size_t i = 0; digits && i < p->cur.len; i++) {
                    digits = isdigit((unsigned char)p->cur.p[i]) && v < (1u << 30);
                    v = v * 10 + (uint64_t)(p->cur.p[i] - '0');
                }
                if (!digits) return pq_unexpected(p);
                st->is_index = true;
                st->index = (uint32_t)v;
            }
            pq_advance(p);
            if ((s = pq_expect(p, "]")) != KURA_OK) return s;
        }
        n++;
    }
    pq_node *node = new_node(p, PQ_PATH, 0);
    if (!node || !(node->steps = pq_alloc(p->arena, n * sizeof *steps))) return NOMEM();
    memcpy(node->steps, steps, n * sizeof *steps);
    node->nsteps = n;
    *out = node;
    return KURA_OK;
}

/* The functions of the dialect and their argument counts. */
static const struct {
    const char *name;
    uint32_t nargs;
    bool condition;  /* a predicate on its own */
    bool first_path; /* the first argument is a path */
} fns[] = {
    {"begins_with", 2, true, true},   {"contains", 2, true, true},
    {"attribute_type", 2, true, true}, {"exists", 1, true, true},
    {"missing", 1, true, true},       {"size", 1, false, true},
    {"list_append", 2, false, false}, {"set_add", 2, false, true},
    {"set_delete", 2, false, true},
};

static int find_fn(const pq_tok *t)
{
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strlen(fns[i].name) == t->len && strncasecmp(t->p, fns[i].name, t->len) == 0)
            return (int)i;
    return -1;
}

static kura_status parse_term(pq_parser *p, pq_node **out);

static kura_status parse_call(pq_parser *p, int fi, pq_node **out)
{
    pq_node *n = new_node(p, PQ_CALL, fns[fi].nargs);
    if (!n) return NOMEM();
    n->name = fns[fi].name;
    pq_advance(p); /* the name */
    kura_status s = pq_expect(p, "(");
    for (uint32_t i = 0; s == KURA_OK && i < n->nkids; i++) {
        if (i) s = pq_expect(p, ",");
        if (s == KURA_OK) s = i == 0 && fns[fi].first_path ? pq_parse_path(p, &n->kids[i])
                                                : parse_term(p, &n->kids[i]);
    }
    if (s == KURA_OK) s = pq_expect(p, ")");
    if (s == KURA_OK) *out = n;
    return s;
}

static bool next_is_paren(const pq_parser *p)
{
    pq_lexer lx = p->lx;
    pq_tok t = pq_lex_next(&lx);
    return pq_tok_is(&t, "(");
}

/* A literal, '?', MISSING, a function call or a path. */
static kura_status parse_term(pq_parser *p, pq_node **out)
{
    const pq_tok *t = &p->cur;
    if (t->kind == PQ_T_IDENT && next_is_paren(p)) {
        int fi = find_fn(t);
        if (fi < 0) {
            if (pq_is_keyword(t->p, t->len)) return pq_unexpected(p);
            return kura_err(KURA_E_INVALID, "Unrecognized function: %.*s",
                            (int)(t->len > 64 ? 64 : t->len), t->p);
        }
        return parse_call(p, fi, out);
    }
    if (pq_tok_is_kw(t, "MISSING")) {
        pq_advance(p);
        return (*out = new_node(p, PQ_MISSING, 0)) ? KURA_OK : NOMEM();
    }
    if (t->kind == PQ_T_QIDENT || (t->kind == PQ_T_IDENT && !pq_tok_is_kw(t, "TRUE") &&
                                   !pq_tok_is_kw(t, "FALSE") && !pq_tok_is_kw(t, "NULL")))
        return pq_parse_path(p, out);
    pq_node *n = new_node(p, PQ_VALUE, 0);
    if (!n) return NOMEM();
    kura_status s = pq_parse_literal(p, &n->value, &n->param);
    if (s == KURA_OK) *out = n;
    return s;
}

/* A SET value: a term, or one sum or difference of two (UpdateExpression has no more). */
kura_status pq_parse_operand(pq_parser *p, pq_node **out)
{
    pq_node *l;
    kura_status s = parse_term(p, &l);
    if (s == KURA_OK && (pq_tok_is(&p->cur, "+") || pq_tok_is(&p->cur, "-"))) {
        pq_kind k = pq_tok_is(&p->cur, "+") ? PQ_PLUS : PQ_MINUS;
        pq_node *r;
        pq_advance(p);
        if ((s = parse_term(p, &r)) == KURA_OK) s = binary(p, k, l, r, &l);
        if (s == KURA_OK && (pq_tok_is(&p->cur, "+") || pq_tok_is(&p->cur, "-")))
            return kura_err(KURA_E_INVALID,
                            PQ_MSG_SYNTAX "A SET value has at most one + or -");
    }
    if (s == KURA_OK) *out = l;
    return s;
}

/* IN (a, b) or IN [a, b]: 1..100 candidates. */
static kura_status parse_in(pq_parser *p, pq_node *lhs, pq_node **out)
{
    bool bracket = pq_tok_is(&p->cur, "[");
    kura_status s = pq_expect(p, bracket ? "[" : "(");
    pq_node *kids[PQ_MAX_IN + 1];
    uint32_t n = 0;
    kids[n++] = lhs;
    while (s == KURA_OK) {
        if (n > PQ_MAX_IN)
            return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Too many values in IN list");
        if ((s = parse_term(p, &kids[n])) != KURA_OK) break;
        n++;
        if (!pq_tok_is(&p->cur, ",")) break;
        pq_advance(p);
    }
    if (s == KURA_OK) s = pq_expect(p, bracket ? "]" : ")");
    if (s != KURA_OK) return s;
    pq_node *in = new_node(p, PQ_IN, n);
    if (!in) return NOMEM();
    memcpy(in->kids, kids, n * sizeof *kids);
    *out = in;
    return KURA_OK;
}

static kura_status parse_is(pq_parser *p, pq_node *lhs, pq_node **out)
{
    pq_advance(p); /* IS */
    bool neg = pq_tok_is_kw(&p->cur, "NOT");
    if (neg) pq_advance(p);
    pq_kind k;
    if (pq_tok_is_kw(&p->cur, "NULL")) k = PQ_IS_NULL;
    else if (pq_tok_is_kw(&p->cur, "MISSING")) k = PQ_IS_MISSING;
    else return pq_unexpected(p);
    pq_advance(p);
    pq_node *n = new_node(p, k, 1);
    if (!n) return NOMEM();
    n->kids[0] = lhs;
    n->negated = neg;
    *out = n;
    return KURA_OK;
}

static kura_status negate(pq_parser *p, pq_node *n, pq_node **out)
{
    pq_node *nn = new_node(p, PQ_NOT, 1);
    if (!nn) return NOMEM();
    nn->kids[0] = n;
    *out = nn;
    return KURA_OK;
}

static kura_status parse_predicate(pq_parser *p, pq_node **out)
{
    static const struct { const char *op; pq_kind kind; } cmps[] = {
        {"=", PQ_EQ}, {"<>", PQ_NE}, {"!=", PQ_NE}, {"<", PQ_LT},
        {"<=", PQ_LE}, {">", PQ_GT}, {">=", PQ_GE}};
    if (pq_tok_is(&p->cur, "(")) {
        if (++p->depth > PQ_MAX_DEPTH)
            return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Nesting too deep");
        pq_advance(p);
        kura_status s = pq_parse_cond(p, out);
        p->depth--;
        return s == KURA_OK ? pq_expect(p, ")") : s;
    }
    pq_node *l, *r;
    kura_status s = parse_term(p, &l);
    if (s != KURA_OK) return s;
    for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++)
        if (pq_tok_is(&p->cur, cmps[i].op)) {
            pq_advance(p);
            if ((s = parse_term(p, &r)) != KURA_OK) return s;
            return binary(p, cmps[i].kind, l, r, out);
        }
    bool neg = pq_tok_is_kw(&p->cur, "NOT");
    if (neg) pq_advance(p);
    if (pq_tok_is_kw(&p->cur, "BETWEEN")) {
        pq_node *n = new_node(p, PQ_BETWEEN, 3);
        if (!n) return NOMEM();
        n->kids[0] = l;
        pq_advance(p);
        if ((s = parse_term(p, &n->kids[1])) == KURA_OK && (s = pq_expect_kw(p, "AND")) == KURA_OK)
            s = parse_term(p, &n->kids[2]);
        if (s == KURA_OK) s = neg ? negate(p, n, out) : (*out = n, KURA_OK);
        return s;
    }
    if (pq_tok_is_kw(&p->cur, "IN")) {
        pq_advance(p);
        pq_node *n;
        if ((s = parse_in(p, l, &n)) == KURA_OK) s = neg ? negate(p, n, out) : (*out = n, KURA_OK);
        return s;
    }
    if (neg) return pq_unexpected(p);
    if (pq_tok_is_kw(&p->cur, "IS")) return parse_is(p, l, out);
    if (l->kind == PQ_CALL) {
        for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
            if (strcmp(fns[i].name, l->name) == 0 && fns[i].condition) {
                *out = l;
                return KURA_OK;
            }
    }
    return pq_unexpected(p);
}

static kura_status parse_not(pq_parser *p, pq_node **out)
{
    if (!pq_tok_is_kw(&p->cur, "NOT")) return parse_predicate(p, out);
    if (++p->depth > PQ_MAX_DEPTH)
        return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Nesting too deep");
    pq_advance(p);
    pq_node *k;
    kura_status s = parse_not(p, &k);
    p->depth--;
    return s == KURA_OK ? negate(p, k, out) : s;
}

static kura_status parse_and(pq_parser *p, pq_node **out)
{
    pq_node *l, *r;
    kura_status s = parse_not(p, &l);
    while (s == KURA_OK && pq_tok_is_kw(&p->cur, "AND")) {
        pq_advance(p);
        if ((s = parse_not(p, &r)) == KURA_OK) s = binary(p, PQ_AND, l, r, &l);
    }
    if (s == KURA_OK) *out = l;
    return s;
}

kura_status pq_parse_cond(pq_parser *p, pq_node **out)
{
    pq_node *l, *r;
    kura_status s = parse_and(p, &l);
    while (s == KURA_OK && pq_tok_is_kw(&p->cur, "OR")) {
        pq_advance(p);
        if ((s = parse_and(p, &r)) == KURA_OK) s = binary(p, PQ_OR, l, r, &l);
    }
    if (s == KURA_OK) *out = l;
    return s;
}

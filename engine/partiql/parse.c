/*
 * parse.c - This file contains the PartiQL statement parser: SELECT, INSERT, UPDATE and
 * DELETE as DynamoDB's dialect has them (docs/partiql.md), over the lexer (lex.c), with
 * conditions and values parsed by parse_expr.c and parse_lit.c. Keywords are
 * case-insensitive; a trailing ';' is allowed.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/partiql/parse_int.h"
#include "util/status.h"

void pq_advance(pq_parser *p)
{
    p->cur = pq_lex_next(&p->lx);
}

kura_status pq_unexpected(const pq_parser *p)
{
    const pq_tok *t = &p->cur;
    if (t->kind == PQ_T_END) return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Unexpected end of statement");
    if (t->kind == PQ_T_IDENT && pq_is_keyword(t->p, t->len))
        return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Unexpected keyword");
    return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Unexpected token");
}

kura_status pq_expect(pq_parser *p, const char *s)
{
    if (!pq_tok_is(&p->cur, s)) return pq_unexpected(p);
    pq_advance(p);
    return KURA_OK;
}

kura_status pq_expect_kw(pq_parser *p, const char *kw)
{
    if (!pq_tok_is_kw(&p->cur, kw)) return pq_unexpected(p);
    pq_advance(p);
    return KURA_OK;
}

kura_status pq_ident(pq_parser *p, const char **name_out, size_t *len_out)
{
    const pq_tok *t = &p->cur;
    char *name;
    size_t len;
    if (t->kind == PQ_T_QIDENT) {
        name = pq_unquote(p->arena, t, &len);
    } else if (t->kind == PQ_T_IDENT && !pq_is_keyword(t->p, t->len)) {
        len = t->len;
        name = pq_strdup(p->arena, t->p, len);
    } else {
        return pq_unexpected(p);
    }
    if (!name) return kura_err(KURA_E_NOMEM, "out of memory");
    pq_advance(p);
    *name_out = name;
    *len_out = len;
    return KURA_OK;
}

/* "t" or "t"."index" (SELECT only) */
static kura_status parse_table(pq_parser *p, pq_stmt *st, bool index_ok)
{
    size_t len;
    kura_status s = pq_ident(p, &st->table, &len);
    if (s == KURA_OK && index_ok && pq_tok_is(&p->cur, ".")) {
        pq_advance(p);
        s = pq_ident(p, &st->index, &len);
    }
    return s;
}

/* [WHERE cond]: a write without one is refused by the translation (PQ_MSG_NO_KEY). */
static kura_status parse_where(pq_parser *p, pq_stmt *st)
{
    if (!pq_tok_is_kw(&p->cur, "WHERE")) return KURA_OK;
    pq_advance(p);
    return pq_parse_cond(p, &st->where);
}

static kura_status parse_select(pq_parser *p, pq_stmt *st)
{
    kura_status s = KURA_OK;
    if (pq_tok_is(&p->cur, "*")) {
        pq_advance(p);
    } else {
        uint32_t cap = 0;
        do {
            if (st->nproj && (s = pq_expect(p, ",")) != KURA_OK) return s;
            if (st->nproj == cap) {
                cap = cap ? cap * 2 : 8;
                pq_node **np = pq_alloc(p->arena, cap * sizeof *np);
                if (!np) return kura_err(KURA_E_NOMEM, "out of memory");
                if (st->nproj) memcpy(np, st->proj, st->nproj * sizeof *np);
                st->proj = np;
            }
            if ((s = pq_parse_path(p, &st->proj[st->nproj])) != KURA_OK) return s;
            st->nproj++;
        } while (pq_tok_is(&p->cur, ","));
    }
    if ((s = pq_expect_kw(p, "FROM")) != KURA_OK) return s;
    if ((s = parse_table(p, st, true)) != KURA_OK) return s;
    if ((s = parse_where(p, st)) != KURA_OK) return s;
    if (pq_tok_is_kw(&p->cur, "ORDER")) {
        pq_advance(p);
        if ((s = pq_expect_kw(p, "BY")) != KURA_OK) return s;
        if ((s = pq_parse_path(p, &st->order_by)) != KURA_OK) return s;
        if (pq_tok_is_kw(&p->cur, "ASC") || pq_tok_is_kw(&p->cur, "DESC")) {
            st->order_desc = pq_tok_is_kw(&p->cur, "DESC");
            pq_advance(p);
        }
    }
    return KURA_OK;
}

static kura_status parse_insert(pq_parser *p, pq_stmt *st)
{
    kura_status s = pq_expect_kw(p, "INTO");
    if (s == KURA_OK) s = parse_table(p, st, false);
    if (s == KURA_OK) s = pq_expect_kw(p, "VALUE");
    if (s != KURA_OK) return s;
    if (!pq_tok_is(&p->cur, "{")) return pq_unexpected(p);
    int32_t param;
    p->in_insert = true;
    s = pq_parse_literal(p, &st->item, &param);
    p->in_insert = false;
    st->item_params = p->item_params;
    st->nitem_params = p->nitem_params;
    return s;
}

/* RETURNING ALL|MODIFIED OLD|NEW * (DELETE checks for ALL OLD * itself) */
static kura_status parse_returning(pq_parser *p, pq_stmt *st)
{
    if (!pq_tok_is_kw(&p->cur, "RETURNING")) return KURA_OK;
    pq_advance(p);
    bool all = pq_tok_is_kw(&p->cur, "ALL");
    if (!all && !pq_tok_is_kw(&p->cur, "MODIFIED")) return pq_unexpected(p);
    pq_advance(p);
    bool old = pq_tok_is_kw(&p->cur, "OLD");
    if (!old && !pq_tok_is_kw(&p->cur, "NEW")) return pq_unexpected(p);
    pq_advance(p);
    st->returning = all ? (old ? KURA_RETURN_ALL_OLD : KURA_RETURN_ALL_NEW)
                        : (old ? KURA_RETURN_UPDATED_OLD : KURA_RETURN_UPDATED_NEW);
    return pq_expect(p, "*");
}

static kura_status add_assign(pq_parser *p, pq_stmt *st, uint32_t *cap, bool remove)
{
    if (st->nassigns == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        pq_assign *na = pq_alloc(p->arena, *cap * sizeof *na);
        if (!na) return kura_err(KURA_E_NOMEM, "out of memory");
        if (st->nassigns) memcpy(na, st->assigns, st->nassigns * sizeof *na);
        st->assigns = na;
    }
    pq_assign *a = &st->assigns[st->nassigns];
    a->remove = remove;
    kura_status s = pq_parse_path(p, &a->path);
    if (s == KURA_OK && !remove) s = pq_expect(p, "=");
    if (s == KURA_OK && !remove) s = pq_parse_operand(p, &a->value);
    if (s == KURA_OK) st->nassigns++;
    return s;
}

static kura_status parse_update(pq_parser *p, pq_stmt *st)
{
    kura_status s = parse_table(p, st, false);
    uint32_t cap = 0;
    if (s == KURA_OK && !pq_tok_is_kw(&p->cur, "SET") && !pq_tok_is_kw(&p->cur, "REMOVE"))
        return pq_unexpected(p);
    while (s == KURA_OK && (pq_tok_is_kw(&p->cur, "SET") || pq_tok_is_kw(&p->cur, "REMOVE"))) {
        bool remove = pq_tok_is_kw(&p->cur, "REMOVE");
        pq_advance(p);
        s = add_assign(p, st, &cap, remove);
        while (s == KURA_OK && pq_tok_is(&p->cur, ",")) {
            pq_advance(p);
            s = add_assign(p, st, &cap, remove);
        }
    }
    if (s == KURA_OK) s = parse_where(p, st);
    if (s == KURA_OK) s = parse_returning(p, st);
    return s;
}

static kura_status parse_delete(pq_parser *p, pq_stmt *st)
{
    kura_status s = pq_expect_kw(p, "FROM");
    if (s == KURA_OK) s = parse_table(p, st, false);
    if (s == KURA_OK) s = parse_where(p, st);
    if (s == KURA_OK) s = parse_returning(p, st);
    if (s == KURA_OK && st->returning != KURA_RETURN_NONE && st->returning != KURA_RETURN_ALL_OLD)
        s = kura_err(KURA_E_INVALID, "Invalid returning clause: RETURNING %s %s *. Only RETURNING "
                                     "ALL OLD * is allowed in DELETE statements.",
                     st->returning == KURA_RETURN_ALL_NEW ? "ALL" : "MODIFIED",
                     st->returning == KURA_RETURN_UPDATED_OLD ? "OLD" : "NEW");
    return s;
}

static kura_status parse_stmt(pq_parser *p, pq_stmt *st)
{
    static const struct {
        const char *kw;
        pq_stmt_kind kind;
        kura_status (*fn)(pq_parser *, pq_stmt *);
    } kinds[] = {{"SELECT", PQ_SELECT, parse_select},
                 {"INSERT", PQ_INSERT, parse_insert},
                 {"UPDATE", PQ_UPDATE, parse_update},
                 {"DELETE", PQ_DELETE, parse_delete}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (!pq_tok_is_kw(&p->cur, kinds[i].kw)) continue;
        st->kind = kinds[i].kind;
        pq_advance(p);
        kura_status s = kinds[i].fn(p, st);
        if (s == KURA_OK && pq_tok_is(&p->cur, ";")) pq_advance(p);
        if (s == KURA_OK && p->cur.kind != PQ_T_END) s = pq_unexpected(p);
        return s;
    }
    return pq_unexpected(p);
}

kura_status pq_parse(const char *text, size_t n, const kura_value *params, pq_stmt **stmt_out)
{
    pq_stmt *st = calloc(1, sizeof *st);
    if (!st) return kura_err(KURA_E_NOMEM, "out of memory");
    pq_parser p = {.lx = {text, n, 0}, .arena = &st->arena, .params = params};
    pq_advance(&p);
    kura_status s = parse_stmt(&p, st);
    st->nparams = p.nparams;
    st->params_copied = p.params_copied;
    if (s == KURA_OK && p.nparams != (params ? kura_value_count(params) : 0))
        s = kura_err(KURA_E_INVALID, PQ_MSG_PARAMS);
    if (s != KURA_OK) {
        pq_stmt_free(st);
        return s;
    }
    *stmt_out = st;
    return KURA_OK;
}

void pq_stmt_free(pq_stmt *st)
{
    if (!st) return;
    pq_arena_free(&st->arena);
    free(st);
}

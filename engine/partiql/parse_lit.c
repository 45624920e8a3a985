/*
 * parse_lit.c - This file contains the parser of PartiQL literals into attribute values:
 * 'strings' -> S, numbers (with an optional sign) -> N, TRUE/FALSE -> BOOL, NULL -> NULL,
 * <<set>> of strings or numbers (or parameters of one type) -> SS/NS/BS, [list] -> L,
 * {'k': v, ...} -> M, and '?' -> the next parameter. A set with a member twice is refused
 * here, in the statement's terms, rather than by the engine's check of the generated :v value. A number out of DynamoDB's range is
 * refused with the number's own message (kura_value_n).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/value.h"
#include "engine/partiql/parse_int.h"
#include "util/status.h"

#define NOMEM() kura_err(KURA_E_NOMEM, "out of memory")

static kura_status lit_value(pq_parser *p, kura_value **out, int depth);

/* The next parameter inside a collection, copied. */
static kura_status lit_param(pq_parser *p, kura_value **out)
{
    pq_advance(p);
    const kura_value *v = p->params ? kura_value_at(p->params, p->nparams, NULL, NULL) : NULL;
    p->nparams++;
    p->params_copied = true;
    if (!v) return kura_err(KURA_E_INVALID, PQ_MSG_PARAMS);
    if (!(*out = kura_value_clone(v))) return NOMEM();
    return KURA_OK;
}

static kura_status lit_number(pq_parser *p, kura_value **out)
{
    char sign = 0;
    if (pq_tok_is(&p->cur, "-") || pq_tok_is(&p->cur, "+")) {
        sign = p->cur.p[0];
        pq_advance(p);
    }
    if (p->cur.kind != PQ_T_NUMBER) return pq_unexpected(p);
    char buf[256];
    if (p->cur.len + 2 > sizeof buf)
        return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Number literal too long");
    size_t n = 0;
    if (sign == '-') buf[n++] = '-';
    memcpy(buf + n, p->cur.p, p->cur.len);
    n += p->cur.len;
    if (!(*out = kura_value_n(buf, n))) {
        /* the number's own message (its range or precision), copied out of the buffer
         * kura_err writes */
        char msg[256];
        snprintf(msg, sizeof msg, "%s", kura_last_error());
        return kura_err(KURA_E_INVALID, "%s", msg);
    }
    pq_advance(p);
    return KURA_OK;
}

/* Appends the elements of a [list] or <<set>> up to `close`. */
static kura_status lit_elems(pq_parser *p, kura_value *c, const char *close, int depth)
{
    kura_status s = KURA_OK;
    while (s == KURA_OK && !pq_tok_is(&p->cur, close)) {
        if (kura_value_count(c) && (s = pq_expect(p, ",")) != KURA_OK) break;
        kura_value *e = NULL;
        if ((s = lit_value(p, &e, depth + 1)) != KURA_OK) break;
        kura_type ct = kura_value_type(c);
        if (ct != KURA_L) {
            kura_type et = kura_value_type(e);
            kura_type want = ct == KURA_SS ? KURA_S : ct == KURA_NS ? KURA_N : KURA_B;
            if (et != want) {
                kura_value_free(e);
                return kura_err(KURA_E_INVALID,
                                PQ_MSG_SYNTAX "Set members must all be strings, numbers or binary of one type");
            }
            if (val_set_contains(c, e)) {
                kura_value_free(e);
                return kura_err(KURA_E_INVALID, "Input collection contains duplicates");
            }
        }
        s = kura_value_append(c, e);
    }
    if (s == KURA_OK) pq_advance(p);
    return s;
}

/* <<...>>: the type of the set comes from its first member. */
static kura_status lit_set(pq_parser *p, kura_value **out, int depth)
{
    pq_advance(p);
    if (pq_tok_is(&p->cur, ">>"))
        return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Empty set literal");
    kura_value *first = NULL;
    kura_status s = lit_value(p, &first, depth + 1);
    if (s != KURA_OK) return s;
    kura_type t = kura_value_type(first);
    kura_type st = t == KURA_S ? KURA_SS : t == KURA_N ? KURA_NS : t == KURA_B ? KURA_BS : 0;
    if (!st) {
        kura_value_free(first);
        return kura_err(KURA_E_INVALID,
                        PQ_MSG_SYNTAX "Set members must all be strings, numbers or binary of one type");
    }
    kura_value *set = kura_value_set(st);
    if (!set) {
        kura_value_free(first);
        return NOMEM();
    }
    s = kura_value_append(set, first);
    if (s == KURA_OK) s = lit_elems(p, set, ">>", depth);
    if (s != KURA_OK) {
        kura_value_free(set);
        return s;
    }
    *out = set;
    return KURA_OK;
}

/* Records that INSERT's attribute name[0..len) holds parameter `param`. */
static kura_status item_param(pq_parser *p, const char *name, size_t len, uint32_t param)
{
    if (p->nitem_params == p->item_params_cap) {
        uint32_t cap = p->item_params_cap ? 2 * p->item_params_cap : 8;
        pq_item_param *n = pq_alloc(p->arena, cap * sizeof *n);
        if (!n) return NOMEM();
        if (p->nitem_params) memcpy(n, p->item_params, p->nitem_params * sizeof *n);
        p->item_params = n;
        p->item_params_cap = cap;
    }
    p->item_params[p->nitem_params++] = (pq_item_param){name, len, param};
    return KURA_OK;
}

/* {'k': v, ...} */
static kura_status lit_map(pq_parser *p, kura_value **out, int depth)
{
    kura_value *m = kura_value_map();
    if (!m) return NOMEM();
    kura_status s = KURA_OK;
    pq_advance(p);
    bool first = true;
    while (s == KURA_OK && !pq_tok_is(&p->cur, "}")) {
        if (!first && (s = pq_expect(p, ",")) != KURA_OK) break;
        first = false;
        if (p->cur.kind != PQ_T_STRING && p->cur.kind != PQ_T_QIDENT) {
            s = pq_unexpected(p);
            break;
        }
        size_t klen;
        char *k = pq_unquote(p->arena, &p->cur, &klen);
        if (!k) {
            s = NOMEM();
            break;
        }
        pq_advance(p);
        kura_value *v = NULL;
        if ((s = pq_expect(p, ":")) != KURA_OK) break;
        bool bind = depth == 0 && p->in_insert && pq_tok_is(&p->cur, "?");
        /* an attribute given twice: the last value wins, which a rebinding by name would
         * not reproduce, so such a statement is not cached */
        bool twice = depth == 0 && p->in_insert && kura_value_get(m, k, klen) != NULL;
        bool copied = p->params_copied;
        uint32_t param = p->nparams;
        if ((s = lit_value(p, &v, depth + 1)) == KURA_OK) s = kura_value_map_put(m, k, klen, v);
        if (s == KURA_OK && bind) {
            p->params_copied = copied; /* rebound by name, not baked in (cache.c) */
            s = item_param(p, k, klen, param);
        }
        if (twice) p->params_copied = true;
    }
    if (s == KURA_OK) pq_advance(p);
    if (s != KURA_OK) {
        kura_value_free(m);
        return s;
    }
    *out = m;
    return KURA_OK;
}

static kura_status lit_value(pq_parser *p, kura_value **out, int depth)
{
    const pq_tok *t = &p->cur;
    if (depth > 32) return kura_err(KURA_E_INVALID, PQ_MSG_SYNTAX "Nesting too deep");
    if (pq_tok_is(t, "?")) return lit_param(p, out);
    if (t->kind == PQ_T_NUMBER || pq_tok_is(t, "-") || pq_tok_is(t, "+"))
        return lit_number(p, out);
    if (t->kind == PQ_T_STRING) {
        size_t len;
        char *s = pq_unquote(p->arena, t, &len);
        if (!s || !(*out = kura_value_s(s, len))) return NOMEM();
        pq_advance(p);
        return KURA_OK;
    }
    if (pq_tok_is_kw(t, "TRUE") || pq_tok_is_kw(t, "FALSE") || pq_tok_is_kw(t, "NULL")) {
        *out = pq_tok_is_kw(t, "NULL") ? kura_value_null() : kura_value_bool(pq_tok_is_kw(t, "TRUE"));
        if (!*out) return NOMEM();
        pq_advance(p);
        return KURA_OK;
    }
    if (pq_tok_is(t, "<<")) return lit_set(p, out, depth);
    if (pq_tok_is(t, "{")) return lit_map(p, out, depth);
    if (pq_tok_is(t, "[")) {
        kura_value *l = kura_value_list();
        if (!l) return NOMEM();
        pq_advance(p);
        kura_status s = lit_elems(p, l, "]", depth);
        if (s != KURA_OK) {
            kura_value_free(l);
            return s;
        }
        *out = l;
        return KURA_OK;
    }
    return pq_unexpected(p);
}

kura_status pq_parse_literal(pq_parser *p, const kura_value **out, int32_t *param_out)
{
    *param_out = -1;
    if (pq_tok_is(&p->cur, "?")) { /* borrowed: the parameters outlive the statement */
        pq_advance(p);
        const kura_value *v = p->params ? kura_value_at(p->params, p->nparams, NULL, NULL) : NULL;
        if (!v) return kura_err(KURA_E_INVALID, PQ_MSG_PARAMS);
        *out = v;
        *param_out = (int32_t)p->nparams++;
        return KURA_OK;
    }
    kura_value *v = NULL;
    kura_status s = lit_value(p, &v, 0);
    if (s != KURA_OK) return s;
    if (!pq_adopt(p->arena, v)) return NOMEM();
    *out = v;
    return KURA_OK;
}

/*
 * key_range.c - This file contains Query's key condition on an index: matching the terms of
 * a KeyConditionExpression against the index's key schema as DynamoDB does, and turning them
 * into one range [lo, hi) of entry keys (docs/format/index.md).
 *
 * The entries of one tuple of HASH values are the entry keys starting with
 *   base = hash64(enc(h1) .. enc(hN)) || enc(h1) .. enc(hN)
 * ordered by enc(r1) .. enc(rM), then the table key. Equality on the first k - 1 RANGE
 * attributes given narrows that to the keys starting with P = base || enc(r1) .. enc(r(k-1)),
 * and the condition on the last one given, rk, is a range inside P. Unlike a table's sort key
 * (engine/query.c), rk is followed by more parts (later RANGE values, the table key), so
 * "just after every key whose rk equals v" is succ(P || e), never P || e || 0x00:
 *
 *   none (k = 0)       [P, succ(P))               rk < v     [P, P || e)
 *   rk = v             [P || e, succ(P || e))     rk <= v    [P, succ(P || e))
 *   rk > v             [succ(P || e), succ(P))    rk >= v    [P || e, succ(P))
 *   rk BETWEEN a, b    [P || ea, succ(P || eb))
 *   begins_with(rk, p) [P || pp, succ(P || pp))
 *
 * with e = key_enc_value(v) (prefix-free, so the keys whose rk is below v are exactly those
 * below P || e), pp = key_enc_prefix(p), and succ(x) the first byte string after every string
 * that starts with x (x without its trailing 0xFF bytes, last byte plus one). succ always
 * exists here: every encoding of a HASH value holds a byte other than 0xFF (a number's class
 * byte, a string's terminator), so neither bound is ever open.
 *
 * Checks, in DynamoDB's order (dynalite's actions/query.js, which copies DynamoDB; the order
 * within an attribute confirmed with DynamoDB Local 1.25.1): per key attribute in schema
 * order, HASH before RANGE, whether a term names it, the type of its values, its operator,
 * then whether a value is an empty S/B. Messages:
 *   "Conditions can be of length 1 or 2 only"            (one HASH and at most one RANGE
 *                                                          attribute; verified)
 *   "Query key condition not supported"                  (a non-equality on a HASH attribute;
 *                                                          a second term on a hash-only key;
 *                                                          verified)
 *   "Query condition missed key schema element: <attr>"  (verified; DynamoDB Local omits the
 *                                                          ": <attr>" the service prints)
 *   "One or more parameter values were invalid: Condition parameter type does not match
 *    schema type"                                        (verified)
 *   the empty-value message of index_int.h               (verified on a GSI and an LSI)
 * Multi-attribute keys (DynamoDB's November 2025 GSIs; DynamoDB Local 1.25.1 does not have
 * them, so these follow the AWS documentation's rules and are NOT verified): a skipped RANGE
 * attribute, or a term on an attribute outside the key schema while a RANGE attribute is
 * left out, is "Query condition missed key schema element: <first RANGE attribute left
 * out>", as a single sort key left out is; a term after a RANGE attribute with a range
 * condition is "Query key condition not supported", as is a term beyond all key attributes.
 */
#include "index/index_int.h"

#include <string.h>

#define KR_MSG_NOT_SUPPORTED "Query key condition not supported"
#define KR_MSG_TYPE                                                                                \
    "One or more parameter values were invalid: Condition parameter type does not match "          \
    "schema type"

/* The terms matched with the key schema: one per HASH attribute, then the RANGE attributes
 * given, left to right. */
typedef struct kr_plan {
    const expr_key_term *hash[IDX_MAX_KEY_ATTRS];
    const expr_key_term *range[IDX_MAX_KEY_ATTRS];
    uint32_t nrange; /* RANGE attributes given */
} kr_plan;

static const expr_key_term *kr_find(const expr_key_term *terms, uint32_t n, const char *name)
{
    size_t len = strlen(name);
    for (uint32_t i = 0; i < n; i++)
        if (terms[i].name_len == len && memcmp(terms[i].name, name, len) == 0) return &terms[i];
    return NULL;
}

static kura_status kr_check_empty(const idx_def *d, const idx_key_attr *ka, const kura_value *v)
{
    if (v == NULL || v->type == KURA_N || v->u.bytes.len > 0) return KURA_OK;
    return idx_err_empty(d, ka->name, v);
}

/* The checks of one term `kt` on key attribute `ka`, after it was found. */
static kura_status kr_check_term(const idx_def *d, const idx_key_attr *ka, const expr_key_term *kt,
                                 bool need_eq)
{
    if (kt->v1->type != ka->type || (kt->v2 && kt->v2->type != ka->type))
        return kura_err(KURA_E_INVALID, KR_MSG_TYPE);
    if (need_eq && kt->op != EXPR_OP_EQ) return kura_err(KURA_E_INVALID, KR_MSG_NOT_SUPPORTED);
    kura_status st = kr_check_empty(d, ka, kt->v1);
    return st == KURA_OK ? kr_check_empty(d, ka, kt->v2) : st;
}

static kura_status kr_match(const idx_def *d, const expr_key_term *terms, uint32_t n, kr_plan *p)
{
    uint32_t matched = 0;
    kura_status st = KURA_OK;
    if (d->nhash == 1 && d->nrange <= 1 && (n == 0 || n > 2)) /* a classic key schema */
        return kura_err(KURA_E_INVALID, "Conditions can be of length 1 or 2 only");
    for (uint32_t i = 0; i < d->nhash; i++, matched++) {
        const idx_key_attr *ka = &d->hash[i];
        if (i == 0 && d->nrange == 0 && n > d->nhash)
            return kura_err(KURA_E_INVALID, KR_MSG_NOT_SUPPORTED);
        if ((p->hash[i] = kr_find(terms, n, ka->name)) == NULL)
            return kura_err(KURA_E_INVALID, "Query condition missed key schema element: %s",
                            ka->name);
        if ((st = kr_check_term(d, ka, p->hash[i], true)) != KURA_OK) return st;
    }
    p->nrange = 0;
    for (uint32_t j = 0; j < d->nrange; j++, matched++) {
        const idx_key_attr *ka = &d->range[j];
        const expr_key_term *kt = kr_find(terms, n, ka->name);
        if (kt == NULL) {
            if (n > matched)
                return kura_err(KURA_E_INVALID, "Query condition missed key schema element: %s",
                                ka->name);
            break;
        }
        /* Only the last RANGE attribute given may have a range condition (not verified). */
        bool after_range = j > 0 && p->range[j - 1]->op != EXPR_OP_EQ;
        if ((st = kr_check_term(d, ka, kt, false)) != KURA_OK) return st;
        if (after_range) return kura_err(KURA_E_INVALID, KR_MSG_NOT_SUPPORTED);
        p->range[p->nrange++] = kt;
    }
    if (matched < n) return kura_err(KURA_E_INVALID, KR_MSG_NOT_SUPPORTED); /* not verified */
    return KURA_OK;
}

/* ---- The range ----------------------------------------------------------------------------- */

/* dst = succ(src): src without its trailing 0xFF bytes, the last byte plus one. src always
 * has a byte below 0xFF here (see the top of the file). */
static bool kr_put_succ(kbuf *dst, const uint8_t *src, size_t len)
{
    while (len > 0 && src[len - 1] == 0xFF)
        len--;
    if (len == 0 || !kbuf_append(dst, src, len)) return false;
    dst->data[dst->len - 1]++;
    return true;
}

static bool kr_put_cat(kbuf *dst, const kbuf *a, const kbuf *b)
{
    return kbuf_append(dst, a->data, a->len) && kbuf_append(dst, b->data, b->len);
}

/* base || the RANGE values with equality, all but the last RANGE term given. */
static kura_status kr_prefix(const kr_plan *p, uint32_t nhash, kbuf *pre)
{
    kura_status st = KURA_OK;
    if (!kbuf_reserve(pre, IDX_HASH_LEN)) return kura_err(KURA_E_NOMEM, "out of memory");
    pre->len = IDX_HASH_LEN;
    for (uint32_t i = 0; st == KURA_OK && i < nhash; i++)
        st = key_enc_value(p->hash[i]->v1, pre);
    if (st != KURA_OK) return st;
    enc_fixed64_be(pre->data, key_hash(pre->data + IDX_HASH_LEN, pre->len - IDX_HASH_LEN));
    for (uint32_t j = 0; st == KURA_OK && j + 1 < p->nrange; j++)
        st = key_enc_value(p->range[j]->v1, pre);
    return st;
}

/* lo and hi (empty) for the last RANGE term `kt` (NULL: none) inside prefix P. */
static kura_status kr_bounds(const kbuf *pre, const expr_key_term *kt, kbuf *lo, kbuf *hi)
{
    kbuf e = KBUF_INIT, pe = KBUF_INIT; /* e, and P || e */
    kura_status st = KURA_OK;
    bool ok = true;
    if (kt == NULL) {
        ok = kbuf_append(lo, pre->data, pre->len) && kr_put_succ(hi, pre->data, pre->len);
        goto out;
    }
    st = kt->op == EXPR_OP_BEGINS_WITH ? key_enc_prefix(kt->v1, &e) : key_enc_value(kt->v1, &e);
    if (st != KURA_OK || !(ok = kr_put_cat(&pe, pre, &e))) goto out;
    switch (kt->op) {
    case EXPR_OP_EQ:
    case EXPR_OP_BEGINS_WITH:
        ok = kbuf_append(lo, pe.data, pe.len) && kr_put_succ(hi, pe.data, pe.len);
        break;
    case EXPR_OP_LT:
        ok = kbuf_append(lo, pre->data, pre->len) && kbuf_append(hi, pe.data, pe.len);
        break;
    case EXPR_OP_LE:
        ok = kbuf_append(lo, pre->data, pre->len) && kr_put_succ(hi, pe.data, pe.len);
        break;
    case EXPR_OP_GT:
        ok = kr_put_succ(lo, pe.data, pe.len) && kr_put_succ(hi, pre->data, pre->len);
        break;
    case EXPR_OP_GE:
        ok = kbuf_append(lo, pe.data, pe.len) && kr_put_succ(hi, pre->data, pre->len);
        break;
    case EXPR_OP_BETWEEN:
        ok = kbuf_append(lo, pe.data, pe.len);
        kbuf_clear(&e);
        kbuf_clear(&pe);
        if (ok && (st = key_enc_value(kt->v2, &e)) == KURA_OK)
            ok = kr_put_cat(&pe, pre, &e) && kr_put_succ(hi, pe.data, pe.len);
        break;
    default:
        st = kura_err(KURA_E_INVALID, KR_MSG_NOT_SUPPORTED);
    }
out:
    kbuf_free(&e);
    kbuf_free(&pe);
    if (st == KURA_OK && !ok) st = kura_err(KURA_E_NOMEM, "out of memory");
    return st;
}

kura_status idx_key_range(const idx_def *d, const key_schema *table, const expr_key_term *terms,
                          uint32_t nterms, kbuf *lo_out, kbuf *hi_out)
{
    kr_plan p = {0};
    kbuf pre = KBUF_INIT, lo = KBUF_INIT, hi = KBUF_INIT;
    (void)table; /* the table key ends every entry but takes no part in a key condition */
    kura_status st = kr_match(d, terms, nterms, &p);
    if (st == KURA_OK) st = kr_prefix(&p, d->nhash, &pre);
    if (st == KURA_OK) st = kr_bounds(&pre, p.nrange ? p.range[p.nrange - 1] : NULL, &lo, &hi);
    if (st == KURA_OK && !(kbuf_reserve(lo_out, lo.len) && kbuf_reserve(hi_out, hi.len)))
        st = kura_err(KURA_E_NOMEM, "out of memory");
    if (st == KURA_OK) {
        kbuf_append(lo_out, lo.data, lo.len); /* cannot fail: reserved */
        kbuf_append(hi_out, hi.data, hi.len);
    }
    kbuf_free(&pre);
    kbuf_free(&lo);
    kbuf_free(&hi);
    return st;
}

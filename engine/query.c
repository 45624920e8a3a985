/*
 * query.c - This file contains Query: turning a KeyConditionExpression into one range of
 * storage keys in one partition, checking it and ExclusiveStartKey against the table's key
 * schema as DynamoDB does, and reading a page from it (engine/page.h).
 *
 * The items of one partition key value are the storage keys starting with
 * base = hash64(enc(pk)) || enc(pk), ordered by enc(sk), which is DynamoDB's sort order
 * (engine/model/key.c). A sort key condition is a range [lo, hi) of encodings, x || 0x00 being
 * the first byte string after x (so "<= x" is "< x || 0x00"):
 *
 *   none               ["", end)           sk < v     ["", e)
 *   sk = v             [e, e || 00)        sk <= v    ["", e || 00)
 *   sk > v             [e || 00, end)      sk >= v    [e, end)
 *   sk BETWEEN a, b    [ea, eb || 00)      begins_with(sk, p)   [pp, succ(pp))
 *
 * with e = key_enc_value(v), pp = key_enc_prefix(p) (every encoding of a value starting with
 * p's bytes starts with pp, and only those), succ(x) the first string after every string that
 * starts with x, and "end" the end of the partition key (succ(base)). ExclusiveStartKey then
 * moves the start after it (forward) or the end before it (backward).
 *
 * Checks and messages follow dynalite's actions/query.js (DynamoDB's messages), in its order:
 * the request (expressions, key terms; the parser already rejects BETWEEN bounds out of order
 * or of two types and begins_with on a number), the table, the index, Select, then per key
 * attribute in schema order the start key's attribute and the condition on it, the start key
 * against the conditions, the projection's and the filter's paths.
 *
 * With IndexName the key condition is the index's (up to 4 HASH and 4 RANGE attributes):
 * idx_key_range (index/key_range.c) turns it into one range of entry keys [lo, hi), which lies
 * in one partition of the index's tree (entry keys start with the hash of the HASH values), and
 * the start key moves past its entry key. query_index lists the checks and their order.
 */
#include "engine/page.h"

#include <stdlib.h>
#include <string.h>

#include "util/status.h"

#define QUERY_MSG_BAD_START "The provided starting key is invalid"
#define QUERY_MSG_TYPE                                                                             \
    "One or more parameter values were invalid: Condition parameter type does not match "          \
    "schema type"

/* What the key conditions and the start key resolve to. */
typedef struct query_plan {
    const expr_key_term *pk_term, *sk_term; /* sk_term NULL: no sort key condition */
    kbuf base;                              /* hash64(enc(pk)) || enc(pk) */
    kbuf sk_lo, sk_hi;                      /* the sort key range, in encodings */
    bool sk_has_hi;
    page_range range; /* base || the sort key range, start key applied */
} query_plan;

static void query_plan_free(query_plan *qp)
{
    kbuf_free(&qp->base);
    kbuf_free(&qp->sk_lo);
    kbuf_free(&qp->sk_hi);
    page_range_free(&qp->range);
}

/* ---- Against the key schema ------------------------------------------------------------------ */

static const expr_key_term *query_find_term(const expr_key_term *terms, uint32_t n,
                                            const char *name)
{
    size_t len = strlen(name);
    for (uint32_t i = 0; i < n; i++)
        if (terms[i].name_len == len && memcmp(terms[i].name, name, len) == 0) return &terms[i];
    return NULL;
}

/* One attribute of ExclusiveStartKey (dynalite's validateKeyPiece). */
static kura_status query_check_start_attr(const kura_value *esk, const char *name, kura_type type)
{
    const kura_value *v = val_map_get(esk, name, strlen(name));
    if (!v) return kura_err(KURA_E_INVALID, QUERY_MSG_BAD_START);
    if (v->type != type)
        return kura_err(KURA_E_INVALID, "The provided key element does not match the schema");
    if (type != KURA_N && v->u.bytes.len == 0)
        return kura_err(KURA_E_INVALID,
                        "One or more parameter values were invalid: The AttributeValue for a key "
                        "attribute cannot contain an empty %s value. Key: %s",
                        type == KURA_S ? "string" : "binary", name);
    return KURA_OK;
}

static kura_status query_check_empty(const kura_value *v, const expr_key_term *kt)
{
    if (!v || v->type == KURA_N || v->u.bytes.len > 0) return KURA_OK;
    return kura_err(KURA_E_INVALID,
                    "One or more parameter values are not valid. The AttributeValue for a key "
                    "attribute cannot contain an empty %s value. Key: %.*s",
                    v->type == KURA_S ? "string" : "binary", (int)kt->name_len, kt->name);
}

/* Matches the terms with the key schema, per key attribute in schema order, checking the start
 * key's attribute first (dynalite's traverseKey in actions/query.js). */
static kura_status query_match_schema(const kura_table *t, const kura_value *esk,
                                      const expr_key_term *terms, uint32_t n, query_plan *qp)
{
    const key_schema *ks = &t->ks;
    uint32_t nkeys = ks->sk_name ? 2 : 1;
    if (esk && (esk->type != KURA_M || esk->u.map.n != nkeys))
        return kura_err(KURA_E_INVALID, QUERY_MSG_BAD_START);
    for (uint32_t k = 0; k < nkeys; k++) {
        bool is_hash = k == 0;
        const char *name = is_hash ? ks->pk_name : ks->sk_name;
        kura_type type = is_hash ? ks->pk_type : ks->sk_type;
        kura_status s = esk ? query_check_start_attr(esk, name, type) : KURA_OK;
        if (s != KURA_OK) return s;
        if (is_hash && nkeys == 1 && n > 1)
            return kura_err(KURA_E_INVALID, "Query key condition not supported");
        const expr_key_term *kt = query_find_term(terms, n, name);
        if (!kt) {
            if (is_hash || n > 1)
                return kura_err(KURA_E_INVALID, "Query condition missed key schema element: %s",
                                name);
            continue;
        }
        if (kt->v1->type != type || (kt->v2 && kt->v2->type != type))
            return kura_err(KURA_E_INVALID, QUERY_MSG_TYPE);
        if (is_hash && kt->op != EXPR_OP_EQ)
            return kura_err(KURA_E_INVALID, "Query key condition not supported");
        if (is_hash)
            qp->pk_term = kt;
        else
            qp->sk_term = kt;
    }
    for (uint32_t i = 0; i < n; i++) {
        kura_status s = query_check_empty(terms[i].v1, &terms[i]);
        if (s == KURA_OK) s = query_check_empty(terms[i].v2, &terms[i]);
        if (s != KURA_OK) return s;
    }
    return KURA_OK;
}

/* ---- Ranges -----------------------------------------------------------------------------------
 */

/* dst = src || 0x00: the first byte string after src. */
static bool query_put_after(kbuf *dst, const kbuf *src)
{
    return kbuf_append(dst, src->data, src->len) && kbuf_put_u8(dst, 0);
}

/* dst = the first byte string after every string starting with src; false in *has_out when
 * there is none (src is empty or all 0xFF). */
static bool query_put_succ(kbuf *dst, const uint8_t *src, size_t len, bool *has_out)
{
    while (len > 0 && src[len - 1] == 0xFF)
        len--;
    *has_out = len > 0;
    if (!len) return true;
    if (!kbuf_append(dst, src, len)) return false;
    dst->data[dst->len - 1]++;
    return true;
}

/* The sort key range of the sort key term (qp->sk_lo, sk_hi, sk_has_hi). */
static kura_status query_sk_range(query_plan *qp)
{
    const expr_key_term *kt = qp->sk_term;
    kbuf e = KBUF_INIT;
    kura_status s = KURA_OK;
    bool ok = true;
    qp->sk_has_hi = kt && kt->op != EXPR_OP_GT && kt->op != EXPR_OP_GE;
    if (!kt) return KURA_OK;
    if (kt->op == EXPR_OP_BEGINS_WITH)
        s = key_enc_prefix(kt->v1, &e);
    else
        s = key_enc_value(kt->v1, &e);
    if (s != KURA_OK) return s;
    switch (kt->op) {
    case EXPR_OP_EQ:
        ok = kbuf_append(&qp->sk_lo, e.data, e.len) && query_put_after(&qp->sk_hi, &e);
        break;
    case EXPR_OP_LT:
        ok = kbuf_append(&qp->sk_hi, e.data, e.len);
        break;
    case EXPR_OP_LE:
        ok = query_put_after(&qp->sk_hi, &e);
        break;
    case EXPR_OP_GT:
        ok = query_put_after(&qp->sk_lo, &e);
        break;
    case EXPR_OP_GE:
        ok = kbuf_append(&qp->sk_lo, e.data, e.len);
        break;
    case EXPR_OP_BETWEEN:
        ok = kbuf_append(&qp->sk_lo, e.data, e.len);
        kbuf_clear(&e);
        if (ok && (s = key_enc_value(kt->v2, &e)) == KURA_OK) ok = query_put_after(&qp->sk_hi, &e);
        break;
    case EXPR_OP_BEGINS_WITH:
        ok = kbuf_append(&qp->sk_lo, e.data, e.len) &&
             query_put_succ(&qp->sk_hi, e.data, e.len, &qp->sk_has_hi);
        break;
    default:
        s = kura_err(KURA_E_INVALID, "Query key condition not supported");
    }
    kbuf_free(&e);
    if (s == KURA_OK && !ok) s = kura_err(KURA_E_NOMEM, "out of memory");
    return s;
}

/* Whether an encoded sort key lies in the sort key range. */
static bool query_sk_matches(const query_plan *qp, const kbuf *enc)
{
    size_t n = enc->len < qp->sk_lo.len ? enc->len : qp->sk_lo.len;
    int c = n ? memcmp(enc->data, qp->sk_lo.data, n) : 0;
    if (c < 0 || (c == 0 && enc->len < qp->sk_lo.len)) return false;
    if (!qp->sk_has_hi) return true;
    n = enc->len < qp->sk_hi.len ? enc->len : qp->sk_hi.len;
    c = n ? memcmp(enc->data, qp->sk_hi.data, n) : 0;
    return c < 0 || (c == 0 && enc->len < qp->sk_hi.len);
}

/* base, and range = base || the sort key range (hash-only tables: the one key base). */
static kura_status query_build_range(const kura_table *t, query_plan *qp)
{
    enum { HASH_LEN = 8 };
    page_range *r = &qp->range;
    kura_status s = KURA_OK;
    if (!kbuf_reserve(&qp->base, HASH_LEN)) return kura_err(KURA_E_NOMEM, "out of memory");
    qp->base.len = HASH_LEN;
    if ((s = key_enc_value(qp->pk_term->v1, &qp->base)) != KURA_OK) return s;
    enc_fixed64_be(qp->base.data, key_hash(qp->base.data + HASH_LEN, qp->base.len - HASH_LEN));
    if ((s = query_sk_range(qp)) != KURA_OK) return s;
    bool ok = kbuf_append(&r->lo, qp->base.data, qp->base.len) &&
              kbuf_append(&r->lo, qp->sk_lo.data, qp->sk_lo.len);
    if (!t->ks.sk_name) {
        r->has_hi = true;
        ok = ok && query_put_after(&r->hi, &qp->base);
    } else if (qp->sk_has_hi) {
        r->has_hi = true;
        ok = ok && kbuf_append(&r->hi, qp->base.data, qp->base.len) &&
             kbuf_append(&r->hi, qp->sk_hi.data, qp->sk_hi.len);
    } else {
        ok = ok && query_put_succ(&r->hi, qp->base.data, qp->base.len, &r->has_hi);
    }
    return ok ? KURA_OK : kura_err(KURA_E_NOMEM, "out of memory");
}

/* ExclusiveStartKey against the conditions, then the range moved past it. */
static kura_status query_apply_start(const kura_table *t, const kura_value *esk, bool backward,
                                     query_plan *qp)
{
    const kura_value *pk = val_map_get(esk, t->ks.pk_name, strlen(t->ks.pk_name));
    bool same_pk = val_equal(pk, qp->pk_term->v1);
    kbuf key = KBUF_INIT;
    kura_status s = KURA_OK;
    if (!qp->sk_term) {
        if (!same_pk)
            return kura_err(KURA_E_INVALID, "The provided starting key is outside query "
                                            "boundaries based on provided conditions");
    } else {
        const kura_value *sk = val_map_get(esk, t->ks.sk_name, strlen(t->ks.sk_name));
        if ((s = key_enc_value(sk, &key)) != KURA_OK) return s;
        bool matches = query_sk_matches(qp, &key);
        kbuf_clear(&key);
        if (!matches)
            s = kura_err(KURA_E_INVALID,
                         "The provided starting key does not match the range key predicate");
        else if (!same_pk)
            s = kura_err(KURA_E_INVALID,
                         "The query can return at most one row and cannot be restarted");
    }
    if (s == KURA_OK) s = key_build(&t->ks, esk, KEY_FROM_KEY, &key);
    page_range *r = &qp->range;
    if (s == KURA_OK && !backward) {
        kbuf lo = KBUF_INIT;
        if (!query_put_after(&lo, &key))
            s = kura_err(KURA_E_NOMEM, "out of memory");
        else if (page_key_cmp(lo.data, lo.len, &r->lo) > 0) {
            kbuf_free(&r->lo);
            r->lo = lo;
            lo = (kbuf)KBUF_INIT;
        }
        kbuf_free(&lo);
    } else if (s == KURA_OK && (!r->has_hi || page_key_cmp(key.data, key.len, &r->hi) < 0)) {
        kbuf_free(&r->hi);
        r->hi = key;
        r->has_hi = true;
        key = (kbuf)KBUF_INIT;
    }
    kbuf_free(&key);
    return s;
}

/* ---- Query on an index --------------------------------------------------------------------- */

/* Whether `v` satisfies the key term `kt` (the start key against the key condition). */
static bool query_term_holds(const expr_key_term *kt, const kura_value *v)
{
    if (!v || v->type != kt->v1->type) return false;
    if (kt->op == EXPR_OP_BEGINS_WITH)
        return v->u.bytes.len >= kt->v1->u.bytes.len &&
               memcmp(v->u.bytes.p, kt->v1->u.bytes.p, kt->v1->u.bytes.len) == 0;
    int c = val_cmp_scalar(v, kt->v1);
    switch (kt->op) {
    case EXPR_OP_EQ:
        return c == 0;
    case EXPR_OP_LT:
        return c < 0;
    case EXPR_OP_LE:
        return c <= 0;
    case EXPR_OP_GT:
        return c > 0;
    case EXPR_OP_GE:
        return c >= 0;
    case EXPR_OP_BETWEEN:
        return c >= 0 && val_cmp_scalar(v, kt->v2) <= 0;
    default:
        return false;
    }
}

static bool query_is_hash_attr(const idx_def *d, const expr_key_term *kt)
{
    for (uint32_t i = 0; i < d->nhash; i++)
        if (strlen(d->hash[i].name) == kt->name_len &&
            memcmp(d->hash[i].name, kt->name, kt->name_len) == 0)
            return true;
    return false;
}

/*
 * ExclusiveStartKey of an index Query (page_index_start_key's checks), then against the key
 * condition, with the messages Query on a table gives (dynalite's, generalised to several
 * HASH and RANGE attributes): without a RANGE condition, other HASH values are "outside query
 * boundaries"; with one, RANGE values it does not hold "do not match the range key predicate",
 * and other HASH values with matching RANGE values "can return at most one row". (DynamoDB
 * Local 1.25.1 says "The provided starting key does not match the range key predicate" in
 * every case, for tables too.) Then the range moves past it.
 */
static kura_status query_index_start(const kura_table *t, const idx_def *d, const kura_value *esk,
                                     const expr_key_term *terms, uint32_t n, bool backward,
                                     page_range *r)
{
    kbuf ek = KBUF_INIT;
    kura_status s = page_index_start_key(t, d, esk, &ek);
    bool hash_ok = true, range_ok = true, has_range = false;
    for (uint32_t i = 0; s == KURA_OK && i < n; i++) {
        const kura_value *v = val_map_get(esk, terms[i].name, terms[i].name_len);
        bool holds = query_term_holds(&terms[i], v);
        if (query_is_hash_attr(d, &terms[i])) {
            hash_ok = hash_ok && holds;
        } else {
            has_range = true;
            range_ok = range_ok && holds;
        }
    }
    if (s == KURA_OK && !has_range && !hash_ok)
        s = kura_err(KURA_E_INVALID, "The provided starting key is outside query boundaries "
                                     "based on provided conditions");
    else if (s == KURA_OK && !range_ok)
        s = kura_err(KURA_E_INVALID,
                     "The provided starting key does not match the range key predicate");
    else if (s == KURA_OK && !hash_ok)
        s = kura_err(KURA_E_INVALID,
                     "The query can return at most one row and cannot be restarted");
    if (s == KURA_OK && !backward) {
        kbuf lo = KBUF_INIT;
        if (!query_put_after(&lo, &ek))
            s = kura_err(KURA_E_NOMEM, "out of memory");
        else if (page_key_cmp(lo.data, lo.len, &r->lo) > 0) {
            kbuf_free(&r->lo);
            r->lo = lo;
            lo = (kbuf)KBUF_INIT;
        }
        kbuf_free(&lo);
    } else if (s == KURA_OK && page_key_cmp(ek.data, ek.len, &r->hi) < 0) {
        kbuf_free(&r->hi);
        r->hi = ek;
        ek = (kbuf)KBUF_INIT;
    }
    kbuf_free(&ek);
    return s;
}

/*
 * A Query with IndexName. The checks, in DynamoDB Local 1.25.1's order: the index, paths into
 * key attributes, ConsistentRead on a GSI, the key condition (idx_key_range), ExclusiveStartKey,
 * the filter (key attributes, attributes not projected), Select, the projection and Select
 * ALL_ATTRIBUTES against the index's projection.
 */
static kura_status query_index(kura_table *t, const kura_query_req *req, const page_exprs *ex,
                               const expr_key_term *terms, uint32_t n, kura_page *page_out)
{
    page_index ix = {0};
    page_range range = {KBUF_INIT, KBUF_INIT, true};
    bool count_only = false;
    kura_status s = page_index_find(t, req->index_name, &ix);
    if (s == KURA_OK) s = page_check_key_paths(t, ex->proj, ex->filter);
    if (s == KURA_OK) s = page_index_check_consistent(&ix, req->consistent_read, true);
    if (s == KURA_OK) s = idx_key_range(ix.def, &t->ks, terms, n, &range.lo, &range.hi);
    if (s == KURA_OK && req->exclusive_start_key)
        s = query_index_start(t, ix.def, req->exclusive_start_key, terms, n,
                              req->scan_index_backward, &range);
    if (s == KURA_OK) s = page_index_check_filter(t, &ix, ex->filter, true);
    if (s == KURA_OK) s = page_check_select(req->select, ex->proj != NULL, true, &count_only);
    if (s == KURA_OK) s = page_index_check_select(t, &ix, req->select, ex->proj);
    if (s == KURA_OK) {
        uint32_t part = kura_tree_partition_of(ix.tree, range.lo.data, range.lo.len);
        page_req pr = {
            .t = t,
            .ix = &ix,
            .part_lo = part,
            .part_hi = part,
            .range = &range,
            .backward = req->scan_index_backward,
            .limit = req->limit,
            .filter = ex->filter,
            .proj = ex->proj,
            .count_only = count_only,
            .consistent = req->consistent_read,
            .return_capacity = req->return_consumed_capacity,
            .query = true,
        };
        s = page_run(&pr, page_out);
    }
    page_index_release(t, &ix);
    page_range_free(&range);
    return s;
}

/* ---- Query ------------------------------------------------------------------------------------
 */

/* The checks that need the table, in dynalite's order; fills qp. */
static kura_status query_plan_make(const kura_table *t, const kura_query_req *req,
                                   const page_exprs *ex, const expr_key_term *terms, uint32_t n,
                                   query_plan *qp)
{
    const kura_value *esk = req->exclusive_start_key;
    kura_status s = query_match_schema(t, esk, terms, n, qp);
    if (s == KURA_OK) s = query_build_range(t, qp);
    if (s == KURA_OK && esk) s = query_apply_start(t, esk, req->scan_index_backward, qp);
    if (s == KURA_OK) s = page_check_key_paths(t, ex->proj, NULL);
    const char *keys[2] = {t->ks.pk_name, t->ks.sk_name};
    for (int k = 0; k < 2 && keys[k] && s == KURA_OK; k++) {
        if (ex->filter && page_expr_uses(ex->filter, keys[k], strlen(keys[k])))
            s = kura_err(KURA_E_INVALID,
                         "Filter Expression can only contain non-primary key attributes: "
                         "Primary key attribute: %s",
                         keys[k]);
    }
    /* the filter's paths into the indexes' key attributes (the table's are refused above) */
    if (s == KURA_OK) s = page_check_key_paths(t, NULL, ex->filter);
    return s;
}

/* Up to IDX_MAX_KEY_ATTRS HASH and as many RANGE attributes on an index; a table's key
 * condition has at most 2 terms (a third is "Conditions can be of length 1 or 2 only"). */
enum { QUERY_MAX_TERMS = 2 * IDX_MAX_KEY_ATTRS };

kura_status kura_query(kura_db *db, const kura_query_req *req, kura_page *page_out)
{
    page_exprs ex = {0};
    expr_key_term terms[QUERY_MAX_TERMS];
    uint32_t n = 0;
    kura_table *t = NULL;
    query_plan qp = {0};
    bool count_only = false;

    kura_status s = page_exprs_parse(&req->expr, true, req->key_condition_expression,
                                     req->filter_expression, req->projection_expression, &ex);
    if (s == KURA_OK)
        s = expr_key_terms(ex.key_cond, terms, req->index_name ? QUERY_MAX_TERMS : 2, &n);
    if (s == KURA_OK && n == 0)
        s = kura_err(KURA_E_INVALID, "Conditions can be of length 1 or 2 only");
    if (s == KURA_OK) s = table_acquire(db, req->table_name, &t);
    if (s == KURA_OK && req->index_name) {
        s = query_index(t, req, &ex, terms, n, page_out);
        table_release(t);
        page_exprs_free(&ex);
        return s;
    }
    if (s == KURA_OK) s = page_check_select(req->select, ex.proj != NULL, false, &count_only);
    if (s == KURA_OK) s = query_plan_make(t, req, &ex, terms, n, &qp);
    if (s == KURA_OK) {
        uint32_t part = kura_tree_partition_of(t->tree, qp.base.data, qp.base.len);
        page_req pr = {
            .t = t,
            .part_lo = part,
            .part_hi = part,
            .range = &qp.range,
            .backward = req->scan_index_backward,
            .limit = req->limit,
            .filter = ex.filter,
            .proj = ex.proj,
            .count_only = count_only,
            .consistent = req->consistent_read,
            .return_capacity = req->return_consumed_capacity,
            .query = true,
        };
        s = page_run(&pr, page_out);
    }
    query_plan_free(&qp);
    table_release(t);
    page_exprs_free(&ex);
    return s;
}

/*
 * codec.c - This file contains the compact binary encoding of attribute values, the form in
 * which items are stored (docs/format/item.md, format version 1).
 *
 * A value is a tag byte (its kura_type) and a body: S and B a varint length and the bytes; N
 * the order-preserving number encoding of number.h (self-delimiting, at most 23 bytes); BOOL
 * one byte 0 or 1; NULL nothing; M a varint count and, in name order, each attribute's varint
 * name length, name and value; L a varint count and the values; SS and BS a varint count and
 * each member's varint length and bytes; NS a varint count and each member's number encoding.
 * Varints are LEB128 (util/coding.h).
 *
 * The encoding is canonical: a value has exactly one encoding, and the decoder accepts only
 * canonical bytes (minimal varints, BOOL 0/1, canonical numbers, map names strictly
 * ascending, non-empty sets without duplicates, at most VAL_MAX_DEPTH levels of maps and
 * lists counting the outermost). Anything else is KURA_E_CORRUPTION with the byte offset in
 * the encoded value; so decoding and re-encoding gives back the same bytes, which the fuzz
 * target (tests/fuzz/item_codec_fuzz.c) checks. The decoder never reads past `len`, bounds
 * every count by the bytes left before allocating, and recurses at most VAL_MAX_DEPTH times.
 * It checks and measures the whole value first and then builds it packed (value.h, "Storage":
 * one allocation for the arrays, names and bytes of the item), so a decoded item costs one
 * malloc and one free however many attributes it has.
 */
#include "engine/model/value.h"

#include <stdlib.h>
#include <string.h>

/* ---- Encoding ---------------------------------------------------------------------------- */

static bool enc_bytes(kbuf *out, const void *p, uint32_t len)
{
    return kbuf_put_lenbytes(out, p, len);
}

static bool enc_num(kbuf *out, const kura_num *n)
{
    if (!kbuf_reserve(out, NUM_KEY_MAX)) return false;
    out->len += num_key_encode(n, out->data + out->len);
    return true;
}

/* Appends v at container level `level` (the outermost value is level 1). Returns KURA_OK,
 * KURA_E_NOMEM, or KURA_E_INVALID for a value the decoder would not accept back. */
static kura_status enc_value(const kura_value *v, int level, kbuf *out)
{
    kura_status st = KURA_OK;
    bool ok = kbuf_put_u8(out, v->type);
    if ((v->type == KURA_M || v->type == KURA_L) && level > VAL_MAX_DEPTH)
        return kura_err(KURA_E_INVALID, "item: nesting deeper than %d levels", VAL_MAX_DEPTH);
    switch (v->type) {
    case KURA_S:
    case KURA_B:
        ok = ok && enc_bytes(out, v->u.bytes.p, v->u.bytes.len);
        break;
    case KURA_N:
        ok = ok && enc_num(out, &v->u.num);
        break;
    case KURA_BOOL:
        ok = ok && kbuf_put_u8(out, v->u.boolean ? 1 : 0);
        break;
    case KURA_NULL:
        break;
    case KURA_M:
        ok = ok && kbuf_put_varint(out, v->u.map.n);
        for (uint32_t i = 0; ok && st == KURA_OK && i < v->u.map.n; i++) {
            const kura_attr *a = &v->u.map.a[i];
            ok = enc_bytes(out, a->name, a->name_len);
            if (ok) st = enc_value(&a->value, level + 1, out);
        }
        break;
    case KURA_L:
        ok = ok && kbuf_put_varint(out, v->u.list.n);
        for (uint32_t i = 0; ok && st == KURA_OK && i < v->u.list.n; i++)
            st = enc_value(&v->u.list.v[i], level + 1, out);
        break;
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        ok = ok && kbuf_put_varint(out, v->u.list.n);
        for (uint32_t i = 0; ok && i < v->u.list.n; i++) {
            const kura_value *e = &v->u.list.v[i];
            ok = v->type == KURA_NS ? enc_num(out, &e->u.num)
                                    : enc_bytes(out, e->u.bytes.p, e->u.bytes.len);
        }
        break;
    default:
        return kura_err(KURA_E_INVALID, "item: cannot encode an empty value");
    }
    if (!ok) return kura_err(KURA_E_NOMEM, "out of memory");
    return st;
}

kura_status val_encode(const kura_value *v, kbuf *out)
{
    size_t start = out->len;
    kura_status st = enc_value(v, 1, out);
    if (st != KURA_OK) out->len = start; /* appends are all or nothing */
    return st;
}

/* ---- Decoding ----------------------------------------------------------------------------
 *
 * Two passes (pack.c): the first checks every byte and measures the packed value, the second
 * re-reads the now trusted bytes into one block allocated with the measured size. */

/* Numbers the first pass keeps for the second, which then need not decode them again. */
#define DEC_NUMS_KEPT 8

typedef struct dec_state {
    const uint8_t *base, *p, *end;
    uint32_t nums; /* numbers seen so far (pass 1: decoded; pass 2: filled) */
    kura_num kept[DEC_NUMS_KEPT];
    uint8_t kept_len[DEC_NUMS_KEPT]; /* their encoded lengths (at most NUM_KEY_MAX) */
} dec_state;

static kura_status dec_corrupt(const dec_state *d, const char *what)
{
    return kura_err(KURA_E_CORRUPTION, "item: %s at byte %zu", what, (size_t)(d->p - d->base));
}

/* A minimal varint no larger than `max`. A single byte below 0x80 (every length and count of
 * a typical item) is always minimal. */
static inline kura_status dec_uint(dec_state *d, uint64_t max, uint64_t *v_out, const char *what)
{
    uint64_t v;
    if (d->p < d->end && *d->p < 0x80 && *d->p <= max) {
        *v_out = *d->p++;
        return KURA_OK;
    }
    const uint8_t *q = dec_varint64(d->p, d->end, &v);
    if (!q || (size_t)(q - d->p) != varint_len(v) || v > max) return dec_corrupt(d, what);
    d->p = q;
    *v_out = v;
    return KURA_OK;
}

/* Element count of a container whose elements take at least `min_bytes` each. */
static kura_status dec_count(dec_state *d, size_t min_bytes, uint32_t *n_out)
{
    uint64_t n = 0;
    kura_status st = dec_uint(d, UINT32_MAX, &n, "bad element count");
    if (st != KURA_OK) return st;
    if (n > (size_t)(d->end - d->p) / min_bytes)
        return dec_corrupt(d, "element count larger than the bytes left");
    *n_out = (uint32_t)n;
    return KURA_OK;
}

/* A varint length and that many bytes: *p_out points into the input. */
static inline kura_status dec_span(dec_state *d, const uint8_t **p_out, uint32_t *len_out)
{
    uint64_t len = 0;
    kura_status st = dec_uint(d, UINT32_MAX - 1, &len, "bad length");
    if (st != KURA_OK) return st;
    if (len > (size_t)(d->end - d->p)) return dec_corrupt(d, "truncated bytes");
    *p_out = d->p;
    *len_out = (uint32_t)len;
    d->p += len;
    return KURA_OK;
}

/* ---- Pass 1: check and measure ---- */

/* A set member as its bytes in the input: an SS/BS member's bytes, an NS member's encoding.
 * Encodings are canonical, so two members are equal exactly when their spans are. */
typedef struct dec_member {
    const uint8_t *p;
    uint32_t len;
} dec_member;

/* Sets at most this large are checked for duplicates pairwise, larger ones by sorting. */
#define DEC_SET_PAIRWISE_MAX 16

static int dec_member_cmp(const void *x, const void *y)
{
    const dec_member *a = x, *b = y;
    int c = memcmp(a->p, b->p, a->len < b->len ? a->len : b->len);
    return c != 0 ? c : (a->len > b->len) - (a->len < b->len);
}

static bool dec_has_dup(dec_member *m, uint32_t n)
{
    if (n > DEC_SET_PAIRWISE_MAX) {
        qsort(m, n, sizeof *m, dec_member_cmp);
        for (uint32_t i = 1; i < n; i++)
            if (dec_member_cmp(&m[i - 1], &m[i]) == 0) return true;
        return false;
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++)
            if (dec_member_cmp(&m[i], &m[j]) == 0) return true;
    return false;
}

static kura_status chk_num(dec_state *d)
{
    kura_num n;
    size_t used;
    if (num_key_decode(d->p, (size_t)(d->end - d->p), &n, &used) != KURA_OK)
        return dec_corrupt(d, "bad number");
    d->p += used;
    if (d->nums < DEC_NUMS_KEPT) {
        d->kept[d->nums] = n;
        d->kept_len[d->nums] = (uint8_t)used;
    }
    d->nums++;
    return KURA_OK;
}

static kura_status chk_value(dec_state *d, int level, val_pack_size *sz);

static kura_status chk_map(dec_state *d, int level, val_pack_size *sz)
{
    uint32_t n = 0;
    kura_status st = dec_count(d, 2, &n);
    if (st != KURA_OK || n == 0) return st;
    sz->arr += (size_t)n * sizeof(kura_attr);
    sz->refs++;
    const uint8_t *prev = NULL;
    uint32_t prev_len = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *name = NULL, *at = d->p;
        uint32_t len = 0;
        if ((st = dec_span(d, &name, &len)) != KURA_OK) return st;
        if (i > 0) {
            int c = memcmp(prev, name, prev_len < len ? prev_len : len);
            if (c > 0 || (c == 0 && prev_len >= len)) {
                d->p = at; /* report the offset of the offending name */
                return dec_corrupt(d, "map names not in ascending order");
            }
        }
        prev = name;
        prev_len = len;
        sz->str += (size_t)len + 1;
        if ((st = chk_value(d, level + 1, sz)) != KURA_OK) return st;
    }
    return KURA_OK;
}

/* The members of an SS, NS or BS into m[0..n). */
static kura_status chk_members(dec_state *d, kura_type type, uint32_t n, dec_member *m,
                               val_pack_size *sz)
{
    kura_status st = KURA_OK;
    for (uint32_t i = 0; i < n && st == KURA_OK; i++) {
        m[i].p = d->p;
        if (type == KURA_NS) {
            st = chk_num(d);
            m[i].len = (uint32_t)(d->p - m[i].p);
        } else {
            st = dec_span(d, &m[i].p, &m[i].len);
            sz->str += (size_t)m[i].len + 1;
            sz->refs++;
        }
    }
    return st;
}

/* L, SS, NS, BS: `n` elements, each a tagged value (L) or a bare member of the set's type. */
static kura_status chk_list(dec_state *d, kura_type type, int level, val_pack_size *sz)
{
    uint32_t n = 0;
    kura_status st = dec_count(d, 1, &n);
    if (st != KURA_OK) return st;
    if (n == 0 && type != KURA_L) return dec_corrupt(d, "empty set");
    if (n == 0) return KURA_OK;
    sz->arr += (size_t)n * sizeof(kura_value);
    sz->refs++;
    if (type == KURA_L) {
        for (uint32_t i = 0; i < n && st == KURA_OK; i++)
            st = chk_value(d, level + 1, sz);
        return st;
    }
    dec_member small[DEC_SET_PAIRWISE_MAX];
    dec_member *m = n <= DEC_SET_PAIRWISE_MAX ? small : malloc((size_t)n * sizeof *m);
    if (!m) return kura_err(KURA_E_NOMEM, "out of memory");
    st = chk_members(d, type, n, m, sz);
    if (st == KURA_OK && dec_has_dup(m, n)) st = dec_corrupt(d, "duplicate set members");
    if (m != small) free(m);
    return st;
}

/* Checks one value at container level `level` (the outermost value is level 1). */
static kura_status chk_value(dec_state *d, int level, val_pack_size *sz)
{
    if (d->p == d->end) return dec_corrupt(d, "truncated value");
    uint8_t tag = *d->p++;
    const uint8_t *p = NULL;
    uint32_t len = 0;
    kura_status st;
    switch (tag) {
    case KURA_S:
    case KURA_B:
        st = dec_span(d, &p, &len);
        sz->str += (size_t)len + 1;
        sz->refs++;
        return st;
    case KURA_N:
        return chk_num(d);
    case KURA_BOOL:
        if (d->p == d->end || *d->p > 1) return dec_corrupt(d, "bad boolean");
        d->p++;
        return KURA_OK;
    case KURA_NULL:
        return KURA_OK;
    case KURA_M:
    case KURA_L:
        if (level > VAL_MAX_DEPTH) return dec_corrupt(d, "nesting too deep");
        return tag == KURA_M ? chk_map(d, level, sz) : chk_list(d, KURA_L, level, sz);
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        return chk_list(d, (kura_type)tag, level, sz);
    default:
        d->p--;
        return dec_corrupt(d, "unknown type tag");
    }
}

/* ---- Pass 2: fill (the bytes are known good) ---- */

static inline uint32_t fill_uint(dec_state *d)
{
    uint64_t v = 0;
    if (*d->p < 0x80) return *d->p++;
    d->p = dec_varint64(d->p, d->end, &v);
    return (uint32_t)v;
}

static inline void fill_bytes(dec_state *d, val_pack *pk, kura_type type, kura_value *dst)
{
    uint32_t len = fill_uint(d);
    val_pack_bytes(pk, dst, type, d->p, len);
    d->p += len;
}

static void fill_num(dec_state *d, kura_value *dst)
{
    kura_num n;
    size_t used = 0;
    if (d->nums < DEC_NUMS_KEPT) {
        n = d->kept[d->nums];
        used = d->kept_len[d->nums];
    } else {
        num_key_decode(d->p, (size_t)(d->end - d->p), &n, &used);
    }
    d->nums++;
    d->p += used;
    val_set_num(dst, &n);
}

static void fill_value(dec_state *d, val_pack *pk, kura_value *dst)
{
    uint8_t tag = *d->p++;
    uint32_t n;
    switch (tag) {
    case KURA_S:
    case KURA_B:
        fill_bytes(d, pk, (kura_type)tag, dst);
        break;
    case KURA_N:
        fill_num(d, dst);
        break;
    case KURA_BOOL:
        val_set_bool(dst, *d->p++ == 1);
        break;
    case KURA_NULL:
        val_set_null(dst);
        break;
    case KURA_M:
        if ((n = fill_uint(d)) == 0) {
            val_init_container(dst, KURA_M);
        } else {
            kura_attr *a = val_pack_container(pk, dst, KURA_M, n);
            for (uint32_t i = 0; i < n; i++) {
                uint32_t len = fill_uint(d);
                val_pack_name(pk, &a[i], d->p, len);
                d->p += len;
                fill_value(d, pk, &a[i].value);
            }
        }
        break;
    default: /* L, SS, NS, BS */
        if ((n = fill_uint(d)) == 0) {
            val_init_container(dst, (kura_type)tag);
        } else {
            kura_value *e = val_pack_container(pk, dst, (kura_type)tag, n);
            for (uint32_t i = 0; i < n; i++) {
                if (tag == KURA_L)
                    fill_value(d, pk, &e[i]);
                else if (tag == KURA_NS)
                    fill_num(d, &e[i]);
                else
                    fill_bytes(d, pk, tag == KURA_SS ? KURA_S : KURA_B, &e[i]);
            }
        }
        break;
    }
}

/* Pass 1 over the whole input. */
static kura_status chk_all(dec_state *d, const uint8_t *p, size_t len, val_pack_size *sz)
{
    if (len == 0) return kura_err(KURA_E_CORRUPTION, "item: truncated value at byte 0");
    d->base = d->p = p; /* p may be NULL only when len is 0 */
    d->end = p + len;
    d->nums = 0; /* kept[] is written before it is read: not zeroed */
    kura_status st = chk_value(d, 1, sz);
    if (st == KURA_OK && d->p != d->end) st = dec_corrupt(d, "trailing bytes");
    return st;
}

kura_status val_check_encoded(const uint8_t *p, size_t len)
{
    dec_state d;
    val_pack_size sz = {0, 0, 0};
    return chk_all(&d, p, len, &sz);
}

kura_status val_encoded_attr(const uint8_t *p, size_t len, const char *name, size_t nlen,
                             const uint8_t **val_out, size_t *vlen_out)
{
    dec_state d = {.base = p, .p = p, .end = p + len};
    val_pack_size sz = {0, 0, 0};
    if (len == 0 || *p != KURA_M) return kura_err(KURA_E_CORRUPTION, "item: not a map at byte 0");
    d.p++;
    uint32_t n = 0;
    kura_status st = dec_count(&d, 2, &n);
    for (uint32_t i = 0; i < n && st == KURA_OK; i++) {
        const uint8_t *an = NULL, *at;
        uint32_t alen = 0;
        if ((st = dec_span(&d, &an, &alen)) != KURA_OK) break;
        at = d.p;
        if ((st = chk_value(&d, 2, &sz)) != KURA_OK) break;
        int c = memcmp(an, name, alen < nlen ? alen : nlen);
        if (c == 0 && alen == nlen) {
            *val_out = at;
            *vlen_out = (size_t)(d.p - at);
            return KURA_OK;
        }
        if (c > 0 || (c == 0 && alen > nlen)) break; /* names ascend: it is not there */
    }
    if (st == KURA_OK) {
        *val_out = NULL;
        *vlen_out = 0;
    }
    return st;
}

kura_status val_decode(const uint8_t *p, size_t len, kura_value *dst)
{
    dec_state d;
    val_pack_size sz = {0, 0, 0};
    kura_status st = chk_all(&d, p, len, &sz);
    if (st != KURA_OK) return st;
    val_pack pk = {NULL, NULL, NULL};
    if (sz.refs && !val_block_new(&sz, &pk)) return kura_err(KURA_E_NOMEM, "out of memory");
    d.p = p;
    d.nums = 0;
    fill_value(&d, &pk, dst);
    return KURA_OK;
}

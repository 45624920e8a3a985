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

/* ---- Decoding ---------------------------------------------------------------------------- */

typedef struct dec_state {
    const uint8_t *base, *p, *end;
} dec_state;

static kura_status dec_corrupt(const dec_state *d, const char *what)
{
    return kura_err(KURA_E_CORRUPTION, "item: %s at byte %zu", what, (size_t)(d->p - d->base));
}

/* A minimal varint no larger than `max`. */
static kura_status dec_uint(dec_state *d, uint64_t max, uint64_t *v_out, const char *what)
{
    uint64_t v;
    const uint8_t *q = dec_varint64(d->p, d->end, &v);
    if (!q || (size_t)(q - d->p) != varint_len(v) || v > max) return dec_corrupt(d, what);
    d->p = q;
    *v_out = v;
    return KURA_OK;
}

/* Element count of a container whose elements take at least `min_bytes` each. */
static kura_status dec_count(dec_state *d, size_t min_bytes, uint32_t *n_out)
{
    uint64_t n;
    kura_status st = dec_uint(d, UINT32_MAX, &n, "bad element count");
    if (st != KURA_OK) return st;
    if (n > (size_t)(d->end - d->p) / min_bytes)
        return dec_corrupt(d, "element count larger than the bytes left");
    *n_out = (uint32_t)n;
    return KURA_OK;
}

/* A varint length and that many bytes: *p_out points into the input. */
static kura_status dec_span(dec_state *d, const uint8_t **p_out, uint32_t *len_out)
{
    uint64_t len;
    kura_status st = dec_uint(d, UINT32_MAX - 1, &len, "bad length");
    if (st != KURA_OK) return st;
    if (len > (size_t)(d->end - d->p)) return dec_corrupt(d, "truncated bytes");
    *p_out = d->p;
    *len_out = (uint32_t)len;
    d->p += len;
    return KURA_OK;
}

static kura_status dec_bytes(dec_state *d, kura_type type, kura_value *dst)
{
    const uint8_t *p = NULL;
    uint32_t len = 0;
    kura_status st = dec_span(d, &p, &len);
    return st != KURA_OK ? st : val_set_bytes(dst, type, p, len);
}

static kura_status dec_num(dec_state *d, kura_value *dst)
{
    kura_num n;
    size_t used;
    if (num_key_decode(d->p, (size_t)(d->end - d->p), &n, &used) != KURA_OK)
        return dec_corrupt(d, "bad number");
    d->p += used;
    val_set_num(dst, &n);
    return KURA_OK;
}

static kura_status dec_value(dec_state *d, int level, kura_value *dst);

static kura_status dec_map(dec_state *d, int level, kura_value *dst)
{
    uint32_t n = 0;
    kura_status st = dec_count(d, 2, &n);
    if (st != KURA_OK) return st;
    val_init_container(dst, KURA_M);
    if (n == 0) return KURA_OK;
    if (!(dst->u.map.a = calloc(n, sizeof *dst->u.map.a)))
        return kura_err(KURA_E_NOMEM, "out of memory");
    dst->u.map.cap = n;
    for (uint32_t i = 0; i < n; i++) {
        kura_attr *a = &dst->u.map.a[i];
        const uint8_t *name = NULL;
        uint32_t len = 0;
        const uint8_t *at = d->p;
        if ((st = dec_span(d, &name, &len)) != KURA_OK) return st;
        if (i > 0) {
            const kura_attr *prev = a - 1;
            int c = memcmp(prev->name, name, prev->name_len < len ? prev->name_len : len);
            if (c > 0 || (c == 0 && prev->name_len >= len)) {
                d->p = at; /* report the offset of the offending name */
                return dec_corrupt(d, "map names not in ascending order");
            }
        }
        if (!(a->name = malloc((size_t)len + 1))) return kura_err(KURA_E_NOMEM, "out of memory");
        memcpy(a->name, name, len);
        a->name[len] = 0;
        a->name_len = len;
        dst->u.map.n = i + 1;
        if ((st = dec_value(d, level + 1, &a->value)) != KURA_OK) return st;
    }
    return KURA_OK;
}

/* L, SS, NS, BS: `n` elements, each a tagged value (L) or a bare member of the set's type. */
static kura_status dec_list(dec_state *d, kura_type type, int level, kura_value *dst)
{
    uint32_t n = 0;
    kura_status st = dec_count(d, 1, &n);
    if (st != KURA_OK) return st;
    val_init_container(dst, type);
    if (n == 0 && type != KURA_L) return dec_corrupt(d, "empty set");
    if (n == 0) return KURA_OK;
    if (!(dst->u.list.v = calloc(n, sizeof *dst->u.list.v)))
        return kura_err(KURA_E_NOMEM, "out of memory");
    dst->u.list.cap = n;
    for (uint32_t i = 0; i < n; i++) {
        kura_value *e = &dst->u.list.v[i];
        dst->u.list.n = i + 1; /* owned from here: a partly decoded element is cleared too */
        if (type == KURA_L)
            st = dec_value(d, level + 1, e);
        else if (type == KURA_NS)
            st = dec_num(d, e);
        else
            st = dec_bytes(d, type == KURA_SS ? KURA_S : KURA_B, e);
        if (st != KURA_OK) return st;
    }
    if (type != KURA_L && val_validate(dst) != KURA_OK)
        return dec_corrupt(d, "duplicate set members");
    return KURA_OK;
}

/* Decodes one value at container level `level` into dst (empty). On failure dst may hold a
 * partly built value: the caller clears it. */
static kura_status dec_value(dec_state *d, int level, kura_value *dst)
{
    if (d->p == d->end) return dec_corrupt(d, "truncated value");
    uint8_t tag = *d->p++;
    switch (tag) {
    case KURA_S:
    case KURA_B:
        return dec_bytes(d, (kura_type)tag, dst);
    case KURA_N:
        return dec_num(d, dst);
    case KURA_BOOL:
        if (d->p == d->end || *d->p > 1) return dec_corrupt(d, "bad boolean");
        val_set_bool(dst, *d->p++ == 1);
        return KURA_OK;
    case KURA_NULL:
        val_set_null(dst);
        return KURA_OK;
    case KURA_M:
    case KURA_L:
        if (level > VAL_MAX_DEPTH) return dec_corrupt(d, "nesting too deep");
        return tag == KURA_M ? dec_map(d, level, dst) : dec_list(d, KURA_L, level, dst);
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        return dec_list(d, (kura_type)tag, level, dst);
    default:
        d->p--;
        return dec_corrupt(d, "unknown type tag");
    }
}

kura_status val_decode(const uint8_t *p, size_t len, kura_value *dst)
{
    if (len == 0) return kura_err(KURA_E_CORRUPTION, "item: truncated value at byte 0");
    dec_state d = {p, p, p + len}; /* p may be NULL only when len is 0 */
    kura_value v = {0};
    kura_status st = dec_value(&d, 1, &v);
    if (st == KURA_OK && d.p != d.end) st = dec_corrupt(&d, "trailing bytes");
    if (st != KURA_OK) {
        val_clear(&v);
        return st;
    }
    val_move(dst, &v);
    return KURA_OK;
}

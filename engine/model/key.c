/*
 * key.c - This file contains the order-preserving, prefix-free encoding of key attribute
 * values and the storage keys of items (docs/format/keys.md):
 *
 *   storage key = hash64(enc(pk)) big-endian || enc(pk) || enc(sk)
 *
 * enc() of a number is num_key_encode() (number.h). enc() of a string or binary is its bytes
 * with every 0x00 written as 0x00 0xFF, then the terminator 0x00 0x01. memcmp order of two
 * encodings is the unsigned byte order of the values (shorter first on a tie), which is
 * DynamoDB's order for S (UTF-8 bytes) and B: at the first differing byte either both are
 * plain bytes, or a 0x00 (escape or terminator) meets a larger plain byte, or the escape
 * 0x00 0xFF of a longer value meets the terminator 0x00 0x01 of its prefix. It is prefix-free
 * because 0x00 0x01 never occurs before the end. The body without the terminator is the
 * begins_with prefix (key_enc_prefix): it ends on a whole escaped byte, so an encoding starts
 * with it exactly when the value starts with the prefix's bytes.
 *
 * key_build() checks the key attributes as DynamoDB does before encoding anything, with its
 * messages (dynalite's db/index.js validateItem/validateKey/checkKeySize, which copy
 * DynamoDB's, typos included); sizes count UTF-8 bytes as the DynamoDB documentation says.
 */
#include "engine/model/value.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

#define KEY_PK_MAX 2048
#define KEY_SK_MAX 1024
#define KEY_HASH_LEN 8

#define KEY_MSG_INVALID "One or more parameter values were invalid: "

/* Appends the escaped bytes of an S or B value (no terminator). */
static bool key_put_escaped(kbuf *out, const uint8_t *p, size_t len)
{
    static const uint8_t esc[2] = {0x00, 0xFF};
    const uint8_t *end = p + len;
    if (!kbuf_reserve(out, len + 2)) return false;
    while (p < end) {
        const uint8_t *z = memchr(p, 0, (size_t)(end - p));
        size_t run = z ? (size_t)(z - p) : (size_t)(end - p);
        if (!kbuf_append(out, p, run)) return false;
        p += run;
        if (z) {
            if (!kbuf_append(out, esc, 2)) return false;
            p++;
        }
    }
    return true;
}

kura_status key_enc_value(const kura_value *v, kbuf *out)
{
    static const uint8_t term[2] = {0x00, 0x01};
    size_t start = out->len;
    if (v->type == KURA_N) {
        if (!kbuf_reserve(out, NUM_KEY_MAX)) return kura_err(KURA_E_NOMEM, "out of memory");
        out->len += num_key_encode(&v->u.num, out->data + out->len);
        return KURA_OK;
    }
    if (v->type != KURA_S && v->type != KURA_B)
        return kura_err(KURA_E_INVALID, "key: a %s value cannot be a key",
                        val_type_name((kura_type)v->type));
    if (!key_put_escaped(out, v->u.bytes.p, v->u.bytes.len) || !kbuf_append(out, term, 2)) {
        out->len = start;
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    return KURA_OK;
}

kura_status key_enc_prefix(const kura_value *v, kbuf *out)
{
    size_t start = out->len;
    if (v->type != KURA_S && v->type != KURA_B)
        return kura_err(KURA_E_INVALID, "key: a %s value has no key prefix",
                        val_type_name((kura_type)v->type));
    if (!key_put_escaped(out, v->u.bytes.p, v->u.bytes.len)) {
        out->len = start;
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    return KURA_OK;
}

/* Decodes an escaped S/B encoding: one pass to validate and measure, one to copy. */
static kura_status key_dec_bytes(const uint8_t *p, size_t len, kura_type type, kura_value *dst,
                                 size_t *used_out)
{
    size_t i = 0, n = 0;
    if (len < 2) return kura_err(KURA_E_CORRUPTION, "key: missing terminator");
    for (;;) {
        const uint8_t *z = memchr(p + i, 0, len - i);
        if (!z || (size_t)(z - p) + 1 >= len)
            return kura_err(KURA_E_CORRUPTION, "key: missing terminator");
        n += (size_t)(z - (p + i));
        i = (size_t)(z - p) + 2;
        if (z[1] == 0x01) break;
        if (z[1] != 0xFF) return kura_err(KURA_E_CORRUPTION, "key: bad escape byte 0x%02x", z[1]);
        n++;
    }
    uint8_t *buf = malloc(n + 1);
    if (!buf) return kura_err(KURA_E_NOMEM, "out of memory");
    /* The body p[0, i - 2) is valid: every 0x00 in it is followed by 0xFF. */
    for (size_t j = 0, k = 0; j < i - 2; k++) {
        buf[k] = p[j];
        j += p[j] == 0 ? 2 : 1;
    }
    buf[n] = 0;
    memset(dst, 0, sizeof *dst);
    dst->type = (uint8_t)type;
    dst->u.bytes.p = buf;
    dst->u.bytes.len = (uint32_t)n;
    *used_out = i;
    return KURA_OK;
}

kura_status key_dec_value(const uint8_t *p, size_t len, kura_type type, kura_value *dst,
                          size_t *used_out)
{
    if (type == KURA_S || type == KURA_B) {
        if (len > (size_t)UINT32_MAX) len = UINT32_MAX; /* a key is never this long */
        return key_dec_bytes(p, len, type, dst, used_out);
    }
    if (type != KURA_N) return kura_err(KURA_E_INVALID, "key: type %d is not a key type", type);
    kura_num n;
    size_t used;
    kura_status st = num_key_decode(p, len, &n, &used);
    if (st != KURA_OK) return st;
    val_set_num(dst, &n);
    *used_out = used;
    return KURA_OK;
}

/* Checks one key attribute of `m` as DynamoDB does; *v_out is the attribute's value. */
static kura_status key_check_attr(const char *name, kura_type type, bool is_pk, const kura_value *m,
                                  key_source src, const kura_value **v_out)
{
    const kura_value *v = m ? val_map_get(m, name, strlen(name)) : NULL;
    if (src == KEY_FROM_KEY && (!v || v->type != type))
        return kura_err(KURA_E_INVALID, KEY_MSG_SCHEMA);
    if (!v) return kura_err(KURA_E_INVALID, KEY_MSG_INVALID "Missing the key %s in the item", name);
    if (v->type != type)
        return kura_err(KURA_E_INVALID,
                        KEY_MSG_INVALID "Type mismatch for key %s expected: %s "
                                        "actual: %s",
                        name, val_type_name(type), val_type_name((kura_type)v->type));
    if (type != KURA_N && v->u.bytes.len == 0)
        return kura_err(KURA_E_INVALID,
                        "%sThe AttributeValue for a key attribute cannot contain an empty %s "
                        "value. Key: %s",
                        src == KEY_FROM_KEY ? KEY_MSG_INVALID
                                            : "One or more parameter values are not valid. ",
                        type == KURA_S ? "string" : "binary", name);
    if (type != KURA_N && is_pk && v->u.bytes.len > KEY_PK_MAX)
        return kura_err(KURA_E_INVALID, KEY_MSG_INVALID "Size of hashkey has exceeded the "
                                                        "maximum size limit of2048 bytes");
    if (type != KURA_N && !is_pk && v->u.bytes.len > KEY_SK_MAX)
        return kura_err(KURA_E_INVALID, KEY_MSG_INVALID "Aggregated size of all range keys has "
                                                        "exceeded the size limit of 1024 bytes");
    *v_out = v;
    return KURA_OK;
}

kura_status key_build(const key_schema *ks, const kura_value *m, key_source src, kbuf *out)
{
    const kura_value *pk = NULL, *sk = NULL;
    if (m && m->type != KURA_M) m = NULL;
    if (src == KEY_FROM_KEY && (m ? m->u.map.n : 0) != (ks->sk_name ? 2u : 1u))
        return kura_err(KURA_E_INVALID, KEY_MSG_SCHEMA);
    kura_status st = key_check_attr(ks->pk_name, ks->pk_type, true, m, src, &pk);
    if (st == KURA_OK && ks->sk_name)
        st = key_check_attr(ks->sk_name, ks->sk_type, false, m, src, &sk);
    if (st != KURA_OK) return st;

    size_t start = out->len;
    if (!kbuf_reserve(out, KEY_HASH_LEN)) return kura_err(KURA_E_NOMEM, "out of memory");
    out->len += KEY_HASH_LEN;
    st = key_enc_value(pk, out);
    if (st == KURA_OK) {
        size_t pk_off = start + KEY_HASH_LEN;
        enc_fixed64_be(out->data + start, key_hash(out->data + pk_off, out->len - pk_off));
        if (sk) st = key_enc_value(sk, out);
    }
    if (st != KURA_OK) out->len = start;
    return st;
}

bool key_matches_schema(const key_schema *ks, const kura_value *m)
{
    if (!m || m->type != KURA_M || m->u.map.n != (ks->sk_name ? 2u : 1u)) return false;
    const kura_value *pk = val_map_get(m, ks->pk_name, strlen(ks->pk_name));
    if (!pk || pk->type != ks->pk_type) return false;
    if (!ks->sk_name) return true;
    const kura_value *sk = val_map_get(m, ks->sk_name, strlen(ks->sk_name));
    return sk && sk->type == ks->sk_type;
}

uint64_t key_hash(const uint8_t *enc_pk, size_t len)
{
    return kura_hash64(enc_pk, len);
}

/* Decodes one key attribute at *off and puts it into map `dst` under `name`. */
static kura_status key_parse_attr(const uint8_t *p, size_t len, size_t *off, const char *name,
                                  kura_type type, kura_value *dst)
{
    kura_value v = {0};
    size_t used;
    kura_status st = key_dec_value(p + *off, len - *off, type, &v, &used);
    if (st != KURA_OK) return st;
    *off += used;
    return val_map_put(dst, name, strlen(name), &v);
}

kura_status key_parse(const key_schema *ks, const uint8_t *p, size_t len, kura_value *dst)
{
    if (len < KEY_HASH_LEN) return kura_err(KURA_E_CORRUPTION, "key: shorter than its hash");
    kura_value m;
    val_init_container(&m, KURA_M);
    size_t off = KEY_HASH_LEN;
    kura_status st = key_parse_attr(p, len, &off, ks->pk_name, ks->pk_type, &m);
    if (st == KURA_OK && dec_fixed64_be(p) != key_hash(p + KEY_HASH_LEN, off - KEY_HASH_LEN))
        st = kura_err(KURA_E_CORRUPTION, "key: hash prefix does not match the partition key");
    if (st == KURA_OK && ks->sk_name)
        st = key_parse_attr(p, len, &off, ks->sk_name, ks->sk_type, &m);
    if (st == KURA_OK && off != len)
        st = kura_err(KURA_E_CORRUPTION, "key: %zu trailing bytes", len - off);
    if (st != KURA_OK) {
        val_clear(&m);
        return st;
    }
    val_move(dst, &m);
    return KURA_OK;
}

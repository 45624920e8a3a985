/*
 * json_write.c - This file contains the JSON writer of the API's responses: text appended to
 * a kbuf, byte for byte what jansson's json_dumps(JSON_COMPACT | JSON_REAL_PRECISION(15))
 * writes for the same JSON (the format api/ has always answered in), without building a tree
 * first.
 *
 * Responses used to be jansson trees dumped at the end, which cost a json_t object, a hash
 * table and a copied string per attribute value, and then a second walk to print them; a
 * Query page of 20 items spent most of its time there. Now values are written straight from
 * kura_value (jw_value, jw_item) and only small, rare members (a TableDescription, the
 * parameters BatchGetItem echoes back) are document trees (jdoc.h), printed by jw_json with
 * the same functions:
 *
 *  - strings: '"' and '\\' escaped with a backslash; \b \f \n \r \t by name; every other
 *    byte below 0x20 (NUL included) as \u00XX with upper-case hex; '/', DEL and non-ASCII
 *    written as they are. The text must be UTF-8 as jansson defines it (no overlong forms,
 *    no surrogates, nothing above U+10FFFF): jansson refuses to print anything else, and so
 *    does jw_string (KURA_E_INVALID), except in jw_message;
 *  - integers as "%lld"; reals as "%.15g" with ".0" appended when that has neither '.' nor
 *    'e', and the exponent without '+' or leading zeros (jansson's jsonp_dtostr);
 *  - compact separators: ',' and ':' with no spaces; members in the order written.
 * tests/unit/api_json_write_test.c compares the writer with json_dumps on random values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "api/api_int.h"
#include "engine/model/number.h"
#include "util/coding.h"

#define NOMEM() api_err(KURA_E_NOMEM, "out of memory")

/* Whether byte c goes out as it is without a look: printable ASCII but '"' and '\\'. */
static inline bool plain(uint8_t c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* The escape of a byte below 0x20, '"' or '\\' into e (returns its length). */
static size_t escape(uint8_t c, char e[6])
{
    static const char hex[] = "0123456789ABCDEF";
    e[0] = '\\';
    switch (c) {
    case '"':
    case '\\':
        e[1] = (char)c;
        return 2;
    case '\b':
        e[1] = 'b';
        return 2;
    case '\f':
        e[1] = 'f';
        return 2;
    case '\n':
        e[1] = 'n';
        return 2;
    case '\r':
        e[1] = 'r';
        return 2;
    case '\t':
        e[1] = 't';
        return 2;
    default:
        memcpy(e + 1, "u00", 3);
        e[4] = hex[c >> 4];
        e[5] = hex[c & 15];
        return 6;
    }
}

/* Whether none of the 8 bytes of x needs a look (escape or UTF-8 check): the "has a zero
 * byte" / "has a byte less than n" word tricks, exact about whether any byte does. */
static inline bool plain8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t quote = x ^ (ones * '"'), bslash = x ^ (ones * '\\');
    uint64_t hit =
        ((x - ones * 0x20) & ~x) | ((quote - ones) & ~quote) | ((bslash - ones) & ~bslash) | x;
    return (hit & high) == 0;
}

/* A JSON string; a byte that is not part of UTF-8 text fails (strict) or becomes U+FFFD. */
static kura_status write_string(kbuf *b, const char *s, size_t n, bool strict)
{
    const uint8_t *p = (const uint8_t *)s, *end = p + n;
    if (!kbuf_reserve(b, n + 2)) return NOMEM();
    b->data[b->len++] = '"';
    while (p < end) {
        const uint8_t *run = p;
        for (uint64_t x; end - p >= 8 && (memcpy(&x, p, 8), plain8(x));)
            p += 8;
        while (p < end && plain(*p))
            p++;
        if (!kbuf_append(b, run, (size_t)(p - run))) return NOMEM();
        if (p == end) break;
        if (*p >= 0x80) {
            size_t k = jd_utf8_seq(p, (size_t)(end - p));
            if (k == 0 && strict)
                return api_err(KURA_E_INVALID, "a string of the response is not valid UTF-8");
            if (!(k ? kbuf_append(b, p, k) : kbuf_append(b, "\xEF\xBF\xBD", 3))) return NOMEM();
            p += k ? k : 1;
            continue;
        }
        char e[6];
        if (!kbuf_append(b, e, escape(*p++, e))) return NOMEM();
    }
    return kbuf_put_u8(b, '"') ? KURA_OK : NOMEM();
}

kura_status jw_string(kbuf *b, const char *s, size_t n)
{
    return write_string(b, s, n, true);
}

kura_status jw_message(kbuf *b, const char *s)
{
    return write_string(b, s, strlen(s), false);
}

kura_status jw_raw(kbuf *b, const char *text)
{
    return kbuf_append(b, text, strlen(text)) ? KURA_OK : NOMEM();
}

kura_status jw_sep(kbuf *b)
{
    if (b->len == 0 || b->data[b->len - 1] == '{' || b->data[b->len - 1] == '[') return KURA_OK;
    return kbuf_put_u8(b, ',') ? KURA_OK : NOMEM();
}

kura_status jw_key(kbuf *b, const char *key, size_t len)
{
    kura_status s = jw_sep(b);
    if (s == KURA_OK) s = jw_string(b, key, len);
    if (s == KURA_OK && !kbuf_put_u8(b, ':')) s = NOMEM();
    return s;
}

kura_status jw_int(kbuf *b, int64_t v)
{
    char num[24], *p = num + sizeof num;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--p = '-';
    return kbuf_append(b, p, (size_t)(num + sizeof num - p)) ? KURA_OK : NOMEM();
}

kura_status jw_real(kbuf *b, double d)
{
    if (!isfinite(d)) return api_err(KURA_E_INVALID, "a number of the response is not finite");
    char num[40];
    int n = snprintf(num, sizeof num - 2, "%.15g", d);
    if (n < 0 || n >= (int)sizeof num - 2) return NOMEM();
    for (char *c = num; *c; c++) /* a locale's decimal comma */
        if (*c == ',') *c = '.';
    char *e = strchr(num, 'e');
    if (!e && !strchr(num, '.')) {
        memcpy(num + n, ".0", 3);
        n += 2;
    } else if (e) { /* e+05 -> e5, e-05 -> e-5 */
        char *start = e + 1, *digits = e + 2;
        if (*start == '-') start++;
        while (*digits == '0')
            digits++;
        if (digits != start) {
            memmove(start, digits, strlen(digits) + 1);
            n = (int)strlen(num);
        }
    }
    return kbuf_append(b, num, (size_t)n) ? KURA_OK : NOMEM();
}

kura_status jw_json(kbuf *b, const jd_t *v)
{
    kura_status s = KURA_OK;
    switch (v->type) {
    case JD_OBJECT: {
        const char *key;
        size_t key_len;
        jd_t *val;
        bool first = true;
        if (!kbuf_put_u8(b, '{')) return NOMEM();
        jd_object_keylen_foreach(v, key, key_len, val)
        {
            if (!first && !kbuf_put_u8(b, ',')) return NOMEM();
            first = false;
            if ((s = jw_string(b, key, key_len)) != KURA_OK) return s;
            if (!kbuf_put_u8(b, ':')) return NOMEM();
            if ((s = jw_json(b, val)) != KURA_OK) return s;
        }
        return kbuf_put_u8(b, '}') ? KURA_OK : NOMEM();
    }
    case JD_ARRAY:
        if (!kbuf_put_u8(b, '[')) return NOMEM();
        for (size_t i = 0; i < jd_array_size(v); i++) {
            if (i && !kbuf_put_u8(b, ',')) return NOMEM();
            if ((s = jw_json(b, jd_array_get(v, i))) != KURA_OK) return s;
        }
        return kbuf_put_u8(b, ']') ? KURA_OK : NOMEM();
    case JD_STRING:
        return jw_string(b, v->u.str.p, v->u.str.len);
    case JD_INTEGER:
        return jw_int(b, v->u.i);
    case JD_REAL:
        return jw_real(b, v->u.r);
    case JD_TRUE:
        return jw_raw(b, "true");
    case JD_FALSE:
        return jw_raw(b, "false");
    default:
        return jw_raw(b, "null");
    }
}

/* ---- Attribute values ---------------------------------------------------------------------- */

static kura_status write_b64(kbuf *b, const uint8_t *p, size_t n)
{
    size_t out = 4 * ((n + 2) / 3);
    if (!kbuf_reserve(b, out + 3)) return NOMEM();
    b->data[b->len++] = '"';
    b->len += (size_t)EVP_EncodeBlock(b->data + b->len, p, (int)n);
    b->data[b->len++] = '"';
    return KURA_OK;
}

static kura_status write_num(kbuf *b, const kura_num *n)
{
    char num[NUM_FORMAT_MAX + 1];
    return jw_string(b, num, num_format(n, num, sizeof num));
}

/* The bare JSON of a set member (a string). */
static kura_status write_scalar(kbuf *b, const kura_value *v)
{
    switch (v->type) {
    case KURA_S:
        return jw_string(b, (const char *)v->u.bytes.p, v->u.bytes.len);
    case KURA_N:
        return write_num(b, &v->u.num);
    case KURA_B:
        return write_b64(b, v->u.bytes.p, v->u.bytes.len);
    default:
        return api_err(KURA_E_INVALID, "a set member of the response is not a scalar");
    }
}

static kura_status write_elements(kbuf *b, const kura_value *v)
{
    if (!kbuf_put_u8(b, '[')) return NOMEM();
    kura_status s = KURA_OK;
    for (uint32_t i = 0; s == KURA_OK && i < v->u.list.n; i++) {
        const kura_value *e = &v->u.list.v[i];
        if (i && !kbuf_put_u8(b, ',')) return NOMEM();
        s = v->type == KURA_L ? jw_value(b, e) : write_scalar(b, e);
    }
    if (s == KURA_OK && !kbuf_put_u8(b, ']')) s = NOMEM();
    return s;
}

kura_status jw_item(kbuf *b, const kura_value *m)
{
    if (!kbuf_put_u8(b, '{')) return NOMEM();
    kura_status s = KURA_OK;
    for (uint32_t i = 0; s == KURA_OK && i < m->u.map.n; i++) {
        const kura_attr *a = &m->u.map.a[i];
        if (i && !kbuf_put_u8(b, ',')) return NOMEM();
        s = jw_string(b, a->name, a->name_len);
        if (s == KURA_OK && !kbuf_put_u8(b, ':')) s = NOMEM();
        if (s == KURA_OK) s = jw_value(b, &a->value);
    }
    if (s == KURA_OK && !kbuf_put_u8(b, '}')) s = NOMEM();
    return s;
}

/* "{\"<type>\":", the start of a value of type t (KURA_S..KURA_BS). */
static const char *const heads[] = {
    "",        "{\"S\":", "{\"N\":",  "{\"B\":",  "{\"BOOL\":", "{\"NULL\":",
    "{\"M\":", "{\"L\":", "{\"SS\":", "{\"NS\":", "{\"BS\":"};
static const uint8_t head_len[] = {0, 5, 5, 5, 8, 8, 5, 5, 6, 6, 6};

kura_status jw_value(kbuf *b, const kura_value *v)
{
    if (v->type < KURA_S || v->type > KURA_BS) return api_err(KURA_E_INVALID, "the value is empty");
    if (!kbuf_append(b, heads[v->type], head_len[v->type])) return NOMEM();
    kura_status s;
    switch (v->type) {
    case KURA_BOOL:
        s = jw_raw(b, v->u.boolean ? "true" : "false");
        break;
    case KURA_NULL:
        s = jw_raw(b, "true");
        break;
    case KURA_M:
        s = jw_item(b, v);
        break;
    case KURA_L:
    case KURA_SS:
    case KURA_NS:
    case KURA_BS:
        s = write_elements(b, v);
        break;
    default:
        s = write_scalar(b, v);
        break;
    }
    if (s == KURA_OK && !kbuf_put_u8(b, '}')) s = NOMEM();
    return s;
}

/* ---- Stored items ---------------------------------------------------------------------------
 *
 * The same text written from an item's stored encoding (docs/format/item.md) without decoding
 * it into a kura_value first. The bytes have passed val_check_encoded(), so lengths, counts,
 * varints, tags and numbers are known to be well-formed and within the input: the walk below
 * only reads them. */

typedef struct enc_reader {
    const uint8_t *p, *end;
} enc_reader;

static inline uint32_t enc_uint(enc_reader *r)
{
    uint64_t v = 0;
    if (*r->p < 0x80) return *r->p++;
    r->p = dec_varint64(r->p, r->end, &v);
    return (uint32_t)v;
}

static kura_status enc_num(kbuf *b, enc_reader *r)
{
    kura_num n;
    size_t used = 0;
    if (num_key_decode(r->p, (size_t)(r->end - r->p), &n, &used) != KURA_OK)
        return api_err(KURA_E_CORRUPTION, "a stored number could not be read");
    r->p += used;
    return write_num(b, &n);
}

/* A varint length and that many bytes, as a string (S) or in base64 (B). */
static kura_status enc_bytes(kbuf *b, enc_reader *r, kura_type type)
{
    uint32_t len = enc_uint(r);
    const uint8_t *p = r->p;
    r->p += len;
    return type == KURA_S ? jw_string(b, (const char *)p, len) : write_b64(b, p, len);
}

static kura_status enc_value(kbuf *b, enc_reader *r);

/* The attributes of an M (after its tag) as a JSON object. */
static kura_status enc_map(kbuf *b, enc_reader *r)
{
    if (!kbuf_put_u8(b, '{')) return NOMEM();
    kura_status s = KURA_OK;
    for (uint32_t i = 0, n = enc_uint(r); s == KURA_OK && i < n; i++) {
        if (i && !kbuf_put_u8(b, ',')) return NOMEM();
        s = enc_bytes(b, r, KURA_S);
        if (s == KURA_OK && !kbuf_put_u8(b, ':')) s = NOMEM();
        if (s == KURA_OK) s = enc_value(b, r);
    }
    if (s == KURA_OK && !kbuf_put_u8(b, '}')) s = NOMEM();
    return s;
}

/* The elements of an L, SS, NS or BS (after its tag) as a JSON array. */
static kura_status enc_elements(kbuf *b, enc_reader *r, kura_type type)
{
    if (!kbuf_put_u8(b, '[')) return NOMEM();
    kura_status s = KURA_OK;
    for (uint32_t i = 0, n = enc_uint(r); s == KURA_OK && i < n; i++) {
        if (i && !kbuf_put_u8(b, ',')) return NOMEM();
        s = type == KURA_L    ? enc_value(b, r)
            : type == KURA_NS ? enc_num(b, r)
                              : enc_bytes(b, r, type == KURA_SS ? KURA_S : KURA_B);
    }
    if (s == KURA_OK && !kbuf_put_u8(b, ']')) s = NOMEM();
    return s;
}

static kura_status enc_value(kbuf *b, enc_reader *r)
{
    kura_type type = (kura_type)*r->p++;
    if (type < KURA_S || type > KURA_BS) /* val_check_encoded() rejects these */
        return api_err(KURA_E_CORRUPTION, "a stored value has an unknown type");
    if (!kbuf_append(b, heads[type], head_len[type])) return NOMEM();
    kura_status s;
    switch (type) {
    case KURA_S:
    case KURA_B:
        s = enc_bytes(b, r, type);
        break;
    case KURA_N:
        s = enc_num(b, r);
        break;
    case KURA_BOOL:
        s = jw_raw(b, *r->p++ ? "true" : "false");
        break;
    case KURA_NULL:
        s = jw_raw(b, "true");
        break;
    case KURA_M:
        s = enc_map(b, r);
        break;
    default:
        s = enc_elements(b, r, type);
        break;
    }
    if (s == KURA_OK && !kbuf_put_u8(b, '}')) s = NOMEM();
    return s;
}

kura_status jw_item_encoded(kbuf *b, const uint8_t *p, size_t len)
{
    if (len == 0 || p[0] != KURA_M)
        return api_err(KURA_E_CORRUPTION, "a stored item is not a map");
    enc_reader r = {p + 1, p + len};
    return enc_map(b, &r);
}

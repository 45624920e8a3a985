/*
 * json_value.c - This file contains DynamoDB JSON <-> kura_value: the decoder used by every
 * operation (after the type pass of schema_types.c), and the public kura_value_from_json /
 * kura_value_to_json of kura.h.
 *
 * Decoding checks each attribute value as DynamoDB's request validation does (dynalite's
 * validateAttributeValue, which copies DynamoDB's messages), in the same order: an empty
 * value first; then every datatype member in the order written (a number that does not
 * parse, NULL false, an empty set, a bad number in a number set, duplicate members, nested
 * values depth first); "more than one datatypes" only after all of those. Duplicates are
 * found by sorting (a set may hold 100,000 members), numbers compared numerically, strings
 * and binaries by bytes.
 *
 * Encoding (json_write.c) writes numbers in canonical form ("1.50" comes back "1.5"),
 * binaries as base64, maps with their attributes in name order.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "api/api_int.h"
#include "engine/model/number.h"

#define MSG_EMPTY                                                                                  \
    "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
#define MSG_MULTI                                                                                  \
    "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the "    \
    "supported datatypes"
#define MSG_INVALID "One or more parameter values were invalid: "

/* ---- Decoding ------------------------------------------------------------------------------ */

/* The deepest attribute value decoded as written (attributes are depth 1); DynamoDB allows
 * containers down to depth 31 (engine/model/validate.c). */
#define JV_MAX_DEPTH (VAL_MAX_DEPTH + 1)

static kura_status jv_decode_at(const jd_t *v, kura_value *dst, int depth);

static kura_status decode_num(const jd_t *s, kura_num *out)
{
    if (jd_string_length(s) == 0)
        return api_err(KURA_E_INVALID, "The parameter cannot be converted to a numeric value");
    kura_status st = num_parse(jd_string_value(s), jd_string_length(s), out);
    return st == KURA_OK ? KURA_OK : api_engine(st);
}

static kura_status decode_b64(const jd_t *s, kura_value *dst, kura_type type)
{
    size_t n = jd_string_length(s);
    unsigned char small[1024], *raw = n / 4 * 3 + 1 <= sizeof small ? small : malloc(n / 4 * 3 + 1);
    if (!raw) return API_NOMEM();
    /* pass 1 made sure the text is canonical base64, so this cannot fail */
    int len = n ? EVP_DecodeBlock(raw, (const unsigned char *)jd_string_value(s), (int)n) : 0;
    if (len > 0) {
        const char *p = jd_string_value(s);
        len -= (p[n - 1] == '=') + (p[n - 2] == '=');
    }
    kura_status st = len < 0 ? api_err(KURA_E_INVALID, "Invalid last non-pad Base64 character "
                                                       "dectected")
                             : val_set_bytes(dst, type, raw, (size_t)len);
    if (raw != small) free(raw);
    return st == KURA_E_NOMEM ? API_NOMEM() : st;
}

static int member_cmp(const void *a, const void *b)
{
    return val_cmp_scalar(*(const kura_value *const *)a, *(const kura_value *const *)b);
}

/* Duplicate members of a decoded set, found by sorting pointers to them. */
static kura_status set_dup(const kura_value *set, bool *dup_out)
{
    uint32_t n = set->u.list.n;
    const kura_value **p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return API_NOMEM();
    for (uint32_t i = 0; i < n; i++)
        p[i] = &set->u.list.v[i];
    qsort(p, n, sizeof *p, member_cmp);
    bool dup = false;
    for (uint32_t i = 1; i < n && !dup; i++)
        dup = val_cmp_scalar(p[i - 1], p[i]) == 0;
    free(p);
    *dup_out = dup;
    return KURA_OK;
}

static kura_status decode_set(const jd_t *arr, kura_type type, kura_value *dst)
{
    static const char *const empty[] = {"An string set  may not be empty",
                                        "An number set  may not be empty",
                                        "Binary sets should not be empty"};
    int k = type == KURA_SS ? 0 : type == KURA_NS ? 1 : 2;
    if (jd_array_size(arr) == 0) return api_err(KURA_E_INVALID, MSG_INVALID "%s", empty[k]);
    val_init_container(dst, type);
    kura_status st = KURA_OK;
    for (size_t i = 0; st == KURA_OK && i < jd_array_size(arr); i++) {
        const jd_t *e = jd_array_get(arr, i);
        kura_value m = {0};
        if (!jd_is_string(e)) { /* a null member */
            st = api_err(KURA_E_INVALID, MSG_EMPTY);
        } else if (type == KURA_NS) {
            kura_num num;
            st = decode_num(e, &num);
            if (st == KURA_OK) val_set_num(&m, &num);
        } else if (type == KURA_SS) {
            st = val_set_bytes(&m, KURA_S, jd_string_value(e), jd_string_length(e));
        } else {
            st = decode_b64(e, &m, KURA_B);
        }
        if (st == KURA_OK) st = val_list_push(dst, &m);
        val_clear(&m);
    }
    bool dup = false;
    if (st == KURA_OK) st = set_dup(dst, &dup);
    if (st == KURA_OK && dup) {
        if (type == KURA_NS) {
            st = api_err(KURA_E_INVALID, "Input collection contains duplicates");
        } else {
            char *shown = api_value_str(arr);
            st = shown ? api_err(KURA_E_INVALID, MSG_INVALID "Input collection %s%s", shown,
                                 type == KURA_SS ? " contains duplicates."
                                                 : "of type BS contains duplicates.")
                       : API_NOMEM();
            free(shown);
        }
    }
    if (st != KURA_OK) val_clear(dst);
    return st == KURA_E_NOMEM ? API_NOMEM() : st;
}

static kura_status decode_map_into(const jd_t *obj, kura_value *dst, int depth)
{
    val_init_container(dst, KURA_M);
    const char *key;
    size_t key_len;
    jd_t *val;
    kura_status st = KURA_OK;
    jd_object_keylen_foreach((jd_t *)obj, key, key_len, val)
    {
        kura_value m = {0};
        st = jv_decode_at(val, &m, depth + 1);
        if (st == KURA_OK && val_map_put(dst, key, key_len, &m) != KURA_OK) st = API_NOMEM();
        if (st != KURA_OK) break;
    }
    if (st != KURA_OK) val_clear(dst);
    return st;
}

static kura_status decode_list(const jd_t *arr, kura_value *dst, int depth)
{
    val_init_container(dst, KURA_L);
    kura_status st = KURA_OK;
    for (size_t i = 0; st == KURA_OK && i < jd_array_size(arr); i++) {
        kura_value m = {0};
        st = jv_decode_at(jd_array_get(arr, i), &m, depth + 1);
        if (st == KURA_OK && val_list_push(dst, &m) != KURA_OK) st = API_NOMEM();
    }
    if (st != KURA_OK) val_clear(dst);
    return st;
}

/* One datatype member ("S": ...) of an attribute value. */
static kura_status decode_member(const char *type, const jd_t *v, kura_value *dst, int depth)
{
    kura_status st;
    if (strcmp(type, "S") == 0) {
        st = val_set_bytes(dst, KURA_S, jd_string_value(v), jd_string_length(v));
        return st == KURA_OK ? KURA_OK : API_NOMEM();
    }
    if (strcmp(type, "N") == 0) {
        kura_num num;
        if ((st = decode_num(v, &num)) == KURA_OK) val_set_num(dst, &num);
        return st;
    }
    if (strcmp(type, "B") == 0) return decode_b64(v, dst, KURA_B);
    if (strcmp(type, "BOOL") == 0) {
        val_set_bool(dst, jd_is_true(v));
        return KURA_OK;
    }
    if (strcmp(type, "NULL") == 0) {
        if (!jd_is_true(v))
            return api_err(KURA_E_INVALID, MSG_INVALID "Null attribute value types must have "
                                                       "the value of true");
        val_set_null(dst);
        return KURA_OK;
    }
    if ((strcmp(type, "M") == 0 || strcmp(type, "L") == 0) && depth > JV_MAX_DEPTH) {
        /* Past any depth an item may have: an empty container stands for the rest, so that
         * validation refuses the value as too deeply nested (with the message of its
         * context) without this recursion going on to the JSON's own limit, 1,024 levels,
         * off the end of a serving thread's stack (api_stack_test). */
        val_init_container(dst, type[0] == 'M' ? KURA_M : KURA_L);
        return KURA_OK;
    }
    if (strcmp(type, "M") == 0) return decode_map_into(v, dst, depth);
    if (strcmp(type, "L") == 0) return decode_list(v, dst, depth);
    return decode_set(v,
                      strcmp(type, "SS") == 0   ? KURA_SS
                      : strcmp(type, "NS") == 0 ? KURA_NS
                                                : KURA_BS,
                      dst);
}

static kura_status jv_decode_at(const jd_t *v, kura_value *dst, int depth)
{
    if (!jd_is_object(v) || jd_object_size(v) == 0) return api_err(KURA_E_INVALID, MSG_EMPTY);
    const char *type;
    jd_t *member;
    size_t n = 0;
    jd_object_foreach((jd_t *)v, type, member)
    {
        kura_value tmp = {0};
        kura_status st = decode_member(type, member, n == 0 ? dst : &tmp, depth);
        val_clear(&tmp);
        if (st != KURA_OK) {
            if (n > 0) val_clear(dst);
            return st;
        }
        n++;
    }
    if (n > 1) {
        val_clear(dst);
        return api_err(KURA_E_INVALID, MSG_MULTI);
    }
    return KURA_OK;
}

kura_status jv_decode(const jd_t *v, kura_value *dst)
{
    return jv_decode_at(v, dst, 1);
}

kura_status jv_decode_map(const jd_t *obj, kura_value **out)
{
    kura_value *m = kura_value_map();
    if (!m) return API_NOMEM();
    val_clear(m);
    kura_status st = decode_map_into(obj, m, 0);
    if (st != KURA_OK) {
        kura_value_free(m);
        return st;
    }
    *out = m;
    return KURA_OK;
}

/* ---- The public functions of kura.h --------------------------------------------------------- */

kura_status kura_value_from_json(const char *json, size_t len, bool item, kura_value **v_out)
{
    char jerr[160];
    jd_doc *doc = jd_doc_new();
    if (!doc) return kura_err(KURA_E_NOMEM, "out of memory");
    jd_t *root = jd_parse(doc, json, len, JD_DECODE_ANY, jerr, sizeof jerr);
    if (!root) {
        jd_doc_free(doc);
        return kura_err(KURA_E_INVALID, "invalid JSON: %s", jerr);
    }
    kura_status st = api_check_value(&root, item ? &api_attr_map : &api_attr_value);
    kura_value *v = NULL;
    if (st == KURA_OK && item) {
        st = jd_is_object(root) ? jv_decode_map(root, &v)
                                : api_err(KURA_E_INVALID, "Unexpected field type");
    } else if (st == KURA_OK) {
        v = kura_value_null();
        if (!v) {
            st = API_NOMEM();
        } else {
            val_clear(v);
            st = jv_decode(root, v);
            if (st != KURA_OK) {
                kura_value_free(v);
                v = NULL;
            }
        }
    }
    jd_doc_free(doc);
    if (st != KURA_OK) return st;
    *v_out = v;
    return KURA_OK;
}

kura_status kura_value_to_json(const kura_value *v, bool item, char **json_out, size_t *len_out)
{
    if (item && v->type != KURA_M) return kura_err(KURA_E_INVALID, "an item must be a map");
    kbuf b = KBUF_INIT;
    kura_status st = item ? jw_item(&b, v) : jw_value(&b, v);
    if (st == KURA_OK && !kbuf_put_u8(&b, '\0')) st = API_NOMEM();
    if (st != KURA_OK) {
        kbuf_free(&b);
        return st;
    }
    *json_out = (char *)b.data;
    *len_out = b.len - 1;
    return KURA_OK;
}

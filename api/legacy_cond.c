/*
 * legacy_cond.c - This file contains the translation of DynamoDB's legacy conditions
 * (Expected, QueryFilter, ScanFilter, KeyConditions) into condition expressions, with
 * DynamoDB's checks of each ComparisonOperator's arguments. The mapping and its sources are
 * described at the top of api/legacy.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/legacy_int.h"
#include "engine/model/number.h"

#define LMSG_OP_ENUM                                                                               \
    "[IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]"

const char *const legacy_type_names[LT_COUNT] = {"S", "N", "B",  "BOOL", "NULL",
                                                 "M", "L", "SS", "NS",   "BS"};

/* ---- ComparisonOperator ------------------------------------------------------------------- */

enum {
    OP_EQ,
    OP_NE,
    OP_LE,
    OP_LT,
    OP_GE,
    OP_GT,
    OP_NOT_NULL,
    OP_NULL,
    OP_CONTAINS,
    OP_NOT_CONTAINS,
    OP_BEGINS_WITH,
    OP_IN,
    OP_BETWEEN,
    OP_COUNT
};

static const struct lop {
    const char *name;
    size_t min_args, max_args; /* AttributeValueList length */
    unsigned types;            /* LT_BIT()s of the accepted argument types */
    bool key_ok;               /* usable in KeyConditions */
    const char *cmp;           /* the expression comparator of EQ..GT */
} lops[OP_COUNT] = {
    [OP_EQ] = {"EQ", 1, 1, LT_ANY, true, "="},
    [OP_NE] = {"NE", 1, 1, LT_ANY, false, "<>"},
    [OP_LE] = {"LE", 1, 1, LT_SCALARS, true, "<="},
    [OP_LT] = {"LT", 1, 1, LT_SCALARS, true, "<"},
    [OP_GE] = {"GE", 1, 1, LT_SCALARS, true, ">="},
    [OP_GT] = {"GT", 1, 1, LT_SCALARS, true, ">"},
    [OP_NOT_NULL] = {"NOT_NULL", 0, 0, 0, false, NULL},
    [OP_NULL] = {"NULL", 0, 0, 0, false, NULL},
    [OP_CONTAINS] = {"CONTAINS", 1, 1, LT_SCALARS | LT_BIT(LT_BOOL) | LT_BIT(LT_NULL), false, NULL},
    [OP_NOT_CONTAINS] = {"NOT_CONTAINS", 1, 1, LT_SCALARS | LT_BIT(LT_BOOL) | LT_BIT(LT_NULL),
                         false, NULL},
    [OP_BEGINS_WITH] = {"BEGINS_WITH", 1, 1, LT_BIT(LT_S) | LT_BIT(LT_B), true, NULL},
    [OP_IN] = {"IN", 1, SIZE_MAX, LT_SCALARS, false, NULL},
    [OP_BETWEEN] = {"BETWEEN", 2, 2, LT_SCALARS, true, NULL},
};

/* ---- Helpers shared with legacy.c ------------------------------------------------------------ */

kura_status legacy_type_error(const jd_t *got, const char *want)
{
    bool scalar = !strcmp(want, "String") || !strcmp(want, "Boolean");
    if (jd_is_object(got))
        return kura_err(KURA_E_INVALID, "Start of structure or map found where not expected");
    if (jd_is_array(got))
        return kura_err(KURA_E_INVALID,
                        scalar ? "Unrecognized collection type class java.lang.%s"
                               : "Start of list found where not expected",
                        want);
    if (!scalar) return kura_err(KURA_E_INVALID, "Unexpected field type");
    if (jd_is_boolean(got))
        return kura_err(KURA_E_INVALID, "%s cannot be converted to %s",
                        jd_is_true(got) ? "TRUE_VALUE" : "FALSE_VALUE", want);
    if (jd_is_number(got))
        return kura_err(KURA_E_INVALID, "%s cannot be converted to %s",
                        jd_is_integer(got) ? "NUMBER_VALUE" : "DECIMAL_VALUE", want);
    return kura_err(KURA_E_INVALID, "Unexpected token received from parser");
}

bool legacy_putf(kbuf *b, const char *fmt, ...)
{
    char tmp[256]; /* pieces are placeholders and keywords only, never user text */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < sizeof(tmp) && kbuf_append(b, tmp, (size_t)n);
}

/* ---- Attribute values ---------------------------------------------------------------------- */

/* The type of a checked AttributeValue (its one non-null datatype member). */
int legacy_value_type(const jd_t *v)
{
    for (int t = 0; t < LT_COUNT; t++)
        if (legacy_get(v, legacy_type_names[t])) return t;
    return -1;
}

kura_status legacy_value_check(const jd_t *v)
{
    if (!jd_is_object(v)) return kura_err(KURA_E_INVALID, "Unexpected value type in payload");
    int n = 0;
    for (int t = 0; t < LT_COUNT; t++)
        n += legacy_get(v, legacy_type_names[t]) != NULL;
    if (n == 0)
        return kura_err(KURA_E_INVALID, "Supplied AttributeValue is empty, must contain exactly "
                                        "one of the supported datatypes");
    if (n > 1)
        return kura_err(KURA_E_INVALID, "Supplied AttributeValue has more than one datatypes "
                                        "set, must contain exactly one of the supported datatypes");
    jd_t *num = legacy_get(v, "N");
    kura_num parsed;
    if (num && !jd_is_string(num)) return legacy_type_error(num, "String");
    return num ? num_parse(jd_string_value(num), jd_string_length(num), &parsed) : KURA_OK;
}

/* Standard base64 into `out`; false on a bad character or no memory. */
static bool lb64_decode(const char *s, size_t len, kbuf *out)
{
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len && s[i] != '='; i++) {
        char c = s[i];
        int v = c >= 'A' && c <= 'Z'   ? c - 'A'
                : c >= 'a' && c <= 'z' ? c - 'a' + 26
                : c >= '0' && c <= '9' ? c - '0' + 52
                : c == '+'             ? 62
                : c == '/'             ? 63
                                       : -1;
        if (v < 0) return false;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (!kbuf_put_u8(out, (uint8_t)(acc >> bits))) return false;
        }
    }
    return true;
}

/* Whether the BETWEEN bounds a > b (same scalar type `t`, checked by legacy_value_check). Bounds
 * the engine will reject anyway (bad base64) do not count as reversed. */
static bool lv_greater(int t, const jd_t *a, const jd_t *b)
{
    const jd_t *x = legacy_get(a, legacy_type_names[t]), *y = legacy_get(b, legacy_type_names[t]);
    if (!jd_is_string(x) || !jd_is_string(y)) return false;
    if (t == LT_N) {
        kura_num p, q;
        return num_parse(jd_string_value(x), jd_string_length(x), &p) == KURA_OK &&
               num_parse(jd_string_value(y), jd_string_length(y), &q) == KURA_OK &&
               num_cmp(&p, &q) > 0;
    }
    kbuf p = KBUF_INIT, q = KBUF_INIT;
    bool greater = false;
    if (t == LT_S) {
        kbuf_append(&p, jd_string_value(x), jd_string_length(x));
        kbuf_append(&q, jd_string_value(y), jd_string_length(y));
    }
    if (t == LT_S || (lb64_decode(jd_string_value(x), jd_string_length(x), &p) &&
                      lb64_decode(jd_string_value(y), jd_string_length(y), &q))) {
        size_t n = p.len < q.len ? p.len : q.len;
        int c = n ? memcmp(p.data, q.data, n) : 0;
        greater = c > 0 || (c == 0 && p.len > q.len);
    }
    kbuf_free(&p);
    kbuf_free(&q);
    return greater;
}

/* Checks the AttributeValueList of operator `op` in DynamoDB's order: each value, the number
 * of values, one type for all, the operator's types, BETWEEN's bounds. */
static kura_status lop_check_args(int op, const jd_t *args)
{
    size_t n = jd_array_size(args);
    kura_status st;
    for (size_t i = 0; i < n; i++)
        if ((st = legacy_value_check(jd_array_get(args, i))) != KURA_OK) return st;
    if (n < lops[op].min_args || n > lops[op].max_args)
        return kura_err(KURA_E_INVALID,
                        LMSG_PARAM "Invalid number of argument(s) for the %s ComparisonOperator",
                        lops[op].name);
    int t0 = n ? legacy_value_type(jd_array_get(args, 0)) : -1;
    for (size_t i = 1; i < n; i++)
        if (legacy_value_type(jd_array_get(args, i)) != t0)
            return kura_err(KURA_E_INVALID, LMSG_PARAM "AttributeValues inside "
                                                       "AttributeValueList must be of same type");
    if (n && !(lops[op].types & LT_BIT(t0)))
        return kura_err(KURA_E_INVALID,
                        LMSG_PARAM "ComparisonOperator %s is not valid for %s AttributeValue type",
                        lops[op].name, legacy_type_names[t0]);
    if (op == OP_BETWEEN && lv_greater(t0, jd_array_get(args, 0), jd_array_get(args, 1)))
        return kura_err(KURA_E_INVALID, "The BETWEEN condition was provided a range where the "
                                        "lower bound is greater than the upper bound");
    return KURA_OK;
}

/* Parses the ComparisonOperator member `v` of the condition on `attr` in `param` (its name
 * in messages: "expected", "queryFilter"...). */
static kura_status lop_parse(const jd_t *v, const char *param, const char *attr, int *op_out)
{
    if (!v)
        return kura_err(KURA_E_INVALID,
                        "1 validation error detected: Value null at '%s.%s.member."
                        "comparisonOperator' failed to satisfy constraint: Member must not be null",
                        param, attr);
    if (!jd_is_string(v)) return legacy_type_error(v, "String");
    for (int op = 0; op < OP_COUNT; op++) {
        if (!strcmp(jd_string_value(v), lops[op].name)) {
            *op_out = op;
            return KURA_OK;
        }
    }
    return kura_err(
        KURA_E_INVALID,
        "1 validation error detected: Value '%s' at '%s.%s.member.comparisonOperator' "
        "failed to satisfy constraint: Member must satisfy enum value set: " LMSG_OP_ENUM,
        jd_string_value(v), param, attr);
}

/* ---- Conditions ----------------------------------------------------------------------------- */

/* Writes the expression of `attr <op> args` to `out`. */
static kura_status lterm_emit(legacy_gen *g, int op, const char *attr, size_t attr_len,
                              jd_t *args, kbuf *out)
{
    char n[LPH_MAX], v[LPH_MAX], w[LPH_MAX];
    kura_status st = legacy_gen_name(g, attr, attr_len, n);
    size_t nargs = jd_array_size(args);
    if (!st && nargs > 0 && op != OP_IN) st = legacy_gen_value(g, jd_array_get(args, 0), v);
    if (!st && op == OP_BETWEEN) st = legacy_gen_value(g, jd_array_get(args, 1), w);
    if (st) return st;
    bool ok;
    switch (op) {
    case OP_NOT_NULL:
        ok = legacy_putf(out, "attribute_exists(%s)", n);
        break;
    case OP_NULL:
        ok = legacy_putf(out, "attribute_not_exists(%s)", n);
        break;
    case OP_CONTAINS:
        ok = legacy_putf(out, "contains(%s, %s)", n, v);
        break;
    case OP_NOT_CONTAINS:
        ok = legacy_putf(out, "attribute_exists(%s) AND NOT contains(%s, %s)", n, n, v);
        break;
    case OP_BEGINS_WITH:
        ok = legacy_putf(out, "begins_with(%s, %s)", n, v);
        break;
    case OP_BETWEEN:
        ok = legacy_putf(out, "%s BETWEEN %s AND %s", n, v, w);
        break;
    case OP_IN:
        ok = legacy_putf(out, "%s IN (", n);
        for (size_t i = 0; ok && i < nargs; i++) {
            if ((st = legacy_gen_value(g, jd_array_get(args, i), v)) != KURA_OK) return st;
            ok = legacy_putf(out, "%s%s", i ? ", " : "", v);
        }
        ok = ok && legacy_put(out, ")");
        break;
    default:
        ok = legacy_putf(out, "%s %s %s", n, lops[op].cmp, v);
        break;
    }
    return ok ? KURA_OK : legacy_nomem();
}

/* The operator and argument list (a node of cond's document) of a QueryFilter, ScanFilter or
 * KeyConditions entry. */
static kura_status lcond_parse(legacy_cond_kind kind, const char *param, const char *attr,
                               const jd_t *cond, int *op_out, jd_t **args_out)
{
    if (!jd_is_object(cond)) return legacy_type_error(cond, "Map");
    int op;
    kura_status st = lop_parse(legacy_get(cond, "ComparisonOperator"), param, attr, &op);
    jd_t *avl = legacy_get(cond, "AttributeValueList");
    if (st) return st;
    if (avl && !jd_is_array(avl)) return legacy_type_error(avl, "List");
    if ((st = lop_check_args(op, avl)) != KURA_OK) return st;
    if (kind == LC_KEY && !lops[op].key_ok)
        return kura_err(KURA_E_INVALID,
                        "Attempted conditional constraint is not an indexable operation");
    *op_out = op;
    *args_out = avl ? avl : jd_array(jd_doc_of(cond));
    return *args_out ? KURA_OK : legacy_nomem();
}

/* The operator and argument list (a node of cond's document) of an Expected entry, with its
 * Exists / Value / AttributeValueList / ComparisonOperator rules. */
static kura_status lexpected_parse(const char *attr, const jd_t *cond, int *op_out,
                                   jd_t **args_out)
{
    if (!jd_is_object(cond)) return legacy_type_error(cond, "Map");
    jd_t *value = legacy_get(cond, "Value"), *avl = legacy_get(cond, "AttributeValueList");
    jd_t *opv = legacy_get(cond, "ComparisonOperator"), *exists = legacy_get(cond, "Exists");
    int op;
    kura_status st;
    if (avl && value)
        return kura_err(KURA_E_INVALID,
                        LMSG_PARAM "Value and AttributeValueList cannot be used "
                                   "together for Attribute: %s",
                        attr);
    if (avl && !jd_is_array(avl)) return legacy_type_error(avl, "List");
    if (exists && !jd_is_boolean(exists)) return legacy_type_error(exists, "Boolean");
    if (opv) {
        if ((st = lop_parse(opv, "expected", attr, &op)) != KURA_OK) return st;
        if (exists)
            return kura_err(KURA_E_INVALID,
                            LMSG_PARAM "Exists and ComparisonOperator cannot be "
                                       "used together for Attribute: %s",
                            attr);
        if (op != OP_NULL && op != OP_NOT_NULL && !avl && !value)
            return kura_err(KURA_E_INVALID,
                            LMSG_PARAM "Value or AttributeValueList must be used with "
                                       "ComparisonOperator: %s for Attribute: %s",
                            lops[op].name, attr);
    } else if (avl) {
        return kura_err(KURA_E_INVALID,
                        LMSG_PARAM "AttributeValueList can only be used with a "
                                   "ComparisonOperator for Attribute: %s",
                        attr);
    } else {
        bool want_exists = !exists || jd_is_true(exists);
        if (want_exists && !value)
            return kura_err(KURA_E_INVALID,
                            LMSG_PARAM "Value must be provided when Exists is %s "
                                       "for Attribute: %s",
                            exists ? "true" : "null", attr);
        if (!want_exists && value)
            return kura_err(KURA_E_INVALID,
                            LMSG_PARAM "Value cannot be used when Exists is "
                                       "false for Attribute: %s",
                            attr);
        op = value ? OP_EQ : OP_NULL;
    }
    jd_t *args = avl ? avl : jd_array(jd_doc_of(cond));
    if (!args || (value && jd_array_append(args, value)))
        st = legacy_nomem();
    else
        st = lop_check_args(op, args);
    if (st) return st;
    *op_out = op;
    *args_out = args;
    return KURA_OK;
}

/* Translates the conditions of map `conds` (named `param` in messages) into one expression in
 * `out`: AND of all of them, or OR when `any`; key conditions are never parenthesized. */
kura_status legacy_conds_translate(legacy_gen *g, legacy_cond_kind kind, const char *param,
                                   const jd_t *conds, bool any, kbuf *out)
{
    if (!jd_is_object(conds)) return legacy_type_error(conds, "Map");
    bool wrap = kind != LC_KEY && jd_object_size(conds) > 1;
    const char *attr;
    size_t attr_len;
    jd_t *cond;
    jd_object_keylen_foreach((jd_t *)conds, attr, attr_len, cond)
    {
        int op = OP_EQ;
        jd_t *args = NULL;
        kura_status st = kind == LC_EXPECTED ? lexpected_parse(attr, cond, &op, &args)
                                             : lcond_parse(kind, param, attr, cond, &op, &args);
        if (st) return st;
        bool ok = (!out->len || legacy_put(out, any ? " OR " : " AND ")) &&
                  (!wrap || legacy_put(out, "("));
        st = ok ? lterm_emit(g, op, attr, attr_len, args, out) : legacy_nomem();
        if (!st && wrap && !legacy_put(out, ")")) st = legacy_nomem();
        if (st) return st;
    }
    if (kind == LC_KEY && jd_object_size(conds) != 1 && jd_object_size(conds) != 2)
        return kura_err(KURA_E_INVALID, "Conditions can be of length 1 or 2 only");
    return KURA_OK;
}

/*
 * schema_types.c - This file contains the first request check of api/schema.h: the
 * deserializer's type check (SerializationException), with the request normalisation it
 * implies, walking the operation's input shape in the generated model (api/model.h), and the
 * table of attribute values it uses for those. The constraint check is validate.c.
 *
 * The messages are DynamoDB's, as collected by dynalite (validations/index.js): what DynamoDB's
 * Java deserializer says for each JSON type given to each Java type. The Java type of a list,
 * map or structure depends on where the shape is used (api_type), which the walk knows.
 */
#include "api/model.h"
#include "api/schema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

#define MSG_START_OF_STRUCT "Start of structure or map found where not expected"
#define MSG_PARAM_TYPE                                                                             \
    "class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to "        \
    "class java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and "     \
    "java.lang.Class are in module java.base of loader 'bootstrap')"
#define MODEL_PREFIX "com.amazonaws.dynamodb.v20120810."

/* ---- Attribute values: AttrStruct<ValueStruct> -------------------------------------------- */

#define attr_fields api_attr_fields
static const api_field attr_blob = {.name = "member", .type = AT_BLOB};
static const api_field attr_string = {.name = "member", .type = AT_STRING};
const api_field api_attr_value = {
    .name = "member", .type = AT_VSTRUCT, .subtype = "AttributeValue", .fields = attr_fields};
const api_field api_attr_field = {
    .name = "member", .type = AT_FSTRUCT, .subtype = "AttributeValue", .fields = attr_fields};
const api_field api_attr_map = {
    .name = "member", .type = AT_MAP, .subtype = "AttributeValue", .elem = &api_attr_value};
/* The order of dynalite's AttrStruct children, which decides the first error reported. */
const api_field attr_fields[] = {
    {.name = "S", .type = AT_STRING},
    {.name = "B", .type = AT_BLOB},
    {.name = "N", .type = AT_STRING},
    {.name = "BOOL", .type = AT_BOOLEAN},
    {.name = "NULL", .type = AT_BOOLEAN},
    {.name = "BS", .type = AT_LIST, .elem = &attr_blob},
    {.name = "NS", .type = AT_LIST, .elem = &attr_string},
    {.name = "SS", .type = AT_LIST, .elem = &attr_string},
    {.name = "L", .type = AT_LIST, .elem = &api_attr_value},
    {.name = "M", .type = AT_MAP, .subtype = "AttributeValue", .elem = &api_attr_value},
    {.name = NULL},
};

/* ---- Pass 1: types ---------------------------------------------------------------------- */

static kura_status ser(const char *fmt, const char *arg)
{
    return api_err(KURA_E_INVALID, fmt, arg);
}

size_t api_utf16_len(const char *s, size_t n)
{
    size_t units = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80) units += c >= 0xF0 ? 2 : 1;
    }
    return units;
}

static const char *number_kind(const jd_t *v)
{
    if (jd_is_integer(v)) return "NUMBER_VALUE";
    double d = jd_real_value(v);
    return d == floor(d) ? "NUMBER_VALUE" : "DECIMAL_VALUE";
}

/* The messages shared by the scalar types for a value of the wrong JSON type. */
static kura_status scalar_mismatch(const jd_t *v, const char *java, const char *short_name)
{
    if (jd_is_object(v)) return ser("%s", MSG_START_OF_STRUCT);
    if (jd_is_array(v)) return ser("Unrecognized collection type class java.lang.%s", java);
    if (jd_is_boolean(v))
        return api_err(KURA_E_INVALID, "%s cannot be converted to %s",
                       jd_is_true(v) ? "TRUE_VALUE" : "FALSE_VALUE", short_name);
    if (jd_is_number(v))
        return api_err(KURA_E_INVALID, "%s cannot be converted to %s", number_kind(v), short_name);
    return api_err(KURA_E_INVALID, "STRING_VALUE cannot be converted to %s", short_name);
}

static kura_status check_boolean(jd_t *v, jd_t **repl)
{
    if (jd_is_boolean(v)) return KURA_OK;
    if (!jd_is_string(v)) return scalar_mismatch(v, "Boolean", "Boolean");
    const char *s = jd_string_value(v);
    static const char *const yes[] = {"true", "1", "yes"}, *const no[] = {"false", "0", "no"};
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(s, yes[i]) == 0 && strlen(s) == jd_string_length(v))
            return (*repl = jd_true(jd_doc_of(v))) ? KURA_OK : KURA_E_NOMEM;
        if (strcasecmp(s, no[i]) == 0 && strlen(s) == jd_string_length(v))
            return (*repl = jd_false(jd_doc_of(v))) ? KURA_OK : KURA_E_NOMEM;
    }
    return ser("%s", "Unexpected token received from parser");
}

static kura_status check_integer(jd_t *v, const char *java, jd_t **repl)
{
    if (jd_is_integer(v)) return KURA_OK;
    if (!jd_is_real(v)) return scalar_mismatch(v, java, java);
    double d = floor(jd_real_value(v));
    jd_int_t i = d >= 9.2e18    ? (jd_int_t)9200000000000000000LL
                 : d <= -9.2e18 ? -(jd_int_t)9200000000000000000LL
                                : (jd_int_t)d;
    return (*repl = jd_integer(jd_doc_of(v), i)) ? KURA_OK : api_err(KURA_E_NOMEM, "out of memory");
}

/* 1 + the value of each base64 character; 0 for the others. */
static const uint8_t b64_value[256] = {
    ['A'] = 1,  ['B'] = 2,  ['C'] = 3,  ['D'] = 4,  ['E'] = 5,  ['F'] = 6,  ['G'] = 7,  ['H'] = 8,
    ['I'] = 9,  ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14, ['O'] = 15, ['P'] = 16,
    ['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24,
    ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32,
    ['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40,
    ['o'] = 41, ['p'] = 42, ['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48,
    ['w'] = 49, ['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
    ['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63, ['/'] = 64,
};

/* Whether s[0..n) is all base64 characters (a table, not branches: blobs are long and random). */
static bool b64_chars(const unsigned char *s, size_t n)
{
    uint8_t missing = 0;
    for (size_t i = 0; i < n; i++)
        missing |= (uint8_t)(b64_value[s[i]] == 0);
    return missing == 0;
}

/* A Blob must be canonical base64: decoding and re-encoding gives the same text, that is,
 * only the alphabet, at most two '=' and only at the end, and the bits below the last
 * character's share of the last byte all zero. */
static kura_status check_blob(const jd_t *v)
{
    if (jd_is_boolean(v) || jd_is_number(v))
        return ser("%s", "only base-64-encoded strings are convertible to bytes");
    if (jd_is_object(v)) return ser("%s", MSG_START_OF_STRUCT);
    if (jd_is_array(v)) return ser("%s", "Unrecognized collection type class java.nio.ByteBuffer");
    const unsigned char *s = (const unsigned char *)jd_string_value(v);
    size_t n = jd_string_length(v);
    size_t pad = n < 4 || n % 4 || s[n - 1] != '=' ? 0 : s[n - 2] != '=' ? 1 : 2;
    bool ok = b64_chars(s, n - pad); /* also: all ASCII, so n UTF-16 units */
    size_t units = ok ? n : api_utf16_len((const char *)s, n);
    if (units % 4)
        return api_err(KURA_E_INVALID,
                       "Base64 encoded length is expected a multiple of 4 bytes but found: %zu",
                       units);
    if (ok && pad) ok = ((b64_value[s[n - pad - 1]] - 1) & (pad == 1 ? 0x3 : 0xF)) == 0;
    return ok || n == 0 ? KURA_OK : ser("%s", "Invalid last non-pad Base64 character dectected");
}

static kura_status check_value(jd_t *v, const api_field *f, jd_t **repl, int depth);

/* The members of an attribute value (api_attr_fields), and at most those of a structure of the
 * model (64, gen_model.py) with kura's extension members. */
#define ATTR_FIELDS 10
#define MAX_FIELDS 80
/* How deep the type check goes (values within values). A request's own structure is at most
 * ~10 levels deep and an attribute value adds two per level of maps or lists, so this reaches
 * past DynamoDB's 32 levels; deeper parts are not type-checked, because the value is refused
 * as too deeply nested anyway ("Nesting Levels have exceeded supported limits"). The bound
 * keeps the recursion off the end of a serving thread's stack: a body may nest 2,048 JSON
 * levels (api_stack_test). */
#define CHECK_MAX_DEPTH 96

/* The message of a list, map or structure given a value of another JSON type (*done set), or
 * KURA_OK with *done false when v is of the container's own JSON type. `type`: the container
 * as Java sees it where it is used (AT_PLIST/AT_PMAP: a parameterized type; AT_VSTRUCT: a
 * structure that is a value, not a member); `java`: the map's value type or the structure's
 * class, which arrays are answered with. */
static kura_status container_mismatch(const jd_t *v, api_type type, const char *java, bool *done)
{
    bool scalar = jd_is_string(v) || jd_is_number(v) || jd_is_boolean(v);
    *done = true;
    switch (type) {
    case AT_LIST:
    case AT_PLIST:
        if (scalar) return ser("%s", type == AT_LIST ? "Unexpected field type" : MSG_PARAM_TYPE);
        if (jd_is_object(v)) return ser("%s", MSG_START_OF_STRUCT);
        break;
    case AT_MAP:
    case AT_PMAP:
        if (scalar) return ser("%s", type == AT_MAP ? "Unexpected field type" : MSG_PARAM_TYPE);
        if (jd_is_array(v))
            return api_err(KURA_E_INVALID,
                           "Unrecognized collection type java.util.Map<java.lang.String, %s%s>",
                           strchr(java, '.') ? "" : MODEL_PREFIX, java);
        break;
    default: /* a structure */
        if (scalar)
            return ser("%s", type == AT_VSTRUCT ? "Unexpected value type in payload"
                                                : "Unexpected field type");
        if (jd_is_array(v))
            return ser("Unrecognized collection type class " MODEL_PREFIX "%s", java);
        break;
    }
    *done = false;
    return KURA_OK;
}

/* The scalar types' checks, shared by attribute values and the model's shapes. */
static kura_status check_scalar(jd_t *v, api_type type, jd_t **repl)
{
    switch (type) {
    case AT_STRING:
        return jd_is_string(v) ? KURA_OK : scalar_mismatch(v, "String", "String");
    case AT_BOOLEAN:
        return check_boolean(v, repl);
    case AT_INTEGER:
        return check_integer(v, "Integer", repl);
    case AT_LONG:
        return check_integer(v, "Long", repl);
    default:
        return check_blob(v);
    }
}

/* ---- Attribute values: the api_field tables above ---------------------------------------- */

/* The position of member `key` (key_len bytes, which may hold a NUL) in `fields`, or -1 when
 * it is not one of them. */
static int field_index(const api_field *fields, const char *key, size_t key_len)
{
    for (int i = 0; fields[i].name; i++)
        if (fields[i].name[0] == key[0] && strlen(fields[i].name) == key_len &&
            memcmp(fields[i].name, key, key_len) == 0)
            return i;
    return -1;
}

/* Removes unknown and null members, then checks the known ones in table order. */
static kura_status check_struct(jd_t *obj, const api_field *fields, int depth)
{
    jd_t *present[ATTR_FIELDS] = {NULL};
    const char *key;
    size_t key_len;
    jd_t *val;
    jd_object_keylen_foreach(obj, key, key_len, val)
    {
        int i = key_len ? field_index(fields, key, key_len) : -1;
        if (i < 0 || jd_is_null(val))
            jd_object_deln(obj, key, key_len);
        else
            present[i] = val;
    }
    for (int i = 0; fields[i].name; i++) {
        jd_t *repl = NULL;
        if (!present[i]) continue;
        kura_status s = check_value(present[i], &fields[i], &repl, depth + 1);
        if (s != KURA_OK) return s;
        if (repl && jd_object_set(obj, fields[i].name, repl) != 0)
            return api_err(KURA_E_NOMEM, "out of memory");
    }
    return KURA_OK;
}

static kura_status check_elements(jd_t *v, const api_field *elem, int depth)
{
    if (jd_is_array(v)) {
        for (size_t i = 0; i < jd_array_size(v); i++) {
            jd_t *repl = NULL;
            kura_status s = check_value(jd_array_get(v, i), elem, &repl, depth + 1);
            if (s != KURA_OK) return s;
            if (repl && jd_array_set(v, i, repl) != 0)
                return api_err(KURA_E_NOMEM, "out of memory");
        }
        return KURA_OK;
    }
    const char *key;
    size_t key_len;
    jd_t *val;
    jd_object_keylen_foreach(v, key, key_len, val)
    {
        jd_t *repl = NULL;
        kura_status s = check_value(val, elem, &repl, depth + 1);
        if (s != KURA_OK) return s;
        if (repl && jd_object_setn(v, key, key_len, repl) != 0)
            return api_err(KURA_E_NOMEM, "out of memory");
    }
    return KURA_OK;
}

static kura_status check_value(jd_t *v, const api_field *f, jd_t **repl, int depth)
{
    if (depth > CHECK_MAX_DEPTH)
        return KURA_OK; /* a value this deep is refused later, as too deeply nested */
    if (jd_is_null(v)) return KURA_OK;
    if (f->type < AT_LIST) return check_scalar(v, f->type, repl);
    bool done;
    kura_status s = container_mismatch(v, f->type, f->subtype, &done);
    if (done) return s;
    if (f->type == AT_VSTRUCT || f->type == AT_FSTRUCT) return check_struct(v, f->fields, depth);
    return check_elements(v, f->elem, depth);
}

kura_status api_check_value(jd_t **slot, const api_field *f)
{
    jd_t *repl = NULL;
    kura_status s = check_value(*slot, f, &repl, 0);
    if (s == KURA_OK && repl) *slot = repl;
    return s;
}

/* ---- Requests: the generated model (api/model.h) ----------------------------------------- */

/* Where a value sits, which decides the deserializer's messages for lists, maps and
 * structures (api_type's P and V/F variants). */
typedef enum place { PLACE_MEMBER, PLACE_ELEMENT, PLACE_MAP_VALUE } place;

static kura_status walk_value(jd_t *v, unsigned sid, place at, jd_t **repl, int depth);

/* The Java type of shape `sid` as a map's value type is printed: "java.lang.String",
 * "java.util.List<...WriteRequest>", or a structure's class name (without MODEL_PREFIX). */
static const char *java_name(unsigned sid, char *buf, size_t size)
{
    const model_shape *sh = &model_shapes[sid];
    switch (sh->type) {
    case MT_STRING:
        return "java.lang.String";
    case MT_LIST:
        snprintf(buf, size, "java.util.List<" MODEL_PREFIX "%s>", model_shapes[sh->a].name);
        return buf;
    case MT_BOOLEAN:
        return "java.lang.Boolean";
    case MT_INTEGER:
        return "java.lang.Integer";
    case MT_LONG:
        return "java.lang.Long";
    default:
        return sh->name;
    }
}

/* Removes unknown and null members of a structure, then checks the known ones in pass 1's
 * order (model_typed). */
static kura_status walk_struct(jd_t *obj, const model_shape *sh, int depth)
{
    jd_t *present[MAX_FIELDS];
    const uint16_t *typed = &model_typed[sh->e];
    if (sh->f > MAX_FIELDS)
        return api_err(KURA_E_INVALID, "internal: %s has more than %d members", sh->name,
                       MAX_FIELDS);
    memset(present, 0, sh->f * sizeof present[0]);
    const char *key;
    size_t key_len;
    jd_t *val;
    jd_object_keylen_foreach(obj, key, key_len, val)
    {
        int i = sh->f - 1;
        for (; i >= 0 && !jd_is_null(val); i--) {
            const model_member *m = &model_members[typed[i]];
            if (m->name_len == key_len && memcmp(m->name, key, key_len) == 0) break;
        }
        if (i < 0 || jd_is_null(val))
            jd_object_deln(obj, key, key_len);
        else
            present[i] = val;
    }
    for (unsigned i = 0; i < sh->f; i++) {
        jd_t *repl = NULL;
        if (!present[i]) continue;
        const model_member *m = &model_members[typed[i]];
        kura_status s = walk_value(present[i], m->shape, PLACE_MEMBER, &repl, depth + 1);
        if (s != KURA_OK) return s;
        if (repl && jd_object_set(obj, m->name, repl) != 0) return API_NOMEM();
    }
    return KURA_OK;
}

/* A list's elements or a map's values, each of shape `sid`. */
static kura_status walk_elements(jd_t *v, unsigned sid, int depth)
{
    if (jd_is_array(v)) {
        for (size_t i = 0; i < jd_array_size(v); i++) {
            jd_t *repl = NULL;
            kura_status s = walk_value(jd_array_get(v, i), sid, PLACE_ELEMENT, &repl, depth + 1);
            if (s != KURA_OK) return s;
            if (repl && jd_array_set(v, i, repl) != 0) return API_NOMEM();
        }
        return KURA_OK;
    }
    const char *key;
    size_t key_len;
    jd_t *val;
    jd_object_keylen_foreach(v, key, key_len, val)
    {
        jd_t *repl = NULL;
        kura_status s = walk_value(val, sid, PLACE_MAP_VALUE, &repl, depth + 1);
        if (s != KURA_OK) return s;
        if (repl && jd_object_setn(v, key, key_len, repl) != 0) return API_NOMEM();
    }
    return KURA_OK;
}

/* Numbers of the shapes no operation kura implements takes (Double, a timestamp as epoch
 * seconds): any JSON number. */
static kura_status check_number(const jd_t *v, const char *java)
{
    return jd_is_number(v) ? KURA_OK : scalar_mismatch(v, java, java);
}

static kura_status walk_value(jd_t *v, unsigned sid, place at, jd_t **repl, int depth)
{
    static const api_type scalars[] = {[MT_STRING] = AT_STRING,
                                       [MT_BOOLEAN] = AT_BOOLEAN,
                                       [MT_INTEGER] = AT_INTEGER,
                                       [MT_LONG] = AT_LONG,
                                       [MT_BLOB] = AT_BLOB};
    const model_shape *sh = &model_shapes[sid];
    if (depth > CHECK_MAX_DEPTH) return KURA_OK; /* as check_value */
    if (jd_is_null(v)) return KURA_OK;
    if (sh->type <= MT_BLOB) return check_scalar(v, scalars[sh->type], repl);
    if (sh->type == MT_DOUBLE) return check_number(v, "Double");
    if (sh->type == MT_TIMESTAMP) return check_number(v, "Date");
    if (sid == model_attribute_value)
        return check_value(v, at == PLACE_MEMBER ? &api_attr_field : &api_attr_value, repl, depth);
    char buf[160];
    api_type type = sh->type == MT_LIST  ? (at == PLACE_MAP_VALUE ? AT_PLIST : AT_LIST)
                    : sh->type == MT_MAP ? (at == PLACE_MEMBER ? AT_MAP : AT_PMAP)
                                         : (at == PLACE_MEMBER ? AT_FSTRUCT : AT_VSTRUCT);
    const char *java = sh->type == MT_MAP ? java_name(sh->b, buf, sizeof buf) : sh->name;
    bool done;
    kura_status s = container_mismatch(v, type, java, &done);
    if (done) return s;
    if (sh->type == MT_STRUCT) return walk_struct(v, sh, depth);
    return walk_elements(v, sh->type == MT_LIST ? sh->a : sh->b, depth);
}

kura_status api_check_types(jd_t *req, const char *operation)
{
    /* a thread serves mostly one operation over and over: skip the search then */
    static _Thread_local const model_op *last_op;
    const model_op *op = last_op && operation && strcmp(operation, last_op->name) == 0
                             ? last_op
                             : model_find_op(operation);
    if (op) last_op = op;
    if (!op) return api_err(KURA_E_NOT_SUPPORTED, "An unknown operation was requested.");
    return walk_struct(req, &model_shapes[op->input], 0);
}

/*
 * validate.c - This file contains the second request check of api/schema.h: a request walked
 * against DynamoDB's model of its operation (api/model.h, generated from botocore's
 * service-2.json), every broken modelled constraint collected into one ValidationException,
 * then the semantic table-name check DynamoDB makes after the modelled ones.
 *
 * The walk (docs/data-model.md, "Request validation"): a structure's members in model order;
 * for each, "Member must not be null" when it is required and absent or null, else the
 * constraints of its shape in the order pattern, enum, length, range, then what is below it:
 * list elements at "<path>.<n>.member" (from 1), map entries at "<path>.<key>.member" after the
 * map's own "Map keys must satisfy constraint: [...]" and "Map value must satisfy constraint:
 * [...]" (which name the whole map, and list all of the key's or value's constraints). A null
 * list element or map value whose shape is a structure, list or map is "Member must not be
 * null". Values whose JSON type is not their shape's are left alone (pass 1 refused them for
 * the operations kura implements). Only shapes with a constraint somewhere below them are
 * walked (MS_CHECKED): of an attribute value only the M and L members are looked at (an
 * attribute name is at most 65,535 characters long). At most 10 violations are reported, and
 * the walk goes at most VLD_MAX_DEPTH levels down (deeper attribute values are refused later
 * as nested too deeply; the bound keeps the walk off the end of a serving thread's stack).
 *
 * Table names: the model types most TableName members as TableArn (1..1024 characters: an
 * ARN is accepted there). A value that is not a table's ARN must also be a table name,
 * 3..255 characters of [a-zA-Z0-9_.-]+: that check comes after the modelled ones (only when
 * they all pass) and is worded as they are; so are CreateTable's need of AttributeDefinitions
 * and KeySchema (the model requires neither) and its key schemas' bound of 2 elements. kura's own
 * request members (KuraPartitions) are checked with the model's. Thread safety: the compiled
 * patterns are made once (pthread_once) and only read after.
 */
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/model.h"
#include "api/schema.h"
#include "api/validate_int.h"

#define MAX_PATTERNS 32

const model_op *model_find_op(const char *name)
{
    unsigned lo = 0, hi = model_op_count;
    while (name && lo < hi) {
        unsigned mid = (lo + hi) / 2;
        int c = strcmp(name, model_ops[mid].name);
        if (c == 0) return &model_ops[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* ---- Patterns ------------------------------------------------------------------------------ */

static regex_t patterns[MAX_PATTERNS];
static bool pattern_compiled[MAX_PATTERNS];
static pthread_once_t patterns_once = PTHREAD_ONCE_INIT;

static void compile_patterns(void)
{
    for (unsigned i = 1; i < model_pattern_count && i < MAX_PATTERNS; i++)
        pattern_compiled[i] =
            regcomp(&patterns[i], model_pattern_eres[i], REG_EXTENDED | REG_NOSUB) == 0;
}

bool vld_pattern_ok(unsigned p, const char *s, size_t n)
{
    pthread_once(&patterns_once, compile_patterns);
    if (p >= MAX_PATTERNS || !pattern_compiled[p]) return false; /* api_validate_test: never */
    regmatch_t range = {.rm_so = 0, .rm_eo = (regoff_t)n};
    return regexec(&patterns[p], s, 1, &range, REG_STARTEND) == 0;
}

/* ---- Constraints of one value -------------------------------------------------------------- */

static size_t value_len(const jd_t *v)
{
    if (jd_is_string(v)) return api_utf16_len(jd_string_value(v), jd_string_length(v));
    return jd_is_array(v) ? jd_array_size(v) : jd_object_size(v);
}

/* Whether the length of s[0..n) in UTF-16 units is below min / above max. A UTF-8 character
 * of b bytes is 1 or 2 units, so n/3 <= units <= n: most strings are decided without
 * counting. */
static bool str_below(const char *s, size_t n, int64_t min)
{
    if ((int64_t)n < min) return true;
    return (int64_t)(n / 3) < min && (int64_t)api_utf16_len(s, n) < min;
}

static bool str_above(const char *s, size_t n, int64_t max)
{
    if ((int64_t)n <= max) return false;
    return (int64_t)(n / 3) > max || (int64_t)api_utf16_len(s, n) > max;
}

static bool below(const jd_t *v, int64_t min)
{
    if (jd_is_string(v)) return str_below(jd_string_value(v), jd_string_length(v), min);
    return (int64_t)value_len(v) < min;
}

static bool above(const jd_t *v, int64_t max)
{
    if (jd_is_string(v)) return str_above(jd_string_value(v), jd_string_length(v), max);
    return (int64_t)value_len(v) > max;
}

static bool fits(const model_shape *sh, const jd_t *v)
{
    switch (sh->type) {
    case MT_STRING:
        return jd_is_string(v);
    case MT_INTEGER:
    case MT_LONG:
        return jd_is_number(v);
    case MT_LIST:
        return jd_is_array(v);
    case MT_MAP:
    case MT_STRUCT:
        return jd_is_object(v);
    default:
        return false;
    }
}

static bool is_container(const model_shape *sh)
{
    return sh->type == MT_STRUCT || sh->type == MT_LIST || sh->type == MT_MAP;
}

/* The enum message of shape sh: "Member must satisfy enum value set: [A, B]". */
static bool enum_msg(kbuf *b, const model_shape *sh)
{
    bool ok = kbuf_append(b, "Member must satisfy enum value set: [", 37);
    for (unsigned i = 0; ok && i < sh->enum_count; i++) {
        const char *e = model_enums[sh->enum_first + i];
        ok = (!i || kbuf_append(b, ", ", 2)) && kbuf_append(b, e, strlen(e));
    }
    return ok && kbuf_put_u8(b, ']');
}

static bool enum_ok(const model_shape *sh, const char *s)
{
    for (unsigned i = 0; i < sh->enum_count; i++)
        if (strcmp(model_enums[sh->enum_first + i], s) == 0) return true;
    return false;
}

/* Reports each constraint of shape sid that v (which fits it) breaks. */
static void own_checks(vld_walk *w, const vld_path *at, const jd_t *v, unsigned sid)
{
    const model_shape *sh = &model_shapes[sid];
    char msg[96];
    if (sh->pattern && !vld_pattern_ok(sh->pattern, jd_string_value(v), jd_string_length(v))) {
        snprintf(msg, sizeof msg, "%s", "Member must satisfy regular expression pattern: ");
        vld_error(w, &w->model, at, v, sid, msg, model_patterns[sh->pattern]);
    }
    if (sh->enum_count && !enum_ok(sh, jd_string_value(v))) {
        kbuf b = KBUF_INIT;
        if (enum_msg(&b, sh) && kbuf_put_u8(&b, '\0'))
            vld_error(w, &w->model, at, v, sid, (const char *)b.data, "");
        else
            w->nomem = true;
        kbuf_free(&b);
    }
    bool number = sh->type == MT_INTEGER || sh->type == MT_LONG;
    double num = number ? (jd_is_integer(v) ? (double)jd_integer_value(v) : jd_real_value(v)) : 0;
    if ((sh->flags & MS_MIN) && (number ? num < (double)sh->min : below(v, sh->min))) {
        snprintf(msg, sizeof msg, "Member must have %s greater than or equal to %lld",
                 number ? "value" : "length", (long long)sh->min);
        vld_error(w, &w->model, at, v, sid, msg, "");
    }
    if ((sh->flags & MS_MAX) && (number ? num > (double)sh->max : above(v, sh->max))) {
        snprintf(msg, sizeof msg, "Member must have %s less than or equal to %lld",
                 number ? "value" : "length", (long long)sh->max);
        vld_error(w, &w->model, at, v, sid, msg, "");
    }
}

/* Whether the string s[0..n) breaks a constraint of shape sid (a map's key shape). */
static bool string_breaks(unsigned sid, const char *s, size_t n)
{
    const model_shape *sh = &model_shapes[sid];
    return (sh->pattern && !vld_pattern_ok(sh->pattern, s, n)) ||
           (sh->enum_count && !enum_ok(sh, s)) ||
           ((sh->flags & MS_MIN) && str_below(s, n, sh->min)) ||
           ((sh->flags & MS_MAX) && str_above(s, n, sh->max));
}

/* Every constraint of shape sid, as a map's key or value check lists them:
 * "[Member must have length less than or equal to 25, Member must have length greater than or
 * equal to 1]". */
static bool constraint_list(kbuf *b, unsigned sid)
{
    const model_shape *sh = &model_shapes[sid];
    char part[96];
    bool first = true, ok = kbuf_put_u8(b, '[');
    if (ok && (sh->flags & MS_MAX)) {
        snprintf(part, sizeof part, "Member must have length less than or equal to %lld",
                 (long long)sh->max);
        ok = kbuf_append(b, part, strlen(part));
        first = false;
    }
    if (ok && (sh->flags & MS_MIN)) {
        snprintf(part, sizeof part, "%sMember must have length greater than or equal to %lld",
                 first ? "" : ", ", (long long)sh->min);
        ok = kbuf_append(b, part, strlen(part));
        first = false;
    }
    if (ok && sh->pattern) {
        const char *p = model_patterns[sh->pattern];
        snprintf(part, sizeof part,
                 "%sMember must satisfy regular expression pattern: ", first ? "" : ", ");
        ok = kbuf_append(b, part, strlen(part)) && kbuf_append(b, p, strlen(p));
        first = false;
    }
    if (ok && sh->enum_count) ok = (first || kbuf_append(b, ", ", 2)) && enum_msg(b, sh);
    return ok && kbuf_append(b, "]", 2); /* with the NUL */
}

/* ---- Table names --------------------------------------------------------------------------- */

static bool name_chars_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return n > 0;
}

/* A table's ARN, arn:aws:dynamodb:<region>:<digits>:table/<name> with a valid name (3..255
 * of the name pattern; engine/arn.h); any other value, an index's or a stream's ARN included,
 * is held to the table name's rules as a whole (api_table_name resolves the ARN later, in the
 * request's scope). scripts/gen_model.py's TABLE_ARN_RE is the same rule. */
static bool is_arn(const char *s, size_t n)
{
    arn_parts p;
    if (n < 4 || memcmp(s, "arn:", 4) != 0 || strlen(s) != n || !arn_split(s, &p) || p.rest)
        return false;
    return p.table_len >= 3 && p.table_len <= 255 && name_chars_ok(p.table, p.table_len);
}

/* The semantic check of a table name given where the model accepts a name or an ARN. */
static void name_checks(vld_walk *w, const vld_path *at, const jd_t *v, unsigned sid)
{
    const char *s = jd_string_value(v);
    size_t n = jd_string_length(v);
    if (is_arn(s, n)) return;
    bool chars_ok = name_chars_ok(s, n);
    size_t len = chars_ok ? n : api_utf16_len(s, n); /* ASCII: a unit a byte */
    if (!chars_ok) vld_error(w, &w->semantic, at, v, sid, API_MSG_NAME_PATTERN, "");
    if (len < 3)
        vld_error(w, &w->semantic, at, v, sid, "Member must have length greater than or equal to 3",
                  "");
    if (len > 255)
        vld_error(w, &w->semantic, at, v, sid, "Member must have length less than or equal to 255",
                  "");
}

#define MSG_NAME_KEYS                                                                              \
    "Map keys must satisfy constraint: [Member must have length less than or equal to 255, "       \
    "Member must have length greater than or equal to 3, " API_MSG_NAME_PATTERN "]"

/* ---- The walk ------------------------------------------------------------------------------ */

static void walk_value(vld_walk *w, const vld_path *at, const jd_t *v, unsigned sid, bool own);

#define MAX_MEMBERS 64 /* of one structure (scripts/gen_model.py checks) */

/* The position in shape sh's walked members (model_walked) of the one named key[0..len), or
 * -1. */
static int walked_member(const model_shape *sh, const char *key, size_t len)
{
    for (unsigned i = 0; i < sh->d; i++) {
        const model_member *m = &model_members[model_walked[sh->c + i]];
        if (m->name_len == len && memcmp(m->name, key, len) == 0) return (int)i;
    }
    return -1;
}

static void walk_struct(vld_walk *w, const vld_path *parent, const jd_t *obj, unsigned sid)
{
    const model_shape *sh = &model_shapes[sid];
    if (!sh->d) return;
    /* one pass over the request's members (few) rather than a lookup per model member */
    const jd_t *present[MAX_MEMBERS];
    memset(present, 0, sh->d * sizeof present[0]);
    const char *key;
    size_t key_len;
    const jd_t *val;
    jd_object_keylen_foreach((jd_t *)obj, key, key_len, val)
    {
        int i = walked_member(sh, key, key_len);
        if (i >= 0) present[i] = val;
    }
    for (unsigned i = 0; i < sh->d && w->model.n < VLD_MAX_ERRORS; i++) {
        const model_member *m = &model_members[model_walked[sh->c + i]];
        const jd_t *v = present[i];
        vld_path at = {parent, m->name, NULL, 0};
        if (!v || jd_is_null(v)) {
            if (m->flags & MM_REQUIRED)
                vld_error(w, &w->model, &at, NULL, m->shape, "Member must not be null", "");
            continue;
        }
        if (m->flags & MM_CHECKED) walk_value(w, &at, v, m->shape, true);
    }
}

/* A list element or map value at `at`. */
static void walk_element(vld_walk *w, const vld_path *at, const jd_t *v, unsigned sid, bool own)
{
    if (!v || jd_is_null(v)) {
        if (is_container(&model_shapes[sid]))
            vld_error(w, &w->model, at, NULL, sid, "Member must not be null", "");
        return;
    }
    walk_value(w, at, v, sid, own);
}

static void map_entry_checks(vld_walk *w, const vld_path *at, const jd_t *map, unsigned sid)
{
    const model_shape *sh = &model_shapes[sid];
    const model_shape *ks = &model_shapes[sh->a], *vs = &model_shapes[sh->b];
    const char *key;
    size_t key_len;
    const jd_t *val;
    bool key_checks = ks->pattern || ks->enum_count || (ks->flags & (MS_MIN | MS_MAX));
    bool name_keys = ks->flags & MS_TABLE_NAME;
    bool value_checks = vs->pattern || vs->enum_count || (vs->flags & (MS_MIN | MS_MAX));
    kbuf list = KBUF_INIT;
    jd_object_keylen_foreach((jd_t *)map, key, key_len, val)
    {
        if (key_checks && string_breaks(sh->a, key, key_len)) {
            if (!list.len && !constraint_list(&list, sh->a)) w->nomem = true;
            if (list.len)
                vld_error(w, &w->model, at, map, sid,
                          "Map keys must satisfy constraint: ", (const char *)list.data);
        }
        /* a key of name characters is ASCII: a unit a byte */
        if (name_keys && !is_arn(key, key_len) &&
            (!name_chars_ok(key, key_len) || key_len < 3 || key_len > 255))
            vld_error(w, &w->semantic, at, map, sid, MSG_NAME_KEYS, "");
    }
    kbuf_clear(&list);
    if (value_checks) {
        jd_object_keylen_foreach((jd_t *)map, key, key_len, val)
        {
            vld_walk probe = {.quiet = true};
            vld_path none = {NULL, "", NULL, 0};
            if (!val || !fits(vs, val)) continue;
            own_checks(&probe, &none, val, sh->b);
            if (!probe.model.n) continue;
            if (!list.len && !constraint_list(&list, sh->b)) w->nomem = true;
            if (list.len)
                vld_error(w, &w->model, at, map, sid,
                          "Map value must satisfy constraint: ", (const char *)list.data);
        }
    }
    kbuf_free(&list);
}

static void walk_children(vld_walk *w, const vld_path *at, const jd_t *v, unsigned sid)
{
    const model_shape *sh = &model_shapes[sid];
    if (sh->type == MT_STRUCT) {
        walk_struct(w, at, v, sid);
    } else if (sh->type == MT_LIST) {
        if (!(model_shapes[sh->a].flags & MS_CHECKED)) return;
        for (size_t i = 0; i < jd_array_size(v) && w->model.n < VLD_MAX_ERRORS; i++) {
            vld_path pos = {at, NULL, NULL, i + 1}, el = {&pos, "member", NULL, 0};
            walk_element(w, &el, jd_array_get(v, i), sh->a, true);
        }
    } else if (sh->type == MT_MAP) {
        map_entry_checks(w, at, v, sid);
        if (!(model_shapes[sh->b].flags & MS_CHECKED)) return;
        const char *key;
        const jd_t *val;
        jd_object_foreach((jd_t *)v, key, val)
        {
            if (w->model.n >= VLD_MAX_ERRORS) break;
            vld_path pos = {at, NULL, key, 0}, el = {&pos, "member", NULL, 0};
            walk_element(w, &el, val, sh->b, false);
        }
    }
}

static void walk_value(vld_walk *w, const vld_path *at, const jd_t *v, unsigned sid, bool own)
{
    const model_shape *sh = &model_shapes[sid];
    if (w->model.n >= VLD_MAX_ERRORS || !fits(sh, v)) return;
    if (own) {
        own_checks(w, at, v, sid);
        if ((sh->flags & MS_TABLE_NAME) && jd_is_string(v)) name_checks(w, at, v, sid);
    }
    if (w->depth >= VLD_MAX_DEPTH) return; /* refused later as too deeply nested */
    w->depth++;
    walk_children(w, at, v, sid);
    w->depth--;
}

/* ---- kura's own members and semantic checks ------------------------------------------------ */

/* Members kura adds to an operation (not in DynamoDB's model), checked after the model's as if
 * the model ended with them. */
static const struct {
    const char *op, *member;
    int64_t min, max;
} extensions[] = {
    {"CreateTable", "KuraPartitions", 1, 256}, /* the table's hash partitions (req_tables.c) */
};

static void extension_checks(vld_walk *w, const char *operation, const jd_t *req)
{
    char msg[96];
    for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++) {
        const jd_t *v = strcmp(extensions[i].op, operation) == 0
                            ? jd_object_get(req, extensions[i].member)
                            : NULL;
        if (!jd_is_number(v)) continue;
        double num = jd_is_integer(v) ? (double)jd_integer_value(v) : jd_real_value(v);
        vld_path at = {NULL, extensions[i].member, NULL, 0};
        bool low = num < (double)extensions[i].min;
        if (!low && num <= (double)extensions[i].max) continue;
        snprintf(msg, sizeof msg, "Member must have value %s than or equal to %lld",
                 low ? "greater" : "less",
                 (long long)(low ? extensions[i].min : extensions[i].max));
        vld_error(w, &w->model, &at, v, 0, msg, "");
    }
}

/* The shape of member `name` of structure shape sid (0 when it has none). */
static unsigned member_shape(unsigned sid, const char *name)
{
    const model_shape *sh = &model_shapes[sid];
    for (unsigned i = 0; i < sh->b; i++)
        if (strcmp(model_members[sh->a + i].name, name) == 0) return model_members[sh->a + i].shape;
    return 0;
}

#define MSG_KEYS_MAX_2 "Member must have length less than or equal to 2"

/* CreateTable: the model requires only TableName (a replica table may be made from
 * GlobalTableSourceArn); any other table needs AttributeDefinitions and KeySchema. The model
 * no longer bounds a key schema (a global secondary index may have multi-attribute keys); a
 * table's and a local secondary index's have at most 2 elements. Checked after the modelled
 * constraints and worded as they are. */
static void create_table_checks(vld_walk *w, const jd_t *req, unsigned input)
{
    static const char *const members[] = {"AttributeDefinitions", "KeySchema"};
    if (jd_object_get(req, "GlobalTableSourceArn")) return;
    for (size_t i = 0; i < 2; i++) {
        const jd_t *v = jd_object_get(req, members[i]);
        vld_path at = {NULL, members[i], NULL, 0};
        if (!v || jd_is_null(v))
            vld_error(w, &w->semantic, &at, NULL, 0, "Member must not be null", "");
    }
    unsigned keys = member_shape(input, "KeySchema");
    const jd_t *ks = jd_object_get(req, "KeySchema");
    vld_path at = {NULL, "KeySchema", NULL, 0};
    if (jd_is_array(ks) && jd_array_size(ks) > 2)
        vld_error(w, &w->semantic, &at, ks, keys, MSG_KEYS_MAX_2, "");
    const jd_t *lsis = jd_object_get(req, "LocalSecondaryIndexes");
    vld_path lsi_at = {NULL, "LocalSecondaryIndexes", NULL, 0};
    for (size_t i = 0; jd_is_array(lsis) && i < jd_array_size(lsis); i++) {
        const jd_t *lks = jd_object_get(jd_array_get(lsis, i), "KeySchema");
        vld_path pos = {&lsi_at, NULL, NULL, i + 1}, el = {&pos, "member", NULL, 0},
                 kat = {&el, "KeySchema", NULL, 0};
        if (jd_is_array(lks) && jd_array_size(lks) > 2)
            vld_error(w, &w->semantic, &kat, lks, keys, MSG_KEYS_MAX_2, "");
    }
}

kura_status api_check_model(const char *operation, const jd_t *req)
{
    /* most requests name the operation the previous one on this thread did */
    static _Thread_local const model_op *last_op;
    const model_op *op = last_op && operation && strcmp(operation, last_op->name) == 0
                             ? last_op
                             : model_find_op(operation);
    if (op) last_op = op;
    if (!op) return KURA_OK; /* not an operation of DynamoDB's model: nothing modelled */
    vld_walk w = {.quiet = false};
    walk_value(&w, NULL, req, op->input, true);
    extension_checks(&w, operation, req);
    if (strcmp(operation, "CreateTable") == 0) create_table_checks(&w, req, op->input);
    kura_status s = vld_report(&w, w.model.n ? &w.model : &w.semantic);
    vld_walk_free(&w);
    return s;
}

/*
 * schema_check.c - This file contains the second generic request check of api/schema.h: the
 * constraints of every parameter (ValidationException, "N validation errors detected: ..."),
 * and DynamoDB's rendering of values in those messages.
 *
 * The walk follows dynalite's checkValidations (validations/index.js): parameters in table
 * order, for each the checks in the order not null, pattern, enum, length, range, map keys,
 * map values, then the members; at most 10 violations are collected. A violation names its
 * path: members start lower case, list positions count from 1 ("keySchema.1.member.keyType"),
 * map entries use their key ("requestItems.T.member.keys"). A path is a chain of steps on
 * the stack, rendered only when a violation is reported, and attribute values (which have no
 * constraints) are not walked at all, so a valid request costs no allocation here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/schema.h"
#include "util/buf.h"

/* ---- Pass 2: constraints ------------------------------------------------------------------ */

#define MAX_ERRORS 10

typedef struct errlist {
    char *msg[MAX_ERRORS];
    int n;
    bool nomem;
} errlist;

char *api_value_str(const jd_t *v)
{
    char *out = NULL;
    if (jd_is_string(v)) return strndup(jd_string_value(v), jd_string_length(v));
    if (jd_is_integer(v))
        return asprintf(&out, "%lld", (long long)jd_integer_value(v)) < 0 ? NULL : out;
    if (jd_is_real(v)) return asprintf(&out, "%.17g", jd_real_value(v)) < 0 ? NULL : out;
    if (jd_is_boolean(v)) return strdup(jd_is_true(v) ? "true" : "false");
    if (jd_is_null(v)) return strdup("null");
    if (jd_is_object(v)) {
        kbuf b = KBUF_INIT;
        if (jw_json(&b, v) == KURA_OK && kbuf_put_u8(&b, '\0')) return (char *)b.data;
        kbuf_free(&b);
        return NULL;
    }
    /* an array: "[a, b]" with each element rendered the same way */
    size_t len = 1, cap = 64;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    buf[0] = '[';
    for (size_t i = 0; i < jd_array_size(v); i++) {
        char *e = api_value_str(jd_array_get(v, i));
        size_t elen = e ? strlen(e) : 0;
        char *nb = e && len + elen + 4 > cap ? realloc(buf, cap = 2 * (len + elen + 4)) : buf;
        if (!e || !nb) {
            free(e);
            free(nb ? nb : buf);
            return NULL;
        }
        buf = nb;
        if (i) memcpy(buf + len, ", ", 2), len += 2;
        memcpy(buf + len, e, elen);
        len += elen;
        free(e);
    }
    buf[len++] = ']';
    buf[len] = '\0';
    return buf;
}

/* Where a value is in the request, one step per level, rendered only for a message:
 * "keySchema.1.member.keyType" (members with their first letter lower-cased, list positions
 * from 1, map keys as they are). */
typedef struct path {
    const struct path *parent;
    const char *member; /* a member name, or NULL */
    const char *key;    /* a map key, or NULL (then the step is list position `index`) */
    size_t index;
} path;

static bool render_path(const path *p, kbuf *b)
{
    if (p->parent && (!render_path(p->parent, b) || !kbuf_put_u8(b, '.'))) return false;
    if (p->member) {
        char c = p->member[0] >= 'A' && p->member[0] <= 'Z' ? (char)(p->member[0] - 'A' + 'a')
                                                            : p->member[0];
        return kbuf_put_u8(b, (uint8_t)c) && kbuf_append(b, p->member + 1, strlen(p->member + 1));
    }
    if (p->key) return kbuf_append(b, p->key, strlen(p->key));
    char num[24];
    int n = snprintf(num, sizeof num, "%zu", p->index);
    return kbuf_append(b, num, (size_t)n);
}

static void add_error(errlist *e, const path *at, const jd_t *data, const char *msg)
{
    if (e->n >= MAX_ERRORS) return;
    kbuf where = KBUF_INIT;
    char *val = data ? api_value_str(data) : strdup("null");
    char *m = NULL;
    if (!val || !render_path(at, &where) || !kbuf_put_u8(&where, '\0') ||
        asprintf(&m, "Value %s%s%s at '%s' failed to satisfy constraint: %s", data ? "'" : "", val,
                 data ? "'" : "", (const char *)where.data, msg) < 0) {
        e->nomem = true;
        m = NULL;
    }
    free(val);
    kbuf_free(&where);
    if (m) e->msg[e->n++] = m;
}

static bool name_ok(const char *s, size_t n)
{
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

/* With AF_TABLE_ARN: whether s is "arn:aws:dynamodb:<region>:<account>:table/<name>", up to
 * 1024 long, its name 3..255 of the name pattern (DynamoDB's TableArn stands in for a
 * TableName: such a value needs none of the name's checks). */
static bool table_arn_ok(const char *s, size_t n)
{
    arn_parts p;
    if (n > 1024 || strlen(s) != n || !arn_split(s, &p) || p.rest) return false;
    size_t units = api_utf16_len(p.table, p.table_len);
    return units >= 3 && units <= 255 && name_ok(p.table, p.table_len);
}

static bool is_table_arn(const api_field *f, const jd_t *v)
{
    return (f->flags & AF_TABLE_ARN) && jd_is_string(v) &&
           table_arn_ok(jd_string_value(v), jd_string_length(v));
}

static size_t json_len(const jd_t *v)
{
    if (jd_is_string(v)) return api_utf16_len(jd_string_value(v), jd_string_length(v));
    if (jd_is_array(v)) return jd_array_size(v);
    return jd_is_object(v) ? jd_object_size(v) : 0;
}

static double json_num(const jd_t *v)
{
    return jd_is_integer(v) ? (double)jd_integer_value(v) : jd_number_value(v);
}

static void check_field(const path *parent, const char *attr, const jd_t *data,
                        const api_field *f, errlist *e);

static void check_fields(const path *parent, const jd_t *obj, const api_field *fields, errlist *e)
{
    for (const api_field *f = fields; f->name; f++)
        check_field(parent, f->name, jd_object_get(obj, f->name), f, e);
}

static void check_enum(const path *at, const jd_t *data, const api_field *f, errlist *e)
{
    for (const char *const *v = f->enums; *v; v++)
        if (jd_is_string(data) && strcmp(*v, jd_string_value(data)) == 0) return;
    char set[512];
    size_t off = 0;
    for (const char *const *v = f->enums; *v; v++)
        off += (size_t)snprintf(set + off, sizeof set - off, "%s%s", v == f->enums ? "" : ", ", *v);
    char msg[600];
    snprintf(msg, sizeof msg, "Member must satisfy enum value set: [%s]", set);
    add_error(e, at, data, msg);
}

static void check_map_members(const path *at, const jd_t *data, const api_field *f, errlist *e)
{
    const char *key;
    const jd_t *val;
    if (f->flags & AF_KEYS_NAME) {
        jd_object_foreach((jd_t *)data, key, val)
        {
            size_t klen = strlen(key), units = api_utf16_len(key, klen);
            if ((f->flags & AF_TABLE_ARN) && table_arn_ok(key, klen)) continue;
            if (units < 3 || units > 255 || !name_ok(key, klen))
                add_error(e, at, data,
                          "Map keys must satisfy constraint: [Member must have length less than "
                          "or equal to 255, Member must have length greater than or equal to "
                          "3, " API_MSG_NAME_PATTERN "]");
        }
    }
    if (!f->values_max_len) return;
    jd_object_foreach((jd_t *)data, key, val)
    {
        size_t n = json_len(val);
        if (n > f->values_max_len || n < f->values_min_len) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "Map value must satisfy constraint: [Member must have length less than or "
                     "equal to %u, Member must have length greater than or equal to %u]",
                     f->values_max_len, f->values_min_len);
            add_error(e, at, data, msg);
        }
    }
}

static void check_children(const path *at, const jd_t *data, const api_field *f, errlist *e)
{
    if (f->type == AT_LIST || f->type == AT_PLIST) {
        if (f->elem->flags & AF_ATTR) return; /* attribute values have no constraints */
        for (size_t i = 0; i < jd_array_size(data) && e->n < MAX_ERRORS; i++) {
            path sub = {at, NULL, NULL, i + 1};
            check_field(&sub, "member", jd_array_get(data, i), f->elem, e);
        }
    } else if (f->type == AT_MAP || f->type == AT_PMAP) {
        if (f->elem->flags & AF_ATTR) return;
        const char *key;
        const jd_t *val;
        jd_object_foreach((jd_t *)data, key, val)
        {
            if (e->n >= MAX_ERRORS) break;
            path sub = {at, NULL, key, 0};
            check_field(&sub, "member", val, f->elem, e);
        }
    } else if (f->type == AT_VSTRUCT || f->type == AT_FSTRUCT) {
        check_fields(at, data, f->fields, e);
    }
}

static void check_field(const path *parent, const char *attr, const jd_t *data,
                        const api_field *f, errlist *e)
{
    if (e->n >= MAX_ERRORS || (f->flags & AF_ATTR)) return;
    path at = {parent, attr, NULL, 0};
    char msg[128];
    /* A null list element or map value where a structure belongs is reported like a missing
     * required member (the operations rely on structures being present). */
    bool structure = f->type == AT_VSTRUCT || f->type == AT_FSTRUCT || f->type == AT_LIST ||
                     f->type == AT_PLIST || f->type == AT_MAP || f->type == AT_PMAP;
    bool is_member = strcmp(attr, "member") == 0;
    if (((f->flags & AF_NOT_NULL) || (is_member && structure)) && (!data || jd_is_null(data)))
        add_error(e, &at, NULL, "Member must not be null");
    if (!data || jd_is_null(data) || is_table_arn(f, data)) return;
    if ((f->flags & AF_NAME) && !name_ok(jd_string_value(data), jd_string_length(data)))
        add_error(e, &at, data, API_MSG_NAME_PATTERN);
    if (f->enums) check_enum(&at, data, f, e);
    if (f->min_len && json_len(data) < f->min_len) {
        snprintf(msg, sizeof msg, "Member must have length greater than or equal to %u",
                 f->min_len);
        add_error(e, &at, data, msg);
    }
    if (f->max_len && json_len(data) > f->max_len) {
        snprintf(msg, sizeof msg, "Member must have length less than or equal to %u", f->max_len);
        add_error(e, &at, data, msg);
    }
    if ((f->flags & AF_MIN) && json_num(data) < (double)f->min) {
        snprintf(msg, sizeof msg, "Member must have value greater than or equal to %lld",
                 (long long)f->min);
        add_error(e, &at, data, msg);
    }
    if ((f->flags & AF_MAX) && json_num(data) > (double)f->max) {
        snprintf(msg, sizeof msg, "Member must have value less than or equal to %lld",
                 (long long)f->max);
        add_error(e, &at, data, msg);
    }
    if (jd_is_object(data) && (f->type == AT_MAP || f->type == AT_PMAP))
        check_map_members(&at, data, f, e);
    check_children(&at, data, f, e);
}

kura_status api_check_constraints(jd_t *req, const api_field *fields)
{
    for (const api_field *f = fields; f->name; f++) {
        const jd_t *v = jd_object_get(req, f->name);
        if ((f->flags & AF_REQUIRED) && !v)
            return api_err(KURA_E_INVALID,
                           "The parameter '%s' is required but was not present in the request",
                           f->name);
        if ((f->flags & AF_TABLE_NAME) && jd_is_string(v) && !is_table_arn(f, v) &&
            (json_len(v) < 3 || json_len(v) > 255))
            return api_err(KURA_E_INVALID,
                           "%s must be at least 3 characters long and at most 255 characters "
                           "long",
                           f->name);
    }
    errlist e = {{NULL}, 0, false};
    check_fields(NULL, req, fields, &e);
    kura_status s = KURA_OK;
    if (e.nomem) {
        s = api_err(KURA_E_NOMEM, "out of memory");
    } else if (e.n) {
        size_t len = 64;
        for (int i = 0; i < e.n; i++)
            len += strlen(e.msg[i]) + 2;
        char *msg = malloc(len);
        if (!msg) {
            s = api_err(KURA_E_NOMEM, "out of memory");
        } else {
            size_t off = (size_t)snprintf(msg, len, "%d validation error%s detected: ", e.n,
                                          e.n > 1 ? "s" : "");
            for (int i = 0; i < e.n; i++)
                off += (size_t)snprintf(msg + off, len - off, "%s%s", i ? "; " : "", e.msg[i]);
            s = api_err(KURA_E_INVALID, "%s", msg);
            free(msg);
        }
    }
    for (int i = 0; i < e.n; i++)
        free(e.msg[i]);
    return s;
}

/*
 * validate_msg.c - This file contains how the model-driven request check (validate.c) words a
 * violation as DynamoDB does: the member path, the value as DynamoDB's Java deserializer
 * prints what it made of it, and the "N validation errors detected: " message.
 *
 * Values: a string as it is, a number in decimal, a list "[a, b]" (Java's List.toString), a
 * map "{k=v, k2=v2}" (Java's Map.toString, entries in request order), a structure as Java's
 * Object.toString prints DynamoDB's model classes, "com.amazonaws.dynamodb.v20120810.
 * WriteRequest@<hash>". DynamoDB's hash is an identity hash code (random per request); kura's
 * is FNV-1a of the structure's compact JSON, so the same request gets the same message. A
 * missing or null member is "Value null at '...'" (no quotes). Values nested more than
 * VLD_MAX_DEPTH levels are cut short with "..." (such a value is refused anyway).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/model.h"
#include "api/validate_int.h"

#define JAVA_PREFIX "com.amazonaws.dynamodb.v20120810."

static bool render_path(const vld_path *p, kbuf *b)
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

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    uint32_t h = 0x811C9DC5u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x01000193u;
    return h;
}

static bool render_value(kbuf *b, const jd_t *v, unsigned sid, int depth);

static bool render_struct(kbuf *b, const jd_t *v, unsigned sid)
{
    kbuf json = KBUF_INIT;
    char hash[16];
    const char *name = model_shapes[sid].name;
    bool ok = jw_json(&json, v) == KURA_OK;
    snprintf(hash, sizeof hash, "@%08x", ok ? fnv1a(json.data, json.len) : 0);
    kbuf_free(&json);
    return ok && kbuf_append(b, JAVA_PREFIX, strlen(JAVA_PREFIX)) &&
           kbuf_append(b, name, strlen(name)) && kbuf_append(b, hash, strlen(hash));
}

static bool render_value(kbuf *b, const jd_t *v, unsigned sid, int depth)
{
    const model_shape *sh = &model_shapes[sid];
    char num[40];
    if (depth > VLD_MAX_DEPTH) return kbuf_append(b, "...", 3); /* bounded recursion */
    if (jd_is_string(v)) return kbuf_append(b, jd_string_value(v), jd_string_length(v));
    if (jd_is_integer(v)) {
        int n = snprintf(num, sizeof num, "%lld", (long long)jd_integer_value(v));
        return kbuf_append(b, num, (size_t)n);
    }
    if (jd_is_real(v)) {
        int n = snprintf(num, sizeof num, "%.17g", jd_real_value(v));
        return kbuf_append(b, num, (size_t)n);
    }
    if (jd_is_boolean(v))
        return kbuf_append(b, jd_is_true(v) ? "true" : "false", jd_is_true(v) ? 4 : 5);
    if (!v || jd_is_null(v)) return kbuf_append(b, "null", 4);
    if (jd_is_array(v)) {
        unsigned el = sh->type == MT_LIST ? sh->a : sid;
        bool ok = kbuf_put_u8(b, '[');
        for (size_t i = 0; ok && i < jd_array_size(v); i++)
            ok = (!i || kbuf_append(b, ", ", 2)) &&
                 render_value(b, jd_array_get(v, i), el, depth + 1);
        return ok && kbuf_put_u8(b, ']');
    }
    if (sh->type != MT_MAP) return render_struct(b, v, sid);
    const char *key;
    size_t key_len;
    jd_t *val;
    bool ok = kbuf_put_u8(b, '{'), first = true;
    jd_object_keylen_foreach((jd_t *)v, key, key_len, val)
    {
        ok = ok && (first || kbuf_append(b, ", ", 2)) && kbuf_append(b, key, key_len) &&
             kbuf_put_u8(b, '=') && render_value(b, val, sh->b, depth + 1);
        first = false;
    }
    return ok && kbuf_put_u8(b, '}');
}

void vld_error(vld_walk *w, vld_errors *list, const vld_path *at, const jd_t *v, unsigned sid,
               const char *msg, const char *more)
{
    if (list->n >= VLD_MAX_ERRORS) return;
    if (w->quiet) {
        list->n++;
        return;
    }
    kbuf b = KBUF_INIT;
    bool ok = kbuf_append(&b, "Value ", 6);
    if (v)
        ok = ok && kbuf_put_u8(&b, '\'') && render_value(&b, v, sid, 0) && kbuf_put_u8(&b, '\'');
    else
        ok = ok && kbuf_append(&b, "null", 4);
    ok = ok && kbuf_append(&b, " at '", 5) && render_path(at, &b) &&
         kbuf_append(&b, "' failed to satisfy constraint: ", 32) &&
         kbuf_append(&b, msg, strlen(msg)) && kbuf_append(&b, more, strlen(more) + 1);
    if (!ok) {
        w->nomem = true;
        kbuf_free(&b);
        return;
    }
    list->msg[list->n++] = (char *)b.data;
}

kura_status vld_report(const vld_walk *w, const vld_errors *list)
{
    if (w->nomem) return API_NOMEM();
    if (!list->n) return KURA_OK;
    kbuf b = KBUF_INIT;
    char head[48];
    int n = snprintf(head, sizeof head, "%d validation error%s detected: ", list->n,
                     list->n > 1 ? "s" : "");
    bool ok = kbuf_append(&b, head, (size_t)n);
    for (int i = 0; ok && i < list->n; i++)
        ok =
            (!i || kbuf_append(&b, "; ", 2)) && kbuf_append(&b, list->msg[i], strlen(list->msg[i]));
    ok = ok && kbuf_put_u8(&b, '\0');
    kura_status s = ok ? api_err(KURA_E_INVALID, "%s", (const char *)b.data) : API_NOMEM();
    kbuf_free(&b);
    return s;
}

void vld_walk_free(vld_walk *w)
{
    for (int i = 0; i < w->model.n && !w->quiet; i++)
        free(w->model.msg[i]);
    for (int i = 0; i < w->semantic.n && !w->quiet; i++)
        free(w->semantic.msg[i]);
}

/*
 * names.c - the expression context: ExpressionAttributeNames and ExpressionAttributeValues.
 *
 * This file contains expr_ctx: the arena that owns every parsed tree of a request, the two
 * borrowed maps, and a "used" flag per map entry. The parsers resolve "#n" and ":v" through
 * expr_ctx_name()/expr_ctx_value(), which set the flag; expr_check_unused() then reports the
 * entries no expression referred to, as DynamoDB does (names before values). The flags are
 * indexed by the entry's position in the map, which is sorted (value.h), so the "keys: {...}"
 * lists come out in name order.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/expr/expr_int.h"
#include "util/buf.h"

/* "#" or ":" followed by one or more of [0-9A-Za-z_]: DynamoDB's rule for the map keys. */
static bool names_key_ok(const char *k, size_t len, char lead)
{
    if (len < 2 || k[0] != lead)
        return false;
    for (size_t i = 1; i < len; i++) {
        char c = k[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '_'))
            return false;
    }
    return true;
}

static kura_status names_check_map(const kura_value *m, const char *param, char lead)
{
    if (m->type != KURA_M)
        return kura_err(KURA_E_INVALID, "%s must be a map", param);
    if (m->u.map.n == 0)
        return kura_err(KURA_E_INVALID, "%s must not be empty", param);
    for (uint32_t i = 0; i < m->u.map.n; i++) {
        const kura_attr *a = &m->u.map.a[i];
        if (!names_key_ok(a->name, a->name_len, lead))
            return kura_err(KURA_E_INVALID, "%s contains invalid key: Syntax error; key: \"%.*s\"",
                            param, (int)a->name_len, a->name);
    }
    return KURA_OK;
}

static kura_status names_check_values(const kura_value *m)
{
    for (uint32_t i = 0; i < m->u.map.n; i++) {
        const kura_attr *a = &m->u.map.a[i];
        if (val_validate(&a->value) != KURA_OK) {
            /* kura_err copies its arguments before replacing the thread's message. */
            char msg[512];
            snprintf(msg, sizeof msg, "%s", kura_last_error());
            return kura_err(KURA_E_INVALID,
                            "ExpressionAttributeValues contains invalid value: %s for key %.*s", msg,
                            (int)a->name_len, a->name);
        }
    }
    return KURA_OK;
}

static kura_status names_check_names(const kura_value *m)
{
    for (uint32_t i = 0; i < m->u.map.n; i++) {
        const kura_attr *a = &m->u.map.a[i];
        if (a->value.type != KURA_S)
            return kura_err(KURA_E_INVALID,
                            "ExpressionAttributeNames contains invalid value: the value of key %.*s "
                            "is not a string",
                            (int)a->name_len, a->name);
    }
    return KURA_OK;
}

kura_status expr_ctx_new(const kura_value *names, const kura_value *values, expr_ctx **ctx_out)
{
    kura_status st;

    if (names && ((st = names_check_map(names, "ExpressionAttributeNames", '#')) != KURA_OK ||
                  (st = names_check_names(names)) != KURA_OK))
        return st;
    if (values && ((st = names_check_map(values, "ExpressionAttributeValues", ':')) != KURA_OK ||
                   (st = names_check_values(values)) != KURA_OK))
        return st;

    expr_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx || !(ctx->arena = arena_new(16384)))
        goto nomem;
    ctx->names = names;
    ctx->values = values;
    if (names && !(ctx->names_used = calloc(names->u.map.n, sizeof(bool))))
        goto nomem;
    if (values && !(ctx->values_used = calloc(values->u.map.n, sizeof(bool))))
        goto nomem;
    *ctx_out = ctx;
    return KURA_OK;
nomem:
    expr_ctx_free(ctx);
    return kura_err(KURA_E_NOMEM, "out of memory creating an expression context");
}

void expr_ctx_free(expr_ctx *ctx)
{
    if (!ctx)
        return;
    arena_free(ctx->arena);
    free(ctx->names_used);
    free(ctx->values_used);
    free(ctx);
}

/* Looks `ref` up in map m; marks the entry in used[]. */
static const kura_value *names_lookup(const kura_value *m, bool *used, const char *ref,
                                      size_t len)
{
    if (!m)
        return NULL;
    const kura_value *v = val_map_get(m, ref, len);
    if (v) {
        const kura_attr *a = (const kura_attr *)((const char *)v - offsetof(kura_attr, value));
        used[a - m->u.map.a] = true;
    }
    return v;
}

const kura_value *expr_ctx_name(expr_ctx *ctx, const char *ref, size_t len)
{
    return names_lookup(ctx->names, ctx->names_used, ref, len);
}

const kura_value *expr_ctx_value(expr_ctx *ctx, const char *ref, size_t len)
{
    return names_lookup(ctx->values, ctx->values_used, ref, len);
}

/* "Value provided in <param> unused in expressions: keys: {#a, #b}" if any entry is unused. */
static kura_status names_report_unused(const kura_value *m, const bool *used, const char *param)
{
    if (!m)
        return KURA_OK;
    kbuf b = {0};
    bool any = false;
    for (uint32_t i = 0; i < m->u.map.n; i++) {
        if (used[i])
            continue;
        if ((any && !kbuf_append(&b, ", ", 2)) ||
            !kbuf_append(&b, m->u.map.a[i].name, m->u.map.a[i].name_len)) {
            kbuf_free(&b);
            return kura_err(KURA_E_NOMEM, "out of memory");
        }
        any = true;
    }
    kura_status st = KURA_OK;
    if (any)
        st = kura_err(KURA_E_INVALID, "Value provided in %s unused in expressions: keys: {%.*s}",
                      param, (int)b.len, (const char *)b.data);
    kbuf_free(&b);
    return st;
}

kura_status expr_check_unused(const expr_ctx *ctx)
{
    kura_status st = names_report_unused(ctx->names, ctx->names_used,
                                         "ExpressionAttributeNames");
    if (st != KURA_OK)
        return st;
    return names_report_unused(ctx->values, ctx->values_used, "ExpressionAttributeValues");
}

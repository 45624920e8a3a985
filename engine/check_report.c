/*
 * check_report.c - This file contains the reporting of the integrity check (check_int.h): a
 * finding becomes one line for the caller's kura_check_fn and a count in its summary; and
 * the key of an item written as DynamoDB JSON for those lines ({"pk":{"S":"a"}}), with S
 * values escaped as JSON strings, N as their canonical decimal text and B in base64. (The
 * JSON layer, api/, lies above the engine; a key holds only these three types.)
 */
#include "engine/check_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void check_line(check_ctx *c, kura_check_severity sev, const char *line)
{
    if (sev == KURA_CHECK_NOTE)
        c->sum->notes++;
    if (c->fn)
        c->fn(c->arg, sev, line);
}

static void say(check_ctx *c, kura_check_severity sev, const char *fmt, va_list ap)
{
    char line[4800];
    vsnprintf(line, sizeof line, fmt, ap);
    if (sev == KURA_CHECK_PROBLEM)
        c->sum->problems++;
    check_line(c, sev, line);
}

void check_problem(check_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(c, KURA_CHECK_PROBLEM, fmt, ap);
    va_end(ap);
}

void check_note(check_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(c, KURA_CHECK_NOTE, fmt, ap);
    va_end(ap);
}

/* ---- Keys as DynamoDB JSON ------------------------------------------------------------------ */

typedef struct out_buf {
    char *p;
    size_t len, cap; /* cap > 0: room for the NUL */
} out_buf;

static void put_bytes(out_buf *o, const char *s, size_t n)
{
    size_t room = o->cap - 1 - o->len;
    if (n > room)
        n = room;
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static void put(out_buf *o, const char *s)
{
    put_bytes(o, s, strlen(s));
}

/* A JSON string: quotes, \" \\ and \u00XX for control bytes; other bytes as they are. */
static void put_json_str(out_buf *o, const uint8_t *s, size_t n)
{
    put(o, "\"");
    for (size_t i = 0; i < n; i++) {
        char e[8];
        if (s[i] == '"' || s[i] == '\\')
            snprintf(e, sizeof e, "\\%c", s[i]);
        else if (s[i] < 0x20)
            snprintf(e, sizeof e, "\\u%04x", s[i]);
        else
            snprintf(e, sizeof e, "%c", s[i]);
        put(o, e);
    }
    put(o, "\"");
}

static void put_base64(out_buf *o, const uint8_t *s, size_t n)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    put(o, "\"");
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
                     (i + 2 < n ? s[i + 2] : 0);
        char q[4] = {b64[v >> 18], b64[(v >> 12) & 63], i + 1 < n ? b64[(v >> 6) & 63] : '=',
                     i + 2 < n ? b64[v & 63] : '='};
        put_bytes(o, q, 4);
    }
    put(o, "\"");
}

static void put_scalar(out_buf *o, const kura_value *v)
{
    char num[NUM_FORMAT_MAX];
    switch (v->type) {
    case KURA_S:
        put(o, "{\"S\":");
        put_json_str(o, v->u.bytes.p, v->u.bytes.len);
        break;
    case KURA_N:
        num_format(&v->u.num, num, sizeof num);
        put(o, "{\"N\":\"");
        put(o, num);
        put(o, "\"");
        break;
    case KURA_B:
        put(o, "{\"B\":");
        put_base64(o, v->u.bytes.p, v->u.bytes.len);
        break;
    default:
        put(o, "{\"?\":null");
    }
    put(o, "}");
}

void check_key_json(const kura_value *key, char *out, size_t cap)
{
    out_buf o = {out, 0, cap};
    out[0] = '\0';
    put(&o, "{");
    for (uint32_t i = 0; key->type == KURA_M && i < key->u.map.n; i++) {
        const kura_attr *a = &key->u.map.a[i];
        if (i)
            put(&o, ",");
        put_json_str(&o, (const uint8_t *)a->name, a->name_len);
        put(&o, ":");
        put_scalar(&o, &a->value);
    }
    put(&o, "}");
}

void check_skey_json(const kura_table *t, const uint8_t *skey, size_t len, char *out,
                     size_t cap)
{
    kura_value key = {0};
    if (key_parse(&t->ks, skey, len, &key) == KURA_OK)
        check_key_json(&key, out, cap);
    else
        snprintf(out, cap, "<a storage key that does not parse>");
    val_clear(&key);
}

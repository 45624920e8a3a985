/*
 * expr_testutil.h - helpers shared by the expression evaluator tests (expr_eval_test.c,
 * expr_update_test.c): values written in a compact notation, document paths from strings,
 * expression trees built by hand, and a printer so failures show both values.
 *
 * Value notation (tv()):
 *   "text"            S (C escapes such as \xc3\xa9 give raw UTF-8 bytes; \" a quote)
 *   12.5  -3  1e5     N
 *   b"raw"            B (the bytes between the quotes)
 *   true false null   BOOL, NULL
 *   {a: 1, "b c": []} M (names bare [A-Za-z0-9_] or quoted)
 *   [1, "x", {}]      L
 *   SS("a","b")  NS(1,2)  BS(b"x")   sets
 * Paths (tpath()): a.b[2].c - names [A-Za-z0-9_] or any bytes except ".[" after a '.'.
 *
 * Everything a helper returns is owned by a per-test pool freed by t_free_all() (the
 * teardown of every test), so tests never free values or trees themselves.
 */
#ifndef KURA_EXPR_TESTUTIL_H
#define KURA_EXPR_TESTUTIL_H

#include "testutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/expr/expr.h"

/* ---- The pool ------------------------------------------------------------------------------ */

/* What a pool entry is: malloc'ed memory, a malloc'ed value (val_clear first), a context. */
enum { T_MEM, T_VALUE, T_CTX };
static void **t_pool;
static uint8_t *t_pool_kind;
static size_t t_pool_n, t_pool_cap;

static inline void *t_track(void *p, uint8_t kind)
{
    if (t_pool_n == t_pool_cap) {
        t_pool_cap = t_pool_cap ? 2 * t_pool_cap : 1024;
        t_pool = realloc(t_pool, t_pool_cap * sizeof *t_pool);
        t_pool_kind = realloc(t_pool_kind, t_pool_cap * sizeof *t_pool_kind);
    }
    if (p == NULL || t_pool == NULL || t_pool_kind == NULL) fail_msg("test pool: no memory");
    t_pool_kind[t_pool_n] = kind;
    t_pool[t_pool_n++] = p;
    return p;
}

static inline void *t_alloc(size_t n)
{
    return t_track(calloc(1, n ? n : 1), T_MEM);
}

static inline int t_free_all(void **state)
{
    (void)state;
    while (t_pool_n > 0) {
        t_pool_n--;
        if (t_pool_kind[t_pool_n] == T_CTX) {
            expr_ctx_free(t_pool[t_pool_n]);
            continue;
        }
        if (t_pool_kind[t_pool_n] == T_VALUE) val_clear(t_pool[t_pool_n]);
        free(t_pool[t_pool_n]);
    }
    free(t_pool);
    free(t_pool_kind);
    t_pool = NULL;
    t_pool_kind = NULL;
    t_pool_cap = 0;
    return 0;
}

/* An empty value in the pool (for outputs). */
static inline kura_value *t_new_value(void)
{
    return t_track(calloc(1, sizeof(kura_value)), T_VALUE);
}

/* ---- Values -------------------------------------------------------------------------------- */

static inline void tv_skip(const char **s)
{
    while (**s == ' ')
        (*s)++;
}

static inline void tv_expect(const char **s, char c)
{
    tv_skip(s);
    if (**s != c) fail_msg("value notation: expected '%c' at \"%s\"", c, *s);
    (*s)++;
}

/* A quoted string at *s: the bytes between the quotes into buf; returns the length. */
static inline size_t tv_quoted(const char **s, char *buf, size_t cap)
{
    size_t n = 0;
    tv_expect(s, '"');
    while (**s != '"') {
        if (**s == '\0') fail_msg("value notation: unterminated string");
        if (**s == '\\') (*s)++;
        if (n == cap) fail_msg("value notation: string too long");
        buf[n++] = *(*s)++;
    }
    (*s)++;
    return n;
}

static void tv_parse(const char **s, kura_value *out);

static inline void tv_push(kura_value *container, const char **s)
{
    kura_value e;
    memset(&e, 0, sizeof e);
    tv_parse(s, &e);
    assert_kura_ok(val_list_push(container, &e));
}

static inline void tv_parse_seq(const char **s, kura_value *out, kura_type type, char close)
{
    val_init_container(out, type);
    tv_skip(s);
    if (**s == close) {
        (*s)++;
        return;
    }
    for (;;) {
        tv_push(out, s);
        tv_skip(s);
        if (**s == close) break;
        tv_expect(s, ',');
    }
    (*s)++;
}

static inline void tv_parse_map(const char **s, kura_value *out)
{
    val_init_container(out, KURA_M);
    tv_skip(s);
    if (**s == '}') {
        (*s)++;
        return;
    }
    for (;;) {
        char name[256];
        size_t len = 0;
        tv_skip(s);
        if (**s == '"') {
            len = tv_quoted(s, name, sizeof name);
        } else {
            while (len < sizeof name && (isalnum((unsigned char)**s) || **s == '_'))
                name[len++] = *(*s)++;
        }
        tv_expect(s, ':');
        kura_value v;
        memset(&v, 0, sizeof v);
        tv_parse(s, &v);
        assert_kura_ok(val_map_put(out, name, len, &v));
        tv_skip(s);
        if (**s == '}') break;
        tv_expect(s, ',');
    }
    (*s)++;
}

static inline bool tv_word(const char **s, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(*s, w, n) != 0) return false;
    *s += n;
    return true;
}

static inline void tv_parse(const char **s, kura_value *out)
{
    char buf[1024];
    tv_skip(s);
    if (**s == '"') {
        size_t n = tv_quoted(s, buf, sizeof buf);
        assert_kura_ok(val_set_bytes(out, KURA_S, buf, n));
    } else if (**s == 'b' && (*s)[1] == '"') {
        (*s)++;
        size_t n = tv_quoted(s, buf, sizeof buf);
        assert_kura_ok(val_set_bytes(out, KURA_B, buf, n));
    } else if (**s == '{') {
        (*s)++;
        tv_parse_map(s, out);
    } else if (**s == '[') {
        (*s)++;
        tv_parse_seq(s, out, KURA_L, ']');
    } else if (tv_word(s, "SS(")) {
        tv_parse_seq(s, out, KURA_SS, ')');
    } else if (tv_word(s, "NS(")) {
        tv_parse_seq(s, out, KURA_NS, ')');
    } else if (tv_word(s, "BS(")) {
        tv_parse_seq(s, out, KURA_BS, ')');
    } else if (tv_word(s, "true")) {
        val_set_bool(out, true);
    } else if (tv_word(s, "false")) {
        val_set_bool(out, false);
    } else if (tv_word(s, "null")) {
        val_set_null(out);
    } else {
        size_t n = strspn(*s, "+-0123456789.eE");
        if (n == 0) fail_msg("value notation: unexpected \"%s\"", *s);
        kura_num num;
        assert_kura_ok(num_parse(*s, n, &num));
        val_set_num(out, &num);
        *s += n;
    }
}

/* The value written in notation `s` (pooled). */
static inline kura_value *tv(const char *s)
{
    kura_value *v = t_new_value();
    const char *p = s;
    tv_parse(&p, v);
    tv_skip(&p);
    if (*p != '\0') fail_msg("value notation: trailing \"%s\" in \"%s\"", p, s);
    return v;
}

/* Prints v in the notation above (sets and maps in stored order) into buf. */
static inline void tv_print(const kura_value *v, char *buf, size_t cap)
{
    size_t len = strlen(buf);
#define TV_OUT(...) (len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, __VA_ARGS__))
    switch (v->type) {
    case KURA_S:
        TV_OUT("\"%.*s\"", (int)v->u.bytes.len, (const char *)v->u.bytes.p);
        break;
    case KURA_B:
        TV_OUT("b\"%.*s\"", (int)v->u.bytes.len, (const char *)v->u.bytes.p);
        break;
    case KURA_N: {
        char num[NUM_FORMAT_MAX];
        num_format(&v->u.num, num, sizeof num);
        TV_OUT("%s", num);
        break;
    }
    case KURA_BOOL:
        TV_OUT("%s", v->u.boolean ? "true" : "false");
        break;
    case KURA_NULL:
        TV_OUT("null");
        break;
    case KURA_M:
        TV_OUT("{");
        for (uint32_t i = 0; i < v->u.map.n; i++) {
            TV_OUT("%s%.*s: ", i ? ", " : "", (int)v->u.map.a[i].name_len, v->u.map.a[i].name);
            if (len < cap) tv_print(&v->u.map.a[i].value, buf, cap);
            len = strlen(buf);
        }
        TV_OUT("}");
        break;
    default: {
        const char *open = v->type == KURA_L    ? "["
                           : v->type == KURA_SS ? "SS("
                           : v->type == KURA_NS ? "NS("
                           : v->type == KURA_BS ? "BS("
                                                : "<empty>(";
        TV_OUT("%s", open);
        for (uint32_t i = 0; v->type >= KURA_L && i < v->u.list.n; i++) {
            TV_OUT("%s", i ? ", " : "");
            if (len < cap) tv_print(&v->u.list.v[i], buf, cap);
            len = strlen(buf);
        }
        TV_OUT("%s", v->type == KURA_L ? "]" : ")");
        break;
    }
    }
#undef TV_OUT
}

/* Fails unless `got` equals the value written `want` (val_equal), printing both. */
#define assert_value(got, want) t_assert_value((got), (want), __FILE__, __LINE__)
static inline void t_assert_value(const kura_value *got, const char *want, const char *file,
                                  int line)
{
    const kura_value *w = tv(want);
    if (got != NULL && val_equal(got, w)) return;
    char gb[4096] = "", wb[4096] = "";
    if (got != NULL) tv_print(got, gb, sizeof gb);
    tv_print(w, wb, sizeof wb);
    fail_msg("%s:%d: got %s, expected %s", file, line, got ? gb : "(missing)", wb);
}

/* ---- Paths and trees ----------------------------------------------------------------------- */

/* The path written `s` (pooled); names point into a pooled copy of s. */
static inline expr_path tpath(const char *s)
{
    expr_path p = {t_alloc(strlen(s) * sizeof(expr_path_elem)), 0};
    char *copy = t_alloc(strlen(s) + 1);
    memcpy(copy, s, strlen(s));
    for (char *c = copy; *c;) {
        expr_path_elem *e = &p.elems[p.n++];
        if (*c == '[') {
            e->is_index = true;
            e->index = (uint32_t)strtoul(c + 1, &c, 10);
            if (*c++ != ']') fail_msg("bad path \"%s\"", s);
        } else {
            e->name = c;
            while (*c && *c != '.' && *c != '[')
                c++;
            e->name_len = (uint32_t)(c - e->name);
        }
        if (*c == '.') c++;
    }
    return p;
}

static inline expr_node *n_new(expr_op op, uint32_t nkids)
{
    expr_node *n = t_alloc(sizeof *n);
    n->op = op;
    n->nkids = nkids;
    n->kids = t_alloc(nkids * sizeof *n->kids);
    return n;
}

static inline expr_node *n_path(const char *path)
{
    expr_node *n = n_new(EXPR_OP_PATH, 0);
    n->path = tpath(path);
    return n;
}

static inline expr_node *n_val(const char *notation)
{
    expr_node *n = n_new(EXPR_OP_VALUE, 0);
    n->value = tv(notation);
    return n;
}

static inline expr_node *n_op(expr_op op, uint32_t nkids, ...)
{
    expr_node *n = n_new(op, nkids);
    va_list ap;
    va_start(ap, nkids);
    for (uint32_t i = 0; i < nkids; i++)
        n->kids[i] = va_arg(ap, expr_node *);
    va_end(ap);
    return n;
}

#define n_op1(op, a) n_op((op), 1, (a))
#define n_op2(op, a, b) n_op((op), 2, (a), (b))
#define n_op3(op, a, b, c) n_op((op), 3, (a), (b), (c))

/* ---- Parsing (once the parser exists, tests also go through it) ---------------------------- */

/* A parsing context over the maps written `names` and `values` (notation; NULL = none). */
static inline expr_ctx *t_ctx(const char *names, const char *values)
{
    expr_ctx *ctx;
    assert_kura_ok(expr_ctx_new(names ? tv(names) : NULL, values ? tv(values) : NULL, &ctx));
    return t_track(ctx, T_CTX);
}

static inline const expr_node *t_parse_cond(expr_type type, const char *expr, const char *names,
                                            const char *values)
{
    expr_node *root;
    kura_status st = expr_parse_condition(t_ctx(names, values), type, expr, &root);
    if (st != KURA_OK) fail_msg("parsing \"%s\": %s", expr, kura_last_error());
    return root;
}

static inline const expr_update *t_parse_update(const char *expr, const char *names,
                                                const char *values)
{
    expr_update *u;
    kura_status st = expr_parse_update(t_ctx(names, values), expr, &u);
    if (st != KURA_OK) fail_msg("parsing \"%s\": %s", expr, kura_last_error());
    return u;
}

static inline const expr_projection *t_parse_projection(const char *expr, const char *names)
{
    expr_projection *p;
    kura_status st = expr_parse_projection(t_ctx(names, NULL), expr, &p);
    if (st != KURA_OK) fail_msg("parsing \"%s\": %s", expr, kura_last_error());
    return p;
}

/* Asserts that `fn` returned KURA_E_INVALID with exactly the message `msg`. */
#define assert_invalid(expr, msg)                                                                  \
    do {                                                                                           \
        assert_kura_status((expr), KURA_E_INVALID);                                                \
        if (strcmp(kura_last_error(), (msg)) != 0)                                                 \
            fail_msg("%s: message \"%s\", expected \"%s\"", #expr, kura_last_error(), (msg));      \
    } while (0)

#endif

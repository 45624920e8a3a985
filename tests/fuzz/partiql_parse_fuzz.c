/*
 * partiql_parse_fuzz.c - libFuzzer target: the PartiQL parser and translator on arbitrary
 * text.
 *
 * This file contains a fuzz target for engine/partiql. The first input byte picks how many
 * parameters the statement gets (0..3, of a fixed list of S, N, SS values) and whether the
 * table has a sort key; the rest is the statement. Whatever the input, pq_parse must return
 * KURA_OK or KURA_E_INVALID (KURA_E_NOMEM only when memory runs out), never crash; a parsed
 * statement's tree is walked whole (so ASan sees every pointer), then translated. Every
 * expression the translator writes is parsed by engine/expr with the plan's names and values:
 * it may be refused for what it means (a reserved function on a key, ...) but never with a
 * syntax error, since the translator writes only the expression language's syntax, and every
 * name and value it generated must be used. Seeds: corpus/partiql_parse_fuzz/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/expr/expr.h"
#include "engine/partiql/partiql.h"
#include "tests/fuzz/fuzz_common.h"

static kura_value *fz_params[4];

static void fz_init(void)
{
    for (int n = 0; n < 4; n++) {
        kura_value *l = kura_value_list();
        if (!l) abort();
        if (n > 0 && kura_value_append(l, kura_value_s("k", 1)) != KURA_OK) abort();
        if (n > 1 && kura_value_append(l, kura_value_n("7", 1)) != KURA_OK) abort();
        if (n > 2) {
            kura_value *ss = kura_value_set(KURA_SS);
            if (!ss || kura_value_append(ss, kura_value_s("a", 1)) != KURA_OK ||
                kura_value_append(l, ss) != KURA_OK)
                abort();
        }
        fz_params[n] = l;
    }
}

static void fz_check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "partiql_parse_fuzz: %s\n", what);
        abort();
    }
}

static unsigned fz_node(const pq_node *n, int depth)
{
    fz_check(n != NULL && depth < 10000, "node");
    unsigned x = n->kind;
    if (n->kind == PQ_PATH) {
        fz_check(n->nsteps >= 1 && n->nsteps <= 32 && !n->steps[0].is_index, "path shape");
        for (uint32_t i = 0; i < n->nsteps; i++)
            if (!n->steps[i].is_index) x += (unsigned)strlen(n->steps[i].name);
    }
    if (n->kind == PQ_VALUE) x += kura_value_type(n->value);
    if (n->kind == PQ_CALL) x += (unsigned)strlen(n->name);
    for (uint32_t i = 0; i < n->nkids; i++) x += fz_node(n->kids[i], depth + 1);
    return x;
}

static unsigned fz_stmt(const pq_stmt *st)
{
    unsigned x = (unsigned)strlen(st->table);
    for (uint32_t i = 0; i < st->nproj; i++) x += fz_node(st->proj[i], 0);
    if (st->where) x += fz_node(st->where, 0);
    if (st->order_by) x += fz_node(st->order_by, 0);
    if (st->item) x += (unsigned)kura_value_count(st->item);
    for (uint32_t i = 0; i < st->nassigns; i++) {
        x += fz_node(st->assigns[i].path, 0);
        fz_check(st->assigns[i].remove == (st->assigns[i].value == NULL), "assign value");
        if (st->assigns[i].value) x += fz_node(st->assigns[i].value, 0);
    }
    return x;
}

/* An expression the translator wrote must not be a syntax error. */
static void fz_expr(expr_ctx *ctx, expr_type type, const char *text)
{
    if (!text) return;
    kura_status s;
    if (type == EXPR_UPDATE) {
        expr_update *u;
        s = expr_parse_update(ctx, text, &u);
    } else if (type == EXPR_PROJECTION) {
        expr_projection *p;
        s = expr_parse_projection(ctx, text, &p);
    } else {
        expr_node *root;
        s = expr_parse_condition(ctx, type, text, &root);
    }
    FUZZ_CHECK(s, "expr_parse", KURA_OK, KURA_E_INVALID, KURA_E_NOMEM);
    /* "Invalid <Kind>: Syntax error; ..." (the words alone may be inside a value) */
    const char *colon = s == KURA_E_INVALID ? strchr(kura_last_error(), ':') : NULL;
    if (colon && strncmp(colon, ": Syntax error;", 15) == 0) {
        fprintf(stderr, "partiql_parse_fuzz: translated text \"%s\": %s\n", text,
                kura_last_error());
        abort();
    }
}

static void fz_plan(const pq_plan *p)
{
    expr_ctx *ctx;
    /* the values are checked here (a parameter may be a set with a member twice) */
    kura_status s = expr_ctx_new(p->names, p->values, &ctx);
    FUZZ_CHECK(s, "expr_ctx_new", KURA_OK, KURA_E_INVALID, KURA_E_NOMEM);
    if (s != KURA_OK) return;
    fz_expr(ctx, EXPR_KEY_CONDITION, p->key_condition);
    fz_expr(ctx, p->kind == PQ_P_QUERY || p->kind == PQ_P_SCAN ? EXPR_FILTER : EXPR_CONDITION,
            p->condition);
    fz_expr(ctx, EXPR_UPDATE, p->update);
    fz_expr(ctx, EXPR_PROJECTION, p->projection);
    expr_ctx_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_params[0]) fz_init();
    if (size < 1) return 0;
    const kura_value *params = data[0] & 3 ? fz_params[data[0] & 3] : NULL;
    pq_keys keys = {"pk", data[0] & 4 ? "sk" : NULL};
    pq_stmt *st = NULL;
    kura_status s = pq_parse((const char *)data + 1, size - 1, params, &st);
    FUZZ_CHECK(s, "pq_parse", KURA_OK, KURA_E_INVALID, KURA_E_NOMEM);
    if (s == KURA_E_INVALID) {
        const char *m = kura_last_error();
        fz_check(strncmp(m, PQ_MSG_SYNTAX, strlen(PQ_MSG_SYNTAX)) == 0 ||
                     strcmp(m, PQ_MSG_PARAMS) == 0 || strstr(m, "umber") != NULL ||
                     strncmp(m, "Unrecognized function: ", 23) == 0 ||
                     strcmp(m, "Input collection contains duplicates") == 0 ||
                     strncmp(m, "Invalid returning clause: ", 26) == 0,
                 "parse message");
    }
    if (s != KURA_OK) return 0;
    volatile unsigned sink = fz_stmt(st);
    (void)sink;
    pq_plan plan;
    s = pq_translate(st, &keys, &plan);
    FUZZ_CHECK(s, "pq_translate", KURA_OK, KURA_E_INVALID, KURA_E_NOMEM);
    if (s == KURA_OK) fz_plan(&plan);
    pq_plan_free(&plan);
    pq_stmt_free(st);
    return 0;
}

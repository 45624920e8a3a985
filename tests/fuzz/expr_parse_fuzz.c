/*
 * expr_parse_fuzz.c - libFuzzer target: the expression parser on arbitrary text.
 *
 * This file contains a fuzz target for engine/expr's parser. The first input byte picks the
 * expression type (KeyCondition, Condition, Filter, Update, Projection); the rest is the
 * expression. The names map {#a, #b, #n} and a values map with a value of every type are
 * built once. Whatever the input, the parser must return KURA_OK or KURA_E_INVALID with a
 * message (KURA_E_NOMEM only when memory runs out), never crash; on success the tree must
 * keep the promises of expr.h, which are checked by walking all of it: every value node
 * points into the values map, paths are 1..32 steps starting with a name, operators have
 * their number of operands. Seeds: corpus/expr_parse_fuzz/ (one file per seed, first byte
 * '0'..'4' = the type).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/expr/expr.h"
#include "tests/fuzz/fuzz_common.h"

static kura_value *fz_names, *fz_values;

static void fz_put(kura_value *m, const char *k, kura_value *v)
{
    if (!v || kura_value_map_put(m, k, strlen(k), v) != KURA_OK)
        abort();
}

static kura_value *fz_set(kura_type t, kura_value *e)
{
    kura_value *s = kura_value_set(t);
    if (!s || kura_value_append(s, e) != KURA_OK)
        abort();
    return s;
}

static void fz_init(void)
{
    fz_names = kura_value_map();
    fz_put(fz_names, "#a", kura_value_s("a", 1));
    fz_put(fz_names, "#b", kura_value_s("b", 1));
    fz_put(fz_names, "#n", kura_value_s("status", 6));
    fz_values = kura_value_map();
    fz_put(fz_values, ":a", kura_value_s("x", 1));
    fz_put(fz_values, ":s", kura_value_s("S", 1));
    fz_put(fz_values, ":n", kura_value_n("1", 1));
    fz_put(fz_values, ":m", kura_value_n("-2.5", 4));
    fz_put(fz_values, ":b", kura_value_b("\x01", 1));
    fz_put(fz_values, ":t", kura_value_bool(true));
    fz_put(fz_values, ":z", kura_value_null());
    fz_put(fz_values, ":l", kura_value_list());
    fz_put(fz_values, ":o", kura_value_map());
    fz_put(fz_values, ":ss", fz_set(KURA_SS, kura_value_s("a", 1)));
    fz_put(fz_values, ":ns", fz_set(KURA_NS, kura_value_n("1", 1)));
    fz_put(fz_values, ":bs", fz_set(KURA_BS, kura_value_b("\x02", 1)));
}

static void fz_check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "expr_parse_fuzz: broken tree: %s\n", what);
        abort();
    }
}

/* Reads every byte of the path so ASan checks the name pointers. */
static unsigned fz_path(const expr_path *p)
{
    unsigned x = 0;
    fz_check(p->n >= 1 && p->n <= 32 && p->elems && !p->elems[0].is_index, "path shape");
    for (uint32_t i = 0; i < p->n; i++) {
        const expr_path_elem *e = &p->elems[i];
        if (e->is_index) {
            fz_check(e->index <= 2147483647u, "index range");
            x += e->index;
        } else {
            fz_check(e->name != NULL, "name");
            for (uint32_t j = 0; j < e->name_len; j++)
                x += (unsigned char)e->name[j];
        }
    }
    return x;
}

static unsigned fz_node(const expr_node *n, int depth)
{
    static const uint32_t fixed[] = {
        [EXPR_OP_SIZE] = 1, [EXPR_OP_PLUS] = 2, [EXPR_OP_MINUS] = 2,
        [EXPR_OP_IF_NOT_EXISTS] = 2, [EXPR_OP_LIST_APPEND] = 2,
        [EXPR_OP_EQ] = 2, [EXPR_OP_NE] = 2, [EXPR_OP_LT] = 2, [EXPR_OP_LE] = 2,
        [EXPR_OP_GT] = 2, [EXPR_OP_GE] = 2, [EXPR_OP_BETWEEN] = 3,
        [EXPR_OP_AND] = 2, [EXPR_OP_OR] = 2, [EXPR_OP_NOT] = 1,
        [EXPR_OP_ATTR_EXISTS] = 1, [EXPR_OP_ATTR_NOT_EXISTS] = 1, [EXPR_OP_ATTR_TYPE] = 2,
        [EXPR_OP_BEGINS_WITH] = 2, [EXPR_OP_CONTAINS] = 2,
    };
    fz_check(n != NULL && depth < 10000, "node");
    if (n->op == EXPR_OP_PATH)
        return fz_path(&n->path);
    if (n->op == EXPR_OP_VALUE) {
        fz_check(n->value != NULL, "value resolved");
        return kura_value_type(n->value);
    }
    if (n->op == EXPR_OP_IN)
        fz_check(n->nkids >= 2 && n->nkids <= 101, "IN operands");
    else
        fz_check(n->op <= EXPR_OP_CONTAINS && n->nkids == fixed[n->op], "operand count");
    unsigned x = n->op;
    for (uint32_t i = 0; i < n->nkids; i++)
        x += fz_node(n->kids[i], depth + 1);
    return x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const expr_type types[] = {EXPR_KEY_CONDITION, EXPR_CONDITION, EXPR_FILTER,
                                      EXPR_UPDATE, EXPR_PROJECTION};
    if (!fz_names)
        fz_init();
    if (size < 1)
        return 0;
    expr_type type = types[data[0] % 5];
    char *s = malloc(size);
    if (!s)
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = 0; /* the expression ends at its first NUL, as a C string does */

    expr_ctx *ctx;
    FUZZ_CHECK(expr_ctx_new(fz_names, fz_values, &ctx), "expr_ctx_new", KURA_OK, KURA_E_NOMEM);
    kura_status st;
    volatile unsigned sink = 0;
    if (type == EXPR_UPDATE) {
        expr_update *u;
        st = expr_parse_update(ctx, s, &u);
        for (uint32_t i = 0; st == KURA_OK && i < u->n; i++) {
            const expr_action *a = &u->actions[i];
            sink += fz_path(&a->path);
            fz_check((a->kind == EXPR_REMOVE) == (a->operand == NULL), "action operand");
            if (a->operand)
                sink += fz_node(a->operand, 0);
            if (a->kind == EXPR_ADD || a->kind == EXPR_DELETE)
                fz_check(a->operand->op == EXPR_OP_VALUE, "ADD/DELETE value");
        }
    } else if (type == EXPR_PROJECTION) {
        expr_projection *p;
        st = expr_parse_projection(ctx, s, &p);
        for (uint32_t i = 0; st == KURA_OK && i < p->n; i++)
            sink += fz_path(&p->paths[i]);
    } else {
        expr_node *root;
        st = expr_parse_condition(ctx, type, s, &root);
        if (st == KURA_OK)
            sink += fz_node(root, 0);
    }
    FUZZ_CHECK(st, "expr_parse", KURA_OK, KURA_E_INVALID, KURA_E_NOMEM);
    if (st == KURA_E_INVALID)
        fz_check(strncmp(kura_last_error(), "Invalid ", 8) == 0, "message prefix");
    FUZZ_CHECK(expr_check_unused(ctx), "expr_check_unused", KURA_OK, KURA_E_INVALID,
               KURA_E_NOMEM);
    expr_ctx_free(ctx);
    free(s);
    (void)sink;
    return 0;
}

/*
 * parse_proj.c - ProjectionExpression: comma-separated document paths.
 *
 * This file contains expr_parse_projection(). Grammar: path (',' path)*. Checks, in
 * DynamoDB's order: reserved words, then each path (depth, list indexes, #names), then
 * paths that overlap ("a, a.b") or conflict ("a[1], a.b").
 */
#include <stdlib.h>

#include "engine/expr/expr_int.h"

/* path (',' path)* up to EOF, into *paths_out (malloc'ed array of arena paths). */
static bool proj_parse(expr_parser *p, expr_path ***paths_out, uint32_t *n_out)
{
    expr_path **v = NULL;
    uint32_t n = 0, cap = 0;
    do {
        expr_pnode *node = expr_parse_path_node(p);
        if (!node)
            goto fail;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            expr_path **nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                p->nomem = true;
                goto fail;
            }
            v = nv;
        }
        v[n++] = &node->n.path;
    } while (expr_accept(p, EXPR_TOK_COMMA));
    if (!expr_accept(p, EXPR_TOK_EOF))
        goto fail;
    *paths_out = v;
    *n_out = n;
    return true;
fail:
    free(v);
    return false;
}

static kura_status proj_check(expr_parser *p, expr_path **paths, uint32_t n)
{
    kura_status st;
    for (uint32_t i = 0; i < n; i++)
        if ((st = expr_check_path_reserved(p, paths[i])) != KURA_OK)
            return st;
    for (uint32_t i = 0; i < n; i++)
        if ((st = expr_check_path(p, paths[i])) != KURA_OK)
            return st;
    return expr_check_overlaps(p, paths, n);
}

kura_status expr_parse_projection(expr_ctx *ctx, const char *s, expr_projection **proj_out)
{
    expr_parser p;
    expr_path **paths = NULL;
    uint32_t n = 0;
    kura_status st = expr_parser_init(&p, ctx, EXPR_PROJECTION, s);
    if (st != KURA_OK)
        return st;
    if (!proj_parse(&p, &paths, &n) || p.nomem)
        st = expr_syntax_error(&p);
    else
        st = proj_check(&p, paths, n);
    expr_projection *proj = NULL;
    if (st == KURA_OK) {
        proj = arena_alloc(ctx->arena, sizeof *proj);
        expr_path *v = arena_alloc(ctx->arena, n * sizeof *v);
        if (!proj || !v) {
            st = kura_err(KURA_E_NOMEM, "out of memory parsing an expression");
        } else {
            for (uint32_t i = 0; i < n; i++)
                v[i] = *paths[i];
            proj->paths = v;
            proj->n = n;
        }
    }
    free(paths);
    expr_parser_done(&p);
    if (st == KURA_OK)
        *proj_out = proj;
    return st;
}

/*
 * parse_check.c - the checks DynamoDB makes of a parsed expression.
 *
 * This file contains what runs after a successful parse: the tree walks that find redundant
 * parentheses, unknown or misplaced functions, reserved words, too many operators, and then,
 * left to right, undefined names and values, over-deep paths, list indexes out of range and
 * operands of a type that can never be right. DynamoDB reports one error per request; the
 * order of the checks below is the order in which it reports them when an expression has
 * several problems (observed with DynamoDB Local and dynalite). Names and values are
 * resolved here: a path's "#n" step is replaced by the name it stands for, a value node gets
 * its pointer into the values map.
 */
#include <stdio.h>
#include <string.h>

#include "engine/expr/expr_int.h"

bool expr_walk(expr_parser *p, const expr_pnode *n, const expr_pnode *parent, expr_visit_fn fn,
               kura_status *st)
{
    for (uint32_t i = 0; i < n->n.nkids; i++)
        if (!expr_walk(p, expr_pn(n->n.kids[i]), n, fn, st))
            return false;
    return fn(p, n, parent, st);
}

bool expr_visit_parens(expr_parser *p, const expr_pnode *n, const expr_pnode *parent,
                       kura_status *st)
{
    if (n->parens < 2)
        return true;
    *st = expr_fail(p, "The expression has redundant parentheses;");
    return false;
}

kura_status expr_check_path_reserved(expr_parser *p, const expr_path *path)
{
    for (uint32_t i = 0; i < path->n; i++) {
        const expr_path_elem *e = &path->elems[i];
        if (!e->is_index && e->name[0] != '#' && expr_is_reserved(e->name, e->name_len))
            return expr_fail(p, "Attribute name is a reserved keyword; reserved keyword: %.*s",
                             (int)e->name_len, e->name);
    }
    return KURA_OK;
}

bool expr_visit_reserved(expr_parser *p, const expr_pnode *n, const expr_pnode *parent,
                         kura_status *st)
{
    if (n->n.op != EXPR_OP_PATH)
        return true;
    *st = expr_check_path_reserved(p, &n->n.path);
    return *st == KURA_OK;
}

kura_status expr_check_path(expr_parser *p, expr_path *path)
{
    if (path->n > EXPR_MAX_PATH_DEPTH)
        return expr_fail(p, "The document path has too many nesting levels; nesting levels: %u",
                         path->n);
    for (uint32_t i = 0; i < path->n; i++) {
        expr_path_elem *e = &path->elems[i];
        if (e->is_index && e->index > EXPR_MAX_INDEX)
            return expr_fail(p, "List index is not within the allowable range; index: [%.*s]",
                             (int)e->name_len, e->name);
    }
    for (uint32_t i = 0; i < path->n; i++) {
        expr_path_elem *e = &path->elems[i];
        if (e->is_index || e->name[0] != '#')
            continue;
        const kura_value *v = expr_ctx_name(p->ctx, e->name, e->name_len);
        if (!v)
            return expr_fail(p,
                             "An expression attribute name used in the document path is not "
                             "defined; attribute name: %.*s",
                             (int)e->name_len, e->name);
        e->name = (const char *)v->u.bytes.p;
        e->name_len = v->u.bytes.len;
    }
    return KURA_OK;
}

kura_status expr_check_value(expr_parser *p, expr_pnode *n)
{
    const expr_tok *t = &p->toks[n->tok];
    const kura_value *v = expr_ctx_value(p->ctx, p->src + t->off, t->len);
    if (!v)
        return expr_fail(p,
                         "An expression attribute value used in expression is not defined; "
                         "attribute value: %.*s",
                         (int)t->len, p->src + t->off);
    n->n.value = v;
    return KURA_OK;
}

void expr_path_str(const expr_path *path, char *buf, size_t cap)
{
    size_t off = 0;
    off += (size_t)snprintf(buf, cap, "[");
    for (uint32_t i = 0; i < path->n && off < cap; i++) {
        const expr_path_elem *e = &path->elems[i];
        const char *sep = i ? ", " : "";
        if (e->is_index)
            off += (size_t)snprintf(buf + off, cap - off, "%s[%u]", sep, e->index);
        else
            off += (size_t)snprintf(buf + off, cap - off, "%s%.*s", sep, (int)e->name_len,
                                    e->name);
    }
    if (off < cap)
        snprintf(buf + off, cap - off, "]");
}

bool expr_path_equal(const expr_path *a, const expr_path *b)
{
    if (a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++) {
        const expr_path_elem *x = &a->elems[i], *y = &b->elems[i];
        if (x->is_index != y->is_index ||
            (x->is_index ? x->index != y->index
                         : x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len)))
            return false;
    }
    return true;
}

/* 0: independent; 1: one is a prefix of the other (overlap); 2: same prefix, then a name
 * where the other has an index (conflict). */
static int expr_paths_clash(const expr_path *a, const expr_path *b)
{
    for (uint32_t i = 0; i < a->n && i < b->n; i++) {
        const expr_path_elem *x = &a->elems[i], *y = &b->elems[i];
        if (x->is_index != y->is_index)
            return 2;
        if (x->is_index ? x->index != y->index
                        : x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len))
            return 0;
    }
    return 1;
}

kura_status expr_check_overlaps(expr_parser *p, expr_path *const *paths, uint32_t n)
{
    const expr_path *c1 = NULL, *c2 = NULL;
    for (uint32_t j = 1; j < n; j++) {
        for (uint32_t i = 0; i < j; i++) {
            int clash = expr_paths_clash(paths[i], paths[j]);
            if (clash == 1) {
                char a[512], b[512];
                expr_path_str(paths[i], a, sizeof a);
                expr_path_str(paths[j], b, sizeof b);
                return expr_fail(p,
                                 "Two document paths overlap with each other; must remove or "
                                 "rewrite one of these paths; path one: %s, path two: %s",
                                 a, b);
            }
            if (clash == 2 && !c1) {
                c1 = paths[i];
                c2 = paths[j];
            }
        }
    }
    if (c1) {
        char a[512], b[512];
        expr_path_str(c1, a, sizeof a);
        expr_path_str(c2, b, sizeof b);
        return expr_fail(p,
                         "Two document paths conflict with each other; must remove or rewrite "
                         "one of these paths; path one: %s, path two: %s",
                         a, b);
    }
    return KURA_OK;
}

kura_type expr_node_type(const expr_pnode *n)
{
    if (n->n.op == EXPR_OP_VALUE && n->n.value)
        return (kura_type)n->n.value->type;
    if (n->fn == EXPR_FN_SIZE)
        return KURA_N;
    return 0;
}

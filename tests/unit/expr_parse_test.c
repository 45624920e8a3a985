/*
 * expr_parse_test.c - the expression parser (engine/expr/lex.c, parse*.c, names.c,
 * reserved.c): the trees it builds (precedence, paths, names and values resolved, update
 * actions, projections), keyword case and whitespace, and every error message with its
 * exact text. The expected messages were taken from DynamoDB (DynamoDB Local 1.25.1 gives
 * the same texts for all of them; the cases where dynalite differs are noted).
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "engine/expr/expr.h"

static kura_value *test_names, *test_values;

static void put(kura_value *m, const char *k, kura_value *v)
{
    assert_kura_ok(kura_value_map_put(m, k, strlen(k), v));
}

static kura_value *set_of(kura_type t, kura_value *e)
{
    kura_value *s = kura_value_set(t);
    assert_kura_ok(kura_value_append(s, e));
    return s;
}

static int setup(void **state)
{
    test_names = kura_value_map();
    put(test_names, "#a", kura_value_s("a", 1));
    put(test_names, "#b", kura_value_s("b", 1));
    put(test_names, "#st", kura_value_s("status", 6));
    put(test_names, "#dot", kura_value_s("x.y", 3));
    test_values = kura_value_map();
    put(test_values, ":s", kura_value_s("x", 1));
    put(test_values, ":s2", kura_value_s("y", 1));
    put(test_values, ":n", kura_value_n("1", 1));
    put(test_values, ":n2", kura_value_n("2", 1));
    put(test_values, ":l", kura_value_list());
    put(test_values, ":m", kura_value_map());
    put(test_values, ":ss", set_of(KURA_SS, kura_value_s("a", 1)));
    put(test_values, ":ns", set_of(KURA_NS, kura_value_n("1", 1)));
    put(test_values, ":bs", set_of(KURA_BS, kura_value_b("\x01", 1)));
    put(test_values, ":b", kura_value_b("\x01\x02", 2));
    put(test_values, ":t", kura_value_bool(true));
    put(test_values, ":z", kura_value_null());
    put(test_values, ":sN", kura_value_s("N", 1));
    put(test_values, ":sX", kura_value_s("X", 1));
    return 0;
}

static int teardown(void **state)
{
    kura_value_free(test_names);
    kura_value_free(test_values);
    return 0;
}

/* Parses `s` as expression kind c/k/f (conditions), u (update) or p (projection). */
static kura_status parse(expr_ctx *ctx, char kind, const char *s, expr_node **root,
                         expr_update **u, expr_projection **p)
{
    switch (kind) {
    case 'u': return expr_parse_update(ctx, s, u);
    case 'p': return expr_parse_projection(ctx, s, p);
    case 'k': return expr_parse_condition(ctx, EXPR_KEY_CONDITION, s, root);
    case 'f': return expr_parse_condition(ctx, EXPR_FILTER, s, root);
    default: return expr_parse_condition(ctx, EXPR_CONDITION, s, root);
    }
}

static void check_error(char kind, const char *s, const char *want)
{
    expr_ctx *ctx;
    expr_node *root = NULL;
    expr_update *u = NULL;
    expr_projection *p = NULL;
    assert_kura_ok(expr_ctx_new(test_names, test_values, &ctx));
    kura_status st = parse(ctx, kind, s, &root, &u, &p);
    if (st != KURA_E_INVALID || strcmp(kura_last_error(), want) != 0)
        fail_msg("%c \"%.80s\":\n  got  %s: %s\n  want %s", kind, s, kura_status_str(st),
                 st ? kura_last_error() : "", want);
    /* out-parameters are untouched on failure */
    assert_null(root);
    assert_null(u);
    assert_null(p);
    expr_ctx_free(ctx);
}

static void check_ok(char kind, const char *s)
{
    expr_ctx *ctx;
    expr_node *root = NULL;
    expr_update *u = NULL;
    expr_projection *p = NULL;
    assert_kura_ok(expr_ctx_new(test_names, test_values, &ctx));
    kura_status st = parse(ctx, kind, s, &root, &u, &p);
    if (st != KURA_OK)
        fail_msg("%c \"%.80s\": %s", kind, s, kura_last_error());
    assert_true(root || u || p);
    expr_ctx_free(ctx);
}

/* Writes a compact form of a tree: OP(kid, kid), paths as a.b[1], values as :<type>. */
static void dump(const expr_node *n, char *buf, size_t cap);

static void dump_path(const expr_path *p, char *buf, size_t cap)
{
    size_t off = strlen(buf);
    for (uint32_t i = 0; i < p->n && off < cap; i++) {
        const expr_path_elem *e = &p->elems[i];
        if (e->is_index)
            off += (size_t)snprintf(buf + off, cap - off, "[%u]", e->index);
        else
            off += (size_t)snprintf(buf + off, cap - off, "%s%.*s", i ? "." : "",
                                    (int)e->name_len, e->name);
    }
}

static void dump(const expr_node *n, char *buf, size_t cap)
{
    static const char *const names[] = {
        [EXPR_OP_SIZE] = "size", [EXPR_OP_PLUS] = "+", [EXPR_OP_MINUS] = "-",
        [EXPR_OP_IF_NOT_EXISTS] = "if_not_exists", [EXPR_OP_LIST_APPEND] = "list_append",
        [EXPR_OP_EQ] = "=", [EXPR_OP_NE] = "<>", [EXPR_OP_LT] = "<", [EXPR_OP_LE] = "<=",
        [EXPR_OP_GT] = ">", [EXPR_OP_GE] = ">=", [EXPR_OP_BETWEEN] = "BETWEEN",
        [EXPR_OP_IN] = "IN", [EXPR_OP_AND] = "AND", [EXPR_OP_OR] = "OR", [EXPR_OP_NOT] = "NOT",
        [EXPR_OP_ATTR_EXISTS] = "attribute_exists",
        [EXPR_OP_ATTR_NOT_EXISTS] = "attribute_not_exists",
        [EXPR_OP_ATTR_TYPE] = "attribute_type", [EXPR_OP_BEGINS_WITH] = "begins_with",
        [EXPR_OP_CONTAINS] = "contains",
    };
    size_t off = strlen(buf);
    if (n->op == EXPR_OP_PATH) {
        dump_path(&n->path, buf, cap);
        return;
    }
    if (n->op == EXPR_OP_VALUE) {
        assert_non_null(n->value);
        snprintf(buf + off, cap - off, ":%s", val_type_name((kura_type)n->value->type));
        return;
    }
    snprintf(buf + off, cap - off, "%s(", names[n->op]);
    for (uint32_t i = 0; i < n->nkids; i++) {
        if (i)
            strncat(buf, ", ", cap - strlen(buf) - 1);
        dump(n->kids[i], buf, cap);
    }
    strncat(buf, ")", cap - strlen(buf) - 1);
}

static void check_tree(const char *s, const char *want)
{
    expr_ctx *ctx;
    expr_node *root;
    char buf[2048] = "";
    assert_kura_ok(expr_ctx_new(test_names, test_values, &ctx));
    if (expr_parse_condition(ctx, EXPR_CONDITION, s, &root) != KURA_OK)
        fail_msg("\"%s\": %s", s, kura_last_error());
    dump(root, buf, sizeof buf);
    if (strcmp(buf, want) != 0)
        fail_msg("\"%s\"\n  got  %s\n  want %s", s, buf, want);
    expr_ctx_free(ctx);
}

static void test_condition_trees(void **state)
{
    check_tree("a = :n", "=(a, :N)");
    check_tree("a = :n OR b = :n AND c = :n", "OR(=(a, :N), AND(=(b, :N), =(c, :N)))");
    check_tree("a = :n AND b = :n OR c = :n", "OR(AND(=(a, :N), =(b, :N)), =(c, :N))");
    check_tree("NOT a = :n AND b = :n", "AND(NOT(=(a, :N)), =(b, :N))");
    check_tree("NOT (a = :n AND b = :n)", "NOT(AND(=(a, :N), =(b, :N)))");
    check_tree("NOT NOT a = :n", "NOT(NOT(=(a, :N)))");
    check_tree("(a = :n OR b = :n) AND c = :n", "AND(OR(=(a, :N), =(b, :N)), =(c, :N))");
    check_tree("a <> :n OR a < :n OR a <= :n OR a > :n OR a >= :n",
               "OR(<>(a, :N), OR(<(a, :N), OR(<=(a, :N), OR(>(a, :N), >=(a, :N)))))");
    check_tree("a BETWEEN :n AND :n2 AND b = :s", "AND(BETWEEN(a, :N, :N), =(b, :S))");
    check_tree("a IN (:n, :s, b.c)", "IN(a, :N, :S, b.c)");
    check_tree("a.b[2].c = #a.#b[10]", "=(a.b[2].c, a.b[10])");
    check_tree("#dot = :n", "=(x.y, :N)");
    check_tree("(a) = (:n)", "=(a, :N)");
    check_tree("size(a) > :n", ">(size(a), :N)");
    check_tree("size(a) BETWEEN :n AND :n2", "BETWEEN(size(a), :N, :N)");
    check_tree("attribute_exists(a) AND attribute_not_exists(#b)",
               "AND(attribute_exists(a), attribute_not_exists(b))");
    check_tree("attribute_type(a, :sN) OR begins_with(a, :s) OR contains(a, :n)",
               "OR(attribute_type(a, :S), OR(begins_with(a, :S), contains(a, :N)))");
    check_tree("begins_with(:s, a)", "begins_with(:S, a)");
    /* keywords in any case; whitespace anywhere between tokens */
    check_tree("a = :n and b between :n And :n2 oR NoT c in (:n)",
               "OR(AND(=(a, :N), BETWEEN(b, :N, :N)), NOT(IN(c, :N)))");
    check_tree("\t a\n.\rb [ 1 ] =:n ", "=(a.b[1], :N)");
    /* identifiers that start like a keyword are names */
    check_tree("android = :n AND order_id = :n", "AND(=(android, :N), =(order_id, :N))");
}

static void test_values_and_names(void **state)
{
    expr_ctx *ctx;
    expr_node *root;
    assert_kura_ok(expr_ctx_new(test_names, test_values, &ctx));
    assert_kura_ok(expr_parse_condition(ctx, EXPR_FILTER, "#st = :s", &root));
    /* the value node points into the values map; the name is the map's string */
    assert_ptr_equal(root->kids[1]->value, kura_value_get(test_values, ":s", 2));
    assert_int_equal(root->kids[0]->path.elems[0].name_len, 6);
    assert_memory_equal(root->kids[0]->path.elems[0].name, "status", 6);
    /* a big list index */
    assert_kura_ok(expr_parse_condition(ctx, EXPR_FILTER, "a[2147483647] = :n", &root));
    assert_true(root->kids[0]->path.elems[1].is_index);
    assert_int_equal(root->kids[0]->path.elems[1].index, 2147483647u);
    /* several expressions share one context */
    expr_update *u;
    assert_kura_ok(expr_parse_update(ctx, "SET a = :n", &u));
    assert_int_equal(u->n, 1);
    expr_ctx_free(ctx);
}

static void test_update_actions(void **state)
{
    expr_ctx *ctx;
    expr_update *u;
    char buf[512];
    assert_kura_ok(expr_ctx_new(test_names, test_values, &ctx));
    assert_kura_ok(expr_parse_update(ctx,
                                     "remove x, y[1] SET a = :n, b = c + :n, k.#a = "
                                     "if_not_exists(e, :n) - :n2, f = list_append(:l, g) "
                                     "ADD h :ns DELETE i :ss",
                                     &u));
    static const struct {
        expr_action_kind kind;
        const char *path, *operand;
    } want[] = {
        {EXPR_REMOVE, "x", NULL},
        {EXPR_REMOVE, "y[1]", NULL},
        {EXPR_SET, "a", ":N"},
        {EXPR_SET, "b", "+(c, :N)"},
        {EXPR_SET, "k.a", "-(if_not_exists(e, :N), :N)"},
        {EXPR_SET, "f", "list_append(:L, g)"},
        {EXPR_ADD, "h", ":NS"},
        {EXPR_DELETE, "i", ":SS"},
    };
    assert_int_equal(u->n, sizeof want / sizeof want[0]);
    for (uint32_t i = 0; i < u->n; i++) {
        assert_int_equal(u->actions[i].kind, want[i].kind);
        buf[0] = 0;
        dump_path(&u->actions[i].path, buf, sizeof buf);
        assert_string_equal(buf, want[i].path);
        if (!want[i].operand) {
            assert_null(u->actions[i].operand);
            continue;
        }
        buf[0] = 0;
        dump(u->actions[i].operand, buf, sizeof buf);
        assert_string_equal(buf, want[i].operand);
    }
    assert_kura_ok(expr_parse_update(ctx, "SET a = (b + :n), c = (d) - (:n)", &u));
    assert_int_equal(u->n, 2);
    assert_int_equal(u->actions[0].operand->op, EXPR_OP_PLUS);
    assert_int_equal(u->actions[1].operand->op, EXPR_OP_MINUS);
    expr_ctx_free(ctx);
}

static void test_projection(void **state)
{
    expr_ctx *ctx;
    expr_projection *p;
    char buf[256];
    assert_kura_ok(expr_ctx_new(test_names, test_values, &ctx));
    assert_kura_ok(expr_parse_projection(ctx, "a, #b.c[3], d.e.f, d.e.g, #st", &p));
    static const char *const want[] = {"a", "b.c[3]", "d.e.f", "d.e.g", "status"};
    assert_int_equal(p->n, 5);
    for (uint32_t i = 0; i < p->n; i++) {
        buf[0] = 0;
        dump_path(&p->paths[i], buf, sizeof buf);
        assert_string_equal(buf, want[i]);
    }
    expr_ctx_free(ctx);
}

#define CE "Invalid ConditionExpression: "
#define UE "Invalid UpdateExpression: "
#define PE "Invalid ProjectionExpression: "
#define SYN "Syntax error; "

static void test_syntax_errors(void **state)
{
    static const char *const cases[][3] = {
        {"c", "a = = b", CE SYN "token: \"=\", near: \"= = b\""},
        {"c", "a =", CE SYN "token: \"<EOF>\", near: \"=\""},
        {"c", "a", CE SYN "token: \"<EOF>\", near: \"a\""},
        {"c", "   ", CE SYN "token: \"<EOF>\", near: \"   \""},
        {"c", "(a = :n", CE SYN "token: \"<EOF>\", near: \":n\""},
        {"c", " a = :n)", CE SYN "token: \")\", near: \":n)\""},
        {"c", "a = :n AND", CE SYN "token: \"<EOF>\", near: \"AND\""},
        {"c", "a.b. = :n", CE SYN "token: \"=\", near: \". = :n\""},
        {"c", "a-b = :n", CE SYN "token: \"-\", near: \"a-b\""},
        {"c", "a = :n  OR  OR b = :n", CE SYN "token: \"OR\", near: \"OR  OR b\""},
        {"c", "a = $x", CE SYN "token: \"$\", near: \"= $x\""},
        {"c", "a[x] = :n", CE SYN "token: \"x\", near: \"[x]\""},
        {"c", "a = :n and b = :n c", CE SYN "token: \"c\", near: \":n c\""},
        {"c", "(a).b = :n", CE SYN "token: \".\", near: \").b\""},
        {"c", "a IN ()", CE SYN "token: \")\", near: \"()\""},
        {"c", "a IN (:n,)", CE SYN "token: \")\", near: \",)\""},
        {"c", "a = :n\\", CE SYN "token: \"\\\", near: \":n\\\""},
        {"c", "#", CE SYN "token: \"#\", near: \"#\""},
        {"c", "a = : n", CE SYN "token: \":\", near: \"= : n\""},
        {"c", "a = # a", CE SYN "token: \"#\", near: \"= # a\""},
        {"c", "a < > b", CE SYN "token: \">\", near: \"< > b\""},
        {"c", "a[01] = :n", CE SYN "token: \"1\", near: \"01]\""},
        {"c", "AND = :n", CE SYN "token: \"AND\", near: \"AND =\""},
        {"c", "a = and", CE SYN "token: \"and\", near: \"= and\""},
        {"c", "1 = :n", CE SYN "token: \"1\", near: \"1 =\""},
        {"c", "_a = :n", CE SYN "token: \"_\", near: \"_a\""},
        {"c", "\xc3\xa9 = :n", CE SYN "token: \"\xc3\xa9\", near: \"\xc3\xa9 =\""},
        {"c", "a = :n --x", CE SYN "token: \"-\", near: \":n --\""},
        {"c", "a = :n + :n", CE SYN "token: \"+\", near: \":n + :n\""},
        {"u", "SET a = b + c + d", UE SYN "token: \"+\", near: \"c + d\""},
        {"u", "SET a = b + (c - d)", UE SYN "token: \"-\", near: \"c - d\""},
        {"u", "SET a = (b + c) + d", UE SYN "token: \"+\", near: \") + d\""},
        {"u", "SET a", UE SYN "token: \"<EOF>\", near: \"a\""},
        {"u", "SET a = ", UE SYN "token: \"<EOF>\", near: \"= \""},
        {"u", "SET a = :n,", UE SYN "token: \"<EOF>\", near: \",\""},
        {"u", "SET", UE SYN "token: \"<EOF>\", near: \"SET\""},
        {"u", "REMOVE", UE SYN "token: \"<EOF>\", near: \"REMOVE\""},
        {"u", "ADD a b", UE SYN "token: \"b\", near: \"a b\""},
        {"u", "ADD a :n :n", UE SYN "token: \":n\", near: \":n :n\""},
        {"u", "SET a = b = c", UE SYN "token: \"=\", near: \"b = c\""},
        {"u", "SET a = -1", UE SYN "token: \"-\", near: \"= -1\""},
        {"u", "SET a = if_not_exists(b, :n + :n)", UE SYN "token: \"+\", near: \":n + :n\""},
        {"u", "FOO a", UE SYN "token: \"FOO\", near: \"FOO a\""},
        {"u", "SET a = :n, , b = :n", UE SYN "token: \",\", near: \", , b\""},
        {"p", "a,", PE SYN "token: \"<EOF>\", near: \",\""},
        {"p", "a b", PE SYN "token: \"b\", near: \"a b\""},
        {"p", ":n", PE SYN "token: \":n\", near: \":n\""},
        {"p", "size(a)", PE SYN "token: \"(\", near: \"size(a\""},
        {"f", "a =", "Invalid FilterExpression: " SYN "token: \"<EOF>\", near: \"=\""},
        {"k", "a =", "Invalid KeyConditionExpression: " SYN "token: \"<EOF>\", near: \"=\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_error(cases[i][0][0], cases[i][1], cases[i][2]);
}

static void test_condition_errors(void **state)
{
    static const char *const cases[][2] = {
        {"", CE "The expression can not be empty;"},
        {"a = :n AND ((b = :n))", CE "The expression has redundant parentheses;"},
        {"((a)) = :n", CE "The expression has redundant parentheses;"},
        {"((a = :n))", CE "The expression has redundant parentheses;"},
        {"NOT ((a = :n))", CE "The expression has redundant parentheses;"},
        {"a BETWEEN (:n) AND ((:n))", CE "The expression has redundant parentheses;"},
        {"((a = :n)) AND foo(b)", CE "The expression has redundant parentheses;"},
        {"size(a)", CE "The function is not allowed to be used this way in an expression; "
                       "function: size"},
        {"NOT size(a)", CE "The function is not allowed to be used this way in an expression; "
                           "function: size"},
        {"attribute_exists(a) = :n", CE "The function is not allowed to be used this way in an "
                                        "expression; function: attribute_exists"},
        {"foo(a)", CE "Invalid function name; function: foo"},
        {"size(:n) = :n AND foo(a)", CE "Invalid function name; function: foo"},
        {"if_not_exists(a, :n) = :n", CE "The function is not allowed in a condition "
                                         "expression; function: if_not_exists"},
        {"list_append(a, :l) = :n", CE "The function is not allowed in a condition expression; "
                                       "function: list_append"},
        {"status = :n", CE "Attribute name is a reserved keyword; reserved keyword: status"},
        {"a.Status = :n", CE "Attribute name is a reserved keyword; reserved keyword: Status"},
        {"a = a AND status = :n", CE "Attribute name is a reserved keyword; reserved keyword: "
                                     "status"},
        {"#x = :n", CE "An expression attribute name used in the document path is not defined; "
                       "attribute name: #x"},
        {"a = :x", CE "An expression attribute value used in expression is not defined; "
                      "attribute value: :x"},
        {"#x = :x", CE "An expression attribute name used in the document path is not defined; "
                       "attribute name: #x"},
        {":x = #x", CE "An expression attribute value used in expression is not defined; "
                       "attribute value: :x"},
        {"a = :x AND b = #x", CE "An expression attribute value used in expression is not "
                                 "defined; attribute value: :x"},
        {"size(:n) = :n", CE "Incorrect operand type for operator or function; operator or "
                             "function: size, operand type: N"},
        {"size(:n) = :n AND #x = :n", CE "Incorrect operand type for operator or function; "
                                         "operator or function: size, operand type: N"},
        {"size(size(a)) = :n", CE "Incorrect operand type for operator or function; operator "
                                  "or function: size, operand type: N"},
        {"attribute_exists(a, b)", CE "Incorrect number of operands for operator or function; "
                                      "operator or function: attribute_exists, number of "
                                      "operands: 2"},
        {"contains(a)", CE "Incorrect number of operands for operator or function; operator or "
                           "function: contains, number of operands: 1"},
        {"attribute_exists(:n)", CE "Operator or function requires a document path; operator "
                                    "or function: attribute_exists"},
        {"begins_with(a, :n)", CE "Incorrect operand type for operator or function; operator "
                                  "or function: begins_with, operand type: N"},
        {"begins_with(size(a), :s)", CE "Incorrect operand type for operator or function; "
                                        "operator or function: begins_with, operand type: N"},
        {"attribute_type(a, :n)", CE "Incorrect operand type for operator or function; operator "
                                     "or function: attribute_type, operand type: N"},
        {"attribute_type(a, size(b))", CE "Incorrect operand type for operator or function; "
                                          "operator or function: attribute_type, operand type: "
                                          "N"},
        /* DynamoDB Local lists the types in another order; this is dynalite's (real
         * DynamoDB's) text */
        {"attribute_type(a, :sX)", CE "Invalid attribute type name found; type: X, valid types: "
                                      "{B,NULL,SS,BOOL,L,BS,N,NS,S,M}"},
        {"a = a", CE "The first operand must be distinct from the remaining operands for this "
                     "operator or function; operator: =, first operand: [a]"},
        {"a.b = a.b", CE "The first operand must be distinct from the remaining operands for "
                         "this operator or function; operator: =, first operand: [a, b]"},
        {"a[1] = a[1]", CE "The first operand must be distinct from the remaining operands for "
                           "this operator or function; operator: =, first operand: [a, [1]]"},
        {"a < a", CE "The first operand must be distinct from the remaining operands for this "
                     "operator or function; operator: <, first operand: [a]"},
        {"contains(a, a)", CE "The first operand must be distinct from the remaining operands "
                              "for this operator or function; operator: contains, first "
                              "operand: [a]"},
        {"a IN (b, a)", CE "The first operand must be distinct from the remaining operands for "
                           "this operator or function; operator: IN, first operand: [a]"},
        {"a BETWEEN :n AND a", CE "The first operand must be distinct from the remaining "
                                  "operands for this operator or function; operator: BETWEEN, "
                                  "first operand: [a]"},
        {"a = a AND #x = :n", CE "The first operand must be distinct from the remaining "
                                 "operands for this operator or function; operator: =, first "
                                 "operand: [a]"},
        {"a BETWEEN :n2 AND :n", CE "The BETWEEN operator requires upper bound to be greater "
                                    "than or equal to lower bound; lower bound operand: "
                                    "AttributeValue: {N:2}, upper bound operand: "
                                    "AttributeValue: {N:1}"},
        {"a BETWEEN :s2 AND :s", CE "The BETWEEN operator requires upper bound to be greater "
                                    "than or equal to lower bound; lower bound operand: "
                                    "AttributeValue: {S:y}, upper bound operand: "
                                    "AttributeValue: {S:x}"},
        {"a BETWEEN :s AND :n", CE "The BETWEEN operator requires same data type for lower and "
                                   "upper bounds; lower bound operand: AttributeValue: {S:x}, "
                                   "upper bound operand: AttributeValue: {N:1}"},
        {"a BETWEEN :b AND :s", CE "The BETWEEN operator requires same data type for lower and "
                                   "upper bounds; lower bound operand: AttributeValue: "
                                   "{B:AQI=}, upper bound operand: AttributeValue: {S:x}"},
        {"a BETWEEN :ss AND :ss", CE "Incorrect operand type for operator or function; operator "
                                     "or function: BETWEEN, operand type: SS"},
        {"a BETWEEN :m AND :m", CE "Incorrect operand type for operator or function; operator "
                                   "or function: BETWEEN, operand type: M"},
        {"a < :ss", CE "Incorrect operand type for operator or function; operator or function: "
                       "<, operand type: SS"},
        {"a >= :t", CE "Incorrect operand type for operator or function; operator or function: "
                       ">=, operand type: BOOL"},
        {"a[2147483648] = :n", CE "List index is not within the allowable range; index: "
                                  "[2147483648]"},
        {"a[99999999999] = :n", CE "List index is not within the allowable range; index: "
                                   "[99999999999]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_error('c', cases[i][0], cases[i][1]);
    /* the same checks pass for what DynamoDB accepts */
    static const char *const ok[] = {
        "size(:s) = :n", "begins_with(:s, :s)", "contains(:s, a)", "size(a) = size(a)",
        "a IN (size(b), :n)", "a = :ss", "size(a) < :s", "a BETWEEN :n AND :n2",
        "a BETWEEN :n AND :n", "attribute_type(a, :sN)", "a = #a.b", "a <> :n",
        "attribute_not_exists(a) AND NOT attribute_exists(b)",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        check_ok('c', ok[i]);
}

static void test_update_errors(void **state)
{
    static const char *const cases[][2] = {
        {"", UE "The expression can not be empty;"},
        {"SET a = :n SET b = :n", UE "The \"SET\" section can only be used once in an update "
                                     "expression;"},
        {"remove a ADD b :n REMOVE c", UE "The \"REMOVE\" section can only be used once in an "
                                          "update expression;"},
        {"SET a = :n, a.b = :n", UE "Two document paths overlap with each other; must remove or "
                                    "rewrite one of these paths; path one: [a], path two: [a, b]"},
        {"SET a.b = :n, a = :n", UE "Two document paths overlap with each other; must remove or "
                                    "rewrite one of these paths; path one: [a, b], path two: [a]"},
        {"SET a = :n REMOVE a", UE "Two document paths overlap with each other; must remove or "
                                   "rewrite one of these paths; path one: [a], path two: [a]"},
        {"SET a = :n ADD #a :n", UE "Two document paths overlap with each other; must remove or "
                                    "rewrite one of these paths; path one: [a], path two: [a]"},
        {"REMOVE a[1], a[1]", UE "Two document paths overlap with each other; must remove or "
                                 "rewrite one of these paths; path one: [a, [1]], path two: "
                                 "[a, [1]]"},
        {"SET a[1] = :n, a.b = :n", UE "Two document paths conflict with each other; must "
                                       "remove or rewrite one of these paths; path one: [a, "
                                       "[1]], path two: [a, b]"},
        {"SET a = :n, a = :x", UE "Two document paths overlap with each other; must remove or "
                                  "rewrite one of these paths; path one: [a], path two: [a]"},
        {"ADD a :s", UE "Incorrect operand type for operator or function; operator: ADD, "
                        "operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND"},
        {"ADD a :l", UE "Incorrect operand type for operator or function; operator: ADD, "
                        "operand type: LIST, typeSet: ALLOWED_FOR_ADD_OPERAND"},
        {"ADD a :m", UE "Incorrect operand type for operator or function; operator: ADD, "
                        "operand type: MAP, typeSet: ALLOWED_FOR_ADD_OPERAND"},
        {"ADD a :t", UE "Incorrect operand type for operator or function; operator: ADD, "
                        "operand type: BOOLEAN, typeSet: ALLOWED_FOR_ADD_OPERAND"},
        {"ADD a :z", UE "Incorrect operand type for operator or function; operator: ADD, "
                        "operand type: NULL, typeSet: ALLOWED_FOR_ADD_OPERAND"},
        {"ADD a :b", UE "Incorrect operand type for operator or function; operator: ADD, "
                        "operand type: BINARY, typeSet: ALLOWED_FOR_ADD_OPERAND"},
        {"DELETE a :n", UE "Incorrect operand type for operator or function; operator: DELETE, "
                           "operand type: NUMBER, typeSet: ALLOWED_FOR_DELETE_OPERAND"},
        {"DELETE a :s", UE "Incorrect operand type for operator or function; operator: DELETE, "
                           "operand type: STRING, typeSet: ALLOWED_FOR_DELETE_OPERAND"},
        {"DELETE a :n, b :t", UE "Incorrect operand type for operator or function; operator: "
                                 "DELETE, operand type: BOOLEAN, typeSet: "
                                 "ALLOWED_FOR_DELETE_OPERAND"},
        {"SET a = b + :s", UE "Incorrect operand type for operator or function; operator or "
                              "function: +, operand type: S"},
        {"SET a = :n - :l", UE "Incorrect operand type for operator or function; operator or "
                               "function: -, operand type: L"},
        {"SET a = :s + :n, b = :m + :n", UE "Incorrect operand type for operator or function; "
                                            "operator or function: +, operand type: M"},
        {"SET a = :x, b = :s + :n", UE "Incorrect operand type for operator or function; "
                                       "operator or function: +, operand type: S"},
        {"SET a = :s + :n, b = :x", UE "An expression attribute value used in expression is not "
                                       "defined; attribute value: :x"},
        {"SET a = list_append(:n, b)", UE "Incorrect operand type for operator or function; "
                                          "operator or function: list_append, operand type: N"},
        {"SET a = list_append(:l, :s)", UE "Incorrect operand type for operator or function; "
                                           "operator or function: list_append, operand type: S"},
        {"SET a = if_not_exists(:n, b)", UE "Operator or function requires a document path; "
                                            "operator or function: if_not_exists"},
        {"SET a = if_not_exists(b)", UE "Incorrect number of operands for operator or function; "
                                        "operator or function: if_not_exists, number of "
                                        "operands: 1"},
        {"SET a = list_append(b)", UE "Incorrect number of operands for operator or function; "
                                      "operator or function: list_append, number of operands: "
                                      "1"},
        {"SET a = foo(b)", UE "Invalid function name; function: foo"},
        {"SET a = :s + :n, b = foo(c)", UE "Invalid function name; function: foo"},
        {"SET a = size(b)", UE "The function is not allowed in an update expression; function: "
                               "size"},
        {"SET a = attribute_exists(b)", UE "The function is not allowed in an update "
                                           "expression; function: attribute_exists"},
        {"SET a = ((b))", UE "The expression has redundant parentheses;"},
        {"SET status = :n", UE "Attribute name is a reserved keyword; reserved keyword: status"},
        {"SET a = :x, status = :n", UE "Attribute name is a reserved keyword; reserved keyword: "
                                       "status"},
        {"SET a = :x, b = #x", UE "An expression attribute name used in the document path is "
                                  "not defined; attribute name: #x"},
        {"SET a = #x, b = :x", UE "An expression attribute value used in expression is not "
                                  "defined; attribute value: :x"},
        {"SET #x = :n, a = #y", UE "An expression attribute name used in the document path is "
                                   "not defined; attribute name: #x"},
        {"SET a[99999999999] = :n", UE "List index is not within the allowable range; index: "
                                       "[99999999999]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_error('u', cases[i][0], cases[i][1]);
    static const char *const ok[] = {
        "SET a = :n REMOVE b ADD c :n DELETE d :ss", "ADD a :ns, b :bs, c :ss",
        "SET a = if_not_exists(b, :n) + if_not_exists(c, :n)",
        "SET a = list_append(if_not_exists(b, :l), :l)", "SET #st = :n", "SET a = #st",
        "SET a.b.c = :n, a.b.d = :n, a.e[1] = :n, a.e[2] = :n",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        check_ok('u', ok[i]);
}

static void test_projection_errors(void **state)
{
    static const char *const cases[][2] = {
        {"", PE "The expression can not be empty;"},
        {"a, a", PE "Two document paths overlap with each other; must remove or rewrite one of "
                    "these paths; path one: [a], path two: [a]"},
        {"a.b, a", PE "Two document paths overlap with each other; must remove or rewrite one "
                      "of these paths; path one: [a, b], path two: [a]"},
        {"a, #a", PE "Two document paths overlap with each other; must remove or rewrite one "
                     "of these paths; path one: [a], path two: [a]"},
        {"a[1], a.b", PE "Two document paths conflict with each other; must remove or rewrite "
                         "one of these paths; path one: [a, [1]], path two: [a, b]"},
        {"status", PE "Attribute name is a reserved keyword; reserved keyword: status"},
        {"#x", PE "An expression attribute name used in the document path is not defined; "
                  "attribute name: #x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_error('p', cases[i][0], cases[i][1]);
    check_ok('p', "a.b.c, a.b.d, e[1], e[2]");
}

/* Builds "<head><sep><item>...<tail>" with n items into a static buffer. */
static const char *repeat(const char *head, const char *item, const char *sep, int n,
                          const char *tail)
{
    static char buf[16384];
    size_t off = (size_t)snprintf(buf, sizeof buf, "%s", head);
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", i ? sep : "", item);
    snprintf(buf + off, sizeof buf - off, "%s", tail);
    return buf;
}

static void test_limits(void **state)
{
    char want[256], big[5000];
    size_t len;
    /* 4 KB of expression */
    memset(big, ' ', sizeof big);
    memcpy(big, "a = :n", 6);
    big[4096] = 0;
    check_ok('c', big);
    big[4096] = ' ';
    big[4097] = 0;
    check_error('c', big, CE "Expression size has exceeded the maximum allowed size; expression "
                             "size: 4097");
    memcpy(big, "SET a = :n", 10);
    check_error('u', big, UE "Expression size has exceeded the maximum allowed size;");
    /* 300 operators */
    check_ok('c', repeat("", "NOT", " ", 299, " a = :n"));
    check_error('c', repeat("", "NOT", " ", 300, " a = :n"),
                CE "The expression contains too many operators; operator count: 301");
    /* 100 IN candidates */
    check_ok('c', repeat("a IN (", ":n", ",", 100, ")"));
    check_error('c', repeat("a IN (", ":n", ",", 101, ")"),
                CE "The IN operator is provided with too many operands; number of operands: "
                   "101");
    /* path depth 32 */
    check_ok('c', repeat("a", ".b", "", 31, " = :n"));
    check_error('c', repeat("a", ".b", "", 32, " = :n"),
                CE "The document path has too many nesting levels; nesting levels: 33");
    check_error('c', repeat("a", "[1]", "", 40, " = :n"),
                CE "The document path has too many nesting levels; nesting levels: 41");
    snprintf(want, sizeof want, "%s", PE "The document path has too many nesting levels; "
                                         "nesting levels: 33");
    check_error('p', repeat("a", ".b", "", 32, ""), want);
    /* deep nesting is linear to parse and redundant parentheses are found at any depth */
    char *deep = strdup(repeat("", "(", "", 2040, "a=:n"));
    len = strlen(deep);
    deep = realloc(deep, len + 2041);
    memset(deep + len, ')', 2040);
    deep[len + 2040] = 0;
    check_error('c', deep, CE "The expression has redundant parentheses;");
    free(deep);
    char *nest = strdup(repeat("", "(a = :n AND ", "", 140, "b = :n"));
    len = strlen(nest);
    nest = realloc(nest, len + 141);
    memset(nest + len, ')', 140);
    nest[len + 140] = 0;
    check_ok('c', nest);
    free(nest);
}

static void test_ctx_maps(void **state)
{
    expr_ctx *ctx = NULL;
    kura_value *m = kura_value_map();
    assert_kura_status(expr_ctx_new(m, NULL, &ctx), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "ExpressionAttributeNames must not be empty");
    assert_kura_status(expr_ctx_new(NULL, m, &ctx), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "ExpressionAttributeValues must not be empty");
    assert_null(ctx);

    put(m, "x", kura_value_s("a", 1));
    assert_kura_status(expr_ctx_new(m, NULL, &ctx), KURA_E_INVALID);
    assert_string_equal(kura_last_error(),
                        "ExpressionAttributeNames contains invalid key: Syntax error; key: \"x\"");
    assert_kura_status(expr_ctx_new(NULL, m, &ctx), KURA_E_INVALID);
    assert_string_equal(kura_last_error(),
                        "ExpressionAttributeValues contains invalid key: Syntax error; key: \"x\"");
    kura_value_free(m);

    m = kura_value_map();
    put(m, ":a-b", kura_value_s("a", 1));
    assert_kura_status(expr_ctx_new(NULL, m, &ctx), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "ExpressionAttributeValues contains invalid key: "
                                           "Syntax error; key: \":a-b\"");
    kura_value_free(m);

    /* an invalid value (an empty set) is reported with its key */
    m = kura_value_map();
    put(m, ":e", kura_value_set(KURA_SS));
    assert_kura_status(expr_ctx_new(NULL, m, &ctx), KURA_E_INVALID);
    assert_non_null(strstr(kura_last_error(), "ExpressionAttributeValues contains invalid "
                                              "value: "));
    assert_non_null(strstr(kura_last_error(), " for key :e"));
    kura_value_free(m);
    assert_null(ctx);
    expr_ctx_free(NULL);
}

static void test_unused(void **state)
{
    expr_ctx *ctx;
    expr_node *root;
    expr_update *u;
    kura_value *names = kura_value_map(), *values = kura_value_map();
    put(names, "#a", kura_value_s("a", 1));
    put(names, "#b", kura_value_s("b", 1));
    put(names, "#c", kura_value_s("c", 1));
    put(values, ":x", kura_value_n("1", 1));
    put(values, ":y", kura_value_n("2", 1));

    assert_kura_ok(expr_ctx_new(names, values, &ctx));
    assert_kura_ok(expr_parse_condition(ctx, EXPR_CONDITION, "#a = :x", &root));
    /* names are reported before values (DynamoDB and dynalite) */
    assert_kura_status(expr_check_unused(ctx), KURA_E_INVALID);
    assert_string_equal(kura_last_error(),
                        "Value provided in ExpressionAttributeNames unused in expressions: "
                        "keys: {#b, #c}");
    assert_kura_ok(expr_parse_update(ctx, "SET #c = :y", &u));
    assert_kura_status(expr_check_unused(ctx), KURA_E_INVALID);
    assert_string_equal(kura_last_error(),
                        "Value provided in ExpressionAttributeNames unused in expressions: "
                        "keys: {#b}");
    expr_ctx_free(ctx);

    assert_kura_ok(expr_ctx_new(names, values, &ctx));
    assert_kura_ok(expr_check_unused(ctx) == KURA_OK ? KURA_E_INVALID : KURA_OK);
    assert_string_equal(kura_last_error(),
                        "Value provided in ExpressionAttributeNames unused in expressions: "
                        "keys: {#a, #b, #c}");
    assert_kura_ok(expr_parse_projection(ctx, "#a, #b, #c", &(expr_projection *){NULL}));
    assert_kura_status(expr_check_unused(ctx), KURA_E_INVALID);
    assert_string_equal(kura_last_error(),
                        "Value provided in ExpressionAttributeValues unused in expressions: "
                        "keys: {:x, :y}");
    assert_kura_ok(expr_parse_condition(ctx, EXPR_FILTER, ":x = :y", &root));
    assert_kura_ok(expr_check_unused(ctx));
    expr_ctx_free(ctx);

    /* no maps at all */
    assert_kura_ok(expr_ctx_new(NULL, NULL, &ctx));
    assert_kura_ok(expr_check_unused(ctx));
    assert_kura_status(expr_parse_condition(ctx, EXPR_CONDITION, "#a = :x", &root),
                       KURA_E_INVALID);
    assert_string_equal(kura_last_error(), CE "An expression attribute name used in the "
                                              "document path is not defined; attribute name: "
                                              "#a");
    expr_ctx_free(ctx);
    kura_value_free(names);
    kura_value_free(values);
}

static void test_reserved_words(void **state)
{
    /* the ends of the sorted list, any case; near misses and words with '_' are names */
    static const char *const reserved[] = {"ABORT", "zone", "Current", "TimeStamp",
                                           "data", "name", "count", "size", "key", "value"};
    static const char *const plain[] = {"abort1", "zones", "current_dat", "aa", "zzzz",
                                        "current_date", "a_b"};
    char expr[64], want[160];
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++) {
        snprintf(expr, sizeof expr, "%s", reserved[i]);
        snprintf(want, sizeof want, PE "Attribute name is a reserved keyword; reserved keyword: "
                                       "%s",
                 reserved[i]);
        check_error('p', expr, want);
    }
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        check_ok('p', plain[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_condition_trees),   cmocka_unit_test(test_values_and_names),
        cmocka_unit_test(test_update_actions),    cmocka_unit_test(test_projection),
        cmocka_unit_test(test_syntax_errors),     cmocka_unit_test(test_condition_errors),
        cmocka_unit_test(test_update_errors),     cmocka_unit_test(test_projection_errors),
        cmocka_unit_test(test_limits),            cmocka_unit_test(test_ctx_maps),
        cmocka_unit_test(test_unused),            cmocka_unit_test(test_reserved_words),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

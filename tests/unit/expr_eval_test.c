/*
 * expr_eval_test.c - condition evaluation (engine/expr/eval.c), key condition flattening
 * (keycond.c) and projections (project.c), on trees built by hand: every comparison on every
 * pair of types, missing operands, every function on every type it accepts and rejects,
 * size() of every type, every key condition error message, and projections of nested paths
 * and list indexes. Expected results were checked against DynamoDB Local 1.25.
 */
#include "expr_testutil.h"

/* The item most tests evaluate against. u is "héllo€" (6 characters, 9 bytes); emo is "a"
 * followed by U+1F600 (2 UTF-16 code units). */
#define ITEM                                                                                       \
    "{s: \"hello\", n: 5, b: b\"\x01\x02\x03\", t: true, z: null, e: \"\","                        \
    " m: {x: 1, y: {z: \"deep\"}, em: {}}, l: [\"x\", 1, {q: 1}, [2]], ss: SS(\"a\", \"b\"),"      \
    " ns: NS(1, 2.5), bs: BS(b\"x\", b\"y\"), u: \"h\xc3\xa9llo\xe2\x82\xac\","                    \
    " emo: \"a\xf0\x9f\x98\x80\", el: []}"

static const kura_value *item(void)
{
    static const char *notation = ITEM;
    return tv(notation);
}

static void check_cond(const expr_node *cond, const kura_value *it, bool want, int line)
{
    bool got = expr_eval_condition(cond, it);
    if (got != want)
        fail_msg("line %d: condition is %s, expected %s", line, got ? "true" : "false",
                 want ? "true" : "false");
}
#define CHECK(cond, want) check_cond((cond), item(), (want), __LINE__)

/* ---- expr_path_get ------------------------------------------------------------------------ */

static void test_path_get(void **state)
{
    (void)state;
    const kura_value *it = item();
    expr_path p;
    p = tpath("s");
    assert_value(expr_path_get(it, &p), "\"hello\"");
    p = tpath("m.y.z");
    assert_value(expr_path_get(it, &p), "\"deep\"");
    p = tpath("l[2].q");
    assert_value(expr_path_get(it, &p), "1");
    p = tpath("l[3][0]");
    assert_value(expr_path_get(it, &p), "2");
    const char *missing[] = {"nope", "m.nope", "m.x.y", "l[4]",    "l.x",
                             "m[0]", "s[0]",   "ss[0]", "l[3][1]", "m.y.z.w"};
    for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
        p = tpath(missing[i]);
        if (expr_path_get(it, &p) != NULL) fail_msg("path %s resolved", missing[i]);
    }
    p = tpath("s");
    assert_null(expr_path_get(NULL, &p));
}

/* ---- comparisons -------------------------------------------------------------------------- */

/* One value of every type, and a second, larger one of every ordered type. */
static const char *const kinds[] = {"\"b\"",  "2",   "b\"b\"",    "true",  "null",
                                    "{a: 1}", "[1]", "SS(\"b\")", "NS(2)", "BS(b\"b\")"};

static void check_cmp(const char *a, expr_op op, const char *b, bool want, int line)
{
    const kura_value *empty = tv("{}");
    check_cond(n_op2(op, n_val(a), n_val(b)), empty, want, line);
}

static void test_compare_every_type_pair(void **state)
{
    (void)state;
    const size_t nk = sizeof kinds / sizeof *kinds;
    for (size_t i = 0; i < nk; i++) {
        for (size_t j = 0; j < nk; j++) {
            bool same = i == j, ordered = same && i < 3;
            check_cmp(kinds[i], EXPR_OP_EQ, kinds[j], same, (int)(i * 100 + j));
            check_cmp(kinds[i], EXPR_OP_NE, kinds[j], !same, (int)(i * 100 + j));
            check_cmp(kinds[i], EXPR_OP_LE, kinds[j], ordered, (int)(i * 100 + j));
            check_cmp(kinds[i], EXPR_OP_GE, kinds[j], ordered, (int)(i * 100 + j));
            check_cmp(kinds[i], EXPR_OP_LT, kinds[j], false, (int)(i * 100 + j));
            check_cmp(kinds[i], EXPR_OP_GT, kinds[j], false, (int)(i * 100 + j));
        }
    }
}

static void test_compare_order(void **state)
{
    (void)state;
    /* S and B by unsigned bytes, a prefix first; N numerically */
    const char *lt[][2] = {{"\"a\"", "\"b\""},
                           {"\"ab\"", "\"abc\""},
                           {"\"z\"", "\"\xc3\xa9\""},
                           {"\"\"", "\"a\""},
                           {"b\"\x7f\"", "b\"\x80\""},
                           {"b\"a\"", "b\"ab\""},
                           {"-10", "-9"},
                           {"2", "10"},
                           {"0.5", "1"},
                           {"-1e-130", "0"},
                           {"1e125", "9.9e125"}};
    for (size_t i = 0; i < sizeof lt / sizeof *lt; i++) {
        int line = (int)i;
        check_cmp(lt[i][0], EXPR_OP_LT, lt[i][1], true, line);
        check_cmp(lt[i][0], EXPR_OP_LE, lt[i][1], true, line);
        check_cmp(lt[i][0], EXPR_OP_GT, lt[i][1], false, line);
        check_cmp(lt[i][0], EXPR_OP_GE, lt[i][1], false, line);
        check_cmp(lt[i][1], EXPR_OP_GT, lt[i][0], true, line);
        check_cmp(lt[i][1], EXPR_OP_GE, lt[i][0], true, line);
        check_cmp(lt[i][1], EXPR_OP_LT, lt[i][0], false, line);
        check_cmp(lt[i][0], EXPR_OP_EQ, lt[i][1], false, line);
        check_cmp(lt[i][0], EXPR_OP_NE, lt[i][1], true, line);
    }
    /* equality: numbers numerically, sets in any order, maps and lists deeply */
    check_cmp("1.0", EXPR_OP_EQ, "1", true, __LINE__);
    check_cmp("1.0", EXPR_OP_GE, "1", true, __LINE__);
    check_cmp("SS(\"a\", \"b\")", EXPR_OP_EQ, "SS(\"b\", \"a\")", true, __LINE__);
    check_cmp("NS(1, 2)", EXPR_OP_EQ, "NS(2.0, 1)", true, __LINE__);
    check_cmp("NS(1, 2)", EXPR_OP_EQ, "NS(1)", false, __LINE__);
    check_cmp("{a: 1, b: [1, \"x\"]}", EXPR_OP_EQ, "{b: [1, \"x\"], a: 1.00}", true, __LINE__);
    check_cmp("{a: 1}", EXPR_OP_EQ, "{a: 1, b: 2}", false, __LINE__);
    check_cmp("[1, 2]", EXPR_OP_EQ, "[2, 1]", false, __LINE__);
    check_cmp("[1, 2]", EXPR_OP_NE, "[2, 1]", true, __LINE__);
    check_cmp("true", EXPR_OP_EQ, "false", false, __LINE__);
    check_cmp("\"1\"", EXPR_OP_EQ, "1", false, __LINE__);
    check_cmp("\"1\"", EXPR_OP_NE, "1", true, __LINE__);
}

static void test_compare_paths_and_missing(void **state)
{
    (void)state;
    CHECK(n_op2(EXPR_OP_EQ, n_path("n"), n_val("5")), true);
    CHECK(n_op2(EXPR_OP_EQ, n_val("5"), n_path("n")), true);
    CHECK(n_op2(EXPR_OP_LT, n_path("m.x"), n_path("n")), true);
    CHECK(n_op2(EXPR_OP_EQ, n_path("l[2].q"), n_path("m.x")), true);
    CHECK(n_op2(EXPR_OP_EQ, n_path("m.y.z"), n_val("\"deep\"")), true);
    /* A missing operand is equal to nothing and "not equal" to everything, even to another
     * missing operand (DynamoDB Local: `zz = yy` false, `zz <> yy` true). */
    CHECK(n_op2(EXPR_OP_EQ, n_path("nope"), n_val("1")), false);
    CHECK(n_op2(EXPR_OP_NE, n_path("nope"), n_val("1")), true);
    CHECK(n_op2(EXPR_OP_NE, n_val("1"), n_path("nope")), true);
    CHECK(n_op2(EXPR_OP_EQ, n_path("nope"), n_path("nada")), false);
    CHECK(n_op2(EXPR_OP_NE, n_path("nope"), n_path("nada")), true);
    CHECK(n_op2(EXPR_OP_NE, n_path("n"), n_path("nada")), true);
    CHECK(n_op1(EXPR_OP_NOT, n_op2(EXPR_OP_EQ, n_path("nope"), n_path("nada"))), true);
    const expr_op ordered[] = {EXPR_OP_LT, EXPR_OP_LE, EXPR_OP_GT, EXPR_OP_GE};
    for (size_t i = 0; i < 4; i++) {
        CHECK(n_op2(ordered[i], n_path("nope"), n_val("1")), false);
        CHECK(n_op2(ordered[i], n_val("1"), n_path("nope")), false);
        CHECK(n_op2(ordered[i], n_path("nope"), n_path("nada")), false);
    }
    /* no item at all */
    const expr_node *ne = n_op2(EXPR_OP_NE, n_path("a"), n_val("1"));
    const expr_node *eq = n_op2(EXPR_OP_EQ, n_path("a"), n_val("1"));
    check_cond(ne, NULL, true, __LINE__);
    check_cond(eq, NULL, false, __LINE__);
}

static void test_between(void **state)
{
    (void)state;
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("n"), n_val("1"), n_val("9")), true);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("n"), n_val("5"), n_val("5.0")), true);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("n"), n_val("5.01"), n_val("9")), false);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("n"), n_val("1"), n_val("4.99")), false);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("n"), n_val("9"), n_val("1")), false);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("s"), n_val("\"h\""), n_val("\"hello\"")), true);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("s"), n_val("\"hello!\""), n_val("\"z\"")), false);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("b"), n_val("b\"\x01\""), n_val("b\"\x02\"")), true);
    /* mixed types, unordered types, missing operands: false */
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("n"), n_val("\"1\""), n_val("\"9\"")), false);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("n"), n_val("1"), n_val("\"9\"")), false);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("n"), n_path("m.x"), n_path("nope")), false);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("nope"), n_val("1"), n_val("9")), false);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("t"), n_val("false"), n_val("true")), false);
    CHECK(n_op3(EXPR_OP_BETWEEN, n_path("n"), n_path("m.x"), n_op1(EXPR_OP_SIZE, n_path("s"))),
          true);
}

static void test_in(void **state)
{
    (void)state;
    CHECK(n_op(EXPR_OP_IN, 3, n_path("n"), n_val("1"), n_val("5.0")), true);
    CHECK(n_op(EXPR_OP_IN, 2, n_path("n"), n_val("\"5\"")), false);
    CHECK(n_op(EXPR_OP_IN, 3, n_path("s"), n_path("nope"), n_val("\"hello\"")), true);
    CHECK(n_op(EXPR_OP_IN, 3, n_path("ss"), n_val("SS(\"b\", \"a\")"), n_val("1")), true);
    CHECK(n_op(EXPR_OP_IN, 2, n_path("m"), n_val("{x: 1, y: {z: \"deep\"}, em: {}}")), true);
    CHECK(n_op(EXPR_OP_IN, 3, n_path("nope"), n_path("nada"), n_val("1")), false);
    CHECK(n_op(EXPR_OP_IN, 2, n_path("z"), n_val("null")), true);
    CHECK(n_op(EXPR_OP_IN, 2, n_path("t"), n_val("false")), false);
}

/* ---- functions ---------------------------------------------------------------------------- */

static void test_attribute_exists(void **state)
{
    (void)state;
    const char *present[] = {"s", "z", "e", "m.em", "m.y.z", "l[0]", "l[3][0]", "el"};
    const char *absent[] = {"nope", "m.nope", "l[4]", "s.x", "m[0]", "l[3][1]"};
    for (size_t i = 0; i < sizeof present / sizeof *present; i++) {
        CHECK(n_op1(EXPR_OP_ATTR_EXISTS, n_path(present[i])), true);
        CHECK(n_op1(EXPR_OP_ATTR_NOT_EXISTS, n_path(present[i])), false);
    }
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++) {
        CHECK(n_op1(EXPR_OP_ATTR_EXISTS, n_path(absent[i])), false);
        CHECK(n_op1(EXPR_OP_ATTR_NOT_EXISTS, n_path(absent[i])), true);
    }
    check_cond(n_op1(EXPR_OP_ATTR_NOT_EXISTS, n_path("pk")), NULL, true, __LINE__);
    check_cond(n_op1(EXPR_OP_ATTR_EXISTS, n_path("pk")), NULL, false, __LINE__);
}

static void test_attribute_type(void **state)
{
    (void)state;
    const char *attr_types[][2] = {{"s", "S"},    {"n", "N"},   {"b", "B"},   {"t", "BOOL"},
                                   {"z", "NULL"}, {"m", "M"},   {"l", "L"},   {"ss", "SS"},
                                   {"ns", "NS"},  {"bs", "BS"}, {"m.y", "M"}, {"l[0]", "S"}};
    const char *names[] = {"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"};
    for (size_t i = 0; i < sizeof attr_types / sizeof *attr_types; i++) {
        for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
            char quoted[16];
            snprintf(quoted, sizeof quoted, "\"%s\"", names[k]);
            bool want = strcmp(attr_types[i][1], names[k]) == 0;
            check_cond(n_op2(EXPR_OP_ATTR_TYPE, n_path(attr_types[i][0]), n_val(quoted)), item(),
                       want, (int)(i * 100 + k));
        }
    }
    CHECK(n_op2(EXPR_OP_ATTR_TYPE, n_path("nope"), n_val("\"NULL\"")), false);
    CHECK(n_op2(EXPR_OP_ATTR_TYPE, n_path("s"), n_val("\"s\"")), false);
    CHECK(n_op2(EXPR_OP_ATTR_TYPE, n_path("s"), n_val("\"STRING\"")), false);
}

static void test_begins_with(void **state)
{
    (void)state;
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("s"), n_val("\"he\"")), true);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("s"), n_val("\"hello\"")), true);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("s"), n_val("\"\"")), true);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("s"), n_val("\"hello!\"")), false);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("s"), n_val("\"el\"")), false);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("s"), n_val("\"H\"")), false);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("u"), n_val("\"h\xc3\xa9\"")), true);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("b"), n_val("b\"\x01\x02\"")), true);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("b"), n_val("b\"\x02\"")), false);
    /* the value may come first: begins_with(:v, path) */
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_val("\"hello world\""), n_path("s")), true);
    /* different types, types without prefixes, missing: false */
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("s"), n_val("b\"he\"")), false);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("b"), n_val("\"\x01\"")), false);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("n"), n_val("5")), false);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("ss"), n_val("\"a\"")), false);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("l"), n_val("\"x\"")), false);
    CHECK(n_op2(EXPR_OP_BEGINS_WITH, n_path("nope"), n_val("\"\"")), false);
}

static void test_contains(void **state)
{
    (void)state;
    struct {
        const char *path, *operand;
        bool want;
    } cases[] = {
        {"s", "\"ell\"", true},     {"s", "\"hello\"", true},     {"s", "\"\"", true},
        {"s", "\"hellos\"", false}, {"s", "\"L\"", false},        {"u", "\"\xc3\xa9\"", true},
        {"s", "b\"ell\"", false},   {"b", "b\"\x02\x03\"", true}, {"b", "b\"\x03\x02\"", false},
        {"b", "\"\x02\"", false},   {"ss", "\"a\"", true},        {"ss", "\"c\"", false},
        {"ss", "SS(\"a\")", false}, {"ss", "b\"a\"", false},      {"ns", "2.50", true},
        {"ns", "\"1\"", false},     {"ns", "3", false},           {"bs", "b\"y\"", true},
        {"bs", "\"y\"", false},     {"l", "\"x\"", true},         {"l", "1.0", true},
        {"l", "{q: 1}", true},      {"l", "[2]", true},           {"l", "\"1\"", false},
        {"l", "[]", false},         {"el", "\"x\"", false},       {"n", "5", false},
        {"m", "\"x\"", false},      {"t", "true", false},         {"z", "null", false},
        {"nope", "\"x\"", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_cond(n_op2(EXPR_OP_CONTAINS, n_path(cases[i].path), n_val(cases[i].operand)), item(),
                   cases[i].want, (int)i);
    /* both operands may be paths */
    CHECK(n_op2(EXPR_OP_CONTAINS, n_path("l"), n_path("l[2]")), true);
    CHECK(n_op2(EXPR_OP_CONTAINS, n_path("ss"), n_path("nope")), false);
}

static void check_size(const char *path, const char *want, int line)
{
    const expr_node *cond = n_op2(EXPR_OP_EQ, n_op1(EXPR_OP_SIZE, n_path(path)), n_val(want));
    check_cond(cond, item(), true, line);
}

static void test_size(void **state)
{
    (void)state;
    check_size("s", "5", __LINE__);
    check_size("e", "0", __LINE__);
    check_size("u", "6", __LINE__);   /* characters, not the 9 UTF-8 bytes */
    check_size("emo", "3", __LINE__); /* U+1F600 counts as two UTF-16 code units */
    check_size("b", "3", __LINE__);
    check_size("ss", "2", __LINE__);
    check_size("ns", "2", __LINE__);
    check_size("bs", "2", __LINE__);
    check_size("l", "4", __LINE__);
    check_size("el", "0", __LINE__);
    check_size("m", "3", __LINE__);
    check_size("m.em", "0", __LINE__);
    check_size("m.y.z", "4", __LINE__);
    check_size("l[3]", "1", __LINE__);
    /* N, BOOL, NULL and missing paths have no size: every comparison is false, <> true */
    const char *no_size[] = {"n", "t", "z", "nope", "m.x"};
    for (size_t i = 0; i < sizeof no_size / sizeof *no_size; i++) {
        const expr_node *sz = n_op1(EXPR_OP_SIZE, n_path(no_size[i]));
        CHECK(n_op2(EXPR_OP_EQ, sz, n_val("1")), false);
        CHECK(n_op2(EXPR_OP_GE, sz, n_val("0")), false);
        CHECK(n_op2(EXPR_OP_LT, sz, n_val("100")), false);
        CHECK(n_op2(EXPR_OP_NE, sz, n_val("1")), true);
        CHECK(n_op3(EXPR_OP_BETWEEN, sz, n_val("0"), n_val("100")), false);
    }
    CHECK(n_op2(EXPR_OP_GT, n_op1(EXPR_OP_SIZE, n_path("s")), n_val("4")), true);
    CHECK(n_op2(EXPR_OP_LE, n_op1(EXPR_OP_SIZE, n_path("s")), n_path("n")), true);
    CHECK(n_op2(EXPR_OP_EQ, n_op1(EXPR_OP_SIZE, n_path("s")), n_op1(EXPR_OP_SIZE, n_path("l[0]"))),
          false);
    CHECK(n_op(EXPR_OP_IN, 3, n_op1(EXPR_OP_SIZE, n_path("l")), n_val("1"), n_val("4")), true);
}

static void test_logic(void **state)
{
    (void)state;
    expr_node *t = n_op1(EXPR_OP_ATTR_EXISTS, n_path("s"));
    expr_node *f = n_op1(EXPR_OP_ATTR_EXISTS, n_path("nope"));
    CHECK(n_op2(EXPR_OP_AND, t, t), true);
    CHECK(n_op2(EXPR_OP_AND, t, f), false);
    CHECK(n_op2(EXPR_OP_AND, f, t), false);
    CHECK(n_op2(EXPR_OP_OR, f, t), true);
    CHECK(n_op2(EXPR_OP_OR, t, f), true);
    CHECK(n_op2(EXPR_OP_OR, f, f), false);
    CHECK(n_op1(EXPR_OP_NOT, f), true);
    CHECK(n_op1(EXPR_OP_NOT, n_op1(EXPR_OP_NOT, f)), false);
    /* a OR b AND NOT c, as the parser nests it */
    CHECK(n_op2(EXPR_OP_OR, f, n_op2(EXPR_OP_AND, t, n_op1(EXPR_OP_NOT, f))), true);
    CHECK(n_op1(EXPR_OP_NOT, n_op2(EXPR_OP_NE, n_path("nope"), n_val("1"))), false);
}

/* ---- key conditions ----------------------------------------------------------------------- */

static void check_key_error(const expr_node *root, const char *msg)
{
    expr_key_term terms[2];
    uint32_t n = 77;
    assert_invalid(expr_key_terms(root, terms, 2, &n), msg);
    assert_int_equal(n, 77);
}

static void test_key_terms(void **state)
{
    (void)state;
    expr_key_term terms[2];
    uint32_t n = 0;
    /* pk = :a AND sk BETWEEN :b AND :c */
    expr_node *root = n_op2(EXPR_OP_AND, n_op2(EXPR_OP_EQ, n_path("pk"), n_val("\"p\"")),
                            n_op3(EXPR_OP_BETWEEN, n_path("sk"), n_val("1"), n_val("9")));
    assert_kura_ok(expr_key_terms(root, terms, 2, &n));
    assert_int_equal(n, 2);
    assert_int_equal(terms[0].name_len, 2);
    assert_memory_equal(terms[0].name, "pk", 2);
    assert_int_equal(terms[0].op, EXPR_OP_EQ);
    assert_value(terms[0].v1, "\"p\"");
    assert_null(terms[0].v2);
    assert_memory_equal(terms[1].name, "sk", 2);
    assert_int_equal(terms[1].op, EXPR_OP_BETWEEN);
    assert_value(terms[1].v1, "1");
    assert_value(terms[1].v2, "9");

    /* a single term; begins_with */
    assert_kura_ok(
        expr_key_terms(n_op2(EXPR_OP_BEGINS_WITH, n_path("sk"), n_val("\"ab\"")), terms, 2, &n));
    assert_int_equal(n, 1);
    assert_int_equal(terms[0].op, EXPR_OP_BEGINS_WITH);
    assert_value(terms[0].v1, "\"ab\"");

    /* every comparison, written either way round: value-first is turned around */
    const expr_op ops[] = {EXPR_OP_EQ, EXPR_OP_LT, EXPR_OP_LE, EXPR_OP_GT, EXPR_OP_GE};
    const expr_op flipped[] = {EXPR_OP_EQ, EXPR_OP_GT, EXPR_OP_GE, EXPR_OP_LT, EXPR_OP_LE};
    for (size_t i = 0; i < 5; i++) {
        root = n_op2(EXPR_OP_AND, n_op2(EXPR_OP_EQ, n_val("1"), n_path("pk")),
                     n_op2(ops[i], n_path("sk"), n_val("2")));
        assert_kura_ok(expr_key_terms(root, terms, 2, &n));
        assert_int_equal(n, 2);
        assert_int_equal(terms[0].op, EXPR_OP_EQ);
        assert_value(terms[0].v1, "1");
        assert_int_equal(terms[1].op, ops[i]);
        assert_value(terms[1].v1, "2");
        root = n_op2(ops[i], n_val("3"), n_path("sk"));
        assert_kura_ok(expr_key_terms(root, terms, 2, &n));
        assert_int_equal(n, 1);
        assert_int_equal(terms[0].op, flipped[i]);
        assert_value(terms[0].v1, "3");
        assert_memory_equal(terms[0].name, "sk", 2);
    }
}

static void test_key_terms_errors(void **state)
{
    (void)state;
    expr_node *pk = n_op2(EXPR_OP_EQ, n_path("pk"), n_val("1"));
    expr_node *sk = n_op2(EXPR_OP_EQ, n_path("sk"), n_val("1"));
    check_key_error(n_op2(EXPR_OP_OR, pk, sk),
                    "Invalid operator used in KeyConditionExpression: OR");
    check_key_error(n_op2(EXPR_OP_AND, pk, n_op1(EXPR_OP_NOT, sk)),
                    "Invalid operator used in KeyConditionExpression: NOT");
    check_key_error(n_op(EXPR_OP_IN, 2, n_path("pk"), n_val("1")),
                    "Invalid operator used in KeyConditionExpression: IN");
    check_key_error(n_op2(EXPR_OP_NE, n_path("pk"), n_val("1")),
                    "Invalid operator used in KeyConditionExpression: <>");
    check_key_error(n_op2(EXPR_OP_AND, pk, n_op1(EXPR_OP_ATTR_EXISTS, n_path("sk"))),
                    "Invalid operator used in KeyConditionExpression: attribute_exists");
    check_key_error(n_op1(EXPR_OP_ATTR_NOT_EXISTS, n_path("sk")),
                    "Invalid operator used in KeyConditionExpression: attribute_not_exists");
    check_key_error(n_op2(EXPR_OP_ATTR_TYPE, n_path("sk"), n_val("\"S\"")),
                    "Invalid operator used in KeyConditionExpression: attribute_type");
    check_key_error(n_op2(EXPR_OP_CONTAINS, n_path("sk"), n_val("\"S\"")),
                    "Invalid operator used in KeyConditionExpression: contains");
    check_key_error(n_op2(EXPR_OP_EQ, n_op1(EXPR_OP_SIZE, n_path("sk")), n_val("1")),
                    "KeyConditionExpressions cannot contain nested operations");
    check_key_error(n_op3(EXPR_OP_BETWEEN, n_val("1"), n_path("sk"), n_val("2")),
                    "Invalid condition in KeyConditionExpression: BETWEEN operator must have the "
                    "key attribute as its first operand");
    check_key_error(n_op2(EXPR_OP_BEGINS_WITH, n_val("\"a\""), n_path("sk")),
                    "Invalid condition in KeyConditionExpression: begins_with operator must have "
                    "the key attribute as its first operand");
    check_key_error(n_op2(EXPR_OP_EQ, n_path("pk"), n_path("sk")),
                    "Invalid condition in KeyConditionExpression: Multiple attribute names used "
                    "in one condition");
    check_key_error(n_op3(EXPR_OP_BETWEEN, n_path("sk"), n_val("1"), n_path("pk")),
                    "Invalid condition in KeyConditionExpression: Multiple attribute names used "
                    "in one condition");
    check_key_error(n_op2(EXPR_OP_EQ, n_path("pk.a"), n_val("1")),
                    "KeyConditionExpressions cannot have conditions on nested attributes");
    check_key_error(n_op2(EXPR_OP_EQ, n_path("pk[0]"), n_val("1")),
                    "KeyConditionExpressions cannot have conditions on nested attributes");
    check_key_error(n_op2(EXPR_OP_AND, pk, n_op2(EXPR_OP_LT, n_val("1"), n_val("2"))),
                    "Invalid condition in KeyConditionExpression: No key attribute specified");
    check_key_error(n_op2(EXPR_OP_AND, pk, n_op2(EXPR_OP_GT, n_path("pk"), n_val("2"))),
                    "KeyConditionExpressions must only contain one condition per key");
    check_key_error(
        n_op2(EXPR_OP_AND, n_op2(EXPR_OP_AND, pk, sk), n_op2(EXPR_OP_EQ, n_path("x"), n_val("2"))),
        "Conditions can be of length 1 or 2 only");
    /* the first offending node in written order decides */
    check_key_error(
        n_op2(EXPR_OP_AND, n_op2(EXPR_OP_EQ, n_path("a.b"), n_val("1")), n_op2(EXPR_OP_OR, pk, sk)),
        "KeyConditionExpressions cannot have conditions on nested attributes");
    check_key_error(
        n_op2(EXPR_OP_AND, n_op2(EXPR_OP_OR, pk, sk), n_op2(EXPR_OP_EQ, n_path("a.b"), n_val("1"))),
        "Invalid operator used in KeyConditionExpression: OR");
}

/* ---- projections -------------------------------------------------------------------------- */

static void check_projection(const kura_value *it, const char *const *paths, uint32_t n,
                             const char *want)
{
    expr_projection p = {t_alloc(n * sizeof(expr_path)), n};
    for (uint32_t i = 0; i < n; i++)
        p.paths[i] = tpath(paths[i]);
    kura_value *dst = t_new_value();
    assert_kura_ok(expr_project(&p, it, dst));
    assert_value(dst, want);
}
#define PROJECT(it, want, ...)                                                                     \
    do {                                                                                           \
        const char *paths_[] = {__VA_ARGS__};                                                      \
        check_projection((it), paths_, sizeof paths_ / sizeof *paths_, (want));                    \
    } while (0)

static void test_projection(void **state)
{
    (void)state;
    const kura_value *it = item();
    PROJECT(it, "{s: \"hello\", n: 5}", "s", "n", "nope");
    PROJECT(it, "{m: {y: {z: \"deep\"}}}", "m.y.z");
    PROJECT(it, "{m: {x: 1, em: {}}}", "m.em", "m.x", "m.nope");
    PROJECT(it, "{el: [], m: {em: {}}}", "el", "m.em");
    PROJECT(it, "{}", "nope", "m.nope", "l[9]", "s.x", "m[0]", "l.x", "m.y.z.w");
    /* list elements: index order, compacted; missing indexes dropped */
    PROJECT(it, "{l: [1, [2]]}", "l[3]", "l[1]");
    PROJECT(it, "{l: [\"x\", [2]]}", "l[3]", "l[9]", "l[0]");
    PROJECT(it, "{l: [{q: 1}, [2]]}", "l[2].q", "l[3][0]", "l[2].nope");
    PROJECT(it, "{l: [[2]]}", "l[3][0]", "l[3][5]", "l[2].nope");
    PROJECT(it, "{l: [\"x\"], m: {y: {z: \"deep\"}}, s: \"hello\"}", "m.y.z", "l[0]", "s");
    /* several paths into one list element merge into one map */
    const kura_value *deep = tv("{a: [{x: 1, y: 2, z: 3}, {x: 4}, 5]}");
    PROJECT(deep, "{a: [{x: 1, z: 3}, {x: 4}]}", "a[0].x", "a[1].x", "a[0].z", "a[1].y");
    PROJECT(deep, "{a: [{y: 2}, 5]}", "a[2]", "a[0].y");
    /* the scenario of primary_key_types.json */
    const kura_value *profile = tv("{user_id: \"123\", profile: {address: {city: \"Tokyo\","
                                   " zip: \"100\"}, hobbies: [\"tennis\", \"chess\"], age: 30}}");
    PROJECT(profile, "{profile: {address: {city: \"Tokyo\"}, hobbies: [\"tennis\"]}}",
            "profile.address.city", "profile.hobbies[0]");
    /* no item */
    PROJECT(NULL, "{}", "s");
}

/* ---- through the parser ------------------------------------------------------------------- */

/* The values every parsed condition below may use. */
#define VALUES                                                                                     \
    "{\":five\": 5, \":one\": 1, \":nine\": 9, \":hello\": \"hello\", \":he\": \"he\","            \
    " \":x\": \"x\", \":a\": \"a\", \":S\": \"S\", \":SS\": \"SS\", \":deep\": \"deep\","          \
    " \":q\": {q: 1}, \":ss\": SS(\"b\", \"a\"), \":b1\": b\"\x01\", \":six\": 6}"

static void test_parsed_conditions(void **state)
{
    (void)state;
    struct {
        const char *expr;
        bool want;
    } cases[] = {
        {"n = :five", true},
        {"n <> :five", false},
        {"nope <> :five", true},
        {"nope = :five", false},
        {"n < :nine AND n > :one", true},
        {"n <= :five AND n >= :five", true},
        {":five = n", true},
        {"n BETWEEN :one AND :nine", true},
        {"s BETWEEN :he AND :hello", true},
        {"n IN (:one, :nine, :five)", true},
        {"n IN (:one, :nine)", false},
        {"s IN (:hello)", true},
        {"ss = :ss", true},
        {"m.y.z = :deep", true},
        {"l[2] = :q", true},
        {"l[2].q = :one", true},
        {"#attr = :five", true},
        {"m.#x = :one", true},
        {"attribute_exists(m.y.z) AND attribute_not_exists(m.y.w)", true},
        {"attribute_exists(l[3][0])", true},
        {"attribute_exists(l[4])", false},
        {"attribute_type(s, :S)", true},
        {"attribute_type(ss, :SS)", true},
        {"attribute_type(s, :SS)", false},
        {"begins_with(s, :he)", true},
        {"begins_with(s, :x)", false},
        {"begins_with(b, :b1)", true},
        {"contains(s, :he)", true},
        {"contains(ss, :a)", true},
        {"contains(l, :x)", true},
        {"contains(l, :q)", true},
        {"contains(l, :he)", false},
        {"size(s) = :five", true},
        {"size(u) = :six", true},
        {"size(l) < :five", true},
        {"size(n) = :one", false},
        {"size(n) <> :one", true},
        {"size(nope) <> :one", true},
        {"size(s) BETWEEN :one AND :nine", true},
        {"size(s) IN (:one, :five)", true},
        {"size(s) = n", true},
        {"NOT n = :five", false},
        {"NOT nope = :five", true},
        {"n = :one OR n = :five", true},
        {"n = :one OR n = :nine", false},
        {"n = :one OR n = :five AND s = :x", false},
        {"(n = :one OR n = :five) AND s = :hello", true},
        {"n = :five AND NOT (s = :x OR s = :a)", true},
        {"NOT NOT n = :five", true},
        {"t <> z AND e <> s", true},
        {"n = m.x", false},
        {"m.x < n", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const expr_node *root = t_parse_cond(EXPR_CONDITION, cases[i].expr,
                                             "{\"#attr\": \"n\", \"#x\": \"x\"}", VALUES);
        bool got = expr_eval_condition(root, item());
        if (got != cases[i].want)
            fail_msg("\"%s\" is %s, expected %s", cases[i].expr, got ? "true" : "false",
                     cases[i].want ? "true" : "false");
        /* the same tree as a filter; and with no item at all */
        assert_int_equal(
            expr_eval_condition(t_parse_cond(EXPR_FILTER, cases[i].expr,
                                             "{\"#attr\": \"n\", \"#x\": \"x\"}", VALUES),
                                item()),
            cases[i].want);
    }
    const expr_node *root = t_parse_cond(EXPR_CONDITION, "attribute_not_exists(pk)", NULL, NULL);
    assert_true(expr_eval_condition(root, NULL));
    root = t_parse_cond(EXPR_CONDITION, "pk <> :one", NULL, "{\":one\": 1}");
    assert_true(expr_eval_condition(root, NULL));
}

static const char *parsed_key_error(const char *expr, const char *values)
{
    expr_ctx *ctx = t_ctx("{\"#pk\": \"pk\"}", values);
    expr_node *root;
    expr_key_term terms[2];
    uint32_t n;
    kura_status st = expr_parse_condition(ctx, EXPR_KEY_CONDITION, expr, &root);
    if (st == KURA_OK) st = expr_key_terms(root, terms, 2, &n);
    if (st == KURA_OK) fail_msg("\"%s\" was accepted", expr);
    assert_int_equal(st, KURA_E_INVALID);
    return kura_last_error();
}

static void test_parsed_key_conditions(void **state)
{
    (void)state;
    const char *values = "{\":a\": \"a\", \":b\": 1, \":c\": 9}";
    expr_key_term terms[2];
    uint32_t n = 0;
    const expr_node *root = t_parse_cond(EXPR_KEY_CONDITION, "#pk = :a AND sk BETWEEN :b AND :c",
                                         "{\"#pk\": \"pk\"}", values);
    assert_kura_ok(expr_key_terms(root, terms, 2, &n));
    assert_int_equal(n, 2);
    assert_memory_equal(terms[0].name, "pk", 2);
    assert_int_equal(terms[1].op, EXPR_OP_BETWEEN);
    assert_value(terms[1].v2, "9");
    root = t_parse_cond(EXPR_KEY_CONDITION, ":b < sk AND (pk = :a)", NULL,
                        "{\":a\": \"a\", \":b\": 1}");
    assert_kura_ok(expr_key_terms(root, terms, 2, &n));
    assert_int_equal(n, 2);
    assert_memory_equal(terms[0].name, "sk", 2);
    assert_int_equal(terms[0].op, EXPR_OP_GT);
    assert_memory_equal(terms[1].name, "pk", 2);
    root = t_parse_cond(EXPR_KEY_CONDITION, "pk = :a AND begins_with(sk, :a)", NULL,
                        "{\":a\": \"a\"}");
    assert_kura_ok(expr_key_terms(root, terms, 2, &n));
    assert_int_equal(terms[1].op, EXPR_OP_BEGINS_WITH);

    struct {
        const char *expr, *msg;
    } bad[] = {
        {"#pk = :a OR sk = :b", "Invalid operator used in KeyConditionExpression: OR"},
        {"#pk = :a AND NOT sk = :b", "Invalid operator used in KeyConditionExpression: NOT"},
        {"#pk IN (:a, :b, :c)", "Invalid operator used in KeyConditionExpression: IN"},
        {"#pk <> :a AND sk IN (:b, :c)", "Invalid operator used in KeyConditionExpression: <>"},
        {"#pk = :a AND contains(sk, :b) AND sk = :c",
         "Invalid operator used in KeyConditionExpression: contains"},
        {"#pk = :a AND size(sk) = :b AND sk = :c",
         "KeyConditionExpressions cannot contain nested operations"},
        {"#pk = :a AND :b BETWEEN sk AND :c",
         "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key "
         "attribute as its first operand"},
        {"#pk = sk AND sk = :a AND sk = :b AND sk = :c",
         "Invalid condition in KeyConditionExpression: Multiple attribute names used in one "
         "condition"},
        {"#pk.x = :a AND sk = :b AND :c = sk",
         "KeyConditionExpressions cannot have conditions on nested attributes"},
        {"#pk = :a AND :b = :c", "Invalid condition in KeyConditionExpression: No key attribute "
                                 "specified"},
        {"#pk = :a AND pk = :b AND sk = :c",
         "KeyConditionExpressions must only contain one condition per key"},
        {"#pk = :a AND sk = :b AND x = :c", "Conditions can be of length 1 or 2 only"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *msg = parsed_key_error(bad[i].expr, values);
        if (strcmp(msg, bad[i].msg) != 0)
            fail_msg("\"%s\": \"%s\", expected \"%s\"", bad[i].expr, msg, bad[i].msg);
    }
}

static void test_parsed_projection(void **state)
{
    (void)state;
    const kura_value *profile = tv("{user_id: \"123\", profile: {address: {city: \"Tokyo\","
                                   " zip: \"100\"}, hobbies: [\"tennis\", \"chess\"], age: 30}}");
    kura_value *dst = t_new_value();
    assert_kura_ok(expr_project(
        t_parse_projection("profile.address.city, profile.hobbies[0]", NULL), profile, dst));
    assert_value(dst, "{profile: {address: {city: \"Tokyo\"}, hobbies: [\"tennis\"]}}");
    dst = t_new_value();
    assert_kura_ok(expr_project(
        t_parse_projection("l[3], #m.y, l[1], nope, #m.x", "{\"#m\": \"m\"}"), item(), dst));
    assert_value(dst, "{l: [1, [2]], m: {x: 1, y: {z: \"deep\"}}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_path_get, t_free_all),
        cmocka_unit_test_teardown(test_compare_every_type_pair, t_free_all),
        cmocka_unit_test_teardown(test_compare_order, t_free_all),
        cmocka_unit_test_teardown(test_compare_paths_and_missing, t_free_all),
        cmocka_unit_test_teardown(test_between, t_free_all),
        cmocka_unit_test_teardown(test_in, t_free_all),
        cmocka_unit_test_teardown(test_attribute_exists, t_free_all),
        cmocka_unit_test_teardown(test_attribute_type, t_free_all),
        cmocka_unit_test_teardown(test_begins_with, t_free_all),
        cmocka_unit_test_teardown(test_contains, t_free_all),
        cmocka_unit_test_teardown(test_size, t_free_all),
        cmocka_unit_test_teardown(test_logic, t_free_all),
        cmocka_unit_test_teardown(test_key_terms, t_free_all),
        cmocka_unit_test_teardown(test_key_terms_errors, t_free_all),
        cmocka_unit_test_teardown(test_projection, t_free_all),
        cmocka_unit_test_teardown(test_parsed_conditions, t_free_all),
        cmocka_unit_test_teardown(test_parsed_key_conditions, t_free_all),
        cmocka_unit_test_teardown(test_parsed_projection, t_free_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * expr_update_test.c - UpdateExpression application (engine/expr/update.c) on trees built by
 * hand: SET with every operand form (paths, +, -, if_not_exists, list_append), REMOVE, ADD
 * and DELETE on every type combination, list index semantics (original positions, appends in
 * index order), every error message, which error wins, expr_update_touches, and the
 * UPDATED_OLD / UPDATED_NEW shapes. Expected results were checked against DynamoDB Local 1.25
 * (and, for the nested UPDATED_* shape, against the scenario vectors of real DynamoDB).
 */
#include "expr_testutil.h"

#define MSG_MISSING "The provided expression refers to an attribute that does not exist in the item"
#define MSG_TYPE "An operand in the update expression has an incorrect data type"
#define MSG_PATH "The document path provided in the update expression is invalid for update"
#define MSG_OVERFLOW                                                                               \
    "Number overflow. Attempting to store a number with magnitude larger than supported range"
#define MSG_UNDERFLOW                                                                              \
    "Number underflow. Attempting to store a number with magnitude smaller than supported range"
#define MSG_DIGITS "Attempting to store more than 38 significant digits in a Number"

#define ITEM                                                                                       \
    "{pk: \"k\", n: 5, s: \"str\", l: [0, 1, 2, 3, 4], m: {x: 1, mm: {p: 1}},"                     \
    " ss: SS(\"a\", \"b\"), ns: NS(1, 2), bs: BS(b\"x\"), ll: [{a: 1, b: [1, 2]}, [5, 6]],"        \
    " e: [], sl: [SS(\"a\")]}"

/* ---- building updates ----------------------------------------------------------------------- */

static expr_action set_(const char *path, expr_node *operand)
{
    return (expr_action){EXPR_SET, tpath(path), operand};
}
static expr_action remove_(const char *path)
{
    return (expr_action){EXPR_REMOVE, tpath(path), NULL};
}
static expr_action add_(const char *path, const char *value)
{
    return (expr_action){EXPR_ADD, tpath(path), n_val(value)};
}
static expr_action delete_(const char *path, const char *value)
{
    return (expr_action){EXPR_DELETE, tpath(path), n_val(value)};
}

static expr_update *t_update(const expr_action *actions, uint32_t n)
{
    expr_update *u = t_alloc(sizeof *u);
    u->actions = t_alloc(n * sizeof *actions);
    memcpy(u->actions, actions, n * sizeof *actions);
    u->n = n;
    return u;
}
#define UPDATE(...)                                                                                \
    t_update((const expr_action[]){__VA_ARGS__},                                                   \
             sizeof((const expr_action[]){__VA_ARGS__}) / sizeof(expr_action))

static expr_node *plus(expr_node *a, expr_node *b)
{
    return n_op2(EXPR_OP_PLUS, a, b);
}
static expr_node *minus(expr_node *a, expr_node *b)
{
    return n_op2(EXPR_OP_MINUS, a, b);
}
static expr_node *if_not_exists(const char *path, expr_node *b)
{
    return n_op2(EXPR_OP_IF_NOT_EXISTS, n_path(path), b);
}
static expr_node *list_append(expr_node *a, expr_node *b)
{
    return n_op2(EXPR_OP_LIST_APPEND, a, b);
}

/* Applies u to a copy of the item `item` and returns the copy. */
static kura_value *apply(const char *item, const expr_update *u, kura_status *st_out)
{
    kura_value *it = t_new_value();
    assert_kura_ok(val_copy(it, tv(item)));
    *st_out = expr_apply_update(u, it);
    return it;
}

static void check_update(const char *item, const expr_update *u, const char *want, int line)
{
    kura_status st;
    kura_value *it = apply(item, u, &st);
    if (st != KURA_OK) fail_msg("line %d: update failed: %s", line, kura_last_error());
    t_assert_value(it, want, __FILE__, line);
}
#define CHECK_UPDATE(item, u, want) check_update((item), (u), (want), __LINE__)

static void check_update_error(const char *item, const expr_update *u, const char *msg, int line)
{
    kura_status st;
    apply(item, u, &st);
    if (st != KURA_E_INVALID || strcmp(kura_last_error(), msg) != 0)
        fail_msg("line %d: got %s \"%s\", expected \"%s\"", line, kura_status_str(st),
                 st == KURA_OK ? "" : kura_last_error(), msg);
}
#define CHECK_ERROR(item, u, msg) check_update_error((item), (u), (msg), __LINE__)

/* ITEM with some attributes replaced: the expected results below are written as ITEM with a
 * few attributes changed, e.g. item_with("n: 6") or item_with("-n"). */
static const char *item_with(const char *changes)
{
    kura_value *want = t_new_value();
    assert_kura_ok(val_copy(want, tv(ITEM)));
    char *buf = t_alloc(strlen(changes) + 3);
    const char *c = changes;
    while (*c) {
        while (*c == ' ' || *c == ';')
            c++;
        if (*c == '\0') break;
        const char *end = strchr(c, ';');
        size_t len = end ? (size_t)(end - c) : strlen(c);
        if (*c == '-') {
            assert_true(val_map_remove(want, c + 1, len - 1));
        } else {
            /* "name: value" -> a one-attribute map, merged in */
            buf[0] = '{';
            memcpy(buf + 1, c, len);
            buf[len + 1] = '}';
            buf[len + 2] = '\0';
            const kura_value *one = tv(buf);
            kura_value copy;
            assert_kura_ok(val_copy(&copy, &one->u.map.a[0].value));
            assert_kura_ok(
                val_map_put(want, one->u.map.a[0].name, one->u.map.a[0].name_len, &copy));
        }
        c += len;
    }
    char *out = t_alloc(65536);
    tv_print(want, out, 65536);
    return out;
}

/* ---- SET ---------------------------------------------------------------------------------- */

static void test_set_paths(void **state)
{
    (void)state;
    CHECK_UPDATE(ITEM, UPDATE(set_("x", n_val("\"new\""))), item_with("x: \"new\""));
    CHECK_UPDATE(ITEM, UPDATE(set_("n", n_val("[1]"))), item_with("n: [1]"));
    CHECK_UPDATE(
        ITEM,
        UPDATE(set_("m.y", n_val("2")), set_("m.mm.q", n_val("3")), set_("m.x", n_val("null"))),
        item_with("m: {x: null, y: 2, mm: {p: 1, q: 3}}"));
    CHECK_UPDATE(ITEM, UPDATE(set_("ll[0].a", n_val("9")), set_("ll[0].c", n_val("true"))),
                 item_with("ll: [{a: 9, b: [1, 2], c: true}, [5, 6]]"));
    CHECK_UPDATE(ITEM, UPDATE(set_("l[1]", n_val("\"x\""))), item_with("l: [0, \"x\", 2, 3, 4]"));
    CHECK_UPDATE(ITEM, UPDATE(set_("e[0]", n_val("1"))), item_with("e: [1]"));
    /* past the end appends; several appends go in index order, whatever the written order */
    CHECK_UPDATE(ITEM, UPDATE(set_("l[9]", n_val("9"))), item_with("l: [0, 1, 2, 3, 4, 9]"));
    CHECK_UPDATE(ITEM, UPDATE(set_("l[9]", n_val("\"nine\"")), set_("l[7]", n_val("\"seven\""))),
                 item_with("l: [0, 1, 2, 3, 4, \"seven\", \"nine\"]"));
    CHECK_UPDATE(ITEM,
                 UPDATE(set_("ll[1][5]", n_val("7")), set_("l[6]", n_val("6")),
                        set_("ll[1][3]", n_val("3"))),
                 item_with("ll: [{a: 1, b: [1, 2]}, [5, 6, 3, 7]]; l: [0, 1, 2, 3, 4, 6]"));
    /* the parent must exist and be a map (name) or a list (index) */
    const char *bad[] = {"nope.x",  "n.x",   "l.x",      "m[0]",        "ss[0]",   "s[0]",
                         "ll[5].a", "m.x.y", "m.nope.y", "ll[1][0][0]", "ll[0][0]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_ERROR(ITEM, UPDATE(set_(bad[i], n_val("1"))), MSG_PATH);
    /* a new item holds only its key */
    CHECK_UPDATE("{pk: \"k\"}", UPDATE(set_("a", n_val("1")), set_("b", n_val("{}"))),
                 "{pk: \"k\", a: 1, b: {}}");
    CHECK_ERROR("{pk: \"k\"}", UPDATE(set_("a.b", n_val("1"))), MSG_PATH);
}

static void test_set_operands(void **state)
{
    (void)state;
    CHECK_UPDATE(ITEM, UPDATE(set_("x", n_path("m.mm"))), item_with("x: {p: 1}"));
    CHECK_UPDATE(ITEM, UPDATE(set_("x", n_path("ll[1][0]"))), item_with("x: 5"));
    /* operands see the item as it was: a swap, and a copy of a value set in the same update */
    CHECK_UPDATE(ITEM, UPDATE(set_("n", n_path("s")), set_("s", n_path("n"))),
                 item_with("n: \"str\"; s: 5"));
    CHECK_UPDATE(ITEM, UPDATE(set_("n", n_val("1")), set_("x", n_path("n"))),
                 item_with("n: 1; x: 5"));
    CHECK_UPDATE(ITEM, UPDATE(set_("m.x", n_val("2")), set_("y", n_path("m"))),
                 item_with("m: {x: 2, mm: {p: 1}}; y: {x: 1, mm: {p: 1}}"));
    CHECK_ERROR(ITEM, UPDATE(set_("x", n_path("nope"))), MSG_MISSING);
    CHECK_ERROR(ITEM, UPDATE(set_("x", n_path("l[5]"))), MSG_MISSING);
    CHECK_ERROR(ITEM, UPDATE(set_("x", n_path("m.x.y"))), MSG_MISSING);
}

static void test_set_arithmetic(void **state)
{
    (void)state;
    CHECK_UPDATE(ITEM, UPDATE(set_("n", plus(n_path("n"), n_val("1")))), item_with("n: 6"));
    CHECK_UPDATE(ITEM, UPDATE(set_("n", minus(n_path("n"), n_val("7")))), item_with("n: -2"));
    CHECK_UPDATE(ITEM, UPDATE(set_("x", plus(n_path("m.x"), n_path("ll[1][1]")))),
                 item_with("x: 7"));
    CHECK_UPDATE(ITEM, UPDATE(set_("x", plus(n_val("0.1"), n_val("0.2")))), item_with("x: 0.3"));
    CHECK_UPDATE(ITEM, UPDATE(set_("x", minus(n_val("1e125"), n_val("1e125")))), item_with("x: 0"));
    CHECK_UPDATE(
        ITEM, UPDATE(set_("x", plus(n_val("12345678901234567890123456789012345678"), n_val("1")))),
        item_with("x: 12345678901234567890123456789012345679"));
    /* exact results out of range or precision are errors, with the number's messages */
    CHECK_ERROR(ITEM,
                UPDATE(set_("x", plus(n_val("9.9999999999999999999999999999999999999e125"),
                                      n_val("1e125")))),
                MSG_OVERFLOW);
    CHECK_ERROR(ITEM, UPDATE(set_("x", minus(n_val("1.1e-130"), n_val("1e-130")))), MSG_UNDERFLOW);
    CHECK_ERROR(ITEM, UPDATE(set_("x", plus(n_val("1e30"), n_val("1e-30")))), MSG_DIGITS);
    CHECK_ERROR(ITEM, UPDATE(set_("n", plus(n_path("n"), n_val("1e125")))), MSG_DIGITS);
    /* types: the left operand is checked before the right one is evaluated */
    CHECK_ERROR(ITEM, UPDATE(set_("x", plus(n_path("s"), n_val("1")))), MSG_TYPE);
    CHECK_ERROR(ITEM, UPDATE(set_("x", minus(n_val("1"), n_path("ns")))), MSG_TYPE);
    CHECK_ERROR(ITEM, UPDATE(set_("x", plus(n_path("s"), n_path("nope")))), MSG_TYPE);
    CHECK_ERROR(ITEM, UPDATE(set_("x", plus(n_path("nope"), n_path("s")))), MSG_MISSING);
    CHECK_ERROR(ITEM, UPDATE(set_("x", plus(n_path("n"), n_path("nope")))), MSG_MISSING);
    const char *not_numbers[] = {"\"1\"", "b\"1\"", "true",      "null",      "{}",
                                 "[1]",   "NS(1)",  "SS(\"1\")", "BS(b\"1\")"};
    for (size_t i = 0; i < sizeof not_numbers / sizeof *not_numbers; i++) {
        CHECK_ERROR(ITEM, UPDATE(set_("x", plus(n_val(not_numbers[i]), n_val("1")))), MSG_TYPE);
        CHECK_ERROR(ITEM, UPDATE(set_("x", minus(n_val("1"), n_val(not_numbers[i])))), MSG_TYPE);
    }
}

static void test_set_functions(void **state)
{
    (void)state;
    CHECK_UPDATE(ITEM, UPDATE(set_("x", if_not_exists("nope", n_val("3")))), item_with("x: 3"));
    CHECK_UPDATE(ITEM, UPDATE(set_("n", if_not_exists("n", n_val("3")))), ITEM);
    CHECK_UPDATE(ITEM, UPDATE(set_("x", if_not_exists("m.mm", n_val("3")))),
                 item_with("x: {p: 1}"));
    CHECK_UPDATE(ITEM, UPDATE(set_("x", plus(if_not_exists("nope", n_val("0")), n_val("1")))),
                 item_with("x: 1"));
    CHECK_UPDATE(ITEM, UPDATE(set_("x", if_not_exists("nope", n_path("s")))),
                 item_with("x: \"str\""));
    /* the second operand is evaluated even when the path exists (DynamoDB Local) */
    CHECK_ERROR(ITEM, UPDATE(set_("x", if_not_exists("n", n_path("nada")))), MSG_MISSING);
    CHECK_ERROR(ITEM, UPDATE(set_("x", if_not_exists("nope", n_path("nada")))), MSG_MISSING);

    CHECK_UPDATE(ITEM, UPDATE(set_("l", list_append(n_path("l"), n_val("[5, \"x\"]")))),
                 item_with("l: [0, 1, 2, 3, 4, 5, \"x\"]"));
    CHECK_UPDATE(ITEM, UPDATE(set_("l", list_append(n_val("[-1]"), n_path("l")))),
                 item_with("l: [-1, 0, 1, 2, 3, 4]"));
    CHECK_UPDATE(ITEM, UPDATE(set_("x", list_append(n_path("e"), n_path("e")))),
                 item_with("x: []"));
    CHECK_UPDATE(ITEM, UPDATE(set_("x", list_append(n_path("ll[1]"), n_path("ll")))),
                 item_with("x: [5, 6, {a: 1, b: [1, 2]}, [5, 6]]"));
    CHECK_UPDATE(ITEM,
                 UPDATE(set_("x", list_append(if_not_exists("nope", n_val("[]")), n_val("[1]")))),
                 item_with("x: [1]"));
    CHECK_ERROR(ITEM, UPDATE(set_("x", list_append(n_path("l"), n_path("s")))), MSG_TYPE);
    CHECK_ERROR(ITEM, UPDATE(set_("x", list_append(n_path("ss"), n_path("nope")))), MSG_TYPE);
    CHECK_ERROR(ITEM, UPDATE(set_("x", list_append(n_path("nope"), n_path("l")))), MSG_MISSING);
    CHECK_ERROR(ITEM, UPDATE(set_("x", list_append(n_path("l"), n_path("nope")))), MSG_MISSING);
    CHECK_ERROR(ITEM, UPDATE(set_("x", list_append(n_val("{}"), n_val("[]")))), MSG_TYPE);
    CHECK_ERROR(ITEM, UPDATE(set_("x", list_append(n_val("[]"), n_val("SS(\"a\")")))), MSG_TYPE);
}

/* ---- REMOVE ------------------------------------------------------------------------------- */

static void test_remove(void **state)
{
    (void)state;
    CHECK_UPDATE(ITEM, UPDATE(remove_("n"), remove_("m.x"), remove_("m.mm.p")),
                 item_with("-n; m: {mm: {}}"));
    /* a missing attribute is no error, a missing parent is */
    CHECK_UPDATE(ITEM, UPDATE(remove_("nope"), remove_("m.nope"), remove_("l[9]")), ITEM);
    const char *bad[] = {"nope.x", "n.x", "n[0]", "ss[0]", "m[0]", "l.x", "ll[7].a"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_ERROR(ITEM, UPDATE(remove_(bad[i])), MSG_PATH);
    /* list indexes are the positions before the update */
    CHECK_UPDATE(ITEM, UPDATE(remove_("l[1]"), remove_("l[3]")), item_with("l: [0, 2, 4]"));
    CHECK_UPDATE(ITEM, UPDATE(remove_("l[3]"), remove_("l[1]")), item_with("l: [0, 2, 4]"));
    CHECK_UPDATE(
        ITEM,
        UPDATE(remove_("l[0]"), remove_("l[1]"), remove_("l[2]"), remove_("l[3]"), remove_("l[4]")),
        item_with("l: []"));
    CHECK_UPDATE(ITEM, UPDATE(remove_("l[0]"), set_("l[1]", n_val("\"x\""))),
                 item_with("l: [\"x\", 2, 3, 4]"));
    CHECK_UPDATE(ITEM, UPDATE(set_("l[1]", n_val("\"x\"")), remove_("l[0]")),
                 item_with("l: [\"x\", 2, 3, 4]"));
    CHECK_UPDATE(ITEM, UPDATE(remove_("l[0]"), set_("l[9]", n_val("\"nine\""))),
                 item_with("l: [1, 2, 3, 4, \"nine\"]"));
    CHECK_UPDATE(ITEM, UPDATE(remove_("ll[0].b[0]"), remove_("ll[1][1]"), remove_("l[4]")),
                 item_with("ll: [{a: 1, b: [2]}, [5]]; l: [0, 1, 2, 3]"));
    CHECK_UPDATE(ITEM, UPDATE(remove_("ll[0]"), set_("ll[1][0]", n_val("9"))),
                 item_with("ll: [[9, 6]]"));
    /* a removed element no longer resolves for later actions' parents (an overlap the parser
     * rejects; the evaluator must still not write into the emptied slot) */
    CHECK_ERROR(ITEM, UPDATE(remove_("ll[0]"), set_("ll[0].a", n_val("1"))), MSG_PATH);
}

/* ---- ADD and DELETE ----------------------------------------------------------------------- */

static void test_add(void **state)
{
    (void)state;
    CHECK_UPDATE(ITEM, UPDATE(add_("n", "1")), item_with("n: 6"));
    CHECK_UPDATE(ITEM, UPDATE(add_("n", "-5.5")), item_with("n: -0.5"));
    CHECK_UPDATE(ITEM, UPDATE(add_("x", "3")), item_with("x: 3"));
    CHECK_UPDATE(ITEM, UPDATE(add_("ns", "NS(3, 1.0)")), item_with("ns: NS(1, 2, 3)"));
    CHECK_UPDATE(ITEM, UPDATE(add_("ss", "SS(\"c\", \"a\")")),
                 item_with("ss: SS(\"a\", \"b\", \"c\")"));
    CHECK_UPDATE(ITEM, UPDATE(add_("bs", "BS(b\"y\")")), item_with("bs: BS(b\"x\", b\"y\")"));
    CHECK_UPDATE(ITEM, UPDATE(add_("x", "SS(\"z\")")), item_with("x: SS(\"z\")"));
    CHECK_UPDATE(ITEM, UPDATE(add_("m.q", "NS(7)")), item_with("m: {x: 1, q: NS(7), mm: {p: 1}}"));
    CHECK_UPDATE(ITEM, UPDATE(add_("l[0]", "7")), item_with("l: [7, 1, 2, 3, 4]"));
    CHECK_UPDATE(ITEM, UPDATE(add_("l[9]", "7")), item_with("l: [0, 1, 2, 3, 4, 7]"));
    CHECK_UPDATE(ITEM, UPDATE(add_("sl[0]", "SS(\"b\")")), item_with("sl: [SS(\"a\", \"b\")]"));
    /* set members are kept in insertion order, the new ones after the old */
    kura_status st;
    kura_value *it = apply(ITEM, UPDATE(add_("ns", "NS(0, 2)")), &st);
    assert_kura_ok(st);
    const kura_value *ns = val_map_get(it, "ns", 2);
    assert_int_equal(ns->u.list.n, 3);
    assert_value(&ns->u.list.v[2], "0");

    CHECK_ERROR(ITEM, UPDATE(add_("nope.q", "1")), MSG_PATH);
    CHECK_ERROR(ITEM, UPDATE(add_("n", "1e125")), MSG_DIGITS);
    CHECK_ERROR("{n: 9e125}", UPDATE(add_("n", "1e125")), MSG_OVERFLOW);
    /* ADD works on numbers and sets of the same type only */
    struct {
        const char *path, *value;
    } bad[] = {{"s", "1"},          {"n", "SS(\"a\")"}, {"ss", "NS(1)"}, {"ns", "1"},
               {"bs", "SS(\"x\")"}, {"l", "[1]"},       {"m", "1"},      {"x", "\"a\""},
               {"x", "[1]"},        {"x", "{}"},        {"x", "true"},   {"x", "null"},
               {"x", "b\"a\""},     {"n", "\"1\""},     {"ss", "\"a\""}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_ERROR(ITEM, UPDATE(add_(bad[i].path, bad[i].value)), MSG_TYPE);
}

static void test_delete(void **state)
{
    (void)state;
    CHECK_UPDATE(ITEM, UPDATE(delete_("ss", "SS(\"a\")")), item_with("ss: SS(\"b\")"));
    CHECK_UPDATE(ITEM, UPDATE(delete_("ss", "SS(\"zz\", \"b\")")), item_with("ss: SS(\"a\")"));
    CHECK_UPDATE(ITEM, UPDATE(delete_("ns", "NS(1.0)")), item_with("ns: NS(2)"));
    CHECK_UPDATE(ITEM, UPDATE(delete_("bs", "BS(b\"y\")")), ITEM);
    /* a set left empty is removed; a missing attribute is no error */
    CHECK_UPDATE(ITEM, UPDATE(delete_("ss", "SS(\"a\", \"b\")")), item_with("-ss"));
    CHECK_UPDATE(ITEM, UPDATE(delete_("nope", "SS(\"a\")")), ITEM);
    CHECK_UPDATE(ITEM, UPDATE(delete_("m.nope", "SS(\"a\")")), ITEM);
    CHECK_UPDATE(ITEM, UPDATE(delete_("sl[0]", "SS(\"a\")")), item_with("sl: []"));
    CHECK_ERROR(ITEM, UPDATE(delete_("nope.x", "SS(\"a\")")), MSG_PATH);
    struct {
        const char *path, *value;
    } bad[] = {{"ss", "NS(1)"}, {"ns", "SS(\"1\")"}, {"bs", "SS(\"x\")"}, {"s", "SS(\"s\")"},
               {"n", "NS(5)"},  {"l[0]", "NS(0)"},   {"l", "[1]"},        {"ss", "\"a\""},
               {"n", "1"},      {"nope", "1"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_ERROR(ITEM, UPDATE(delete_(bad[i].path, bad[i].value)), MSG_TYPE);
}

static void test_error_order(void **state)
{
    (void)state;
    /* every SET operand is evaluated first: its error wins over any action's */
    CHECK_ERROR(ITEM, UPDATE(remove_("nope.y"), set_("x", n_path("nada"))), MSG_MISSING);
    CHECK_ERROR(ITEM, UPDATE(set_("nope.y", n_val("1")), set_("x", n_path("nada"))), MSG_MISSING);
    CHECK_ERROR(ITEM, UPDATE(add_("s", "1"), set_("x", plus(n_path("s"), n_val("1")))), MSG_TYPE);
    CHECK_ERROR(ITEM, UPDATE(add_("s", "1"), set_("x", n_path("nada"))), MSG_MISSING);
    /* then actions in order */
    CHECK_ERROR(ITEM, UPDATE(add_("s", "1"), remove_("nope.x")), MSG_TYPE);
    CHECK_ERROR(ITEM, UPDATE(remove_("nope.x"), add_("s", "1")), MSG_PATH);
    /* an empty update changes nothing */
    expr_update none = {NULL, 0};
    CHECK_UPDATE(ITEM, &none, ITEM);
}

/* ---- helpers for UpdateItem --------------------------------------------------------------- */

static void test_touches(void **state)
{
    (void)state;
    expr_update *u =
        UPDATE(set_("a.b", n_val("1")), remove_("c[0]"), add_("d", "1"), delete_("e", "SS(\"x\")"));
    assert_true(expr_update_touches(u, "a", 1));
    assert_true(expr_update_touches(u, "c", 1));
    assert_true(expr_update_touches(u, "d", 1));
    assert_true(expr_update_touches(u, "e", 1));
    assert_false(expr_update_touches(u, "b", 1));
    assert_false(expr_update_touches(u, "ab", 2));
    assert_false(expr_update_touches(u, "", 0));
}

static void check_updated(const char *item, const expr_update *u, const char *want_old,
                          const char *want_new, int line)
{
    kura_value *old_item = tv(item);
    kura_value *old_attrs = t_new_value(), *new_attrs = t_new_value();
    if (expr_updated_attributes(u, old_item, old_attrs) != KURA_OK)
        fail_msg("line %d: %s", line, kura_last_error());
    t_assert_value(old_attrs, want_old, __FILE__, line);
    kura_status st;
    kura_value *new_item = apply(item, u, &st);
    if (st != KURA_OK) fail_msg("line %d: %s", line, kura_last_error());
    if (expr_updated_attributes(u, new_item, new_attrs) != KURA_OK)
        fail_msg("line %d: %s", line, kura_last_error());
    t_assert_value(new_attrs, want_new, __FILE__, line);
}
#define CHECK_UPDATED(item, u, old, new) check_updated((item), (u), (old), (new), __LINE__)

static void test_updated_attributes(void **state)
{
    (void)state;
    CHECK_UPDATED(ITEM, UPDATE(set_("n", n_val("6")), set_("x", n_val("1"))), "{n: 5}",
                  "{n: 6, x: 1}");
    /* nested paths keep their nesting and only the named members */
    CHECK_UPDATED(ITEM, UPDATE(set_("m.y", n_val("2"))), "{}", "{m: {y: 2}}");
    CHECK_UPDATED(ITEM, UPDATE(set_("m.mm.p", n_val("2")), set_("m.z", n_val("3"))),
                  "{m: {mm: {p: 1}}}", "{m: {mm: {p: 2}, z: 3}}");
    CHECK_UPDATED("{user_id: \"123\", profile: {age: 30, name: \"x\"}}",
                  UPDATE(set_("profile.age", plus(n_path("profile.age"), n_val("1")))),
                  "{profile: {age: 30}}", "{profile: {age: 31}}");
    /* REMOVEd attributes only in the old values; DELETE emptying a set likewise */
    CHECK_UPDATED(ITEM, UPDATE(remove_("m.x"), remove_("n")), "{m: {x: 1}, n: 5}", "{}");
    CHECK_UPDATED(ITEM, UPDATE(delete_("ss", "SS(\"a\", \"b\")")), "{ss: SS(\"a\", \"b\")}", "{}");
    CHECK_UPDATED(ITEM, UPDATE(add_("ss", "SS(\"c\")"), add_("n", "1")),
                  "{ss: SS(\"a\", \"b\"), n: 5}", "{ss: SS(\"a\", \"b\", \"c\"), n: 6}");
    /* list indexes: the elements at those positions in each item, in index order (a REMOVEd
     * position of the new item holds the element that moved there, as in dynalite) */
    CHECK_UPDATED(ITEM, UPDATE(set_("l[3]", n_val("\"x\"")), set_("l[1]", n_val("\"y\""))),
                  "{l: [1, 3]}", "{l: [\"y\", \"x\"]}");
    CHECK_UPDATED(ITEM, UPDATE(remove_("l[1]"), remove_("l[3]")), "{l: [1, 3]}", "{l: [2]}");
    CHECK_UPDATED(ITEM, UPDATE(set_("l[9]", n_val("9")), set_("l[7]", n_val("7"))), "{}", "{}");
    CHECK_UPDATED(ITEM, UPDATE(set_("ll[0].a", n_val("2"))), "{ll: [{a: 1}]}", "{ll: [{a: 2}]}");
    /* a missing item (old values of an update creating the item) */
    kura_value *dst = t_new_value();
    assert_kura_ok(expr_updated_attributes(UPDATE(set_("a", n_val("1"))), NULL, dst));
    assert_value(dst, "{}");
}

/* ---- through the parser ------------------------------------------------------------------- */

#define VALUES                                                                                     \
    "{\":one\": 1, \":zero\": 0, \":l\": [7], \":x\": \"x\", \":y\": \"y\", \":ns\": NS(3),"       \
    " \":ss\": SS(\"a\")}"

static void check_parsed(const char *expr, const char *want, int line)
{
    const expr_update *u = t_parse_update(expr, "{\"#m\": \"m\"}", VALUES);
    check_update(ITEM, u, want, line);
}

static void check_parsed_error(const char *expr, const char *msg, int line)
{
    const expr_update *u = t_parse_update(expr, NULL, VALUES);
    check_update_error(ITEM, u, msg, line);
}

static void test_parsed_updates(void **state)
{
    (void)state;
    check_parsed("SET n = n + :one, e = list_append(e, :l) REMOVE l[1], l[3] ADD ns :ns "
                 "DELETE ss :ss",
                 item_with("n: 6; e: [7]; l: [0, 2, 4]; ns: NS(1, 2, 3); ss: SS(\"b\")"), __LINE__);
    check_parsed("ADD ns :ns SET #m.y = :x, #m.x = #m.x - :one",
                 item_with("ns: NS(1, 2, 3); m: {x: 0, y: \"x\", mm: {p: 1}}"), __LINE__);
    check_parsed("SET l[9] = :x, l[7] = :y", item_with("l: [0, 1, 2, 3, 4, \"y\", \"x\"]"),
                 __LINE__);
    check_parsed("SET x = if_not_exists(nope, :zero) + :one, n = s, s = n",
                 item_with("x: 1; n: \"str\"; s: 5"), __LINE__);
    check_parsed("REMOVE ll[0].b[0], ll[1][1]", item_with("ll: [{a: 1, b: [2]}, [5]]"), __LINE__);
    check_parsed("DELETE ss :ss, sl[0] :ss", item_with("ss: SS(\"b\"); sl: []"), __LINE__);
    check_parsed_error("SET x = nope", MSG_MISSING, __LINE__);
    check_parsed_error("SET x = n + nope", MSG_MISSING, __LINE__);
    check_parsed_error("SET x = s + n", MSG_TYPE, __LINE__);
    check_parsed_error("SET x = list_append(l, s)", MSG_TYPE, __LINE__);
    check_parsed_error("SET nope.x = :one", MSG_PATH, __LINE__);
    check_parsed_error("REMOVE n.x", MSG_PATH, __LINE__);
    check_parsed_error("ADD s :one", MSG_TYPE, __LINE__);
    check_parsed_error("DELETE ns :ss", MSG_TYPE, __LINE__);

    const expr_update *u =
        t_parse_update("SET #k.a = :one REMOVE extra", "{\"#k\": \"pk\"}", "{\":one\": 1}");
    assert_true(expr_update_touches(u, "pk", 2));
    assert_true(expr_update_touches(u, "extra", 5));
    assert_false(expr_update_touches(u, "a", 1));

    u = t_parse_update("SET #m.y = :x REMOVE #m.x, n", "{\"#m\": \"m\"}", "{\":x\": \"x\"}");
    check_updated(ITEM, u, "{m: {x: 1}, n: 5}", "{m: {y: \"x\"}}", __LINE__);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_set_paths, t_free_all),
        cmocka_unit_test_teardown(test_set_operands, t_free_all),
        cmocka_unit_test_teardown(test_set_arithmetic, t_free_all),
        cmocka_unit_test_teardown(test_set_functions, t_free_all),
        cmocka_unit_test_teardown(test_remove, t_free_all),
        cmocka_unit_test_teardown(test_add, t_free_all),
        cmocka_unit_test_teardown(test_delete, t_free_all),
        cmocka_unit_test_teardown(test_error_order, t_free_all),
        cmocka_unit_test_teardown(test_touches, t_free_all),
        cmocka_unit_test_teardown(test_updated_attributes, t_free_all),
        cmocka_unit_test_teardown(test_parsed_updates, t_free_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

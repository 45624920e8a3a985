/*
 * partiql_parse_test.c - the PartiQL parser (engine/partiql/lex.c, parse.c, parse_expr.c,
 * parse_lit.c): every statement kind with its clauses, every literal and the value it
 * becomes, parameters, identifiers (quoted, unquoted, keyword case), paths, conditions and
 * their precedence, and every error with its exact message.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "engine/partiql/partiql.h"

static pq_stmt *parse_ok(const char *text, const kura_value *params)
{
    pq_stmt *st = NULL;
    kura_status s = pq_parse(text, strlen(text), params, &st);
    if (s != KURA_OK) fail_msg("parse of \"%s\": %s", text, kura_last_error());
    return st;
}

static void parse_err(const char *text, const kura_value *params, const char *want)
{
    pq_stmt *st = NULL;
    kura_status s = pq_parse(text, strlen(text), params, &st);
    if (s != KURA_E_INVALID) fail_msg("\"%s\" parsed (status %d)", text, (int)s);
    if (strcmp(kura_last_error(), want) != 0)
        fail_msg("\"%s\": got \"%s\", want \"%s\"", text, kura_last_error(), want);
}

/* The DynamoDB JSON of a value. */
static void assert_json(const kura_value *v, const char *want)
{
    char *json;
    size_t len;
    assert_kura_ok(kura_value_to_json(v, false, &json, &len));
    if (strcmp(json, want) != 0) fail_msg("got %s, want %s", json, want);
    kura_free(json);
}

static void assert_path1(const pq_node *n, const char *name)
{
    assert_int_equal(n->kind, PQ_PATH);
    assert_int_equal(n->nsteps, 1);
    assert_string_equal(n->steps[0].name, name);
}

static void test_select(void **state)
{
    (void)state;
    pq_stmt *st = parse_ok("SELECT * FROM \"Music\"", NULL);
    assert_int_equal(st->kind, PQ_SELECT);
    assert_string_equal(st->table, "Music");
    assert_null(st->index);
    assert_int_equal(st->nproj, 0);
    assert_null(st->where);
    pq_stmt_free(st);

    st = parse_ok("select a, \"b c\".d[2], e FROM t.\"idx\" where a = 1 order by sk desc;", NULL);
    assert_string_equal(st->table, "t");
    assert_string_equal(st->index, "idx");
    assert_int_equal(st->nproj, 3);
    assert_path1(st->proj[0], "a");
    assert_int_equal(st->proj[1]->nsteps, 3);
    assert_string_equal(st->proj[1]->steps[0].name, "b c");
    assert_string_equal(st->proj[1]->steps[1].name, "d");
    assert_true(st->proj[1]->steps[2].is_index);
    assert_int_equal(st->proj[1]->steps[2].index, 2);
    assert_int_equal(st->where->kind, PQ_EQ);
    assert_path1(st->order_by, "sk");
    assert_true(st->order_desc);
    pq_stmt_free(st);

    st = parse_ok("SELECT * FROM t WHERE a = 1 ORDER BY sk ASC", NULL);
    assert_false(st->order_desc);
    pq_stmt_free(st);
}

static void test_insert(void **state)
{
    (void)state;
    pq_stmt *st = parse_ok("INSERT INTO \"t\" VALUE {'pk': 'a', 'n': 1}", NULL);
    assert_int_equal(st->kind, PQ_INSERT);
    assert_string_equal(st->table, "t");
    char *json;
    size_t len;
    assert_kura_ok(kura_value_to_json(st->item, true, &json, &len));
    assert_string_equal(json, "{\"n\":{\"N\":\"1\"},\"pk\":{\"S\":\"a\"}}");
    kura_free(json);
    pq_stmt_free(st);
}

static void test_update(void **state)
{
    (void)state;
    pq_stmt *st = parse_ok("UPDATE t SET a = a + 1, b = list_append(b, [1]) REMOVE c, d[0] "
                           "SET e = set_add(e, <<'x'>>) WHERE pk = 'k' AND x > 2 "
                           "RETURNING MODIFIED NEW *", NULL);
    assert_int_equal(st->kind, PQ_UPDATE);
    assert_int_equal(st->nassigns, 5);
    assert_false(st->assigns[0].remove);
    assert_int_equal(st->assigns[0].value->kind, PQ_PLUS);
    assert_int_equal(st->assigns[1].value->kind, PQ_CALL);
    assert_string_equal(st->assigns[1].value->name, "list_append");
    assert_true(st->assigns[2].remove);
    assert_true(st->assigns[3].remove);
    assert_true(st->assigns[3].path->steps[1].is_index);
    assert_string_equal(st->assigns[4].value->name, "set_add");
    assert_int_equal(st->where->kind, PQ_AND);
    assert_int_equal(st->returning, KURA_RETURN_UPDATED_NEW);
    pq_stmt_free(st);

    static const struct { const char *r; kura_return_values want; } rets[] = {
        {"ALL OLD *", KURA_RETURN_ALL_OLD}, {"ALL NEW *", KURA_RETURN_ALL_NEW},
        {"MODIFIED OLD *", KURA_RETURN_UPDATED_OLD}, {"modified new *", KURA_RETURN_UPDATED_NEW}};
    for (size_t i = 0; i < sizeof rets / sizeof rets[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "UPDATE t SET a = 1 WHERE pk = 1 RETURNING %s", rets[i].r);
        st = parse_ok(text, NULL);
        assert_int_equal(st->returning, rets[i].want);
        pq_stmt_free(st);
    }
}

static void test_delete(void **state)
{
    (void)state;
    pq_stmt *st = parse_ok("DELETE FROM t WHERE pk = 'a' AND sk = 1 RETURNING ALL OLD *", NULL);
    assert_int_equal(st->kind, PQ_DELETE);
    assert_int_equal(st->returning, KURA_RETURN_ALL_OLD);
    pq_stmt_free(st);
}

/* Every literal, as the value of `a = <literal>`. */
static void test_literals(void **state)
{
    (void)state;
    static const struct { const char *lit, *json; } cases[] = {
        {"'x'", "{\"S\":\"x\"}"},
        {"'it''s'", "{\"S\":\"it's\"}"},
        {"''", "{\"S\":\"\"}"},
        {"12", "{\"N\":\"12\"}"},
        {"-1.50", "{\"N\":\"-1.5\"}"},
        {"+3", "{\"N\":\"3\"}"},
        {"1e3", "{\"N\":\"1000\"}"},
        {".5", "{\"N\":\"0.5\"}"},
        {"TRUE", "{\"BOOL\":true}"},
        {"false", "{\"BOOL\":false}"},
        {"NULL", "{\"NULL\":true}"},
        {"<<'a', 'b'>>", "{\"SS\":[\"a\",\"b\"]}"},
        {"<<1, 2>>", "{\"NS\":[\"1\",\"2\"]}"},
        {"[1, 'a', [TRUE]]", "{\"L\":[{\"N\":\"1\"},{\"S\":\"a\"},{\"L\":[{\"BOOL\":true}]}]}"},
        {"[]", "{\"L\":[]}"},
        {"{'k': 1, 'm': {}}", "{\"M\":{\"k\":{\"N\":\"1\"},\"m\":{\"M\":{}}}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "SELECT * FROM t WHERE a = %s", cases[i].lit);
        pq_stmt *st = parse_ok(text, NULL);
        assert_int_equal(st->where->kids[1]->kind, PQ_VALUE);
        assert_json(st->where->kids[1]->value, cases[i].json);
        pq_stmt_free(st);
    }
    pq_stmt *st = parse_ok("SELECT * FROM t WHERE a IS MISSING AND b = MISSING", NULL);
    assert_int_equal(st->where->kids[0]->kind, PQ_IS_MISSING);
    assert_int_equal(st->where->kids[1]->kids[1]->kind, PQ_MISSING);
    pq_stmt_free(st);
}

static void test_params(void **state)
{
    (void)state;
    kura_value *params = kura_value_list();
    assert_kura_ok(kura_value_append(params, kura_value_s("a", 1)));
    kura_value *bs = kura_value_b("\x01", 1);
    assert_kura_ok(kura_value_append(params, bs));
    pq_stmt *st = parse_ok("SELECT * FROM t WHERE pk = ? AND b IN [?]", params);
    assert_int_equal(st->nparams, 2);
    assert_json(st->where->kids[0]->kids[1]->value, "{\"S\":\"a\"}");
    assert_json(st->where->kids[1]->kids[1]->value, "{\"B\":\"AQ==\"}");
    pq_stmt_free(st);
    st = parse_ok("INSERT INTO t VALUE {'pk': ?, 'l': [?]}", params);
    pq_stmt_free(st);
    parse_err("SELECT * FROM t WHERE pk = ?", params, PQ_MSG_PARAMS);
    parse_err("SELECT * FROM t WHERE pk = ? AND a = ? AND b = ?", params, PQ_MSG_PARAMS);
    parse_err("SELECT * FROM t WHERE pk = ?", NULL, PQ_MSG_PARAMS);
    kura_value_free(params);
}

static void test_conditions(void **state)
{
    (void)state;
    /* OR binds looser than AND, NOT tighter */
    pq_stmt *st = parse_ok("SELECT * FROM t WHERE a = 1 OR NOT b = 2 AND c <> 3", NULL);
    assert_int_equal(st->where->kind, PQ_OR);
    assert_int_equal(st->where->kids[1]->kind, PQ_AND);
    assert_int_equal(st->where->kids[1]->kids[0]->kind, PQ_NOT);
    assert_int_equal(st->where->kids[1]->kids[1]->kind, PQ_NE);
    pq_stmt_free(st);
    st = parse_ok("SELECT * FROM t WHERE (a = 1 OR b = 2) AND c != 3", NULL);
    assert_int_equal(st->where->kind, PQ_AND);
    assert_int_equal(st->where->kids[0]->kind, PQ_OR);
    assert_int_equal(st->where->kids[1]->kind, PQ_NE);
    pq_stmt_free(st);
    static const struct { const char *cond; pq_kind kind; } cases[] = {
        {"a < 1", PQ_LT}, {"a <= 1", PQ_LE}, {"a > 1", PQ_GT}, {"a >= 1", PQ_GE},
        {"a BETWEEN 1 AND 2", PQ_BETWEEN}, {"a IN (1, 2)", PQ_IN}, {"a in [1]", PQ_IN},
        {"a NOT IN (1)", PQ_NOT}, {"a NOT BETWEEN 1 AND 2", PQ_NOT},
        {"a IS NULL", PQ_IS_NULL}, {"a IS NOT NULL", PQ_IS_NULL},
        {"a IS NOT MISSING", PQ_IS_MISSING}, {"begins_with(a, 'x')", PQ_CALL},
        {"contains(a, 1)", PQ_CALL}, {"attribute_type(a, 'S')", PQ_CALL},
        {"exists(a.b)", PQ_CALL}, {"missing(a)", PQ_CALL}, {"size(a) > 2", PQ_GT},
        {"BEGINS_WITH(a, 'x')", PQ_CALL}, {"a['k'] = 1", PQ_EQ},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "SELECT * FROM t WHERE %s", cases[i].cond);
        st = parse_ok(text, NULL);
        assert_int_equal(st->where->kind, cases[i].kind);
        pq_stmt_free(st);
    }
    st = parse_ok("SELECT * FROM t WHERE a IS NOT NULL", NULL);
    assert_true(st->where->negated);
    pq_stmt_free(st);
}

static void test_errors(void **state)
{
    (void)state;
    pq_stmt *st = NULL;
    static const struct { const char *text, *msg; } cases[] = {
        {"", "Unexpected end of statement"},
        {"SELEC * FROM t", "Unexpected token"},
        {"SELECT * FROM", "Unexpected end of statement"},
        {"SELECT * FROM select", "Unexpected keyword"},
        {"SELECT * t", "Unexpected token"},
        {"SELECT * FROM t WHERE", "Unexpected end of statement"},
        {"SELECT * FROM t WHERE a =", "Unexpected end of statement"},
        {"SELECT * FROM t WHERE a", "Unexpected end of statement"},
        {"SELECT * FROM t WHERE a = 'x", "Unexpected token"},
        {"SELECT * FROM t WHERE a = 1 b", "Unexpected token"},
        {"SELECT * FROM t WHERE a = # ", "Unexpected token"},
        {"SELECT * FROM t WHERE size(a)", "Unexpected end of statement"},

        {"SELECT * FROM t WHERE a = <<>>", "Empty set literal"},
        {"SELECT * FROM t WHERE a = <<1, 'x'>>", "Set members must all be strings, numbers or binary of one type"},
        {"SELECT * FROM t WHERE a = <<[1]>>", "Set members must all be strings, numbers or binary of one type"},
        {"SELECT * FROM t WHERE a = {1: 2}", "Unexpected token"},

        {"SELECT * FROM t WHERE a IS 1", "Unexpected token"},
        {"SELECT * FROM t WHERE a[x] = 1", "Unexpected token"},
        {"SELECT * FROM t WHERE a NOT = 1", "Unexpected token"},
        {"SELECT * FROM t ORDER sk", "Unexpected token"},
        {"INSERT INTO t VALUE 1", "Unexpected token"},
        {"INSERT INTO t VALUES {'a': 1}", "Unexpected keyword"},
        {"UPDATE t WHERE a = 1", "Unexpected keyword"},
        {"UPDATE t SET a = 1 WHERE", "Unexpected end of statement"},
        {"UPDATE t SET a = 1 WHERE pk = 1 RETURNING ALL *", "Unexpected token"},
        {"DELETE FROM", "Unexpected end of statement"},
        {"DELETE FROM t WHERE pk = 1 RETURNING ALL *", "Unexpected token"},
        {"SELECT * FROM t; SELECT", "Unexpected keyword"},
        {"UPDATE t SET a = a + 1 + 2 WHERE pk = 1", "A SET value has at most one + or -"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char want[256];
        snprintf(want, sizeof want, PQ_MSG_SYNTAX "%s", cases[i].msg);
        parse_err(cases[i].text, NULL, want);
    }
    /* refusals in DynamoDB's own words (DynamoDB Local 1.25.1's PartiQL front end) */
    parse_err("SELECT * FROM t WHERE foo(a)", NULL, "Unrecognized function: foo");
    parse_err("SELECT * FROM t WHERE a = <<1, 2, 1.0>>", NULL,
              "Input collection contains duplicates");
    parse_err("DELETE FROM t WHERE pk = 1 RETURNING ALL NEW *", NULL,
              "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is "
              "allowed in DELETE statements.");
    parse_err("DELETE FROM t WHERE pk = 1 RETURNING MODIFIED NEW *", NULL,
              "Invalid returning clause: RETURNING MODIFIED NEW *. Only RETURNING ALL OLD * is "
              "allowed in DELETE statements.");
    /* a write without WHERE parses; its translation refuses it (partiql_translate_test) */
    st = NULL;
    assert_kura_ok(pq_parse("DELETE FROM t", 13, NULL, &st));
    pq_stmt_free(st);
    /* a number outside DynamoDB's range keeps the number's own message */
    assert_kura_status(pq_parse("SELECT * FROM t WHERE a = 1e200", 31, NULL, &st), KURA_E_INVALID);
    /* nesting is bounded */
    char deep[2000];
    size_t n = (size_t)snprintf(deep, sizeof deep, "SELECT * FROM t WHERE ");
    for (int i = 0; i < 300; i++) deep[n++] = '(';
    deep[n] = '\0';
    parse_err(deep, NULL, PQ_MSG_SYNTAX "Nesting too deep");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select),     cmocka_unit_test(test_insert),
        cmocka_unit_test(test_update),     cmocka_unit_test(test_delete),
        cmocka_unit_test(test_literals),   cmocka_unit_test(test_params),
        cmocka_unit_test(test_conditions), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

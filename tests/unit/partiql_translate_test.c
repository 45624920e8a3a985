/*
 * partiql_translate_test.c - the PartiQL translator (engine/partiql/translate.c, render.c):
 * which operation each statement becomes, the exact expression text it writes (key
 * condition, filter or condition, update, projection) with its #n/:v placeholders and the
 * names and values behind them, and the refusals (a write without its full key, ORDER BY
 * rules, set_add on another attribute).
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "engine/partiql/partiql.h"

static const pq_keys hash_range = {"pk", "sk"};
static const pq_keys hash_only = {"pk", NULL};

static void translate(const char *text, const pq_keys *k, pq_plan *plan)
{
    pq_stmt *st = NULL;
    kura_status s = pq_parse(text, strlen(text), NULL, &st);
    if (s != KURA_OK) fail_msg("parse of \"%s\": %s", text, kura_last_error());
    s = pq_translate(st, k, plan);
    if (s != KURA_OK) fail_msg("translation of \"%s\": %s", text, kura_last_error());
    pq_stmt_free(st);
}

static void translate_err(const char *text, const pq_keys *k, const char *want)
{
    pq_stmt *st = NULL;
    pq_plan plan;
    assert_kura_ok(pq_parse(text, strlen(text), NULL, &st));
    kura_status s = pq_translate(st, k, &plan);
    pq_plan_free(&plan);
    pq_stmt_free(st);
    if (s != KURA_E_INVALID) fail_msg("\"%s\" translated", text);
    if (strcmp(kura_last_error(), want) != 0)
        fail_msg("\"%s\": got \"%s\", want \"%s\"", text, kura_last_error(), want);
}

static void assert_text(const char *what, const char *got, const char *want)
{
    if (!want && !got) return;
    if (!want || !got || strcmp(got, want) != 0)
        fail_msg("%s: got \"%s\", want \"%s\"", what, got ? got : "(null)",
                 want ? want : "(null)");
}

/* The map's JSON, for names and values. */
static void assert_map(const kura_value *m, const char *want)
{
    char *json;
    size_t len;
    if (!m) {
        assert_null(want);
        return;
    }
    assert_kura_ok(kura_value_to_json(m, true, &json, &len));
    if (strcmp(json, want) != 0) fail_msg("got %s, want %s", json, want);
    kura_free(json);
}

static const struct {
    const char *text;
    const pq_keys *keys;
    pq_plan_kind kind;
    const char *key_condition, *condition, *update, *projection;
} cases[] = {
    {"SELECT * FROM t WHERE pk = 'a' AND sk = 1", &hash_range, PQ_P_GET, NULL, NULL, NULL, NULL},
    {"SELECT * FROM t WHERE 1 = sk AND 'a' = pk", &hash_range, PQ_P_GET, NULL, NULL, NULL, NULL},
    {"SELECT a, b.c FROM t WHERE pk = 'a'", &hash_only, PQ_P_GET, NULL, NULL, NULL,
     "#n0, #n1.#n2"},
    {"SELECT * FROM t WHERE pk = 'a'", &hash_range, PQ_P_QUERY, "(#n0 = :v0)", NULL, NULL, NULL},
    {"SELECT * FROM t WHERE pk = 'a' AND sk > 1 AND x = 2", &hash_range, PQ_P_QUERY,
     "(#n0 = :v0) AND (#n1 > :v1)", "(#n2 = :v2)", NULL, NULL},
    {"SELECT * FROM t WHERE x = 2 AND begins_with(sk, 'p') AND pk = 'a'", &hash_range,
     PQ_P_QUERY, "(#n0 = :v0) AND begins_with(#n1, :v1)", "(#n2 = :v2)", NULL, NULL},
    {"SELECT * FROM t WHERE pk = 'a' AND sk BETWEEN 1 AND 3", &hash_range, PQ_P_QUERY,
     "(#n0 = :v0) AND (#n1 BETWEEN :v1 AND :v2)", NULL, NULL, NULL},
    {"SELECT * FROM t WHERE pk = 'a' AND sk IN (1, 2)", &hash_range, PQ_P_SCAN, NULL,
     "((#n0 = :v0) AND (#n1 IN (:v1, :v2)))", NULL, NULL},
    {"SELECT * FROM t WHERE pk = 'a' AND sk > 1 AND sk < 5", &hash_range, PQ_P_SCAN, NULL,
     "(((#n0 = :v0) AND (#n1 > :v1)) AND (#n1 < :v2))", NULL, NULL},
    {"SELECT * FROM t WHERE pk = 'a' AND sk = 1 AND x = 1", &hash_range, PQ_P_QUERY,
     "(#n0 = :v0) AND (#n1 = :v1)", "(#n2 = :v2)", NULL, NULL},
    {"SELECT * FROM t.i WHERE pk = 'a' AND sk = 1", &hash_range, PQ_P_QUERY,
     "(#n0 = :v0) AND (#n1 = :v1)", NULL, NULL, NULL},
    {"SELECT * FROM t", &hash_range, PQ_P_SCAN, NULL, NULL, NULL, NULL},
    {"SELECT * FROM t WHERE pk = 'a' OR pk = 'b'", &hash_range, PQ_P_SCAN, NULL,
     "((#n0 = :v0) OR (#n0 = :v1))", NULL, NULL},
    {"SELECT * FROM t WHERE a IS MISSING AND b IS NOT MISSING AND c IS NULL AND "
     "d IS NOT NULL", &hash_only, PQ_P_SCAN, NULL,
     "(((attribute_not_exists(#n0) AND attribute_exists(#n1)) AND attribute_type(#n2, :v0)) "
     "AND (NOT attribute_type(#n3, :v1)))", NULL, NULL},
    {"SELECT * FROM t WHERE exists(a) AND NOT missing(b.c) AND size(l) >= 2", &hash_only,
     PQ_P_SCAN, NULL,
     "((attribute_exists(#n0) AND (NOT attribute_not_exists(#n1.#n2))) AND (size(#n3) >= :v0))",
     NULL, NULL},
    {"SELECT * FROM t WHERE a IN (1, 2) AND b != 'x' AND contains(c, 'y') AND "
     "attribute_type(d, 'N') AND l[1] < 3", &hash_only, PQ_P_SCAN, NULL,
     "(((((#n0 IN (:v0, :v1)) AND (#n1 <> :v2)) AND contains(#n2, :v3)) AND "
     "attribute_type(#n3, :v4)) AND (#n4[1] < :v5))", NULL, NULL},
    {"INSERT INTO t VALUE {'pk': 'a'}", &hash_only, PQ_P_PUT, NULL,
     "attribute_not_exists(#n0)", NULL, NULL},
    {"UPDATE t SET a = a + 1, b = list_append(b, [1]) REMOVE c SET s = set_add(s, <<'x'>>) "
     "SET d = set_delete(d, <<1>>) WHERE pk = 'k' AND sk = 2", &hash_range, PQ_P_UPDATE, NULL,
     "attribute_exists(#n0)",
     "SET #n1 = #n1 + :v0, #n2 = list_append(#n2, :v1) REMOVE #n3 ADD #n4 :v2 DELETE #n5 :v3",
     NULL},
    {"UPDATE t SET a = 'x' WHERE pk = 'k' AND a <> 'x' AND n > 1", &hash_only, PQ_P_UPDATE,
     NULL, "attribute_exists(#n0) AND (#n1 <> :v0) AND (#n2 > :v1)", "SET #n1 = :v2", NULL},
    {"DELETE FROM t WHERE pk = 'k'", &hash_only, PQ_P_DELETE, NULL, NULL, NULL, NULL},
    {"DELETE FROM t WHERE pk = 'k' AND n > 1", &hash_only, PQ_P_DELETE, NULL, "(#n0 > :v0)",
     NULL, NULL},
};

static void test_plans(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pq_plan p;
        translate(cases[i].text, cases[i].keys, &p);
        if (p.kind != cases[i].kind)
            fail_msg("\"%s\": kind %d, want %d", cases[i].text, p.kind, cases[i].kind);
        assert_text("key condition", p.key_condition, cases[i].key_condition);
        assert_text("condition", p.condition, cases[i].condition);
        assert_text("update", p.update, cases[i].update);
        assert_text("projection", p.projection, cases[i].projection);
        pq_plan_free(&p);
    }
}

static void test_maps(void **state)
{
    (void)state;
    pq_plan p;
    translate("UPDATE t SET \"a b\".c = 5 WHERE pk = 'k' AND sk = 2 RETURNING ALL NEW *",
              &hash_range, &p);
    assert_map(p.key, "{\"pk\":{\"S\":\"k\"},\"sk\":{\"N\":\"2\"}}");
    assert_map(p.names, "{\"#n0\":{\"S\":\"pk\"},\"#n1\":{\"S\":\"a b\"},\"#n2\":{\"S\":\"c\"}}");
    assert_map(p.values, "{\":v0\":{\"N\":\"5\"}}");
    assert_int_equal(p.return_values, KURA_RETURN_ALL_NEW);
    pq_plan_free(&p);

    translate("SELECT * FROM t WHERE pk = 'a' ORDER BY sk DESC", &hash_range, &p);
    assert_true(p.backward);
    pq_plan_free(&p);
    translate("SELECT * FROM t WHERE pk = 'a' ORDER BY sk", &hash_range, &p);
    assert_false(p.backward);
    pq_plan_free(&p);
    translate("INSERT INTO t VALUE {'pk': 'a', 'x': [1]}", &hash_only, &p);
    assert_map(p.item, "{\"pk\":{\"S\":\"a\"},\"x\":{\"L\":[{\"N\":\"1\"}]}}");
    pq_plan_free(&p);
}

static void test_refusals(void **state)
{
    (void)state;
    translate_err("UPDATE t SET a = 1 WHERE sk = 1", &hash_range, PQ_MSG_NO_KEY);
    translate_err("UPDATE t SET a = 1 WHERE pk = 1", &hash_range, PQ_MSG_NO_KEY);
    translate_err("UPDATE t SET a = 1 WHERE pk = 1 OR sk = 2", &hash_range, PQ_MSG_NO_KEY);
    translate_err("DELETE FROM t WHERE pk > 1", &hash_only, PQ_MSG_NO_KEY);
    translate_err("DELETE FROM t WHERE a = 1", &hash_only, PQ_MSG_NO_KEY);
    translate_err("SELECT * FROM t ORDER BY sk", &hash_range,
                  "Must have WHERE clause in the statement when using ORDER BY clause.");
    translate_err("SELECT * FROM t WHERE pk = 1 ORDER BY x", &hash_range,
                  "Variable reference x in ORDER BY clause must be part of the primary key");
    translate_err("SELECT * FROM t WHERE x = 1 ORDER BY sk", &hash_range,
                  PQ_MSG_ORDER_SCAN);
    translate_err("SELECT * FROM t WHERE pk = 1 AND sk IN (1, 2) ORDER BY sk", &hash_range,
                  PQ_MSG_ORDER_SCAN);
    translate_err("UPDATE t SET s = set_add(x, <<1>>) WHERE pk = 1", &hash_only,
                  "set_add must be applied to the attribute it sets");
    translate_err("UPDATE t SET s = set_add(s, x) WHERE pk = 1", &hash_only,
                  "set_add takes a set value as its second argument");
    translate_err("UPDATE t SET s = set_delete(s, x.y) WHERE pk = 1", &hash_only,
                  "set_delete takes a set value as its second argument");
    translate_err("UPDATE t SET a = MISSING WHERE pk = 1", &hash_only,
                  PQ_MSG_SYNTAX "MISSING is not a value");
    translate_err("SELECT * FROM t WHERE a = MISSING", &hash_only,
                  "MISSING must be compared using IS operator");
    translate_err("SELECT * FROM t WHERE MISSING <> a", &hash_only,
                  "MISSING must be compared using IS operator");
    translate_err("UPDATE t SET a = 1", &hash_only, PQ_MSG_NO_KEY);
    translate_err("DELETE FROM t", &hash_only, PQ_MSG_NO_KEY);
    translate_err("INSERT INTO t VALUE {'pk': 1}", &hash_range,
                  "Key attribute should be present in the item: Key sk");
    translate_err("UPDATE t SET a = exists(b) WHERE pk = 1", &hash_only,
                  PQ_MSG_SYNTAX "Unexpected function exists in a value");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plans),
        cmocka_unit_test(test_maps),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

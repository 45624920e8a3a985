/*
 * partiql_exec_test.c - kura_execute_statement on a database (engine/partiql/exec.c,
 * prepare.c, cache.c): each statement kind's result and errors through the C API, paging
 * with NextToken, and the plan cache: the same text with other parameters, a parameter
 * count that no longer matches, a table dropped and created again with another key (the
 * cached plan must not be used), a table gone, values bound into UPDATE's :v map, and
 * statements the cache must not keep ('?' inside a list); a cached plan's expressions, parsed
 * once, not used for values a parse would reject (another type, BETWEEN's bounds reversed,
 * a set with duplicates): those get the parse's own error.
 */
#include "testutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kura.h"

typedef struct fixture {
    char *dir;
    kura_db *db;
} fixture;

static void create(kura_db *db, const char *hash, const char *range)
{
    kura_attribute_definition defs[] = {{hash, KURA_S}, {range, KURA_N}};
    kura_key_schema_element ks[] = {{hash, false}, {range, true}};
    kura_create_table_req req = {.table_name = "tbl", .attribute_definitions = defs,
                                 .attribute_definitions_count = range ? 2 : 1,
                                 .key_schema = ks, .key_schema_count = range ? 2 : 1,
                                 .billing_mode = KURA_BILLING_PAY_PER_REQUEST};
    kura_table_description d;
    assert_kura_ok(kura_create_table(db, &req, &d));
    kura_table_description_free(&d);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("partiql_exec");
    kura_options o;
    kura_options_init(&o);
    assert_kura_ok(kura_open(f->dir, &o, &f->db));
    create(f->db, "pk", "sk");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    assert_kura_ok(kura_close(f->db));
    test_rmrf(f->dir);
    free(f);
    return 0;
}

/* Parameters from "S:a", "N:1" strings; NULL-terminated. */
static kura_value *params(const char *first, ...)
{
    kura_value *l = kura_value_list();
    va_list ap;
    va_start(ap, first);
    for (const char *p = first; p; p = va_arg(ap, const char *)) {
        kura_value *v = p[0] == 'S' ? kura_value_s(p + 2, strlen(p + 2))
                                    : kura_value_n(p + 2, strlen(p + 2));
        assert_kura_ok(kura_value_append(l, v));
    }
    va_end(ap);
    return l;
}

/* Runs a statement; returns its status, with the items as JSON lines in out (if given). */
static kura_status exec(kura_db *db, const char *stmt, kura_value *p, char *out, size_t cap,
                        char **token)
{
    kura_execute_statement_req req = {.statement = stmt, .parameters = p,
                                      .return_values_on_condition_check_failure =
                                          KURA_RETURN_ALL_OLD,
                                      .limit = token ? 2 : 0,
                                      .next_token = token ? *token : NULL};
    kura_execute_statement_res res;
    kura_status s = kura_execute_statement(db, &req, &res);
    if (out) out[0] = '\0';
    const kura_value *items = s == KURA_OK ? res.items : NULL;
    for (size_t i = 0; out && i < kura_value_count(items); i++) {
        char *json;
        size_t len;
        assert_kura_ok(kura_value_to_json(kura_value_at(items, i, NULL, NULL), true, &json, &len));
        snprintf(out + strlen(out), cap - strlen(out), "%s\n", json);
        kura_free(json);
    }
    if (out && s == KURA_E_CONDITION_FAILED && res.item) snprintf(out, cap, "old item");
    if (token) {
        free(*token);
        *token = res.next_token;
        res.next_token = NULL;
    }
    kura_execute_statement_res_free(&res);
    kura_value_free(p);
    return s;
}

static void test_statements_and_cache(void **state)
{
    fixture *f = *state;
    char out[4096];
    const char *ins = "INSERT INTO tbl VALUE {'pk': ?, 'sk': ?, 'n': 1}";
    for (int i = 0; i < 5; i++) {
        char sk[8];
        snprintf(sk, sizeof sk, "N:%d", i);
        assert_kura_ok(exec(f->db, ins, params("S:a", sk, NULL), NULL, 0, NULL));
    }
    assert_kura_status(exec(f->db, ins, params("S:a", "N:3", NULL), NULL, 0, NULL),
                       KURA_E_DUPLICATE_ITEM);
    assert_string_equal(kura_last_error(), "Duplicate primary key exists in table");

    const char *get = "SELECT sk FROM tbl WHERE pk = ? AND sk = ?";
    assert_kura_ok(exec(f->db, get, params("S:a", "N:1", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "{\"sk\":{\"N\":\"1\"}}\n");
    assert_kura_ok(exec(f->db, get, params("S:a", "N:4", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "{\"sk\":{\"N\":\"4\"}}\n");
    assert_kura_ok(exec(f->db, get, params("S:b", "N:4", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "");
    assert_kura_status(exec(f->db, get, params("S:a", NULL), NULL, 0, NULL), KURA_E_INVALID);
    assert_string_equal(kura_last_error(),
                        "Number of parameters in request and statement don't match.");

    /* values bound into the :v map of a cached UPDATE */
    const char *upd = "UPDATE tbl SET n = n + ? WHERE pk = ? AND sk = ? RETURNING ALL NEW *";
    assert_kura_ok(exec(f->db, upd, params("N:10", "S:a", "N:2", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "{\"n\":{\"N\":\"11\"},\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"2\"}}\n");
    assert_kura_ok(exec(f->db, upd, params("N:5", "S:a", "N:2", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "{\"n\":{\"N\":\"16\"},\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"2\"}}\n");
    assert_kura_status(exec(f->db, upd, params("N:5", "S:zz", "N:2", NULL), out, sizeof out, NULL),
                       KURA_E_CONDITION_FAILED);
    assert_kura_status(exec(f->db, "DELETE FROM tbl WHERE pk = ? AND sk = ? AND n > 100",
                            params("S:a", "N:2", NULL), out, sizeof out, NULL),
                       KURA_E_CONDITION_FAILED);
    assert_string_equal(out, "old item");

    /* an attribute given twice in VALUE: the last one wins, also when run again */
    const char *twice = "INSERT INTO tbl VALUE {'pk': 'c', 'sk': ?, 'n': ?, 'n': 7}";
    assert_kura_ok(exec(f->db, twice, params("N:1", "N:100", NULL), NULL, 0, NULL));
    assert_kura_ok(exec(f->db, twice, params("N:2", "N:200", NULL), NULL, 0, NULL));
    assert_kura_ok(exec(f->db, "SELECT n FROM tbl WHERE pk = 'c'", NULL, out, sizeof out, NULL));
    assert_string_equal(out, "{\"n\":{\"N\":\"7\"}}\n{\"n\":{\"N\":\"7\"}}\n");

    /* a '?' inside a list: not cached, still right each time */
    const char *lst = "UPDATE tbl SET l = [?] WHERE pk = 'a' AND sk = 0 RETURNING MODIFIED NEW *";
    assert_kura_ok(exec(f->db, lst, params("S:x", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "{\"l\":{\"L\":[{\"S\":\"x\"}]}}\n");
    assert_kura_ok(exec(f->db, lst, params("S:y", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "{\"l\":{\"L\":[{\"S\":\"y\"}]}}\n");
}

static void test_paging(void **state)
{
    fixture *f = *state;
    char out[4096], all[8192] = "";
    for (int i = 0; i < 5; i++) {
        char stmt[128];
        snprintf(stmt, sizeof stmt, "INSERT INTO tbl VALUE {'pk': 'p', 'sk': %d}", i);
        assert_kura_ok(exec(f->db, stmt, NULL, NULL, 0, NULL));
    }
    char *token = NULL;
    int pages = 0;
    do {
        assert_kura_ok(exec(f->db, "SELECT sk FROM tbl WHERE pk = ? ORDER BY sk DESC",
                            params("S:p", NULL), out, sizeof out, &token));
        strcat(all, out);
        pages++;
    } while (token);
    assert_int_equal(pages, 3);
    assert_string_equal(all, "{\"sk\":{\"N\":\"4\"}}\n{\"sk\":{\"N\":\"3\"}}\n{\"sk\":{\"N\":\"2\"}}\n"
                             "{\"sk\":{\"N\":\"1\"}}\n{\"sk\":{\"N\":\"0\"}}\n");
    token = strdup("0102zz");
    assert_kura_status(exec(f->db, "SELECT sk FROM tbl WHERE pk = ?", params("S:p", NULL), out,
                            sizeof out, &token),
                       KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "Invalid NextToken");
    free(token);
}

/* A cached plan is for the table's key as it was: after the table is dropped and made again
 * with another key, the same text is translated again. */
static void test_cache_follows_the_table(void **state)
{
    fixture *f = *state;
    char out[4096];
    const char *get = "SELECT * FROM tbl WHERE pk = ? AND sk = ?";
    assert_kura_ok(exec(f->db, "INSERT INTO tbl VALUE {'pk': 'a', 'sk': 1}", NULL, NULL, 0, NULL));
    assert_kura_ok(exec(f->db, get, params("S:a", "N:1", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "{\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}\n");
    kura_table_description d;
    assert_kura_ok(kura_delete_table(f->db, "tbl", &d));
    kura_table_description_free(&d);
    assert_kura_status(exec(f->db, get, params("S:a", "N:1", NULL), NULL, 0, NULL),
                       KURA_E_RESOURCE_NOT_FOUND);
    assert_string_equal(kura_last_error(), "Requested resource not found");
    create(f->db, "id", "sk");
    assert_kura_ok(exec(f->db, "INSERT INTO tbl VALUE {'id': 'x', 'sk': 1, 'pk': 'a'}", NULL,
                        NULL, 0, NULL));
    /* pk is no key attribute now: a Scan with the filter, not a GetItem on {pk, sk} */
    assert_kura_ok(exec(f->db, get, params("S:a", "N:1", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "{\"id\":{\"S\":\"x\"},\"pk\":{\"S\":\"a\"},\"sk\":{\"N\":\"1\"}}\n");
    assert_kura_status(exec(f->db, "DELETE FROM tbl WHERE pk = ? AND sk = ?",
                            params("S:a", "N:1", NULL), NULL, 0, NULL),
                       KURA_E_INVALID);
    assert_string_equal(kura_last_error(),
                        "Where clause does not contain a mandatory equality on all key attributes");
}

/* kura_last_error() after a statement, copied. */
static void last_error(char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", kura_last_error());
}

/* A set of strings from its members. */
static kura_value *ss(const char *a, const char *b)
{
    kura_value *v = kura_value_set(KURA_SS);
    assert_kura_ok(kura_value_append(v, kura_value_s(a, strlen(a))));
    assert_kura_ok(kura_value_append(v, kura_value_s(b, strlen(b))));
    return v;
}

static kura_value *with_key(kura_value *first)
{
    kura_value *l = kura_value_list();
    assert_kura_ok(kura_value_append(l, first));
    assert_kura_ok(kura_value_append(l, kura_value_s("a", 1)));
    assert_kura_ok(kura_value_append(l, kura_value_n("1", 1)));
    return l;
}

/* A cached plan's parsed expressions hold for values of the types they were parsed with; other
 * values get what a fresh parse says (the same text with a space more is not in the cache). */
static void test_cache_parsed_expressions(void **state)
{
    fixture *f = *state;
    char out[4096], want[512], got[512];
    assert_kura_ok(exec(f->db, "INSERT INTO tbl VALUE {'pk': 'a', 'sk': 1, 'n': 1}", NULL, NULL,
                        0, NULL));
    const char *add = "UPDATE tbl SET n = n + ? WHERE pk = ? AND sk = ? RETURNING MODIFIED NEW *";
    const char *add2 = "UPDATE tbl SET n = n + ?  WHERE pk = ? AND sk = ? RETURNING MODIFIED NEW *";
    assert_kura_ok(exec(f->db, add, params("N:2", "S:a", "N:1", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "{\"n\":{\"N\":\"3\"}}\n");
    assert_kura_status(exec(f->db, add2, params("S:x", "S:a", "N:1", NULL), NULL, 0, NULL),
                       KURA_E_INVALID);
    last_error(want, sizeof want);
    assert_kura_status(exec(f->db, add, params("S:x", "S:a", "N:1", NULL), NULL, 0, NULL),
                       KURA_E_INVALID);
    last_error(got, sizeof got);
    assert_string_equal(got, want);
    assert_non_null(strstr(got, "Incorrect operand type for operator or function"));
    assert_kura_ok(exec(f->db, add, params("N:4", "S:a", "N:1", NULL), out, sizeof out, NULL));
    assert_string_equal(out, "{\"n\":{\"N\":\"7\"}}\n");

    const char *btw = "UPDATE tbl SET m = 1 WHERE pk = ? AND sk = ? AND n BETWEEN ? AND ?";
    const char *btw2 = "UPDATE tbl SET m = 1 WHERE pk = ? AND sk = ? AND n BETWEEN ?  AND ?";
    assert_kura_ok(exec(f->db, btw, params("S:a", "N:1", "N:0", "N:10", NULL), NULL, 0, NULL));
    assert_kura_status(exec(f->db, btw2, params("S:a", "N:1", "N:10", "N:0", NULL), NULL, 0,
                            NULL),
                       KURA_E_INVALID);
    last_error(want, sizeof want);
    assert_kura_status(exec(f->db, btw, params("S:a", "N:1", "N:10", "N:0", NULL), NULL, 0, NULL),
                       KURA_E_INVALID);
    last_error(got, sizeof got);
    assert_string_equal(got, want);
    assert_non_null(strstr(got, "BETWEEN"));

    const char *set = "UPDATE tbl SET s = ? WHERE pk = ? AND sk = ?";
    const char *set2 = "UPDATE tbl SET s = ?  WHERE pk = ? AND sk = ?";
    assert_kura_ok(exec(f->db, set, with_key(ss("x", "y")), NULL, 0, NULL));
    assert_kura_status(exec(f->db, set2, with_key(ss("x", "x")), NULL, 0, NULL), KURA_E_INVALID);
    last_error(want, sizeof want);
    assert_kura_status(exec(f->db, set, with_key(ss("x", "x")), NULL, 0, NULL), KURA_E_INVALID);
    last_error(got, sizeof got);
    assert_string_equal(got, want);
    assert_kura_ok(exec(f->db, "SELECT n, m, s FROM tbl WHERE pk = 'a' AND sk = 1", NULL, out,
                        sizeof out, NULL));
    assert_string_equal(out, "{\"m\":{\"N\":\"1\"},\"n\":{\"N\":\"7\"},\"s\":{\"SS\":[\"x\",\"y\"]}}\n");

    /* a cached UPDATE after the table is made again with another key: translated again */
    kura_table_description d;
    assert_kura_ok(kura_delete_table(f->db, "tbl", &d));
    kura_table_description_free(&d);
    create(f->db, "id", "sk");
    assert_kura_status(exec(f->db, add, params("N:4", "S:a", "N:1", NULL), NULL, 0, NULL),
                       KURA_E_INVALID);
    assert_string_equal(kura_last_error(),
                        "Where clause does not contain a mandatory equality on all key attributes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_statements_and_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_paging, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_follows_the_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_parsed_expressions, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

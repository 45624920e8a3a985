/*
 * engine_item_test.c - the item operations end to end on a database in a temporary directory:
 * PutItem, GetItem, UpdateItem, DeleteItem, BatchGetItem and BatchWriteItem, their conditions,
 * every ReturnValues mode, ReturnConsumedCapacity numbers, DynamoDB's error messages, batch
 * limits and duplicates, BatchGetItem's 16 MB split, and reading everything back after reopen.
 */
#include "testutil.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/value.h"
#include "engine/table.h"
#include "util/thread.h"

/* ---- Building values ------------------------------------------------------------------- */

static kura_value *S(const char *s)
{
    return kura_value_s(s, strlen(s));
}
static kura_value *N(const char *n)
{
    return kura_value_n(n, strlen(n));
}
/* M("name", value, "name", value, ..., NULL); takes the values. */
static kura_value *M(const char *name, ...)
{
    kura_value *m = kura_value_map();
    va_list ap;
    va_start(ap, name);
    for (const char *n = name; n; n = va_arg(ap, const char *)) {
        kura_value *v = va_arg(ap, kura_value *);
        assert_non_null(v);
        assert_kura_ok(kura_value_map_put(m, n, strlen(n), v));
    }
    va_end(ap);
    return m;
}
/* A string of `n` 'x' bytes. */
static kura_value *S_n(size_t n)
{
    char *p = malloc(n + 1);
    memset(p, 'x', n);
    p[n] = 0;
    kura_value *v = kura_value_s(p, n);
    free(p);
    return v;
}
static kura_value *L1(kura_value *v)
{
    kura_value *l = kura_value_list();
    assert_kura_ok(kura_value_append(l, v));
    return l;
}

static void assert_str_attr(const kura_value *item, const char *name, const char *want)
{
    assert_non_null(item);
    const kura_value *v = kura_value_get(item, name, strlen(name));
    if (!v)
        fail_msg("attribute %s missing, expected \"%s\"", name, want);
    size_t len;
    const char *p = kura_value_bytes(v, &len);
    assert_non_null(p);
    assert_string_equal(p, want);
}
static void assert_num_attr(const kura_value *item, const char *name, const char *want)
{
    assert_non_null(item);
    const kura_value *v = kura_value_get(item, name, strlen(name));
    if (!v)
        fail_msg("attribute %s missing, expected %s", name, want);
    char buf[200];
    assert_true(kura_value_num(v, buf, sizeof buf) > 0);
    assert_string_equal(buf, want);
}
static void assert_err(kura_status got, kura_status want, const char *msg)
{
    if (got != want)
        fail_msg("status %s, expected %s (%s)", kura_status_str(got), kura_status_str(want),
                 kura_last_error());
    if (msg && strcmp(kura_last_error(), msg))
        fail_msg("message \"%s\", expected \"%s\"", kura_last_error(), msg);
}
static void assert_err_prefix(kura_status got, kura_status want, const char *prefix)
{
    assert_err(got, want, NULL);
    if (strncmp(kura_last_error(), prefix, strlen(prefix)))
        fail_msg("message \"%s\", expected it to start with \"%s\"", kura_last_error(), prefix);
}

/* ---- The fixture: a database with table "Items" (pk S, sk N) and "Simple" (id S) ------- */

typedef struct fixture {
    char *dir;
    kura_db *db;
} fixture;

static void create_table(kura_db *db, const char *name, const char *pk, const char *sk)
{
    kura_attribute_definition ad[2] = {{pk, KURA_S}, {sk, KURA_N}};
    kura_key_schema_element ks[2] = {{pk, false}, {sk, true}};
    kura_create_table_req req = {0};
    req.table_name = name;
    req.attribute_definitions = ad;
    req.attribute_definitions_count = sk ? 2 : 1;
    req.key_schema = ks;
    req.key_schema_count = sk ? 2 : 1;
    req.billing_mode = KURA_BILLING_PAY_PER_REQUEST;
    req.partitions = 2;
    kura_table_description d;
    assert_kura_ok(kura_create_table(db, &req, &d));
    kura_table_description_free(&d);
}

static void open_db(fixture *f)
{
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    o.background_threads = 1;
    assert_kura_ok(kura_open(f->dir, &o, &f->db));
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->dir = test_mkdtemp("engine_item");
    open_db(f);
    create_table(f->db, "Items", "pk", "sk");
    create_table(f->db, "Simple", "id", NULL);
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

static kura_value *key2(const char *pk, const char *sk)
{
    return M("pk", S(pk), "sk", N(sk), NULL);
}

static kura_status put(kura_db *db, kura_value *item) /* takes item */
{
    kura_put_item_req req = {0};
    req.table_name = "Items";
    req.item = item;
    kura_write_result res;
    kura_status s = kura_put_item(db, &req, &res);
    if (s == KURA_OK)
        kura_write_result_free(&res);
    kura_value_free(item);
    return s;
}

/* GetItem (consistent); the item or NULL. Takes key. */
static kura_value *get(kura_db *db, const char *table, kura_value *key)
{
    kura_get_item_req req = {0};
    req.table_name = table;
    req.key = key;
    req.consistent_read = true;
    kura_get_item_res res;
    assert_kura_ok(kura_get_item(db, &req, &res));
    kura_value_free(key);
    kura_value *item = res.item;
    res.item = NULL;
    kura_get_item_res_free(&res);
    return item;
}

/* ---- PutItem / GetItem / DeleteItem -------------------------------------------------------- */

static void test_put_get_delete(void **state)
{
    fixture *f = *state;
    kura_value *item = M("pk", S("a"), "sk", N("1"), "name", S("alice"), "n", N("1.50"), NULL);
    kura_value *copy = kura_value_clone(item);
    assert_kura_ok(put(f->db, item));

    kura_value *got = get(f->db, "Items", key2("a", "1.0"));
    assert_non_null(got);
    assert_true(val_equal(got, copy));
    assert_num_attr(got, "n", "1.5");
    kura_value_free(got);
    kura_value_free(copy);

    assert_null(get(f->db, "Items", key2("a", "2")));
    assert_null(get(f->db, "Items", key2("b", "1")));

    /* a put replaces the whole item */
    assert_kura_ok(put(f->db, M("pk", S("a"), "sk", N("1"), "other", S("o"), NULL)));
    got = get(f->db, "Items", key2("a", "1"));
    assert_null(kura_value_get(got, "name", 4));
    assert_str_attr(got, "other", "o");
    kura_value_free(got);

    kura_delete_item_req d = {0};
    d.table_name = "Items";
    d.key = key2("a", "1");
    kura_write_result res;
    assert_kura_ok(kura_delete_item(f->db, &d, &res));
    assert_null(res.attributes);
    kura_write_result_free(&res);
    assert_null(get(f->db, "Items", key2("a", "1")));
    /* deleting an absent item succeeds */
    assert_kura_ok(kura_delete_item(f->db, &d, &res));
    kura_write_result_free(&res);
    kura_value_free((kura_value *)d.key);
}

static void test_put_errors(void **state)
{
    fixture *f = *state;
    kura_put_item_req req = {0};
    kura_write_result res = {0};
    req.table_name = "Items";
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
               "1 validation error detected: Value null at 'item' failed to satisfy "
               "constraint: Member must not be null");

    kura_value *notmap = S("x");
    req.item = notmap;
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
               "One or more parameter values were invalid: item must be a map of attribute "
               "values, not S");
    kura_value_free(notmap);

    kura_value *item = key2("a", "1");
    req.item = item;
    req.return_values_on_condition_check_failure = (kura_return_values)9;
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
               "1 validation error detected: Value '9' at 'returnValuesOnConditionCheckFailure' "
               "failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, "
               "NONE]");
    req.return_values_on_condition_check_failure = KURA_RETURN_NONE;
    req.return_values = KURA_RETURN_ALL_NEW;
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
               "ReturnValues can only be ALL_OLD or NONE");
    req.return_values = KURA_RETURN_UPDATED_OLD;
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
               "ReturnValues can only be ALL_OLD or NONE");
    req.return_values = KURA_RETURN_NONE;
    req.return_values_on_condition_check_failure = KURA_RETURN_ALL_NEW;
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
               "1 validation error detected: Value 'ALL_NEW' at "
               "'returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member "
               "must satisfy enum value set: [ALL_OLD, NONE]");
    req.return_values_on_condition_check_failure = KURA_RETURN_NONE;

    req.table_name = "Nope";
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_RESOURCE_NOT_FOUND,
               "Requested resource not found");
    req.table_name = "Items";

    /* expression parameters without expressions */
    kura_value *names = M("#n", S("x"), NULL), *values = M(":v", S("x"), NULL);
    req.expr.names = names;
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
               "ExpressionAttributeNames can only be specified when using expressions");
    req.expr.names = NULL;
    req.expr.values = values;
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
               "ExpressionAttributeValues can only be specified when using expressions: "
               "ConditionExpression is null");
    /* an unused value, also when the expression is fine */
    req.condition_expression = "attribute_not_exists(pk)";
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
               "Value provided in ExpressionAttributeValues unused in expressions: keys: {:v}");
    /* a syntax error is reported before unused values (as dynalite) */
    req.condition_expression = "a = = :v";
    assert_err_prefix(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
                      "Invalid ConditionExpression: Syntax error;");
    /* and before the table is looked up */
    req.table_name = "Nope";
    assert_err_prefix(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
                      "Invalid ConditionExpression: Syntax error;");
    req.table_name = "Items";
    req.condition_expression = NULL;
    req.expr.values = NULL;
    kura_value_free(names);
    kura_value_free(values);
    kura_value_free(item);

    /* key problems come from key_build, after the table */
    item = M("pk", S("a"), NULL);
    req.item = item;
    assert_err_prefix(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
                      "One or more parameter values were invalid: Missing the key sk");
    kura_value_free(item);

    /* 400 KB: names + values */
    item = M("pk", S("a"), "sk", N("1"), "blob", S_n(400 * 1024), NULL);
    req.item = item;
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_INVALID,
               "Item size has exceeded the maximum allowed size");
    kura_value_free(item);
    item = M("id", S("a"), "blob", S_n(400 * 1024 - 2 - 1 - 4), NULL);
    req.item = item;
    req.table_name = "Simple";
    assert_kura_ok(kura_put_item(f->db, &req, &res));
    kura_write_result_free(&res);
    kura_value_free(item);
    /* nothing was written by the failing calls */
    assert_null(get(f->db, "Items", key2("a", "1")));
}

static void test_put_conditions_and_return_values(void **state)
{
    fixture *f = *state;
    kura_put_item_req req = {0};
    kura_write_result res;
    kura_value *item = M("pk", S("c"), "sk", N("1"), "v", S("first"), NULL);
    req.table_name = "Items";
    req.item = item;
    req.condition_expression = "attribute_not_exists(pk)";
    req.return_values = KURA_RETURN_ALL_OLD;
    assert_kura_ok(kura_put_item(f->db, &req, &res));
    assert_null(res.attributes); /* no old item */
    assert_null(res.item);
    kura_write_result_free(&res);

    /* the same condition now fails; nothing is returned without ALL_OLD on failure */
    kura_value *item2 = M("pk", S("c"), "sk", N("1"), "v", S("second"), NULL);
    req.item = item2;
    memset(&res, 0xab, sizeof res);
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_CONDITION_FAILED,
               "The conditional request failed");
    assert_null(res.item);
    assert_null(res.attributes);
    kura_write_result_free(&res);

    req.return_values_on_condition_check_failure = KURA_RETURN_ALL_OLD;
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_CONDITION_FAILED,
               "The conditional request failed");
    assert_str_attr(res.item, "v", "first");
    kura_write_result_free(&res);

    /* a condition with names and values that holds; ALL_OLD returns the replaced item */
    kura_value *names = M("#v", S("v"), NULL), *values = M(":f", S("first"), NULL);
    req.condition_expression = "#v = :f";
    req.expr.names = names;
    req.expr.values = values;
    assert_kura_ok(kura_put_item(f->db, &req, &res));
    assert_str_attr(res.attributes, "v", "first");
    assert_null(res.item);
    kura_write_result_free(&res);
    kura_value *got = get(f->db, "Items", key2("c", "1"));
    assert_str_attr(got, "v", "second");
    kura_value_free(got);

    /* attribute_exists on an absent item fails */
    kura_value *item3 = M("pk", S("absent"), "sk", N("1"), NULL);
    req.item = item3;
    req.condition_expression = "attribute_exists(pk)";
    req.expr.names = NULL;
    req.expr.values = NULL;
    assert_err(kura_put_item(f->db, &req, &res), KURA_E_CONDITION_FAILED,
               "The conditional request failed");
    assert_null(res.item); /* ALL_OLD on failure, but there is no item */
    kura_write_result_free(&res);
    assert_null(get(f->db, "Items", key2("absent", "1")));

    kura_value_free(item);
    kura_value_free(item2);
    kura_value_free(item3);
    kura_value_free(names);
    kura_value_free(values);
}

static void test_delete_conditions(void **state)
{
    fixture *f = *state;
    assert_kura_ok(put(f->db, M("pk", S("d"), "sk", N("1"), "n", N("5"), NULL)));
    kura_delete_item_req req = {0};
    kura_write_result res;
    kura_value *values = M(":lim", N("3"), NULL);
    req.table_name = "Items";
    req.key = key2("d", "1");
    req.condition_expression = "n < :lim";
    req.expr.values = values;
    req.return_values = KURA_RETURN_ALL_OLD;
    req.return_values_on_condition_check_failure = KURA_RETURN_ALL_OLD;
    assert_err(kura_delete_item(f->db, &req, &res), KURA_E_CONDITION_FAILED,
               "The conditional request failed");
    assert_num_attr(res.item, "n", "5");
    kura_write_result_free(&res);

    req.condition_expression = "n > :lim";
    assert_kura_ok(kura_delete_item(f->db, &req, &res));
    assert_num_attr(res.attributes, "n", "5");
    kura_write_result_free(&res);
    assert_null(get(f->db, "Items", key2("d", "1")));

    req.return_values = KURA_RETURN_ALL_NEW;
    assert_err(kura_delete_item(f->db, &req, &res), KURA_E_INVALID,
               "ReturnValues can only be ALL_OLD or NONE");
    req.return_values = KURA_RETURN_NONE;
    req.condition_expression = NULL;
    assert_err(kura_delete_item(f->db, &req, &res), KURA_E_INVALID,
               "ExpressionAttributeValues can only be specified when using expressions: "
               "ConditionExpression is null");
    req.expr.values = NULL;
    kura_value_free((kura_value *)req.key);
    /* a Key with an extra attribute */
    req.key = M("pk", S("d"), "sk", N("1"), "x", S("y"), NULL);
    assert_err(kura_delete_item(f->db, &req, &res), KURA_E_INVALID,
               "The provided key element does not match the schema");
    kura_value_free((kura_value *)req.key);
    req.key = NULL;
    assert_err(kura_delete_item(f->db, &req, &res), KURA_E_INVALID,
               "1 validation error detected: Value null at 'key' failed to satisfy "
               "constraint: Member must not be null");
    kura_value_free(values);
}

static void test_get_projection(void **state)
{
    fixture *f = *state;
    assert_kura_ok(put(f->db, M("pk", S("p"), "sk", N("1"), "a", S("A"), "b", S("B"),
                                "m", M("x", S("X"), "y", S("Y"), NULL), NULL)));
    kura_get_item_req req = {0};
    kura_get_item_res res;
    kura_value *names = M("#m", S("m"), NULL);
    req.table_name = "Items";
    req.key = key2("p", "1");
    req.projection_expression = "a, #m.y";
    req.expr.names = names;
    assert_kura_ok(kura_get_item(f->db, &req, &res));
    assert_int_equal(kura_value_count(res.item), 2);
    assert_str_attr(res.item, "a", "A");
    const kura_value *m = kura_value_get(res.item, "m", 1);
    assert_int_equal(kura_value_count(m), 1);
    assert_str_attr(m, "y", "Y");
    assert_false(res.consumed_capacity.present);
    kura_get_item_res_free(&res);

    /* a projection that matches nothing gives an empty item, not "no item" */
    req.projection_expression = "zz, #m.zz";
    assert_kura_ok(kura_get_item(f->db, &req, &res));
    assert_non_null(res.item);
    assert_int_equal(kura_value_count(res.item), 0);
    kura_get_item_res_free(&res);

    req.projection_expression = "pk.x";
    req.expr.names = NULL;
    assert_err(kura_get_item(f->db, &req, &res), KURA_E_INVALID,
               "Key attributes must be scalars; list random access '[]' and map lookup '.' "
               "are not allowed: Key: pk");
    req.projection_expression = "a";
    req.expr.names = names;
    assert_err(kura_get_item(f->db, &req, &res), KURA_E_INVALID,
               "Value provided in ExpressionAttributeNames unused in expressions: keys: {#m}");
    req.projection_expression = NULL;
    assert_err(kura_get_item(f->db, &req, &res), KURA_E_INVALID,
               "ExpressionAttributeNames can only be specified when using expressions");
    req.expr.names = NULL;
    req.table_name = "Nope";
    assert_err(kura_get_item(f->db, &req, &res), KURA_E_RESOURCE_NOT_FOUND,
               "Requested resource not found");
    kura_value_free((kura_value *)req.key);
    kura_value_free(names);
}

/* ---- UpdateItem ----------------------------------------------------------------------------- */

static kura_status update(kura_db *db, const char *expr, kura_value *values, const char *cond,
                          kura_return_values rv, kura_write_result *res)
{
    kura_update_item_req req = {0};
    req.table_name = "Items";
    req.key = key2("u", "1");
    req.update_expression = expr;
    req.condition_expression = cond;
    req.expr.values = values;
    req.return_values = rv;
    req.return_values_on_condition_check_failure = KURA_RETURN_ALL_OLD;
    memset(res, 0, sizeof *res);
    kura_status s = kura_update_item(db, &req, res);
    kura_value_free((kura_value *)req.key);
    kura_value_free(values);
    return s;
}

static void test_update(void **state)
{
    fixture *f = *state;
    kura_write_result res;
    /* creates the missing item; ALL_NEW returns it */
    assert_kura_ok(update(f->db, "SET a = :a, n = :one", M(":a", S("A"), ":one", N("1"), NULL),
                          NULL, KURA_RETURN_ALL_NEW, &res));
    assert_int_equal(kura_value_count(res.attributes), 4);
    assert_str_attr(res.attributes, "pk", "u");
    assert_num_attr(res.attributes, "n", "1");
    kura_write_result_free(&res);

    /* UPDATED_OLD / UPDATED_NEW: only the named paths */
    assert_kura_ok(update(f->db, "SET n = n + :one", M(":one", N("1"), NULL), NULL,
                          KURA_RETURN_UPDATED_OLD, &res));
    assert_int_equal(kura_value_count(res.attributes), 1);
    assert_num_attr(res.attributes, "n", "1");
    kura_write_result_free(&res);
    assert_kura_ok(update(f->db, "ADD n :one", M(":one", N("1"), NULL), NULL,
                          KURA_RETURN_UPDATED_NEW, &res));
    assert_int_equal(kura_value_count(res.attributes), 1);
    assert_num_attr(res.attributes, "n", "3");
    kura_write_result_free(&res);

    /* ALL_OLD: the whole item before; UPDATED_OLD of a path that did not exist: nothing */
    assert_kura_ok(update(f->db, "REMOVE a", NULL, NULL, KURA_RETURN_ALL_OLD, &res));
    assert_str_attr(res.attributes, "a", "A");
    assert_num_attr(res.attributes, "n", "3");
    kura_write_result_free(&res);
    assert_kura_ok(update(f->db, "SET b = :b", M(":b", S("B"), NULL), NULL,
                          KURA_RETURN_UPDATED_OLD, &res));
    assert_null(res.attributes);
    kura_write_result_free(&res);
    assert_kura_ok(update(f->db, "SET c = :c", M(":c", S("C"), NULL), NULL, KURA_RETURN_NONE,
                          &res));
    assert_null(res.attributes);
    kura_write_result_free(&res);

    kura_value *got = get(f->db, "Items", key2("u", "1"));
    assert_null(kura_value_get(got, "a", 1));
    assert_str_attr(got, "b", "B");
    assert_str_attr(got, "c", "C");
    assert_num_attr(got, "n", "3");
    kura_value_free(got);

    /* conditions: failure returns the item with ALL_OLD on failure and changes nothing */
    assert_err(update(f->db, "SET n = :z", M(":z", N("0"), ":three", N("4"), NULL), "n = :three",
                      KURA_RETURN_ALL_NEW, &res),
               KURA_E_CONDITION_FAILED, "The conditional request failed");
    assert_num_attr(res.item, "n", "3");
    kura_write_result_free(&res);
    assert_kura_ok(update(f->db, "SET n = :z", M(":z", N("0"), ":three", N("3"), NULL),
                          "n = :three", KURA_RETURN_UPDATED_NEW, &res));
    assert_num_attr(res.attributes, "n", "0");
    kura_write_result_free(&res);

    /* key attributes cannot be updated */
    assert_err(update(f->db, "SET pk = :v", M(":v", S("x"), NULL), NULL, KURA_RETURN_NONE, &res),
               KURA_E_INVALID,
               "One or more parameter values were invalid: Cannot update attribute pk. This "
               "attribute is part of the key");
    assert_err(update(f->db, "REMOVE sk", NULL, NULL, KURA_RETURN_NONE, &res), KURA_E_INVALID,
               "One or more parameter values were invalid: Cannot update attribute sk. This "
               "attribute is part of the key");
    /* an error of the update itself writes nothing (applied to a copy) */
    assert_err(update(f->db, "SET c = :v, b = b + :v", M(":v", N("1"), NULL), NULL,
                      KURA_RETURN_NONE, &res),
               KURA_E_INVALID, "An operand in the update expression has an incorrect data type");
    got = get(f->db, "Items", key2("u", "1"));
    assert_str_attr(got, "c", "C");
    kura_value_free(got);
    /* the size of the result */
    kura_value *big = M(":b", S_n(300 * 1024), NULL);
    assert_kura_ok(update(f->db, "SET big1 = :b", big, NULL, KURA_RETURN_NONE, &res));
    kura_write_result_free(&res);
    big = M(":b", S_n(300 * 1024), NULL);
    assert_err(update(f->db, "SET big2 = :b", big, NULL, KURA_RETURN_NONE, &res), KURA_E_INVALID,
               "Item size to update has exceeded the maximum allowed size");
    /* UpdateItem's own expression-parameter messages */
    assert_err(update(f->db, NULL, M(":b", S("x"), NULL), NULL, KURA_RETURN_NONE, &res),
               KURA_E_INVALID,
               "ExpressionAttributeValues can only be specified when using expressions: "
               "UpdateExpression and ConditionExpression are null");
}

static void test_update_without_expression(void **state)
{
    fixture *f = *state;
    kura_update_item_req req = {0};
    kura_write_result res;
    req.table_name = "Items";
    req.key = key2("k", "7");
    req.return_values = KURA_RETURN_ALL_NEW;
    assert_kura_ok(kura_update_item(f->db, &req, &res));
    assert_int_equal(kura_value_count(res.attributes), 2);
    assert_str_attr(res.attributes, "pk", "k");
    kura_write_result_free(&res);
    kura_value *got = get(f->db, "Items", key2("k", "7"));
    assert_int_equal(kura_value_count(got), 2);
    kura_value_free(got);
    /* UPDATED_NEW without an update expression has nothing to return */
    req.return_values = KURA_RETURN_UPDATED_NEW;
    assert_kura_ok(kura_update_item(f->db, &req, &res));
    assert_null(res.attributes);
    kura_write_result_free(&res);
    req.return_values = (kura_return_values)17;
    assert_err_prefix(kura_update_item(f->db, &req, &res), KURA_E_INVALID,
                      "1 validation error detected: Value '17' at 'returnValues'");
    kura_value_free((kura_value *)req.key);
}

/* ---- Capacity --------------------------------------------------------------------------------- */

static void test_capacity_units(void **state)
{
    (void)state;
    assert_true(capacity_read_units(0, true) == 1.0);
    assert_true(capacity_read_units(0, false) == 0.5);
    assert_true(capacity_read_units(4096, true) == 1.0);
    assert_true(capacity_read_units(4097, true) == 2.0);
    assert_true(capacity_read_units(4097, false) == 1.0);
    assert_true(capacity_read_units(3 * 4096 + 1, false) == 2.0);
    assert_true(capacity_write_units(0) == 1.0);
    assert_true(capacity_write_units(1024) == 1.0);
    assert_true(capacity_write_units(1025) == 2.0);
    assert_true(capacity_write_units(400 * 1024) == 400.0);
    kura_consumed_capacity cc;
    assert_kura_ok(capacity_fill(&cc, KURA_CAPACITY_NONE, "T", 3, true));
    assert_false(cc.present);
    assert_null(cc.table_name);
    assert_kura_ok(capacity_fill(&cc, KURA_CAPACITY_TOTAL, "T", 3, true));
    assert_true(cc.present);
    assert_string_equal(cc.table_name, "T");
    assert_true(cc.capacity_units == 3 && cc.read_capacity_units == 3);
    assert_true(cc.write_capacity_units == 0 && cc.table_capacity_units == 0);
    free(cc.table_name);
    assert_kura_ok(capacity_fill(&cc, KURA_CAPACITY_INDEXES, "T", 2, false));
    assert_true(cc.capacity_units == 2 && cc.write_capacity_units == 2);
    assert_true(cc.table_capacity_units == 2 && cc.read_capacity_units == 0);
    free(cc.table_name);
}

static double put_units(kura_db *db, kura_value *item, kura_return_capacity rc)
{
    kura_put_item_req req = {0};
    kura_write_result res;
    req.table_name = "Simple";
    req.item = item;
    req.return_consumed_capacity = rc;
    assert_kura_ok(kura_put_item(db, &req, &res));
    kura_value_free(item);
    assert_true(res.consumed_capacity.present);
    assert_string_equal(res.consumed_capacity.table_name, "Simple");
    assert_true(res.consumed_capacity.write_capacity_units ==
                res.consumed_capacity.capacity_units);
    double u = res.consumed_capacity.capacity_units;
    if (rc == KURA_CAPACITY_INDEXES)
        assert_true(res.consumed_capacity.table_capacity_units == u);
    kura_write_result_free(&res);
    return u;
}

static double get_units(kura_db *db, const char *id, bool consistent)
{
    kura_get_item_req req = {0};
    kura_get_item_res res;
    req.table_name = "Simple";
    req.key = M("id", S(id), NULL);
    req.consistent_read = consistent;
    req.return_consumed_capacity = KURA_CAPACITY_TOTAL;
    assert_kura_ok(kura_get_item(db, &req, &res));
    kura_value_free((kura_value *)req.key);
    assert_true(res.consumed_capacity.read_capacity_units == res.consumed_capacity.capacity_units);
    double u = res.consumed_capacity.capacity_units;
    kura_get_item_res_free(&res);
    return u;
}

static void test_capacity_operations(void **state)
{
    fixture *f = *state;
    /* item size = "id" + "a" + "blob" + n = 7 + n */
    assert_true(put_units(f->db, M("id", S("a"), NULL), KURA_CAPACITY_TOTAL) == 1.0);
    assert_true(put_units(f->db, M("id", S("a"), "blob", S_n(1024 - 7), NULL),
                          KURA_CAPACITY_INDEXES) == 1.0);
    assert_true(put_units(f->db, M("id", S("a"), "blob", S_n(1025 - 7), NULL),
                          KURA_CAPACITY_TOTAL) == 2.0);
    /* replacing a 5000-byte item by a small one is charged for the larger */
    assert_true(put_units(f->db, M("id", S("a"), "blob", S_n(5000 - 7), NULL),
                          KURA_CAPACITY_TOTAL) == 5.0);
    assert_true(put_units(f->db, M("id", S("a"), NULL), KURA_CAPACITY_TOTAL) == 5.0);
    assert_true(put_units(f->db, M("id", S("a"), "blob", S_n(5000 - 7), NULL),
                          KURA_CAPACITY_TOTAL) == 5.0);

    assert_true(get_units(f->db, "a", true) == 2.0);
    assert_true(get_units(f->db, "a", false) == 1.0);
    assert_true(get_units(f->db, "absent", true) == 1.0);
    assert_true(get_units(f->db, "absent", false) == 0.5);

    kura_delete_item_req d = {0};
    kura_write_result res;
    d.table_name = "Simple";
    d.key = M("id", S("a"), NULL);
    d.return_consumed_capacity = KURA_CAPACITY_TOTAL;
    assert_kura_ok(kura_delete_item(f->db, &d, &res));
    assert_true(res.consumed_capacity.capacity_units == 5.0);
    kura_write_result_free(&res);
    assert_kura_ok(kura_delete_item(f->db, &d, &res));
    assert_true(res.consumed_capacity.capacity_units == 1.0);
    kura_write_result_free(&res);
    kura_value_free((kura_value *)d.key);

    kura_update_item_req u = {0};
    kura_value *values = M(":b", S_n(2000), NULL);
    u.table_name = "Simple";
    u.key = M("id", S("a"), NULL);
    u.update_expression = "SET bb = :b";
    u.expr.values = values;
    u.return_consumed_capacity = KURA_CAPACITY_TOTAL;
    assert_kura_ok(kura_update_item(f->db, &u, &res));
    assert_true(res.consumed_capacity.capacity_units == 2.0);
    assert_true(res.consumed_capacity.write_capacity_units == 2.0);
    kura_write_result_free(&res);
    kura_value_free((kura_value *)u.key);
    kura_value_free(values);
}

/* ---- BatchGetItem ----------------------------------------------------------------------------- */

static kura_value *keys_list(int from, int to)
{
    kura_value *l = kura_value_list();
    char buf[32];
    for (int i = from; i < to; i++) {
        snprintf(buf, sizeof buf, "%d", i);
        assert_kura_ok(kura_value_append(l, key2("bg", buf)));
    }
    return l;
}

static void test_batch_get(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 10; i += 2) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", i);
        assert_kura_ok(put(f->db, M("pk", S("bg"), "sk", N(buf), "v", S(buf), "w", S("w"), NULL)));
    }
    kura_batch_get_table tabs[2] = {0};
    kura_value *keys = keys_list(0, 10), *skeys = L1(M("id", S("nothing"), NULL));
    tabs[0].table_name = "Items";
    tabs[0].keys = keys;
    tabs[0].projection_expression = "v";
    tabs[0].consistent_read = true;
    tabs[1].table_name = "Simple";
    tabs[1].keys = skeys;
    kura_batch_get_req req = {tabs, 2, KURA_CAPACITY_INDEXES};
    kura_batch_get_res res;
    assert_kura_ok(kura_batch_get_item(f->db, &req, &res));
    assert_int_equal(res.table_count, 2);
    assert_int_equal(kura_value_count(res.tables[0].items), 5);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(kura_value_count(kura_value_at(res.tables[0].items, i, NULL, NULL)), 1);
    assert_null(res.tables[0].unprocessed_keys);
    /* 10 small consistent reads, one eventually consistent miss */
    assert_true(res.tables[0].consumed_capacity.capacity_units == 10.0);
    assert_true(res.tables[0].consumed_capacity.table_capacity_units == 10.0);
    assert_string_equal(res.tables[0].consumed_capacity.table_name, "Items");
    assert_int_equal(kura_value_count(res.tables[1].items), 0);
    assert_true(res.tables[1].consumed_capacity.capacity_units == 0.5);
    kura_batch_get_res_free(&res);

    /* errors */
    kura_value *many = keys_list(0, 101);
    tabs[0].keys = many;
    assert_err(kura_batch_get_item(f->db, &req, &res), KURA_E_INVALID,
               "Too many items requested for the BatchGetItem call");
    kura_value_free(many);
    many = keys_list(0, 100); /* 100 + 1 across the two tables */
    tabs[0].keys = many;
    assert_err(kura_batch_get_item(f->db, &req, &res), KURA_E_INVALID,
               "Too many items requested for the BatchGetItem call");
    kura_value_free(many);
    kura_value *dup = keys_list(0, 3);
    assert_kura_ok(kura_value_append(dup, key2("bg", "1.0")));
    tabs[0].keys = dup;
    assert_err(kura_batch_get_item(f->db, &req, &res), KURA_E_INVALID,
               "Provided list of item keys contains duplicates");
    kura_value_free(dup);
    tabs[0].keys = keys;
    tabs[1].table_name = "Nope";
    assert_err(kura_batch_get_item(f->db, &req, &res), KURA_E_RESOURCE_NOT_FOUND,
               "Requested resource not found");
    tabs[1].table_name = "Items"; /* the same table twice (a JSON map cannot say that) */
    assert_err(kura_batch_get_item(f->db, &req, &res), KURA_E_INVALID,
               "Provided list of item keys contains duplicates");
    tabs[1].table_name = "Simple";
    tabs[0].projection_expression = "sk.x";
    assert_err(kura_batch_get_item(f->db, &req, &res), KURA_E_INVALID,
               "Key attributes must be scalars; list random access '[]' and map lookup '.' "
               "are not allowed: Key: sk");
    tabs[0].projection_expression = NULL;
    kura_value *empty = kura_value_list();
    tabs[1].keys = empty;
    assert_err(kura_batch_get_item(f->db, &req, &res), KURA_E_INVALID,
               "1 validation error detected: Value '[]' at 'requestItems.Simple.member.keys' "
               "failed to satisfy constraint: Member must have length greater than or equal "
               "to 1");
    kura_value_free(empty);
    req.table_count = 0;
    assert_err(kura_batch_get_item(f->db, &req, &res), KURA_E_INVALID,
               "1 validation error detected: Value '{}' at 'requestItems' failed to satisfy "
               "constraint: Member must have length greater than or equal to 1");
    kura_value_free(keys);
    kura_value_free(skeys);
}

static void test_batch_get_16mb(void **state)
{
    fixture *f = *state;
    /* 45 items of ~390 KB = ~17.1 MB: the response stops before 16 MB */
    enum { NBIG = 45 };
    kura_value *keys = kura_value_list();
    for (int i = 0; i < NBIG; i++) {
        char id[16];
        snprintf(id, sizeof id, "big%02d", i);
        assert_kura_ok(kura_value_append(keys, M("id", S(id), NULL)));
        kura_put_item_req p = {0};
        kura_write_result pr;
        kura_value *item = M("id", S(id), "blob", S_n(390 * 1024), NULL);
        p.table_name = "Simple";
        p.item = item;
        assert_kura_ok(kura_put_item(f->db, &p, &pr));
        kura_write_result_free(&pr);
        kura_value_free(item);
    }
    kura_batch_get_table tab = {"Simple", keys, false, NULL, NULL};
    kura_batch_get_req req = {&tab, 1, KURA_CAPACITY_TOTAL};
    kura_batch_get_res res;
    assert_kura_ok(kura_batch_get_item(f->db, &req, &res));
    size_t got = kura_value_count(res.tables[0].items);
    size_t left = kura_value_count(res.tables[0].unprocessed_keys);
    size_t per = 390 * 1024 + 2 + 5 + 4; /* names + values */
    assert_int_equal(got, (16u << 20) / per);
    assert_int_equal(got + left, NBIG);
    /* the unprocessed keys are the request's last keys, in order */
    const kura_value *k0 = kura_value_at(res.tables[0].unprocessed_keys, 0, NULL, NULL);
    char want[16];
    snprintf(want, sizeof want, "big%02zu", got);
    assert_str_attr(k0, "id", want);
    /* each item read is charged on its own: ceil(per / 4096) / 2 */
    assert_true(res.tables[0].consumed_capacity.capacity_units == got * 49.0);
    kura_batch_get_res_free(&res);
    kura_value_free(keys);
}

/* ---- BatchWriteItem --------------------------------------------------------------------------- */

static void test_batch_write(void **state)
{
    fixture *f = *state;
    assert_kura_ok(put(f->db, M("pk", S("bw"), "sk", N("100"), "blob", S_n(3000), NULL)));
    kura_write_request w[26];
    kura_value *vals[26];
    for (int i = 0; i < 26; i++) {
        char sk[16];
        snprintf(sk, sizeof sk, "%d", i);
        vals[i] = M("pk", S("bw"), "sk", N(sk), NULL);
        w[i] = (kura_write_request){"Items", false, vals[i]};
    }
    kura_batch_write_req req = {w, 26, KURA_CAPACITY_TOTAL, KURA_METRICS_NONE};
    kura_batch_write_res res;
    assert_err(kura_batch_write_item(f->db, &req, &res), KURA_E_INVALID,
               "Too many items requested for the BatchWriteItem call");
    req.request_count = 0;
    assert_err(kura_batch_write_item(f->db, &req, &res), KURA_E_INVALID,
               "1 validation error detected: Value '{}' at 'requestItems' failed to satisfy "
               "constraint: Member must have length greater than or equal to 1");

    /* a mix over two tables: 3 puts, a delete of the 3000-byte item, a delete of nothing */
    kura_value *del = key2("bw", "100"), *del2 = M("id", S("none"), NULL);
    kura_value *sput = M("id", S("bwid"), NULL);
    w[3] = (kura_write_request){"Items", true, del};
    w[4] = (kura_write_request){"Simple", true, del2};
    w[5] = (kura_write_request){"Simple", false, sput};
    req.request_count = 6;
    assert_kura_ok(kura_batch_write_item(f->db, &req, &res));
    assert_int_equal(res.consumed_capacity_count, 2);
    assert_string_equal(res.consumed_capacity[0].table_name, "Items");
    assert_true(res.consumed_capacity[0].capacity_units == 3 + 3.0);
    assert_string_equal(res.consumed_capacity[1].table_name, "Simple");
    assert_true(res.consumed_capacity[1].capacity_units == 2.0);
    kura_batch_write_res_free(&res);
    assert_null(get(f->db, "Items", key2("bw", "100")));
    kura_value *got = get(f->db, "Items", key2("bw", "2"));
    assert_non_null(got);
    kura_value_free(got);
    got = get(f->db, "Simple", M("id", S("bwid"), NULL));
    assert_non_null(got);
    kura_value_free(got);

    /* without ReturnConsumedCapacity there is none */
    req.return_consumed_capacity = KURA_CAPACITY_NONE;
    assert_kura_ok(kura_batch_write_item(f->db, &req, &res));
    assert_int_equal(res.consumed_capacity_count, 0);
    kura_batch_write_res_free(&res);

    /* every check happens before any write: a bad last request writes nothing */
    kura_value *fresh = M("pk", S("bw"), "sk", N("500"), NULL);
    kura_value *dupkey = key2("bw", "500");
    w[0] = (kura_write_request){"Items", false, fresh};
    w[1] = (kura_write_request){"Items", true, dupkey};
    req.request_count = 2;
    assert_err(kura_batch_write_item(f->db, &req, &res), KURA_E_INVALID,
               "Provided list of item keys contains duplicates");
    /* the same key in two tables is no duplicate, but a missing table fails it all */
    kura_value *missing = M("id", S("x"), NULL);
    w[1] = (kura_write_request){"Nope", false, missing};
    assert_err(kura_batch_write_item(f->db, &req, &res), KURA_E_RESOURCE_NOT_FOUND,
               "Requested resource not found");
    /* a put without its key attributes: reported as a schema mismatch in a batch */
    kura_value *nokey = M("pk", S("bw"), NULL);
    w[1] = (kura_write_request){"Items", false, nokey};
    assert_err(kura_batch_write_item(f->db, &req, &res), KURA_E_INVALID,
               "The provided key element does not match the schema");
    kura_value *huge = M("pk", S("bw"), "sk", N("501"), "b", S_n(400 * 1024), NULL);
    w[1] = (kura_write_request){"Items", false, huge};
    assert_err(kura_batch_write_item(f->db, &req, &res), KURA_E_INVALID,
               "Item size has exceeded the maximum allowed size");
    assert_null(get(f->db, "Items", key2("bw", "500")));

    for (int i = 0; i < 26; i++)
        kura_value_free(vals[i]);
    kura_value_free(del);
    kura_value_free(del2);
    kura_value_free(sput);
    kura_value_free(fresh);
    kura_value_free(dupkey);
    kura_value_free(missing);
    kura_value_free(nokey);
    kura_value_free(huge);
}

/* ---- Concurrency: read-modify-write under the item lock ---------------------------------- */

enum { RACE_THREADS = 4, RACE_OPS = 150 };

static atomic_int race_wins;

static void *race_worker(void *arg)
{
    kura_db *db = arg;
    kura_value *values = M(":one", N("1"), NULL);
    for (int i = 0; i < RACE_OPS; i++) {
        kura_update_item_req req = {0};
        kura_write_result res;
        kura_value *key = key2("race", "1");
        req.table_name = "Items";
        req.key = key;
        req.update_expression = "ADD n :one";
        req.expr.values = values;
        if (kura_update_item(db, &req, &res) != KURA_OK)
            fail_msg("update: %s", kura_last_error());
        kura_write_result_free(&res);
        kura_value_free(key);
        /* a conditional put that only one writer per round can win */
        char sk[16];
        snprintf(sk, sizeof sk, "%d", i);
        kura_value *item = M("pk", S("race-put"), "sk", N(sk), NULL);
        kura_put_item_req p = {0};
        p.table_name = "Items";
        p.item = item;
        p.condition_expression = "attribute_not_exists(pk)";
        kura_status s = kura_put_item(db, &p, &res);
        if (s == KURA_OK) {
            atomic_fetch_add(&race_wins, 1);
            kura_write_result_free(&res);
        } else if (s != KURA_E_CONDITION_FAILED) {
            fail_msg("put: %s", kura_last_error());
        }
        kura_value_free(item);
    }
    kura_value_free(values);
    return (void *)(uintptr_t)0;
}

static void test_concurrent_updates(void **state)
{
    fixture *f = *state;
    kthread th[RACE_THREADS];
    atomic_store(&race_wins, 0);
    for (int i = 0; i < RACE_THREADS; i++)
        assert_true(kthread_start(&th[i], race_worker, f->db));
    for (int i = 0; i < RACE_THREADS; i++)
        kthread_join(th[i]);
    kura_value *got = get(f->db, "Items", key2("race", "1"));
    char want[16];
    snprintf(want, sizeof want, "%d", RACE_THREADS * RACE_OPS);
    assert_num_attr(got, "n", want);
    kura_value_free(got);
    /* every conditional put of a new item had exactly one winner */
    assert_int_equal(atomic_load(&race_wins), RACE_OPS);
}

/* ---- Reopen --------------------------------------------------------------------------------- */

static void test_reopen(void **state)
{
    fixture *f = *state;
    char sk[16];
    for (int i = 0; i < 200; i++) {
        snprintf(sk, sizeof sk, "%d", i);
        assert_kura_ok(put(f->db, M("pk", S("r"), "sk", N(sk), "i", N(sk),
                                    "l", L1(S("elem")), NULL)));
    }
    kura_write_result res;
    assert_kura_ok(update(f->db, "SET z = :z", M(":z", S("zed"), NULL), NULL, KURA_RETURN_NONE,
                          &res));
    kura_write_result_free(&res);
    assert_kura_ok(kura_close(f->db));
    open_db(f);
    for (int i = 0; i < 200; i++) {
        snprintf(sk, sizeof sk, "%d", i);
        kura_value *got = get(f->db, "Items", key2("r", sk));
        assert_num_attr(got, "i", sk);
        assert_int_equal(kura_value_count(kura_value_get(got, "l", 1)), 1);
        kura_value_free(got);
    }
    kura_value *got = get(f->db, "Items", key2("u", "1"));
    assert_str_attr(got, "z", "zed");
    kura_value_free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_put_get_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_conditions_and_return_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_conditions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_projection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_without_expression, setup, teardown),
        cmocka_unit_test(test_capacity_units),
        cmocka_unit_test_setup_teardown(test_capacity_operations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_get_16mb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_updates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reopen, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

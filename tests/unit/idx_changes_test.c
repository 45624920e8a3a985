/*
 * idx_changes_test.c - one base write turned into index changes (index/changes.c): insert,
 * delete, an update that keeps the entry key and changes a projected attribute, one that
 * changes only an attribute the index does not store (no change, no cost), one that moves
 * the entry key (delete, then put), one that removes a key attribute (delete only) and one
 * that adds it (put only); the write units of each (a put ceil(projected size / 1 KB), a
 * delete 1), and a failing callback.
 */
#include "expr_testutil.h"

#include "index/index.h"

static const key_schema tbl = {"pk", KURA_S, "sk", KURA_N};

static char *include_x[] = {"x"};

/* GSI (g S; gs N), INCLUDE x. */
static idx_def gsi(kura_projection_type proj)
{
    idx_def d = {.name = "gix", .kind = IDX_GLOBAL, .nhash = 1, .nrange = 1, .projection = proj};
    d.hash[0] = (idx_key_attr){"g", KURA_S};
    d.range[0] = (idx_key_attr){"gs", KURA_N};
    if (proj == KURA_PROJECTION_INCLUDE) {
        d.include = include_x;
        d.ninclude = 1;
    }
    return d;
}

/* What the callback saw. */
typedef struct change {
    idx_change_kind kind;
    kbuf key, value;
    bool has_value;
} change;

typedef struct recorder {
    change c[4];
    int n;
    kura_status fail_with; /* returned from the first call when not KURA_OK */
} recorder;

static kura_status record(void *arg, idx_change_kind kind, const uint8_t *key, size_t klen,
                          const uint8_t *value, size_t vlen)
{
    recorder *r = arg;
    if (r->fail_with != KURA_OK) return kura_err(r->fail_with, "recorder: refused");
    assert_true(r->n < 4);
    change *c = &r->c[r->n++];
    c->kind = kind;
    c->key = (kbuf)KBUF_INIT;
    c->value = (kbuf)KBUF_INIT;
    assert_true(kbuf_append(&c->key, key, klen));
    c->has_value = value != NULL;
    if (value) assert_true(kbuf_append(&c->value, value, vlen));
    return KURA_OK;
}

static void recorder_free(recorder *r)
{
    for (int i = 0; i < r->n; i++) {
        kbuf_free(&r->c[i].key);
        kbuf_free(&r->c[i].value);
    }
    r->n = 0;
}

/* The case being checked, for the failure messages. */
static char what[512];

/* The changes of o -> n (NULL: no item), checked against the expectation "D" (delete of
 * o's entry), "P" (put of n's entry), "DP" or "", and the units. */
static void check_v(const idx_def *d, const kura_value *o, const kura_value *n, const char *want,
                    double want_units)
{
    recorder r = {.n = 0};
    double units = -1;
    assert_kura_ok(idx_changes(d, &tbl, o, n, record, &r, &units));
    if ((int)strlen(want) != r.n) fail_msg("%s: %d changes, expected \"%s\"", what, r.n, want);
    for (int i = 0; i < r.n; i++) {
        kbuf key = KBUF_INIT;
        bool present = false;
        if (want[i] == 'D') {
            assert_int_equal(r.c[i].kind, IDX_CHANGE_DELETE);
            assert_false(r.c[i].has_value);
            assert_kura_ok(idx_entry_key(d, &tbl, o, &key, &present));
        } else {
            assert_int_equal(r.c[i].kind, IDX_CHANGE_PUT);
            assert_true(r.c[i].has_value);
            assert_kura_ok(idx_entry_key(d, &tbl, n, &key, &present));
            kbuf val = KBUF_INIT;
            assert_kura_ok(idx_entry_value(d, &tbl, n, &val));
            assert_int_equal(r.c[i].value.len, val.len);
            assert_memory_equal(r.c[i].value.data, val.data, val.len);
            kbuf_free(&val);
        }
        assert_true(present);
        assert_int_equal(r.c[i].key.len, key.len);
        assert_memory_equal(r.c[i].key.data, key.data, key.len);
        kbuf_free(&key);
    }
    if (units != want_units) fail_msg("%s: %g units, expected %g", what, units, want_units);
    recorder_free(&r);
    /* units_out may be NULL */
    assert_kura_ok(idx_changes(d, &tbl, o, n, record, &r, NULL));
    recorder_free(&r);
}

/* check_v of two items in notation; prints them when the check fails. */
static void check(const idx_def *d, const char *old, const char *new_item, const char *want,
                  double want_units)
{
    snprintf(what, sizeof what, "%s -> %s", old ? old : "none", new_item ? new_item : "none");
    check_v(d, old ? tv(old) : NULL, new_item ? tv(new_item) : NULL, want, want_units);
}

#define BASE "pk: \"u\", sk: 1"

static void test_cases(void **state)
{
    (void)state;
    idx_def inc = gsi(KURA_PROJECTION_INCLUDE);
    const char *item = "{" BASE ", g: \"a\", gs: 1, x: 1, y: 1}";
    /* insert, delete; an item without the key attributes touches nothing */
    check(&inc, NULL, item, "P", 1);
    check(&inc, item, NULL, "D", 1);
    check(&inc, NULL, "{" BASE ", g: \"a\"}", "", 0);
    check(&inc, "{" BASE ", gs: 1}", NULL, "", 0);
    check(&inc, NULL, NULL, "", 0);
    /* same key: a projected attribute changes, appears or goes -> put; an unprojected one
     * changes -> nothing */
    check(&inc, item, "{" BASE ", g: \"a\", gs: 1, x: 2, y: 1}", "P", 1);
    check(&inc, item, "{" BASE ", g: \"a\", gs: 1, y: 1}", "P", 1);
    check(&inc, "{" BASE ", g: \"a\", gs: 1}", item, "P", 1);
    check(&inc, item, "{" BASE ", g: \"a\", gs: 1, x: 1, y: 2, z: 3}", "", 0);
    check(&inc, item, item, "", 0);
    /* equal values by DynamoDB's equality (sets in another order) are no change */
    check(&inc, "{" BASE ", g: \"a\", gs: 1, x: SS(\"p\", \"q\")}",
          "{" BASE ", g: \"a\", gs: 1, x: SS(\"q\", \"p\")}", "", 0);
    /* the key moves: delete the old entry, put the new one */
    check(&inc, item, "{" BASE ", g: \"b\", gs: 1, x: 1, y: 1}", "DP", 2);
    check(&inc, item, "{" BASE ", g: \"a\", gs: 2, x: 1, y: 1}", "DP", 2);
    /* a key attribute removed: delete only; added: put only */
    check(&inc, item, "{" BASE ", gs: 1, x: 1, y: 1}", "D", 1);
    check(&inc, "{" BASE ", g: \"a\", x: 1, y: 1}", item, "P", 1);

    /* KEYS_ONLY: nothing but the keys matters; ALL: everything does */
    idx_def keys = gsi(KURA_PROJECTION_KEYS_ONLY), all = gsi(KURA_PROJECTION_ALL);
    check(&keys, item, "{" BASE ", g: \"a\", gs: 1, x: 9, y: 9}", "", 0);
    check(&all, item, "{" BASE ", g: \"a\", gs: 1, x: 1, y: 1, z: null}", "P", 1);
    check(&all, item, "{" BASE ", g: \"a\", gs: 1, x: 1}", "P", 1);
    check(&all, item, item, "", 0);
}

/* {pk: "u", sk: 1, g: <g>, gs: 1, big: <n bytes>} */
static const kura_value *with_big(const char *g, size_t n)
{
    char head[64];
    snprintf(head, sizeof head, "{" BASE ", g: \"%s\", gs: 1}", g);
    kura_value *item = (kura_value *)tv(head), big = {0};
    char *bytes = t_alloc(n);
    memset(bytes, 'b', n);
    assert_kura_ok(val_set_bytes(&big, KURA_S, bytes, n));
    assert_kura_ok(val_map_put(item, "big", 3, &big));
    return item;
}

static void test_units(void **state)
{
    (void)state;
    idx_def all = gsi(KURA_PROJECTION_ALL), keys = gsi(KURA_PROJECTION_KEYS_ONLY);
    /* projected size of with_big(): names 2+2+1+2+3, values 1+2+1+2+n (a number is 1 + one
     * byte per two digits) */
    size_t fixed = 2 + 2 + 1 + 2 + 3 + 1 + 2 + 1 + 2;
    snprintf(what, sizeof what, "items with a big attribute");
    check_v(&all, NULL, with_big("a", 1024 - fixed), "P", 1);
    check_v(&all, NULL, with_big("a", 1024 - fixed + 1), "P", 2);
    check_v(&all, NULL, with_big("a", 3000), "P", 3);
    check_v(&keys, NULL, with_big("a", 3000), "P", 1); /* KEYS_ONLY stores only the keys */
    /* a move costs a delete (1) and the put of the new projection */
    check_v(&all, with_big("a", 10), with_big("b", 3000), "DP", 4);
    check_v(&all, with_big("a", 3000), with_big("a", 10), "P", 1);
    check_v(&all, with_big("a", 3000), NULL, "D", 1);
}

static void test_callback_error(void **state)
{
    (void)state;
    idx_def inc = gsi(KURA_PROJECTION_INCLUDE);
    recorder r = {.fail_with = KURA_E_IO};
    double units = -1;
    assert_kura_status(idx_changes(&inc, &tbl, tv("{" BASE ", g: \"a\", gs: 1}"),
                                   tv("{" BASE ", g: \"b\", gs: 1}"), record, &r, &units),
                       KURA_E_IO);
    assert_string_equal(kura_last_error(), "recorder: refused");
    assert_true(units == -1); /* set only on success */
    assert_kura_status(
        idx_changes(&inc, &tbl, NULL, tv("{" BASE ", g: \"b\", gs: 1}"), record, &r, &units),
        KURA_E_IO);
    assert_int_equal(r.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_cases, t_free_all),
        cmocka_unit_test_teardown(test_units, t_free_all),
        cmocka_unit_test_teardown(test_callback_error, t_free_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

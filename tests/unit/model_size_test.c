/*
 * model_size_test.c - DynamoDB item and value sizes (engine/model/size.c) and the request
 * checks of engine/model/validate.c: the number size rule (dynalite's valSize), containers,
 * sets, the 400 KB limit at exactly 409,600 / 409,601 bytes with the items of
 * /work/shared/scenarios/item_size_limit.json rebuilt in C (ASCII and 3-byte UTF-8), and
 * every validation message (empty sets, duplicates, nesting depth as DynamoDB Local counts
 * it, item size).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/value.h"

static kura_value mk_bytes(kura_type t, const void *p, size_t len)
{
    kura_value v = {0};
    assert_kura_ok(val_set_bytes(&v, t, p, len));
    return v;
}

static kura_value mk_s(const char *s)
{
    return mk_bytes(KURA_S, s, strlen(s));
}

static kura_value mk_n(const char *s)
{
    kura_num n;
    assert_kura_ok(num_parse(s, strlen(s), &n));
    kura_value v = {0};
    val_set_num(&v, &n);
    return v;
}

static void put(kura_value *m, const char *name, kura_value v)
{
    assert_kura_ok(val_map_put(m, name, strlen(name), &v));
}

static void push(kura_value *l, kura_value v)
{
    assert_kura_ok(val_list_push(l, &v));
}

static void check_num_size(const char *num, size_t want)
{
    kura_value v = mk_n(num);
    size_t got = val_size(&v);
    if (got != want) fail_msg("size of N %s = %zu, expected %zu", num, got, want);
    val_clear(&v);
}

static void test_number_sizes(void **state)
{
    (void)state;
    /* Expected values computed by running dynalite's valSize() (Big.js) on the same input:
     * 1 + ceil(n/2) + (n even and Big.e even ? 1 : 0) + (negative ? 1 : 0); 0 -> 1. */
    check_num_size("0", 1);
    check_num_size("-0.000", 1);
    check_num_size("1", 2);
    check_num_size("9", 2);
    check_num_size("10", 2);
    check_num_size("100", 2);
    check_num_size("12", 2);
    check_num_size("99", 2);
    check_num_size("123", 3);
    check_num_size("1234", 3);
    check_num_size("1.2", 3); /* 01.20: two centesimal digits */
    check_num_size("12.3", 3);
    check_num_size("1.23", 3);
    check_num_size("0.5", 2);
    check_num_size("0.05", 2);
    check_num_size("0.12", 2);
    check_num_size("0.012", 3); /* .01 20 */
    check_num_size("0.001", 2);
    check_num_size("-1", 3);
    check_num_size("-12", 3);
    check_num_size("-1.5", 4);
    check_num_size("1e125", 2);
    check_num_size("5e-130", 2);
    check_num_size("12345678901234567890123456789012345678", 20);
    check_num_size("1.2345678901234567890123456789012345678", 21);
    check_num_size("-9.9999999999999999999999999999999999999E+125", 21);
}

static void test_value_sizes(void **state)
{
    (void)state;
    kura_value s = mk_s("h\xc3\xa9llo"), b = mk_bytes(KURA_B, "\0\1\2", 3), e = mk_s("");
    assert_int_equal(val_size(&s), 6); /* UTF-8 bytes */
    assert_int_equal(val_size(&b), 3);
    assert_int_equal(val_size(&e), 0);
    kura_value t = {0}, z = {0};
    val_set_bool(&t, true);
    val_set_null(&z);
    assert_int_equal(val_size(&t), 1);
    assert_int_equal(val_size(&z), 1);

    kura_value ss, ns;
    val_init_container(&ss, KURA_SS);
    val_init_container(&ns, KURA_NS);
    push(&ss, mk_s("ab"));
    push(&ss, mk_s("cde"));
    push(&ns, mk_n("12"));   /* 2 */
    push(&ns, mk_n("-1.5")); /* 4 */
    assert_int_equal(val_size(&ss), 5);
    assert_int_equal(val_size(&ns), 6);

    kura_value m, l, empty_m, empty_l;
    val_init_container(&m, KURA_M);
    val_init_container(&l, KURA_L);
    val_init_container(&empty_m, KURA_M);
    val_init_container(&empty_l, KURA_L);
    assert_int_equal(val_size(&empty_m), 3);
    assert_int_equal(val_size(&empty_l), 3);
    put(&m, "ab", mk_s("xyz")); /* 1 + 2 + 3 */
    put(&m, "c", mk_n("1"));    /* 1 + 1 + 2 */
    assert_int_equal(val_size(&m), 3 + 6 + 4);
    push(&l, mk_s("xyz")); /* 1 + 3 */
    push(&l, m);           /* 1 + 13 */
    push(&l, empty_l);     /* 1 + 3 */
    assert_int_equal(val_size(&l), 3 + 4 + 14 + 4);

    kura_value item;
    val_init_container(&item, KURA_M);
    put(&item, "l", l);   /* 1 + 25 */
    put(&item, "ss", ss); /* 2 + 5 */
    put(&item, "t", t);   /* 1 + 1 */
    assert_int_equal(val_item_size(&item), 26 + 7 + 2);
    /* as a nested value the same map costs 3 + 1 per attribute more */
    assert_int_equal(val_size(&item), 3 + 3 + 26 + 7 + 2);

    val_clear(&item);
    val_clear(&s);
    val_clear(&b);
    val_clear(&e);
    val_clear(&ns);
    val_clear(&z);
    val_clear(&empty_m);
}

/* An item {id: S id, blob: S of `count` copies of `unit`} as in item_size_limit.json. */
static kura_value blob_item(const char *id, const char *unit, size_t count)
{
    size_t ulen = strlen(unit);
    char *blob = malloc(ulen * count);
    assert_non_null(blob);
    for (size_t i = 0; i < count; i++)
        memcpy(blob + i * ulen, unit, ulen);
    kura_value item;
    val_init_container(&item, KURA_M);
    put(&item, "id", mk_s(id));
    put(&item, "blob", mk_bytes(KURA_S, blob, ulen * count));
    free(blob);
    return item;
}

static void check_item(kura_value item, size_t want_size, bool ok)
{
    assert_int_equal(val_item_size(&item), want_size);
    if (ok) {
        assert_kura_ok(val_validate_item(&item));
    } else {
        assert_kura_status(val_validate_item(&item), KURA_E_INVALID);
        assert_string_equal(kura_last_error(), "Item size has exceeded the maximum allowed size");
    }
    val_clear(&item);
}

static void test_item_limit(void **state)
{
    (void)state;
    /* The four PutItem steps of item_size_limit.json, with the sizes their notes state. */
    check_item(blob_item("a", "x", 409593), 409600, true);
    check_item(blob_item("b", "x", 409594), 409601, false);
    check_item(blob_item("c", "\xe3\x81\x82", 136531), 409600, true); /* 7 + 3 x 136,531 */
    check_item(blob_item("d", "\xe3\x81\x82", 136532), 409603, false);
    /* a binary attribute counts the same */
    kura_value item = blob_item("e", "x", 1);
    char *big = calloc(1, 409600);
    assert_non_null(big);
    put(&item, "bin", mk_bytes(KURA_B, big, 409600 - 8 - 3)); /* id, e, blob, x: 8 */
    free(big);
    check_item(item, 409600, true);
}

static void check_invalid(const kura_value *v, bool item, const char *want)
{
    kura_status st = item ? val_validate_item(v) : val_validate(v);
    if (st != KURA_E_INVALID || strcmp(kura_last_error(), want) != 0)
        fail_msg("got %s \"%s\", expected \"%s\"", kura_status_str(st), kura_last_error(), want);
}

static kura_value mk_set(kura_type t, const char *const *members, size_t n)
{
    kura_value s;
    val_init_container(&s, t);
    for (size_t i = 0; i < n; i++)
        push(&s, t == KURA_NS
                     ? mk_n(members[i])
                     : mk_bytes(t == KURA_SS ? KURA_S : KURA_B, members[i], strlen(members[i])));
    return s;
}

#define INVALID "One or more parameter values were invalid: "

static void test_sets(void **state)
{
    (void)state;
    kura_value e;
    val_init_container(&e, KURA_SS);
    check_invalid(&e, false, INVALID "An string set  may not be empty");
    e.type = KURA_NS;
    check_invalid(&e, false, INVALID "An number set  may not be empty");
    e.type = KURA_BS;
    check_invalid(&e, false, INVALID "Binary sets should not be empty");

    static const char *const dup[] = {"b", "a", "b", "a"}, *const ok[] = {"b", "a", "c"};
    kura_value ss = mk_set(KURA_SS, dup, 4);
    check_invalid(&ss, false, INVALID "Input collection [b, a, b, a] contains duplicates.");
    val_clear(&ss);
    ss = mk_set(KURA_SS, ok, 3);
    assert_kura_ok(val_validate(&ss));
    static const char *const ndup[] = {"1", "1.0"};
    kura_value ns = mk_set(KURA_NS, ndup, 2);
    check_invalid(&ns, false, "Input collection contains duplicates");
    kura_value bs = mk_set(KURA_BS, dup, 2);
    push(&bs, mk_bytes(KURA_B, "b", 1));
    push(&bs, mk_bytes(KURA_B, "\xff\xfe\x00\x01", 4));
    check_invalid(&bs, false,
                  INVALID "Input collection [Yg==, YQ==, Yg==, //4AAQ==]of type BS "
                          "contains duplicates.");

    /* a large set: duplicates found by sorting; the message is cut at kura_err's buffer */
    kura_value big;
    val_init_container(&big, KURA_SS);
    for (int i = 0; i < 1000; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "m%04d", i);
        push(&big, mk_s(buf));
    }
    assert_kura_ok(val_validate(&big));
    push(&big, mk_s("m0500"));
    assert_kura_status(val_validate(&big), KURA_E_INVALID);
    assert_true(strncmp(kura_last_error(), INVALID "Input collection [m0000, m0001, ",
                        strlen(INVALID) + 31) == 0);
    val_clear(&big);

    /* sets nested in lists and maps are checked, the first error in attribute order wins */
    kura_value item, l;
    val_init_container(&item, KURA_M);
    val_init_container(&l, KURA_L);
    push(&l, ss);
    push(&l, ns);
    put(&item, "b", l);
    put(&item, "a", bs);
    check_invalid(&item, true,
                  INVALID "Input collection [Yg==, YQ==, Yg==, //4AAQ==]of type BS "
                          "contains duplicates.");
    assert_true(val_map_remove(&item, "a", 1));
    check_invalid(&item, true, "Input collection contains duplicates");
    val_clear(&item);
    val_clear(&e);
}

/* `k` maps nested in each other around `leaf` (moved). */
static kura_value nest(int k, kura_value leaf, bool lists)
{
    kura_value v = leaf;
    for (int i = 0; i < k; i++) {
        kura_value c;
        val_init_container(&c, lists ? KURA_L : KURA_M);
        if (lists)
            push(&c, v);
        else
            put(&c, "a", v);
        v = c;
    }
    return v;
}

#define NESTING "Nesting Levels have exceeded supported limits"

static void test_nesting(void **state)
{
    (void)state;
    /* DynamoDB Local 1.25.1: an attribute holding 31 nested maps (or lists) is accepted, 32
     * are not, whether or not a scalar sits inside the innermost. */
    for (int lists = 0; lists <= 1; lists++) {
        kura_value ok = nest(31, mk_s("v"), lists), bad = nest(32, mk_s("v"), lists);
        kura_value ok2;
        val_init_container(&ok2, KURA_M);
        ok2 = nest(30, ok2, lists);
        kura_value bad2;
        val_init_container(&bad2, KURA_L);
        bad2 = nest(31, bad2, lists);
        assert_kura_ok(val_validate(&ok));
        assert_kura_ok(val_validate(&ok2));
        check_invalid(&bad, false, NESTING);
        check_invalid(&bad2, false, NESTING);

        kura_value item;
        val_init_container(&item, KURA_M);
        put(&item, "ok", ok);
        put(&item, "ok2", ok2);
        assert_kura_ok(val_validate_item(&item));
        put(&item, "z", bad);
        check_invalid(&item, true,
                      NESTING ": Attributes in the item have nested levels beyond "
                              "supported limit");
        val_clear(&item);
        val_clear(&bad2);
    }
    /* an empty value is not a value */
    kura_value m;
    val_init_container(&m, KURA_M);
    put(&m, "x", (kura_value){0});
    check_invalid(&m, true,
                  "Supplied AttributeValue is empty, must contain exactly one of the "
                  "supported datatypes");
    kura_value s = mk_s("x");
    check_invalid(&s, true, "an item must be a map");
    val_clear(&s);
    val_clear(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_number_sizes), cmocka_unit_test(test_value_sizes),
        cmocka_unit_test(test_item_limit),   cmocka_unit_test(test_sets),
        cmocka_unit_test(test_nesting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

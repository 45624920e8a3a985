/*
 * model_value_test.c - the attribute value tree (engine/model/value.c) and the public
 * kura_value_* functions (engine/model/value_api.c): builders, copies and moves, maps kept
 * sorted with replace and remove, lists and sets, DynamoDB equality (sets in any order,
 * numbers numerically), scalar order, type names, and the public constructors/accessors
 * including their ownership rules (checked for leaks by the ASan build).
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "engine/model/value.h"

static kura_value mk_s(const char *s)
{
    kura_value v = {0};
    assert_kura_ok(val_set_bytes(&v, KURA_S, s, strlen(s)));
    return v;
}

static kura_value mk_b(const void *p, size_t len)
{
    kura_value v = {0};
    assert_kura_ok(val_set_bytes(&v, KURA_B, p, len));
    return v;
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
    assert_int_equal(v.type, 0);
}

static void push(kura_value *l, kura_value v)
{
    assert_kura_ok(val_list_push(l, &v));
    assert_int_equal(v.type, 0);
}

/* A set of the given type from NUL-terminated member strings (S/N text; B raw bytes). */
static kura_value mk_set(kura_type t, const char *const *members, size_t n)
{
    kura_value s;
    val_init_container(&s, t);
    for (size_t i = 0; i < n; i++)
        push(&s, t == KURA_NS   ? mk_n(members[i])
                 : t == KURA_SS ? mk_s(members[i])
                                : mk_b(members[i], strlen(members[i])));
    return s;
}

static void test_scalars(void **state)
{
    (void)state;
    kura_value s = mk_s("héllo");
    assert_int_equal(s.type, KURA_S);
    assert_int_equal(s.u.bytes.len, 6);
    assert_int_equal(s.u.bytes.p[6], 0); /* NUL one past the end */
    assert_string_equal((char *)s.u.bytes.p, "héllo");

    kura_value b = mk_b("\0\1\2", 3);
    assert_int_equal(b.type, KURA_B);
    assert_int_equal(b.u.bytes.len, 3);
    assert_memory_equal(b.u.bytes.p, "\0\1\2", 3);

    kura_value e = mk_s("");
    assert_non_null(e.u.bytes.p); /* never NULL, even when empty */
    assert_int_equal(e.u.bytes.len, 0);

    kura_value t = {0}, nul = {0};
    val_set_bool(&t, true);
    val_set_null(&nul);
    assert_int_equal(t.type, KURA_BOOL);
    assert_true(t.u.boolean);
    assert_int_equal(nul.type, KURA_NULL);

    kura_value moved = {0};
    val_move(&moved, &s);
    assert_int_equal(s.type, 0);
    assert_string_equal((char *)moved.u.bytes.p, "héllo");

    val_clear(&moved);
    assert_int_equal(moved.type, 0);
    val_clear(&moved); /* clearing an empty value is a no-op */
    val_clear(&b);
    val_clear(&e);
    val_clear(&t);
    val_clear(&nul);
}

static void test_map_sorted(void **state)
{
    (void)state;
    static const char *const names[] = {"b", "ab", "", "a", "\xc3\xa9", "z", "aa", "A", "b\x01"};
    static const char *const sorted[] = {"", "A", "a", "aa", "ab", "b", "b\x01", "z", "\xc3\xa9"};
    const size_t n = sizeof names / sizeof names[0];
    kura_value m;
    val_init_container(&m, KURA_M);
    for (size_t i = 0; i < n; i++)
        put(&m, names[i], mk_s(names[i]));
    assert_int_equal(m.u.map.n, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(m.u.map.a[i].name, sorted[i]);
        assert_int_equal(m.u.map.a[i].name_len, strlen(sorted[i]));
        kura_value *got = val_map_get(&m, names[i], strlen(names[i]));
        assert_non_null(got);
        assert_string_equal((char *)got->u.bytes.p, names[i]);
    }
    assert_null(val_map_get(&m, "c", 1));
    assert_null(val_map_get(&m, "a", 2)); /* "a\0" is not "a" */

    /* replace: same count, new value, old one freed (ASan) */
    put(&m, "ab", mk_n("42"));
    assert_int_equal(m.u.map.n, n);
    kura_value want = mk_n("42.0");
    assert_true(val_equal(val_map_get(&m, "ab", 2), &want));

    assert_true(val_map_remove(&m, "aa", 2));
    assert_false(val_map_remove(&m, "aa", 2));
    assert_false(val_map_remove(&m, "nope", 4));
    assert_int_equal(m.u.map.n, n - 1);
    assert_null(val_map_get(&m, "aa", 2));
    for (uint32_t i = 1; i < m.u.map.n; i++) /* still sorted */
        assert_true(strcmp(m.u.map.a[i - 1].name, m.u.map.a[i].name) < 0);

    /* binary names with NUL bytes */
    put(&m, "x", mk_s("1"));
    assert_kura_ok(val_map_put(&m, "x\0y", 3, &(kura_value){0}));
    assert_int_equal(val_map_get(&m, "x\0y", 3)->type, 0);
    assert_int_equal(val_map_get(&m, "x", 1)->type, KURA_S);
    val_clear(&want);
    val_clear(&m);

    /* val_map_get on a non-map is NULL */
    kura_value s = mk_s("x");
    assert_null(val_map_get(&s, "x", 1));
    assert_false(val_map_remove(&s, "x", 1));
    val_clear(&s);
}

static void test_list_and_set(void **state)
{
    (void)state;
    kura_value l;
    val_init_container(&l, KURA_L);
    for (int i = 0; i < 100; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", i);
        push(&l, mk_n(buf));
    }
    assert_int_equal(l.u.list.n, 100);
    val_list_remove(&l, 0);
    val_list_remove(&l, 50); /* was 51 */
    val_list_remove(&l, l.u.list.n - 1);
    assert_int_equal(l.u.list.n, 97);
    kura_value one = mk_n("1"), fifty = mk_n("50"), fifty2 = mk_n("52"), last = mk_n("98");
    assert_true(val_equal(&l.u.list.v[0], &one));
    assert_true(val_equal(&l.u.list.v[49], &fifty));
    assert_true(val_equal(&l.u.list.v[50], &fifty2));
    assert_true(val_equal(&l.u.list.v[96], &last));

    static const char *const m[] = {"x", "y", "z"};
    kura_value ss = mk_set(KURA_SS, m, 3);
    kura_value y = mk_s("y"), w = mk_s("w");
    assert_true(val_set_contains(&ss, &y));
    assert_false(val_set_contains(&ss, &w));
    kura_value *vals[] = {&l, &one, &fifty, &fifty2, &last, &ss, &y, &w};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        val_clear(vals[i]);
}

static void test_copy(void **state)
{
    (void)state;
    kura_value item, inner, list;
    val_init_container(&item, KURA_M);
    val_init_container(&inner, KURA_M);
    val_init_container(&list, KURA_L);
    static const char *const nums[] = {"1", "2.5", "-3"};
    put(&inner, "deep", mk_s("value"));
    push(&list, mk_b("\xff", 1));
    push(&list, inner);
    put(&item, "l", list);
    put(&item, "ns", mk_set(KURA_NS, nums, 3));
    kura_value t = {0};
    val_set_bool(&t, false);
    put(&item, "t", t);

    kura_value copy = {0};
    assert_kura_ok(val_copy(&copy, &item));
    assert_true(val_equal(&copy, &item));
    /* deep: changing the copy leaves the original alone */
    kura_value *l2 = val_map_get(&copy, "l", 1);
    put(&l2->u.list.v[1], "deep", mk_s("changed"));
    assert_false(val_equal(&copy, &item));
    assert_string_equal(
        (char *)val_map_get(&val_map_get(&item, "l", 1)->u.list.v[1], "deep", 4)->u.bytes.p,
        "value");
    val_clear(&copy);
    val_clear(&item);
}

static void test_equal(void **state)
{
    (void)state;
    kura_value a = mk_n("1.50"), b = mk_n("1.5"), c = mk_n("15e-1"), d = mk_n("1.51");
    assert_true(val_equal(&a, &b));
    assert_true(val_equal(&a, &c));
    assert_false(val_equal(&a, &d));
    kura_value s = mk_s("1.5"), bin = mk_b("1.5", 3);
    assert_false(val_equal(&a, &s)); /* different types */
    assert_false(val_equal(&s, &bin));

    static const char *const s1[] = {"a", "b", "c"}, *const s2[] = {"c", "a", "b"};
    static const char *const s3[] = {"a", "b", "d"}, *const s4[] = {"a", "b"};
    kura_value x1 = mk_set(KURA_SS, s1, 3), x2 = mk_set(KURA_SS, s2, 3);
    kura_value x3 = mk_set(KURA_SS, s3, 3), x4 = mk_set(KURA_SS, s4, 2);
    kura_value b1 = mk_set(KURA_BS, s1, 3), b2 = mk_set(KURA_BS, s2, 3);
    assert_true(val_equal(&x1, &x2));
    assert_false(val_equal(&x1, &x3));
    assert_false(val_equal(&x1, &x4));
    assert_false(val_equal(&x1, &b1)); /* SS vs BS */
    assert_true(val_equal(&b1, &b2));
    static const char *const n1[] = {"1.50", "2", "-0"}, *const n2[] = {"0", "2.0", "1.5"};
    kura_value ns1 = mk_set(KURA_NS, n1, 3), ns2 = mk_set(KURA_NS, n2, 3);
    assert_true(val_equal(&ns1, &ns2));
    /* duplicates (invalid sets) compare as sets: [a, a] is neither [a, b] nor [a] */
    static const char *const d1[] = {"a", "a"}, *const d2[] = {"a", "b"};
    kura_value y1 = mk_set(KURA_SS, d1, 2), y2 = mk_set(KURA_SS, d2, 2);
    assert_false(val_equal(&y1, &y2));
    assert_false(val_equal(&y2, &y1));

    /* large sets take the sorting path */
    kura_value big1, big2, big3;
    val_init_container(&big1, KURA_NS);
    val_init_container(&big2, KURA_NS);
    val_init_container(&big3, KURA_NS);
    for (int i = 0; i < 200; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d.0", i);
        push(&big1, mk_n(buf));
        snprintf(buf, sizeof buf, "%d", 199 - i);
        push(&big2, mk_n(buf));
        snprintf(buf, sizeof buf, "%d", i == 100 ? 1000 : 199 - i);
        push(&big3, mk_n(buf));
    }
    assert_true(val_equal(&big1, &big2));
    assert_false(val_equal(&big1, &big3));

    /* lists: order matters; maps: attribute by attribute */
    kura_value l1, l2, m1, m2;
    val_init_container(&l1, KURA_L);
    val_init_container(&l2, KURA_L);
    push(&l1, mk_s("a"));
    push(&l1, mk_s("b"));
    push(&l2, mk_s("b"));
    push(&l2, mk_s("a"));
    assert_false(val_equal(&l1, &l2));
    val_init_container(&m1, KURA_M);
    val_init_container(&m2, KURA_M);
    put(&m1, "x", mk_n("1"));
    put(&m1, "y", mk_n("2"));
    put(&m2, "y", mk_n("2.0"));
    put(&m2, "x", mk_n("1.0"));
    assert_true(val_equal(&m1, &m2));
    put(&m2, "z", mk_n("3"));
    assert_false(val_equal(&m1, &m2));
    kura_value n1v = {0}, n2v = {0}, t1 = {0}, t2 = {0};
    val_set_null(&n1v);
    val_set_null(&n2v);
    val_set_bool(&t1, true);
    val_set_bool(&t2, false);
    assert_true(val_equal(&n1v, &n2v));
    assert_false(val_equal(&t1, &t2));

    kura_value *all[] = {&a,   &b,   &c,  &d,  &s,    &bin,  &x1,   &x2, &x3, &x4, &b1, &b2,
                         &ns1, &ns2, &y1, &y2, &big1, &big2, &big3, &l1, &l2, &m1, &m2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        val_clear(all[i]);
}

static void test_cmp_scalar(void **state)
{
    (void)state;
    static const char *const strs[] = {"", "A", "a", "a\x01", "ab", "b", "\x7f", "\xc3\xa9"};
    const size_t ns = sizeof strs / sizeof strs[0];
    for (size_t i = 0; i < ns; i++)
        for (size_t j = 0; j < ns; j++) {
            kura_value x = mk_s(strs[i]), y = mk_s(strs[j]);
            int c = val_cmp_scalar(&x, &y);
            if ((i < j && c >= 0) || (i == j && c != 0) || (i > j && c <= 0))
                fail_msg("cmp(\"%s\", \"%s\") = %d", strs[i], strs[j], c);
            val_clear(&x);
            val_clear(&y);
        }
    kura_value b1 = mk_b("\x00", 1), b2 = mk_b("\x00\x00", 2), b3 = mk_b("\x80", 1);
    assert_true(val_cmp_scalar(&b1, &b2) < 0);
    assert_true(val_cmp_scalar(&b2, &b3) < 0);
    static const char *const nums[] = {"-100", "-1.5", "-1", "0", "1e-130", "0.5", "1", "10"};
    for (size_t i = 0; i + 1 < sizeof nums / sizeof nums[0]; i++) {
        kura_value x = mk_n(nums[i]), y = mk_n(nums[i + 1]);
        assert_true(val_cmp_scalar(&x, &y) < 0);
        assert_true(val_cmp_scalar(&y, &x) > 0);
        val_clear(&x);
        val_clear(&y);
    }
    val_clear(&b1);
    val_clear(&b2);
    val_clear(&b3);
}

static void test_type_names(void **state)
{
    (void)state;
    static const char *const want[] = {"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"};
    for (int t = KURA_S; t <= KURA_BS; t++)
        assert_string_equal(val_type_name((kura_type)t), want[t - KURA_S]);
    assert_string_equal(val_type_name((kura_type)0), "");
    assert_string_equal(val_type_name((kura_type)99), "");
}

static void test_public_api(void **state)
{
    (void)state;
    kura_value *item = kura_value_map();
    assert_non_null(item);
    assert_int_equal(kura_value_type(item), KURA_M);
    assert_kura_ok(kura_value_map_put(item, "s", 1, kura_value_s("text", 4)));
    assert_kura_ok(kura_value_map_put(item, "b", 1, kura_value_b("\0\1", 2)));
    assert_kura_ok(kura_value_map_put(item, "n", 1, kura_value_n("012.50", 6)));
    assert_kura_ok(kura_value_map_put(item, "t", 1, kura_value_bool(true)));
    assert_kura_ok(kura_value_map_put(item, "z", 1, kura_value_null()));
    kura_value *l = kura_value_list();
    assert_kura_ok(kura_value_append(l, kura_value_s("x", 1)));
    assert_kura_ok(kura_value_append(l, kura_value_map()));
    assert_kura_ok(kura_value_map_put(item, "l", 1, l));
    kura_value *ns = kura_value_set(KURA_NS);
    assert_kura_ok(kura_value_append(ns, kura_value_n("1", 1)));
    assert_kura_status(kura_value_append(ns, kura_value_s("1", 1)), KURA_E_INVALID); /* freed */
    assert_string_equal(kura_last_error(),
                        "kura_value_append: element type does not match the set");
    assert_kura_ok(kura_value_map_put(item, "ns", 2, ns));
    assert_int_equal(kura_value_count(item), 7);

    /* replace an attribute */
    assert_kura_ok(kura_value_map_put(item, "s", 1, kura_value_s("other", 5)));
    assert_int_equal(kura_value_count(item), 7);

    size_t len;
    const char *p = kura_value_bytes(kura_value_get(item, "s", 1), &len);
    assert_int_equal(len, 5);
    assert_string_equal(p, "other");
    p = kura_value_bytes(kura_value_get(item, "b", 1), &len);
    assert_int_equal(len, 2);
    assert_memory_equal(p, "\0\1", 2);
    assert_null(kura_value_bytes(kura_value_get(item, "n", 1), &len));
    char buf[NUM_FORMAT_MAX + 1];
    assert_int_equal(kura_value_num(kura_value_get(item, "n", 1), buf, sizeof buf), 4);
    assert_string_equal(buf, "12.5");
    assert_int_equal(kura_value_num(kura_value_get(item, "n", 1), buf, 4), 0); /* too small */
    assert_int_equal(kura_value_num(kura_value_get(item, "s", 1), buf, sizeof buf), 0);
    assert_true(kura_value_boolean(kura_value_get(item, "t", 1)));
    assert_false(kura_value_boolean(kura_value_get(item, "z", 1)));
    assert_null(kura_value_get(item, "missing", 7));
    assert_null(kura_value_get(kura_value_get(item, "s", 1), "s", 1));

    /* kura_value_at: attributes in name order */
    static const char *const order[] = {"b", "l", "n", "ns", "s", "t", "z"};
    for (size_t i = 0; i < 7; i++) {
        const char *name;
        size_t nlen;
        assert_non_null(kura_value_at(item, i, &name, &nlen));
        assert_string_equal(name, order[i]);
        assert_int_equal(nlen, strlen(order[i]));
    }
    assert_null(kura_value_at(item, 7, NULL, NULL));
    const kura_value *lv = kura_value_get(item, "l", 1);
    assert_int_equal(kura_value_type(kura_value_at(lv, 1, NULL, NULL)), KURA_M);
    assert_int_equal(kura_value_count(kura_value_get(item, "s", 1)), 0);

    kura_value *clone = kura_value_clone(item);
    assert_true(val_equal(clone, item));

    /* errors: ownership is taken in every case */
    kura_value *s = kura_value_s("x", 1);
    assert_kura_status(kura_value_map_put(s, "a", 1, kura_value_null()), KURA_E_INVALID);
    assert_kura_status(kura_value_append(s, kura_value_null()), KURA_E_INVALID);
    assert_kura_status(kura_value_map_put(item, "a", 1, NULL), KURA_E_INVALID);
    assert_null(kura_value_n("1x", 2));
    assert_string_equal(kura_last_error(),
                        "The parameter cannot be converted to a numeric value: 1x");
    assert_null(kura_value_n("1e126", 5));
    assert_null(kura_value_set(KURA_L));
    assert_null(kura_value_clone(NULL));
    assert_int_equal(kura_value_type(NULL), 0);
    kura_value_free(NULL);
    kura_value_free(s);
    kura_value_free(clone);
    kura_value_free(item);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),      cmocka_unit_test(test_map_sorted),
        cmocka_unit_test(test_list_and_set), cmocka_unit_test(test_copy),
        cmocka_unit_test(test_equal),        cmocka_unit_test(test_cmp_scalar),
        cmocka_unit_test(test_type_names),   cmocka_unit_test(test_public_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

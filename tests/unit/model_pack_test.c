/*
 * model_pack_test.c - packed values and the storage rules of value.h ("Storage"): values made
 * by val_decode() and val_copy() (one reference-counted block, engine/model/pack.c), attribute
 * names kept inline, and public S/B nodes sharing one allocation with their bytes. Every test
 * modifies packed values with the ordinary functions and checks them against a built twin
 * with val_equal; the ASan build checks that no block is freed early, twice or never.
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

/* A random value of depth at most `depth` (containers only while depth > 0). */
static kura_value rand_value(uint64_t *rs, int depth)
{
    static const char *const words[] = {"", "a", "b", "ab", "zz", "name", "a\0b",
                                        "a long string that is not inline at all"};
    static const char *const nums[] = {"0", "1", "-1", "12.5", "1e100", "-0.001", "7"};
    kura_value v = {0};
    char name[64];
    int kind = (int)(test_rand(rs) % (depth > 0 ? 9 : 5));
    uint32_t n = (uint32_t)(test_rand(rs) % 24);
    switch (kind) {
    case 0:
        return mk_s(words[test_rand(rs) % 8]);
    case 1:
        return mk_n(nums[test_rand(rs) % 7]);
    case 2:
        val_set_bool(&v, test_rand(rs) & 1);
        return v;
    case 3:
        val_set_null(&v);
        return v;
    case 4: {
        uint8_t bytes[40];
        size_t len = test_rand(rs) % sizeof bytes;
        for (size_t i = 0; i < len; i++)
            bytes[i] = (uint8_t)test_rand(rs);
        assert_kura_ok(val_set_bytes(&v, KURA_B, bytes, len));
        return v;
    }
    case 5:
    case 6:
        val_init_container(&v, KURA_M);
        for (uint32_t i = 0; i < n; i++) {
            /* names of 1..40 bytes: some inline, some malloc'ed */
            size_t len = 1 + test_rand(rs) % 40;
            for (size_t k = 0; k < len; k++)
                name[k] = (char)('a' + test_rand(rs) % 3);
            kura_value c = rand_value(rs, depth - 1);
            assert_kura_ok(val_map_put(&v, name, len, &c));
        }
        return v;
    case 7:
        val_init_container(&v, KURA_L);
        for (uint32_t i = 0; i < n; i++)
            push(&v, rand_value(rs, depth - 1));
        return v;
    default: {
        kura_type t = (kura_type)(KURA_SS + test_rand(rs) % 3);
        val_init_container(&v, t);
        for (uint32_t i = 0; i < n + 1; i++) { /* distinct members: the index in text */
            char m[16];
            snprintf(m, sizeof m, "%u", i * 7);
            kura_value e = t == KURA_NS ? mk_n(m) : mk_s(m);
            if (t == KURA_BS) e.type = KURA_B;
            push(&v, e);
        }
        return v;
    }
    }
}

/* Applies one random modification to `a` and the same one to `b` (equal values). */
static void mutate_both(uint64_t *rs, kura_value *a, kura_value *b)
{
    uint64_t r = test_rand(rs);
    if (a->type == KURA_M && a->u.map.n > 0 && r % 3 == 0) {
        /* descend into a random attribute */
        uint32_t i = (uint32_t)(test_rand(rs) % a->u.map.n);
        mutate_both(rs, &a->u.map.a[i].value, val_map_get(b, a->u.map.a[i].name,
                                                          a->u.map.a[i].name_len));
    } else if (a->type == KURA_M && r % 3 == 1 && a->u.map.n > 0) {
        uint32_t i = (uint32_t)(test_rand(rs) % a->u.map.n);
        char name[64];
        size_t len = a->u.map.a[i].name_len < sizeof name ? a->u.map.a[i].name_len : 0;
        memcpy(name, a->u.map.a[i].name, len);
        assert_true(val_map_remove(a, name, len) == val_map_remove(b, name, len));
    } else if (a->type == KURA_M) {
        char name[32];
        snprintf(name, sizeof name, "k%llu", (unsigned long long)(test_rand(rs) % 40));
        kura_value x = rand_value(rs, 1), y = {0};
        assert_kura_ok(val_copy(&y, &x));
        put(a, name, x);
        put(b, name, y);
    } else if (a->type == KURA_L && a->u.list.n > 0 && r % 2 == 0) {
        uint32_t i = (uint32_t)(test_rand(rs) % a->u.list.n);
        /* move the element out of both trees, then drop it */
        kura_value x, y;
        val_move(&x, &a->u.list.v[i]);
        val_move(&y, &b->u.list.v[i]);
        assert_true(val_equal(&x, &y));
        val_list_remove(a, i);
        val_list_remove(b, i);
        val_clear(&x);
        val_clear(&y);
    } else if (a->type == KURA_L) {
        kura_value x = rand_value(rs, 1), y = {0};
        assert_kura_ok(val_copy(&y, &x));
        push(a, x);
        push(b, y);
    }
}

/* A decoded value, its copy and the built original stay equal under the same changes, and a
 * child moved out of a packed tree outlives the tree. */
static void test_packed_like_built(void **state)
{
    (void)state;
    uint64_t rs = test_seed();
    for (int round = 0; round < 300; round++) {
        kura_value built = rand_value(&rs, 3);
        kbuf enc = KBUF_INIT;
        assert_kura_ok(val_encode(&built, &enc));
        kura_value dec = {0}, copy = {0};
        assert_kura_ok(val_decode(enc.data, enc.len, &dec));
        assert_kura_ok(val_copy(&copy, &dec));
        assert_true(val_equal(&built, &dec));
        assert_true(val_equal(&copy, &dec));
        for (int step = 0; step < 20; step++) {
            kura_value twin = {0};
            assert_kura_ok(val_copy(&twin, &built));
            mutate_both(&rs, &built, &dec);
            assert_true(val_equal(&built, &dec));
            val_clear(&twin);
        }
        /* the re-encoding of the modified packed value decodes to the same value */
        kbuf enc2 = KBUF_INIT;
        assert_kura_ok(val_encode(&dec, &enc2));
        kura_value again = {0};
        assert_kura_ok(val_decode(enc2.data, enc2.len, &again));
        assert_true(val_equal(&again, &built));
        /* move a child out of the packed copy and free the rest first */
        kura_value child = {0};
        if (copy.type == KURA_M && copy.u.map.n > 0)
            val_move(&child, &copy.u.map.a[0].value);
        else if (copy.type == KURA_L && copy.u.list.n > 0)
            val_move(&child, &copy.u.list.v[0]);
        kura_value child_copy = {0};
        if (child.type) assert_kura_ok(val_copy(&child_copy, &child));
        val_clear(&copy);
        if (child.type) assert_true(val_equal(&child, &child_copy));
        val_clear(&child);
        val_clear(&child_copy);
        val_clear(&again);
        val_clear(&dec);
        val_clear(&built);
        kbuf_free(&enc);
        kbuf_free(&enc2);
    }
}

/* Inline names survive every move of the attribute array: inserts in front, growth, and
 * removal; long names are malloc'ed. */
static void test_inline_names(void **state)
{
    (void)state;
    kura_value m;
    val_init_container(&m, KURA_M);
    char name[64];
    for (int i = 99; i >= 0; i--) { /* each insert goes first: the whole array shifts */
        int len = snprintf(name, sizeof name, i % 2 ? "n%03d" : "a-much-longer-name-%03d", i);
        kura_value v = mk_n("1");
        assert_kura_ok(val_map_put(&m, name, (size_t)len, &v));
    }
    assert_int_equal(m.u.map.n, 100);
    for (uint32_t i = 0; i < m.u.map.n; i++) {
        const kura_attr *a = &m.u.map.a[i];
        assert_int_equal(strlen(a->name), a->name_len);
        assert_int_equal(a->name_kind, a->name_len <= VAL_NAME_INLINE_MAX ? VAL_NAME_INLINE
                                                                          : VAL_NAME_OWNED);
        if (a->name_kind == VAL_NAME_INLINE) assert_ptr_equal(a->name, a->name_inl);
        if (i) assert_true(strcmp(m.u.map.a[i - 1].name, a->name) < 0);
    }
    for (int i = 0; i < 100; i += 3) {
        int len = snprintf(name, sizeof name, i % 2 ? "n%03d" : "a-much-longer-name-%03d", i);
        assert_true(val_map_remove(&m, name, (size_t)len));
    }
    for (uint32_t i = 0; i < m.u.map.n; i++) {
        const kura_attr *a = &m.u.map.a[i];
        if (a->name_kind == VAL_NAME_INLINE) assert_ptr_equal(a->name, a->name_inl);
        assert_non_null(val_map_get(&m, a->name, a->name_len));
    }
    val_clear(&m);
}

/* A packed map grows into a malloc'ed array; its names stay in the block. */
static void test_packed_grow(void **state)
{
    (void)state;
    kura_value m;
    val_init_container(&m, KURA_M);
    put(&m, "b", mk_s("x"));
    put(&m, "d", mk_s("y"));
    kura_value p = {0};
    assert_kura_ok(val_copy(&p, &m));
    assert_non_null(p.u.map.blk);
    assert_true(p.u.map.in_blk);
    assert_int_equal(p.u.map.a[0].name_kind, VAL_NAME_BLK);
    put(&p, "a", mk_s("z"));
    put(&p, "c", mk_s("w"));
    assert_false(p.u.map.in_blk);
    assert_non_null(p.u.map.blk);
    assert_string_equal(p.u.map.a[1].name, "b");
    assert_int_equal(p.u.map.a[1].name_kind, VAL_NAME_BLK);
    assert_int_equal(p.u.map.a[0].name_kind, VAL_NAME_INLINE);
    put(&m, "a", mk_s("z"));
    put(&m, "c", mk_s("w"));
    assert_true(val_equal(&m, &p));
    val_clear(&m);
    val_clear(&p);
}

/* The decoder's duplicate check on member spans, for small and large sets of every type. */
static void test_decode_set_dups(void **state)
{
    (void)state;
    for (int large = 0; large < 2; large++) {
        for (kura_type t = KURA_SS; t <= KURA_BS; t++) {
            int n = large ? 40 : 5;
            kura_value s;
            val_init_container(&s, t);
            for (int i = 0; i < n; i++) {
                char m[16];
                snprintf(m, sizeof m, "%d", (i * 37) % 101);
                kura_value e = t == KURA_NS ? mk_n(m) : mk_s(m);
                if (t == KURA_BS) e.type = KURA_B;
                push(&s, e);
            }
            kbuf enc = KBUF_INIT;
            assert_kura_ok(val_encode(&s, &enc));
            kura_value d = {0};
            assert_kura_ok(val_decode(enc.data, enc.len, &d));
            assert_true(val_equal(&d, &s));
            val_clear(&d);
            /* a duplicate member (the last equal to the first) is corruption */
            kura_value dup = {0};
            assert_kura_ok(val_copy(&dup, &s.u.list.v[0]));
            push(&s, dup);
            kbuf_clear(&enc);
            assert_kura_ok(val_encode(&s, &enc));
            assert_int_equal(val_decode(enc.data, enc.len, &d), KURA_E_CORRUPTION);
            char want[64];
            snprintf(want, sizeof want, "item: duplicate set members at byte %zu", enc.len);
            assert_string_equal(kura_last_error(), want);
            assert_int_equal(d.type, 0);
            val_clear(&s);
            kbuf_free(&enc);
        }
    }
}

/* Public S/B nodes share their allocation with their bytes: whether put into a map, appended,
 * freed unused, or cleared and refilled as another type before kura_value_free. */
static void test_public_bytes_nodes(void **state)
{
    (void)state;
    kura_value *m = kura_value_map(), *l = kura_value_list();
    assert_kura_ok(kura_value_map_put(m, "s", 1, kura_value_s("hello", 5)));
    assert_kura_ok(kura_value_map_put(m, "b", 1, kura_value_b("\0\1", 2)));
    assert_kura_ok(kura_value_append(l, kura_value_s("x", 1)));
    assert_kura_ok(kura_value_map_put(m, "l", 1, l));
    assert_int_equal(kura_value_map_put(NULL, "s", 1, kura_value_s("y", 1)), KURA_E_INVALID);
    size_t len;
    assert_string_equal(kura_value_bytes(kura_value_get(m, "s", 1), &len), "hello");
    kura_value *c = kura_value_clone(m);
    assert_true(val_equal(c, m));
    kura_value_free(m);
    kura_value_free(c);
    kura_value_free(kura_value_s("unused", 6));
    kura_value_free(kura_value_b("", 0));
    kura_value *set = kura_value_set(KURA_SS);
    assert_int_equal(kura_value_append(set, kura_value_b("x", 1)), KURA_E_INVALID);
    kura_value_free(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packed_like_built), cmocka_unit_test(test_inline_names),
        cmocka_unit_test(test_packed_grow),       cmocka_unit_test(test_decode_set_dups),
        cmocka_unit_test(test_public_bytes_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

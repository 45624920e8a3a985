/*
 * idx_def_test.c - index definitions and projections (index/def.c, index/project.c): deep
 * copies and clearing, idx_is_key_attr, idx_projects for KEYS_ONLY / INCLUDE / ALL, and the
 * projection of items as a map (idx_project) and as the entry value (idx_entry_value, which
 * must equal val_encode of that map and decode back to it): key attributes always, INCLUDE
 * names the item lacks skipped, a name listed twice stored once.
 */
#include "expr_testutil.h"

#include "index/index.h"

/* Table (pk S, sk N). */
static const key_schema tbl = {"pk", KURA_S, "sk", KURA_N};

static char *include_xy[] = {"x", "missing", "y"};

/* GSI (g S; gs N) with the given projection (INCLUDE: x, missing, y). */
static idx_def gsi(kura_projection_type proj)
{
    idx_def d = {.name = "gix", .id = 7, .kind = IDX_GLOBAL, .nhash = 1, .nrange = 1};
    d.hash[0] = (idx_key_attr){"g", KURA_S};
    d.range[0] = (idx_key_attr){"gs", KURA_N};
    d.projection = proj;
    if (proj == KURA_PROJECTION_INCLUDE) {
        d.include = include_xy;
        d.ninclude = 3;
    }
    return d;
}

static void test_copy_and_clear(void **state)
{
    (void)state;
    idx_def src = gsi(KURA_PROJECTION_INCLUDE), dst = {0};
    src.nhash = 2;
    src.hash[1] = (idx_key_attr){"g2", KURA_B};
    src.status = IDX_CREATING;
    src.rcu = 5;
    src.wcu = 6;
    assert_kura_ok(idx_def_copy(&dst, &src));
    assert_string_equal(dst.name, "gix");
    assert_ptr_not_equal(dst.name, src.name);
    assert_int_equal(dst.id, 7);
    assert_int_equal(dst.kind, IDX_GLOBAL);
    assert_int_equal(dst.nhash, 2);
    assert_string_equal(dst.hash[1].name, "g2");
    assert_ptr_not_equal(dst.hash[1].name, src.hash[1].name);
    assert_int_equal(dst.hash[1].type, KURA_B);
    assert_string_equal(dst.range[0].name, "gs");
    assert_null(dst.range[1].name);
    assert_int_equal(dst.ninclude, 3);
    assert_ptr_not_equal(dst.include, src.include);
    assert_string_equal(dst.include[2], "y");
    assert_int_equal(dst.status, IDX_CREATING);
    assert_int_equal(dst.rcu, 5);
    assert_int_equal(dst.wcu, 6);

    /* a copy of a copy, then clearing both leaves them zeroed (ASan checks the frees) */
    idx_def again = {0};
    assert_kura_ok(idx_def_copy(&again, &dst));
    idx_def_clear(&dst);
    idx_def zero = {0};
    assert_memory_equal(&dst, &zero, sizeof zero);
    assert_string_equal(again.include[0], "x");
    idx_def_clear(&again);
    idx_def_clear(&again); /* clearing a cleared definition is a no-op */
    idx_def_clear(NULL);

    idx_def keys_only = gsi(KURA_PROJECTION_KEYS_ONLY), kc = {0};
    assert_kura_ok(idx_def_copy(&kc, &keys_only));
    assert_null(kc.include);
    assert_int_equal(kc.ninclude, 0);
    idx_def_clear(&kc);
}

static void test_is_key_attr(void **state)
{
    (void)state;
    idx_def d = gsi(KURA_PROJECTION_ALL);
    assert_true(idx_is_key_attr(&d, "g", 1));
    assert_true(idx_is_key_attr(&d, "gs", 2));
    assert_true(idx_is_key_attr(&d, "gsX", 2)); /* names are length-bounded */
    assert_true(idx_is_key_attr(&d, "gs", 1));  /* the first byte: "g" */
    assert_false(idx_is_key_attr(&d, "g\0", 2));
    assert_false(idx_is_key_attr(&d, "pk", 2)); /* a table key is not an index key */
    assert_false(idx_is_key_attr(&d, "", 0));
    d.nrange = 0;
    assert_false(idx_is_key_attr(&d, "gs", 2));
}

static void test_projects(void **state)
{
    (void)state;
    idx_def all = gsi(KURA_PROJECTION_ALL), keys = gsi(KURA_PROJECTION_KEYS_ONLY),
            inc = gsi(KURA_PROJECTION_INCLUDE);
    static const char *names[] = {"pk", "sk", "g", "gs", "x", "y", "z", "missing", "p"};
    static const bool want_keys[] = {1, 1, 1, 1, 0, 0, 0, 0, 0};
    static const bool want_inc[] = {1, 1, 1, 1, 1, 1, 0, 1, 0};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t len = strlen(names[i]);
        assert_true(idx_projects(&all, &tbl, names[i], len));
        if (idx_projects(&keys, &tbl, names[i], len) != want_keys[i])
            fail_msg("KEYS_ONLY projects %s: expected %d", names[i], want_keys[i]);
        if (idx_projects(&inc, &tbl, names[i], len) != want_inc[i])
            fail_msg("INCLUDE projects %s: expected %d", names[i], want_inc[i]);
    }
    /* a hash-only table: "sk" is nothing special */
    const key_schema hash_only = {"pk", KURA_S, NULL, 0};
    assert_false(idx_projects(&keys, &hash_only, "sk", 2));
    assert_true(idx_projects(&keys, &hash_only, "pk", 2));
}

/* idx_project(item) equals `want`; idx_entry_value(item) is val_encode of it and decodes
 * back to it; appending keeps what the buffer held. */
static void check_projection(const idx_def *d, const key_schema *t, const char *item,
                             const char *want)
{
    const kura_value *it = tv(item);
    kura_value *proj = t_new_value();
    assert_kura_ok(idx_project(d, t, it, proj));
    assert_value(proj, want);

    kbuf enc = KBUF_INIT, val = KBUF_INIT;
    assert_true(kbuf_append(&val, "pre", 3));
    assert_kura_ok(val_encode(proj, &enc));
    assert_kura_ok(idx_entry_value(d, t, it, &val));
    assert_int_equal(val.len, 3 + enc.len);
    assert_memory_equal(val.data, "pre", 3);
    assert_memory_equal(val.data + 3, enc.data, enc.len);
    kura_value *back = t_new_value();
    assert_kura_ok(val_decode(val.data + 3, val.len - 3, back));
    assert_value(back, want);
    kbuf_free(&enc);
    kbuf_free(&val);
}

static void test_projections(void **state)
{
    (void)state;
    const char *item = "{pk: \"u\", sk: 1, g: \"a\", gs: 2, x: [1, {q: null}], y: SS(\"s\"), "
                       "z: b\"zz\", zz: true}";
    idx_def keys = gsi(KURA_PROJECTION_KEYS_ONLY), inc = gsi(KURA_PROJECTION_INCLUDE),
            all = gsi(KURA_PROJECTION_ALL);
    check_projection(&keys, &tbl, item, "{pk: \"u\", sk: 1, g: \"a\", gs: 2}");
    check_projection(&inc, &tbl, item,
                     "{pk: \"u\", sk: 1, g: \"a\", gs: 2, x: [1, {q: null}], y: SS(\"s\")}");
    check_projection(&all, &tbl, item, item);
    /* INCLUDE names the item lacks are skipped; so are absent index keys (a sparse item's
     * projection, should a caller ask for it) */
    check_projection(&inc, &tbl, "{pk: \"u\", sk: 1, g: \"a\", gs: 2, z: 1}",
                     "{pk: \"u\", sk: 1, g: \"a\", gs: 2}");
    check_projection(&inc, &tbl, "{pk: \"u\", sk: 1, y: 3}", "{pk: \"u\", sk: 1, y: 3}");

    /* an LSI's partition key is the table's: listed twice, stored once */
    idx_def lsi = {.name = "lix",
                   .kind = IDX_LOCAL,
                   .nhash = 1,
                   .nrange = 1,
                   .projection = KURA_PROJECTION_INCLUDE};
    lsi.hash[0] = (idx_key_attr){"pk", KURA_S};
    lsi.range[0] = (idx_key_attr){"ls", KURA_S};
    static char *inc_lsi[] = {"pk", "x", "ls", "x"};
    lsi.include = inc_lsi;
    lsi.ninclude = 4;
    check_projection(&lsi, &tbl, "{pk: \"u\", sk: 1, ls: \"l\", x: 5, w: 6}",
                     "{pk: \"u\", sk: 1, ls: \"l\", x: 5}");

    /* more INCLUDE names than the projection's small array holds */
    static char *many[40];
    static char buf[40][8];
    for (int i = 0; i < 40; i++) {
        snprintf(buf[i], sizeof buf[i], "a%02d", 39 - i);
        many[i] = buf[i];
    }
    idx_def wide = gsi(KURA_PROJECTION_INCLUDE);
    wide.include = many;
    wide.ninclude = 40;
    check_projection(&wide, &tbl, "{pk: \"u\", sk: 1, a00: 0, a17: 17, a39: 39, b: 1}",
                     "{pk: \"u\", sk: 1, a00: 0, a17: 17, a39: 39}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_and_clear),
        cmocka_unit_test(test_is_key_attr),
        cmocka_unit_test(test_projects),
        cmocka_unit_test_teardown(test_projections, t_free_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * idx_entry_test.c - entry keys (index/entry.c, docs/format/index.md): idx_check_item's
 * messages (DynamoDB's texts), the exact bytes of LSI and GSI entry keys (an LSI entry's hash
 * is its base item's storage-key hash), GSIs with 1-4 HASH and 0-4 RANGE attributes of mixed
 * types, sparse items, the order of entry keys (a seeded property test: within one tuple of
 * HASH values, memcmp order is DynamoDB's order of the RANGE values, then the table key), and
 * idx_entry_parse: round trips and every corruption it reports.
 */
#include "expr_testutil.h"

#include "index/index.h"
#include "util/hash.h"

static const key_schema tbl = {"pk", KURA_S, "sk", KURA_N};

static idx_def lsi(void)
{
    idx_def d = {.name = "lix",
                 .kind = IDX_LOCAL,
                 .nhash = 1,
                 .nrange = 1,
                 .projection = KURA_PROJECTION_KEYS_ONLY};
    d.hash[0] = (idx_key_attr){"pk", KURA_S};
    d.range[0] = (idx_key_attr){"ls", KURA_S};
    return d;
}

/* GSI (g S, g2 B; gs N, gs2 S). */
static idx_def gsi(void)
{
    idx_def d = {.name = "gix",
                 .kind = IDX_GLOBAL,
                 .nhash = 2,
                 .nrange = 2,
                 .projection = KURA_PROJECTION_ALL};
    d.hash[0] = (idx_key_attr){"g", KURA_S};
    d.hash[1] = (idx_key_attr){"g2", KURA_B};
    d.range[0] = (idx_key_attr){"gs", KURA_N};
    d.range[1] = (idx_key_attr){"gs2", KURA_S};
    return d;
}

static void enc(kbuf *b, const kura_value *v)
{
    assert_kura_ok(key_enc_value(v, b));
}

static const kura_value *get(const kura_value *m, const char *name)
{
    const kura_value *v = val_map_get(m, name, strlen(name));
    if (!v) fail_msg("no attribute %s", name);
    return v;
}

static void assert_msg(kura_status st, const char *msg)
{
    assert_int_equal(st, KURA_E_INVALID);
    if (strcmp(kura_last_error(), msg) != 0)
        fail_msg("message\n  \"%s\", expected\n  \"%s\"", kura_last_error(), msg);
}

#define MISMATCH "One or more parameter values were invalid: Type mismatch for Index Key "
#define EMPTY                                                                                      \
    "One or more parameter values are not valid. A value specified for a secondary index key "     \
    "is not supported. The AttributeValue for a key attribute cannot contain an empty "

static void test_check_item(void **state)
{
    (void)state;
    idx_def g = gsi(), l = lsi();
    assert_kura_ok(idx_check_item(&g, tv("{pk: \"u\", sk: 1}")));
    assert_kura_ok(idx_check_item(&g, tv("{pk: \"u\", sk: 1, g: \"a\", gs2: \"b\"}")));
    assert_kura_ok(idx_check_item(&l, tv("{pk: \"u\", sk: 1, ls: \"x\"}")));
    assert_msg(idx_check_item(&g, tv("{pk: \"u\", sk: 1, g: 1}")),
               MISMATCH "g Expected: S Actual: N IndexName: gix");
    assert_msg(idx_check_item(&g, tv("{pk: \"u\", sk: 1, gs: \"1\"}")),
               MISMATCH "gs Expected: N Actual: S IndexName: gix");
    assert_msg(idx_check_item(&g, tv("{pk: \"u\", sk: 1, g2: \"b\"}")),
               MISMATCH "g2 Expected: B Actual: S IndexName: gix");
    assert_msg(idx_check_item(&g, tv("{pk: \"u\", sk: 1, gs2: null}")),
               MISMATCH "gs2 Expected: S Actual: NULL IndexName: gix");
    assert_msg(idx_check_item(&g, tv("{pk: \"u\", sk: 1, g: SS(\"a\")}")),
               MISMATCH "g Expected: S Actual: SS IndexName: gix");
    assert_msg(idx_check_item(&l, tv("{pk: \"u\", sk: 1, ls: {}}")),
               MISMATCH "ls Expected: S Actual: M IndexName: lix");
    assert_msg(idx_check_item(&g, tv("{pk: \"u\", sk: 1, g: \"\"}")),
               EMPTY "string value. IndexName: gix, IndexKey: g");
    assert_msg(idx_check_item(&g, tv("{pk: \"u\", sk: 1, g2: b\"\"}")),
               EMPTY "binary value. IndexName: gix, IndexKey: g2");
    assert_msg(idx_check_item(&l, tv("{pk: \"u\", sk: 1, ls: \"\"}")),
               EMPTY "string value. IndexName: lix, IndexKey: ls");
    /* schema order, HASH first; each attribute's type before its emptiness */
    assert_msg(idx_check_item(&g, tv("{pk: \"u\", sk: 1, g: \"\", gs: \"x\"}")),
               EMPTY "string value. IndexName: gix, IndexKey: g");
    assert_msg(idx_check_item(&g, tv("{pk: \"u\", sk: 1, gs2: \"\", gs: \"x\"}")),
               MISMATCH "gs Expected: N Actual: S IndexName: gix");
}

static void test_lsi_key(void **state)
{
    (void)state;
    idx_def l = lsi();
    const kura_value *item = tv("{pk: \"user\x01x\", sk: -12.5, ls: \"b\", other: 1}");
    kbuf key = KBUF_INIT, base = KBUF_INIT, want = KBUF_INIT;
    bool present = false;
    assert_true(kbuf_append(&key, "xy", 2)); /* appended after what the buffer holds */
    assert_kura_ok(idx_entry_key(&l, &tbl, item, &key, &present));
    assert_true(present);
    assert_kura_ok(key_build(&tbl, item, KEY_FROM_ITEM, &base));
    /* hash64(enc(pk)) || enc(pk) || enc(ls) || enc(pk) || enc(sk) */
    assert_true(kbuf_append(&want, "xy", 2));
    assert_true(kbuf_append(&want, base.data, 8));
    enc(&want, get(item, "pk"));
    enc(&want, get(item, "ls"));
    enc(&want, get(item, "pk"));
    enc(&want, get(item, "sk"));
    assert_int_equal(key.len, want.len);
    assert_memory_equal(key.data, want.data, want.len);
    /* the same hash as the base item's storage key: the same partition */
    assert_memory_equal(key.data + 2, base.data, 8);
    kbuf_free(&key);
    kbuf_free(&base);
    kbuf_free(&want);
}

static void test_sparse(void **state)
{
    (void)state;
    idx_def g = gsi(), l = lsi();
    static const char *items[] = {
        "{pk: \"u\", sk: 1}",
        "{pk: \"u\", sk: 1, g2: b\"b\", gs: 1, gs2: \"c\"}",
        "{pk: \"u\", sk: 1, g: \"a\", gs: 1, gs2: \"c\"}",
        "{pk: \"u\", sk: 1, g: \"a\", g2: b\"b\", gs2: \"c\"}",
        "{pk: \"u\", sk: 1, g: \"a\", g2: b\"b\", gs: 1}",
    };
    kbuf key = KBUF_INIT;
    assert_true(kbuf_append(&key, "keep", 4));
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        bool present = true;
        assert_kura_ok(idx_entry_key(&g, &tbl, tv(items[i]), &key, &present));
        if (present) fail_msg("item %s has an entry", items[i]);
        assert_int_equal(key.len, 4);
    }
    bool present = true;
    assert_kura_ok(idx_entry_key(&l, &tbl, tv("{pk: \"u\", sk: 1, lz: \"x\"}"), &key, &present));
    assert_false(present);
    assert_kura_ok(idx_entry_key(&g, &tbl,
                                 tv("{pk: \"u\", sk: 1, g: \"a\", g2: b\"b\", gs: 1, "
                                    "gs2: \"c\"}"),
                                 &key, &present));
    assert_true(present);
    /* a wrong type that skipped idx_check_item is refused, not mis-encoded */
    size_t len = key.len;
    assert_msg(idx_entry_key(&g, &tbl,
                             tv("{pk: \"u\", sk: 1, g: 1, g2: b\"b\", gs: 1, "
                                "gs2: \"c\"}"),
                             &key, &present),
               MISMATCH "g Expected: S Actual: N IndexName: gix");
    assert_int_equal(key.len, len);
    kbuf_free(&key);
}

/* ---- GSIs of every shape ------------------------------------------------------------------ */

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    return (uint32_t)(test_rand(&rng) % n);
}

static const char *hash_names[] = {"h0", "h1", "h2", "h3"};
static const char *range_names[] = {"r0", "r1", "r2", "r3"};
static const kura_type types[] = {KURA_S, KURA_N, KURA_B};

static idx_def shape(uint32_t nh, uint32_t nr, uint32_t rot)
{
    idx_def d = {.name = "shape",
                 .kind = IDX_GLOBAL,
                 .nhash = nh,
                 .nrange = nr,
                 .projection = KURA_PROJECTION_KEYS_ONLY};
    for (uint32_t i = 0; i < nh; i++)
        d.hash[i] = (idx_key_attr){(char *)hash_names[i], types[(i + rot) % 3]};
    for (uint32_t i = 0; i < nr; i++)
        d.range[i] = (idx_key_attr){(char *)range_names[i], types[(i + rot + 1) % 3]};
    return d;
}

/* A value of type t from a small domain (so that tuples repeat), bytes with 0x00 and 0xFF. */
static void small_value(kura_value *v, kura_type t)
{
    static const char *nums[] = {"-10", "-1.5", "0", "0.001", "2", "10", "1e10"};
    static const struct {
        const char *p;
        size_t len;
    } bytes[] = {{"a", 1},    {"ab", 2},       {"a\x00", 2}, {"\x01", 1},
                 {"\xff", 1}, {"\xff\x00", 2}, {"b", 1}};
    memset(v, 0, sizeof *v);
    if (t == KURA_N) {
        kura_num n;
        const char *s = nums[rnd(7)];
        assert_kura_ok(num_parse(s, strlen(s), &n));
        val_set_num(v, &n);
    } else {
        uint32_t k = rnd(t == KURA_S ? 2 : 7); /* S: only valid UTF-8 ("a", "ab") */
        if (t == KURA_S && rnd(2)) k = 6;
        assert_kura_ok(val_set_bytes(v, t, bytes[k].p, bytes[k].len));
    }
}

/* A random item for index d: all key attributes, item number i as pk, a random sk. */
static kura_value *random_item(const idx_def *d, int i)
{
    kura_value *item = t_new_value();
    char pk[16];
    val_init_container(item, KURA_M);
    for (uint32_t k = 0; k < d->nhash + d->nrange; k++) {
        const idx_key_attr *ka = k < d->nhash ? &d->hash[k] : &d->range[k - d->nhash];
        kura_value v;
        small_value(&v, ka->type);
        assert_kura_ok(val_map_put(item, ka->name, strlen(ka->name), &v));
    }
    kura_value v = {0};
    snprintf(pk, sizeof pk, "item%03d", i);
    assert_kura_ok(val_set_bytes(&v, KURA_S, pk, strlen(pk)));
    assert_kura_ok(val_map_put(item, "pk", 2, &v));
    small_value(&v, KURA_N);
    assert_kura_ok(val_map_put(item, "sk", 2, &v));
    return item;
}

static int bytes_cmp(const kbuf *a, const kbuf *b)
{
    int c = memcmp(a->data, b->data, a->len < b->len ? a->len : b->len);
    if (c) return c < 0 ? -1 : 1;
    return (a->len > b->len) - (a->len < b->len);
}

/* DynamoDB's order of two items in index d within one HASH tuple: RANGE values, then the
 * table key; 2 when the HASH tuples differ. */
static int dynamo_cmp(const idx_def *d, const kura_value *a, const kura_value *b)
{
    for (uint32_t k = 0; k < d->nhash; k++)
        if (!val_equal(get(a, d->hash[k].name), get(b, d->hash[k].name))) return 2;
    const char *names[IDX_MAX_KEY_ATTRS + 2];
    uint32_t n = 0;
    for (uint32_t k = 0; k < d->nrange; k++)
        names[n++] = d->range[k].name;
    names[n++] = "pk";
    names[n++] = "sk";
    for (uint32_t k = 0; k < n; k++) {
        int c = val_cmp_scalar(get(a, names[k]), get(b, names[k]));
        if (c) return c < 0 ? -1 : 1;
    }
    return 0;
}

enum { NITEMS = 60 };

static void check_shape(uint32_t nh, uint32_t nr, uint32_t rot)
{
    idx_def d = shape(nh, nr, rot);
    kura_value *items[NITEMS];
    kbuf keys[NITEMS];
    for (int i = 0; i < NITEMS; i++) {
        items[i] = random_item(&d, i);
        keys[i] = (kbuf)KBUF_INIT;
        bool present = false;
        assert_kura_ok(idx_entry_key(&d, &tbl, items[i], &keys[i], &present));
        assert_true(present);
        /* the layout, part by part, and the hash over the HASH encodings only */
        kbuf want = KBUF_INIT, hashed = KBUF_INIT;
        for (uint32_t k = 0; k < nh; k++)
            enc(&hashed, get(items[i], d.hash[k].name));
        assert_true(kbuf_put_fixed64(&want, 0));
        enc_fixed64_be(want.data, kura_hash64(hashed.data, hashed.len));
        assert_true(kbuf_append(&want, hashed.data, hashed.len));
        for (uint32_t k = 0; k < nr; k++)
            enc(&want, get(items[i], d.range[k].name));
        enc(&want, get(items[i], "pk"));
        enc(&want, get(items[i], "sk"));
        if (bytes_cmp(&want, &keys[i]) != 0) fail_msg("shape %u/%u: entry key layout", nh, nr);
        /* round trip */
        kura_value *ik = t_new_value(), *tk = t_new_value();
        assert_kura_ok(idx_entry_parse(&d, &tbl, keys[i].data, keys[i].len, ik, tk));
        assert_int_equal(ik->u.map.n, nh + nr);
        assert_int_equal(tk->u.map.n, 2);
        for (uint32_t k = 0; k < ik->u.map.n; k++) {
            const kura_attr *a = &ik->u.map.a[k];
            assert_true(val_equal(&a->value, get(items[i], a->name)));
        }
        assert_true(val_equal(get(tk, "pk"), get(items[i], "pk")));
        assert_true(val_equal(get(tk, "sk"), get(items[i], "sk")));
        kbuf_free(&want);
        kbuf_free(&hashed);
    }
    for (int i = 0; i < NITEMS; i++)
        for (int j = 0; j < NITEMS; j++) {
            int want = dynamo_cmp(&d, items[i], items[j]), got = bytes_cmp(&keys[i], &keys[j]);
            if (want != 2 && want != got)
                fail_msg("shape %u/%u rot %u: items %d, %d: DynamoDB order %d, key order %d", nh,
                         nr, rot, i, j, want, got);
            /* two HASH tuples never interleave: a key of another tuple is outside the
             * tuple's prefix */
            size_t plen = 8;
            for (uint32_t k = 0; k < nh; k++) {
                kbuf e = KBUF_INIT;
                enc(&e, get(items[i], d.hash[k].name));
                plen += e.len;
                kbuf_free(&e);
            }
            bool same_prefix = keys[j].len >= plen && memcmp(keys[i].data, keys[j].data, plen) == 0;
            assert_int_equal(same_prefix, want != 2);
        }
    for (int i = 0; i < NITEMS; i++)
        kbuf_free(&keys[i]);
}

static void test_shapes(void **state)
{
    (void)state;
    rng = test_seed();
    for (uint32_t nh = 1; nh <= 4; nh++)
        for (uint32_t nr = 0; nr <= 4; nr++)
            for (uint32_t rot = 0; rot < 3; rot++)
                check_shape(nh, nr, rot);
}

/* ---- Parsing ------------------------------------------------------------------------------ */

static void assert_corrupt(const idx_def *d, const kbuf *key, const char *msg)
{
    kura_value ik = {0}, tk = {0};
    assert_kura_status(idx_entry_parse(d, &tbl, key->data, key->len, &ik, &tk), KURA_E_CORRUPTION);
    assert_int_equal(ik.type, 0); /* outputs untouched */
    assert_int_equal(tk.type, 0);
    if (strcmp(kura_last_error(), msg) != 0)
        fail_msg("message \"%s\", expected \"%s\"", kura_last_error(), msg);
}

static void test_parse(void **state)
{
    (void)state;
    idx_def g = gsi(), l = lsi();
    const kura_value *item =
        tv("{pk: \"u\", sk: 3, g: \"a\", g2: b\"\x01\xff\", gs: -1, gs2: \"z\", o: 1}");
    kbuf key = KBUF_INIT;
    bool present;
    assert_kura_ok(idx_entry_key(&g, &tbl, item, &key, &present));
    kura_value *ik = t_new_value(), *tk = t_new_value();
    assert_kura_ok(idx_entry_parse(&g, &tbl, key.data, key.len, ik, tk));
    assert_value(ik, "{g: \"a\", g2: b\"\x01\xff\", gs: -1, gs2: \"z\"}");
    assert_value(tk, "{pk: \"u\", sk: 3}");

    kbuf bad = KBUF_INIT;
    assert_true(kbuf_append(&bad, key.data, 7));
    assert_corrupt(&g, &bad, "index gix: entry key: 7 bytes, shorter than its hash");
    kbuf_clear(&bad);
    assert_true(kbuf_append(&bad, key.data, key.len));
    bad.data[0] ^= 1;
    assert_corrupt(&g, &bad, "index gix: entry key: hash prefix does not match the HASH values");
    kbuf_clear(&bad);
    assert_true(kbuf_append(&bad, key.data, key.len) && kbuf_put_u8(&bad, 0));
    assert_corrupt(&g, &bad, "index gix: entry key: 1 trailing bytes");
    kbuf_clear(&bad);
    assert_true(kbuf_append(&bad, key.data, key.len - 1)); /* sk cut short */
    assert_corrupt(&g, &bad, "index gix: entry key: bad N value of sk at byte 26");
    kbuf_clear(&bad);
    assert_true(kbuf_append(&bad, key.data, 8 + 3)); /* g, then g2 missing */
    assert_corrupt(&g, &bad, "index gix: entry key: bad B value of g2 at byte 11");
    kbuf_clear(&bad);
    assert_true(kbuf_append(&bad, key.data, key.len));
    bad.data[8 + 1] = 0; /* "a" 00 01 -> "a" 00 00: a bad escape in g */
    bad.data[8 + 2] = 0;
    assert_corrupt(&g, &bad, "index gix: entry key: bad S value of g at byte 8");

    /* an LSI's partition key appears twice and must agree */
    kbuf_clear(&key);
    item = tv("{pk: \"u\", sk: 3, ls: \"l\"}");
    assert_kura_ok(idx_entry_key(&l, &tbl, item, &key, &present));
    ik = t_new_value();
    tk = t_new_value();
    assert_kura_ok(idx_entry_parse(&l, &tbl, key.data, key.len, ik, tk));
    assert_value(ik, "{pk: \"u\", ls: \"l\"}");
    assert_value(tk, "{pk: \"u\", sk: 3}");
    kbuf_clear(&bad);
    assert_true(kbuf_append(&bad, key.data, 8 + 3 + 3)); /* hash, "u", "l" */
    enc(&bad, tv("\"v\""));
    enc(&bad, tv("3"));
    assert_corrupt(&l, &bad,
                   "index lix: entry key: pk differs between the index key and the table key");
    kbuf_free(&key);
    kbuf_free(&bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_check_item, t_free_all),
        cmocka_unit_test_teardown(test_lsi_key, t_free_all),
        cmocka_unit_test_teardown(test_sparse, t_free_all),
        cmocka_unit_test_teardown(test_shapes, t_free_all),
        cmocka_unit_test_teardown(test_parse, t_free_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

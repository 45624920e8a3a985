/*
 * idx_key_range_test.c - a Query's key condition on an index (index/key_range.c): the checks
 * and their messages (single-attribute keys: DynamoDB's texts, verified with DynamoDB Local
 * 1.25.1; multi-attribute keys: the AWS documentation's rules), and the ranges, proved by a
 * seeded property test: for GSIs of 1-4 HASH and 0-4 RANGE attributes of mixed types and
 * random conditions (equality on a prefix of the RANGE attributes, then = < <= > >= BETWEEN
 * or begins_with on the last one given), exactly the entry keys of the matching items fall
 * in [lo, hi).
 */
#include "expr_testutil.h"

#include "index/index.h"

static const key_schema tbl = {"pk", KURA_S, "sk", KURA_N};

static idx_def def1(const char *name, const char *h, kura_type ht, const char *r, kura_type rt,
                    idx_kind kind)
{
    idx_def d = {.name = (char *)name,
                 .kind = kind,
                 .nhash = 1,
                 .nrange = r ? 1 : 0,
                 .projection = KURA_PROJECTION_ALL};
    d.hash[0] = (idx_key_attr){(char *)h, ht};
    if (r) d.range[0] = (idx_key_attr){(char *)r, rt};
    return d;
}

/* Multi-attribute GSI "m": (h0 S, h1 N; r0 S, r1 N, r2 B). */
static idx_def multi(void)
{
    idx_def d = {.name = "m",
                 .kind = IDX_GLOBAL,
                 .nhash = 2,
                 .nrange = 3,
                 .projection = KURA_PROJECTION_ALL};
    d.hash[0] = (idx_key_attr){"h0", KURA_S};
    d.hash[1] = (idx_key_attr){"h1", KURA_N};
    d.range[0] = (idx_key_attr){"r0", KURA_S};
    d.range[1] = (idx_key_attr){"r1", KURA_N};
    d.range[2] = (idx_key_attr){"r2", KURA_B};
    return d;
}

#define VALUES                                                                                     \
    "{\":s\": \"x\", \":t\": \"y\", \":n\": 1, \":b\": b\"x\", \":e\": \"\", \":eb\": b\"\"}"

/* idx_key_range of the KeyConditionExpression `expr` over VALUES; lo and hi (appended). */
static kura_status range_of(const idx_def *d, const char *expr, kbuf *lo, kbuf *hi)
{
    const expr_node *root = t_parse_cond(EXPR_KEY_CONDITION, expr, NULL, VALUES);
    expr_key_term terms[8];
    uint32_t n = 0;
    assert_kura_ok(expr_key_terms(root, terms, 8, &n));
    return idx_key_range(d, &tbl, terms, n, lo, hi);
}

static void expect(const idx_def *d, const char *expr, const char *msg)
{
    kbuf lo = KBUF_INIT, hi = KBUF_INIT;
    assert_true(kbuf_append(&lo, "L", 1) && kbuf_append(&hi, "H", 1));
    kura_status st = range_of(d, expr, &lo, &hi);
    if (msg == NULL) {
        if (st != KURA_OK) fail_msg("%s: %s", expr, kura_last_error());
        assert_true(lo.len > 1 && hi.len > 1); /* both bounds always set */
    } else {
        if (st != KURA_E_INVALID || strcmp(kura_last_error(), msg) != 0)
            fail_msg("%s: status %d \"%s\", expected \"%s\"", expr, st, kura_last_error(), msg);
        assert_int_equal(lo.len, 1); /* untouched on failure */
        assert_int_equal(hi.len, 1);
    }
    assert_memory_equal(lo.data, "L", 1);
    assert_memory_equal(hi.data, "H", 1);
    kbuf_free(&lo);
    kbuf_free(&hi);
}

#define MISSED "Query condition missed key schema element: "
#define NOT_SUPPORTED "Query key condition not supported"
#define TYPE                                                                                       \
    "One or more parameter values were invalid: Condition parameter type does not match schema "   \
    "type"
#define LENGTH "Conditions can be of length 1 or 2 only"
#define EMPTY                                                                                      \
    "One or more parameter values are not valid. A value specified for a secondary index key "     \
    "is not supported. The AttributeValue for a key attribute cannot contain an empty "

/* Single-attribute keys: every message as DynamoDB Local 1.25.1 gives it for the same query
 * (it omits the ": <attr>" of the "missed" message, which the service prints). */
static void test_single_attribute_errors(void **state)
{
    (void)state;
    idx_def gix = def1("gix", "g", KURA_S, "gs", KURA_N, IDX_GLOBAL);
    idx_def gbi = def1("gbi", "gb", KURA_B, NULL, 0, IDX_GLOBAL);
    idx_def lix = def1("lix", "pk", KURA_S, "ls", KURA_S, IDX_LOCAL);
    expect(&gix, "g = :s", NULL);
    expect(&gix, "g = :s AND gs > :n", NULL);
    expect(&gix, "gs = :n", MISSED "g");
    expect(&gix, "g > :s", NOT_SUPPORTED);
    expect(&gix, "g BETWEEN :s AND :t", NOT_SUPPORTED);
    expect(&gix, "begins_with(g, :s)", NOT_SUPPORTED);
    expect(&gix, "g = :s AND gs = :n AND x = :n", LENGTH);
    expect(&gix, "g = :s AND x = :n", MISSED "gs");
    expect(&gix, "x = :n", MISSED "g");
    expect(&gix, "g = :s AND pk = :s", MISSED "gs"); /* a table key is no index key */
    expect(&gix, "g = :n", TYPE);
    expect(&gix, "g = :s AND gs = :s", TYPE);
    expect(&gix, "g = :s AND begins_with(gs, :s)", TYPE);
    expect(&gix, "g = :e", EMPTY "string value. IndexName: gix, IndexKey: g");
    expect(&gix, "g = :e AND gs = :s", EMPTY "string value. IndexName: gix, IndexKey: g");
    expect(&gbi, "gb = :b", NULL);
    expect(&gbi, "gb = :b AND pk = :s", NOT_SUPPORTED);
    expect(&gbi, "pk = :s", MISSED "gb");
    expect(&gbi, "gb = :s", TYPE);
    expect(&gbi, "gb = :eb", EMPTY "binary value. IndexName: gbi, IndexKey: gb");
    expect(&lix, "pk = :s AND ls > :s", NULL);
    expect(&lix, "pk = :s AND sk > :n", MISSED "ls");
    expect(&lix, "ls = :s", MISSED "pk");
    expect(&lix, "pk = :s AND ls = :n", TYPE);
    expect(&lix, "pk = :n AND ls = :e", TYPE);
    expect(&lix, "pk = :e AND x = :s", EMPTY "string value. IndexName: lix, IndexKey: pk");
    expect(&lix, "x = :s AND ls = :e", MISSED "pk");
    expect(&lix, "pk = :s AND ls = :e", EMPTY "string value. IndexName: lix, IndexKey: ls");
    expect(&lix, "pk = :s AND begins_with(ls, :e)",
           EMPTY "string value. IndexName: lix, IndexKey: ls");
    expect(&lix, "pk = :s AND ls BETWEEN :e AND :s",
           EMPTY "string value. IndexName: lix, IndexKey: ls");
}

/* Multi-attribute keys: the AWS documentation's rules, messages in the same style (not
 * verifiable against DynamoDB Local 1.25.1, which has no multi-attribute keys). */
static void test_multi_attribute_errors(void **state)
{
    (void)state;
    idx_def m = multi();
    expect(&m, "h0 = :s AND h1 = :n", NULL);
    expect(&m, "h1 = :n AND h0 = :s AND r0 = :s", NULL); /* any order of terms */
    expect(&m, "h0 = :s AND h1 = :n AND r0 = :s AND r1 = :n AND begins_with(r2, :b)", NULL);
    expect(&m, "h0 = :s AND h1 = :n AND r0 = :s AND r1 BETWEEN :n AND :n", NULL);
    /* a HASH attribute missing, or without equality */
    expect(&m, "h0 = :s", MISSED "h1");
    expect(&m, "h1 = :n AND r0 = :s", MISSED "h0");
    expect(&m, "h0 = :s AND h1 > :n", NOT_SUPPORTED);
    expect(&m, "begins_with(h0, :s) AND h1 = :n", NOT_SUPPORTED);
    /* a RANGE attribute skipped */
    expect(&m, "h0 = :s AND h1 = :n AND r1 = :n", MISSED "r0");
    expect(&m, "h0 = :s AND h1 = :n AND r0 = :s AND r2 = :b", MISSED "r1");
    /* a range condition on a RANGE attribute that is not the last given */
    expect(&m, "h0 = :s AND h1 = :n AND r0 > :s AND r1 = :n", NOT_SUPPORTED);
    expect(&m, "h0 = :s AND h1 = :n AND r0 = :s AND r1 <= :n AND r2 = :b", NOT_SUPPORTED);
    expect(&m, "h0 = :s AND h1 = :n AND begins_with(r0, :s) AND r1 = :n", NOT_SUPPORTED);
    /* an attribute outside the key schema */
    expect(&m, "h0 = :s AND h1 = :n AND x = :s", MISSED "r0");
    expect(&m, "h0 = :s AND h1 = :n AND r0 = :s AND x = :s", MISSED "r1");
    expect(&m, "h0 = :s AND h1 = :n AND r0 = :s AND r1 = :n AND r2 = :b AND x = :s", NOT_SUPPORTED);
    expect(&m, "h0 = :s AND x = :s", MISSED "h1");
    /* values of the wrong type, or empty */
    expect(&m, "h0 = :s AND h1 = :s", TYPE);
    expect(&m, "h0 = :s AND h1 = :n AND r0 = :s AND r1 = :n AND r2 = :s", TYPE);
    expect(&m, "h0 = :s AND h1 = :n AND r0 > :n", TYPE);
    expect(&m, "h0 = :s AND h1 = :n AND r0 = :e", EMPTY "string value. IndexName: m, IndexKey: r0");
    expect(&m, "h0 = :s AND h1 = :n AND r0 = :s AND r1 = :n AND begins_with(r2, :eb)",
           EMPTY "binary value. IndexName: m, IndexKey: r2");
    /* hash-only multi-attribute key: a term beyond the HASH attributes */
    idx_def hm = multi();
    hm.nrange = 0;
    expect(&hm, "h0 = :s AND h1 = :n", NULL);
    expect(&hm, "h0 = :s AND h1 = :n AND r0 = :s", NOT_SUPPORTED);
}

/* ---- The property test --------------------------------------------------------------------- */

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

/* A pooled value of type t from a small domain (negative numbers end in 0xFF; binaries hold
 * 0x00 and 0xFF); `prefix`: a non-empty prefix of an S or B domain value instead. */
static const kura_value *small_value(kura_type t, bool prefix)
{
    static const char *nums[] = {"-10", "-1.5", "0", "0.001", "2", "10", "1e10"};
    static const struct {
        const char *p;
        size_t len;
    } bytes[] = {{"a", 1},    {"ab", 2},   {"b", 1},       {"a\x00", 2},
                 {"\x01", 1}, {"\xff", 1}, {"\xff\x00", 2}};
    kura_value *v = t_new_value();
    if (t == KURA_N) {
        kura_num n;
        const char *s = nums[rnd(7)];
        assert_kura_ok(num_parse(s, strlen(s), &n));
        val_set_num(v, &n);
        return v;
    }
    uint32_t k = rnd(t == KURA_S ? 3 : 7); /* S: the valid UTF-8 ones */
    size_t len = prefix ? 1 + rnd((uint32_t)bytes[k].len) : bytes[k].len;
    assert_kura_ok(val_set_bytes(v, t, bytes[k].p, len));
    return v;
}

static kura_value *random_item(const idx_def *d, int i)
{
    kura_value *item = t_new_value();
    char pk[16];
    val_init_container(item, KURA_M);
    for (uint32_t k = 0; k < d->nhash + d->nrange; k++) {
        const idx_key_attr *ka = k < d->nhash ? &d->hash[k] : &d->range[k - d->nhash];
        kura_value v = {0};
        assert_kura_ok(val_copy(&v, small_value(ka->type, false)));
        assert_kura_ok(val_map_put(item, ka->name, strlen(ka->name), &v));
    }
    kura_value v = {0};
    snprintf(pk, sizeof pk, "item%03d", i);
    assert_kura_ok(val_set_bytes(&v, KURA_S, pk, strlen(pk)));
    assert_kura_ok(val_map_put(item, "pk", 2, &v));
    assert_kura_ok(val_copy(&v, small_value(KURA_N, false)));
    assert_kura_ok(val_map_put(item, "sk", 2, &v));
    return item;
}

static const kura_value *get(const kura_value *m, const char *name)
{
    return val_map_get(m, name, strlen(name));
}

/* Whether `item` satisfies term kt, by DynamoDB's semantics. */
static bool term_matches(const kura_value *item, const expr_key_term *kt)
{
    char name[8];
    snprintf(name, sizeof name, "%.*s", (int)kt->name_len, kt->name);
    const kura_value *v = get(item, name);
    int c = val_cmp_scalar(v, kt->v1);
    switch (kt->op) {
    case EXPR_OP_EQ:
        return c == 0;
    case EXPR_OP_LT:
        return c < 0;
    case EXPR_OP_LE:
        return c <= 0;
    case EXPR_OP_GT:
        return c > 0;
    case EXPR_OP_GE:
        return c >= 0;
    case EXPR_OP_BETWEEN:
        return c >= 0 && val_cmp_scalar(v, kt->v2) <= 0;
    case EXPR_OP_BEGINS_WITH:
        return v->u.bytes.len >= kt->v1->u.bytes.len &&
               memcmp(v->u.bytes.p, kt->v1->u.bytes.p, kt->v1->u.bytes.len) == 0;
    default:
        fail_msg("op %d", kt->op);
    }
    return false;
}

static int bytes_cmp(const uint8_t *a, size_t alen, const kbuf *b)
{
    int c = memcmp(a, b->data, alen < b->len ? alen : b->len);
    if (c) return c;
    return (alen > b->len) - (alen < b->len);
}

/* A random condition on d: equality on every HASH attribute (values of item `b`), then k
 * RANGE attributes, the last with a random operator; shuffled. Returns the term count. */
static uint32_t random_condition(const idx_def *d, const kura_value *b, expr_key_term *terms)
{
    static const expr_op ops[] = {EXPR_OP_EQ, EXPR_OP_LT,      EXPR_OP_LE,         EXPR_OP_GT,
                                  EXPR_OP_GE, EXPR_OP_BETWEEN, EXPR_OP_BEGINS_WITH};
    uint32_t n = 0, k = rnd(d->nrange + 1);
    for (uint32_t i = 0; i < d->nhash + k; i++) {
        const idx_key_attr *ka = i < d->nhash ? &d->hash[i] : &d->range[i - d->nhash];
        expr_key_term *t = &terms[n++];
        *t = (expr_key_term){ka->name, (uint32_t)strlen(ka->name), EXPR_OP_EQ, get(b, ka->name),
                             NULL};
        if (i + 1 < d->nhash + k || i < d->nhash) {
            if (i >= d->nhash && rnd(8) == 0) t->v1 = small_value(ka->type, false);
            continue;
        }
        t->op = ops[rnd(ka->type == KURA_N ? 6 : 7)];
        if (rnd(2)) t->v1 = small_value(ka->type, t->op == EXPR_OP_BEGINS_WITH);
        if (t->op == EXPR_OP_BETWEEN) {
            t->v2 = small_value(ka->type, false);
            if (val_cmp_scalar(t->v1, t->v2) > 0) {
                const kura_value *x = t->v1;
                t->v1 = t->v2;
                t->v2 = x;
            }
        }
    }
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = rnd(i);
        expr_key_term x = terms[i - 1];
        terms[i - 1] = terms[j];
        terms[j] = x;
    }
    return n;
}

enum { NITEMS = 50, NCONDS = 80 };

/* Per operator of the last term (EXPR_OP_EQ .. EXPR_OP_BEGINS_WITH), the conditions that
 * matched some items and missed others: each operator must have been tried for real. */
static uint32_t op_split[EXPR_OP_BEGINS_WITH + 1];

static void check_shape(uint32_t nh, uint32_t nr, uint32_t rot, uint32_t *nmatched)
{
    idx_def d = shape(nh, nr, rot);
    kura_value *items[NITEMS];
    kbuf keys[NITEMS];
    for (int i = 0; i < NITEMS; i++) {
        bool present = false;
        items[i] = random_item(&d, i);
        keys[i] = (kbuf)KBUF_INIT;
        assert_kura_ok(idx_entry_key(&d, &tbl, items[i], &keys[i], &present));
    }
    for (int c = 0; c < NCONDS; c++) {
        expr_key_term terms[2 * IDX_MAX_KEY_ATTRS];
        uint32_t n = random_condition(&d, items[rnd(NITEMS)], terms);
        kbuf lo = KBUF_INIT, hi = KBUF_INIT;
        assert_kura_ok(idx_key_range(&d, &tbl, terms, n, &lo, &hi));
        uint32_t hits = 0;
        expr_op last = EXPR_OP_EQ;
        for (uint32_t t = 0; t < n; t++)
            if (terms[t].op != EXPR_OP_EQ) last = terms[t].op;
        for (int i = 0; i < NITEMS; i++) {
            bool want = true;
            for (uint32_t t = 0; t < n && want; t++)
                want = term_matches(items[i], &terms[t]);
            bool got = bytes_cmp(keys[i].data, keys[i].len, &lo) >= 0 &&
                       bytes_cmp(keys[i].data, keys[i].len, &hi) < 0;
            if (want != got) {
                char buf[1024] = "";
                tv_print(items[i], buf, sizeof buf);
                fail_msg("shape %u/%u/%u, condition %d (%u terms, last op %d): item %s %s", nh, nr,
                         rot, c, n, terms[n - 1].op, buf,
                         want ? "matches but is outside the range" : "is inside but no match");
            }
            hits += want;
        }
        *nmatched += hits;
        if (hits > 0 && hits < NITEMS) op_split[last]++;
        kbuf_free(&lo);
        kbuf_free(&hi);
    }
    for (int i = 0; i < NITEMS; i++)
        kbuf_free(&keys[i]);
}

static void test_ranges_property(void **state)
{
    (void)state;
    uint32_t nmatched = 0;
    rng = test_seed() ^ 0x51ed270b;
    for (uint32_t nh = 1; nh <= 4; nh++)
        for (uint32_t nr = 0; nr <= 4; nr++)
            for (uint32_t rot = 0; rot < 3; rot++)
                check_shape(nh, nr, rot, &nmatched);
    /* the conditions are drawn from the items' own values, so many match */
    assert_true(nmatched > 10000);
    static const expr_op ops[] = {EXPR_OP_EQ, EXPR_OP_LT,      EXPR_OP_LE,         EXPR_OP_GT,
                                  EXPR_OP_GE, EXPR_OP_BETWEEN, EXPR_OP_BEGINS_WITH};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (op_split[ops[i]] < 20)
            fail_msg("operator %d split the items %u times", ops[i], op_split[ops[i]]);
}

/* The ranges of one LSI query, byte for byte: [hash || "u" || "b", succ(hash || "u" || "b")). */
static void test_range_bytes(void **state)
{
    (void)state;
    idx_def lix = def1("lix", "pk", KURA_S, "ls", KURA_S, IDX_LOCAL);
    kbuf lo = KBUF_INIT, hi = KBUF_INIT, base = KBUF_INIT;
    assert_kura_ok(range_of(&lix, "pk = :s AND begins_with(ls, :t)", &lo, &hi));
    assert_kura_ok(key_build(&tbl, tv("{pk: \"x\", sk: 1}"), KEY_FROM_ITEM, &base));
    assert_int_equal(lo.len, 8 + 3 + 1);
    assert_memory_equal(lo.data, base.data, 8 + 3); /* the item's hash and enc(pk) */
    assert_memory_equal(lo.data + 11, "y", 1);
    assert_int_equal(hi.len, lo.len);
    assert_memory_equal(hi.data, lo.data, 11);
    assert_int_equal(hi.data[11], 'z');
    kbuf_free(&lo);
    kbuf_free(&hi);
    kbuf_free(&base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_single_attribute_errors, t_free_all),
        cmocka_unit_test_teardown(test_multi_attribute_errors, t_free_all),
        cmocka_unit_test_teardown(test_ranges_property, t_free_all),
        cmocka_unit_test_teardown(test_range_bytes, t_free_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

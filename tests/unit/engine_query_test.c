/*
 * engine_query_test.c - Query and Scan through the C API: every sort key condition on S, N and
 * B sort keys against a brute-force oracle, in both directions and paginated; Limit,
 * LastEvaluatedKey / ExclusiveStartKey pagination for many page sizes; the 1 MB page limit;
 * filters, Select COUNT, projections; capacity; parallel-scan segments (their union is the
 * table, they are disjoint, each in hash order); stored-item corruption; and every error
 * message Query and Scan emit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/page.h"
#include "engine/table.h"
#include "testutil.h"

/* ---- Fixture and helpers ------------------------------------------------------------------ */

typedef struct fixture {
    char *dir;
    kura_db *db;
} fixture;

static int fx_setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    o.default_partitions = 4;
    f->dir = test_mkdtemp("query");
    assert_kura_ok(kura_open(f->dir, &o, &f->db));
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    fixture *f = *state;
    assert_kura_ok(kura_close(f->db));
    test_rmrf(f->dir);
    free(f);
    return 0;
}

static kura_value *S(const char *s)
{
    return kura_value_s(s, strlen(s));
}

static kura_value *N(const char *s)
{
    return kura_value_n(s, strlen(s));
}

static kura_value *B(const void *p, size_t len)
{
    return kura_value_b(p, len);
}

/* A map of (name, value) pairs, ending with a NULL name. Takes the values. */
static kura_value *M(const char *name, ...)
{
    kura_value *m = kura_value_map();
    va_list ap;
    va_start(ap, name);
    for (; name; name = va_arg(ap, const char *)) {
        kura_value *v = va_arg(ap, kura_value *);
        assert_non_null(v);
        assert_kura_ok(kura_value_map_put(m, name, strlen(name), v));
    }
    va_end(ap);
    return m;
}

/* Creates table `name` with key pk (and sk unless sk_type is 0). */
static void make_table(kura_db *db, const char *name, kura_type pk_type, kura_type sk_type,
                       uint32_t partitions)
{
    kura_attribute_definition defs[2] = {{"pk", pk_type}, {"sk", sk_type}};
    kura_key_schema_element ks[2] = {{"pk", false}, {"sk", true}};
    kura_create_table_req r = {.table_name = name,
                               .attribute_definitions = defs,
                               .attribute_definitions_count = sk_type ? 2 : 1,
                               .key_schema = ks,
                               .key_schema_count = sk_type ? 2 : 1,
                               .billing_mode = KURA_BILLING_PAY_PER_REQUEST,
                               .partitions = partitions};
    kura_table_description d;
    assert_kura_ok(kura_create_table(db, &r, &d));
    kura_table_description_free(&d);
}

/* PutItem of `item` (taken). */
static void put(kura_db *db, const char *table, kura_value *item)
{
    kura_put_item_req r = {.table_name = table, .item = item};
    kura_write_result res;
    assert_kura_ok(kura_put_item(db, &r, &res));
    kura_write_result_free(&res);
    kura_value_free(item);
}

/* Expects `s` to be `want` with exactly the message `msg`. */
static void expect_err(kura_status s, kura_status want, const char *msg)
{
    if (s != want || strcmp(kura_last_error(), msg) != 0)
        fail_msg("got %s \"%s\"\nwant %s \"%s\"", kura_status_str(s), kura_last_error(),
                 kura_status_str(want), msg);
}

/* Every page of a query (or scan when sreq is given), `limit` items per page, until no
 * LastEvaluatedKey is returned. The items are cloned into *items_out (free with free_items);
 * *pages_out counts the pages. Checks that LastEvaluatedKey is the key of the last item read
 * whenever a page without a filter returned items. */
typedef struct collected {
    kura_value **items;
    size_t n, cap;
    uint64_t scanned;
    uint32_t pages;
} collected;

static void collected_free(collected *c)
{
    for (size_t i = 0; i < c->n; i++)
        kura_value_free(c->items[i]);
    free(c->items);
    memset(c, 0, sizeof *c);
}

static void collect_page(collected *c, const kura_page *p)
{
    c->pages++;
    c->scanned += p->scanned_count;
    size_t n = kura_value_count(p->items);
    assert_int_equal(n, p->count);
    for (size_t i = 0; i < n; i++) {
        if (c->n == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 64;
            c->items = realloc(c->items, c->cap * sizeof *c->items);
        }
        c->items[c->n++] = kura_value_clone(kura_value_at(p->items, i, NULL, NULL));
    }
}

static void collect_query(kura_db *db, kura_query_req r, uint32_t limit, collected *c)
{
    kura_value *esk = NULL;
    memset(c, 0, sizeof *c);
    r.limit = limit;
    for (;;) {
        kura_page p;
        r.exclusive_start_key = esk;
        assert_kura_ok(kura_query(db, &r, &p));
        kura_value_free(esk);
        collect_page(c, &p);
        if (limit) assert_true(p.scanned_count <= limit);
        esk = p.last_evaluated_key ? kura_value_clone(p.last_evaluated_key) : NULL;
        if (limit && !esk) assert_true(p.scanned_count < limit);
        kura_page_free(&p);
        if (!esk) break;
        assert_true(c->pages < 100000);
    }
}

static void collect_scan(kura_db *db, kura_scan_req r, uint32_t limit, collected *c)
{
    kura_value *esk = NULL;
    memset(c, 0, sizeof *c);
    r.limit = limit;
    for (;;) {
        kura_page p;
        r.exclusive_start_key = esk;
        assert_kura_ok(kura_scan(db, &r, &p));
        kura_value_free(esk);
        collect_page(c, &p);
        esk = p.last_evaluated_key ? kura_value_clone(p.last_evaluated_key) : NULL;
        kura_page_free(&p);
        if (!esk) break;
    }
}

/* ---- Sort key conditions against an oracle -------------------------------------------------- */

/* A test value: bytes for S and B, the decimal string for N. */
typedef struct tval {
    const char *p;
    size_t len;
} tval;

#define TV(s)                                                                                      \
    {                                                                                              \
        s, sizeof(s) - 1                                                                           \
    }

static kura_value *tval_make(kura_type type, const tval *t)
{
    if (type == KURA_N) return kura_value_n(t->p, t->len);
    if (type == KURA_S) return kura_value_s(t->p, t->len);
    return kura_value_b(t->p, t->len);
}

/* DynamoDB's order, computed independently of the engine: bytes (shorter first) or numbers. */
static int tval_cmp(kura_type type, const tval *a, const tval *b)
{
    if (type == KURA_N) {
        double x = strtod(a->p, NULL), y = strtod(b->p, NULL);
        return x < y ? -1 : x > y;
    }
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->p, b->p, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

enum { OP_EQ, OP_LT, OP_LE, OP_GT, OP_GE, OP_BETWEEN, OP_BEGINS, OP_NONE };

static bool oracle_match(kura_type type, int op, const tval *sk, const tval *a, const tval *b)
{
    switch (op) {
    case OP_EQ:
        return tval_cmp(type, sk, a) == 0;
    case OP_LT:
        return tval_cmp(type, sk, a) < 0;
    case OP_LE:
        return tval_cmp(type, sk, a) <= 0;
    case OP_GT:
        return tval_cmp(type, sk, a) > 0;
    case OP_GE:
        return tval_cmp(type, sk, a) >= 0;
    case OP_BETWEEN:
        return tval_cmp(type, sk, a) >= 0 && tval_cmp(type, sk, b) <= 0;
    case OP_BEGINS:
        return sk->len >= a->len && memcmp(sk->p, a->p, a->len) == 0;
    default:
        return true;
    }
}

static const char *const op_expr[] = {
    "pk = :p AND sk = :a",
    "pk = :p AND sk < :a",
    "pk = :p AND sk <= :a",
    "pk = :p AND sk > :a",
    ":p = pk AND sk >= :a",
    "pk = :p AND sk BETWEEN :a AND :b",
    "pk = :p AND begins_with(sk, :a)",
    "pk = :p",
};

/* The sort key values of `c`'s items must be exactly sks[order[0..n)] in that order. */
static void expect_sks(const collected *c, kura_type type, const tval *sks, const int *order,
                       size_t n, const char *what)
{
    if (c->n != n) fail_msg("%s: %zu items, expected %zu", what, c->n, n);
    for (size_t i = 0; i < n; i++) {
        kura_value *want = tval_make(type, &sks[order[i]]);
        const kura_value *got = kura_value_get(c->items[i], "sk", 2);
        if (!got || !val_equal(got, want))
            fail_msg("%s: item %zu is not sk #%d", what, i, order[i]);
        kura_value_free(want);
    }
}

/* Runs one condition in both directions, unpaginated and 2 items a page. */
static void check_condition(kura_db *db, const char *table, kura_type type, const tval *pk,
                            const tval *sks, const int *sorted, size_t nsks, int op, const tval *a,
                            const tval *b)
{
    kura_value *vals = M(":p", tval_make(type == KURA_N ? KURA_S : type, pk), NULL);
    if (op != OP_NONE) assert_kura_ok(kura_value_map_put(vals, ":a", 2, tval_make(type, a)));
    if (op == OP_BETWEEN) assert_kura_ok(kura_value_map_put(vals, ":b", 2, tval_make(type, b)));
    int expect[64], nexp = 0, rev[64];
    for (size_t i = 0; i < nsks; i++)
        if (oracle_match(type, op, &sks[sorted[i]], a, b)) expect[nexp++] = sorted[i];
    for (int i = 0; i < nexp; i++)
        rev[i] = expect[nexp - 1 - i];
    kura_query_req r = {
        .table_name = table, .key_condition_expression = op_expr[op], .expr.values = vals};
    char what[256];
    for (int back = 0; back < 2; back++) {
        for (uint32_t limit = 0; limit <= 2; limit += 2) {
            collected c;
            r.scan_index_backward = back;
            collect_query(db, r, limit, &c);
            snprintf(what, sizeof what, "%s type %d op %d limit %u back %d", op_expr[op], (int)type,
                     op, limit, back);
            expect_sks(&c, type, sks, back ? rev : expect, (size_t)nexp, what);
            collected_free(&c);
        }
    }
    kura_value_free(vals);
}

/* Stores every sk under pk and two neighbouring partition keys, then checks every condition
 * with every probe (and every ordered probe pair for BETWEEN). */
static void check_all_conditions(kura_db *db, const char *table, kura_type type, const tval *pks,
                                 const tval *sks, size_t nsks, const tval *probes, size_t nprobes)
{
    kura_type pk_type = type == KURA_N ? KURA_S : type;
    make_table(db, table, pk_type, type, 4);
    for (int p = 0; p < 3; p++)
        for (size_t i = 0; i < nsks; i++)
            put(db, table,
                M("pk", tval_make(pk_type, &pks[p]), "sk", tval_make(type, &sks[i]), "n",
                  kura_value_n("7", 1), NULL));
    int sorted[64];
    for (size_t i = 0; i < nsks; i++)
        sorted[i] = (int)i;
    for (size_t i = 1; i < nsks; i++) /* insertion sort by the oracle */
        for (size_t j = i; j > 0 && tval_cmp(type, &sks[sorted[j - 1]], &sks[sorted[j]]) > 0; j--) {
            int tmp = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = tmp;
        }
    check_condition(db, table, type, &pks[1], sks, sorted, nsks, OP_NONE, NULL, NULL);
    for (size_t i = 0; i < nprobes; i++) {
        for (int op = OP_EQ; op <= OP_GE; op++)
            check_condition(db, table, type, &pks[1], sks, sorted, nsks, op, &probes[i], NULL);
        if (type != KURA_N)
            check_condition(db, table, type, &pks[1], sks, sorted, nsks, OP_BEGINS, &probes[i],
                            NULL);
        for (size_t j = 0; j < nprobes; j++)
            if (tval_cmp(type, &probes[i], &probes[j]) <= 0)
                check_condition(db, table, type, &pks[1], sks, sorted, nsks, OP_BETWEEN, &probes[i],
                                &probes[j]);
    }
}

static void test_conditions_s(void **state)
{
    fixture *f = *state;
    const tval pks[] = {TV("o"), TV("p"), TV("p\x01")};
    const tval sks[] = {TV("a"),        TV("ab"),    TV("abc"), TV("abd"), TV("b"),
                        TV("ba"),       TV("A"),     TV("0"),   TV("z"),   TV("\xc3\xa9t\xc3\xa9"),
                        TV("\xc3\xa9"), TV("a\x7f"), TV("~~")};
    const tval probes[] = {TV("a"),    TV("ab"),        TV("abc"),      TV("aa"), TV("b"), TV("0"),
                           TV("\x01"), TV("\xc3\xa9t"), TV("\xc3\xa9"), TV("zz"), TV("~"), TV("A")};
    check_all_conditions(f->db, "ts_t", KURA_S, pks, sks, sizeof sks / sizeof *sks, probes,
                         sizeof probes / sizeof *probes);
}

static void test_conditions_n(void **state)
{
    fixture *f = *state;
    const tval pks[] = {TV("n0"), TV("n1"), TV("n2")};
    const tval sks[] = {TV("-100.5"), TV("-1.5"), TV("-1"),    TV("-0.25"), TV("0"),
                        TV("0.001"),  TV("1"),    TV("1.5"),   TV("2"),     TV("10"),
                        TV("100.5"),  TV("1e10"), TV("-1e-10")};
    const tval probes[] = {TV("-1000"), TV("-1.5"),   TV("-1.25"),  TV("-0"),
                           TV("0"),     TV("0.0005"), TV("1.50"),   TV("2"),
                           TV("9.99"),  TV("1E10"),   TV("-1e-10"), TV("1e100")};
    check_all_conditions(f->db, "tn_t", KURA_N, pks, sks, sizeof sks / sizeof *sks, probes,
                         sizeof probes / sizeof *probes);
}

static void test_conditions_b(void **state)
{
    fixture *f = *state;
    const tval pks[] = {TV("\x00"), TV("\x00\x00"), TV("\x00\x01")};
    const tval sks[] = {TV("\x00"),     TV("\x00\x00"), TV("\x00\x01"),    TV("\x00\xff"),
                        TV("\x01"),     TV("\x01\x00"), TV("\x7f"),        TV("\xff"),
                        TV("\xff\xff"), TV("\xff\x00"), TV("\x00\x00\x00")};
    const tval probes[] = {TV("\x00"),     TV("\x00\x00"),     TV("\x00\xff"),
                           TV("\x01"),     TV("\x01\x00"),     TV("\xff"),
                           TV("\xff\xff"), TV("\xff\xff\xff"), TV("\x80")};
    check_all_conditions(f->db, "tb_t", KURA_B, pks, sks, sizeof sks / sizeof *sks, probes,
                         sizeof probes / sizeof *probes);
}

/* ---- Pagination ------------------------------------------------------------------------------ */

static void fill_numbered(kura_db *db, const char *table, const char *pk, int n)
{
    for (int i = 0; i < n; i++) {
        char num[16];
        snprintf(num, sizeof num, "%d", i);
        put(db, table,
            M("pk", S(pk), "sk", N(num), "x", N(i % 3 == 0 ? "0" : "1"), "filler",
              S("some padding"), NULL));
    }
}

static bool same_items(const collected *a, const collected *b)
{
    if (a->n != b->n) return false;
    for (size_t i = 0; i < a->n; i++)
        if (!val_equal(a->items[i], b->items[i])) return false;
    return true;
}

static void test_pagination(void **state)
{
    fixture *f = *state;
    make_table(f->db, "pg_t", KURA_S, KURA_N, 4);
    fill_numbered(f->db, "pg_t", "p", 200);
    fill_numbered(f->db, "pg_t", "o", 5);
    fill_numbered(f->db, "pg_t", "q", 5);
    kura_value *vals = M(":p", S("p"), ":z", N("0"), NULL);
    const uint32_t limits[] = {1, 2, 3, 7, 50, 199, 200, 201};
    for (int filt = 0; filt < 2; filt++) {
        for (int back = 0; back < 2; back++) {
            kura_value *vp = M(":p", S("p"), NULL); /* without the filter :z is unused */
            kura_query_req r = {.table_name = "pg_t",
                                .key_condition_expression = "pk = :p",
                                .expr.values = filt ? vals : vp,
                                .scan_index_backward = back,
                                .filter_expression = filt ? "x = :z" : NULL};
            collected all;
            collect_query(f->db, r, 0, &all);
            assert_int_equal(all.pages, 1);
            assert_int_equal(all.n, filt ? 67 : 200);
            assert_int_equal(all.scanned, 200);
            for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
                collected c;
                collect_query(f->db, r, limits[i], &c);
                if (!same_items(&c, &all))
                    fail_msg("limit %u back %d filter %d: pages differ from one query", limits[i],
                             back, filt);
                assert_int_equal(c.scanned, 200);
                /* a page that reads exactly Limit items has a LastEvaluatedKey, even the last
                 * one: 200 / limit pages, plus an empty one when limit divides 200 */
                assert_int_equal(c.pages, 200 / limits[i] + 1);
                collected_free(&c);
            }
            collected_free(&all);
            kura_value_free(vp);
        }
    }
    kura_value_free(vals);
}

/* Limit reached on the last item: LastEvaluatedKey is that item's key, and the next page is
 * empty without one (DynamoDB Local 1.25.1 and dynalite agree). */
static void test_limit_at_end(void **state)
{
    fixture *f = *state;
    make_table(f->db, "le_t", KURA_S, KURA_N, 2);
    fill_numbered(f->db, "le_t", "p", 3);
    kura_value *vals = M(":p", S("p"), NULL);
    kura_query_req r = {.table_name = "le_t",
                        .key_condition_expression = "pk = :p",
                        .expr.values = vals,
                        .limit = 3};
    kura_page p;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 3);
    assert_int_equal(p.scanned_count, 3);
    assert_non_null(p.last_evaluated_key);
    assert_int_equal(kura_value_count(p.last_evaluated_key), 2);
    kura_value *want = M("pk", S("p"), "sk", N("2"), NULL);
    assert_true(val_equal(p.last_evaluated_key, want));
    kura_value_free(want);
    r.exclusive_start_key = p.last_evaluated_key;
    kura_page p2;
    assert_kura_ok(kura_query(f->db, &r, &p2));
    assert_int_equal(p2.count, 0);
    assert_int_equal(kura_value_count(p2.items), 0);
    assert_null(p2.last_evaluated_key);
    kura_page_free(&p2);
    kura_page_free(&p);

    r.exclusive_start_key = NULL;
    r.limit = 4;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 3);
    assert_null(p.last_evaluated_key);
    kura_page_free(&p);

    /* backwards: resumes before the start key */
    r.scan_index_backward = true;
    r.limit = 1;
    assert_kura_ok(kura_query(f->db, &r, &p));
    want = M("pk", S("p"), "sk", N("2"), NULL);
    assert_true(val_equal(p.last_evaluated_key, want));
    kura_value_free(want);
    r.exclusive_start_key = p.last_evaluated_key;
    r.limit = 0;
    assert_kura_ok(kura_query(f->db, &r, &p2));
    assert_int_equal(p2.count, 2);
    want = N("1");
    assert_true(val_equal(kura_value_get(kura_value_at(p2.items, 0, NULL, NULL), "sk", 2), want));
    kura_value_free(want);
    kura_page_free(&p2);
    kura_page_free(&p);
    kura_value_free(vals);
}

static void test_hash_only(void **state)
{
    fixture *f = *state;
    make_table(f->db, "ho_t", KURA_S, 0, 4);
    for (int i = 0; i < 20; i++) {
        char pk[16];
        snprintf(pk, sizeof pk, "k%d", i);
        put(f->db, "ho_t", M("pk", S(pk), "v", N("1"), NULL));
    }
    kura_value *vals = M(":p", S("k7"), NULL);
    kura_query_req r = {
        .table_name = "ho_t", .key_condition_expression = "pk = :p", .expr.values = vals};
    kura_page p;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 1);
    assert_null(p.last_evaluated_key);
    kura_page_free(&p);
    r.limit = 1;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 1);
    assert_non_null(p.last_evaluated_key);
    r.exclusive_start_key = p.last_evaluated_key;
    for (int back = 0; back < 2; back++) {
        kura_page p2;
        r.scan_index_backward = back;
        assert_kura_ok(kura_query(f->db, &r, &p2));
        assert_int_equal(p2.count, 0);
        assert_null(p2.last_evaluated_key);
        kura_page_free(&p2);
    }
    kura_page_free(&p);
    kura_value_free(vals);
    vals = M(":p", S("k"), NULL);
    r = (kura_query_req){
        .table_name = "ho_t", .key_condition_expression = "pk = :p", .expr.values = vals};
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 0);
    assert_int_equal(p.scanned_count, 0);
    kura_page_free(&p);
    kura_value_free(vals);
}

/* ---- The 1 MB page limit -----------------------------------------------------------------------
 */

static void test_one_megabyte(void **state)
{
    fixture *f = *state;
    make_table(f->db, "big", KURA_S, KURA_N, 2);
    size_t dlen = 100000;
    char *data = malloc(dlen + 1);
    memset(data, 'd', dlen);
    data[dlen] = 0;
    for (int i = 0; i < 25; i++) {
        char num[16];
        snprintf(num, sizeof num, "%d", i);
        put(f->db, "big", M("pk", S("p"), "sk", N(num), "d", kura_value_s(data, dlen), NULL));
    }
    free(data);
    /* an item is 2 + 1 + 2 + 2 + 1 + 100000 bytes: 10 items stay below 1 MB, the 11th crosses */
    kura_value *vals = M(":p", S("p"), NULL);
    kura_query_req r = {
        .table_name = "big", .key_condition_expression = "pk = :p", .expr.values = vals};
    kura_page p;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.scanned_count, 11);
    assert_int_equal(p.count, 11);
    kura_value *want = M("pk", S("p"), "sk", N("10"), NULL);
    assert_true(val_equal(p.last_evaluated_key, want));
    kura_value_free(want);
    kura_page_free(&p);
    r.select = KURA_SELECT_COUNT;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.scanned_count, 11); /* COUNT reads the same 1 MB */
    assert_null(p.items);
    kura_page_free(&p);
    r.select = KURA_SELECT_DEFAULT;
    r.limit = 5;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.scanned_count, 5);
    kura_page_free(&p);
    r.limit = 0;
    collected c;
    collect_query(f->db, r, 0, &c);
    assert_int_equal(c.n, 25);
    assert_int_equal(c.pages, 3); /* 11 + 11 + 3 */
    collected_free(&c);
    kura_scan_req sr = {.table_name = "big"};
    collect_scan(f->db, sr, 0, &c);
    assert_int_equal(c.n, 25);
    assert_int_equal(c.pages, 3);
    collected_free(&c);
    kura_value_free(vals);
}

/* ---- Filters, Select, projection, capacity -----------------------------------------------------
 */

static void test_filter_select_projection(void **state)
{
    fixture *f = *state;
    make_table(f->db, "fs_t", KURA_S, KURA_N, 4);
    fill_numbered(f->db, "fs_t", "p", 30);
    kura_value *vals = M(":p", S("p"), ":z", N("0"), NULL);
    kura_query_req r = {.table_name = "fs_t",
                        .key_condition_expression = "pk = :p",
                        .filter_expression = "x = :z",
                        .expr.values = vals};
    kura_page p;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 10);
    assert_int_equal(p.scanned_count, 30);
    assert_int_equal(kura_value_count(p.items), 10);
    kura_page_free(&p);

    /* the filter applies after Limit: 4 read, 2 of them (0 and 3) pass */
    r.limit = 4;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 2);
    assert_int_equal(p.scanned_count, 4);
    kura_value *want = M("pk", S("p"), "sk", N("3"), NULL);
    assert_true(val_equal(p.last_evaluated_key, want));
    kura_value_free(want);
    kura_page_free(&p);

    r.limit = 0;
    r.select = KURA_SELECT_COUNT;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_null(p.items);
    assert_int_equal(p.count, 10);
    assert_int_equal(p.scanned_count, 30);
    kura_page_free(&p);

    /* projection: only the named attributes; the start key is still the table key */
    kura_value *names = M("#x", S("x"), NULL);
    r = (kura_query_req){.table_name = "fs_t",
                         .key_condition_expression = "pk = :p",
                         .filter_expression = "#x = :z",
                         .projection_expression = "#x, filler",
                         .expr = {names, vals},
                         .limit = 2,
                         .select = KURA_SELECT_SPECIFIC_ATTRIBUTES};
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 1);
    const kura_value *it = kura_value_at(p.items, 0, NULL, NULL);
    assert_int_equal(kura_value_count(it), 2);
    assert_non_null(kura_value_get(it, "x", 1));
    assert_non_null(kura_value_get(it, "filler", 6));
    assert_null(kura_value_get(it, "sk", 2));
    want = M("pk", S("p"), "sk", N("1"), NULL);
    assert_true(val_equal(p.last_evaluated_key, want));
    kura_value_free(want);
    kura_page_free(&p);
    kura_value_free(names);

    /* scan: filter and projection on key attributes are allowed */
    kura_value *sv = M(":p", S("p"), NULL);
    kura_scan_req sr = {.table_name = "fs_t",
                        .filter_expression = "pk = :p AND sk < :p",
                        .projection_expression = "sk",
                        .expr.values = sv};
    assert_kura_ok(kura_scan(f->db, &sr, &p)); /* sk < "p" compares N with S: never true */
    assert_int_equal(p.count, 0);
    assert_int_equal(p.scanned_count, 30);
    kura_page_free(&p);
    sr.filter_expression = "pk = :p";
    assert_kura_ok(kura_scan(f->db, &sr, &p));
    assert_int_equal(p.count, 30);
    assert_int_equal(kura_value_count(kura_value_at(p.items, 0, NULL, NULL)), 1);
    kura_page_free(&p);
    kura_value_free(sv);
    kura_value_free(vals);
}

static void test_capacity(void **state)
{
    fixture *f = *state;
    make_table(f->db, "cap", KURA_S, KURA_N, 4);
    fill_numbered(f->db, "cap", "p", 300);
    kura_value *vals = M(":p", S("p"), NULL);
    kura_query_req r = {
        .table_name = "cap", .key_condition_expression = "pk = :p", .expr.values = vals};
    kura_page p;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_false(p.consumed_capacity.present);
    uint64_t bytes = 0;
    for (size_t i = 0; i < p.count; i++)
        bytes += val_item_size(kura_value_at(p.items, i, NULL, NULL));
    kura_page_free(&p);
    double units = (double)((bytes + 4095) / 4096);
    assert_true(units > 1);

    r.return_consumed_capacity = KURA_CAPACITY_TOTAL;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_true(p.consumed_capacity.present);
    assert_string_equal(p.consumed_capacity.table_name, "cap");
    assert_true(fabs(p.consumed_capacity.capacity_units - units / 2) < 1e-9);
    kura_page_free(&p);

    /* items filtered out are charged too; strongly consistent reads cost twice as much */
    kura_value *vals2 = M(":p", S("p"), ":no", S("nothing"), NULL);
    r.expr.values = vals2;
    r.filter_expression = "filler = :no";
    r.consistent_read = true;
    r.return_consumed_capacity = KURA_CAPACITY_INDEXES;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 0);
    assert_true(fabs(p.consumed_capacity.capacity_units - units) < 1e-9);
    assert_true(fabs(p.consumed_capacity.table_capacity_units - units) < 1e-9);
    kura_page_free(&p);

    kura_scan_req sr = {.table_name = "cap",
                        .return_consumed_capacity = KURA_CAPACITY_TOTAL,
                        .select = KURA_SELECT_COUNT};
    assert_kura_ok(kura_scan(f->db, &sr, &p));
    assert_int_equal(p.count, 300);
    assert_true(fabs(p.consumed_capacity.capacity_units - units / 2) < 1e-9);
    kura_page_free(&p);
    kura_value_free(vals2);
    kura_value_free(vals);
}

/* ---- Scan and segments --------------------------------------------------------------------------
 */

static void storage_key(const kura_value *item, kbuf *out)
{
    key_schema ks = {"pk", KURA_S, "sk", KURA_N};
    kbuf_clear(out);
    assert_kura_ok(key_build(&ks, item, KEY_FROM_ITEM, out));
}

/* Marks the items of c in seen[] (index from pk "u<i>" and sk j: i * 3 + j), failing on a
 * duplicate, and checks they come in strictly increasing storage-key order with hashes in
 * [lo, hi] (hi inclusive). */
static void check_segment_items(const collected *c, bool *seen, uint64_t lo, uint64_t hi)
{
    kbuf prev = KBUF_INIT, cur = KBUF_INIT;
    for (size_t i = 0; i < c->n; i++) {
        storage_key(c->items[i], &cur);
        uint64_t h = dec_fixed64_be(cur.data);
        if (h < lo || h > hi)
            fail_msg("item hash %016llx outside the segment", (unsigned long long)h);
        if (i > 0) {
            size_t n = prev.len < cur.len ? prev.len : cur.len;
            int cmp = memcmp(prev.data, cur.data, n);
            assert_true(cmp < 0 || (cmp == 0 && prev.len < cur.len));
        }
        kbuf_clear(&prev);
        kbuf_append(&prev, cur.data, cur.len);
        size_t len;
        const char *pk = kura_value_bytes(kura_value_get(c->items[i], "pk", 2), &len);
        char num[8];
        kura_value_num(kura_value_get(c->items[i], "sk", 2), num, sizeof num);
        int idx = atoi(pk + 1) * 3 + atoi(num);
        if (seen[idx]) fail_msg("item %d returned twice", idx);
        seen[idx] = true;
    }
    kbuf_free(&prev);
    kbuf_free(&cur);
}

static void test_scan_segments(void **state)
{
    fixture *f = *state;
    enum { NPK = 100, NITEMS = NPK * 3 };
    make_table(f->db, "sc_t", KURA_S, KURA_N, 4);
    for (int i = 0; i < NPK; i++)
        for (int j = 0; j < 3; j++) {
            char pk[16], sk[4];
            snprintf(pk, sizeof pk, "u%d", i);
            snprintf(sk, sizeof sk, "%d", j);
            put(f->db, "sc_t", M("pk", S(pk), "sk", N(sk), NULL));
        }
    bool seen[NITEMS];
    collected c;
    kura_scan_req r = {.table_name = "sc_t"};
    memset(seen, 0, sizeof seen);
    collect_scan(f->db, r, 0, &c);
    check_segment_items(&c, seen, 0, UINT64_MAX);
    assert_int_equal(c.n, NITEMS);
    collected_free(&c);

    const uint32_t totals[] = {1, 2, 3, 4, 7, 16, 1000};
    for (size_t t = 0; t < sizeof totals / sizeof *totals; t++) {
        uint32_t total = totals[t];
        memset(seen, 0, sizeof seen);
        size_t sum = 0;
        for (uint32_t s = 0; s < total; s++) {
            r = (kura_scan_req){
                .table_name = "sc_t", .has_segment = true, .segment = s, .total_segments = total};
            unsigned __int128 lo = (((unsigned __int128)s << 64) + total - 1) / total;
            unsigned __int128 hi = (((unsigned __int128)(s + 1) << 64) + total - 1) / total;
            collect_scan(f->db, r, total > 16 ? 0 : 17, &c);
            check_segment_items(&c, seen, (uint64_t)lo, (uint64_t)(hi - 1));
            sum += c.n;
            collected_free(&c);
        }
        if (sum != NITEMS)
            fail_msg("TotalSegments %u: the segments hold %zu items, not %d", total, sum, NITEMS);
    }
    /* the last segment of the largest TotalSegments */
    r = (kura_scan_req){
        .table_name = "sc_t", .has_segment = true, .segment = 999999, .total_segments = 1000000};
    kura_page p;
    assert_kura_ok(kura_scan(f->db, &r, &p));
    assert_true(p.count <= 1);
    kura_page_free(&p);
}

/* A scan with Limit resumes strictly after its start key, also inside a segment. */
static void test_scan_pagination(void **state)
{
    fixture *f = *state;
    make_table(f->db, "sp_t", KURA_S, KURA_N, 3);
    for (int i = 0; i < 40; i++) {
        char pk[16];
        snprintf(pk, sizeof pk, "u%d", i);
        fill_numbered(f->db, "sp_t", pk, 3);
    }
    collected all, c;
    kura_scan_req r = {.table_name = "sp_t"};
    collect_scan(f->db, r, 0, &all);
    assert_int_equal(all.n, 120);
    const uint32_t limits[] = {1, 2, 5, 119, 120, 121};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        collect_scan(f->db, r, limits[i], &c);
        assert_true(same_items(&c, &all));
        assert_int_equal(c.pages, 120 / limits[i] + 1);
        collected_free(&c);
    }
    collected_free(&all);
}

/* ---- Corruption -------------------------------------------------------------------------------
 */

static void test_corrupt_item(void **state)
{
    fixture *f = *state;
    make_table(f->db, "cor", KURA_S, KURA_N, 1);
    fill_numbered(f->db, "cor", "p", 3);
    kura_table *t;
    assert_kura_ok(table_acquire(f->db, "cor", &t));
    kura_value *item = M("pk", S("p"), "sk", N("1"), NULL);
    kbuf key = KBUF_INIT;
    assert_kura_ok(key_build(&t->ks, item, KEY_FROM_ITEM, &key));
    assert_kura_ok(kura_put(t->tree, NULL, key.data, key.len, "\xff\xfe garbage", 10));
    table_release(t);
    kbuf_free(&key);
    kura_value_free(item);
    kura_value *vals = M(":p", S("p"), NULL);
    kura_query_req r = {
        .table_name = "cor", .key_condition_expression = "pk = :p", .expr.values = vals};
    kura_page p;
    assert_kura_status(kura_query(f->db, &r, &p), KURA_E_CORRUPTION);
    assert_non_null(strstr(kura_last_error(), "table cor"));
    kura_scan_req sr = {.table_name = "cor"};
    assert_kura_status(kura_scan(f->db, &sr, &p), KURA_E_CORRUPTION);
    /* a page that stops before the bad item is fine */
    r.limit = 1;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 1);
    kura_page_free(&p);
    kura_value_free(vals);
}

/* ---- Errors
 * -------------------------------------------------------------------------------------- */

static kura_status query1(kura_db *db, const char *table, const char *kc, kura_value *vals)
{
    kura_query_req r = {.table_name = table, .key_condition_expression = kc, .expr.values = vals};
    kura_page p;
    kura_status s = kura_query(db, &r, &p);
    if (s == KURA_OK) kura_page_free(&p);
    kura_value_free(vals);
    return s;
}

static void test_key_condition_errors(void **state)
{
    fixture *f = *state;
    kura_db *db = f->db;
    make_table(db, "ke_t", KURA_S, KURA_S, 2);
    make_table(db, "kn_t", KURA_S, KURA_N, 2);
    make_table(db, "kb_t", KURA_B, KURA_B, 2);
    make_table(db, "kh_t", KURA_S, 0, 2);
    const kura_status E = KURA_E_INVALID;

    expect_err(query1(db, "ke_t", "sk = :v", M(":v", S("a"), NULL)), E,
               "Query condition missed key schema element: pk");
    expect_err(query1(db, "ke_t", "pk = :p AND x = :v", M(":p", S("a"), ":v", S("a"), NULL)), E,
               "Query condition missed key schema element: sk");
    expect_err(query1(db, "ke_t", "x = :v", M(":v", S("a"), NULL)), E,
               "Query condition missed key schema element: pk");
    expect_err(query1(db, "ke_t", "pk < :p", M(":p", S("a"), NULL)), E,
               "Query key condition not supported");
    expect_err(query1(db, "ke_t", "begins_with(pk, :p)", M(":p", S("a"), NULL)), E,
               "Query key condition not supported");
    expect_err(query1(db, "kh_t", "pk = :p AND x = :v", M(":p", S("a"), ":v", S("a"), NULL)), E,
               "Query key condition not supported");
    expect_err(
        query1(db, "kh_t", "pk = :p AND x = :v AND y = :v", M(":p", S("a"), ":v", S("a"), NULL)), E,
        "Conditions can be of length 1 or 2 only");
    expect_err(query1(db, "ke_t", "pk = :p", M(":p", N("1"), NULL)), E,
               "One or more parameter values were invalid: Condition parameter type does not "
               "match schema type");
    expect_err(query1(db, "kn_t", "pk = :p AND sk > :v", M(":p", S("a"), ":v", S("1"), NULL)), E,
               "One or more parameter values were invalid: Condition parameter type does not "
               "match schema type");
    expect_err(
        query1(db, "kn_t", "pk = :p AND begins_with(sk, :v)", M(":p", S("a"), ":v", S("1"), NULL)),
        E,
        "One or more parameter values were invalid: Condition parameter type does not "
        "match schema type");
    expect_err(
        query1(db, "kn_t", "pk = :p AND begins_with(sk, :v)", M(":p", S("a"), ":v", N("1"), NULL)),
        E,
        "Invalid KeyConditionExpression: Incorrect operand type for operator or "
        "function; operator or function: begins_with, operand type: N");
    expect_err(query1(db, "ke_t", "pk = :p AND sk BETWEEN :a AND :b",
                      M(":p", S("p"), ":a", S("b"), ":b", S("a"), NULL)),
               E,
               "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be "
               "greater than or equal to lower bound; lower bound operand: AttributeValue: "
               "{S:b}, upper bound operand: AttributeValue: {S:a}");
    expect_err(query1(db, "kn_t", "pk = :p AND sk BETWEEN :a AND :b",
                      M(":p", S("p"), ":a", N("5"), ":b", N("-1.50"), NULL)),
               E,
               "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be "
               "greater than or equal to lower bound; lower bound operand: AttributeValue: "
               "{N:5}, upper bound operand: AttributeValue: {N:-1.5}");
    expect_err(query1(db, "kb_t", "pk = :p AND sk BETWEEN :a AND :b",
                      M(":p", B("p", 1), ":a", B("\x01", 1), ":b", B("\x00", 1), NULL)),
               E,
               "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be "
               "greater than or equal to lower bound; lower bound operand: AttributeValue: "
               "{B:AQ==}, upper bound operand: AttributeValue: {B:AA==}");
    expect_err(query1(db, "ke_t", "pk = :p AND sk BETWEEN :a AND :b",
                      M(":p", S("p"), ":a", N("1"), ":b", S("z"), NULL)),
               E,
               "Invalid KeyConditionExpression: The BETWEEN operator requires same data type "
               "for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper "
               "bound operand: AttributeValue: {S:z}");
    /* the BETWEEN check comes before the table's */
    expect_err(query1(db, "nope", "pk = :p AND sk BETWEEN :a AND :b",
                      M(":p", S("p"), ":a", S("b"), ":b", S("a"), NULL)),
               E,
               "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be "
               "greater than or equal to lower bound; lower bound operand: AttributeValue: "
               "{S:b}, upper bound operand: AttributeValue: {S:a}");
    expect_err(query1(db, "ke_t", "pk = :p AND sk = :v", M(":p", S("p"), ":v", S(""), NULL)), E,
               "One or more parameter values are not valid. The AttributeValue for a key "
               "attribute cannot contain an empty string value. Key: sk");
    expect_err(query1(db, "kb_t", "pk = :p", M(":p", B("", 0), NULL)), E,
               "One or more parameter values are not valid. The AttributeValue for a key "
               "attribute cannot contain an empty binary value. Key: pk");
    expect_err(query1(db, "ke_t", "pk = :p OR sk = :p", M(":p", S("p"), NULL)), E,
               "Invalid operator used in KeyConditionExpression: OR");
    expect_err(query1(db, "nope", "pk = :p", M(":p", S("p"), NULL)), KURA_E_RESOURCE_NOT_FOUND,
               "Requested resource not found");
    expect_err(query1(db, "ke_t", NULL, NULL), E,
               "Either the KeyConditions or KeyConditionExpression parameter must be specified "
               "in the request.");
    expect_err(query1(db, "ke_t", NULL, M(":p", S("p"), NULL)), E,
               "ExpressionAttributeValues can only be specified when using expressions: "
               "FilterExpression and KeyConditionExpression are null");
    expect_err(query1(db, "ke_t", "pk = :p", M(":p", S("p"), ":q", S("q"), NULL)), E,
               "Value provided in ExpressionAttributeValues unused in expressions: keys: {:q}");
}

static kura_status query2(kura_db *db, kura_query_req *r)
{
    kura_page p;
    kura_status s = kura_query(db, r, &p);
    if (s == KURA_OK) kura_page_free(&p);
    return s;
}

static void test_request_errors(void **state)
{
    fixture *f = *state;
    kura_db *db = f->db;
    const kura_status E = KURA_E_INVALID;
    make_table(db, "re_t", KURA_S, KURA_S, 2);
    kura_value *vals = M(":p", S("p"), NULL);
    kura_query_req r = {
        .table_name = "re_t", .key_condition_expression = "pk = :p", .expr.values = vals};

    r.index_name = "byX";
    expect_err(query2(db, &r), E, "The table does not have the specified index: byX");
    r.table_name = "nope";
    expect_err(query2(db, &r), KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found");
    r.table_name = "re_t";
    r.index_name = NULL;

    r.select = KURA_SELECT_SPECIFIC_ATTRIBUTES;
    expect_err(query2(db, &r), E,
               "Must specify the AttributesToGet or ProjectionExpression "
               "when choosing to get SPECIFIC_ATTRIBUTES");
    r.select = KURA_SELECT_ALL_PROJECTED_ATTRIBUTES;
    expect_err(query2(db, &r), E,
               "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName");
    r.projection_expression = "x";
    r.select = KURA_SELECT_ALL_ATTRIBUTES;
    expect_err(query2(db, &r), E,
               "Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES");
    r.select = KURA_SELECT_COUNT;
    expect_err(query2(db, &r), E,
               "Cannot specify the ProjectionExpression when choosing to get only the Count");
    r.select = (kura_select)9;
    r.projection_expression = NULL;
    expect_err(query2(db, &r), E,
               "1 validation error detected: Value '9' at 'select' failed to satisfy "
               "constraint: Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, "
               "ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]");
    r.select = KURA_SELECT_DEFAULT;

    r.projection_expression = "x, pk.a";
    expect_err(query2(db, &r), E,
               "Key attributes must be scalars; list random access '[]' and map lookup '.' are "
               "not allowed: Key: pk");
    r.projection_expression = "sk[1]";
    expect_err(query2(db, &r), E,
               "Key attributes must be scalars; list random access '[]' and map lookup '.' are "
               "not allowed: Key: sk");
    r.projection_expression = NULL;
    r.filter_expression = "x = :p AND sk = :p";
    expect_err(query2(db, &r), E,
               "Filter Expression can only contain non-primary key attributes: Primary key "
               "attribute: sk");
    r.filter_expression = "attribute_exists(pk.a)";
    expect_err(query2(db, &r), E,
               "Filter Expression can only contain non-primary key attributes: Primary key "
               "attribute: pk");
    r.filter_expression = NULL;

    kura_value *names = M("#a", S("a"), NULL);
    r.expr = (kura_expression_attributes){names, NULL};
    r.key_condition_expression = NULL;
    expect_err(query2(db, &r), E,
               "ExpressionAttributeNames can only be specified when using expressions");
    kura_value_free(names);
    kura_value_free(vals);

    /* Scan */
    kura_scan_req sr = {.table_name = "re_t", .filter_expression = "pk.a = :p"};
    kura_page p;
    vals = M(":p", S("p"), NULL);
    sr.expr.values = vals;
    expect_err(kura_scan(db, &sr, &p), E,
               "Key attributes must be scalars; list random access '[]' and map lookup '.' are "
               "not allowed: Key: pk");
    sr.filter_expression = NULL;
    expect_err(kura_scan(db, &sr, &p), E,
               "ExpressionAttributeValues can only be specified when using expressions: "
               "FilterExpression is null");
    sr.expr.values = NULL;
    sr.index_name = "idx";
    expect_err(kura_scan(db, &sr, &p), E, "The table does not have the specified index: idx");
    sr.index_name = NULL;
    sr.select = KURA_SELECT_ALL_PROJECTED_ATTRIBUTES;
    expect_err(kura_scan(db, &sr, &p), E,
               "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName");
    sr.select = KURA_SELECT_DEFAULT;
    sr.table_name = "nope";
    expect_err(kura_scan(db, &sr, &p), KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found");
    kura_value_free(vals);
}

static void test_start_key_errors(void **state)
{
    fixture *f = *state;
    kura_db *db = f->db;
    const kura_status E = KURA_E_INVALID;
    make_table(db, "skt", KURA_S, KURA_S, 2);
    put(db, "skt", M("pk", S("p"), "sk", S("a"), NULL));
    put(db, "skt", M("pk", S("p"), "sk", S("b"), NULL));
    put(db, "skt", M("pk", S("p"), "sk", S("c"), NULL));
    kura_value *vals = M(":p", S("p"), NULL);
    kura_query_req r = {
        .table_name = "skt", .key_condition_expression = "pk = :p", .expr.values = vals};
    struct {
        kura_value *esk;
        const char *msg;
    } cases[] = {
        {M("pk", S("p"), NULL), "The provided starting key is invalid"},
        {M("pk", S("p"), "sk", S("a"), "x", S("a"), NULL), "The provided starting key is invalid"},
        {M("pk", S("p"), "x", S("a"), NULL), "The provided starting key is invalid"},
        {M("pk", N("1"), "sk", S("a"), NULL), "The provided key element does not match the schema"},
        {M("pk", S("p"), "sk", B("a", 1), NULL),
         "The provided key element does not match the schema"},
        {M("pk", S("p"), "sk", S(""), NULL),
         "One or more parameter values were invalid: The AttributeValue for a key attribute "
         "cannot contain an empty string value. Key: sk"},
        {M("pk", S("q"), "sk", S("a"), NULL),
         "The provided starting key is outside query boundaries based on provided conditions"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        r.exclusive_start_key = cases[i].esk;
        expect_err(query2(db, &r), E, cases[i].msg);
        kura_value_free(cases[i].esk);
    }
    kura_value_free(vals);

    vals = M(":p", S("p"), ":s", S("b"), NULL);
    r.expr.values = vals;
    r.key_condition_expression = "pk = :p AND sk < :s";
    kura_value *esk = M("pk", S("p"), "sk", S("zzz"), NULL);
    r.exclusive_start_key = esk;
    expect_err(query2(db, &r), E,
               "The provided starting key does not match the range key predicate");
    kura_value_free(esk);
    esk = M("pk", S("q"), "sk", S("a"), NULL);
    r.exclusive_start_key = esk;
    expect_err(query2(db, &r), E, "The query can return at most one row and cannot be restarted");
    kura_value_free(esk);
    /* a start key inside the range resumes after it */
    esk = M("pk", S("p"), "sk", S("a"), NULL);
    r.exclusive_start_key = esk;
    kura_page p;
    assert_kura_ok(kura_query(db, &r, &p));
    assert_int_equal(p.count, 0);
    kura_page_free(&p);
    r.key_condition_expression = "pk = :p AND sk <= :s";
    assert_kura_ok(kura_query(db, &r, &p));
    assert_int_equal(p.count, 1);
    kura_page_free(&p);
    kura_value_free(esk);
    /* a start key not stored resumes at the next stored key */
    esk = M("pk", S("p"), "sk", S("aa"), NULL);
    r.exclusive_start_key = esk;
    r.key_condition_expression = "pk = :p AND sk > :s";
    kura_value_free(vals);
    vals = M(":p", S("p"), ":s", S("0"), NULL);
    r.expr.values = vals;
    assert_kura_ok(kura_query(db, &r, &p));
    assert_int_equal(p.count, 2);
    kura_page_free(&p);
    r.scan_index_backward = true;
    assert_kura_ok(kura_query(db, &r, &p));
    assert_int_equal(p.count, 1);
    kura_page_free(&p);
    kura_value_free(esk);
    kura_value_free(vals);

    /* Scan */
    kura_scan_req sr = {.table_name = "skt"};
    const char *scan_msgs[] = {
        "The provided starting key is invalid: The provided key element does not match the "
        "schema",
        "The provided starting key is invalid: The provided key element does not match the "
        "schema",
        "The provided starting key is invalid: One or more parameter values were invalid: The "
        "AttributeValue for a key attribute cannot contain an empty string value. Key: sk",
    };
    kura_value *scan_esks[] = {M("pk", S("p"), NULL), M("pk", S("p"), "sk", N("1"), NULL),
                               M("pk", S("p"), "sk", S(""), NULL)};
    for (size_t i = 0; i < 3; i++) {
        sr.exclusive_start_key = scan_esks[i];
        expect_err(kura_scan(db, &sr, &p), E, scan_msgs[i]);
        kura_value_free(scan_esks[i]);
    }
    /* a start key hashing outside the segment */
    esk = M("pk", S("p"), "sk", S("a"), NULL);
    kbuf key = KBUF_INIT;
    key_schema ks = {"pk", KURA_S, "sk", KURA_S};
    assert_kura_ok(key_build(&ks, esk, KEY_FROM_KEY, &key));
    uint32_t mine = (uint32_t)(((unsigned __int128)dec_fixed64_be(key.data) * 4) >> 64);
    kbuf_free(&key);
    sr = (kura_scan_req){
        .table_name = "skt", .has_segment = true, .total_segments = 4, .exclusive_start_key = esk};
    for (uint32_t s = 0; s < 4; s++) {
        sr.segment = s;
        kura_status st = kura_scan(db, &sr, &p);
        if (s == mine) {
            assert_kura_ok(st);
            assert_int_equal(p.count, 2); /* b and c follow a */
            kura_page_free(&p);
        } else {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "The provided starting key is invalid: Invalid ExclusiveStartKey. Please "
                     "use ExclusiveStartKey with correct Segment. TotalSegments: 4 Segment: %u",
                     s);
            expect_err(st, E, msg);
        }
    }
    kura_value_free(esk);
}

static void test_segment_errors(void **state)
{
    fixture *f = *state;
    const kura_status E = KURA_E_INVALID;
    make_table(f->db, "seg", KURA_S, 0, 2);
    kura_scan_req r = {.table_name = "seg", .has_segment = true, .segment = 3, .total_segments = 3};
    kura_page p;
    expect_err(kura_scan(f->db, &r, &p), E,
               "The Segment parameter is zero-based and must be less than parameter "
               "TotalSegments: Segment: 3 is not less than TotalSegments: 3");
    r.total_segments = 0;
    r.segment = 0;
    expect_err(kura_scan(f->db, &r, &p), E,
               "1 validation error detected: Value '0' at 'totalSegments' failed to satisfy "
               "constraint: Member must have value greater than or equal to 1");
    r.total_segments = 1000001;
    expect_err(kura_scan(f->db, &r, &p), E,
               "1 validation error detected: Value '1000001' at 'totalSegments' failed to "
               "satisfy constraint: Member must have value less than or equal to 1000000");
    r.total_segments = 1000000;
    r.segment = 1000000;
    expect_err(kura_scan(f->db, &r, &p), E,
               "1 validation error detected: Value '1000000' at 'segment' failed to satisfy "
               "constraint: Member must have value less than or equal to 999999");
    expect_err(scan_check_segment_params(true, 1, false, 0), E,
               "The TotalSegments parameter is required but was not present in the request "
               "when Segment parameter is present");
    expect_err(scan_check_segment_params(false, 0, true, 2), E,
               "The Segment parameter is required but was not present in the request when "
               "parameter TotalSegments is present");
    assert_kura_ok(scan_check_segment_params(true, 0, false, 0));
    assert_kura_ok(scan_check_segment_params(true, 1, true, 2));
    assert_kura_ok(scan_check_segment_params(false, 0, false, 0));
    r = (kura_scan_req){
        .table_name = "seg", .has_segment = true, .segment = 0, .total_segments = 1};
    assert_kura_ok(kura_scan(f->db, &r, &p));
    assert_int_equal(p.count, 0);
    kura_page_free(&p);
}

int main(void)
{
    test_seed();
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
    const struct CMUnitTest tests[] = {
        T(test_conditions_s),
        T(test_conditions_n),
        T(test_conditions_b),
        T(test_pagination),
        T(test_limit_at_end),
        T(test_hash_only),
        T(test_one_megabyte),
        T(test_filter_select_projection),
        T(test_capacity),
        T(test_scan_segments),
        T(test_scan_pagination),
        T(test_corrupt_item),
        T(test_key_condition_errors),
        T(test_request_errors),
        T(test_start_key_errors),
        T(test_segment_errors),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * engine_index_read_test.c - Query and Scan with IndexName through the C API (engine/query.c,
 * engine/scan.c, engine/page.c): a table with an LSI (KEYS_ONLY), a GSI with a multi-attribute
 * key (two HASH and two RANGE attributes, projection ALL) and a GSI with an INCLUDE projection.
 * Every key condition operator on each index against a brute-force oracle, forwards and
 * backwards, paginated with several Limits (every item exactly once, in index order, with
 * LastEvaluatedKey = the index's and the table's key attributes); Scan and parallel Scan of
 * each index (sparse items absent, hash order, segments disjoint and complete); the projected
 * items; an LSI's whole items read from the table; ConsumedCapacity with INDEXES; and every
 * error message of a read on an index (DynamoDB Local 1.25.1's, see engine/page.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engine/page.h"
#include "engine/table.h"
#include "engine/table_index.h"
#include "testutil.h"

/* ---- Values --------------------------------------------------------------------------------- */

static kura_value *S(const char *s)
{
    return kura_value_s(s, strlen(s));
}

static kura_value *N(const char *s)
{
    return kura_value_n(s, strlen(s));
}

static kura_value *Nint(long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", v);
    return N(buf);
}

static kura_value *B2(uint8_t a, uint8_t b)
{
    uint8_t p[2] = {a, b};
    return kura_value_b(p, 2);
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

static void put_attr(kura_value *m, const char *name, kura_value *v)
{
    assert_kura_ok(kura_value_map_put(m, name, strlen(name), v));
}

static char *json_of(const kura_value *v)
{
    char *out = NULL;
    size_t len;
    if (!v) return strdup("(null)");
    assert_kura_ok(kura_value_to_json(v, true, &out, &len));
    return out;
}

static void assert_value_equal(const kura_value *got, const kura_value *want)
{
    if (!val_equal(got, want)) {
        char *g = json_of(got), *w = json_of(want);
        fail_msg("got  %s\nwant %s", g, w);
    }
}

/* Expects `s` to be `want` with exactly the message `msg`. */
static void expect_err(kura_status s, kura_status want, const char *msg)
{
    if (s != want || strcmp(kura_last_error(), msg) != 0)
        fail_msg("got %s \"%s\"\nwant %s \"%s\"", kura_status_str(s), kura_last_error(),
                 kura_status_str(want), msg);
}

/* ---- The table ----------------------------------------------------------------------------- */

#define TABLE "Orders"
#define NITEMS 240
#define WAIT_MS 10000

typedef struct fixture {
    char *dir;
    kura_db *db;
    kura_value *items[NITEMS]; /* the oracle: item i has pk "p<i % 4>", sk i */
} fixture;

static const char *const R1[] = {"a", "ab", "abc", "b", "ba", "c"};

/* Item i. Index key attributes are left out now and then (sparse indexes). */
static kura_value *make_item(int i)
{
    char buf[32];
    snprintf(buf, sizeof buf, "p%d", i % 4);
    kura_value *m = M("pk", S(buf), "sk", Nint(i), "b", Nint(i * 3), NULL);
    if (i % 7 != 0) {
        snprintf(buf, sizeof buf, "x%03d", (i * 37) % 100);
        put_attr(m, "x", S(buf));
    }
    if (i % 5 != 0) {
        snprintf(buf, sizeof buf, "g%d", i % 3);
        put_attr(m, "g", S(buf));
    }
    if (i % 13 != 0) put_attr(m, "h", Nint((i / 3) % 2));
    if (i % 11 != 0) put_attr(m, "r1", S(R1[i % 6]));
    put_attr(m, "r2", B2((uint8_t)(i % 4), (uint8_t)(i % 7)));
    if (i % 4 != 3) {
        snprintf(buf, sizeof buf, "c%d", i % 4);
        put_attr(m, "c", S(buf));
    }
    snprintf(buf, sizeof buf, "a%d", i);
    put_attr(m, "a", S(buf));
    return m;
}

static void put(kura_db *db, const char *table, const kura_value *item)
{
    kura_put_item_req r = {.table_name = table, .item = item};
    kura_write_result res;
    assert_kura_ok(kura_put_item(db, &r, &res));
    kura_write_result_free(&res);
}

static void create_orders(kura_db *db)
{
    kura_attribute_definition defs[] = {{"pk", KURA_S}, {"sk", KURA_N}, {"x", KURA_S},
                                        {"g", KURA_S},  {"h", KURA_N},  {"r1", KURA_S},
                                        {"r2", KURA_B}, {"c", KURA_S}};
    kura_key_schema_element ks[] = {{"pk", false}, {"sk", true}};
    kura_key_schema_element lsi_ks[] = {{"pk", false}, {"x", true}};
    kura_key_schema_element multi_ks[] = {{"g", false}, {"h", false}, {"r1", true}, {"r2", true}};
    kura_key_schema_element byc_ks[] = {{"c", false}, {"x", true}};
    static const char *const incl[] = {"a"};
    kura_index_def lsi[] = {{.index_name = "ByX",
                             .key_schema = lsi_ks,
                             .key_schema_count = 2,
                             .projection = {KURA_PROJECTION_KEYS_ONLY, NULL, 0}}};
    kura_index_def gsi[] = {{.index_name = "Multi",
                             .key_schema = multi_ks,
                             .key_schema_count = 4,
                             .projection = {KURA_PROJECTION_ALL, NULL, 0}},
                            {.index_name = "ByC",
                             .key_schema = byc_ks,
                             .key_schema_count = 2,
                             .projection = {KURA_PROJECTION_INCLUDE, incl, 1}}};
    kura_create_table_req r = {.table_name = TABLE,
                               .attribute_definitions = defs,
                               .attribute_definitions_count = 8,
                               .key_schema = ks,
                               .key_schema_count = 2,
                               .billing_mode = KURA_BILLING_PAY_PER_REQUEST,
                               .partitions = 4,
                               .local_secondary_indexes = lsi,
                               .local_secondary_indexes_count = 1,
                               .global_secondary_indexes = gsi,
                               .global_secondary_indexes_count = 2};
    kura_table_description d;
    assert_kura_ok(kura_create_table(db, &r, &d));
    kura_table_description_free(&d);
}

static void wait_gsis(kura_db *db, const char *table)
{
    assert_kura_ok(kura_index_wait(db, table, "Multi", WAIT_MS));
    assert_kura_ok(kura_index_wait(db, table, "ByC", WAIT_MS));
}

static int fx_setup_group(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    f->dir = test_mkdtemp("index_read");
    assert_kura_ok(kura_open(f->dir, &o, &f->db));
    create_orders(f->db);
    for (int i = 0; i < NITEMS; i++) {
        f->items[i] = make_item(i);
        put(f->db, TABLE, f->items[i]);
    }
    wait_gsis(f->db, TABLE);
    *state = f;
    return 0;
}

static int fx_teardown_group(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < NITEMS; i++)
        kura_value_free(f->items[i]);
    assert_kura_ok(kura_close(f->db));
    test_rmrf(f->dir);
    free(f);
    return 0;
}

/* The definition of index `name` (the table stays pinned by the fixture's database). */
static const idx_def *index_def(kura_db *db, const char *name)
{
    kura_table *t = NULL;
    assert_kura_ok(table_acquire(db, TABLE, &t));
    int pos = table_index_find(t, name);
    assert_true(pos >= 0);
    const idx_def *d = table_index_def(t, (uint32_t)pos);
    table_release(t);
    return d;
}

static const key_schema ORDERS_KS = {"pk", KURA_S, "sk", KURA_N};

/* ---- The oracle ---------------------------------------------------------------------------- */

typedef struct term {
    const char *name;
    const char *op; /* "=", "<", "<=", ">", ">=", "BETWEEN", "begins_with" */
    kura_value *v1, *v2;
} term;

static bool term_holds(const term *t, const kura_value *item)
{
    const kura_value *v = kura_value_get(item, t->name, strlen(t->name));
    if (!v || v->type != t->v1->type) return false;
    if (!strcmp(t->op, "begins_with"))
        return v->u.bytes.len >= t->v1->u.bytes.len &&
               memcmp(v->u.bytes.p, t->v1->u.bytes.p, t->v1->u.bytes.len) == 0;
    int c = val_cmp_scalar(v, t->v1);
    if (!strcmp(t->op, "=")) return c == 0;
    if (!strcmp(t->op, "<")) return c < 0;
    if (!strcmp(t->op, "<=")) return c <= 0;
    if (!strcmp(t->op, ">")) return c > 0;
    if (!strcmp(t->op, ">=")) return c >= 0;
    return c >= 0 && val_cmp_scalar(v, t->v2) <= 0; /* BETWEEN */
}

static bool has_index_keys(const idx_def *d, const kura_value *item)
{
    for (uint32_t i = 0; i < d->nhash; i++)
        if (!kura_value_get(item, d->hash[i].name, strlen(d->hash[i].name))) return false;
    for (uint32_t i = 0; i < d->nrange; i++)
        if (!kura_value_get(item, d->range[i].name, strlen(d->range[i].name))) return false;
    return true;
}

/* Index order within one tuple of HASH values: the RANGE values, then the table key. */
static const idx_def *cmp_def;
static int cmp_items(const void *x, const void *y)
{
    const kura_value *a = *(const kura_value *const *)x, *b = *(const kura_value *const *)y;
    const char *names[IDX_MAX_KEY_ATTRS + 2];
    uint32_t n = 0;
    for (uint32_t i = 0; i < cmp_def->nrange; i++)
        names[n++] = cmp_def->range[i].name;
    names[n++] = "pk";
    names[n++] = "sk";
    for (uint32_t i = 0; i < n; i++) {
        int c = val_cmp_scalar(kura_value_get(a, names[i], strlen(names[i])),
                               kura_value_get(b, names[i], strlen(names[i])));
        if (c) return c;
    }
    return 0;
}

/* The items a Query returns, in index order; *n_out of them (the array is malloc'ed). */
static const kura_value **expected_query(fixture *f, const idx_def *d, const term *terms,
                                         int nterms, size_t *n_out)
{
    const kura_value **v = calloc(NITEMS, sizeof *v);
    size_t n = 0;
    for (int i = 0; i < NITEMS; i++) {
        bool ok = has_index_keys(d, f->items[i]);
        for (int k = 0; ok && k < nterms; k++)
            ok = term_holds(&terms[k], f->items[i]);
        if (ok) v[n++] = f->items[i];
    }
    cmp_def = d;
    qsort(v, n, sizeof *v, cmp_items);
    *n_out = n;
    return v;
}

/* ---- Reading all pages ------------------------------------------------------------------------
 */

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

/* The LastEvaluatedKey of a page is exactly the index's and the table's key attributes of the
 * last item read (`last`, a returned item holding them). */
static void check_lek(const idx_def *d, const kura_value *lek, const kura_value *last)
{
    const char *names[2 + 2 * IDX_MAX_KEY_ATTRS] = {"pk", "sk"};
    size_t n = 2;
    for (uint32_t i = 0; i < d->nhash + d->nrange; i++) {
        const char *a = i < d->nhash ? d->hash[i].name : d->range[i - d->nhash].name;
        if (strcmp(a, "pk") && strcmp(a, "sk")) names[n++] = a;
    }
    if (kura_value_count(lek) != n) {
        char *j = json_of(lek);
        fail_msg("LastEvaluatedKey %s: want %zu attributes", j, n);
    }
    for (size_t i = 0; i < n; i++) {
        const kura_value *want = kura_value_get(last, names[i], strlen(names[i]));
        assert_non_null(want);
        assert_value_equal(kura_value_get(lek, names[i], strlen(names[i])), want);
    }
}

static void collect_page(collected *c, const idx_def *d, const kura_page *p, bool check_keys)
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
    if (check_keys && p->last_evaluated_key && n > 0)
        check_lek(d, p->last_evaluated_key, kura_value_at(p->items, n - 1, NULL, NULL));
}

static void collect_query(kura_db *db, const idx_def *d, kura_query_req r, uint32_t limit,
                          collected *c)
{
    kura_value *esk = NULL;
    memset(c, 0, sizeof *c);
    r.limit = limit;
    for (;;) {
        kura_page p;
        r.exclusive_start_key = esk;
        assert_kura_ok(kura_query(db, &r, &p));
        kura_value_free(esk);
        collect_page(c, d, &p, !r.filter_expression && !r.projection_expression);
        if (limit) assert_true(p.scanned_count <= limit);
        esk = p.last_evaluated_key ? kura_value_clone(p.last_evaluated_key) : NULL;
        if (limit && !esk) assert_true(p.scanned_count < limit);
        kura_page_free(&p);
        if (!esk) break;
        assert_true(c->pages < 100000);
    }
}

static void collect_scan(kura_db *db, const idx_def *d, kura_scan_req r, uint32_t limit,
                         collected *c)
{
    kura_value *esk = NULL;
    memset(c, 0, sizeof *c);
    r.limit = limit;
    for (;;) {
        kura_page p;
        r.exclusive_start_key = esk;
        assert_kura_ok(kura_scan(db, &r, &p));
        kura_value_free(esk);
        collect_page(c, d, &p, !r.filter_expression && !r.projection_expression);
        esk = p.last_evaluated_key ? kura_value_clone(p.last_evaluated_key) : NULL;
        kura_page_free(&p);
        if (!esk) break;
        assert_true(c->pages < 100000);
    }
}

/* The projection of `item` an index stores (its entry value). */
static kura_value *projected(const idx_def *d, const kura_value *item)
{
    kura_value *p = calloc(1, sizeof *p);
    assert_kura_ok(idx_project(d, &ORDERS_KS, item, p));
    return p;
}

/* ---- Queries against the oracle ---------------------------------------------------------------
 */

/* "#k0 = :a0 AND #k1 BETWEEN :a1 AND :b1 ..." and the names and values it uses. */
typedef struct built {
    char expr[512];
    kura_value *names, *values;
} built;

static void build_condition(const term *terms, int n, built *b)
{
    size_t off = 0;
    b->names = kura_value_map();
    b->values = kura_value_map();
    for (int i = 0; i < n; i++) {
        char k[16], a[16], bb[16];
        snprintf(k, sizeof k, "#k%d", i);
        snprintf(a, sizeof a, ":a%d", i);
        snprintf(bb, sizeof bb, ":b%d", i);
        put_attr(b->names, k, S(terms[i].name));
        put_attr(b->values, a, kura_value_clone(terms[i].v1));
        const char *and = i ? " AND " : "";
        if (!strcmp(terms[i].op, "BETWEEN")) {
            put_attr(b->values, bb, kura_value_clone(terms[i].v2));
            off += (size_t)snprintf(b->expr + off, sizeof b->expr - off, "%s%s BETWEEN %s AND %s",
                                    and, k, a, bb);
        } else if (!strcmp(terms[i].op, "begins_with")) {
            off += (size_t)snprintf(b->expr + off, sizeof b->expr - off, "%sbegins_with(%s, %s)",
                                    and, k, a);
        } else {
            off += (size_t)snprintf(b->expr + off, sizeof b->expr - off, "%s%s %s %s", and, k,
                                    terms[i].op, a);
        }
    }
}

static void built_free(built *b)
{
    kura_value_free(b->names);
    kura_value_free(b->values);
}

static void terms_free(term *terms, int n)
{
    for (int i = 0; i < n; i++) {
        kura_value_free(terms[i].v1);
        kura_value_free(terms[i].v2);
    }
}

/* Runs the query forwards and backwards with several page sizes; each time every expected
 * item comes back exactly once, in index order, as the index projects it. Returns how many
 * items matched. */
static size_t check_query(fixture *f, const char *index, const term *terms, int nterms)
{
    const idx_def *d = index_def(f->db, index);
    size_t nexp;
    const kura_value **exp = expected_query(f, d, terms, nterms, &nexp);
    built b;
    build_condition(terms, nterms, &b);
    static const uint32_t limits[] = {0, 1, 2, 5, 13};
    for (int backward = 0; backward < 2; backward++) {
        for (size_t li = 0; li < sizeof limits / sizeof limits[0]; li++) {
            kura_query_req r = {.table_name = TABLE,
                                .index_name = index,
                                .key_condition_expression = b.expr,
                                .expr = {b.names, b.values},
                                .scan_index_backward = backward};
            collected c;
            collect_query(f->db, d, r, limits[li], &c);
            if (c.n != nexp)
                fail_msg("%s %s backward=%d limit=%u: %zu items, want %zu", index, b.expr, backward,
                         limits[li], c.n, nexp);
            assert_int_equal(c.scanned, nexp);
            for (size_t i = 0; i < nexp; i++) {
                kura_value *want = projected(d, exp[backward ? nexp - 1 - i : i]);
                assert_value_equal(c.items[i], want);
                kura_value_free(want);
            }
            collected_free(&c);
        }
    }
    built_free(&b);
    free(exp);
    return nexp;
}

static term T1(const char *name, const char *op, kura_value *v1)
{
    return (term){name, op, v1, NULL};
}

static term T2(const char *name, kura_value *v1, kura_value *v2)
{
    return (term){name, "BETWEEN", v1, v2};
}

static const char *const OPS[] = {"=", "<", "<=", ">", ">="};

static void test_query_lsi(void **state)
{
    fixture *f = *state;
    size_t total = 0;
    for (int p = 0; p < 4; p++) {
        char pk[8];
        snprintf(pk, sizeof pk, "p%d", p);
        term t[2] = {T1("pk", "=", S(pk))};
        total += check_query(f, "ByX", t, 1);
        terms_free(t, 1);
        for (size_t o = 0; o < 5; o++) {
            term u[2] = {T1("pk", "=", S(pk)), T1("x", OPS[o], S("x037"))};
            check_query(f, "ByX", u, 2);
            terms_free(u, 2);
        }
        term bw[2] = {T1("pk", "=", S(pk)), T2("x", S("x020"), S("x060"))};
        assert_true(check_query(f, "ByX", bw, 2) > 0);
        terms_free(bw, 2);
        term bg[2] = {T1("pk", "=", S(pk)), T1("x", "begins_with", S("x0"))};
        assert_true(check_query(f, "ByX", bg, 2) > 0);
        terms_free(bg, 2);
    }
    /* sparse: the items without x are in no LSI query */
    assert_int_equal(total, NITEMS - (NITEMS + 6) / 7);
}

static void test_query_gsi_multi(void **state)
{
    fixture *f = *state;
    size_t total = 0;
    for (int g = 0; g < 3; g++) {
        for (int h = 0; h < 2; h++) {
            char gs[8];
            snprintf(gs, sizeof gs, "g%d", g);
            term t[4] = {T1("h", "=", Nint(h)), T1("g", "=", S(gs))}; /* any order */
            total += check_query(f, "Multi", t, 2);
            terms_free(t, 2);
            for (size_t o = 0; o < 5; o++) {
                term u[4] = {T1("g", "=", S(gs)), T1("h", "=", Nint(h)), T1("r1", OPS[o], S("ab"))};
                check_query(f, "Multi", u, 3);
                terms_free(u, 3);
                term v[4] = {T1("g", "=", S(gs)), T1("h", "=", Nint(h)), T1("r1", "=", S("ba")),
                             T1("r2", OPS[o], B2(2, 3))};
                check_query(f, "Multi", v, 4);
                terms_free(v, 4);
            }
            term bw[4] = {T1("g", "=", S(gs)), T1("h", "=", Nint(h)), T2("r1", S("ab"), S("b"))};
            check_query(f, "Multi", bw, 3);
            terms_free(bw, 3);
            term bg[4] = {T1("g", "=", S(gs)), T1("h", "=", Nint(h)),
                          T1("r1", "begins_with", S("a"))};
            check_query(f, "Multi", bg, 3);
            terms_free(bg, 3);
            term bb[4] = {T1("g", "=", S(gs)), T1("h", "=", Nint(h)), T1("r1", "=", S("abc")),
                          T2("r2", B2(1, 0), B2(2, 9))};
            check_query(f, "Multi", bb, 4);
            terms_free(bb, 4);
            term bgb[4] = {T1("g", "=", S(gs)), T1("h", "=", Nint(h)), T1("r1", "=", S("c")),
                           T1("r2", "begins_with", kura_value_b("\x01", 1))};
            check_query(f, "Multi", bgb, 4);
            terms_free(bgb, 4);
        }
    }
    size_t want = 0;
    const idx_def *d = index_def(f->db, "Multi");
    for (int i = 0; i < NITEMS; i++)
        want += has_index_keys(d, f->items[i]);
    assert_int_equal(total, want);
    assert_true(want > 100 && want < NITEMS);
}

static void test_query_gsi_include(void **state)
{
    fixture *f = *state;
    for (int c = 0; c < 4; c++) {
        char cs[8];
        snprintf(cs, sizeof cs, "c%d", c);
        term t[2] = {T1("c", "=", S(cs))};
        size_t n = check_query(f, "ByC", t, 1);
        assert_true(c == 3 ? n == 0 : n > 0);
        terms_free(t, 1);
        for (size_t o = 0; o < 5; o++) {
            term u[2] = {T1("c", "=", S(cs)), T1("x", OPS[o], S("x050"))};
            check_query(f, "ByC", u, 2);
            terms_free(u, 2);
        }
        term bw[2] = {T1("c", "=", S(cs)), T2("x", S("x010"), S("x090"))};
        check_query(f, "ByC", bw, 2);
        terms_free(bw, 2);
        term bg[2] = {T1("c", "=", S(cs)), T1("x", "begins_with", S("x1"))};
        check_query(f, "ByC", bg, 2);
        terms_free(bg, 2);
    }
}

/* ---- Scans ------------------------------------------------------------------------------------
 */

/* The items come back in entry-key order (hash order, then index order), as projected. */
static void check_scan_order(fixture *f, const idx_def *d, kura_value *const *items, size_t n)
{
    kbuf prev = KBUF_INIT, cur = KBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        char num[64];
        assert_true(kura_value_num(kura_value_get(items[i], "sk", 2), num, sizeof num) > 0);
        int k = atoi(num);
        assert_true(k >= 0 && k < NITEMS);
        kura_value *want = projected(d, f->items[k]);
        assert_value_equal(items[i], want);
        kura_value_free(want);
        bool present = false;
        kbuf_clear(&cur);
        assert_kura_ok(idx_entry_key(d, &ORDERS_KS, f->items[k], &cur, &present));
        assert_true(present);
        if (i > 0) assert_true(page_key_cmp(prev.data, prev.len, &cur) < 0);
        kbuf_clear(&prev);
        assert_true(kbuf_append(&prev, cur.data, cur.len));
    }
    kbuf_free(&prev);
    kbuf_free(&cur);
}

/* Every item the index holds (and only those: sparse) comes back exactly once. */
static void check_scan_complete(fixture *f, const idx_def *d, kura_value *const *items, size_t n)
{
    bool seen[NITEMS] = {false};
    for (size_t i = 0; i < n; i++) {
        char num[64];
        assert_true(kura_value_num(kura_value_get(items[i], "sk", 2), num, sizeof num) > 0);
        int k = atoi(num);
        assert_false(seen[k]);
        seen[k] = true;
    }
    for (int k = 0; k < NITEMS; k++)
        assert_int_equal(seen[k], has_index_keys(d, f->items[k]));
}

static void test_scan_indexes(void **state)
{
    fixture *f = *state;
    static const char *const names[] = {"ByX", "Multi", "ByC"};
    static const uint32_t limits[] = {0, 1, 7};
    for (int i = 0; i < 3; i++) {
        const idx_def *d = index_def(f->db, names[i]);
        for (size_t li = 0; li < 3; li++) {
            kura_scan_req r = {.table_name = TABLE, .index_name = names[i]};
            collected c;
            collect_scan(f->db, d, r, limits[li], &c);
            check_scan_order(f, d, c.items, c.n);
            check_scan_complete(f, d, c.items, c.n);
            collected_free(&c);
        }
        /* parallel: the segments are disjoint and complete, each in order */
        for (uint32_t total = 1; total <= 5; total += 2) {
            collected all = {0};
            for (uint32_t s = 0; s < total; s++) {
                kura_scan_req r = {.table_name = TABLE,
                                   .index_name = names[i],
                                   .has_segment = true,
                                   .segment = s,
                                   .total_segments = total};
                collected c;
                collect_scan(f->db, d, r, 3, &c);
                check_scan_order(f, d, c.items, c.n);
                for (size_t k = 0; k < c.n; k++) {
                    if (all.n == all.cap) {
                        all.cap = all.cap ? 2 * all.cap : 64;
                        all.items = realloc(all.items, all.cap * sizeof *all.items);
                    }
                    all.items[all.n++] = c.items[k];
                }
                free(c.items);
            }
            check_scan_complete(f, d, all.items, all.n);
            collected_free(&all);
        }
    }
}

/* ---- Projections, Select, the LSI's reads of the table ------------------------------------------
 */

static void test_select_and_projection(void **state)
{
    fixture *f = *state;
    kura_value *vals = M(":p", S("p1"), NULL);
    /* default and ALL_PROJECTED_ATTRIBUTES: the entries; ALL_ATTRIBUTES on the LSI: items */
    kura_query_req r = {.table_name = TABLE,
                        .index_name = "ByX",
                        .key_condition_expression = "pk = :p",
                        .expr = {NULL, vals}};
    const idx_def *d = index_def(f->db, "ByX");
    kura_page p;
    for (int sel = 0; sel < 3; sel++) {
        r.select = sel == 0   ? KURA_SELECT_DEFAULT
                   : sel == 1 ? KURA_SELECT_ALL_PROJECTED_ATTRIBUTES
                              : KURA_SELECT_ALL_ATTRIBUTES;
        assert_kura_ok(kura_query(f->db, &r, &p));
        assert_true(p.count > 10);
        for (size_t i = 0; i < p.count; i++) {
            const kura_value *it = kura_value_at(p.items, i, NULL, NULL);
            char num[64];
            kura_value_num(kura_value_get(it, "sk", 2), num, sizeof num);
            const kura_value *item = f->items[atoi(num)];
            kura_value *want = sel == 2 ? kura_value_clone(item) : projected(d, item);
            assert_value_equal(it, want);
            kura_value_free(want);
        }
        kura_page_free(&p);
    }
    /* a projection naming what the LSI does not store reads the items ("a", "b") */
    r.select = KURA_SELECT_DEFAULT;
    r.projection_expression = "b, x, a";
    r.limit = 4;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 4);
    for (size_t i = 0; i < p.count; i++) {
        const kura_value *it = kura_value_at(p.items, i, NULL, NULL);
        assert_int_equal(kura_value_count(it), 3);
        assert_non_null(kura_value_get(it, "a", 1));
        assert_non_null(kura_value_get(it, "b", 1));
    }
    assert_non_null(p.last_evaluated_key);
    assert_int_equal(kura_value_count(p.last_evaluated_key), 3);
    kura_page_free(&p);
    /* COUNT */
    r.projection_expression = NULL;
    r.limit = 0;
    r.select = KURA_SELECT_COUNT;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_null(p.items);
    assert_true(p.count > 10);
    kura_page_free(&p);
    /* a filter on the table's sort key is allowed on an LSI; on non-key attributes of the
     * INCLUDE GSI too */
    kura_value *v2 = M(":p", S("p1"), ":s", Nint(41), NULL);
    kura_query_req q = {.table_name = TABLE,
                        .index_name = "ByX",
                        .key_condition_expression = "pk = :p",
                        .filter_expression = "sk < :s",
                        .expr = {NULL, v2}};
    assert_kura_ok(kura_query(f->db, &q, &p));
    assert_int_equal(p.count, 9); /* sk 1, 5, .., 37 with x (not 21) */
    assert_true(p.scanned_count > p.count);
    kura_page_free(&p);
    kura_value_free(v2);
    kura_value *v3 = M(":c", S("c1"), ":a", S("a101"), NULL);
    kura_query_req g = {.table_name = TABLE,
                        .index_name = "ByC",
                        .key_condition_expression = "c = :c",
                        .filter_expression = "a = :a",
                        .projection_expression = "a, pk"};
    g.expr.values = v3;
    assert_kura_ok(kura_query(f->db, &g, &p));
    assert_int_equal(p.count, 1);
    kura_value *want = M("a", S("a101"), "pk", S("p1"), NULL);
    assert_value_equal(kura_value_at(p.items, 0, NULL, NULL), want);
    kura_value_free(want);
    kura_page_free(&p);
    kura_value_free(v3);
    /* a Scan's filter on what the index does not store is evaluated on the table's items */
    kura_value *v4 = M(":b", Nint(30), NULL);
    kura_scan_req s = {.table_name = TABLE,
                       .index_name = "ByC",
                       .filter_expression = "b = :b",
                       .expr = {NULL, v4}};
    assert_kura_ok(kura_scan(f->db, &s, &p));
    assert_int_equal(p.count, 1); /* item 10 */
    want = projected(index_def(f->db, "ByC"), f->items[10]);
    assert_value_equal(kura_value_at(p.items, 0, NULL, NULL), want);
    kura_value_free(want);
    kura_page_free(&p);
    kura_value_free(v4);
    /* Scan of the LSI with ALL_ATTRIBUTES: the whole items, in the index's order */
    kura_scan_req sa = {
        .table_name = TABLE, .index_name = "ByX", .select = KURA_SELECT_ALL_ATTRIBUTES};
    collected c;
    collect_scan(f->db, d, sa, 11, &c);
    assert_int_equal(c.n, NITEMS - (NITEMS + 6) / 7);
    for (size_t i = 0; i < c.n; i++) {
        char num[64];
        kura_value_num(kura_value_get(c.items[i], "sk", 2), num, sizeof num);
        assert_value_equal(c.items[i], f->items[atoi(num)]);
    }
    collected_free(&c);
    kura_value_free(vals);
}

/* Writes move items in and out of the indexes; reads see them once the GSIs caught up. */
static void test_index_follows_writes(void **state)
{
    fixture *f = *state;
    kura_value *vals = M(":c", S("c2"), ":x", S("x999"), NULL);
    kura_query_req r = {.table_name = TABLE,
                        .index_name = "ByC",
                        .key_condition_expression = "c = :c AND x = :x",
                        .expr = {NULL, vals}};
    kura_page p;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 0);
    kura_page_free(&p);
    /* item 2 (c2) gets x999 */
    kura_value *key = M("pk", S("p2"), "sk", Nint(2), NULL);
    kura_value *uv = M(":x", S("x999"), NULL);
    kura_update_item_req u = {
        .table_name = TABLE, .key = key, .update_expression = "SET x = :x", .expr = {NULL, uv}};
    kura_write_result wr;
    assert_kura_ok(kura_update_item(f->db, &u, &wr));
    kura_write_result_free(&wr);
    wait_gsis(f->db, TABLE);
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 1);
    kura_page_free(&p);
    /* the LSI at once */
    kura_value *lv = M(":p", S("p2"), ":x", S("x999"), NULL);
    kura_query_req l = {.table_name = TABLE,
                        .index_name = "ByX",
                        .key_condition_expression = "pk = :p AND x = :x",
                        .expr = {NULL, lv}};
    assert_kura_ok(kura_query(f->db, &l, &p));
    assert_int_equal(p.count, 1);
    kura_page_free(&p);
    /* deleted: gone from both */
    kura_delete_item_req del = {.table_name = TABLE, .key = key};
    assert_kura_ok(kura_delete_item(f->db, &del, &wr));
    kura_write_result_free(&wr);
    wait_gsis(f->db, TABLE);
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 0);
    kura_page_free(&p);
    assert_kura_ok(kura_query(f->db, &l, &p));
    assert_int_equal(p.count, 0);
    kura_page_free(&p);
    /* put back as it was (the other tests' oracle) */
    put(f->db, TABLE, f->items[2]);
    wait_gsis(f->db, TABLE);
    kura_value_free(lv);
    kura_value_free(key);
    kura_value_free(uv);
    kura_value_free(vals);
}

/* ---- Capacity ---------------------------------------------------------------------------------
 */

static void expect_units(const kura_consumed_capacity *cc, double total, double table,
                         const char *index, bool global, double index_units)
{
    assert_true(cc->present);
    if (fabs(cc->capacity_units - total) > 1e-9 || fabs(cc->table_capacity_units - table) > 1e-9)
        fail_msg("capacity %.2f (table %.2f), want %.2f (table %.2f)", cc->capacity_units,
                 cc->table_capacity_units, total, table);
    if (!index) {
        assert_int_equal(cc->index_count, 0);
        return;
    }
    assert_int_equal(cc->index_count, 1);
    assert_string_equal(cc->indexes[0].index_name, index);
    assert_int_equal(cc->indexes[0].global, global);
    if (fabs(cc->indexes[0].capacity_units - index_units) > 1e-9)
        fail_msg("index %s: %.2f units, want %.2f", index, cc->indexes[0].capacity_units,
                 index_units);
}

static void test_capacity(void **state)
{
    fixture *f = *state;
    kura_value *vals = M(":p", S("p1"), NULL);
    kura_page p;
    /* an LSI Query of one small item: ALL_ATTRIBUTES reads it from the table (DynamoDB Local
     * 1.25.1: total 1.0, Table 0.5, LSI 0.5) */
    kura_query_req r = {.table_name = TABLE,
                        .index_name = "ByX",
                        .key_condition_expression = "pk = :p",
                        .expr = {NULL, vals},
                        .limit = 1,
                        .select = KURA_SELECT_ALL_ATTRIBUTES,
                        .return_consumed_capacity = KURA_CAPACITY_INDEXES};
    assert_kura_ok(kura_query(f->db, &r, &p));
    expect_units(&p.consumed_capacity, 1.0, 0.5, "ByX", false, 0.5);
    assert_string_equal(p.consumed_capacity.table_name, TABLE);
    kura_page_free(&p);
    r.consistent_read = true; /* allowed on an LSI; both reads cost twice */
    assert_kura_ok(kura_query(f->db, &r, &p));
    expect_units(&p.consumed_capacity, 2.0, 1.0, "ByX", false, 1.0);
    kura_page_free(&p);
    r.consistent_read = false;
    r.return_consumed_capacity = KURA_CAPACITY_TOTAL; /* TOTAL: no breakdown */
    assert_kura_ok(kura_query(f->db, &r, &p));
    expect_units(&p.consumed_capacity, 1.0, 0.0, NULL, false, 0);
    kura_page_free(&p);
    /* per item: 3 items read from the table cost 0.5 each, the entries 0.5 together */
    r.limit = 3;
    r.return_consumed_capacity = KURA_CAPACITY_INDEXES;
    assert_kura_ok(kura_query(f->db, &r, &p));
    expect_units(&p.consumed_capacity, 2.0, 1.5, "ByX", false, 0.5);
    kura_page_free(&p);
    /* the entries only */
    r.select = KURA_SELECT_DEFAULT;
    assert_kura_ok(kura_query(f->db, &r, &p));
    expect_units(&p.consumed_capacity, 0.5, 0.0, "ByX", false, 0.5);
    kura_page_free(&p);
    /* a GSI Scan of one item: total 0.5, Table 0.0, GSI 0.5 */
    kura_scan_req s = {.table_name = TABLE,
                       .index_name = "Multi",
                       .limit = 1,
                       .return_consumed_capacity = KURA_CAPACITY_INDEXES};
    assert_kura_ok(kura_scan(f->db, &s, &p));
    expect_units(&p.consumed_capacity, 0.5, 0.0, "Multi", true, 0.5);
    kura_page_free(&p);
    /* the JSON: Table, then LocalSecondaryIndexes / GlobalSecondaryIndexes */
    static const char body[] =
        "{\"TableName\":\"Orders\",\"IndexName\":\"ByX\",\"KeyConditionExpression\":\"pk = :p\","
        "\"ExpressionAttributeValues\":{\":p\":{\"S\":\"p1\"}},\"Limit\":1,\"Select\":"
        "\"ALL_ATTRIBUTES\",\"ReturnConsumedCapacity\":\"INDEXES\"}";
    char *out = NULL;
    size_t len = 0;
    assert_kura_ok(kura_execute(f->db, "Query", body, strlen(body), &out, &len));
    const char *want = "\"ConsumedCapacity\":{\"TableName\":\"Orders\",\"CapacityUnits\":1.0,"
                       "\"Table\":{\"CapacityUnits\":0.5},\"LocalSecondaryIndexes\":{\"ByX\":"
                       "{\"CapacityUnits\":0.5}}}";
    if (!strstr(out, want)) fail_msg("%s\nwant %s", out, want);
    kura_free(out);
    static const char body2[] = "{\"TableName\":\"Orders\",\"IndexName\":\"Multi\",\"Limit\":1,"
                                "\"ReturnConsumedCapacity\":\"INDEXES\"}";
    assert_kura_ok(kura_execute(f->db, "Scan", body2, strlen(body2), &out, &len));
    want = "\"ConsumedCapacity\":{\"TableName\":\"Orders\",\"CapacityUnits\":0.5,\"Table\":"
           "{\"CapacityUnits\":0.0},\"GlobalSecondaryIndexes\":{\"Multi\":{\"CapacityUnits\":"
           "0.5}}}";
    if (!strstr(out, want)) fail_msg("%s\nwant %s", out, want);
    kura_free(out);
    static const char body3[] = "{\"TableName\":\"Orders\",\"IndexName\":\"Multi\",\"Limit\":1,"
                                "\"ReturnConsumedCapacity\":\"TOTAL\"}";
    assert_kura_ok(kura_execute(f->db, "Scan", body3, strlen(body3), &out, &len));
    want = "\"ConsumedCapacity\":{\"TableName\":\"Orders\",\"CapacityUnits\":0.5}}";
    if (!strstr(out, want)) fail_msg("%s\nwant %s", out, want);
    kura_free(out);
    kura_value_free(vals);
}

/* Items of 5 KB read from the table for an LSI cost 1.0 each (eventually consistent). */
static void test_capacity_large(void **state)
{
    fixture *f = *state;
    char *big = malloc(5001);
    memset(big, 'z', 5000);
    big[5000] = 0;
    for (int i = 0; i < 3; i++) {
        char x[8];
        snprintf(x, sizeof x, "y%d", i);
        kura_value *it = M("pk", S("big"), "sk", Nint(1000 + i), "x", S(x), "big", S(big), NULL);
        put(f->db, TABLE, it);
        kura_value_free(it);
    }
    kura_value *vals = M(":p", S("big"), NULL);
    kura_query_req r = {.table_name = TABLE,
                        .index_name = "ByX",
                        .key_condition_expression = "pk = :p",
                        .expr = {NULL, vals},
                        .select = KURA_SELECT_ALL_ATTRIBUTES,
                        .return_consumed_capacity = KURA_CAPACITY_INDEXES};
    kura_page p;
    assert_kura_ok(kura_query(f->db, &r, &p));
    assert_int_equal(p.count, 3);
    expect_units(&p.consumed_capacity, 3.5, 3.0, "ByX", false, 0.5);
    kura_page_free(&p);
    for (int i = 0; i < 3; i++) {
        kura_value *key = M("pk", S("big"), "sk", Nint(1000 + i), NULL);
        kura_delete_item_req d = {.table_name = TABLE, .key = key};
        kura_write_result wr;
        assert_kura_ok(kura_delete_item(f->db, &d, &wr));
        kura_write_result_free(&wr);
        kura_value_free(key);
    }
    wait_gsis(f->db, TABLE);
    kura_value_free(vals);
    free(big);
}

/* ---- Errors ------------------------------------------------------------------------------------
 */

#define INVALID "One or more parameter values were invalid: "

/* The ExpressionAttributeValues an expression uses, from a fixed pool (unused ones would be
 * an error of their own). */
static kura_value *values_for(const char *a, const char *b)
{
    static const char *const names[] = {":c", ":p", ":n", ":s", ":x", ":g"};
    kura_value *m = kura_value_map();
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *texts[2] = {a, b};
        bool used = false;
        for (int t = 0; t < 2; t++) {
            for (const char *q = texts[t]; q && (q = strstr(q, names[i])) != NULL; q += 2) {
                char next = q[2];
                if (!(next >= 'a' && next <= 'z') && !(next >= '0' && next <= '9')) used = true;
            }
        }
        if (!used) continue;
        kura_value *v = i == 0   ? S("c1")
                        : i == 1 ? S("p1")
                        : i == 2 ? Nint(1)
                        : i == 3 ? S("s")
                        : i == 4 ? S("x5")
                                 : S("g1");
        put_attr(m, names[i], v);
    }
    if (kura_value_count(m) == 0) {
        kura_value_free(m);
        return NULL;
    }
    return m;
}

static kura_status query(fixture *f, const char *index, const char *kc, const char *filter,
                         const char *proj, kura_select select, bool consistent,
                         const kura_value *esk)
{
    kura_value *values = values_for(kc, filter);
    kura_query_req r = {.table_name = TABLE,
                        .index_name = index,
                        .key_condition_expression = kc,
                        .filter_expression = filter,
                        .projection_expression = proj,
                        .expr = {NULL, values},
                        .select = select,
                        .consistent_read = consistent,
                        .exclusive_start_key = esk};
    kura_page p = {0};
    kura_status s = kura_query(f->db, &r, &p);
    kura_page_free(&p);
    kura_value_free(values);
    return s;
}

static kura_status scan(fixture *f, const char *index, const char *filter, const char *proj,
                        kura_select select, bool consistent, const kura_value *esk)
{
    kura_value *values = values_for(filter, NULL);
    kura_scan_req r = {.table_name = TABLE,
                       .index_name = index,
                       .filter_expression = filter,
                       .projection_expression = proj,
                       .expr = {NULL, values},
                       .select = select,
                       .consistent_read = consistent,
                       .exclusive_start_key = esk};
    kura_page p = {0};
    kura_status s = kura_scan(f->db, &r, &p);
    kura_page_free(&p);
    kura_value_free(values);
    return s;
}

static void test_errors_index_select(void **state)
{
    fixture *f = *state;
    const kura_select DEF = KURA_SELECT_DEFAULT, ALL = KURA_SELECT_ALL_ATTRIBUTES,
                      APA = KURA_SELECT_ALL_PROJECTED_ATTRIBUTES;
    expect_err(query(f, "Nope", "c = :c", NULL, NULL, DEF, false, NULL), KURA_E_INVALID,
               "The table does not have the specified index: Nope");
    expect_err(scan(f, "Nope", NULL, NULL, DEF, false, NULL), KURA_E_INVALID,
               "The table does not have the specified index: Nope");
    expect_err(query(f, "ByC", "c = :c", NULL, NULL, DEF, true, NULL), KURA_E_INVALID,
               "Consistent read cannot be true when querying a GSI");
    expect_err(scan(f, "Multi", NULL, NULL, DEF, true, NULL), KURA_E_INVALID,
               "Consistent read cannot be true when scanning a GSI");
    assert_kura_ok(query(f, "ByX", "pk = :p", NULL, NULL, DEF, true, NULL));
    assert_kura_ok(scan(f, "ByX", NULL, NULL, DEF, true, NULL));
    expect_err(query(f, "ByC", "c = :c", NULL, NULL, ALL, false, NULL), KURA_E_INVALID,
               INVALID "Select type ALL_ATTRIBUTES is not supported for global secondary index "
                       "ByC because its projection type is not ALL");
    expect_err(scan(f, "ByC", NULL, NULL, ALL, false, NULL), KURA_E_INVALID,
               INVALID "Select type ALL_ATTRIBUTES is not supported for global secondary index "
                       "ByC because its projection type is not ALL");
    assert_kura_ok(scan(f, "Multi", NULL, NULL, ALL, false, NULL)); /* projection ALL */
    assert_kura_ok(query(f, "ByC", "c = :c", NULL, NULL, APA, false, NULL));
    assert_kura_ok(scan(f, "ByX", NULL, NULL, APA, false, NULL));
    expect_err(query(f, NULL, "pk = :p", NULL, NULL, APA, false, NULL), KURA_E_INVALID,
               "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName");
    expect_err(scan(f, NULL, NULL, NULL, APA, false, NULL), KURA_E_INVALID,
               "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName");
    expect_err(scan(f, "ByC", NULL, "x", APA, false, NULL), KURA_E_INVALID,
               "Cannot specify the ProjectionExpression when choosing to get "
               "ALL_PROJECTED_ATTRIBUTES");
    /* projections naming what a GSI does not store; the list in DynamoDB Local's order */
    expect_err(query(f, "ByC", "c = :c", NULL, "b", DEF, false, NULL), KURA_E_INVALID,
               INVALID "Global secondary index ByC does not project [b]");
    expect_err(query(f, "ByC", "c = :c", NULL, "q, a, A", DEF, false, NULL), KURA_E_INVALID,
               INVALID "Global secondary index ByC does not project [A, q]");
    expect_err(scan(f, "ByC", NULL, "b, zz, b.c2", DEF, false, NULL), KURA_E_INVALID,
               "Invalid ProjectionExpression: Two document paths overlap with each other; must "
               "remove or rewrite one of these paths; path one: [b], path two: [b, c2]");
    expect_err(scan(f, "ByC", NULL, "b, zz", DEF, false, NULL), KURA_E_INVALID,
               INVALID "Global secondary index ByC does not project [zz, b]");
    assert_kura_ok(query(f, "ByC", "c = :c", NULL, "a, x, pk, sk, c", DEF, false, NULL));
    assert_kura_ok(query(f, "ByX", "pk = :p", NULL, "b, zz", DEF, false, NULL)); /* fetch */
    /* filters */
    expect_err(query(f, "ByC", "c = :c", "b = :n AND zz = :n AND a = :s", NULL, DEF, false, NULL),
               KURA_E_INVALID,
               INVALID "Secondary index ByC does not project one or more filter attributes: "
                       "[b, zz]");
    expect_err(query(f, "ByX", "pk = :p", "size(b) > :n", NULL, DEF, false, NULL), KURA_E_INVALID,
               INVALID "Secondary index ByX does not project one or more filter attributes: [b]");
    expect_err(query(f, "ByC", "c = :c", "x = :s", NULL, DEF, false, NULL), KURA_E_INVALID,
               "Filter Expression can only contain non-primary key attributes: Primary key "
               "attribute: x");
    expect_err(query(f, "ByX", "pk = :p", "x = :s AND pk = :s", NULL, DEF, false, NULL),
               KURA_E_INVALID,
               "Filter Expression can only contain non-primary key attributes: Primary key "
               "attribute: pk");
    expect_err(query(f, "Multi", "g = :s AND h = :n", "r2 = :s AND h = :n", NULL, DEF, false, NULL),
               KURA_E_INVALID,
               "Filter Expression can only contain non-primary key attributes: Primary key "
               "attribute: h");
    assert_kura_ok(query(f, "ByC", "c = :c", "pk = :p AND sk > :n", NULL, DEF, false, NULL));
    assert_kura_ok(scan(f, "ByC", "c = :c AND b > :n", NULL, DEF, false, NULL));
    /* paths into key attributes, of any index, also on the table */
    expect_err(query(f, "ByC", "c = :c", NULL, "a, h.q", DEF, false, NULL), KURA_E_INVALID,
               "Key attributes must be scalars; list random access '[]' and map lookup '.' are "
               "not allowed: IndexKey: h");
    expect_err(query(f, "ByC", "c = :c", NULL, "x[0], sk.q", DEF, false, NULL), KURA_E_INVALID,
               "Key attributes must be scalars; list random access '[]' and map lookup '.' are "
               "not allowed: Key: sk");
    expect_err(query(f, NULL, "pk = :p", NULL, "r1.q", DEF, false, NULL), KURA_E_INVALID,
               "Key attributes must be scalars; list random access '[]' and map lookup '.' are "
               "not allowed: IndexKey: r1");
    expect_err(scan(f, NULL, "attribute_exists(x.q)", NULL, DEF, false, NULL), KURA_E_INVALID,
               "Key attributes must be scalars; list random access '[]' and map lookup '.' are "
               "not allowed: IndexKey: x");
    /* the order of the checks (DynamoDB Local 1.25.1) */
    expect_err(query(f, "ByC", "c = :c", NULL, "h.q", DEF, true, NULL), KURA_E_INVALID,
               "Key attributes must be scalars; list random access '[]' and map lookup '.' are "
               "not allowed: IndexKey: h");
    expect_err(query(f, "ByC", "pk = :p", NULL, NULL, DEF, true, NULL), KURA_E_INVALID,
               "Consistent read cannot be true when querying a GSI");
    expect_err(query(f, "ByC", "c = :c", "b = :n", "b", KURA_SELECT_COUNT, false, NULL),
               KURA_E_INVALID,
               INVALID "Secondary index ByC does not project one or more filter attributes: [b]");
    expect_err(query(f, "ByC", "c = :c", NULL, "b", KURA_SELECT_COUNT, false, NULL), KURA_E_INVALID,
               "Cannot specify the ProjectionExpression when choosing to get only the Count");
    expect_err(scan(f, "ByC", NULL, "h.q", KURA_SELECT_COUNT, false, NULL), KURA_E_INVALID,
               "Cannot specify the ProjectionExpression when choosing to get only the Count");
    /* key conditions on an index (index/key_range.c's messages) */
    expect_err(query(f, "ByC", "pk = :p", NULL, NULL, DEF, false, NULL), KURA_E_INVALID,
               "Query condition missed key schema element: c");
    expect_err(query(f, "ByC", "c = :n", NULL, NULL, DEF, false, NULL), KURA_E_INVALID,
               INVALID "Condition parameter type does not match schema type");
    expect_err(query(f, "Multi", "g = :s", NULL, NULL, DEF, false, NULL), KURA_E_INVALID,
               "Query condition missed key schema element: h");
}

static void test_errors_start_key(void **state)
{
    fixture *f = *state;
    const kura_select DEF = KURA_SELECT_DEFAULT;
    kura_value *esk;
#define ESK_Q(esk_, msg)                                                                           \
    do {                                                                                           \
        esk = (esk_);                                                                              \
        expect_err(query(f, "ByC", "c = :c", NULL, NULL, DEF, false, esk), KURA_E_INVALID, msg);   \
        kura_value_free(esk);                                                                      \
    } while (0)
    ESK_Q(M("pk", S("p1"), "sk", Nint(1), NULL),
          "Exclusive Start Key must have same size as table's key schema");
    ESK_Q(M("pk", S("p1"), "sk", Nint(1), "c", S("c1"), "x", S("x"), "q", S("1"), NULL),
          "Exclusive Start Key must have same size as table's key schema");
    ESK_Q(M("pk", S("p1"), "sk", Nint(1), "c", S("c1"), "q", S("x"), NULL),
          "The provided starting key is invalid");
    ESK_Q(M("pk", S("p1"), "sk", S("1"), "c", S("c1"), "x", S("x"), NULL),
          "The provided key element does not match the schema");
    ESK_Q(M("pk", S("p1"), "sk", Nint(1), "c", Nint(1), "x", S("x"), NULL),
          "The provided key element does not match the schema");
    /* types before empty values, the table's attributes first */
    ESK_Q(M("pk", S(""), "sk", Nint(1), "c", S("c1"), "x", Nint(1), NULL),
          "The provided key element does not match the schema");
    ESK_Q(M("pk", S(""), "sk", Nint(1), "c", S(""), "x", S("x"), NULL),
          "The provided starting key is invalid: One or more parameter values are not valid. "
          "The AttributeValue for a key attribute cannot contain an empty string value. Key: pk");
    ESK_Q(M("pk", S("p"), "sk", Nint(1), "c", S("c1"), "x", S(""), NULL),
          "The provided starting key is invalid: One or more parameter values are not valid. A "
          "value specified for a secondary index key is not supported. The AttributeValue for a "
          "key attribute cannot contain an empty string value. IndexName: ByC, IndexKey: x");
    /* against the key condition */
    ESK_Q(M("pk", S("p1"), "sk", Nint(1), "c", S("c2"), "x", S("x"), NULL),
          "The provided starting key is outside query boundaries based on provided conditions");
    expect_err(query(f, "ByC", "c = :c AND x > :x", NULL, NULL, DEF, false,
                     esk = M("pk", S("p1"), "sk", Nint(1), "c", S("c1"), "x", S("x1"), NULL)),
               KURA_E_INVALID, "The provided starting key does not match the range key predicate");
    kura_value_free(esk);
    expect_err(query(f, "ByC", "c = :c AND x > :x", NULL, NULL, DEF, false,
                     esk = M("pk", S("p1"), "sk", Nint(1), "c", S("c2"), "x", S("x7"), NULL)),
               KURA_E_INVALID, "The query can return at most one row and cannot be restarted");
    kura_value_free(esk);
    /* an LSI: pk is both the table's and the index's */
    esk = M("pk", S("p1"), "sk", Nint(1), "x", S("x"), "q", S("x"), NULL);
    expect_err(query(f, "ByX", "pk = :p", NULL, NULL, DEF, false, esk), KURA_E_INVALID,
               "Exclusive Start Key must have same size as table's key schema");
    kura_value_free(esk);
    esk = M("pk", S("p1"), "sk", Nint(1), "x", S("x"), NULL);
    assert_kura_ok(query(f, "ByX", "pk = :p", NULL, NULL, DEF, false, esk));
    kura_value_free(esk);
    /* Scan: the same checks, then the segment */
    esk = M("pk", S("p1"), "sk", Nint(1), NULL);
    expect_err(scan(f, "ByC", NULL, NULL, DEF, false, esk), KURA_E_INVALID,
               "Exclusive Start Key must have same size as table's key schema");
    kura_value_free(esk);
    esk = M("pk", S("p1"), "sk", Nint(1), "c", S(""), "x", S("x"), NULL);
    expect_err(scan(f, "ByC", NULL, NULL, DEF, false, esk), KURA_E_INVALID,
               "The provided starting key is invalid: One or more parameter values are not valid. "
               "A value specified for a secondary index key is not supported. The AttributeValue "
               "for a key attribute cannot contain an empty string value. IndexName: ByC, "
               "IndexKey: c");
    kura_value_free(esk);
    /* a start key in another segment */
    const idx_def *d = index_def(f->db, "ByC");
    esk = M("pk", S("p1"), "sk", Nint(1), "c", S("c1"), "x", S("x"), NULL);
    kbuf ek = KBUF_INIT;
    bool present;
    assert_kura_ok(idx_entry_key(d, &ORDERS_KS, esk, &ek, &present));
    uint32_t seg = dec_fixed64_be(ek.data) >> 63 ? 0 : 1; /* the other half */
    kbuf_free(&ek);
    kura_scan_req r = {.table_name = TABLE,
                       .index_name = "ByC",
                       .exclusive_start_key = esk,
                       .has_segment = true,
                       .segment = seg,
                       .total_segments = 2};
    kura_page p;
    char msg[256];
    snprintf(msg, sizeof msg,
             "The provided starting key is invalid: Invalid ExclusiveStartKey. Please use "
             "ExclusiveStartKey with correct Segment. TotalSegments: 2 Segment: %u",
             seg);
    expect_err(kura_scan(f->db, &r, &p), KURA_E_INVALID, msg);
    r.segment = 1 - seg;
    assert_kura_ok(kura_scan(f->db, &r, &p));
    kura_page_free(&p);
    kura_value_free(esk);
#undef ESK_Q
}

/* ---- Indexes added and deleted by UpdateTable, while they are read ------------------------ */

static kura_status exec_json(kura_db *db, const char *op, const char *body, char **out)
{
    size_t len = 0;
    *out = NULL;
    return kura_execute(db, op, body, strlen(body), out, &len);
}

static void exec_ok(kura_db *db, const char *op, const char *body)
{
    char *out = NULL;
    kura_status s = exec_json(db, op, body, &out);
    if (s != KURA_OK) fail_msg("%s %s\n  -> %s: %s", op, body, kura_status_str(s), out);
    kura_free(out);
}

/* Polls DescribeTable until index `name` of table Drop has status `want` (NULL: is gone). */
static void wait_index_status(kura_db *db, const char *name, const char *want)
{
    for (int i = 0; i < 1000; i++) { /* 10 s */
        char *out = NULL;
        assert_kura_ok(exec_json(db, "DescribeTable", "{\"TableName\":\"Drop\"}", &out));
        char pat[64];
        snprintf(pat, sizeof pat, "\"IndexName\":\"%s\"", name);
        const char *at = strstr(out, pat);
        const char *st = at ? strstr(at, "\"IndexStatus\":\"") : NULL;
        bool done = want ? st && !strncmp(st + 15, want, strlen(want)) : !at;
        kura_free(out);
        if (done) return;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    fail_msg("index %s never became %s", name, want ? want : "gone");
}

typedef struct reader_arg {
    kura_db *db;
    atomic_bool stop;
    uint64_t ok, gone;
} reader_arg;

/* Scans index Gix page by page until stopped: every page either reads the index or finds it
 * gone, never anything else (and never a dropped tree: ASan). */
static void *reader_main(void *p)
{
    reader_arg *a = p;
    while (!atomic_load(&a->stop)) {
        kura_scan_req r = {.table_name = "Drop", .index_name = "Gix", .limit = 3};
        kura_page pg;
        kura_status s = kura_scan(a->db, &r, &pg);
        if (s == KURA_OK) {
            a->ok++;
            kura_page_free(&pg);
        } else if (s == KURA_E_INVALID &&
                   !strcmp(kura_last_error(), "The table does not have the specified index: Gix")) {
            a->gone++;
        } else {
            fprintf(stderr, "reader: %s: %s\n", kura_status_str(s), kura_last_error());
            abort();
        }
    }
    return NULL;
}

static void test_update_table_indexes(void **state)
{
    fixture *f = *state;
    exec_ok(f->db, "CreateTable",
            "{\"TableName\":\"Drop\",\"BillingMode\":\"PAY_PER_REQUEST\","
            "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
            "{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],"
            "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],"
            "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"Gix\",\"KeySchema\":[{\"AttributeName\":"
            "\"g\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]}");
    for (int i = 0; i < 200; i++) {
        char pk[16], g[16];
        snprintf(pk, sizeof pk, "k%d", i);
        snprintf(g, sizeof g, "g%d", i % 5);
        kura_value *it = M("pk", S(pk), "g", S(g), "v", Nint(i), NULL);
        put(f->db, "Drop", it);
        kura_value_free(it);
    }
    assert_kura_ok(kura_index_wait(f->db, "Drop", "Gix", WAIT_MS));
    reader_arg a = {.db = f->db};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, reader_main, &a), 0);
    while (a.ok < 20)
        sched_yield();
    exec_ok(f->db, "UpdateTable",
            "{\"TableName\":\"Drop\",\"GlobalSecondaryIndexUpdates\":[{\"Delete\":"
            "{\"IndexName\":\"Gix\"}}]}");
    /* at once: a GSI being deleted is not there for reads */
    kura_scan_req r = {.table_name = "Drop", .index_name = "Gix"};
    kura_page p;
    expect_err(kura_scan(f->db, &r, &p), KURA_E_INVALID,
               "The table does not have the specified index: Gix");
    wait_index_status(f->db, "Gix", NULL); /* its tree went once the reads ended */
    atomic_store(&a.stop, true);
    pthread_join(th, NULL);
    assert_true(a.ok >= 20);
    /* created again: backfilled, then read */
    exec_ok(f->db, "UpdateTable",
            "{\"TableName\":\"Drop\",\"AttributeDefinitions\":[{\"AttributeName\":\"g\","
            "\"AttributeType\":\"S\"}],\"GlobalSecondaryIndexUpdates\":[{\"Create\":"
            "{\"IndexName\":\"Gix\",\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],"
            "\"Projection\":{\"ProjectionType\":\"ALL\"}}}]}");
    kura_status s = kura_scan(f->db, &r, &p);
    if (s == KURA_OK)
        kura_page_free(&p);
    else
        expect_err(s, KURA_E_INVALID, "Cannot read from backfilling global secondary index: Gix");
    wait_index_status(f->db, "Gix", "ACTIVE");
    kura_value *vals = M(":g", S("g3"), NULL);
    kura_query_req q = {.table_name = "Drop",
                        .index_name = "Gix",
                        .key_condition_expression = "g = :g",
                        .expr = {NULL, vals}};
    assert_kura_ok(kura_query(f->db, &q, &p));
    assert_int_equal(p.count, 40);
    assert_non_null(kura_value_get(kura_value_at(p.items, 0, NULL, NULL), "v", 1));
    kura_page_free(&p);
    kura_value_free(vals);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_lsi),
        cmocka_unit_test(test_query_gsi_multi),
        cmocka_unit_test(test_query_gsi_include),
        cmocka_unit_test(test_scan_indexes),
        cmocka_unit_test(test_select_and_projection),
        cmocka_unit_test(test_index_follows_writes),
        cmocka_unit_test(test_capacity),
        cmocka_unit_test(test_capacity_large),
        cmocka_unit_test(test_errors_index_select),
        cmocka_unit_test(test_errors_start_key),
        cmocka_unit_test(test_update_table_indexes),
    };
    return cmocka_run_group_tests(tests, fx_setup_group, fx_teardown_group);
}

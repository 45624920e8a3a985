/*
 * engine_index_rebuild_test.c - kura_rebuild_index (engine/table_rebuild.c, index/shadow.c)
 * and the rebuild at open of indexes an earlier kura made.
 *
 * The table "Trb" has an LSI ByL (pk, lsk; INCLUDE x), a GSI ByG (gpk, gsk; ALL) and a GSI ByK
 * (gpk; KEYS_ONLY). Every case damages indexes straight in their trees (crash/ixdamage.h: old
 * versions of items beside the current ones, stale values, lost entries), checks that the
 * index checker (crash/index_check.h) and Queries on the index see the damage, rebuilds, and
 * checks that both then agree with the table:
 *   - each kind of damage on the GSI and on the LSI, then a reopen (nothing rebuilt at open);
 *     the index keeps its name and status, its trees are new and the old ones are gone;
 *   - a rebuild of each index while four threads run PutItem, UpdateItem, DeleteItem and
 *     TransactWriteItems on the table (the writes must keep going during the rebuild);
 *   - an "old" database: the catalog rewritten without the flag bit 4 as an earlier kura left
 *     it, the indexes damaged; the reopen rebuilds every one of them, counts them in
 *     kura_stats, and the catalog has the flag again; a catalog with the bit on a table's tree
 *     or an unknown bit is refused;
 *   - the errors: no such table or index, an index being created or deleted, a rebuild of the
 *     table already running.
 */
#include "testutil.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/table.h"
#include "engine/table_index.h"
#include "index_check.h"
#include "ixdamage.h"
#include "util/thread.h"

#define TBL "Trb"

static const char CREATE[] =
    "{\"TableName\":\"" TBL "\",\"BillingMode\":\"PAY_PER_REQUEST\","
    "\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"lsk\",\"AttributeType\":\"N\"},"
    "{\"AttributeName\":\"gpk\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"gsk\",\"AttributeType\":\"N\"}],"
    "\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],"
    "\"LocalSecondaryIndexes\":[{\"IndexName\":\"ByL\",\"KeySchema\":["
    "{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"lsk\",\"KeyType\":"
    "\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"x\"]}}],"
    "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"ByG\",\"KeySchema\":["
    "{\"AttributeName\":\"gpk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"gsk\",\"KeyType\":"
    "\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}},"
    "{\"IndexName\":\"ByK\",\"KeySchema\":[{\"AttributeName\":\"gpk\",\"KeyType\":\"HASH\"}],"
    "\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}}]}";

static const char *const INDEXES[] = {"ByL", "ByG", "ByK"};
enum { NINDEXES = 3, NPK = 13, NG = 7, NITEMS = 600, WAIT_MS = 30000 };

static kura_options options(void)
{
    kura_options o;
    kura_options_init(&o);
    o.durability = KURA_RELAXED;
    o.memtable_budget_bytes = 1 << 20; /* small: index checkpoints and flushes happen */
    o.default_partitions = 4;
    return o;
}

static kura_status exec(kura_db *db, const char *op, const char *body, char *why, size_t cap)
{
    char *out = NULL;
    size_t len = 0;
    kura_status s = kura_execute(db, op, body, strlen(body), &out, &len);
    if (s != KURA_OK)
        snprintf(why, cap, "%s %s -> %s", op, body, out ? out : kura_last_error());
    kura_free(out);
    return s;
}

static void ok(kura_db *db, const char *op, const char *body)
{
    char why[4096];
    if (exec(db, op, body, why, sizeof why) != KURA_OK)
        fail_msg("%s", why);
}

/* Item i's attributes, version `ver` (which moves its index keys). */
static void item_json(int i, int ver, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%05d\"},"
                               "\"x\":{\"S\":\"x%d.%d\"}", i % NPK, i, i, ver);
    if ((i + ver) % 5)
        n += snprintf(buf + n, cap - n, ",\"lsk\":{\"N\":\"%d\"}", (i * 7 + ver) % 50);
    if ((i + ver) % 6)
        n += snprintf(buf + n, cap - n, ",\"gpk\":{\"S\":\"g%d\"},\"gsk\":{\"N\":\"%d\"}",
                      (i + ver) % NG, (i * 3 + ver) % 11);
    snprintf(buf + n, cap - n, "}");
}

static void put(kura_db *db, int i, int ver)
{
    char item[512], body[1024];
    item_json(i, ver, item, sizeof item);
    snprintf(body, sizeof body, "{\"TableName\":\"" TBL "\",\"Item\":%s}", item);
    ok(db, "PutItem", body);
}

static kura_db *open_db(const char *dir)
{
    kura_options o = options();
    kura_db *db;
    assert_kura_ok(kura_open(dir, &o, &db));
    return db;
}

static kura_db *make_db(const char *dir)
{
    kura_db *db = open_db(dir);
    ok(db, "CreateTable", CREATE);
    for (int i = 0; i < NITEMS; i++)
        put(db, i, 0);
    return db;
}

static void check_ok(kura_db *db, const char *when)
{
    if (index_check_table(db, TBL, WAIT_MS) != KURA_OK)
        fail_msg("%s: %s", when, kura_last_error());
}

/* ---- Queries on an index against a Scan of the table ----------------------------------- */

/* Every item of a Query (index, hash attribute = value) or of a Scan of the table filtered on
 * the same, projected to `proj`, into *out (an L), sorted by table key. */
static void read_all(kura_db *db, const char *index, const char *attr, const char *value,
                     const char *proj, kura_value *out)
{
    kura_value names = {0}, values = {0};
    val_init_container(&names, KURA_M);
    val_init_container(&values, KURA_M);
    kura_value n = {0}, v = {0};
    assert_kura_ok(val_set_bytes(&n, KURA_S, attr, strlen(attr)));
    assert_kura_ok(val_set_bytes(&v, KURA_S, value, strlen(value)));
    assert_kura_ok(val_map_put(&names, "#h", 2, &n));
    assert_kura_ok(val_map_put(&values, ":v", 2, &v));
    val_init_container(out, KURA_L);
    kura_value *start = NULL;
    do {
        kura_page page;
        memset(&page, 0, sizeof page);
        if (index) {
            kura_query_req q = {.table_name = TBL, .index_name = index,
                                .key_condition_expression = "#h = :v",
                                .projection_expression = proj, .expr = {&names, &values},
                                .exclusive_start_key = start};
            assert_kura_ok(kura_query(db, &q, &page));
        } else {
            kura_scan_req q = {.table_name = TBL, .filter_expression = "#h = :v",
                               .projection_expression = proj, .expr = {&names, &values},
                               .exclusive_start_key = start};
            assert_kura_ok(kura_scan(db, &q, &page));
        }
        for (uint32_t i = 0; page.items && i < page.items->u.list.n; i++) {
            kura_value c = {0};
            assert_kura_ok(val_copy(&c, &page.items->u.list.v[i]));
            assert_kura_ok(val_list_push(out, &c));
        }
        if (start) {
            val_clear(start);
            free(start);
        }
        start = page.last_evaluated_key;
        page.last_evaluated_key = NULL;
        kura_page_free(&page);
    } while (start);
    val_clear(&names);
    val_clear(&values);
}

static int key_cmp(const void *a, const void *b)
{
    const kura_value *x = a, *y = b;
    int c = val_cmp_scalar(val_map_get(x, "pk", 2), val_map_get(y, "pk", 2));
    return c ? c : val_cmp_scalar(val_map_get(x, "sk", 2), val_map_get(y, "sk", 2));
}

/* Whether every Query of the index by its hash attribute returns exactly the items a Scan of
 * the table finds, with the index's projection. */
static bool queries_match(kura_db *db, const char *index, char *why, size_t cap)
{
    bool lsi = !strcmp(index, "ByL");
    const char *attr = lsi ? "pk" : "gpk";
    const char *proj = lsi ? "pk, sk, lsk, x" : !strcmp(index, "ByK") ? "pk, sk, gpk" : NULL;
    for (int i = 0; i < (lsi ? NPK : NG); i++) {
        char value[16];
        snprintf(value, sizeof value, "%s%d", lsi ? "p" : "g", i);
        kura_value got, want;
        read_all(db, index, attr, value, proj, &got);
        read_all(db, NULL, attr, value, proj, &want);
        if (lsi) { /* the LSI holds the items that have lsk only */
            uint32_t k = 0;
            for (uint32_t j = 0; j < want.u.list.n; j++) {
                kura_value *e = &want.u.list.v[j];
                if (!val_map_get(e, "lsk", 3))
                    val_clear(e);
                else if (k++ != j)
                    val_move(&want.u.list.v[k - 1], e);
            }
            want.u.list.n = k;
        }
        qsort(got.u.list.v, got.u.list.n, sizeof *got.u.list.v, key_cmp);
        qsort(want.u.list.v, want.u.list.n, sizeof *want.u.list.v, key_cmp);
        bool same = val_equal(&got, &want);
        if (!same)
            snprintf(why, cap, "Query %s %s = %s: %u items, the table has %u (or they differ)",
                     index, attr, value, got.u.list.n, want.u.list.n);
        val_clear(&got);
        val_clear(&want);
        if (!same)
            return false;
    }
    return true;
}

/* ---- The index's trees ------------------------------------------------------------------ */

/* The name of the trees of index `index` now. */
static void tree_name(kura_db *db, const char *index, char *out, size_t cap)
{
    kura_table *t;
    assert_kura_ok(table_acquire(db, TBL, &t));
    int i = table_index_find(t, index);
    assert_true(i >= 0);
    table_index_tree_name(t, table_index_def(t, (uint32_t)i), out, cap);
    table_release(t);
}

static bool tree_exists(kura_db *db, const char *name)
{
    const char *names[256];
    size_t n = kura_tree_list(db, names, 256);
    for (size_t i = 0; i < n && i < 256; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

/* The index trees of the table in the catalog, exactly one per index. */
static void trees_are_the_indexes(kura_db *db)
{
    char want[NINDEXES][64];
    for (int i = 0; i < NINDEXES; i++) {
        tree_name(db, INDEXES[i], want[i], sizeof want[i]);
        if (!tree_exists(db, want[i]))
            fail_msg("index %s: its tree %s is not in the catalog", INDEXES[i], want[i]);
    }
    const char *names[256];
    size_t n = kura_tree_list(db, names, 256), nidx = 0;
    for (size_t i = 0; i < n && i < 256; i++)
        nidx += !strncmp(names[i], "idx-", 4);
    if (nidx != NINDEXES)
        fail_msg("%zu index trees in the catalog for %d indexes", nidx, NINDEXES);
}

/* ---- Damage, see it, rebuild, see it gone -------------------------------------------------- */

static void damage_and_rebuild(kura_db *db, const char *index, ixd_kind kind, uint64_t seed)
{
    char why[512], before[64], after[64];
    assert_kura_ok(ixd_damage(db, TBL, index, kind, 3, seed));
    kura_status s = index_check_table(db, TBL, WAIT_MS);
    if (s != KURA_E_CORRUPTION)
        fail_msg("%s damage of %s: the index check says %s", ixd_kind_word(kind), index,
                 kura_status_str(s));
    if (!strstr(kura_last_error(), index) || !strstr(kura_last_error(), ixd_kind_word(kind)))
        fail_msg("%s damage of %s: the check reports %s", ixd_kind_word(kind), index,
                 kura_last_error());
    if (queries_match(db, index, why, sizeof why))
        fail_msg("%s damage of %s: Queries do not show it", ixd_kind_word(kind), index);
    tree_name(db, index, before, sizeof before);
    assert_kura_ok(kura_rebuild_index(db, TBL, index));
    tree_name(db, index, after, sizeof after);
    check_ok(db, "after the rebuild");
    if (!queries_match(db, index, why, sizeof why))
        fail_msg("after rebuilding %s: %s", index, why);
    assert_string_not_equal(before, after);
    assert_false(tree_exists(db, before));
    trees_are_the_indexes(db);
    kura_table_description d;
    assert_kura_ok(kura_describe_table(db, TBL, &d));
    for (size_t i = 0; i < d.global_secondary_indexes_count; i++)
        assert_string_equal(d.global_secondary_indexes[i].index_status, "ACTIVE");
    kura_table_description_free(&d);
}

static void test_damage_then_rebuild(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine_index_rebuild");
    kura_db *db = make_db(dir);
    check_ok(db, "before any damage");
    uint64_t seed = test_seed();
    for (int k = IXD_EXTRA; k <= IXD_MISSING; k++)
        for (int i = 0; i < NINDEXES; i++)
            damage_and_rebuild(db, INDEXES[i], (ixd_kind)k, seed + (uint64_t)(k * 10 + i));
    for (int i = 0; i < 50; i++) /* the rebuilt indexes are maintained */
        put(db, i * 7, 1);
    check_ok(db, "after writes");
    assert_kura_ok(kura_close(db));
    db = open_db(dir);
    check_ok(db, "after a reopen");
    kura_stats st;
    kura_get_stats(db, &st);
    assert_int_equal(st.indexes_rebuilt_at_open, 0);
    for (int i = 0; i < NINDEXES; i++) {
        char why[512];
        if (!queries_match(db, INDEXES[i], why, sizeof why))
            fail_msg("after a reopen: %s", why);
    }
    trees_are_the_indexes(db);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* ---- Rebuilds under writers ----------------------------------------------------------------- */

enum { NWRITERS = 4, KEYS_PER_WRITER = 400 };

typedef struct writer {
    kura_db *db;
    int w;
    bool *stop;
    uint64_t ops;
    kura_status s;
    char why[4096];
} writer;

/* Writer w's item j of its own range. */
static int wkey(int w, uint64_t r)
{
    return NITEMS + w * KEYS_PER_WRITER + (int)(r % KEYS_PER_WRITER);
}

static kura_status write_one(writer *wr, uint64_t *rng)
{
    char a[512], b[512], body[4096];
    int i = wkey(wr->w, test_rand(rng)), j = wkey(wr->w, test_rand(rng)), ver = (int)(test_rand(rng) % 9);
    const char *op;
    switch (test_rand(rng) % 4) {
    case 0:
        item_json(i, ver, a, sizeof a);
        snprintf(body, sizeof body, "{\"TableName\":\"" TBL "\",\"Item\":%s}", a);
        op = "PutItem";
        break;
    case 1:
        snprintf(body, sizeof body,
                 "{\"TableName\":\"" TBL "\",\"Key\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":"
                 "\"s%05d\"}},\"UpdateExpression\":\"SET gpk = :g, gsk = :n, lsk = :n, x = :g\","
                 "\"ExpressionAttributeValues\":{\":g\":{\"S\":\"g%d\"},\":n\":{\"N\":\"%d\"}}}",
                 i % NPK, i, ver % NG, ver);
        op = "UpdateItem";
        break;
    case 2:
        snprintf(body, sizeof body,
                 "{\"TableName\":\"" TBL "\",\"Key\":{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":"
                 "\"s%05d\"}}}",
                 i % NPK, i);
        op = "DeleteItem";
        break;
    default:
        if (i == j)
            j = wkey(wr->w, (uint64_t)(i - NITEMS - wr->w * KEYS_PER_WRITER + 1));
        item_json(i, ver, a, sizeof a);
        snprintf(b, sizeof b, "{\"pk\":{\"S\":\"p%d\"},\"sk\":{\"S\":\"s%05d\"}}", j % NPK, j);
        snprintf(body, sizeof body,
                 "{\"TransactItems\":[{\"Put\":{\"TableName\":\"" TBL "\",\"Item\":%s}},"
                 "{\"%s\":{\"TableName\":\"" TBL "\",\"Key\":%s%s}}]}",
                 a, ver % 2 ? "Delete" : "Update", b,
                 ver % 2 ? "" : ",\"UpdateExpression\":\"SET gsk = :n REMOVE lsk\","
                                "\"ExpressionAttributeValues\":{\":n\":{\"N\":\"3\"}}");
        op = "TransactWriteItems";
    }
    return exec(wr->db, op, body, wr->why, sizeof wr->why);
}

static void *write_loop(void *arg)
{
    writer *wr = arg;
    uint64_t rng = test_seed() * 31 + (uint64_t)wr->w;
    while (!__atomic_load_n(wr->stop, __ATOMIC_ACQUIRE) && wr->s == KURA_OK) {
        wr->s = write_one(wr, &rng);
        __atomic_add_fetch(&wr->ops, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static uint64_t total_ops(writer *wr)
{
    uint64_t n = 0;
    for (int w = 0; w < NWRITERS; w++)
        n += __atomic_load_n(&wr[w].ops, __ATOMIC_RELAXED);
    return n;
}

static void test_rebuild_under_writers(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine_index_rebuild_live");
    kura_db *db = make_db(dir);
    uint64_t seed = test_seed();
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < NINDEXES; i++)
            assert_kura_ok(ixd_damage(db, TBL, INDEXES[i], (ixd_kind)((i + round) % 3), 4,
                                      seed + (uint64_t)i));
        assert_kura_status(index_check_table(db, TBL, WAIT_MS), KURA_E_CORRUPTION);
        bool stop = false;
        writer wr[NWRITERS];
        kthread th[NWRITERS];
        for (int w = 0; w < NWRITERS; w++) {
            wr[w] = (writer){.db = db, .w = w, .stop = &stop};
            assert_true(kthread_start(&th[w], write_loop, &wr[w]));
        }
        uint64_t during = 0;
        for (int i = 0; i < NINDEXES; i++) {
            while (total_ops(wr) < 200 * (uint64_t)(i + 1)) /* writes before each rebuild */
                sched_yield();
            uint64_t before = total_ops(wr);
            assert_kura_ok(kura_rebuild_index(db, TBL, INDEXES[i]));
            during += total_ops(wr) - before;
        }
        __atomic_store_n(&stop, true, __ATOMIC_RELEASE);
        for (int w = 0; w < NWRITERS; w++) {
            kthread_join(th[w]);
            if (wr[w].s != KURA_OK)
                fail_msg("writer %d: %s", w, wr[w].why);
        }
        fprintf(stderr, "round %d: %llu writes, %llu of them during the rebuilds\n", round,
                (unsigned long long)total_ops(wr), (unsigned long long)during);
        assert_true(during > 0);
        check_ok(db, "after rebuilds under writers");
        for (int i = 0; i < NINDEXES; i++) {
            char why[512];
            if (!queries_match(db, INDEXES[i], why, sizeof why))
                fail_msg("round %d: %s", round, why);
        }
    }
    assert_kura_ok(kura_close(db));
    db = open_db(dir);
    check_ok(db, "after a reopen");
    trees_are_the_indexes(db);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* ---- A database an earlier kura left ------------------------------------------------------ */

/* Every index tree in DIR/KURA has flag bit 4, and there are `want`. */
static void catalog_index_trees_flagged(const char *dir, size_t want)
{
    size_t n, unflagged;
    ixd_catalog_index_trees(dir, &n, &unflagged);
    assert_int_equal(n, want);
    assert_int_equal(unflagged, 0);
}

/* kura_check_fn: keeps the first note. */
static void first_note(void *arg, kura_check_severity sev, const char *line)
{
    char *out = arg;
    if (sev == KURA_CHECK_NOTE && !out[0])
        snprintf(out, 1024, "%s", line);
}

static void test_rebuild_at_open(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine_index_rebuild_old");
    kura_db *db = make_db(dir);
    uint64_t seed = test_seed();
    for (int i = 0; i < NINDEXES; i++)
        for (int k = IXD_EXTRA; k <= IXD_MISSING; k++)
            assert_kura_ok(ixd_damage(db, TBL, INDEXES[i], (ixd_kind)k, 2, seed + (uint64_t)k));
    assert_kura_status(index_check_table(db, TBL, WAIT_MS), KURA_E_CORRUPTION);
    assert_kura_ok(kura_close(db)); /* the damage is checkpointed */
    catalog_index_trees_flagged(dir, NINDEXES);
    /* as this kura's flags left it, the damage stays: nothing rebuilds it */
    db = open_db(dir);
    assert_kura_status(index_check_table(db, TBL, WAIT_MS), KURA_E_CORRUPTION);
    assert_kura_ok(kura_close(db));
    /* as an earlier kura left it: every index is rebuilt before kura_open returns */
    ixd_catalog_rewrite(dir, ixd_as_old_kura);
    db = open_db(dir);
    kura_stats st;
    kura_get_stats(db, &st);
    assert_int_equal(st.indexes_rebuilt_at_open, NINDEXES);
    check_ok(db, "after the rebuild at open");
    /* kura_check says so (a note: nothing is wrong now) */
    kura_check_summary sum;
    char note[1024] = "";
    assert_kura_ok(kura_check(db, NULL, first_note, note, &sum));
    assert_int_equal(sum.problems, 0);
    if (!strstr(note, "3 secondary indexes last written by an earlier kura"))
        fail_msg("kura_check's first note: '%s'", note);
    for (int i = 0; i < NINDEXES; i++) {
        char why[512];
        if (!queries_match(db, INDEXES[i], why, sizeof why))
            fail_msg("after the rebuild at open: %s", why);
    }
    trees_are_the_indexes(db);
    assert_kura_ok(kura_close(db));
    catalog_index_trees_flagged(dir, NINDEXES);
    db = open_db(dir); /* once is enough */
    kura_get_stats(db, &st);
    assert_int_equal(st.indexes_rebuilt_at_open, 0);
    check_ok(db, "after another reopen");
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

static unsigned flag_table_tree(const char *name, unsigned flags)
{
    return !strncmp(name, "tbl-", 4) ? flags | 16u : flags;
}

static unsigned unknown_bit(const char *name, unsigned flags)
{
    return !strncmp(name, "idx-", 4) ? flags | 32u : flags;
}

/* Bit 4 belongs to index trees; other bits are unknown: both are a malformed catalog. */
static void test_catalog_flags_refused(void **state)
{
    (void)state;
    unsigned (*fixes[])(const char *, unsigned) = {flag_table_tree, unknown_bit};
    for (int i = 0; i < 2; i++) {
        char *dir = test_mkdtemp("engine_index_rebuild_flags");
        kura_db *db = open_db(dir);
        ok(db, "CreateTable", CREATE);
        assert_kura_ok(kura_close(db));
        ixd_catalog_rewrite(dir, fixes[i]);
        kura_options o = options();
        kura_status s = kura_open(dir, &o, &db);
        if (s != KURA_E_CORRUPTION || !strstr(kura_last_error(), "malformed line"))
            fail_msg("case %d: kura_open: %s: %s", i, kura_status_str(s), kura_last_error());
        test_rmrf(dir);
    }
}

/* ---- Errors --------------------------------------------------------------------------------- */

static void set_status(kura_db *db, const char *index, idx_status st)
{
    kura_table *t;
    assert_kura_ok(table_acquire(db, TBL, &t));
    kmutex_lock(&db->tables_mu);
    t->gsi[table_index_find(t, index) - (int)t->nlsi].status = st;
    kmutex_unlock(&db->tables_mu);
    table_release(t);
}

static void test_errors(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("engine_index_rebuild_err");
    kura_db *db = make_db(dir);
    assert_kura_status(kura_rebuild_index(db, "Nope", "ByG"), KURA_E_RESOURCE_NOT_FOUND);
    assert_kura_status(kura_rebuild_index(db, TBL, "Nope"), KURA_E_RESOURCE_NOT_FOUND);
    assert_non_null(strstr(kura_last_error(), "Index: Nope not found in table " TBL));
    assert_kura_status(kura_rebuild_index(db, TBL, NULL), KURA_E_RESOURCE_NOT_FOUND);
    /* (UpdateTable's background jobs are faster than a test can catch them: the statuses are
     * set by hand, and put back) */
    set_status(db, "ByG", IDX_CREATING);
    assert_kura_status(kura_rebuild_index(db, TBL, "ByG"), KURA_E_RESOURCE_IN_USE);
    assert_non_null(strstr(kura_last_error(), "Index is being created"));
    set_status(db, "ByG", IDX_DELETING);
    assert_kura_status(kura_rebuild_index(db, TBL, "ByG"), KURA_E_RESOURCE_IN_USE);
    set_status(db, "ByG", IDX_ACTIVE);
    kura_table *t;
    assert_kura_ok(table_acquire(db, TBL, &t));
    kmutex_lock(&db->tables_mu); /* a rebuild of ByK running */
    t->ix_rebuilding = true;
    t->ix_rebuild_pos = (uint32_t)table_index_find(t, "ByK");
    kmutex_unlock(&db->tables_mu);
    assert_kura_status(kura_rebuild_index(db, TBL, "ByG"), KURA_E_RESOURCE_IN_USE);
    assert_non_null(strstr(kura_last_error(), "ByK"));
    kura_index_stats is;
    assert_kura_ok(kura_index_stats_get(db, TBL, "ByK", &is));
    assert_true(is.rebuilding);
    assert_kura_ok(kura_index_stats_get(db, TBL, "ByG", &is));
    assert_false(is.rebuilding);
    char why[1024];
    assert_kura_status(exec(db, "UpdateTable",
                            "{\"TableName\":\"" TBL "\",\"GlobalSecondaryIndexUpdates\":[{"
                            "\"Delete\":{\"IndexName\":\"ByK\"}}]}",
                            why, sizeof why),
                       KURA_E_RESOURCE_IN_USE);
    assert_non_null(strstr(why, "Index is being rebuilt"));
    kmutex_lock(&db->tables_mu);
    t->ix_rebuilding = false;
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    assert_kura_ok(kura_rebuild_index(db, TBL, "ByG"));
    check_ok(db, "after the errors");
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_damage_then_rebuild),
        cmocka_unit_test(test_rebuild_under_writers),
        cmocka_unit_test(test_rebuild_at_open),
        cmocka_unit_test(test_catalog_flags_refused),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * engine_check_test.c - the integrity check (kura_check, engine/check.c and the files it
 * calls): a healthy database reports nothing (tables with LSIs and GSIs of multi-attribute
 * keys, KEYS_ONLY / INCLUDE / ALL projections, sparse items, a stream, transactions, batch
 * writes, flushed tables, a reopen; a GSI still backfilling is skipped with a note); then
 * each kind of damage is reported, counted and placed: an index entry deleted from an index
 * tree (missing), entries added (extra: a
 * deleted item's, an old version's beside the current one's), a wrong projection (stale), a
 * bit flipped in an SSTable data block and in a WAL record (file and offset in the line), a
 * live table's file deleted (the manifest names it), a
 * collection size the cache holds that a write bypassing it made wrong and a collection over
 * the limit, stream positions inside a record or past the WAL's end, and a trimmed shard
 * start (a note, not a problem). Last, checks running beside writer threads on a healthy
 * database find nothing (no false positives with flushes, compactions and GSI lag).
 */
#include "testutil.h"

#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/stream_table.h"
#include "engine/table_index.h"
#include "index_check.h"
#include "util/thread.h"

/* ---- Helpers ----------------------------------------------------------------------------- */

static kura_db *open_db_ret(const char *dir, uint32_t parts, uint64_t coll_limit, bool relaxed,
                            uint64_t stream_retention_ms)
{
    kura_options o;
    kura_options_init(&o);
    o.stream_retention_ms = stream_retention_ms;
    o.default_partitions = parts;
    o.item_collection_limit_bytes = coll_limit;
    o.memtable_budget_bytes = 1 << 20; /* flushes and index checkpoints happen */
    if (relaxed)
        o.durability = KURA_RELAXED;
    kura_db *db = NULL;
    assert_kura_ok(kura_open(dir, &o, &db));
    return db;
}

static kura_db *open_db(const char *dir, uint32_t parts, uint64_t coll_limit, bool relaxed)
{
    return open_db_ret(dir, parts, coll_limit, relaxed, 0);
}

static void ok(kura_db *db, const char *op, const char *body)
{
    char *out = NULL;
    size_t len = 0;
    kura_status s = kura_execute(db, op, body, strlen(body), &out, &len);
    if (s != KURA_OK)
        fail_msg("%s %s\n  -> %s: %s", op, body, kura_status_str(s), out);
    kura_free(out);
}

/* What a check said. */
typedef struct lines {
    char **v;
    size_t n;
    kura_check_summary sum;
} lines;

static void collect(void *arg, kura_check_severity sev, const char *line)
{
    lines *l = arg;
    char **v = realloc(l->v, (l->n + 1) * sizeof *v);
    assert_non_null(v);
    l->v = v;
    size_t n = strlen(line) + 4;
    l->v[l->n] = malloc(n);
    snprintf(l->v[l->n++], n, "%s: %s", sev == KURA_CHECK_PROBLEM ? "P" : "N", line);
}

static void lines_free(lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static void lines_print(const lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        fprintf(stderr, "  %s\n", l->v[i]);
}

static void run_check(kura_db *db, const char *table, lines *l)
{
    memset(l, 0, sizeof *l);
    assert_kura_ok(kura_check(db, table, collect, l, &l->sum));
    if (getenv("KURA_TEST_VERBOSE")) /* to read the lines a check prints */
        lines_print(l);
}

/* The first line holding every one of the needles (NULL-terminated), or NULL. */
static const char *find_line(const lines *l, const char *a, const char *b, const char *c)
{
    for (size_t i = 0; i < l->n; i++)
        if (strstr(l->v[i], a) && (!b || strstr(l->v[i], b)) && (!c || strstr(l->v[i], c)))
            return l->v[i];
    return NULL;
}

static void expect_line(const lines *l, const char *a, const char *b, const char *c)
{
    if (!find_line(l, a, b, c)) {
        lines_print(l);
        fail_msg("no line with '%s' '%s' '%s'", a, b ? b : "", c ? c : "");
    }
}

static void expect_problems(const lines *l, uint64_t n)
{
    if (l->sum.problems != n) {
        lines_print(l);
        fail_msg("%llu problems, expected %llu", (unsigned long long)l->sum.problems,
                 (unsigned long long)n);
    }
}

static void expect_clean(kura_db *db, const char *table, lines *l)
{
    run_check(db, table, l);
    if (l->sum.problems != 0) {
        lines_print(l);
        fail_msg("a healthy database: %llu problems", (unsigned long long)l->sum.problems);
    }
}

/* ---- The tables ------------------------------------------------------------------------------ */

static const char *ORDERS =
    "{\"TableName\":\"Orders\",\"BillingMode\":\"PAY_PER_REQUEST\","
    "\"AttributeDefinitions\":[{\"AttributeName\":\"order_id\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"customer_id\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"status\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"order_date\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"amount\",\"AttributeType\":\"N\"}],"
    "\"KeySchema\":[{\"AttributeName\":\"order_id\",\"KeyType\":\"HASH\"}],"
    "\"GlobalSecondaryIndexes\":["
    "{\"IndexName\":\"ByCustomer\",\"KeySchema\":[{\"AttributeName\":\"customer_id\","
    "\"KeyType\":\"HASH\"},{\"AttributeName\":\"status\",\"KeyType\":\"RANGE\"},"
    "{\"AttributeName\":\"order_date\",\"KeyType\":\"RANGE\"},{\"AttributeName\":\"amount\","
    "\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}},"
    "{\"IndexName\":\"ByStatus\",\"KeySchema\":[{\"AttributeName\":\"status\",\"KeyType\":"
    "\"HASH\"}],\"Projection\":{\"ProjectionType\":\"KEYS_ONLY\"}},"
    "{\"IndexName\":\"ByAmount\",\"KeySchema\":[{\"AttributeName\":\"amount\",\"KeyType\":"
    "\"HASH\"},{\"AttributeName\":\"customer_id\",\"KeyType\":\"HASH\"}],\"Projection\":"
    "{\"ProjectionType\":\"INCLUDE\",\"NonKeyAttributes\":[\"note\"]}}],"
    "\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":\"NEW_AND_OLD_IMAGES\"}}";

static const char *TEAM =
    "{\"TableName\":\"Team\",\"BillingMode\":\"PAY_PER_REQUEST\","
    "\"AttributeDefinitions\":[{\"AttributeName\":\"PK\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"SK\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"UserName\",\"AttributeType\":\"S\"},"
    "{\"AttributeName\":\"age\",\"AttributeType\":\"N\"},"
    "{\"AttributeName\":\"email\",\"AttributeType\":\"S\"}],"
    "\"KeySchema\":[{\"AttributeName\":\"PK\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"SK\",\"KeyType\":\"RANGE\"}],"
    "\"LocalSecondaryIndexes\":["
    "{\"IndexName\":\"ByName\",\"KeySchema\":[{\"AttributeName\":\"PK\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"UserName\",\"KeyType\":\"RANGE\"}],\"Projection\":"
    "{\"ProjectionType\":\"KEYS_ONLY\"}},"
    "{\"IndexName\":\"ByAge\",\"KeySchema\":[{\"AttributeName\":\"PK\",\"KeyType\":\"HASH\"},"
    "{\"AttributeName\":\"age\",\"KeyType\":\"RANGE\"}],\"Projection\":"
    "{\"ProjectionType\":\"ALL\"}}],"
    "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"ByEmail\",\"KeySchema\":["
    "{\"AttributeName\":\"email\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":"
    "\"INCLUDE\",\"NonKeyAttributes\":[\"UserName\",\"bio\"]}}]}";

static const char *PLAIN =
    "{\"TableName\":\"Plain\",\"BillingMode\":\"PAY_PER_REQUEST\","
    "\"AttributeDefinitions\":[{\"AttributeName\":\"k\",\"AttributeType\":\"N\"}],"
    "\"KeySchema\":[{\"AttributeName\":\"k\",\"KeyType\":\"HASH\"}]}";

static void create_tables(kura_db *db)
{
    ok(db, "CreateTable", ORDERS);
    ok(db, "CreateTable", TEAM);
    ok(db, "CreateTable", PLAIN);
}

/* One order, its attributes present or not (sparse indexes). */
static void put_order(kura_db *db, uint64_t *rng, int k)
{
    char body[1024];
    int n = snprintf(body, sizeof body, "{\"TableName\":\"Orders\",\"Item\":{\"order_id\":{\"S\":"
                                        "\"o%d\"}",
                     k);
    if (test_rand(rng) % 5)
        n += snprintf(body + n, sizeof body - n, ",\"customer_id\":{\"S\":\"c%d\"}",
                      (int)(test_rand(rng) % 7));
    if (test_rand(rng) % 4)
        n += snprintf(body + n, sizeof body - n, ",\"status\":{\"S\":\"%s\"}",
                      test_rand(rng) % 2 ? "PENDING" : "SHIPPED");
    if (test_rand(rng) % 3)
        n += snprintf(body + n, sizeof body - n, ",\"order_date\":{\"S\":\"2025-11-%02d\"}",
                      (int)(test_rand(rng) % 28) + 1);
    if (test_rand(rng) % 3)
        n += snprintf(body + n, sizeof body - n, ",\"amount\":{\"N\":\"%d.5\"}",
                      (int)(test_rand(rng) % 200));
    if (test_rand(rng) % 2)
        n += snprintf(body + n, sizeof body - n, ",\"note\":{\"S\":\"n%d\"}", k);
    snprintf(body + n, sizeof body - n, ",\"pad\":{\"S\":\"%0*d\"}}}", 40, k);
    ok(db, "PutItem", body);
}

static void put_member(kura_db *db, uint64_t *rng, int k)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"TableName\":\"Team\",\"ReturnItemCollectionMetrics\":\"SIZE\",\"Item\":{"
             "\"PK\":{\"S\":\"T%d\"},\"SK\":{\"S\":\"U%d\"},\"UserName\":{\"S\":\"name%d\"}%s"
             "%s,\"bio\":{\"S\":\"bio%d\"}}}",
             k % 5, k, (int)(test_rand(rng) % 50),
             test_rand(rng) % 3 ? ",\"age\":{\"N\":\"33\"}" : "",
             test_rand(rng) % 2 ? ",\"email\":{\"S\":\"u@example.com\"}" : "", k);
    ok(db, "PutItem", body);
}

/* Every kind of write the indexes and the stream follow. */
static void workload_in(kura_db *db, uint64_t seed, int n, int space)
{
    uint64_t rng = seed;
    char body[2048];
    for (int k = 0; k < n; k++) {
        put_order(db, &rng, k % space);
        put_member(db, &rng, k % (space * 2 / 3));
        if (k % 7 == 3) {
            snprintf(body, sizeof body, "{\"TableName\":\"Orders\",\"Key\":{\"order_id\":{\"S\":"
                                        "\"o%d\"}},\"UpdateExpression\":\"SET #s = :s\","
                                        "\"ExpressionAttributeNames\":{\"#s\":\"status\"},"
                                        "\"ExpressionAttributeValues\":{\":s\":{\"S\":\"DONE\"}}}",
                     (int)(test_rand(&rng) % (uint64_t)space));
            ok(db, "UpdateItem", body);
        }
        if (k % 11 == 5) {
            snprintf(body, sizeof body, "{\"TableName\":\"Orders\",\"Key\":{\"order_id\":"
                                        "{\"S\":\"o%d\"}}}",
                     (int)(test_rand(&rng) % (uint64_t)space));
            ok(db, "DeleteItem", body);
        }
        if (k % 13 == 0) {
            snprintf(body, sizeof body,
                     "{\"TransactItems\":[{\"Put\":{\"TableName\":\"Orders\",\"Item\":{"
                     "\"order_id\":{\"S\":\"tx%d\"},\"customer_id\":{\"S\":\"c1\"},\"status\":"
                     "{\"S\":\"PENDING\"},\"order_date\":{\"S\":\"2025-12-01\"},\"amount\":"
                     "{\"N\":\"%d\"}}}},{\"Update\":{\"TableName\":\"Team\",\"Key\":{\"PK\":"
                     "{\"S\":\"T1\"},\"SK\":{\"S\":\"U%d\"}},\"UpdateExpression\":\"SET age = "
                     ":a, email = :e\",\"ExpressionAttributeValues\":{\":a\":{\"N\":\"%d\"},"
                     "\":e\":{\"S\":\"tx%d@example.com\"}}}},{\"Put\":{\"TableName\":\"Plain\","
                     "\"Item\":{\"k\":{\"N\":\"%d\"}}}}]}",
                     k % 9, k, 1000 + k, k % 90, k, k);
            ok(db, "TransactWriteItems", body);
        }
        if (k % 17 == 0) {
            snprintf(body, sizeof body,
                     "{\"RequestItems\":{\"Orders\":[{\"PutRequest\":{\"Item\":{\"order_id\":"
                     "{\"S\":\"b%d\"},\"status\":{\"S\":\"NEW\"}}}},{\"DeleteRequest\":{\"Key\":"
                     "{\"order_id\":{\"S\":\"b%d\"}}}}]}}",
                     k, k - 17);
            ok(db, "BatchWriteItem", body);
        }
    }
}

static void workload(kura_db *db, uint64_t seed, int n)
{
    workload_in(db, seed, n, 60);
}

/* ---- A healthy database ------------------------------------------------------------------ */

static void flush_table(kura_db *db, const char *name)
{
    kura_table *t;
    assert_kura_ok(table_acquire(db, name, &t));
    assert_kura_ok(kura_tree_flush(t->tree));
    table_release(t);
}

static void test_clean(void **state)
{
    char *dir = test_mkdtemp("engine_check_clean");
    kura_db *db = open_db(dir, 3, 0, false);
    create_tables(db);
    workload(db, test_seed(), 300);
    flush_table(db, "Orders");
    workload(db, test_seed() + 1, 100);
    lines l;
    expect_clean(db, NULL, &l);
    kura_check_summary *s = &l.sum;
    assert_int_equal(s->tables, 3);
    assert_int_equal(s->indexes, 6); /* 3 GSIs of Orders, 2 LSIs and a GSI of Team */
    assert_int_equal(s->indexes_skipped, 0);
    assert_true(s->items > 100);
    assert_true(s->index_entries > 100);
    assert_true(s->sstables > 0 && s->sstable_blocks >= s->sstables && s->sstable_entries > 0);
    assert_true(s->wal_segments > 0 && s->wal_records > 0 && s->manifests >= s->partitions);
    assert_int_equal(s->streams, 1);
    assert_int_equal(s->shards, 3);
    assert_true(s->collections > 0); /* Team's writes asked for SIZE: the cache has them */
    assert_int_equal(s->missing_entries + s->extra_entries + s->stale_entries, 0);
    lines_free(&l);
    expect_clean(db, "Team", &l);
    assert_int_equal(l.sum.tables, 1);
    assert_int_equal(l.sum.indexes, 3);
    lines_free(&l);
    assert_kura_status(kura_check(db, "Nope", NULL, NULL, NULL), KURA_E_RESOURCE_NOT_FOUND);
    /* a GSI still backfilling is not compared, with a note (its status set as UpdateTable's
     * Create sets it, for the length of one check) */
    kura_table *t;
    assert_kura_ok(table_acquire(db, "Team", &t));
    int by_email = table_index_find(t, "ByEmail");
    assert_true(by_email >= (int)t->nlsi);
    kmutex_lock(&db->tables_mu);
    t->gsi[by_email - (int)t->nlsi].status = IDX_CREATING;
    kmutex_unlock(&db->tables_mu);
    expect_clean(db, "Team", &l);
    assert_int_equal(l.sum.indexes, 2);
    assert_int_equal(l.sum.indexes_skipped, 1);
    expect_line(&l, "N: table Team index ByEmail: CREATING (backfilling): not compared", NULL,
                NULL);
    lines_free(&l);
    kmutex_lock(&db->tables_mu);
    t->gsi[by_email - (int)t->nlsi].status = IDX_ACTIVE;
    kmutex_unlock(&db->tables_mu);
    table_release(t);
    /* after a recovery too */
    assert_kura_ok(kura_close(db));
    db = open_db(dir, 3, 0, false);
    expect_clean(db, NULL, &l);
    assert_true(l.sum.items > 100);
    lines_free(&l);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* ---- Index damage ------------------------------------------------------------------------ */

/* A sequence number no entry of the index has: the one a write to Plain just took. */
static uint64_t fresh_seq(kura_db *db)
{
    static int k = 100000;
    char body[128];
    snprintf(body, sizeof body, "{\"TableName\":\"Plain\",\"Item\":{\"k\":{\"N\":\"%d\"}}}", k++);
    ok(db, "PutItem", body);
    const kura_snapshot *snap = kura_snapshot_new(db);
    uint64_t seq = kura_snapshot_seq(snap);
    kura_snapshot_free(db, snap);
    return seq;
}

/* Writes (val NULL: deletes) an entry straight into the tree of index i, as an applier
 * would, behind the index layer's back. */
static void index_write(kura_db *db, kura_table *t, uint32_t i, const kbuf *key, const kbuf *val)
{
    lsm_batch b;
    lsm_batch_init(&b);
    if (val)
        assert_kura_ok(lsm_batch_put(&b, key->data, key->len, val->data, val->len));
    else
        assert_kura_ok(lsm_batch_delete(&b, key->data, key->len));
    lsm_rep_set_seq(b.rep.data, fresh_seq(db));
    kura_tree *tr = t->ix_trees[i];
    uint32_t p = kura_tree_partition_of(tr, key->data, key->len);
    assert_kura_ok(lsm_apply(tr->parts[p], b.rep.data, b.rep.len));
    lsm_batch_free(&b);
}

/* The entry key and value index i gives the item written as DynamoDB JSON. */
static void entry_of(kura_table *t, uint32_t i, const char *item_json, kbuf *key, kbuf *val)
{
    kura_value *item = NULL;
    assert_kura_ok(kura_value_from_json(item_json, strlen(item_json), true, &item));
    bool present = false;
    const idx_def *d = table_index_def(t, i);
    assert_kura_ok(idx_entry_key(d, &t->ks, item, key, &present));
    assert_true(present);
    assert_kura_ok(idx_entry_value(d, &t->ks, item, val));
    kura_value_free(item);
}

static void test_index_damage(void **state)
{
    char *dir = test_mkdtemp("engine_check_index");
    kura_db *db = open_db(dir, 2, 0, false);
    create_tables(db);
    ok(db, "PutItem", "{\"TableName\":\"Orders\",\"Item\":{\"order_id\":{\"S\":\"K1\"},"
                      "\"customer_id\":{\"S\":\"C1\"},\"status\":{\"S\":\"PENDING\"},"
                      "\"order_date\":{\"S\":\"2025-11-04\"},\"amount\":{\"N\":\"145\"}}}");
    ok(db, "PutItem", "{\"TableName\":\"Orders\",\"Item\":{\"order_id\":{\"S\":\"K2\"},"
                      "\"customer_id\":{\"S\":\"C2\"},\"status\":{\"S\":\"SHIPPED\"},"
                      "\"order_date\":{\"S\":\"2025-11-05\"},\"amount\":{\"N\":\"7\"}}}");
    workload(db, test_seed(), 120);
    lines l;
    expect_clean(db, "Orders", &l);
    lines_free(&l);
    kura_table *t;
    assert_kura_ok(table_acquire(db, "Orders", &t));
    int by_customer = table_index_find(t, "ByCustomer");
    int by_status = table_index_find(t, "ByStatus");
    assert_true(by_customer >= 0 && by_status >= 0);
    kbuf k = KBUF_INIT, v = KBUF_INIT;

    /* missing: K1's entry deleted from ByCustomer */
    entry_of(t, (uint32_t)by_customer,
             "{\"order_id\":{\"S\":\"K1\"},\"customer_id\":{\"S\":\"C1\"},\"status\":{\"S\":"
             "\"PENDING\"},\"order_date\":{\"S\":\"2025-11-04\"},\"amount\":{\"N\":\"145\"}}",
             &k, &v);
    index_write(db, t, (uint32_t)by_customer, &k, NULL);
    run_check(db, "Orders", &l);
    assert_int_equal(l.sum.missing_entries, 1);
    assert_int_equal(l.sum.extra_entries + l.sum.stale_entries, 0);
    expect_problems(&l, 1);
    expect_line(&l, "P: table Orders index ByCustomer: missing entry of item",
                "{\"order_id\":{\"S\":\"K1\"}}", NULL);
    expect_line(&l, "index ByCustomer: ", "1 missing, 0 extra, 0 stale", NULL);
    lines_free(&l);
    index_write(db, t, (uint32_t)by_customer, &k, &v); /* repaired */
    expect_clean(db, "Orders", &l);
    lines_free(&l);

    /* extra: a deleted item's entry, and an old version's beside K2's current one */
    k.len = v.len = 0;
    entry_of(t, (uint32_t)by_status, "{\"order_id\":{\"S\":\"ghost\"},\"status\":{\"S\":\"X\"}}",
             &k, &v);
    index_write(db, t, (uint32_t)by_status, &k, &v);
    k.len = v.len = 0;
    entry_of(t, (uint32_t)by_status, "{\"order_id\":{\"S\":\"K2\"},\"status\":{\"S\":\"OLD\"}}",
             &k, &v);
    index_write(db, t, (uint32_t)by_status, &k, &v);
    run_check(db, "Orders", &l);
    assert_int_equal(l.sum.extra_entries, 2);
    assert_int_equal(l.sum.missing_entries + l.sum.stale_entries, 0);
    expect_problems(&l, 2);
    expect_line(&l, "index ByStatus: extra entry of item {\"order_id\":{\"S\":\"ghost\"}}",
                "no such item", NULL);
    expect_line(&l, "index ByStatus: extra entry of item {\"order_id\":{\"S\":\"K2\"}}",
                "another key: an old version", NULL);
    lines_free(&l);
    index_write(db, t, (uint32_t)by_status, &k, NULL);

    /* stale: K2's entry in ByCustomer (ALL) with the projection of an older version */
    k.len = v.len = 0;
    entry_of(t, (uint32_t)by_customer,
             "{\"order_id\":{\"S\":\"K2\"},\"customer_id\":{\"S\":\"C2\"},\"status\":{\"S\":"
             "\"SHIPPED\"},\"order_date\":{\"S\":\"2025-11-05\"},\"amount\":{\"N\":\"7\"},"
             "\"note\":{\"S\":\"an attribute K2 no longer has\"}}",
             &k, &v);
    index_write(db, t, (uint32_t)by_customer, &k, &v);
    run_check(db, NULL, &l);
    assert_int_equal(l.sum.stale_entries, 1);
    assert_int_equal(l.sum.extra_entries, 1); /* the ghost is still there */
    expect_problems(&l, 2);
    expect_line(&l, "P: table Orders index ByCustomer: stale entry of item",
                "{\"order_id\":{\"S\":\"K2\"}}", NULL);
    lines_free(&l);
    kbuf_free(&k);
    kbuf_free(&v);
    table_release(t);
    /* what the tests' own checker says, from the same engine function */
    kura_status s = index_check_table(db, "Orders", 10000);
    assert_int_equal(s, KURA_E_CORRUPTION);
    assert_non_null(strstr(kura_last_error(), "1 extra"));
    assert_kura_ok(index_check_table(db, "Team", 10000));
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* ---- File damage ------------------------------------------------------------------------- */

/* The path of the file in dir/<sub> whose name ends in `suffix`, the lowest numbered one
 * (which = 0) or the highest (which = 1). */
static char *find_file(const char *dir, const char *sub, const char *suffix, int which)
{
    char path[4096], best[256] = "";
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    DIR *d = opendir(path);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), sl = strlen(suffix);
        if (n <= sl || strcmp(e->d_name + n - sl, suffix) != 0)
            continue;
        if (!best[0] || (which == 0 ? strcmp(e->d_name, best) < 0 : strcmp(e->d_name, best) > 0))
            snprintf(best, sizeof best, "%s", e->d_name);
    }
    closedir(d);
    if (!best[0])
        fail_msg("no %s file in %s", suffix, path);
    char *out = malloc(strlen(path) + strlen(best) + 2);
    sprintf(out, "%s/%s", path, best);
    return out;
}

static void flip_bit(const char *path, uint64_t off)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
    int c = fgetc(f);
    fclose(f);
    assert_true(c != EOF);
    test_poke_byte(path, off, (uint8_t)(c ^ 0x10));
}

/* The tree directory of table `name` (tbl-<id>) of an open database. */
static void table_tree_dir(kura_db *db, const char *name, char *out, size_t cap)
{
    kura_table *t;
    assert_kura_ok(table_acquire(db, name, &t));
    snprintf(out, cap, "tbl-%llu", (unsigned long long)t->id);
    table_release(t);
}

static void test_sstable_bit_flip(void **state)
{
    char *dir = test_mkdtemp("engine_check_sst");
    kura_db *db = open_db(dir, 1, 0, false);
    ok(db, "CreateTable", PLAIN);
    char body[256], tree[64], sub[128];
    for (int k = 0; k < 500; k++) {
        snprintf(body, sizeof body, "{\"TableName\":\"Plain\",\"Item\":{\"k\":{\"N\":\"%d\"},"
                                    "\"v\":{\"S\":\"value number %d\"}}}",
                 k, k);
        ok(db, "PutItem", body);
    }
    flush_table(db, "Plain");
    table_tree_dir(db, "Plain", tree, sizeof tree);
    assert_kura_ok(kura_close(db));
    snprintf(sub, sizeof sub, "%s/p0000", tree);
    char *sst = find_file(dir, sub, ".sst", 1);
    flip_bit(sst, 20); /* inside data block 0, which starts at offset 0 */
    db = open_db(dir, 1, 0, false);
    lines l;
    run_check(db, NULL, &l);
    assert_true(l.sum.problems >= 1);
    expect_line(&l, sst, "block checksum mismatch at offset 0", NULL);
    /* the scan of the table stops at the damaged block: that too is a problem */
    expect_line(&l, "P: table Plain: reading the items", NULL, NULL);
    lines_free(&l);
    /* the file deleted behind the open database's back: the manifest still names it */
    assert_int_equal(unlink(sst), 0);
    run_check(db, "Plain", &l);
    expect_line(&l, sst, "named by MANIFEST-", "but missing");
    lines_free(&l);
    assert_kura_ok(kura_close(db));
    free(sst);
    test_rmrf(dir);
}

static void test_wal_bit_flip(void **state)
{
    char *dir = test_mkdtemp("engine_check_wal");
    kura_db *db = open_db(dir, 1, 0, false);
    /* a stream keeps the table's WAL segments after the flush, and the open does not read
     * the ones below the log number */
    ok(db, "CreateTable", "{\"TableName\":\"Stream\",\"BillingMode\":\"PAY_PER_REQUEST\","
                          "\"AttributeDefinitions\":[{\"AttributeName\":\"k\",\"AttributeType\":"
                          "\"N\"}],\"KeySchema\":[{\"AttributeName\":\"k\",\"KeyType\":\"HASH\"}],"
                          "\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":"
                          "\"KEYS_ONLY\"}}");
    char body[256], tree[64], sub[128];
    for (int k = 0; k < 50; k++) {
        snprintf(body, sizeof body, "{\"TableName\":\"Stream\",\"Item\":{\"k\":{\"N\":"
                                    "\"%d\"}}}",
                 k);
        ok(db, "PutItem", body);
    }
    flush_table(db, "Stream");
    ok(db, "PutItem", "{\"TableName\":\"Stream\",\"Item\":{\"k\":{\"N\":\"1000\"}}}");
    table_tree_dir(db, "Stream", tree, sizeof tree);
    lines l;
    expect_clean(db, NULL, &l);
    lines_free(&l);
    assert_kura_ok(kura_close(db));
    snprintf(sub, sizeof sub, "%s/p0000", tree);
    char *wal = find_file(dir, sub, ".log", 0);
    flip_bit(wal, 30); /* the first record's payload: its checksum no longer matches */
    db = open_db(dir, 1, 0, false);
    run_check(db, NULL, &l);
    assert_true(l.sum.problems >= 1);
    expect_line(&l, wal, "corrupt WAL record at offset 0", NULL);
    lines_free(&l);
    assert_kura_ok(kura_close(db));
    free(wal);
    test_rmrf(dir);
}

/* ---- Item collections -------------------------------------------------------------------- */

static void test_collections(void **state)
{
    char *dir = test_mkdtemp("engine_check_coll");
    kura_db *db = open_db(dir, 2, 3000, false);
    ok(db, "CreateTable", TEAM);
    char body[4096];
    for (int k = 0; k < 2; k++) {
        snprintf(body, sizeof body,
                 "{\"TableName\":\"Team\",\"ReturnItemCollectionMetrics\":\"SIZE\",\"Item\":{"
                 "\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":\"U%d\"},\"UserName\":{\"S\":\"n%d\"},"
                 "\"bio\":{\"S\":\"%0400d\"}}}",
                 k, k, k);
        ok(db, "PutItem", body);
    }
    lines l;
    expect_clean(db, "Team", &l);
    assert_int_equal(l.sum.collections, 1);
    lines_free(&l);
    /* U1 grows to 3 KB behind the cache's back: the cached size is now wrong, and the
     * collection is over the 3000-byte limit */
    kura_table *t;
    assert_kura_ok(table_acquire(db, "Team", &t));
    kura_value *item = NULL;
    snprintf(body, sizeof body, "{\"PK\":{\"S\":\"A\"},\"SK\":{\"S\":\"U1\"},\"UserName\":"
                                "{\"S\":\"n1\"},\"bio\":{\"S\":\"%02900d\"}}",
             1);
    assert_kura_ok(kura_value_from_json(body, strlen(body), true, &item));
    kbuf key = KBUF_INIT, enc = KBUF_INIT;
    assert_kura_ok(key_build(&t->ks, item, KEY_FROM_ITEM, &key));
    assert_kura_ok(val_encode(item, &enc));
    assert_kura_ok(kura_put(t->tree, NULL, key.data, key.len, enc.data, enc.len));
    table_release(t);
    kbuf_free(&key);
    kbuf_free(&enc);
    kura_value_free(item);
    run_check(db, "Team", &l);
    expect_problems(&l, 2);
    expect_line(&l, "P: table Team: item collection {\"PK\":{\"S\":\"A\"}}: the cache holds",
                "a recount finds", NULL);
    expect_line(&l, "P: table Team: item collection {\"PK\":{\"S\":\"A\"}} holds",
                "over the limit of 3000", NULL);
    lines_free(&l);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* ---- Streams ----------------------------------------------------------------------------- */

static void test_stream_positions(void **state)
{
    char *dir = test_mkdtemp("engine_check_stream");
    kura_db *db = open_db(dir, 2, 0, false);
    ok(db, "CreateTable", ORDERS);
    uint64_t rng = test_seed();
    for (int k = 0; k < 40; k++)
        put_order(db, &rng, k);
    ok(db, "UpdateTable", "{\"TableName\":\"Orders\",\"StreamSpecification\":{\"StreamEnabled\":"
                          "false}}");
    for (int k = 40; k < 60; k++)
        put_order(db, &rng, k);
    lines l;
    expect_clean(db, "Orders", &l);
    assert_int_equal(l.sum.streams, 1);
    assert_int_equal(l.sum.shards, 2);
    lines_free(&l);
    kura_table *t;
    assert_kura_ok(table_acquire(db, "Orders", &t));
    kmutex_lock(&t->tree->db->tables_mu);
    table_stream *x = &t->streams[0];
    lsm_wal_pos start = x->start[1], end = x->end[0];
    x->start[1].offset += 5;       /* inside a record (or past the segment's records) */
    x->end[0].segment += 1000000; /* past the WAL's end */
    kmutex_unlock(&t->tree->db->tables_mu);
    run_check(db, "Orders", &l);
    expect_problems(&l, 2);
    expect_line(&l, "P: table Orders stream ", "shard 1: start position",
                "not at a record boundary");
    expect_line(&l, "P: table Orders stream ", "shard 0: end position", "past the partition");
    lines_free(&l);
    kmutex_lock(&t->tree->db->tables_mu);
    x->start[1] = start;
    x->end[0] = end;
    kmutex_unlock(&t->tree->db->tables_mu);
    table_release(t);
    expect_clean(db, "Orders", &l);
    lines_free(&l);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* A shard whose first segments the retention deleted: a note, not a problem. */
static void test_stream_trimmed(void **state)
{
    char *dir = test_mkdtemp("engine_check_trim");
    kura_db *db = open_db_ret(dir, 1, 0, false, 5);
    ok(db, "CreateTable", "{\"TableName\":\"Stream\",\"BillingMode\":\"PAY_PER_REQUEST\","
                          "\"AttributeDefinitions\":[{\"AttributeName\":\"k\",\"AttributeType\":"
                          "\"N\"}],\"KeySchema\":[{\"AttributeName\":\"k\",\"KeyType\":\"HASH\"}],"
                          "\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":"
                          "\"KEYS_ONLY\"}}");
    char body[128];
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 20; k++) {
            snprintf(body, sizeof body, "{\"TableName\":\"Stream\",\"Item\":{\"k\":{\"N\":"
                                        "\"%d\"}}}",
                     round * 100 + k);
            ok(db, "PutItem", body);
        }
        flush_table(db, "Stream"); /* a new segment; the closed ones age */
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
    lines l;
    expect_clean(db, "Stream", &l);
    expect_line(&l, "N: table Stream stream ", "shard 0: start position",
                "trimmed by the retention");
    lines_free(&l);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

/* ---- Beside writers ---------------------------------------------------------------------- */

typedef struct writer_arg {
    kura_db *db;
    uint64_t seed;
    atomic_bool *stop;
    atomic_int *rounds;
} writer_arg;

static void *writer_main(void *p)
{
    writer_arg *a = p;
    for (uint64_t n = 0; !atomic_load(a->stop); n++) {
        workload_in(a->db, a->seed + n * 7919, 20, 2000);
        atomic_fetch_add(a->rounds, 1);
    }
    return NULL;
}

/* Checks while three writers run every kind of write (GSIs lagging, memtables switching,
 * flushes and compactions, transactions): a healthy database, so nothing may be reported. */
static void test_beside_writers(void **state)
{
    char *dir = test_mkdtemp("engine_check_live");
    kura_db *db = open_db(dir, 3, 0, true);
    create_tables(db);
    workload_in(db, test_seed(), 3000, 2000);
    atomic_bool stop = false;
    atomic_int rounds = 0;
    enum { W = 3 };
    writer_arg args[W];
    kthread th[W];
    for (int i = 0; i < W; i++) {
        args[i] = (writer_arg){db, test_seed() * 31 + (uint64_t)i, &stop, &rounds};
        assert_true(kthread_start(&th[i], writer_main, &args[i]));
    }
    int checks = 0;
    uint64_t compared = 0;
    for (; checks < 6 || atomic_load(&rounds) < 30; checks++) {
        lines l;
        run_check(db, checks % 3 == 2 ? "Orders" : NULL, &l);
        if (l.sum.problems) {
            lines_print(&l);
            atomic_store(&stop, true);
            for (int i = 0; i < W; i++)
                kthread_join(th[i]);
            fail_msg("check %d beside writers: %llu problems", checks,
                     (unsigned long long)l.sum.problems);
        }
        compared += l.sum.index_entries;
        lines_free(&l);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < W; i++)
        kthread_join(th[i]);
    fprintf(stderr, "engine_check beside writers: %d checks, %d write rounds, %llu index "
                    "entries compared\n",
            checks, atomic_load(&rounds), (unsigned long long)compared);
    assert_true(compared > 0);
    lines l;
    expect_clean(db, NULL, &l);
    lines_free(&l);
    assert_kura_ok(kura_close(db));
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_index_damage),
        cmocka_unit_test(test_sstable_bit_flip),
        cmocka_unit_test(test_wal_bit_flip),
        cmocka_unit_test(test_collections),
        cmocka_unit_test(test_stream_positions),
        cmocka_unit_test(test_stream_trimmed),
        cmocka_unit_test(test_beside_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

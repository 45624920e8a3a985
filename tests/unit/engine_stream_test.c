/*
 * engine_stream_test.c - change streams through the C API (engine/stream_table.c,
 * engine/stream_api.c): StreamSpecification at CreateTable and UpdateTable; the records of
 * every write operation with every view type, sizes and keys; nothing for writes that change
 * nothing; records kept across flushes and a reopen, exactly once; ListStreams,
 * DescribeStream and closed shards; iterators of every type and their errors; Limit and the
 * 1 MB page; iterator expiry and trimming by age; Time to Live deletes as the service's;
 * enabling while writers run; relaxed durability showing only what is durable. Items are written through kura_execute for brevity.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/db_int.h"
#include "engine/table_int.h"
#include "testutil.h"

static kura_db *db;
static char *dir;
static kura_options opts;

static int64_t ttl_now = 2000000000; /* the TTL clock, seconds */

static int64_t ttl_clock(void *arg)
{
    (void)arg;
    return __atomic_load_n(&ttl_now, __ATOMIC_RELAXED);
}

static int setup(void **state)
{
    (void)state;
    dir = test_mkdtemp("engine_stream");
    kura_options_init(&opts);
    opts.durability = KURA_SYNC; /* test_relaxed_durable_only: relaxed */
    opts.ttl_clock = ttl_clock;
    opts.ttl_sweep_interval_ms = 3600000;
    return kura_open(dir, &opts, &db) == KURA_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    kura_status s = kura_close(db);
    test_rmrf(dir);
    return s == KURA_OK ? 0 : -1;
}

static void reopen(void)
{
    assert_kura_ok(kura_close(db));
    assert_kura_ok(kura_open(dir, &opts, &db));
}

static void exec(const char *op, const char *fmt, ...)
{
    char body[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    char *res = NULL;
    size_t len;
    kura_status s = kura_execute(db, op, body, strlen(body), &res, &len);
    if (s != KURA_OK)
        fail_msg("%s %s: %s", op, body, res ? res : kura_status_str(s));
    kura_free(res);
}

/* Table `name` (pk S, and sk S when `sk`) with `parts` partitions and a stream of `view`
 * (UNSET: none); its stream's ARN into arn (may be NULL). */
static void create(const char *name, bool sk, uint32_t parts, kura_stream_view_type view,
                   char *arn)
{
    kura_attribute_definition defs[] = {{"pk", KURA_S}, {"sk", KURA_S}};
    kura_key_schema_element keys[] = {{"pk", false}, {"sk", true}};
    kura_create_table_req r = {.table_name = name, .attribute_definitions = defs,
                               .attribute_definitions_count = sk ? 2 : 1, .key_schema = keys,
                               .key_schema_count = sk ? 2 : 1,
                               .billing_mode = KURA_BILLING_PAY_PER_REQUEST,
                               .partitions = parts};
    if (view)
        r.stream_specification = (kura_stream_specification){true, true, view};
    kura_table_description d;
    assert_kura_ok(kura_create_table(db, &r, &d));
    if (view) {
        assert_true(d.stream_enabled);
        assert_int_equal(d.stream_view_type, view);
        assert_non_null(d.latest_stream_arn);
        assert_int_equal(strlen(d.latest_stream_label), 23);
        char want[512];
        snprintf(want, sizeof want, "%s/stream/%s", d.table_arn, d.latest_stream_label);
        assert_string_equal(d.latest_stream_arn, want);
        if (arn)
            strcpy(arn, d.latest_stream_arn);
    } else {
        assert_false(d.stream_enabled);
        assert_null(d.latest_stream_arn);
    }
    kura_table_description_free(&d);
}

static kura_status set_stream(const char *name, bool on, kura_stream_view_type view, char *arn)
{
    kura_update_table_req r = {.table_name = name,
                               .stream_specification = {true, on, view}};
    kura_table_description d;
    kura_status s = kura_update_table(db, &r, &d);
    if (s == KURA_OK) {
        assert_int_equal(d.stream_enabled, on);
        if (arn)
            strcpy(arn, d.latest_stream_arn);
        kura_table_description_free(&d);
    }
    return s;
}

/* ---- Reading ------------------------------------------------------------------------------ */

typedef struct rec {
    char pk[64], sk[64];
    char event[8];
    char seq[26];
    char *new_json, *old_json; /* the images' "v" attribute, or NULL */
    bool has_new, has_old, service;
    uint64_t size;
    double when;
    uint32_t shard;
} rec;

typedef struct recs {
    rec v[4096];
    size_t n;
} recs;

static void str_attr(const kura_value *m, const char *name, char *out, size_t cap)
{
    out[0] = 0;
    const kura_value *a = m ? kura_value_get(m, name, strlen(name)) : NULL;
    size_t len;
    const char *p = a ? kura_value_bytes(a, &len) : NULL;
    if (p)
        snprintf(out, cap, "%.*s", (int)len, p);
}

static char *v_of(const kura_value *img)
{
    if (!img)
        return NULL;
    char buf[256] = "-";
    const kura_value *a = kura_value_get(img, "v", 1);
    size_t len;
    if (a && kura_value_type(a) == KURA_S)
        snprintf(buf, sizeof buf, "%s", kura_value_bytes(a, &len));
    else if (a && kura_value_type(a) == KURA_N)
        kura_value_num(a, buf, sizeof buf);
    return strdup(buf);
}

static void take(recs *out, const kura_stream_record *r, size_t n, uint32_t shard)
{
    for (size_t i = 0; i < n; i++) {
        assert_true(out->n < 4096);
        rec *o = &out->v[out->n++];
        memset(o, 0, sizeof *o);
        str_attr(r[i].keys, "pk", o->pk, sizeof o->pk);
        str_attr(r[i].keys, "sk", o->sk, sizeof o->sk);
        snprintf(o->event, sizeof o->event, "%s", r[i].event_name);
        memcpy(o->seq, r[i].sequence_number, sizeof o->seq);
        o->has_new = r[i].new_image != NULL;
        o->has_old = r[i].old_image != NULL;
        o->new_json = v_of(r[i].new_image);
        o->old_json = v_of(r[i].old_image);
        o->service = r[i].service;
        o->size = r[i].size_bytes;
        o->when = r[i].approximate_creation_date_time;
        o->shard = shard;
    }
}

static void recs_free(recs *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].new_json);
        free(r->v[i].old_json);
    }
    r->n = 0;
}

/* Reads a shard from `it` until a page comes back empty (or the shard closes); frees it. */
static void drain(char *it, uint32_t shard, recs *out, uint32_t limit)
{
    while (it) {
        kura_stream_record *r;
        size_t n;
        char *next;
        assert_kura_ok(kura_get_records(db, it, limit, &r, &n, &next));
        take(out, r, n, shard);
        kura_stream_records_free(r, n);
        kura_free(it);
        it = next;
        if (!n)
            break;
    }
    kura_free(it);
}

static char *iter(const char *arn, const char *shard, kura_shard_iterator_type type,
                  const char *seq)
{
    char *it = NULL;
    assert_kura_ok(kura_get_shard_iterator(db, arn, shard, type, seq, &it));
    return it;
}

/* Every record of the stream from TRIM_HORIZON, shard by shard. */
static void read_all(const char *arn, recs *out)
{
    kura_stream_description d;
    assert_kura_ok(kura_describe_stream(db, arn, 0, NULL, &d));
    for (size_t i = 0; i < d.shards_count; i++)
        drain(iter(arn, d.shards[i].shard_id, KURA_ITER_TRIM_HORIZON, NULL), (uint32_t)i, out,
              0);
    kura_stream_description_free(&d);
}

/* The events of item pk, in order, joined with spaces. */
static const char *events_of(const recs *r, const char *pk)
{
    static char buf[512];
    buf[0] = 0;
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->v[i].pk, pk)) {
            strcat(buf, buf[0] ? " " : "");
            strcat(buf, r->v[i].event);
        }
    return buf;
}

static const rec *nth_of(const recs *r, const char *pk, int n)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->v[i].pk, pk) && n-- == 0)
            return &r->v[i];
    fail_msg("no record %d of %s", n, pk);
    return NULL;
}

/* ---- Tests -------------------------------------------------------------------------------- */

static void test_every_write(void **state)
{
    (void)state;
    char arn[512];
    create("st_ops", false, 2, KURA_STREAM_NEW_AND_OLD_IMAGES, arn);
    exec("PutItem", "{\"TableName\":\"st_ops\",\"Item\":{\"pk\":{\"S\":\"a\"},\"v\":{\"N\":\"1\"}}}");
    exec("PutItem", "{\"TableName\":\"st_ops\",\"Item\":{\"pk\":{\"S\":\"a\"},\"v\":{\"N\":\"1\"}}}");
    exec("UpdateItem", "{\"TableName\":\"st_ops\",\"Key\":{\"pk\":{\"S\":\"a\"}},"
                       "\"UpdateExpression\":\"SET v = :v\",\"ExpressionAttributeValues\":"
                       "{\":v\":{\"N\":\"2\"}}}");
    exec("UpdateItem", "{\"TableName\":\"st_ops\",\"Key\":{\"pk\":{\"S\":\"a\"}},"
                       "\"UpdateExpression\":\"SET v = :v\",\"ExpressionAttributeValues\":"
                       "{\":v\":{\"N\":\"2\"}}}");
    exec("DeleteItem", "{\"TableName\":\"st_ops\",\"Key\":{\"pk\":{\"S\":\"a\"}}}");
    exec("DeleteItem", "{\"TableName\":\"st_ops\",\"Key\":{\"pk\":{\"S\":\"zz\"}}}");
    exec("BatchWriteItem", "{\"RequestItems\":{\"st_ops\":["
                           "{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"b\"}}}},"
                           "{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"c\"}}}}]}}");
    exec("TransactWriteItems", "{\"TransactItems\":["
                               "{\"Put\":{\"TableName\":\"st_ops\",\"Item\":{\"pk\":{\"S\":\"d\"}}}},"
                               "{\"Delete\":{\"TableName\":\"st_ops\",\"Key\":{\"pk\":{\"S\":\"b\"}}}}]}");
    recs r = {.n = 0};
    read_all(arn, &r);
    assert_int_equal(r.n, 7);
    assert_string_equal(events_of(&r, "a"), "INSERT MODIFY REMOVE");
    assert_string_equal(events_of(&r, "b"), "INSERT REMOVE");
    assert_string_equal(events_of(&r, "c"), "INSERT");
    assert_string_equal(events_of(&r, "d"), "INSERT");
    const rec *a0 = nth_of(&r, "a", 0), *a1 = nth_of(&r, "a", 1), *a2 = nth_of(&r, "a", 2);
    assert_true(a0->has_new && !a0->has_old);
    assert_string_equal(a0->new_json, "1");
    assert_string_equal(a1->old_json, "1");
    assert_string_equal(a1->new_json, "2");
    assert_true(a2->has_old && !a2->has_new);
    assert_string_equal(a2->old_json, "2");
    /* DynamoDB's SizeBytes: Keys (pk "a": 3) + the images ({pk, v: 1}: 6 each) */
    assert_int_equal(a0->size, 9);
    assert_int_equal(a1->size, 15);
    assert_int_equal(a2->size, 9);
    assert_true(strcmp(a0->seq, a1->seq) < 0 && strcmp(a1->seq, a2->seq) < 0);
    double now = (double)time(NULL);
    for (size_t i = 0; i < r.n; i++) {
        assert_true(r.v[i].when > now - 60 && r.v[i].when <= now);
        assert_false(r.v[i].service);
        assert_int_equal(strlen(r.v[i].seq), 25);
    }
    recs_free(&r);
}

static void test_view_types(void **state)
{
    (void)state;
    static const kura_stream_view_type views[] = {KURA_STREAM_KEYS_ONLY, KURA_STREAM_NEW_IMAGE,
                                                  KURA_STREAM_OLD_IMAGE,
                                                  KURA_STREAM_NEW_AND_OLD_IMAGES};
    for (int i = 0; i < 4; i++) {
        char name[32], arn[512];
        snprintf(name, sizeof name, "st_view%d", i);
        create(name, true, 1, views[i], arn);
        for (int k = 0; k < 2; k++)
            exec("PutItem", "{\"TableName\":\"%s\",\"Item\":{\"pk\":{\"S\":\"p\"},\"sk\":"
                            "{\"S\":\"s\"},\"v\":{\"S\":\"%s\"}}}", name, k ? "two" : "one");
        recs r = {.n = 0};
        read_all(arn, &r);
        assert_int_equal(r.n, 2);
        const rec *m = &r.v[1];
        assert_string_equal(m->event, "MODIFY");
        assert_string_equal(m->pk, "p");
        assert_string_equal(m->sk, "s");
        bool want_new = views[i] == KURA_STREAM_NEW_IMAGE ||
                        views[i] == KURA_STREAM_NEW_AND_OLD_IMAGES;
        bool want_old = views[i] == KURA_STREAM_OLD_IMAGE ||
                        views[i] == KURA_STREAM_NEW_AND_OLD_IMAGES;
        assert_int_equal(m->has_new, want_new);
        assert_int_equal(m->has_old, want_old);
        if (want_new)
            assert_string_equal(m->new_json, "two");
        if (want_old)
            assert_string_equal(m->old_json, "one");
        /* keys (pk p, sk s: 6) + 10 per image (v "one" / "two": 4 more) */
        assert_int_equal(m->size, 6 + 10 * (want_new + want_old));
        recs_free(&r);
    }
}

/* Records survive flushes, compactions and a reopen, each once, in order. */
static void test_flush_and_reopen(void **state)
{
    (void)state;
    char arn[512];
    create("st_dur", false, 1, KURA_STREAM_KEYS_ONLY, arn);
    kura_table *t;
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < 50; i++)
            exec("PutItem", "{\"TableName\":\"st_dur\",\"Item\":{\"pk\":{\"S\":\"k%03d\"},"
                            "\"v\":{\"N\":\"%d\"}}}", i, round);
        assert_kura_ok(table_acquire(db, "st_dur", &t));
        assert_kura_ok(kura_tree_flush(t->tree));
        table_release(t);
    }
    kura_stream_description d;
    assert_kura_ok(kura_describe_stream(db, arn, 0, NULL, &d));
    char *it = iter(arn, d.shards[0].shard_id, KURA_ITER_TRIM_HORIZON, NULL);
    kura_stream_description_free(&d);
    reopen();
    recs r = {.n = 0};
    drain(it, 0, &r, 7); /* an iterator made before the reopen, small pages */
    assert_int_equal(r.n, 300);
    for (int i = 0; i < 50; i++) {
        char pk[8];
        snprintf(pk, sizeof pk, "k%03d", i);
        assert_string_equal(events_of(&r, pk), "INSERT MODIFY MODIFY MODIFY MODIFY MODIFY");
    }
    for (size_t i = 1; i < r.n; i++)
        assert_true(strcmp(r.v[i - 1].seq, r.v[i].seq) < 0);
    recs_free(&r);
    /* the stream's definition survived too */
    kura_table_description td;
    assert_kura_ok(kura_describe_table(db, "st_dur", &td));
    assert_true(td.stream_enabled);
    assert_int_equal(td.stream_view_type, KURA_STREAM_KEYS_ONLY);
    assert_string_equal(td.latest_stream_arn, arn);
    kura_table_description_free(&td);
}

static void test_disable_and_enable(void **state)
{
    (void)state;
    char arn1[512], arn2[512];
    create("st_toggle", false, 2, KURA_STREAM_NEW_IMAGE, arn1);
    assert_int_equal(set_stream("st_toggle", true, KURA_STREAM_KEYS_ONLY, NULL), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "Table already has an enabled stream");
    exec("PutItem", "{\"TableName\":\"st_toggle\",\"Item\":{\"pk\":{\"S\":\"before\"}}}");
    assert_kura_ok(set_stream("st_toggle", false, KURA_STREAM_VIEW_UNSET, NULL));
    assert_int_equal(set_stream("st_toggle", false, KURA_STREAM_VIEW_UNSET, NULL),
                     KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "Table has no stream to disable");
    exec("PutItem", "{\"TableName\":\"st_toggle\",\"Item\":{\"pk\":{\"S\":\"between\"}}}");
    kura_table_description td;
    assert_kura_ok(kura_describe_table(db, "st_toggle", &td));
    assert_false(td.stream_enabled);
    assert_string_equal(td.latest_stream_arn, arn1);
    kura_table_description_free(&td);
    kura_stream_description d;
    assert_kura_ok(kura_describe_stream(db, arn1, 0, NULL, &d));
    assert_string_equal(d.stream_status, "DISABLED");
    assert_int_equal(d.shards_count, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_non_null(d.shards[i].ending_sequence_number);
        assert_true(strcmp(d.shards[i].starting_sequence_number,
                           d.shards[i].ending_sequence_number) <= 0);
    }
    /* a closed shard read to its end gives no next iterator */
    recs r = {.n = 0};
    for (size_t i = 0; i < 2; i++) {
        char *it = iter(arn1, d.shards[i].shard_id, KURA_ITER_TRIM_HORIZON, NULL);
        kura_stream_record *v;
        size_t n;
        char *next;
        assert_kura_ok(kura_get_records(db, it, 0, &v, &n, &next));
        take(&r, v, n, (uint32_t)i);
        kura_stream_records_free(v, n);
        assert_null(next);
        kura_free(it);
    }
    kura_stream_description_free(&d);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.v[0].pk, "before");
    recs_free(&r);
    reopen(); /* the closed stream and its ends are durable */
    assert_kura_ok(set_stream("st_toggle", true, KURA_STREAM_KEYS_ONLY, arn2));
    assert_string_not_equal(arn1, arn2);
    exec("PutItem", "{\"TableName\":\"st_toggle\",\"Item\":{\"pk\":{\"S\":\"after\"}}}");
    read_all(arn2, &r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.v[0].pk, "after");
    recs_free(&r);
    read_all(arn1, &r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.v[0].pk, "before");
    recs_free(&r);
    kura_stream_summary *ls;
    size_t n;
    char *last;
    assert_kura_ok(kura_list_streams(db, "st_toggle", NULL, 0, &ls, &n, &last));
    assert_int_equal(n, 2);
    assert_null(last);
    assert_true(!strcmp(ls[0].stream_arn, arn1) || !strcmp(ls[1].stream_arn, arn1));
    assert_true(!strcmp(ls[0].stream_arn, arn2) || !strcmp(ls[1].stream_arn, arn2));
    assert_string_equal(ls[0].table_name, "st_toggle");
    kura_stream_summaries_free(ls, n);
    assert_kura_ok(kura_list_streams(db, "st_toggle", NULL, 1, &ls, &n, &last));
    assert_int_equal(n, 1);
    assert_non_null(last);
    kura_stream_summaries_free(ls, n);
    char *after = last;
    assert_kura_ok(kura_list_streams(db, "st_toggle", after, 1, &ls, &n, &last));
    assert_int_equal(n, 1);
    assert_null(last); /* the second and last */
    kura_free(after);
    kura_stream_summaries_free(ls, n);
    assert_int_equal(kura_list_streams(db, "st_nosuch", NULL, 0, &ls, &n, &last),
                     KURA_E_RESOURCE_NOT_FOUND);
    /* a table without a stream has none to disable */
    create("st_plain", false, 1, KURA_STREAM_VIEW_UNSET, NULL);
    assert_int_equal(set_stream("st_plain", false, KURA_STREAM_VIEW_UNSET, NULL),
                     KURA_E_INVALID);
}

static void test_spec_errors(void **state)
{
    (void)state;
    kura_attribute_definition defs[] = {{"pk", KURA_S}};
    kura_key_schema_element keys[] = {{"pk", false}};
    kura_create_table_req r = {.table_name = "st_bad", .attribute_definitions = defs,
                               .attribute_definitions_count = 1, .key_schema = keys,
                               .key_schema_count = 1,
                               .billing_mode = KURA_BILLING_PAY_PER_REQUEST};
    kura_table_description d;
    r.stream_specification = (kura_stream_specification){true, true, KURA_STREAM_VIEW_UNSET};
    assert_int_equal(kura_create_table(db, &r, &d), KURA_E_INVALID);
    assert_non_null(strstr(kura_last_error(), "must not be null or empty when enabling"));
    r.stream_specification = (kura_stream_specification){true, false, KURA_STREAM_KEYS_ONLY};
    assert_int_equal(kura_create_table(db, &r, &d), KURA_E_INVALID);
    assert_non_null(strstr(kura_last_error(), "StreamEnabled was false"));
    r.stream_specification = (kura_stream_specification){true, false, KURA_STREAM_VIEW_UNSET};
    assert_kura_ok(kura_create_table(db, &r, &d)); /* disabled: no stream */
    assert_null(d.latest_stream_arn);
    kura_table_description_free(&d);
    assert_int_equal(set_stream("st_bad", true, KURA_STREAM_VIEW_UNSET, NULL), KURA_E_INVALID);
}

static void test_iterators(void **state)
{
    (void)state;
    char arn[512];
    create("st_it", false, 1, KURA_STREAM_NEW_AND_OLD_IMAGES, arn);
    for (int i = 0; i < 5; i++)
        exec("PutItem", "{\"TableName\":\"st_it\",\"Item\":{\"pk\":{\"S\":\"k\"},\"n\":{\"N\":\"%d\"}}}", i);
    exec("BatchWriteItem", "{\"RequestItems\":{\"st_it\":["
                           "{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"x\"}}}},"
                           "{\"PutRequest\":{\"Item\":{\"pk\":{\"S\":\"y\"}}}}]}}");
    kura_stream_description d;
    assert_kura_ok(kura_describe_stream(db, arn, 0, NULL, &d));
    char shard[64];
    snprintf(shard, sizeof shard, "%s", d.shards[0].shard_id);
    kura_stream_description_free(&d);
    recs all = {.n = 0};
    drain(iter(arn, shard, KURA_ITER_TRIM_HORIZON, NULL), 0, &all, 0);
    assert_int_equal(all.n, 7);
    for (size_t k = 0; k < all.n; k++) {
        recs r = {.n = 0};
        drain(iter(arn, shard, KURA_ITER_AT_SEQUENCE_NUMBER, all.v[k].seq), 0, &r, 0);
        assert_int_equal(r.n, all.n - k);
        assert_string_equal(r.v[0].seq, all.v[k].seq);
        recs_free(&r);
        drain(iter(arn, shard, KURA_ITER_AFTER_SEQUENCE_NUMBER, all.v[k].seq), 0, &r, 0);
        assert_int_equal(r.n, all.n - k - 1);
        if (r.n)
            assert_string_equal(r.v[0].seq, all.v[k + 1].seq);
        recs_free(&r);
    }
    /* Limit, and the next iterator goes on where the page ended */
    char *it = iter(arn, shard, KURA_ITER_TRIM_HORIZON, NULL), *next;
    kura_stream_record *v;
    size_t n;
    assert_kura_ok(kura_get_records(db, it, 2, &v, &n, &next));
    assert_int_equal(n, 2);
    assert_string_equal(v[1].sequence_number, all.v[1].seq);
    kura_stream_records_free(v, n);
    kura_free(it);
    assert_kura_ok(kura_get_records(db, next, 1000, &v, &n, &it));
    assert_int_equal(n, 5);
    assert_string_equal(v[0].sequence_number, all.v[2].seq);
    kura_stream_records_free(v, n);
    kura_free(next);
    /* an open shard at its end: no records, an iterator that sees what comes next */
    assert_kura_ok(kura_get_records(db, it, 0, &v, &n, &next));
    assert_int_equal(n, 0);
    kura_free(it);
    char *latest = iter(arn, shard, KURA_ITER_LATEST, NULL);
    exec("PutItem", "{\"TableName\":\"st_it\",\"Item\":{\"pk\":{\"S\":\"z\"}}}");
    recs r = {.n = 0};
    drain(next, 0, &r, 0);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.v[0].pk, "z");
    recs_free(&r);
    drain(latest, 0, &r, 0);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.v[0].pk, "z");
    recs_free(&r);
    /* errors */
    char *x = NULL;
    assert_int_equal(kura_get_shard_iterator(db, arn, "shardId-00000000000000000000-00000000",
                                             KURA_ITER_TRIM_HORIZON, NULL, &x),
                     KURA_E_RESOURCE_NOT_FOUND);
    assert_string_equal(kura_last_error(), "Shard does not exist");
    char bad_arn[600];
    snprintf(bad_arn, sizeof bad_arn, "%sx", arn);
    assert_int_equal(kura_get_shard_iterator(db, bad_arn, shard, KURA_ITER_LATEST, NULL, &x),
                     KURA_E_INVALID); /* no label: not a stream ARN */
    assert_string_equal(kura_last_error(), "Invalid StreamArn");
    assert_int_equal(kura_get_shard_iterator(db, arn, shard, KURA_ITER_AT_SEQUENCE_NUMBER, NULL,
                                             &x),
                     KURA_E_INVALID);
    assert_int_equal(kura_get_shard_iterator(db, arn, shard, (kura_shard_iterator_type)9, NULL,
                                             &x),
                     KURA_E_INVALID);
    char seq[26];
    memcpy(seq, all.v[0].seq, sizeof seq);
    seq[20] = seq[20] == '9' ? '8' : '9'; /* an offset inside a record */
    assert_int_equal(kura_get_shard_iterator(db, arn, shard, KURA_ITER_AT_SEQUENCE_NUMBER, seq,
                                             &x),
                     KURA_E_INVALID);
    assert_int_equal(kura_get_shard_iterator(db, arn, shard, KURA_ITER_AT_SEQUENCE_NUMBER,
                                             "12345", &x),
                     KURA_E_INVALID);
    assert_int_equal(kura_get_records(db, "garbage", 0, &v, &n, &next), KURA_E_INVALID);
    assert_string_equal(kura_last_error(), "Invalid ShardIterator");
    it = iter(arn, shard, KURA_ITER_TRIM_HORIZON, NULL);
    assert_int_equal(kura_get_records(db, it, 1001, &v, &n, &next), KURA_E_INVALID);
    it[strlen(it) - 20] ^= 1; /* an edited iterator */
    assert_int_equal(kura_get_records(db, it, 0, &v, &n, &next), KURA_E_INVALID);
    kura_free(it);
    assert_int_equal(kura_describe_stream(db, "arn:aws:dynamodb:us-east-1:000000000000:table/"
                                              "st_it/stream/2020-01-01T00:00:00.000",
                                          0, NULL, &d),
                     KURA_E_RESOURCE_NOT_FOUND);
    recs_free(&all);
}

/* GetRecords returns at most about 1 MB. */
static void test_page_bytes(void **state)
{
    (void)state;
    char arn[512];
    create("st_big", false, 1, KURA_STREAM_NEW_AND_OLD_IMAGES, arn);
    static char big[300001];
    memset(big, 'x', sizeof big - 1);
    for (int i = 0; i < 4; i++) /* each record: keys + a 300 KB new image */
        exec("PutItem", "{\"TableName\":\"st_big\",\"Item\":{\"pk\":{\"S\":\"k%d\"},"
                        "\"v\":{\"S\":\"%.*s\"}}}", i, 3000, big);
    kura_stream_description d;
    assert_kura_ok(kura_describe_stream(db, arn, 0, NULL, &d));
    char *it = iter(arn, d.shards[0].shard_id, KURA_ITER_TRIM_HORIZON, NULL);
    kura_stream_description_free(&d);
    kura_stream_record *v;
    size_t n;
    char *next;
    assert_kura_ok(kura_get_records(db, it, 0, &v, &n, &next));
    assert_int_equal(n, 4); /* small items: one page */
    kura_stream_records_free(v, n);
    kura_free(next);
    kura_free(it);
    /* large ones, written through the C API (a JSON body would be too big for exec) */
    kura_table *t;
    assert_kura_ok(table_acquire(db, "st_big", &t));
    table_release(t);
    for (int i = 0; i < 5; i++) {
        kura_value *item = kura_value_map();
        char pk[8];
        snprintf(pk, sizeof pk, "big%d", i);
        kura_value_map_put(item, "pk", 2, kura_value_s(pk, strlen(pk)));
        kura_value_map_put(item, "v", 1, kura_value_s(big, 300000));
        kura_put_item_req req = {.table_name = "st_big", .item = item};
        kura_write_result res;
        assert_kura_ok(kura_put_item(db, &req, &res));
        kura_write_result_free(&res);
        kura_value_free(item);
    }
    assert_kura_ok(kura_describe_stream(db, arn, 0, NULL, &d));
    it = iter(arn, d.shards[0].shard_id, KURA_ITER_TRIM_HORIZON, NULL);
    kura_stream_description_free(&d);
    size_t pages = 0, total = 0;
    while (it) {
        assert_kura_ok(kura_get_records(db, it, 0, &v, &n, &next));
        uint64_t bytes = 0;
        for (size_t i = 0; i < n; i++)
            bytes += v[i].size_bytes;
        assert_true(n <= 1 || bytes <= (1u << 20));
        kura_stream_records_free(v, n);
        kura_free(it);
        it = next;
        total += n;
        pages += n > 0;
        if (!n)
            break;
    }
    kura_free(it);
    assert_int_equal(total, 9);
    assert_true(pages >= 2); /* 4 small + 5 x 300 KB: three big records at most per page */
}

/* Iterators expire; records past the retention are trimmed. */
static void test_expiry_and_trim(void **state)
{
    (void)state;
    assert_kura_ok(kura_close(db));
    opts.stream_iterator_ttl_ms = 1000;
    opts.stream_retention_ms = 200;
    assert_kura_ok(kura_open(dir, &opts, &db));
    char arn[512];
    create("st_trim", false, 1, KURA_STREAM_KEYS_ONLY, arn);
    exec("PutItem", "{\"TableName\":\"st_trim\",\"Item\":{\"pk\":{\"S\":\"old\"}}}");
    kura_stream_description d;
    assert_kura_ok(kura_describe_stream(db, arn, 0, NULL, &d));
    char shard[64];
    snprintf(shard, sizeof shard, "%s", d.shards[0].shard_id);
    kura_stream_description_free(&d);
    recs r = {.n = 0};
    drain(iter(arn, shard, KURA_ITER_TRIM_HORIZON, NULL), 0, &r, 0);
    assert_int_equal(r.n, 1);
    char old_seq[26];
    memcpy(old_seq, r.v[0].seq, sizeof old_seq);
    recs_free(&r);
    char *it = iter(arn, shard, KURA_ITER_TRIM_HORIZON, NULL);
    usleep(1100 * 1000);
    kura_stream_record *v;
    size_t n;
    char *next;
    assert_int_equal(kura_get_records(db, it, 0, &v, &n, &next), KURA_E_EXPIRED_ITERATOR);
    assert_non_null(strstr(kura_last_error(), "Iterator expired"));
    kura_free(it);
    /* the segment holding "old" closes at a flush; past the retention it goes */
    it = iter(arn, shard, KURA_ITER_TRIM_HORIZON, NULL);
    kura_table *t;
    assert_kura_ok(table_acquire(db, "st_trim", &t));
    assert_kura_ok(kura_tree_flush(t->tree));
    usleep(300 * 1000);
    lsm_trim_wals(t->tree->parts[0]);
    table_release(t);
    exec("PutItem", "{\"TableName\":\"st_trim\",\"Item\":{\"pk\":{\"S\":\"new\"}}}");
    assert_int_equal(kura_get_records(db, it, 0, &v, &n, &next), KURA_E_TRIMMED_DATA);
    kura_free(it);
    char *x = NULL;
    assert_int_equal(kura_get_shard_iterator(db, arn, shard, KURA_ITER_AT_SEQUENCE_NUMBER,
                                             old_seq, &x),
                     KURA_E_TRIMMED_DATA);
    drain(iter(arn, shard, KURA_ITER_TRIM_HORIZON, NULL), 0, &r, 0);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.v[0].pk, "new");
    recs_free(&r);
    opts.stream_iterator_ttl_ms = 0;
    opts.stream_retention_ms = 0;
}

/* Time to Live deletes are recorded as the service's. */
static void test_ttl_delete(void **state)
{
    (void)state;
    char arn[512];
    create("st_ttl", false, 1, KURA_STREAM_OLD_IMAGE, arn);
    kura_update_time_to_live_req tr = {"st_ttl", true, "exp"};
    assert_kura_ok(kura_update_time_to_live(db, &tr));
    exec("PutItem", "{\"TableName\":\"st_ttl\",\"Item\":{\"pk\":{\"S\":\"gone\"},"
                    "\"exp\":{\"N\":\"%lld\"}}}", (long long)ttl_now - 10);
    exec("DeleteItem", "{\"TableName\":\"st_ttl\",\"Key\":{\"pk\":{\"S\":\"nope\"}}}");
    uint64_t deleted = 0;
    assert_kura_ok(kura_ttl_sweep(db, &deleted));
    assert_int_equal(deleted, 1);
    recs r = {.n = 0};
    read_all(arn, &r);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.v[0].event, "INSERT");
    assert_false(r.v[0].service);
    assert_string_equal(r.v[1].event, "REMOVE");
    assert_true(r.v[1].service);
    assert_true(r.v[1].has_old);
    recs_free(&r);
}

/* Enabling a stream while writers run: every record of the stream carries its images, and
 * every write acknowledged after the enabling is in it. */
typedef struct writer {
    int id;
    int stop_after; /* writes made after the stream is on, before stopping */
    volatile int *on;
    int after_first; /* the first write index after the enabling was seen */
} writer;

static void *write_loop(void *arg)
{
    writer *w = arg;
    int after = -1;
    for (int i = 0;; i++) {
        bool on = __atomic_load_n(w->on, __ATOMIC_ACQUIRE);
        if (on && after < 0)
            after = i;
        if (on && i - after >= w->stop_after)
            break;
        exec("PutItem", "{\"TableName\":\"st_race\",\"Item\":{\"pk\":{\"S\":\"w%d-%05d\"}}}",
             w->id, i);
    }
    w->after_first = after;
    return NULL;
}

static void test_enable_under_writes(void **state)
{
    (void)state;
    create("st_race", false, 2, KURA_STREAM_VIEW_UNSET, NULL);
    volatile int on = 0;
    writer w[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (writer){.id = i, .stop_after = 200, .on = &on};
        assert_int_equal(pthread_create(&th[i], NULL, write_loop, &w[i]), 0);
    }
    usleep(20 * 1000);
    char arn[512];
    assert_kura_ok(set_stream("st_race", true, KURA_STREAM_NEW_AND_OLD_IMAGES, arn));
    __atomic_store_n(&on, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    recs r = {.n = 0};
    read_all(arn, &r); /* a write without its image would fail the read as corruption */
    for (int i = 0; i < 3; i++)
        for (int k = w[i].after_first; k < w[i].after_first + 200; k++) {
            char pk[32];
            snprintf(pk, sizeof pk, "w%d-%05d", i, k);
            assert_string_equal(events_of(&r, pk), "INSERT");
        }
    for (size_t i = 0; i < r.n; i++)
        assert_string_equal(r.v[i].event, "INSERT");
    recs_free(&r);
}

/* With relaxed durability a record shows once its write is durable: GetRecords, having read
 * all that is, syncs the rest of its shard (the syncer's interval is never here); a
 * transaction over several partitions is durable when it returns. */
static void test_relaxed_durable_only(void **state)
{
    (void)state;
    assert_kura_ok(kura_close(db));
    opts.durability = KURA_RELAXED;
    opts.relaxed_sync_ms = 3600000;
    assert_kura_ok(kura_open(dir, &opts, &db));
    char arn[512];
    create("st_relaxed", false, 4, KURA_STREAM_KEYS_ONLY, arn);
    exec("PutItem", "{\"TableName\":\"st_relaxed\",\"Item\":{\"pk\":{\"S\":\"a\"}}}");
    kura_table *t;
    assert_kura_ok(table_acquire(db, "st_relaxed", &t));
    lsm_tree *part = NULL;
    for (uint32_t p = 0; p < 4; p++) /* the partition written: not durable yet */
        if (lsm_wal_durable(t->tree->parts[p]).offset < lsm_wal_tail(t->tree->parts[p]).offset)
            part = t->tree->parts[p];
    assert_non_null(part);
    recs r = {.n = 0};
    read_all(arn, &r);
    assert_int_equal(r.n, 1);
    recs_free(&r);
    assert_int_equal(lsm_wal_durable(part).offset, lsm_wal_tail(part).offset); /* made so */
    table_release(t);
    /* over several partitions: made durable by the commit */
    char items[2048] = "";
    for (int i = 0; i < 10; i++)
        snprintf(items + strlen(items), sizeof items - strlen(items),
                 "%s{\"Put\":{\"TableName\":\"st_relaxed\",\"Item\":{\"pk\":{\"S\":\"b%d\"}}}}",
                 i ? "," : "", i);
    exec("TransactWriteItems", "{\"TransactItems\":[%s]}", items);
    read_all(arn, &r);
    assert_int_equal(r.n, 11);
    recs_free(&r);
    opts.durability = KURA_SYNC;
    opts.relaxed_sync_ms = 100;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flush_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disable_and_enable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iterators, setup, teardown),
        cmocka_unit_test_setup_teardown(test_page_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_and_trim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ttl_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enable_under_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relaxed_durable_only, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

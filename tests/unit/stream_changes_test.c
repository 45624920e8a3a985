/*
 * stream_changes_test.c - which item changes a table's stream records (engine/stream.h):
 * INSERT, MODIFY and REMOVE with their images; nothing for a put that changes nothing (also
 * when only a set's member order differs) or a delete of nothing; the meta entry's time and
 * origin; a transaction's marker; a write without its image, an image without its write.
 */
#include "testutil.h"

#include <string.h>

#include "engine/lsm/batch.h"
#include "engine/model/value.h"
#include "engine/stream.h"
#include "util/buf.h"

/* Items: {pk: S a, n: N <n>, s: SS [first, second]}; "" is the item {pk: S a}. */
static kura_value *item(const char *desc)
{
    kura_value *m = kura_value_map();
    assert_kura_ok(kura_value_map_put(m, "pk", 2, kura_value_s("a", 1)));
    if (*desc) {
        char n[2] = {desc[0], 0}, x[2] = {desc[1], 0}, y[2] = {desc[2], 0};
        assert_kura_ok(kura_value_map_put(m, "n", 1, kura_value_n(n, 1)));
        kura_value *set = kura_value_set(KURA_SS);
        assert_kura_ok(kura_value_append(set, kura_value_s(x, 1)));
        assert_kura_ok(kura_value_append(set, kura_value_s(y, 1)));
        assert_kura_ok(kura_value_map_put(m, "s", 1, set));
    }
    return m;
}

/* The encoding of item(desc). */
static void enc(const char *desc, kbuf *out)
{
    kura_value *v = item(desc);
    out->len = 0;
    assert_kura_ok(val_encode(v, out));
    kura_value_free(v);
}

/* Whether the encoded item is item(desc). */
static bool is(const uint8_t *p, size_t len, const char *desc)
{
    kura_value d = {0};
    assert_kura_ok(val_decode(p, len, &d));
    kura_value *want = item(desc);
    bool eq = val_equal(&d, want);
    kura_value_free(want);
    val_clear(&d);
    return eq;
}

typedef struct seen {
    stream_change c[16];
    size_t n;
} seen;

static kura_status on_change(void *arg, const stream_change *c)
{
    seen *s = arg;
    s->c[s->n++] = *c;
    return KURA_OK;
}

static void put(lsm_batch *b, const char *k, const char *item, const char *old)
{
    kbuf n = KBUF_INIT, o = KBUF_INIT;
    enc(item, &n);
    if (old)
        enc(old, &o);
    assert_kura_ok(lsm_batch_put(b, k, strlen(k), n.data, n.len));
    assert_kura_ok(lsm_batch_image(b, k, strlen(k), o.data, o.len));
    kbuf_free(&n);
    kbuf_free(&o);
}

static void del(lsm_batch *b, const char *k, const char *old)
{
    kbuf o = KBUF_INIT;
    if (old)
        enc(old, &o);
    assert_kura_ok(lsm_batch_delete(b, k, strlen(k)));
    assert_kura_ok(lsm_batch_image(b, k, strlen(k), o.data, o.len));
    kbuf_free(&o);
}

static void test_events(void **state)
{
    (void)state;
    const char *a1 = "1xy", *a2 = "2xy", *a2r = "2yx";
    lsm_batch b;
    lsm_batch_init(&b);
    assert_kura_ok(lsm_batch_txn_marker(&b, 77));
    assert_kura_ok(lsm_batch_meta(&b, 1700000000123ull, 0));
    put(&b, "ka", a1, NULL);   /* INSERT */
    put(&b, "ka", a2, a1);     /* MODIFY */
    put(&b, "ka", a2, a2);     /* nothing: the same bytes */
    put(&b, "ka", a2r, a2);    /* nothing: the same set in another order */
    assert_kura_ok(lsm_batch_meta(&b, 1700000009999ull, LSM_META_SERVICE));
    del(&b, "ka", a2r);        /* REMOVE, by the service */
    del(&b, "kb", NULL);       /* nothing: no item */
    lsm_rep_set_seq(b.rep.data, 100);
    seen s = {.n = 0};
    assert_kura_ok(stream_changes(b.rep.data, b.rep.len, "test", on_change, &s));
    assert_int_equal(s.n, 3);
    assert_int_equal(s.c[0].event, STREAM_INSERT);
    assert_null(s.c[0].old_enc);
    assert_non_null(s.c[0].new_enc);
    assert_int_equal(s.c[0].seq, 102); /* marker 100, meta 101 */
    assert_int_equal(s.c[0].index, 2);
    assert_int_equal(s.c[0].time_ms, 1700000000123ull);
    assert_false(s.c[0].service);
    assert_int_equal(s.c[0].klen, 2);
    assert_memory_equal(s.c[0].key, "ka", 2);
    assert_int_equal(s.c[1].event, STREAM_MODIFY);
    assert_non_null(s.c[1].old_enc);
    assert_non_null(s.c[1].new_enc);
    assert_true(is(s.c[0].new_enc, s.c[0].new_len, a1));
    assert_true(is(s.c[1].old_enc, s.c[1].old_len, a1));
    assert_true(is(s.c[1].new_enc, s.c[1].new_len, a2));
    assert_false(is(s.c[1].new_enc, s.c[1].new_len, a1));
    assert_int_equal(s.c[2].event, STREAM_REMOVE);
    assert_null(s.c[2].new_enc);
    assert_non_null(s.c[2].old_enc);
    assert_int_equal(s.c[2].time_ms, 1700000009999ull);
    assert_true(s.c[2].service);
    lsm_batch_free(&b);
}

static void test_damage(void **state)
{
    (void)state;
    const char *a1 = "";
    seen s = {.n = 0};
    lsm_batch b;
    /* a write without its image */
    lsm_batch_init(&b);
    kbuf n = KBUF_INIT;
    enc(a1, &n);
    assert_kura_ok(lsm_batch_put(&b, "ka", 2, n.data, n.len));
    assert_int_equal(stream_changes(b.rep.data, b.rep.len, "t", on_change, &s),
                     KURA_E_CORRUPTION);
    assert_non_null(strstr(kura_last_error(), "has no image"));
    /* two writes in a row */
    put(&b, "kb", a1, NULL);
    assert_int_equal(stream_changes(b.rep.data, b.rep.len, "t", on_change, &s),
                     KURA_E_CORRUPTION);
    lsm_batch_free(&b);
    /* an image of another item */
    lsm_batch_init(&b);
    assert_kura_ok(lsm_batch_put(&b, "ka", 2, n.data, n.len));
    assert_kura_ok(lsm_batch_image(&b, "kb", 2, "", 0));
    assert_int_equal(stream_changes(b.rep.data, b.rep.len, "t", on_change, &s),
                     KURA_E_CORRUPTION);
    assert_non_null(strstr(kura_last_error(), "follows no write"));
    lsm_batch_free(&b);
    kbuf_free(&n);
    assert_int_equal(s.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_damage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

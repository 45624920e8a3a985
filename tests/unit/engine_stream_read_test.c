/*
 * engine_stream_read_test.c - reading a shard (engine/stream_read.c): every change of a
 * partition once and in order, from any position handed out, also inside a record of several
 * changes (a transaction's piece); a piece of a transaction still committing holds the
 * reading back, one that never committed is passed over; a committed one appears with the
 * sequences its commit record gives.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/db_int.h"
#include "engine/lsm/lsm.h"
#include "engine/model/value.h"
#include "engine/stream.h"
#include "engine/txn.h"
#include "util/coding.h"

typedef struct fx {
    char *dir;
    kura_db *db;
    kura_tree *t;
    lsm_tree *p0;
    char keys[64][16]; /* keys routed to partition 0 */
} fx;

static void fx_open(fx *f)
{
    f->dir = test_mkdtemp("stream_read");
    kura_options o;
    kura_options_init(&o);
    assert_kura_ok(kura_open(f->dir, &o, &f->db));
    assert_kura_ok(kura_tree_open(f->db, "t", NULL, &f->t));
    f->p0 = f->t->parts[0];
    lsm_set_wal_retain_ms(f->p0, 3600000);
    int n = 0;
    for (int i = 0; n < 64; i++) {
        char k[16];
        snprintf(k, sizeof k, "key%04d", i);
        if (kura_tree_partition_of(f->t, k, strlen(k)) == 0)
            memcpy(f->keys[n++], k, sizeof k);
    }
}

static void fx_close(fx *f)
{
    assert_kura_ok(kura_close(f->db));
    test_rmrf(f->dir);
}

/* The encoding of {v: N <n>} (empty for n < 0). */
static void enc(int n, kbuf *out)
{
    out->len = 0;
    if (n < 0)
        return;
    kura_value *m = kura_value_map();
    char d[16];
    snprintf(d, sizeof d, "%d", n);
    assert_kura_ok(kura_value_map_put(m, "v", 1, kura_value_n(d, strlen(d))));
    assert_kura_ok(val_encode(m, out));
    kura_value_free(m);
}

/* Item k goes from version `from` (-1: none) to `to` (-1: deleted). */
static void write_item(fx *f, int k, int from, int to)
{
    kbuf n = KBUF_INIT, o = KBUF_INIT;
    enc(to, &n);
    enc(from, &o);
    const char *key = f->keys[k];
    assert_kura_ok(tree_write_imaged(f->t, key, strlen(key), to >= 0 ? n.data : NULL, n.len,
                                     o.data, o.len, 0));
    kbuf_free(&n);
    kbuf_free(&o);
}

typedef struct got {
    const fx *f;
    stream_event ev[256];
    int key[256];
    uint64_t seq[256];
    size_t n;
} got;

static kura_status on_rec(void *arg, const stream_change *c, stream_pos at)
{
    got *g = arg;
    (void)at;
    int k = -1; /* which of f->keys */
    for (int i = 0; i < 64 && k < 0; i++)
        if (strlen(g->f->keys[i]) == c->klen && !memcmp(g->f->keys[i], c->key, c->klen))
            k = i;
    if (g->n == 256)
        return kura_err(KURA_E_INVALID, "more changes than written");
    g->ev[g->n] = c->event;
    g->key[g->n] = k;
    g->seq[g->n] = c->seq;
    g->n++;
    return KURA_OK;
}

static stream_pos head(fx *f)
{
    lsm_wal_pos h;
    assert_kura_ok(lsm_wal_head(f->p0, &h));
    return (stream_pos){h.segment, h.offset, 0};
}

/* Reads from `from` in steps of `step` changes until nothing more comes. */
static stream_pos read_all(fx *f, stream_pos from, size_t step, got *g)
{
    for (int calls = 0;; calls++) {
        assert_true(calls < 100); /* (a position that does not move on: a loop) */
        size_t n0 = g->n;
        stream_pos next;
        assert_kura_ok(stream_read(f->db, f->p0, from, (lsm_wal_pos){UINT64_MAX, UINT64_MAX},
                                   step, on_rec, g, &next));
        if (g->n == n0)
            return next;
        from = next;
    }
}

/* A transaction writing two new items to partition 0 and one to partition 1. */
static void txn_two_and_one(fx *f, int k0, int k1, uint64_t *first_seq)
{
    txn_piece pc[2];
    kbuf n = KBUF_INIT;
    enc(7, &n);
    for (int i = 0; i < 2; i++) {
        pc[i].part = f->t->parts[i];
        lsm_batch_init(&pc[i].batch);
    }
    const char *ka = f->keys[k0], *kb = f->keys[k1];
    assert_kura_ok(lsm_batch_put(&pc[0].batch, ka, strlen(ka), n.data, n.len));
    assert_kura_ok(lsm_batch_image(&pc[0].batch, ka, strlen(ka), "", 0));
    assert_kura_ok(lsm_batch_put(&pc[0].batch, kb, strlen(kb), n.data, n.len));
    assert_kura_ok(lsm_batch_image(&pc[0].batch, kb, strlen(kb), "", 0));
    const char *other = "zz-other-partition";
    assert_kura_ok(lsm_batch_put(&pc[1].batch, other, strlen(other), n.data, n.len));
    assert_kura_ok(lsm_batch_image(&pc[1].batch, other, strlen(other), "", 0));
    uint64_t before = lsm_visible(&f->db->sh);
    assert_kura_ok(txn_commit(f->db, pc, 2, true, NULL));
    *first_seq = before;
    for (int i = 0; i < 2; i++)
        lsm_batch_free(&pc[i].batch);
    kbuf_free(&n);
}

static void test_changes_in_order(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    stream_pos h = head(&f);
    write_item(&f, 0, -1, 1); /* INSERT */
    write_item(&f, 0, 1, 2);  /* MODIFY */
    write_item(&f, 0, 2, 2);  /* nothing */
    write_item(&f, 1, -1, 1); /* INSERT */
    write_item(&f, 0, 2, -1); /* REMOVE */
    write_item(&f, 2, -1, -1); /* nothing */
    uint64_t after;
    txn_two_and_one(&f, 3, 4, &after); /* two INSERTs in one record */
    write_item(&f, 5, -1, 1); /* INSERT */
    got g = {.f = &f};
    read_all(&f, h, 1000, &g);
    static const stream_event want_ev[] = {STREAM_INSERT, STREAM_MODIFY, STREAM_INSERT,
                                           STREAM_REMOVE, STREAM_INSERT, STREAM_INSERT,
                                           STREAM_INSERT};
    static const int want_key[] = {0, 0, 1, 0, 3, 4, 5};
    assert_int_equal(g.n, 7);
    for (size_t i = 0; i < g.n; i++) {
        assert_int_equal(g.ev[i], want_ev[i]);
        assert_int_equal(g.key[i], want_key[i]);
    }
    /* the transaction's changes carry the sequences of its range, after the writes before */
    assert_true(g.seq[4] > after && g.seq[5] == g.seq[4] + 2); /* (an image between) */
    /* one change at a time, resuming inside the transaction's record: the same */
    got g1 = {.f = &f};
    read_all(&f, h, 1, &g1);
    assert_int_equal(g1.n, 7);
    assert_memory_equal(g1.key, g.key, sizeof g.key);
    assert_memory_equal(g1.seq, g.seq, sizeof g.seq);
    fx_close(&f);
}

/* Appends a piece of a new transaction writing item k, by hand; the transaction is marked
 * committing. Returns its id. */
static uint64_t piece_committing(fx *f, int k)
{
    uint64_t id = lsm_seq_alloc(&f->db->sh, 1);
    lsm_seq_complete(&f->db->sh, id, id);
    kmutex_lock(&f->db->txn_mu);
    if (f->db->ntxn_ids == f->db->txn_ids_cap) {
        f->db->txn_ids_cap = f->db->txn_ids_cap ? 2 * f->db->txn_ids_cap : 8;
        f->db->txn_ids = realloc(f->db->txn_ids, f->db->txn_ids_cap * sizeof *f->db->txn_ids);
    }
    f->db->txn_ids[f->db->ntxn_ids++] = id;
    kmutex_unlock(&f->db->txn_mu);
    lsm_batch p;
    lsm_batch_init(&p);
    kbuf n = KBUF_INIT;
    enc(9, &n);
    assert_kura_ok(lsm_batch_txn_marker(&p, id));
    assert_kura_ok(lsm_batch_put(&p, f->keys[k], strlen(f->keys[k]), n.data, n.len));
    assert_kura_ok(lsm_batch_image(&p, f->keys[k], strlen(f->keys[k]), "", 0));
    lsm_rep_set_seq(p.rep.data, 0);
    lsm_txn_hold hold;
    uint64_t end;
    assert_kura_ok(lsm_txn_lead(f->p0, &hold));
    assert_kura_ok(lsm_txn_append(f->p0, p.rep.data, p.rep.len, &end));
    lsm_txn_release(f->p0, &hold, KURA_OK);
    assert_kura_ok(lsm_txn_sync(f->p0, end));
    lsm_batch_free(&p);
    kbuf_free(&n);
    return id;
}

/* The transaction is over: committed (its commit record written, its range published) or
 * not. */
static void piece_over(fx *f, uint64_t id, bool commit)
{
    if (commit) {
        uint64_t first = lsm_seq_alloc(&f->db->sh, 3);
        uint8_t key[9] = {'c'}, val[8];
        enc_fixed64_be(key + 1, id);
        enc_fixed64(val, first);
        lsm_batch rec;
        lsm_batch_init(&rec);
        assert_kura_ok(lsm_batch_put(&rec, key, sizeof key, val, sizeof val));
        assert_kura_ok(lsm_write_nowait(f->db->txn->parts[0], &rec, true));
        lsm_batch_free(&rec);
        lsm_seq_complete(&f->db->sh, first, first + 2);
    }
    lsm_hook_slot none = {0};
    lsm_txn_end(f->p0, &none);
    kmutex_lock(&f->db->txn_mu);
    for (size_t i = 0; i < f->db->ntxn_ids; i++)
        if (f->db->txn_ids[i] == id)
            f->db->txn_ids[i] = f->db->txn_ids[--f->db->ntxn_ids];
    kmutex_unlock(&f->db->txn_mu);
}

/* A piece whose transaction is still committing holds the reading back, however long; then
 * a committed one is read with its range's sequences, one that did not commit is passed over,
 * and what follows each is read. */
static void test_frontier(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    stream_pos h = head(&f);
    write_item(&f, 0, -1, 1);
    uint64_t id = piece_committing(&f, 1);
    got g = {.f = &f};
    stream_pos at = read_all(&f, h, 1000, &g);
    assert_int_equal(g.n, 1); /* the first write; the piece waits */
    at = read_all(&f, at, 1000, &g);
    assert_int_equal(g.n, 1); /* still */
    piece_over(&f, id, true);
    write_item(&f, 2, -1, 1);
    at = read_all(&f, at, 1000, &g);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.key[1], 1); /* the transaction's write */
    assert_true(g.seq[1] > id);
    assert_int_equal(g.key[2], 2);
    id = piece_committing(&f, 3);
    piece_over(&f, id, false);
    write_item(&f, 4, -1, 1);
    read_all(&f, at, 1000, &g);
    assert_int_equal(g.n, 4);
    assert_int_equal(g.key[3], 4); /* item 3's piece never committed */
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_changes_in_order),
        cmocka_unit_test(test_frontier),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

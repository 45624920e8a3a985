/*
 * lsm_iter_test.c - the merging, concatenating and user-key (db) iterators, each driven by
 * random operations (seeks, seek_first/last, next, prev with direction changes) and compared
 * at every step with a brute-force reference; plus error and corruption propagation.
 *
 * The inputs are memtable iterators and vec_iter, a tiny iterator over a sorted array.
 */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lsm/concat_iter.h"
#include "engine/lsm/db_iter.h"
#include "engine/lsm/memtable.h"
#include "engine/lsm/merge_iter.h"
#include "util/ikey.h"
#include "util/status.h"
#include "util/thread.h"

/* ---- Entries and the vector iterator ---------------------------------------------------- */

typedef struct entry {
    uint8_t key[24]; /* an internal key (or a corrupt short one) */
    size_t klen;
    uint8_t val[48];
    size_t vlen;
    size_t src; /* which input it came from (ties in the merge) */
} entry;

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = ikey_cmp(x->key, x->klen, y->key, y->klen);
    if (c == 0)
        c = x->src < y->src ? -1 : x->src > y->src;
    return c;
}

static int live_vec_iters; /* vec_iters not yet freed */

/* Iterates a sorted entry array (borrowed). Moving onto index fail_at makes it invalid with
 * status fail_status, as a corrupt block would. */
typedef struct vec_iter {
    kv_iter base;
    const entry *e;
    size_t n;
    size_t pos; /* n = invalid */
    size_t fail_at;
    kura_status fail_status, status;
} vec_iter;

static void vi_land(vec_iter *vi, size_t pos)
{
    vi->pos = pos;
    if (pos < vi->n && pos == vi->fail_at) {
        vi->status = kura_err(vi->fail_status, "vec_iter: injected failure at %zu", pos);
        vi->pos = vi->n;
    }
}
static bool vi_valid(const kv_iter *it)
{
    const vec_iter *vi = (const vec_iter *)it;
    return vi->pos < vi->n;
}
static void vi_seek_first(kv_iter *it)
{
    vi_land((vec_iter *)it, 0);
}
static void vi_seek_last(kv_iter *it)
{
    vec_iter *vi = (vec_iter *)it;
    vi_land(vi, vi->n ? vi->n - 1 : 0);
}
static void vi_seek(kv_iter *it, const uint8_t *key, size_t klen)
{
    vec_iter *vi = (vec_iter *)it;
    size_t i = 0;
    while (i < vi->n && ikey_cmp(vi->e[i].key, vi->e[i].klen, key, klen) < 0)
        i++;
    vi_land(vi, i);
}
static void vi_next(kv_iter *it)
{
    vec_iter *vi = (vec_iter *)it;
    assert_true(vi->pos < vi->n);
    vi_land(vi, vi->pos + 1);
}
static void vi_prev(kv_iter *it)
{
    vec_iter *vi = (vec_iter *)it;
    assert_true(vi->pos < vi->n);
    vi_land(vi, vi->pos == 0 ? vi->n : vi->pos - 1);
}
static const uint8_t *vi_key(const kv_iter *it, size_t *n)
{
    const vec_iter *vi = (const vec_iter *)it;
    assert_true(vi->pos < vi->n);
    *n = vi->e[vi->pos].klen;
    return vi->e[vi->pos].key;
}
static const uint8_t *vi_value(const kv_iter *it, size_t *n)
{
    const vec_iter *vi = (const vec_iter *)it;
    assert_true(vi->pos < vi->n);
    *n = vi->e[vi->pos].vlen;
    return vi->e[vi->pos].val;
}
static kura_status vi_status(const kv_iter *it)
{
    return ((const vec_iter *)it)->status;
}
static void vi_destroy(kv_iter *it)
{
    live_vec_iters--;
    free(it);
}
static const kv_iter_ops vec_ops = {vi_valid, vi_seek_first, vi_seek_last, vi_seek,   vi_next,
                                    vi_prev,  vi_key,        vi_value,     vi_status, vi_destroy};

static kv_iter *vec_iter_new(const entry *e, size_t n, size_t fail_at, kura_status fail_status)
{
    vec_iter *vi = malloc(sizeof *vi);
    assert_non_null(vi);
    *vi = (vec_iter){{&vec_ops}, e, n, n, fail_at, fail_status, KURA_OK};
    live_vec_iters++;
    return &vi->base;
}

/* ---- Random data ------------------------------------------------------------------------ */

/* A user key over a 2..3-letter alphabet: few keys, many versions, prefixes. */
static size_t rand_ukey(uint64_t *rng, uint8_t *out, unsigned letters, unsigned maxlen)
{
    size_t n = test_rand(rng) % (maxlen + 1);
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t)('a' + test_rand(rng) % letters);
    return n;
}

/* Entry with a random user key, the given seq, random type (del_pct % deletions). A deletion
 * has no value, as in a memtable. */
static entry rand_entry(uint64_t *rng, uint64_t seq, unsigned del_pct, size_t src,
                        unsigned letters, unsigned maxlen)
{
    entry e = {.src = src};
    uint8_t uk[8];
    size_t uklen = rand_ukey(rng, uk, letters, maxlen);
    unsigned type = test_rand(rng) % 100 < del_pct ? IKEY_TYPE_DELETE : IKEY_TYPE_VALUE;
    ikey_encode(e.key, uk, uklen, seq, type);
    e.klen = uklen + IKEY_TRAILER;
    if (type == IKEY_TYPE_VALUE)
        e.vlen = (size_t)snprintf((char *)e.val, sizeof e.val, "s%llu/%zu",
                                  (unsigned long long)seq, src);
    return e;
}

static void assert_entry(kv_iter *it, const entry *want, bool user_key)
{
    if (!want) {
        if (kv_iter_valid(it))
            fail_msg("iterator valid, expected the end");
        return;
    }
    if (!kv_iter_valid(it))
        fail_msg("iterator invalid (status %s), expected an entry",
                 kura_status_str(kv_iter_status(it)));
    size_t klen, vlen, wklen = user_key ? want->klen - IKEY_TRAILER : want->klen;
    const uint8_t *k = kv_iter_key(it, &klen);
    const uint8_t *v = kv_iter_value(it, &vlen);
    if (klen != wklen || memcmp(k, want->key, klen) != 0 || vlen != want->vlen ||
        memcmp(v, want->val, vlen) != 0)
        fail_msg("got key %.*s (%zu B) value %.*s, want key %.*s (%zu B) value %.*s",
                 (int)klen, (const char *)k, klen, (int)vlen, (const char *)v, (int)wklen,
                 (const char *)want->key, wklen, (int)want->vlen, (const char *)want->val);
}

/*
 * Drives `it` with `ops` random operations over the sorted reference ref[0..n-1] and checks
 * each position. With user_key, keys compare as user keys (db_iter) and seek targets are
 * user keys; otherwise as internal keys.
 */
static void random_walk(kv_iter *it, const entry *ref, size_t n, bool user_key, uint64_t *rng,
                        int ops)
{
    size_t pos = n; /* n = invalid */
    for (int op = 0; op < ops; op++) {
        unsigned r = (unsigned)(test_rand(rng) % 100);
        if (pos < n && r < 40) {
            kv_iter_next(it);
            pos++;
        } else if (pos < n && r < 80) {
            kv_iter_prev(it);
            pos = pos == 0 ? n : pos - 1;
        } else if (r < 85) {
            kv_iter_seek_first(it);
            pos = 0;
        } else if (r < 90) {
            kv_iter_seek_last(it);
            pos = n ? n - 1 : 0;
        } else {
            uint8_t t[24];
            size_t tlen;
            if (n && test_rand(rng) % 2) { /* an existing key */
                const entry *e = &ref[test_rand(rng) % n];
                tlen = user_key ? e->klen - IKEY_TRAILER : e->klen;
                memcpy(t, e->key, tlen);
            } else {
                tlen = rand_ukey(rng, t, 3, 5);
                if (!user_key) {
                    ikey_encode(t, t, tlen, test_rand(rng) % 400, test_rand(rng) % 2);
                    tlen += IKEY_TRAILER;
                }
            }
            kv_iter_seek(it, t, tlen);
            for (pos = 0; pos < n; pos++) {
                const entry *e = &ref[pos];
                int c = user_key ? ukey_cmp(e->key, e->klen - IKEY_TRAILER, t, tlen)
                                 : ikey_cmp(e->key, e->klen, t, tlen);
                if (c >= 0)
                    break;
            }
        }
        assert_entry(it, pos < n ? &ref[pos] : NULL, user_key);
    }
    assert_kura_ok(kv_iter_status(it));
}

/* ---- Inputs: memtables or vectors ------------------------------------------------------- */

typedef struct inputs {
    size_t n;
    kv_iter **its;
    memtable **mts;
    entry **vecs;
    entry *all; /* every entry, sorted by (ikey, src) */
    size_t nall;
} inputs;

/*
 * n inputs holding `per` random entries on average (seqs unique, so internal keys are unique
 * unless `dups` copies some earlier entries into later vector inputs). Roughly half the
 * inputs are memtables.
 */
/* Adds to v[0..c) a copy of a random earlier entry, relabelled as coming from input k, unless
 * v has that internal key already. Returns the number of entries added (0 or 1). */
static size_t copy_entry(const inputs *in, entry *v, size_t c, size_t k, uint64_t *rng)
{
    entry d = in->all[test_rand(rng) % in->nall];
    for (size_t j = 0; j < c; j++)
        if (ikey_cmp(v[j].key, v[j].klen, d.key, d.klen) == 0)
            return 0;
    d.src = k;
    if (d.vlen) { /* "s<seq>/<src>" becomes "s<seq>/<src>/<k>" */
        char orig[sizeof d.val];
        memcpy(orig, d.val, d.vlen);
        d.vlen = (size_t)snprintf((char *)d.val, sizeof d.val, "%.*s/%zu", (int)d.vlen, orig, k);
        assert_true(d.vlen < sizeof d.val);
    }
    v[c] = d;
    return 1;
}

static inputs make_inputs(uint64_t *rng, size_t n, size_t per, unsigned letters, unsigned maxlen,
                          unsigned del_pct, bool dups)
{
    inputs in = {.n = n};
    in.its = calloc(n + 1, sizeof *in.its);
    in.mts = calloc(n + 1, sizeof *in.mts);
    in.vecs = calloc(n + 1, sizeof *in.vecs);
    in.all = calloc(n * (2 * per + 1) + 1, sizeof *in.all);
    assert_true(in.its && in.mts && in.vecs && in.all);
    uint64_t seq = 1;
    for (size_t k = 0; k < n; k++) {
        size_t cnt = per ? test_rand(rng) % (2 * per + 1) : 0;
        entry *v = calloc(2 * per + 1, sizeof *v);
        assert_non_null(v);
        bool use_mt = test_rand(rng) % 2 == 0;
        size_t c = 0;
        for (size_t t = 0; t < cnt; t++) {
            if (dups && !use_mt && in.nall && test_rand(rng) % 4 == 0)
                c += copy_entry(&in, v, c, k, rng);
            else
                v[c++] = rand_entry(rng, seq++, del_pct, k, letters, maxlen);
        }
        qsort(v, c, sizeof *v, entry_cmp);
        memcpy(in.all + in.nall, v, c * sizeof *v);
        in.nall += c;
        if (use_mt) {
            in.mts[k] = mt_new();
            assert_non_null(in.mts[k]);
            for (size_t j = 0; j < c; j++)
                assert_kura_ok(mt_add(in.mts[k], ikey_seq(v[j].key, v[j].klen),
                                      ikey_type(v[j].key, v[j].klen), v[j].key,
                                      v[j].klen - IKEY_TRAILER, v[j].val, v[j].vlen));
            in.its[k] = mt_iter(in.mts[k]);
            assert_non_null(in.its[k]);
        } else {
            in.its[k] = vec_iter_new(v, c, SIZE_MAX, KURA_OK);
        }
        in.vecs[k] = v;
    }
    qsort(in.all, in.nall, sizeof *in.all, entry_cmp);
    return in;
}

/* Frees what make_inputs() made, except the iterators (owned by the merge). */
static void free_inputs(inputs *in)
{
    for (size_t k = 0; k < in->n; k++) {
        mt_unref(in->mts[k]);
        free(in->vecs[k]);
    }
    free(in->its);
    free(in->mts);
    free(in->vecs);
    free(in->all);
}

/* ---- merge_iter ------------------------------------------------------------------------- */

static void test_merge_random(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    static const size_t kids[] = {0, 1, 2, 3, 4, 5, 7, 16};
    for (int round = 0; round < 12; round++) {
        for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++) {
            bool dups = round % 2;
            inputs in = make_inputs(&rng, kids[i], 25, 3, 5, 20, dups);
            kv_iter *first = in.n ? in.its[0] : NULL;
            kv_iter *m = merge_iter_new(in.its, in.n);
            assert_non_null(m);
            if (in.n == 1)
                assert_ptr_equal(m, first); /* one input: no wrapper */
            random_walk(m, in.all, in.nall, false, &rng, 1500);
            kv_iter_free(m);
            free_inputs(&in);
            assert_int_equal(live_vec_iters, 0);
        }
    }
}

/* An input failing mid-way stops the merge with its status, in both directions. */
static void check_merge_failure(size_t nkids, uint64_t *rng)
{
    inputs in = make_inputs(rng, nkids, 20, 3, 5, 0, false);
    size_t victim = 0; /* a non-empty vector input */
    while (victim < nkids && (in.mts[victim] || ((vec_iter *)in.its[victim])->n == 0))
        victim++;
    if (victim == nkids) {
        for (size_t i = 0; i < nkids; i++)
            kv_iter_free(in.its[i]);
        goto out;
    }
    vec_iter *vi = (vec_iter *)in.its[victim];
    vi->fail_at = vi->n / 2;
    vi->fail_status = KURA_E_IO;
    kv_iter *m = merge_iter_new(in.its, in.n);
    assert_non_null(m);
    size_t seen = 0;
    for (kv_iter_seek_first(m); kv_iter_valid(m); kv_iter_next(m))
        assert_entry(m, &in.all[seen++], false);
    assert_int_equal(kv_iter_status(m), KURA_E_IO);
    assert_true(seen < in.nall);
    seen = 0;
    for (kv_iter_seek_last(m); kv_iter_valid(m); kv_iter_prev(m))
        assert_entry(m, &in.all[in.nall - ++seen], false);
    assert_int_equal(kv_iter_status(m), KURA_E_IO);
    kv_iter_free(m);
out:
    free_inputs(&in);
    assert_int_equal(live_vec_iters, 0);
}

static void test_merge_errors(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    for (int round = 0; round < 20; round++) {
        check_merge_failure(3, &rng); /* linear path */
        check_merge_failure(9, &rng); /* heap path */
    }
    /* an internal key without a trailer is corruption, not an out-of-bounds read */
    entry good[2] = {0}, bad[1] = {0};
    ikey_encode(good[0].key, "a", 1, 1, IKEY_TYPE_VALUE);
    ikey_encode(good[1].key, "c", 1, 2, IKEY_TYPE_VALUE);
    good[0].klen = good[1].klen = 1 + IKEY_TRAILER;
    memcpy(bad[0].key, "b", 1);
    bad[0].klen = 1;
    kv_iter *kids[2] = {vec_iter_new(good, 2, SIZE_MAX, KURA_OK),
                        vec_iter_new(bad, 1, SIZE_MAX, KURA_OK)};
    kv_iter *m = merge_iter_new(kids, 2);
    assert_non_null(m);
    kv_iter_seek_first(m);
    assert_false(kv_iter_valid(m));
    assert_int_equal(kv_iter_status(m), KURA_E_CORRUPTION);
    kv_iter_free(m);
    assert_int_equal(live_vec_iters, 0);
    /* zero inputs: empty, OK */
    m = merge_iter_new(NULL, 0);
    assert_non_null(m);
    kv_iter_seek_first(m);
    assert_false(kv_iter_valid(m));
    assert_kura_ok(kv_iter_status(m));
    kv_iter_free(m);
}

/* ---- concat_iter ------------------------------------------------------------------------ */

typedef struct level {
    entry *e;          /* all entries, sorted */
    size_t nfiles;
    size_t start[17];  /* file i holds e[start[i] .. start[i+1]) */
    const uint8_t *largest[16];
    size_t largest_len[16];
    size_t bad;        /* this file fails to open (SIZE_MAX: none) */
    kura_status bad_status;
    int opens, cleanups;
} level;

static kv_iter *level_open(void *arg, size_t i)
{
    level *l = arg;
    assert_true(i < l->nfiles);
    assert_int_equal(live_vec_iters, 0); /* one file open at a time */
    l->opens++;
    if (i == l->bad)
        return l->bad_status == KURA_E_NOMEM ? NULL : kv_iter_empty(l->bad_status);
    return vec_iter_new(l->e + l->start[i], l->start[i + 1] - l->start[i], SIZE_MAX, KURA_OK);
}

static void level_cleanup(void *arg)
{
    ((level *)arg)->cleanups++;
}

/* Splits the sorted entries e[0..n-1] into 1..16 non-empty files at random points. */
static void level_split(level *l, entry *e, size_t n, uint64_t *rng)
{
    *l = (level){.e = e, .bad = SIZE_MAX};
    size_t files = 1 + test_rand(rng) % (n < 16 ? n : 16);
    l->start[0] = 0;
    for (size_t i = 1; i < files; i++) /* increasing cut points, leaving room for the rest */
        l->start[i] = l->start[i - 1] + 1 +
                      test_rand(rng) % (n - l->start[i - 1] - (files - i));
    l->start[files] = n;
    l->nfiles = files;
    for (size_t i = 0; i < files; i++) {
        const entry *last = &e[l->start[i + 1] - 1];
        l->largest[i] = last->key;
        l->largest_len[i] = last->klen;
    }
}

static kv_iter *level_iter(level *l)
{
    kv_iter *it = concat_iter_new(l->nfiles, l->largest, l->largest_len, level_open, l,
                                  level_cleanup);
    assert_non_null(it);
    return it;
}

static void test_concat_random(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    for (int round = 0; round < 60; round++) {
        size_t n = 1 + test_rand(&rng) % 200;
        entry *e = calloc(n, sizeof *e);
        assert_non_null(e);
        for (size_t i = 0; i < n; i++) /* distinct seqs: distinct internal keys */
            e[i] = rand_entry(&rng, i + 1, 0, 0, 3, 5);
        qsort(e, n, sizeof *e, entry_cmp);
        level l;
        level_split(&l, e, n, &rng);
        kv_iter *it = level_iter(&l);
        random_walk(it, e, n, false, &rng, 1500);
        kv_iter_free(it);
        assert_int_equal(l.cleanups, 1);
        assert_int_equal(live_vec_iters, 0);
        free(e);
    }
    /* no files at all */
    level l = {.bad = SIZE_MAX};
    kv_iter *it = level_iter(&l);
    random_walk(it, NULL, 0, false, &rng, 50);
    kv_iter_free(it);
    assert_int_equal(l.opens, 0);
    assert_int_equal(l.cleanups, 1);
}

/* Seeking into the file already open reuses its iterator. */
static void test_concat_lazy(void **state)
{
    (void)state;
    entry e[40];
    for (size_t i = 0; i < 40; i++) {
        e[i] = (entry){.klen = 4 + IKEY_TRAILER, .vlen = 1};
        char uk[8];
        snprintf(uk, sizeof uk, "k%03zu", i);
        ikey_encode(e[i].key, uk, 4, 1, IKEY_TYPE_VALUE);
    }
    level l = {.e = e, .nfiles = 4, .start = {0, 10, 20, 30, 40}, .bad = SIZE_MAX};
    for (size_t i = 0; i < 4; i++) {
        l.largest[i] = e[l.start[i + 1] - 1].key;
        l.largest_len[i] = e[l.start[i + 1] - 1].klen;
    }
    kv_iter *it = level_iter(&l);
    assert_int_equal(l.opens, 0); /* nothing opened before the first seek */
    kv_iter_seek(it, e[25].key, e[25].klen);
    assert_entry(it, &e[25], false);
    kv_iter_seek(it, e[22].key, e[22].klen);
    assert_entry(it, &e[22], false);
    assert_int_equal(l.opens, 1);
    for (int i = 22; i < 40; i++, kv_iter_next(it))
        assert_entry(it, &e[i], false);
    assert_false(kv_iter_valid(it));
    assert_int_equal(l.opens, 2);
    assert_int_equal(live_vec_iters, 0); /* closed past the end */
    kv_iter_free(it);
}

static void test_concat_errors(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    static const kura_status kinds[] = {KURA_E_IO, KURA_E_CORRUPTION, KURA_E_NOMEM};
    for (int round = 0; round < 30; round++) {
        size_t n = 30 + test_rand(&rng) % 100;
        entry *e = calloc(n, sizeof *e);
        assert_non_null(e);
        for (size_t i = 0; i < n; i++)
            e[i] = rand_entry(&rng, i + 1, 0, 0, 3, 5);
        qsort(e, n, sizeof *e, entry_cmp);
        level l;
        level_split(&l, e, n, &rng);
        l.bad = test_rand(&rng) % l.nfiles;
        l.bad_status = kinds[round % 3];
        kv_iter *it = level_iter(&l);
        size_t seen = 0;
        for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it))
            assert_entry(it, &e[seen++], false);
        assert_int_equal(seen, l.start[l.bad]); /* stopped where the bad file starts */
        assert_int_equal(kv_iter_status(it), l.bad_status);
        seen = 0;
        for (kv_iter_seek_last(it); kv_iter_valid(it); kv_iter_prev(it))
            assert_entry(it, &e[n - ++seen], false);
        assert_int_equal(seen, n - l.start[l.bad + 1]);
        assert_int_equal(kv_iter_status(it), l.bad_status);
        /* a seek into a good file works again, with status OK */
        size_t good = l.bad == 0 ? l.nfiles - 1 : 0;
        if (good != l.bad) {
            kv_iter_seek(it, e[l.start[good]].key, e[l.start[good]].klen);
            assert_entry(it, &e[l.start[good]], false);
            assert_kura_ok(kv_iter_status(it));
        }
        kv_iter_free(it);
        free(e);
        assert_int_equal(live_vec_iters, 0);
    }
}

/* ---- db_iter ---------------------------------------------------------------------------- */

static void count_cleanup(void *arg)
{
    (*(int *)arg)++;
}

/* The user view of sorted entries at `snap`: for each user key, its newest version with
 * seq <= snap if that is a value. Returns the number written to out. */
static size_t user_view(const entry *all, size_t n, uint64_t snap, entry *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        const entry *vis = NULL;
        for (; j < n && ukey_cmp(all[j].key, all[j].klen - IKEY_TRAILER, all[i].key,
                                 all[i].klen - IKEY_TRAILER) == 0;
             j++)
            if (!vis && ikey_seq(all[j].key, all[j].klen) <= snap)
                vis = &all[j];
        if (vis && ikey_type(vis->key, vis->klen) == IKEY_TYPE_VALUE)
            out[m++] = *vis;
        i = j;
    }
    return m;
}

static void test_db_iter_random(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    for (int round = 0; round < 150; round++) {
        size_t nkids = 1 + test_rand(&rng) % 5;
        inputs in = make_inputs(&rng, nkids, 20, 2, 3, 35, false);
        uint64_t snap = test_rand(&rng) % 8 == 0 ? UINT64_MAX : test_rand(&rng) % (in.nall + 2);
        entry *view = calloc(in.nall + 1, sizeof *view);
        assert_non_null(view);
        size_t nview = user_view(in.all, in.nall, snap, view);
        int cleanups = 0;
        kv_iter *it = db_iter_new(merge_iter_new(in.its, in.n), snap, count_cleanup, &cleanups);
        assert_non_null(it);
        random_walk(it, view, nview, true, &rng, 600);
        kv_iter_free(it);
        assert_int_equal(cleanups, 1);
        free(view);
        free_inputs(&in);
        assert_int_equal(live_vec_iters, 0);
    }
}

/* A scan where every key has many invisible and hidden versions around it. */
static void test_db_iter_versions(void **state)
{
    (void)state;
    memtable *m = mt_new();
    assert_non_null(m);
    uint64_t seq = 1;
    for (int k = 0; k < 50; k++) {
        char uk[8];
        int n = snprintf(uk, sizeof uk, "k%02d", k);
        for (int v = 0; v < 20; v++, seq++) {
            unsigned type = (v + k) % 3 == 0 ? IKEY_TYPE_DELETE : IKEY_TYPE_VALUE;
            assert_kura_ok(mt_add(m, seq, type, (uint8_t *)uk, (size_t)n, (uint8_t *)&seq, 8));
        }
    }
    for (uint64_t snap = 0; snap <= seq; snap += 37) {
        kv_iter *it = db_iter_new(mt_iter(m), snap, NULL, NULL);
        assert_non_null(it);
        int count = 0, back = 0;
        for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it), count++) {
            size_t klen, vlen;
            const uint8_t *k = kv_iter_key(it, &klen);
            const uint8_t *v = kv_iter_value(it, &vlen);
            int key = (k[1] - '0') * 10 + (k[2] - '0');
            uint64_t vseq = dec_fixed64(v);
            uint64_t newest = (uint64_t)key * 20 + 20 < snap ? (uint64_t)key * 20 + 20 : snap;
            assert_int_equal(klen, 3);
            assert_int_equal(vseq, newest); /* the newest visible version is a value */
        }
        for (kv_iter_seek_last(it); kv_iter_valid(it); kv_iter_prev(it))
            back++;
        int want = 0;
        for (uint64_t k = 0; k < 50; k++) {
            uint64_t newest = k * 20 + 20 < snap ? k * 20 + 20 : snap;
            want += newest > k * 20 && (newest - k * 20 - 1 + k) % 3 != 0;
        }
        assert_int_equal(count, want);
        assert_int_equal(back, want);
        assert_kura_ok(kv_iter_status(it));
        kv_iter_free(it);
    }
    mt_unref(m);
}

static void test_db_iter_errors(void **state)
{
    (void)state;
    entry e[4] = {0};
    for (int i = 0; i < 4; i++) {
        char uk[2] = {(char)('a' + i), 0};
        ikey_encode(e[i].key, uk, 1, 10, IKEY_TYPE_VALUE);
        e[i].klen = 1 + IKEY_TRAILER;
        e[i].vlen = 1;
        e[i].val[0] = (uint8_t)('A' + i);
    }
    int cleanups = 0;
    /* a key shorter than a trailer, met going forward */
    entry c[4];
    memcpy(c, e, sizeof c);
    c[2].klen = 3;
    kv_iter *it = db_iter_new(vec_iter_new(c, 4, SIZE_MAX, KURA_OK), 100, count_cleanup,
                              &cleanups);
    kv_iter_seek_first(it);
    assert_entry(it, &e[0], true);
    kv_iter_next(it);
    assert_entry(it, &e[1], true);
    kv_iter_next(it);
    assert_false(kv_iter_valid(it));
    assert_int_equal(kv_iter_status(it), KURA_E_CORRUPTION);
    kv_iter_seek(it, (const uint8_t *)"a", 1); /* a seek starts again */
    assert_entry(it, &e[0], true);
    assert_kura_ok(kv_iter_status(it));
    kv_iter_free(it);
    assert_int_equal(cleanups, 1);

    /* an unknown type, met going backward */
    memcpy(c, e, sizeof c);
    c[1].key[1] = 7; /* the trailer's low byte is the type */
    it = db_iter_new(vec_iter_new(c, 4, SIZE_MAX, KURA_OK), 100, NULL, NULL);
    kv_iter_seek_last(it);
    assert_entry(it, &e[3], true);
    kv_iter_prev(it); /* reading c's versions backward runs into b */
    assert_false(kv_iter_valid(it));
    assert_int_equal(kv_iter_status(it), KURA_E_CORRUPTION);
    kv_iter_free(it);

    /* the internal iterator failing: forward, and backward while reading a key's versions */
    it = db_iter_new(vec_iter_new(e, 4, 2, KURA_E_IO), 100, NULL, NULL);
    kv_iter_seek_first(it);
    kv_iter_next(it);
    assert_entry(it, &e[1], true);
    kv_iter_next(it);
    assert_false(kv_iter_valid(it));
    assert_int_equal(kv_iter_status(it), KURA_E_IO);
    kv_iter_free(it);
    it = db_iter_new(vec_iter_new(e, 4, 2, KURA_E_IO), 100, NULL, NULL);
    kv_iter_seek_last(it);
    assert_false(kv_iter_valid(it));
    assert_int_equal(kv_iter_status(it), KURA_E_IO);
    kv_iter_free(it);
    assert_int_equal(live_vec_iters, 0);
}

/* Prints forward and backward scan rates of a db_iter over a merge of 4 memtables. */
static void test_scan_throughput(void **state)
{
    (void)state;
    enum { N = 200000, PARTS = 4 };
    memtable *m[PARTS];
    kv_iter *kids[PARTS];
    uint8_t val[100];
    memset(val, 'v', sizeof val);
    for (int p = 0; p < PARTS; p++) {
        m[p] = mt_new();
        assert_non_null(m[p]);
    }
    for (uint64_t i = 0; i < N; i++) {
        uint8_t k[16];
        enc_fixed64_be(k, i * 0x9e3779b97f4a7c15ull);
        enc_fixed64_be(k + 8, i);
        assert_kura_ok(mt_add(m[i % PARTS], i + 1, IKEY_TYPE_VALUE, k, 16, val, sizeof val));
    }
    for (int p = 0; p < PARTS; p++)
        kids[p] = mt_iter(m[p]);
    kv_iter *it = db_iter_new(merge_iter_new(kids, PARTS), IKEY_MAX_SEQ, NULL, NULL);
    assert_non_null(it);
    uint64_t t0 = know_ns();
    size_t fwd = 0, bwd = 0;
    for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it))
        fwd++;
    uint64_t t1 = know_ns();
    for (kv_iter_seek_last(it); kv_iter_valid(it); kv_iter_prev(it))
        bwd++;
    uint64_t t2 = know_ns();
    assert_int_equal(fwd, N);
    assert_int_equal(bwd, N);
    printf("db_iter over %d memtables: forward scan %.0f keys/s, backward scan %.0f keys/s\n",
           PARTS, N * 1e9 / (double)(t1 - t0 + 1), N * 1e9 / (double)(t2 - t1 + 1));
    kv_iter_free(it);
    for (int p = 0; p < PARTS; p++)
        mt_unref(m[p]);
}

/* A failed test leaves its iterators behind: count from zero in each test. */
static int reset_live(void **state)
{
    (void)state;
    live_vec_iters = 0;
    return 0;
}

#define T(fn) cmocka_unit_test_setup(fn, reset_live)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_merge_random),  T(test_merge_errors),     T(test_concat_random),
        T(test_concat_lazy),   T(test_concat_errors),    T(test_db_iter_random),
        T(test_db_iter_versions), T(test_db_iter_errors), T(test_scan_throughput),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

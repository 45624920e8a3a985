/*
 * sst_table_test.c - whole tables: build, reopen, point lookups and iterators.
 *
 * The model: user key number u (u = 0, 2, 4, ... so odd numbers are missing keys between
 * them) has 1 or 3 versions with sequence numbers base(u)+j, some of them deletions; every
 * key and value is a function of (u, j), so expectations are computed, not stored. Each of
 * none/LZ4/zlib gets a 100k-entry round trip with random gets at random snapshots (newest
 * version <= snapshot visible, deletions reported as such) and iterator walks forward,
 * backward, by seek and in random mixed directions. Also: tiny blocks (prev across many
 * blocks), incompressible values stored raw, the prefix filter, empty tables, unloading the
 * index and filters (reloaded by gets, iterators and filter probes, from several threads at
 * once, and a damaged index reported on reload), options and argument errors.
 */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sstable/table_internal.h" /* white-box: index separators */
#include "sstable/table_reader.h"
#include "util/ikey.h"

typedef struct model {
    unsigned nuser;  /* user keys 0, 2, ..., 2*(nuser-1) */
    unsigned *ent_u; /* entry ordinal -> user key number */
    unsigned *ent_j; /* entry ordinal -> version */
    size_t n;        /* entries */
    bool random_values;
} model;

static unsigned nver(unsigned u)
{
    return u % 7 == 0 ? 3 : 1;
}
static uint64_t seq_of(unsigned u, unsigned j)
{
    return (uint64_t)u * 4 + 10 + j;
}
static unsigned type_of(unsigned u, unsigned j)
{
    return (u * 31 + j * 17) % 6 == 0 ? IKEY_TYPE_DELETE : IKEY_TYPE_VALUE;
}
static size_t ukey(char *out, unsigned u)
{
    return (size_t)sprintf(out, "acct#%07u#item", u);
}
static size_t ikey_of(uint8_t *out, unsigned u, uint64_t seq, unsigned type)
{
    char k[40];
    size_t n = ukey(k, u);
    ikey_encode(out, k, n, seq, type);
    return n + IKEY_TRAILER;
}
/* ukey(u) + "~": after every version of u, before u+1 and before a separator shortened
 * between them ("acct#0000013" between ...12#item and ...14#item), so it probes the gap
 * between a block's last key and its index key. */
static size_t gap_ikey_of(uint8_t *out, unsigned u, uint64_t seq)
{
    char k[40];
    size_t n = ukey(k, u);
    k[n++] = '~';
    ikey_encode(out, k, n, seq, IKEY_TYPE_SEEK);
    return n + IKEY_TRAILER;
}
static size_t val_of(const model *m, uint8_t *out, unsigned u, unsigned j)
{
    if (type_of(u, j) == IKEY_TYPE_DELETE)
        return 0;
    uint64_t h = (uint64_t)u * 1000003u + j;
    size_t len = m->random_values ? 150 + (size_t)(h % 250) : 8 + (size_t)(h % 90);
    uint64_t rs = h;
    for (size_t i = 0; i < len; i++)
        out[i] = m->random_values ? (uint8_t)test_rand(&rs) : (uint8_t)("status=ok;"[(i + u) % 10]);
    return len;
}

static void model_init(model *m, unsigned nuser, bool random_values)
{
    m->nuser = nuser;
    m->random_values = random_values;
    m->n = 0;
    m->ent_u = malloc((size_t)nuser * 3 * sizeof *m->ent_u);
    m->ent_j = malloc((size_t)nuser * 3 * sizeof *m->ent_j);
    for (unsigned i = 0; i < nuser; i++) {
        unsigned u = i * 2;
        for (unsigned j = nver(u); j-- > 0;) { /* newest version first */
            m->ent_u[m->n] = u;
            m->ent_j[m->n] = j;
            m->n++;
        }
    }
}

static void model_free(model *m)
{
    free(m->ent_u);
    free(m->ent_j);
}

static size_t prefix_len(const uint8_t *k, size_t len)
{
    (void)k;
    return len < 13 ? 0 : 13; /* "acct#NNNNNNN#" */
}

static char *build(const char *dir, const char *name, const model *m, const sst_options *o,
                   sst_meta *meta)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    sst_builder *b;
    assert_kura_ok(sst_builder_new(NULL, path, o, &b));
    uint8_t k[64], v[512];
    for (size_t i = 0; i < m->n; i++) {
        unsigned u = m->ent_u[i], j = m->ent_j[i];
        size_t kl = ikey_of(k, u, seq_of(u, j), type_of(u, j)), vl = val_of(m, v, u, j);
        assert_kura_ok(sst_builder_add(b, k, kl, v, vl));
    }
    assert_int_equal(sst_builder_entries(b), m->n);
    assert_kura_ok(sst_builder_finish(b, meta));
    assert_int_equal(meta->entries, m->n);
    return path;
}

/* The iterator is on entry ordinal i (or invalid when i == m->n). */
static void check_at(const model *m, kv_iter *it, size_t i)
{
    if (i >= m->n) {
        if (kv_iter_valid(it))
            fail_msg("iterator valid, expected the end (%zu entries)", m->n);
        assert_kura_ok(kv_iter_status(it));
        return;
    }
    if (!kv_iter_valid(it))
        fail_msg("iterator invalid at ordinal %zu: %s", i, kura_status_str(kv_iter_status(it)));
    unsigned u = m->ent_u[i], j = m->ent_j[i];
    uint8_t k[64], v[512];
    size_t kl = ikey_of(k, u, seq_of(u, j), type_of(u, j)), vl = val_of(m, v, u, j), gkl, gvl;
    const uint8_t *gk = kv_iter_key(it, &gkl), *gv = kv_iter_value(it, &gvl);
    if (gkl != kl || memcmp(gk, k, kl) != 0)
        fail_msg("ordinal %zu: key mismatch (got %.*s)", i, (int)gkl, (const char *)gk);
    if (gvl != vl || (vl && memcmp(gv, v, vl) != 0))
        fail_msg("ordinal %zu: value mismatch (len %zu, want %zu)", i, gvl, vl);
}

/* The ordinal of the first entry >= target (ikey order), by binary search over the model. */
static size_t model_lower_bound(const model *m, const uint8_t *t, size_t tl)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint8_t k[64];
        unsigned u = m->ent_u[mid], j = m->ent_j[mid];
        size_t kl = ikey_of(k, u, seq_of(u, j), type_of(u, j));
        if (ikey_cmp(k, kl, t, tl) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A random lookup target: an existing or missing user key at a snapshot around its versions,
 * or (*gap_out) a key in the gap just after user key u. */
static size_t random_target(const model *m, uint64_t *rs, uint8_t *k, unsigned *u_out,
                            uint64_t *snap_out, bool *gap_out)
{
    unsigned u = (unsigned)(test_rand(rs) % (2 * m->nuser + 4));
    uint64_t snap;
    switch (test_rand(rs) % 4) {
    case 0:
        snap = IKEY_MAX_SEQ;
        break;
    case 1:
        snap = seq_of(u, 0) - 1; /* before any version */
        break;
    default:
        snap = seq_of(u, (unsigned)(test_rand(rs) % 3));
    }
    *u_out = u;
    *snap_out = snap;
    *gap_out = test_rand(rs) % 8 == 0;
    return *gap_out ? gap_ikey_of(k, u, snap) : ikey_of(k, u, snap, IKEY_TYPE_SEEK);
}

static void check_gets(sst_reader *r, const model *m, uint64_t *rs, int rounds, bool fill)
{
    kbuf val = KBUF_INIT;
    for (int i = 0; i < rounds; i++) {
        uint8_t k[64], want[512];
        unsigned u;
        uint64_t snap;
        bool gap;
        size_t kl = random_target(m, rs, k, &u, &snap, &gap);
        bool present = !gap && u % 2 == 0 && u / 2 < m->nuser;
        int want_j = -1; /* newest version with seq <= snap */
        for (unsigned j = 0; present && j < nver(u); j++)
            if (seq_of(u, j) <= snap)
                want_j = (int)j;
        bool found = false;
        unsigned type = 99;
        kbuf_clear(&val);
        assert_kura_ok(sst_reader_get(r, k, kl, fill, &val, &type, &found));
        if (found != (want_j >= 0))
            fail_msg("key %u at snapshot %llu: found=%d, expected %d", u,
                     (unsigned long long)snap, found, want_j >= 0);
        if (!found)
            continue;
        assert_int_equal(type, type_of(u, (unsigned)want_j));
        if (type == IKEY_TYPE_VALUE) {
            size_t wl = val_of(m, want, u, (unsigned)want_j);
            assert_int_equal(val.len, wl);
            assert_memory_equal(val.data, want, wl);
        } else {
            assert_int_equal(val.len, 0);
        }
    }
    kbuf_free(&val);
}

static void check_iterators(sst_reader *r, const model *m, uint64_t *rs, int seeks, int walk)
{
    kv_iter *it = sst_reader_iter(r, true);
    assert_non_null(it);
    size_t i = 0;
    for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it))
        check_at(m, it, i++);
    assert_int_equal(i, m->n);
    assert_kura_ok(kv_iter_status(it));
    for (kv_iter_seek_last(it); kv_iter_valid(it); kv_iter_prev(it))
        check_at(m, it, --i);
    assert_int_equal(i, 0);
    for (int s = 0; s < seeks; s++) {
        uint8_t k[64];
        unsigned u;
        uint64_t snap;
        bool gap;
        size_t kl = random_target(m, rs, k, &u, &snap, &gap);
        kv_iter_seek(it, k, kl);
        check_at(m, it, model_lower_bound(m, k, kl));
    }
    /* random walk mixing directions; pos == m->n means invalid */
    size_t pos = m->n;
    for (int s = 0; s < walk; s++) {
        uint64_t op = test_rand(rs) % 10;
        if (pos == m->n || op == 0) {
            uint8_t k[64];
            unsigned u;
            uint64_t snap;
            bool gap;
            size_t kl = random_target(m, rs, k, &u, &snap, &gap);
            kv_iter_seek(it, k, kl);
            pos = model_lower_bound(m, k, kl);
        } else if (op < 6) {
            kv_iter_next(it);
            pos = pos + 1;
        } else {
            kv_iter_prev(it);
            pos = pos == 0 ? m->n : pos - 1;
        }
        check_at(m, it, pos);
    }
    kv_iter_free(it);
}

/* Index keys are shortened where the user keys allow (all but the last, which is the
 * table's largest key), and every one lies between its block and the next. */
static void check_separators(const sst_reader *r)
{
    size_t shortened = 0;
    for (size_t i = 0; i < r->nblocks; i++) {
        const sst_index_entry *e = &r->index[i];
        if (i > 0)
            assert_true(ikey_cmp(r->index[i - 1].key, r->index[i - 1].klen, e->key, e->klen) < 0);
        shortened += e->klen < r->meta.largest.len;
    }
    if (r->nblocks > 1 && shortened < (r->nblocks - 1) / 2)
        fail_msg("only %zu of %zu index keys shortened", shortened, r->nblocks);
    if (r->nblocks)
        assert_memory_equal(r->index[r->nblocks - 1].key, r->meta.largest.data,
                            r->meta.largest.len);
}

static void roundtrip(kura_compression c, size_t block_size, int restart, unsigned nuser,
                      int gets)
{
    char *dir = test_mkdtemp("sst_table");
    uint64_t rs = test_seed();
    model m;
    model_init(&m, nuser, false);
    sst_options o;
    sst_options_init(&o);
    o.compression = c;
    o.block_size = block_size;
    o.restart_interval = restart;
    o.prefix_len = prefix_len;
    sst_meta meta;
    char *path = build(dir, "t.sst", &m, &o, &meta);
    block_cache *cache = block_cache_new(8 << 20);
    sst_reader *r;
    assert_kura_ok(sst_reader_open(NULL, path, meta.file_size, cache, &r));
    const sst_meta *rm = sst_reader_meta(r);
    assert_int_equal(rm->entries, m.n);
    assert_int_equal(rm->file_size, meta.file_size);
    assert_int_equal(rm->min_seq, meta.min_seq);
    assert_int_equal(rm->max_seq, meta.max_seq);
    assert_int_equal(rm->min_seq, seq_of(0, 0));
    assert_int_equal(rm->max_seq, seq_of((nuser - 1) * 2, nver((nuser - 1) * 2) - 1));
    assert_int_equal(rm->smallest.len, meta.smallest.len);
    assert_memory_equal(rm->smallest.data, meta.smallest.data, meta.smallest.len);
    assert_memory_equal(rm->largest.data, meta.largest.data, meta.largest.len);
    const sst_props *p = sst_reader_props(r);
    assert_int_equal(p->compression, c);
    if (c != KURA_COMPRESS_NONE && block_size >= 1024) /* text-like values compress */
        assert_int_equal(p->compressed_blocks, p->data_blocks);
    if (c == KURA_COMPRESS_NONE)
        assert_int_equal(p->compressed_blocks, 0);
    fprintf(stderr, "compression %d block %zu: %zu entries, %llu blocks, %llu bytes\n", (int)c,
            block_size, m.n, (unsigned long long)p->data_blocks,
            (unsigned long long)meta.file_size);
    check_separators(r);
    check_gets(r, &m, &rs, gets, true);
    check_gets(r, &m, &rs, gets / 4, false);
    check_iterators(r, &m, &rs, gets / 10, gets / 5);
    sst_reader_close(r);
    block_cache_free(cache);
    /* and without a cache */
    assert_kura_ok(sst_reader_open(NULL, path, meta.file_size, NULL, &r));
    check_gets(r, &m, &rs, gets / 4, true);
    check_iterators(r, &m, &rs, 100, 1000);
    sst_reader_close(r);
    sst_meta_clear(&meta);
    model_free(&m);
    free(path);
    test_rmrf(dir);
}

/* ~100k entries (85715 user keys, one in seven with three versions) per compression. */
static void test_roundtrip_none(void **state)
{
    (void)state;
    roundtrip(KURA_COMPRESS_NONE, 4096, 16, 85715, 60000);
}
static void test_roundtrip_lz4(void **state)
{
    (void)state;
    roundtrip(KURA_COMPRESS_LZ4, 4096, 16, 85715, 60000);
}
static void test_roundtrip_zlib(void **state)
{
    (void)state;
    roundtrip(KURA_COMPRESS_ZLIB, 4096, 16, 85715, 60000);
}
/* Blocks of a few entries: seeks, prev and direction changes cross block edges constantly. */
static void test_tiny_blocks(void **state)
{
    (void)state;
    roundtrip(KURA_COMPRESS_LZ4, 100, 2, 3000, 20000);
    roundtrip(KURA_COMPRESS_NONE, 1, 1, 500, 5000); /* one entry per block */
}

static void test_incompressible_raw(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("sst_raw");
    model m;
    model_init(&m, 5000, true);
    kura_compression cs[] = {KURA_COMPRESS_LZ4, KURA_COMPRESS_ZLIB};
    for (int i = 0; i < 2; i++) {
        sst_options o;
        sst_options_init(&o);
        o.compression = cs[i];
        sst_meta meta;
        char *path = build(dir, i ? "z.sst" : "l.sst", &m, &o, &meta);
        sst_reader *r;
        assert_kura_ok(sst_reader_open(NULL, path, meta.file_size, NULL, &r));
        const sst_props *p = sst_reader_props(r);
        assert_true(p->data_blocks > 10);
        assert_int_equal(p->compressed_blocks, 0); /* random values: stored raw */
        uint64_t rs = 9;
        check_gets(r, &m, &rs, 3000, true);
        check_iterators(r, &m, &rs, 300, 3000);
        sst_reader_close(r);
        sst_meta_clear(&meta);
        free(path);
    }
    model_free(&m);
    test_rmrf(dir);
}

static void test_filters(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("sst_filters");
    model m;
    model_init(&m, 20000, false);
    sst_options o;
    sst_options_init(&o);
    o.prefix_len = prefix_len;
    sst_meta meta;
    char *path = build(dir, "f.sst", &m, &o, &meta);
    sst_reader *r;
    assert_kura_ok(sst_reader_open(NULL, path, meta.file_size, NULL, &r));
    unsigned fp_keys = 0, fp_prefixes = 0;
    for (unsigned u = 0; u < 40000; u++) {
        char k[40];
        size_t n = ukey(k, u);
        bool present = u % 2 == 0;
        bool key_hit = sst_reader_may_contain_key(r, (const uint8_t *)k, n);
        bool pre_hit = sst_reader_may_contain_prefix(r, (const uint8_t *)k, 13);
        if (present && (!key_hit || !pre_hit))
            fail_msg("filter false negative for %s", k);
        fp_keys += !present && key_hit;
        fp_prefixes += !present && pre_hit;
    }
    fprintf(stderr, "filters: %u/20000 key and %u/20000 prefix false positives\n", fp_keys,
            fp_prefixes);
    assert_true(fp_keys < 400 && fp_prefixes < 400);
    sst_reader_close(r);
    sst_meta_clear(&meta);
    free(path);
    /* without filters everything "may" be there */
    o.bloom_bits_per_key = 0;
    path = build(dir, "nf.sst", &m, &o, &meta);
    assert_kura_ok(sst_reader_open(NULL, path, meta.file_size, NULL, &r));
    assert_true(sst_reader_may_contain_key(r, (const uint8_t *)"nope", 4));
    assert_true(sst_reader_may_contain_prefix(r, (const uint8_t *)"nope", 4));
    uint64_t rs = 5;
    check_gets(r, &m, &rs, 2000, true);
    sst_reader_close(r);
    sst_meta_clear(&meta);
    free(path);
    model_free(&m);
    test_rmrf(dir);
}

/* Several threads reloading one unloaded reader at once, each checking its gets. */
typedef struct reload_arg {
    sst_reader *r;
    const model *m;
    uint64_t seed;
} reload_arg;

static void *reload_thread(void *p)
{
    reload_arg *a = p;
    check_gets(a->r, a->m, &a->seed, 3000, true);
    return NULL;
}

static void test_unload(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("sst_unload");
    uint64_t rs = test_seed();
    model m;
    model_init(&m, 20000, false);
    sst_options o;
    sst_options_init(&o);
    o.prefix_len = prefix_len;
    sst_meta meta;
    char *path = build(dir, "u.sst", &m, &o, &meta);
    block_cache *cache = block_cache_new(8 << 20);
    sst_reader *r;
    assert_kura_ok(sst_reader_open(NULL, path, meta.file_size, cache, &r));
    size_t loaded = sst_reader_memory(r);
    size_t nblocks = r->nblocks;
    /* index entries, their keys, both filters: more than the raw index block */
    assert_true(loaded > r->footer.index.size + r->footer.key_filter.size);
    fprintf(stderr, "unload: %zu blocks, %zu bytes of index and filters (file %llu)\n",
            nblocks, loaded, (unsigned long long)meta.file_size);

    assert_true(sst_reader_unload(r));
    assert_int_equal(sst_reader_memory(r), 0);
    assert_null(r->index);
    assert_false(sst_reader_unload(r)); /* twice is harmless */
    check_gets(r, &m, &rs, 2000, true);
    assert_int_equal(sst_reader_memory(r), loaded);
    assert_int_equal(r->nblocks, nblocks);
    check_separators(r);

    sst_reader_unload(r);
    check_iterators(r, &m, &rs, 200, 2000);
    assert_int_equal(sst_reader_memory(r), loaded);

    /* the filters come back too: no false negatives, few false positives */
    sst_reader_unload(r);
    unsigned fp = 0;
    for (unsigned u = 0; u < 40000; u++) {
        char k[40];
        size_t n = ukey(k, u);
        bool hit = sst_reader_may_contain_key(r, (const uint8_t *)k, n);
        if (u % 2 == 0 && (!hit || !sst_reader_may_contain_prefix(r, (const uint8_t *)k, 13)))
            fail_msg("filter false negative for %s after reload", k);
        fp += u % 2 == 1 && hit;
    }
    assert_true(fp < 400);
    assert_int_equal(sst_reader_memory(r), loaded);

    /* four threads race to reload */
    sst_reader_unload(r);
    pthread_t th[4];
    reload_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (reload_arg){r, &m, rs + (uint64_t)i};
        assert_int_equal(pthread_create(&th[i], NULL, reload_thread, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(sst_reader_memory(r), loaded);

    /* damage in the index while unloaded: every use reports it, with path and offset, and
     * keeps reporting it; once repaired the next use loads again */
    uint64_t off = r->footer.index.off + r->footer.index.size / 2;
    uint8_t orig;
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
    assert_int_equal(fread(&orig, 1, 1, f), 1);
    fclose(f);
    sst_reader_unload(r);
    test_poke_byte(path, off, (uint8_t)(orig ^ 0x5a));
    uint8_t k[64];
    size_t kl = ikey_of(k, 2, IKEY_MAX_SEQ, IKEY_TYPE_SEEK);
    bool found = false;
    unsigned type;
    for (int round = 0; round < 2; round++) {
        assert_kura_status(sst_reader_get(r, k, kl, true, NULL, &type, &found), KURA_E_CORRUPTION);
        assert_non_null(strstr(kura_last_error(), path));
        assert_non_null(strstr(kura_last_error(), "offset"));
        assert_int_equal(sst_reader_memory(r), 0);
    }
    char uk[40];
    assert_true(sst_reader_may_contain_key(r, (const uint8_t *)uk, ukey(uk, 1))); /* "maybe" */
    kv_iter *it = sst_reader_iter(r, true);
    assert_non_null(it);
    kv_iter_seek_first(it);
    assert_false(kv_iter_valid(it));
    assert_kura_status(kv_iter_status(it), KURA_E_CORRUPTION);
    kv_iter_free(it);
    test_poke_byte(path, off, orig);
    assert_kura_ok(sst_reader_get(r, k, kl, true, NULL, &type, &found));
    assert_true(found);
    assert_int_equal(sst_reader_memory(r), loaded);

    sst_reader_close(r);
    block_cache_free(cache);
    sst_meta_clear(&meta);
    free(path);
    model_free(&m);
    test_rmrf(dir);
}

static void test_empty_table(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("sst_empty");
    model m;
    model_init(&m, 0, false);
    sst_meta meta;
    char *path = build(dir, "e.sst", &m, NULL, &meta);
    assert_int_equal(meta.entries, 0);
    assert_int_equal(meta.smallest.len, 0);
    sst_reader *r;
    assert_kura_ok(sst_reader_open(NULL, path, meta.file_size, NULL, &r));
    assert_int_equal(sst_reader_meta(r)->entries, 0);
    uint8_t k[64];
    size_t kl = ikey_of(k, 0, 5, IKEY_TYPE_SEEK);
    bool found = true;
    unsigned type;
    assert_kura_ok(sst_reader_get(r, k, kl, true, NULL, &type, &found));
    assert_false(found);
    kv_iter *it = sst_reader_iter(r, true);
    kv_iter_seek_first(it);
    assert_false(kv_iter_valid(it));
    kv_iter_seek_last(it);
    assert_false(kv_iter_valid(it));
    kv_iter_seek(it, k, kl);
    assert_false(kv_iter_valid(it));
    assert_kura_ok(kv_iter_status(it));
    kv_iter_free(it);
    sst_reader_close(r);
    sst_meta_clear(&meta);
    free(path);
    model_free(&m);
    test_rmrf(dir);
}

static void test_errors(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("sst_errors");
    char path[512];
    snprintf(path, sizeof path, "%s/x.sst", dir);
    sst_options o;
    sst_options_init(&o);
    o.block_size = 0;
    sst_builder *b = NULL;
    assert_kura_status(sst_builder_new(NULL, path, &o, &b), KURA_E_INVALID);
    sst_options_init(&o);
    o.compression = (kura_compression)7;
    assert_kura_status(sst_builder_new(NULL, path, &o, &b), KURA_E_INVALID);
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.sst", dir);
    assert_kura_status(sst_builder_new(NULL, bad, NULL, &b), KURA_E_IO);
    sst_reader *r = NULL;
    assert_kura_status(sst_reader_open(NULL, bad, 100, NULL, &r), KURA_E_NOT_FOUND);

    assert_kura_ok(sst_builder_new(NULL, path, NULL, &b));
    uint8_t k[64];
    assert_kura_status(sst_builder_add(b, (const uint8_t *)"short", 5, NULL, 0), KURA_E_INVALID);
    size_t kl = ikey_of(k, 10, 5, IKEY_TYPE_VALUE);
    assert_kura_ok(sst_builder_add(b, k, kl, (const uint8_t *)"v", 1));
    assert_int_equal(sst_builder_entries(b), 1);
    assert_true(sst_builder_file_size(b) > 0);
#ifdef NDEBUG /* out-of-order adds assert in debug builds */
    assert_kura_status(sst_builder_add(b, k, kl, (const uint8_t *)"v", 1), KURA_E_INVALID);
    kl = ikey_of(k, 8, 5, IKEY_TYPE_VALUE);
    assert_kura_status(sst_builder_add(b, k, kl, (const uint8_t *)"v", 1), KURA_E_INVALID);
    assert_int_equal(sst_builder_entries(b), 1); /* unchanged, still usable */
#endif
    kl = ikey_of(k, 10, 4, IKEY_TYPE_VALUE); /* older version of the same key: in order */
    assert_kura_ok(sst_builder_add(b, k, kl, (const uint8_t *)"w", 1));
    sst_builder_abandon(b);
    sst_builder_abandon(NULL);
    sst_reader_close(NULL);
    sst_meta_clear(NULL);
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_none),     cmocka_unit_test(test_roundtrip_lz4),
        cmocka_unit_test(test_roundtrip_zlib),     cmocka_unit_test(test_tiny_blocks),
        cmocka_unit_test(test_incompressible_raw), cmocka_unit_test(test_filters),
        cmocka_unit_test(test_unload),             cmocka_unit_test(test_empty_table),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

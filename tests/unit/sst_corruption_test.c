/*
 * sst_corruption_test.c - damaged tables are reported, never believed.
 *
 * A small table with every region (many data blocks, key and prefix filters, properties,
 * index, footer) is damaged and then read every way (open, full scans both ways, every get,
 * seeks). Every read must either return exactly the original data or fail with
 * KURA_E_CORRUPTION whose message names the file and an offset; and the damage must be
 * noticed by at least one read. Damage: a flipped byte in each region, then every byte of the
 * file; every byte of the filters and index flipped under an open reader that unloaded them
 * (read again at its next use); truncation at many points (with the true and the truncated
 * size); garbage files; and footers with a valid crc whose handles point at the wrong blocks.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sstable/format.h"
#include "sstable/table_reader.h"
#include "util/ikey.h"

enum { BIG = 300, SMALL = 100 };
static unsigned NKEYS = BIG; /* entries of the table under test */

static size_t key_of(uint8_t *out, unsigned i)
{
    char k[32];
    int n = snprintf(k, sizeof k, "pk%03u#sk%05u", i / 10, i);
    ikey_encode(out, k, (size_t)n, 100 + i, i % 9 == 0 ? IKEY_TYPE_DELETE : IKEY_TYPE_VALUE);
    return (size_t)n + IKEY_TRAILER;
}
static size_t val_of(uint8_t *out, unsigned i)
{
    if (i % 9 == 0)
        return 0;
    return (size_t)sprintf((char *)out, "value of %u: %.*s", i, (int)(i % 40),
                           "lorem ipsum dolor sit amet consectetur ad");
}
static size_t prefix_len(const uint8_t *k, size_t len)
{
    (void)k;
    return len < 5 ? 0 : 5; /* "pkNNN" */
}

typedef struct table {
    char *dir, *path;
    uint8_t *bytes; /* the original file */
    size_t size;
    sst_footer footer;
} table;

/* Replaces the file with a new one (unlink first: truncating a file in place makes ext4
 * flush it on close, which would make this test wait on the disk thousands of times). */
static void write_file(const char *path, const uint8_t *p, size_t n)
{
    unlink(path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void make_table(table *t, kura_compression c)
{
    t->dir = test_mkdtemp("sst_corrupt");
    size_t n = strlen(t->dir) + 16;
    t->path = malloc(n);
    snprintf(t->path, n, "%s/t.sst", t->dir);
    sst_options o;
    sst_options_init(&o);
    o.block_size = 256;
    o.compression = c;
    o.prefix_len = prefix_len;
    sst_builder *b;
    assert_kura_ok(sst_builder_new(NULL, t->path, &o, &b));
    for (unsigned i = 0; i < NKEYS; i++) {
        uint8_t k[64], v[128];
        size_t kl = key_of(k, i), vl = val_of(v, i);
        assert_kura_ok(sst_builder_add(b, k, kl, v, vl));
    }
    sst_meta meta;
    assert_kura_ok(sst_builder_finish(b, &meta));
    t->size = meta.file_size;
    sst_meta_clear(&meta);
    FILE *f = fopen(t->path, "rb");
    t->bytes = malloc(t->size);
    assert_int_equal(fread(t->bytes, 1, t->size, f), t->size);
    fclose(f);
    assert_kura_ok(sst_footer_decode(t->bytes + t->size - SST_FOOTER_SIZE, t->path,
                                     t->size - SST_FOOTER_SIZE, &t->footer));
    assert_true(t->footer.key_filter.size > 0 && t->footer.prefix_filter.size > 0);
}

static void free_table(table *t)
{
    free(t->bytes);
    free(t->path);
    test_rmrf(t->dir);
}

static void expect_corruption(kura_status s, const char *path, const char *what)
{
    if (s != KURA_E_CORRUPTION)
        fail_msg("%s: got %s, expected corruption (%s)", what, kura_status_str(s),
                 kura_last_error());
    const char *msg = kura_last_error();
    if (!strstr(msg, path) || !strstr(msg, "offset"))
        fail_msg("%s: message without path and offset: %s", what, msg);
}

/* The iterator is valid and on entry i. */
static void expect_entry(kv_iter *it, unsigned i)
{
    uint8_t k[64], v[128];
    size_t kl = key_of(k, i), vl = val_of(v, i), gkl, gvl;
    const uint8_t *gk = kv_iter_key(it, &gkl), *gv = kv_iter_value(it, &gvl);
    if (gkl != kl || memcmp(gk, k, kl) || gvl != vl || (vl && memcmp(gv, v, vl)))
        fail_msg("wrong data returned at entry %u", i);
}

/* Scans forward and backward; returns the number of scans that failed with a corruption. */
static int scan_both_ways(sst_reader *r, const char *path)
{
    int failures = 0;
    kv_iter *it = sst_reader_iter(r, true);
    unsigned i = 0;
    for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it))
        expect_entry(it, i++);
    if (kv_iter_status(it) != KURA_OK) {
        expect_corruption(kv_iter_status(it), path, "forward scan");
        failures++;
        kv_iter_seek_first(it); /* errors are sticky */
        assert_false(kv_iter_valid(it));
    } else {
        assert_int_equal(i, NKEYS);
    }
    kv_iter_free(it);
    it = sst_reader_iter(r, false);
    i = NKEYS;
    for (kv_iter_seek_last(it); kv_iter_valid(it); kv_iter_prev(it))
        expect_entry(it, --i);
    if (kv_iter_status(it) != KURA_OK) {
        expect_corruption(kv_iter_status(it), path, "backward scan");
        failures++;
    } else {
        assert_int_equal(i, 0);
    }
    kv_iter_free(it);
    return failures;
}

/* Gets every key (and seeks to every fifth); returns the number of reads that failed. */
static int get_each(sst_reader *r, const char *path)
{
    int failures = 0;
    kbuf val = KBUF_INIT;
    for (unsigned i = 0; i < NKEYS; i++) {
        uint8_t k[64], v[128];
        size_t kl = key_of(k, i), vl = val_of(v, i);
        enc_fixed64(k + kl - IKEY_TRAILER, ikey_pack(IKEY_MAX_SEQ, IKEY_TYPE_SEEK));
        bool found = false;
        unsigned type = 99;
        kbuf_clear(&val);
        kura_status s = sst_reader_get(r, k, kl, true, &val, &type, &found);
        if (s != KURA_OK) {
            expect_corruption(s, path, "get");
            failures++;
            continue;
        }
        if (!found || type != (i % 9 == 0 ? IKEY_TYPE_DELETE : IKEY_TYPE_VALUE) ||
            (type == IKEY_TYPE_VALUE && (val.len != vl || memcmp(val.data, v, vl))))
            fail_msg("get %u returned wrong data", i);
        if (i % 5)
            continue;
        kv_iter *it = sst_reader_iter(r, false); /* seek to the key: lands on it */
        kv_iter_seek(it, k, kl);
        if (kv_iter_valid(it))
            expect_entry(it, i);
        else
            expect_corruption(kv_iter_status(it), path, "seek");
        kv_iter_free(it);
    }
    kbuf_free(&val);
    return failures;
}

/* Reads the whole table every way. Returns the number of reads that failed (each with a
 * proper corruption), or -1 if open failed (likewise). Any wrong data fails the test. */
static int read_all(const char *path, uint64_t size, block_cache *cache)
{
    sst_reader *r;
    kura_status s = sst_reader_open(NULL, path, size, cache, &r);
    if (s != KURA_OK) {
        expect_corruption(s, path, "open");
        return -1;
    }
    int failures = scan_both_ways(r, path) + get_each(r, path);
    sst_reader_close(r);
    return failures;
}

static void damage_and_check(table *t, size_t off, uint8_t mask, block_cache *cache,
                             const char *region)
{
    t->bytes[off] ^= mask;
    write_file(t->path, t->bytes, t->size);
    t->bytes[off] ^= mask;
    int r = read_all(t->path, t->size, cache);
    if (r == 0)
        fail_msg("flipping byte %zu (%s) went unnoticed", off, region);
}

static void check_region(table *t, const char *name, uint64_t start, uint64_t end,
                         block_cache *cache)
{
    uint64_t picks[] = {start, start + 1, (start + end) / 2, end - 2, end - 1};
    for (size_t i = 0; i < 5; i++)
        if (picks[i] >= start && picks[i] < end)
            damage_and_check(t, (size_t)picks[i], 0x20, cache, name);
}

static uint64_t block_end(sst_handle h)
{
    return h.off + h.size + SST_BLOCK_TRAILER;
}

static void test_flip_each_region(void **state)
{
    (void)state;
    kura_compression cs[] = {KURA_COMPRESS_NONE, KURA_COMPRESS_LZ4, KURA_COMPRESS_ZLIB};
    for (int c = 0; c < 3; c++) {
        table t;
        make_table(&t, cs[c]);
        block_cache *cache = block_cache_new(1 << 20);
        assert_int_equal(read_all(t.path, t.size, cache), 0); /* intact */
        const sst_footer *f = &t.footer;
        check_region(&t, "data blocks", 0, f->key_filter.off, cache);
        check_region(&t, "key filter", f->key_filter.off, block_end(f->key_filter), cache);
        check_region(&t, "prefix filter", f->prefix_filter.off, block_end(f->prefix_filter),
                     cache);
        check_region(&t, "properties", f->props.off, block_end(f->props), cache);
        check_region(&t, "index", f->index.off, block_end(f->index), cache);
        check_region(&t, "footer", t.size - SST_FOOTER_SIZE, t.size, cache);
        block_cache_free(cache);
        free_table(&t);
    }
}

static void test_flip_every_byte(void **state)
{
    (void)state;
    table t;
    NKEYS = SMALL;
    make_table(&t, KURA_COMPRESS_LZ4);
    fprintf(stderr, "flipping each of %zu bytes\n", t.size);
    for (size_t off = 0; off < t.size; off++)
        damage_and_check(&t, off, (uint8_t)(1u << (off % 8)), NULL, "any");
    free_table(&t);
    NKEYS = BIG;
}

/* An open reader whose index and filters were unloaded reads them again on its next use:
 * every byte of them flipped while unloaded is noticed then, by every read, and once the byte
 * is back the same reader reads everything right. */
static void test_damage_while_unloaded(void **state)
{
    (void)state;
    table t;
    NKEYS = SMALL;
    make_table(&t, KURA_COMPRESS_LZ4);
    sst_reader *r;
    assert_kura_ok(sst_reader_open(NULL, t.path, t.size, NULL, &r));
    const sst_footer *f = &t.footer;
    sst_handle regions[] = {f->key_filter, f->prefix_filter, f->index};
    size_t flipped = 0;
    for (size_t g = 0; g < 3; g++) {
        for (size_t off = regions[g].off; off < block_end(regions[g]); off++, flipped++) {
            sst_reader_unload(r);
            test_poke_byte(t.path, off, (uint8_t)(t.bytes[off] ^ (1u << (off % 8))));
            int failures = scan_both_ways(r, t.path) + get_each(r, t.path);
            if (failures != 2 + (int)NKEYS) /* both scans and every get */
                fail_msg("byte %zu flipped while unloaded: %d of the reads failed", off,
                         failures);
            assert_int_equal(sst_reader_memory(r), 0);
            test_poke_byte(t.path, off, t.bytes[off]);
        }
    }
    fprintf(stderr, "flipped %zu bytes of filters and index under an unloaded reader\n",
            flipped);
    assert_int_equal(scan_both_ways(r, t.path) + get_each(r, t.path), 0);
    assert_true(sst_reader_memory(r) > 0);
    sst_reader_close(r);
    free_table(&t);
    NKEYS = BIG;
}

static void test_truncation(void **state)
{
    (void)state;
    table t;
    make_table(&t, KURA_COMPRESS_LZ4);
    size_t cuts[] = {0, 1, 7, 79, 80, 81, t.size / 3, t.size / 2, t.size - 81, t.size - 80,
                     t.size - 79, t.size - 8, t.size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        write_file(t.path, t.bytes, cuts[i]);
        /* the size the manifest recorded: the reads come up short */
        assert_int_equal(read_all(t.path, t.size, NULL), -1);
        /* the size the file has now: no footer there */
        assert_int_equal(read_all(t.path, cuts[i], NULL), -1);
    }
    free_table(&t);
}

static void test_garbage_files(void **state)
{
    (void)state;
    table t;
    make_table(&t, KURA_COMPRESS_NONE);
    uint64_t rs = test_seed();
    for (int round = 0; round < 300; round++) {
        size_t n = (size_t)(test_rand(&rs) % 2000);
        uint8_t *g = malloc(n + SST_FOOTER_SIZE);
        for (size_t i = 0; i < n; i++)
            g[i] = (uint8_t)test_rand(&rs);
        if (round % 2 && n >= SST_FOOTER_SIZE) /* a right magic number, the rest garbage */
            enc_fixed64(g + n - 8, SST_MAGIC);
        write_file(t.path, g, n);
        assert_int_equal(read_all(t.path, n, NULL), -1);
        free(g);
    }
    free_table(&t);
}

/* Footers with a valid crc but handles that lie. */
static void test_lying_footer(void **state)
{
    (void)state;
    table t;
    make_table(&t, KURA_COMPRESS_NONE);
    sst_reader *r;
    sst_handle first_data = {0, 100}; /* not a block boundary: the crc covers another span */
    sst_handle beyond = {t.size, 10};
    sst_handle huge = {0, UINT64_MAX - 3};
    struct {
        int which; /* 0 key filter, 1 props, 2 index */
        sst_handle h;
    } lies[] = {{2, first_data}, {2, beyond},        {2, huge},           {1, t.footer.index},
                {1, beyond},     {0, t.footer.props}, {2, t.footer.props}, {1, t.footer.key_filter},
                {0, huge}};
    uint8_t *copy = malloc(t.size);
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        sst_footer f = t.footer;
        sst_handle *h = lies[i].which == 0 ? &f.key_filter : lies[i].which == 1 ? &f.props
                                                                                : &f.index;
        *h = lies[i].h;
        memcpy(copy, t.bytes, t.size);
        sst_footer_encode(&f, copy + t.size - SST_FOOTER_SIZE);
        write_file(t.path, copy, t.size);
        assert_int_equal(read_all(t.path, t.size, NULL), -1);
    }
    /* a newer format version with a valid crc is "not supported", not corruption */
    sst_footer f = t.footer;
    f.version = SST_FORMAT_VERSION + 1;
    memcpy(copy, t.bytes, t.size);
    sst_footer_encode(&f, copy + t.size - SST_FOOTER_SIZE);
    write_file(t.path, copy, t.size);
    assert_kura_status(sst_reader_open(NULL, t.path, t.size, NULL, &r), KURA_E_NOT_SUPPORTED);
    free(copy);
    free_table(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flip_each_region), cmocka_unit_test(test_flip_every_byte),
        cmocka_unit_test(test_damage_while_unloaded),
        cmocka_unit_test(test_truncation),       cmocka_unit_test(test_garbage_files),
        cmocka_unit_test(test_lying_footer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

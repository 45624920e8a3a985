/*
 * wal_reader_test.c - how wal/reader.c ends a damaged log (docs/format/wal.md, "Reading"):
 * truncation at every byte offset (a clean end or a torn tail, never a wrong record, never
 * corruption), bit flips and zeroed sectors before the durable offset (corruption naming the
 * file and offset), damage in the unsynced tail (torn tail), zero-filled and garbage tails,
 * out-of-order fragments, sticky outcomes and read errors.
 *
 * The log is written with the real writer into a scratch directory, then loaded into memory;
 * the damaged variants are served by a tiny in-memory io_env (open_read, read_at, close), so
 * thousands of variants need no file copies.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/io.h"
#include "util/status.h"
#include "wal/format.h"
#include "wal/reader.h"
#include "wal/writer.h"

/* ---- an in-memory read-only env over one buffer -------------------------------------- */

typedef struct mem_env {
    io_env base;
    const uint8_t *data;
    size_t len;
    uint64_t fail_read_from; /* reads touching offsets >= this fail with KURA_E_IO */
} mem_env;

static kura_status mem_open_read(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    io_file *f = malloc(sizeof *f);
    f->env = env;
    f->kind = kind;
    *f_out = f;
    return KURA_OK;
}

static kura_status mem_close(io_file *f)
{
    free(f);
    return KURA_OK;
}

static kura_status mem_read_at(io_file *f, uint64_t off, void *buf, size_t n, size_t *nread_out)
{
    mem_env *m = (mem_env *)f->env;
    if (off + n > m->fail_read_from)
        return kura_err(KURA_E_IO, "read at %llu: injected error", (unsigned long long)off);
    size_t got = off >= m->len ? 0 : (m->len - off < n ? m->len - off : n);
    memcpy(buf, m->data + off, got);
    *nread_out = got;
    return KURA_OK;
}

static const io_ops mem_ops = {
    .open_read = mem_open_read, .close = mem_close, .read_at = mem_read_at};

/* ---- a log with known records and sync points ----------------------------------------- */

typedef struct test_log {
    uint8_t *data; /* the file */
    size_t len;
    size_t n;         /* records */
    size_t *lens;     /* their lengths */
    uint64_t *ends;   /* offset just past each record */
    uint8_t **recs;   /* their contents */
    uint64_t synced;  /* the last durable offset written into a fragment's durable_off */
    uint64_t last_sync; /* the writer's final durable offset */
} test_log;

static const char *const LOG_PATH = "/mem/000007.log";

/* Writes records of lens[0..n) with the real writer; syncs after record i when sync_after[i].
 * The log is then loaded into memory. */
static void log_build(test_log *lg, const size_t *lens, const bool *sync_after, size_t n)
{
    char *dir = test_mkdtemp("wal_reader");
    char path[512];
    snprintf(path, sizeof path, "%s/000007.log", dir);
    memset(lg, 0, sizeof *lg);
    lg->n = n;
    lg->lens = malloc(n * sizeof *lg->lens);
    lg->ends = malloc(n * sizeof *lg->ends);
    lg->recs = malloc(n * sizeof *lg->recs);
    wal_writer *w = NULL;
    assert_kura_ok(wal_writer_open(io_env_posix(), path, IO_KIND_WAL, &w));
    uint64_t st = 0x1234 + n;
    for (size_t i = 0; i < n; i++) {
        lg->lens[i] = lens[i];
        lg->recs[i] = malloc(lens[i] + 1);
        for (size_t k = 0; k < lens[i]; k++)
            lg->recs[i][k] = (uint8_t)test_rand(&st);
        if (wal_writer_synced(w) > 0)
            lg->synced = wal_writer_synced(w);
        assert_kura_ok(wal_writer_add(w, lg->recs[i], lens[i]));
        lg->ends[i] = wal_writer_size(w);
        if (sync_after[i])
            assert_kura_ok(wal_writer_sync(w));
    }
    lg->last_sync = wal_writer_synced(w);
    assert_kura_ok(wal_writer_close(w));
    void *data = NULL;
    assert_kura_ok(io_read_file(io_env_posix(), path, IO_KIND_WAL, 64 << 20, &data, &lg->len));
    lg->data = data;
    test_rmrf(dir);
}

static void log_free(test_log *lg)
{
    for (size_t i = 0; i < lg->n; i++)
        free(lg->recs[i]);
    free(lg->recs);
    free(lg->lens);
    free(lg->ends);
    free(lg->data);
}

/* The outcome of reading a (damaged) image of a log. */
typedef struct read_result {
    size_t nrecs;        /* records returned before the end or error, all checked */
    kura_status end;     /* the status that stopped the reading */
    int64_t torn_at;
    uint64_t end_off;
    char msg[512];
} read_result;

/* Reads img[0..len) through the in-memory env; every returned record must equal lg's record
 * of the same index. */
static read_result log_read(const test_log *lg, const uint8_t *img, size_t len)
{
    mem_env env = {.base = {&mem_ops}, .data = img, .len = len, .fail_read_from = UINT64_MAX};
    read_result res = {0};
    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(&env.base, LOG_PATH, IO_KIND_WAL, &r));
    const uint8_t *rec;
    size_t rlen;
    kura_status s;
    while ((s = wal_reader_next(r, &rec, &rlen)) == KURA_OK) {
        size_t i = res.nrecs++;
        if (i >= lg->n || rlen != lg->lens[i] || memcmp(rec, lg->recs[i], rlen) != 0)
            fail_msg("record %zu (len %zu) is not the record written (image of %zu bytes)", i,
                     rlen, len);
    }
    res.end = s;
    res.torn_at = wal_reader_torn_at(r);
    res.end_off = wal_reader_end_offset(r);
    if (s != KURA_E_NOT_FOUND)
        snprintf(res.msg, sizeof res.msg, "%s", kura_last_error());
    /* the outcome is sticky, message included */
    assert_kura_status(wal_reader_next(r, &rec, &rlen), s);
    if (s != KURA_E_NOT_FOUND && strcmp(res.msg, kura_last_error()) != 0)
        fail_msg("second message '%s' differs from '%s'", kura_last_error(), res.msg);
    wal_reader_close(r);
    return res;
}

/* Records that end at or before off. */
static size_t log_recs_before(const test_log *lg, uint64_t off)
{
    size_t k = 0;
    while (k < lg->n && lg->ends[k] <= off)
        k++;
    return k;
}

/* The offset of the fragment (or zero trailer) holding byte b of the original log. */
static uint64_t log_unit_of(const test_log *lg, uint64_t b)
{
    uint64_t pos = 0;
    for (;;) {
        uint64_t left = WAL_BLOCK_SIZE - pos % WAL_BLOCK_SIZE;
        if (left < WAL_HEADER_SIZE) {
            if (b < pos + left)
                return pos;
            pos += left;
            continue;
        }
        assert_true(pos + WAL_HEADER_SIZE <= lg->len);
        wal_frag_header h;
        wal_frag_decode(lg->data + pos, &h);
        if (b < pos + WAL_HEADER_SIZE + h.len)
            return pos;
        pos += WAL_HEADER_SIZE + h.len;
    }
}

static void expect_corruption(const read_result *res, uint64_t x, const char *what)
{
    char want[128];
    snprintf(want, sizeof want, "%s: corrupt WAL record at offset %llu:", LOG_PATH,
             (unsigned long long)x);
    if (res->end != KURA_E_CORRUPTION)
        fail_msg("%s: expected corruption at %llu, got %s (torn_at %lld, %zu records)", what,
                 (unsigned long long)x, kura_status_str(res->end), (long long)res->torn_at,
                 res->nrecs);
    if (strncmp(res->msg, want, strlen(want)) != 0)
        fail_msg("%s: message '%s' does not start with '%s'", what, res->msg, want);
    assert_int_equal(res->torn_at, -1);
}

static void expect_torn(const read_result *res, uint64_t x, const char *what)
{
    if (res->end != KURA_E_NOT_FOUND || res->torn_at != (int64_t)x)
        fail_msg("%s: expected a torn tail at %llu, got %s torn_at %lld (%s)", what,
                 (unsigned long long)x, kura_status_str(res->end), (long long)res->torn_at,
                 res->msg);
}

/* A log of mixed small and block-spanning records with syncs along the way, ending with an
 * unsynced tail. */
static void log_build_mixed(test_log *lg, size_t n, uint64_t seed)
{
    size_t *lens = malloc(n * sizeof *lens);
    bool *syncs = malloc(n * sizeof *syncs);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = test_rand(&seed);
        lens[i] = r % 10 == 0 ? 20000 + r % 30000 : r % 10 == 1 ? 0 : r % 900;
        syncs[i] = r % 4 == 0 && i + 3 < n;
    }
    log_build(lg, lens, syncs, n);
    free(lens);
    free(syncs);
}

/* ---- tests --------------------------------------------------------------------------- */

/* Truncation at every byte offset (all of the first 4 KiB and of the block boundary region,
 * every 7th byte elsewhere): a clean end exactly at record boundaries (a zero trailer
 * included), else a torn tail at or after the last whole record; never a wrong record,
 * never corruption, even though the log was synced along the way. */
static void test_truncate_everywhere(void **state)
{
    size_t lens[] = {5, 0, 300, 1000, 17, 2000, 12000, 0, 40, 15000, 4087, 1, 32757, 60, 0, 33};
    bool syncs[16] = {false, true, false, false, true, false, false, true,
                      false, false, true, false, true, false, false, false};
    test_log lg;
    log_build(&lg, lens, syncs, 16);
    assert_true(lg.len > 2 * WAL_BLOCK_SIZE);
    size_t checked = 0;
    for (size_t t = 0; t <= lg.len; t++) {
        bool dense = t < 4096 || (t % WAL_BLOCK_SIZE) < 300 || (t % WAL_BLOCK_SIZE) > 32500 ||
                     t > lg.len - 300;
        if (!dense && t % 7 != 0)
            continue;
        checked++;
        read_result res = log_read(&lg, lg.data, t);
        size_t k = log_recs_before(&lg, t);
        uint64_t last_end = k ? lg.ends[k - 1] : 0;
        if (res.end != KURA_E_NOT_FOUND)
            fail_msg("truncated at %zu: %s: %s", t, kura_status_str(res.end), res.msg);
        if (res.nrecs != k)
            fail_msg("truncated at %zu: %zu records, expected %zu", t, res.nrecs, k);
        assert_int_equal(res.end_off, last_end);
        bool zeros = true;
        for (uint64_t b = last_end; b < t; b++)
            zeros = zeros && lg.data[b] == 0;
        if (zeros != (res.torn_at == -1))
            fail_msg("truncated at %zu: torn_at %lld, but bytes after the last record are %s",
                     t, (long long)res.torn_at, zeros ? "zero" : "not zero");
        if (res.torn_at != -1 && (res.torn_at < (int64_t)last_end || res.torn_at > (int64_t)t))
            fail_msg("truncated at %zu: torn_at %lld outside [%llu, %zu]", t,
                     (long long)res.torn_at, (unsigned long long)last_end, t);
    }
    fprintf(stderr, "checked %zu truncations of a %zu-byte log\n", checked, lg.len);
    log_free(&lg);
}

/* One bit flipped anywhere before the last durable_off recorded in the log: corruption at the
 * offset of the fragment (or trailer) holding it, after exactly the records before it. After
 * it: a torn tail there. */
static void test_bit_flips(void **state)
{
    uint64_t seed = test_seed();
    test_log lg;
    log_build_mixed(&lg, 60, seed);
    assert_true(lg.synced > 0 && lg.synced < lg.len);
    uint8_t *img = malloc(lg.len);
    size_t ncorrupt = 0, ntorn = 0;
    for (size_t iter = 0; iter < 600; iter++) {
        uint64_t b = iter < 400 ? test_rand(&seed) % lg.synced
                                : lg.synced + test_rand(&seed) % (lg.len - lg.synced);
        if (iter % 50 == 0)
            b = iter < 400 ? lg.synced - 1 : lg.len - 1; /* the edges */
        memcpy(img, lg.data, lg.len);
        img[b] ^= (uint8_t)(1u << (test_rand(&seed) % 8));
        uint64_t x = log_unit_of(&lg, b);
        read_result res = log_read(&lg, img, lg.len);
        char what[64];
        snprintf(what, sizeof what, "bit flip at %llu", (unsigned long long)b);
        if (b < lg.synced) {
            expect_corruption(&res, x, what);
            ncorrupt++;
        } else {
            expect_torn(&res, x, what);
            ntorn++;
        }
        assert_int_equal(res.nrecs, log_recs_before(&lg, x));
    }
    fprintf(stderr, "%zu corruptions, %zu torn tails\n", ncorrupt, ntorn);
    free(img);
    log_free(&lg);
}

/* Every bit of a header in a one-block log whose proof of durability lies in the same block:
 * found by the resync scan even when the damaged length hides the next fragment. */
static void test_header_flips_same_block(void **state)
{
    size_t lens[] = {100, 200, 300, 50, 60};
    bool syncs[] = {false, false, true, false, false};
    test_log lg;
    log_build(&lg, lens, syncs, 5);
    assert_true(lg.len < WAL_BLOCK_SIZE);
    uint8_t *img = malloc(lg.len);
    for (size_t rec = 0; rec < 3; rec++) {
        uint64_t x = rec ? lg.ends[rec - 1] : 0;
        for (size_t bit = 0; bit < 8 * WAL_HEADER_SIZE; bit++) {
            memcpy(img, lg.data, lg.len);
            img[x + bit / 8] ^= (uint8_t)(1u << (bit % 8));
            read_result res = log_read(&lg, img, lg.len);
            expect_corruption(&res, x, "header bit flip");
            assert_int_equal(res.nrecs, rec);
        }
        /* a whole zeroed header too */
        memcpy(img, lg.data, lg.len);
        memset(img + x, 0, WAL_HEADER_SIZE);
        read_result res = log_read(&lg, img, lg.len);
        expect_corruption(&res, x, "zeroed header");
    }
    free(img);
    log_free(&lg);
}

/* A zeroed 512-byte sector anywhere in the durable part: corruption. In the unsynced tail:
 * a torn tail, or a clean end when everything after it is zero as well. */
static void test_zeroed_sectors(void **state)
{
    test_log lg;
    log_build_mixed(&lg, 50, 77);
    uint8_t *img = malloc(lg.len);
    size_t ncorrupt = 0;
    for (uint64_t sec = 0; sec < lg.len; sec += 512) {
        size_t n = lg.len - sec < 512 ? lg.len - sec : 512;
        memcpy(img, lg.data, lg.len);
        memset(img + sec, 0, n);
        if (memcmp(img, lg.data, lg.len) == 0)
            continue;
        uint64_t first = sec;
        while (lg.data[first] == 0)
            first++; /* the first byte the zeroing changed */
        uint64_t x = log_unit_of(&lg, first);
        read_result res = log_read(&lg, img, lg.len);
        char what[64];
        snprintf(what, sizeof what, "zeroed sector at %llu", (unsigned long long)sec);
        if (sec + n <= lg.synced) {
            expect_corruption(&res, x, what);
            ncorrupt++;
        } else if (first >= lg.synced) {
            if (res.end != KURA_E_NOT_FOUND)
                fail_msg("%s: %s", what, res.msg);
            if (res.torn_at != -1)
                assert_true(res.torn_at >= (int64_t)lg.synced);
        }
        assert_true(res.nrecs <= log_recs_before(&lg, x));
    }
    fprintf(stderr, "%zu zeroed sectors in the durable part reported as corruption\n", ncorrupt);
    assert_true(ncorrupt * 512 > lg.synced / 2);
    free(img);
    log_free(&lg);
}

/* A pre-zeroed tail is a clean end; garbage after the records is a torn tail; a zero header
 * followed by garbage is a torn tail at the zero header. */
static void test_tails(void **state)
{
    size_t lens[] = {10, 20000, 30};
    bool syncs[] = {true, true, false};
    test_log lg;
    log_build(&lg, lens, syncs, 3);
    size_t big = lg.len + 3 * WAL_BLOCK_SIZE + 100;
    uint8_t *img = calloc(1, big);
    memcpy(img, lg.data, lg.len);
    read_result res = log_read(&lg, img, big);
    assert_kura_status(res.end, KURA_E_NOT_FOUND);
    assert_int_equal(res.nrecs, 3);
    assert_int_equal(res.torn_at, -1);

    uint64_t st = 5;
    for (size_t i = lg.len; i < big; i++)
        img[i] = (uint8_t)test_rand(&st);
    res = log_read(&lg, img, big);
    assert_int_equal(res.nrecs, 3);
    expect_torn(&res, lg.len, "garbage tail");

    memset(img + lg.len, 0, WAL_HEADER_SIZE);
    res = log_read(&lg, img, big);
    assert_int_equal(res.nrecs, 3);
    expect_torn(&res, lg.len, "zero header then garbage");
    free(img);
    log_free(&lg);
}

/* Hand-made fragments: FIRST/MIDDLE/LAST out of order and a durable_off beyond the fragment
 * are bad fragments; torn without proof, corruption with it. */
static size_t put_frag(uint8_t *p, wal_frag_type type, uint32_t durable_off, const char *s)
{
    size_t n = strlen(s);
    memcpy(p + WAL_HEADER_SIZE, s, n);
    wal_frag_encode(p, type, durable_off, p + WAL_HEADER_SIZE, (uint16_t)n);
    return WAL_HEADER_SIZE + n;
}

static void test_fragment_order(void **state)
{
    test_log none = {0};
    uint8_t img[512] = {0};
    size_t a, b, len;
    read_result res;

    /* MIDDLE without FIRST at the start */
    len = put_frag(img, WAL_MIDDLE, 0, "mid");
    res = log_read(&none, img, len);
    expect_torn(&res, 0, "MIDDLE first");

    /* FIRST then FULL: the FULL is out of order; with a later fragment proving it durable,
     * corruption */
    a = put_frag(img, WAL_FIRST, 0, "first");
    b = put_frag(img + a, WAL_FULL, 0, "full");
    res = log_read(&none, img, a + b);
    expect_torn(&res, a, "FULL inside a record");
    len = a + b + put_frag(img + a + b, WAL_FULL, (uint32_t)(a + b), "proof");
    res = log_read(&none, img, len);
    expect_corruption(&res, a, "FULL inside a record, durable");
    if (!strstr(res.msg, "FULL fragment inside the record started at offset 0"))
        fail_msg("unexpected reason: %s", res.msg);

    /* LAST without FIRST after a good record */
    size_t ok_len = 2;
    uint64_t ok_end = WAL_HEADER_SIZE + 2;
    uint8_t *ok_rec = (uint8_t *)"ok";
    test_log one = {.n = 1, .lens = &ok_len, .ends = &ok_end, .recs = &ok_rec};
    a = put_frag(img, WAL_FULL, 0, "ok");
    b = put_frag(img + a, WAL_LAST, 0, "last");
    res = log_read(&one, img, a + b);
    assert_int_equal(res.nrecs, 1);
    expect_torn(&res, a, "LAST without FIRST");

    /* durable_off beyond its own fragment */
    memset(img, 0, sizeof img);
    a = put_frag(img, WAL_FULL, 4096, "liar");
    res = log_read(&none, img, a);
    expect_torn(&res, 0, "durable_off beyond the fragment");

    /* unknown type */
    a = put_frag(img, (wal_frag_type)9, 0, "nine");
    res = log_read(&none, img, a);
    expect_torn(&res, 0, "type 9");
}

/* A read error is reported as KURA_E_IO, also when it happens in the look-ahead. */
static void test_read_errors(void **state)
{
    test_log lg;
    size_t lens[] = {40000, 40000, 10};
    bool syncs[] = {true, true, false};
    log_build(&lg, lens, syncs, 3);
    mem_env env = {.base = {&mem_ops}, .data = lg.data, .len = lg.len,
                   .fail_read_from = WAL_BLOCK_SIZE + 1};
    wal_reader *r = NULL;
    assert_kura_ok(wal_reader_open(&env.base, LOG_PATH, IO_KIND_WAL, &r));
    const uint8_t *rec;
    size_t rlen;
    assert_kura_status(wal_reader_next(r, &rec, &rlen), KURA_E_IO);
    assert_kura_status(wal_reader_next(r, &rec, &rlen), KURA_E_IO);
    wal_reader_close(r);

    /* damage in block 0, and the look-ahead cannot read block 1 */
    uint8_t *img = malloc(lg.len);
    memcpy(img, lg.data, lg.len);
    img[100] ^= 1;
    env.data = img;
    assert_kura_ok(wal_reader_open(&env.base, LOG_PATH, IO_KIND_WAL, &r));
    assert_kura_status(wal_reader_next(r, &rec, &rlen), KURA_E_IO);
    wal_reader_close(r);
    env.fail_read_from = UINT64_MAX;
    read_result res = log_read(&lg, img, lg.len);
    expect_corruption(&res, 0, "flip in the first record");
    free(img);
    log_free(&lg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncate_everywhere),
        cmocka_unit_test(test_bit_flips),
        cmocka_unit_test(test_header_flips_same_block),
        cmocka_unit_test(test_zeroed_sectors),
        cmocka_unit_test(test_tails),
        cmocka_unit_test(test_fragment_order),
        cmocka_unit_test(test_read_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

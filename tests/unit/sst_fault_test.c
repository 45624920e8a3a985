/*
 * sst_fault_test.c - I/O errors while building and reading tables.
 *
 * A small io_env wraps the POSIX one: appends fail once a byte budget is spent, syncs can be
 * made to fail, and reads fail while a flag is set. The builder must report the error (from
 * add or finish), stay failed, and free everything; the reader must return the error from
 * open, get and iterators (sticky), never wrong data, and work again once reads succeed.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sstable/table_reader.h"
#include "util/ikey.h"
#include "util/status.h"

typedef struct fault_env {
    io_env base;
    io_env *inner;
    uint64_t append_budget; /* bytes that may still be appended */
    bool fail_sync;
    bool fail_reads;
} fault_env;

typedef struct fault_file {
    io_file base;
    io_file *inner;
} fault_file;

static fault_env *env_of(io_file *f)
{
    return (fault_env *)f->env;
}

static kura_status wrap(io_env *env, io_file *inner, io_file **f_out)
{
    fault_file *f = malloc(sizeof *f);
    f->base.env = env;
    f->base.kind = inner->kind;
    f->inner = inner;
    *f_out = &f->base;
    return KURA_OK;
}

static kura_status f_open_read(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    io_file *in;
    kura_status s = io_open_read(((fault_env *)env)->inner, path, kind, &in);
    return s != KURA_OK ? s : wrap(env, in, f_out);
}

static kura_status f_open_write(io_env *env, const char *path, io_kind kind, io_file **f_out)
{
    io_file *in;
    kura_status s = io_open_write(((fault_env *)env)->inner, path, kind, &in);
    return s != KURA_OK ? s : wrap(env, in, f_out);
}

static kura_status f_close(io_file *f)
{
    kura_status s = io_close(((fault_file *)f)->inner);
    free(f);
    return s;
}

static kura_status f_read_at(io_file *f, uint64_t off, void *buf, size_t n, size_t *nread_out)
{
    if (env_of(f)->fail_reads)
        return kura_err(KURA_E_IO, "injected read error at offset %llu", (unsigned long long)off);
    return io_read_at(((fault_file *)f)->inner, off, buf, n, nread_out);
}

static kura_status f_append(io_file *f, const void *buf, size_t n)
{
    fault_env *e = env_of(f);
    if (n > e->append_budget)
        return kura_err(KURA_E_NOSPC, "injected ENOSPC");
    e->append_budget -= n;
    return io_append(((fault_file *)f)->inner, buf, n);
}

static kura_status f_sync(io_file *f)
{
    if (env_of(f)->fail_sync)
        return kura_err(KURA_E_IO, "injected fdatasync failure");
    return io_sync(((fault_file *)f)->inner);
}

static kura_status f_file_size(io_file *f, uint64_t *size_out)
{
    return io_file_size(((fault_file *)f)->inner, size_out);
}

static fault_env *fault_env_new(void)
{
    static io_ops ops;
    ops = *io_env_posix()->ops; /* path-level operations pass straight through */
    ops.open_read = f_open_read;
    ops.open_write = f_open_write;
    ops.close = f_close;
    ops.read_at = f_read_at;
    ops.append = f_append;
    ops.sync = f_sync;
    ops.file_size = f_file_size;
    fault_env *e = calloc(1, sizeof *e);
    e->base.ops = &ops;
    e->inner = io_env_posix();
    e->append_budget = UINT64_MAX;
    return e;
}

static size_t key_of(uint8_t *out, unsigned i)
{
    char k[32];
    int n = snprintf(k, sizeof k, "k%07u", i);
    ikey_encode(out, k, (size_t)n, 1 + i, IKEY_TYPE_VALUE);
    return (size_t)n + IKEY_TRAILER;
}

/* Builds n entries through env; returns the first error (from add or finish). */
static kura_status try_build(fault_env *e, const char *path, unsigned n, sst_meta *meta)
{
    sst_builder *b;
    kura_status s = sst_builder_new(&e->base, path, NULL, &b);
    if (s != KURA_OK)
        return s;
    for (unsigned i = 0; i < n; i++) {
        uint8_t k[32], v[64];
        memset(v, 'a' + (int)(i % 26), sizeof v);
        size_t kl = key_of(k, i);
        if ((s = sst_builder_add(b, k, kl, v, sizeof v)) != KURA_OK) {
            /* failed for good: later adds and finish report it too */
            assert_int_not_equal(sst_builder_add(b, k, kl, v, sizeof v), KURA_OK);
            assert_int_not_equal(sst_builder_finish(b, meta), KURA_OK);
            return s;
        }
    }
    return sst_builder_finish(b, meta);
}

static void test_write_errors(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("sst_fault");
    char path[512];
    snprintf(path, sizeof path, "%s/w.sst", dir);
    fault_env *e = fault_env_new();
    sst_meta meta;
    assert_kura_ok(try_build(e, path, 20000, &meta));
    uint64_t full = meta.file_size;
    sst_meta_clear(&meta);
    /* run out of space at many points: in data blocks, meta blocks, the footer */
    uint64_t budgets[] = {0, 1, 4096, full / 3, full / 2, full - 200, full - 81, full - 1};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        e->append_budget = budgets[i];
        assert_kura_status(try_build(e, path, 20000, &meta), KURA_E_NOSPC);
    }
    e->append_budget = UINT64_MAX;
    e->fail_sync = true;
    assert_kura_status(try_build(e, path, 100, &meta), KURA_E_IO);
    e->fail_sync = false;
    free(e);
    test_rmrf(dir);
}

static void test_read_errors(void **state)
{
    (void)state;
    char *dir = test_mkdtemp("sst_fault");
    char path[512];
    snprintf(path, sizeof path, "%s/r.sst", dir);
    fault_env *e = fault_env_new();
    sst_meta meta;
    assert_kura_ok(try_build(e, path, 5000, &meta));
    sst_reader *r;
    e->fail_reads = true;
    assert_kura_status(sst_reader_open(&e->base, path, meta.file_size, NULL, &r), KURA_E_IO);
    e->fail_reads = false;
    block_cache *c = block_cache_new(1 << 20);
    assert_kura_ok(sst_reader_open(&e->base, path, meta.file_size, c, &r));
    uint8_t k[32];
    size_t kl = key_of(k, 4000);
    kbuf val = KBUF_INIT;
    bool found = false;
    unsigned type = 99;
    e->fail_reads = true;
    assert_kura_status(sst_reader_get(r, k, kl, true, &val, &type, &found), KURA_E_IO);
    assert_false(found); /* outputs untouched on error */
    assert_int_equal(type, 99);
    kv_iter *it = sst_reader_iter(r, true);
    kv_iter_seek_first(it);
    assert_false(kv_iter_valid(it));
    assert_kura_status(kv_iter_status(it), KURA_E_IO);
    assert_non_null(strstr(kura_last_error(), "injected read error"));
    e->fail_reads = false;
    kv_iter_seek_first(it); /* sticky */
    assert_false(kv_iter_valid(it));
    kv_iter_free(it);
    /* reads work again, and nothing bad was cached */
    assert_kura_ok(sst_reader_get(r, k, kl, true, &val, &type, &found));
    assert_true(found);
    assert_int_equal(type, IKEY_TYPE_VALUE);
    assert_int_equal(val.len, 64);
    /* an iterator that fails mid-scan after reading some blocks */
    it = sst_reader_iter(r, false);
    unsigned n = 0;
    for (kv_iter_seek_first(it); kv_iter_valid(it); kv_iter_next(it)) {
        size_t gkl;
        const uint8_t *gk = kv_iter_key(it, &gkl);
        uint8_t want[32];
        size_t wl = key_of(want, n);
        assert_int_equal(gkl, wl);
        assert_memory_equal(gk, want, wl);
        if (++n == 1000)
            e->fail_reads = true;
    }
    e->fail_reads = false;
    assert_true(n >= 1000 && n < 5000);
    assert_kura_status(kv_iter_status(it), KURA_E_IO);
    kv_iter_free(it);
    kbuf_free(&val);
    sst_reader_close(r);
    block_cache_free(c);
    sst_meta_clear(&meta);
    free(e);
    test_rmrf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_read_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

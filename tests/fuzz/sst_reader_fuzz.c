/*
 * sst_reader_fuzz.c - libFuzzer target: the SSTable reader on arbitrary bytes.
 *
 * This file contains a fuzz target that stores the input as a table file and opens it with
 * sst_reader (sstable/table_reader.h); if it opens, it looks up a few keys taken from the
 * input and walks the whole table forward and backward. The reader promises that damage is
 * reported as a status (never wrong memory accesses, never an abort): any status outside
 * its contract aborts here. Every other input goes through a small block cache, so both
 * the cached and the uncached block paths are fuzzed; every other pair of inputs has the
 * reader unload its index and filters before the backward walk, which reads them again and
 * must get what open got. Seeds: make_seeds.c (a valid table).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sstable/table_reader.h"
#include "tests/fuzz/fuzz_common.h"
#include "util/ikey.h"

/* Keys and values are read in full so that ASan checks their extent. */
static uint8_t sst_fuzz_touch(const uint8_t *p, size_t len)
{
    uint8_t x = 0;
    for (size_t i = 0; i < len; i++)
        x ^= p[i];
    return x;
}

/* Walks the iterator from one end to the other; abort()s on a status outside the contract
 * or on a key shorter than an internal key's trailer. */
static uint8_t sst_fuzz_walk(kv_iter *it, bool forward)
{
    uint8_t x = 0;
    size_t n = 0;

    if (forward)
        kv_iter_seek_first(it);
    else
        kv_iter_seek_last(it);
    while (kv_iter_valid(it) && n++ < 100000) {
        size_t klen, vlen;
        const uint8_t *k = kv_iter_key(it, &klen);
        const uint8_t *v = kv_iter_value(it, &vlen);
        x ^= sst_fuzz_touch(k, klen) ^ sst_fuzz_touch(v, vlen);
        if (forward)
            kv_iter_next(it);
        else
            kv_iter_prev(it);
    }
    FUZZ_CHECK(kv_iter_status(it), forward ? "iter forward" : "iter backward", KURA_OK,
               KURA_E_CORRUPTION, KURA_E_IO, KURA_E_NOMEM);
    return x;
}

/* Looks up the user key data[off..off+len) at the newest snapshot, and seeks an iterator to
 * it. */
static uint8_t sst_fuzz_probe(sst_reader *r, kv_iter *it, const uint8_t *key, size_t len)
{
    uint8_t ik[64 + 8];
    kbuf val = {0};
    unsigned type = 0;
    bool found = false;
    uint8_t x = 0;
    kura_status s;

    if (len > 64)
        len = 64;
    ikey_encode(ik, key, len, IKEY_MAX_SEQ, IKEY_TYPE_SEEK);
    s = sst_reader_get(r, ik, len + 8, true, &val, &type, &found);
    FUZZ_CHECK(s, "sst_reader_get", KURA_OK, KURA_E_NOT_FOUND, KURA_E_CORRUPTION, KURA_E_IO,
               KURA_E_NOMEM);
    if (s == KURA_OK && found) {
        if (type != IKEY_TYPE_VALUE && type != IKEY_TYPE_DELETE)
            abort();
        x ^= sst_fuzz_touch(val.data, val.len);
    }
    kbuf_free(&val);
    (void)sst_reader_may_contain_key(r, key, len);
    (void)sst_reader_may_contain_prefix(r, key, len);
    kv_iter_seek(it, ik, len + 8);
    if (kv_iter_valid(it)) {
        size_t klen;
        x ^= sst_fuzz_touch(kv_iter_key(it, &klen), klen);
    }
    return x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static block_cache *cache;
    static unsigned calls;
    const char *path = fuzz_write_input(data, size);
    volatile uint8_t sink = 0;
    sst_reader *r;
    kv_iter *it;
    kura_status s;

    if (!cache && !(cache = block_cache_new(64 << 10)))
        abort();
    s = sst_reader_open(io_env_posix(), path, size, (calls++ & 1) ? cache : NULL, &r);
    /* NOT_SUPPORTED: the footer names a newer format version (documented by open). */
    FUZZ_CHECK(s, "sst_reader_open", KURA_OK, KURA_E_NOT_FOUND, KURA_E_CORRUPTION, KURA_E_IO,
               KURA_E_NOMEM, KURA_E_NOT_SUPPORTED);
    if (s != KURA_OK)
        return 0;
    (void)sst_reader_meta(r);
    (void)sst_reader_props(r);
    it = sst_reader_iter(r, true);
    if (!it) {
        sst_reader_close(r);
        return 0;
    }
    /* Keys from the input: a short prefix, a window from the middle and the last bytes. */
    sink ^= sst_fuzz_probe(r, it, data, size < 8 ? size : 8);
    sink ^= sst_fuzz_probe(r, it, data + size / 2, size / 2 < 16 ? size / 2 : 16);
    sink ^= sst_fuzz_probe(r, it, data + (size > 24 ? size - 24 : 0), size > 24 ? 24 : size);
    sink ^= sst_fuzz_walk(it, true);
    kv_iter_free(it);
    size_t loaded = sst_reader_memory(r);
    bool unload = calls & 2;
    if (unload && (!sst_reader_unload(r) || sst_reader_memory(r) != 0))
        abort();
    it = sst_reader_iter(r, false);
    if (it) {
        sink ^= sst_fuzz_walk(it, false);
        if (unload && kv_iter_status(it) == KURA_OK && sst_reader_memory(r) != loaded)
            abort(); /* the same file read again must give the same index and filters */
        kv_iter_free(it);
    }
    sst_reader_close(r);
    (void)sink;
    return 0;
}

/*
 * make_seeds.c - writes the seed corpora of the fuzz targets.
 *
 * This file contains a small program, run by CTest before the fuzzers, that writes valid
 * inputs with kura's own writers, so the fuzzers start from well-formed files and mutate
 * them (no binary file is kept in the repository):
 *   <root>/wal_reader_fuzz/   logs written by wal_writer (small records around a sync, and
 *                             records that cross a 32 KiB block)
 *   <root>/sst_reader_fuzz/   tables of ~50 keys written by sst_builder (LZ4 with filters,
 *                             uncompressed with small blocks, zlib)
 *   <root>/manifest_fuzz/     an encoded version edit and an encoded write batch
 * Usage: make_seeds <root>. Exit status 0 on success; errors are printed.
 */
#include <stdio.h>
#include <string.h>

#include "engine/lsm/batch.h"
#include "engine/lsm/version_edit.h"
#include "sstable/table_builder.h"
#include "util/ikey.h"
#include "util/io.h"
#include "wal/writer.h"

#define SEED_TRY(expr)                                                                          \
    do {                                                                                        \
        kura_status seed_s_ = (expr);                                                           \
        if (seed_s_ != KURA_OK) {                                                               \
            fprintf(stderr, "make_seeds: %s: %s (%s)\n", #expr, kura_status_str(seed_s_),       \
                    kura_last_error());                                                         \
            return seed_s_;                                                                     \
        }                                                                                       \
    } while (0)

static kura_status seed_mkdir(const char *path)
{
    kura_status s = io_mkdir(io_env_posix(), path);
    return s == KURA_E_EXISTS ? KURA_OK : s;
}

static kura_status seed_write(const char *path, const void *p, size_t n)
{
    io_file *f;
    SEED_TRY(io_open_write(io_env_posix(), path, IO_KIND_OTHER, &f));
    kura_status s = io_append(f, p, n);
    kura_status c = io_close(f);
    return s != KURA_OK ? s : c;
}

/* A log of small records with a sync after the third, and a log whose records cross the
 * first block boundary. */
static kura_status seed_wal(const char *dir)
{
    char path[600];
    char rec[1200];
    wal_writer *w;

    snprintf(path, sizeof path, "%s/small.log", dir);
    SEED_TRY(wal_writer_open(io_env_posix(), path, IO_KIND_WAL, &w));
    for (int i = 0; i < 6; i++) {
        int n = snprintf(rec, sizeof rec, "record %d %.*s", i, i * 7, "abcdefghijklmnopqrstuvwxyz"
                                                                       "0123456789ABCDEFGHIJKLMN");
        SEED_TRY(wal_writer_add(w, rec, (size_t)n));
        if (i == 2)
            SEED_TRY(wal_writer_sync(w));
    }
    SEED_TRY(wal_writer_add(w, "", 0));
    SEED_TRY(wal_writer_close(w));

    snprintf(path, sizeof path, "%s/blocks.log", dir);
    SEED_TRY(wal_writer_open(io_env_posix(), path, IO_KIND_WAL, &w));
    for (int i = 0; i < 30; i++) {
        memset(rec, 'a' + i % 26, sizeof rec);
        SEED_TRY(wal_writer_add(w, rec, sizeof rec));
        if (i % 10 == 9)
            SEED_TRY(wal_writer_sync(w));
    }
    return wal_writer_close(w);
}

/* One table of 50 keys (every seventh a tombstone) with the given options. */
static kura_status seed_sst(const char *path, const sst_options *o)
{
    sst_builder *b;
    sst_meta meta = {0};

    SEED_TRY(sst_builder_new(io_env_posix(), path, o, &b));
    for (int i = 0; i < 50; i++) {
        char key[32], val[64];
        uint8_t ik[40];
        int kl = snprintf(key, sizeof key, "key%04d", i * 3);
        int vl = snprintf(val, sizeof val, "value-%d-%.*s", i, i % 20, "xxxxxxxxxxxxxxxxxxxx");
        unsigned type = i % 7 == 6 ? IKEY_TYPE_DELETE : IKEY_TYPE_VALUE;
        ikey_encode(ik, key, (size_t)kl, (uint64_t)(100 + i), type);
        kura_status s = sst_builder_add(b, ik, (size_t)kl + 8, (const uint8_t *)val,
                                        type == IKEY_TYPE_VALUE ? (size_t)vl : 0);
        if (s != KURA_OK) {
            sst_builder_abandon(b);
            return s;
        }
    }
    SEED_TRY(sst_builder_finish(b, &meta));
    sst_meta_clear(&meta);
    return KURA_OK;
}

static kura_status seed_ssts(const char *dir)
{
    char path[600];
    sst_options o;

    sst_options_init(&o);
    snprintf(path, sizeof path, "%s/lz4.sst", dir);
    SEED_TRY(seed_sst(path, &o));

    sst_options_init(&o);
    o.compression = KURA_COMPRESS_NONE;
    o.block_size = 256;
    o.restart_interval = 4;
    snprintf(path, sizeof path, "%s/plain.sst", dir);
    SEED_TRY(seed_sst(path, &o));

    sst_options_init(&o);
    o.compression = KURA_COMPRESS_ZLIB;
    o.bloom_bits_per_key = 0;
    snprintf(path, sizeof path, "%s/zlib.sst", dir);
    return seed_sst(path, &o);
}

/* An edit using every field, and a batch of puts and deletes. */
static kura_status seed_manifest(const char *dir)
{
    char path[600];
    version_edit e;
    lsm_batch b;
    kbuf enc = {0};
    uint8_t lo[16], hi[16];
    kura_status s;

    edit_init(&e);
    e.has_log_number = e.has_next_file = e.has_last_seq = true;
    e.log_number = 7;
    e.next_file = 12;
    e.last_seq = 1234;
    ikey_encode(lo, "apple", 5, 10, IKEY_TYPE_VALUE);
    ikey_encode(hi, "zebra", 5, 20, IKEY_TYPE_DELETE);
    s = edit_add_file(&e, 0, 9, 4096, 50, 10, 20, lo, 13, hi, 13);
    if (s == KURA_OK)
        s = edit_add_file(&e, 2, 11, 81920, 900, 1, 9, lo, 13, hi, 13);
    if (s == KURA_OK)
        s = edit_delete_file(&e, 1, 5);
    if (s == KURA_OK)
        s = edit_add_wal_end(&e, 6, 32768 + 100);
    if (s == KURA_OK)
        s = edit_encode(&e, &enc);
    edit_free(&e);
    snprintf(path, sizeof path, "%s/edit", dir);
    if (s == KURA_OK)
        s = seed_write(path, enc.data, enc.len);
    kbuf_free(&enc);
    SEED_TRY(s);

    lsm_batch_init(&b);
    lsm_rep_set_seq(b.rep.data, 500);
    s = lsm_batch_put(&b, "alpha", 5, "one", 3);
    if (s == KURA_OK)
        s = lsm_batch_delete(&b, "beta", 4);
    if (s == KURA_OK)
        s = lsm_batch_put(&b, "gamma", 5, "", 0);
    snprintf(path, sizeof path, "%s/batch", dir);
    if (s == KURA_OK)
        s = seed_write(path, b.rep.data, b.rep.len);
    lsm_batch_free(&b);
    return s;
}

int main(int argc, char **argv)
{
    char dir[512];

    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds <corpus root>\n");
        return 2;
    }
    if (seed_mkdir(argv[1]) != KURA_OK)
        goto fail;
    snprintf(dir, sizeof dir, "%s/wal_reader_fuzz", argv[1]);
    if (seed_mkdir(dir) != KURA_OK || seed_wal(dir) != KURA_OK)
        goto fail;
    snprintf(dir, sizeof dir, "%s/sst_reader_fuzz", argv[1]);
    if (seed_mkdir(dir) != KURA_OK || seed_ssts(dir) != KURA_OK)
        goto fail;
    snprintf(dir, sizeof dir, "%s/manifest_fuzz", argv[1]);
    if (seed_mkdir(dir) != KURA_OK || seed_manifest(dir) != KURA_OK)
        goto fail;
    return 0;
fail:
    fprintf(stderr, "make_seeds: failed: %s\n", kura_last_error());
    return 1;
}

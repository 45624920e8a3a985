/*
 * block_read.c - getting a block's bytes: from the block cache, or from the file with its crc
 * checked and its payload decompressed (docs/format/sstable.md section 2).
 *
 * A raw block is read straight into the memory that will hold it (header + payload + trailer
 * in one allocation), so an uncompressed cache miss costs one allocation and no copy. The crc
 * is checked before the type byte or any length inside the payload is believed.
 */
#include <stdlib.h>

#include "sstable/compress.h"
#include "sstable/table_internal.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/status.h"

static kura_status block_corrupt(const char *path, uint64_t off, const char *what)
{
    return kura_err(KURA_E_CORRUPTION, "%s: %s at offset %llu", path, what,
                    (unsigned long long)off);
}

static kura_status block_oom(const char *path, uint64_t off)
{
    return kura_err(KURA_E_NOMEM, "%s: out of memory reading block at offset %llu", path,
                    (unsigned long long)off);
}

/* Decompresses the verified payload in raw (of `type`) into a new sst_blockmem. */
static kura_status decompress(const char *path, sst_handle h, const sst_blockmem *raw,
                              uint8_t type, sst_blockmem **mem_out)
{
    size_t ulen, hdr;
    kura_compression c = (kura_compression)type;
    if (!sst_uncompressed_size(c, raw->data, h.size, &ulen, &hdr))
        return block_corrupt(path, h.off, "bad uncompressed size in block");
    sst_blockmem *m = malloc(sizeof *m + ulen + 1);
    if (!m)
        return block_oom(path, h.off);
    if (!sst_uncompress(c, raw->data + hdr, h.size - hdr, m->data, ulen)) {
        free(m);
        return block_corrupt(path, h.off, "undecodable compressed block");
    }
    m->block.data = m->data;
    m->block.size = ulen;
    m->block.restarts_off = m->block.num_restarts = 0;
    *mem_out = m;
    return KURA_OK;
}

kura_status sst_read_contents(io_file *f, const char *path, sst_handle h, sst_blockmem **mem_out)
{
    if (h.size > SST_MAX_BLOCK_BYTES)
        return block_corrupt(path, h.off, "impossible block size");
    size_t n = (size_t)h.size;
    sst_blockmem *m = malloc(sizeof *m + n + SST_BLOCK_TRAILER);
    if (!m)
        return block_oom(path, h.off);
    kura_status s = io_read_exact(f, path, h.off, m->data, n + SST_BLOCK_TRAILER);
    if (s != KURA_OK) {
        free(m);
        return s;
    }
    uint8_t type = m->data[n];
    uint32_t want = crc32c_unmask(dec_fixed32(m->data + n + 1));
    if (crc32c(m->data, n + 1) != want) {
        free(m);
        return block_corrupt(path, h.off, "block checksum mismatch");
    }
    if (type == SST_BLOCK_RAW) {
        m->block.data = m->data;
        m->block.size = n;
        m->block.restarts_off = m->block.num_restarts = 0;
        *mem_out = m;
        return KURA_OK;
    }
    if (type != SST_BLOCK_LZ4 && type != SST_BLOCK_ZLIB) {
        free(m);
        return block_corrupt(path, h.off, "unknown block compression type");
    }
    s = decompress(path, h, m, type, mem_out);
    free(m);
    return s;
}

kura_status sst_reader_block(sst_reader *r, size_t bi, bool fill_cache, sst_block_ref *ref_out)
{
    sst_handle h = r->index[bi].h;
    if (r->cache) {
        block_cache_handle *ch = block_cache_lookup(r->cache, r->cache_id, h.off);
        if (ch) {
            sst_blockmem *m = block_cache_value(ch);
            ref_out->block = &m->block;
            ref_out->cache_h = ch;
            ref_out->owned = NULL;
            return KURA_OK;
        }
    }
    sst_blockmem *m;
    kura_status s = sst_read_contents(r->file, r->path, h, &m);
    if (s != KURA_OK)
        return s;
    if (!sst_block_parse(&m->block, m->block.data, m->block.size)) {
        free(m);
        return block_corrupt(r->path, h.off, "malformed data block");
    }
    if (r->cache && fill_cache) {
        size_t charge = sizeof *m + m->block.size + SST_BLOCK_TRAILER;
        block_cache_handle *ch = block_cache_insert(r->cache, r->cache_id, h.off, m, charge, free);
        if (ch) {
            ref_out->block = &m->block;
            ref_out->cache_h = ch;
            ref_out->owned = NULL;
            return KURA_OK;
        }
    }
    ref_out->block = &m->block;
    ref_out->cache_h = NULL;
    ref_out->owned = m;
    return KURA_OK;
}

void sst_block_ref_release(sst_reader *r, sst_block_ref *ref)
{
    if (ref->cache_h)
        block_cache_release(r->cache, ref->cache_h);
    free(ref->owned);
    ref->block = NULL;
    ref->cache_h = NULL;
    ref->owned = NULL;
}

kura_status sst_block_error(const sst_reader *r, size_t bi, kura_status err)
{
    uint64_t off = r->index[bi].h.off;
    if (err == KURA_E_NOMEM)
        return block_oom(r->path, off);
    return block_corrupt(r->path, off, "malformed entry in data block");
}

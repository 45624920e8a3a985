/*
 * format.c - encoding and checking the SSTable footer and block handles
 * (docs/format/sstable.md, sections 2 and 6).
 *
 * The footer carries its own crc, so a flipped bit in a handle is caught before any handle is
 * trusted; the handles are then bounds-checked against the footer's own offset, which makes
 * every later block read stay inside the file.
 */
#include "sstable/format.h"

#include <stdbool.h>

#include "util/coding.h"
#include "util/crc32c.h"
#include "util/status.h"

enum { FOOTER_VERSION_OFF = 64, FOOTER_CRC_OFF = 68, FOOTER_MAGIC_OFF = 72 };

static void put_handle(uint8_t *p, sst_handle h)
{
    enc_fixed64(p, h.off);
    enc_fixed64(p + 8, h.size);
}

static sst_handle get_handle(const uint8_t *p)
{
    sst_handle h = {dec_fixed64(p), dec_fixed64(p + 8)};
    return h;
}

void sst_footer_encode(const sst_footer *f, uint8_t out[SST_FOOTER_SIZE])
{
    put_handle(out, f->key_filter);
    put_handle(out + 16, f->prefix_filter);
    put_handle(out + 32, f->props);
    put_handle(out + 48, f->index);
    enc_fixed32(out + FOOTER_VERSION_OFF, f->version);
    enc_fixed32(out + FOOTER_CRC_OFF, crc32c_mask(crc32c(out, FOOTER_CRC_OFF)));
    enc_fixed64(out + FOOTER_MAGIC_OFF, SST_MAGIC);
}

/* A present block must end (trailer included) at or before `limit`. */
static bool handle_fits(sst_handle h, uint64_t limit)
{
    return h.size <= SST_MAX_BLOCK_BYTES && h.off <= limit &&
           h.size + SST_BLOCK_TRAILER <= limit - h.off;
}

kura_status sst_footer_decode(const uint8_t in[SST_FOOTER_SIZE], const char *path,
                              uint64_t footer_off, sst_footer *f_out)
{
    unsigned long long off = (unsigned long long)footer_off;
    if (dec_fixed64(in + FOOTER_MAGIC_OFF) != SST_MAGIC)
        return kura_err(KURA_E_CORRUPTION, "%s: bad magic number (not an SSTable) at offset %llu",
                        path, off + FOOTER_MAGIC_OFF);
    uint32_t want = crc32c_unmask(dec_fixed32(in + FOOTER_CRC_OFF));
    if (crc32c(in, FOOTER_CRC_OFF) != want)
        return kura_err(KURA_E_CORRUPTION, "%s: footer checksum mismatch at offset %llu", path,
                        off);
    sst_footer f;
    f.key_filter = get_handle(in);
    f.prefix_filter = get_handle(in + 16);
    f.props = get_handle(in + 32);
    f.index = get_handle(in + 48);
    f.version = dec_fixed32(in + FOOTER_VERSION_OFF);
    if (f.version != SST_FORMAT_VERSION)
        return kura_err(KURA_E_NOT_SUPPORTED, "%s: format version %u (supported: %u) at offset %llu",
                        path, f.version, SST_FORMAT_VERSION, off + FOOTER_VERSION_OFF);
    const sst_handle *hs[4] = {&f.key_filter, &f.prefix_filter, &f.props, &f.index};
    for (int i = 0; i < 4; i++) {
        bool optional = i < 2;
        if (optional && hs[i]->size == 0 && hs[i]->off == 0)
            continue;
        if (!handle_fits(*hs[i], footer_off) || (!optional && hs[i]->size == 0))
            return kura_err(KURA_E_CORRUPTION,
                            "%s: footer handle %d (offset %llu, size %llu) outside the file at "
                            "offset %llu",
                            path, i, (unsigned long long)hs[i]->off,
                            (unsigned long long)hs[i]->size, off + 16u * (unsigned)i);
    }
    *f_out = f;
    return KURA_OK;
}

size_t sst_handle_encode(uint8_t *p, sst_handle h)
{
    size_t n = enc_varint64(p, h.off);
    return n + enc_varint64(p + n, h.size);
}

const uint8_t *sst_handle_decode(const uint8_t *p, const uint8_t *end, sst_handle *h_out)
{
    sst_handle h;
    if (!(p = dec_varint64(p, end, &h.off)) || !(p = dec_varint64(p, end, &h.size)))
        return NULL;
    *h_out = h;
    return p;
}

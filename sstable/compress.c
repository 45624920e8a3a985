/*
 * compress.c - LZ4 and zlib block codecs (docs/format/sstable.md section 2).
 *
 * The decoder never trusts the stored size: it is bounded by what the codec could possibly
 * produce from the payload's length (LZ4 expands at most 255x, deflate at most 1032x), so a
 * corrupt size cannot make the reader allocate gigabytes; and the output must be exactly that
 * size, so a corrupt stream cannot yield a short block.
 */
#include "sstable/compress.h"

#include <limits.h>
#include <lz4.h>
#include <zlib.h>

#include "sstable/format.h"
#include "util/coding.h"

enum { LZ4_MAX_RATIO = 255, ZLIB_MAX_RATIO = 1032, ZLIB_LEVEL = 6 };

bool sst_compress(kura_compression type, const uint8_t *raw, size_t n, kbuf *out)
{
    kbuf_clear(out);
    if (n > (size_t)INT_MAX / 2)
        return false;
    if (type == KURA_COMPRESS_LZ4) {
        int bound = LZ4_compressBound((int)n);
        if (bound <= 0 || !kbuf_reserve(out, VARINT64_MAX + (size_t)bound))
            return false;
        out->len = enc_varint64(out->data, n);
        int got = LZ4_compress_default((const char *)raw, (char *)out->data + out->len, (int)n,
                                       bound);
        if (got <= 0)
            return false;
        out->len += (size_t)got;
        return true;
    }
    if (type == KURA_COMPRESS_ZLIB) {
        uLongf bound = compressBound((uLong)n);
        if (!kbuf_reserve(out, VARINT64_MAX + bound))
            return false;
        out->len = enc_varint64(out->data, n);
        uLongf got = bound;
        if (compress2(out->data + out->len, &got, raw, (uLong)n, ZLIB_LEVEL) != Z_OK)
            return false;
        out->len += got;
        return true;
    }
    return false;
}

bool sst_uncompressed_size(kura_compression type, const uint8_t *payload, size_t n,
                           size_t *size_out, size_t *hdr_out)
{
    uint64_t size;
    const uint8_t *p = dec_varint64(payload, payload + n, &size);
    if (!p)
        return false;
    uint64_t body = (uint64_t)(payload + n - p), ratio;
    if (type == KURA_COMPRESS_LZ4)
        ratio = LZ4_MAX_RATIO;
    else if (type == KURA_COMPRESS_ZLIB)
        ratio = ZLIB_MAX_RATIO;
    else
        return false;
    if (size > SST_MAX_BLOCK_BYTES || size > body * ratio + 64)
        return false;
    *size_out = (size_t)size;
    *hdr_out = (size_t)(p - payload);
    return true;
}

bool sst_uncompress(kura_compression type, const uint8_t *src, size_t srclen, uint8_t *dst,
                    size_t dstlen)
{
    if (srclen > INT_MAX || dstlen > INT_MAX)
        return false;
    if (type == KURA_COMPRESS_LZ4) {
        int got = LZ4_decompress_safe((const char *)src, (char *)dst, (int)srclen, (int)dstlen);
        return got >= 0 && (size_t)got == dstlen;
    }
    if (type == KURA_COMPRESS_ZLIB) {
        /* An empty block still gets a 1-byte buffer, so a stream that decodes to more than
         * nothing is caught (zlib treats a 0-sized buffer specially). */
        uint8_t spare[1];
        uLongf got = dstlen ? (uLongf)dstlen : 1;
        int rc = uncompress(dstlen ? dst : spare, &got, src, (uLong)srclen);
        return rc == Z_OK && got == dstlen;
    }
    return false;
}

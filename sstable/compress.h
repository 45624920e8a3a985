/*
 * compress.h - block compression with LZ4 or zlib (Debian's liblz4 and zlib).
 *
 * This file contains the compressed payload of docs/format/sstable.md section 2:
 * `varint uncompressed_size | compressed bytes` (LZ4 block format from LZ4_compress_default,
 * or a zlib stream from compress2 at level 6). The table builder decides whether to keep the
 * result (it must save at least 12.5%). All functions are thread-safe.
 */
#ifndef KURA_SSTABLE_COMPRESS_H
#define KURA_SSTABLE_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"

/*
 * Replaces out's contents with the compressed payload of raw[0..n). Returns false if the
 * codec failed or memory ran out (the caller then stores the block raw). `type` is
 * KURA_COMPRESS_LZ4 or KURA_COMPRESS_ZLIB.
 */
bool sst_compress(kura_compression type, const uint8_t *raw, size_t n, kbuf *out);

/*
 * Reads the uncompressed size at the start of a compressed payload. *hdr_out is the varint's
 * length. Returns false if the varint is malformed or the size is impossible for `type` given
 * the payload length (each codec has a maximum ratio) or above SST_MAX_BLOCK_BYTES.
 */
bool sst_uncompressed_size(kura_compression type, const uint8_t *payload, size_t n,
                           size_t *size_out, size_t *hdr_out);

/* Decompresses src[0..srclen) (the payload after the size varint) into exactly dstlen bytes
 * at dst. Returns false if the data is malformed or does not produce exactly dstlen bytes. */
bool sst_uncompress(kura_compression type, const uint8_t *src, size_t srclen, uint8_t *dst,
                    size_t dstlen);

#endif

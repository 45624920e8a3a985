/*
 * format.h - the constants and small codecs of the SSTable file format.
 *
 * This file contains what every part of sstable/ must agree on about the bytes of a table:
 * the magic number and format version, the block trailer, block handles (where a block is)
 * and the fixed-size footer. The full byte-level description is docs/format/sstable.md;
 * a change here changes that page and SST_FORMAT_VERSION together.
 *
 * File layout (section 1 of the format page):
 *
 *   data block 0 | ... | data block n-1 | key filter? | prefix filter? | properties | index |
 *   footer (SST_FOOTER_SIZE bytes)
 *
 * Every block is stored as `payload | type (1 byte) | masked crc32c (fixed32)`, the crc
 * covering payload and type. A handle's size is the payload size, without the trailer.
 */
#ifndef KURA_SSTABLE_FORMAT_H
#define KURA_SSTABLE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "kura.h"

#define SST_MAGIC UINT64_C(0x6b7572615f737374) /* "kura_sst" read as a big-endian number */
#define SST_FORMAT_VERSION 1u

enum {
    SST_BLOCK_TRAILER = 5, /* type byte + masked crc32c */
    SST_FOOTER_SIZE = 80,  /* 4 handles x 16 + version 4 + crc 4 + magic 8 */
    SST_HANDLE_MAX = 20,   /* two varint64s, as stored in index values */
};

/* The type byte of a block trailer (equal to kura_compression's values). */
enum { SST_BLOCK_RAW = 0, SST_BLOCK_LZ4 = 1, SST_BLOCK_ZLIB = 2 };

/* Largest payload or uncompressed block the reader accepts: bounds the memory a corrupt
 * length can make it allocate. Entries are limited so that any block stays below it. */
#define SST_MAX_BLOCK_BYTES (UINT64_C(1) << 31)

/* Where a block lives: its offset in the file and its payload size (trailer excluded). */
typedef struct sst_handle {
    uint64_t off;
    uint64_t size;
} sst_handle;

/* The footer: handles of the meta blocks, then the format version. A filter handle with size
 * 0 means the table has no such filter. */
typedef struct sst_footer {
    sst_handle key_filter;
    sst_handle prefix_filter;
    sst_handle props;
    sst_handle index;
    uint32_t version;
} sst_footer;

/* Writes the footer (with its crc and the magic number) into out. */
void sst_footer_encode(const sst_footer *f, uint8_t out[SST_FOOTER_SIZE]);

/*
 * Decodes the footer read from offset footer_off of `path`. Checks the magic number, the
 * footer crc, the version, and that every handle lies inside [0, footer_off). Errors:
 * KURA_E_CORRUPTION ("<path>: <what> at offset <off>"), KURA_E_NOT_SUPPORTED for a newer
 * format version with a valid crc.
 */
kura_status sst_footer_decode(const uint8_t in[SST_FOOTER_SIZE], const char *path,
                              uint64_t footer_off, sst_footer *f_out);

/* Encodes h as varint off, varint size into p (room for SST_HANDLE_MAX bytes); returns the
 * length written. */
size_t sst_handle_encode(uint8_t *p, sst_handle h);

/* Decodes a handle from [p, end); returns the pointer past it, or NULL if malformed. */
const uint8_t *sst_handle_decode(const uint8_t *p, const uint8_t *end, sst_handle *h_out);

#endif

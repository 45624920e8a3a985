/*
 * format.h - the physical layout of WAL and MANIFEST files (docs/format/wal.md).
 *
 * This file contains the constants of the log format and the encoding, decoding and checksum
 * of the 11-byte fragment header, shared by the writer (wal/writer.c) and the reader
 * (wal/reader.c):
 *
 *   crc (fixed32) | length (fixed16) | type (u8) | durable_off (fixed32) | payload[length]
 *
 * The file is a sequence of 32 KiB blocks; fragments never cross a block boundary; a block
 * tail shorter than a header is zero-filled. The crc is the masked CRC-32C of header bytes
 * 6..10 (type, durable_off) followed by the payload.
 */
#ifndef KURA_WAL_FORMAT_H
#define KURA_WAL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/coding.h"
#include "util/crc32c.h"

enum {
    WAL_BLOCK_SIZE = 32768,
    WAL_HEADER_SIZE = 11,
    WAL_MAX_PAYLOAD = WAL_BLOCK_SIZE - WAL_HEADER_SIZE, /* one fragment's payload */
};

/* durable_off is 32 bits, so a log file never grows past this many bytes. */
#define WAL_MAX_FILE_SIZE ((uint64_t)UINT32_MAX)

/* Fragment types. 0 is not a type: a header with type 0 and length 0 marks the end. */
typedef enum wal_frag_type {
    WAL_ZERO = 0,
    WAL_FULL = 1,
    WAL_FIRST = 2,
    WAL_MIDDLE = 3,
    WAL_LAST = 4,
} wal_frag_type;

/* A decoded header. Decoding checks nothing; see wal_frag_crc_ok(). */
typedef struct wal_frag_header {
    uint32_t masked_crc;
    uint16_t len;
    uint8_t type;
    uint32_t durable_off;
} wal_frag_header;

/* The stored (masked) checksum of a fragment whose header bytes are at hdr (only bytes 6..10,
 * type and durable_off, are read) and whose payload is payload[0..len). */
static inline uint32_t wal_frag_crc(const uint8_t *hdr, const void *payload, size_t len)
{
    return crc32c_mask(crc32c_extend(crc32c(hdr + 6, 5), payload, len));
}

/* Writes a complete header for `payload` at hdr (WAL_HEADER_SIZE bytes). */
static inline void wal_frag_encode(uint8_t *hdr, wal_frag_type type, uint32_t durable_off,
                                   const void *payload, uint16_t len)
{
    hdr[4] = (uint8_t)(len & 0xff);
    hdr[5] = (uint8_t)(len >> 8);
    hdr[6] = (uint8_t)type;
    enc_fixed32(hdr + 7, durable_off);
    enc_fixed32(hdr, wal_frag_crc(hdr, payload, len));
}

static inline void wal_frag_decode(const uint8_t *hdr, wal_frag_header *h_out)
{
    h_out->masked_crc = dec_fixed32(hdr);
    h_out->len = (uint16_t)(hdr[4] | (hdr[5] << 8));
    h_out->type = hdr[6];
    h_out->durable_off = dec_fixed32(hdr + 7);
}

/* True if the header at hdr, whose payload follows it, has a matching checksum. The caller
 * has checked that the payload lies inside the buffer. */
static inline bool wal_frag_crc_ok(const uint8_t *hdr, const wal_frag_header *h)
{
    return wal_frag_crc(hdr, hdr + WAL_HEADER_SIZE, h->len) == h->masked_crc;
}

#endif

/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of every WAL record and SSTable block.
 *
 * Uses the SSE4.2 crc32 instruction when the CPU has it (several times faster than zlib's
 * IEEE crc32), and a slicing-by-8 table otherwise; both give identical results.
 */
#ifndef KURA_UTIL_CRC32C_H
#define KURA_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The crc of data[0..n) continuing from `crc` (0 to start). */
uint32_t crc32c_extend(uint32_t crc, const void *data, size_t n);

static inline uint32_t crc32c(const void *data, size_t n)
{
    return crc32c_extend(0, data, n);
}

/* The table implementation, exposed so tests can compare the two paths. */
uint32_t crc32c_extend_portable(uint32_t crc, const void *data, size_t n);

/* Stored checksums are masked (rotated and offset, as LevelDB does) so that a crc computed
 * over data that itself contains crcs does not degenerate. */
static inline uint32_t crc32c_mask(uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
static inline uint32_t crc32c_unmask(uint32_t masked)
{
    uint32_t rot = masked - 0xa282ead8u;
    return (rot >> 17) | (rot << 15);
}

#endif

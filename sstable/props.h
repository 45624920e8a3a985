/*
 * props.h - the properties block: what a table holds, recorded when it is built.
 *
 * This file contains the properties of docs/format/sstable.md section 5. They are stored as a
 * block (block_builder.h) whose keys are property names in byte order and whose values are
 * varints or raw bytes. Unknown names are skipped on read, so properties can be added without
 * a new format version; the ones listed as required must be present.
 */
#ifndef KURA_SSTABLE_PROPS_H
#define KURA_SSTABLE_PROPS_H

#include <stdbool.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"

typedef struct sst_props {
    uint64_t entries;           /* required */
    uint64_t data_blocks;       /* required */
    uint64_t data_bytes;        /* data blocks on disk, trailers included */
    uint64_t compressed_blocks; /* data blocks stored compressed (the rest are raw) */
    uint64_t raw_key_bytes;     /* sum of internal key lengths */
    uint64_t raw_value_bytes;
    uint64_t min_seq, max_seq;  /* required; 0 and 0 for an empty table */
    uint32_t compression;       /* the kura_compression the table was built with */
    uint32_t bloom_bits_per_key;
    uint32_t format_version;    /* required */
    kbuf smallest, largest;     /* required; internal keys, empty for an empty table */
} sst_props;

/* Zeroes p (no allocation). */
void sst_props_init(sst_props *p);

/* Frees smallest/largest. */
void sst_props_clear(sst_props *p);

/* Appends the encoded properties block (uncompressed block bytes) to out. false on OOM. */
bool sst_props_encode(const sst_props *p, kbuf *out);

/*
 * Decodes the properties block data[0..len) read from offset `off` of `path` into *p_out
 * (which must be sst_props_init'ed; on failure it is left initialised and empty). Errors:
 * KURA_E_CORRUPTION naming path and off (malformed block, missing required property,
 * inconsistent values), KURA_E_NOMEM.
 */
kura_status sst_props_decode(const uint8_t *data, size_t len, const char *path, uint64_t off,
                             sst_props *p_out);

#endif

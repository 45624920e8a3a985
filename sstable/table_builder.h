/*
 * table_builder.h - writing an SSTable: options, the builder, and the meta it returns.
 *
 * This file contains the writer's contract. A table is written once, front to back, from
 * internal keys (util/ikey.h) given in strictly increasing ikey_cmp order, and is immutable
 * afterwards; the layout is docs/format/sstable.md. The file is synced before finish returns,
 * so a finished table is durable (its directory entry is the caller's business: the engine
 * syncs the directory before recording the table in its manifest).
 *
 * A builder belongs to one thread. All file I/O goes through the io_env given to
 * sst_builder_new (util/io.h).
 */
#ifndef KURA_SSTABLE_TABLE_BUILDER_H
#define KURA_SSTABLE_TABLE_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"
#include "util/io.h"

typedef struct sst_options {
    size_t block_size;            /* uncompressed data block target, default 4096 */
    int restart_interval;         /* entries per restart point in data blocks, default 16 */
    kura_compression compression; /* KURA_COMPRESS_NONE / LZ4 / ZLIB, default LZ4 */
    uint32_t bloom_bits_per_key;  /* default 10; 0 = no filters (key nor prefix) */
    /* Optional: the length of the routing prefix of a user key (the item layer's
     * `hash || enc(pk)`), 0 if the key has none; values above len are clamped to len. When
     * set (and bloom_bits_per_key > 0) the table gets a second filter over these prefixes,
     * probed by sst_reader_may_contain_prefix(). NULL = no prefix filter. Must be a pure
     * function of its arguments. */
    size_t (*prefix_len)(const uint8_t *ukey, size_t len);
} sst_options;

/* Fills *o with the defaults above. */
void sst_options_init(sst_options *o);

/* What the engine's manifest records about a finished table. */
typedef struct sst_meta {
    uint64_t file_size; /* bytes */
    uint64_t entries;
    uint64_t min_seq, max_seq; /* 0, 0 for an empty table */
    kbuf smallest, largest;    /* internal keys (empty for an empty table); owned by the meta,
                                  freed by sst_meta_clear */
} sst_meta;

/* Frees smallest/largest and zeroes the meta. NULL is a no-op. */
void sst_meta_clear(sst_meta *m);

typedef struct sst_builder sst_builder;

/*
 * Creates (truncating) the file at path (io_open_write, IO_KIND_SST) and a builder writing it.
 * `o` is copied; NULL means the defaults. env NULL means POSIX. Errors: those of
 * io_open_write, KURA_E_INVALID for unusable options, KURA_E_NOMEM.
 */
kura_status sst_builder_new(io_env *env, const char *path, const sst_options *o,
                            sst_builder **b_out);

/*
 * Adds an entry; ikey is an internal key (>= 8 bytes), both buffers are borrowed for the call.
 * Keys must arrive in strictly increasing ikey order: a violation is a programmer error
 * (assert in debug builds) and KURA_E_INVALID in release builds, with the builder unchanged.
 * An entry with iklen + vlen above 1 GiB is KURA_E_INVALID. After an I/O or memory error the
 * builder is failed: every later add returns that error (finish too).
 */
kura_status sst_builder_add(sst_builder *b, const uint8_t *ikey, size_t iklen,
                            const uint8_t *val, size_t vlen);

/* Bytes written so far plus the pending (unflushed) data block: what the file would take if
 * finished now, minus the meta blocks. Compaction uses it to cut output files. */
uint64_t sst_builder_file_size(const sst_builder *b);
uint64_t sst_builder_entries(const sst_builder *b);

/*
 * Writes the last data block, the filters, properties, index and footer, fdatasyncs and
 * closes the file, frees b, and on success fills *meta_out (caller clears it with
 * sst_meta_clear). b is freed either way; on error the file is left for the caller to unlink.
 * A table with no entries is valid (readable, empty).
 */
kura_status sst_builder_finish(sst_builder *b, sst_meta *meta_out);

/* Closes the file and frees b without finishing the table (the caller unlinks the file).
 * NULL is a no-op. */
void sst_builder_abandon(sst_builder *b);

#endif

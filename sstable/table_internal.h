/*
 * table_internal.h - what the reader's files (table_reader.c, block_read.c, table_iter.c)
 * share: the reader struct, its decoded index, and pinned block references.
 *
 * Not a public header: only sstable/ includes it.
 */
#ifndef KURA_SSTABLE_TABLE_INTERNAL_H
#define KURA_SSTABLE_TABLE_INTERNAL_H

#include "sstable/block.h"
#include "sstable/bloom.h"
#include "sstable/format.h"
#include "sstable/table_reader.h"
#include "util/thread.h"

/* A block's decoded bytes in one allocation: the header, then `block.size` bytes. For a raw
 * block the read lands here directly (with its trailer after the payload). */
typedef struct sst_blockmem {
    sst_block block; /* for filters only data/size are meaningful */
    uint8_t data[];
} sst_blockmem;

/* One data block as the reader keeps it: its separator key and its handle. */
typedef struct sst_index_entry {
    const uint8_t *key; /* internal key, into sst_reader.index_keys */
    size_t klen;
    sst_handle h;
} sst_index_entry;

/*
 * The index and the filters (the "loaded" part) can be dropped by sst_reader_unload() and are
 * read again by the next use: every entry point (get, may_contain, iter) calls
 * sst_reader_load() first, whose fast path is one acquire load of `loaded`. Loads serialise
 * on load_mu; an unload only ever runs while nothing else uses the reader, so a reader seen
 * loaded stays loaded while it is used.
 */
struct sst_reader {
    io_env *env;
    io_file *file;
    char *path;
    block_cache *cache; /* borrowed, may be NULL */
    uint64_t cache_id;
    sst_footer footer; /* where the index and filters are, to read them again */
    kmutex load_mu;
    bool loaded;         /* atomic: the fields below up to props are valid */
    size_t loaded_bytes; /* atomic: their memory, 0 while unloaded */
    sst_index_entry *index;
    size_t nblocks;
    uint8_t *index_keys;
    size_t index_key_bytes;
    sst_blockmem *key_filter_mem, *prefix_filter_mem;
    sst_bloom key_filter, prefix_filter;
    bool has_key_filter, has_prefix_filter;
    sst_props props;
    sst_meta meta;
};

/* Reads the index and the filters again if they were unloaded (errors as at open). */
kura_status sst_reader_load_slow(sst_reader *r);

static inline kura_status sst_reader_load(sst_reader *r)
{
    if (__atomic_load_n(&r->loaded, __ATOMIC_ACQUIRE))
        return KURA_OK;
    return sst_reader_load_slow(r);
}

/* A pinned data block: either a cache handle or memory the holder frees. */
typedef struct sst_block_ref {
    const sst_block *block; /* NULL: nothing pinned */
    block_cache_handle *cache_h;
    sst_blockmem *owned;
} sst_block_ref;

/*
 * Reads the block at h from f (`path` for messages) into a new sst_blockmem: verifies the
 * crc, then decompresses. The caller frees *mem_out. KURA_E_CORRUPTION names path and h.off.
 */
kura_status sst_read_contents(io_file *f, const char *path, sst_handle h,
                              sst_blockmem **mem_out);

/* Pins data block number bi (< r->nblocks), from the cache or the file; fill_cache decides
 * whether a block read from the file is inserted. */
kura_status sst_reader_block(sst_reader *r, size_t bi, bool fill_cache, sst_block_ref *ref_out);

/* Unpins (or frees) the block; the ref becomes empty. Empty refs are a no-op. */
void sst_block_ref_release(sst_reader *r, sst_block_ref *ref);

/* The first data block whose separator is >= ikey (r->nblocks if none). */
size_t sst_index_lower_bound(const sst_reader *r, const uint8_t *ikey, size_t iklen);

/* Turns a block cursor's error into a status with the message "<path>: <what> at offset". */
kura_status sst_block_error(const sst_reader *r, size_t bi, kura_status err);

#endif

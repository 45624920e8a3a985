/*
 * table_reader.h - reading an SSTable: point lookups, filters and iterators.
 *
 * This file contains the reader's contract. Opening a table reads and verifies its footer,
 * index, filters and properties and keeps them in memory; data blocks are read on demand,
 * through the shared block cache when one is given. Every block read verifies its crc, and
 * every length and offset is checked before use: damage is reported as KURA_E_CORRUPTION with
 * the message "<path>: <what> at offset <off>" and never yields wrong data or a crash.
 *
 * Thread safety: after open, an sst_reader is immutable but for sst_reader_unload. Any number
 * of threads may call sst_reader_get, the may_contain functions and sst_reader_iter
 * concurrently; each iterator belongs to one thread. The format is docs/format/sstable.md.
 */
#ifndef KURA_SSTABLE_TABLE_READER_H
#define KURA_SSTABLE_TABLE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "sstable/block_cache.h"
#include "sstable/props.h"
#include "sstable/table_builder.h"
#include "util/buf.h"
#include "util/io.h"
#include "util/iter.h"

typedef struct sst_reader sst_reader;

/*
 * Opens the table at path, whose size is file_size (as recorded in the manifest). env NULL
 * means POSIX. cache (borrowed; must outlive the reader) may be NULL: data blocks are then
 * read per access and owned by the lookup or iterator that reads them. Errors:
 * KURA_E_NOT_FOUND (no file), KURA_E_IO, KURA_E_CORRUPTION (message with path and offset,
 * also for a file shorter than file_size), KURA_E_NOT_SUPPORTED (newer format version),
 * KURA_E_NOMEM.
 */
kura_status sst_reader_open(io_env *env, const char *path, uint64_t file_size,
                            block_cache *cache, sst_reader **r_out);

/* Closes the file and frees the reader. No iterator of it may still exist. NULL is a no-op.
 * Its blocks still in the cache age out (their ids are never reused). */
void sst_reader_close(sst_reader *r);

/*
 * Point lookup. ikey = user_key || trailer(snapshot_seq, IKEY_TYPE_SEEK): finds the first
 * entry >= ikey. If its user key equals the target's: *found_out = true, *type_out = its type
 * (IKEY_TYPE_VALUE or IKEY_TYPE_DELETE), and for a VALUE the value is copied into val_out
 * (cleared first; caller-owned; may be NULL to skip the copy). Otherwise *found_out = false
 * and the other outputs are untouched. The key filter is checked first. fill_cache false
 * reads a missing block without inserting it (a cached block is still used).
 * Errors: KURA_E_INVALID (iklen < 8), KURA_E_CORRUPTION, KURA_E_IO, KURA_E_NOMEM.
 */
kura_status sst_reader_get(sst_reader *r, const uint8_t *ikey, size_t iklen, bool fill_cache,
                           kbuf *val_out, unsigned *type_out, bool *found_out);

/* false: no user key with this routing prefix is in the table (sst_options.prefix_len).
 * true: maybe (always, if the table has no prefix filter). */
bool sst_reader_may_contain_prefix(sst_reader *r, const uint8_t *prefix, size_t len);

/* false: the user key is certainly not in the table. true: maybe (always without filter). */
bool sst_reader_may_contain_key(sst_reader *r, const uint8_t *ukey, size_t len);

/*
 * An iterator over the table's internal keys with full forward/backward/seek support (seek
 * takes an internal key: first entry >= it). Keys and values point into blocks the iterator
 * pins, valid until its next move. Holds no lock; r must outlive it. After an I/O error or
 * corruption the iterator stays invalid and kv_iter_status() returns the error (and restores
 * its message in kura_last_error()). Free with kv_iter_free(). NULL on OOM.
 */
kv_iter *sst_reader_iter(sst_reader *r, bool fill_cache);

/*
 * Frees the in-memory index and filters (what a reader holds beyond a few hundred bytes, about
 * 2-4% of the table's size); the next lookup or iterator reads and checks them again, and
 * reports a failure to do so as open would (KURA_E_IO, KURA_E_CORRUPTION with path and offset;
 * the may_contain functions then answer "maybe"). For a process going idle. The caller
 * guarantees that no other thread uses r meanwhile and that no iterator of r exists.
 */
bool sst_reader_unload(sst_reader *r); /* false: it was not loaded */

/* Bytes of index and filters the reader holds in memory now (0 after sst_reader_unload). Any
 * thread, any time. */
size_t sst_reader_memory(const sst_reader *r);

/*
 * Integrity check (sstable/table_verify.c; `kura check`): reads every data block from the
 * file, never from the cache, and checks its crc, its entries, that keys strictly increase
 * across blocks and lie between their index separators, that the key filter holds every user
 * key, and that the entry count and the first and last keys are the properties'. Each damaged
 * block is reported through fn as one line "<path>: <what> at offset <off>" and the next block
 * is still read. *st counts blocks and entries read and the lines reported (st->problems).
 * Returns KURA_OK when the table was read through (damage is in st and the lines);
 * KURA_E_NOMEM, or the reader's error when its unloaded index cannot be read again. Any
 * thread, concurrently with lookups and iterators.
 */
typedef void (*sst_verify_fn)(void *arg, const char *line);
typedef struct sst_verify_stats {
    uint64_t blocks, entries, problems;
} sst_verify_stats;
kura_status sst_reader_verify(sst_reader *r, sst_verify_fn fn, void *arg, sst_verify_stats *st);

/* The table's meta (smallest/largest/entries/seqs/file size), owned by the reader. */
const sst_meta *sst_reader_meta(const sst_reader *r);

/* Everything the properties block records, owned by the reader. */
const sst_props *sst_reader_props(const sst_reader *r);

#endif

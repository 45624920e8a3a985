/*
 * version.h - an immutable view of a partition's SSTables: the files of each level.
 *
 * Level 0 holds flushed memtables, which may overlap; they are ordered by file number (newest
 * last) and searched newest first. Levels 1..6 each hold sorted, non-overlapping files; a user
 * key never spans two files of one level (compaction only splits outputs between user keys).
 *
 * Versions and files are reference counted (atomics). A reader pins a version for as long as it
 * reads from its files. A file removed by an edit is marked obsolete and its SSTable is deleted
 * when the last version holding it goes away. Thread safety: a version is immutable once
 * installed; refcounts are atomic.
 */
#ifndef KURA_LSM_VERSION_H
#define KURA_LSM_VERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/lsm/shared.h"
#include "sstable/table_reader.h"
#include "util/buf.h"
#include "util/iter.h"

typedef struct file_meta {
    int refs;
    bool obsolete; /* delete the file when the last reference goes */
    bool being_compacted;
    uint64_t number, file_size, entries, min_seq, max_seq;
    kbuf smallest, largest; /* internal keys */
    sst_reader *reader;
    io_env *io;
    char *path; /* owned */
} file_meta;

typedef struct version {
    int refs;
    file_meta **files[LSM_LEVELS];
    size_t nfiles[LSM_LEVELS];
    int compaction_level; /* best level to compact, by score */
    double compaction_score;
    int base_level; /* where level 0 compacts to (dynamic level sizes, see version_score) */
} version;

/* Opens the SSTable (reader into the shared block cache). Returns a file with refcount 1. */
kura_status file_meta_open(io_env *io, block_cache *cache, const char *dir, uint64_t number,
                           uint64_t file_size, uint64_t entries, uint64_t min_seq,
                           uint64_t max_seq, const uint8_t *smallest, size_t slen,
                           const uint8_t *largest, size_t llen, file_meta **f_out);
void file_meta_ref(file_meta *f);
void file_meta_unref(file_meta *f);

version *version_new(void);
void version_ref(version *v);
void version_unref(version *v);

/* Sum of file sizes in a level. */
uint64_t version_level_bytes(const version *v, int level);

/* Computes base_level and compaction_level/score. Level sizes are dynamic, as RocksDB's
 * level_compaction_dynamic_level_bytes: the last level holds most data; level n's target is
 * max(level1_bytes, bytes(last) / 10^(last - n)); level 0 compacts into the base level, the
 * highest level whose target is still >= level1_bytes. A small tree thus keeps one run in the
 * last level plus level 0, instead of a chain of half-empty levels that each cost a read.
 * Scores: L0 = files / trigger; Ln = bytes / target. */
void version_score(version *v, const lsm_options *o);

/* Looks key up at snapshot: KURA_OK with the value in val_out, KURA_E_NOT_FOUND if missing or
 * deleted, or an I/O / corruption error. *found_out says whether any version decided it. */
kura_status version_get(version *v, const uint8_t *ikey, size_t iklen, bool fill_cache,
                        kbuf *val_out, bool *found_out);

/* Appends to *files (a growable array) every file of `level` whose user-key range overlaps
 * [lo, hi] (user keys; NULL = unbounded). For level 0 the range is widened to the union of the
 * overlapping files, as LevelDB does, so that no newer L0 version is left behind. */
kura_status version_overlapping(const version *v, int level, const uint8_t *lo, size_t lolen,
                                const uint8_t *hi, size_t hilen, file_meta ***files,
                                size_t *n, size_t *cap);

/* Whether any file in levels > level may contain the user key (for dropping tombstones). */
bool version_key_may_exist_below(const version *v, int level, const uint8_t *ukey, size_t len);

/* Appends internal iterators over every file of the version: one per L0 file, one concatenating
 * iterator per deeper level. The version must stay pinned while they live. */
kura_status version_add_iters(version *v, bool fill_cache, kv_iter ***its, size_t *n, size_t *cap);

/* An iterator concatenating the given sorted, non-overlapping files (borrowed array must live as
 * long as the iterator, files pinned by the caller). */
kv_iter *version_files_iter(file_meta **files, size_t n, bool fill_cache);

/* Appends p to a growable pointer array. */
bool ptr_push(void ***arr, size_t *n, size_t *cap, void *p);

#endif

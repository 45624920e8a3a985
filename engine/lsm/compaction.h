/*
 * compaction.h - choosing compactions and writing sorted runs of SSTables.
 *
 * Leveled compaction with dynamic level sizes (version_score): level 0 compacts into the base
 * level when it holds l0_compaction_trigger files, level n >= 1 into n+1 when it outgrows its
 * target. A compaction merges the chosen files with the overlapping files of the output level
 * into new files of the output level. The same writer (build_tables) also flushes memtables.
 *
 * What a merge drops: a version of a key hidden by a newer version that every reader can see
 * (both at or below the oldest snapshot), and a tombstone at or below the oldest snapshot when no
 * deeper level can hold the key (so it shadows nothing): "tombstones disappear at the bottom".
 */
#ifndef KURA_LSM_COMPACTION_H
#define KURA_LSM_COMPACTION_H

#include "engine/lsm/version.h"
#include "engine/lsm/version_edit.h"
#include "sstable/table_builder.h"

typedef struct compaction {
    int level;     /* inputs[0] come from here */
    int out_level; /* inputs[1] and the outputs */
    file_meta **inputs[2];
    size_t ninputs[2], cap[2];
    bool trivial_move; /* one file, nothing to merge with: move it down */
} compaction;

/* The compaction the version most needs (score >= 1), or NULL. compact_pointer[level] (an
 * internal key, may be empty) makes each level's compactions go round-robin through its key
 * space; it is updated. On allocation failure returns NULL too. */
compaction *compaction_pick(version *v, kbuf *compact_pointer);
/* All files of `level` and their overlaps in the next level below that holds data (or the
 * last level): one step of a manual full compaction. NULL if the level is empty. */
compaction *compaction_whole_level(version *v, int level);
void compaction_free(compaction *c);
/* Adds the deletion of every input to the edit. */
kura_status compaction_delete_inputs(const compaction *c, version_edit *e);
/* One merging iterator over all inputs. */
kv_iter *compaction_iter(compaction *c);

typedef struct build_ctx {
    io_env *io;
    const char *dir;
    sst_options sopts;
    uint64_t (*new_file)(void *arg); /* allocates a file number (under the partition lock) */
    void *new_file_arg;
    uint64_t target_bytes;   /* split outputs at about this size; 0 = a single file */
    uint64_t oldest_snapshot;
    const version *base;     /* for tombstone dropping; NULL = keep every tombstone */
    int out_level;
    version_edit *edit;      /* outputs are added here */
    /* results */
    uint64_t *made;          /* numbers of the files created, for cleanup on failure */
    size_t nmade, made_cap;
    uint64_t bytes_written, entries_written, entries_dropped;
} build_ctx;

/* Writes every surviving entry of `it` (from its first entry) into new tables of out_level and
 * records them in the edit. On failure the created files are left for the caller to unlink
 * (build_ctx_unlink_outputs). The crash point "flush.after_table" / "compaction.after_tables"
 * is the caller's. */
kura_status build_tables(build_ctx *c, kv_iter *it);
void build_ctx_unlink_outputs(build_ctx *c);
void build_ctx_free(build_ctx *c);

#endif

/*
 * version_set.h - a partition's current version and its MANIFEST (docs/format/manifest.md).
 *
 * The MANIFEST is a log (WAL framing, wal/) of version edits; CURRENT names the live manifest
 * and is replaced atomically (write, fsync, rename, fsync the directory). Every open starts a
 * new manifest holding one snapshot edit, so manifests never grow without bound; a manifest
 * that passes MANIFEST_ROTATE_BYTES is rotated the same way.
 *
 * Thread safety: none of its own. The owning partition calls every function with its mutex
 * held (log_and_apply does I/O under it; flushes and compactions are rare enough).
 */
#ifndef KURA_LSM_VERSION_SET_H
#define KURA_LSM_VERSION_SET_H

#include "engine/lsm/version.h"
#include "engine/lsm/version_edit.h"
#include "wal/writer.h"

typedef struct version_set {
    io_env *io;
    block_cache *cache;
    const lsm_options *opts;
    const char *dir; /* borrowed from the partition */
    uint64_t next_file;
    uint64_t log_number; /* WALs below this are obsolete */
    uint64_t last_seq;   /* highest sequence in any table */
    uint64_t manifest_number;
    wal_writer *manifest;
    version *current;
    bool created; /* vs_open made a new tree: no WAL segment exists yet */
    edit_wal_end *wal_ends; /* recorded ends of live WAL segments (see version_edit.h) */
    size_t nwal_ends, wal_ends_cap;
    kbuf user_meta; /* the last recorded user checkpoint (empty: none) */
} version_set;

/* The recorded end of WAL segment `number`, or -1 if none was recorded. */
int64_t vs_wal_end(const version_set *vs, uint64_t number);

/* Recovers from CURRENT (or, with `create` and no CURRENT, starts empty), then writes a fresh
 * manifest and switches CURRENT to it. */
kura_status vs_open(version_set *vs, io_env *io, block_cache *cache, const lsm_options *opts,
                    const char *dir, bool create);
void vs_close(version_set *vs);

static inline uint64_t vs_new_file_number(version_set *vs)
{
    return vs->next_file++;
}

/* Records the edit durably in the manifest and installs the resulting version as current.
 * Files named by added entries must already be complete on disk. On failure nothing is
 * installed and the caller must treat the partition as failed (the manifest may hold a torn
 * record): callers set the partition read-only. */
kura_status vs_log_and_apply(version_set *vs, version_edit *e);

/* What a partition's CURRENT and MANIFEST say, read without a version set (`kura check`,
 * engine/lsm/lsm_check.c). */
typedef struct vs_manifest {
    uint64_t number;   /* MANIFEST-<number>, named by CURRENT */
    version_edit live; /* its edits folded: the live files as additions */
    size_t records;    /* edits read */
    int64_t torn_at;   /* -1, or the offset of a torn record that ended it */
} vs_manifest;
/* Reads CURRENT and the manifest it names from `dir` as recovery does (the same messages:
 * KURA_E_CORRUPTION naming the file and offset, a missing CURRENT or manifest, a manifest
 * without a complete record), KURA_E_IO, KURA_E_NOMEM. *m is set up either way: free it with
 * vs_manifest_free. */
kura_status vs_manifest_read(io_env *io, const char *dir, vs_manifest *m);
void vs_manifest_free(vs_manifest *m);

#endif

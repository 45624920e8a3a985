/*
 * version_edit.h - one change to a partition's set of SSTables, as recorded in its MANIFEST
 * (docs/format/manifest.md): files added and removed per level, and the counters
 * (log number, next file number, last sequence) that recovery needs.
 */
#ifndef KURA_LSM_VERSION_EDIT_H
#define KURA_LSM_VERSION_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"

typedef struct edit_file {
    int level;
    uint64_t number, file_size, entries, min_seq, max_seq;
    kbuf smallest, largest; /* internal keys */
} edit_file;

typedef struct edit_deleted {
    int level;
    uint64_t number;
} edit_deleted;

/* Where a WAL segment's records ended when a recovery replayed it (so that a later recovery
 * can tell damage from a torn tail: the segment was complete up to here). */
typedef struct edit_wal_end {
    uint64_t number, end;
} edit_wal_end;

typedef struct version_edit {
    bool has_log_number, has_next_file, has_last_seq;
    uint64_t log_number; /* WAL segments numbered below this are no longer needed */
    uint64_t next_file;
    uint64_t last_seq;
    edit_file *added;
    size_t nadded, added_cap;
    edit_deleted *deleted;
    size_t ndeleted, deleted_cap;
    edit_wal_end *wal_ends;
    size_t nwal_ends, wal_ends_cap;
    /* The owner's checkpoint (lsm_switch_memtable): opaque bytes the tree keeps for the layer
     * above, e.g. how far an index has applied its base table's WALs; the last one wins. */
    bool has_user_meta;
    kbuf user_meta;
} version_edit;

void edit_init(version_edit *e);
void edit_free(version_edit *e);
kura_status edit_add_file(version_edit *e, int level, uint64_t number, uint64_t file_size,
                          uint64_t entries, uint64_t min_seq, uint64_t max_seq,
                          const uint8_t *smallest, size_t slen, const uint8_t *largest,
                          size_t llen);
kura_status edit_delete_file(version_edit *e, int level, uint64_t number);
kura_status edit_add_wal_end(version_edit *e, uint64_t number, uint64_t end);
kura_status edit_set_user_meta(version_edit *e, const uint8_t *p, size_t len);

/* Appends the encoding to out. */
kura_status edit_encode(const version_edit *e, kbuf *out);
/* Decodes into an initialised, empty edit. `what` names the file and offset for messages. */
kura_status edit_decode(version_edit *e, const uint8_t *p, size_t len, const char *what);

#endif

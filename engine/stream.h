/*
 * stream.h - the change stream's view of a table's WAL records (engine/stream_changes.c):
 * which item changes DynamoDB Streams would record, with their images.
 *
 * A table with a stream writes, like a table with indexes, every item change as a put or a
 * delete followed by the old image of the item (docs/format/wal.md, "image"), and before its
 * writes a meta entry with the wall-clock time and whether the database itself made them (a
 * Time to Live delete). From that a record is:
 *   INSERT  a put whose old image is empty (the item did not exist);
 *   MODIFY  a put over an item that differs from it (DynamoDB's equality: sets in any order);
 *   REMOVE  a delete of an item that existed.
 * A put of an item equal to the one it replaces, and a delete of an item that did not exist,
 * change nothing and make no record, as in DynamoDB.
 */
#ifndef KURA_ENGINE_STREAM_H
#define KURA_ENGINE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/lsm/lsm.h"
#include "kura.h"

typedef enum stream_event {
    STREAM_INSERT = 1,
    STREAM_MODIFY = 2,
    STREAM_REMOVE = 3,
} stream_event;

/* One recorded change; the pointers lie in the batch read (valid while it is). */
typedef struct stream_change {
    stream_event event;
    uint64_t seq;        /* the write's sequence number */
    uint32_t index;      /* the write's entry number in its batch */
    const uint8_t *key;  /* the storage key (docs/format/keys.md) */
    size_t klen;
    const uint8_t *new_enc; /* the encoded new item (docs/format/item.md); NULL for REMOVE */
    size_t new_len;
    const uint8_t *old_enc; /* the encoded old item; NULL for INSERT */
    size_t old_len;
    uint64_t time_ms;    /* from the batch's meta entry; 0 without one */
    bool service;        /* made by the database itself (a Time to Live delete) */
} stream_change;

typedef kura_status (*stream_change_fn)(void *arg, const stream_change *c);

/*
 * Calls fn for each recorded change of the batch `rep` (a record of a table's WAL, its
 * sequences resolved: lsm_rep_resolve), in order. A write without its image, or an image
 * that follows no write of its item, is KURA_E_CORRUPTION naming `what`; an item image that
 * does not decode is the decoder's error.
 */
kura_status stream_changes(const uint8_t *rep, size_t len, const char *what, stream_change_fn fn,
                           void *arg);

/* ---- Reading a shard (engine/stream_read.c) ----------------------------------------------
 *
 * A shard is a base partition; its records are its WAL's changes in WAL order. A position is
 * a WAL record's (lsm_wal_pos) and the number of the first change of that record still to
 * read (a batch or a transaction's piece holds several). Reading stops at the frontier: a
 * record whose sequences are not yet visible to readers, or a piece of a transaction that is
 * still committing; a piece of a transaction that did not commit is passed over. */
struct lsm_tree;
struct kura_db;

typedef struct stream_pos {
    uint64_t segment, offset;
    uint32_t index;
} stream_pos;

/* KURA_E_BUSY from fn: stop before this change (it is read next time; not an error). */
typedef kura_status (*stream_rec_fn)(void *arg, const stream_change *c, stream_pos at);

/*
 * Calls fn for up to max_changes changes of `part` (a partition of a tree of `db` whose
 * writes carry images) from `from` on, stopping at the frontier and before the record at
 * `end` (a closed shard's end; {UINT64_MAX, UINT64_MAX}: none). *next_out: where to go on.
 * Errors: those of lsm_wal_read (KURA_E_NOT_FOUND: trimmed) and stream_changes, and fn's.
 */
kura_status stream_read(struct kura_db *db, struct lsm_tree *part, stream_pos from,
                        lsm_wal_pos end, size_t max_changes, stream_rec_fn fn, void *arg,
                        stream_pos *next_out);

/* ---- Names (engine/stream_ids.c) ----------------------------------------------------------
 *
 * A stream's label is its creation time, "2026-11-27T01:58:00.123" (UTC), as DynamoDB's; its
 * ARN is the table's followed by "/stream/" and the label. A shard id names the stream's
 * creation (ms) and the partition: "shardId-00000001795743480123-00000003". A sequence
 * number is a change's position, 25 digits: the WAL segment (10), the record's offset (10),
 * the change's number in the record (5); it grows in a shard's order (DynamoDB's are 21 to
 * 40 digits and compared as numbers). */
enum { STREAM_LABEL_LEN = 23, STREAM_SHARD_ID_LEN = 37, STREAM_SEQNUM_LEN = 25 };
void stream_label(uint64_t ms, char out[STREAM_LABEL_LEN + 1]);
bool stream_label_parse(const char *s, uint64_t *ms_out);
void stream_shard_id(uint64_t label_ms, uint32_t part, char out[STREAM_SHARD_ID_LEN + 1]);
bool stream_shard_parse(const char *s, uint64_t *label_ms_out, uint32_t *part_out);
/* False if the position does not fit (a segment or offset of more than 10 digits). */
bool stream_seqnum(stream_pos p, char out[STREAM_SEQNUM_LEN + 1]);
bool stream_seqnum_parse(const char *s, stream_pos *out);

#endif

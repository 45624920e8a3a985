/*
 * batch.h - the write batch: an ordered list of puts and deletes applied atomically.
 *
 * The representation is exactly the payload of a WAL record (docs/format/wal.md, "batch
 * record"), so the write path appends it without re-encoding:
 *
 *   seq   fixed64   sequence number of the first entry (entry i has seq + i)
 *   count fixed32   number of entries
 *   entries         type u8 (IKEY_TYPE_VALUE / IKEY_TYPE_DELETE / LSM_BATCH_IMAGE)
 *                   | varint klen | key | (values and images) varint vlen | value
 *
 * An image entry (LSM_BATCH_IMAGE) is a record for the WAL's readers, not a write: the item
 * layer puts the old image of an item it overwrites there, so that its secondary indexes can
 * be maintained from the WAL (index/, docs/format/wal.md). It takes a sequence number like
 * every entry but never reaches a memtable or a table.
 */
#ifndef KURA_LSM_BATCH_H
#define KURA_LSM_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"
#include "util/buf.h"

enum {
    BATCH_HEADER = 12,
    LSM_BATCH_IMAGE = 0x10, /* entry type: an old image, skipped when applied */
    LSM_BATCH_TXN = 0x11,   /* entry type: the first entry of a transaction's piece */
    LSM_BATCH_META = 0x12,  /* entry type: when, and by whom, the writes after it were made */
    LSM_BATCH_META_BYTES = 9,
    LSM_META_SERVICE = 1,   /* meta flag: written by the database itself (a TTL delete) */
};


typedef struct lsm_batch {
    kbuf rep; /* always at least BATCH_HEADER bytes once initialised */
} lsm_batch;

void lsm_batch_init(lsm_batch *b);
void lsm_batch_free(lsm_batch *b);
void lsm_batch_clear(lsm_batch *b);
kura_status lsm_batch_put(lsm_batch *b, const void *key, size_t klen, const void *val,
                          size_t vlen);
kura_status lsm_batch_delete(lsm_batch *b, const void *key, size_t klen);
/* An image entry (see above): `val` may be empty (vlen 0). */
kura_status lsm_batch_image(lsm_batch *b, const void *key, size_t klen, const void *val,
                            size_t vlen);

static inline uint32_t lsm_batch_count(const lsm_batch *b)
{
    return dec_fixed32(b->rep.data + 8);
}
static inline uint64_t lsm_rep_seq(const uint8_t *rep)
{
    return dec_fixed64(rep);
}
static inline void lsm_rep_set_seq(uint8_t *rep, uint64_t seq)
{
    enc_fixed64(rep, seq);
}
static inline uint32_t lsm_rep_count(const uint8_t *rep)
{
    return dec_fixed32(rep + 8);
}

/*
 * A transaction's piece (engine/lsm/lsm_txn.c, docs/architecture.md "Transactions") is a
 * batch whose first entry has type LSM_BATCH_TXN, no value, and as its key the transaction's
 * id (fixed64: the first sequence number of the transaction's range). It is written to the
 * partition's WAL before the transaction commits; replays apply it only if the commit record
 * of that id exists (lsm_shared.txn_committed). The marker takes a sequence number but is
 * never applied, like an image.
 */
kura_status lsm_batch_txn_marker(lsm_batch *b, uint64_t txn_id);
/* Whether rep (a batch) is a transaction's piece; its id in *txn_id_out. */
bool lsm_rep_txn_id(const uint8_t *rep, size_t len, uint64_t *txn_id_out);

/*
 * A meta entry (LSM_BATCH_META) describes the writes that follow it in the batch, for the
 * change stream (engine/stream.h): empty key, value = fixed64 wall-clock ms since the epoch,
 * u8 flags (LSM_META_SERVICE). Like an image it takes a sequence number and is never applied.
 */
kura_status lsm_batch_meta(lsm_batch *b, uint64_t ms, uint8_t flags);

/* Walks the entries of a batch representation (e.g. one read back from the WAL), calling fn
 * for each with its sequence number (image entries too: appliers skip them). Stops at the first non-OK return of fn and returns it.
 * A malformed rep is KURA_E_CORRUPTION (message names `what`, e.g. the WAL path and offset). */
typedef kura_status (*lsm_batch_fn)(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                                    size_t klen, const uint8_t *val, size_t vlen);
kura_status lsm_rep_iterate(const uint8_t *rep, size_t len, lsm_batch_fn fn, void *arg,
                            const char *what);

#endif

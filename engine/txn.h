/*
 * txn.h - transactions at the storage level (engine/txn_log.c): writes to any number of
 * partitions of any trees that readers see all together or not at all, also after a crash at
 * any point (docs/architecture.md, "Transactions"; the protocol's partition side is
 * engine/lsm/lsm.h "Transactions").
 *
 * The transaction log is a tree of one partition, DIR/#txn, outside the catalog (no user
 * tree can be named with '#'), opened before every other tree because their recovery asks it
 * whether each transaction piece they replay committed. It holds one commit record per
 * transaction that spans more than one partition: key 'c' + the transaction id (big-endian
 * fixed64, the first sequence number of its range), empty value (docs/format/wal.md,
 * "Transactions"), and the client request tokens of committed transactions (below).
 */
#ifndef KURA_ENGINE_TXN_H
#define KURA_ENGINE_TXN_H

#include "engine/db_int.h"

struct txn_token;

/* What a transaction writes to one partition: puts, deletes and images, no marker. */
typedef struct txn_piece {
    lsm_tree *part;
    lsm_batch batch;
} txn_piece;

/* At kura_open, before the catalog's trees: opens (creating) the transaction log and makes
 * it the database's judge of committed pieces. */
kura_status txn_log_open(kura_db *db);
/* At kura_close, after every other tree: closes it. */
kura_status txn_log_close(kura_db *db);

/*
 * Commits the pieces atomically: at most one piece per partition (KURA_E_INVALID otherwise),
 * their batches' sequence fields overwritten. One piece is a plain write of its partition;
 * several are led, prepared (durable, whatever the durability: the commit record must never
 * be durable before them), committed by a commit record (durable when `sync`) and applied
 * under one sequence range. On failure nothing is visible; a failure after the commit record
 * was handed to the log leaves the outcome to the next open (the record may be durable), as
 * for any write whose sync failed.
 */
kura_status txn_commit(kura_db *db, txn_piece *pieces, size_t n, bool sync,
                       const struct txn_token *tok);

/*
 * Deletes the commit records no WAL segment can still need and the tokens past the
 * idempotency window. A commit record must stay while any live segment of any partition
 * holds a piece of its transaction (a replay would take the piece for aborted without it):
 * records below G = the lowest transaction id any live segment holds (lsm_min_txn), and
 * below every transaction still in flight (visible + 1: a transaction's range is not
 * visible until it is applied), are dropped. `watermark`: G as computed by
 * txn_log_watermark with db->mu held (the tree list). Run by the database's syncer thread
 * every TXN_COLLECT_MS.
 */
#define TXN_COLLECT_MS 10000u
uint64_t txn_log_watermark(kura_db *db);
kura_status txn_log_collect(kura_db *db, uint64_t watermark);

/* Whether transaction `id` is committing now (its outcome not yet final): a reader of the
 * WALs that meets one of its pieces waits rather than judge it (engine/stream_read.c). */
bool txn_is_committing(kura_db *db, uint64_t id);

/* ---- Client request tokens (TransactWriteItems' idempotency) ----------------------------------
 *
 * A committed transaction with a token records, in the same batch as its commit record (so
 * atomically with its writes), 't' + the token -> fixed64 hash of the request, fixed64 wall
 * clock in ms. A transaction that writes nothing records it alone. */
typedef struct txn_token {
    const char *token;
    uint64_t hash; /* of every parameter of the request but the token */
    uint64_t ms;   /* when it committed (CLOCK_REALTIME) */
} txn_token;
/* The record of `token`: *found_out, and its hash and time. */
kura_status txn_token_get(kura_db *db, const char *token, bool *found_out, uint64_t *hash_out,
                          uint64_t *ms_out);
/* Marks `token` as running; KURA_E_TXN_IN_PROGRESS ("The transaction with the given request
 * token is already in progress.") if it is. txn_token_end unmarks it. */
kura_status txn_token_begin(kura_db *db, const char *token);
void txn_token_end(kura_db *db, const char *token);

#endif

/*
 * fxwork.h - the workload of the combined crash tests (crash_features_*_test.c): every
 * feature at once on four tables, and the models that check what survives a crash
 * (tests/crash/fxwork.c: tables and items; fxmodel.c: the item model; fxbank.c: the bank).
 *
 * The tables (FX_PARTITIONS partitions each unless the options say otherwise):
 *  - "FxItems": pk, sk. LSIs LKeys (lsk, KEYS_ONLY), LIncl (lsk2, INCLUDE x, v), LAll (gr,
 *    ALL); GSIs GAll (g1 HASH, gr RANGE, ALL), GIncl (lsk2 HASH, INCLUDE x), GMulti (four
 *    HASH m1..m4 and four RANGE r1..r4 attributes of types S, N, B, KEYS_ONLY); a stream
 *    (NEW_AND_OLD_IMAGES); Time to Live on "exp". Every index key attribute is optional, so
 *    every index is sparse. The GSI GNew (x HASH, lsk RANGE, INCLUDE v) is created and
 *    deleted by UpdateTable while the writers run (an online backfill).
 *  - "FxA": accounts (pk). GSI ByOwner (owner, bal; ALL).
 *  - "FxB": accounts and escrow items (pk, sk). LSI BByBal (bal, ALL; sparse: escrow items
 *    have no bal); GSIs BBal (bal, KEYS_ONLY), Escrows (esc_of, INCLUDE amt: escrow items
 *    only); a stream (NEW_AND_OLD_IMAGES).
 *  - "FxL": the bank writers' ledgers and the "config" item, no index.
 * Every index moves with the bank's transactions (bal changes in each): the pattern of issue
 * 22. (Each table's partitions and each index's are LSM trees of their own: the tests' opens
 * cost about a tree's worth of manifest and directory work each, so indexes that add no case
 * are left out.)
 *
 * Items (FxItems). Writers own disjoint items: writer t's item k has pk "w<t>.p<k % 4>" and
 * sk "k<k>"; FX_BULK static items (pk "b.p<i % 16>", sk "b<i>", written once at setup) make
 * backfills and collection fills take time. Operation j of writer t is a pure function of
 * (seed, t, j): PutItem, UpdateItem, DeleteItem, BatchWriteItem (2-4 puts and deletes) or
 * TransactWriteItems (2-3 Puts, Updates and Deletes over several partitions, and sometimes a
 * ConditionCheck of another item). Every put and update writes the whole item, a pure
 * function of its tag (t, j, entry): "v" names the tag, and every optional attribute (the
 * index keys, x, exp, pad) is set or removed by the tag's hash, so an UpdateItem's result
 * does not depend on the item before it. One version in eight is *doomed*: its exp is a
 * Number before FX_NOW, the time the TTL clock shows, and the sweeper may delete it at any
 * time; others have no exp, an exp in the far future, or a String exp (ignored by TTL).
 *
 * The bank (FxA, FxB, FxL). FX_NACC accounts (even numbers in FxA, odd ones in FxB over
 * four item collections) start with FX_START each. Bank writer w's transaction at ledger
 * seq s is one of: a transfer (Update two accounts, bal -/+ amount, ops + 1, the source
 * conditioned on bal >= amount; Update its ledger: seq s -> s + 1, conditioned on seq = s,
 * touches + 2; ConditionCheck of config), an escrow out (Update an account -amount; Put the
 * writer's escrow item in FxB, conditioned on its absence; ledger, touches + 1) or an escrow
 * in (Delete the escrow item, conditioned on its amount; Update an account +amount; ledger,
 * touches + 1; ConditionCheck of config). Invariants: the accounts and escrows hold
 * FX_NACC * FX_START; the accounts' ops add up to the ledgers' touches; a ledger is at its
 * last acknowledged seq or one more.
 *
 * Thread safety: fx_item_exec and fx_bank_exec may run in one thread per writer at once;
 * fxm_attempt / fxm_ack for distinct writers likewise; everything else is single-threaded.
 */
#ifndef KURA_TESTS_CRASH_FXWORK_H
#define KURA_TESTS_CRASH_FXWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"

enum {
    FX_MAX_WRITERS = 8,
    FX_MAX_KEYS = 200,
    FX_MAX_PAD = 1000,
    FX_MAX_BANK = 8,
    FX_NACC = 24,
    FX_START = 1000,
};

#define FX_NOW 2000000000LL /* the TTL clock of the tests, seconds since the epoch */
#define FX_ITEMS "FxItems"
#define FX_A "FxA"
#define FX_B "FxB"
#define FX_L "FxL"
#define FX_GNEW "GNew"

extern const char *const FX_TABLES[4];

/* ---- tables ---------------------------------------------------------------------------- */

/* Creates the four tables, enables TTL on FxItems, writes `bulk` static items (<= 4000) and
 * the bank's accounts, ledgers (nbank writers) and config item. Errors: the engine's, why. */
kura_status fx_setup(kura_db *db, uint64_t seed, uint32_t bulk, uint32_t nbank, uint32_t pad_max,
                     char *why, size_t cap);

/* The TTL clock (kura_options.ttl_clock): FX_NOW. */
int64_t fx_ttl_clock(void *arg);

typedef enum { FX_GNEW_ABSENT, FX_GNEW_CREATING, FX_GNEW_ACTIVE, FX_GNEW_DELETING } fx_gnew_state;
extern const char *const FX_GNEW_STATES[4];
/* GNew's state as DescribeTable shows it. */
fx_gnew_state fx_gnew(kura_db *db);
/* UpdateTable Create (create) or Delete of GNew. Errors: the engine's, why. */
kura_status fx_gnew_ddl(kura_db *db, bool create, char *why, size_t cap);
/* Waits up to wait_ms until GNew is ACTIVE or absent; false with why if it is not. */
bool fx_gnew_settle(kura_db *db, uint64_t wait_ms, fx_gnew_state *st_out, char *why,
                    size_t cap);

/* Every index of every table equals what its table implies (tests/crash/index_check.h, which
 * waits up to wait_ms for the GSIs), and no index reports an error: false with why. */
bool fx_check_indexes(kura_db *db, uint64_t wait_ms, char *why, size_t cap);

/* Index checkpoints (kura_index_stats) over every index of every table since the open. */
uint64_t fx_checkpoints(kura_db *db);

/* ---- items ----------------------------------------------------------------------------- */

typedef struct fx_config {
    uint64_t seed;
    uint32_t nwriters;        /* item writers, 1..FX_MAX_WRITERS */
    uint32_t keys_per_writer; /* 4..FX_MAX_KEYS */
    uint32_t pad_max;         /* 0..FX_MAX_PAD */
    uint32_t bulk;            /* the static items fx_setup wrote */
    bool durable_acks;        /* an acknowledged write survives a crash (KURA_SYNC) */
} fx_config;

/* Issues operation j of writer t (reads no model: a forked child calls it). Errors: the
 * engine's, the response or message in why. */
kura_status fx_item_exec(const fx_config *c, kura_db *db, uint32_t t, uint64_t j, char *why,
                         size_t cap);
/* Whether operation j of writer t is a TransactWriteItems. */
bool fx_item_is_txn(const fx_config *c, uint32_t t, uint64_t j);

typedef struct fxm fxm; /* the model of the items (fxmodel.c) */

fxm *fxm_new(const fx_config *c);
void fxm_free(fxm *m);
/* The first operation of writer t not yet attempted (1 at the start). */
uint64_t fxm_next(const fxm *m, uint32_t t);
/* Operation fxm_next(t) may have reached the engine: its versions become possible. */
void fxm_attempt(fxm *m, uint32_t t);
/* The last attempted operation of writer t returned OK; with durable_acks its versions are
 * what must survive. */
void fxm_ack(fxm *m, uint32_t t);
/* Everything acknowledged so far is durable (a kura_sync returned OK). */
void fxm_durable(fxm *m);
/* In process: attempt, issue, acknowledge on KURA_OK. The engine's status. */
kura_status fxm_run(fxm *m, kura_db *db, uint32_t t, char *why, size_t cap);

typedef struct fxm_stats {
    uint64_t doomed_gone;  /* items found absent where only a TTL delete explains it */
    uint64_t txn_applied;  /* unacknowledged transactions found applied */
    uint64_t txn_absent;   /* ... found not applied */
} fxm_stats;

/* Scans FxItems and checks every item: the whole item is what its tag makes; each writer's
 * item is its durable version or one written since (absent where one of those is a delete or
 * doomed); a transaction not yet durable is all there or not at all; every static item is
 * there; nothing else is. With commit, on success, what was found becomes the durable state.
 * False with the first violation in why. */
bool fxm_check(fxm *m, kura_db *db, bool commit, char *why, size_t cap);
const fxm_stats *fxm_get_stats(const fxm *m);

/* ---- the bank (fxbank.c) ----------------------------------------------------------------- */

typedef struct fxb_writer {
    uint32_t w;
    uint64_t seq;     /* the ledger's seq (read from the database at the start) */
    int64_t escrow;   /* the amount of the writer's escrow item, 0: none */
    uint64_t attempt; /* transactions cancelled at this seq (a balance too low): the next
                       * choice differs */
} fxb_writer;

/* Reads writer w's ledger and escrow item. Errors: the engine's, why. */
kura_status fx_bank_load(kura_db *db, uint32_t w, fxb_writer *out, char *why, size_t cap);
/* Issues the writer's next transaction until one commits (a cancelled one is chosen again
 * differently); on KURA_OK the ledger is at ++x->seq. `before` (may be NULL) is called just
 * before each attempt with the seq it would reach (a canary acknowledges there). Errors: the
 * engine's, why. */
kura_status fx_bank_exec(uint64_t seed, kura_db *db, fxb_writer *x,
                         void (*before)(void *arg, uint64_t next_seq), void *arg, char *why,
                         size_t cap);

typedef struct fxb_state {
    uint64_t seq[FX_MAX_BANK];
    uint64_t transactions; /* sum of the ledgers' seqs */
    uint64_t escrows;      /* escrow items */
} fxb_state;

/* The bank's invariants (see the top) with writer w's ledger in [lo[w], hi[w]]. False with
 * why; *out (may be NULL) gets the ledgers found. */
bool fx_bank_check(kura_db *db, uint32_t nbank, const uint64_t *lo, const uint64_t *hi,
                   fxb_state *out, char *why, size_t cap);

#endif

/*
 * oracle.h - the model of acknowledged writes that kura's crash and fault tests check a
 * recovered database against.
 *
 * This file contains a deterministic workload and its checker. Writers are numbered
 * 0..nthreads-1 and each owns its keys ("t03.k00042": writer 3, key 42), so one writer's
 * operations reach its keys in exactly the order it issued them, whatever the other writers
 * do. Operation j (1, 2, ...) of writer t is a pure function of (seed, t, j) (oracle_gen):
 * a put, a delete, or an atomic batch (kura_write) of puts and deletes that all route to one
 * partition. Every value names the operation and entry that wrote it and is otherwise
 * pseudo-random bytes of that operation, so a value read back is either exactly one the
 * writer wrote to that key or provably wrong. Because operations are pure functions, a
 * process that runs them (a forked child) and one that checks them (the parent) agree on
 * every byte without shipping data, and a test reproduces from its printed seed.
 *
 * Per writer the model keeps
 *   committed  ops 1..committed are known to be in the database (the last check proved it),
 *   acked      ops up to here returned KURA_OK (or were reported so by a child),
 *   attempted  ops up to here may have reached the engine (acked <= attempted).
 * oracle_check reads the whole tree (a scan and a get per key) and demands, per writer, that
 * its keys equal the model after ops 1..k for some k with acked <= k <= attempted: every
 * acknowledged write is there, nothing of a later operation is (the state is a prefix of the
 * writer's commit order), a batch is all or nothing, and no value is wrong, resurrected or
 * invented. On success it can commit the k it found (committed = acked = attempted = k), so
 * a test can go on writing from op k+1 on the same database.
 *
 * Thread safety: writer t's functions (oracle_exec on t, oracle_run) may run in one thread
 * per writer at once; everything else is single-threaded.
 */
#ifndef KURA_TESTS_CRASH_ORACLE_H
#define KURA_TESTS_CRASH_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"

enum {
    ORACLE_MAX_THREADS = 8,
    ORACLE_MAX_BATCH = 16,
    ORACLE_MAX_VALUE = 16384,
    ORACLE_KEY_LEN = 10, /* "tNN.kNNNNN" */
};

typedef struct oracle_config {
    uint64_t seed;
    uint32_t nthreads;             /* writers, 1..ORACLE_MAX_THREADS */
    uint32_t keys_per_thread;      /* 1..99999 */
    uint32_t min_value, max_value; /* value sizes, 16 <= min <= max <= ORACLE_MAX_VALUE */
    uint32_t delete_pct;           /* % of single operations that are deletes, and % of
                                      batch entries that are */
    uint32_t batch_pct;            /* % of operations that are batches */
    uint32_t max_batch;            /* entries of a batch: 2..max_batch (<= ORACLE_MAX_BATCH) */
} oracle_config;

/* Defaults: 1 writer, 256 keys, values of 16..2048 bytes, 10% deletes, 10% batches of <= 6. */
void oracle_config_init(oracle_config *c, uint64_t seed);

typedef struct oracle_entry {
    uint32_t key; /* index among the writer's keys */
    bool del;
} oracle_entry;

typedef struct oracle_op {
    uint32_t thread;
    uint64_t opno;
    bool batch; /* issued with kura_write; else one kura_put / kura_delete */
    uint32_t n; /* entries */
    oracle_entry e[ORACLE_MAX_BATCH];
} oracle_op;

typedef struct oracle oracle;

/* A model with every writer at op 0 (empty database). NULL when out of memory or when the
 * config is out of range. Free with oracle_free. */
oracle *oracle_new(const oracle_config *c);
void oracle_free(oracle *o);
/* A deep copy (for checking one crashed state several times). NULL when out of memory. */
oracle *oracle_clone(const oracle *o);
const oracle_config *oracle_cfg(const oracle *o);

/* Learns the partition of every key from the tree (kura_tree_partition_of), which batches
 * need. Call once a tree is open, before generating operations; again for another tree with
 * the same partition count is harmless. */
kura_status oracle_route(oracle *o, kura_tree *tree);

/* Operation j of writer t (a pure function of the seed). Requires oracle_route. */
void oracle_gen(const oracle *o, uint32_t t, uint64_t j, oracle_op *op_out);

/* Writes writer t's key k into out[ORACLE_KEY_LEN] (no terminator). */
void oracle_key(uint32_t t, uint32_t k, char out[ORACLE_KEY_LEN]);

/* A hash of every key, kind and value byte of op j of writer t. */
uint64_t oracle_op_hash(const oracle *o, uint32_t t, uint64_t j);

/*
 * Issues op j of writer t to the tree (wo may be NULL) and returns the engine's status. Does
 * not touch the model (for children that report to a parent). *hash_out (if not NULL) gets
 * the hash of the bytes actually submitted, equal to oracle_op_hash when all is well.
 */
kura_status oracle_exec(const oracle *o, kura_tree *tree, uint32_t t, uint64_t j,
                        const kura_write_options *wo, uint64_t *hash_out);

/* In process: issues writer t's next op (attempted + 1) and records it as attempted, then
 * as acked if the engine returned KURA_OK. Returns the engine's status. */
kura_status oracle_run(oracle *o, kura_tree *tree, uint32_t t, const kura_write_options *wo);

/* Writer t's counters (see the top of this file). */
uint64_t oracle_committed(const oracle *o, uint32_t t);
uint64_t oracle_acked(const oracle *o, uint32_t t);
uint64_t oracle_attempted(const oracle *o, uint32_t t);

/* A child reported op j of writer t acknowledged. Reports must come in order: false (model
 * unchanged) unless j == acked + 1. */
bool oracle_ack(oracle *o, uint32_t t, uint64_t j);

/* Declares that ops up to j of writer t may have been issued (raises attempted to j). */
void oracle_set_attempted(oracle *o, uint32_t t, uint64_t j);

/*
 * Checks the tree against the model (see the top of this file). Returns true if every writer
 * matches some allowed prefix; with `commit`, the model then moves to the largest such
 * prefix. Returns false with a description of the first violation in why[0..cap) (model
 * unchanged): an engine error while reading, a key or value this workload never wrote, a
 * value that differs from what its operation wrote, a get that disagrees with the scan, or a
 * writer whose keys match no allowed prefix (naming a key that differs and how).
 */
bool oracle_check(oracle *o, kura_tree *tree, bool commit, char *why, size_t cap);

#endif

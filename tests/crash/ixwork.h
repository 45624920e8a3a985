/*
 * ixwork.h - the item workload of the secondary-index crash and fault tests, and its model
 * (tests/crash/ixwork.c, ixwork_check.c).
 *
 * This file contains a deterministic DynamoDB workload on the table "Tix" (IXW_CREATE): an
 * LSI "ByLsk" (pk, lsk; INCLUDE x), a GSI "ByG" (gpk, gsk; ALL) and a GSI "Multi" with a
 * multi-attribute key (HASH a, b; RANGE c, gsk; KEYS_ONLY). Writers own disjoint items:
 * writer t's key k is {pk: "w<t>.p<k % 5>", sk: "k<kkk>"}. Operation j of writer t is a pure
 * function of (seed, t, j), issued through kura_execute: a PutItem of a random item, an
 * UpdateItem that sets, removes or ADDs index key attributes (and the projected x), a
 * DeleteItem, or a BatchWriteItem of 2-4 puts and deletes of distinct items. Each version of
 * an item carries "v", the operation and entry that wrote it, and "pad", 0..pad_max bytes
 * derived from the put that created it, so no two versions look alike.
 *
 * The model simulates every operation on the state it knows, so a forked child that only
 * issues operations and the parent that learns which were acknowledged agree on every item.
 * Per item it keeps `base`, the state that must survive a crash, and the versions written
 * since (pending). An acknowledged operation collapses into base when acknowledgement means
 * durable (config `durable_acks`, KURA_SYNC); otherwise only ixw_durable (after kura_sync)
 * does. ixw_check demands that every item equals its base or one of its pending versions
 * (a crash may keep any of an unsynced write's versions; an operation that was issued but
 * not acknowledged may or may not be there, and BatchWriteItem's items independently, as in
 * DynamoDB), and that the table holds no other item. On success with `commit` the observed
 * state becomes the base: the next operations continue from it.
 *
 * Thread safety: ixw_exec may run in one thread per writer at once; ixw_run likewise for
 * distinct writers; everything else is single-threaded.
 */
#ifndef KURA_TESTS_CRASH_IXWORK_H
#define KURA_TESTS_CRASH_IXWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kura.h"

enum { IXW_MAX_WRITERS = 8, IXW_MAX_KEYS = 999, IXW_MAX_PAD = 4000 };

#define IXW_TABLE "Tix"
/* The CreateTable request of the workload's table. */
extern const char IXW_CREATE[];
/* Its indexes, for kura_index_wait / kura_index_stats_get. */
extern const char *const IXW_INDEXES[3];
extern const char *const IXW_GSIS[2];

typedef struct ixw_config {
    uint64_t seed;
    uint32_t nwriters;        /* 1..IXW_MAX_WRITERS */
    uint32_t keys_per_writer; /* 1..IXW_MAX_KEYS */
    uint32_t pad_max;         /* pad bytes of a put: 0..pad_max (<= IXW_MAX_PAD) */
    bool durable_acks;        /* an acknowledged write survives a crash (KURA_SYNC) */
} ixw_config;

typedef struct ixw ixw;

/* A model with every item absent. NULL when out of memory or out of range. */
ixw *ixw_new(const ixw_config *c);
void ixw_free(ixw *w);

/* Creates the table (an existing one is fine). Errors: the engine's, message in why. */
kura_status ixw_create_table(kura_db *db, char *why, size_t cap);

/* Issues operation j of writer t; does not touch the model (a forked child). On an error the
 * response body (or the engine's message) is in why. */
kura_status ixw_exec(const ixw *w, kura_db *db, uint32_t t, uint64_t j, char *why, size_t cap);

/* The first operation of writer t not yet attempted (1 at the start). */
uint64_t ixw_next(const ixw *w, uint32_t t);
/* Operation ixw_next(t) may have reached the engine: simulates it (its versions become
 * possible). */
void ixw_attempt(ixw *w, uint32_t t);
/* The last attempted operation of writer t was acknowledged. With durable_acks its versions
 * become the base. */
void ixw_ack(ixw *w, uint32_t t);
/* Everything acknowledged so far is durable (after a successful kura_sync). */
void ixw_durable(ixw *w);
/* In process: attempt, issue, and acknowledge on KURA_OK. Returns the engine's status. */
kura_status ixw_run(ixw *w, kura_db *db, uint32_t t, char *why, size_t cap);

/* Checks the table against the model (see the top of this file): false with the first
 * difference in why. With commit, on success, the observed state becomes the base. A
 * missing table counts as empty. */
bool ixw_check(ixw *w, kura_db *db, bool commit, char *why, size_t cap);

/* Waits (up to wait_ms per index) for the GSIs, then checks every index of the table with
 * tests/crash/index_check.h, and that no index reports an error: false with why. */
bool ixw_check_indexes(kura_db *db, uint64_t wait_ms, char *why, size_t cap);

/* The catalog's index trees of the table (idx-<table id>-*, the database in directory `dir`)
 * are exactly the trees its index definitions name, and each has its directory: no tree of a
 * dropped, deleted or half-made index is left, and none that an index names is missing.
 * Directories of dropped trees that a crash left behind (kura_tree_drop removes the catalog
 * entry first, then the files, and a power loss undoes an rmdir that no directory sync made
 * durable) are counted in *leftovers_out: no catalog entry names them, so they are never
 * read, but nothing removes them either. No table: true. False with why otherwise. */
bool ixw_check_trees(kura_db *db, const char *dir, uint64_t *leftovers_out, char *why,
                     size_t cap);

#endif

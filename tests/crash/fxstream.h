/*
 * fxstream.h - a change-stream consumer for any table, and its check: the stream, replayed,
 * is the table (tests/crash/fxstream.c).
 *
 * The consumer reads every shard of a table's stream (NEW_AND_OLD_IMAGES) from TRIM_HORIZON,
 * resuming after a crash with AFTER_SEQUENCE_NUMBER its last record of each shard, and
 * applies each record to a map of the items: INSERT needs the item absent, MODIFY and REMOVE
 * need its OldImage to be exactly the item the records before left (so a record lost,
 * repeated or out of order within an item shows), then NewImage replaces it or REMOVE
 * deletes it. A REMOVE made by Time to Live (the service identity) must remove an item whose
 * TTL attribute is a Number before the clock; no other record may carry that identity.
 * fxs_check then requires the map to be the table, every item whole, and, with `reread`, the
 * shards read again from TRIM_HORIZON to be exactly the records taken (nothing the consumer
 * read vanished or changed, nothing appeared before its position).
 *
 * Not thread-safe: one thread uses an fxs at a time.
 */
#ifndef KURA_TESTS_CRASH_FXSTREAM_H
#define KURA_TESTS_CRASH_FXSTREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "kura.h"

typedef struct fxs fxs;

typedef struct fxs_stats {
    uint64_t records, inserts, modifies, removes, ttl_removes;
    uint64_t dropped; /* the canary's */
} fxs_stats;

/* A consumer of `table`'s stream at TRIM_HORIZON; ttl_attr (may be NULL: no TTL) and ttl_now
 * for the check of Time to Live's REMOVEs. NULL with why. */
fxs *fxs_new(kura_db *db, const char *table, const char *ttl_attr, int64_t ttl_now, char *why,
             size_t cap);
/* A consumer of the same stream at TRIM_HORIZON, nothing taken (for a copy of the database
 * proto was made on). */
fxs *fxs_fresh(const fxs *proto);
void fxs_free(fxs *c);

/* The canary: drop (neither apply nor log) every n-th record taken; 0: none. */
void fxs_drop_every(fxs *c, uint64_t n);

/* Reads every shard on from the consumer's position until a page comes back empty (pages of
 * `limit` records, 0 = 1000), taking each record. False with why on an error of the engine or
 * a record that does not follow from the map. */
bool fxs_read(fxs *c, kura_db *db, uint32_t limit, char *why, size_t cap);

/* fxs_read, then the map against a consistent Scan of the table and, with reread, every shard
 * against what was taken (see the top). False with the first difference in why. */
bool fxs_check(fxs *c, kura_db *db, bool reread, char *why, size_t cap);

const fxs_stats *fxs_get_stats(const fxs *c);

#endif

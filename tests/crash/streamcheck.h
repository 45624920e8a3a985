/*
 * streamcheck.h - a consumer of the workload table's change stream that outlives crashes of
 * the database, and the checker of what it read (tests/crash/streamread.c, streamcheck.c).
 *
 * The consumer keeps, per shard, the records it has taken, in order; its position is the
 * last one's sequence number. After a crash it resumes each shard with
 * AFTER_SEQUENCE_NUMBER from there (TRIM_HORIZON before its first record), as a DynamoDB
 * Streams client does. Records reach it from its own reads (sc_read) or from a reader in
 * another process (a kill -9 child) through sc_take.
 *
 * sc_check, on a reopened database, reads every shard on from the consumer's positions to its
 * end, re-reads every shard from TRIM_HORIZON, and checks:
 *  - the stream holds what the consumer took: the re-read is the consumer's records followed
 *    by what the resumed read returned (with durable_acks); without durable acknowledgements
 *    (KURA_RELAXED and a power loss) records the consumer took may have vanished, but only a
 *    shard's latest ones, no later record takes the position of one of them, and resuming
 *    after them fails (KURA_E_INVALID or KURA_E_TRIMMED_DATA): the consumer then keeps what
 *    is left and reads on;
 *  - every record is well formed (the event agrees with the images; sequence numbers grow in
 *    a shard; an item stays in one shard);
 *  - every issued operation's entries are in the stream once or not at all, in each item's
 *    issue order, each with the old image the item had and the new image the write makes
 *    (streamwork.h's sw_apply), and nothing else is: no duplicate, no invented record;
 *  - every durable entry is there (acknowledged with durable_acks, or before sc_durable);
 *    of the other acknowledged ones, what is there is a prefix of each writer's writes in
 *    each shard between two crashes (a shard is a partition's WAL: a crash cuts its tail);
 *  - a transaction is all there or not at all (a batch's items may go separately, as in
 *    DynamoDB);
 *  - the items the stream leads to are the table's, by Scan and by GetItem.
 *
 * Not thread-safe: one thread uses an sc at a time (a forked child may use its copy).
 */
#ifndef KURA_TESTS_CRASH_STREAMCHECK_H
#define KURA_TESTS_CRASH_STREAMCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crash/streamwork.h"
#include "kura.h"

enum { SC_MAX_SHARDS = 16, SC_SEQ_CAP = 26 };

typedef struct sc_config {
    sw_config work;
    bool durable_acks; /* KURA_SYNC: an acknowledged write survives any crash */
} sc_config;

/* One stream record as the consumer keeps it. */
typedef struct sc_rec {
    char seq[SC_SEQ_CAP];
    uint32_t shard;
    uint32_t event; /* 1 INSERT, 2 MODIFY, 3 REMOVE, 0 anything else */
    char key[SW_KEY_CAP];
    char new_v[SW_TAG_CAP], old_v[SW_TAG_CAP]; /* the images' "v" ("" : no image) */
    uint64_t new_digest, old_digest;           /* sw_value_digest (0 : no image) */
} sc_rec;

/* What the checks have seen so far, for the tests' reports and requirements. */
typedef struct sc_stats {
    uint64_t records;         /* taken, over all shards */
    uint64_t events[4];       /* by event */
    uint64_t txns_seen;       /* transactions found in the stream */
    uint64_t batches_seen;    /* BatchWriteItem operations found */
    uint64_t maybe_present;   /* unacknowledged operations found in the stream */
    uint64_t maybe_absent;    /* unacknowledged operations not found */
    uint64_t acked_lost;      /* acknowledged operations lost (only without durable_acks) */
    uint64_t vanished;        /* records the consumer took that a crash removed */
    uint64_t resume_failures; /* shards whose resume failed because of that */
} sc_stats;

typedef struct sc sc;

/* A consumer of the stream `arn` of the workload's table in db (its shards from
 * DescribeStream), at TRIM_HORIZON. NULL with why on failure. */
sc *sc_new(const sc_config *c, kura_db *db, const char *arn, char *why, size_t cap);
void sc_free(sc *c);

uint32_t sc_shards(const sc *c);
const char *sc_arn(const sc *c);
const char *sc_shard_id(const sc *c, uint32_t shard);
const sc_stats *sc_get_stats(const sc *c);

/* The record r of shard `shard` as the consumer keeps it. */
void sc_rec_of(const kura_stream_record *r, uint32_t shard, sc_rec *out);

/* An iterator (kura_free it) of shard `shard` just after the consumer's last record there.
 * Errors: kura_get_shard_iterator's. */
kura_status sc_iterator(const sc *c, kura_db *db, uint32_t shard, char **it_out);

/* Takes one record (read after the consumer's last one of its shard). False with why if it
 * is malformed or out of order. */
bool sc_take(sc *c, const sc_rec *r, char *why, size_t cap);

/* Reads every shard on from the consumer's position until a page comes back empty, taking
 * each record (pages of at most `limit` records, 0 = 1000). Errors: the engine's (why holds
 * the message) or KURA_E_INVALID for a record sc_take refused. */
kura_status sc_read(sc *c, kura_db *db, uint32_t limit, char *why, size_t cap);

/* A consumer of the same stream as `proto` (its ARN and shards) with configuration c, at
 * TRIM_HORIZON with nothing issued: for a copy of the database proto was made on. */
sc *sc_fresh(const sc *proto, const sc_config *c);

/* What is known of an issued operation: it may have reached the engine; it returned OK
 * (with durable_acks, it must then survive any crash); it returned OK and is durable. */
typedef enum { SC_MAYBE = 1, SC_ACKED, SC_DURABLE } sc_fate;

/* Op j of writer t was issued, with that fate. An operation may be reported again with a
 * surer fate; one never reported was never issued. */
void sc_issued(sc *c, uint32_t t, uint64_t j, sc_fate fate);
/* Every operation acknowledged so far is durable (after a successful kura_sync). */
void sc_durable(sc *c);
/* The database crashed: operations issued from now on come after whatever it lost (a shard
 * is a prefix of the writes issued between two crashes). */
void sc_crashed(sc *c);

/* The checks above, on a database reopened after a crash (see the top of this file). On
 * success the consumer holds everything the stream has, and what was issued is decided: a
 * later check expects the same. False with the first violation in why. */
bool sc_check(sc *c, kura_db *db, char *why, size_t cap);

#endif

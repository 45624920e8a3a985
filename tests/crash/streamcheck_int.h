/*
 * streamcheck_int.h - what streamread.c (the consumer: reading shards, taking records) and
 * streamcheck.c (the checks) share.
 */
#ifndef KURA_TESTS_CRASH_STREAMCHECK_INT_H
#define KURA_TESTS_CRASH_STREAMCHECK_INT_H

#include "crash/streamcheck.h"

/* What is known of an operation: never issued (0), or its sc_fate. */
enum { SC_OP_NONE = 0, SC_OP_MAYBE = SC_MAYBE, SC_OP_ACKED = SC_ACKED, SC_OP_DURABLE = SC_DURABLE };

/* A shard's records, in order. */
typedef struct sc_log {
    sc_rec *v;
    size_t n, cap;
} sc_log;

struct sc {
    sc_config cfg;
    char arn[512];
    uint32_t nshards;
    char shard_id[SC_MAX_SHARDS][64];
    sc_log taken[SC_MAX_SHARDS];
    uint8_t *ops[SW_MAX_WRITERS];  /* SC_OP_* of op j at [j] */
    uint64_t nops[SW_MAX_WRITERS]; /* the highest op reported */
    uint64_t opcap[SW_MAX_WRITERS];
    uint64_t *crashes; /* the first operation of each writer after each crash: [i * W + t] */
    size_t ncrashes;
    sc_stats st;
};

void sc_log_push(sc_log *l, const sc_rec *r);
void sc_log_free(sc_log *l);

/* The same record (position and content). */
bool sc_rec_equal(const sc_rec *a, const sc_rec *b);

/* "<seq> <event> <key> v <old_v> -> <new_v>" for messages. */
const char *sc_rec_str(const sc_rec *r, char *buf, size_t cap);

/* Reads shard `shard` from iterator `it` (freed) until a page comes back empty, appending to
 * out, pages of at most `limit` records. Errors: the engine's, message in why. */
kura_status sc_read_from(kura_db *db, uint32_t shard, char *it, uint32_t limit, sc_log *out,
                         char *why, size_t cap);

#endif

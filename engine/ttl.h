/*
 * ttl.h - Time to Live (engine/ only): the setting of a table (engine/ttl.c) and the sweeper
 * that deletes expired items (engine/ttl_sweep.c). docs/architecture.md, "Time to Live".
 */
#ifndef KURA_ENGINE_TTL_H
#define KURA_ENGINE_TTL_H

#include "engine/model/number.h"
#include "engine/table.h"

/* Items whose expiry is more than this far in the past are left alone, as DynamoDB does
 * (five years of 365 days). */
#define TTL_MAX_AGE_S (5ll * 365 * 24 * 3600)

/* Now, in seconds since the epoch, by kura_options.ttl_clock (the real time by default). */
int64_t ttl_now(const kura_db *db);

/* The expiry window of one sweep at `now`: an item expires when its attribute is a Number
 * below `now` and not below `oldest` (now - TTL_MAX_AGE_S). */
typedef struct ttl_window {
    kura_num now, oldest;
} ttl_window;
void ttl_window_at(int64_t now, ttl_window *w);
/* Whether the encoded item (docs/format/item.md) at p[0..len) has expired in `w` by its
 * attribute `attr` (*expired_out; its value in *when_out when it has), decoding only that
 * attribute. KURA_E_CORRUPTION for bytes val_decode refuses. */
kura_status ttl_expired_encoded(const uint8_t *p, size_t len, const char *attr, size_t attr_len,
                                const ttl_window *w, bool *expired_out, kura_num *when_out);

/* Tests only (tests/unit/engine_ttl_test.c): when set, called by a sweep after it has
 * collected a chunk of candidates of table `t` and before it locks them, so that a test can
 * change one of them exactly where a concurrent write would race with the sweep. */
extern void (*ttl_test_before_chunk)(kura_table *t, void *arg);
extern void *ttl_test_before_chunk_arg;

/* The sweeper thread: started at the end of kura_open, stopped (joined) at the start of
 * kura_close, after db->stopping is set and syncer_cv broadcast. */
kura_status ttl_sweeper_start(kura_db *db);
void ttl_sweeper_join(kura_db *db);

#endif

/*
 * heat_window.h - a sliding window of per-second read and write units (capacity accounting,
 * issue 24; docs/architecture.md, "Capacity accounting").
 *
 * A ring of HEAT_WINDOW_S one-second slots, each stamped with the second it counts. Units are
 * kept exactly in half units (HEAT_UNIT_SCALE per DynamoDB unit), so that the half read unit
 * of an eventually consistent read stays an integer; transactional and index writes are
 * whole multiples and need no more precision.
 *
 * Time is the caller's: every call takes now_ms (milliseconds, >= 0, of any epoch the caller
 * keeps using); nothing here reads a clock, so tests drive time. A slot is reused, and its
 * old second forgotten, when a later second maps onto it; a second is in the window of
 * `secs` seconds at now when now_s - secs < second <= now_s (now_s = now_ms / 1000).
 *
 * Not thread-safe: the owner serializes (engine/heat.c holds a stripe mutex). No allocation;
 * a heat_window is a plain value of HEAT_WINDOW_S * 24 bytes.
 */
#ifndef KURA_ENGINE_HEAT_WINDOW_H
#define KURA_ENGINE_HEAT_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

/* Seconds remembered; queries over more seconds are clamped to this. */
#define HEAT_WINDOW_S 60
/* Half units: a stored 1 is half a read or write unit. */
#define HEAT_UNIT_SCALE 2

typedef struct heat_slot {
    int64_t sec;     /* the second counted here; INT64_MIN when never used */
    uint64_t rd, wr; /* half units recorded in that second */
} heat_slot;

typedef struct heat_window {
    int64_t since; /* slots stamped before this second are stale: not counted, not added to */
    heat_slot slot[HEAT_WINDOW_S];
} heat_window;

/* An empty window. */
void heat_window_init(heat_window *w);

/* Empties the window from now_ms's second on, in O(1): older slots become stale rather than
 * being cleared (a sketch's counter changes keys on the record path; clearing 60 slots there
 * cost most of an eviction). Records before that second are then refused by heat_window_add. */
void heat_window_restart(heat_window *w, int64_t now_ms);

/* Adds rd and wr half units at now_ms; false when they are dropped: a record older than the
 * second its slot now holds (older than HEAT_WINDOW_S seconds behind the newest record) or
 * than the restart is outside the window. Records up to HEAT_WINDOW_S - 1 seconds out of
 * order land in their own second. */
bool heat_window_add(heat_window *w, int64_t now_ms, uint64_t rd, uint64_t wr);

/* The half units of the last `secs` seconds at now_ms (the current second included), in
 * *rd_out and *wr_out. secs is clamped to [1, HEAT_WINDOW_S]. */
void heat_window_sum(const heat_window *w, int64_t now_ms, uint32_t secs, uint64_t *rd_out,
                     uint64_t *wr_out);

/* The largest one-second rd and wr (each its own busiest second) of the last `secs` seconds
 * at now_ms, as heat_window_sum counts them. */
void heat_window_peak(const heat_window *w, int64_t now_ms, uint32_t secs, uint64_t *rd_out,
                      uint64_t *wr_out);

#endif
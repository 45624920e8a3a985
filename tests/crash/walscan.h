/*
 * walscan.h - an independent parser of the WAL/MANIFEST framing (docs/format/wal.md) for the
 * corruption tests: where each fragment, block trailer and record of an intact file lies, and
 * how far the file proves itself durable.
 *
 * It is written from the format page, not from wal/reader.c, so that the tests compute the
 * offsets the reader must report on their own. It only parses intact files (a pristine copy
 * made before the damage); it does not verify checksums.
 */
#ifndef KURA_TESTS_CRASH_WALSCAN_H
#define KURA_TESTS_CRASH_WALSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct walscan_region {
    uint64_t off;         /* where it starts */
    uint64_t end;         /* one past its last byte */
    bool trailer;         /* a zero-filled block tail, not a fragment */
    uint8_t type;         /* fragment type (1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST) */
    uint32_t durable_off; /* the fragment's durable_off */
} walscan_region;

typedef struct walscan {
    walscan_region *regions; /* in file order, covering [0, size) exactly */
    size_t nregions;
    uint64_t *record_end; /* end offset of each whole record, in order */
    size_t nrecords;
    uint64_t max_durable; /* the largest durable_off of any fragment */
    uint64_t last_frag;   /* offset of the last fragment */
} walscan;

/* Parses an intact log of n bytes. False (with nothing allocated) if it does not parse. */
bool walscan_parse(const uint8_t *p, size_t n, walscan *out);

void walscan_free(walscan *w);

/* The start of the fragment or trailer that contains byte `off`. */
uint64_t walscan_region_start(const walscan *w, uint64_t off);

/* How many whole records end at or before `len` (what survives a cut at len). */
size_t walscan_records_within(const walscan *w, uint64_t len);

#endif

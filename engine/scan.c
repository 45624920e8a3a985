/*
 * scan.c - This file contains Scan: reading a table, or one segment of a parallel scan, in
 * storage-key order, one page at a time (engine/page.h).
 *
 * Storage keys start with the 64-bit hash of the partition key, big-endian, so key order is
 * hash order, as DynamoDB scans, and a parallel-scan segment is a hash range: segment s of T
 * covers the hashes [ceil(s * 2^64 / T), ceil((s + 1) * 2^64 / T)) (128-bit arithmetic), so
 * the T segments cover every hash exactly once. Partitions are contiguous hash ranges too
 * (partition = floor(h * P / 2^64), kura_tree_partition_of), so a segment reads only the
 * partitions its first and last hash route to and everything between.
 *
 * Checks and messages follow dynalite's validations/scan.js and actions/scan.js (DynamoDB's
 * messages), in their order: Segment / TotalSegments, the expressions, the table, the index,
 * Select, ExclusiveStartKey, the start key against the segment, the key paths.
 *
 * A Scan with IndexName reads the index's tree the same way: its entry keys start with the
 * hash of the index's HASH values (docs/format/index.md), so key order is again hash order and
 * a segment is the same hash range. The checks particular to indexes (scan_index_checks) follow
 * DynamoDB Local 1.25.1.
 */
#include "engine/page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"

enum { SCAN_HASH_LEN = 8 };

/* The hash range of a segment: [lo, hi), hi_end when hi is 2^64. */
typedef struct scan_segment {
    uint64_t lo, hi;
    bool hi_end;
} scan_segment;

static uint64_t scan_bound(uint32_t s, uint32_t total, bool *end_out)
{
    unsigned __int128 b = (((unsigned __int128)s << 64) + total - 1) / total;
    *end_out = b >> 64 != 0;
    return (uint64_t)b;
}

static scan_segment scan_segment_of(uint32_t segment, uint32_t total)
{
    scan_segment sg;
    bool lo_end;
    sg.lo = scan_bound(segment, total, &lo_end);
    sg.hi = scan_bound(segment + 1, total, &sg.hi_end);
    return sg;
}

/* The start key as a storage key, checked against the schema and the segment. */
static kura_status scan_start_key(const kura_table *t, const kura_scan_req *req,
                                  const scan_segment *sg, uint32_t total, kbuf *key)
{
    kura_status s = key_build(&t->ks, req->exclusive_start_key, KEY_FROM_KEY, key);
    if (s == KURA_E_INVALID) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", kura_last_error());
        return kura_err(s, "The provided starting key is invalid: %s", msg);
    }
    if (s != KURA_OK) return s;
    uint64_t h = dec_fixed64_be(key->data);
    if (total > 1 && (h < sg->lo || (!sg->hi_end && h >= sg->hi)))
        return kura_err(KURA_E_INVALID,
                        "The provided starting key is invalid: Invalid ExclusiveStartKey. Please "
                        "use ExclusiveStartKey with correct Segment. TotalSegments: %u Segment: "
                        "%u",
                        total, req->segment);
    return KURA_OK;
}

/* An index Scan's start key (page_index_start_key's checks) against the segment. */
static kura_status scan_index_start_key(const kura_table *t, const page_index *ix,
                                        const kura_scan_req *req, const scan_segment *sg,
                                        uint32_t total, kbuf *key)
{
    kura_status s = page_index_start_key(t, ix->def, req->exclusive_start_key, key);
    if (s != KURA_OK) return s;
    uint64_t h = dec_fixed64_be(key->data);
    if (total > 1 && (h < sg->lo || (!sg->hi_end && h >= sg->hi)))
        return kura_err(KURA_E_INVALID,
                        "The provided starting key is invalid: Invalid ExclusiveStartKey. Please "
                        "use ExclusiveStartKey with correct Segment. TotalSegments: %u Segment: "
                        "%u",
                        total, req->segment);
    return KURA_OK;
}

/* The key range and partitions of the segment in `tree`, after the start key (if any). */
static kura_status scan_range(kura_tree *tree, const scan_segment *sg, const kbuf *start,
                              page_range *r, uint32_t *part_lo_out, uint32_t *part_hi_out)
{
    uint8_t lo[SCAN_HASH_LEN], last[SCAN_HASH_LEN];
    enc_fixed64_be(lo, sg->lo);
    bool ok = kbuf_append(&r->lo, lo, sizeof lo);
    if (ok && start->len && page_key_cmp(start->data, start->len, &r->lo) >= 0) {
        kbuf_clear(&r->lo);
        ok = kbuf_append(&r->lo, start->data, start->len) && kbuf_put_u8(&r->lo, 0);
    }
    if (ok && !sg->hi_end) {
        uint8_t hi[SCAN_HASH_LEN];
        enc_fixed64_be(hi, sg->hi);
        ok = kbuf_append(&r->hi, hi, sizeof hi);
        r->has_hi = true;
    }
    if (!ok) return kura_err(KURA_E_NOMEM, "out of memory");
    enc_fixed64_be(last, sg->hi_end ? UINT64_MAX : sg->hi - 1);
    *part_lo_out = kura_tree_partition_of(tree, r->lo.data, r->lo.len);
    *part_hi_out = kura_tree_partition_of(tree, last, sizeof last);
    return KURA_OK;
}

/*
 * The checks of a Scan with IndexName after the table was found, in DynamoDB Local 1.25.1's
 * order: the index, ConsistentRead on a GSI, ExclusiveStartKey (then against the segment),
 * Select, Select ALL_ATTRIBUTES and the projection against the index's projection (Local
 * checks ALL_ATTRIBUTES before the key paths and the projection after them; the two never
 * meet, a projection with ALL_ATTRIBUTES failing Select), paths into key attributes, the
 * filter (which may name anything).
 */
static kura_status scan_index_checks(kura_table *t, const kura_scan_req *req, const page_exprs *ex,
                                     const scan_segment *sg, uint32_t total, page_index *ix,
                                     kbuf *start, bool *count_only_out)
{
    kura_status s = page_index_find(t, req->index_name, ix);
    if (s == KURA_OK) s = page_index_check_consistent(ix, req->consistent_read, false);
    if (s == KURA_OK && req->exclusive_start_key)
        s = scan_index_start_key(t, ix, req, sg, total, start);
    if (s == KURA_OK) s = page_check_select(req->select, ex->proj != NULL, true, count_only_out);
    if (s == KURA_OK && req->select == KURA_SELECT_ALL_ATTRIBUTES)
        s = page_index_check_select(t, ix, req->select, NULL);
    if (s == KURA_OK) s = page_check_key_paths(t, ex->proj, ex->filter);
    if (s == KURA_OK) s = page_index_check_select(t, ix, KURA_SELECT_DEFAULT, ex->proj);
    if (s == KURA_OK) s = page_index_check_filter(t, ix, ex->filter, false);
    return s;
}

kura_status kura_scan(kura_db *db, const kura_scan_req *req, kura_page *page_out)
{
    page_exprs ex = {0};
    kura_table *t = NULL;
    page_index ix = {0};
    bool count_only = false;
    kbuf start = KBUF_INIT;
    page_range range = {KBUF_INIT, KBUF_INIT, false};
    uint32_t total = req->has_segment ? req->total_segments : 1;
    uint32_t segment = req->has_segment ? req->segment : 0;
    scan_segment sg = {0};

    kura_status s = KURA_OK;
    if (req->has_segment) s = scan_check_segment_params(true, segment, true, total);
    if (s == KURA_OK)
        s = page_exprs_parse(&req->expr, false, NULL, req->filter_expression,
                             req->projection_expression, &ex);
    if (s == KURA_OK) s = table_acquire(db, req->table_name, &t);
    if (s == KURA_OK) sg = scan_segment_of(segment, total);
    if (s == KURA_OK && req->index_name) {
        s = scan_index_checks(t, req, &ex, &sg, total, &ix, &start, &count_only);
    } else if (s == KURA_OK) {
        s = page_check_select(req->select, ex.proj != NULL, false, &count_only);
        if (s == KURA_OK && req->exclusive_start_key)
            s = scan_start_key(t, req, &sg, total, &start);
        if (s == KURA_OK) s = page_check_key_paths(t, ex.proj, ex.filter);
    }
    page_req pr = {
        .t = t,
        .ix = req->index_name ? &ix : NULL,
        .range = &range,
        .limit = req->limit,
        .filter = ex.filter,
        .proj = ex.proj,
        .count_only = count_only,
        .consistent = req->consistent_read,
        .return_capacity = req->return_consumed_capacity,
    };
    if (s == KURA_OK)
        s = scan_range(pr.ix ? ix.tree : t->tree, &sg, &start, &range, &pr.part_lo, &pr.part_hi);
    if (s == KURA_OK) s = page_run(&pr, page_out);
    if (t) page_index_release(t, &ix);
    page_range_free(&range);
    kbuf_free(&start);
    table_release(t);
    page_exprs_free(&ex);
    return s;
}

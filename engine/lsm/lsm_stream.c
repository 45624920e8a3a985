/*
 * lsm_stream.c - a partition's WAL read as a change log (lsm.h, "The WAL as a change log"):
 * records by position (segment number, record offset), in WAL order, across segments, up to
 * what the writer has handed to the OS; WAL retention by age.
 *
 * Segment numbers come from the tree's file-number allocator (SSTables and manifests take
 * numbers too), so the segment after S is the lowest WAL number above S, not S + 1. A
 * position in a segment that no longer exists, below the oldest that does, is trimmed; the
 * current segment is read up to what is durable (wal_writer_synced(), wal_reader_seek's
 * limit): only whole records, and none that a power loss could still take back, so a reader
 * never sees a change that recovery then undoes and never finds its position reused. A
 * closed segment is durable to its end (lsm_new_wal syncs it before the switch).
 */
#include "engine/lsm/lsm_int.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/status.h"
#include "wal/reader.h"

void lsm_note_old_wals(lsm_tree *t)
{
    uint64_t *nums = NULL;
    size_t n = 0;
    if (lsm_list_wals(t, 0, 0, &nums, &n) != KURA_OK)
        return; /* unknown segments are kept (lsm_wal_seg_unneeded) */
    for (size_t i = 0; i < n && nums[i] < t->vs.log_number; i++) {
        bool known = false;
        kmutex_lock(&t->wal_mu);
        for (size_t j = 0; j < t->nwal_segs && !known; j++)
            known = t->wal_segs[j].number == nums[i];
        kmutex_unlock(&t->wal_mu);
        if (!known)
            lsm_note_wal_seg(t, nums[i], UINT64_MAX, 0);
    }
    free(nums);
}

void lsm_set_wal_retain_ms(lsm_tree *t, uint64_t ms)
{
    __atomic_store_n(&t->wal_retain_ms, ms, __ATOMIC_RELEASE);
    lsm_trim_wals(t);
}

void lsm_trim_wals(lsm_tree *t)
{
    kmutex_lock(&t->mu);
    lsm_delete_obsolete(t, false);
    kmutex_unlock(&t->mu);
}

lsm_wal_pos lsm_wal_tail(lsm_tree *t)
{
    kmutex_lock(&t->wal_mu);
    lsm_wal_pos p = {t->wal_number, t->wal ? wal_writer_written(t->wal) : 0};
    kmutex_unlock(&t->wal_mu);
    return p;
}

/* The tail and how far the current segment is durable (<= the tail), read together. */
static void wal_ends(lsm_tree *t, lsm_wal_pos *tail, uint64_t *durable)
{
    kmutex_lock(&t->wal_mu);
    uint64_t written = t->wal ? wal_writer_written(t->wal) : 0;
    uint64_t synced = t->wal ? wal_writer_synced(t->wal) : 0;
    *tail = (lsm_wal_pos){t->wal_number, written};
    *durable = synced < written ? synced : written;
    kmutex_unlock(&t->wal_mu);
}

lsm_wal_pos lsm_wal_durable(lsm_tree *t)
{
    lsm_wal_pos tail;
    uint64_t durable;
    wal_ends(t, &tail, &durable);
    return (lsm_wal_pos){tail.segment, durable};
}

/* The lowest WAL segment number >= min (*found_out false: none). */
static kura_status next_segment(lsm_tree *t, uint64_t min, uint64_t *num_out, bool *found_out,
                                uint64_t *oldest_out)
{
    uint64_t *nums = NULL;
    size_t n = 0;
    kura_status s = lsm_list_wals(t, 0, 0, &nums, &n);
    if (s != KURA_OK)
        return s;
    *found_out = false;
    *oldest_out = n ? nums[0] : UINT64_MAX;
    for (size_t i = 0; i < n && !*found_out; i++)
        if (nums[i] >= min) {
            *num_out = nums[i];
            *found_out = true;
        }
    free(nums);
    return KURA_OK;
}

kura_status lsm_wal_head(lsm_tree *t, lsm_wal_pos *out)
{
    uint64_t num = 0, oldest = 0;
    bool found = false;
    kura_status s = next_segment(t, 0, &num, &found, &oldest);
    if (s == KURA_OK)
        *out = found ? (lsm_wal_pos){num, 0} : lsm_wal_tail(t);
    return s;
}

kura_status lsm_wal_read(lsm_tree *t, lsm_wal_pos from, size_t max_records, lsm_wal_rec_fn fn,
                         void *arg, lsm_wal_pos *next_out)
{
    lsm_wal_pos at = from;
    size_t done = 0;
    kura_status s = KURA_OK;
    *next_out = from;
    while (done < max_records) {
        lsm_wal_pos tail;
        uint64_t durable;
        wal_ends(t, &tail, &durable);
        if (at.segment > tail.segment || (at.segment == tail.segment && at.offset > tail.offset))
            return kura_err(KURA_E_INVALID, "%s: WAL position %llu/%llu is past the log's end "
                                            "%llu/%llu",
                            t->dir, (unsigned long long)at.segment,
                            (unsigned long long)at.offset, (unsigned long long)tail.segment,
                            (unsigned long long)tail.offset);
        uint64_t num = at.segment, oldest = 0;
        bool found = true;
        /* the current segment exists; another is looked up in the directory */
        if (at.segment != tail.segment &&
            (s = next_segment(t, at.segment, &num, &found, &oldest)) != KURA_OK)
            return s;
        if (!found || num != at.segment) {
            if (at.offset > 0 || at.segment < oldest || !found)
                return kura_err(KURA_E_NOT_FOUND, "%s: WAL segment %06llu is gone (trimmed)",
                                t->dir, (unsigned long long)at.segment);
            at = (lsm_wal_pos){num, 0}; /* a segment number that was not a WAL's */
        }
        bool current = at.segment == tail.segment;
        if (current && at.offset >= durable)
            return KURA_OK; /* nothing durable after it yet */
        char path[4096];
        snprintf(path, sizeof path, "%s/%06llu.log", t->dir, (unsigned long long)at.segment);
        wal_reader *r = NULL;
        s = wal_reader_open(t->sh->io, path, IO_KIND_WAL, &r);
        if (s == KURA_E_NOT_FOUND) /* deleted meanwhile */
            return kura_err(KURA_E_NOT_FOUND, "%s: WAL segment %06llu is gone (trimmed)", t->dir,
                            (unsigned long long)at.segment);
        if (s != KURA_OK)
            return s;
        s = wal_reader_seek(r, at.offset, current ? durable : UINT64_MAX);
        const uint8_t *rec;
        size_t len;
        bool stopped = false;
        while (s == KURA_OK && done < max_records &&
               (s = wal_reader_next(r, &rec, &len)) == KURA_OK) {
            lsm_wal_pos here = {at.segment, wal_reader_record_offset(r)};
            s = fn(arg, rec, len, here);
            if (s == KURA_E_BUSY) { /* the caller stops before this record */
                stopped = true;
                s = KURA_OK;
                break;
            }
            if (s == KURA_OK) {
                at.offset = wal_reader_end_offset(r);
                done++;
            }
        }
        wal_reader_close(r);
        *next_out = at;
        if (s == KURA_E_NOT_FOUND)
            s = KURA_OK; /* the segment's end (a closed one's torn tail was judged at open) */
        if (s != KURA_OK || stopped || done >= max_records || current)
            return s;
        /* the segment is closed and read to its end: the next one */
        at = (lsm_wal_pos){at.segment + 1, 0};
        *next_out = at;
    }
    return KURA_OK;
}

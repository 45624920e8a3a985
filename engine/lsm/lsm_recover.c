/*
 * lsm_recover.c - replaying a partition's WAL segments into its memtable at open.
 *
 * Segments numbered at or above the manifest's log number hold writes not yet in any table;
 * they are replayed in number order. A torn tail ends the newest segment (those writes were
 * never acknowledged as durable); corruption before it fails the open with the file and
 * offset (docs/format/wal.md). Replayed segments stay on disk until the memtable they filled
 * is flushed, so a crash during or right after recovery loses nothing.
 *
 * Damage that the framing alone cannot see is caught by cross-checks with the manifest:
 *  - the segment named by the log number must exist (a flush never deletes it); if it is gone
 *    while newer ones exist, the manifest lost its latest edits (e.g. a truncated MANIFEST) and
 *    opening would roll the partition back;
 *  - every recovery records in the manifest where each replayed segment's records ended; a
 *    later recovery that finds such a segment shorter is looking at damage, not a torn write;
 *  - only the newest segment may end in a torn record: an older one was synced when the next
 *    segment was started, so a torn tail followed by newer records is a hole in the commit
 *    order.
 */
#include "engine/lsm/lsm_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/status.h"
#include "wal/reader.h"

typedef struct replay_ctx {
    memtable *mem;
    uint64_t max_seq;
    bool skip; /* the record being replayed is not applied */
} replay_ctx;

static kura_status replay_entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                                size_t klen, const uint8_t *val, size_t vlen)
{
    replay_ctx *c = arg;
    if (seq > c->max_seq)
        c->max_seq = seq;
    if (c->skip)
        return KURA_OK; /* an uncommitted transaction's piece (its sequences, if of the first
                         * format, absolute, else relative: harmless to count) */
    return lsm_insert_entry(c->mem, seq, type, key, klen, val, vlen);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Replays one segment. *end_out: where its last whole record ends; *torn_out: whether it
 * ended in a torn record. Stops at the recorded end, if any. */
static kura_status replay_one(lsm_tree *t, uint64_t number, replay_ctx *c, uint64_t *end_out,
                              bool *torn_out, uint64_t *nrecs_out)
{
    char path[4096], what[4200];
    snprintf(path, sizeof path, "%s/%06llu.log", t->dir, (unsigned long long)number);
    int64_t recorded = vs_wal_end(&t->vs, number);
    wal_reader *r = NULL;
    kura_status s = wal_reader_open(t->sh->io, path, IO_KIND_WAL, &r);
    if (s != KURA_OK)
        return s;
    const uint8_t *rec, *res;
    size_t len;
    uint64_t end = 0, nrecs = 0, seg_max = 0, min_txn = UINT64_MAX, id = 0;
    kbuf scratch = KBUF_INIT;
    while ((recorded < 0 || end < (uint64_t)recorded) &&
           (s = wal_reader_next(r, &rec, &len)) == KURA_OK) {
        snprintf(what, sizeof what, "%s: record at offset %llu", path,
                 (unsigned long long)wal_reader_record_offset(r));
        bool apply = true;
        if ((s = lsm_rep_resolve(t, rec, len, what, &scratch, &apply, &res, &id)) != KURA_OK)
            break;
        if (id && id < min_txn)
            min_txn = id;
        if (id > c->max_seq) /* a transaction's id is a sequence number too: never reused */
            c->max_seq = id;
        c->skip = !apply;
        if ((s = lsm_rep_iterate(res, len, replay_entry, c, what)) != KURA_OK)
            break;
        /* an empty batch still consumed a sequence number */
        if (lsm_rep_count(res) == 0 && lsm_rep_seq(res) > c->max_seq)
            c->max_seq = lsm_rep_seq(res);
        uint32_t cnt = lsm_rep_count(res);
        uint64_t last = lsm_rep_seq(res) + (cnt ? cnt - 1 : 0);
        if (last > seg_max)
            seg_max = last;
        end = wal_reader_end_offset(r);
        nrecs++;
    }
    kbuf_free(&scratch);
    bool torn = s == KURA_E_NOT_FOUND && wal_reader_torn_at(r) >= 0;
    uint64_t size = 0;
    if (io_path_size(t->sh->io, path, &size) == KURA_OK)
        t->wal_bytes_live += size;
    wal_reader_close(r);
    if (s == KURA_E_NOT_FOUND && recorded >= 0 && end < (uint64_t)recorded)
        return kura_err(KURA_E_CORRUPTION, "%s: records end at offset %llu, but a recovery read "
                                           "them up to offset %lld",
                        path, (unsigned long long)end, (long long)recorded);
    if (s != KURA_OK && s != KURA_E_NOT_FOUND)
        return s;
    lsm_note_wal_seg(t, number, seg_max, min_txn);
    *end_out = end;
    *torn_out = torn && recorded < 0;
    *nrecs_out = nrecs;
    return KURA_OK;
}

kura_status lsm_list_wals(lsm_tree *t, uint64_t min, uint64_t skip, uint64_t **nums_out,
                          size_t *n_out)
{
    char **names = NULL;
    size_t n = 0;
    kura_status s = io_list_dir(t->sh->io, t->dir, &names, &n);
    if (s != KURA_OK)
        return s;
    uint64_t *nums = malloc((n ? n : 1) * sizeof *nums);
    size_t nn = 0;
    if (!nums) {
        io_free_names(names, n);
        return kura_err(KURA_E_NOMEM, "%s: out of memory", t->dir);
    }
    for (size_t i = 0; i < n; i++) {
        char *end;
        if (names[i][0] < '0' || names[i][0] > '9')
            continue;
        unsigned long long num = strtoull(names[i], &end, 10);
        if (!strcmp(end, ".log") && num >= min && (!skip || num != skip))
            nums[nn++] = num;
    }
    io_free_names(names, n);
    qsort(nums, nn, sizeof *nums, cmp_u64);
    *nums_out = nums;
    *n_out = nn;
    return KURA_OK;
}

kura_status lsm_replay_wals(lsm_tree *t, uint64_t *max_seq_out)
{
    uint64_t *nums = NULL;
    size_t nn = 0;
    kura_status s = lsm_list_wals(t, t->vs.log_number, 0, &nums, &nn);
    if (s != KURA_OK)
        return s;
    /* (no segment at all: the tree's creation stopped before its first segment existed) */
    if (!t->vs.created && nn > 0 && nums[0] != t->vs.log_number) {
        free(nums);
        return kura_err(KURA_E_CORRUPTION, "%s/%06llu.log: the manifest's oldest needed WAL "
                                           "segment is missing (MANIFEST-%06llu lost edits?)",
                        t->dir, (unsigned long long)t->vs.log_number,
                        (unsigned long long)t->vs.manifest_number);
    }
    replay_ctx c = {t->mem, *max_seq_out, false};
    version_edit ends;
    edit_init(&ends);
    int64_t torn_number = -1; /* a segment that ended torn: newer records must not follow */
    for (size_t i = 0; i < nn && s == KURA_OK; i++) {
        uint64_t end = 0, nrecs = 0;
        bool torn = false;
        s = replay_one(t, nums[i], &c, &end, &torn, &nrecs);
        if (s == KURA_OK && nrecs > 0 && torn_number >= 0)
            s = kura_err(KURA_E_CORRUPTION, "%s/%06llu.log: ends in a damaged record, but newer "
                                            "segment %06llu holds records",
                         t->dir, (unsigned long long)torn_number, (unsigned long long)nums[i]);
        if (s == KURA_OK && torn)
            torn_number = (int64_t)nums[i];
        if (s == KURA_OK)
            s = edit_add_wal_end(&ends, nums[i], end);
        if (nums[i] >= t->vs.next_file)
            t->vs.next_file = nums[i] + 1;
    }
    free(nums);
    /* remember where the segments end, so that later damage to them is seen */
    if (s == KURA_OK && ends.nwal_ends > 0)
        s = lsm_log_and_apply(t, &ends);
    edit_free(&ends);
    if (s == KURA_OK)
        *max_seq_out = c.max_seq;
    return s;
}

/*
 * lsm_recover.c - replaying a partition's WAL segments into its memtable at open.
 *
 * Segments numbered at or above the manifest's log number hold writes not yet in any table;
 * they are replayed in number order. A torn tail ends a segment (those writes were never
 * acknowledged as durable); corruption before it fails the open with the file and offset
 * (docs/format/wal.md). Replayed segments stay on disk until the memtable they filled is
 * flushed, so a crash during or right after recovery loses nothing.
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
} replay_ctx;

static kura_status replay_entry(void *arg, uint64_t seq, unsigned type, const uint8_t *key,
                                size_t klen, const uint8_t *val, size_t vlen)
{
    replay_ctx *c = arg;
    if (seq > c->max_seq)
        c->max_seq = seq;
    return mt_add(c->mem, seq, type, key, klen, val, vlen);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static kura_status replay_one(lsm_tree *t, uint64_t number, replay_ctx *c)
{
    char path[4096], what[4200];
    snprintf(path, sizeof path, "%s/%06llu.log", t->dir, (unsigned long long)number);
    wal_reader *r = NULL;
    kura_status s = wal_reader_open(t->sh->io, path, IO_KIND_WAL, &r);
    if (s != KURA_OK)
        return s;
    const uint8_t *rec;
    size_t len;
    while ((s = wal_reader_next(r, &rec, &len)) == KURA_OK) {
        snprintf(what, sizeof what, "%s: record at offset %llu", path,
                 (unsigned long long)wal_reader_record_offset(r));
        if ((s = lsm_rep_iterate(rec, len, replay_entry, c, what)) != KURA_OK)
            break;
        /* an empty batch still consumed a sequence number */
        if (lsm_rep_count(rec) == 0 && lsm_rep_seq(rec) > c->max_seq)
            c->max_seq = lsm_rep_seq(rec);
    }
    uint64_t size = 0;
    if (io_path_size(t->sh->io, path, &size) == KURA_OK)
        t->wal_bytes_live += size;
    wal_reader_close(r);
    return s == KURA_E_NOT_FOUND ? KURA_OK : s;
}

kura_status lsm_replay_wals(lsm_tree *t, uint64_t *max_seq_out)
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
        if (!strcmp(end, ".log") && num >= t->vs.log_number)
            nums[nn++] = num;
    }
    io_free_names(names, n);
    qsort(nums, nn, sizeof *nums, cmp_u64);
    replay_ctx c = {t->mem, *max_seq_out};
    for (size_t i = 0; i < nn && s == KURA_OK; i++) {
        s = replay_one(t, nums[i], &c);
        if (nums[i] >= t->vs.next_file)
            t->vs.next_file = nums[i] + 1;
    }
    free(nums);
    if (s == KURA_OK)
        *max_seq_out = c.max_seq;
    return s;
}

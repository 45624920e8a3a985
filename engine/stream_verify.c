/*
 * stream_verify.c - This file contains stream_verify (check_int.h): the integrity check of a
 * table's change streams (engine/stream_table.h). A stream's shard p is partition p's WAL
 * from start[p] on and, once the stream is disabled, before end[p]: every such position must
 * be ordered (start <= end), at or before the partition's WAL end, and at a record boundary
 * of a segment that still exists (lsm_wal_pos_check). A position whose segment is gone and
 * older than every segment left was trimmed by the retention (kura_options.
 * stream_retention_ms): a note. A gone segment with older ones left is a hole: a problem.
 */
#include "engine/check_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/stream.h"
#include "engine/stream_table.h"

/* One stream's positions, copied under tables_mu. */
typedef struct sv_stream {
    uint64_t label_ms;
    bool closed;
    lsm_wal_pos *start, *end; /* per partition; end NULL while enabled */
} sv_stream;

static void sv_free(sv_stream *v, uint32_t n)
{
    for (uint32_t i = 0; v && i < n; i++) {
        free(v[i].start);
        free(v[i].end);
    }
    free(v);
}

/* The streams of t and their positions (tables_mu taken here). */
static kura_status sv_copy(kura_table *t, sv_stream **out, uint32_t *n_out)
{
    kura_db *db = t->tree->db;
    uint32_t P = t->partitions;
    kmutex_lock(&db->tables_mu);
    uint32_t n = t->nstreams;
    sv_stream *v = calloc(n ? n : 1, sizeof *v);
    bool ok = v != NULL;
    for (uint32_t i = 0; ok && i < n; i++) {
        const table_stream *x = &t->streams[i];
        v[i] = (sv_stream){x->label_ms, x->closed_ms != 0, malloc(P * sizeof(lsm_wal_pos)),
                           x->closed_ms ? malloc(P * sizeof(lsm_wal_pos)) : NULL};
        ok = v[i].start && (!v[i].closed || v[i].end);
        if (ok)
            memcpy(v[i].start, x->start, P * sizeof *x->start);
        if (ok && v[i].closed)
            memcpy(v[i].end, x->end, P * sizeof *x->end);
    }
    kmutex_unlock(&db->tables_mu);
    if (!ok) {
        sv_free(v, n);
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    *out = v;
    *n_out = n;
    return KURA_OK;
}

/* One position: its state in the WAL of partition p, judged. */
static kura_status sv_pos(check_ctx *c, kura_table *t, const char *label, uint32_t p,
                          const char *which, lsm_wal_pos pos)
{
    lsm_wal_pos_state st;
    kura_status s = lsm_wal_pos_check(t->tree->parts[p], pos, &st);
    if (s != KURA_OK)
        return s;
    char where[512];
    snprintf(where, sizeof where, "table %s stream %s shard %u: %s position %llu/%llu",
             t->name, label, p, which, (unsigned long long)pos.segment,
             (unsigned long long)pos.offset);
    switch (st) {
    case LSM_POS_OK:
        break;
    case LSM_POS_PAST_END:
        check_problem(c, "%s (segment/offset) lies past the partition's WAL end", where);
        break;
    case LSM_POS_TRIMMED:
        check_note(c, "%s: its WAL segment was trimmed by the retention (records before the "
                      "oldest segment left are gone)", where);
        break;
    case LSM_POS_MISSING:
        check_problem(c, "%s: its WAL segment is missing, while older segments remain", where);
        break;
    case LSM_POS_NOT_BOUNDARY:
        check_problem(c, "%s is not at a record boundary of its WAL segment", where);
        break;
    case LSM_POS_UNREADABLE:
        check_problem(c, "%s cannot be checked: its WAL segment is damaged before it", where);
        break;
    }
    return KURA_OK;
}

static kura_status sv_stream_check(check_ctx *c, kura_table *t, const sv_stream *x)
{
    char label[STREAM_LABEL_LEN + 1];
    stream_label(x->label_ms, label);
    kura_status s = KURA_OK;
    c->sum->streams++;
    for (uint32_t p = 0; p < t->partitions && s == KURA_OK; p++) {
        c->sum->shards++;
        s = sv_pos(c, t, label, p, "start", x->start[p]);
        if (s != KURA_OK || !x->closed)
            continue;
        if (x->start[p].segment > x->end[p].segment ||
            (x->start[p].segment == x->end[p].segment && x->start[p].offset > x->end[p].offset))
            check_problem(c, "table %s stream %s shard %u: starts at %llu/%llu, after its end "
                             "%llu/%llu",
                          t->name, label, p, (unsigned long long)x->start[p].segment,
                          (unsigned long long)x->start[p].offset,
                          (unsigned long long)x->end[p].segment,
                          (unsigned long long)x->end[p].offset);
        s = sv_pos(c, t, label, p, "end", x->end[p]);
    }
    return s;
}

kura_status stream_verify(check_ctx *c, kura_table *t)
{
    sv_stream *v = NULL;
    uint32_t n = 0;
    kura_status s = sv_copy(t, &v, &n);
    for (uint32_t i = 0; i < n && s == KURA_OK; i++)
        s = sv_stream_check(c, t, &v[i]);
    sv_free(v, n);
    return s;
}

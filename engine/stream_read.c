/*
 * stream_read.c - reading a shard of a change stream (stream.h, "Reading a shard"): the WAL
 * records of one partition (lsm_wal_read), each resolved (a transaction's piece gets its
 * sequences from its commit record, or is passed over if it never committed), held back at
 * the frontier, and turned into changes (stream_changes).
 *
 * The frontier. The leader appends a group to the WAL before it publishes it, and a
 * transaction's piece is in the WAL before its transaction is decided, so the tail of a WAL
 * can hold what no reader may see yet. A record is read only once its first sequence is
 * visible; a piece only once its transaction is no longer committing (txn_is_committing:
 * once it has stopped, its commit record exists or never will). The order of the two checks
 * on a piece matters: "not committing" first, then the commit record (which is durable once
 * written, and looked up at the newest sequence: it becomes visible after the transaction's
 * range). Like every record, a piece is read only once it is durable in its WAL
 * (lsm_wal_read): nothing a reader sees can be undone by a power loss.
 */
#include "engine/stream.h"

#include <stdio.h>

#include "engine/db_int.h"
#include "engine/lsm/lsm_int.h"
#include "engine/txn.h"
#include "util/status.h"

typedef struct read_ctx {
    kura_db *db;
    lsm_tree *part;
    stream_pos from;
    lsm_wal_pos end;
    size_t max, n;
    stream_rec_fn fn;
    void *arg;
    kbuf scratch;
    lsm_wal_pos at;     /* the record being read */
    bool first;         /* it is the record `from` names */
    bool full;          /* max reached inside it */
    stream_pos stop;    /* where to go on, when full */
} read_ctx;

static kura_status on_change(void *arg, const stream_change *c)
{
    read_ctx *r = arg;
    if (r->first && c->index < r->from.index)
        return KURA_OK; /* read before */
    stream_pos here = {r->at.segment, r->at.offset, c->index};
    kura_status s = r->n == r->max ? KURA_E_BUSY : r->fn(r->arg, c, here);
    if (s == KURA_E_BUSY) { /* full: go on from this change */
        r->full = true;
        r->stop = here;
        return KURA_E_BUSY;
    }
    r->n++;
    return s;
}

static kura_status record(read_ctx *r, const uint8_t *rec, size_t len, lsm_wal_pos at);

/* The record's errors name its file and offset (formatted only then: this runs for every
 * record a consumer reads). */
static kura_status on_record(void *arg, const uint8_t *rec, size_t len, lsm_wal_pos at)
{
    read_ctx *r = arg;
    kura_status s = record(r, rec, len, at);
    if (s != KURA_OK && s != KURA_E_BUSY)
        s = kura_err(s, "%s/%06llu.log offset %llu: %s", r->part->dir,
                     (unsigned long long)at.segment, (unsigned long long)at.offset,
                     kura_last_error());
    return s;
}

static kura_status record(read_ctx *r, const uint8_t *rec, size_t len, lsm_wal_pos at)
{
    if (r->n == r->max || r->full)
        return KURA_E_BUSY;
    if (at.segment > r->end.segment ||
        (at.segment == r->end.segment && at.offset >= r->end.offset))
        return KURA_E_BUSY; /* the shard ends before it */
    const char *what = "the WAL record";
    uint64_t id = 0;
    bool piece = lsm_rep_txn_id(rec, len, &id);
    if (piece && txn_is_committing(r->db, id))
        return KURA_E_BUSY; /* undecided yet */
    bool apply = true;
    const uint8_t *res = rec;
    kura_status s = lsm_rep_resolve(r->part, rec, len, what, &r->scratch, &apply, &res, &id);
    if (s != KURA_OK || !apply)
        return s; /* (a transaction that did not commit: nothing) */
    /* Visibility moves from one group's last sequence to the next one's, so a record is
     * published once its first sequence is. (Not its last: after a reopen the visible
     * sequence is the last one applied, and a record's last entry may be an image.) */
    if (lsm_rep_seq(res) > lsm_visible(&r->db->sh))
        return KURA_E_BUSY; /* not published yet */
    r->at = at;
    r->first = at.segment == r->from.segment && at.offset == r->from.offset;
    s = stream_changes(res, len, what, on_change, r);
    return s == KURA_E_BUSY && r->full ? KURA_E_BUSY : s;
}

kura_status stream_read(kura_db *db, lsm_tree *part, stream_pos from, lsm_wal_pos end,
                        size_t max_changes, stream_rec_fn fn, void *arg, stream_pos *next_out)
{
    read_ctx r = {.db = db, .part = part, .from = from, .end = end, .max = max_changes,
                  .fn = fn, .arg = arg, .scratch = KBUF_INIT};
    lsm_wal_pos next;
    kura_status s = lsm_wal_read(part, (lsm_wal_pos){from.segment, from.offset}, SIZE_MAX,
                                 on_record, &r, &next);
    kbuf_free(&r.scratch);
    if (s != KURA_OK)
        return s;
    if (r.full) /* stopped inside a record */
        *next_out = r.stop;
    else if (next.segment == from.segment && next.offset == from.offset)
        *next_out = from; /* nothing read: the same record, the same change */
    else
        *next_out = (stream_pos){next.segment, next.offset, 0};
    return KURA_OK;
}

/*
 * streamcheck.c - the checks of the change-stream crash tests (streamcheck.h): the stream
 * against what the consumer took, every issued operation against the records of its items,
 * and the items the stream leads to against the table.
 *
 * Matching. Writers own their items, so an item's records must follow its writer's
 * operations in issue order. For each operation, in order, each entry is looked for as the
 * next unmatched record of its item: a put or update as the record whose new image carries
 * the entry's tag (its "v"), a delete of an item that exists as a REMOVE of the item as it
 * is. Found, the record must have the event, the old image and the new image the model
 * predicts (sw_apply); not found, the entry did not happen, which only an unacknowledged
 * operation may do (or, without durable acknowledgements, any, as long as no later entry of
 * the writer in that shard happened). Whatever record is left unmatched is a duplicate or
 * was never written. A delete of an item that does not exist makes no record either way.
 */
#include "crash/streamcheck_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sc_issued(sc *c, uint32_t t, uint64_t j, sc_fate fate)
{
    if (j >= c->opcap[t]) {
        uint64_t cap = c->opcap[t] ? 2 * c->opcap[t] : 1024;
        while (cap <= j)
            cap *= 2;
        uint8_t *v = realloc(c->ops[t], cap);
        if (!v) abort();
        memset(v + c->opcap[t], 0, cap - c->opcap[t]);
        c->ops[t] = v;
        c->opcap[t] = cap;
    }
    uint8_t st = fate == SC_ACKED && c->cfg.durable_acks ? SC_OP_DURABLE : (uint8_t)fate;
    if (st > c->ops[t][j]) c->ops[t][j] = st;
    if (j > c->nops[t]) c->nops[t] = j;
}

void sc_durable(sc *c)
{
    for (uint32_t t = 0; t < SW_MAX_WRITERS; t++)
        for (uint64_t j = 1; j <= c->nops[t]; j++)
            if (c->ops[t][j] == SC_OP_ACKED) c->ops[t][j] = SC_OP_DURABLE;
}

void sc_crashed(sc *c)
{
    uint32_t nw = c->cfg.work.nwriters;
    uint64_t *v = realloc(c->crashes, (c->ncrashes + 1) * nw * sizeof *v);
    if (!v) abort();
    c->crashes = v;
    for (uint32_t t = 0; t < nw; t++)
        v[c->ncrashes * nw + t] = c->nops[t] + 1;
    c->ncrashes++;
}

/* ---- the stream against the consumer ------------------------------------------------------- */

/* A shard as the consumer finds it after a reopen: what it read on from its position (or
 * the error resuming gave), and the whole shard read again from TRIM_HORIZON. */
typedef struct reread {
    kura_status resume; /* of GetShardIterator at the consumer's position */
    char resume_msg[300];
    sc_log resumed, fresh;
    size_t same; /* the consumer's first records that are the shard's first */
} reread;

static bool read_twice(sc *c, kura_db *db, uint32_t s, reread *r, char *why, size_t cap)
{
    const sc_log *l = &c->taken[s];
    char *it = NULL;
    r->resume = sc_iterator(c, db, s, &it);
    snprintf(r->resume_msg, sizeof r->resume_msg, "%s: %s", kura_status_str(r->resume),
             r->resume == KURA_OK ? "" : kura_last_error());
    if (r->resume == KURA_OK && sc_read_from(db, s, it, 37, &r->resumed, why, cap) != KURA_OK)
        return false;
    if (kura_get_shard_iterator(db, c->arn, c->shard_id[s], KURA_ITER_TRIM_HORIZON, NULL, &it) !=
        KURA_OK) {
        snprintf(why, cap, "GetShardIterator TRIM_HORIZON of shard %u: %s", s, kura_last_error());
        return false;
    }
    if (sc_read_from(db, s, it, 0, &r->fresh, why, cap) != KURA_OK) return false;
    r->same = 0;
    while (r->same < l->n && r->same < r->fresh.n &&
           sc_rec_equal(&l->v[r->same], &r->fresh.v[r->same]))
        r->same++;
    return true;
}

/* Nothing the consumer took is gone: it resumed without an error, and what it read is the
 * rest of the shard. Takes it. */
static bool take_resumed(sc *c, uint32_t s, const reread *r, char *why, size_t cap)
{
    const sc_log *l = &c->taken[s];
    if (r->resume != KURA_OK) {
        snprintf(why, cap, "shard %u: resuming after %s failed: %s", s,
                 l->n ? l->v[l->n - 1].seq : "TRIM_HORIZON", r->resume_msg);
        return false;
    }
    bool ok = r->fresh.n == l->n + r->resumed.n;
    for (size_t i = 0; ok && i < r->resumed.n; i++)
        ok = sc_rec_equal(&r->resumed.v[i], &r->fresh.v[l->n + i]);
    if (!ok) {
        snprintf(why, cap,
                 "shard %u: resumed after record %zu, the consumer read %zu records, the "
                 "shard holds %zu after it",
                 s, l->n, r->resumed.n, r->fresh.n - l->n);
        return false;
    }
    for (size_t i = 0; i < r->resumed.n; i++)
        if (!sc_take(c, &r->resumed.v[i], why, cap)) return false;
    return true;
}

/* Records the consumer took are gone (possible without durable acknowledgements): they must
 * be its latest, no record may now stand at a position it was given, and resuming after them
 * must fail (how else would it know). The consumer drops them and takes the shard's rest. */
static bool drop_vanished(sc *c, uint32_t s, const reread *r, char *why, size_t cap)
{
    sc_log *l = &c->taken[s];
    const sc_rec *gone = &l->v[r->same], *last = &l->v[l->n - 1];
    char buf[200], buf2[200];
    for (size_t i = r->same + 1; i < l->n; i++)
        for (size_t f = r->same; f < r->fresh.n; f++)
            if (sc_rec_equal(&l->v[i], &r->fresh.v[f])) {
                snprintf(why, cap,
                         "shard %u: the consumer's record %s is gone, but its later %s is "
                         "still there",
                         s, sc_rec_str(gone, buf, sizeof buf),
                         sc_rec_str(&l->v[i], buf2, sizeof buf2));
                return false;
            }
    for (size_t i = r->same; i < r->fresh.n; i++)
        if (strcmp(r->fresh.v[i].seq, last->seq) <= 0) {
            snprintf(why, cap,
                     "shard %u: the consumer's record %s is gone, and %s now holds a "
                     "position it was given",
                     s, sc_rec_str(gone, buf, sizeof buf),
                     sc_rec_str(&r->fresh.v[i], buf2, sizeof buf2));
            return false;
        }
    if (r->resume == KURA_OK) {
        snprintf(why, cap,
                 "shard %u: the consumer's records from %s on are gone, yet it resumed after "
                 "%s without an error (it read %zu more)",
                 s, sc_rec_str(gone, buf, sizeof buf), last->seq, r->resumed.n);
        return false;
    }
    if (r->resume != KURA_E_INVALID && r->resume != KURA_E_TRIMMED_DATA) {
        snprintf(why, cap, "shard %u: resuming after %s, which is gone, failed with %s", s,
                 last->seq, r->resume_msg);
        return false;
    }
    c->st.vanished += l->n - r->same;
    c->st.resume_failures++;
    l->n = r->same;
    for (size_t i = r->same; i < r->fresh.n; i++)
        if (!sc_take(c, &r->fresh.v[i], why, cap)) return false;
    return true;
}

/* Shard s after a reopen: what the consumer took against the shard, and its resumption. */
static bool reconcile(sc *c, kura_db *db, uint32_t s, char *why, size_t cap)
{
    const sc_log *l = &c->taken[s];
    reread r = {0};
    char buf[200], buf2[200];
    bool ok = read_twice(c, db, s, &r, why, cap);
    if (ok && r.same < l->n && c->cfg.durable_acks) {
        snprintf(why, cap, "shard %u: record %zu of the %zu the consumer took is %s, now %s", s,
                 r.same, l->n, sc_rec_str(&l->v[r.same], buf, sizeof buf),
                 r.same < r.fresh.n ? sc_rec_str(&r.fresh.v[r.same], buf2, sizeof buf2) : "gone");
        ok = false;
    }
    if (ok)
        ok = r.same == l->n ? take_resumed(c, s, &r, why, cap) : drop_vanished(c, s, &r, why, cap);
    sc_log_free(&r.resumed);
    sc_log_free(&r.fresh);
    return ok;
}

/* ---- operations against the records of their items ---------------------------------------- */

/* Each item's records (pointers into the consumer's logs) and where matching is. */
typedef struct item_recs {
    const sc_rec **v;
    size_t n, cap, next;
    uint32_t shard; /* UINT32_MAX: no record yet */
    sw_item it;     /* the item as the records matched so far leave it */
} item_recs;

typedef struct walk {
    sc *c;
    item_recs *items;                                /* [t * keys_per_writer + k] */
    uint64_t missing[SW_MAX_WRITERS][SC_MAX_SHARDS]; /* first acked op lost in a shard */
    char *why;
    size_t cap;
} walk;

/* An entry's fate. PRESENT_WEAK: a delete's REMOVE found, which may as well be a later
 * delete's with nothing between (the same state either way), so it tells nothing of whether
 * this operation happened. */
typedef enum { E_NONE, E_PRESENT, E_PRESENT_WEAK, E_ABSENT, E_VIOLATION } outcome;

static bool index_records(walk *w)
{
    const sw_config *cfg = &w->c->cfg.work;
    size_t nitems = (size_t)cfg->nwriters * cfg->keys_per_writer;
    w->items = calloc(nitems, sizeof *w->items);
    if (!w->items) abort();
    for (size_t i = 0; i < nitems; i++)
        w->items[i].shard = UINT32_MAX;
    for (uint32_t s = 0; s < w->c->nshards; s++)
        for (size_t i = 0; i < w->c->taken[s].n; i++) {
            const sc_rec *r = &w->c->taken[s].v[i];
            uint32_t t, k;
            sw_key_parse(r->key, &t, &k); /* checked by sc_take */
            item_recs *ir = &w->items[(size_t)t * cfg->keys_per_writer + k];
            if (ir->shard != UINT32_MAX && ir->shard != s) {
                snprintf(w->why, w->cap, "item %s has records in shards %u and %u", r->key,
                         ir->shard, s);
                return false;
            }
            ir->shard = s;
            if (ir->n == ir->cap) {
                ir->cap = ir->cap ? 2 * ir->cap : 8;
                if (!(ir->v = realloc(ir->v, ir->cap * sizeof *ir->v))) abort();
            }
            ir->v[ir->n++] = r;
        }
    return true;
}

/* Entry e of op (status st): found as the next record of its item, or not. */
static outcome match_entry(walk *w, const sw_op *op, uint32_t e, uint8_t st)
{
    const sw_config *cfg = &w->c->cfg.work;
    const sw_entry *x = &op->e[e];
    item_recs *ir = &w->items[(size_t)op->t * cfg->keys_per_writer + x->key];
    const sc_rec *r = ir->next < ir->n ? ir->v[ir->next] : NULL;
    sw_item want = ir->it;
    sw_apply(op, e, &want);
    uint64_t old_digest = sw_item_digest(op->t, x->key, &ir->it);
    char tag[SW_TAG_CAP], buf[200];
    sw_tag(op->t, op->j, e, tag);
    if (x->action == SW_E_DELETE) {
        if (!ir->it.exists) return E_NONE; /* a delete of nothing: no record */
        if (!r || r->event != 3 || r->old_digest != old_digest) return E_ABSENT;
        ir->next++;
        ir->it = want;
        return E_PRESENT_WEAK;
    }
    if (!r || strcmp(r->new_v, tag) != 0) return E_ABSENT;
    uint32_t event = ir->it.exists ? 2 : 1;
    uint64_t new_digest = sw_item_digest(op->t, x->key, &want);
    if (r->event != event || r->old_digest != old_digest || r->new_digest != new_digest) {
        snprintf(w->why, w->cap,
                 "%s %s (%s) of %s: record %s has event %u images %016llx -> "
                 "%016llx, the item's history gives event %u images %016llx -> %016llx "
                 "(v %s -> %s)",
                 sw_type_name(op->type), tag, st >= SC_OP_ACKED ? "acked" : "unacked", r->key,
                 sc_rec_str(r, buf, sizeof buf), r->event, (unsigned long long)r->old_digest,
                 (unsigned long long)r->new_digest, event, (unsigned long long)old_digest,
                 (unsigned long long)new_digest, ir->it.exists ? ir->it.v : "-", want.v);
        return E_VIOLATION;
    }
    ir->next++;
    ir->it = want;
    return E_PRESENT;
}

/* One issued operation; false with why on a violation. */
static bool match_op(walk *w, uint32_t t, uint64_t j, uint8_t st)
{
    sw_op op;
    sw_gen(&w->c->cfg.work, t, j, &op);
    uint32_t present = 0, absent = 0;
    char tag[SW_TAG_CAP], key[SW_KEY_CAP], buf[200];
    for (uint32_t e = 0; e < op.n; e++) {
        outcome o = match_entry(w, &op, e, st);
        if (o == E_VIOLATION) return false;
        item_recs *ir = &w->items[(size_t)t * w->c->cfg.work.keys_per_writer + op.e[e].key];
        sw_tag(t, j, e, tag);
        sw_key(t, op.e[e].key, key);
        uint64_t *missing = ir->shard == UINT32_MAX ? NULL : &w->missing[t][ir->shard];
        if (o == E_ABSENT && st == SC_OP_DURABLE) {
            const sc_rec *next = ir->next < ir->n ? ir->v[ir->next] : NULL;
            snprintf(w->why, w->cap,
                     "acknowledged %s %s of %s (%s) is not in the stream; the "
                     "item's next record: %s",
                     sw_type_name(op.type), tag, key,
                     op.e[e].action == SW_E_DELETE ? "delete" : "write",
                     next ? sc_rec_str(next, buf, sizeof buf) : "none");
            return false;
        }
        if (o == E_ABSENT && st == SC_OP_ACKED && missing && j < *missing) *missing = j;
        if (o == E_PRESENT && missing && *missing < j) {
            snprintf(w->why, w->cap,
                     "shard %u is not a prefix of writer %u's acknowledged "
                     "writes: op %llu is lost, yet %s %s of %s (op %llu) is there",
                     ir->shard, t, (unsigned long long)*missing, sw_type_name(op.type), tag, key,
                     (unsigned long long)j);
            return false;
        }
        present += o == E_PRESENT;
        absent += o == E_ABSENT;
    }
    if (op.type == SW_TXN && present && absent) {
        snprintf(w->why, w->cap,
                 "TransactWriteItems w%u op %llu (%s): %u of its writes are in "
                 "the stream, %u are not",
                 t, (unsigned long long)j, st >= SC_OP_ACKED ? "acked" : "unacked", present,
                 absent);
        return false;
    }
    sc_stats *x = &w->c->st;
    x->txns_seen += op.type == SW_TXN && present;
    x->batches_seen += op.type == SW_BATCH && present;
    x->maybe_present += st == SC_OP_MAYBE && present;
    x->maybe_absent += st == SC_OP_MAYBE && !present;
    x->acked_lost += st == SC_OP_ACKED && absent;
    return true;
}

static bool match_all(walk *w)
{
    const sw_config *cfg = &w->c->cfg.work;
    for (uint32_t t = 0; t < cfg->nwriters; t++)
        for (uint32_t s = 0; s < SC_MAX_SHARDS; s++)
            w->missing[t][s] = UINT64_MAX;
    sc_stats *x = &w->c->st;
    x->txns_seen = x->batches_seen = x->maybe_present = x->maybe_absent = x->acked_lost = 0;
    for (uint32_t t = 0; t < cfg->nwriters; t++) {
        size_t crash = 0;
        for (uint64_t j = 1; j <= w->c->nops[t]; j++) {
            for (; crash < w->c->ncrashes && w->c->crashes[crash * cfg->nwriters + t] <= j;
                 crash++) /* a new life: what the crash lost does not bind later writes */
                for (uint32_t s = 0; s < SC_MAX_SHARDS; s++)
                    w->missing[t][s] = UINT64_MAX;
            if (w->c->ops[t][j] != SC_OP_NONE && !match_op(w, t, j, w->c->ops[t][j])) return false;
        }
    }
    size_t nitems = (size_t)cfg->nwriters * cfg->keys_per_writer;
    for (size_t i = 0; i < nitems; i++) {
        const item_recs *ir = &w->items[i];
        if (ir->next < ir->n) {
            char buf[200];
            snprintf(w->why, w->cap,
                     "a record no issued write explains (a duplicate, or out "
                     "of order): %s; %zu of the item's %zu records were matched",
                     sc_rec_str(ir->v[ir->next], buf, sizeof buf), ir->next, ir->n);
            return false;
        }
    }
    return true;
}

/* ---- the items against the table ------------------------------------------------------------ */

/* The item `item` of a Scan page is the one its records lead to. */
static bool scanned_item_ok(walk *w, const kura_value *item)
{
    const sw_config *cfg = &w->c->cfg.work;
    const kura_value *pk = kura_value_get(item, "pk", 2);
    size_t len = 0;
    const char *p = pk ? kura_value_bytes(pk, &len) : NULL;
    char key[64];
    snprintf(key, sizeof key, "%.*s", p ? (int)len : 1, p ? p : "?");
    uint32_t t, k;
    bool ok = sw_key_parse(key, &t, &k) && t < cfg->nwriters && k < cfg->keys_per_writer;
    const sw_item *want = ok ? &w->items[(size_t)t * cfg->keys_per_writer + k].it : NULL;
    if (!ok || sw_value_digest(item) != sw_item_digest(t, k, want)) {
        snprintf(w->why, w->cap, "Scan: item %s is not what its stream records lead to (v %s)", key,
                 ok && want->exists ? want->v : "absent");
        return false;
    }
    return true;
}

/* Every item of the table, by Scan, is the item its records lead to, and no other is. */
static bool check_scan(walk *w, kura_db *db)
{
    const sw_config *cfg = &w->c->cfg.work;
    size_t nitems = (size_t)cfg->nwriters * cfg->keys_per_writer, scanned = 0, present = 0;
    kura_value *lek = NULL;
    do {
        kura_scan_req req = {
            .table_name = SW_TABLE, .consistent_read = true, .exclusive_start_key = lek};
        kura_page page = {0};
        kura_status s = kura_scan(db, &req, &page);
        kura_value_free(lek);
        lek = NULL;
        if (s != KURA_OK) {
            snprintf(w->why, w->cap, "Scan: %s", kura_last_error());
            return false;
        }
        bool ok = true;
        for (size_t i = 0; ok && i < kura_value_count(page.items); i++, scanned++)
            ok = scanned_item_ok(w, kura_value_at(page.items, i, NULL, NULL));
        lek = ok && page.last_evaluated_key ? kura_value_clone(page.last_evaluated_key) : NULL;
        kura_page_free(&page);
        if (!ok) return false;
    } while (lek);
    for (size_t i = 0; i < nitems; i++)
        present += w->items[i].it.exists;
    if (present != scanned) {
        snprintf(w->why, w->cap, "Scan found %zu items, the stream leads to %zu", scanned, present);
        return false;
    }
    return true;
}

/* Every item of the workload, by GetItem, is the item its records lead to. */
static bool check_gets(walk *w, kura_db *db)
{
    const sw_config *cfg = &w->c->cfg.work;
    for (uint32_t t = 0; t < cfg->nwriters; t++)
        for (uint32_t k = 0; k < cfg->keys_per_writer; k++) {
            kura_value *item = NULL;
            kura_status s = sw_get_item(db, t, k, &item);
            const sw_item *want = &w->items[(size_t)t * cfg->keys_per_writer + k].it;
            bool ok = s == KURA_OK && sw_value_digest(item) == sw_item_digest(t, k, want);
            kura_value_free(item);
            if (!ok) {
                char key[SW_KEY_CAP];
                sw_key(t, k, key);
                snprintf(w->why, w->cap, "GetItem %s: %s, the stream leads to v %s", key,
                         s == KURA_OK ? "another item" : kura_last_error(),
                         want->exists ? want->v : "(absent)");
                return false;
            }
        }
    return true;
}

bool sc_check(sc *c, kura_db *db, char *why, size_t cap)
{
    for (uint32_t s = 0; s < c->nshards; s++)
        if (!reconcile(c, db, s, why, cap)) return false;

    c->st.records = 0;
    memset(c->st.events, 0, sizeof c->st.events);
    for (uint32_t s = 0; s < c->nshards; s++)
        for (size_t i = 0; i < c->taken[s].n; i++) {
            c->st.records++;
            c->st.events[c->taken[s].v[i].event]++;
        }
    walk w = {.c = c, .why = why, .cap = cap};
    bool ok = index_records(&w) && match_all(&w) && check_scan(&w, db) && check_gets(&w, db);
    size_t nitems = (size_t)c->cfg.work.nwriters * c->cfg.work.keys_per_writer;
    for (size_t i = 0; w.items && i < nitems; i++)
        free(w.items[i].v);
    free(w.items);
    return ok;
}

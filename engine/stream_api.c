/*
 * stream_api.c - DynamoDB Streams' operations (kura.h, "Change streams"): ListStreams,
 * DescribeStream, GetShardIterator and GetRecords over the tables' streams
 * (engine/stream_table.h) and their WALs (engine/stream.h).
 *
 * A shard iterator is text: the table, the stream's label, the partition, the position
 * (stream_pos) and when it was made, followed by a check of the rest, so that a damaged or
 * made-up iterator is "Invalid ShardIterator" and never a read from the middle of a WAL
 * record. Iterators hold no state in the database: they survive restarts, and any number
 * of consumers read a shard at once.
 *
 * A closed shard ends at the position the partition's writer was at when the stream was
 * disabled; its EndingSequenceNumber is that position (above every record of the shard).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/item_int.h"
#include "engine/lsm/batch.h"
#include "engine/stream.h"
#include "engine/stream_table.h"
#include "engine/table_int.h"
#include "util/hash.h"
#include "util/status.h"

enum {
    ITER_TTL_MS = 15 * 60 * 1000,     /* DynamoDB's 15 minutes */
    RECORDS_MAX = 1000,
    PAGE_BYTES = 1 << 20,             /* GetRecords' 1 MB */
    TABLE_NAME_MAX = 255,
};

static const lsm_wal_pos NO_END = {UINT64_MAX, UINT64_MAX};

static int pos_cmp(lsm_wal_pos a, lsm_wal_pos b)
{
    if (a.segment != b.segment)
        return a.segment < b.segment ? -1 : 1;
    return a.offset < b.offset ? -1 : a.offset > b.offset;
}

/* ---- The stream of a request ------------------------------------------------------------ */

/* A stream found by its ARN: its table pinned, its definition copied. */
typedef struct stream_ref {
    kura_table *t;
    char arn[512];
    uint64_t label_ms, closed_ms;
    kura_stream_view_type view;
    uint32_t parts;
    lsm_wal_pos *start, *end; /* end: NULL while open */
} stream_ref;

static void ref_release(stream_ref *r)
{
    free(r->start);
    free(r->end);
    table_release(r->t);
    memset(r, 0, sizeof *r);
}

static kura_status not_found(const char *arn)
{
    return kura_err(KURA_E_RESOURCE_NOT_FOUND, "Requested resource not found: Stream: %s not found",
                    arn ? arn : "(null)");
}

static kura_status ref_acquire(kura_db *db, const arn_scope *sc, const char *table,
                               uint64_t label_ms, stream_ref *r)
{
    memset(r, 0, sizeof *r);
    arn_stream(sc, table, label_ms, r->arn, sizeof r->arn);
    if (table_acquire(db, table, &r->t) != KURA_OK)
        return not_found(r->arn);
    kmutex_lock(&db->tables_mu);
    const table_stream *x = table_stream_find(db, r->t, label_ms, kwall_ms());
    bool ok = x != NULL;
    if (ok) {
        r->label_ms = x->label_ms;
        r->closed_ms = x->closed_ms;
        r->view = x->view;
        r->parts = r->t->partitions;
        size_t n = r->parts * sizeof *r->start;
        ok = (r->start = malloc(n)) && (!x->end || (r->end = malloc(n)));
        if (ok)
            memcpy(r->start, x->start, n);
        if (ok && x->end)
            memcpy(r->end, x->end, n);
    }
    kmutex_unlock(&db->tables_mu);
    if (!ok) {
        char arn[sizeof r->arn];
        memcpy(arn, r->arn, sizeof arn);
        bool missing = !x;
        ref_release(r);
        return missing ? not_found(arn) : kura_err(KURA_E_NOMEM, "streams: out of memory");
    }
    return KURA_OK;
}

static kura_status ref_by_arn(kura_db *db, const arn_scope *sc, const char *arn, stream_ref *r)
{
    char table[TABLE_NAME_MAX + 1];
    uint64_t label_ms;
    if (!arn || !*arn)
        return kura_err(KURA_E_INVALID, "1 validation error detected: Value null at "
                                        "'streamArn' failed to satisfy constraint: Member "
                                        "must not be null");
    if (!stream_arn_parse(sc, arn, table, sizeof table, &label_ms))
        return stream_arn_wellformed(arn) ? not_found(arn)
                                          : kura_err(KURA_E_INVALID, "Invalid StreamArn");
    return ref_acquire(db, sc, table, label_ms, r);
}

/* Where shard p's records still on disk begin: its start, or the oldest WAL segment kept. */
static kura_status shard_horizon(const stream_ref *r, uint32_t p, lsm_wal_pos *out)
{
    lsm_wal_pos head;
    kura_status s = lsm_wal_head(r->t->tree->parts[p], &head);
    if (s == KURA_OK)
        *out = pos_cmp(head, r->start[p]) > 0 ? head : r->start[p];
    return s;
}

static lsm_wal_pos shard_end(const stream_ref *r, uint32_t p)
{
    return r->end ? r->end[p] : NO_END;
}

/* ---- ListStreams -------------------------------------------------------------------------- */

static int summary_cmp(const void *a, const void *b)
{
    return strcmp(((const kura_stream_summary *)a)->stream_arn,
                  ((const kura_stream_summary *)b)->stream_arn);
}

static void summary_clear(kura_stream_summary *o)
{
    free(o->stream_arn);
    free(o->table_name);
    free(o->stream_label);
}

void kura_stream_summaries_free(kura_stream_summary *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        summary_clear(&v[i]);
    free(v);
}

/* Appends the readable streams of `t` to *v. tables_mu held. */
static bool list_table(kura_db *db, const arn_scope *sc, const kura_table *t, uint64_t now,
                       kura_stream_summary **v, size_t *n, size_t *cap)
{
    for (uint32_t i = 0; i < t->nstreams; i++) {
        const table_stream *x = &t->streams[i];
        if (!table_stream_find(db, t, x->label_ms, now))
            continue;
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 16;
            kura_stream_summary *w = realloc(*v, c * sizeof *w);
            if (!w)
                return false;
            *v = w;
            *cap = c;
        }
        kura_stream_summary *o = &(*v)[(*n)++];
        memset(o, 0, sizeof *o);
        char arn[512], label[STREAM_LABEL_LEN + 1];
        arn_stream(sc, t->name, x->label_ms, arn, sizeof arn);
        stream_label(x->label_ms, label);
        if (!(o->stream_arn = strdup(arn)) || !(o->table_name = strdup(t->name)) ||
            !(o->stream_label = strdup(label)))
            return false;
    }
    return true;
}

kura_status arn_list_streams(kura_db *db, const arn_scope *sc, const char *table_name,
                             const char *exclusive_start_stream_arn, uint32_t limit,
                             kura_stream_summary **streams_out, size_t *count_out,
                             char **last_evaluated_out)
{
    kura_status s = table_limit_check(&limit, 100);
    if (s == KURA_OK && table_name)
        s = table_name_check(table_name, "tableName");
    if (s != KURA_OK)
        return s;
    kura_stream_summary *v = NULL;
    size_t n = 0, cap = 0;
    bool ok = true, found = !table_name;
    uint64_t now = kwall_ms();
    kmutex_lock(&db->tables_mu);
    for (size_t i = 0; ok && i < db->ntables; i++) {
        const kura_table *t = db->tables[i];
        if (table_name && strcmp(t->name, table_name) != 0)
            continue;
        found = true;
        ok = list_table(db, sc, t, now, &v, &n, &cap);
    }
    kmutex_unlock(&db->tables_mu);
    if (!ok) {
        kura_stream_summaries_free(v, n);
        return kura_err(KURA_E_NOMEM, "ListStreams: out of memory");
    }
    if (!found)
        return kura_err(KURA_E_RESOURCE_NOT_FOUND,
                        "Requested resource not found: Table: %s not found", table_name);
    if (n)
        qsort(v, n, sizeof *v, summary_cmp);
    size_t first = 0;
    while (exclusive_start_stream_arn && first < n &&
           strcmp(v[first].stream_arn, exclusive_start_stream_arn) <= 0)
        first++;
    size_t count = n - first < limit ? n - first : limit;
    char *last = NULL;
    if (first + count < n && count > 0 && !(last = strdup(v[first + count - 1].stream_arn))) {
        kura_stream_summaries_free(v, n);
        return kura_err(KURA_E_NOMEM, "ListStreams: out of memory");
    }
    for (size_t i = 0; i < n; i++) /* keep [first, first + count) */
        if (i < first || i >= first + count)
            summary_clear(&v[i]);
    if (first)
        memmove(v, v + first, count * sizeof *v);
    *streams_out = v;
    *count_out = count;
    *last_evaluated_out = last;
    return KURA_OK;
}

/* ---- DescribeStream ----------------------------------------------------------------------- */

void kura_stream_description_free(kura_stream_description *d)
{
    if (!d)
        return;
    free(d->stream_arn);
    free(d->stream_label);
    free(d->table_name);
    for (size_t i = 0; i < d->key_schema_count; i++)
        free((char *)d->key_schema[i].attribute_name);
    free(d->key_schema);
    for (size_t i = 0; i < d->shards_count; i++) {
        free(d->shards[i].shard_id);
        free(d->shards[i].parent_shard_id);
        free(d->shards[i].starting_sequence_number);
        free(d->shards[i].ending_sequence_number);
    }
    free(d->shards);
    free(d->last_evaluated_shard_id);
    memset(d, 0, sizeof *d);
}

static char *seqnum_dup(lsm_wal_pos p)
{
    char buf[STREAM_SEQNUM_LEN + 1];
    if (!stream_seqnum((stream_pos){p.segment, p.offset, 0}, buf))
        return NULL;
    return strdup(buf);
}

static kura_status describe_shards(const stream_ref *r, uint32_t first, uint32_t limit,
                                   kura_stream_description *d)
{
    uint32_t n = r->parts - first < limit ? r->parts - first : limit;
    if (n && !(d->shards = calloc(n, sizeof *d->shards)))
        return kura_err(KURA_E_NOMEM, "DescribeStream: out of memory");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = first + i;
        kura_shard_description *o = &d->shards[i];
        d->shards_count = i + 1;
        lsm_wal_pos from;
        kura_status s = shard_horizon(r, p, &from);
        if (s != KURA_OK)
            return s;
        char id[STREAM_SHARD_ID_LEN + 1];
        stream_shard_id(r->label_ms, p, id);
        if (!(o->shard_id = strdup(id)) || !(o->starting_sequence_number = seqnum_dup(from)) ||
            (r->end && !(o->ending_sequence_number = seqnum_dup(r->end[p]))))
            return kura_err(KURA_E_NOMEM, "DescribeStream: out of memory");
    }
    if (first + n < r->parts) {
        char id[STREAM_SHARD_ID_LEN + 1];
        stream_shard_id(r->label_ms, first + n - 1, id);
        if (!(d->last_evaluated_shard_id = strdup(id)))
            return kura_err(KURA_E_NOMEM, "DescribeStream: out of memory");
    }
    return KURA_OK;
}

kura_status arn_describe_stream(kura_db *db, const arn_scope *sc, const char *stream_arn,
                                uint32_t limit, const char *exclusive_start_shard_id,
                                kura_stream_description *desc_out)
{
    kura_status s = table_limit_check(&limit, 100);
    stream_ref r;
    if (s == KURA_OK)
        s = ref_by_arn(db, sc, stream_arn, &r);
    if (s != KURA_OK)
        return s;
    uint32_t first = 0;
    if (exclusive_start_shard_id) {
        uint64_t label;
        uint32_t p;
        if (stream_shard_parse(exclusive_start_shard_id, &label, &p) && label == r.label_ms)
            first = p + 1 < r.parts ? p + 1 : r.parts;
        else
            first = r.parts; /* not a shard of this stream: nothing after it */
    }
    kura_stream_description d = {0};
    char label[STREAM_LABEL_LEN + 1];
    stream_label(r.label_ms, label);
    d.stream_status = r.closed_ms ? "DISABLED" : "ENABLED";
    d.stream_view_type = r.view;
    d.creation_request_date_time = (double)r.label_ms / 1000.0;
    bool ok = (d.stream_arn = strdup(r.arn)) && (d.stream_label = strdup(label)) &&
              (d.table_name = strdup(r.t->name)) &&
              (d.key_schema = calloc(2, sizeof *d.key_schema)) &&
              (d.key_schema[0].attribute_name = strdup(r.t->pk_name));
    if (ok) {
        d.key_schema_count = 1;
        if (r.t->sk_name) {
            d.key_schema[1].range = true;
            ok = (d.key_schema[1].attribute_name = strdup(r.t->sk_name)) != NULL;
            d.key_schema_count = 2;
        }
    }
    s = ok ? describe_shards(&r, first, limit, &d)
           : kura_err(KURA_E_NOMEM, "DescribeStream: out of memory");
    ref_release(&r);
    if (s != KURA_OK) {
        kura_stream_description_free(&d);
        return s;
    }
    *desc_out = d;
    return KURA_OK;
}

/* ---- Shard iterators ---------------------------------------------------------------------- */

typedef struct shard_iter {
    char table[TABLE_NAME_MAX + 1];
    uint64_t label_ms;
    uint32_t part;
    stream_pos pos;
    uint64_t made_ms;
} shard_iter;

/* The check of an iterator's text: not a secret (iterators are not credentials), only what
 * makes a damaged or edited one fail to parse. */
static uint64_t iter_check(const char *text, size_t len)
{
    uint64_t h = kura_hash64(text, len);
    return h ^ kura_hash64("kura shard iterator", 19);
}

static kura_status iter_format(const shard_iter *it, char **out)
{
    char text[512];
    int n = snprintf(text, sizeof text, "%s|%" PRIu64 "|%u|%" PRIu64 "|%" PRIu64 "|%u|%" PRIu64,
                     it->table, it->label_ms, it->part, it->pos.segment, it->pos.offset,
                     it->pos.index, it->made_ms);
    char *s = NULL;
    if (n < 0 || (size_t)n >= sizeof text ||
        asprintf(&s, "%s|%016" PRIx64, text, iter_check(text, (size_t)n)) < 0)
        return kura_err(KURA_E_NOMEM, "shard iterator: out of memory");
    *out = s;
    return KURA_OK;
}

static kura_status invalid_iterator(void)
{
    return kura_err(KURA_E_INVALID, "Invalid ShardIterator");
}

static kura_status iter_parse(const char *s, shard_iter *it)
{
    const char *bar = s ? strrchr(s, '|') : NULL;
    if (!bar || strlen(bar + 1) != 16)
        return invalid_iterator();
    char *end;
    uint64_t check = strtoull(bar + 1, &end, 16);
    if (*end || check != iter_check(s, (size_t)(bar - s)))
        return invalid_iterator();
    const char *sep = strchr(s, '|');
    if (sep == s || (size_t)(sep - s) > TABLE_NAME_MAX)
        return invalid_iterator();
    memcpy(it->table, s, (size_t)(sep - s));
    it->table[sep - s] = 0;
    unsigned long long label, seg, off, made;
    unsigned part, index;
    int used = 0;
    if (sscanf(sep, "|%llu|%u|%llu|%llu|%u|%llu|%n", &label, &part, &seg, &off, &index, &made,
               &used) != 6 ||
        sep + used != bar + 1)
        return invalid_iterator();
    it->label_ms = label;
    it->part = part;
    it->pos = (stream_pos){seg, off, index};
    it->made_ms = made;
    return KURA_OK;
}

/* The record at `want` (a sequence number's) exists and has that entry. */
typedef struct probe {
    lsm_wal_pos at;
    uint32_t entries;
    bool seen;
} probe;

static kura_status on_probe(void *arg, const uint8_t *rec, size_t len, lsm_wal_pos at)
{
    probe *pr = arg;
    pr->seen = true;
    pr->at = at;
    pr->entries = len >= 12 ? lsm_rep_count(rec) : 0;
    return KURA_OK;
}

static kura_status invalid_seqnum(void)
{
    return kura_err(KURA_E_INVALID,
                    "One or more parameter values were invalid: Invalid SequenceNumber");
}

static kura_status trimmed(void)
{
    return kura_err(KURA_E_TRIMMED_DATA, "The operation attempted to read past the oldest "
                                         "stream record in a shard.");
}

/* The position of sequence number `seq` in shard p, checked. */
static kura_status seq_position(const stream_ref *r, uint32_t p, const char *seq, bool after,
                                stream_pos *out)
{
    stream_pos pos;
    if (!seq || !stream_seqnum_parse(seq, &pos))
        return invalid_seqnum();
    lsm_wal_pos at = {pos.segment, pos.offset}, horizon;
    if (pos_cmp(at, r->start[p]) < 0 || pos_cmp(at, shard_end(r, p)) >= 0)
        return invalid_seqnum(); /* not in this shard */
    kura_status s = shard_horizon(r, p, &horizon);
    if (s != KURA_OK)
        return s;
    if (pos_cmp(at, horizon) < 0)
        return trimmed();
    probe pr = {{0, 0}, 0, false};
    lsm_wal_pos next;
    s = lsm_wal_read(r->t->tree->parts[p], at, 1, on_probe, &pr, &next);
    if (s == KURA_E_NOT_FOUND)
        return trimmed();
    if (s != KURA_OK || !pr.seen || pos_cmp(pr.at, at) != 0 || pos.index >= pr.entries)
        return invalid_seqnum(); /* no record starts there: not a number this shard gave */
    if (after)
        pos.index++;
    *out = pos;
    return KURA_OK;
}

kura_status arn_get_shard_iterator(kura_db *db, const arn_scope *sc, const char *stream_arn,
                                   const char *shard_id, kura_shard_iterator_type type,
                                   const char *sequence_number, char **iterator_out)
{
    if (type < KURA_ITER_TRIM_HORIZON || type > KURA_ITER_AFTER_SEQUENCE_NUMBER)
        return kura_err(KURA_E_INVALID, "Invalid ShardIteratorType.");
    stream_ref r;
    kura_status s = ref_by_arn(db, sc, stream_arn, &r);
    if (s != KURA_OK)
        return s;
    uint64_t label = 0;
    uint32_t p = 0;
    if (!shard_id || !stream_shard_parse(shard_id, &label, &p) || label != r.label_ms ||
        p >= r.parts) {
        ref_release(&r);
        return kura_err(KURA_E_RESOURCE_NOT_FOUND, "Shard does not exist");
    }
    shard_iter it = {.label_ms = r.label_ms, .part = p, .made_ms = kwall_ms()};
    snprintf(it.table, sizeof it.table, "%s", r.t->name);
    lsm_wal_pos at;
    switch (type) {
    case KURA_ITER_TRIM_HORIZON:
        if ((s = shard_horizon(&r, p, &at)) == KURA_OK)
            it.pos = (stream_pos){at.segment, at.offset, 0};
        break;
    case KURA_ITER_LATEST:
        at = r.end ? r.end[p] : lsm_wal_durable(r.t->tree->parts[p]);
        it.pos = (stream_pos){at.segment, at.offset, 0};
        break;
    default:
        s = seq_position(&r, p, sequence_number, type == KURA_ITER_AFTER_SEQUENCE_NUMBER,
                         &it.pos);
        break;
    }
    ref_release(&r);
    return s == KURA_OK ? iter_format(&it, iterator_out) : s;
}

/* ---- GetRecords ----------------------------------------------------------------------------- */

void kura_stream_records_free(kura_stream_record *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        kura_value_free(v[i].keys);
        kura_value_free(v[i].new_image);
        kura_value_free(v[i].old_image);
    }
    free(v);
}

typedef struct page {
    const stream_ref *r;
    uint32_t part;
    kura_stream_record *v;
    size_t n, cap;
    uint64_t bytes;
    bool full; /* 1 MB reached */
} page;

/* An encoded item into a new value (NULL: out of memory or corrupt, status in *s). */
static kura_value *decoded(const uint8_t *enc, size_t len, kura_status *s)
{
    kura_value v = {0};
    if ((*s = val_decode(enc, len, &v)) != KURA_OK)
        return NULL;
    kura_value *h = item_value_take(&v);
    if (!h)
        *s = kura_err(KURA_E_NOMEM, "GetRecords: out of memory");
    return h;
}

static kura_status on_change(void *arg, const stream_change *c, stream_pos at)
{
    page *pg = arg;
    const stream_ref *r = pg->r;
    if (pg->n == pg->cap) {
        size_t cap = pg->cap ? 2 * pg->cap : 64;
        kura_stream_record *w = realloc(pg->v, cap * sizeof *w);
        if (!w)
            return kura_err(KURA_E_NOMEM, "GetRecords: out of memory");
        pg->v = w;
        pg->cap = cap;
    }
    kura_stream_record rec = {0};
    static const char *const names[] = {[STREAM_INSERT] = "INSERT", [STREAM_MODIFY] = "MODIFY",
                                        [STREAM_REMOVE] = "REMOVE"};
    rec.event_name = names[c->event];
    rec.stream_view_type = r->view;
    rec.service = c->service;
    rec.approximate_creation_date_time = (double)((c->time_ms ? c->time_ms
                                                              : kwall_ms()) / 1000);
    if (!stream_seqnum(at, rec.sequence_number))
        return kura_err(KURA_E_CORRUPTION, "%s: a stream position past the sequence numbers' "
                        "range (segment %" PRIu64 ", offset %" PRIu64 ")", r->t->tree->dir,
                        at.segment, at.offset);
    snprintf(rec.event_id, sizeof rec.event_id, "%08x%s", pg->part, rec.sequence_number);
    kura_value keys = {0};
    kura_status s = key_parse(&r->t->ks, c->key, c->klen, &keys);
    if (s == KURA_OK && !(rec.keys = item_value_take(&keys)))
        s = kura_err(KURA_E_NOMEM, "GetRecords: out of memory");
    bool want_new = r->view == KURA_STREAM_NEW_IMAGE || r->view == KURA_STREAM_NEW_AND_OLD_IMAGES;
    bool want_old = r->view == KURA_STREAM_OLD_IMAGE || r->view == KURA_STREAM_NEW_AND_OLD_IMAGES;
    if (s == KURA_OK && want_new && c->new_enc)
        rec.new_image = decoded(c->new_enc, c->new_len, &s);
    if (s == KURA_OK && want_old && c->old_enc)
        rec.old_image = decoded(c->old_enc, c->old_len, &s);
    if (s == KURA_OK) {
        rec.size_bytes = val_item_size(rec.keys) +
                         (rec.new_image ? val_item_size(rec.new_image) : 0) +
                         (rec.old_image ? val_item_size(rec.old_image) : 0);
        if (pg->n && pg->bytes + rec.size_bytes > PAGE_BYTES) {
            pg->full = true;
            s = KURA_E_BUSY; /* the page is full: this record starts the next one */
        }
    }
    if (s != KURA_OK) {
        kura_value_free(rec.keys);
        kura_value_free(rec.new_image);
        kura_value_free(rec.old_image);
        return s; /* (stream_read names the record's file and offset) */
    }
    pg->bytes += rec.size_bytes;
    pg->v[pg->n++] = rec;
    return KURA_OK;
}

kura_status arn_get_records(kura_db *db, const arn_scope *sc, const char *shard_iterator,
                            uint32_t limit, kura_stream_record **records_out, size_t *count_out,
                            char **next_iterator_out)
{
    kura_status s = table_limit_check(&limit, RECORDS_MAX);
    shard_iter it;
    if (s == KURA_OK)
        s = iter_parse(shard_iterator, &it);
    if (s != KURA_OK)
        return s;
    uint64_t now = kwall_ms();
    uint64_t ttl = db->opts.stream_iterator_ttl_ms ? db->opts.stream_iterator_ttl_ms
                                                   : ITER_TTL_MS;
    if (now > it.made_ms + ttl) {
        char made[STREAM_LABEL_LEN + 1], at[STREAM_LABEL_LEN + 1];
        stream_label(it.made_ms, made);
        stream_label(now, at);
        return kura_err(KURA_E_EXPIRED_ITERATOR,
                        "Iterator expired. The iterator was created at time %s while right now "
                        "it is %s which is further in the future than the tolerated delay of "
                        "%" PRIu64 " milliseconds.", made, at, ttl);
    }
    stream_ref r;
    if ((s = ref_acquire(db, sc, it.table, it.label_ms, &r)) != KURA_OK)
        return s;
    if (it.part >= r.parts) {
        ref_release(&r);
        return invalid_iterator();
    }
    page pg = {.r = &r, .part = it.part};
    stream_pos next = it.pos;
    lsm_wal_pos end = shard_end(&r, it.part);
    lsm_tree *part = r.t->tree->parts[it.part];
    s = stream_read(db, part, it.pos, end, limit, on_change, &pg, &next);
    /* Relaxed durability: a consumer that has read all that is durable makes the rest
     * durable now rather than wait for the syncer (relaxed_sync_ms). The sync runs outside
     * the WAL's append lock, so writers do not wait for it; it costs a consumer one fdatasync
     * per call that finds new writes, and gives them durability sooner. */
    if (s == KURA_OK && pg.n < limit && !pg.full && db->opts.durability == KURA_RELAXED &&
        !r.end && pos_cmp(lsm_wal_durable(part), lsm_wal_tail(part)) < 0 &&
        (s = lsm_sync_wal(part)) == KURA_OK)
        s = stream_read(db, part, next, end, limit - pg.n, on_change, &pg, &next);
    if (s == KURA_E_NOT_FOUND)
        s = trimmed();
    else if (s == KURA_E_INVALID)
        s = invalid_iterator(); /* past the log's end: not a position this shard gave */
    char *next_iter = NULL;
    bool done = r.end && pos_cmp((lsm_wal_pos){next.segment, next.offset}, end) >= 0;
    if (s == KURA_OK && !done) {
        it.pos = next;
        it.made_ms = now;
        s = iter_format(&it, &next_iter);
    }
    ref_release(&r);
    if (s != KURA_OK) {
        kura_stream_records_free(pg.v, pg.n);
        return s;
    }
    *records_out = pg.v;
    *count_out = pg.n;
    *next_iterator_out = next_iter;
    return KURA_OK;
}

/*
 * streamread.c - the stream consumer of the change-stream crash tests (streamcheck.h): its
 * shards, its positions, reading pages and taking records. The checks are streamcheck.c.
 */
#include "crash/streamcheck_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_events[] = {"?", "INSERT", "MODIFY", "REMOVE"};

void sc_log_push(sc_log *l, const sc_rec *r)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        sc_rec *v = realloc(l->v, cap * sizeof *v);
        if (!v) abort();
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *r;
}

void sc_log_free(sc_log *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

bool sc_rec_equal(const sc_rec *a, const sc_rec *b)
{
    return !strcmp(a->seq, b->seq) && a->shard == b->shard && a->event == b->event &&
           !strcmp(a->key, b->key) && a->new_digest == b->new_digest &&
           a->old_digest == b->old_digest;
}

const char *sc_rec_str(const sc_rec *r, char *buf, size_t cap)
{
    snprintf(buf, cap, "shard %u seq %s %s %s v %s -> %s", r->shard, r->seq,
             k_events[r->event < 4 ? r->event : 0], r->key, r->old_v[0] ? r->old_v : "-",
             r->new_v[0] ? r->new_v : "-");
    return buf;
}

/* ---- the consumer ---------------------------------------------------------------------------- */

sc *sc_new(const sc_config *c, kura_db *db, const char *arn, char *why, size_t cap)
{
    sc *x = calloc(1, sizeof *x);
    if (!x) abort();
    x->cfg = *c;
    snprintf(x->arn, sizeof x->arn, "%s", arn);
    kura_stream_description d;
    kura_status s = kura_describe_stream(db, arn, 0, NULL, &d);
    if (s != KURA_OK) {
        snprintf(why, cap, "DescribeStream %s: %s", arn, kura_last_error());
        free(x);
        return NULL;
    }
    bool ok = d.shards_count > 0 && d.shards_count <= SC_MAX_SHARDS;
    for (size_t i = 0; ok && i < d.shards_count; i++)
        snprintf(x->shard_id[i], sizeof x->shard_id[i], "%s", d.shards[i].shard_id);
    x->nshards = (uint32_t)d.shards_count;
    kura_stream_description_free(&d);
    if (!ok) {
        snprintf(why, cap, "DescribeStream %s: %u shards", arn, x->nshards);
        free(x);
        return NULL;
    }
    return x;
}

sc *sc_fresh(const sc *proto, const sc_config *c)
{
    sc *x = calloc(1, sizeof *x);
    if (!x) abort();
    x->cfg = *c;
    memcpy(x->arn, proto->arn, sizeof x->arn);
    x->nshards = proto->nshards;
    memcpy(x->shard_id, proto->shard_id, sizeof x->shard_id);
    return x;
}

void sc_free(sc *c)
{
    if (!c) return;
    for (uint32_t s = 0; s < SC_MAX_SHARDS; s++)
        sc_log_free(&c->taken[s]);
    for (uint32_t t = 0; t < SW_MAX_WRITERS; t++)
        free(c->ops[t]);
    free(c->crashes);
    free(c);
}

uint32_t sc_shards(const sc *c)
{
    return c->nshards;
}

const char *sc_arn(const sc *c)
{
    return c->arn;
}

const char *sc_shard_id(const sc *c, uint32_t shard)
{
    return c->shard_id[shard];
}

const sc_stats *sc_get_stats(const sc *c)
{
    return &c->st;
}

/* The "v" attribute of an image, or "". */
static void v_of(const kura_value *img, char out[SW_TAG_CAP])
{
    out[0] = 0;
    const kura_value *v = img ? kura_value_get(img, "v", 1) : NULL;
    size_t len = 0;
    const char *p = v ? kura_value_bytes(v, &len) : NULL;
    if (p) snprintf(out, SW_TAG_CAP, "%.*s", (int)len, p);
}

void sc_rec_of(const kura_stream_record *r, uint32_t shard, sc_rec *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->seq, sizeof out->seq, "%s", r->sequence_number);
    out->shard = shard;
    for (uint32_t e = 1; e < 4; e++)
        if (r->event_name && !strcmp(r->event_name, k_events[e])) out->event = e;
    const kura_value *pk = r->keys ? kura_value_get(r->keys, "pk", 2) : NULL;
    size_t len = 0;
    const char *p = pk ? kura_value_bytes(pk, &len) : NULL;
    snprintf(out->key, sizeof out->key, "%.*s", p ? (int)len : 1, p ? p : "?");
    if (!r->keys || kura_value_count(r->keys) != 1)
        out->key[0] = '?'; /* a record's keys are exactly the key attributes */
    v_of(r->new_image, out->new_v);
    v_of(r->old_image, out->old_v);
    out->new_digest = sw_value_digest(r->new_image);
    out->old_digest = sw_value_digest(r->old_image);
}

kura_status sc_iterator(const sc *c, kura_db *db, uint32_t shard, char **it_out)
{
    const sc_log *l = &c->taken[shard];
    if (!l->n)
        return kura_get_shard_iterator(db, c->arn, c->shard_id[shard], KURA_ITER_TRIM_HORIZON, NULL,
                                       it_out);
    return kura_get_shard_iterator(db, c->arn, c->shard_id[shard], KURA_ITER_AFTER_SEQUENCE_NUMBER,
                                   l->v[l->n - 1].seq, it_out);
}

bool sc_take(sc *c, const sc_rec *r, char *why, size_t cap)
{
    char buf[200];
    uint32_t t, k;
    if (r->shard >= c->nshards) {
        snprintf(why, cap, "a record of shard %u of %u", r->shard, c->nshards);
        return false;
    }
    sc_log *l = &c->taken[r->shard];
    bool shape = (r->event == 1 && r->new_digest && !r->old_digest) ||
                 (r->event == 2 && r->new_digest && r->old_digest) ||
                 (r->event == 3 && !r->new_digest && r->old_digest);
    if (!shape || strlen(r->seq) != SC_SEQ_CAP - 1 || !sw_key_parse(r->key, &t, &k) ||
        t >= c->cfg.work.nwriters || k >= c->cfg.work.keys_per_writer) {
        snprintf(why, cap, "a malformed record: %s (images %016llx -> %016llx)",
                 sc_rec_str(r, buf, sizeof buf), (unsigned long long)r->old_digest,
                 (unsigned long long)r->new_digest);
        return false;
    }
    if (l->n && strcmp(r->seq, l->v[l->n - 1].seq) <= 0) {
        char prev[200];
        snprintf(why, cap, "sequence numbers out of order in shard %u: %s after %s", r->shard,
                 sc_rec_str(r, buf, sizeof buf), sc_rec_str(&l->v[l->n - 1], prev, sizeof prev));
        return false;
    }
    sc_log_push(l, r);
    c->st.records++;
    c->st.events[r->event]++;
    return true;
}

kura_status sc_read_from(kura_db *db, uint32_t shard, char *it, uint32_t limit, sc_log *out,
                         char *why, size_t cap)
{
    kura_status s = KURA_OK;
    while (it) {
        kura_stream_record *v = NULL;
        size_t n = 0;
        char *next = NULL;
        s = kura_get_records(db, it, limit, &v, &n, &next);
        kura_free(it);
        it = next;
        if (s != KURA_OK) {
            snprintf(why, cap, "GetRecords of shard %u: %s: %s", shard, kura_status_str(s),
                     kura_last_error());
            break;
        }
        for (size_t i = 0; i < n; i++) {
            sc_rec r;
            sc_rec_of(&v[i], shard, &r);
            sc_log_push(out, &r);
        }
        kura_stream_records_free(v, n);
        if (!n) break;
    }
    kura_free(it);
    return s;
}

kura_status sc_read(sc *c, kura_db *db, uint32_t limit, char *why, size_t cap)
{
    for (uint32_t s = 0; s < c->nshards; s++) {
        char *it = NULL;
        kura_status st = sc_iterator(c, db, s, &it);
        if (st != KURA_OK) {
            snprintf(why, cap, "GetShardIterator of shard %u: %s: %s", s, kura_status_str(st),
                     kura_last_error());
            return st;
        }
        sc_log got = {0};
        st = sc_read_from(db, s, it, limit, &got, why, cap);
        /* the pages read before a failure were returned: they are taken */
        for (size_t i = 0; i < got.n; i++)
            if (!sc_take(c, &got.v[i], why, cap)) {
                st = KURA_E_INVALID;
                break;
            }
        sc_log_free(&got);
        if (st != KURA_OK) return st;
    }
    return KURA_OK;
}

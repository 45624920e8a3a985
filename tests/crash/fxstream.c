/*
 * fxstream.c - the stream consumer of the combined crash tests and its check (fxstream.h).
 *
 * The map is an open-addressed table of (key hash, item digest) with the key's text for
 * messages; an item removed stays as an absent slot (the tests' key sets are bounded). A
 * digest is FNV-1a over the item's canonical JSON (attributes in name order), so two equal
 * items have one digest whatever order their attributes were written in.
 */
#include "crash/fxstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SHARDS_MAX = 16, SEQ_CAP = 26 };

typedef struct slot {
    uint64_t kh, digest;
    bool used, present;
    char *key;
} slot;

typedef struct rec { /* a record taken, for the re-read */
    char seq[SEQ_CAP];
    uint64_t digest;
} rec;

typedef struct shard {
    char id[64];
    char last[SEQ_CAP]; /* "" before the first record */
    rec *v;
    size_t n, cap;
} shard;

struct fxs {
    char table[64], arn[512], key_attr[2][64], ttl_attr[64];
    uint32_t nkeys, nshards;
    int64_t ttl_now;
    shard sh[SHARDS_MAX];
    slot *map;
    size_t map_cap, map_used;
    uint64_t drop_every, taken;
    fxs_stats st;
};

static uint64_t fnv(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
    return h ^ n;
}

/* The canonical JSON (kura_free it) or NULL. */
static char *canon(const kura_value *v)
{
    char *j = NULL;
    size_t n;
    return v && kura_value_to_json(v, true, &j, &n) == KURA_OK ? j : NULL;
}

static uint64_t digest(const kura_value *v)
{
    char *j = canon(v);
    uint64_t d = j ? fnv(j, strlen(j)) : 0;
    kura_free(j);
    return d;
}

/* The item's key attributes as canonical JSON (kura_free it), or NULL if one is missing. */
static char *key_of(const fxs *c, const kura_value *item)
{
    kura_value *k = kura_value_map();
    bool ok = k != NULL;
    for (uint32_t i = 0; ok && i < c->nkeys; i++) {
        const kura_value *a = kura_value_get(item, c->key_attr[i], strlen(c->key_attr[i]));
        ok = a && kura_value_map_put(k, c->key_attr[i], strlen(c->key_attr[i]),
                                     kura_value_clone(a)) == KURA_OK;
    }
    char *j = ok ? canon(k) : NULL;
    kura_value_free(k);
    return j;
}

static slot *map_find(fxs *c, const char *key, bool insert)
{
    if (insert && 2 * (c->map_used + 1) > c->map_cap) {
        size_t cap = c->map_cap ? 2 * c->map_cap : 1024;
        slot *m = calloc(cap, sizeof *m);
        if (!m)
            abort();
        for (size_t i = 0; i < c->map_cap; i++)
            if (c->map[i].used) {
                size_t p = c->map[i].kh & (cap - 1);
                while (m[p].used)
                    p = (p + 1) & (cap - 1);
                m[p] = c->map[i];
            }
        free(c->map);
        c->map = m;
        c->map_cap = cap;
    }
    if (!c->map_cap)
        return NULL;
    uint64_t kh = fnv(key, strlen(key));
    size_t p = kh & (c->map_cap - 1);
    for (; c->map[p].used; p = (p + 1) & (c->map_cap - 1))
        if (c->map[p].kh == kh && !strcmp(c->map[p].key, key))
            return &c->map[p];
    if (!insert)
        return NULL;
    c->map[p] = (slot){.kh = kh, .used = true, .key = strdup(key)};
    c->map_used++;
    return &c->map[p];
}

fxs *fxs_new(kura_db *db, const char *table, const char *ttl_attr, int64_t ttl_now, char *why,
             size_t cap)
{
    fxs *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    snprintf(c->table, sizeof c->table, "%s", table);
    snprintf(c->ttl_attr, sizeof c->ttl_attr, "%s", ttl_attr ? ttl_attr : "");
    c->ttl_now = ttl_now;
    kura_table_description d;
    memset(&d, 0, sizeof d);
    kura_status s = kura_describe_table(db, table, &d);
    if (s == KURA_OK && d.latest_stream_arn && d.key_schema_count <= 2) {
        snprintf(c->arn, sizeof c->arn, "%s", d.latest_stream_arn);
        for (size_t i = 0; i < d.key_schema_count; i++)
            snprintf(c->key_attr[i], sizeof c->key_attr[i], "%s", d.key_schema[i].attribute_name);
        c->nkeys = (uint32_t)d.key_schema_count;
    } else if (s == KURA_OK) {
        s = KURA_E_INVALID;
    }
    kura_table_description_free(&d);
    kura_stream_description sd;
    memset(&sd, 0, sizeof sd);
    if (s == KURA_OK && (s = kura_describe_stream(db, c->arn, 0, NULL, &sd)) == KURA_OK) {
        c->nshards = (uint32_t)(sd.shards_count <= SHARDS_MAX ? sd.shards_count : 0);
        for (uint32_t i = 0; i < c->nshards; i++)
            snprintf(c->sh[i].id, sizeof c->sh[i].id, "%s", sd.shards[i].shard_id);
        kura_stream_description_free(&sd);
    }
    if (s != KURA_OK || !c->nshards) {
        snprintf(why, cap, "the stream of %s: %s: %s", table, kura_status_str(s),
                 kura_last_error());
        free(c);
        return NULL;
    }
    return c;
}

fxs *fxs_fresh(const fxs *proto)
{
    fxs *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    memcpy(c->table, proto->table, sizeof c->table);
    memcpy(c->arn, proto->arn, sizeof c->arn);
    memcpy(c->key_attr, proto->key_attr, sizeof c->key_attr);
    memcpy(c->ttl_attr, proto->ttl_attr, sizeof c->ttl_attr);
    c->nkeys = proto->nkeys;
    c->nshards = proto->nshards;
    c->ttl_now = proto->ttl_now;
    for (uint32_t i = 0; i < c->nshards; i++)
        memcpy(c->sh[i].id, proto->sh[i].id, sizeof c->sh[i].id);
    return c;
}

void fxs_free(fxs *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->map_cap; i++)
        free(c->map[i].key);
    free(c->map);
    for (uint32_t i = 0; i < SHARDS_MAX; i++)
        free(c->sh[i].v);
    free(c);
}

void fxs_drop_every(fxs *c, uint64_t n)
{
    c->drop_every = n;
}

const fxs_stats *fxs_get_stats(const fxs *c)
{
    return &c->st;
}

/* A TTL delete's old image has the TTL attribute, a Number before the clock. */
static bool expired(const fxs *c, const kura_value *old)
{
    const kura_value *a = c->ttl_attr[0] ? kura_value_get(old, c->ttl_attr, strlen(c->ttl_attr))
                                         : NULL;
    char buf[180];
    return a && kura_value_num(a, buf, sizeof buf) && strtoll(buf, NULL, 10) < c->ttl_now;
}

/* Takes record r of shard i: checks it follows from the map, applies it, logs it. */
static bool take(fxs *c, uint32_t i, const kura_stream_record *r, char *why, size_t cap)
{
    shard *sh = &c->sh[i];
    const char *ev = r->event_name ? r->event_name : "?";
    int e = !strcmp(ev, "INSERT") ? 1 : !strcmp(ev, "MODIFY") ? 2 : !strcmp(ev, "REMOVE") ? 3 : 0;
    char *key = canon(r->keys);
    const kura_value *img = e == 3 ? r->old_image : r->new_image;
    char *ikey = img ? key_of(c, img) : NULL;
    bool ok = false;
    if (strcmp(r->sequence_number, sh->last) <= 0)
        snprintf(why, cap, "%s shard %u: sequence number %s after %s", c->table, i,
                 r->sequence_number, sh->last);
    else if (!e || !key || !ikey || strcmp(key, ikey) || !(e == 1) != !!r->old_image ||
             !(e == 3) != !!r->new_image || kura_value_count(r->keys) != c->nkeys)
        snprintf(why, cap, "%s shard %u: a malformed %s record at %s (key %.200s)", c->table, i,
                 ev, r->sequence_number, key ? key : "?");
    else if (r->service && (e != 3 || !expired(c, r->old_image)))
        snprintf(why, cap, "%s shard %u: a Time to Live %s of %.200s at %s, not an expired item",
                 c->table, i, ev, key, r->sequence_number);
    else
        ok = true;
    uint64_t dold = r->old_image ? digest(r->old_image) : 0;
    uint64_t dnew = r->new_image ? digest(r->new_image) : 0;
    bool drop = ok && c->drop_every && ++c->taken % c->drop_every == 0;
    slot *s = ok && !drop ? map_find(c, key, e == 1) : NULL;
    if (ok && !drop) {
        bool present = s && s->present;
        if (e == 1 ? present : !present || s->digest != dold) {
            snprintf(why, cap, "%s shard %u: %s of %.200s at %s does not follow the item's "
                               "records before it (the item is %s)",
                     c->table, i, ev, key, r->sequence_number,
                     !present ? "absent" : e == 1 ? "there" : "another");
            ok = false;
        } else {
            s->present = e != 3;
            s->digest = dnew;
        }
    }
    if (ok) {
        snprintf(sh->last, sizeof sh->last, "%s", r->sequence_number);
        if (drop) {
            c->st.dropped++;
        } else {
            if (sh->n == sh->cap) {
                sh->cap = sh->cap ? 2 * sh->cap : 256;
                sh->v = realloc(sh->v, sh->cap * sizeof *sh->v);
                if (!sh->v)
                    abort();
            }
            rec *x = &sh->v[sh->n++];
            snprintf(x->seq, sizeof x->seq, "%s", r->sequence_number);
            x->digest = dold * 31 + dnew * 7 + (uint64_t)e;
            c->st.records++;
            c->st.inserts += e == 1;
            c->st.modifies += e == 2;
            c->st.removes += e == 3;
            c->st.ttl_removes += r->service;
        }
    }
    kura_free(key);
    kura_free(ikey);
    return ok;
}

/* Reads shard i from iterator `it` (freed) to its end: take, or (takeit false) append. */
static bool read_shard(fxs *c, kura_db *db, uint32_t i, char *it, uint32_t limit, bool takeit,
                       rec **out, size_t *nout, char *why, size_t cap)
{
    bool ok = true;
    size_t ocap = 0;
    while (ok && it) {
        kura_stream_record *v = NULL;
        size_t n = 0;
        char *next = NULL;
        kura_status s = kura_get_records(db, it, limit, &v, &n, &next);
        kura_free(it);
        it = next;
        if (s != KURA_OK) {
            snprintf(why, cap, "%s shard %u: GetRecords: %s: %s", c->table, i, kura_status_str(s),
                     kura_last_error());
            ok = false;
        }
        for (size_t k = 0; ok && k < n; k++) {
            if (takeit) {
                ok = take(c, i, &v[k], why, cap);
                continue;
            }
            if (*nout == ocap) {
                ocap = ocap ? 2 * ocap : 256;
                *out = realloc(*out, ocap * sizeof **out);
                if (!*out)
                    abort();
            }
            rec *x = &(*out)[(*nout)++];
            int e = !strcmp(v[k].event_name, "INSERT") ? 1 : !strcmp(v[k].event_name, "MODIFY") ? 2 : 3;
            snprintf(x->seq, sizeof x->seq, "%s", v[k].sequence_number);
            x->digest = (v[k].old_image ? digest(v[k].old_image) : 0) * 31 +
                        (v[k].new_image ? digest(v[k].new_image) : 0) * 7 + (uint64_t)e;
        }
        kura_stream_records_free(v, n);
        if (!n)
            break;
    }
    kura_free(it);
    return ok;
}

static bool iterator(fxs *c, kura_db *db, uint32_t i, bool horizon, char **it, char *why,
                     size_t cap)
{
    const char *last = c->sh[i].last;
    kura_status s = horizon || !last[0]
                        ? kura_get_shard_iterator(db, c->arn, c->sh[i].id, KURA_ITER_TRIM_HORIZON,
                                                  NULL, it)
                        : kura_get_shard_iterator(db, c->arn, c->sh[i].id,
                                                  KURA_ITER_AFTER_SEQUENCE_NUMBER, last, it);
    if (s != KURA_OK)
        snprintf(why, cap, "%s shard %u: GetShardIterator %s %s: %s: %s", c->table, i,
                 horizon || !last[0] ? "TRIM_HORIZON" : "AFTER_SEQUENCE_NUMBER", last,
                 kura_status_str(s), kura_last_error());
    return s == KURA_OK;
}

bool fxs_read(fxs *c, kura_db *db, uint32_t limit, char *why, size_t cap)
{
    for (uint32_t i = 0; i < c->nshards; i++) {
        char *it = NULL;
        if (!iterator(c, db, i, false, &it, why, cap) ||
            !read_shard(c, db, i, it, limit, true, NULL, NULL, why, cap))
            return false;
    }
    return true;
}

typedef struct scan_ctx {
    fxs *c;
    size_t found;
    char *why;
    size_t cap;
    bool ok;
} scan_ctx;

static bool on_item(scan_ctx *x, const kura_value *item)
{
    char *key = key_of(x->c, item);
    slot *s = key ? map_find(x->c, key, false) : NULL;
    if (!s || !s->present || s->digest != digest(item)) {
        char *j = canon(item);
        snprintf(x->why, x->cap, "%s: the stream %s item %.300s", x->c->table,
                 s && s->present ? "leads to another version of" : "has no record of", j ? j : "?");
        kura_free(j);
        x->ok = false;
    }
    x->found++;
    kura_free(key);
    return x->ok;
}

bool fxs_check(fxs *c, kura_db *db, bool reread, char *why, size_t cap)
{
    if (!fxs_read(c, db, 0, why, cap))
        return false;
    scan_ctx x = {c, 0, why, cap, true};
    kura_value *start = NULL;
    do {
        kura_scan_req req = {.table_name = c->table, .consistent_read = true,
                             .exclusive_start_key = start};
        kura_page page;
        memset(&page, 0, sizeof page);
        kura_status s = kura_scan(db, &req, &page);
        kura_value_free(start);
        start = NULL;
        if (s != KURA_OK) {
            snprintf(why, cap, "Scan %s: %s", c->table, kura_last_error());
            return false;
        }
        for (size_t i = 0; x.ok && i < kura_value_count(page.items); i++)
            on_item(&x, kura_value_at(page.items, i, NULL, NULL));
        if (x.ok && page.last_evaluated_key)
            start = kura_value_clone(page.last_evaluated_key);
        kura_page_free(&page);
    } while (start);
    if (!x.ok)
        return false;
    size_t present = 0;
    for (size_t i = 0; i < c->map_cap; i++)
        present += c->map[i].used && c->map[i].present;
    if (present != x.found) {
        for (size_t i = 0; i < c->map_cap; i++) /* name one the table lacks */
            if (c->map[i].used && c->map[i].present) {
                kura_value *k = NULL;
                kura_get_item_res res;
                memset(&res, 0, sizeof res);
                bool there = false;
                if (kura_value_from_json(c->map[i].key, strlen(c->map[i].key), true, &k) ==
                    KURA_OK) {
                    kura_get_item_req req = {.table_name = c->table, .key = k,
                                             .consistent_read = true};
                    there = kura_get_item(db, &req, &res) == KURA_OK && res.item;
                    kura_value_free(res.item);
                }
                kura_value_free(k);
                if (!there) {
                    snprintf(why, cap, "%s: the stream leads to item %.200s, which the table "
                                       "does not hold",
                             c->table, c->map[i].key);
                    break;
                }
            }
        return false;
    }
    for (uint32_t i = 0; reread && i < c->nshards; i++) {
        char *it = NULL;
        rec *v = NULL;
        size_t n = 0;
        bool ok = iterator(c, db, i, true, &it, why, cap) &&
                  read_shard(c, db, i, it, 0, false, &v, &n, why, cap);
        const shard *sh = &c->sh[i];
        size_t at = 0;
        for (size_t k = 0; ok && k < n; k++, at++) {
            if (at >= sh->n || strcmp(v[k].seq, sh->v[at].seq) || v[k].digest != sh->v[at].digest) {
                snprintf(why, cap, "%s shard %u: read again, record %zu is %s, the consumer took "
                                   "%s there (%zu records, %zu taken)",
                         c->table, i, k, v[k].seq, at < sh->n ? sh->v[at].seq : "nothing", n,
                         sh->n);
                ok = false;
            }
        }
        if (ok && at != sh->n) {
            snprintf(why, cap, "%s shard %u: read again, %zu records; the consumer took %zu",
                     c->table, i, n, sh->n);
            ok = false;
        }
        free(v);
        if (!ok)
            return false;
    }
    return true;
}

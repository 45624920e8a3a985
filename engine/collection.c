/*
 * collection.c - This file contains the cache of item collection sizes (engine/collection.h:
 * what it keeps, and why the sizes stay exact under concurrent writes).
 *
 * A chained hash table of entries (buckets allocated on first insert, as many as the most
 * entries, rounded up to a power of two) and an LRU list through the same entries, most
 * recently used first. An entry is EMPTY (a stub: only writes registered on it while a fill
 * was pending, freed when the last one ends), FILLING (one write is measuring it; the others
 * wait) or READY (size valid). Entries with writes registered, and FILLING ones, are never
 * evicted or freed, so a ticket's entry pointer stays valid until coll_end.
 */
#include "engine/collection.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/status.h"
#include "util/thread.h"

typedef enum coll_state { COLL_EMPTY, COLL_FILLING, COLL_READY } coll_state;

/* A place in the LRU list: the first member of an entry, and the list's sentinel. */
typedef struct coll_link {
    struct coll_link *newer, *older;
} coll_link;

typedef struct coll_entry {
    coll_link lru;                        /* first: a link is its entry */
    struct coll_entry *next;              /* hash chain */
    uint64_t hash;
    uint64_t size;                        /* READY */
    uint32_t inflight;                    /* writes registered on it */
    coll_state state;
    bool stale;                           /* a write failed: drop once idle */
    size_t klen;
    uint8_t key[];
} coll_entry;

struct coll_cache {
    kmutex mu;
    kcond cv;         /* a fill ended, or the writes a filler waits for did */
    coll_entry **buckets;
    size_t nbuckets;  /* a power of two */
    size_t n, max;
    size_t key_bytes;
    coll_link lru;    /* sentinel: lru.older is the newest entry, lru.newer the oldest */
    uint32_t bare;    /* writes in flight registered on no entry */
    uint32_t fills;   /* fills waiting or scanning */
};

coll_cache *coll_cache_new(size_t max_entries)
{
    coll_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    kmutex_init(&c->mu);
    kcond_init(&c->cv);
    c->max = max_entries ? max_entries : COLL_MAX_ENTRIES;
    c->lru.newer = c->lru.older = &c->lru;
    return c;
}

void coll_cache_free(coll_cache *c)
{
    if (!c)
        return;
    for (coll_link *l = c->lru.older, *next; l != &c->lru; l = next) {
        next = l->older;
        free((coll_entry *)l);
    }
    free(c->buckets);
    kcond_destroy(&c->cv);
    kmutex_destroy(&c->mu);
    free(c);
}

static uint64_t coll_hash(const uint8_t *key, size_t klen)
{
    return kura_hash64(key, klen);
}

static coll_entry *coll_find(coll_cache *c, uint64_t h, const uint8_t *key, size_t klen)
{
    if (!c->buckets)
        return NULL;
    for (coll_entry *e = c->buckets[h & (c->nbuckets - 1)]; e; e = e->next)
        if (e->hash == h && e->klen == klen && !memcmp(e->key, key, klen))
            return e;
    return NULL;
}

static void lru_unlink(coll_link *l)
{
    l->newer->older = l->older;
    l->older->newer = l->newer;
}

static void lru_push_newest(coll_cache *c, coll_link *l)
{
    l->older = c->lru.older;
    l->newer = &c->lru;
    c->lru.older->newer = l;
    c->lru.older = l;
}

/* Makes e the most recently used. */
static void lru_touch(coll_cache *c, coll_entry *e)
{
    lru_unlink(&e->lru);
    lru_push_newest(c, &e->lru);
}

static void coll_remove(coll_cache *c, coll_entry *e)
{
    coll_entry **p = &c->buckets[e->hash & (c->nbuckets - 1)];
    while (*p != e)
        p = &(*p)->next;
    *p = e->next;
    lru_unlink(&e->lru);
    c->n--;
    c->key_bytes -= e->klen;
    free(e);
}

static bool coll_idle(const coll_entry *e)
{
    return e->inflight == 0 && e->state != COLL_FILLING;
}

/* Drops least recently used idle entries until one more of `klen` bytes fits (or none is
 * idle: the cache then holds more than its bounds until writes end). */
static void coll_make_room(coll_cache *c, size_t klen)
{
    coll_link *l = c->lru.newer;
    while (l != &c->lru && (c->n >= c->max || c->key_bytes + klen > COLL_MAX_KEY_BYTES)) {
        coll_link *newer = l->newer;
        if (coll_idle((coll_entry *)l))
            coll_remove(c, (coll_entry *)l);
        l = newer;
    }
}

/* A new EMPTY entry for `key`, the most recently used; NULL when out of memory. */
static coll_entry *coll_insert(coll_cache *c, uint64_t h, const uint8_t *key, size_t klen)
{
    if (!c->buckets) {
        size_t nb = 1;
        while (nb < c->max)
            nb <<= 1;
        if (!(c->buckets = calloc(nb, sizeof *c->buckets)))
            return NULL;
        c->nbuckets = nb;
    }
    coll_make_room(c, klen);
    coll_entry *e = malloc(sizeof *e + klen);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->hash = h;
    e->klen = klen;
    memcpy(e->key, key, klen);
    size_t b = h & (c->nbuckets - 1);
    e->next = c->buckets[b];
    c->buckets[b] = e;
    lru_push_newest(c, &e->lru);
    c->n++;
    c->key_bytes += klen;
    return e;
}

/* Measures `e` (found or made EMPTY by the caller) with fill(); mu held, and held again on
 * return. On failure the entry is gone. */
static kura_status coll_fill(coll_cache *c, coll_entry *e, coll_fill_fn fill, void *arg)
{
    e->state = COLL_FILLING;
    c->fills++;
    /* the writes registered on it, and the bare ones begun before this fill, first */
    while (c->bare > 0 || e->inflight > 0)
        kcond_wait(&c->cv, &c->mu);
    kmutex_unlock(&c->mu);
    uint64_t size = 0;
    kura_status s = fill(arg, &size);
    kmutex_lock(&c->mu);
    c->fills--;
    kcond_broadcast(&c->cv);
    if (s != KURA_OK) {
        coll_remove(c, e); /* nothing registered on it meanwhile: FILLING made them wait */
        return s;
    }
    e->state = COLL_READY;
    e->size = size;
    return KURA_OK;
}

/* Adds the write to the READY entry e: the limit check, the delta, the registration. */
static kura_status coll_register(coll_cache *c, coll_entry *e, int64_t delta, uint64_t limit,
                                 coll_ticket *tk)
{
    lru_touch(c, e);
    if (delta > 0 && (e->size >= limit || (uint64_t)delta > limit - e->size))
        return kura_err(KURA_E_COLLECTION_SIZE, "Collection size exceeded");
    uint64_t before = e->size;
    if (delta < 0 && (uint64_t)-delta > e->size)
        e->size = 0; /* cannot happen while every write registers; never below zero */
    else
        e->size += (uint64_t)delta;
    e->inflight++;
    tk->e = e;
    tk->measured = true;
    tk->applied = (int64_t)(e->size - before);
    tk->size_after = e->size;
    return KURA_OK;
}

/* coll_begin and coll_try_begin: `nowait` returns KURA_E_BUSY, nothing registered, where the
 * write would wait for a fill or fill itself. */
static kura_status coll_begin_at(coll_cache *c, const uint8_t *key, size_t klen, int64_t delta,
                                 bool need, uint64_t limit, coll_fill_fn fill, void *arg,
                                 coll_ticket *tk, bool nowait)
{
    memset(tk, 0, sizeof *tk);
    uint64_t h = coll_hash(key, klen);
    kura_status s = KURA_OK;
    kmutex_lock(&c->mu);
    coll_entry *e;
    while ((e = coll_find(c, h, key, klen)) && e->state == COLL_FILLING && !nowait)
        kcond_wait(&c->cv, &c->mu);
    if (nowait && ((e && e->state == COLL_FILLING) || (need && (!e || e->state != COLL_READY)))) {
        s = KURA_E_BUSY; /* no message: the caller settles the collection and tries again */
    } else if (e && e->state == COLL_READY) {
        s = coll_register(c, e, delta, limit, tk);
    } else if (!need && e) { /* a stub */
        e->inflight++;
        tk->e = e;
    } else if (!need && c->fills == 0) {
        c->bare++;
        tk->bare = true;
    } else if (!need) { /* a fill may be waiting for bare writes: register on a stub */
        if ((e = coll_insert(c, h, key, klen)) != NULL) {
            e->inflight = 1;
            tk->e = e;
        } else {
            s = kura_err(KURA_E_NOMEM, "out of memory");
        }
    } else {
        if (!e && !(e = coll_insert(c, h, key, klen)))
            s = kura_err(KURA_E_NOMEM, "out of memory");
        if (s == KURA_OK)
            s = coll_fill(c, e, fill, arg);
        if (s == KURA_OK)
            s = coll_register(c, e, delta, limit, tk);
    }
    kmutex_unlock(&c->mu);
    if (s != KURA_OK)
        memset(tk, 0, sizeof *tk);
    return s;
}

kura_status coll_begin(coll_cache *c, const uint8_t *key, size_t klen, int64_t delta, bool need,
                       uint64_t limit, coll_fill_fn fill, void *arg, coll_ticket *tk)
{
    return coll_begin_at(c, key, klen, delta, need, limit, fill, arg, tk, false);
}

kura_status coll_try_begin(coll_cache *c, const uint8_t *key, size_t klen, int64_t delta,
                           bool need, uint64_t limit, coll_fill_fn fill, void *arg,
                           coll_ticket *tk)
{
    return coll_begin_at(c, key, klen, delta, need, limit, fill, arg, tk, true);
}

kura_status coll_settle(coll_cache *c, const uint8_t *key, size_t klen, bool need,
                        coll_fill_fn fill, void *arg)
{
    uint64_t h = coll_hash(key, klen);
    kura_status s = KURA_OK;
    kmutex_lock(&c->mu);
    coll_entry *e;
    while ((e = coll_find(c, h, key, klen)) && e->state == COLL_FILLING)
        kcond_wait(&c->cv, &c->mu);
    if (need && (!e || e->state != COLL_READY)) {
        if (!e && !(e = coll_insert(c, h, key, klen)))
            s = kura_err(KURA_E_NOMEM, "out of memory");
        if (s == KURA_OK)
            s = coll_fill(c, e, fill, arg);
    }
    kmutex_unlock(&c->mu);
    return s;
}

void coll_cancel(coll_cache *c, coll_ticket *tk)
{
    if (tk->e && tk->measured) { /* nothing was written: the delta goes back exactly */
        kmutex_lock(&c->mu);
        coll_entry *e = tk->e;
        if (tk->applied >= 0)
            e->size = (uint64_t)tk->applied > e->size ? 0 : e->size - (uint64_t)tk->applied;
        else
            e->size += (uint64_t)-tk->applied;
        tk->measured = false;
        kmutex_unlock(&c->mu);
    }
    coll_end(c, tk, true); /* unmeasured: nothing to take back */
}

void coll_end(coll_cache *c, coll_ticket *tk, bool written)
{
    if (!tk->e && !tk->bare)
        return;
    kmutex_lock(&c->mu);
    if (tk->bare) {
        if (--c->bare == 0 && c->fills > 0)
            kcond_broadcast(&c->cv);
    } else {
        coll_entry *e = tk->e;
        if (!written && tk->measured) { /* READY stays READY while writes are registered */
            if (tk->applied >= 0)
                e->size = (uint64_t)tk->applied > e->size ? 0 : e->size - (uint64_t)tk->applied;
            else
                e->size += (uint64_t)-tk->applied;
            e->stale = true; /* the write may have half happened: measure again */
        }
        if (--e->inflight == 0) {
            if (e->state == COLL_FILLING)
                kcond_broadcast(&c->cv);
            else if (e->state == COLL_EMPTY || e->stale)
                coll_remove(c, e);
        }
    }
    kmutex_unlock(&c->mu);
    memset(tk, 0, sizeof *tk);
}

bool coll_peek(coll_cache *c, const uint8_t *key, size_t klen, uint64_t *size_out)
{
    kmutex_lock(&c->mu);
    coll_entry *e = coll_find(c, coll_hash(key, klen), key, klen);
    bool ready = e && e->state == COLL_READY && !e->stale;
    if (ready)
        *size_out = e->size;
    kmutex_unlock(&c->mu);
    return ready;
}

size_t coll_cache_count(coll_cache *c)
{
    kmutex_lock(&c->mu);
    size_t n = c->n;
    kmutex_unlock(&c->mu);
    return n;
}

/* ---- The integrity check (`kura check`, engine/table_verify_items.c) ---------------------- */

kura_status coll_cache_keys(coll_cache *c, kbuf *keys_out, size_t **lens_out, size_t *n_out)
{
    kmutex_lock(&c->mu);
    size_t n = 0;
    size_t *lens = malloc((c->n ? c->n : 1) * sizeof *lens);
    bool ok = lens != NULL;
    for (coll_link *l = c->lru.older; ok && l != &c->lru; l = l->older) {
        const coll_entry *e = (const coll_entry *)l;
        if (e->state != COLL_READY || e->stale)
            continue;
        ok = kbuf_append(keys_out, e->key, e->klen);
        lens[n++] = e->klen;
    }
    kmutex_unlock(&c->mu);
    if (!ok) {
        free(lens);
        return kura_err(KURA_E_NOMEM, "out of memory");
    }
    *lens_out = lens;
    *n_out = n;
    return KURA_OK;
}

kura_status coll_verify(coll_cache *c, const uint8_t *key, size_t klen, coll_fill_fn fill,
                        void *arg, bool *present_out, uint64_t *cached_out,
                        uint64_t *measured_out)
{
    kmutex_lock(&c->mu);
    coll_entry *e = coll_find(c, coll_hash(key, klen), key, klen);
    *present_out = e && e->state == COLL_READY && !e->stale;
    if (!*present_out) {
        kmutex_unlock(&c->mu);
        return KURA_OK;
    }
    /* as a fill: new writes of the collection wait, the ones registered finish first */
    e->state = COLL_FILLING;
    while (e->inflight > 0)
        kcond_wait(&c->cv, &c->mu);
    uint64_t cached = e->size;
    kmutex_unlock(&c->mu);
    uint64_t size = 0;
    kura_status s = fill(arg, &size);
    kmutex_lock(&c->mu);
    e->state = COLL_READY;
    *present_out = !e->stale; /* a write registered meanwhile failed: its size is unknown */
    if (e->stale)
        coll_remove(c, e);
    kcond_broadcast(&c->cv);
    kmutex_unlock(&c->mu);
    *cached_out = cached;
    *measured_out = size;
    return s;
}

size_t coll_cache_largest(coll_cache *c, coll_size *out, size_t n)
{
    size_t got = 0;
    kmutex_lock(&c->mu);
    for (size_t b = 0; b < c->nbuckets; b++)
        for (const coll_entry *e = c->buckets[b]; e; e = e->next) {
            if (e->state != COLL_READY || e->stale || e->klen > COLL_SIZE_KEY_MAX)
                continue;
            size_t at = got < n ? got++ : n; /* insertion into the sorted top n */
            while (at > 0 && out[at - 1].size < e->size) {
                if (at < n)
                    out[at] = out[at - 1];
                at--;
            }
            if (at < n) {
                out[at].size = e->size;
                out[at].klen = e->klen;
                memcpy(out[at].key, e->key, e->klen);
            }
        }
    kmutex_unlock(&c->mu);
    return got;
}

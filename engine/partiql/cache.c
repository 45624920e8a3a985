/*
 * cache.c - This file contains the plan cache of kura_execute_statement(): the plans of the
 * last statements a thread ran, by their exact text, so that a statement run again with other
 * parameters (the usual way: "SELECT * FROM t WHERE pk = ? AND sk = ?") costs neither a parse
 * nor a translation, only putting the new parameters where the plan holds the old ones
 * (pq_binding: a key attribute or a :v value).
 *
 * What a plan depends on, and so what a hit checks: the text (compared whole), the number of
 * parameters (else PQ_MSG_PARAMS, as the parse would say), and the table's key attribute
 * names, looked up at every hit (a table dropped and created again with another key is
 * translated again; a missing table is "Requested resource not found" as always). A plan
 * does not depend on the parameters' values or types: which operation a statement becomes
 * comes from its text alone. Not cached: statements with a '?' inside a [list], <<set>> or
 * {map} (the value is inside the tree) other than an attribute of INSERT's VALUE {'a': ?}
 * (rebound by name), SELECTs of an index (its definition can change), and texts over 1 KB.
 *
 * Each thread has its own 16 entries (no lock on the path of a statement), replaced in turn,
 * freed when the thread exits.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/value.h"
#include "engine/partiql/partiql.h"
#include "engine/table.h"
#include "util/status.h"

#define PQ_CACHE_SLOTS 16
#define PQ_CACHE_MAX_TEXT 1024

typedef struct pq_cached {
    char *text;  /* NULL: an empty slot */
    size_t len;
    char *table; /* plan.table points here */
    char *hash, *range; /* the key names of the translation (range NULL: none) */
    uint32_t nparams;
    pq_plan plan;
} pq_cached;

typedef struct pq_cache {
    pq_cached e[PQ_CACHE_SLOTS];
    uint32_t next; /* the slot the next new plan replaces */
} pq_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void entry_clear(pq_cached *c)
{
    pq_plan_free(&c->plan);
    free(c->text);
    free(c->table);
    free(c->hash);
    free(c->range);
    memset(c, 0, sizeof *c);
}

static void cache_destroy(void *p)
{
    pq_cache *c = p;
    for (int i = 0; i < PQ_CACHE_SLOTS; i++) entry_clear(&c->e[i]);
    free(c);
}

static void cache_key_make(void)
{
    pthread_key_create(&cache_key, cache_destroy);
}

/* This thread's cache, made on first use; NULL when out of memory (then nothing is cached). */
static pq_cache *cache_get(void)
{
    pthread_once(&cache_once, cache_key_make);
    pq_cache *c = pthread_getspecific(cache_key);
    if (!c && (c = calloc(1, sizeof *c)) && pthread_setspecific(cache_key, c) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

static pq_cached *cache_find(pq_cache *c, const char *text, size_t len)
{
    for (int i = 0; c && i < PQ_CACHE_SLOTS; i++)
        if (c->e[i].text && c->e[i].len == len && memcmp(c->e[i].text, text, len) == 0)
            return &c->e[i];
    return NULL;
}

static bool same_name(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* KURA_OK: the plan holds for the table as it is; KURA_E_NOT_FOUND: translate again. */
static kura_status entry_check(kura_db *db, const pq_cached *e, const kura_value *params)
{
    if ((params ? kura_value_count(params) : 0) != e->nparams)
        return kura_err(KURA_E_INVALID, PQ_MSG_PARAMS);
    kura_table *t;
    kura_status s = table_acquire(db, e->table, &t);
    if (s != KURA_OK) return s;
    bool same = same_name(t->pk_name, e->hash) && same_name(t->sk_name, e->range);
    table_release(t);
    return same ? KURA_OK : KURA_E_NOT_FOUND;
}

/* Puts the parameters where the plan holds them: each value is replaced in its slot of the
 * key or values map (the slot exists: the translation made it), no map is rebuilt. */
static kura_status entry_bind(pq_cached *e, const kura_value *params)
{
    pq_plan *p = &e->plan;
    for (uint32_t i = 0; i < p->nbindings; i++) {
        const pq_binding *b = &p->bindings[i];
        const char *name = b->kind == PQ_BIND_VALUE      ? b->placeholder
                           : b->kind == PQ_BIND_ITEM     ? b->attr
                           : b->kind == PQ_BIND_KEY_HASH ? e->hash
                                                         : e->range;
        const kura_value *m = b->kind == PQ_BIND_VALUE  ? p->values
                              : b->kind == PQ_BIND_ITEM ? p->item
                                                        : p->key;
        kura_value *slot = val_map_get(m, name, strlen(name));
        if (!slot) return kura_err(KURA_E_NOMEM, "plan cache: no slot %s", name);
        val_clear(slot);
        kura_status s = val_copy(slot, kura_value_at(params, b->param, NULL, NULL));
        if (s != KURA_OK) return s; /* the slot is empty: the caller drops the entry */
    }
    return KURA_OK;
}

/* Takes the plan of a prepared statement into a slot (nothing when it cannot be reused). */
static void cache_put(pq_cache *c, const char *text, size_t len, pq_prepared *pp,
                      const pq_keys *k)
{
    const pq_stmt *st = pp->stmt;
    if (!c || len > PQ_CACHE_MAX_TEXT || st->params_copied || st->index) return;
    pq_cached *e = &c->e[c->next];
    entry_clear(e);
    e->text = malloc(len);
    e->table = strdup(st->table);
    e->hash = strdup(k->hash);
    e->range = k->range ? strdup(k->range) : NULL;
    if (!e->text || !e->table || !e->hash || (k->range && !e->range)) {
        entry_clear(e);
        return;
    }
    memcpy(e->text, text, len);
    e->len = len;
    e->nparams = st->nparams;
    e->plan = pp->plan;
    e->plan.table = e->table;
    memset(&pp->plan, 0, sizeof pp->plan);
    c->next = (c->next + 1) % PQ_CACHE_SLOTS;
}

kura_status pq_cached_run(kura_db *db, const kura_execute_statement_req *req,
                          kura_execute_statement_res *res)
{
    size_t len = strlen(req->statement);
    pq_cache *c = cache_get();
    pq_cached *e = cache_find(c, req->statement, len);
    kura_status s = e ? entry_check(db, e, req->parameters) : KURA_E_NOT_FOUND;
    if (s == KURA_OK && (s = entry_bind(e, req->parameters)) != KURA_OK) entry_clear(e);
    if (s == KURA_OK) {
        pq_prepared pp = {.stmt = NULL, .plan = e->plan};
        return pq_run(db, &pp, req, res);
    }
    if (s != KURA_E_NOT_FOUND) return s;
    if (e) entry_clear(e);
    pq_prepared pp;
    pq_keys k;
    s = pq_prepare_keys(db, req->statement, req->parameters, &pp, &k);
    if (s == KURA_OK) s = pq_run(db, &pp, req, res);
    if (s == KURA_OK || s == KURA_E_CONDITION_FAILED || s == KURA_E_DUPLICATE_ITEM)
        cache_put(c, req->statement, len, &pp, &k);
    pq_keys_free(&k);
    pq_prepared_free(&pp);
    return s;
}

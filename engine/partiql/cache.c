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
 *
 * What a hit costs, so that a statement by key costs about what GetItem or UpdateItem cost:
 * the parameters are not copied but lent to the plan (each bound map entry is a shallow copy
 * of its parameter for the length of the call, emptied after it: between calls the plan's
 * bound entries are empty); the expressions of a GET, PUT, UPDATE or DELETE plan are parsed
 * once, when the plan is cached, and handed to the item operation parsed (item_pre,
 * engine/item_int.h), which also checks the table's key names with the table it pins anyway.
 * Parsing checks the types of :values (e.g. `SET a = a + ?` needs a number), and for BETWEEN
 * and attribute_type their contents, so the parsed expressions are used only while every
 * bound value has the type it had at the parse and is a valid value, and never for a
 * statement with BETWEEN or attribute_type: otherwise the operation parses the text with the
 * values it has, and reports what a parse reports.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/item_int.h"
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
    pq_plan plan; /* its bound map entries are empty between calls */
    item_exprs ex; /* the plan's expressions parsed over its maps (ex_ok) */
    bool ex_ok;
} pq_cached;

typedef struct pq_cache {
    pq_cached e[PQ_CACHE_SLOTS];
    uint32_t next; /* the slot the next new plan replaces */
} pq_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static _Thread_local pq_cache *tls_cache;

static void entry_clear(pq_cached *c)
{
    item_exprs_free(&c->ex);
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
    tls_cache = NULL;
    for (int i = 0; i < PQ_CACHE_SLOTS; i++) entry_clear(&c->e[i]);
    free(c);
}

static void cache_key_make(void)
{
    pthread_key_create(&cache_key, cache_destroy);
}

/* This thread's cache (the key's value, also kept in a thread-local pointer for the path of a
 * statement: the key is there for its destructor), made on first use; NULL when out of memory
 * (then nothing is cached). */
static pq_cache *cache_get(void)
{
    if (tls_cache) return tls_cache;
    pthread_once(&cache_once, cache_key_make);
    pq_cache *c = calloc(1, sizeof *c);
    if (c && pthread_setspecific(cache_key, c) != 0) {
        free(c);
        c = NULL;
    }
    return tls_cache = c;
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

/* A Query or Scan plan: KURA_OK when it holds for the table as it is; KURA_E_NOT_FOUND:
 * translate again. (The other plans' operations check the key names themselves: item_pre.) */
static kura_status entry_check(kura_db *db, const pq_cached *e)
{
    kura_table *t;
    kura_status s = table_acquire(db, e->table, &t);
    if (s != KURA_OK) return s;
    bool same = same_name(t->pk_name, e->hash) && same_name(t->sk_name, e->range);
    table_release(t);
    return same ? KURA_OK : KURA_E_NOT_FOUND;
}

/* Lends the parameters to the plan: each bound entry becomes a shallow copy of its parameter
 * (entry_unbind empties them again, nothing is freed). Returns whether the parsed expressions
 * hold for these values (their types are those of the parse, and they are valid values). */
static bool entry_bind(pq_cached *e, const kura_value *params)
{
    pq_plan *p = &e->plan;
    bool same = e->ex_ok;
    for (uint32_t i = 0; i < p->nbindings; i++) {
        const pq_binding *b = &p->bindings[i];
        const kura_value *v = kura_value_at(params, b->param, NULL, NULL);
        *b->slot = *v;
        if (b->kind == PQ_BIND_VALUE && same)
            same = v->type == b->type && val_validate(v) == KURA_OK;
    }
    return same;
}

static void entry_unbind(pq_cached *e)
{
    const pq_plan *p = &e->plan;
    for (uint32_t i = 0; i < p->nbindings; i++) memset(p->bindings[i].slot, 0, sizeof(kura_value));
}

/* Whether a parse of the statement's expressions looks at the contents of values (BETWEEN's
 * bounds are compared, attribute_type's type name is checked), not only at their types. */
static bool looks_at_values(const pq_node *n)
{
    if (!n) return false;
    if (n->kind == PQ_BETWEEN || (n->kind == PQ_CALL && strcmp(n->name, "attribute_type") == 0))
        return true;
    for (uint32_t i = 0; i < n->nkids; i++)
        if (looks_at_values(n->kids[i])) return true;
    return false;
}

static bool stmt_looks_at_values(const pq_stmt *st)
{
    if (looks_at_values(st->where)) return true;
    for (uint32_t i = 0; i < st->nassigns; i++)
        if (looks_at_values(st->assigns[i].value)) return true;
    return false;
}

/* Parses the plan's expressions as its item operation would (ex_ok when that succeeds) and
 * notes the types of the bound values. The bound entries still hold the first run's values. */
static void entry_parse(pq_cached *e, const pq_stmt *st)
{
    pq_plan *p = &e->plan;
    kura_expression_attributes ea = {p->names, p->values};
    kura_status s;
    if (p->kind == PQ_P_GET)
        s = item_exprs_parse(&ea, NULL, NULL, p->projection, NULL, &e->ex);
    else if (p->kind == PQ_P_UPDATE)
        s = item_exprs_parse(&ea, p->update, p->condition, NULL,
                             "UpdateExpression and ConditionExpression are null", &e->ex);
    else if (p->kind == PQ_P_PUT || p->kind == PQ_P_DELETE)
        s = item_exprs_parse(&ea, NULL, p->condition, NULL, "ConditionExpression is null",
                             &e->ex);
    else
        return;
    if (s != KURA_OK || stmt_looks_at_values(st)) {
        item_exprs_free(&e->ex);
        return;
    }
    for (uint32_t i = 0; i < p->nbindings; i++) p->bindings[i].type = p->bindings[i].slot->type;
    e->ex_ok = true;
}

/* Finds where each parameter goes (the entries exist: the translation made them) and empties
 * those entries. False when one is missing. */
static bool entry_slots(pq_cached *e)
{
    pq_plan *p = &e->plan;
    for (uint32_t i = 0; i < p->nbindings; i++) {
        pq_binding *b = &p->bindings[i];
        const char *name = b->kind == PQ_BIND_VALUE      ? b->placeholder
                           : b->kind == PQ_BIND_ITEM     ? b->attr
                           : b->kind == PQ_BIND_KEY_HASH ? e->hash
                                                         : e->range;
        const kura_value *m = b->kind == PQ_BIND_VALUE  ? p->values
                              : b->kind == PQ_BIND_ITEM ? p->item
                                                        : p->key;
        if (!name || !(b->slot = val_map_get(m, name, strlen(name)))) return false;
    }
    return true;
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
    e->plan = pp->plan;
    e->plan.table = e->table;
    memset(&pp->plan, 0, sizeof pp->plan);
    if (!e->text || !e->table || !e->hash || (k->range && !e->range) || !entry_slots(e)) {
        entry_clear(e);
        return;
    }
    memcpy(e->text, text, len);
    e->len = len;
    e->nparams = st->nparams;
    entry_parse(e, st);
    for (uint32_t i = 0; i < e->plan.nbindings; i++) val_clear(e->plan.bindings[i].slot);
    c->next = (c->next + 1) % PQ_CACHE_SLOTS;
}

/* Runs a cached plan; *stale_out: the table's key is no longer the plan's (nothing done). */
static kura_status entry_run(kura_db *db, pq_cached *e, const kura_execute_statement_req *req,
                             kbuf *enc, bool *encoded_out, kura_execute_statement_res *res,
                             bool *stale_out)
{
    *stale_out = false;
    const kura_value *params = req->parameters;
    if ((params ? kura_value_count(params) : 0) != e->nparams)
        return kura_err(KURA_E_INVALID, PQ_MSG_PARAMS);
    bool paged = e->plan.kind == PQ_P_QUERY || e->plan.kind == PQ_P_SCAN;
    kura_status s = paged ? entry_check(db, e) : KURA_OK;
    if (s != KURA_OK) {
        *stale_out = s == KURA_E_NOT_FOUND;
        return s;
    }
    bool parsed = entry_bind(e, params);
    item_pre pre = {.ex = parsed ? &e->ex : NULL, .hash = e->hash, .range = e->range, .enc = enc};
    s = pq_run_plan(db, &e->plan, paged ? NULL : &pre, req, res);
    entry_unbind(e);
    *stale_out = pre.stale;
    if (encoded_out) *encoded_out = pre.encoded;
    return s;
}

kura_status pq_cached_run(kura_db *db, const kura_execute_statement_req *req, kbuf *enc,
                          bool *encoded_out, kura_execute_statement_res *res)
{
    size_t len = strlen(req->statement);
    pq_cache *c = cache_get();
    pq_cached *e = cache_find(c, req->statement, len);
    if (e) {
        bool stale;
        kura_status s = entry_run(db, e, req, enc, encoded_out, res, &stale);
        if (!stale) return s;
        kura_execute_statement_res_free(res);
        entry_clear(e);
    }
    pq_prepared pp;
    pq_keys k;
    kura_status s = pq_prepare_keys(db, req->statement, req->parameters, &pp, &k);
    item_pre pre = {.enc = enc}; /* nothing parsed ahead, no key names to check */
    if (s == KURA_OK) s = pq_run_plan(db, &pp.plan, &pre, req, res);
    if (encoded_out) *encoded_out = pre.encoded;
    if (s == KURA_OK || s == KURA_E_CONDITION_FAILED || s == KURA_E_DUPLICATE_ITEM)
        cache_put(c, req->statement, len, &pp, &k);
    pq_keys_free(&k);
    pq_prepared_free(&pp);
    return s;
}

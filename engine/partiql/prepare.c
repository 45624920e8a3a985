/*
 * prepare.c - This file contains the preparation of a PartiQL statement for running: the
 * parse, the key schema of its table (or of the index a SELECT names) from the catalog, and
 * the translation into a plan (translate.c). A table that does not exist is DynamoDB's
 * ResourceNotFoundException "Requested resource not found", whatever the statement.
 *
 * The key names come from the table pinned for the moment of the translation (a table's key
 * never changes; table_acquire is what every item operation does first), not from
 * kura_describe_table, which would count the table's items: preparing costs a parse, a
 * lookup and the translation. An index's definition can change under UpdateTable, so its
 * key names are copied under tables_mu. An index with several partition or sort key
 * attributes offers its first ones (a Query then needs the others from the engine's rules).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/db_int.h"
#include "engine/partiql/partiql.h"
#include "engine/table.h"
#include "util/status.h"

/* Room for an index's key names (attribute names of keys are at most 255 bytes). */
typedef struct index_keys {
    char hash[256], range[256];
} index_keys;

static const idx_def *find_index(const idx_def *d, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(d[i].name, name) == 0) return &d[i];
    return NULL;
}

static kura_status index_keys_of(kura_db *db, kura_table *t, const char *index, index_keys *ik,
                                 pq_keys *k)
{
    kmutex_lock(&db->tables_mu);
    const idx_def *d = find_index(t->gsi, t->ngsi, index);
    if (!d) d = find_index(t->lsi, t->nlsi, index);
    if (d && d->nhash) {
        snprintf(ik->hash, sizeof ik->hash, "%s", d->hash[0].name);
        ik->range[0] = '\0';
        if (d->nrange) snprintf(ik->range, sizeof ik->range, "%s", d->range[0].name);
    }
    kmutex_unlock(&db->tables_mu);
    if (!d || !d->nhash)
        return kura_err(KURA_E_INVALID, "The table does not have the specified index: %s", index);
    k->hash = ik->hash;
    k->range = ik->range[0] ? ik->range : NULL;
    return KURA_OK;
}

/* keys_out (may be NULL): copies of the key names the translation used. */
static kura_status prepare(kura_db *db, const char *text, const kura_value *params,
                           pq_prepared *out, pq_keys *keys_out)
{
    memset(out, 0, sizeof *out);
    if (keys_out) *keys_out = (pq_keys){NULL, NULL};
    kura_status s = pq_parse(text, strlen(text), params, &out->stmt);
    if (s != KURA_OK) return s;
    kura_table *t;
    if ((s = table_acquire(db, out->stmt->table, &t)) != KURA_OK) return s;
    pq_keys k = {t->pk_name, t->sk_name};
    index_keys ik;
    if (out->stmt->index) s = index_keys_of(db, t, out->stmt->index, &ik, &k);
    if (s == KURA_OK) s = pq_translate(out->stmt, &k, &out->plan);
    if (s == KURA_OK && keys_out) {
        keys_out->hash = strdup(k.hash);
        keys_out->range = k.range ? strdup(k.range) : NULL;
        if (!keys_out->hash || (k.range && !keys_out->range))
            s = kura_err(KURA_E_NOMEM, "out of memory");
    }
    table_release(t);
    return s;
}

kura_status pq_prepare(kura_db *db, const char *text, const kura_value *params, pq_prepared *out)
{
    return prepare(db, text, params, out, NULL);
}

kura_status pq_prepare_keys(kura_db *db, const char *text, const kura_value *params,
                            pq_prepared *out, pq_keys *keys_out)
{
    return prepare(db, text, params, out, keys_out);
}

void pq_keys_free(pq_keys *k)
{
    free((char *)k->hash);
    free((char *)k->range);
    k->hash = k->range = NULL;
}

void pq_prepared_free(pq_prepared *p)
{
    pq_plan_free(&p->plan);
    pq_stmt_free(p->stmt);
    p->stmt = NULL;
}
